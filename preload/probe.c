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

#define DT_SLOW(failed, r, ...)                                                       \
	do {                                                                          \
		if (__builtin_expect((failed) || dt_watch, 0)) {                      \
			int dt_err_ = errno;                                          \
			struct dt_call dt_c_ = {__VA_ARGS__};                         \
			dt_after_call(&dt_c_, !(failed), dt_err_, (long)(r));         \
			errno = dt_err_;                                              \
		}                                                                     \
	} while (0)

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

#define DT_INT(fn, params, args, kind_, ...)                                        \
	DT_EXPORT int fn params                                                     \
	{                                                                             \
		DT_CHECK_REAL(fn, -1);                                              \
		int r = real_##fn args;                                             \
		DT_SLOW(r == -1, r, .name = #fn, .kind = kind_, __VA_ARGS__);       \
		return r;                                                             \
	}
#define DT_PTR(fn, params, args, kind_, ...)                                        \
	DT_EXPORT FILE *fn params                                                   \
	{                                                                             \
		DT_CHECK_REAL(fn, NULL);                                            \
		FILE *r = real_##fn args;                                           \
		DT_SLOW(r == NULL, 0, .name = #fn, .kind = kind_, __VA_ARGS__);     \
		return r;                                                             \
	}
/* The mode exists only with O_CREAT or a full O_TMPFILE; glibc reads it as
 * int, and so do we. */
#define DT_OPEN(fn, params, args, ...)                                              \
	DT_EXPORT int fn params                                                     \
	{                                                                             \
		DT_CHECK_REAL(fn, -1);                                              \
		unsigned mode = 0;                                                    \
		if ((flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE) {      \
			va_list ap;                                                   \
			va_start(ap, flags);                                          \
			mode = (unsigned)va_arg(ap, int);                             \
			va_end(ap);                                                   \
		}                                                                     \
		int r = real_##fn args;                                             \
		DT_SLOW(r == -1, r, .name = #fn, .kind = DT_K_OPEN, __VA_ARGS__);   \
		return r;                                                             \
	}
/* fcntl's third argument is an int or a pointer; like glibc, pass it on as
 * a pointer-sized value. Only lock commands are of interest. */
#define DT_FCNTL(fn)                                                                \
	DT_EXPORT int fn(int fd, int cmd, ...)                                      \
	{                                                                             \
		DT_CHECK_REAL(fn, -1);                                              \
		va_list ap;                                                           \
		va_start(ap, cmd);                                                    \
		void *arg = va_arg(ap, void *);                                       \
		va_end(ap);                                                           \
		int r = real_##fn(fd, cmd, arg);                                    \
		if (__builtin_expect(r == -1, 0) && dt_is_lock_cmd(cmd)) {            \
			int dt_err_ = errno;                                          \
			struct dt_call dt_c_ = {.name = #fn, .kind = DT_K_LOCK,     \
						DT_FD(fd), .cmd = cmd,                \
						.flags = dt_lock_type(cmd, arg)};     \
			dt_after_call(&dt_c_, 0, dt_err_, r);                         \
			errno = dt_err_;                                              \
		}                                                                     \
		return r;                                                             \
	}

static inline int dt_is_lock_cmd(int cmd)
{
	return cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
}

static inline int dt_lock_type(int cmd, void *arg)
{
	(void)cmd;
	const struct flock *fl = arg;
	return fl ? fl->l_type : -1;
}

#include "calls.def"
#undef DT_INT
#undef DT_PTR
#undef DT_OPEN
#undef DT_FCNTL
