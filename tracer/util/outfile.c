/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* renameat2 */
#endif
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safeopen.h"

const char *dt_outfile_problem(const char *path, enum dt_out_policy policy, int *existed)
{
	static __thread char why[64];
	struct stat st;
	*existed = 0;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? NULL : strerror(errno);
	*existed = 1;
	if (S_ISDIR(st.st_mode))
		return "is a directory";
	if (policy == DT_OUT_SIDECAR)
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, sizeof(why), "is %s", dt_file_kind(st.st_mode));
		return why;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, sizeof(why), "belongs to uid %u, not to you", (unsigned)st.st_uid);
		return why;
	}
	return NULL;
}

/* A fresh name beside path: PATH's directory/.denytrace-out.XXXXXXXX. */
static int outfile_create_tmp(const char *path, char *tmp, size_t cap)
{
	char *dup = strdup(path);
	if (!dup)
		return -1;
	const char *dir = dirname(dup);
	int fd = -1;
	for (int tries = 0; tries < 16 && fd < 0; tries++) {
		uint32_t r;
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = (uint32_t)getpid() * 2654435761u + (uint32_t)tries;
		if (snprintf(tmp, cap, "%s/.denytrace-out.%08x", dir, r) >= (int)cap) {
			errno = ENAMETOOLONG;
			break;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	free(dup);
	return fd;
}

int dt_outfile_begin(struct dt_outfile *o, const char *path, enum dt_out_policy policy, char *err,
                     size_t errlen)
{
	memset(o, 0, sizeof(*o));
	const char *bad = dt_outfile_problem(path, policy, &o->existed);
	if (bad) {
		snprintf(err, errlen, "%s %s; refusing to write there", path, bad);
		return -1;
	}
	if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	int fd = outfile_create_tmp(path, o->tmp, sizeof(o->tmp));
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		return -1;
	}
	return 0;
}

int dt_outfile_commit(struct dt_outfile *o)
{
	int rc = fclose(o->f);
	o->f = NULL;
	/* RENAME_NOREPLACE where nothing was: whatever appeared since is
	 * not ours to replace */
	if (rc == 0)
		rc = renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path,
		               o->existed ? 0 : RENAME_NOREPLACE);
	if (rc != 0) {
		int e = errno;
		unlink(o->tmp);
		errno = e;
		return -1;
	}
	return 0;
}

void dt_outfile_abort(struct dt_outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	unlink(o->tmp);
}
