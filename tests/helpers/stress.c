// build-flags: -lpthread
/*
 * stress: a process tree that makes refused calls from many threads at once
 * while it forks, execs, vforks and takes signals whose handlers call open,
 * for tests/integration/test_stress.c. Run it under Landlock
 * (landlock-run --no-refer --rw OK --rw OK2) so that every refusal is real:
 *
 *   stress mix DENY OK OK2 WORKERS ITERS CHILDREN
 *       WORKERS threads loop ITERS times over the refused calls below plus a
 *       permitted write whose content they read back; meanwhile one thread
 *       each forks, fork+execs, vfork+execs (this program, "exec-child"
 *       mode) and vfork+execs /bin/sh with a refused redirect, CHILDREN
 *       times each; a POSIX timer (SIGALRM) and a thread sending SIGUSR1 to
 *       the workers with tgkill interrupt them, and the handler opens a
 *       refused path.
 *   stress kill DENY OK OK2 WORKERS ITERS CHILDREN
 *       WORKERS threads refuse as above while two threads fork CHILDREN
 *       children in all, each refusing from two threads (every other one
 *       until it is killed, the rest for a random number of rounds), and
 *       SIGKILL each after a random delay (some have finished by then and
 *       survive).
 *   stress execs DENY OK OK2 0 0 CHILDREN
 *       only fork+exec'd images, one at a time, the parent refusing nothing
 *   stress exec-child DENY OK OK2 FD IMAGE FLAGS   (internal) an exec'd image:
 *       three threads released at once, each refusing two rounds
 *
 * FLAGS (last argument, optional): 's' signals (timer, tgkill, and three
 * raise() in each exec'd image), 'w' each image refuses one round in its
 * main thread before it starts threads (the ring is attached from then on).
 *
 * The refused calls, one class each, told apart in the ring by the first
 * letter of the path's last component:
 *
 *   open   open(DENY/o-x, O_WRONLY|O_CREAT)       EACCES
 *   mkdir  mkdir(DENY/m-x)                        EACCES
 *   rename rename(DENY/r-src, DENY/r-dst)         EACCES  (r-src exists)
 *   unlink unlink(DENY/u-src)                     EACCES  (u-src exists)
 *   fopen  fopen(DENY/f-x, "w")                   EACCES
 *   xdev   rename(OK/x-src, OK2/x-dst)            EXDEV   (x-src exists; no REFER)
 *   sig    open(DENY/s-x, O_WRONLY|O_CREAT), in a signal handler   EACCES
 *   sh     sh -c 'echo x > DENY/h-x'              EACCES  (sh exits 2)
 *
 * Every process counts, per class, the calls it attempted (before the call)
 * and the ones that returned exactly the expected failure (after it), in a
 * shared memfd, so that counts survive exec and SIGKILL. Any other result
 * (a call that succeeded, a wrong errno, a permitted write that failed or
 * read back different bytes, errno changed by the probe in a handler) is a
 * mismatch: the first is printed on stderr and the exit status is 1.
 *
 * Output, once everything has been reaped (stdout):
 *   proc PID IMAGE STATE MISMATCHES writes=N open=A/D mkdir=A/D ... sh=A/D
 *       one line per process that ran; IMAGE main, fork, fork-exec,
 *       vfork-exec, sh, victim; STATE exited (status as expected), killed
 *       (SIGKILLed by the parent), failed
 *   signals sent=N handled=N
 *   {"processes":N,"killed":N,"refusals":N,"attempted":N,"signals_handled":N,
 *    "mismatches":N,"writes":N}
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum cls { C_OPEN, C_MKDIR, C_RENAME, C_UNLINK, C_FOPEN, C_XDEV, C_SIG, C_SH, NCLS };
static const char *const cls_name[NCLS] = {"open",  "mkdir", "rename", "unlink",
                                           "fopen", "xdev",  "sig",    "sh"};
/* the classes a worker loops over (sig and sh are reached otherwise) */
#define NLOOP (C_XDEV + 1)

enum { ST_RUNNING, ST_EXITED, ST_KILLED, ST_FAILED };
static const char *const st_name[] = {"running", "exited", "killed", "failed"};

#define MAXPROC 1024
struct slot {
	_Atomic int pid;
	char image[16];
	_Atomic int state;
	_Atomic long att[NCLS], done[NCLS];
	_Atomic long mismatch, writes;
};
struct shared {
	_Atomic int nslots;
	_Atomic int have_msg;
	_Atomic long sig_sent, sig_handled;
	char msg[512];
	struct slot s[MAXPROC];
};

static struct shared *sh;
static struct slot *me; /* this process's slot (per process: fork copies it) */
static char self[4096];
static const char *deny, *ok, *ok2;
static int shm_fd, sink_fd = -1;
static char p_open[4096], p_mkdir[4096], p_rsrc[4096], p_rdst[4096], p_usrc[4096], p_fopen[4096],
    p_xsrc[4096], p_xdst[4096], p_sig[4096], sh_cmd[4200];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	if (me)
		atomic_fetch_add(&me->mismatch, 1);
	if (atomic_exchange(&sh->have_msg, 1))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sh->msg, sizeof(sh->msg), fmt, ap);
	va_end(ap);
}

static struct slot *slot_new(int pid, const char *image)
{
	int k = atomic_fetch_add(&sh->nslots, 1);
	if (k >= MAXPROC) {
		fprintf(stderr, "stress: more than %d processes\n", MAXPROC);
		_exit(2);
	}
	struct slot *s = &sh->s[k];
	snprintf(s->image, sizeof(s->image), "%s", image);
	atomic_store(&s->pid, pid);
	return s;
}

/* ---- the refused calls ------------------------------------------------ */

static void refuse(enum cls c)
{
	atomic_fetch_add(&me->att[c], 1);
	int r, want = c == C_XDEV ? EXDEV : EACCES;
	errno = 0;
	switch (c) {
	case C_OPEN:
		r = open(p_open, O_WRONLY | O_CREAT, 0644);
		if (r >= 0)
			close(r);
		break;
	case C_MKDIR:
		r = mkdir(p_mkdir, 0755);
		break;
	case C_RENAME:
		r = rename(p_rsrc, p_rdst);
		break;
	case C_UNLINK:
		r = unlink(p_usrc);
		break;
	case C_FOPEN: {
		FILE *f = fopen(p_fopen, "w");
		r = f ? 0 : -1;
		if (f)
			fclose(f);
		break;
	}
	case C_XDEV:
		r = rename(p_xsrc, p_xdst);
		break;
	default:
		return;
	}
	int e = errno;
	if (r != -1 || e != want)
		fail("pid %d: %s returned %d errno %d (%s), expected -1 errno %d", (int)getpid(),
		     cls_name[c], r, e, strerror(e), want);
	else
		atomic_fetch_add(&me->done[c], 1);
}

/* A permitted write to this thread's own file, read back and compared. */
static void permitted_write(long round)
{
	char path[4200], want[128], got[128];
	snprintf(path, sizeof(path), "%s/w-%d-%ld", ok, (int)getpid(), (long)syscall(SYS_gettid));
	int n = snprintf(want, sizeof(want), "pid %d tid %ld round %ld\n", (int)getpid(),
	                 (long)syscall(SYS_gettid), round);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, want, (size_t)n) != n) {
		fail("pid %d: permitted write to %s failed: %s", (int)getpid(), path,
		     strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	fd = open(path, O_RDONLY);
	ssize_t m = fd >= 0 ? read(fd, got, sizeof(got)) : -1;
	if (fd >= 0)
		close(fd);
	if (m != n || memcmp(got, want, (size_t)n) != 0) {
		fail("pid %d: %s reads back %zd bytes, not what was written", (int)getpid(), path,
		     m);
		return;
	}
	atomic_fetch_add(&me->writes, 1);
}

static void one_round(long round)
{
	for (int c = 0; c < NLOOP; c++)
		refuse((enum cls)c);
	permitted_write(round);
}

/* ---- signals ---------------------------------------------------------- */

/* Async-signal-safe: open, atomics, errno. The probe runs inside this
 * handler, possibly on top of its own slow path in the interrupted code. */
static void on_signal(int sig)
{
	(void)sig;
	int saved = errno;
	if (!me)
		return;
	atomic_fetch_add(&me->att[C_SIG], 1);
	errno = 0;
	int fd = open(p_sig, O_WRONLY | O_CREAT, 0644);
	int e = errno;
	if (fd >= 0) {
		close(fd);
		atomic_fetch_add(&me->mismatch, 1);
	} else if (e != EACCES) {
		atomic_fetch_add(&me->mismatch, 1);
	} else {
		atomic_fetch_add(&me->done[C_SIG], 1);
	}
	atomic_fetch_add(&sh->sig_handled, 1);
	errno = saved;
}

static void install_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
}

/* ---- children --------------------------------------------------------- */

static void reap(pid_t pid, int want_status, struct slot *s, const char *what)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fail("waitpid(%s %d): %s", what, (int)pid, strerror(errno));
			return;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == want_status) {
		if (s)
			atomic_store(&s->state, ST_EXITED);
		return;
	}
	if (s)
		atomic_store(&s->state, ST_FAILED);
	if (WIFSIGNALED(st))
		fail("%s child %d killed by signal %d", what, (int)pid, WTERMSIG(st));
	else
		fail("%s child %d exited %d, expected %d", what, (int)pid, WEXITSTATUS(st),
		     want_status);
}

/* The slot an exec'd or forked child filled in itself. */
static struct slot *slot_of(pid_t pid)
{
	int n = atomic_load(&sh->nslots);
	for (int k = 0; k < n && k < MAXPROC; k++)
		if (atomic_load(&sh->s[k].pid) == pid)
			return &sh->s[k];
	return NULL;
}

static void reap_own(pid_t pid, const char *what)
{
	reap(pid, 0, NULL, what);
	struct slot *s = slot_of(pid);
	int st;
	if (!s) {
		fail("%s child %d never reported", what, (int)pid);
		return;
	}
	/* reap() failed it already if the status was wrong */
	st = atomic_load(&s->state);
	if (st == ST_RUNNING)
		atomic_store(&s->state, atomic_load(&s->mismatch) ? ST_FAILED : ST_EXITED);
}

static atomic_int stop_loops;
static int children;
static const char *flags = ""; /* 's': signals, 'w': warm-up refusal first */
static pthread_barrier_t start_line;

static void *forker(void *arg)
{
	(void)arg;
	for (int i = 0; i < children; i++) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			me = slot_new(getpid(), "fork");
			for (int r = 0; r < 2; r++)
				one_round(r);
			_exit(atomic_load(&me->mismatch) ? 1 : 0);
		}
		if (pid < 0) {
			fail("fork: %s", strerror(errno));
			return NULL;
		}
		reap_own(pid, "fork");
	}
	return NULL;
}

static void exec_self(const char *image)
{
	char fd[16];
	snprintf(fd, sizeof(fd), "%d", shm_fd);
	execl(self, self, "exec-child", deny, ok, ok2, fd, image, flags, (char *)NULL);
	_exit(127);
}

static void *fork_execer(void *arg)
{
	(void)arg;
	for (int i = 0; i < children; i++) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0)
			exec_self("fork-exec");
		if (pid < 0) {
			fail("fork: %s", strerror(errno));
			return NULL;
		}
		reap_own(pid, "fork-exec");
	}
	return NULL;
}

extern char **environ;

/* vfork, then execve in the child, which runs on this stack in our memory:
 * nothing else happens there but an optional dup2 onto stderr. */
static __attribute__((noinline)) pid_t vfork_exec(const char *path, char *const argv[], int err_fd)
{
	pid_t pid = vfork();
	if (pid == 0) {
		if (err_fd >= 0)
			dup2(err_fd, 2);
		execve(path, argv, environ);
		_exit(127);
	}
	return pid;
}

static void *vfork_execer(void *arg)
{
	(void)arg;
	char fd[16];
	snprintf(fd, sizeof(fd), "%d", shm_fd);
	for (int i = 0; i < children; i++) {
		char *const av[] = {self, "exec-child", (char *)deny,  (char *)ok, (char *)ok2,
		                    fd,   "vfork-exec", (char *)flags, NULL};
		pid_t pid = vfork_exec(self, av, -1);
		if (pid < 0) {
			fail("vfork: %s", strerror(errno));
			return NULL;
		}
		reap_own(pid, "vfork-exec");
	}
	return NULL;
}

/* sh -c 'echo x > DENY/h-x': the shell's redirect is refused, it exits 2. */
static void *sh_runner(void *arg)
{
	(void)arg;
	for (int i = 0; i < children; i++) {
		char *const av[] = {"sh", "-c", sh_cmd, NULL};
		pid_t pid = vfork_exec("/bin/sh", av, sink_fd); /* "cannot create" goes there */
		if (pid < 0) {
			fail("vfork: %s", strerror(errno));
			return NULL;
		}
		struct slot *s = slot_new(pid, "sh");
		atomic_store(&s->att[C_SH], 1);
		reap(pid, 2, s, "sh");
		if (atomic_load(&s->state) == ST_EXITED)
			atomic_store(&s->done[C_SH], 1);
	}
	return NULL;
}

/* ---- signal sources ---------------------------------------------------- */

#define MAXWORKERS 16
static _Atomic long worker_tid[MAXWORKERS];
static int nworkers;

static void *signaller(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 400 * 1000};
	for (unsigned k = 0; !atomic_load(&stop_loops); k++) {
		long tid = atomic_load(&worker_tid[k % (unsigned)nworkers]);
		if (tid > 0 && syscall(SYS_tgkill, getpid(), tid, SIGUSR1) == 0)
			atomic_fetch_add(&sh->sig_sent, 1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

struct work {
	long k, iters;
};

static void *worker_loop(void *arg)
{
	struct work *w = arg;
	atomic_store(&worker_tid[w->k], (long)syscall(SYS_gettid));
	for (long i = 0; i < w->iters; i++)
		one_round(i);
	atomic_store(&worker_tid[w->k], 0); /* no more tgkill to this thread */
	return NULL;
}

/* ---- kill mode --------------------------------------------------------- */

static atomic_int victims_left;

static unsigned rnd(unsigned *seed, unsigned n)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 8) % n;
}

static void *victim_thread(void *arg)
{
	long rounds = (long)arg;
	for (long i = 0; i < rounds; i++)
		one_round(i);
	return NULL;
}

static void *killer(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg ^ (unsigned)getpid() ^ (unsigned)time(NULL);
	int left;
	while ((left = atomic_fetch_sub(&victims_left, 1)) > 0) {
		/* Every other victim refuses until it is killed: a fast machine
		 * that finishes every short victim before its SIGKILL (Debian 13
		 * did) still kills children mid-record. */
		long rounds = left % 2 ? LONG_MAX : 1 + rnd(&seed, 10);
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			me = slot_new(getpid(), "victim");
			pthread_t t;
			int have = pthread_create(&t, NULL, victim_thread, (void *)rounds) == 0;
			victim_thread((void *)rounds);
			if (have)
				pthread_join(t, NULL);
			_exit(atomic_load(&me->mismatch) ? 1 : 0);
		}
		if (pid < 0) {
			fail("fork: %s", strerror(errno));
			return NULL;
		}
		struct timespec ts = {0, (long)rnd(&seed, 40000) * 1000};
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		int st;
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR) {
				fail("waitpid: %s", strerror(errno));
				return NULL;
			}
		struct slot *s = slot_of(pid);
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) {
			if (!s) /* killed before it had a slot: it refused nothing */
				s = slot_new(pid, "victim");
			atomic_store(&s->state, ST_KILLED);
		} else if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && s) {
			atomic_store(&s->state, ST_EXITED);
		} else {
			if (s)
				atomic_store(&s->state, ST_FAILED);
			fail("victim %d: status 0x%x", (int)pid, st);
		}
	}
	return NULL;
}

/* ---- modes ------------------------------------------------------------- */

static void report(void)
{
	long refusals = 0, attempted = 0, mism = 0, writes = 0;
	int n = atomic_load(&sh->nslots), killed = 0;
	for (int k = 0; k < n; k++) {
		struct slot *s = &sh->s[k];
		int st = atomic_load(&s->state);
		printf("proc %d %s %s %ld writes=%ld", atomic_load(&s->pid), s->image, st_name[st],
		       atomic_load(&s->mismatch), atomic_load(&s->writes));
		for (int c = 0; c < NCLS; c++) {
			printf(" %s=%ld/%ld", cls_name[c], atomic_load(&s->att[c]),
			       atomic_load(&s->done[c]));
			refusals += atomic_load(&s->done[c]);
			attempted += atomic_load(&s->att[c]);
		}
		printf("\n");
		killed += st == ST_KILLED;
		mism += atomic_load(&s->mismatch);
		writes += atomic_load(&s->writes);
		if (st == ST_FAILED && !atomic_load(&s->mismatch))
			mism++;
	}
	printf("signals sent=%ld handled=%ld\n", atomic_load(&sh->sig_sent),
	       atomic_load(&sh->sig_handled));
	printf("{\"processes\":%d,\"killed\":%d,\"refusals\":%ld,\"attempted\":%ld,"
	       "\"signals_handled\":%ld,\"mismatches\":%ld,\"writes\":%ld}\n",
	       n, killed, refusals, attempted, atomic_load(&sh->sig_handled), mism, writes);
	if (atomic_load(&sh->have_msg))
		fprintf(stderr, "stress: first mismatch: %s\n", sh->msg);
	fflush(NULL);
}

/* Only fork+exec'd images, one after the other: the parent refuses nothing. */
static int run_execs(void)
{
	me = slot_new(getpid(), "main");
	fork_execer(NULL);
	atomic_store(&me->state, ST_EXITED);
	report();
	return atomic_load(&sh->have_msg) ? 1 : 0;
}

static int run_tree(int kill_mode, int workers, long iters)
{
	me = slot_new(getpid(), "main");
	int signals = strchr(flags, 's') != NULL;
	if (signals)
		install_handlers();
	nworkers = workers;
	char sink[4200];
	snprintf(sink, sizeof(sink), "%s/sh-stderr", ok);
	sink_fd = open(sink, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (sink_fd < 0) {
		fprintf(stderr, "stress: cannot create %s: %s\n", sink, strerror(errno));
		return 2;
	}

	if (strchr(flags, 'w'))
		one_round(-1);

	/* SIGALRM every 2 ms to whichever thread the kernel picks */
	timer_t timer;
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGALRM;
	if (signals && timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
		fprintf(stderr, "stress: timer_create: %s\n", strerror(errno));
		return 2;
	}
	struct itimerspec its = {{0, 2000 * 1000}, {0, 2000 * 1000}};
	if (signals)
		timer_settime(timer, 0, &its, NULL);

	pthread_t wt[MAXWORKERS], aux[4], sig;
	struct work w[MAXWORKERS];
	int naux = 0;
	for (int k = 0; k < workers; k++) {
		w[k] = (struct work){k, iters};
		if (pthread_create(&wt[k], NULL, worker_loop, &w[k]) != 0)
			return 2;
	}
	int have_sig = signals && workers > 0 && pthread_create(&sig, NULL, signaller, NULL) == 0;
	if (kill_mode) {
		atomic_store(&victims_left, children);
		for (long k = 0; k < 2; k++)
			if (pthread_create(&aux[naux], NULL, killer, (void *)k) == 0)
				naux++;
	} else {
		void *(*fns[])(void *) = {forker, fork_execer, vfork_execer, sh_runner};
		for (int k = 0; k < 4; k++)
			if (pthread_create(&aux[naux], NULL, fns[k], NULL) == 0)
				naux++;
	}
	for (int k = 0; k < workers; k++)
		pthread_join(wt[k], NULL);
	for (int k = 0; k < naux; k++)
		pthread_join(aux[k], NULL);
	atomic_store(&stop_loops, 1);
	if (have_sig)
		pthread_join(sig, NULL);
	if (signals)
		timer_delete(timer);
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	atomic_store(&me->state, atomic_load(&me->mismatch) ? ST_FAILED : ST_EXITED);

	report();
	return atomic_load(&sh->have_msg) ? 1 : 0;
}

/* An exec'd image: three threads whose first calls are refusals, released
 * at once (the probe attaches to the ring on its first record; with 'w' the
 * main thread refuses once before), then with 's' a few signals raised at
 * itself. */
static void *exec_child_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start_line);
	for (int r = 0; r < 2; r++)
		one_round(r);
	return NULL;
}

static int exec_child(const char *image)
{
	me = slot_new(getpid(), image);
	if (strchr(flags, 'w'))
		one_round(-1);
	pthread_t t[2];
	pthread_barrier_init(&start_line, NULL, 3);
	for (int k = 0; k < 2; k++)
		if (pthread_create(&t[k], NULL, exec_child_thread, NULL) != 0)
			return 2;
	exec_child_thread(NULL);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	if (strchr(flags, 's')) {
		install_handlers();
		for (int k = 0; k < 3; k++)
			raise(SIGUSR1);
	}
	return atomic_load(&me->mismatch) ? 1 : 0;
}

static void paths(void)
{
	snprintf(p_open, sizeof(p_open), "%s/o-x", deny);
	snprintf(p_mkdir, sizeof(p_mkdir), "%s/m-x", deny);
	snprintf(p_rsrc, sizeof(p_rsrc), "%s/r-src", deny);
	snprintf(p_rdst, sizeof(p_rdst), "%s/r-dst", deny);
	snprintf(p_usrc, sizeof(p_usrc), "%s/u-src", deny);
	snprintf(p_fopen, sizeof(p_fopen), "%s/f-x", deny);
	snprintf(p_xsrc, sizeof(p_xsrc), "%s/x-src", ok);
	snprintf(p_xdst, sizeof(p_xdst), "%s/x-dst", ok2);
	snprintf(p_sig, sizeof(p_sig), "%s/s-x", deny);
	snprintf(sh_cmd, sizeof(sh_cmd), "echo x > '%s/h-x'", deny);
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || argc < 5) {
		fprintf(stderr, "usage: stress mix|kill DENY OK OK2 WORKERS ITERS CHILDREN\n"
		                "       stress exec-child DENY OK OK2 FD IMAGE\n");
		return 2;
	}
	self[n] = 0;
	deny = argv[2];
	ok = argv[3];
	ok2 = argv[4];
	paths();
	if (!strcmp(argv[1], "exec-child") && argc == 8) {
		flags = argv[7];
		shm_fd = atoi(argv[5]);
		sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
		if (sh == MAP_FAILED)
			return 2;
		return exec_child(argv[6]);
	}
	if ((argc != 8 && argc != 9) ||
	    (strcmp(argv[1], "mix") && strcmp(argv[1], "kill") && strcmp(argv[1], "execs"))) {
		fprintf(stderr, "stress: bad arguments\n");
		return 2;
	}
	int workers = atoi(argv[5]);
	long iters = atol(argv[6]);
	children = atoi(argv[7]);
	if (argc == 9)
		flags = argv[8];
	if (workers < 0 || workers > MAXWORKERS || iters < 0 || children < 0)
		return 2;
	/* shared counters: inherited by fork, passed to exec'd images by number */
	shm_fd = memfd_create("stress-counters", 0);
	if (shm_fd < 0 || ftruncate(shm_fd, sizeof(*sh)) != 0) {
		fprintf(stderr, "stress: memfd: %s\n", strerror(errno));
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
	if (sh == MAP_FAILED)
		return 2;
	if (!strcmp(argv[1], "execs"))
		return run_execs();
	return run_tree(!strcmp(argv[1], "kill"), workers, iters);
}
