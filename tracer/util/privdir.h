/* SPDX-License-Identifier: MIT */
/* A directory denytrace writes into and then runs or reads back from (demo
 * --out, soak --keep): another user who can write it, or rename one of its
 * parents, could swap what denytrace executes or have it write through a
 * symlink. Accepted only when nobody but the caller (and root) can change
 * what its path names. */
#ifndef DENYTRACE_PRIVDIR_H
#define DENYTRACE_PRIVDIR_H

#include <stddef.h>
#include <sys/types.h>

/* Creates path with mode, or accepts an existing directory (not a symbolic
 * link) owned by the caller that neither its group nor others may write;
 * either way every directory above its real path must be owned by root or
 * the caller and be writable by nobody else (or be sticky, as /tmp is).
 * Returns 1 when it was created, 0 when it existed, -1 with why in err. */
int dt_private_dir(const char *path, mode_t mode, char *err, size_t cap);

/* The parents of the absolute path real, checked as above: 0 or -1 (err). */
int dt_private_parents(const char *real, char *err, size_t cap);

#endif
