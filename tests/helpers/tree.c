// build-flags: -lpthread -Itests/helpers/lib tests/helpers/lib/refuse.c
/*
 * tree: a process tree whose every member makes refused writes, for
 * tests/integration/test_tree.c. Run it where RO is read-only (bubblewrap).
 *
 *   tree RO                   the whole tree, see below
 *   tree --vfork-early RO     a vfork child refused *before* it execs
 *   tree --child NAME RO      (internal) an exec'd child: refuses RO/NAME
 *
 * Every refusal is open(RO/NAME, O_WRONLY|O_CREAT|O_TRUNC), so the test can
 * tell them apart by name. The parent prints one line per member on stdout:
 *
 *   parent PID                refused RO/parent
 *   fork PID                  a fork() child: refused RO/fork
 *   exec PID                  a fork() child refused RO/exec-before, then
 *                             exec'd itself and refused RO/exec
 *   vfork PID                 vfork()+exec: the new image refused RO/vfork
 *   spawn-action ERRNO        posix_spawn whose file action opens
 *                             RO/spawn-action for writing: its result
 *   spawn PID                 posix_spawn (a harmless file action): the
 *                             child refused RO/spawn
 *   thread K TID              thread K refused RO/thread-K
 *   status OK|FAIL            every child exited 0
 *
 * With --vfork-early: "parent PID", then "vfork PID" for a vfork child that
 * refused RO/vfork-early before exec'ing the child that refuses RO/vfork,
 * then the parent refuses RO/parent-after.
 *
 *   tree --fork-storm RO      4 threads refuse RO/storm-thread in a loop
 *                             while the main thread forks STORM_CHILDREN
 *                             children, child K refusing RO/storm-K; prints
 *                             "parent PID", "child K PID" and the status
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "refuse.h"

extern char **environ;

static char self[4096];
static int failed;

/* A member that did not exit 0 fails the tree. */
static void reap_ok(pid_t pid)
{
	if (reap(pid) != 0)
		failed = 1;
}

#define NTHREADS 4
static pthread_barrier_t barrier;
static long tids[NTHREADS];

static void *thread_main(void *arg)
{
	long k = (long)arg;
	tids[k] = syscall(SYS_gettid);
	char name[32];
	snprintf(name, sizeof(name), "thread-%ld", k);
	pthread_barrier_wait(&barrier); /* refuse all at once */
	return refuse(name) == EROFS ? NULL : (void *)1;
}

static int whole_tree(void)
{
	printf("parent %d\n", (int)getpid());
	if (refuse("parent") != EROFS)
		failed = 1;

	/* a fork() child, same image */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(refuse("fork") == EROFS ? 0 : 1);
	printf("fork %d\n", (int)pid);
	reap_ok(pid);

	/* a fork() child refused once in the parent's image, then exec'd */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (refuse("exec-before") != EROFS)
			_exit(1);
		execl(self, self, "--child", "exec", refuse_dir, (char *)NULL);
		_exit(127);
	}
	printf("exec %d\n", (int)pid);
	reap_ok(pid);

	/* vfork()+exec: only the exec'd image refuses */
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		execl(self, self, "--child", "vfork", refuse_dir, (char *)NULL);
		_exit(127);
	}
	printf("vfork %d\n", (int)pid);
	reap_ok(pid);

	/* posix_spawn whose file action cannot be carried out: the child
	 * never runs, posix_spawn returns the open's errno */
	char path[4096];
	snprintf(path, sizeof(path), "%s/spawn-action", refuse_dir);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 9, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char *const av_bad[] = {self, "--child", "spawn-unreached", (char *)refuse_dir, NULL};
	int err = posix_spawn(&pid, self, &fa, NULL, av_bad, environ);
	posix_spawn_file_actions_destroy(&fa);
	printf("spawn-action %d\n", err);
	if (err == 0)
		reap_ok(pid);

	/* posix_spawn with a file action that works: the child refuses */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 9, "/dev/null", O_RDONLY, 0);
	char *const av[] = {self, "--child", "spawn", (char *)refuse_dir, NULL};
	fflush(stdout);
	err = posix_spawn(&pid, self, &fa, NULL, av, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err == 0) {
		printf("spawn %d\n", (int)pid);
		reap_ok(pid);
	} else {
		failed = 1;
	}

	/* threads, refusing at the same moment */
	pthread_t th[NTHREADS];
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (long k = 0; k < NTHREADS; k++)
		if (pthread_create(&th[k], NULL, thread_main, (void *)k) != 0)
			return 1;
	for (long k = 0; k < NTHREADS; k++) {
		void *res;
		pthread_join(th[k], &res);
		if (res)
			failed = 1;
		printf("thread %ld %ld\n", k, tids[k]);
	}
	pthread_barrier_destroy(&barrier);

	printf("status %s\n", failed ? "FAIL" : "OK");
	return failed;
}

/* A vfork child that fails a call before it execs: it runs in the parent's
 * address space, so whatever the probe remembers there, it remembers for
 * the parent too. */
static int vfork_early(void)
{
	printf("parent %d\n", (int)getpid());
	if (refuse("parent") != EROFS)
		failed = 1;
	fflush(stdout);
	pid_t pid = vfork();
	if (pid == 0) {
		refuse("vfork-early");
		execl(self, self, "--child", "vfork", refuse_dir, (char *)NULL);
		_exit(127);
	}
	printf("vfork %d\n", (int)pid);
	reap_ok(pid);
	if (refuse("parent-after") != EROFS)
		failed = 1;
	printf("status %s\n", failed ? "FAIL" : "OK");
	return failed;
}

#define STORM_CHILDREN 40
#define STORM_REFUSALS 150
static pthread_barrier_t storm_start;

static void *storm_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&storm_start);
	for (int i = 0; i < STORM_REFUSALS; i++)
		if (refuse("storm-thread") != EROFS)
			return (void *)1;
	return NULL;
}

/* fork() while other threads are inside the probe: a child must never
 * inherit something the probe (or a library it uses) held locked. */
static int fork_storm(void)
{
	printf("parent %d\n", (int)getpid());
	if (refuse("parent") != EROFS) /* the ring is attached from here on */
		failed = 1;
	pthread_t th[NTHREADS];
	pthread_barrier_init(&storm_start, NULL, NTHREADS + 1);
	for (long k = 0; k < NTHREADS; k++)
		if (pthread_create(&th[k], NULL, storm_thread, NULL) != 0)
			return 1;
	pthread_barrier_wait(&storm_start);
	for (int k = 0; k < STORM_CHILDREN; k++) {
		char name[32];
		snprintf(name, sizeof(name), "storm-%d", k);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			_exit(refuse(name) == EROFS ? 0 : 1);
		if (pid < 0) {
			failed = 1;
			break;
		}
		printf("child %d %d\n", k, (int)pid);
		reap_ok(pid);
	}
	for (long k = 0; k < NTHREADS; k++) {
		void *res;
		pthread_join(th[k], &res);
		if (res)
			failed = 1;
	}
	printf("status %s\n", failed ? "FAIL" : "OK");
	return failed;
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 2;
	self[n] = 0;
	if (argc == 4 && !strcmp(argv[1], "--child")) {
		refuse_dir = argv[3];
		return refuse(argv[2]) == EROFS ? 0 : 1;
	}
	if (argc == 3 && !strcmp(argv[1], "--vfork-early")) {
		refuse_dir = argv[2];
		return vfork_early();
	}
	if (argc == 3 && !strcmp(argv[1], "--fork-storm")) {
		refuse_dir = argv[2];
		return fork_storm();
	}
	if (argc != 2) {
		fprintf(stderr, "usage: tree [--vfork-early|--fork-storm] RO\n");
		return 2;
	}
	refuse_dir = argv[1];
	return whole_tree();
}
