/* SPDX-License-Identifier: MIT */
#include "safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int dt_open_regular(const char *path, struct stat *out)
{
	/* O_NONBLOCK: opening a FIFO that has no writer returns at once
	 * instead of waiting for one; O_NOCTTY: a terminal never becomes ours */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		if (out)
			*out = st;
		return DT_OPEN_NOT_REGULAR;
	}
	/* a regular file never blocks; clear the flag so reads behave as usual */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (out)
		*out = st;
	return fd;
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
