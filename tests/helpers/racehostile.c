// build-flags: -lpthread -Itests/helpers/lib tests/helpers/lib/refuse.c
/*
 * racehostile: programs whose threads and children refuse while something
 * else happens to them, for tests/integration/test_memhostile.c. Each
 * refuses O_WRONLY|O_CREAT opens in DIR (not writable), prints "label
 * value" lines and exits 0.
 *
 *   racehostile forkstorm DIR  8 threads refuse (500 times each) while
 *                              the main thread forks 200 children that
 *                              each refuse, and vforks 200 more
 *   racehostile segv DIR       a SIGSEGV handler leaves by siglongjmp, 500
 *                              times, while 4 threads refuse (500 each)
 *   racehostile clone3 DIR     a thread made by clone3 on an 8 KiB stack of
 *                              the program's (with TLS shared) refuses
 *   racehostile cancel DIR     200 threads, each refusing in a loop with
 *                              asynchronous cancellation on, cancelled
 *                              while they refuse
 *   racehostile cancelfirst DIR 100 children, each cancelling a thread
 *                              (asynchronously) 0-500 us into its first
 *                              refusals, the process's first, then
 *                              refusing DIR/aftercancel from the main thread
 *   racehostile ringfd DIR     while 8 threads refuse, the main thread
 *                              ftruncates, grows and rewrites the file open
 *                              on $DENYTRACE_FD (the ring, if it can)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "refuse.h"

static atomic_int stop;
static atomic_long refused_by_threads;

static void *refuse_until_stop(void *arg)
{
	(void)arg;
	/* bounded: the children's records must not be lapped in the ring */
	for (int i = 0; i < 500 && !atomic_load(&stop); i++)
		if (refuse("thread") != 0)
			atomic_fetch_add(&refused_by_threads, 1);
	return NULL;
}

static pthread_t threads[8];

static void start_threads(int n)
{
	for (int i = 0; i < n; i++)
		pthread_create(&threads[i], NULL, refuse_until_stop, NULL);
}

static void stop_threads(int n)
{
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	printf("threads refused %d\n", atomic_load(&refused_by_threads) > 0);
}

static void fork_storm(void)
{
	start_threads(8);
	int bad = 0;
	for (int i = 0; i < 200; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(refuse("forked"));
		bad += reap(pid) != EACCES;
	}
	for (int i = 0; i < 200; i++) {
		pid_t pid = vfork();
		if (pid == 0)
			_exit(refuse("vforked"));
		bad += reap(pid) != EACCES;
	}
	stop_threads(8);
	printf("children not EACCES %d\n", bad);
}

static sigjmp_buf back;
static volatile sig_atomic_t faults;
static int *volatile nowhere; /* NULL */

static void on_segv(int sig)
{
	(void)sig;
	faults++;
	siglongjmp(back, 1);
}

static void segv_longjmp(void)
{
	struct sigaction sa = {.sa_handler = on_segv};
	sigaction(SIGSEGV, &sa, NULL);
	start_threads(4);
	for (int i = 0; i < 500; i++) {
		if (sigsetjmp(back, 1) == 0) {
			refuse("main");
			*nowhere = 1;
		}
	}
	stop_threads(4);
	printf("faults %d\n", (int)faults);
}

static atomic_int clone3_result = -1;

static void __attribute__((noreturn)) clone3_body(void)
{
	atomic_store(&clone3_result, refuse("clone3"));
	syscall(SYS_exit, 0);
	__builtin_unreachable();
}

/* The child starts on its own stack with no frame to return to: it calls
 * the body straight from the system call, which never returns. */
static long raw_clone3(struct clone_args *ca)
{
#if defined(__x86_64__)
	long rc;
	__asm__ volatile("syscall\n\t"
	                 "testq %%rax, %%rax\n\t"
	                 "jnz 1f\n\t"
	                 "call *%[body]\n\t"
	                 "1:"
	                 : "=a"(rc)
	                 : "a"((long)SYS_clone3), "D"(ca), "S"(sizeof(*ca)), [body] "r"(clone3_body)
	                 : "rcx", "r11", "memory");
	return rc;
#else
	(void)ca;
	return -1;
#endif
}

static void tiny_clone3(void)
{
	refuse("warm"); /* attach and bind open before the tiny stack */
	size_t size = 8 << 10;
	unsigned char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
	                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	struct clone_args ca = {
	    .flags =
	        CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM,
	    .stack = (uintptr_t)stack,
	    .stack_size = size,
	};
	long tid = raw_clone3(&ca);
	for (int i = 0; i < 200000 && tid > 0 && atomic_load(&clone3_result) < 0; i++)
		usleep(100);
	printf("clone3 %d\n", tid > 0 ? atomic_load(&clone3_result) : -2);
}

static void *refuse_cancellable(void *arg)
{
	(void)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	for (;;)
		refuse("cancelled");
	return NULL;
}

static void cancel_while_refusing(void)
{
	int joined = 0;
	for (int i = 0; i < 200; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, refuse_cancellable, NULL) != 0)
			break;
		usleep(500 + (unsigned)(i % 7) * 300);
		pthread_cancel(t);
		void *res = NULL;
		joined += pthread_join(t, &res) == 0 && res == PTHREAD_CANCELED;
	}
	printf("cancelled %d\n", joined);
}

static void cancel_first_refusal(void)
{
	int bad = 0;
	for (int i = 0; i < 100; i++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			pthread_t t;
			if (pthread_create(&t, NULL, refuse_cancellable, NULL) != 0)
				_exit(3);
			usleep((unsigned)(i * 37) % 500);
			pthread_cancel(t);
			pthread_join(t, NULL);
			_exit(refuse("aftercancel") == EACCES ? 0 : 1);
		}
		bad += reap(pid) != 0;
	}
	printf("children failed %d\n", bad);
}

static void ring_fd_abuse(void)
{
	const char *v = getenv("DENYTRACE_FD");
	int fd = v ? atoi(v) : -1;
	start_threads(8);
	usleep(20000);
	struct stat_sizes {
		off_t len;
	} s = {fd >= 0 ? lseek(fd, 0, SEEK_END) : -1};
	for (int i = 0; i < 50 && fd >= 0 && s.len > 0; i++) {
		if (ftruncate(fd, s.len / 2) != 0)
			break;
		usleep(1000);
		if (ftruncate(fd, s.len * 2) != 0)
			break;
		usleep(1000);
		static const char junk[4096];
		if (pwrite(fd, junk, sizeof(junk), 0) < 0)
			break;
	}
	stop_threads(8);
	printf("done\n");
}

static const struct helper_mode modes[] = {{"forkstorm", fork_storm},
                                           {"segv", segv_longjmp},
                                           {"clone3", tiny_clone3},
                                           {"cancel", cancel_while_refusing},
                                           {"cancelfirst", cancel_first_refusal},
                                           {"ringfd", ring_fd_abuse},
                                           {NULL, NULL}};

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	refuse_dir = argv[2];
	return run_mode(modes, argv[1]);
}
