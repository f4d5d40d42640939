/*
 * sigstep: a signal on every instruction of a refusal's way through the
 * probe, for tests/integration/test_stress.c. A race between a signal
 * handler and the probe may need the signal to land on one instruction
 * among thousands; under load that happens now and then, here it happens
 * every time.
 *
 *   sigstep DENY STEPS
 *
 * A child makes STEPS + 1 refused mkdir(DENY/m-x) calls, one after the
 * other. Its parent traces it: after the k-th call leaves the kernel, the
 * parent single-steps the child k instructions and then delivers SIGUSR1
 * there, whose handler makes a refused open(DENY/s-x). So the signal
 * lands at instruction 0, 1, 2, ... STEPS - 1 of the probe's work after a
 * refusal (once the probe holds signals back, the signal waits for it).
 *
 * Output (stdout): the child's "child PID mkdir REFUSED signals HANDLED",
 * then "traced STEPS signals DELIVERED"; exit status 0, 1 when a call did
 * not fail as expected or the tracing broke off, 77 when tracing is not
 * possible here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* aarch64 has no mkdir system call, only mkdirat */
#ifdef SYS_mkdir
#define MKDIR_NR SYS_mkdir
#else
#define MKDIR_NR SYS_mkdirat
#endif

static char p_mkdir[4200], p_sig[4200];
static volatile sig_atomic_t handled, wrong;

static void on_usr1(int sig)
{
	(void)sig;
	int saved = errno;
	int fd = open(p_sig, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0 || errno != EACCES)
		wrong = 1;
	if (fd >= 0)
		close(fd);
	handled++;
	errno = saved;
}

static int child(long steps)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
		_exit(77);
	raise(SIGSTOP); /* the parent sets its options meanwhile */
	long refused = 0;
	for (long k = 0; k <= steps; k++) {
		errno = 0;
		if (mkdir(p_mkdir, 0755) == -1 && errno == EACCES)
			refused++;
	}
	printf("child %d mkdir %ld signals %ld\n", (int)getpid(), refused, (long)handled);
	fflush(stdout);
	_exit(wrong || refused != steps + 1 ? 1 : 0);
}

/* Runs the child to its next system-call stop; returns 1 at a stop, 0
 * when it exited (status in *st). */
static int next_syscall_stop(pid_t pid, int sig, int *st)
{
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig) != 0)
			return 0;
		sig = 0;
		if (waitpid(pid, st, 0) != pid || WIFEXITED(*st) || WIFSIGNALED(*st))
			return 0;
		if (WSTOPSIG(*st) == (SIGTRAP | 0x80))
			return 1;
		sig = WSTOPSIG(*st); /* a signal of its own: pass it on */
	}
}

/* Stops the child as the k-th mkdir leaves the kernel refused. */
static int to_mkdir_exit(pid_t pid, int sig, int *st)
{
	for (;;) {
		if (!next_syscall_stop(pid, sig, st))
			return 0;
		sig = 0;
		struct __ptrace_syscall_info info;
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info) <= 0)
			return 0;
		static long entered;
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY)
			entered = (long)info.entry.nr;
		else if (info.op == PTRACE_SYSCALL_INFO_EXIT &&
		         (entered == MKDIR_NR || entered == SYS_mkdirat) &&
		         info.exit.rval == -EACCES)
			return 1;
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: sigstep DENY STEPS\n");
		return 2;
	}
	snprintf(p_mkdir, sizeof(p_mkdir), "%s/m-x", argv[1]);
	snprintf(p_sig, sizeof(p_sig), "%s/s-x", argv[1]);
	long steps = atol(argv[2]);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		child(steps);
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		return 77;
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
	           (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)) != 0)
		return 77;
	long signals = 0;
	int traced = to_mkdir_exit(pid, 0, &st);
	for (long k = 0; traced && k < steps; k++) {
		for (long i = 0; i < k && traced; i++)
			traced = ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) == 0 &&
			         waitpid(pid, &st, 0) == pid && WIFSTOPPED(st);
		/* delivered here; the next refused mkdir lies beyond the handler */
		traced = traced && to_mkdir_exit(pid, SIGUSR1, &st);
		signals += traced;
	}
	if (traced)
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	while (!WIFEXITED(st) && !WIFSIGNALED(st))
		if (waitpid(pid, &st, 0) != pid)
			return 1;
	printf("traced %ld signals %ld\n", steps, signals);
	if (!traced || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "sigstep: traced %d, child status 0x%x\n", traced, st);
		return 1;
	}
	return 0;
}
