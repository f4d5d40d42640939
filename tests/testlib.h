/* SPDX-License-Identifier: MIT */
/* What the Criterion suites share: running real commands under denytrace
 * and loading the ring's records as plain structs. */
#ifndef DENYTRACE_TESTLIB_H
#define DENYTRACE_TESTLIB_H

#include <stddef.h>
#include <sys/types.h>

#include "jsonread.h"
#include "records.h"
#include "ringfile.h"
#include "words.h"

/* Directory with denytrace, libdenytrace.so and helpers/ ($DT_BUILD, or
 * "build" relative to the repository root the tests run from). */
const char *dtt_build(void);
/* The denytrace binary of that directory, as an absolute path. */
const char *dtt_denytrace(void);
/* Absolute path of a built helper: dtt_helper("landlock-run"). */
const char *dtt_helper(const char *name);
/* Absolute path of a script in tests/helpers (from the repository root
 * or beside the build directory): dtt_helper_script("board_mcp.py");
 * NULL when not found. */
const char *dtt_helper_script(const char *name);
/* The same for any file of the repository: dtt_repo_file("preload/calls.def"). */
const char *dtt_repo_file(const char *rel);
/* A fresh directory under /tmp, removed by dtt_cleanup(), or at exit when a
 * test skips or ends before its fini (cr_skip_test exits the process). */
const char *dtt_tmpdir(void);
/* The same under /var/tmp, for a Codex suite: Codex refuses a CODEX_HOME
 * under /tmp, and its workspace-write mode makes /tmp writable anyway. */
const char *dtt_codex_tmpdir(void);
void dtt_cleanup(void);

struct dtt_run {
	int status;      /* exit status of denytrace run (the command's) */
	char ring[4096]; /* the ring file */
	struct dt_record *recs;
	size_t n;
	struct dt_read_stats stats;
	char out[65536]; /* the command's stdout+stderr (and the summary) */
};

/* Runs `denytrace run -q -o RING [opts...] -- argv...` (opts and argv are
 * NULL-terminated), with extra environment entries "NAME=VALUE" (may be
 * NULL), then loads the ring. Returns 0 when the ring could be read. */
int dtt_run(struct dtt_run *r, const char *const *opts, const char *const *argv,
            const char *const *env);
/* Loads the records of an existing ring into r (recs/n/stats). */
int dtt_load(struct dtt_run *r, const char *ring);
void dtt_free(struct dtt_run *r);

/* Runs a command (no probe) and returns its exit status; output into out
 * (may be NULL). */
int dtt_system(char *out, size_t cap, const char *const *argv, const char *const *env);
/* The number a helper wrote to the file path ("N\n"), which is then
 * removed; -1 when there is none. */
long dtt_take_number(const char *path);
/* argv: cmd (NULL-terminated) with, when root, setpriv's drop to uid and
 * gid 65534 in front (root is refused nothing by mode bits). At most cap
 * entries are written, the NULL included; returns how many before it. */
size_t dtt_as_nobody(const char **argv, size_t cap, const char *const *cmd);
/* dtt_tmpdir()/ro, mode 0555, with dtt_tmpdir() made 0755 so that nobody
 * reaches it: the directory a program run by dtt_as_nobody is refused in. */
const char *dtt_ro_for_nobody(void);

/* First record of type with op (NULL = any) whose abspath or realpath ends
 * with suffix (NULL = any). */
const struct dt_record *dtt_find(const struct dtt_run *r, int type, const char *op,
                                 const char *suffix);
size_t dtt_count(const struct dtt_run *r, int type, const char *op, const char *suffix);
/* The process record of pid, or NULL. */
const struct dt_record *dtt_process(const struct dtt_run *r, long pid);

/* build/denytrace run with args (NULL-terminated), stdout and stderr kept
 * apart, as uid (and gid) when uid >= 0 (status 200: could not drop to it).
 * A CLI still running after 20 s is killed by SIGALRM (status 142): a hang
 * fails the test instead of stalling the suite. */
struct dtt_cli {
	int status;
	char out[262144];
	char err[8192];
};
void dtt_cli_as(struct dtt_cli *c, long uid, const char *const *args);
void dtt_cli(struct dtt_cli *c, const char *const *args);

/* A ring the test writes itself, record by record, to hand the CLI fields
 * no real program would produce. */
struct dtt_ring {
	void *map;
	size_t len;
	struct dt_ring r;
	unsigned char rec[DT_REC_MAX];
	struct dt_buf b; /* the record being built: dt_put_* into it */
};
/* Creates path as a ring of size bytes (0: the minimum). Returns 0 or -1. */
int dtt_ring_create(struct dtt_ring *w, const char *path, uint64_t size);
/* Maps an existing ring for writing, as a traced program can: its header,
 * slots and records are the test's to rewrite. Returns 0 or -1. */
int dtt_ring_open(struct dtt_ring *w, const char *path);
/* Starts a record of type with the common fields (times, pid, comm). */
void dtt_ring_begin(struct dtt_ring *w, int type, long pid, const char *comm);
/* Publishes the record built since dtt_ring_begin. Returns 0 or -1. */
int dtt_ring_commit(struct dtt_ring *w);
void dtt_ring_close(struct dtt_ring *w);

/* The real Codex binary, as `make codex` found or installed it before the
 * suites ($DT_BUILD/codex.status); without that file, $DT_BUILD/codex's
 * binary if there is one. NULL, with the one reason every Codex test skips
 * for in why, when there is none. Never installs anything itself. */
const char *dtt_codex(char *why, size_t cap);

/* The stand-in Responses API `codex exec` talks to instead of a model
 * (tests/helpers/responses_stub.py): on 127.0.0.1, it holds its reply
 * until a marker file exists, then answers DTT_STUB_REPLY and completes
 * the turn; it notes each request in a log. */
#define DTT_STUB_REPLY "dt-stub-model-reply"
/* With dtt_stub_provider's -c, the -c that makes Codex use it. */
#define DTT_STUB_MODEL "model_provider=\"dtstub\""
struct dtt_stub {
	pid_t pid; /* 0: not running */
	int port;
};
/* Starts it as this process's child (killed when the test dies), its
 * stderr in LOG.err, and returns once it listens; fails the test when it
 * prints no port within 10 s. */
void dtt_stub_start(struct dtt_stub *s, const char *marker, const char *log);
/* Kills and reaps it, if it runs. */
void dtt_stub_stop(struct dtt_stub *s);
/* Into buf: the -c value that defines the model provider "dtstub" at the
 * stub, without retries (a broken stub fails in a second, not after
 * Codex's five reconnects with back-off). */
void dtt_stub_provider(const struct dtt_stub *s, char *buf, size_t cap);

/* Writes DIR/codex, a stand-in Codex that answers --version as the real
 * one does ("codex-cli VERSION") and otherwise exits 0, and returns its
 * path (static storage). */
const char *dtt_fake_codex(const char *dir, const char *version);

/* 1 when bubblewrap can create a sandbox here, 0 otherwise (skip). */
int dtt_have_bwrap(void);
/* The sandbox most integration tests use: writes into argv
 * `bwrap --ro-bind / / --bind RW RW --dev /dev --proc /proc --` (all but
 * rw read-only; rw NULL: everything) and returns how many words, at most
 * DTT_BWRAP_RW_WORDS; the command goes after them. */
enum { DTT_BWRAP_RW_WORDS = 12 };
size_t dtt_bwrap_rw(const char **argv, const char *rw);
/* 1 when Landlock works here. */
int dtt_have_landlock(void);

/* JSON the CLI printed, read as a tree (tracer/read/jsonread.h) rather
 * than searched as text. dtt_json fails the test when text is not JSON;
 * free the tree with dt_jv_free. */
struct dt_jv *dtt_json(const char *text);
/* The value at path: object keys and array indexes separated by dots
 * ("checks.0.status"), or NULL when any step is missing. */
const struct dt_jv *dtt_jget(const struct dt_jv *root, const char *path);
/* The string at path, or NULL (missing or not a string). */
const char *dtt_jstr(const struct dt_jv *root, const char *path);
/* The first object of the array at path whose member key is the string
 * value, or NULL. */
const struct dt_jv *dtt_jfind(const struct dt_jv *root, const char *path, const char *key,
                              const char *value);
/* How many objects of the array at path have member key equal to value. */
size_t dtt_jcount(const struct dt_jv *root, const char *path, const char *key, const char *value);

/* Codex launch shapes: tracer/roots/codex_shapes.h (the table, the
 * model's answer and the real Codex's); word lists: tracer/util/words.h. */

#endif
