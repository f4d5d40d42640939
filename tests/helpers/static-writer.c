// build-flags: -static -pthread
#define _GNU_SOURCE
/* A static binary (LD_PRELOAD cannot enter it) that writes files, for the
 * seccomp tests.
 *
 *   static-writer [-n COUNT] PATH...   create/truncate each PATH COUNT times
 *       (default 1); prints per PATH one character per call, '.' written or
 *       'x' refused, then the first errno name: "PATH ..x. EROFS"
 *   static-writer --kill-storm N PATH  N children create PATH.I in a loop;
 *       each is SIGKILLed after a short, growing delay (mid-call, often)
 *   static-writer --exit-mid-call N PATH  N children: a thread creates
 *       PATH.I in a loop while the main thread exits the process
 *   static-writer --reexec   execs /proc/self/exe once (with no arguments)
 * Exit status 0 when every call succeeded (or for the storms), 1 otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	nanosleep(&ts, NULL);
}

static void create_loop(const char *path)
{
	for (;;) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
}

static void *thread_loop(void *arg)
{
	create_loop(arg);
	return NULL;
}

static int storm(int n, const char *path, int exit_mid_call)
{
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	for (int i = 0; i < n; i++) {
		char p[4096];
		snprintf(p, sizeof(p), "%s.%d", path, i);
		pids[i] = fork();
		if (pids[i] == 0) {
			if (exit_mid_call) {
				pthread_t t;
				pthread_create(&t, NULL, thread_loop, strdup(p));
				sleep_us(200 + 50 * i);
				_exit(0); /* exit_group while the thread is in (or near) open */
			}
			create_loop(p);
		}
		if (!exit_mid_call) {
			sleep_us(100 + 37 * i);
			kill(pids[i], SIGKILL);
		}
	}
	for (int i = 0; i < n; i++)
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
	free(pids);
	printf("storm done\n");
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1, count = 1, bad = 0;
	if (argc > 3 && !strcmp(argv[1], "--kill-storm"))
		return storm(atoi(argv[2]), argv[3], 0);
	if (argc > 3 && !strcmp(argv[1], "--exit-mid-call"))
		return storm(atoi(argv[2]), argv[3], 1);
	if (argc > 1 && !strcmp(argv[1], "--reexec")) {
		/* itself again, by the name that is always this program */
		char *again[] = {argv[0], NULL};
		execv("/proc/self/exe", again);
		return 127;
	}
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		count = atoi(argv[2]);
		i = 3;
	}
	for (; i < argc; i++) {
		int first_err = 0;
		printf("%s ", argv[i]);
		for (int k = 0; k < count; k++) {
			int fd = open(argv[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd < 0) {
				if (!first_err)
					first_err = errno;
				putchar('x');
				bad = 1;
			} else {
				if (write(fd, "x\n", 2) != 2)
					bad = 1;
				close(fd);
				putchar('.');
			}
		}
		printf(" %s\n", first_err ? strerrorname_np(first_err) : "ok");
	}
	return bad;
}
