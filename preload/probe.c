/* SPDX-License-Identifier: MIT */
/*
 * The interposed entry points, generated from calls.def. Each wrapper calls
 * the real function through a pointer resolved at its first call, returns
 * exactly what it returned, and takes the slow path only when the call
 * failed or a success is being watched (a write, by default; every call
 * with DENYTRACE_ALL; a pending reopen).
 *
 * Built without _FILE_OFFSET_BITS=64 so that open and open64 are distinct.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>
#include <utime.h>

#include "probe_state.h"

#define DT_AT(fd) .has_dirfd = 1, .dirfd = (fd)
#define DT_AT2(fd) .has_dirfd2 = 1, .dirfd2 = (fd)
#define DT_P(p) .path = (p)
#define DT_P2(p) .path2 = (p)
#define DT_FD(f) .has_fd = 1, .fd = (f)

#ifndef __O_TMPFILE
#define __O_TMPFILE (O_TMPFILE & ~O_DIRECTORY)
#endif

#define DT_COLD __attribute__((noinline, cold))

/* Pointers to the real functions, resolved on first use (DT_GET_REAL). */
#define DT_INT(fn, params, args, kind, ...) static int(*real_##fn) params;
#define DT_PTR(fn, type, params, args, kind, ...) static type(*real_##fn) params;
#define DT_PTR0(fn, type, kind, ...) static type (*real_##fn)(void);
#define DT_OPEN(fn, params, args, ...) static int(*real_##fn) params;
#define DT_FCNTL(fn) static int (*real_##fn)(int, int, ...);
#include "calls.def"
#undef DT_INT
#undef DT_PTR
#undef DT_PTR0
#undef DT_OPEN
#undef DT_FCNTL

/*
 * Each real function is resolved by its wrapper's first call, not at load:
 * resolving all of them at load costs every exec more than the rest of
 * the probe (make bench, the probe's load). What keeps this as safe as resolving early:
 *  - Threads racing a first call each look the name up and store the same
 *    pointer; the pointer is read and written whole (relaxed atomics), so a
 *    thread sees either NULL (and resolves it itself) or the real function.
 *  - A signal handler that makes the first call of a wrapper resolves it
 *    there. dlsym(RTLD_NEXT) that finds its symbol allocates nothing and
 *    takes only the loader's recursive lock: a handler that interrupted
 *    this thread inside the loader re-enters it, one interrupting another
 *    thread waits for it, as a lazily bound PLT call in a handler would.
 *  - A vfork child (or posix_spawn's) shares its parent's memory: it stores
 *    the pointer the parent would have stored, and the lock it takes is
 *    released before the call returns.
 *  - The recursion guard is not involved: nothing here calls an
 *    interposed function, and the slow path uses raw system calls.
 * A function libc lacks behaves like a missing system call (ENOSYS).
 * tests/integration/test_firstcall.c makes each of these first calls.
 */
DT_HIDDEN DT_COLD void *dt_resolve_real(void **slot, const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p)
		__atomic_store_n(slot, p, __ATOMIC_RELAXED);
	return p;
}

/* Which dt_watch bits make a successful call of this kind take the slow
 * path: --all for everyone, the pending reopen only for openers, the
 * default successful writes for all but locks and access checks. */
#define DT_WATCH_MASK(kind)                                                                        \
	(((kind) == DT_K_OPEN || (kind) == DT_K_FOPEN)                                             \
	     ? (DT_WATCH_ALL | DT_WATCH_REOPEN | DT_WATCH_WRITES)                                  \
	 : ((kind) == DT_K_LOCK || (kind) == DT_K_ACCESS) ? DT_WATCH_ALL                           \
	                                                  : (DT_WATCH_ALL | DT_WATCH_WRITES))
/* The same for open(2) itself, whose flags say whether it writes: a
 * read-only open that succeeds stays on the fast path by default. */
#define DT_WATCH_OPEN_MASK(flags)                                                                  \
	(DT_WATCH_ALL | DT_WATCH_REOPEN |                                                          \
	 (((flags) & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) ? DT_WATCH_WRITES : 0))

#define DT_STRIP(...) __VA_ARGS__

/* The slow path of each wrapper lives in its own cold function, so that a
 * call that succeeds costs the indirect call, one load and one compare: no
 * stack frame for a struct it never builds. */
#define DT_SLOW_FN(fn, kind_, sig, ...)                                                            \
	static DT_COLD void dt_slow_##fn(DT_STRIP sig, int dt_ok_, long dt_r_)                     \
	{                                                                                          \
		int dt_err_ = errno;                                                               \
		struct dt_call dt_c_ = {.name = #fn, .kind = kind_, __VA_ARGS__};                  \
		dt_after_call(&dt_c_, dt_ok_, dt_err_, dt_r_);                                     \
		errno = dt_err_;                                                                   \
	}

#define DT_INT(fn, params, args, kind_, ...)                                                       \
	DT_SLOW_FN(fn, kind_, params, __VA_ARGS__)                                                 \
	DT_EXPORT int fn params                                                                    \
	{                                                                                          \
		DT_GET_REAL(fn, -1)                                                                \
		int r = dt_fn_ args;                                                               \
		if (__builtin_expect(r == -1 || (dt_watch & DT_WATCH_MASK(kind_)), 0))             \
			dt_slow_##fn(DT_STRIP args, r != -1, r);                                   \
		return r;                                                                          \
	}
#define DT_PTR(fn, type, params, args, kind_, ...)                                                 \
	DT_SLOW_FN(fn, kind_, params, __VA_ARGS__)                                                 \
	DT_EXPORT type fn params                                                                   \
	{                                                                                          \
		DT_GET_REAL(fn, NULL)                                                              \
		type r = dt_fn_ args;                                                              \
		if (__builtin_expect(!r || (dt_watch & DT_WATCH_MASK(kind_)), 0))                  \
			dt_slow_##fn(DT_STRIP args, r != NULL, -1);                                \
		return r;                                                                          \
	}
#define DT_PTR0(fn, type, kind_, ...)                                                              \
	static DT_COLD void dt_slow_##fn(int dt_ok_)                                               \
	{                                                                                          \
		int dt_err_ = errno;                                                               \
		struct dt_call dt_c_ = {.name = #fn, .kind = kind_, __VA_ARGS__};                  \
		dt_after_call(&dt_c_, dt_ok_, dt_err_, -1); /* no descriptor */                    \
		errno = dt_err_;                                                                   \
	}                                                                                          \
	DT_EXPORT type fn(void)                                                                    \
	{                                                                                          \
		DT_GET_REAL(fn, NULL)                                                              \
		type r = dt_fn_();                                                                 \
		if (__builtin_expect(!r || (dt_watch & DT_WATCH_MASK(kind_)), 0))                  \
			dt_slow_##fn(r != NULL);                                                   \
		return r;                                                                          \
	}
/* The mode exists only with O_CREAT or a full O_TMPFILE; glibc reads it as
 * int, and so do we. The slow path gets it as a plain argument. */
#define DT_OPEN(fn, params, args, sig, ...)                                                        \
	DT_SLOW_FN(fn, DT_K_OPEN, sig, __VA_ARGS__)                                                \
	DT_EXPORT int fn params                                                                    \
	{                                                                                          \
		DT_GET_REAL(fn, -1)                                                                \
		unsigned mode = 0;                                                                 \
		if ((flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE) {                   \
			va_list ap;                                                                \
			va_start(ap, flags);                                                       \
			mode = (unsigned)va_arg(ap, int);                                          \
			va_end(ap);                                                                \
		}                                                                                  \
		int r = dt_fn_ args;                                                               \
		if (__builtin_expect(r == -1 || (dt_watch & DT_WATCH_OPEN_MASK(flags)), 0))        \
			dt_slow_##fn(DT_STRIP args, r != -1, r);                                   \
		return r;                                                                          \
	}
/* fcntl's third argument is an int or a pointer; like glibc, pass it on as
 * a pointer-sized value. Only failed lock commands are of interest. */
#define DT_FCNTL(fn)                                                                               \
	static DT_COLD void dt_slow_##fn(int fd, int cmd, void *arg)                               \
	{                                                                                          \
		int dt_err_ = errno;                                                               \
		struct dt_call dt_c_ = {.name = #fn,                                               \
		                        .kind = DT_K_LOCK,                                         \
		                        DT_FD(fd),                                                 \
		                        .cmd = cmd,                                                \
		                        .flags = dt_lock_type(arg)};                               \
		dt_after_call(&dt_c_, 0, dt_err_, -1);                                             \
		errno = dt_err_;                                                                   \
	}                                                                                          \
	DT_EXPORT int fn(int fd, int cmd, ...)                                                     \
	{                                                                                          \
		DT_GET_REAL(fn, -1)                                                                \
		va_list ap;                                                                        \
		va_start(ap, cmd);                                                                 \
		void *arg = va_arg(ap, void *);                                                    \
		va_end(ap);                                                                        \
		int r = dt_fn_(fd, cmd, arg);                                                      \
		if (__builtin_expect(r == -1, 0) && dt_is_lock_cmd(cmd))                           \
			dt_slow_##fn(fd, cmd, arg);                                                \
		return r;                                                                          \
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
#undef DT_PTR0
#undef DT_OPEN
#undef DT_FCNTL

/* Not a file call: the slow path keeps where each thread's signal stack is
 * (record.c, dt_alt_note_once) and learns here that it moved. */
static int (*real_sigaltstack)(const stack_t *, stack_t *);
DT_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
	DT_GET_REAL(sigaltstack, -1)
	int r = dt_fn_(ss, old);
	if (ss && r == 0)
		dt_altstack_changed();
	return r;
}

/* Not file calls either: whether new mappings are locked memory now. */
DT_HIDDEN int dt_locks_future;

DT_HIDDEN void dt_lockall_changed(long flags, long result)
{
	if (result == 0)
		__atomic_store_n(&dt_locks_future, (flags & MCL_FUTURE) != 0, __ATOMIC_RELAXED);
}

static int (*real_mlockall)(int);
DT_EXPORT int mlockall(int flags)
{
	DT_GET_REAL(mlockall, -1)
	int r = dt_fn_(flags);
	dt_lockall_changed(flags, r);
	return r;
}

static int (*real_munlockall)(void);
DT_EXPORT int munlockall(void)
{
	DT_GET_REAL(munlockall, -1)
	int r = dt_fn_();
	dt_lockall_changed(0, r);
	return r;
}

/* After mlockall(MCL_FUTURE) every new mapping is locked and counts
 * against RLIMIT_MEMLOCK: the probe's arenas, tables and ring used up
 * what the program had left for its own (its mmap then failed). Only
 * then, as munlock is a call a strict filter may not expect. */
DT_HIDDEN void dt_unlock_mapping(void *addr, size_t len)
{
	if (!__atomic_load_n(&dt_locks_future, __ATOMIC_RELAXED))
		return;
	int saved = errno;
	syscall(SYS_munlock, addr, len);
	errno = saved;
}
