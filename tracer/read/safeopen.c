/* SPDX-License-Identifier: MIT */
#include "safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int dt_reopen_pinned(int pfd, const char *path, const struct stat *pinned, int flags)
{
	char proc[64];
	struct stat st;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	/* the magic link is followed: O_NOFOLLOW is for the path */
	int fd = open(proc, (flags & ~O_NOFOLLOW) | O_CLOEXEC | O_NOCTTY);
	/* no /proc (a sandbox without one): by path, which a swap could
	 * redirect between the look and this open; the check below still
	 * refuses what it then finds */
	if (fd < 0 && errno == ENOENT)
		fd = open(path, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_dev != pinned->st_dev || st.st_ino != pinned->st_ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

/* What sits at path is looked at through an O_PATH descriptor first,
 * which runs no driver's open: a device (a watchdog starts when opened, a
 * tape rewinds), a FIFO (whose blocked writer an open would release) or a
 * terminal is refused without being opened. A directory on the path swapped
 * for a symbolic link after that look changes nothing: the reading open
 * goes through /proc/self/fd to the inode looked at. */
static int open_regular_flags(const char *path, int extra, struct stat *out)
{
	struct stat st;
	int pfd = open(path, O_PATH | O_CLOEXEC | extra);
	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st) < 0) {
		int e = errno;
		close(pfd);
		errno = e;
		return -1;
	}
	if (out)
		*out = st;
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		if (S_ISLNK(st.st_mode)) { /* O_NOFOLLOW with O_PATH opens the link */
			errno = ELOOP;
			return -1;
		}
		return DT_OPEN_NOT_REGULAR;
	}
	/* O_NONBLOCK: a lease another process holds fails the open instead
	 * of making it wait */
	int fd = dt_reopen_pinned(pfd, path, &st, O_RDONLY | O_NONBLOCK | extra);
	int e = errno;
	close(pfd);
	if (fd < 0) {
		errno = e;
		return -1;
	}
	/* a regular file never blocks; clear the flag so reads behave as usual */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int dt_open_regular(const char *path, struct stat *out)
{
	return open_regular_flags(path, 0, out);
}

int dt_open_planted(const char *path, int own, off_t max, struct stat *out)
{
	struct stat st = {0};
	/* not even opened unless it looks regular: opening some devices acts
	 * (a watchdog starts, a tape rewinds); fstat below catches a swap */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (out)
			*out = st;
		if (S_ISLNK(st.st_mode))
			errno = ELOOP;
		return S_ISLNK(st.st_mode) ? -1 : DT_OPEN_NOT_REGULAR;
	}
	int fd = open_regular_flags(path, O_NOFOLLOW, &st);
	if (out)
		*out = st;
	if (fd < 0)
		return fd;
	int bad = own && st.st_uid != geteuid() ? DT_OPEN_NOT_OWN
	          : st.st_size > max            ? DT_OPEN_TOO_BIG
	                                        : 0;
	if (bad) {
		close(fd);
		return bad;
	}
	return fd;
}

ssize_t dt_read_planted(const char *path, int own, char *buf, size_t cap)
{
	buf[0] = 0;
	int fd = dt_open_planted(path, own, (off_t)cap - 1, NULL);
	if (fd < 0)
		return -1;
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t got = read(fd, buf + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

const char *dt_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	case S_IFLNK:
		return "a symbolic link";
	default:
		return "not a file";
	}
}
