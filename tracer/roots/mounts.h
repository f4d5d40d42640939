/* SPDX-License-Identifier: MIT */
/* A process record's mount table, as the sandbox showed it to the process:
 * which mount decides about a path, whether the process is sandboxed, which
 * mounts are kernel interfaces rather than places to keep data. The root
 * set's uses of it (effective roots, granted or not) are declared in
 * roots.h and live in mounts.c too. */
#ifndef DENYTRACE_MOUNTS_H
#define DENYTRACE_MOUNTS_H

#include "records.h"

/* The mount that decides about path: the deepest one containing it, the
 * later one of two at the same place (it is stacked on top). NULL when
 * proc or path is NULL or no mount contains it. */
const struct dt_mount *dt_mount_for_path(const struct dt_record *proc, const char *path);

/* Does the process record describe a sandbox ("/" mounted read-only)? */
int dt_proc_sandboxed(const struct dt_record *proc);
/* The deepest mount of proc containing path: 1 rw, 0 ro, -1 unknown. */
int dt_proc_path_writable(const struct dt_record *proc, const char *path);

/* A kernel interface (proc, sysfs, cgroup, ...), or the device nodes and
 * shared-memory tmpfs under /proc, /sys, /dev every sandbox provides: not
 * a place where a worker keeps data. */
int dt_mount_is_pseudo(const struct dt_mount *m);
/* Does proc see any writable mount that is not pseudo? */
int dt_proc_has_writable_mount(const struct dt_record *proc);

#endif
