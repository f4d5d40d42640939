/* SPDX-License-Identifier: MIT */
/* Which sandboxes this machine can make (doctor, demo), and making the one
 * the demo needs in a child: Landlock confinement of writes. */
#ifndef DENYTRACE_SANDBOX_H
#define DENYTRACE_SANDBOX_H

#include <stddef.h>

/* The Landlock ABI version (>= 1), or -1 with errno set (ENOSYS: no
 * Landlock in this kernel, EOPNOTSUPP: disabled at boot). */
long dt_landlock_abi(void);

/* In a child about to exec: from here on writes are allowed beneath dir
 * only. Reading and executing are not handled, so they stay allowed
 * everywhere. 0, or -1 with errno set. */
int dt_landlock_confine_writes(const char *dir);

/* Tries bwrap (a path, or a name looked up on PATH): "/" read-only and
 * /dev; with workdir also workdir writable, /proc, and workdir as cwd.
 * Returns bwrap's exit status (0: a sandbox was made), -1 when it could not
 * start, -2 on timeout; its stderr goes to err (may be NULL). */
int dt_bwrap_try(const char *bwrap, const char *workdir, int timeout_ms, char *err, size_t errcap);

#endif
