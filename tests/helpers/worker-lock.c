/* SPDX-License-Identifier: MIT */
/*
 * Lock contention, no timing involved: takes a POSIX write lock on FILE
 * (F_SETLK), then runs a second process (this program again, "try") that
 * asks for the same lock with F_SETLK while the first still holds it. POSIX
 * locks belong to processes, so the second one gets EAGAIN (or EACCES).
 *
 * usage: worker-lock FILE        hold the lock, run the contender, wait
 *        worker-lock try FILE    ask once; exit 0 on EAGAIN/EACCES,
 *                                1 if the lock was granted, 2 otherwise
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int setlk(int fd, short type)
{
	struct flock fl;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	return fcntl(fd, F_SETLK, &fl);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "try")) {
		int fd = open(argv[2], O_RDWR);
		if (fd < 0) {
			printf("try: open %s: %s\n", argv[2], strerror(errno));
			return 2;
		}
		if (setlk(fd, F_WRLCK) == 0) {
			puts("try: lock granted (no contention?)");
			return 1;
		}
		int e = errno;
		printf("try: F_SETLK: %s\n", strerror(e));
		return e == EAGAIN || e == EACCES ? 0 : 2;
	}
	if (argc != 2) {
		fputs("usage: worker-lock FILE | worker-lock try FILE\n", stderr);
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || setlk(fd, F_WRLCK) < 0) {
		printf("hold: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	/* the contender is this program again, under its own name */
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 2;
	self[n] = 0;
	pid_t pid = fork();
	if (pid == 0) {
		execl(self, argv[0], "try", argv[1], (char *)NULL);
		_exit(127);
	}
	int st = 0;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	setlk(fd, F_UNLCK);
	close(fd);
	return pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}
