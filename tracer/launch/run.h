/* SPDX-License-Identifier: MIT */
/* Running a command under the probe, in steps that `denytrace run` and the
 * launchers built on it (`denytrace codex`) share: parse run's options,
 * create the ring, write extra records, launch. */
#ifndef DENYTRACE_RUN_H
#define DENYTRACE_RUN_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "denyrule.h"
#include "launchfile.h"
#include "ring.h"

struct dt_run_opts {
	const char *cmd;       /* "run", "codex": the command in messages */
	const char *out;       /* -o/--output/--ring */
	const char *errnos;    /* --errnos */
	const char *env_extra; /* --env */
	uint64_t size, seed;
	int all, refusals_only, quiet, backtrace, watch_exec, have_seed;
	struct dt_deny_set deny;
};

void dt_run_opts_init(struct dt_run_opts *o);
void dt_run_opts_free(struct dt_run_opts *o);

/* The checks and stores of run's options that take more than a string
 * (opts_run.def's CALL rows; args is the struct dt_run_opts). Each returns
 * 0, or DT_EXIT_INTERNAL with the message printed. */
int dt_run_opt_deny(void *args, const char *val);
int dt_run_opt_seed(void *args, const char *val);
int dt_run_opt_size(void *args, const char *val);
int dt_run_opt_errnos(void *args, const char *val);

/* The ring of one run, created and mapped, and the probe that writes it. */
struct dt_run_ring {
	int fd;       /* the descriptor the command inherits (-1: none), kept by the
	               * launcher until the run ends: its shared lock tells a run
	               * starting meanwhile that the ring is in use */
	int old_ring; /* a ring this one displaces and does not reuse, held
	               * until the command has started: freeing its blocks
	               * then overlaps with the command, -1 if none */
	void *map;
	size_t map_len;
	struct dt_ring ring;
	char path[PATH_MAX];  /* the ring: -o FILE, or beside it when that is in use */
	char abs[PATH_MAX];   /* the ring's absolute path */
	char id[72];          /* "DEV:INO:CREATED_NS", for DENYTRACE_RING_ID */
	char probe[PATH_MAX]; /* libdenytrace.so */
	uint8_t run_id[16];   /* random; in the ring's header, names the launch file */
	uint64_t dev, ino;    /* the ring's */
	/* the config snapshots this launcher wrote into the ring, for its
	 * launch file */
	uint8_t configs[DT_LAUNCH_CONFIGS_MAX][DT_SHA256_LEN];
	size_t nconfigs;
};

/* Whether cmd0 can be run (found on PATH, executable): checked before the
 * ring is created, so that a typo leaves the previous ring where it was.
 * Returns 0, or DT_EXIT_NOTFOUND / DT_EXIT_NOEXEC with the message printed. */
int dt_run_check_command(const char *cmd, const char *cmd0);

/* Finds the probe and creates the ring o->out (the previous ring there
 * becomes o->out.old). A ring still in use by another run is left alone:
 * this run's ring is then OUT-PID.ring beside it, said on stderr. Only a
 * new file, or a regular file of the caller's holding a ring, is
 * replaced. Returns 0, or an exit status with the message printed. */
int dt_run_ring_create(const struct dt_run_opts *o, struct dt_run_ring *rr);

/* The DENYTRACE_* variables the probe needs to find the ring by its path
 * and record as o asks (no descriptor: for processes that inherit none).
 * Fills up to cap names and values; returns how many. Values point into o
 * and rr. LD_PRELOAD is not among them. */
size_t dt_run_probe_env(const struct dt_run_opts *o, const struct dt_run_ring *rr,
                        const char **names, const char **values, size_t cap);

/* Starts a record of type with the fields every record carries (times,
 * pid, ...; comm "denytrace") into rec (cap bytes). */
void dt_run_record_begin(struct dt_buf *b, unsigned char *rec, uint32_t cap, int type);

/* Writes the launch record for cmd, runs it with the probe (and seccomp
 * when asked), waits, summarises unless quiet, and releases the ring.
 * Returns cmd's exit status (128+N for signal N), or an exit status of
 * its own when cmd could not start. */
int dt_run_launch(struct dt_run_opts *o, struct dt_run_ring *rr, char **cmd);

#endif
