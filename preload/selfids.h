/* SPDX-License-Identifier: MIT */
/*
 * Who the calling thread is, for every record: its parent, effective uid
 * and gid, supplementary groups and name. Five system calls a record when
 * asked each time, and they change only through calls the probe sees: so
 * each thread asks once and keeps the answers until one of those calls
 * runs anywhere in the process (dt_selfids_changed), or its thread id is
 * not the one that asked (a fork child, a raw clone sharing the thread's
 * variables).
 *
 * What it cannot see: a thread renamed by a write to its /proc comm file
 * (by another process, or by this one not through pthread_setname_np)
 * keeps its old name in records until the next change it does see.
 */
#ifndef DENYTRACE_SELFIDS_H
#define DENYTRACE_SELFIDS_H

#include "probe.h"
#include "ring.h"

/* Appends DT_T_PPID, DT_T_UID, DT_T_GID, DT_T_GROUPS and DT_T_COMM for
 * thread tid (the kernel's id of the caller); fresh: ask, whatever is kept. */
DT_HIDDEN void dt_selfids_put(struct dt_buf *b, int tid, int fresh);

/* Something may have changed the ids or a thread's name: every thread
 * asks again at its next record. */
DT_HIDDEN void dt_selfids_changed(void);

/* The process entered another user namespace (unshare, setns): its ids
 * read differently there, and once more when the namespace's id map is
 * written, which the probe does not see. From here on nothing is kept. */
DT_HIDDEN void dt_selfids_uncachable(void);

/* After system call n (first arguments a, b) made through syscall() or
 * prctl(): notes a change of what this module keeps, if it may be one. */
DT_HIDDEN void dt_selfids_after_syscall(long n, long a, long b);

#endif
