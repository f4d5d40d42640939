/* SPDX-License-Identifier: MIT */
/* Running a command under the probe (run.h): the launch record, seccomp
 * and the supervisor, signal forwarding, the summary; the ring is
 * runring.c's. Shared by `denytrace run` and `denytrace codex`. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "denyrule.h"
#include "envfilter.h"
#include "fix.h"
#include "hostid.h"
#include "launchfile.h"
#include "names.h"
#include "recfmt.h"
#include "records.h"
#include "report.h"
#include "ringfile.h"
#include "roots.h"
#include "run.h"
#include "secrets.h"
#include "spawn.h"
#include "supervisor.h"

extern char **environ;

static volatile sig_atomic_t run_child_pid, run_last_signal, run_last_by_kill;

/* A signal sent to us with kill() is forwarded. One the terminal sent to the
 * whole foreground group (si_code SI_KERNEL) has reached the child already.
 * Once the command is gone, it stops the wait for what it left behind. */
static void run_forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	run_last_signal = sig;
	run_last_by_kill = si->si_code <= 0;
	if (run_child_pid > 0 && si->si_code <= 0)
		kill((pid_t)run_child_pid, sig);
}

void dt_run_record_begin(struct dt_buf *b, unsigned char *rec, uint32_t cap, int type)
{
	struct dt_rec_header *rh = (struct dt_rec_header *)rec;
	*b = (struct dt_buf){rec, sizeof(*rh), cap, 0};
	rh->type = (uint16_t)type;
	dt_put_times(b);
	dt_put_u64(b, DT_T_PID, (uint64_t)getpid());
	dt_put_u64(b, DT_T_TID, (uint64_t)getpid());
	dt_put_u64(b, DT_T_PPID, (uint64_t)getppid());
	dt_put_u64(b, DT_T_UID, (uint64_t)geteuid());
	dt_put_u64(b, DT_T_GID, (uint64_t)getegid());
	dt_put_str(b, DT_T_COMM, "denytrace");
}

/* The launching host: what a merged report names the ring's machine by. */
static void run_put_host(struct dt_buf *b)
{
	struct dt_host_id h;
	dt_host_id_get(&h);
	dt_put_str(b, DT_T_HOSTNAME, h.hostname);
	if (h.boot_id[0])
		dt_put_str(b, DT_T_BOOT_ID, h.boot_id);
	if (h.machine[0])
		dt_put_str(b, DT_T_MACHINE_HASH, h.machine);
}

static int run_write_launch(struct dt_ring *ring, char **cmd, const char *env_extra)
{
	size_t cap = DT_REC_MAX;
	unsigned char *rec = malloc(cap); /* filled as far as b.len, no need to clear 64 KiB */
	if (!rec)
		return -1;
	struct dt_rec_header *rh = (struct dt_rec_header *)rec;
	struct dt_buf b;
	dt_run_record_begin(&b, rec, (uint32_t)cap, DT_REC_LAUNCH);
	char argvbuf[8192];
	size_t an = 0;
	int cut = 0;
	for (char **a = cmd; *a; a++) {
		size_t n = strlen(*a) + 1;
		if (an + n > sizeof(argvbuf)) {
			cut = 1;
			break;
		}
		memcpy(argvbuf + an, *a, n);
		an += n;
	}
	cut |= dt_put_argv_redacted(&b, argvbuf, an ? an - 1 : 0);
	if (cut)
		dt_put_u64(&b, DT_T_ARGV_TRUNC, 1);
	char cwd[PATH_MAX];
	if (getcwd(cwd, sizeof(cwd)))
		dt_put_str(&b, DT_T_CWD, cwd);
	run_put_host(&b);
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (eq && dt_env_name_is_wanted(*e, (size_t)(eq - *e), env_extra))
			dt_put_env_redacted(&b, *e, strlen(*e));
	}
	rh->len = b.len;
	int rc = dt_ring_write(ring, rh);
	free(rec);
	return rc;
}

/* One line per process the probe could not enter (at most 10). */
static void run_blind_line(const struct dt_record *r, uint64_t nth)
{
	if (nth > 10)
		return;
	if (nth == 10) {
		fputs("  ... more: see `denytrace report`\n", stderr);
		return;
	}
	fprintf(stderr, "  pid %lld ", (long long)r->pid);
	dt_put_safe(stderr, r->exe ? r->exe : "?");
	fprintf(stderr, " %s\n", dt_blind_why(r, 1));
}

/* The first line: the refusals the report shows, by errno and process,
 * then what it hides, in its words (report.h: one counting rule). */
static void run_summary_counts(const struct dt_report *r)
{
	struct {
		int err;
		uint64_t n;
	} by_errno[16];
	int nerr = 0;
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct dt_report_group *gr = &r->groups[g];
		int k = 0;
		while (!gr->hidden && k < nerr && by_errno[k].err != gr->rep->err)
			k++;
		if (gr->hidden || (k == nerr && nerr == 16))
			continue;
		if (k == nerr)
			by_errno[nerr++] = (typeof(by_errno[0])){gr->rep->err, 0};
		by_errno[k].n += gr->count;
	}
	fprintf(stderr, "denytrace: %llu refusal%s", (unsigned long long)r->denials,
	        r->denials == 1 ? "" : "s");
	for (int i = 0; i < nerr; i++)
		fprintf(stderr, "%s%llu %s", i ? ", " : " (", (unsigned long long)by_errno[i].n,
		        dt_errno_name(by_errno[i].err));
	if (nerr)
		fputc(')', stderr);
	if (r->denials)
		fprintf(stderr, " in %llu process%s", (unsigned long long)r->refusing_procs,
		        r->refusing_procs == 1 ? "" : "es");
	if (r->reopens)
		fprintf(stderr, ", %llu read-only reopen%s after a refused write",
		        (unsigned long long)r->reopens, r->reopens == 1 ? "" : "s");
	if (r->writes)
		fprintf(stderr, ", %llu successful write%s recorded", (unsigned long long)r->writes,
		        r->writes == 1 ? "" : "s");
	fprintf(stderr, "; %llu record%s, %llu lost to overwriting, %llu dropped.\n",
	        (unsigned long long)r->stats.records, r->stats.records == 1 ? "" : "s",
	        (unsigned long long)r->lost, (unsigned long long)r->dropped);
	dt_report_hidden_lines(stderr, r, "denytrace: ", "`denytrace report --all`", ".");
	dt_report_unreadable_line(stderr, r, "denytrace: ", "\n");
	if (r->lost)
		fputs(
		    "denytrace: the ring wrapped; rerun with a larger --size to keep everything.\n",
		    stderr);
	uint64_t unseen = r->unseen;
	if (unseen)
		fprintf(
		    stderr,
		    "denytrace: %llu more refusal%s not recorded: made after a process installed "
		    "a seccomp filter of its own, under which the probe makes no system call.\n",
		    (unsigned long long)unseen, unseen == 1 ? "" : "s");
}

static void run_summary_coverage(const struct dt_report *r, int covered)
{
	if (covered)
		fprintf(stderr, "denytrace: exec coverage: %zu exec%s seen, %zu blind%s\n",
		        r->nexecs, r->nexecs == 1 ? "" : "s", r->nblind,
		        r->nblind ? " (the probe could not enter these, or not see all of them):"
		                  : " (the probe entered every one)");
	else
		fprintf(stderr,
		        "denytrace: exec coverage off: processes the probe could not enter are not "
		        "known (see --watch-exec)%s\n",
		        r->nblind ? "; the probe could not enter the command itself:" : ".");
	for (size_t k = 0; k < r->nblind; k++)
		run_blind_line(r->blind[k], k + 1);
	if (r->nsetid_lost)
		fprintf(stderr,
		        "denytrace: %zu set-id program%s ran without %s privilege (no_new_privs, "
		        "set by the supervisor); %s refusals are denytrace's doing (setid-lost):\n",
		        r->nsetid_lost, r->nsetid_lost == 1 ? "" : "s",
		        r->nsetid_lost == 1 ? "its" : "their",
		        r->nsetid_lost == 1 ? "its" : "their");
	for (size_t k = 0; k < r->nsetid_lost && k < 10; k++) {
		fprintf(stderr, "  pid %lld ", (long long)r->setid_lost[k]->pid);
		dt_put_safe(stderr, r->setid_lost[k]->exe ? r->setid_lost[k]->exe : "?");
		fprintf(stderr, " (would have run as uid %lld)\n",
		        (long long)r->setid_lost[k]->setid_euid);
	}
}

/* The summary on stderr, read back from the ring with the report's rules. */
static void run_summarise(const struct dt_run_ring *rr, int covered, const struct dt_deny_set *deny,
                          uint64_t seed, int status)
{
	struct dt_report r;
	char err[1024];
	const char *rings[1] = {rr->path};
	struct dt_report_opts ro = {0};
	/* from this run's own mapping: the path may name another ring by now */
	if (dt_report_load_mapped(&r, &rr->ring, rings, err, sizeof(err)) != 0 ||
	    dt_report_build(&r, &ro, err, sizeof(err)) != 0) {
		dt_fail(0, "cannot read the ring back for a summary: %s", err);
		dt_report_free(&r);
		return;
	}
	run_summary_counts(&r);
	run_summary_coverage(&r, covered);
	if (deny->n) {
		int prob = 0;
		for (size_t k = 0; k < deny->n; k++)
			prob |= deny->v[k].when == DT_DENY_PROB;
		uint64_t injected = r.by_cause[DT_CAUSE_INJECTED];
		fprintf(stderr, "denytrace: --deny injected %llu refusal%s",
		        (unsigned long long)injected, injected == 1 ? "" : "s");
		if (prob)
			fprintf(stderr, " (--seed %llu repeats them)", (unsigned long long)seed);
		fputs(".\n", stderr);
	}
	/* the ring shows Codex: its launch, an exec or a process of it */
	int codex = 0;
	for (size_t i = 0; i < r.n; i++)
		codex |= r.recs[i].argv && dt_argv_is_codex(r.recs[i].argv, r.recs[i].argc);
	/* Nothing was seen, so no cause is known: name the likely ones; the
	 * closed descriptor only where Codex, which closes them, ran. */
	if (!r.denials && status != 0)
		fputs("denytrace: the command failed and no refusal was recorded. Likely causes:\n"
		      "denytrace:  - it failed for a reason other than a refused file operation;\n"
		      "denytrace:  - a refusal the probe cannot see: in a static or set-id "
		      "program, a\n"
		      "denytrace:    raw system call, or a call glibc makes internally "
		      "(--watch-exec\n"
		      "denytrace:    names the programs the probe could not enter);\n"
		      "denytrace:  - the probe was hidden by the sandbox: a process that cannot "
		      "see its file\n"
		      "denytrace:    (bwrap --tmpfs over the directory holding it) runs without "
		      "it; install\n"
		      "denytrace:    it where the sandbox shows it (DENYTRACE_PROBE, make install "
		      "PROBEDIR=).\n",
		      stderr);
	if (!r.denials && status != 0 && codex)
		fputs("denytrace:  - the probe could not reach the ring: Codex closes inherited\n"
		      "denytrace:    descriptors, so the ring's path must be writable inside its\n"
		      "denytrace:    sandbox (-o WORKSPACE/denytrace.ring).\n",
		      stderr);
	fputs("denytrace: ring ", stderr);
	dt_put_safe(stderr, rr->path);
	fputs("; see `denytrace report ", stderr);
	dt_shell_word(stderr, rr->path);
	fputs("`.\n", stderr);
	dt_report_free(&r);
}

void dt_run_opts_init(struct dt_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->out = DT_DEFAULT_RING;
	o->size = 0; /* DT_RING_DEFAULT_SIZE, or DT_RING_LARGE_SIZE with --all */
	o->backtrace = 1;
	o->watch_exec = -1;
}

void dt_run_opts_free(struct dt_run_opts *o)
{
	dt_deny_set_free(&o->deny);
}

int dt_run_opt_deny(void *args, const char *val)
{
	struct dt_run_opts *o = args;
	struct dt_deny_rule rule;
	char derr[1024];
	if (dt_deny_parse(val, &rule, derr, sizeof(derr)) < 0)
		return dt_fail_lines(DT_EXIT_INTERNAL, "%s: %s", o->cmd, derr);
	dt_deny_add(&o->deny, &rule);
	return 0;
}

int dt_run_opt_seed(void *args, const char *val)
{
	struct dt_run_opts *o = args;
	if (dt_parse_u64(val, &o->seed) < 0)
		return dt_fail(DT_EXIT_INTERNAL,
		               "%s: --seed takes a whole number from 0 to 18446744073709551615",
		               o->cmd);
	o->have_seed = 1;
	return 0;
}

int dt_run_opt_size(void *args, const char *val)
{
	struct dt_run_opts *o = args;
	if (dt_parse_size(val, &o->size) < 0)
		return dt_fail(DT_EXIT_INTERNAL,
		               "%s: --size takes a byte count such as 8M or 65536", o->cmd);
	if (o->size < DT_RING_MIN_SIZE || o->size > DT_RING_MAX_SIZE)
		return dt_fail(DT_EXIT_INTERNAL, "%s: --size must be between %u KiB and %llu MiB",
		               o->cmd, DT_RING_MIN_SIZE / 1024,
		               (unsigned long long)DT_RING_MAX_SIZE >> 20);
	return 0;
}

int dt_run_opt_errnos(void *args, const char *val)
{
	struct dt_run_opts *o = args;
	char *copy = strdup(val);
	for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
		if (dt_errno_parse(tok) < 0) {
			dt_fail(DT_EXIT_INTERNAL, "%s: --errnos: '%s' is not an errno name", o->cmd,
			        tok);
			free(copy);
			return DT_EXIT_INTERNAL;
		}
	free(copy);
	o->errnos = val;
	return 0;
}

int dt_run_check_command(const char *cmd, const char *cmd0)
{
	char found[PATH_MAX];
	struct stat st;
	if (!strchr(cmd0, '/') && dt_which(cmd0, found, sizeof(found)) < 0)
		return dt_fail(
		    DT_EXIT_NOTFOUND,
		    "%s: cannot run '%s': not found on PATH; nothing was run and no ring "
		    "was created",
		    cmd, cmd0);
	if (strchr(cmd0, '/') &&
	    (stat(cmd0, &st) < 0 || S_ISDIR(st.st_mode) || access(cmd0, X_OK) < 0)) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
		return dt_fail(e == ENOENT ? DT_EXIT_NOTFOUND : DT_EXIT_NOEXEC,
		               "%s: cannot run '%s': %s; nothing was run and no ring was created",
		               cmd, cmd0, strerror(e));
	}
	return 0;
}

size_t dt_run_probe_env(const struct dt_run_opts *o, const struct dt_run_ring *rr,
                        const char **names, const char **values, size_t cap)
{
	size_t n = 0;
#define DT_PROBE_ENV(name, value)                                                                  \
	do {                                                                                       \
		if (n < cap) {                                                                     \
			names[n] = (name);                                                         \
			values[n] = (value);                                                       \
			n++;                                                                       \
		}                                                                                  \
	} while (0)
	DT_PROBE_ENV("DENYTRACE_RING", rr->abs);
	DT_PROBE_ENV("DENYTRACE_RING_ID", rr->id);
	if (o->all)
		DT_PROBE_ENV("DENYTRACE_ALL", "1");
	else if (o->refusals_only)
		DT_PROBE_ENV("DENYTRACE_REFUSALS_ONLY", "1");
	if (o->errnos)
		DT_PROBE_ENV("DENYTRACE_ERRNOS", o->errnos);
	if (!o->backtrace)
		DT_PROBE_ENV("DENYTRACE_BACKTRACE", "0");
	if (o->env_extra)
		DT_PROBE_ENV("DENYTRACE_ENV", o->env_extra);
	/* the supervisor sees the execs; the probe's entry record says which
	 * of them it entered */
	if (o->watch_exec > 0)
		DT_PROBE_ENV("DENYTRACE_ENTRY", "1");
#undef DT_PROBE_ENV
	return n;
}

/* The environment the command starts with: the probe first in LD_PRELOAD
 * (so that it sees calls before other preloads), the ring's descriptor
 * and the DENYTRACE_* variables. */
static void run_probe_environment(const struct dt_run_opts *o, const struct dt_run_ring *rr)
{
	int fd = rr->fd;
	char preload[PATH_MAX * 2];
	const char *old = getenv("LD_PRELOAD");
	snprintf(preload, sizeof(preload), "%s%s%s", rr->probe, old && *old ? ":" : "",
	         old ? old : "");
	char num[64];
	setenv("LD_PRELOAD", preload, 1);
	snprintf(num, sizeof(num), "%d", fd);
	if (fd >= 0)
		setenv("DENYTRACE_FD", num, 1);
	else
		unsetenv("DENYTRACE_FD"); /* a low limit: found by its path */
	/* the same variables as those carried where no descriptor goes */
	unsetenv("DENYTRACE_ALL");
	unsetenv("DENYTRACE_REFUSALS_ONLY");
	unsetenv("DENYTRACE_ENTRY");
	const char *names[8], *values[8];
	size_t nenv = dt_run_probe_env(o, rr, names, values, 8);
	for (size_t k = 0; k < nenv; k++)
		setenv(names[k], values[k], 1);
}

/* The seccomp filter for exec coverage and --deny, and the socket pair its
 * listener travels over. With --deny a filter is a must: returns an exit
 * status; else 0 (*filter NULL when coverage is off, said on stderr). */
static int run_seccomp_filter(const struct dt_deny_set *deny, int privileged,
                              struct dt_seccomp_filter **filter, int sv[2], char *serr,
                              size_t serrcap)
{
	*filter = dt_seccomp_build(1, dt_deny_ops(deny), !privileged, serr, serrcap);
	if (*filter && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(serr, serrcap, "socketpair: %s", strerror(errno));
		dt_seccomp_free(*filter);
		*filter = NULL;
	}
	if (!*filter && deny->n)
		return dt_fail(DT_EXIT_INTERNAL, "run: --deny needs seccomp user notification: %s",
		               serr);
	if (!*filter)
		fprintf(stderr, "denytrace: exec coverage off: %s\n", serr);
	return 0;
}

/* A vfork child shares our memory until it execs: a handler of ours run in
 * it would act on the parent's state. Each signal that has one goes back
 * to its default in the child (its table is its own), as posix_spawn does;
 * an ignored one stays ignored, as it would across exec. */
static void run_child_default_handlers(void)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) != 0 ||
		    sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
			continue;
		sa.sa_handler = SIG_DFL;
		sa.sa_flags = 0;
		sigemptyset(&sa.sa_mask);
		sigaction(sig, &sa, NULL);
	}
}

/* In the child: install the filter (its listener goes to the parent and
 * never into the command), exec, and report an exec failure on pipefd.
 * Without a filter the child is a vfork child (run_fork): it only execs. */
__attribute__((noreturn)) static void run_child(char **cmd, const int pipefd[2],
                                                struct dt_seccomp_filter *filter, const int sv[2],
                                                const sigset_t *oldmask,
                                                const struct dt_deny_set *deny)
{
	if (!filter)
		run_child_default_handlers();
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	close(pipefd[0]);
	if (filter) {
		close(sv[0]);
		int lfd = dt_seccomp_install(filter);
		dt_seccomp_send(sv[1], lfd);
		if (lfd >= 0)
			close(lfd);
		close(sv[1]);
		if (lfd < 0 && deny->n)
			_exit(DT_EXIT_INTERNAL);
	}
	execvp(cmd[0], cmd);
	int e = errno;
	if (write(pipefd[1], &e, sizeof(e)) < 0)
		_exit(DT_EXIT_INTERNAL);
	_exit(e == ENOENT ? DT_EXIT_NOTFOUND : DT_EXIT_NOEXEC);
}

/* Forks the command (run_child) with the signals denytrace forwards
 * blocked until the handler that forwards them is in place. Without a
 * seccomp filter to install the child only execs, and vfork spares copying
 * this process (a measurable part of `denytrace run`); every signal is
 * then blocked until the child has put our handlers aside. Returns the
 * child's pid, or -1 with errno set. */
static pid_t run_fork(char **cmd, const int pipefd[2], struct dt_seccomp_filter *filter,
                      const int sv[2], const struct dt_deny_set *deny)
{
	static const int forwarded[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
	                                SIGUSR1, SIGUSR2, SIGWINCH};
	struct sigaction sa = {0};
	sa.sa_sigaction = run_forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigset_t block, oldmask;
	sigemptyset(&block);
	for (size_t k = 0; k < sizeof(forwarded) / sizeof(forwarded[0]); k++)
		sigaddset(&block, forwarded[k]);
	if (!filter)
		sigfillset(&block);
	sigprocmask(SIG_BLOCK, &block, &oldmask);
	pid_t pid = filter ? fork() : vfork();
	if (pid == 0)
		run_child(cmd, pipefd, filter, sv, &oldmask, deny);
	if (pid < 0) {
		int e = errno;
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		errno = e;
		return -1;
	}
	run_child_pid = pid;
	for (size_t k = 0; k < sizeof(forwarded) / sizeof(forwarded[0]); k++)
		sigaction(forwarded[k], &sa, NULL);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	return pid;
}

/* In the parent: the listener from the child, and the supervisor that
 * answers it. NULL (with serr set) when there is none. */
static struct dt_supervisor *run_start_supervisor(struct dt_seccomp_filter *filter, const int sv[2],
                                                  struct dt_ring *ring, struct dt_deny_set *deny,
                                                  char *serr, size_t serrcap)
{
	struct dt_supervisor *sup = NULL;
	close(sv[1]);
	int lfd = dt_seccomp_recv(sv[0]);
	close(sv[0]);
	dt_seccomp_free(filter);
	if (lfd >= 0)
		sup = dt_supervisor_start(lfd, ring, deny, serr, serrcap);
	else
		snprintf(serr, serrcap, "seccomp user notification is not available here (%s%s)",
		         strerror(-lfd),
		         lfd == -EBUSY ? ": already under a seccomp listener, e.g. denytrace "
		                         "inside denytrace"
		                       : "");
	return sup;
}

/* A signal that ends the wait for what the command left behind. */
static int run_stops_waiting(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
}

/* The filter stays with processes the command left behind; they are
 * answered until they are gone, or until a signal says to stop waiting:
 * then they go on unsupervised (the supervisor's heir lets their calls
 * through), never failing with ENOSYS. */
static void run_wait_supervisor(struct dt_supervisor *sup)
{
	struct dt_supervisor_stats sst = {0};
	run_last_signal = 0; /* one sent while the command ran was for it */
	for (int k = 0; dt_supervisor_busy(sup) && !run_stops_waiting(run_last_signal); k++) {
		if (k == 20)
			fputs("denytrace: waiting for the background processes the command left "
			      "(their calls are still supervised; Ctrl-C stops waiting and leaves "
			      "them running)...\n",
			      stderr);
		usleep(50 * 1000);
	}
	if (!dt_supervisor_busy(sup)) {
		dt_supervisor_wait(sup, &sst);
		return;
	}
	/* as while the command ran: what the terminal sent reached them */
	dt_supervisor_abandon(sup, run_last_by_kill ? run_last_signal : 0, &sst);
	fprintf(stderr,
	        "denytrace: stopped waiting (%s%s): the background processes go on "
	        "unsupervised: their calls are no longer recorded or refused.\n",
	        strsignal(run_last_signal), run_last_by_kill ? ", passed on to them" : "");
}

/* Without exec coverage nothing sees the execs of the tree, but run sees
 * its own: a set-id command runs without the probe, and the summary and
 * the report must say so rather than show "0 refusals" alone. */
static void run_note_setid_command(struct dt_ring *ring, char **cmd, pid_t pid)
{
	char path[PATH_MAX];
	if (strchr(cmd[0], '/'))
		snprintf(path, sizeof(path), "%s", cmd[0]);
	else if (dt_which(cmd[0], path, sizeof(path)) < 0)
		return;
	if (!dt_exec_setid(getpid(), path))
		return;
	char abs[PATH_MAX];
	if (!realpath(path, abs))
		snprintf(abs, sizeof(abs), "%s", path);
	unsigned char *rec = calloc(1, DT_REC_MAX);
	if (!rec)
		return;
	/* the exec is the child's: its pid, not run's */
	struct dt_buf b = {rec, sizeof(struct dt_rec_header), DT_REC_MAX, 0};
	((struct dt_rec_header *)rec)->type = DT_REC_EXEC;
	dt_put_times(&b);
	dt_put_u64(&b, DT_T_PID, (uint64_t)pid);
	dt_put_u64(&b, DT_T_TID, (uint64_t)pid);
	dt_put_u64(&b, DT_T_PPID, (uint64_t)getpid());
	dt_put_str(&b, DT_T_OP, "execve");
	dt_put_str(&b, DT_T_PATH, cmd[0]);
	dt_put_str(&b, DT_T_ABSPATH, abs);
	dt_put_str(&b, DT_T_EXE, abs);
	dt_put_u64(&b, DT_T_EXEC_PROBE, 0);
	dt_put_str(&b, DT_T_EXEC_BLIND, "setid");
	((struct dt_rec_header *)rec)->len = b.len;
	dt_ring_write(ring, rec);
	free(rec);
}

/* The launch file fix --verify trusts, written before the command can
 * run: the record in the ring is only what the command leaves there.
 * Without one (no HOME, a directory that is not private) fix --verify
 * says so and asks for the command; run itself stays silent, as the
 * command's output must not change. */
static void run_write_launch_file(const struct dt_run_opts *o, const struct dt_run_ring *rr,
                                  char **cmd)
{
	static const uint8_t none[sizeof(rr->run_id)];
	char cwd[PATH_MAX], why[PATH_MAX + 128];
	if (!memcmp(rr->run_id, none, sizeof(none)) || !getcwd(cwd, sizeof(cwd)))
		return;
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 1, sizeof(*env));
	if (!env)
		return;
	/* the entries the launch record keeps, for fix to compare with it */
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (eq && dt_env_name_is_wanted(*e, (size_t)(eq - *e), o->env_extra))
			env[k++] = *e;
	}
	struct dt_launch_info li = {.run_id = rr->run_id,
	                            .dev = rr->dev,
	                            .ino = rr->ino,
	                            .via = o->cmd,
	                            .cwd = cwd,
	                            .argv = cmd,
	                            .env = env,
	                            .ring = rr->abs,
	                            .configs = rr->configs,
	                            .nconfigs = rr->nconfigs};
	/* what the command's sandbox can write, read from the command line
	 * the user gave: the ring's mount tables are the command's to hide */
	const char *writable[65];
	int nw = dt_launch_writable((const char *const *)cmd, cwd, writable, 64);
	if (nw >= 0) {
		writable[nw] = NULL;
		li.writable = writable;
	}
	dt_launchfile_write(&li, why, sizeof(why));
	free(env);
}

int dt_run_launch(struct dt_run_opts *o, struct dt_run_ring *rr, char **cmd)
{
	struct dt_deny_set *deny = &o->deny;
	int watch_exec = o->watch_exec;
	uint64_t seed = o->seed;
	run_write_launch(&rr->ring, cmd, o->env_extra);
	run_write_launch_file(o, rr, cmd);

	/* seccomp: exec coverage, and --deny (which needs it) */
	if (!o->have_seed && getrandom(&seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	deny->seed = seed;
	/* Off by default: the probe must not change the traced tree, and a
	 * seccomp listener does (see --help). */
	if (deny->n)
		watch_exec = 1;
	else if (watch_exec < 0)
		watch_exec = 0;
	o->watch_exec = watch_exec;
	run_probe_environment(o, rr);
	struct dt_seccomp_filter *filter = NULL;
	int sv[2] = {-1, -1};
	char serr[512] = "";
	if (watch_exec) {
		/* (reading /proc/self/status only when a filter is built) */
		int privileged = dt_seccomp_privileged();
		int rc = run_seccomp_filter(deny, privileged, &filter, sv, serr, sizeof(serr));
		if (rc)
			return rc;
		if (filter && !privileged && !o->quiet)
			fputs("denytrace: --watch-exec/--deny set no_new_privs: set-user-ID and "
			      "set-group-ID programs run without their privilege under them.\n",
			      stderr);
	}

	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return dt_fail(DT_EXIT_INTERNAL, "pipe: %s", strerror(errno));
	pid_t pid = run_fork(cmd, pipefd, filter, sv, deny);
	if (pid < 0)
		return dt_fail(DT_EXIT_INTERNAL, "fork: %s", strerror(errno));
	close(pipefd[1]);
	/* fd stays open here until the run ends: its shared lock says the
	 * ring is in use even when the command closes its copy (Codex does);
	 * it sits out of the command's way (dt_ring_fd_out_of_the_way), so it
	 * costs the low descriptors nothing */
	struct dt_supervisor *sup = NULL;
	if (filter) {
		/* before waiting for the exec: the exec itself is notified */
		sup = run_start_supervisor(filter, sv, &rr->ring, deny, serr, sizeof(serr));
		if (!sup && deny->n) {
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			return dt_fail(DT_EXIT_INTERNAL, "run: --deny cannot work: %s", serr);
		}
		if (!sup)
			fprintf(stderr,
			        "denytrace: exec coverage off: %s; carrying on without it.\n",
			        serr);
	}
	if (!sup)
		run_note_setid_command(&rr->ring, cmd, pid);
	int exec_err = 0;
	ssize_t got;
	do
		got = read(pipefd[0], &exec_err, sizeof(exec_err));
	while (got < 0 && errno == EINTR);
	close(pipefd[0]);
	if (rr->old_ring >= 0) {
		close(rr->old_ring); /* the command runs meanwhile */
		rr->old_ring = -1;
	}

	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	run_child_pid = 0;
	int covered = sup != NULL;
	if (sup)
		run_wait_supervisor(sup);
	if (got == (ssize_t)sizeof(exec_err)) {
		dt_fail(exec_err == ENOENT ? DT_EXIT_NOTFOUND : DT_EXIT_NOEXEC,
		        "cannot run '%s': %s", cmd[0], strerror(exec_err));
		return exec_err == ENOENT ? DT_EXIT_NOTFOUND : DT_EXIT_NOEXEC;
	}
	if (!o->quiet && !dt_ring_intact(&rr->ring))
		dt_fail(0,
		        "the ring %s was truncated while the command ran: no summary; `denytrace "
		        "show %s` reads what is left.",
		        rr->path, rr->path);
	else if (!o->quiet)
		run_summarise(rr, covered, deny, seed,
		              WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	munmap(rr->map, rr->map_len);
	rr->map = NULL;
	if (rr->fd >= 0)
		close(rr->fd); /* kept so far: the ring was in use until now */
	rr->fd = -1;
	dt_launchfile_prune(); /* after the command: never in its start-up */
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
