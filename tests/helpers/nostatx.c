/*
 * nostatx: runs a command where statx fails with ENOSYS, as on a kernel
 * older than 4.11 or under a container's seccomp profile written before
 * statx existed, for tests/integration/test_realpath.c.
 *
 *   nostatx CMD [ARGS...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: nostatx CMD [ARGS...]\n");
		return 2;
	}
	struct sock_filter prog[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_statx, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fprog = {sizeof(prog) / sizeof(prog[0]), prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) {
		fprintf(stderr, "nostatx: prctl: %s\n", strerror(errno));
		return 2;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "nostatx: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
