/* SPDX-License-Identifier: MIT */
/*
 * The probe's own system calls, straight to the kernel. The probe exports a
 * `syscall` of its own (seccomp_watch.c: to see a program install a seccomp
 * filter), and calls within the probe would reach that wrapper too; after
 * this header, syscall(...) in the probe's sources is the instruction
 * itself. Include it after <unistd.h> (it declares the real one).
 *
 * Only where the instruction is written out here (x86_64, aarch64); on
 * other architectures the probe neither exports `syscall` nor changes it.
 */
#ifndef DENYTRACE_RAWSYS_H
#define DENYTRACE_RAWSYS_H

#include <errno.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__aarch64__)
#define DT_RAW_SYSCALL 1

static inline long dt_raw_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	long ret;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
	                 : "rcx", "r11", "memory");
#else
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
	                 : "+r"(x0)
	                 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
	                 : "memory");
	ret = x0;
#endif
	if ((unsigned long)ret > -4096UL) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

/* syscall(N, args...) with 0 to 6 arguments, each passed as a long */
#define DT_SC0(n) dt_raw_syscall((long)(n), 0, 0, 0, 0, 0, 0)
#define DT_SC1(n, a) dt_raw_syscall((long)(n), (long)(a), 0, 0, 0, 0, 0)
#define DT_SC2(n, a, b) dt_raw_syscall((long)(n), (long)(a), (long)(b), 0, 0, 0, 0)
#define DT_SC3(n, a, b, c) dt_raw_syscall((long)(n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define DT_SC4(n, a, b, c, d)                                                                      \
	dt_raw_syscall((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define DT_SC5(n, a, b, c, d, e)                                                                   \
	dt_raw_syscall((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)
#define DT_SC6(n, a, b, c, d, e, f)                                                                \
	dt_raw_syscall((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define DT_SC_PICK(_1, _2, _3, _4, _5, _6, _7, name, ...) name
#define syscall(...)                                                                               \
	DT_SC_PICK(__VA_ARGS__, DT_SC6, DT_SC5, DT_SC4, DT_SC3, DT_SC2, DT_SC1, DT_SC0, 0)         \
	(__VA_ARGS__)
#endif

#endif
