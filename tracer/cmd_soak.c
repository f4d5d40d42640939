/* SPDX-License-Identifier: MIT */
/* denytrace soak: run a worker many times under the probe (and --deny
 * rules), and name the refusals that separate failing runs from passing
 * ones. Each run is a `denytrace run` of its own, in its own process group
 * (so --timeout and Ctrl-C can kill the whole tree), with its own ring. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "denyrule.h"
#include "json.h"
#include "names.h"
#include "recfmt.h"
#include "report.h"

static const char soak_usage[] =
    "usage: denytrace soak [options] -- COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND many times, each under `denytrace run` with its own ring, J at\n"
    "a time, and reports how often it fails and which refusals were seen in\n"
    "failing runs but never in passing ones: the likely cause of the flake.\n"
    "\n"
    "options:\n"
    "  --runs N        number of runs (default 20)\n"
    "  --jobs J        runs at a time (default 1)\n"
    "  --until-fail    stop starting runs after the first failure\n"
    "  --timeout S     kill a run's process group after S seconds (counts as failed)\n"
    "  --keep DIR      keep the rings (and output) of failing runs in DIR, for\n"
    "                  `denytrace report` and `denytrace evidence`\n"
    "  --deny RULE     passed to every run (see `denytrace run --help`); repeatable\n"
    "  --seed N        run i uses seed N+i for p= rules (default: random, printed)\n"
    "  --json FILE     also write the summary as JSON to FILE ('-' for stdout)\n"
    "  -q, --quiet     no progress line and no report of the first failing run\n"
    "  -h, --help      this help\n"
    "\n"
    "A progress line (runs, failures, refusals, elapsed time, rate) is shown on a\n"
    "terminal. Ctrl-C stops the runs in flight and prints the summary of the\n"
    "runs that finished. The flake rate comes with a 95% Wilson interval.\n"
    "\n"
    "exit status: 0 every run passed, 1 some run failed, 2 bad usage, 125 denytrace\n"
    "itself could not run the command, 130 interrupted before any run failed.\n";

static volatile sig_atomic_t soak_stop;

static void soak_on_signal(int sig)
{
	(void)sig;
	soak_stop = 1;
}

/* A distinct refusal (path, op, errno) and in how many runs it appeared. */
struct soak_key {
	char *path, *op;
	int err, injected;
	unsigned nfail, npass;
};

struct soak_run {
	pid_t pid;
	int index;
	double start;
	int timed_out;
};

struct soak_failed {
	int index, status, timed_out;
	uint64_t seed;
	char ring[PATH_MAX];
};

struct soak {
	struct soak_key *keys;
	size_t nkeys;
	struct soak_failed *failed;
	size_t nfailed;
	unsigned done, failures;
	uint64_t refusals;
	int first_fail;
	char first_ring[PATH_MAX];
};

static double soak_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 95% Wilson score interval for k failures out of n. */
static void soak_wilson(unsigned k, unsigned n, double *lo, double *hi)
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

/* Reads a finished run's ring; adds its distinct refusals to the table. */
static void soak_account(struct soak *s, const char *ring, int failed)
{
	struct dt_report rep;
	char err[512];
	const char *rings[1] = {ring};
	if (dt_report_load(&rep, rings, 1, err, sizeof(err)) != 0) {
		dt_report_free(&rep);
		return;
	}
	struct dt_report_opts o = {0};
	if (dt_report_build(&rep, &o, err, sizeof(err)) != 0) {
		dt_report_free(&rep);
		return;
	}
	s->refusals += rep.denials;
	/* each distinct (path, op, errno) counts once per run */
	size_t *counted = calloc(rep.ngroups + 1, sizeof(*counted)), nc = 0;
	for (size_t g = 0; counted && g < rep.ngroups; g++) {
		const struct dt_report_group *gr = &rep.groups[g];
		if (gr->hidden)
			continue;
		const char *op = gr->rep->op ? gr->rep->op : "?";
		size_t ki = 0;
		while (ki < s->nkeys &&
		       (strcmp(s->keys[ki].path, gr->path) || strcmp(s->keys[ki].op, op) ||
		        s->keys[ki].err != gr->rep->err))
			ki++;
		if (ki == s->nkeys) {
			struct soak_key *nk = realloc(s->keys, (s->nkeys + 1) * sizeof(*nk));
			if (!nk)
				break;
			s->keys = nk;
			struct soak_key *k = &s->keys[s->nkeys++];
			memset(k, 0, sizeof(*k));
			k->path = strdup(gr->path);
			k->op = strdup(op);
			k->err = gr->rep->err;
		}
		int dup = 0;
		for (size_t c = 0; c < nc; c++)
			dup |= counted[c] == ki;
		if (dup)
			continue;
		counted[nc++] = ki;
		struct soak_key *k = &s->keys[ki];
		k->injected |= gr->v.cause == DT_CAUSE_INJECTED;
		if (failed)
			k->nfail++;
		else
			k->npass++;
	}
	free(counted);
	dt_report_free(&rep);
}

static pid_t soak_spawn(const char *self, const char *dir, int index, uint64_t seed,
                        const char *const *deny, size_t ndeny, char **cmd)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	setpgid(0, 0);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
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

static void soak_progress(const struct soak *s, unsigned runs, double t0, int final)
{
	double el = soak_now() - t0;
	fprintf(stderr,
	        "\r\033[Ksoak: %u/%u runs, %u failed, %llu refusal%s, %.1f s, %.1f runs/s%s",
	        s->done, runs, s->failures, (unsigned long long)s->refusals,
	        s->refusals == 1 ? "" : "s", el, el > 0 ? s->done / el : 0.0, final ? "\n" : "");
}

/* Copies src to dst (rename when on the same filesystem). */
static int soak_keep_file(const char *src, const char *dst)
{
	if (rename(src, dst) == 0)
		return 0;
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
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
	close(out);
	return rc;
}

static void soak_print_log_tail(const char *log)
{
	FILE *f = fopen(log, "re");
	if (!f)
		return;
	char line[1024], tail[8][1024];
	int n = 0;
	while (fgets(line, sizeof(line), f))
		snprintf(tail[n++ % 8], sizeof(tail[0]), "%s", line);
	fclose(f);
	if (!n)
		return;
	printf("Its output (last lines):\n");
	for (int i = n > 8 ? n - 8 : 0; i < n; i++)
		printf("  | %s", tail[i % 8]);
}

static void soak_json(FILE *f, const struct soak *s, uint64_t seed, int interrupted)
{
	struct dt_json j;
	double lo, hi;
	soak_wilson(s->failures, s->done, &lo, &hi);
	dt_json_init(&j, f, 1);
	dt_json_obj(&j);
	dt_json_key(&j, "runs");
	dt_json_uint(&j, s->done);
	dt_json_key(&j, "failures");
	dt_json_uint(&j, s->failures);
	dt_json_key(&j, "flake_rate");
	dt_json_double(&j, s->done ? (double)s->failures / s->done : 0.0);
	dt_json_key(&j, "ci_low");
	dt_json_double(&j, lo);
	dt_json_key(&j, "ci_high");
	dt_json_double(&j, hi);
	dt_json_key(&j, "seed");
	dt_json_uint(&j, seed);
	dt_json_key(&j, "interrupted");
	dt_json_bool(&j, interrupted);
	dt_json_key(&j, "refusals");
	dt_json_uint(&j, s->refusals);
	dt_json_key(&j, "separating_refusals");
	dt_json_arr(&j);
	for (size_t i = 0; i < s->nkeys; i++) {
		const struct soak_key *k = &s->keys[i];
		if (!k->nfail || k->npass)
			continue;
		dt_json_obj(&j);
		dt_json_key(&j, "path");
		dt_json_str(&j, k->path);
		dt_json_key(&j, "op");
		dt_json_str(&j, k->op);
		dt_json_key(&j, "errno");
		dt_json_str(&j, dt_errno_name(k->err));
		dt_json_key(&j, "injected");
		dt_json_bool(&j, k->injected);
		dt_json_key(&j, "failing_runs");
		dt_json_uint(&j, k->nfail);
		dt_json_key(&j, "passing_runs");
		dt_json_uint(&j, k->npass);
		dt_json_end_obj(&j);
	}
	dt_json_end_arr(&j);
	dt_json_key(&j, "failed_runs");
	dt_json_arr(&j);
	for (size_t i = 0; i < s->nfailed; i++) {
		const struct soak_failed *fr = &s->failed[i];
		dt_json_obj(&j);
		dt_json_key(&j, "index");
		dt_json_int(&j, fr->index);
		dt_json_key(&j, "exit_status");
		dt_json_int(&j, fr->status);
		dt_json_key(&j, "timed_out");
		dt_json_bool(&j, fr->timed_out);
		dt_json_key(&j, "seed");
		dt_json_uint(&j, fr->seed);
		dt_json_key(&j, "ring");
		dt_json_str(&j, fr->ring[0] ? fr->ring : NULL);
		dt_json_end_obj(&j);
	}
	dt_json_end_arr(&j);
	dt_json_end_obj(&j);
	fputc('\n', f);
}

/* What the command line asked for. */
struct soak_opts {
	unsigned runs, jobs;
	int until_fail, quiet, have_seed;
	double timeout;
	const char *keep, *json;
	uint64_t seed;
	const char **deny; /* --deny rules as given, ndeny of them */
	size_t ndeny;
	char **cmd;
};

/* Parses the options into o. Returns -1 to go on, else the exit status
 * (with the message printed, or the help). */
static int soak_parse(int argc, char **argv, struct soak_opts *o)
{
	const char *val;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		int m;
		char *end;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(soak_usage, stdout);
			return DT_EXIT_OK;
		} else if (!strcmp(a, "--until-fail")) {
			o->until_fail = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			o->quiet = 1;
		} else if ((m = dt_opt(argc, argv, &i, "--runs", &val))) {
			long v = m > 0 ? strtol(val, &end, 10) : 0;
			if (m < 0 || !*val || *end || v < 1 || v > 1000000)
				return dt_fail(DT_EXIT_USAGE,
				               "soak: --runs takes a number from 1 to 1000000");
			o->runs = (unsigned)v;
		} else if ((m = dt_opt(argc, argv, &i, "--jobs", &val))) {
			long v = m > 0 ? strtol(val, &end, 10) : 0;
			if (m < 0 || !*val || *end || v < 1 || v > 256)
				return dt_fail(DT_EXIT_USAGE,
				               "soak: --jobs takes a number from 1 to 256");
			o->jobs = (unsigned)v;
		} else if ((m = dt_opt(argc, argv, &i, "--timeout", &val))) {
			double v = m > 0 ? strtod(val, &end) : 0;
			if (m < 0 || !*val || *end || !(v > 0))
				return dt_fail(DT_EXIT_USAGE,
				               "soak: --timeout takes seconds, such as 30 or 2.5");
			o->timeout = v;
		} else if ((m = dt_opt(argc, argv, &i, "--keep", &val))) {
			if (m < 0)
				return dt_fail(DT_EXIT_USAGE, "soak: --keep needs a directory");
			o->keep = val;
		} else if ((m = dt_opt(argc, argv, &i, "--json", &val))) {
			if (m < 0)
				return dt_fail(DT_EXIT_USAGE, "soak: --json needs a file name");
			o->json = val;
		} else if ((m = dt_opt(argc, argv, &i, "--seed", &val))) {
			if (m < 0 || !*val || (o->seed = strtoull(val, &end, 0), *end))
				return dt_fail(DT_EXIT_USAGE, "soak: --seed takes a whole number");
			o->have_seed = 1;
		} else if ((m = dt_opt(argc, argv, &i, "--deny", &val))) {
			struct dt_deny_rule rule;
			char derr[1024];
			if (m < 0 || dt_deny_parse(val, &rule, derr, sizeof(derr)) < 0)
				return dt_fail(DT_EXIT_USAGE, "soak: %s",
				               m < 0 ? "--deny needs a rule" : derr);
			dt_deny_rule_free(&rule);
			o->deny[o->ndeny++] = val;
		} else if (a[0] == '-') {
			return dt_fail(DT_EXIT_USAGE,
			               "soak: unknown option '%s'; see 'denytrace soak --help'", a);
		} else {
			break;
		}
	}
	if (i >= argc)
		return dt_fail(
		    DT_EXIT_USAGE,
		    "soak: no command given; usage: denytrace soak [options] -- COMMAND...");
	o->cmd = argv + i;
	return -1;
}

/* The --keep directory, the seed, this binary (self) and the temporary
 * directory (dir, "/tmp/denytrace-soak.XXXXXX" on entry). Returns -1 to go
 * on, else the exit status with the message printed. */
static int soak_prepare(struct soak_opts *o, char *self, size_t selfcap, char *dir)
{
	if (o->keep && mkdir(o->keep, 0755) < 0 && errno != EEXIST)
		return dt_fail(DT_EXIT_IO, "soak: cannot create --keep directory %s: %s", o->keep,
		               strerror(errno));
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
		return dt_fail(DT_EXIT_IO, "soak: cannot create a temporary directory: %s",
		               strerror(errno));
	return -1;
}

static void soak_unlink_run(const char *dir, int index)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/run-%d.ring", dir, index);
	unlink(p);
	snprintf(p, sizeof(p), "%s/run-%d.log", dir, index);
	unlink(p);
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
static void soak_add_failed(struct soak *s, const struct soak_opts *o, const struct soak_run *r,
                            int code, const char *ring, const char *log)
{
	struct soak_failed *nf = realloc(s->failed, (s->nfailed + 1) * sizeof(*nf));
	if (!nf)
		return;
	s->failed = nf;
	struct soak_failed *fr = &s->failed[s->nfailed++];
	memset(fr, 0, sizeof(*fr));
	fr->index = r->index;
	fr->status = code;
	fr->timed_out = r->timed_out;
	fr->seed = o->seed + (uint64_t)r->index;
	if (o->keep) {
		char dst[PATH_MAX];
		snprintf(dst, sizeof(dst), "%s/run-%d.ring", o->keep, r->index);
		if (soak_keep_file(ring, dst) == 0)
			snprintf(fr->ring, sizeof(fr->ring), "%s", dst);
		snprintf(dst, sizeof(dst), "%s/run-%d.log", o->keep, r->index);
		soak_keep_file(log, dst);
	}
}

/* Accounts for the finished run r (wait status st). Returns 1 when
 * denytrace itself could not run it (msg says why): stop starting runs. */
static int soak_finish_run(struct soak *s, const struct soak_opts *o, const char *dir,
                           const struct soak_run *r, int st, char *msg, size_t msgcap)
{
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	char ring[PATH_MAX], log[PATH_MAX];
	snprintf(ring, sizeof(ring), "%s/run-%d.ring", dir, r->index);
	snprintf(log, sizeof(log), "%s/run-%d.log", dir, r->index);
	if (code == DT_EXIT_INTERNAL && !r->timed_out && soak_infra_failure(log, msg, msgcap)) {
		unlink(ring);
		unlink(log);
		return 1;
	}
	int failed = code != 0 || r->timed_out;
	s->done++;
	soak_account(s, ring, failed);
	if (failed) {
		s->failures++;
		soak_add_failed(s, o, r, code, ring, log);
	}
	int keep_tmp = 0;
	if (failed && (s->first_fail < 0 || r->index < s->first_fail)) {
		/* the first failing run's files stay until the summary */
		if (s->first_fail >= 0 && !o->keep)
			soak_unlink_run(dir, s->first_fail);
		s->first_fail = r->index;
		if (o->keep)
			snprintf(s->first_ring, sizeof(s->first_ring), "%s/run-%d.ring", o->keep,
			         r->index);
		else
			snprintf(s->first_ring, sizeof(s->first_ring), "%s", ring);
		keep_tmp = !o->keep;
	}
	if (!keep_tmp) {
		unlink(ring);
		unlink(log);
	}
	return 0;
}

/* Kills the runs past --timeout. */
static void soak_enforce_timeout(struct soak_run *running, unsigned nrunning, double timeout)
{
	double now = soak_now();
	for (unsigned k = 0; k < nrunning; k++)
		if (timeout > 0 && !running[k].timed_out && now - running[k].start > timeout) {
			running[k].timed_out = 1;
			kill(-running[k].pid, SIGKILL);
		}
}

/* Runs the command until o->runs are done (or --until-fail, a signal, or
 * a run denytrace could not start: then returns 1 with msg set). */
static int soak_loop(struct soak *s, const struct soak_opts *o, const char *self,
                     const char *dir, double t0, char *msg, size_t msgcap)
{
	struct soak_run *running = calloc(o->jobs, sizeof(*running));
	unsigned started = 0, nrunning = 0;
	int tty = isatty(2) && !o->quiet, infra = 0;
	double last_progress = 0;
	while (!soak_stop && running) {
		int stop_starting = infra || (o->until_fail && s->failures);
		while (!stop_starting && started < o->runs && nrunning < o->jobs) {
			pid_t pid = soak_spawn(self, dir, (int)started, o->seed + started, o->deny,
			                       o->ndeny, o->cmd);
			if (pid < 0)
				break;
			setpgid(pid, pid); /* also here: no race with a timeout kill */
			running[nrunning++] = (struct soak_run){pid, (int)started, soak_now(), 0};
			started++;
		}
		if (!nrunning)
			break;
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid <= 0) {
			soak_enforce_timeout(running, nrunning, o->timeout);
			if (tty && soak_now() - last_progress > 0.2) {
				soak_progress(s, o->runs, t0, 0);
				last_progress = soak_now();
			}
			usleep(10 * 1000);
			continue;
		}
		unsigned k = 0;
		while (k < nrunning && running[k].pid != pid)
			k++;
		if (k == nrunning)
			continue;
		struct soak_run r = running[k];
		running[k] = running[--nrunning];
		/* whatever the run left in its group goes with it */
		kill(-r.pid, SIGKILL);
		infra |= soak_finish_run(s, o, dir, &r, st, msg, msgcap);
	}
	if (soak_stop && running) {
		for (unsigned k = 0; k < nrunning; k++)
			kill(-running[k].pid, SIGKILL);
		for (unsigned k = 0; k < nrunning; k++) {
			while (waitpid(running[k].pid, NULL, 0) < 0 && errno == EINTR)
				;
			soak_unlink_run(dir, running[k].index);
		}
	}
	if (tty)
		soak_progress(s, o->runs, t0, 1);
	free(running);
	return infra;
}

/* The refusals seen only in failing runs, or that there are none. */
static void soak_print_separating(const struct soak *s)
{
	size_t nsep = 0;
	for (size_t k = 0; k < s->nkeys; k++)
		nsep += s->keys[k].nfail && !s->keys[k].npass;
	if (!nsep) {
		printf("No refusal separates failing runs from passing ones: the failures "
		       "have "
		       "another cause%s.\n",
		       s->refusals ? " (every refusal was also seen in passing runs)" : "");
		return;
	}
	printf("Refusals seen in failing runs and never in passing ones (the "
	       "likely cause):\n");
	for (size_t k = 0; k < s->nkeys; k++) {
		const struct soak_key *kk = &s->keys[k];
		if (!kk->nfail || kk->npass)
			continue;
		fputs("  ", stdout);
		dt_put_safe(stdout, kk->op);
		fputc(' ', stdout);
		dt_put_safe(stdout, kk->path);
		printf(" %s%s: in %u of %u failing runs\n", dt_errno_name(kk->err),
		       kk->injected ? " (injected)" : "", kk->nfail, s->failures);
	}
}

/* The failing runs, how to rerun the first, and (unless quiet) its log
 * tail and report. */
static void soak_print_failures(const struct soak *s, const struct soak_opts *o, const char *dir)
{
	soak_print_separating(s);
	printf("Failing runs:");
	for (size_t k = 0; k < s->nfailed && k < 20; k++)
		printf(" #%d (%s %d)", s->failed[k].index,
		       s->failed[k].timed_out ? "timed out," : "exit", s->failed[k].status);
	printf("%s\n", s->nfailed > 20 ? " ..." : "");
	if (o->keep)
		printf("Rings of failing runs kept in %s (run-N.ring, run-N.log).\n", o->keep);
	printf("Rerun one alone: denytrace run --seed %llu",
	       (unsigned long long)(o->seed + (uint64_t)s->first_fail));
	for (size_t k = 0; k < o->ndeny; k++) {
		fputs(" --deny ", stdout);
		dt_shell_word(stdout, o->deny[k]);
	}
	fputs(" --", stdout);
	for (char **c = o->cmd; *c; c++) {
		fputc(' ', stdout);
		dt_shell_word(stdout, *c);
	}
	fputc('\n', stdout);
	if (o->quiet || !s->first_ring[0])
		return;
	struct dt_report rep;
	char err[512];
	const char *rings[1] = {s->first_ring};
	struct dt_report_opts ro = {0};
	printf("\nFirst failing run (#%d):\n", s->first_fail);
	char log[PATH_MAX];
	snprintf(log, sizeof(log), "%s/run-%d.log", o->keep ? o->keep : dir, s->first_fail);
	soak_print_log_tail(log);
	if (dt_report_load(&rep, rings, 1, err, sizeof(err)) == 0 &&
	    dt_report_build(&rep, &ro, err, sizeof(err)) == 0)
		dt_report_text(stdout, &rep, 0, 0);
	dt_report_free(&rep);
}

/* --json FILE ("-": stdout). Returns 0 or an exit status. */
static int soak_write_json(const struct soak *s, const struct soak_opts *o, int interrupted)
{
	FILE *jf = strcmp(o->json, "-") ? fopen(o->json, "w") : stdout;
	if (!jf)
		return dt_fail(DT_EXIT_IO, "soak: cannot write %s: %s", o->json, strerror(errno));
	soak_json(jf, s, o->seed, interrupted);
	if (jf != stdout && fclose(jf) != 0)
		return dt_fail(DT_EXIT_IO, "soak: cannot write %s", o->json);
	return 0;
}

static void soak_free(struct soak *s)
{
	for (size_t k = 0; k < s->nkeys; k++) {
		free(s->keys[k].path);
		free(s->keys[k].op);
	}
	free(s->keys);
	free(s->failed);
}

int cmd_soak(int argc, char **argv)
{
	struct soak_opts o = {.runs = 20, .jobs = 1};
	o.deny = calloc((size_t)argc + 1, sizeof(*o.deny));
	char self[PATH_MAX], dir[] = "/tmp/denytrace-soak.XXXXXX";
	int rc = soak_parse(argc, argv, &o);
	if (rc < 0)
		rc = soak_prepare(&o, self, sizeof(self), dir);
	if (rc >= 0) {
		free(o.deny);
		return rc;
	}

	struct sigaction sa = {0};
	sa.sa_handler = soak_on_signal;
	sigemptyset(&sa.sa_mask);
	struct sigaction old_int, old_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	struct soak s = {0};
	s.first_fail = -1;
	char infra_msg[1024] = "";
	double t0 = soak_now();
	int infra = soak_loop(&s, &o, self, dir, t0, infra_msg, sizeof(infra_msg));
	int interrupted = soak_stop != 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);

	if (infra && !s.done) {
		rmdir(dir);
		free(o.deny);
		return dt_fail(DT_EXIT_INTERNAL, "soak: %s", infra_msg);
	}
	double lo, hi;
	soak_wilson(s.failures, s.done, &lo, &hi);
	double el = soak_now() - t0;
	printf("soak: %u run%s%s in %.1f s, %u failed: flake rate %.1f%% (95%% CI %.1f%%-%.1f%%, "
	       "Wilson); seed %llu\n",
	       s.done, s.done == 1 ? "" : "s", interrupted ? " (interrupted)" : "", el, s.failures,
	       s.done ? 100.0 * s.failures / s.done : 0.0, 100 * lo, 100 * hi,
	       (unsigned long long)o.seed);
	if (s.failures)
		soak_print_failures(&s, &o, dir);
	fflush(stdout);
	rc = o.json ? soak_write_json(&s, &o, interrupted) : 0;
	/* temporary files: the first failing run's (when not kept) and the dir */
	if (s.first_fail >= 0 && !o.keep)
		soak_unlink_run(dir, s.first_fail);
	rmdir(dir);
	soak_free(&s);
	free(o.deny);
	if (rc)
		return rc;
	return s.failures ? DT_EXIT_FOUND : interrupted ? 130 : DT_EXIT_OK;
}
