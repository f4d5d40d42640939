/* SPDX-License-Identifier: MIT */
/* Private directories (privdir.h). */
#include "privdir.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Can a user other than the caller and root change what is in dir? Group
 * write counts: the group may hold other users. A sticky directory lets
 * them add entries but never rename or remove one of ours. */
static int privdir_others_can_change(const struct stat *st)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return 1;
	return (st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX);
}

int dt_private_parents(const char *real, char *err, size_t cap)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", real);
	for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
		if (slash == dir)
			slash[1] = 0;
		else
			*slash = 0;
		struct stat st;
		if (lstat(dir, &st) < 0) {
			snprintf(err, cap, "cannot inspect %s: %s", dir, strerror(errno));
			return -1;
		}
		if (privdir_others_can_change(&st)) {
			snprintf(err, cap,
			         "%s (owner uid %u, mode %04o) can be changed by another user, who "
			         "could swap what denytrace writes and runs below it",
			         dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
			return -1;
		}
		if (slash == dir)
			break;
	}
	return 0;
}

int dt_private_dir(const char *path, mode_t mode, char *err, size_t cap)
{
	int created = mkdir(path, mode) == 0;
	if (!created && errno != EEXIST) {
		snprintf(err, cap, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (lstat(path, &st) < 0) {
		snprintf(err, cap, "cannot inspect %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, cap, "%s is not a directory%s", path,
		         S_ISLNK(st.st_mode) ? " (a symbolic link: give the directory itself)"
		                             : "");
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, cap,
		         "%s belongs to uid %u with mode %04o: give a directory of your own "
		         "(uid %u) that no other user can write, or a new path",
		         path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
		         (unsigned)geteuid());
		return -1;
	}
	char real[PATH_MAX];
	if (!realpath(path, real)) {
		snprintf(err, cap, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (dt_private_parents(real, err, cap) < 0) {
		if (created)
			rmdir(path);
		return -1;
	}
	return created;
}
