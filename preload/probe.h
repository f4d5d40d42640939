/* SPDX-License-Identifier: MIT */
/* Internals of libdenytrace.so shared between its source files. */
#ifndef DENYTRACE_PROBE_H
#define DENYTRACE_PROBE_H

#include <stddef.h>
#include <stdint.h>

#define DT_HIDDEN __attribute__((visibility("hidden")))

/* What kind of operation an interposed call is. */
enum dt_kind {
	DT_K_OPEN = 1,
	DT_K_FOPEN,
	DT_K_RENAME,
	DT_K_LINK,
	DT_K_SYMLINK,
	DT_K_UNLINK,
	DT_K_RMDIR,
	DT_K_MKDIR,
	DT_K_MKNOD,
	DT_K_TRUNCATE,
	DT_K_CHMOD,
	DT_K_CHOWN,
	DT_K_UTIME,
	DT_K_LOCK,
	DT_K_ACCESS,
};

/* One interposed call as its wrapper saw it. Built only on the slow path. */
struct dt_call {
	const char *name;
	enum dt_kind kind;
	int has_dirfd, dirfd;
	const char *path;
	int has_dirfd2, dirfd2;
	const char *path2;
	const char *target; /* symlink contents */
	int has_fd, fd;
	int flags;
	unsigned mode;
	const char *fmode;
	long cmd;
	int nofollow;
};

/* Slow path: the call failed (ok == 0, err = its errno) or succeeded while
 * something asked to see successes. Never changes errno. */
DT_HIDDEN void dt_after_call(const struct dt_call *c, int ok, int err, long result);

/* The real function name, looked up once and stored in *slot (probe.c). */
DT_HIDDEN void *dt_resolve_real(void **slot, const char *name);

/* An interposed entry point; every other symbol stays hidden. */
#define DT_EXPORT __attribute__((visibility("default")))

/* In a wrapper of fn, its real function kept in real_##fn: declares dt_fn_,
 * the real function, or returns fail with ENOSYS. One load and a compare
 * once resolved; why at the first call, not at load: probe.c. */
#define DT_GET_REAL(fn, fail)                                                                      \
	__typeof__(real_##fn) dt_fn_ = __atomic_load_n(&real_##fn, __ATOMIC_RELAXED);              \
	if (__builtin_expect(!dt_fn_, 0)) {                                                        \
		dt_fn_ = (__typeof__(dt_fn_))dt_resolve_real((void **)&real_##fn, #fn);            \
		if (!dt_fn_) {                                                                     \
			errno = ENOSYS;                                                            \
			return fail;                                                               \
		}                                                                                  \
	}

/* Set while this process image has mlockall(MCL_FUTURE) on, as far as
 * its calls of mlockall, munlockall and syscall tell (a fork child starts
 * without: the kernel does not pass it on). */
DT_HIDDEN extern int dt_locks_future;
DT_HIDDEN void dt_lockall_changed(long flags, long result);
/* Takes a mapping the probe just made out of the program's locked memory
 * while dt_locks_future; errno is the program's. */
DT_HIDDEN void dt_unlock_mapping(void *addr, size_t len);

/* Set once this process image installed a seccomp filter of its own: from
 * then on the probe records nothing, it only counts (seccomp_watch.c). */
DT_HIDDEN extern int dt_seccomp_filtered;
/* Brackets the slow path: 0 when a filter is in (or going in), and the
 * call must only be counted; else 1, and dt_seccomp_leave() follows. A
 * filter installed with TSYNC reaches every thread at once: the installer
 * waits for the slow paths already under way. */
DT_HIDDEN int dt_seccomp_enter(void);
DT_HIDDEN void dt_seccomp_leave(void);
/* Attaches the ring while system calls are still the probe's to make. */
DT_HIDDEN void dt_seccomp_before_install(void);

/* The program set a signal stack: threads note theirs again (record.c). */
DT_HIDDEN void dt_altstack_changed(void);

/* Bits of dt_watch: why successful calls take the slow path. */
#define DT_WATCH_ALL 1    /* DENYTRACE_ALL: record successful writes */
#define DT_WATCH_REOPEN 2 /* a write-open was refused: look for the retry */
#define DT_WATCH_WRITES 4 /* default: successful writes whose facts are news */
/* DENYTRACE_PROCESS: a process record at the first write too (an MCP
 * server's environment is what its handoff depends on) */
#define DT_WATCH_PROCESS 8
DT_HIDDEN extern int dt_watch;

/* successes.c: whether this successful write says something new about its
 * path in this process (see there); a refusal makes the next success of
 * the same call on the same path news again. */
DT_HIDDEN int dt_success_is_news(const struct dt_call *c);
DT_HIDDEN void dt_success_note_refusal(const struct dt_call *c);
/* Binds clock_gettime for dt_success_is_news; call on the probe's stack. */
DT_HIDDEN void dt_success_bind_clock(void);

/* Errno set that counts as a refusal (bit per errno value < 256). */
DT_HIDDEN extern uint64_t dt_errno_set[4];
static inline int dt_errno_watched(int e)
{
	return e > 0 && e < 256 && (dt_errno_set[e >> 6] >> (e & 63)) & 1;
}

#endif
