/* SPDX-License-Identifier: MIT */
/*
 * The slow path: deciding whether a call is worth a record, building it and
 * appending it to the ring. Reached only when a call failed or a success is
 * watched, so nothing here is on the hot path.
 *
 * Rules: no malloc, no stdio, no locks (signal handlers, vfork children);
 * a thread-local guard stops recursion; errno is restored by the caller;
 * anything that goes wrong drops the record, never disturbs the program.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#include "iflags.h"
#include "openflags.h"
#include "probe.h"
#include "probe_state.h"
#include "pyframes.h"
#include "resolve.h"
#include "ring.h"
#include "selfids.h"
#include "sys.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#ifndef __O_TMPFILE
#define __O_TMPFILE (O_TMPFILE & ~O_DIRECTORY)
#endif

DT_HIDDEN __thread int dt_in_probe __attribute__((tls_model("initial-exec")));

/* The stack a record is made on: the host's may be a small signal stack or
 * a thread's last few KiB (the most a record took here was ~13 KiB). */
#define DT_PROBE_STACK (64u << 10)
#define DT_GUARD 4096u

/* The arena: one anonymous mapping per record, so that a record never needs
 * a big stack (sigaltstack, posix_spawn's child) or the heap. What every
 * record touches (the stack's top, r1, cwd, the record's start) is one run
 * of pages, [DT_ARENA_HOT_FROM, DT_ARENA_HOT_TO), mapped at once. */
struct dt_arena {
	unsigned char guard[DT_GUARD]; /* PROT_NONE: the stack below faults, not overflows */
	unsigned char stack[DT_PROBE_STACK] __attribute__((aligned(16)));
	struct dt_resolved r1;
	char cwd[PATH_MAX];
	unsigned char rec[DT_REC_MAX];
	struct dt_resolved r2;
	struct dt_proc_scratch proc;
};

/* The stack's top 16 KiB (a record takes 3 KiB, a process's first 8 KiB)
 * through the record's first 8 KiB. */
#define DT_ARENA_HOT_FROM (__builtin_offsetof(struct dt_arena, r1) - (16u << 10))
#define DT_ARENA_HOT_TO (__builtin_offsetof(struct dt_arena, rec) + (8u << 10))
_Static_assert(DT_ARENA_HOT_FROM % 4096 == 0 && DT_ARENA_HOT_FROM >= DT_GUARD,
               "the hot run starts on a page of the stack");

/* The thread whose call this thread-local state serves now (0: none).
 * A thread made by a raw clone without CLONE_SETTLS runs with another
 * thread's thread-local variables: while one of the two records, the
 * other must not touch dt_levels, nor run on the arena stack the first is
 * on; it loses its record. Asked of the kernel at every entry: no cache
 * keyed on thread-local state can tell the two threads apart. */
static __thread _Atomic int dt_owner __attribute__((tls_model("initial-exec")));

/* The process id, from the thread's id: a thread whose id is the process
 * id fork handlers keep is that process's leader, so the id is also the
 * pid, and the main thread (the one that refuses most) needs no getpid.
 * Every other thread asks: a vfork child or a raw clone runs with an id
 * of its own, never that one. tid is the kernel's (not dt_owner's: a
 * signal handler's call can end while this one holds no level yet, and
 * leave dt_owner 0). */
static int dt_getpid(int tid)
{
	if (tid == atomic_load_explicit(&dt_self_pid, memory_order_relaxed))
		return tid;
	return (int)syscall(SYS_getpid);
}

DT_HIDDEN void dt_put_common(struct dt_buf *b, int pid, int tid)
{
	/* the kernel's word, not dt_owner's: a signal handler's call can end
	 * while this one holds no level yet, and leave dt_owner 0 */
	int fresh = tid <= 0; /* the process and entry records: once each */
	if (fresh)
		tid = (int)syscall(SYS_gettid);
	dt_put_times(b);
	dt_put_u64(b, DT_T_PID, (uint64_t)pid);
	dt_put_u64(b, DT_T_TID, (uint64_t)tid);
	dt_selfids_put(b, tid, fresh);
}

/* Does this call ask to change the filesystem (as opposed to read)? */
static int dt_call_writes(const struct dt_call *c)
{
	switch (c->kind) {
	case DT_K_OPEN:
		return (c->flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0;
	case DT_K_FOPEN:
		return c->fmode && (c->fmode[0] != 'r' || dt_has_char(c->fmode, '+'));
	case DT_K_ACCESS:
		return (c->cmd & W_OK) != 0;
	case DT_K_LOCK:
		return 1;
	default:
		return 1;
	}
}

/* fopen's mode as open(2) flags, glibc's reading: 'x' is O_EXCL and 'e'
 * O_CLOEXEC after the first character. */
static int dt_fopen_flags(const char *m)
{
	if (!m)
		return 0;
	int plus = dt_has_char(m, '+'), f;
	switch (m[0]) {
	case 'r':
		f = plus ? O_RDWR : O_RDONLY;
		break;
	case 'w':
		f = (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC;
		break;
	case 'a':
		f = (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND;
		break;
	default:
		return 0;
	}
	for (const char *p = m + 1; *p && *p != ','; p++) {
		if (*p == 'x')
			f |= O_EXCL;
		else if (*p == 'e')
			f |= O_CLOEXEC;
	}
	return f;
}

/* SQLite names its side files after the database; no special code path,
 * just a name in the record. */
DT_HIDDEN const char *dt_sqlite_role(const char *path, enum dt_kind kind)
{
	if (!path)
		return NULL;
	size_t n = dt_strlen(path);
	const char *base = path;
	for (size_t i = 0; i < n; i++)
		if (path[i] == '/')
			base = path + i + 1;
	if (dt_has_suffix(path, n, "-journal"))
		return "journal";
	if (dt_has_suffix(path, n, "-wal"))
		return "wal";
	if (dt_has_suffix(path, n, "-shm"))
		return "shm";
	if (dt_has_suffix(path, n, ".lock"))
		return "lock";
	if (dt_has_prefix(base, "etilqs_"))
		return "temp";
	if (kind == DT_K_MKDIR || kind == DT_K_RMDIR)
		return NULL;
	if (dt_has_suffix(path, n, ".db") || dt_has_suffix(path, n, ".sqlite") ||
	    dt_has_suffix(path, n, ".sqlite3") || dt_has_suffix(path, n, ".db3"))
		return "db";
	return NULL;
}

/* SQLite's silent fallback: a write-open refused, then the same path opened
 * read-only at once (its very next open). Remember the refused path's hash;
 * the next few successful read-only opens compare, then the watch ends, so
 * a refusal costs the opens that follow it at most DT_REOPEN_BUDGET slow
 * paths. */
static _Atomic uint64_t dt_reopen_hash;
static _Atomic int dt_reopen_left;
#define DT_REOPEN_BUDGET 4

static uint64_t dt_path_hash(const char *p)
{
	uint64_t h = 1469598103934665603ULL;
	while (*p) {
		h ^= (unsigned char)*p++;
		h *= 1099511628211ULL;
	}
	return h | 1; /* never 0: 0 means nothing pending */
}

static void dt_put_path(struct dt_buf *b, const struct dt_resolved *r, const char *path, int second)
{
	int o = second ? DT_T_PATH2 - DT_T_PATH : 0;
	dt_put_str(b, (uint16_t)(DT_T_PATH + o), path);
	if (r->dirpath[0])
		dt_put_str(b, (uint16_t)(DT_T_DIRPATH + o), r->dirpath);
	if (r->abspath[0])
		dt_put_str(b, (uint16_t)(DT_T_ABSPATH + o), r->abspath);
	if (r->has_real)
		dt_put_str(b, (uint16_t)(DT_T_REALPATH + o), r->realpath);
	dt_put(b, (uint16_t)(DT_T_STAT + o), &r->st, sizeof(r->st));
	if (r->has_search && !second)
		dt_put(b, DT_T_SEARCH, &r->search,
		       (uint32_t)(sizeof(r->search.f) + dt_strlen(r->search.path)));
}

/* The mount namespace, which tells a sandbox's view of a path from the
 * host's (a read-only bind against the same directory writable). */
static void dt_put_mnt_ns(struct dt_buf *b)
{
	struct stat st;
	if (dt_sys_fstatat(AT_FDCWD, "/proc/self/ns/mnt", &st, 0) == 0)
		dt_put_u64(b, DT_T_MNT_NS, st.st_ino);
}

static int dt_path_uses_cwd(int has_dirfd, int dirfd, const char *path)
{
	return path && path[0] && path[0] != '/' && (!has_dirfd || dirfd == AT_FDCWD);
}

/* How deep signal handlers may nest refusals inside the probe. A handler
 * that interrupts the slow path and refuses a call of its own is recorded
 * like any other (the slow path is reentrant: atomics, raw system calls,
 * pooled arenas, no unwinder in a handler); a handler interrupting that
 * handler too, and so on. Past this depth the record is counted dropped. */
#define DT_MAX_DEPTH 8

/* Each active level of dt_after_call on this thread: where its frame is
 * and the arena it holds, so that a level a signal handler left with
 * siglongjmp (it never reached its end) can be found and its arena given
 * back exactly once (dt_levels_live). */
struct dt_level {
	uintptr_t frame;
	int slot;             /* pool slot tried or held, -1 none */
	struct dt_arena *own; /* a private arena (the pool was taken) */
};
static __thread struct dt_level dt_levels[DT_MAX_DEPTH] __attribute__((tls_model("initial-exec")));

/* Arenas are kept in a small pool: a fresh mapping per record cost ~8 page
 * faults, ~400 us on a VM (make bench). A slot's owner word names the level
 * holding it (its address: unique per thread and depth), so taking and
 * giving back are each one compare-and-swap, safe in signal handlers, and
 * a level abandoned by siglongjmp is released by the same swap from its
 * own name: it succeeds only if the level still held the slot, whatever
 * instant the jump came. A thread that finds every slot taken maps an
 * arena of its own for the record, so nothing grows with the number of
 * threads. */
#define DT_ARENA_POOL 8
static struct {
	_Atomic uintptr_t owner; /* 0: free */
	struct dt_arena *arena;  /* mapped by its first owner, then kept */
} dt_pool[DT_ARENA_POOL];

/* An anonymous mapping, noted in *where before any signal handler can run
 * (one runs when mmap returns, before the caller could note it). */
static struct dt_arena *dt_arena_map(struct dt_arena **where, int sharing)
{
	/* raw system calls: libc's mmap, and the loader binding it at its
	 * first call, would run on the host's stack */
	uint64_t all = ~0ULL, old;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof(old));
	long m = syscall(SYS_mmap, 0, sizeof(struct dt_arena), PROT_READ | PROT_WRITE,
	                 sharing | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m != -1)
		dt_unlock_mapping((void *)m, sizeof(struct dt_arena));
	if (m != -1 && syscall(SYS_mprotect, m, DT_GUARD, PROT_NONE) != 0) {
		syscall(SYS_munmap, m, sizeof(struct dt_arena));
		m = -1;
	}
	/* A page fault costs a VM far more than a system call (about 13 us
	 * against 1 here): the pages every record touches are mapped by one,
	 * some 180 us off a process's first refusal (make bench). Linux 5.14
	 * and 4 KiB pages: before, or with larger pages (the run's start is
	 * then misaligned, EINVAL), they fault in as they did. */
	if (m != -1)
		syscall(SYS_madvise, m + (long)DT_ARENA_HOT_FROM,
		        DT_ARENA_HOT_TO - DT_ARENA_HOT_FROM, MADV_POPULATE_WRITE);
	*where = m == -1 ? NULL : (struct dt_arena *)m;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
	return *where;
}

static void dt_arena_give(struct dt_level *lv)
{
	int i = lv->slot;
	if (i >= 0) {
		uintptr_t mine = (uintptr_t)lv;
		atomic_compare_exchange_strong(&dt_pool[i].owner, &mine, 0);
		lv->slot = -1;
	}
	struct dt_arena *a = lv->own;
	if (a) {
		lv->own = NULL; /* a jump between the two loses it: never twice */
		syscall(SYS_munmap, a, sizeof(struct dt_arena));
	}
}

DT_HIDDEN _Atomic int dt_memory_taken;

DT_HIDDEN void dt_note_memory_taken(void)
{
	atomic_store_explicit(&dt_memory_taken, 1, memory_order_relaxed);
}

/* An arena for this record alone. Where the program's RLIMIT_DATA leaves
 * no room for a private mapping, a shared one, which it does not count:
 * the refusal was lost without a trace. Never pooled, as a fork child
 * would share it with its parent. */
static struct dt_arena *dt_arena_map_unpooled(struct dt_level *lv)
{
	lv->slot = -1;
	if (dt_arena_map(&lv->own, MAP_PRIVATE))
		return lv->own;
	return dt_arena_map(&lv->own, MAP_SHARED);
}

/* A pooled arena is the program's memory to unmap, protect or mark
 * MADV_DONTFORK before it forks, as far as it knows: a record on it would
 * raise SIGSEGV. Checked over the pages every record touches, each time it
 * is taken (one system call; the pages are mapped already). */
static int dt_arena_still_mapped(const struct dt_arena *a)
{
	if (dt_mapping_writable((const unsigned char *)a + DT_ARENA_HOT_FROM,
	                        DT_ARENA_HOT_TO - DT_ARENA_HOT_FROM))
		return 1;
	dt_note_memory_taken();
	return 0;
}

static struct dt_arena *dt_arena_take(struct dt_level *lv)
{
	uintptr_t mine = (uintptr_t)lv;
	for (int i = 0; i < DT_ARENA_POOL; i++) {
		uintptr_t free_ = 0;
		lv->slot = i; /* before the swap: a jump after it finds the slot */
		if (!atomic_compare_exchange_strong(&dt_pool[i].owner, &free_, mine))
			continue;
		if (dt_pool[i].arena && !dt_arena_still_mapped(dt_pool[i].arena))
			dt_pool[i].arena = NULL; /* not unmapped: the range may be the program's */
		if (dt_pool[i].arena || dt_arena_map(&dt_pool[i].arena, MAP_PRIVATE))
			return dt_pool[i].arena;
		dt_arena_give(lv);
		return dt_arena_map_unpooled(lv);
	}
	return dt_arena_map_unpooled(lv);
}

static void dt_emit(struct dt_ring *ring, const struct dt_call *c, int type, int err, long result,
                    struct dt_arena *a, const struct dt_unw_regs *from, int tid)
{
	/* one pid for the record, the process record and the vfork test */
	int pid = dt_getpid(tid);
	/* A process that only writes successfully gets no process record by
	 * default: reading /proc for it cost every writing process of an
	 * exec-heavy tree more than its writes did. Its records carry uid, gid and groups; a later
	 * refusal writes the record (--all and DENYTRACE_PROCESS write it at
	 * once). */
	if (type != DT_REC_WRITE || (dt_watch & (DT_WATCH_ALL | DT_WATCH_PROCESS)))
		dt_ensure_process_record(ring, &a->proc, pid);

	struct dt_rec_header *rh = (struct dt_rec_header *)a->rec;
	struct dt_buf b = {a->rec, sizeof(*rh), sizeof(a->rec), 0};
	rh->type = (uint16_t)type;
	dt_put_common(&b, pid, tid);
	dt_put_str(&b, DT_T_OP, c->name);
	dt_put_u64(&b, DT_T_ERRNO, (uint64_t)err);
	dt_put_u64(&b, DT_T_ACCESS, (uint64_t)dt_call_writes(c));
	if (c->kind == DT_K_FOPEN) {
		dt_put_str(&b, DT_T_FMODE, c->fmode);
		dt_put_u64(&b, DT_T_FLAGS,
		           dt_open_flags_to_ring((unsigned)dt_fopen_flags(c->fmode)));
	} else if (c->kind == DT_K_OPEN) {
		dt_put_u64(&b, DT_T_FLAGS, dt_open_flags_to_ring((unsigned)c->flags));
	} else if (c->flags && c->kind != DT_K_LOCK) {
		dt_put_u64(&b, DT_T_FLAGS, (uint64_t)(unsigned)c->flags);
	}
	if (c->kind == DT_K_LOCK && c->name[0] == 'f' && c->name[1] == 'c')
		dt_put_u64(&b, DT_T_FLAGS, (uint64_t)(unsigned)c->flags); /* l_type; F_RDLCK is 0 */
	if (c->mode || c->kind == DT_K_CHMOD || c->kind == DT_K_MKDIR ||
	    (c->kind == DT_K_OPEN &&
	     ((c->flags & O_CREAT) || (c->flags & __O_TMPFILE) == __O_TMPFILE)))
		dt_put_u64(&b, DT_T_MODE, c->mode);
	if (c->kind == DT_K_LOCK || c->kind == DT_K_ACCESS)
		dt_put_u64(&b, DT_T_CMD, (uint64_t)c->cmd);
	if (c->has_fd)
		dt_put_u64(&b, DT_T_FD, (uint64_t)(unsigned)c->fd);
	else if ((type == DT_REC_REOPEN || (type == DT_REC_WRITE && c->kind == DT_K_OPEN)) &&
	         result >= 0) /* a FILE (fopen, tmpfile) has none to tell */
		dt_put_u64(&b, DT_T_FD, (uint64_t)result);

	/* the cwd only for a relative path that resolves against it */
	a->cwd[0] = 0;
	if ((dt_path_uses_cwd(c->has_dirfd, c->dirfd, c->path) ||
	     dt_path_uses_cwd(c->has_dirfd2, c->dirfd2, c->path2)) &&
	    syscall(SYS_getcwd, a->cwd, sizeof(a->cwd)) < 0)
		a->cwd[0] = 0;
	const char *cwd = a->cwd[0] == '/' ? a->cwd : NULL;

	const char *role = NULL;
	if (c->has_fd) {
		dt_resolve_fd(c->fd, &a->r1);
		dt_put_path(&b, &a->r1, NULL, 0);
		role = dt_sqlite_role(a->r1.realpath, c->kind);
	} else if (c->path && !c->path[0] && c->has_dirfd && c->dirfd >= 0) {
		/* AT_EMPTY_PATH: the call acts on the descriptor itself */
		dt_resolve_fd(c->dirfd, &a->r1);
		__builtin_memcpy(a->r1.dirpath, a->r1.realpath, sizeof(a->r1.dirpath));
		dt_put_path(&b, &a->r1, c->path, 0);
		role = dt_sqlite_role(a->r1.realpath, c->kind);
	} else if (c->path) {
		/* Whether the kernel follows a final symlink: never for these,
		 * only with AT_SYMLINK_FOLLOW for linkat, not with O_NOFOLLOW or
		 * O_EXCL (or fopen's "x") for opens. */
		int fopen_excl = c->kind == DT_K_FOPEN && (dt_fopen_flags(c->fmode) & O_EXCL);
		int nofollow = c->nofollow || c->kind == DT_K_UNLINK || c->kind == DT_K_RMDIR ||
		               c->kind == DT_K_RENAME || c->kind == DT_K_SYMLINK || fopen_excl ||
		               (c->kind == DT_K_LINK && !(c->flags & AT_SYMLINK_FOLLOW)) ||
		               (c->kind == DT_K_OPEN && (c->flags & (O_NOFOLLOW | O_EXCL))) ||
		               (c->kind != DT_K_OPEN && c->kind != DT_K_LINK &&
		                (c->flags & AT_SYMLINK_NOFOLLOW));
		dt_resolve(cwd, c->has_dirfd, c->dirfd, c->path, nofollow, &a->r1);
		dt_put_path(&b, &a->r1, c->path, 0);
		role = dt_sqlite_role(c->path, c->kind);
	}
	if (type == DT_REC_DENIAL && err == EPERM && (c->has_fd || c->path))
		dt_put_inode_flags(&b, &a->r1);
	if (c->path2) {
		dt_resolve(cwd, c->has_dirfd2, c->dirfd2, c->path2, 1, &a->r2);
		dt_put_path(&b, &a->r2, c->path2, 1);
		if (!role)
			role = dt_sqlite_role(c->path2, c->kind);
	}
	if (c->target)
		dt_put_str(&b, DT_T_PATH2, c->target);
	if (role)
		dt_put_str(&b, DT_T_SQLITE, role);

	if (type == DT_REC_DENIAL) {
		/* the process record is written: its scratch is free; a vfork
		 * child's Python is its parent's */
		if (pid == atomic_load_explicit(&dt_self_pid, memory_order_relaxed))
			dt_put_pyframes(&b, a->proc.buf, sizeof(a->proc.buf));
		dt_put_backtrace(&b, from);
	} else if (type == DT_REC_WRITE) {
		dt_put_mnt_ns(&b); /* its process may have no process record */
	}

	if (!b.overflow || b.len > sizeof(*rh)) {
		rh->len = b.len;
		dt_ring_put(ring, rh);
	}
}

/* A record to make on the probe's stack. */
struct dt_emit_job {
	const struct dt_call *c;
	int type, err;
	long result;
	struct dt_arena *a;
	const struct dt_unw_regs *from;
	int tid; /* the kernel's answer at this call's entry */
};

#ifndef DT_BENCH_FLOOR
#define DT_BENCH_FLOOR 0
#endif

/* make bench's floor, built into build/bench-floor/ and never installed:
 * what a record costs before anything is recorded. By here the entry, the
 * claim, the held signals and the arena's check are paid; this adds the
 * path's system calls and the ring's check, and walks no stack, builds no
 * record and stores nothing. Its added cost, beside the real probe's in
 * the same rounds, is the part of a refusal that no work on the record
 * itself can take away (the path lookup's own string work is in it). */
static void dt_bench_floor(struct dt_ring *ring, const struct dt_call *c, struct dt_arena *a)
{
	if (c->path) {
		a->cwd[0] = 0;
		if (dt_path_uses_cwd(c->has_dirfd, c->dirfd, c->path) &&
		    syscall(SYS_getcwd, a->cwd, sizeof(a->cwd)) < 0)
			a->cwd[0] = 0;
		dt_resolve(a->cwd[0] == '/' ? a->cwd : NULL, c->has_dirfd, c->dirfd, c->path,
		           c->nofollow, &a->r1);
	}
	(void)dt_ring_intact(ring);
}

static void dt_emit_job_run(void *arg)
{
	const struct dt_emit_job *j = arg;
	struct dt_ring *ring = dt_ring_get();
	if (ring && DT_BENCH_FLOOR)
		dt_bench_floor(ring, j->c, j->a);
	else if (ring)
		dt_emit(ring, j->c, j->type, j->err, j->result, j->a, j->from, j->tid);
	dt_success_bind_clock(); /* here, on the probe's stack */
}

/* Calls fn(arg) with the stack pointer at top (16-byte aligned). Every
 * register a call may change is declared changed; a register the callee
 * keeps (rbx, x19) holds the host's stack pointer meanwhile. */
static void dt_on_stack(void (*fn)(void *), void *arg, void *top)
{
#if defined(__x86_64__) && !defined(__ILP32__)
	__asm__ volatile("movq %%rsp, %%rbx\n\t"
	                 "movq %[top], %%rsp\n\t"
	                 "callq *%[fn]\n\t"
	                 "movq %%rbx, %%rsp"
	                 : "+D"(arg)
	                 : [top] "r"(top), [fn] "r"(fn)
	                 : "rax", "rbx", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory",
	                   "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
	                   "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#elif defined(__aarch64__) && !defined(__ILP32__)
	/* AAPCS64: x0-x18, x30 and the SIMD registers but v8-v15's low
	 * halves are the caller's to lose; sp must stay 16-byte aligned */
	register void *x0 __asm__("x0") = arg;
	__asm__ volatile("mov x19, sp\n\t"
	                 "mov sp, %[top]\n\t"
	                 "blr %[fn]\n\t"
	                 "mov sp, x19"
	                 : "+r"(x0)
	                 : [top] "r"(top), [fn] "r"(fn)
	                 : "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11",
	                   "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x30", "memory",
	                   "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10",
	                   "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20",
	                   "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30",
	                   "v31");
#else
	(void)top;
	fn(arg);
#endif
}

/* Makes the record on the arena's stack, with signals held back meanwhile:
 * a handler must run on the stack the program gave it, not the probe's.
 * glibc's own two as well, which it never lets a program block: an
 * asynchronous cancellation ended the thread wherever the record was, in
 * the ring's attach too, which then never ended for the other threads
 * (they lost their records); a setuid in another thread waits the
 * record's few microseconds for this one. */
static void dt_record(const struct dt_call *c, int type, int err, long result, struct dt_level *lv,
                      const struct dt_unw_regs *from, int tid)
{
	uint64_t hold = ~0ULL, old;
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &hold, &old, sizeof(old)) != 0)
		return;
	struct dt_arena *a = dt_arena_take(lv);
	if (a) {
		struct dt_emit_job j = {c, type, err, result, a, from, tid};
		dt_on_stack(dt_emit_job_run, &j, a->stack + sizeof(a->stack));
		dt_arena_give(lv);
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
}

/* The signal stack this thread last had armed. A handler installed with
 * SS_AUTODISARM runs on it disarmed: sigaltstack() then reports no signal
 * stack at all, and a level on the ordinary stack, below it or above, must
 * still be seen as the live one the handler interrupted. Noted by the
 * first outermost level that records in a thread, and again by the first
 * one after the program set a signal stack (dt_altstack_gen), rather than
 * by each: that was one system call per record. */
static __thread uintptr_t dt_alt_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t dt_alt_hi __attribute__((tls_model("initial-exec")));
static __thread unsigned dt_alt_gen __attribute__((tls_model("initial-exec")));

/* Bumped by every signal stack the program sets (probe.c's sigaltstack,
 * seccomp_watch.c's syscall); never 0, the value of a thread that noted
 * nothing yet. */
static _Atomic unsigned dt_altstack_gen = 1;

DT_HIDDEN void dt_altstack_changed(void)
{
	unsigned g = atomic_load_explicit(&dt_altstack_gen, memory_order_relaxed);
	unsigned next;
	do
		next = g + 1 ? g + 1 : 1;
	while (!atomic_compare_exchange_weak(&dt_altstack_gen, &g, next));
}

/* Notes the armed signal stack, if any; returns 1 when here is on the
 * signal stack (armed now, or disarmed for the handler running on it). */
static int dt_alt_note(uintptr_t here)
{
	stack_t ss;
	if (syscall(SYS_sigaltstack, NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE)) {
		dt_alt_lo = (uintptr_t)ss.ss_sp;
		dt_alt_hi = dt_alt_lo + ss.ss_size;
	}
	return here >= dt_alt_lo && here < dt_alt_hi;
}

/* dt_alt_note for an outermost level: only when nothing was noted since
 * the program last set a signal stack (the generation is read first: a
 * change racing the note makes the next level note again). */
static void dt_alt_note_once(uintptr_t here)
{
	unsigned g = atomic_load_explicit(&dt_altstack_gen, memory_order_acquire);
	if (dt_alt_gen == g)
		return;
	dt_alt_note(here);
	dt_alt_gen = g;
}

/* Entered with levels still marked active. Either they are live (this is
 * a signal handler that interrupted them, or the probe calling itself),
 * or a handler that interrupted them left by siglongjmp and they never
 * ended: their depth and arenas would be lost for good (after eight such
 * jumps the thread would never record again). A live level's frame is an
 * ancestor of this one: on the same stack, at a higher address. A level
 * on the signal stack while this thread no longer runs on it is dead too;
 * one on the ordinary stack while this thread runs on the signal stack is
 * taken as live (a handler interrupting it). Reached only when levels are
 * active, never on the way of a call that succeeded or of a plain refusal.
 * Returns the number of live levels. */
static __attribute__((noinline, cold)) int dt_levels_live(int depth, uintptr_t here)
{
	int on_alt = dt_alt_note(here);
	uintptr_t lo = dt_alt_lo, hi = dt_alt_hi;
	while (depth > 0) {
		uintptr_t f = dt_levels[depth - 1].frame;
		int f_alt = f >= lo && f < hi;
		int dead = f_alt == on_alt ? here >= f : f_alt;
		if (!dead)
			break;
		depth--;
		dt_arena_give(&dt_levels[depth]);
		dt_ring_abandon_attach(depth + 1);
	}
	return depth;
}

/* A fork child's only thread has a tid of its own: a claim copied from
 * the parent must not turn its refusals away. */
DT_HIDDEN void dt_record_after_fork(void)
{
	atomic_store(&dt_owner, 0);
}

static void dt_count_dropped(int ok, int err)
{
	if (!ok && dt_errno_watched(err)) {
		struct dt_ring *ring = dt_ring_peek_storable();
		if (ring)
			dt_ring_count_dropped(ring);
	}
}

static int dt_after_call_owned(const struct dt_call *c, int ok, int err, long result, int type,
                               int tid);

/* What a successful call becomes: a record type, or 0, as most do (a
 * write seen lately, a read-only open nobody waits for). Decided before
 * the claim on the thread-local state, which costs a gettid: the reopen
 * watch and the successes' table are process-wide atomics, and neither
 * makes an interposed call. */
static int dt_success_type(const struct dt_call *c)
{
	int writes = dt_call_writes(c);
	if ((c->kind == DT_K_OPEN || c->kind == DT_K_FOPEN) && !writes && c->path &&
	    (dt_watch & DT_WATCH_REOPEN)) {
		uint64_t want = atomic_load_explicit(&dt_reopen_hash, memory_order_relaxed);
		if (want && want == dt_path_hash(c->path) &&
		    atomic_compare_exchange_strong(&dt_reopen_hash, &want, 0)) {
			__atomic_and_fetch(&dt_watch, ~DT_WATCH_REOPEN, __ATOMIC_RELAXED);
			return DT_REC_REOPEN;
		}
		if (atomic_fetch_sub(&dt_reopen_left, 1) <= 1) {
			/* not the fallback: stop watching */
			if (atomic_compare_exchange_strong(&dt_reopen_hash, &want, 0))
				__atomic_and_fetch(&dt_watch, ~DT_WATCH_REOPEN, __ATOMIC_RELAXED);
		}
		return 0;
	}
	if (writes && c->kind != DT_K_ACCESS && c->kind != DT_K_LOCK &&
	    ((dt_watch & DT_WATCH_ALL) || ((dt_watch & DT_WATCH_WRITES) && dt_success_is_news(c))))
		return DT_REC_WRITE;
	return 0;
}

DT_HIDDEN void dt_after_call(const struct dt_call *c, int ok, int err, long result)
{
	if (!dt_ring_named())
		return; /* nowhere to record to, nothing to count in */
	if (__builtin_expect(!dt_seccomp_enter(), 0)) {
		/* no system call from here on: count, in the mapping, and go */
		struct dt_ring *ring = dt_ring_peek();
		if (ring && !ok && dt_errno_watched(err))
			__atomic_fetch_add(&ring->hdr->unseen, 1, __ATOMIC_RELAXED);
		return;
	}
	int type = ok ? dt_success_type(c) : 0;
	if (ok && !type) {
		dt_seccomp_leave();
		return;
	}
	int tid = (int)syscall(SYS_gettid), owner = 0;
	if (atomic_compare_exchange_strong(&dt_owner, &owner, tid)) {
		dt_after_call_owned(c, ok, err, result, type, tid);
		atomic_store(&dt_owner, 0);
	} else if (owner == tid) {
		/* a signal handler of the thread recording, or that thread after
		 * a handler left the probe by siglongjmp: then it lets go */
		if (dt_after_call_owned(c, ok, err, result, type, tid))
			atomic_store(&dt_owner, 0);
	} else { /* another thread with the same thread-local variables */
		dt_count_dropped(ok, err);
	}
	dt_seccomp_leave();
}

/* Returns 1 when no level of this thread is live (any it found were
 * abandoned by a siglongjmp): the claim on the thread-local state is then
 * this call's to give back. A success comes with its type decided; tid is
 * the kernel's answer for the claim, used again by the record (asking
 * twice was one system call per record). */
static int dt_after_call_owned(const struct dt_call *c, int ok, int err, long result, int type,
                               int tid)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	int depth = dt_in_probe;
	if (__builtin_expect(depth > 0, 0))
		dt_in_probe = depth = dt_levels_live(depth, here);
	int abandoned = depth == 0; /* no live level: the claim is this call's */
	if (depth >= DT_MAX_DEPTH) {
		dt_count_dropped(ok, err);
		return abandoned;
	}
	struct dt_level *lv = &dt_levels[depth];
	lv->frame = here;
	lv->slot = -1;
	lv->own = NULL;
	dt_in_probe = depth + 1;

	if (!ok) {
		int writes = dt_call_writes(c);
		if (c->kind == DT_K_LOCK) {
			/* EACCES/EAGAIN on a lock is usually contention; keep it
			 * only when it is a watched errno or --all asked. */
			if (dt_errno_watched(err) || ((dt_watch & DT_WATCH_ALL) && err == EAGAIN))
				type = DT_REC_DENIAL;
		} else if (dt_errno_watched(err) && (c->kind != DT_K_ACCESS || writes)) {
			type = DT_REC_DENIAL;
		}
		if (type)
			dt_success_note_refusal(c);
		if (type && writes && (c->kind == DT_K_OPEN || c->kind == DT_K_FOPEN) && c->path) {
			atomic_store_explicit(&dt_reopen_left, DT_REOPEN_BUDGET,
			                      memory_order_relaxed);
			atomic_store_explicit(&dt_reopen_hash, dt_path_hash(c->path),
			                      memory_order_relaxed);
			__atomic_or_fetch(&dt_watch, DT_WATCH_REOPEN, __ATOMIC_RELAXED);
		}
	}

	if (type) {
		if (depth == 0)
			dt_alt_note_once(here);
		struct dt_unw_regs from;
		dt_unwind_start(&from);
		dt_record(c, type, ok ? 0 : err, result, lv, &from, tid);
	}
	dt_in_probe = depth;
	return abandoned;
}
