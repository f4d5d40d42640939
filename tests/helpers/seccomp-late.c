// build-flags: -lseccomp
/*
 * seccomp-late: a program that installs an allow-list seccomp filter of its
 * own after it started (default: kill the process), as sandboxed servers
 * do, then makes refused calls, for tests/integration/test_survive.c.
 *
 *   seccomp-late before PATH N   filter first, then N refused opens of PATH
 *   seccomp-late after PATH N    one refused open, the filter, N more
 *   seccomp-late prctl PATH N    as after, the filter through prctl() itself
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

/* The same allow-list as raw BPF, installed with prctl(PR_SET_SECCOMP). */
static void with_prctl(void)
{
	struct sock_filter prog[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 2, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 1, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog fprog = {sizeof(prog) / sizeof(prog[0]), prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) {
		fprintf(stderr, "seccomp-late: prctl: %s\n", strerror(errno));
		exit(2);
	}
}

int main(int argc, char **argv)
{
	if (argc != 4 ||
	    (strcmp(argv[1], "before") && strcmp(argv[1], "after") && strcmp(argv[1], "prctl"))) {
		fprintf(stderr, "usage: seccomp-late before|after|prctl PATH N\n");
		return 2;
	}
	const char *path = argv[2];
	int n = atoi(argv[3]), refused = 0;
	if (strcmp(argv[1], "before"))
		refused += open(path, O_WRONLY | O_CREAT, 0644) < 0;
	fflush(stdout);
	if (!strcmp(argv[1], "prctl"))
		with_prctl();
	else
		with_libseccomp();
	for (int i = 0; i < n; i++)
		refused += open(path, O_WRONLY | O_CREAT, 0644) < 0;
	char line[64];
	int len = snprintf(line, sizeof(line), "survived: %d refused\n", refused);
	if (write(1, line, (size_t)len) < 0)
		return 1;
	return 0;
}
