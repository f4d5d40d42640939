/* SPDX-License-Identifier: MIT */
/* Starting helper programs: the demo's workers, doctor's and evidence's
 * short commands, soak's runs. (`denytrace run` starts the traced command
 * itself, in run.c: it needs the seccomp hand-over between fork and exec.) */
#ifndef DENYTRACE_SPAWN_H
#define DENYTRACE_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

struct dt_spawn {
	char *const *argv;      /* argv[0] looked up on PATH */
	const char *cwd;        /* NULL: stay */
	const char *const *env; /* "NAME=VALUE" to set, "NAME" to unset; NULL-terminated */
	int in, out, err;       /* descriptors for 0, 1, 2; -1 inherits, -2 /dev/null */
	const char *landlock;   /* confine writes to beneath this directory */
	int new_pgrp;           /* own process group (the caller can kill it whole) */
	int default_signals;    /* SIGINT and SIGTERM back to default (not ignored) */
	int exec_err_fd;        /* when > 0: gets the exec's errno if it fails */
	const char *who;        /* names the caller in the child's messages */
};

/* Forks and execs sp->argv. Returns the child's pid, or -1. A child that
 * cannot exec exits 127 (not found) or 126. */
pid_t dt_spawn(const struct dt_spawn *sp);

/* Waits for pid up to timeout seconds, then sends SIGTERM, and SIGKILL two
 * seconds later. Returns the exit status (128+N for signal N), or -1. */
int dt_wait_timeout(pid_t pid, int timeout);

/* Runs argv (looked up on PATH) with extra environment entries
 * ("NAME=VALUE" sets, "NAME" unsets; env may be NULL) and stdin from
 * /dev/null, capturing stdout and stderr (NUL-terminated, cut at cap; either
 * buffer may be NULL). The command's process group is killed after
 * timeout_ms. Returns its exit status (128+N when killed by signal N), -1
 * when it could not be started, -2 when it timed out. */
int dt_capture(const char *const *argv, const char *const *env, int timeout_ms, char *out,
               size_t outcap, char *errout, size_t errcap);

/* The first executable regular file NAME on $PATH, into out. 0 or -1. */
int dt_which(const char *name, char *out, size_t cap);

#endif
