/* SPDX-License-Identifier: MIT */
/* Internal to seccomp.c (the filter) and supervisor.c (the thread that
 * answers it): the table of notified calls, from syscalls.def. */
#ifndef DENYTRACE_SECCOMP_INT_H
#define DENYTRACE_SECCOMP_INT_H

#include "denyrule.h"

/* How a notified call is read. */
enum dt_sc_kind {
	SC_EXEC,    /* execve / execveat: exec coverage, always continued */
	SC_OPEN,    /* op classes from the flags argument */
	SC_OPENAT2, /* flags behind a pointer (struct open_how) */
	SC_PATH,    /* fixed op classes, one or two path arguments */
	SC_FD,      /* fixed op classes, a descriptor argument */
	SC_URING,   /* io_uring_setup: with exec coverage, names the process
	             * partly blind (what it submits there bypasses libc) */
};

/* One table for every notified call: argument indices (-1 = none; a path
 * without a dirfd is relative to the cwd). */
struct dt_sc {
	const char *name;
	enum dt_sc_kind kind;
	unsigned ops; /* op classes the call can belong to */
	signed char dfd, path, dfd2, path2, flags, mode;
};

#define DT_SC(...) +1
enum {
	DT_NSYSCALLS = 0
#include "syscalls.def"
};
#undef DT_SC

extern const struct dt_sc dt_syscalls[DT_NSYSCALLS];

#endif
