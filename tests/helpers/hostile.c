// build-flags: -lpthread
/*
 * hostile: programs a reviewer wrote to catch the probe changing its host,
 * for tests/integration/test_hostile.c. Each prints what it saw on stdout,
 * one "label value" line each, and exits 0; the test compares the output
 * with and without the probe.
 *
 *   hostile mask RO       the program's own blocked set (SIGUSR1, SIGRTMIN+3)
 *                         and a pending SIGUSR1 survive refusals; a signal
 *                         sent while refusing is delivered once unblocked;
 *                         100 queued signals sent while refusing all arrive
 *   hostile vfork RO      a vfork child refuses and exits with the errno
 *   hostile forksig RO    a SIGALRM handler forks; the child refuses
 *   hostile writers DIR   64 threads each create and write distinct files
 *                         in DIR at once; every call's result and errno
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static char refused[4096];

static int refuse(void)
{
	errno = 0;
	int fd = open(refused, O_WRONLY | O_CREAT, 0644);
	return fd < 0 ? errno : -1;
}

static volatile sig_atomic_t usr1_seen, usr2_seen, rt_seen;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen++;
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2_seen++;
}

static void on_rt(int sig)
{
	(void)sig;
	rt_seen++;
}

/* Queued signals aimed at the main thread while it refuses: real-time
 * signals are not merged, so each one lost shows in the count. */
static void *rt_sender(void *arg)
{
	pthread_t main_thread = *(pthread_t *)arg;
	for (int i = 0; i < 100; i++) {
		pthread_sigqueue(main_thread, SIGRTMIN + 1, (union sigval){.sival_int = i});
		usleep(200);
	}
	return NULL;
}

/* The mask as a comparable word: every signal the kernel knows. */
static unsigned long long mask_bits(const sigset_t *s)
{
	unsigned long long m = 0;
	for (int i = 1; i <= 64; i++)
		if (sigismember(s, i) == 1)
			m |= 1ULL << (i - 1);
	return m;
}

static int mask_mode(void)
{
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	sigset_t own;
	sigemptyset(&own);
	sigaddset(&own, SIGUSR1);
	sigaddset(&own, SIGRTMIN + 3);
	sigprocmask(SIG_BLOCK, &own, NULL);
	sigset_t before, after, pend;
	sigprocmask(SIG_BLOCK, NULL, &before);
	kill(getpid(), SIGUSR1); /* pending, blocked by the program itself */
	int errs = 0;
	for (int i = 0; i < 200; i++) {
		if (i == 100)
			kill(getpid(), SIGUSR2); /* delivered at once, or after the probe */
		if (refuse() != EACCES)
			errs++;
	}
	sigprocmask(SIG_BLOCK, NULL, &after);
	sigpending(&pend);
	signal(SIGRTMIN + 1, on_rt);
	pthread_t self = pthread_self(), sender;
	pthread_create(&sender, NULL, rt_sender, &self);
	/* a hang guard, not a timing assertion: 100 is reached long before */
	for (long spins = 0; rt_seen < 100 && spins < 20000000; spins++)
		if (refuse() != EACCES)
			errs++;
	pthread_join(sender, NULL);
	printf("refused-not-eacces %d\n", errs);
	printf("rt-seen %d\n", (int)rt_seen);
	printf("mask-same %d\n", mask_bits(&before) == mask_bits(&after));
	printf("usr1-pending %d\n", sigismember(&pend, SIGUSR1));
	printf("usr1-seen-blocked %d\n", (int)usr1_seen);
	printf("usr2-seen %d\n", (int)usr2_seen);
	sigprocmask(SIG_UNBLOCK, &own, NULL);
	printf("usr1-seen-unblocked %d\n", (int)usr1_seen);
	return 0;
}

static int vfork_mode(void)
{
	int st = 0;
	for (volatile int i = 0; i < 50; i++) {
		pid_t p = vfork();
		if (p == 0)
			_exit(refuse());
		waitpid(p, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != EACCES)
			break;
	}
	printf("vfork-child-exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	printf("parent-errno %d\n", refuse());
	return 0;
}

static volatile sig_atomic_t forks_done, forks_bad;

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	pid_t p = fork();
	if (p == 0)
		_exit(refuse());
	int st;
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != EACCES)
		forks_bad++;
	forks_done++;
	errno = saved;
}

static int forksig_mode(void)
{
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 20000}, {0, 20000}};
	setitimer(ITIMER_REAL, &it, NULL);
	int errs = 0;
	while (forks_done < 100)
		if (refuse() != EACCES)
			errs++;
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("main-not-eacces %d\n", errs);
	printf("children-bad %d\n", (int)forks_bad);
	return 0;
}

static const char *writers_dir;
static pthread_barrier_t writers_go;

static void *writer(void *arg)
{
	long t = (long)arg, bad = 0;
	char p[4200];
	pthread_barrier_wait(&writers_go);
	for (int i = 0; i < 200; i++) {
		snprintf(p, sizeof(p), "%s/t%ld-%d", writers_dir, t, i % 20);
		errno = 1234;
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || errno != 1234) {
			bad++;
			continue;
		}
		if (write(fd, "x", 1) != 1 || errno != 1234)
			bad++;
		close(fd);
	}
	return (void *)bad;
}

static int writers_mode(void)
{
	pthread_t th[64];
	pthread_barrier_init(&writers_go, NULL, 64);
	for (long t = 0; t < 64; t++)
		pthread_create(&th[t], NULL, writer, (void *)t);
	long bad = 0;
	for (int t = 0; t < 64; t++) {
		void *r;
		pthread_join(th[t], &r);
		bad += (long)r;
	}
	printf("writers-bad %ld\n", bad);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	snprintf(refused, sizeof(refused), "%s/nope", argv[2]);
	if (!strcmp(argv[1], "mask"))
		return mask_mode();
	if (!strcmp(argv[1], "vfork"))
		return vfork_mode();
	if (!strcmp(argv[1], "forksig"))
		return forksig_mode();
	if (!strcmp(argv[1], "writers")) {
		writers_dir = argv[2];
		return writers_mode();
	}
	return 2;
}
