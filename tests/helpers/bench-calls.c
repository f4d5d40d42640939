/*
 * bench-calls: the interposed calls the benchmark (scripts/bench.py) measures,
 * in a program small enough that the probe's share is easy to see.
 *
 *   bench-calls calls OP N [PATH [after-refusal]]
 *       Performs N calls of OP that succeed, then exits 0 (a failed call
 *       exits 1: the benchmark must only count successes). With
 *       after-refusal, one write-open of a missing path comes first (a
 *       refusal when ENOENT is a watched errno). Run under
 *       callgrind with two values of N, with and without LD_PRELOAD; the
 *       slope of the instruction count in N is the cost of one call.
 *       OP is one of
 *         open    open(PATH, O_RDONLY) + close   (PATH default /dev/null)
 *         access  access(PATH, F_OK)
 *         fcntl   fcntl(fd, F_SETLK, {F_UNLCK}) on PATH opened once (what
 *                 SQLite does around every transaction)
 *         fopen   fopen(PATH, "r") + fclose
 *         create  open(PATH, O_WRONLY|O_CREAT) + close: a write that
 *                 succeeds (PATH needed)
 *         none    nothing (the loop alone)
 *
 *   bench-calls refuse N PATH
 *       One successful open of /dev/null first (so that the wrapper's
 *       first-use symbol lookup is not counted as the refusal's cost), then N
 *       opens of PATH with O_RDWR|O_CREAT that must fail (PATH in a missing
 *       directory: ENOENT; an immutable file: EPERM), each timed with
 *       clock_gettime(CLOCK_MONOTONIC). Prints one JSON object: the first
 *       call's time and the median, p90, p99, mean, min and max of the
 *       others, in microseconds, and the minor page faults the N calls took
 *       (the probe's recording path maps memory).
 *
 *   bench-calls syscalls N PATH
 *       The system calls the probe makes to record one refusal of PATH
 *       (a path in a missing directory), made bare, N times, each time
 *       timed as refuse does and printed the same way: gettid, two
 *       rt_sigprocmask, a statx of PATH's directory and one of its parent,
 *       MADV_POPULATE_WRITE of a page of a shared file mapping (the ring
 *       check) and of 13 mapped pages of a private one (the arena check).
 *       What a refusal's added cost owes to the kernel's
 *       price of a system call on this machine, beside what the probe
 *       does itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int do_calls(const char *op, long n, const char *path, int after_refusal)
{
	if (after_refusal) {
		/* a refused write-open first: the probe then watches successful
		 * opens for SQLite's read-only retry (DT_WATCH_REOPEN) */
		int fd = open("/nonexistent-denytrace-bench/kanban.db", O_RDWR | O_CREAT, 0644);
		if (fd >= 0)
			return 1;
	}
	if (!strcmp(op, "none")) {
		for (long i = 0; i < n; i++)
			__asm__ volatile("" ::: "memory");
		return 0;
	}
	if (!strcmp(op, "open")) {
		for (long i = 0; i < n; i++) {
			int fd = open(path, O_RDONLY);
			if (fd < 0)
				return 1;
			close(fd);
		}
		return 0;
	}
	if (!strcmp(op, "access")) {
		for (long i = 0; i < n; i++)
			if (access(path, F_OK) != 0)
				return 1;
		return 0;
	}
	if (!strcmp(op, "fcntl")) {
		int fd = open(path, O_RDWR);
		if (fd < 0)
			return 1;
		struct flock fl = {
		    .l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
		for (long i = 0; i < n; i++)
			if (fcntl(fd, F_SETLK, &fl) != 0)
				return 1;
		close(fd);
		return 0;
	}
	if (!strcmp(op, "create")) {
		/* the same write-class success again and again, as SQLite's
		 * journal open at every transaction */
		for (long i = 0; i < n; i++) {
			int fd = open(path, O_WRONLY | O_CREAT, 0644);
			if (fd < 0)
				return 1;
			close(fd);
		}
		return 0;
	}
	if (!strcmp(op, "fopen")) {
		for (long i = 0; i < n; i++) {
			FILE *f = fopen(path, "r");
			if (!f)
				return 1;
			fclose(f);
		}
		return 0;
	}
	fprintf(stderr, "bench-calls: unknown op '%s'\n", op);
	return 2;
}

/* Prints t[0] (the first call) and the median, p90, p99, mean, min and max
 * of t[1..n-1] as one JSON object, with the page faults between ru0 and
 * ru1; sorts t. */
static void print_times(double *t, long n, const struct rusage *ru0, const struct rusage *ru1)
{
	double first = t[0], sum = 0;
	double *rest = t + 1;
	long m = n - 1;
	for (long i = 0; i < m; i++)
		sum += rest[i];
	qsort(rest, (size_t)m, sizeof(double), cmp_double);
#define PCT(p) rest[(long)((double)(m - 1) * (p) + 0.5)]
	printf("{\"n\": %ld, \"first_us\": %.3f, \"median_us\": %.3f, \"p90_us\": %.3f, "
	       "\"p99_us\": %.3f, \"mean_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
	       "\"minor_faults\": %ld}\n",
	       n, first, PCT(0.5), PCT(0.9), PCT(0.99), sum / (double)m, rest[0], rest[m - 1],
	       ru1->ru_minflt - ru0->ru_minflt);
#undef PCT
}

/* n timings, faulted in before they are taken */
static double *times_new(long n)
{
	double *t = malloc(sizeof(double) * (size_t)n);
	for (long i = 0; t && i < n; i++)
		t[i] = 0;
	return t;
}

static int do_refuse(long n, const char *path)
{
	if (n < 2)
		return 2;
	int fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		close(fd);
	double *t = times_new(n);
	if (!t)
		return 1;
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	for (long i = 0; i < n; i++) {
		double a = now_us();
		int r = open(path, O_RDWR | O_CREAT, 0644);
		double b = now_us();
		if (r >= 0) {
			fprintf(stderr, "bench-calls: open %s did not fail\n", path);
			return 1;
		}
		t[i] = b - a;
	}
	getrusage(RUSAGE_SELF, &ru1);
	print_times(t, n, &ru0, &ru1);
	free(t);
	return 0;
}

static int do_syscalls(long n, const char *path)
{
	char dir[PATH_MAX], up[PATH_MAX];
	if (n < 2 || snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return 2;
	snprintf(dir, sizeof(dir), "%s", dirname(dir));
	snprintf(up, sizeof(up), "%s", dir);
	snprintf(up, sizeof(up), "%s", dirname(up));
	long page = sysconf(_SC_PAGESIZE);
	FILE *f = tmpfile();
	if (!f || ftruncate(fileno(f), page) != 0)
		return 1;
	void *m = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
	if (m == MAP_FAILED)
		return 1;
	*(volatile char *)m = 1;
	size_t hot = 13 * (size_t)page; /* about the arena's hot run (record.c) */
	void *arena = mmap(NULL, hot, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED)
		return 1;
	memset(arena, 1, hot);
	double *t = times_new(n);
	if (!t)
		return 1;
	uint64_t all = ~0ULL, old;
	struct statx sx;
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	for (long i = 0; i < n; i++) {
		double a = now_us();
		syscall(SYS_gettid);
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof(old));
		syscall(SYS_statx, AT_FDCWD, dir, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx);
		syscall(SYS_statx, AT_FDCWD, up, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx);
		syscall(SYS_madvise, arena, hot, 23 /* MADV_POPULATE_WRITE */);
		syscall(SYS_madvise, m, page, 23 /* MADV_POPULATE_WRITE */);
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
		t[i] = now_us() - a;
	}
	getrusage(RUSAGE_SELF, &ru1);
	print_times(t, n, &ru0, &ru1);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && argc <= 6 && !strcmp(argv[1], "calls"))
		return do_calls(argv[2], atol(argv[3]), argc > 4 ? argv[4] : "/dev/null",
		                argc > 5 && !strcmp(argv[5], "after-refusal"));
	if (argc == 4 && !strcmp(argv[1], "refuse"))
		return do_refuse(atol(argv[2]), argv[3]);
	if (argc == 4 && !strcmp(argv[1], "syscalls"))
		return do_syscalls(atol(argv[2]), argv[3]);
	fprintf(stderr, "usage: bench-calls calls OP N [PATH [after-refusal]] | "
	                "bench-calls refuse|syscalls N PATH\n");
	return 2;
}
