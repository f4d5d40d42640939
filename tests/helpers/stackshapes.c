// build-flags: -lpthread
/*
 * stackshapes: one refused open (O_WRONLY|O_CREAT of DIR/NAME, DIR not
 * writable) from each kind of stack an unwinder must cross, for
 * tests/integration/test_stacks.c, which compares the stacks the probe's
 * cached unwinder records with libgcc's.
 *
 *   stackshapes SHAPE DIR
 *     plain    main -> a -> b -> open
 *     deep     a recursion 40 calls deep (more frames than a record keeps)
 *     alloca   a frame that alloca grew by 200 KiB (its CFA is rbp-based)
 *     realign  a function that realigns its stack to 64 bytes (GCC keeps
 *              the CFA on rbp)
 *     drap     the same in a variadic function that also calls alloca:
 *              GCC realigns through a DRAP register, and the CFA is an
 *              expression (the cached unwinder declines it)
 *     huge     a frame of 20 MiB, in a thread with a 64 MiB stack (more
 *              than the cached unwinder follows: it declines)
 *     signal   a handler of a signal raised in b (crosses a signal frame);
 *              a plain refusal first, as the probe loads no unwinder
 *              inside a handler
 *     thread   a second thread (its stack ends at clone's frame)
 *     threads  8 threads released at once, thread i refusing DIR/tI from
 *              i + 1 calls deep, 25 times each (the unwinder's cache is
 *              filled and read by all of them at the same time); a plain
 *              refusal first, so that the unwinder is loaded (threads
 *              that refuse while another loads it record no stack)
 *
 * Exits 0 when the open failed as it should (EACCES or EROFS), else 1.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *dir;
static volatile int refused;

#define NOINLINE __attribute__((noinline))

static NOINLINE void refuse(const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	else if (errno == EACCES || errno == EROFS)
		refused = 1;
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static NOINLINE void b(const char *name)
{
	refuse(name);
	__asm__ volatile("");
}

static NOINLINE void a(const char *name)
{
	b(name);
	__asm__ volatile("");
}

static NOINLINE int deep(int n)
{
	if (n == 0)
		refuse("deep");
	else
		deep(n - 1);
	__asm__ volatile("");
	return n;
}

static NOINLINE void grown(size_t n)
{
	char *p = alloca(n);
	memset(p, 1, n);
	__asm__ volatile("" : : "r"(p) : "memory");
	refuse("alloca");
	__asm__ volatile("" : : "r"(p) : "memory");
}

struct aligned64 {
	char c[64];
} __attribute__((aligned(64)));

static NOINLINE void realigned(void)
{
	struct aligned64 v;
	memset(&v, 2, sizeof(v));
	__asm__ volatile("" : : "r"(&v) : "memory");
	refuse("realign");
	__asm__ volatile("" : : "r"(&v) : "memory");
}

static NOINLINE void drap(size_t n, ...)
{
	struct aligned64 v;
	va_list ap;
	va_start(ap, n);
	char *p = alloca(n + (size_t)va_arg(ap, int));
	va_end(ap);
	memset(&v, 3, sizeof(v));
	memset(p, 3, n);
	__asm__ volatile("" : : "r"(&v), "r"(p) : "memory");
	refuse("drap");
	__asm__ volatile("" : : "r"(&v), "r"(p) : "memory");
}

static void *huge_main(void *arg)
{
	(void)arg;
	grown(20u << 20);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	refuse("signal");
}

static NOINLINE void raise_in_b(void)
{
	raise(SIGUSR1);
	__asm__ volatile("");
}

static pthread_barrier_t start;

static NOINLINE int nested(int n, const char *name)
{
	if (n == 0)
		refuse(name);
	else
		nested(n - 1, name);
	__asm__ volatile("");
	return n;
}

static void *racer(void *arg)
{
	long i = (long)arg;
	char name[16];
	snprintf(name, sizeof(name), "t%ld", i);
	pthread_barrier_wait(&start);
	for (int k = 0; k < 25; k++)
		nested((int)i + 1, name);
	return NULL;
}

static void *thread_main(void *arg)
{
	a(arg);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: stackshapes "
		                "plain|deep|alloca|realign|drap|huge|signal|thread|threads DIR\n");
		return 2;
	}
	dir = argv[2];
	const char *shape = argv[1];
	if (!strcmp(shape, "plain")) {
		a("plain");
	} else if (!strcmp(shape, "deep")) {
		deep(40);
	} else if (!strcmp(shape, "alloca")) {
		grown(200 << 10);
	} else if (!strcmp(shape, "realign")) {
		realigned();
	} else if (!strcmp(shape, "drap")) {
		drap(4096, 64);
	} else if (!strcmp(shape, "huge")) {
		pthread_attr_t at;
		pthread_t t;
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 64u << 20);
		if (pthread_create(&t, &at, huge_main, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
	} else if (!strcmp(shape, "threads")) {
		pthread_t t[8];
		a("plain");
		pthread_barrier_init(&start, NULL, 8);
		for (long i = 0; i < 8; i++)
			if (pthread_create(&t[i], NULL, racer, (void *)i) != 0)
				return 1;
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(shape, "signal")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGUSR1, &sa, NULL);
		a("plain");
		raise_in_b();
	} else if (!strcmp(shape, "thread")) {
		pthread_t t;
		if (pthread_create(&t, NULL, thread_main, "thread") != 0)
			return 1;
		pthread_join(t, NULL);
	} else {
		fprintf(stderr, "stackshapes: unknown shape %s\n", shape);
		return 2;
	}
	printf("refused %d\n", refused);
	return refused ? 0 : 1;
}
