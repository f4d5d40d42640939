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

DT_HIDDEN void dt_selfids_after_syscall(long n, long a, long b)
{
	switch (n) {
	case SYS_unshare:
		if (a & CLONE_NEWUSER)
			dt_selfids_uncachable();
		return;
	case SYS_setns:
		if (!b || (b & CLONE_NEWUSER))
			dt_selfids_uncachable();
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

/* The calls that change ids or names, wrapped to say so after they
 * return (glibc's change every thread before they do). Each returns
 * exactly what libc returned, errno untouched. */
#define DT_EXPORT __attribute__((visibility("default")))
#define DT_ID_SETTER(fn, params, args, after)                                                      \
	static int(*real_##fn) params;                                                             \
	DT_EXPORT int fn params                                                                    \
	{                                                                                          \
		int(*f) params = __atomic_load_n(&real_##fn, __ATOMIC_RELAXED);                    \
		if (__builtin_expect(!f, 0) &&                                                     \
		    !(f = (int(*) params)dt_resolve_real((void **)&real_##fn, #fn))) {             \
			errno = ENOSYS;                                                            \
			return -1;                                                                 \
		}                                                                                  \
		int dt_r_ = f args;                                                                \
		after;                                                                             \
		return dt_r_;                                                                      \
	}

DT_ID_SETTER(setuid, (uid_t u), (u), dt_selfids_changed())
DT_ID_SETTER(seteuid, (uid_t u), (u), dt_selfids_changed())
DT_ID_SETTER(setreuid, (uid_t r, uid_t e), (r, e), dt_selfids_changed())
DT_ID_SETTER(setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s), dt_selfids_changed())
DT_ID_SETTER(setgid, (gid_t g), (g), dt_selfids_changed())
DT_ID_SETTER(setegid, (gid_t g), (g), dt_selfids_changed())
DT_ID_SETTER(setregid, (gid_t r, gid_t e), (r, e), dt_selfids_changed())
DT_ID_SETTER(setresgid, (gid_t r, gid_t e, gid_t s), (r, e, s), dt_selfids_changed())
DT_ID_SETTER(setgroups, (size_t n, const gid_t *g), (n, g), dt_selfids_changed())
/* calls libc's own setgroups, which no wrapper sees */
DT_ID_SETTER(initgroups, (const char *user, gid_t g), (user, g), dt_selfids_changed())
/* another thread's name is written to its /proc file from inside libc */
DT_ID_SETTER(pthread_setname_np, (pthread_t t, const char *name), (t, name), dt_selfids_changed())
DT_ID_SETTER(unshare, (int flags), (flags), if (flags & CLONE_NEWUSER) dt_selfids_uncachable())
DT_ID_SETTER(setns, (int fd, int type), (fd, type),
             if (!type || (type & CLONE_NEWUSER)) dt_selfids_uncachable())
