/* SPDX-License-Identifier: MIT */
/* The soak runner (soak.h). Each run is a `denytrace run` of its own, with
 * its own ring, under a keeper process of its own: a child subreaper, so
 * that whatever the run leaves behind (setsid daemons, timeout(1)'s own
 * process group) is reparented to the keeper, which kills it when the run
 * ends, times out or is interrupted. */
#include "soak.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "launchfile.h"
#include "privdir.h"
#include "report.h"
#include "soakfacts.h"

volatile sig_atomic_t dt_soak_stop;

uint64_t dt_soak_seed(const struct dt_soak_opts *o, int index)
{
	return o->seed + (uint64_t)index - 1;
}

unsigned dt_soak_planned(const struct dt_soak_opts *o)
{
	if (!o->nshards)
		return o->runs;
	return o->runs / o->nshards + (o->shard - 1 < o->runs % o->nshards);
}

int dt_soak_index(const struct dt_soak_opts *o, unsigned nth)
{
	if (!o->nshards)
		return (int)nth + 1;
	return (int)(nth * o->nshards + o->shard);
}

int dt_soak_add_this_host(struct dt_soak *s, const struct dt_soak_opts *o)
{
	s->hosts = calloc(1, sizeof(*s->hosts));
	if (!s->hosts)
		return -1;
	dt_host_id_get(&s->hosts[0].id);
	s->hosts[0].shard = o->shard;
	s->hosts[0].nshards = o->nshards;
	s->nhosts = 1;
	return 0;
}

double dt_soak_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 95% Wilson score interval for k failures out of n. */
void dt_soak_wilson(unsigned k, unsigned n, double *lo, double *hi)
{
	if (!n) {
		*lo = 0;
		*hi = 1;
		return;
	}
	const double z = 1.959963984540054;
	double p = (double)k / n, z2n = z * z / n;
	double centre = (p + z2n / 2) / (1 + z2n);
	double half = z * sqrt(p * (1 - p) / n + z2n / (4.0 * n)) / (1 + z2n);
	*lo = centre - half < 0 ? 0 : centre - half;
	*hi = centre + half > 1 ? 1 : centre + half;
}

/* The index of finding f's problem in s->problems (added if new), or
 * SIZE_MAX when out of memory. */
static size_t soak_problem_for(struct dt_soak *s, const struct dt_finding *f)
{
	char key[2 * PATH_MAX + 64];
	snprintf(key, sizeof(key), "%d\n%s\n%d\n%s", (int)f->cause, f->root ? f->root->path : "",
	         f->granted, f->subject);
	for (size_t i = 0; i < s->nproblems; i++)
		if (!strcmp(s->problems[i].key, key))
			return i;
	struct dt_soak_problem *np = realloc(s->problems, (s->nproblems + 1) * sizeof(*np));
	if (!np)
		return SIZE_MAX;
	s->problems = np;
	s->problems[s->nproblems] = (struct dt_soak_problem){
	    strdup(key), strdup(f->title), strdup(f->advice), (int)f->cause, 0, 0};
	return s->nproblems++;
}

/* Counts each problem of the run once; gprob[g] becomes group g's problem. */
static void soak_account_problems(struct dt_soak *s, const struct dt_report *rep, int failed,
                                  size_t *gprob)
{
	for (size_t g = 0; g < rep->ngroups; g++)
		gprob[g] = SIZE_MAX;
	for (size_t i = 0; i < rep->findings.n; i++) {
		const struct dt_finding *f = &rep->findings.v[i];
		size_t p = soak_problem_for(s, f);
		for (size_t k = 0; k < f->ngroups; k++)
			gprob[f->groups[k]] = p;
		/* one run's findings never share a key: findings.c groups by it */
		if (p != SIZE_MAX && failed)
			s->problems[p].nfail++;
		else if (p != SIZE_MAX)
			s->problems[p].npass++;
	}
}

/* "save_task at worker.py:3" for a group with a Python line, else "". */
static void soak_py_line(const struct dt_report_group *gr, char *out, size_t cap)
{
	out[0] = 0;
	if (gr->py_site && gr->py_site->line)
		snprintf(out, cap, "%s at %s:%u", gr->py_site->func,
		         dt_py_basename(gr->py_site->file), gr->py_site->line);
	else if (gr->py_site)
		snprintf(out, cap, "%s at %s", gr->py_site->func,
		         dt_py_basename(gr->py_site->file));
}

/* The index of group gr's refusal in s->keys (added if new), or SIZE_MAX.
 * The same call from two Python lines is two refusals, as in a report. */
static size_t soak_key_for(struct dt_soak *s, const struct dt_report_group *gr, size_t problem)
{
	const char *op = gr->rep->op ? gr->rep->op : "?";
	char py[1200];
	soak_py_line(gr, py, sizeof(py));
	for (size_t ki = 0; ki < s->nkeys; ki++)
		if (!strcmp(s->keys[ki].path, gr->path) && !strcmp(s->keys[ki].op, op) &&
		    s->keys[ki].err == gr->rep->err &&
		    !strcmp(s->keys[ki].py_line ? s->keys[ki].py_line : "", py))
			return ki;
	struct dt_soak_key *nk = realloc(s->keys, (s->nkeys + 1) * sizeof(*nk));
	if (!nk)
		return SIZE_MAX;
	s->keys = nk;
	struct dt_soak_key *k = &s->keys[s->nkeys];
	memset(k, 0, sizeof(*k));
	k->path = strdup(gr->path);
	k->op = strdup(op);
	k->py_line = py[0] ? strdup(py) : NULL;
	k->err = gr->rep->err;
	k->problem = problem;
	return s->nkeys++;
}

/* Reads a finished run's ring; adds its distinct refusals and problems to
 * the tables, and the run's refusals to res. */
static void soak_account(struct dt_soak *s, const char *ring, int failed,
                         struct dt_soak_result *res)
{
	struct dt_report rep;
	char err[512];
	const char *rings[1] = {ring};
	struct dt_report_opts o = {0};
	if (dt_report_load(&rep, rings, 1, err, sizeof(err)) != 0 ||
	    dt_report_build(&rep, &o, err, sizeof(err)) != 0) {
		dt_report_free(&rep);
		return;
	}
	s->refusals += rep.denials;
	dt_soak_tally_facts(s, &rep, failed);
	size_t *gprob = calloc(rep.ngroups + 1, sizeof(*gprob));
	/* each distinct (path, op, errno) counts once per run */
	size_t *counted = calloc(rep.ngroups + 1, sizeof(*counted)), nc = 0;
	if (gprob)
		soak_account_problems(s, &rep, failed, gprob);
	for (size_t g = 0; gprob && counted && g < rep.ngroups; g++) {
		const struct dt_report_group *gr = &rep.groups[g];
		if (gr->hidden)
			continue;
		size_t ki = soak_key_for(s, gr, gprob[g]);
		int dup = ki == SIZE_MAX;
		for (size_t c = 0; c < nc; c++)
			dup |= counted[c] == ki;
		if (dup)
			continue;
		counted[nc++] = ki;
		struct dt_soak_key *k = &s->keys[ki];
		k->injected |= gr->v.cause == DT_CAUSE_INJECTED;
		if (failed)
			k->nfail++;
		else
			k->npass++;
	}
	res->keys = counted;
	res->nkeys = nc;
	free(gprob);
	dt_report_free(&rep);
}

/* The ppid field of /proc/PID/stat (after the comm, which may hold
 * anything up to its last ')'), or -1. */
static pid_t soak_ppid_of(const char *pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *paren = strrchr(buf, ')');
	char state;
	int ppid;
	if (!paren || sscanf(paren + 1, " %c %d", &state, &ppid) != 2)
		return -1;
	return (pid_t)ppid;
}

/* SIGKILLs every child of this process; returns how many there were. */
static int soak_kill_children(void)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	pid_t me = getpid();
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (isdigit((unsigned char)e->d_name[0]) && soak_ppid_of(e->d_name) == me) {
			kill((pid_t)atoi(e->d_name), SIGKILL);
			n++;
		}
	closedir(d);
	return n;
}

/* Kills the run's process group, then every process reparented to the
 * keeper, again as their own children are reparented in turn, until
 * none is left. */
static void soak_keeper_kill_tree(pid_t run)
{
	kill(-run, SIGKILL);
	for (;;) {
		soak_kill_children();
		pid_t p;
		while ((p = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (p < 0 && errno == ECHILD)
			return;
		usleep(5 * 1000);
	}
}

/* The keeper: reaps what is reparented to it while the run lasts; when
 * the run ends, or soak sends SIGTERM (timeout, Ctrl-C), kills the whole
 * tree and exits with the run's status (128+N for signal N, as soak
 * counts it). SIGCHLD and SIGTERM are blocked (soak_keeper_signals) and
 * taken with sigwaitinfo: none can slip in between a check and a wait. */
__attribute__((noreturn)) static void soak_keeper(pid_t run, const sigset_t *waited)
{
	int code = 128 + SIGKILL;
	setpgid(run, run);
	for (;;) {
		int st, done = 0;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			if (p == run) {
				code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				done = 1;
			}
		if (done || (p < 0 && errno == ECHILD))
			break;
		int sig = sigwaitinfo(waited, NULL);
		if (sig == SIGTERM)
			break;
	}
	soak_keeper_kill_tree(run);
	_exit(code);
}

/* In the keeper, before the run is forked: SIGCHLD and SIGTERM blocked
 * for sigwaitinfo (into waited; the run gets old back), and nothing else
 * soak handles reaches it (a Ctrl-C goes to soak, which decides). */
static void soak_keeper_signals(sigset_t *waited, sigset_t *old)
{
	struct sigaction sa = {0};
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_DFL; /* soak's handler, inherited, would only set a flag */
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(waited);
	sigaddset(waited, SIGCHLD);
	sigaddset(waited, SIGTERM);
	sigprocmask(SIG_BLOCK, waited, old);
}

static pid_t soak_spawn(const char *self, const char *dir, int index, uint64_t seed,
                        const struct dt_soak_opts *o)
{
	const char *const *deny = o->deny;
	size_t ndeny = o->ndeny;
	char **cmd = o->cmd;
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	setpgid(0, 0);
	sigset_t waited, old;
	soak_keeper_signals(&waited, &old);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		fprintf(stderr, "denytrace: soak: cannot become a subreaper: %s\n",
		        strerror(errno));
		_exit(DT_EXIT_INTERNAL);
	}
	pid_t run = fork();
	if (run < 0)
		_exit(DT_EXIT_INTERNAL);
	if (run > 0)
		soak_keeper(run, &waited);
	sigprocmask(SIG_SETMASK, &old, NULL);
	setpgid(0, 0);
	if (o->cwd && chdir(o->cwd) < 0) {
		fprintf(stderr, "denytrace: soak: cannot enter %s: %s\n", o->cwd, strerror(errno));
		_exit(DT_EXIT_INTERNAL);
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	char path[PATH_MAX], ring[PATH_MAX], seedbuf[32];
	snprintf(path, sizeof(path), "%s/run-%d.log", dir, index);
	snprintf(ring, sizeof(ring), "%s/run-%d.ring", dir, index);
	snprintf(seedbuf, sizeof(seedbuf), "%llu", (unsigned long long)seed);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	if (in >= 0)
		dup2(in, 0);
	size_t n = 0, cap = 8 + 2 * ndeny;
	for (char **c = cmd; *c; c++)
		cap++;
	const char **argv = calloc(cap + 1, sizeof(*argv));
	if (!argv)
		_exit(DT_EXIT_INTERNAL);
	argv[n++] = "denytrace";
	argv[n++] = "run";
	argv[n++] = "-q";
	argv[n++] = "-o";
	argv[n++] = ring;
	argv[n++] = "--seed";
	argv[n++] = seedbuf;
	for (size_t i = 0; i < ndeny; i++) {
		argv[n++] = "--deny";
		argv[n++] = deny[i];
	}
	argv[n++] = "--";
	for (char **c = cmd; *c; c++)
		argv[n++] = *c;
	argv[n] = NULL;
	execv(self, (char *const *)argv);
	fprintf(stderr, "denytrace: soak: cannot run %s: %s\n", self, strerror(errno));
	_exit(DT_EXIT_INTERNAL);
}

static void soak_progress(const struct dt_soak *s, unsigned runs, double t0, int final)
{
	double el = dt_soak_now() - t0;
	fprintf(stderr,
	        "\r\033[Ksoak: %u/%u runs, %u failed, %llu refusal%s, %.1f s, %.1f runs/s%s",
	        s->done, runs, s->failures, (unsigned long long)s->refusals,
	        s->refusals == 1 ? "" : "s", el, el > 0 ? s->done / el : 0.0, final ? "\n" : "");
}

/* Moves src into the --keep directory as name: rename when on the same
 * filesystem, else a copy into a new file there. Never through a
 * symbolic link: the directory is opened without following one, a link
 * at name is replaced, not written through. */
static int soak_keep_file(const char *src, const char *keep, const char *name)
{
	int dfd = open(keep, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	if (renameat(AT_FDCWD, src, dfd, name) == 0) {
		close(dfd);
		return 0;
	}
	int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	unlinkat(dfd, name, 0);
	int out =
	    in < 0 ? -1
	           : openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (in < 0 || out < 0) {
		if (in >= 0)
			close(in);
		return -1;
	}
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			rc = -1;
			break;
		}
	close(in);
	if (close(out) != 0)
		rc = -1;
	if (rc == 0)
		unlink(src);
	return rc;
}

int dt_soak_prepare(struct dt_soak_opts *o, char *self, size_t selfcap, char *dir)
{
	char why[PATH_MAX + 256];
	/* the rings of failing runs are written there, and read back */
	if (o->keep && dt_private_dir(o->keep, 0700, why, sizeof(why)) < 0)
		return dt_fail(DT_EXIT_INTERNAL, "soak: --keep: %s", why);
	if (!o->have_seed) {
		if (getrandom(&o->seed, sizeof(o->seed), 0) != (ssize_t)sizeof(o->seed))
			o->seed = (uint64_t)time(NULL);
		o->seed &= 0xffffffffffffULL; /* short enough to retype */
	}
	ssize_t sl = readlink("/proc/self/exe", self, selfcap - 1);
	if (sl <= 0)
		return dt_fail(DT_EXIT_INTERNAL, "soak: cannot find the denytrace binary");
	self[sl] = 0;
	if (!mkdtemp(dir))
		return dt_fail(DT_EXIT_INTERNAL, "soak: cannot create a temporary directory: %s",
		               strerror(errno));
	return -1;
}

/* A run's ring, with the launch file that `denytrace run` wrote for it:
 * nothing can verify a deleted ring's launch again. */
static void soak_drop_ring(const char *ring)
{
	dt_launchfile_remove(ring);
	unlink(ring);
}

void dt_soak_remove_dir(const char *dir)
{
	/* everything in it is soak's: rings (with their launch files), logs,
	 * a ring a killed run left half created */
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		char path[PATH_MAX];
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			if (n > 5 && !strcmp(e->d_name + n - 5, ".ring") &&
			    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) <
			        (int)sizeof(path))
				dt_launchfile_remove(path);
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		}
		closedir(d);
	}
	rmdir(dir);
}

void dt_soak_unlink_run(const char *dir, int index)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/run-%d.ring", dir, index);
	soak_drop_ring(p);
	snprintf(p, sizeof(p), "%s/run-%d.log", dir, index);
	unlink(p);
}

/* Does the log's first line start with prefix? */
static int soak_log_starts(const char *log, const char *prefix)
{
	FILE *lf = fopen(log, "re");
	char line[256] = "";
	if (!lf)
		return 0;
	int yes = fgets(line, sizeof(line), lf) && !strncmp(line, prefix, strlen(prefix));
	fclose(lf);
	return yes;
}

/* A run that denytrace itself could not start (e.g. --deny without
 * seccomp) says why on the first line of its log: into msg, returns 1. */
static int soak_infra_failure(const char *log, char *msg, size_t cap)
{
	FILE *lf = fopen(log, "re");
	char line[1024] = "";
	int infra = 0;
	if (lf && fgets(line, sizeof(line), lf) && !strncmp(line, "denytrace: ", 11)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(msg, cap, "%s", line + 11);
		infra = 1;
	}
	if (lf)
		fclose(lf);
	return infra;
}

/* Remembers the failing run r (and moves its files to --keep). */
static void soak_add_failed(struct dt_soak *s, const struct dt_soak_opts *o,
                            const struct dt_soak_run *r, int code, const char *ring,
                            const char *log)
{
	struct dt_soak_failed *nf = realloc(s->failed, (s->nfailed + 1) * sizeof(*nf));
	if (!nf)
		return;
	s->failed = nf;
	struct dt_soak_failed *fr = &s->failed[s->nfailed++];
	memset(fr, 0, sizeof(*fr));
	fr->index = r->index;
	fr->status = code;
	fr->timed_out = r->timed_out;
	fr->seed = dt_soak_seed(o, r->index);
	if (o->keep) {
		char name[64];
		snprintf(name, sizeof(name), "run-%d.ring", r->index);
		if (soak_keep_file(ring, o->keep, name) == 0)
			snprintf(fr->ring, sizeof(fr->ring), "%s/%s", o->keep, name);
		snprintf(name, sizeof(name), "run-%d.log", r->index);
		soak_keep_file(log, o->keep, name);
	}
}

/* Accounts for the finished run r (wait status st). Returns 1 when
 * denytrace itself could not run it (msg says why): stop starting runs. */
static int soak_finish_run(struct dt_soak *s, const struct dt_soak_opts *o, const char *dir,
                           const struct dt_soak_run *r, int st, char *msg, size_t msgcap)
{
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	char ring[PATH_MAX], log[PATH_MAX];
	snprintf(ring, sizeof(ring), "%s/run-%d.ring", dir, r->index);
	snprintf(log, sizeof(log), "%s/run-%d.log", dir, r->index);
	/* 125: denytrace failed; 126, 127: it could not start the command
	 * (its own message says so, not the command's status) */
	int infra =
	    code == DT_EXIT_INTERNAL || ((code == DT_EXIT_NOTFOUND || code == DT_EXIT_NOEXEC) &&
	                                 (soak_log_starts(log, "denytrace: cannot run '") ||
	                                  soak_log_starts(log, "denytrace: run: cannot run '")));
	if (infra && !r->timed_out && soak_infra_failure(log, msg, msgcap)) {
		soak_drop_ring(ring);
		unlink(log);
		return 1;
	}
	int failed = code != 0 || r->timed_out;
	s->done++;
	struct dt_soak_result res = {
	    r->index, code, r->timed_out, failed, dt_soak_now() - r->start, NULL, 0, 0};
	if (s->nhosts) {
		s->hosts[0].runs++;
		s->hosts[0].failures += (unsigned)failed;
	}
	soak_account(s, ring, failed, &res);
	struct dt_soak_result *nr = realloc(s->results, (s->nresults + 1) * sizeof(*nr));
	if (nr) {
		s->results = nr;
		s->results[s->nresults++] = res;
	} else {
		free(res.keys);
	}
	if (o->on_run)
		o->on_run(o->ctx, r->index, ring, failed);
	if (failed) {
		s->failures++;
		soak_add_failed(s, o, r, code, ring, log);
	}
	int keep_tmp = 0;
	if (failed && (s->first_fail < 0 || r->index < s->first_fail)) {
		/* the first failing run's files stay until the summary */
		if (s->first_fail >= 0 && !o->keep)
			dt_soak_unlink_run(dir, s->first_fail);
		s->first_fail = r->index;
		if (o->keep)
			snprintf(s->first_ring, sizeof(s->first_ring), "%s/run-%d.ring", o->keep,
			         r->index);
		else
			snprintf(s->first_ring, sizeof(s->first_ring), "%s", ring);
		keep_tmp = !o->keep;
	}
	if (!keep_tmp) {
		soak_drop_ring(ring);
		unlink(log);
	}
	return 0;
}

/* Kills the runs past --timeout. */
static void soak_enforce_timeout(struct dt_soak_run *running, unsigned nrunning, double timeout)
{
	double now = dt_soak_now();
	for (unsigned k = 0; k < nrunning; k++)
		if (timeout > 0 && !running[k].timed_out && now - running[k].start > timeout) {
			running[k].timed_out = 1;
			kill(running[k].pid, SIGTERM); /* its keeper kills the tree */
		}
}

/* Runs the command until o->runs are done (or --until-fail, a signal, or
 * a run denytrace could not start: then returns 1 with msg set). */
int dt_soak_loop(struct dt_soak *s, const struct dt_soak_opts *o, const char *self, const char *dir,
                 double t0, char *msg, size_t msgcap)
{
	struct dt_soak_run *running = calloc(o->jobs, sizeof(*running));
	unsigned started = 0, nrunning = 0, planned = dt_soak_planned(o);
	int tty = isatty(2) && !o->quiet, infra = 0;
	double last_progress = 0;
	while (!dt_soak_stop && running) {
		int stop_starting = infra || (o->until_fail && s->failures);
		while (!stop_starting && started < planned && nrunning < o->jobs) {
			/* runs are numbered from 1, as the progress line counts */
			int index = dt_soak_index(o, started);
			pid_t pid = soak_spawn(self, dir, index, dt_soak_seed(o, index), o);
			if (pid < 0)
				break;
			setpgid(pid, pid); /* also here, as the keeper does it itself */
			running[nrunning++] = (struct dt_soak_run){pid, index, dt_soak_now(), 0};
			started++;
		}
		if (!nrunning)
			break;
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid <= 0) {
			soak_enforce_timeout(running, nrunning, o->timeout);
			if (tty && dt_soak_now() - last_progress > 0.2) {
				soak_progress(s, planned, t0, 0);
				last_progress = dt_soak_now();
			}
			usleep(10 * 1000);
			continue;
		}
		unsigned k = 0;
		while (k < nrunning && running[k].pid != pid)
			k++;
		if (k == nrunning)
			continue;
		struct dt_soak_run r = running[k];
		running[k] = running[--nrunning];
		infra |= soak_finish_run(s, o, dir, &r, st, msg, msgcap);
	}
	if (dt_soak_stop && running) {
		for (unsigned k = 0; k < nrunning; k++)
			kill(running[k].pid, SIGTERM); /* each keeper kills its tree */
		for (unsigned k = 0; k < nrunning; k++) {
			while (waitpid(running[k].pid, NULL, 0) < 0 && errno == EINTR)
				;
			dt_soak_unlink_run(dir, running[k].index);
		}
	}
	if (tty)
		soak_progress(s, planned, t0, 1);
	free(running);
	return infra;
}

void dt_soak_free(struct dt_soak *s)
{
	for (size_t k = 0; k < s->nkeys; k++) {
		free(s->keys[k].path);
		free(s->keys[k].op);
		free(s->keys[k].py_line);
	}
	free(s->keys);
	free(s->failed);
	for (size_t h = 0; h < s->nhosts; h++)
		free(s->hosts[h].file);
	free(s->hosts);
	for (size_t p = 0; p < s->nproblems; p++) {
		free(s->problems[p].key);
		free(s->problems[p].title);
		free(s->problems[p].advice);
	}
	free(s->problems);
	dt_soak_facts_free(s);
	for (size_t r = 0; r < s->nresults; r++)
		free(s->results[r].keys);
	free(s->results);
}
