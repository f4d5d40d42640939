/* SPDX-License-Identifier: MIT */
/*
 * Which successful write-class calls become records by default (without
 * --all, which records every one). An intermittent refusal is explained by
 * comparing the facts of the writes that worked with those of the refused
 * ones, so a success is worth a record when it says something new about
 * its path in this process: the first of its kind, the first after this
 * process was refused the same call on the same path, or one whose facts (the file's and the
 * directory's mode, owner, inode and attributes, the effective uid and
 * gid) differ from the last ones looked at. SQLite creates and unlinks its
 * journal at every transaction: looking at the facts costs a few system
 * calls, as much again as the call itself, so for a path seen recently
 * they are looked at again only after DT_RECHECK_NS. Calls that change
 * those facts themselves (chmod, chown, rename) are looked at every time.
 *
 * The table is per process, lock-free and lossy: two threads racing on one
 * entry cost at most a record too many or a look too many, never a wrong
 * record. A fork child starts afresh (the pid is part of the key).
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>

#include "probe_state.h"
#include "sys.h"

#define DT_SUCCESS_SLOTS 128
#define DT_RECHECK_NS 100000000ULL

struct dt_success_slot {
	_Atomic uint64_t key;   /* 0: empty */
	_Atomic uint64_t facts; /* hash of the facts last looked at */
	_Atomic uint64_t seen_ns;
};
static struct dt_success_slot dt_successes[DT_SUCCESS_SLOTS];

static uint64_t dt_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint64_t dt_mix_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return dt_mix(h, 0);
}

/* A file's inode is left out: SQLite's journal is a new file, with a new
 * inode, at every transaction. A directory's is kept: it tells a directory
 * replaced by another of the same name. */
static uint64_t dt_mix_statx(uint64_t h, int dirfd, const char *path, int flags)
{
	struct statx sx;
	if (syscall(SYS_statx, dirfd, path, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
	            STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO, &sx) != 0)
		return dt_mix(h, 1); /* missing: a fact too */
	h = dt_mix(h, (uint64_t)sx.stx_mode << 32 | sx.stx_uid);
	h = dt_mix(h, (uint64_t)sx.stx_gid << 32 | sx.stx_dev_minor);
	if (S_ISDIR(sx.stx_mode))
		h = dt_mix(h, sx.stx_ino);
	return dt_mix(h, sx.stx_attributes & sx.stx_attributes_mask);
}

/* The facts of path's directory: path cut at its last slash, kept on the
 * stack when short (the probe has 2 KiB of its host's stack); 0 when it
 * does not fit, which makes the caller record. */
static uint64_t dt_mix_parent(uint64_t h, int dirfd, const char *path)
{
	char dir[256];
	size_t n = dt_strlen(path), cut = 0;
	while (n > 1 && path[n - 1] == '/')
		n--;
	for (size_t i = 0; i < n; i++)
		if (path[i] == '/')
			cut = i ? i : 1;
	if (!cut)
		return dt_mix_statx(h, dirfd, ".", 0);
	if (cut >= sizeof(dir))
		return 0;
	/* not memcpy: its first call would bind it, on the host's stack
	 * (see dt_clock_bound) */
	for (size_t i = 0; i < cut; i++)
		dir[i] = path[i];
	dir[cut] = 0;
	return dt_mix_statx(h, dirfd, dir, 0);
}

/* A hash of what the call's success depended on, as it is now; 0 when it
 * could not be told. */
static uint64_t dt_success_facts(const struct dt_call *c)
{
	uint64_t h = dt_mix((uint64_t)syscall(SYS_geteuid), (uint64_t)syscall(SYS_getegid));
	if (c->has_fd)
		return dt_mix_statx(h, c->fd, "", AT_EMPTY_PATH) | 1;
	int at = c->has_dirfd ? c->dirfd : AT_FDCWD;
	if (!c->path || !c->path[0])
		return dt_mix_statx(h, at, "", AT_EMPTY_PATH) | 1;
	h = dt_mix_statx(h, at, c->path, 0);
	if (!(h = dt_mix_parent(h, at, c->path)))
		return 0;
	if (c->path2 && c->kind != DT_K_SYMLINK)
		h = dt_mix_parent(h, c->has_dirfd2 ? c->dirfd2 : AT_FDCWD, c->path2);
	return h ? h | 1 : 0;
}

static uint64_t dt_success_key(const struct dt_call *c, int pid)
{
	uint64_t k = dt_mix((uint64_t)pid, (uint64_t)c->kind);
	k = dt_mix(k, c->has_fd ? (uint64_t)c->fd + 1 : 0);
	k = dt_mix(k, c->has_dirfd ? (uint64_t)c->dirfd + 2 : 0);
	k = dt_mix_str(k, c->path);
	k = dt_mix_str(k, c->path2);
	return k | 1;
}

/* The slot of key: one of two (the key's two hashes), the one holding it,
 * else an empty one, else the one looked at longer ago. With one slot a
 * key, two paths a worker alternates between (SQLite's journal open and
 * unlink) that shared it evicted each other and every call was news: a
 * pid-dependent 1-in-20 chance per run of recording all of them. */
static struct dt_success_slot *dt_success_slot_of(uint64_t key)
{
	struct dt_success_slot *a = &dt_successes[key % DT_SUCCESS_SLOTS];
	struct dt_success_slot *b = &dt_successes[(key >> 32) % DT_SUCCESS_SLOTS];
	uint64_t ka = atomic_load_explicit(&a->key, memory_order_relaxed);
	uint64_t kb = atomic_load_explicit(&b->key, memory_order_relaxed);
	if (ka == key || a == b)
		return a;
	if (kb == key)
		return b;
	if (!ka)
		return a;
	if (!kb)
		return b;
	return atomic_load_explicit(&a->seen_ns, memory_order_relaxed) <=
	               atomic_load_explicit(&b->seen_ns, memory_order_relaxed)
	           ? a
	           : b;
}

/* The call was refused: its next success on that path is news (it says
 * when the path worked again). */
DT_HIDDEN void dt_success_note_refusal(const struct dt_call *c)
{
	int pid = atomic_load_explicit(&dt_self_pid, memory_order_relaxed);
	uint64_t key = dt_success_key(c, pid);
	struct dt_success_slot *s = dt_success_slot_of(key);
	uint64_t was = key;
	atomic_compare_exchange_strong(&s->key, &was, 0);
}

/* The probe binds its imports lazily (Makefile): the loader binds one at
 * its first call, on the caller's stack, and that takes more than 4 KiB
 * (the symbol lookup and the xsave area), more than the probe may take of
 * its host's. dt_success_is_news runs on the host's stack, so it asks the
 * kernel for the time until a record, made on the probe's own stack, has
 * bound clock_gettime. */
static _Atomic int dt_clock_bound;

DT_HIDDEN void dt_success_bind_clock(void)
{
	if (atomic_load_explicit(&dt_clock_bound, memory_order_relaxed))
		return;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	atomic_store_explicit(&dt_clock_bound, 1, memory_order_release);
}

static uint64_t dt_success_now(void)
{
	struct timespec ts;
	if (atomic_load_explicit(&dt_clock_bound, memory_order_acquire))
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	else if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Calls that change the facts the others depend on: each is looked at. */
static int dt_success_changes_facts(enum dt_kind k)
{
	return k == DT_K_CHMOD || k == DT_K_CHOWN || k == DT_K_RENAME;
}

/* Device and kernel files say nothing about a board, and every shell
 * opens /dev/null for writing: recording it would attach the ring and
 * write a process record in each of them. */
static int dt_success_is_pseudo(const char *path)
{
	return path && (dt_has_prefix(path, "/dev/") || dt_has_prefix(path, "/proc/") ||
	                dt_has_prefix(path, "/sys/"));
}

DT_HIDDEN int dt_success_is_news(const struct dt_call *c)
{
	if (dt_success_is_pseudo(c->path))
		return 0;
	int pid = atomic_load_explicit(&dt_self_pid, memory_order_relaxed);
	uint64_t key = dt_success_key(c, pid), now = dt_success_now();
	struct dt_success_slot *s = dt_success_slot_of(key);
	int same_key = atomic_load_explicit(&s->key, memory_order_relaxed) == key;
	if (same_key && !dt_success_changes_facts(c->kind) &&
	    now - atomic_load_explicit(&s->seen_ns, memory_order_relaxed) < DT_RECHECK_NS)
		return 0;
	uint64_t facts = dt_success_facts(c);
	atomic_store_explicit(&s->seen_ns, now, memory_order_relaxed);
	if (same_key && facts && atomic_load_explicit(&s->facts, memory_order_relaxed) == facts)
		return 0;
	atomic_store_explicit(&s->key, key, memory_order_relaxed);
	atomic_store_explicit(&s->facts, facts, memory_order_relaxed);
	return 1;
}
