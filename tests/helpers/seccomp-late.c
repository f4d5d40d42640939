// build-flags: -lseccomp
/*
 * seccomp-late: a program that installs an allow-list seccomp filter of its
 * own after it started (default: kill the process), as sandboxed servers
 * do, then makes refused calls, for tests/integration/test_survive.c.
 *
 *   seccomp-late before PATH N   filter first, then N refused opens of PATH
 *   seccomp-late after PATH N    one refused open, the filter, N more
 *   seccomp-late prctl PATH N    as after, the filter through prctl() itself
 *   seccomp-late rawprctl PATH N as after, through syscall(SYS_prctl, ...)
 *   seccomp-late twice PATH N    as prctl, then a second filter stacked on it
 *   seccomp-late highbits PATH N as after, through syscall(SYS_seccomp, ...)
 *                                with the operation in a full register whose
 *                                upper half is not zero (the kernel reads
 *                                an unsigned int)
 *   seccomp-late fork PATH N     as after, with a filter that kills only
 *                                getpid/getppid/gettid, then a fork whose
 *                                child exits 0 at once
 *
 * The filter allows only what the program itself does from then on: openat
 * (glibc's open), write, exit_group. PATH must be refused (sysfs refuses
 * creating files even to root). Prints "survived: N refused" and exits 0;
 * a call the filter forbids kills it with SIGSYS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const int allowed[] = {SCMP_SYS(openat), SCMP_SYS(write), SCMP_SYS(exit_group)};

static void with_libseccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	if (!ctx || seccomp_load(ctx) != 0) {
		fprintf(stderr, "seccomp-late: cannot load the filter\n");
		exit(2);
	}
}

/* The same allow-list as raw BPF (plus prctl, for "twice"), installed with
 * prctl(PR_SET_SECCOMP), or with syscall(SYS_prctl, ...) when raw. */
static void with_prctl(int raw, int highbits)
{
	struct sock_filter prog[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 3, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 2, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 1, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog fprog = {sizeof(prog) / sizeof(prog[0]), prog};
	long op = SECCOMP_SET_MODE_FILTER | (1L << 32);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    (highbits ? syscall(SYS_seccomp, op, 0L, &fprog)
	     : raw    ? syscall(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0)
	              : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0)) != 0) {
		fprintf(stderr, "seccomp-late: prctl: %s\n", strerror(errno));
		exit(2);
	}
}

/* A deny-list instead: only asking for an id kills; then a fork, whose
 * child leaves at once. Returns 0 when the child exited 0. */
static int with_denylist_then_fork(void)
{
	struct sock_filter prog[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 2, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 1, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_gettid, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fprog = {sizeof(prog) / sizeof(prog[0]), prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) {
		fprintf(stderr, "seccomp-late: prctl: %s\n", strerror(errno));
		exit(2);
	}
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	int st = -1;
	if (child < 0 || waitpid(child, &st, 0) != child || st != 0) {
		fprintf(stderr, "seccomp-late: the forked child ended with status %d\n", st);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = {"before", "after", "prctl",   "rawprctl",
	                                    "twice",  "fork",  "highbits"};
	const char *mode = argc == 4 ? argv[1] : "";
	size_t m = 0;
	while (m < sizeof(modes) / sizeof(modes[0]) && strcmp(mode, modes[m]))
		m++;
	if (m == sizeof(modes) / sizeof(modes[0])) {
		fprintf(
		    stderr,
		    "usage: seccomp-late before|after|prctl|rawprctl|twice|fork|highbits PATH N\n");
		return 2;
	}
	const char *path = argv[2];
	int n = atoi(argv[3]), refused = 0;
	if (strcmp(mode, "before"))
		refused += open(path, O_WRONLY | O_CREAT, 0644) < 0;
	fflush(stdout);
	if (!strcmp(mode, "prctl") || !strcmp(mode, "twice") || !strcmp(mode, "rawprctl") ||
	    !strcmp(mode, "highbits"))
		with_prctl(!strcmp(mode, "rawprctl"), !strcmp(mode, "highbits"));
	else if (!strcmp(mode, "fork")) {
		if (with_denylist_then_fork())
			return 1;
	} else
		with_libseccomp();
	if (!strcmp(mode, "twice"))
		with_prctl(0, 0);
	for (int i = 0; i < n; i++)
		refused += open(path, O_WRONLY | O_CREAT, 0644) < 0;
	char line[64];
	int len = snprintf(line, sizeof(line), "survived: %d refused\n", refused);
	if (write(1, line, (size_t)len) < 0)
		return 1;
	return 0;
}
