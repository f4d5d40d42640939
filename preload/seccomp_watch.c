/* SPDX-License-Identifier: MIT */
/*
 * A program that installs a seccomp filter of its own after the probe
 * started may allow only the system calls it makes itself (an allow-list
 * whose default is to kill): the probe's recording calls (getpid, prctl,
 * readlinkat, fstatfs...) would then kill it at its first refusal. So the
 * probe watches the two ways a filter goes in, prctl(PR_SET_SECCOMP) and
 * syscall(SYS_seccomp) (libseccomp and Rust's seccompiler use the latter),
 * and once one succeeded, this process image records nothing: refusals are
 * only counted in the ring header, an atomic add. The ring is attached
 * just before the filter goes in, while the probe's calls are still
 * allowed. A ring the program truncates afterwards would turn that add
 * into SIGBUS: where the filter's own program, run on the ring check's
 * madvise (seccomp_eval.c), allows that one call, it is made before each
 * add; where not, the add goes unchecked, as before.
 *
 * Not seen: a filter installed with the instruction written out (Chromium's
 * sandbox), nor one inherited across exec (the new image's probe starts
 * unaware of it). The probe's own system calls do not come through here
 * (rawsys.h).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "probe.h"
#include "probe_state.h"
#include "rawsys.h"
#include "ring.h"
#include "seccomp_eval.h"
#include "selfids.h"

DT_HIDDEN int dt_seccomp_filtered;
DT_HIDDEN int dt_seccomp_ring_check_ok;
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

/* The program a filter install names, copied before it goes in: by
 * process_vm_readv, which answers EFAULT where the program passed memory
 * it does not have (the install would fail the same way) rather than
 * fault. Only for the first filter the probe sees, and only where no
 * filter was there before (one inherited across exec, which the probe
 * cannot read): from then on the probe makes no system call that the
 * filters were not asked about. One install at a time uses the copy;
 * another at the same moment is not asked about (0). */
static struct sock_filter dt_filter_copy[BPF_MAXINSNS];
static int dt_filter_busy;

static unsigned dt_filter_take(const void *fprog)
{
	if (__atomic_load_n(&dt_seccomp_filtered, __ATOMIC_SEQ_CST) ||
	    __atomic_exchange_n(&dt_filter_busy, 1, __ATOMIC_ACQUIRE))
		return 0;
	int saved = errno;
	struct sock_fprog p;
	struct iovec mine = {&p, sizeof(p)}, theirs = {(void *)fprog, sizeof(p)};
	unsigned n = 0;
	long pid = 0;
	/* no filter there yet (else nothing more is asked: one the probe
	 * never saw may forbid what it would ask next) */
	if (syscall(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0) == 0 &&
	    (pid = syscall(SYS_getpid)) > 0 &&
	    syscall(SYS_process_vm_readv, pid, &mine, 1, &theirs, 1, 0) == (long)sizeof(p) &&
	    p.len > 0 && p.len <= BPF_MAXINSNS) {
		mine = (struct iovec){dt_filter_copy, p.len * sizeof(*p.filter)};
		theirs = (struct iovec){p.filter, mine.iov_len};
		if (syscall(SYS_process_vm_readv, pid, &mine, 1, &theirs, 1, 0) ==
		    (long)mine.iov_len)
			n = p.len;
	}
	/* how the ring is checked is decided now, while the probe may still
	 * make the calls that decide it */
	if (n)
		dt_ring_check_decided();
	errno = saved;
	if (!n)
		__atomic_store_n(&dt_filter_busy, 0, __ATOMIC_RELEASE);
	return n;
}

/* After the install: whether the copied program lets the ring check
 * through (the ring was attached before the install, and the check
 * decided then: dt_ring_check_syscall makes no call of its own now). */
static void dt_filter_judge(unsigned n, int installed)
{
	if (!n)
		return; /* not taken: the busy flag is another install's */
	int ok = 0;
	struct dt_ring *ring = dt_ring_attached();
	struct seccomp_data d = {0};
	long nr;
	unsigned long args[3];
	if (installed && ring && dt_seccomp_arch() && dt_ring_check_syscall(ring, &nr, args)) {
		d.nr = (int)nr;
		d.arch = dt_seccomp_arch();
		for (int i = 0; i < 3; i++)
			d.args[i] = args[i];
		ok = dt_seccomp_allows(dt_filter_copy, n, &d);
	}
	if (installed)
		__atomic_store_n(&dt_seccomp_ring_check_ok, ok, __ATOMIC_SEQ_CST);
	__atomic_store_n(&dt_filter_busy, 0, __ATOMIC_RELEASE);
}

static __attribute__((noinline, cold)) long dt_install(long (*fn)(long, ...), long n, long a,
                                                       long b, long c, long d, long e, long f)
{
	/* SYS_seccomp's program is its third argument, SYS_prctl's its second */
	long prog = n == SYS_seccomp ? c : b;
	int filter =
	    n == SYS_seccomp ? (unsigned)a == SECCOMP_SET_MODE_FILTER : b == SECCOMP_MODE_FILTER;
	int ring_ok = __atomic_load_n(&dt_seccomp_ring_check_ok, __ATOMIC_SEQ_CST);
	unsigned taken = filter ? dt_filter_take((const void *)prog) : 0;
	int was = dt_quiesce();
	/* any filter not judged (strict mode, a second one) turns the check off */
	__atomic_store_n(&dt_seccomp_ring_check_ok, 0, __ATOMIC_SEQ_CST);
	long r = fn(n, a, b, c, d, e, f);
	/* a positive result is a listener descriptor, or (TSYNC) a thread
	 * that refused it: taken as installed either way */
	if (r < 0) {
		__atomic_store_n(&dt_seccomp_filtered, was, __ATOMIC_SEQ_CST);
		__atomic_store_n(&dt_seccomp_ring_check_ok, ring_ok, __ATOMIC_SEQ_CST);
	}
	dt_filter_judge(taken, r >= 0);
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
		int ring_ok = __atomic_load_n(&dt_seccomp_ring_check_ok, __ATOMIC_SEQ_CST);
		unsigned taken = a == SECCOMP_MODE_FILTER ? dt_filter_take((const void *)b) : 0;
		int was = dt_quiesce();
		__atomic_store_n(&dt_seccomp_ring_check_ok, 0, __ATOMIC_SEQ_CST);
		int r = fn(option, a, b, c, d);
		if (r != 0) {
			__atomic_store_n(&dt_seccomp_filtered, was, __ATOMIC_SEQ_CST);
			__atomic_store_n(&dt_seccomp_ring_check_ok, ring_ok, __ATOMIC_SEQ_CST);
		}
		dt_filter_judge(taken, r == 0);
		return r;
	}
	int r = fn(option, a, b, c, d);
	dt_selfids_after_syscall(SYS_prctl, option, (long)a);
	return r;
}
#endif
