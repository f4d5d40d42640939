// build-flags: -lpthread
/*
 * stackshapes: one refused open (O_WRONLY|O_CREAT of DIR/NAME, DIR not
 * writable) from each kind of stack an unwinder must cross, for
 * tests/integration/test_stacks.c, which compares the stacks the probe's
 * cached unwinder records with libgcc's, asked here, in the program, right
 * after each refusal: a line "libgcc NAME: MODULE+OFFSET..." (file name
 * and file offset of each return address - 1, as the probe records them).
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
 *              refusal first
 *     jit      a plain refusal, then a loop registering and deregistering
 *              frames with libgcc (__register_frame, as JITs do) while a
 *              SIGALRM handler refuses, until 100 handlers have run: an
 *              unwinder that takes libgcc's object_mutex in the handler
 *              waits for ever (no libgcc lines: it would itself)
 *     badcfi   an assembly function whose CFI misses a push: the return
 *              address its CFI names is 0x10 (no libgcc line: libgcc
 *              follows it and crashes)
 *     badfp    (aarch64) an assembly function that points x29, the frame
 *              record chain, at the top of the address space before it
 *              calls: a walker that follows x29 off the stack faults
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include <unwind.h>

static const char *dir;
static volatile int refused;
static int print_libgcc = 1;

#define NOINLINE __attribute__((noinline))

/* "MODULE+OFFSET" of a return address, from /proc/self/maps as the probe
 * reads it: the file offset of ip - 1 in its executable mapping. */
static void module_offset(uintptr_t ip, char *out, size_t cap)
{
	snprintf(out, cap, "?");
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long start, end, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s%n", &start, &end, perms, &off, &pos) <
		        4 ||
		    perms[2] != 'x' || ip < start || ip >= end)
			continue;
		char *path = line + pos;
		path += strspn(path, " ");
		path[strcspn(path, "\n")] = 0;
		const char *base = strrchr(path, '/');
		snprintf(out, cap, "%s+%lx", base ? base + 1 : path, ip - 1 - start + off);
		break;
	}
	if (f)
		fclose(f);
}

struct trace {
	uintptr_t ip[64];
	int n;
};

static _Unwind_Reason_Code trace_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct trace *t = arg;
	if (t->n >= 64)
		return _URC_END_OF_STACK;
	t->ip[t->n++] = _Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

/* libgcc's stack from the caller's frame (refuse) outwards. */
static NOINLINE void print_libgcc_stack(const char *name)
{
	struct trace t = {.n = 0};
	_Unwind_Backtrace(trace_frame, &t);
	char line[8192];
	size_t len = (size_t)snprintf(line, sizeof(line), "libgcc %s:", name);
	for (int i = 1; i < t.n && t.ip[i] && len < sizeof(line) - 300; i++) {
		char w[300];
		module_offset(t.ip[i], w, sizeof(w));
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %s", w);
	}
	static pthread_mutex_t out = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&out);
	printf("%s\n", line);
	pthread_mutex_unlock(&out);
}

static NOINLINE void refuse(const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	else if (errno == EACCES || errno == EROFS)
		refused = 1;
	if (print_libgcc)
		print_libgcc_stack(name);
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

/* ---- jit ---------------------------------------------------------------- */

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	/* an alarm due between the loop's last test and the timer's end
	 * refuses nothing: exactly 100 refusals, with the probe or without */
	if (alarms >= 100)
		return;
	refuse("jit");
	alarms++;
}

/* One CIE and one FDE for a code range nobody runs, as a JIT registers
 * for the code it generated, then the terminator. */
static unsigned char jit_code[64];
static uint32_t jit_eh[16];

static void build_jit_eh(void)
{
	unsigned char *p = (unsigned char *)jit_eh;
	/* CIE: length 16, id 0, version 1, "zR", code 1, data -8, ra 16,
	 * augmentation length 1, FDE pointers absolute 8-byte */
	static const unsigned char cie[] = {16,  0,   0, 0, 0,    0,  0, 0,    1,
	                                    'z', 'R', 0, 1, 0x78, 16, 1, 0x00, 0};
	memcpy(p, cie, sizeof(cie));
	unsigned char *fde = p + 20;
	uint32_t len = 4 + 8 + 8 + 1 + 3, cie_off = 24;
	uint64_t begin = (uint64_t)(uintptr_t)jit_code, range = sizeof(jit_code);
	memcpy(fde, &len, 4);
	memcpy(fde + 4, &cie_off, 4);
	memcpy(fde + 8, &begin, 8);
	memcpy(fde + 16, &range, 8);
	fde[24] = 0; /* augmentation length, then nops */
}

extern void __register_frame(void *);
extern void __deregister_frame(void *);

static void jit_loop(void)
{
	build_jit_eh();
	signal(SIGALRM, on_alarm);
	struct itimerval it = {{0, 500}, {0, 500}};
	setitimer(ITIMER_REAL, &it, NULL);
	while (alarms < 100) {
		__register_frame(jit_eh);
		__deregister_frame(jit_eh);
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
}

/* ---- badcfi --------------------------------------------------------------- */

/* badcfi_stub(fn) calls fn with 0x10 pushed first and not described in
 * its CFI: an unwinder trusting the CFI finds 0x10 as its return address.
 * x86_64 only (make cross-aarch64 builds the other shapes for aarch64). */
#if defined(__x86_64__)
void badcfi_stub(void (*fn)(void));
__asm__(".text\n"
        ".globl badcfi_stub\n"
        ".type badcfi_stub, @function\n"
        "badcfi_stub:\n"
        ".cfi_startproc\n"
        "pushq $0x10\n"
        "call *%rdi\n"
        "addq $8, %rsp\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size badcfi_stub, .-badcfi_stub\n");

static NOINLINE void refuse_badcfi(void)
{
	refuse("badcfi");
	__asm__ volatile("");
}
#endif

#if defined(__aarch64__)
/* badfp_stub(fn) calls fn with x29 = -16: fn saves it in its frame record
 * as its caller's, where no frame record is. */
void badfp_stub(void (*fn)(void));
__asm__(".text\n"
        ".globl badfp_stub\n"
        ".type badfp_stub, %function\n"
        "badfp_stub:\n"
        "stp x29, x30, [sp, #-16]!\n"
        "mov x29, #-16\n"
        "blr x0\n"
        "ldp x29, x30, [sp], #16\n"
        "ret\n"
        ".size badfp_stub, .-badfp_stub\n");

static NOINLINE void refuse_badfp(void)
{
	refuse("badfp");
	__asm__ volatile("");
}
#endif

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
		fprintf(stderr,
		        "usage: stackshapes plain|deep|alloca|realign|drap|huge|signal|thread|"
		        "threads|jit|badcfi|badfp DIR\n");
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
	} else if (!strcmp(shape, "jit")) {
		a("plain");
		print_libgcc = 0;
		jit_loop();
#if defined(__x86_64__)
	} else if (!strcmp(shape, "badcfi")) {
		a("plain");
		print_libgcc = 0;
		badcfi_stub(refuse_badcfi);
#endif
#if defined(__aarch64__)
	} else if (!strcmp(shape, "badfp")) {
		a("plain");
		print_libgcc = 0;
		badfp_stub(refuse_badfp);
#endif
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
