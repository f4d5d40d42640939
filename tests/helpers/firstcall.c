// build-flags: -lpthread
/*
 * firstcall: the first call of interposed functions the probe has not
 * resolved yet (it looks each real function up at its wrapper's first call),
 * made where that lookup is delicate. Run inside a sandbox where RO is
 * read-only and RW writable, for tests/integration/test_firstcall.c.
 *
 *   firstcall threads RO RW
 *       8 threads released at once make, in the same order, first calls
 *       that fail (mkdir, symlink, creat, mkdirat in RO: EROFS) and first
 *       calls that succeed (mknodat of a FIFO in RW, then unlinkat).
 *   firstcall signal RO RW
 *       a signal handler, run before the program made any interposed call,
 *       makes the first calls: mkdir RO/sig (EROFS), mknodat and unlinkat
 *       of RW/sig-fifo (succeed).
 *   firstcall sigrace RO RW N
 *       N fresh images (fork+exec of "sigrace-child") each arm a one-shot
 *       timer of 1 to 97 us whose handler calls rmdir RO/h, and call rmdir
 *       RO/m in the main thread, once and until the handler ran: handler and main
 *       race the first lookup of rmdir.
 *   firstcall vfork RO RW
 *       a vfork child makes the first calls (mkdir RO/vfork: EROFS, mknodat
 *       and unlinkat of RW/vfork-fifo), then _exits; the parent then calls
 *       mkdir RO/parent through the pointer its child stored.
 *
 * Every result is checked against what the kernel must return (the probe
 * must not change it). Prints "status OK" and exits 0 when all were right,
 * else prints what was wrong and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define NTHREADS 8

static const char *ro, *rw;
static _Atomic int bad;
static char first_bad[256];

/* Records a wrong result; async-signal-safe enough for a test (no stdio). */
static void expect(int ok, const char *what)
{
	if (!ok && atomic_fetch_add(&bad, 1) == 0)
		snprintf(first_bad, sizeof(first_bad), "%s", what);
}

static void expect_refused(int r, const char *what)
{
	expect(r == -1 && errno == EROFS, what);
}

static void path(char *out, size_t cap, const char *dir, const char *name, int id)
{
	snprintf(out, cap, "%s/%s-%d", dir, name, id);
}

/* ---- threads ------------------------------------------------------------ */

static pthread_barrier_t barrier;

static void *thread_main(void *arg)
{
	int id = (int)(long)arg;
	char p[4096];
	pthread_barrier_wait(&barrier);
	path(p, sizeof(p), rw, "fifo", id);
	expect(mknodat(AT_FDCWD, p, S_IFIFO | 0600, 0) == 0, "mknodat in RW");
	path(p, sizeof(p), ro, "m", id);
	expect_refused(mkdir(p, 0755), "mkdir in RO");
	path(p, sizeof(p), ro, "s", id);
	expect_refused(symlink("target", p), "symlink in RO");
	path(p, sizeof(p), rw, "fifo", id);
	expect(unlinkat(AT_FDCWD, p, 0) == 0, "unlinkat in RW");
	path(p, sizeof(p), ro, "c", id);
	expect_refused(creat(p, 0644), "creat in RO");
	path(p, sizeof(p), ro, "a", id);
	expect_refused(mkdirat(AT_FDCWD, p, 0755), "mkdirat in RO");
	return NULL;
}

static void run_threads(void)
{
	pthread_t t[NTHREADS];
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)i) != 0)
			expect(0, "pthread_create");
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
}

/* ---- signal handlers ------------------------------------------------------ */

static volatile sig_atomic_t handled;

static void first_calls_handler(int sig)
{
	(void)sig;
	int saved = errno;
	char p[4096];
	snprintf(p, sizeof(p), "%s/sig", ro);
	expect_refused(mkdir(p, 0755), "mkdir in RO from the handler");
	snprintf(p, sizeof(p), "%s/sig-fifo", rw);
	expect(mknodat(AT_FDCWD, p, S_IFIFO | 0600, 0) == 0, "mknodat in RW from the handler");
	expect(unlinkat(AT_FDCWD, p, 0) == 0, "unlinkat in RW from the handler");
	handled++;
	errno = saved;
}

static void run_signal(void)
{
	struct sigaction sa = {.sa_handler = first_calls_handler};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	expect(handled == 1, "the handler ran once");
}

static void race_handler(int sig)
{
	(void)sig;
	int saved = errno;
	char p[4096];
	snprintf(p, sizeof(p), "%s/h", ro);
	expect_refused(rmdir(p), "rmdir in RO from the handler");
	handled++;
	errno = saved;
}

/* One SIGALRM after delay_us: the handler lands anywhere in main's first
 * calls of rmdir (a storm of timer signals would only measure how long a
 * recorded refusal takes). */
static void run_sigrace_child(int delay_us)
{
	struct sigaction sa = {.sa_handler = race_handler, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 0}, {0, delay_us}};
	setitimer(ITIMER_REAL, &it, NULL);
	char p[4096];
	snprintf(p, sizeof(p), "%s/m", ro);
	do
		expect_refused(rmdir(p), "rmdir in RO");
	while (!handled);
}

static void run_sigrace(const char *self, int n)
{
	for (int i = 0; i < n; i++) {
		char delay[16];
		snprintf(delay, sizeof(delay), "%d", 1 + i * 7 % 97);
		pid_t pid = fork();
		if (pid == 0) {
			execl(self, self, "sigrace-child", ro, rw, delay, (char *)NULL);
			_exit(127);
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			expect(0, "a sigrace child failed");
	}
}

/* ---- vfork ------------------------------------------------------------------ */

static void run_vfork(void)
{
	char p[4096], f[4096], q[4096];
	snprintf(p, sizeof(p), "%s/vfork", ro);
	snprintf(f, sizeof(f), "%s/vfork-fifo", rw);
	snprintf(q, sizeof(q), "%s/parent", ro);
	pid_t pid = vfork();
	if (pid == 0) {
		int ok = mkdir(p, 0755) == -1 && errno == EROFS;
		ok = ok && mknodat(AT_FDCWD, f, S_IFIFO | 0600, 0) == 0;
		ok = ok && unlinkat(AT_FDCWD, f, 0) == 0;
		_exit(ok ? 0 : 1);
	}
	int st = 0;
	expect(pid > 0 && waitpid(pid, &st, 0) == pid, "vfork and wait");
	expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the vfork child's first calls");
	expect_refused(mkdir(q, 0755), "mkdir in RO after the vfork child");
	expect(mknodat(AT_FDCWD, f, S_IFIFO | 0600, 0) == 0, "mknodat in RW after the child");
	expect(unlinkat(AT_FDCWD, f, 0) == 0, "unlinkat in RW after the child");
	printf("vfork %d\n", (int)pid);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: firstcall threads|signal|sigrace|vfork RO RW [N]\n");
		return 2;
	}
	ro = argv[2];
	rw = argv[3];
	if (!strcmp(argv[1], "threads"))
		run_threads();
	else if (!strcmp(argv[1], "signal"))
		run_signal();
	else if (!strcmp(argv[1], "sigrace"))
		run_sigrace(argv[0], argc > 4 ? atoi(argv[4]) : 50);
	else if (!strcmp(argv[1], "sigrace-child"))
		run_sigrace_child(argc > 4 ? atoi(argv[4]) : 1);
	else if (!strcmp(argv[1], "vfork"))
		run_vfork();
	else
		return 2;
	if (bad) {
		printf("wrong results: %d, first: %s\n", (int)bad, first_bad);
		return 1;
	}
	printf("status OK\n");
	return 0;
}
