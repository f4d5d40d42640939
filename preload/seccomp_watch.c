/* SPDX-License-Identifier: MIT */
/*
 * A program that installs a seccomp filter of its own after the probe
 * started may allow only the system calls it makes itself (an allow-list
 * whose default is to kill): the probe's recording calls (getpid, prctl,
 * readlinkat, fstatfs...) would then kill it at its first refusal. So the
 * probe watches the two ways a filter goes in, prctl(PR_SET_SECCOMP) and
 * syscall(SYS_seccomp) (libseccomp and Rust's seccompiler use the latter),
 * and once one succeeded, this process image records nothing: refusals are
 * only counted in the ring header, an atomic add with no system call. The
 * ring is attached just before the filter goes in, while the probe's calls
 * are still allowed.
 *
 * Not seen: a filter installed with the instruction written out (Chromium's
 * sandbox), nor one inherited across exec (the new image's probe starts
 * unaware of it). The probe's own system calls do not come through here
 * (rawsys.h).
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "probe.h"
#include "rawsys.h"
#include "selfids.h"

DT_HIDDEN int dt_seccomp_filtered;
/* Slow paths under way, in every thread. */
static int dt_slow_paths;

DT_HIDDEN int dt_seccomp_enter(void)
{
	/* counted first, then the flag read (both sequentially consistent):
	 * an installer that set the flag either is seen here or sees us */
	__atomic_add_fetch(&dt_slow_paths, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&dt_seccomp_filtered, __ATOMIC_SEQ_CST))
		return 1;
	__atomic_sub_fetch(&dt_slow_paths, 1, __ATOMIC_SEQ_CST);
	return 0;
}

DT_HIDDEN void dt_seccomp_leave(void)
{
	__atomic_sub_fetch(&dt_slow_paths, 1, __ATOMIC_SEQ_CST);
}

#ifdef DT_RAW_SYSCALL
#undef syscall /* the name exported below, not the probe's own calls */

static long (*real_syscall)(long, ...);
static int (*real_prctl)(int, ...);

static int dt_installs_filter(long mode)
{
	return mode == SECCOMP_MODE_FILTER || mode == SECCOMP_MODE_STRICT;
}

/* How long an installer waits for other threads' slow paths (each a few
 * microseconds) before it lets the filter in regardless: one of them may
 * be its own, interrupted by the signal handler installing it. */
#define DT_QUIESCE_SPINS 100000

/* Before a filter goes in: the ring attached while the probe's calls are
 * allowed, new slow paths turned away, the ones under way finished.
 * Returns the flag's value before, to put back if the install fails. */
static int dt_quiesce(void)
{
	dt_seccomp_before_install();
	int was = __atomic_exchange_n(&dt_seccomp_filtered, 1, __ATOMIC_SEQ_CST);
	for (int spin = 0;
	     spin < DT_QUIESCE_SPINS && __atomic_load_n(&dt_slow_paths, __ATOMIC_SEQ_CST) > 0;
	     spin++)
		dt_raw_syscall(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	return was;
}

static __attribute__((noinline, cold)) long dt_install(long (*fn)(long, ...), long n, long a,
                                                       long b, long c, long d, long e, long f)
{
	int was = dt_quiesce();
	long r = fn(n, a, b, c, d, e, f);
	/* a positive result is a listener descriptor, or (TSYNC) a thread
	 * that refused it: taken as installed either way */
	if (r < 0)
		__atomic_store_n(&dt_seccomp_filtered, was, __ATOMIC_SEQ_CST);
	return r;
}

/* The same values as SECCOMP_MODE_* for prctl, SECCOMP_SET_MODE_* here. */
DT_EXPORT long syscall(long n, ...)
{
	va_list ap;
	va_start(ap, n);
	long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
	long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
	va_end(ap);
	DT_GET_REAL(syscall, -1)
	long (*fn)(long, ...) = dt_fn_;
	/* the kernel reads the operation as an unsigned int (and prctl's
	 * option as an int): the upper half of the register does not count */
	if (__builtin_expect(n == SYS_seccomp, 0) &&
	    ((unsigned)a == SECCOMP_SET_MODE_FILTER || (unsigned)a == SECCOMP_SET_MODE_STRICT))
		return dt_install(fn, n, a, b, c, d, e, f);
	/* prctl(PR_SET_SECCOMP) made as a system call of its own; prctl's
	 * success is 0, anything else is a failure */
	if (__builtin_expect(n == SYS_prctl, 0) && (int)a == PR_SET_SECCOMP &&
	    dt_installs_filter(b))
		return dt_install(fn, n, a, b, c, d, e, f);
	long r = fn(n, a, b, c, d, e, f);
	if (__builtin_expect(n == SYS_sigaltstack, 0) && a && r == 0)
		dt_altstack_changed();     /* see probe.c's sigaltstack */
	dt_selfids_after_syscall(n, a, b); /* see selfids.h */
	if (__builtin_expect(n == SYS_mlockall || n == SYS_munlockall, 0))
		dt_lockall_changed(n == SYS_mlockall ? a : 0, r);
	return r;
}

DT_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a = va_arg(ap, unsigned long), b = va_arg(ap, unsigned long);
	unsigned long c = va_arg(ap, unsigned long), d = va_arg(ap, unsigned long);
	va_end(ap);
	DT_GET_REAL(prctl, -1)
	int (*fn)(int, ...) = dt_fn_;
	if (__builtin_expect(option == PR_SET_SECCOMP, 0) && dt_installs_filter((long)a)) {
		int was = dt_quiesce();
		int r = fn(option, a, b, c, d);
		if (r != 0)
			__atomic_store_n(&dt_seccomp_filtered, was, __ATOMIC_SEQ_CST);
		return r;
	}
	int r = fn(option, a, b, c, d);
	dt_selfids_after_syscall(SYS_prctl, option, (long)a);
	return r;
}
#endif
