/* SPDX-License-Identifier: MIT */
#include "selfids.h"

#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rawsys.h"

#define DT_MAX_GROUPS 64

/* Bumped after every call that may change ids or names; never 0, which a
 * thread's copy holds until it asked. DT_SELFIDS_NEVER: keep nothing. */
static _Atomic unsigned dt_selfids_gen = 1;
#define DT_SELFIDS_NEVER 0u

/* Written only on the recording path, with signals held back; tid goes to
 * 0 first and back last, so that a handler's record that interrupts a
 * refill (the load-time entry record is made without holding signals)
 * asks for itself rather than reading half of it. */
struct dt_selfids {
	int tid;
	unsigned gen;
	uint32_t ppid, euid, egid;
	int ngroups; /* -1: more than DT_MAX_GROUPS, left out */
	uint32_t groups[DT_MAX_GROUPS];
	int has_comm;
	char comm[17];
};
static __thread struct dt_selfids dt_selfids __attribute__((tls_model("initial-exec")));

DT_HIDDEN void dt_selfids_changed(void)
{
	unsigned g = atomic_load_explicit(&dt_selfids_gen, memory_order_relaxed);
	unsigned next;
	do
		next = g == DT_SELFIDS_NEVER ? g : g + 1 ? g + 1 : 1;
	while (!atomic_compare_exchange_weak(&dt_selfids_gen, &g, next));
}

DT_HIDDEN void dt_selfids_uncachable(void)
{
	atomic_store(&dt_selfids_gen, DT_SELFIDS_NEVER);
}

/* long, as the system call reads them: a wrapper's int widens unchanged */
static void dt_selfids_after_unshare(long flags)
{
	if (flags & CLONE_NEWUSER)
		dt_selfids_uncachable();
}

/* type 0 joins whatever namespace fd is, a user namespace among them */
static void dt_selfids_after_setns(long type)
{
	if (!type || (type & CLONE_NEWUSER))
		dt_selfids_uncachable();
}

DT_HIDDEN void dt_selfids_after_syscall(long n, long a, long b)
{
	switch (n) {
	case SYS_unshare:
		dt_selfids_after_unshare(a);
		return;
	case SYS_setns:
		dt_selfids_after_setns(b);
		return;
	case SYS_setuid:
	case SYS_setgid:
	case SYS_setreuid:
	case SYS_setregid:
	case SYS_setresuid:
	case SYS_setresgid:
	case SYS_setgroups:
		dt_selfids_changed();
		return;
	case SYS_prctl:
		if ((int)a == PR_SET_NAME)
			dt_selfids_changed();
		return;
	default:
		return;
	}
}

static void dt_selfids_ask(struct dt_selfids *s)
{
	s->ppid = (uint32_t)syscall(SYS_getppid);
	s->euid = (uint32_t)syscall(SYS_geteuid);
	s->egid = (uint32_t)syscall(SYS_getegid);
	long ng = syscall(SYS_getgroups, DT_MAX_GROUPS, s->groups);
	s->ngroups = ng >= 0 ? (int)ng : -1;
	s->has_comm = syscall(SYS_prctl, PR_GET_NAME, s->comm, 0, 0, 0) == 0;
	s->comm[16] = 0;
}

DT_HIDDEN void dt_selfids_put(struct dt_buf *b, int tid, int fresh)
{
	struct dt_selfids *s = &dt_selfids;
	/* read before asking: a change that ends while we ask bumps it past
	 * what is kept, and the next record asks again */
	unsigned gen = atomic_load_explicit(&dt_selfids_gen, memory_order_acquire);
	if (fresh || gen == DT_SELFIDS_NEVER || s->tid != tid || s->gen != gen) {
		s->tid = 0;
		atomic_signal_fence(memory_order_seq_cst);
		dt_selfids_ask(s);
		s->gen = gen;
		atomic_signal_fence(memory_order_seq_cst);
		s->tid = tid;
	}
	dt_put_u64(b, DT_T_PPID, s->ppid);
	dt_put_u64(b, DT_T_UID, s->euid);
	dt_put_u64(b, DT_T_GID, s->egid);
	/* group bits apply through any of these; a list too long for the
	 * buffer is left out rather than cut */
	if (s->ngroups >= 0)
		dt_put(b, DT_T_GROUPS, s->groups, (uint32_t)s->ngroups * 4u);
	if (s->has_comm)
		dt_put_str(b, DT_T_COMM, s->comm);
}

/* The wrappers of selfids.def: real functions resolved at first call. */
#define DT_SELFID(fn, type, params, args, after) static type(*real_##fn) params;
#include "selfids.def"
#undef DT_SELFID

#define DT_SELFID(fn, type, params, args, after)                                                   \
	DT_EXPORT type fn params                                                                   \
	{                                                                                          \
		DT_GET_REAL(fn, -1)                                                                \
		type dt_r_ = dt_fn_ args;                                                          \
		after;                                                                             \
		return dt_r_;                                                                      \
	}
#include "selfids.def"
#undef DT_SELFID
