// build-flags: -lpthread
/*
 * smallstack: refused opens (O_WRONLY|O_CREAT of DIR/NAME, DIR not
 * writable) made with little stack left, for tests/integration/
 * test_smallstack.c. Each stack is filled with a canary first; afterwards
 * the deepest byte written below its top is the stack used, written to the
 * file $SMALLSTACK_USED when set ("N\n"), so that a run with the probe and
 * one without tell how much of the host's stack the probe took.
 *
 *   smallstack altstack SIZE DIR  a SIGTERM handler on a SIZE-byte signal
 *                                 stack opens DIR/altstack: the process's
 *                                 first open and first refusal
 *   smallstack thread LEFT DIR    a thread on a 64 KiB stack of its own
 *                                 (with a guard page) opens DIR/thread with
 *                                 LEFT bytes of it left (open called once
 *                                 before, so that it is bound)
 *   smallstack min DIR            a thread with PTHREAD_STACK_MIN bytes of
 *                                 stack opens DIR/min
 *
 * Prints "refused N" (opens failed with EACCES, EROFS or ENOENT, the last
 * for make bench's --errnos ENOENT); exits 0 when all were.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CANARY 0xa5
#define NOINLINE __attribute__((noinline))

static const char *dir;
static int refused;
static char path[4096]; /* made before: the refusing code uses little stack */

static NOINLINE void refuse(void)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	else if (errno == EACCES || errno == EROFS || errno == ENOENT)
		refused++; /* ENOENT: the benchmark's refusal (--errnos ENOENT) */
	__asm__ volatile("" ::: "memory");
}

/* Bytes of [lo, lo + size) written since the canary went in: a stack
 * grows down, so from the lowest changed byte to the top. */
static size_t used(const unsigned char *lo, size_t size)
{
	size_t i = 0;
	while (i < size && lo[i] == CANARY)
		i++;
	return size - i;
}

static void report(size_t n)
{
	const char *to = getenv("SMALLSTACK_USED");
	FILE *f = to ? fopen(to, "w") : NULL;
	if (f) {
		fprintf(f, "%zu\n", n);
		fclose(f);
	}
}

static void on_term(int sig)
{
	(void)sig;
	refuse();
}

static int on_altstack(size_t size)
{
	unsigned char *stack = malloc(size);
	if (!stack)
		return 1;
	memset(stack, CANARY, size);
	stack_t ss = {.ss_sp = stack, .ss_size = size, .ss_flags = 0};
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sa.sa_flags = SA_ONSTACK;
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0) {
		perror("smallstack");
		return 1;
	}
	raise(SIGTERM);
	report(used(stack, size));
	return 0;
}

static size_t left;

/* Leaves `left` bytes of this thread's stack, then refuses. */
static NOINLINE void consume(size_t n)
{
	char *p = alloca(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	refuse();
	__asm__ volatile("" : : "r"(p) : "memory");
}

static void *thread_left(void *arg)
{
	unsigned char *lo = arg;
	unsigned char here;
	consume((size_t)(&here - lo) - left);
	return NULL;
}

static void *thread_min(void *arg)
{
	(void)arg;
	refuse();
	return NULL;
}

/* A thread on a canary-filled stack of size bytes above a guard page
 * (an overflow faults rather than writing past it), running fn. */
static int on_thread(size_t size, void *(*fn)(void *))
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *m =
	    mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m, page, PROT_NONE) != 0)
		return 1;
	unsigned char *lo = m + page;
	memset(lo, CANARY, size);
	pthread_attr_t at;
	pthread_t t;
	pthread_attr_init(&at);
	pthread_attr_setstack(&at, lo, size);
	if (pthread_create(&t, &at, fn, lo) != 0)
		return 1;
	pthread_join(t, NULL);
	report(used(lo, size));
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0;
	dir = argv[argc - 1];
	snprintf(path, sizeof(path), "%s/%s", dir, argc > 1 ? argv[1] : "");
	if (argc == 4 && !strcmp(argv[1], "altstack")) {
		bad = on_altstack(strtoul(argv[2], NULL, 0));
	} else if (argc == 4 && !strcmp(argv[1], "thread")) {
		/* open bound (the loader's lazy binding saves every vector
		 * register on the stack: ~2.5 KiB with AVX-512) */
		int fd = open("/", O_RDONLY | O_DIRECTORY);
		if (fd >= 0)
			close(fd);
		left = strtoul(argv[2], NULL, 0);
		bad = on_thread(64 << 10, thread_left);
	} else if (argc == 3 && !strcmp(argv[1], "min")) {
		bad = on_thread((size_t)sysconf(_SC_THREAD_STACK_MIN), thread_min);
	} else {
		fprintf(stderr,
		        "usage: smallstack altstack SIZE DIR | thread LEFT DIR | min DIR\n");
		return 2;
	}
	printf("refused %d\n", refused);
	return bad || !refused;
}
