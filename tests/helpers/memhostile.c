// build-flags: -lpthread -Itests/helpers/lib tests/helpers/lib/refuse.c
/*
 * memhostile: programs that handle memory and descriptors they did not
 * make themselves, for tests/integration/test_memhostile.c. Each refuses
 * O_WRONLY|O_CREAT opens in DIR (not writable), prints one "label value"
 * line per fact it saw and exits 0; the test compares the output with and
 * without the probe. "New" mappings are those that were not in
 * /proc/self/maps when the program started: a program's own buffers, as
 * far as it knows (the probe's ring and arenas among them, under it).
 *
 *   memhostile dontfork DIR  MADV_DONTFORK on every new mapping, then a
 *                            fork child refuses and exits with the errno
 *   memhostile wipe DIR      MADV_WIPEONFORK on every new private mapping,
 *                            then a fork child refuses
 *   memhostile unmap DIR     munmaps every new mapping, then refuses again
 *   memhostile readonly DIR  mprotects every new mapping read-only, then
 *                            refuses again
 *   memhostile ringmiddle DIR makes 256 KiB in the middle of every shared
 *                            writable mapping read-only, then refuses
 *                            20000 times (the ring laps into them)
 *   memhostile mlock DIR     mlockall(MCL_CURRENT|MCL_FUTURE) with
 *                            RLIMIT_MEMLOCK 1 MiB above what it maps now,
 *                            then refuses
 *   memhostile aslimit DIR   RLIMIT_AS and RLIMIT_DATA at what it uses now,
 *                            then refuses
 *   memhostile datalimit DIR RLIMIT_DATA at 0 (private writable mappings
 *                            refused; the heap it has is kept), then refuses
 *   memhostile closefds DIR  closes every descriptor from 3 on, dup2s a file
 *                            of its own onto each of 3..31, then refuses and
 *                            checks its file is as it wrote it
 *   memhostile closefirst DIR the same before its first file call, and onto
 *                            the number in $DENYTRACE_FD (the ring's) too;
 *                            prints its descriptors' count and offset
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "refuse.h"

struct range {
	uintptr_t lo, hi;
	char perms[8];
	int named; /* a file or a [pseudo] mapping */
};
static struct range at_start[512];
static size_t n_at_start;

static size_t read_maps(struct range *out, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return 0;
	char line[512];
	size_t n = 0;
	while (n < cap && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8], name[256] = "";
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perms, name) < 3)
			continue;
		out[n].lo = lo;
		out[n].hi = hi;
		memcpy(out[n].perms, perms, sizeof(perms));
		out[n].named = name[0] != 0;
		n++;
	}
	fclose(f);
	return n;
}

static int is_new(const struct range *r)
{
	if (r->named && r->perms[3] != 's')
		return 0; /* the program's binary, its libraries, heap and stack */
	for (size_t i = 0; i < n_at_start; i++)
		if (r->lo < at_start[i].hi && at_start[i].lo < r->hi)
			return 0;
	return 1;
}

/* Calls fn on every new mapping; returns how many. */
static int each_new(int (*fn)(const struct range *))
{
	static struct range now[512];
	size_t n = read_maps(now, 512);
	int k = 0;
	for (size_t i = 0; i < n; i++)
		if (is_new(&now[i]) && fn(&now[i]) == 0)
			k++;
	return k;
}

static int advise_dontfork(const struct range *r)
{
	return madvise((void *)r->lo, r->hi - r->lo, MADV_DONTFORK);
}

static int advise_wipe(const struct range *r)
{
	return madvise((void *)r->lo, r->hi - r->lo, MADV_WIPEONFORK);
}

static int unmap(const struct range *r)
{
	return munmap((void *)r->lo, r->hi - r->lo);
}

static int read_only(const struct range *r)
{
	return mprotect((void *)r->lo, r->hi - r->lo, PROT_READ);
}

/* A fork child refuses twice and exits with the errno of the second. */
static void child_refuses(const char *label)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		refuse("child1");
		_exit(refuse("child2"));
	}
	int st = reap(pid);
	if (st < 128)
		printf("%s exit %d\n", label, st);
	else
		printf("%s signal %d\n", label, st - 128);
}

static void tamper_then_fork(int (*fn)(const struct range *), const char *label)
{
	printf("first %d\n", refuse("first"));
	each_new(fn);
	child_refuses(label);
	printf("after %d\n", refuse("after"));
}

static void tamper_then_refuse(int (*fn)(const struct range *))
{
	printf("first %d\n", refuse("first"));
	each_new(fn);
	printf("after %d\n", refuse("after"));
	printf("again %d\n", refuse("again"));
}

static unsigned long vm_size(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0;
	if (f) {
		if (fscanf(f, "%lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (unsigned long)sysconf(_SC_PAGESIZE);
}

static int middle_read_only(const struct range *r)
{
	if (r->perms[3] != 's' || r->perms[1] != 'w' || r->hi - r->lo < (1u << 20))
		return -1;
	uintptr_t mid = r->lo + ((r->hi - r->lo) / 2 & ~(uintptr_t)4095);
	return mprotect((void *)mid, 256 << 10, PROT_READ);
}

static void ring_middle(void)
{
	printf("first %d\n", refuse("first"));
	each_new(middle_read_only);
	int same = 0;
	for (int i = 0; i < 20000; i++)
		same += refuse("lapped") == EACCES;
	printf("lapped %d\n", same);
}

static void mlock_all(void)
{
	struct rlimit rl;
	getrlimit(RLIMIT_MEMLOCK, &rl);
	unsigned long want = vm_size() + (1ul << 20);
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want; /* room for little more */
	setrlimit(RLIMIT_MEMLOCK, &rl);
	int rc = mlockall(MCL_CURRENT | MCL_FUTURE);
	printf("mlockall %d\n", rc == 0 ? 0 : errno > 0);
	printf("refused %d\n", refuse("locked"));
	void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mmap after %d\n", p != MAP_FAILED);
}

static void at_the_limit(void)
{
	unsigned long now = vm_size();
	struct rlimit as = {now, now};
	struct rlimit data = {0, 0};
	setrlimit(RLIMIT_DATA, &data);
	printf("aslimit %d\n", setrlimit(RLIMIT_AS, &as));
	for (int i = 0; i < 3; i++)
		printf("refused %d\n", refuse("limited"));
	void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mmap after %d\n", p != MAP_FAILED);
}

static void no_more_data(void)
{
	struct rlimit data = {0, 0};
	printf("datalimit %d\n", setrlimit(RLIMIT_DATA, &data));
	for (int i = 0; i < 3; i++)
		printf("refused %d\n", refuse("nodata"));
}

static void own_descriptors(void)
{
	char path[] = "/tmp/memhostile-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, "mine\n", 5) != 5)
		exit(2);
	unlink(path);
	for (int i = 3; i < 1024; i++)
		if (i != fd)
			close(i);
	for (int i = 3; i < 32; i++)
		if (i != fd)
			dup2(fd, i);
	for (int i = 0; i < 3; i++)
		printf("refused %d\n", refuse("closed"));
	char buf[64] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	off_t end = lseek(fd, 0, SEEK_END);
	printf("file %zd %s", n, buf);
	printf("size %lld\n", (long long)end);
}

static int count_fds(void)
{
	int n = 0;
	for (int i = 0; i < 4096; i++)
		n += fcntl(i, F_GETFD) >= 0;
	return n;
}

static void own_descriptors_first(void)
{
	syscall(SYS_close_range, 3, ~0u, 0);
	const char *v = getenv("DENYTRACE_FD");
	int ring_fd = v ? atoi(v) : 1023; /* the same number without the probe */
	/* Under a soft limit of 1024 or less run puts the ring just above it,
	 * where no program can take it (dup2 fails): then the number taken is
	 * the one without the probe, so that the output compares. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)ring_fd >= rl.rlim_cur)
		ring_fd = 1023;
	char path[] = "/tmp/memhostile-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, "mine\n", 5) != 5)
		exit(2);
	unlink(path);
	if (ring_fd > 2 && dup2(fd, ring_fd) < 0)
		exit(3);
	for (int i = 0; i < 3; i++)
		printf("refused %d\n", refuse("closed"));
	char buf[64] = "";
	ssize_t n = pread(ring_fd, buf, sizeof(buf) - 1, 0);
	printf("file %zd %s", n, buf);
	printf("offset %lld\n", (long long)lseek(ring_fd, 0, SEEK_CUR));
	printf("size %lld\n", (long long)lseek(fd, 0, SEEK_END));
	printf("fds %d\n", count_fds());
}

static void dontfork(void)
{
	tamper_then_fork(advise_dontfork, "child");
}

static void wipe(void)
{
	tamper_then_fork(advise_wipe, "child");
}

static void unmap_all(void)
{
	tamper_then_refuse(unmap);
}

static void readonly_all(void)
{
	tamper_then_refuse(read_only);
}

static const struct helper_mode modes[] = {{"dontfork", dontfork},
                                           {"wipe", wipe},
                                           {"unmap", unmap_all},
                                           {"readonly", readonly_all},
                                           {"ringmiddle", ring_middle},
                                           {"mlock", mlock_all},
                                           {"aslimit", at_the_limit},
                                           {"datalimit", no_more_data},
                                           {"closefds", own_descriptors},
                                           {"closefirst", own_descriptors_first},
                                           {NULL, NULL}};

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("start\n");
	refuse_dir = argv[2];
	n_at_start = read_maps(at_start, 512);
	return run_mode(modes, argv[1]);
}
