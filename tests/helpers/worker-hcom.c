/* SPDX-License-Identifier: MIT */
/*
 * An hcom-shaped worker: before it opens its database hcom makes sure of
 * $HCOM_DIR (default ~/.hcom) with mkdir -p and chmod 0700, then tightens
 * hcom.db, hcom.db-wal and hcom.db-shm to 0600, then opens hcom.db
 * read-write. Under a read-only mount the first refused call is therefore a
 * chmod of the directory.
 *
 * usage: worker-hcom     (uses $HCOM_DIR, else $HOME/.hcom)
 * Prints what failed; exits 0 when the database opened read-write, 3 if not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int mkdir_p(char *path, mode_t mode)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, mode) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, mode) < 0 && errno != EEXIST ? -1 : 0;
}

int main(void)
{
	char dir[4096], file[4200];
	const char *d = getenv("HCOM_DIR"), *home = getenv("HOME");
	if (d && *d)
		snprintf(dir, sizeof(dir), "%s", d);
	else
		snprintf(dir, sizeof(dir), "%s/.hcom", home ? home : "");
	int failed = 0;
	if (mkdir_p(dir, 0700) < 0) {
		printf("mkdir -p %s: %s\n", dir, strerror(errno));
		failed = 1;
	}
	if (chmod(dir, 0700) < 0) {
		printf("chmod 0700 %s: %s\n", dir, strerror(errno));
		failed = 1;
	}
	static const char *const files[] = {"hcom.db", "hcom.db-wal", "hcom.db-shm"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(file, sizeof(file), "%s/%s", dir, files[i]);
		if (access(file, F_OK) == 0 && chmod(file, 0600) < 0) {
			printf("chmod 0600 %s: %s\n", file, strerror(errno));
			failed = 1;
		}
	}
	snprintf(file, sizeof(file), "%s/hcom.db", dir);
	int fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		printf("open %s: %s\n", file, strerror(errno));
		return 3;
	}
	close(fd);
	puts(failed ? "opened, with errors" : "ok");
	return failed ? 3 : 0;
}
