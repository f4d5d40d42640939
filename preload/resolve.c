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
#include <sys/statfs.h>

#include "sys.h"

long dt_fd_path(int fd, char *buf, size_t cap)
{
	char link[40];
	dt_fd_link(fd, link);
	return dt_sys_readlinkat(AT_FDCWD, link, buf, cap);
}

static void dt_stat_parent(int pfd, struct dt_stat_facts *sf)
{
	struct stat st;
	if (dt_sys_fstatat(pfd, "", &st, AT_EMPTY_PATH) == 0) {
		sf->valid |= DT_SF_PARENT;
		sf->parent_mode = st.st_mode;
		sf->parent_uid = st.st_uid;
		sf->parent_gid = st.st_gid;
	}
	struct statfs fs;
	if (syscall(SYS_fstatfs, pfd, &fs) == 0) {
		sf->valid |= DT_SF_MOUNT;
		sf->mount_flags = (uint64_t)fs.f_flags;
	}
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

		/* Climb to the nearest existing ancestor when the parent is
		 * missing, so that a refused mkdir -p still gets a real base. */
		int pfd = dt_sys_openat(cur_dirfd, is_dot ? cur : parent, O_PATH | O_DIRECTORY);
		const char *missing = is_dot ? "" : leaf;
		char *pp = (char *)parent;
		while (pfd < 0 && errno == ENOENT && !is_dot && pp[0] && !(pp[0] == '/' && !pp[1]) &&
		       !(pp[0] == '.' && !pp[1])) {
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
			pfd = dt_sys_openat(cur_dirfd, pp, O_PATH | O_DIRECTORY);
		}
		if (pfd < 0)
			break;
		if (owned_fd >= 0)
			dt_sys_close(owned_fd);
		owned_fd = pfd;

		long rn = dt_fd_path(pfd, out->realpath, sizeof(out->realpath));
		if (rn < 0 || out->realpath[0] != '/') {
			out->realpath[0] = 0; /* no /proc, or an unreachable path */
			break;
		}
		if (is_dot) {
			struct stat st;
			if (dt_sys_fstatat(pfd, "", &st, AT_EMPTY_PATH) == 0) {
				out->st.valid |= DT_SF_EXISTS;
				out->st.mode = st.st_mode;
				out->st.uid = st.st_uid;
				out->st.gid = st.st_gid;
			}
			int up = dt_sys_openat(pfd, "..", O_PATH | O_DIRECTORY);
			if (up >= 0) {
				dt_stat_parent(up, &out->st);
				dt_sys_close(up);
			}
			out->has_real = 1;
			break;
		}
		if (missing != leaf) {
			/* some ancestors do not exist */
			size_t rl = (size_t)rn;
			if (rl > 1)
				rl = dt_strcat(out->realpath, rl, sizeof(out->realpath), "/");
			dt_strcat(out->realpath, rl, sizeof(out->realpath), missing);
			dt_stat_parent(pfd, &out->st);
			out->has_real = 1;
			break;
		}
		if (!nofollow) {
			long ln = dt_sys_readlinkat(pfd, leaf, link, sizeof(out->scratch2));
			if (ln > 0) {
				if (hop == 0)
					out->st.valid |= DT_SF_SYMLINK;
				__builtin_memcpy(cur, link, (size_t)ln + 1);
				cur_dirfd = link[0] == '/' ? AT_FDCWD : pfd;
				continue;
			}
		} else if (hop == 0) {
			struct stat lst;
			if (dt_sys_fstatat(pfd, leaf, &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(lst.st_mode))
				out->st.valid |= DT_SF_SYMLINK;
		}
		size_t rl = (size_t)rn;
		if (rl > 1)
			rl = dt_strcat(out->realpath, rl, sizeof(out->realpath), "/");
		dt_strcat(out->realpath, rl, sizeof(out->realpath), leaf);
		struct stat st;
		if (dt_sys_fstatat(pfd, leaf, &st, nofollow ? AT_SYMLINK_NOFOLLOW : 0) == 0) {
			out->st.valid |= DT_SF_EXISTS;
			out->st.mode = st.st_mode;
			out->st.uid = st.st_uid;
			out->st.gid = st.st_gid;
		}
		dt_stat_parent(pfd, &out->st);
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
		if (dt_fd_path(dirfd, out->dirpath, sizeof(out->dirpath)) < 0)
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
	}
	struct statfs fs;
	if (syscall(SYS_fstatfs, fd, &fs) == 0) {
		out->st.valid |= DT_SF_MOUNT;
		out->st.mount_flags = (uint64_t)fs.f_flags;
	}
}
