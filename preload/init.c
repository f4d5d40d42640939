/* SPDX-License-Identifier: MIT */
/*
 * Load-time set-up and attaching to the ring. Loading must stay cheap (it
 * happens at every exec of the traced tree): the constructor reads a few
 * variables and registers a fork handler; real functions are resolved by
 * their wrappers on first use (probe.c), the ring is mapped on the first
 * record, and /proc is read only then.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>

#include "probe_state.h"
#include "sys.h"

/* Successful writes are recorded by default (deduplicated, successes.c);
 * DENYTRACE_REFUSALS_ONLY=1 turns that off, DENYTRACE_ALL=1 records all. */
DT_HIDDEN int dt_watch = DT_WATCH_WRITES;
DT_HIDDEN _Atomic int dt_self_pid;
/* EPERM, EACCES, EROFS and EXDEV unless DENYTRACE_ERRNOS says otherwise. */
DT_HIDDEN uint64_t dt_errno_set[4] = {(1ULL << EPERM) | (1ULL << EACCES) | (1ULL << EROFS) |
                                      (1ULL << EXDEV)};
DT_HIDDEN struct dt_config dt_config = {.ring_fd = -1, .backtrace = DT_BT_ON};

static void dt_errno_add(int e)
{
	if (e > 0 && e < 256)
		dt_errno_set[e >> 6] |= 1ULL << (e & 63);
}

static const struct {
	const char *name;
	int value;
} dt_errno_names[] = {
    {"EPERM", EPERM},   {"EACCES", EACCES},   {"EROFS", EROFS},
    {"EXDEV", EXDEV},   {"ENOENT", ENOENT},   {"EEXIST", EEXIST},
    {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT},   {"EBUSY", EBUSY},
    {"EAGAIN", EAGAIN}, {"ETXTBSY", ETXTBSY}, {"ENOTDIR", ENOTDIR},
    {"EISDIR", EISDIR}, {"ELOOP", ELOOP},     {"ENAMETOOLONG", ENAMETOOLONG},
    {"EINVAL", EINVAL}, {"ENOSYS", ENOSYS},   {"EOPNOTSUPP", EOPNOTSUPP},
};

/* The constructor's parsers: no libc string functions, so that loading
 * the probe binds none of them (see the Makefile on lazy binding). */
static unsigned long long dt_parse_ull(const char *s, const char **end)
{
	unsigned long long v = 0;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (unsigned long long)(*s++ - '0');
	*end = s;
	return v;
}

static int dt_word_is(const char *s, size_t n, const char *word)
{
	size_t i = 0;
	while (i < n && word[i] && s[i] == word[i])
		i++;
	return i == n && !word[i];
}

/* DENYTRACE_ERRNOS: comma-separated names or numbers; replaces the default
 * set. Unknown words are ignored (the launcher validates them). */
static void dt_parse_errnos(const char *s)
{
	memset(dt_errno_set, 0, sizeof(dt_errno_set));
	while (*s) {
		const char *e = s;
		while (*e && *e != ',')
			e++;
		size_t n = (size_t)(e - s);
		if (n && s[0] >= '0' && s[0] <= '9') {
			const char *end;
			dt_errno_add((int)dt_parse_ull(s, &end));
		} else {
			for (size_t i = 0; i < sizeof(dt_errno_names) / sizeof(dt_errno_names[0]);
			     i++)
				if (dt_word_is(s, n, dt_errno_names[i].name))
					dt_errno_add(dt_errno_names[i].value);
		}
		s = *e ? e + 1 : e;
	}
}

/* Copies a variable's value when it fits (a longer one is ignored). */
static void dt_copy_value(char *dst, size_t cap, const char *v)
{
	size_t n = dt_strlen(v);
	if (n < cap)
		__builtin_memcpy(dst, v, n + 1);
}

/* The variables the launcher sets, after their DENYTRACE_ prefix. */
enum {
	DT_V_ERRNOS,
	DT_V_ALL,
	DT_V_BACKTRACE,
	DT_V_FD,
	DT_V_RING_ID,
	DT_V_RING,
	DT_V_ENV,
	DT_V_REFUSALS_ONLY,
	DT_V_ENTRY,
	DT_V_PROCESS,
	DT_V_N
};
static const char *const dt_config_names[DT_V_N] = {
    [DT_V_ERRNOS] = "ERRNOS",
    [DT_V_ALL] = "ALL",
    [DT_V_BACKTRACE] = "BACKTRACE",
    [DT_V_FD] = "FD",
    [DT_V_RING_ID] = "RING_ID",
    [DT_V_RING] = "RING",
    [DT_V_ENV] = "ENV",
    [DT_V_REFUSALS_ONLY] = "REFUSALS_ONLY",
    [DT_V_ENTRY] = "ENTRY",
    [DT_V_PROCESS] = "PROCESS",
};

static void dt_config_var(int which, const char *v)
{
	const char *end;
	switch (which) {
	case DT_V_ERRNOS:
		if (*v)
			dt_parse_errnos(v);
		break;
	case DT_V_ALL:
		if (*v && !(v[0] == '0' && !v[1]))
			dt_watch |= DT_WATCH_ALL;
		break;
	case DT_V_PROCESS:
		if (*v && !(v[0] == '0' && !v[1]))
			dt_watch |= DT_WATCH_PROCESS;
		break;
	case DT_V_REFUSALS_ONLY:
		if (*v && !(v[0] == '0' && !v[1]))
			dt_watch &= ~DT_WATCH_WRITES;
		break;
	case DT_V_BACKTRACE:
		if (v[0] == '0' && !v[1])
			dt_config.backtrace = DT_BT_OFF;
		break;
	case DT_V_FD:
		if (*v)
			dt_config.ring_fd = v[0] == '-' ? -(int)dt_parse_ull(v + 1, &end)
			                                : (int)dt_parse_ull(v, &end);
		break;
	case DT_V_RING_ID:
		dt_config.ring_dev = dt_parse_ull(v, &end);
		if (end != v && *end == ':') {
			const char *ino = end + 1;
			dt_config.ring_ino = dt_parse_ull(ino, &end);
			dt_config.has_ring_id = end != ino && (*end == 0 || *end == ':');
			if (dt_config.has_ring_id && *end == ':') {
				const char *created = end + 1;
				dt_config.ring_created = dt_parse_ull(created, &end);
				dt_config.has_ring_created = end != created && *end == 0;
				dt_config.has_ring_id = dt_config.has_ring_created;
			}
		}
		break;
	case DT_V_RING:
		dt_copy_value(dt_config.ring_path, sizeof(dt_config.ring_path), v);
		break;
	case DT_V_ENV:
		dt_copy_value(dt_config.env_names, sizeof(dt_config.env_names), v);
		break;
	case DT_V_ENTRY:
		dt_config.entry = v[0] == '1' && !v[1];
		break;
	}
}

/* One pass over the environment for the DENYTRACE_* variables (seven
 * getenv calls walked it seven times in every exec).
 * The first definition of a name wins, as with getenv. */
static void dt_read_config(char **envp)
{
	static const char prefix[] = "DENYTRACE_";
	unsigned seen = 0;
	for (char **e = envp; e && *e; e++) {
		const char *s = *e;
		if (s[0] != 'D' || !dt_has_prefix(s, prefix))
			continue;
		const char *name = s + sizeof(prefix) - 1;
		const char *eq = name;
		while (*eq && *eq != '=')
			eq++;
		if (!*eq)
			continue;
		for (int i = 0; i < DT_V_N; i++) {
			if (!dt_word_is(name, (size_t)(eq - name), dt_config_names[i]))
				continue;
			if (!(seen & (1u << i)))
				dt_config_var(i, eq + 1);
			seen |= 1u << i;
			break;
		}
	}
}

static void dt_after_fork_child(void)
{
	/* Under the program's own filter the child records nothing, and
	 * getpid may be what the filter kills for. */
	if (__atomic_load_n(&dt_seccomp_filtered, __ATOMIC_ACQUIRE))
		return;
	atomic_store(&dt_self_pid, (int)syscall(SYS_getpid));
	dt_locks_future = 0; /* mlockall's MCL_FUTURE is not inherited */
	dt_ring_after_fork();
	dt_record_after_fork();
}

/* What pthread_atfork does (it lives in libc_nonshared.a, which the probe
 * does not link): register with glibc under a handle of this object's. */
extern int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
                             void *dso_handle);
static char dt_dso_handle;

/* glibc passes argc, argv and the initial environment to constructors; the
 * environment is all this one reads. Loading must stay cheap (every exec
 * of the traced tree pays it): no real function is resolved here, and the
 * only libc calls are syscall (getpid), __errno_location and the fork
 * handler's registration. __errno_location is bound here, on the loader's
 * stack: every slow path calls it first, and its lazy binding took ~3.5 KiB
 * of the host's stack (a thread with 3 KiB left crashed at its first
 * successful write). The volatile keeps the compiler from dropping the
 * call (the function is declared const). */
__attribute__((constructor(101))) static void dt_init(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	int *volatile bind_errno = __errno_location();
	(void)bind_errno;
	atomic_store(&dt_self_pid, (int)syscall(SYS_getpid));
	__register_atfork(NULL, NULL, dt_after_fork_child, &dt_dso_handle);
	dt_read_config(envp);
	/* No ring named (LD_PRELOAD set by hand, or an environment that kept
	 * it and lost the rest): nothing can ever be recorded, so a success is
	 * not even looked at (make bench's "LD_PRELOAD alone" paid the
	 * successes' statx for nothing). */
	if (!dt_ring_named())
		dt_watch = 0;
	else if (dt_config.entry)
		dt_record_entry();
}

/* ---- the ring ---------------------------------------------------------- */

enum { DT_RING_UNTRIED, DT_RING_ATTACHING, DT_RING_OK, DT_RING_OFF };
static _Atomic int dt_ring_state;
static struct dt_ring dt_ring_mapped;

/* Maps fd if it is the ring we were told about: same device and inode as
 * the launcher created, and the right magic. A descriptor number the
 * program reused for its own file fails the check and is left alone. A
 * ring found by path alone (no DENYTRACE_RING_ID) must be ours and written
 * by nobody else: a file another user planted there would otherwise
 * receive this program's paths, argv and environment. */
static int dt_ring_map_fd(int fd, int by_path)
{
	struct stat st;
	if (dt_sys_fstatat(fd, "", &st, AT_EMPTY_PATH) < 0 || !S_ISREG(st.st_mode))
		return -1;
	if (dt_config.has_ring_id &&
	    (st.st_dev != dt_config.ring_dev || st.st_ino != dt_config.ring_ino))
		return -1;
	if (by_path && !dt_config.has_ring_id &&
	    (st.st_uid != (uid_t)syscall(SYS_geteuid) || (st.st_mode & 022)))
		return -1;
	/* Opened by path, the mapping holds a shared flock of its own, as the
	 * launcher's descriptor does for those who inherit it: a later run
	 * reuses a ring only when nobody holds one (tracer/read/ringfile.c). A
	 * ring that asks for the lock (DT_RING_F_LOCKED) is not written
	 * without it: held exclusively, it is being reused right now; refused
	 * (a filter), nothing would keep it from being reused under us. */
	int unlocked = by_path && syscall(SYS_flock, fd, LOCK_SH | LOCK_NB) < 0;
	struct dt_ring_header h;
	if (syscall(SYS_pread64, fd, &h, sizeof(h), 0) != (long)sizeof(h) ||
	    h.magic != DT_RING_MAGIC || h.version != DT_RING_VERSION)
		return -1;
	if (unlocked && (h.flags & DT_RING_F_LOCKED))
		return -1;
	if (dt_config.has_ring_created && h.created_ns != dt_config.ring_created)
		return -1; /* an earlier run's ring, reused since: not this run's */
	size_t len = (size_t)st.st_size;
	if (len != dt_ring_file_size(h.nslots))
		return -1;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	dt_unlock_mapping(m, len);
	/* each record touches a slot or two: read-ahead on its fault would
	 * zero-fill dozens of pages of the fallocated file (ext4), in the
	 * program's time. Advice only: nothing depends on it taking. */
	int saved = errno;
	syscall(SYS_madvise, m, len, MADV_RANDOM);
	errno = saved;
	if (dt_ring_attach(&dt_ring_mapped, m, len) != 0) {
		munmap(m, len);
		return -1;
	}
	return 0;
}

DT_HIDDEN void dt_ring_after_fork(void)
{
	int s = DT_RING_ATTACHING;
	atomic_compare_exchange_strong(&dt_ring_state, &s, DT_RING_UNTRIED);
	/* A parent that marked the mapping MADV_DONTFORK left this child
	 * without it: the child maps the ring anew, never unmapping the old
	 * range (whatever the child maps next may land there). */
	s = DT_RING_OK;
	if (atomic_load_explicit(&dt_ring_state, memory_order_relaxed) == DT_RING_OK &&
	    !dt_ring_intact(&dt_ring_mapped)) {
		dt_note_memory_taken();
		atomic_compare_exchange_strong(&dt_ring_state, &s, DT_RING_UNTRIED);
	}
	/* fork copies no page table entry of a shared file mapping: the
	 * child has mapped none of the slots ahead its parent had */
	dt_ring_mapped.ahead_from = dt_ring_mapped.ahead_to = 0;
}

/* Whether the mapped ring is still this run's: a ring reused by a later
 * run (its writers' locks notwithstanding: one that could not lock) has a
 * new creation time, and what is written from here would be taken for
 * that run's. Turns the ring off when not. */
static int dt_ring_still_ours(const struct dt_ring *ring)
{
	if (!dt_config.has_ring_created ||
	    atomic_load_explicit((_Atomic uint64_t *)&ring->hdr->created_ns,
	                         memory_order_relaxed) == dt_config.ring_created)
		return 1;
	atomic_store_explicit(&dt_ring_state, DT_RING_OFF, memory_order_release);
	return 0;
}

DT_HIDDEN struct dt_ring *dt_ring_peek(void)
{
	if (atomic_load_explicit(&dt_ring_state, memory_order_acquire) == DT_RING_OK &&
	    dt_ring_still_ours(&dt_ring_mapped))
		return &dt_ring_mapped;
	return NULL;
}

/* Whether the mapping can take a store, checked before its header is read
 * (the program may have unmapped or protected it). Turns the ring off when
 * not: the mapping stays, another thread may be using it, and its range
 * may be the program's own memory by now. */
static int dt_ring_storable(const struct dt_ring *ring)
{
	if (dt_ring_intact(ring))
		return 1;
	dt_note_memory_taken();
	atomic_store_explicit(&dt_ring_state, DT_RING_OFF, memory_order_release);
	return 0;
}

DT_HIDDEN struct dt_ring *dt_ring_peek_storable(void)
{
	if (atomic_load_explicit(&dt_ring_state, memory_order_acquire) == DT_RING_OK &&
	    dt_ring_storable(&dt_ring_mapped) && dt_ring_still_ours(&dt_ring_mapped))
		return &dt_ring_mapped;
	return NULL;
}

DT_HIDDEN void dt_ring_put(struct dt_ring *ring, void *rec)
{
	if (dt_ring_storable(ring) && dt_ring_still_ours(ring) &&
	    dt_ring_append(ring, rec) == DT_RING_W_GONE) {
		dt_note_memory_taken();
		atomic_store_explicit(&dt_ring_state, DT_RING_OFF, memory_order_release);
	}
}

/* The probe level (dt_in_probe) of this thread's attach in progress, 0
 * when none: a signal handler that leaves the probe by siglongjmp while
 * this thread attaches would otherwise leave every thread waiting for an
 * attach that never ends. */
static __thread int dt_attaching __attribute__((tls_model("initial-exec")));

DT_HIDDEN void dt_ring_abandon_attach(int level)
{
	if (dt_attaching != level)
		return;
	dt_attaching = 0;
	int s = DT_RING_ATTACHING;
	atomic_compare_exchange_strong(&dt_ring_state, &s, DT_RING_UNTRIED);
}

DT_HIDDEN void dt_seccomp_before_install(void)
{
	/* a filter stacked on one of the program's: the first one may forbid
	 * the probe's calls (getpid), and the ring no longer matters */
	if (__atomic_load_n(&dt_seccomp_filtered, __ATOMIC_ACQUIRE))
		return;
	if (dt_in_vfork_child())
		return; /* a vfork child must not attach for its parent */
	dt_in_probe++;
	dt_ring_get();
	dt_in_probe--;
}

/* How long a thread waits for another to finish attaching the ring (a few
 * system calls) before it gives up on its record. */
#define DT_ATTACH_SPINS 10000

DT_HIDDEN struct dt_ring *dt_ring_get(void)
{
	/* Threads of a fresh image often refuse at once: the ones that lose
	 * the race to attach wait for the winner rather than lose their
	 * records. Not a signal handler that interrupted the probe, though:
	 * it may have interrupted the attaching thread itself. */
	int s = atomic_load_explicit(&dt_ring_state, memory_order_acquire);
	for (int spin = 0;; spin++) {
		if (s == DT_RING_OK)
			return &dt_ring_mapped;
		if (s == DT_RING_OFF)
			return NULL;
		if (s == DT_RING_UNTRIED &&
		    atomic_compare_exchange_strong(&dt_ring_state, &s, DT_RING_ATTACHING)) {
			dt_attaching = dt_in_probe;
			break; /* ours to attach */
		}
		if (s == DT_RING_ATTACHING) {
			if (dt_in_probe != 1 || spin >= DT_ATTACH_SPINS)
				return NULL; /* drop */
			syscall(SYS_sched_yield);
			s = atomic_load_explicit(&dt_ring_state, memory_order_acquire);
		}
	}

	int ok = -1;
	int saved = errno;
	if (dt_config.ring_fd >= 0)
		ok = dt_ring_map_fd(dt_config.ring_fd, 0);
	if (ok < 0 && dt_config.ring_path[0]) {
		/* The fallback, for children whose parent closed the inherited
		 * descriptor: the path, when it is writable from here. */
		int fd = dt_sys_openat(AT_FDCWD, dt_config.ring_path, O_RDWR | O_NOFOLLOW);
		if (fd >= 0) {
			ok = dt_ring_map_fd(fd, 1);
			dt_sys_close(fd); /* the ring's own fd: no locks involved */
		}
	}
	errno = saved;
	dt_attaching = 0;
	atomic_store_explicit(&dt_ring_state, ok == 0 ? DT_RING_OK : DT_RING_OFF,
	                      memory_order_release);
	return ok == 0 ? &dt_ring_mapped : NULL;
}
