// build-flags: -lpthread
/*
 * tsync: a seccomp filter installed with SECCOMP_FILTER_FLAG_TSYNC (every
 * thread at once) while another thread refuses in a loop, for
 * tests/integration/test_hostile.c. The filter kills the process at any
 * getppid, which this program never calls and the probe calls while it
 * records: a record under way when the filter lands would kill it.
 *
 *   tsync DIR    a thread opens DIR/tsync (O_WRONLY|O_CREAT, refused)
 *                until told to stop; after 2 ms the main thread installs
 *                the filter; the thread refuses 200 more times
 *
 * Prints "installed" and exits 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static char path[4096];
static volatile int installed, after;

static void *refuser(void *arg)
{
	(void)arg;
	while (after < 200) {
		/* seen before the call, not after: a refusal the probe recorded
		 * just before the filter went in may return after the installer
		 * said so, and would be counted as one it could not record */
		int under_filter = installed;
		int fd = open(path, O_WRONLY | O_CREAT, 0644);
		if (fd >= 0)
			close(fd);
		if (under_filter)
			after++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/tsync", argv[1]);
	struct sock_filter code[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(code) / sizeof(code[0]), code};
	pthread_t t;
	if (pthread_create(&t, NULL, refuser, NULL) != 0)
		return 1;
	struct timespec ms2 = {0, 2000000};
	nanosleep(&ms2, NULL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
		perror("tsync: seccomp");
		return 1;
	}
	installed = 1;
	pthread_join(t, NULL);
	printf("installed\n");
	return 0;
}
