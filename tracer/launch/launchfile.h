/* SPDX-License-Identifier: MIT */
/*
 * The launch file: what `denytrace run` (and `codex`, and `soak` through
 * run) launched, kept where the traced program cannot write, so that
 * `fix --verify` runs again only a launch the user made. The launch
 * record inside the ring is written by denytrace too, but the ring is
 * writable by the traced program, which can hide that record and append
 * its own: a ring's launch record is only the program's claim.
 *
 * The file is created before the command starts, with
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, in a directory of the caller's own
 * that nobody else can write: DIR/denytrace/launches/, DIR the first of
 * $XDG_STATE_HOME, ~/.local/state and $XDG_RUNTIME_DIR that the command
 * cannot write. A same-uid program whose sandbox can write a directory can
 * write any launch file there, and hide from the ring the mount tables
 * that would show it could: what the command can write is judged by the
 * launcher, from the command line the user gave it (dt_launch_writable),
 * before the command starts, never from the ring: bubblewrap's binds, and
 * for Codex the roots its configuration layers grant (roots.h's model).
 * A command that names a sandbox the launcher does not read (bwrap behind
 * a wrapper word, firejail, Hermes ...) or a Codex without a bounded mode
 * may write anywhere: it gets no launch file; nor does a command with no
 * sandbox the launcher reads (bwrap, Codex, landlock-run as the command),
 * which may write anywhere the user can, launch files included. A
 * reader trusts a ring's launch file only when exactly one of those places
 * holds one for it, and only where the launch it names would have put it:
 * a file naming a command without such a sandbox, or one whose sandbox
 * can write the file's place, is one no launcher wrote (planted). When
 * the launcher put its file out of the sandbox's reach, a file the
 * program plants where it can write is a second one, and neither is run.
 * What no check here can catch: where the launcher wrote none, a program
 * that can write the user's files plants one claiming a sandbox that
 * does not reach it (same uid: no secret is kept from it); fix shows
 * that command and runs it only on the user's yes or --yes.
 * It is named by the random run id
 * the launcher put in the ring's header and holds the ring's device and
 * inode, so a ring leads only to the launch that created it.
 *
 * Format: NUL-terminated strings, "denytrace-launch", "2" (the format's
 * version), the run id in hex, the ring's device and inode in decimal,
 * "run" or "codex" (the subcommand that launched it), the directory, the
 * number of argv words, then the words, the number of environment entries,
 * then the entries (those the ring's launch record keeps; secrets redacted
 * as in the ring), then the number of config snapshots the launcher wrote
 * into the ring and the SHA-256 of each in hex, in the order written
 * (format 2 on), then the ring's absolute path (pruning reads it; the
 * parser stops before it).
 *
 * The snapshots are the launcher's reading of Codex's configuration, put
 * in the ring where the traced program can hide one and append its own;
 * their digests here are what fix believes of them.
 */
#ifndef DENYTRACE_LAUNCHFILE_H
#define DENYTRACE_LAUNCHFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "records.h"
#include "sha256.h"

#define DT_RUN_ID_LEN 16
/* config.toml, the -p layer and 16 project layers, with room */
#define DT_LAUNCH_CONFIGS_MAX 24

/* What a launcher writes. */
struct dt_launch_info {
	const uint8_t *run_id; /* DT_RUN_ID_LEN bytes */
	uint64_t dev, ino;     /* the ring's */
	const char *via;       /* "run" or "codex" */
	const char *cwd;
	char *const *argv; /* NULL-terminated */
	char *const *env;  /* the entries the ring's launch record keeps, NULL-terminated */
	const char *ring;  /* the ring's absolute path, or NULL */
	const uint8_t (*configs)[DT_SHA256_LEN]; /* digests of the config snapshots */
	size_t nconfigs;
	/* the host paths the command's sandbox makes writable, as the
	 * launcher read them from its command line (NULL-terminated), or NULL
	 * when it cannot tell (no sandbox it models) */
	const char *const *writable;
};

/* The digest of a config snapshot record as the ring holds it: every
 * field the report reads from it. */
void dt_launch_config_digest(const struct dt_record *c, uint8_t out[DT_SHA256_LEN]);

/* What the command argv, run in cwd, can write, as its command line says:
 * a bubblewrap's writable binds; for Codex, the workspace (cwd or -C DIR),
 * /tmp, $TMPDIR and the writable roots of its configuration as it is now;
 * "/" alone for a sandbox that may write anywhere (Codex's full access) or
 * one denytrace does not read. Into out (cap of them, borrowed: valid
 * until the next call). Returns their number, or -1 when the command line
 * names no sandbox. */
int dt_launch_writable(const char *const *argv, const char *cwd, const char **out, size_t cap);

/* The directory launch files go to, without creating it. Returns 0, or
 * -1 when neither XDG_STATE_HOME nor HOME names an absolute directory. */
int dt_launchfile_dir(char *out, size_t cap);

/* Writes the launch file (creating its directory). Returns 0, or -1 with
 * why set: the launch then has no launch file, and fix --verify will ask
 * for the command. */
int dt_launchfile_write(const struct dt_launch_info *li, char *why, size_t whycap);

/* A launch file read back; strings point into buf. */
struct dt_launchfile {
	char path[PATH_MAX];
	char *buf;
	const char *via, *cwd;
	const char **argv; /* NULL-terminated */
	size_t argc;
	const char **env; /* as the ring's launch record keeps them, NULL-terminated */
	size_t nenv;
	const char **configs; /* the snapshots' digests in hex, in the order written */
	size_t nconfigs;
};

/* The launch file of the ring at ring_path: one of the caller's own, in
 * its own private directory, a regular file of bounded size, naming this
 * ring's run id, device and inode, and a launch that would have put it
 * there. Returns 0 with lf filled, or with why saying why there is none
 * to trust (lf->path is then set when the ring names one): -2 when the
 * file is there but no launcher wrote it (planted), else -1. */
int dt_launchfile_find(const char *ring_path, struct dt_launchfile *lf, char *why, size_t cap);

/* A directory of denytrace's beside lf's launches directory,
 * BASE/denytrace/name, into dir, when the command lf names could not
 * write it (its sandbox, as the launcher models it, keeps it out of
 * reach): a place for what only denytrace may write about lf's ring.
 * 0, or -1 (no such place). */
int dt_launchfile_sealed_dir(const struct dt_launchfile *lf, const char *name, char *dir,
                             size_t cap);

void dt_launchfile_free(struct dt_launchfile *lf);

/* Removes launch files no ring needs any more, at most once an hour
 * (launchfile.c says which: never one whose ring is still where its run
 * put it, nor one less than an hour old). */
void dt_launchfile_prune(void);

/* Removes the launch file of the ring at ring_path, if it has one of the
 * caller's (a ring soak deletes takes its launch file with it). */
void dt_launchfile_remove(const char *ring_path);

#endif
