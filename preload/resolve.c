/* SPDX-License-Identifier: MIT */
/*
 * Turning a path argument into the paths a report needs, on the recording
 * path (signal-safe, raw syscalls only).
 *
 * The realpath is computed without ever opening the target: closing any
 * descriptor of a file drops every POSIX lock the process holds on it, and
 * SQLite depends on those locks. We open the parent directory with O_PATH,
 * ask the kernel for its path through /proc/self/fd, and read the leaf with
 * readlinkat in case it is a symbolic link to follow.
 */
#include "resolve.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>

#include "sys.h"

long dt_fd_path(int fd, char *buf, size_t cap)
{
	char link[40];
	dt_fd_link(fd, link);
	return dt_sys_readlinkat(AT_FDCWD, link, buf, cap);
}

/* What one statx of an open directory says: its owner and mode for the
 * record, and the mount id and inode that name its path for the cache. */
struct dt_dirid {
	int ok;       /* the statx succeeded */
	int cachable; /* a directory, and the kernel gave its mount id */
	uint64_t mnt, dev, ino;
	unsigned mode, uid, gid;
	uint64_t mount_flags; /* from the cache or statfs, ~0 until known */
	uint64_t now;         /* when the cache was asked */
};

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

static void dt_dir_identify(int fd, struct dt_dirid *id)
{
	struct statx sx;
	id->ok = id->cachable = 0;
	id->mount_flags = ~0ULL;
	if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
	            STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO | STATX_MNT_ID,
	            &sx) != 0) {
		/* no statx (Linux < 4.11, or a seccomp profile older than it):
		 * the owner and mode from a plain stat, and no cache */
		struct stat st;
		if (dt_sys_fstatat(fd, "", &st, AT_EMPTY_PATH) != 0)
			return;
		id->ok = 1;
		id->mode = st.st_mode;
		id->uid = st.st_uid;
		id->gid = st.st_gid;
		return;
	}
	id->ok = 1;
	id->mode = sx.stx_mode;
	id->uid = sx.stx_uid;
	id->gid = sx.stx_gid;
	id->ino = sx.stx_ino;
	id->dev = ((uint64_t)sx.stx_dev_major << 32) | sx.stx_dev_minor;
	id->mnt = sx.stx_mnt_id;
	id->cachable = (sx.stx_mask & STATX_MNT_ID) && S_ISDIR(sx.stx_mode);
}

/*
 * The realpath of an open directory is a readlink of /proc/self/fd/N, the
 * dearest system call of a refusal (dearer than the refused call). Refusals come in runs in one
 * directory (SQLite's side files, a retry loop), so a few recent answers are kept, keyed by mount
 * id and inode: a directory has one path within a mount, and a new mount namespace has new mount
 * ids. An entry is used for DT_DIRCACHE_NS after the readlink that filled it, and only while a
 * lookup of its path still finds that directory (a rename, or a new directory with a removed one's
 * inode, is a miss). Entries are seqlocked: readers never wait (a busy or
 * changed entry is a miss), a writer that finds an entry busy does not
 * cache; safe in signal handlers and in threads racing each other.
 */
#define DT_DIRCACHE 8
#define DT_DIRCACHE_NS 100000000ULL
struct dt_dircache_entry {
	_Atomic uint32_t seq; /* odd while being written */
	uint32_t len;
	uint64_t mnt, dev, ino, when_ns;
	uint64_t mount_flags; /* statfs f_flags of its mount, ~0 if unknown */
	char path[PATH_MAX];
};
static struct dt_dircache_entry dt_dircache[DT_DIRCACHE];

static uint64_t dt_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct dt_dircache_entry *dt_dircache_slot(const struct dt_dirid *id)
{
	return &dt_dircache[(id->ino ^ (id->mnt * 0x9e3779b97f4a7c15ULL) >> 7) % DT_DIRCACHE];
}

static long dt_dircache_get(struct dt_dirid *id, uint64_t now, char *buf, size_t cap)
{
	struct dt_dircache_entry *e = dt_dircache_slot(id);
	uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
	if (s1 & 1 || !s1)
		return -1;
	uint32_t len = __atomic_load_n(&e->len, __ATOMIC_RELAXED);
	if (__atomic_load_n(&e->mnt, __ATOMIC_RELAXED) != id->mnt ||
	    __atomic_load_n(&e->ino, __ATOMIC_RELAXED) != id->ino ||
	    __atomic_load_n(&e->dev, __ATOMIC_RELAXED) != id->dev ||
	    now - __atomic_load_n(&e->when_ns, __ATOMIC_RELAXED) > DT_DIRCACHE_NS || len + 1 > cap)
		return -1;
	uint64_t flags = __atomic_load_n(&e->mount_flags, __ATOMIC_RELAXED);
	__builtin_memcpy(buf, e->path, len + 1);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&e->seq, memory_order_relaxed) != s1)
		return -1; /* rewritten while we copied */
	buf[len] = 0;
	id->mount_flags = flags;
	return (long)len;
}

static void dt_dircache_put(const struct dt_dirid *id, const char *path, size_t len)
{
	struct dt_dircache_entry *e = dt_dircache_slot(id);
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);
	if (s & 1 || len + 1 > sizeof(e->path) ||
	    !atomic_compare_exchange_strong(&e->seq, &s, s + 1))
		return;
	atomic_thread_fence(memory_order_release);
	__atomic_store_n(&e->mnt, id->mnt, __ATOMIC_RELAXED);
	__atomic_store_n(&e->dev, id->dev, __ATOMIC_RELAXED);
	__atomic_store_n(&e->ino, id->ino, __ATOMIC_RELAXED);
	__atomic_store_n(&e->when_ns, id->now, __ATOMIC_RELAXED);
	__atomic_store_n(&e->mount_flags, id->mount_flags, __ATOMIC_RELAXED);
	__atomic_store_n(&e->len, (uint32_t)len, __ATOMIC_RELAXED);
	__builtin_memcpy(e->path, path, len);
	e->path[len] = 0;
	atomic_store_explicit(&e->seq, s + 2, memory_order_release);
}

/* Whether path still names the directory id: a cached name is checked by
 * one lookup, because ext4 and xfs give a directory made after one was
 * removed the very same inode (and mount), within the cache's lifetime. */
static int dt_dir_still_named(const char *path, const struct dt_dirid *id)
{
	struct statx sx;
	if (syscall(SYS_statx, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
	            STATX_INO | STATX_MNT_ID, &sx) != 0)
		return 0;
	return (sx.stx_mask & STATX_MNT_ID) && sx.stx_mnt_id == id->mnt && sx.stx_ino == id->ino &&
	       (((uint64_t)sx.stx_dev_major << 32) | sx.stx_dev_minor) == id->dev;
}

/* The kernel's name for the open directory fd: dt_fd_path, or the cache.
 * named: an absolute path fd was just opened by without following a final
 * symbolic link (dt_open_dir), or NULL. A cached name equal to it needs no
 * lookup to check: that open was the lookup dt_dir_still_named makes. */
static long dt_dir_path(int fd, struct dt_dirid *id, const char *named, char *buf, size_t cap)
{
	if (!id->cachable)
		return dt_fd_path(fd, buf, cap);
	id->now = dt_mono_ns();
	long n = dt_dircache_get(id, id->now, buf, cap);
	if (n >= 0 && ((named && !__builtin_strcmp(buf, named)) || dt_dir_still_named(buf, id)))
		return n;
	id->mount_flags = ~0ULL;
	n = dt_fd_path(fd, buf, cap);
	if (n > 0 && buf[0] == '/')
		dt_dircache_put(id, buf, (size_t)n);
	return n;
}

/* The parent's owner and mode (from id, the statx already made) and
 * whether its mount is read-only; path (its realpath, length len) goes
 * back to the cache with the mount's flags when they were not there. */
static void dt_stat_parent(int pfd, struct dt_dirid *id, const char *path, size_t len,
                           struct dt_stat_facts *sf)
{
	if (id->ok) {
		sf->valid |= DT_SF_PARENT;
		sf->parent_mode = id->mode;
		sf->parent_uid = id->uid;
		sf->parent_gid = id->gid;
	}
	if (id->mount_flags == ~0ULL) {
		struct statfs fs;
		if (syscall(SYS_fstatfs, pfd, &fs) != 0)
			return;
		id->mount_flags = (uint64_t)fs.f_flags;
		if (id->cachable && path && path[0] == '/')
			dt_dircache_put(id, path, len);
	}
	sf->valid |= DT_SF_MOUNT;
	sf->mount_flags = id->mount_flags;
}

/* openat(dirfd, path, O_PATH | O_DIRECTORY), the same answer; *named is
 * set to path when it is absolute and its last component was no symbolic
 * link (see dt_dir_path), else NULL. That is asked of the open itself with
 * O_NOFOLLOW, which fails with ENOTDIR on a symbolic link (or a file): then
 * the open is made again as asked, one system call more in that case only. */
static int dt_open_dir(int dirfd, const char *path, const char **named)
{
	*named = NULL;
	if (path[0] == '/') {
		int fd = dt_sys_openat(dirfd, path, O_PATH | O_DIRECTORY | O_NOFOLLOW);
		if (fd >= 0)
			*named = path;
		if (fd >= 0 || (errno != ENOTDIR && errno != ELOOP))
			return fd;
	}
	return dt_sys_openat(dirfd, path, O_PATH | O_DIRECTORY);
}

/* dt_climb_step's answer when the cache resolved the missing path. */
#define DT_CLIMB_CACHED (-2)

/* The directory dir (dirfd, as openat takes them) known to the cache
 * with its mount's flags: its kernel name into buf and its facts into id,
 * from one statx that needs no descriptor. Returns the name's length, 0
 * when the cache cannot answer; -1 with errno when the statx failed. A
 * final symbolic link is not followed (AT_SYMLINK_NOFOLLOW): an absolute
 * dir equal to the cached name was the lookup dt_dir_still_named makes. */
static long dt_dir_cached(int dirfd, const char *dir, struct dt_dirid *id, char *buf, size_t cap)
{
	struct statx sx;
	if (syscall(SYS_statx, dirfd, dir, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
	            STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO | STATX_MNT_ID,
	            &sx) != 0)
		return -1;
	if (!S_ISDIR(sx.stx_mode) || !(sx.stx_mask & STATX_MNT_ID))
		return 0;
	*id = (struct dt_dirid){.ok = 1,
	                        .cachable = 1,
	                        .mnt = sx.stx_mnt_id,
	                        .ino = sx.stx_ino,
	                        .dev = ((uint64_t)sx.stx_dev_major << 32) | sx.stx_dev_minor,
	                        .mode = sx.stx_mode,
	                        .uid = sx.stx_uid,
	                        .gid = sx.stx_gid,
	                        .mount_flags = ~0ULL,
	                        .now = dt_mono_ns()};
	long n = dt_dircache_get(id, id->now, buf, cap);
	if (n <= 0 || id->mount_flags == ~0ULL ||
	    !((dir[0] == '/' && !__builtin_strcmp(buf, dir)) || dt_dir_still_named(buf, id)))
		return 0;
	return n;
}

/* One step of the climb to the nearest existing ancestor: the directory
 * pp, below which missing (a path) does not exist. A statx asks first, as
 * it needs no descriptor: when the cache knows the directory and its
 * mount's flags, the missing path's realpath and the parent's facts come
 * from it and DT_CLIMB_CACHED is returned, without the open, statx and
 * close of an opened directory. Otherwise it is opened
 * as dt_open_dir does; -1 with errno when it cannot be (ENOENT: climb on). */
static int dt_climb_step(int dirfd, const char *pp, const char *missing, struct dt_resolved *out,
                         const char **named)
{
	struct dt_dirid id;
	*named = NULL;
	long n = dt_dir_cached(dirfd, pp, &id, out->realpath, sizeof(out->realpath));
	if (n < 0)
		return errno == ENOSYS || errno == EPERM ? dt_open_dir(dirfd, pp, named) : -1;
	if (n == 0)
		return dt_open_dir(dirfd, pp, named); /* a link is followed there */
	size_t rl = (size_t)n;
	if (rl > 1)
		rl = dt_strcat(out->realpath, rl, sizeof(out->realpath), "/");
	dt_strcat(out->realpath, rl, sizeof(out->realpath), missing);
	dt_stat_parent(-1, &id, out->realpath, (size_t)n, &out->st); /* flags known: no fd used */
	out->has_real = 1;
	return DT_CLIMB_CACHED;
}

/* Splits path (a writable copy) into parent and leaf at the last slash,
 * ignoring trailing slashes. Returns the leaf; *parent is "." or "/" when
 * the path has no directory part. */
static char *dt_split(char *path, const char **parent)
{
	size_t n = dt_strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = 0;
	char *slash = NULL;
	for (size_t i = 0; i < n; i++)
		if (path[i] == '/')
			slash = path + i;
	if (!slash) {
		*parent = ".";
		return path;
	}
	if (slash == path) {
		*parent = "/";
		return path[1] ? path + 1 : path;
	}
	*slash = 0;
	*parent = path;
	return slash + 1;
}

/* The path names a directory itself (".", "..", "/"), open as pfd: its
 * own facts and its parent's. */
static void dt_resolve_dir_itself(int pfd, const struct dt_dirid *id, struct dt_resolved *out)
{
	if (id->ok) {
		out->st.valid |= DT_SF_EXISTS;
		out->st.mode = id->mode;
		out->st.uid = id->uid;
		out->st.gid = id->gid;
	}
	int up = dt_sys_openat(pfd, "..", O_PATH | O_DIRECTORY);
	if (up >= 0) {
		struct dt_dirid upid;
		dt_dir_identify(up, &upid);
		dt_stat_parent(up, &upid, NULL, 0, &out->st);
		dt_sys_close(up);
	}
	out->has_real = 1;
}

/* One stat of the leaf in pfd: it also says whether a nofollow leaf (as
 * passed, first_hop) is a symbolic link. */
static void dt_stat_leaf(int pfd, const char *leaf, int nofollow, int first_hop,
                         struct dt_stat_facts *sf)
{
	struct stat st;
	if (dt_sys_fstatat(pfd, leaf, &st, nofollow ? AT_SYMLINK_NOFOLLOW : 0) != 0)
		return;
	sf->valid |= DT_SF_EXISTS;
	sf->mode = st.st_mode;
	sf->uid = st.st_uid;
	sf->gid = st.st_gid;
	if (nofollow && first_hop && S_ISLNK(st.st_mode))
		sf->valid |= DT_SF_SYMLINK;
}

/* The leaf in pfd: one lstat says whether it exists, whether it is a
 * symbolic link and, when it is none, its facts (a readlinkat and a stat
 * asked that before, two system calls for the common case). Returns the
 * target's length, the target in link, for a link to follow; else 0, the
 * facts (if it exists) in sf, DT_SF_SYMLINK for a link not followed. */
static long dt_leaf_facts(int pfd, const char *leaf, int nofollow, int first_hop, char *link,
                          size_t cap, struct dt_stat_facts *sf)
{
	struct stat st;
	if (dt_sys_fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	if (S_ISLNK(st.st_mode) && !nofollow) {
		long ln = dt_sys_readlinkat(pfd, leaf, link, cap);
		if (ln > 0)
			return ln;
		dt_stat_leaf(pfd, leaf, 0, first_hop, sf); /* no longer a link */
		return 0;
	}
	sf->valid |= DT_SF_EXISTS;
	sf->mode = st.st_mode;
	sf->uid = st.st_uid;
	sf->gid = st.st_gid;
	if (first_hop && S_ISLNK(st.st_mode))
		sf->valid |= DT_SF_SYMLINK;
	return 0;
}

/* The leaf of an absolute parent directory the cache knows
 * (dt_dir_cached): its realpath and facts without opening the parent, an
 * open, a statx and a close fewer for a run of refusals in one directory.
 * Returns 1 when done; 0, having set nothing but the realpath buffer,
 * when the cache cannot answer or the leaf is a symbolic link to follow:
 * the caller opens the parent then; -1 (errno ENOENT) when the parent does
 * not exist: the caller climbs without trying to open it. Uses
 * out->scratch2. */
static int dt_resolve_leaf_cached(const char *parent, const char *leaf, int nofollow, int first_hop,
                                  struct dt_resolved *out)
{
	struct dt_dirid id;
	char *real = out->realpath;
	if (parent[0] != '/')
		return 0;
	long n = dt_dir_cached(AT_FDCWD, parent, &id, real, sizeof(out->realpath));
	if (n < 0 && errno == ENOENT)
		return -1;
	if (n <= 0)
		return 0;
	size_t rl = (size_t)n;
	if (rl > 1)
		rl = dt_strcat(real, rl, sizeof(out->realpath), "/");
	if (dt_strcat(real, rl, sizeof(out->realpath), leaf) >= sizeof(out->realpath))
		return 0;
	struct dt_stat_facts sf = out->st;
	if (dt_leaf_facts(AT_FDCWD, real, nofollow, first_hop, out->scratch2, sizeof(out->scratch2),
	                  &sf) > 0)
		return 0;
	out->st = sf;
	dt_stat_parent(-1, &id, real, (size_t)n, &out->st); /* flags known: no fd used */
	out->has_real = 1;
	return 1;
}

/* The parent could not be opened with EACCES: some directory on the way
 * denies search (x) to this process. Walks the absolute path from "/" with
 * stat, which needs search on every directory above the one it names, and
 * keeps the last directory it could stat before the first it could not. */
static void dt_find_search_block(struct dt_resolved *out)
{
	char *p = out->scratch2;
	size_t n = dt_strlen(out->abspath), last = 0;
	struct stat st, prev;

	if (out->abspath[0] != '/' || n >= sizeof(out->scratch2) ||
	    dt_sys_fstatat(AT_FDCWD, "/", &prev, 0) != 0)
		return;
	__builtin_memcpy(p, out->abspath, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		char save = p[i];
		p[i] = 0;
		int r = dt_sys_fstatat(AT_FDCWD, p, &st, 0);
		int e = errno;
		p[i] = save;
		if (r == 0) {
			prev = st;
			last = i;
			continue;
		}
		if (e != EACCES)
			return;
		size_t k = last ? last : 1;
		__builtin_memcpy(out->search.path, p, k);
		out->search.path[k] = 0;
		out->search.f.mode = prev.st_mode;
		out->search.f.uid = prev.st_uid;
		out->search.f.gid = prev.st_gid;
		out->has_search = 1;
		return;
	}
}

void dt_resolve_path(int dirfd, const char *path, int nofollow, struct dt_resolved *out)
{
	char *cur = out->scratch;
	char *link = out->scratch2;
	size_t plen = dt_strlen(path);
	if (plen == 0 || plen >= sizeof(out->scratch))
		return;
	__builtin_memcpy(cur, path, plen + 1);

	int cur_dirfd = dirfd;
	int owned_fd = -1; /* an O_PATH fd we opened and must close */
	for (int hop = 0; hop < 16; hop++) {
		const char *parent;
		char *leaf = dt_split(cur, &parent);
		int is_dot = (leaf[0] == '.' && (!leaf[1] || (leaf[1] == '.' && !leaf[2])));
		if (leaf == cur && cur[0] == '/' && !cur[1])
			is_dot = 1; /* the root itself */

		int cached =
		    is_dot ? 0 : dt_resolve_leaf_cached(parent, leaf, nofollow, hop == 0, out);
		if (cached > 0)
			break;
		/* Climb to the nearest existing ancestor when the parent is
		 * missing, so that a refused mkdir -p still gets a real base. */
		const char *named = NULL;
		int pfd = cached < 0 ? -1 : dt_open_dir(cur_dirfd, is_dot ? cur : parent, &named);
		const char *missing = is_dot ? "" : leaf;
		char *pp = (char *)parent;
		while (pfd < 0 && errno == ENOENT && !is_dot && pp[0] &&
		       !(pp[0] == '/' && !pp[1]) && !(pp[0] == '.' && !pp[1])) {
			/* drop the last component of the parent; remember it */
			size_t n = dt_strlen(pp);
			while (n > 0 && pp[n - 1] != '/')
				n--;
			const char *dropped = pp + n;
			size_t mlen = dt_strlen(missing);
			size_t dlen = dt_strlen(dropped);
			if (dlen + 1 + mlen + 1 > sizeof(out->scratch2))
				break;
			/* build "dropped/missing" in link, then copy back */
			__builtin_memmove(link + dlen + 1, missing, mlen + 1);
			__builtin_memcpy(link, dropped, dlen);
			link[dlen] = '/';
			missing = link;
			if (n == 0) {
				pp = (char *)(cur[0] == '/' ? "/" : ".");
			} else {
				pp[n > 1 ? n - 1 : 1] = 0;
			}
			pfd = dt_climb_step(cur_dirfd, pp, missing, out, &named);
			if (pfd == DT_CLIMB_CACHED)
				break;
		}
		if (pfd == DT_CLIMB_CACHED)
			break;
		if (pfd < 0) {
			if (errno == EACCES && hop == 0)
				dt_find_search_block(out);
			break;
		}
		if (owned_fd >= 0)
			dt_sys_close(owned_fd);
		owned_fd = pfd;

		struct dt_dirid id;
		dt_dir_identify(pfd, &id);
		long rn = dt_dir_path(pfd, &id, named, out->realpath, sizeof(out->realpath));
		if (rn < 0 || out->realpath[0] != '/') {
			out->realpath[0] = 0; /* no /proc, or an unreachable path */
			break;
		}
		if (is_dot) {
			dt_resolve_dir_itself(pfd, &id, out);
			break;
		}
		if (missing != leaf) {
			/* some ancestors do not exist */
			size_t rl = (size_t)rn;
			if (rl > 1)
				rl = dt_strcat(out->realpath, rl, sizeof(out->realpath), "/");
			dt_strcat(out->realpath, rl, sizeof(out->realpath), missing);
			dt_stat_parent(pfd, &id, out->realpath, (size_t)rn, &out->st);
			out->has_real = 1;
			break;
		}
		long ln = dt_leaf_facts(pfd, leaf, nofollow, hop == 0, link, sizeof(out->scratch2),
		                        &out->st);
		if (ln > 0) {
			if (hop == 0)
				out->st.valid |= DT_SF_SYMLINK;
			__builtin_memcpy(cur, link, (size_t)ln + 1);
			cur_dirfd = link[0] == '/' ? AT_FDCWD : pfd;
			continue;
		}
		size_t rl = (size_t)rn;
		if (rl > 1)
			rl = dt_strcat(out->realpath, rl, sizeof(out->realpath), "/");
		dt_strcat(out->realpath, rl, sizeof(out->realpath), leaf);
		dt_stat_parent(pfd, &id, out->realpath, (size_t)rn, &out->st);
		out->has_real = 1;
		break;
	}
	if (owned_fd >= 0)
		dt_sys_close(owned_fd);
}

void dt_resolve(const char *cwd, int has_dirfd, int dirfd, const char *path, int nofollow,
                struct dt_resolved *out)
{
	out->has_real = 0;
	out->has_search = 0;
	out->dirpath[0] = 0;
	out->abspath[0] = 0;
	out->realpath[0] = 0;
	__builtin_memset(&out->st, 0, sizeof(out->st));
	if (!path)
		return;
	const char *base = cwd;
	int at = AT_FDCWD;
	if (has_dirfd && dirfd != AT_FDCWD) {
		at = dirfd;
		struct dt_dirid id;
		dt_dir_identify(dirfd, &id);
		if (dt_dir_path(dirfd, &id, NULL, out->dirpath, sizeof(out->dirpath)) < 0)
			out->dirpath[0] = 0;
		base = out->dirpath[0] ? out->dirpath : NULL;
	}
	if (path[0] == '/' || base)
		dt_normalize(out->abspath, sizeof(out->abspath), base ? base : "/", path);
	dt_resolve_path(at, path, nofollow, out);
}

void dt_resolve_fd(int fd, struct dt_resolved *out)
{
	out->has_real = 0;
	out->has_search = 0;
	out->dirpath[0] = 0;
	__builtin_memset(&out->st, 0, sizeof(out->st));
	if (dt_fd_path(fd, out->realpath, sizeof(out->realpath)) >= 0) {
		out->has_real = out->realpath[0] == '/';
		__builtin_memcpy(out->abspath, out->realpath, dt_strlen(out->realpath) + 1);
	} else {
		out->realpath[0] = 0;
		out->abspath[0] = 0;
	}
	struct stat st;
	if (dt_sys_fstatat(fd, "", &st, AT_EMPTY_PATH) == 0) {
		out->st.valid |= DT_SF_EXISTS;
		out->st.mode = st.st_mode;
		out->st.uid = st.st_uid;
		out->st.gid = st.st_gid;
		/* unlinked since it was opened (SQLite's last connection deletes
		 * the -wal another holds): the kernel appends " (deleted)", which
		 * would make the same file another path in the report. A memfd
		 * never had a path: its name keeps the mark. */
		static const char mark[] = " (deleted)";
		size_t n = dt_strlen(out->realpath), m = sizeof(mark) - 1;
		if (st.st_nlink == 0 && out->has_real && dt_has_suffix(out->realpath, n, mark) &&
		    !dt_has_prefix(out->realpath, "/memfd:")) {
			out->realpath[n - m] = 0;
			out->abspath[n - m] = 0;
			out->st.valid |= DT_SF_UNLINKED;
		}
	}
	struct statfs fs;
	if (syscall(SYS_fstatfs, fd, &fs) == 0) {
		out->st.valid |= DT_SF_MOUNT;
		out->st.mount_flags = (uint64_t)fs.f_flags;
	}
}
