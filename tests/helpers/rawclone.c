/*
 * rawclone: two threads refusing at once where one was made by a raw
 * clone(CLONE_VM|CLONE_THREAD...) without CLONE_SETTLS, so that both run
 * with the same thread pointer (the same thread-local variables, the
 * probe's included), for tests/integration/test_hostile.c. Each makes N
 * refused opens of DIR/raw or DIR/main (O_WRONLY|O_CREAT, DIR not
 * writable); the clone calls nothing else that touches thread-local state
 * beyond errno.
 *
 *   rawclone N DIR
 *
 * Prints "refused N N" (the main thread's and the clone's counts).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char main_path[4096], raw_path[4096];
static int n;
static volatile int raw_refused, raw_done;
static char raw_stack[256 << 10] __attribute__((aligned(16)));

static int raw_main(void *arg)
{
	(void)arg;
	int k = 0;
	for (int i = 0; i < n; i++) {
		int fd = open(raw_path, O_WRONLY | O_CREAT, 0644);
		if (fd < 0)
			k++;
		else
			close(fd);
	}
	raw_refused = k;
	__atomic_store_n(&raw_done, 1, __ATOMIC_RELEASE);
	syscall(SYS_exit, 0); /* this thread only: not glibc's exit */
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	n = atoi(argv[1]);
	snprintf(main_path, sizeof(main_path), "%s/main", argv[2]);
	snprintf(raw_path, sizeof(raw_path), "%s/raw", argv[2]);
	int flags =
	    CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
	if (clone(raw_main, raw_stack + sizeof(raw_stack), flags, NULL) < 0) {
		perror("rawclone");
		return 1;
	}
	int k = 0;
	for (int i = 0; i < n; i++) {
		int fd = open(main_path, O_WRONLY | O_CREAT, 0644);
		if (fd < 0)
			k++;
		else
			close(fd);
	}
	while (!__atomic_load_n(&raw_done, __ATOMIC_ACQUIRE))
		sched_yield();
	printf("refused %d %d\n", k, raw_refused);
	return k != n || raw_refused != n;
}
