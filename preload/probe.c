/* SPDX-License-Identifier: MIT */
/*
 * The interposed entry points, generated from calls.def. Each wrapper calls
 * the real function through a pointer resolved once at load time, returns
 * exactly what it returned, and takes the slow path only when the call
 * failed or a success is being watched (DENYTRACE_ALL, a pending reopen).
 *
 * Built without _FILE_OFFSET_BITS=64 so that open and open64 are distinct.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>
#include <utime.h>

#include "probe_state.h"

#define DT_EXPORT __attribute__((visibility("default")))
#define DT_AT(fd) .has_dirfd = 1, .dirfd = (fd)
#define DT_AT2(fd) .has_dirfd2 = 1, .dirfd2 = (fd)
#define DT_P(p) .path = (p)
#define DT_P2(p) .path2 = (p)
#define DT_FD(f) .has_fd = 1, .fd = (f)

#ifndef __O_TMPFILE
#define __O_TMPFILE (O_TMPFILE & ~O_DIRECTORY)
#endif

/* Pointers to the real functions, resolved on first use (DT_CHECK_REAL). */
#define DT_INT(fn, params, args, kind, ...) static int(*real_##fn) params;
#define DT_PTR(fn, params, args, kind, ...) static FILE *(*real_##fn) params;
#define DT_OPEN(fn, params, args, ...) static int(*real_##fn) params;
#define DT_FCNTL(fn) static int (*real_##fn)(int, int, ...);
#include "calls.def"
#undef DT_INT
#undef DT_PTR
#undef DT_OPEN
#undef DT_FCNTL

/* Each real function is resolved on its wrapper's first call: resolving
 * all 49 at load time cost ~60k instructions per exec, more than the rest of
 * the probe. A racing thread resolves the same value. A function libc lacks
 * behaves like a missing syscall. */
#define DT_CHECK_REAL(fn, fail)                                                       \
	do {                                                                          \
		if (__builtin_expect(!real_##fn, 0)) {                                \
			real_##fn = (__typeof__(real_##fn))dlsym(RTLD_NEXT, #fn);     \
			if (!real_##fn) {                                             \
				errno = ENOSYS;                                       \
				return fail;                                          \
			}                                                             \
		}                                                                     \
	} while (0)

/* Which dt_watch bits make a successful call of this kind take the slow
 * path: --all for everyone, the pending reopen only for openers. */
#define DT_WATCH_MASK(kind)                                                           \
	(((kind) == DT_K_OPEN || (kind) == DT_K_FOPEN) ? (DT_WATCH_ALL | DT_WATCH_REOPEN) \
						       : DT_WATCH_ALL)

#define DT_STRIP(...) __VA_ARGS__
#define DT_COLD __attribute__((noinline, cold))

/* The slow path of each wrapper lives in its own cold function, so that a
 * call that succeeds costs the indirect call, one load and one compare: no
 * stack frame for a struct it never builds. */
#define DT_SLOW_FN(fn, kind_, sig, ...)                                               \
	static DT_COLD void dt_slow_##fn(DT_STRIP sig, int dt_ok_, long dt_r_)        \
	{                                                                             \
		int dt_err_ = errno;                                                  \
		struct dt_call dt_c_ = {.name = #fn, .kind = kind_, __VA_ARGS__};     \
		dt_after_call(&dt_c_, dt_ok_, dt_err_, dt_r_);                        \
		errno = dt_err_;                                                      \
	}

#define DT_INT(fn, params, args, kind_, ...)                                          \
	DT_SLOW_FN(fn, kind_, params, __VA_ARGS__)                                    \
	DT_EXPORT int fn params                                                       \
	{                                                                             \
		DT_CHECK_REAL(fn, -1);                                                \
		int r = real_##fn args;                                               \
		if (__builtin_expect(r == -1 || (dt_watch & DT_WATCH_MASK(kind_)), 0)) \
			dt_slow_##fn(DT_STRIP args, r != -1, r);                      \
		return r;                                                             \
	}
#define DT_PTR(fn, params, args, kind_, ...)                                          \
	DT_SLOW_FN(fn, kind_, params, __VA_ARGS__)                                    \
	DT_EXPORT FILE *fn params                                                     \
	{                                                                             \
		DT_CHECK_REAL(fn, NULL);                                              \
		FILE *r = real_##fn args;                                             \
		if (__builtin_expect(!r || (dt_watch & DT_WATCH_MASK(kind_)), 0))     \
			dt_slow_##fn(DT_STRIP args, r != NULL, 0);                    \
		return r;                                                             \
	}
/* The mode exists only with O_CREAT or a full O_TMPFILE; glibc reads it as
 * int, and so do we. The slow path gets it as a plain argument. */
#define DT_OPEN(fn, params, args, sig, ...)                                           \
	DT_SLOW_FN(fn, DT_K_OPEN, sig, __VA_ARGS__)                                   \
	DT_EXPORT int fn params                                                       \
	{                                                                             \
		DT_CHECK_REAL(fn, -1);                                                \
		unsigned mode = 0;                                                    \
		if ((flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE) {      \
			va_list ap;                                                   \
			va_start(ap, flags);                                          \
			mode = (unsigned)va_arg(ap, int);                             \
			va_end(ap);                                                   \
		}                                                                     \
		int r = real_##fn args;                                               \
		if (__builtin_expect(r == -1 || (dt_watch & DT_WATCH_MASK(DT_K_OPEN)), 0)) \
			dt_slow_##fn(DT_STRIP args, r != -1, r);                      \
		return r;                                                             \
	}
/* fcntl's third argument is an int or a pointer; like glibc, pass it on as
 * a pointer-sized value. Only failed lock commands are of interest. */
#define DT_FCNTL(fn)                                                                  \
	static DT_COLD void dt_slow_##fn(int fd, int cmd, void *arg)                  \
	{                                                                             \
		int dt_err_ = errno;                                                  \
		struct dt_call dt_c_ = {.name = #fn, .kind = DT_K_LOCK, DT_FD(fd),    \
					.cmd = cmd, .flags = dt_lock_type(arg)};      \
		dt_after_call(&dt_c_, 0, dt_err_, -1);                                \
		errno = dt_err_;                                                      \
	}                                                                             \
	DT_EXPORT int fn(int fd, int cmd, ...)                                        \
	{                                                                             \
		DT_CHECK_REAL(fn, -1);                                                \
		va_list ap;                                                           \
		va_start(ap, cmd);                                                    \
		void *arg = va_arg(ap, void *);                                       \
		va_end(ap);                                                           \
		int r = real_##fn(fd, cmd, arg);                                      \
		if (__builtin_expect(r == -1, 0) && dt_is_lock_cmd(cmd))              \
			dt_slow_##fn(fd, cmd, arg);                                   \
		return r;                                                             \
	}

static inline int dt_is_lock_cmd(int cmd)
{
	return cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
}

static inline int dt_lock_type(void *arg)
{
	const struct flock *fl = arg;
	return fl ? fl->l_type : -1;
}

/* A slow path receives every argument of its call; the description uses
 * the ones a record needs. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "calls.def"
#pragma GCC diagnostic pop
#undef DT_INT
#undef DT_PTR
#undef DT_OPEN
#undef DT_FCNTL
