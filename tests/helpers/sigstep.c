/*
 * sigstep: a signal on every instruction of a refusal's way through the
 * probe, for tests/integration/test_stress.c. A race between a signal
 * handler and the probe may need the signal to land on one instruction
 * among thousands; under load that happens now and then, here it happens
 * every time.
 *
 *   sigstep DENY STEPS
 *
 * A child makes refused mkdir(DENY/m-x) calls, one after the other (STEPS
 * + 1 of them, more than it needs). Its parent traces it: from the moment
 * the first call leaves the kernel it delivers SIGUSR1, whose handler
 * makes a refused open(DENY/s-x), lets the handler run to its end, steps
 * the child one instruction, and delivers the next, STEPS times. So a
 * signal lands on each instruction of the probe's work after a refusal
 * (where the probe holds signals back, the signal waits for the hold to
 * end), then of the calls that follow.
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

/* Runs the child until a system call numbered nr or nr2 leaves the
 * kernel (with refused: failed with EACCES). Returns 1 stopped there, 0
 * when it exited or tracing failed. */
static int to_exit_of(pid_t pid, int sig, int *st, long nr, long nr2, int refused)
{
	long entered = -1;
	for (;;) {
		if (!next_syscall_stop(pid, sig, st))
			return 0;
		sig = 0;
		struct __ptrace_syscall_info info;
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info) <= 0)
			return 0;
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY)
			entered = (long)info.entry.nr;
		else if (info.op == PTRACE_SYSCALL_INFO_EXIT && (entered == nr || entered == nr2) &&
		         (!refused || info.exit.rval == -EACCES))
			return 1;
	}
}

/* One instruction. A signal the child had held back may come due on it
 * instead: passed on, and its handler run to its end, then the step. */
static int step(pid_t pid, int *st)
{
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) != 0 || waitpid(pid, st, 0) != pid ||
		    !WIFSTOPPED(*st))
			return 0;
		if (WSTOPSIG(*st) == SIGTRAP)
			return 1;
		if (!to_exit_of(pid, WSTOPSIG(*st), st, SYS_rt_sigreturn, SYS_rt_sigreturn, 0))
			return 0;
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
	/* From the first refusal's return on: a signal, its handler run to
	 * its end (back on the instruction it interrupted), one step, the
	 * next signal. Where the probe holds signals back, the signal waits
	 * and its handler returns at the end of the hold. */
	int traced = to_exit_of(pid, 0, &st, MKDIR_NR, SYS_mkdirat, 1);
	for (long k = 0; traced && k < steps; k++) {
		traced = to_exit_of(pid, SIGUSR1, &st, SYS_rt_sigreturn, SYS_rt_sigreturn, 0);
		signals += traced;
		traced = traced && step(pid, &st);
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
