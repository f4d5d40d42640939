/* SPDX-License-Identifier: MIT */
/* denytrace soak: run a worker many times under the probe (and --deny
 * rules), and name the refusals that separate failing runs from passing
 * ones. Each run is a `denytrace run` of its own, under a keeper that
 * kills its whole tree (soak.c), with its own ring. */
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
#include "options.h"
#include "outfile.h"
#include "recfmt.h"
#include "report.h"
#include "secrets.h"
#include "soak.h"
#include "xml.h"

static const char soak_usage[] =
    "usage: denytrace soak [options] -- COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND many times, each under `denytrace run` with its own ring, J at\n"
    "a time, and reports how often it fails and which refusals were seen in\n"
    "failing runs but never in passing ones: the likely cause of the flake.\n"
    "\n";

static const char soak_after[] =
    "A progress line (runs, failures, refusals, elapsed time, rate) is shown on a\n"
    "terminal. Ctrl-C (or SIGTERM, SIGHUP) stops the runs in flight, with every\n"
    "process they started, and prints the summary of the runs that finished. The\n"
    "flake rate comes with a 95% Wilson interval. -o, --json=FILE and --junit are\n"
    "opened before the first run. Temporary files go under $TMPDIR (else /tmp).\n"
    "\n";

static void soak_on_signal(int sig)
{
	(void)sig;
	dt_soak_stop = 1;
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

/* Rates in the JSON carry the precision the text shows (0.1%): no
 * 5.55e-17 where the interval starts at 0. */
static double soak_rate(double x)
{
	/* round() by hand: x is a rate in [0, 1], and the binary needs no libm */
	return (double)(long long)(x * 1000 + 0.5) / 1000;
}

/* The problems (findings) of failing runs that no passing run had. */
static void soak_json_problems(struct dt_json *j, const struct dt_soak *s)
{
	dt_json_key(j, "separating_problems");
	dt_json_arr(j);
	for (size_t p = 0; p < s->nproblems; p++) {
		const struct dt_soak_problem *pr = &s->problems[p];
		if (!pr->nfail || pr->npass)
			continue;
		dt_json_obj(j);
		dt_json_key(j, "title");
		dt_json_str(j, pr->title);
		dt_json_key(j, "cause");
		dt_json_str(j, dt_cause_name((enum dt_cause)pr->cause));
		dt_json_key(j, "advice");
		dt_json_str(j, pr->advice);
		dt_json_key(j, "failing_runs");
		dt_json_uint(j, pr->nfail);
		dt_json_key(j, "passing_runs");
		dt_json_uint(j, pr->npass);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

static void soak_json(FILE *f, const struct dt_soak *s, uint64_t seed, int interrupted)
{
	struct dt_json j;
	double lo, hi;
	dt_soak_wilson(s->failures, s->done, &lo, &hi);
	dt_json_init(&j, f, 1);
	dt_json_obj(&j);
	dt_json_key(&j, "runs");
	dt_json_uint(&j, s->done);
	dt_json_key(&j, "failures");
	dt_json_uint(&j, s->failures);
	dt_json_key(&j, "flake_rate");
	dt_json_double(&j, soak_rate(s->done ? (double)s->failures / s->done : 0.0));
	dt_json_key(&j, "ci_low");
	dt_json_double(&j, soak_rate(lo));
	dt_json_key(&j, "ci_high");
	dt_json_double(&j, soak_rate(hi));
	dt_json_key(&j, "seed");
	dt_json_uint(&j, seed);
	dt_json_key(&j, "interrupted");
	dt_json_bool(&j, interrupted);
	dt_json_key(&j, "refusals");
	dt_json_uint(&j, s->refusals);
	soak_json_problems(&j, s);
	dt_json_key(&j, "separating_refusals");
	dt_json_arr(&j);
	for (size_t i = 0; i < s->nkeys; i++) {
		const struct dt_soak_key *k = &s->keys[i];
		if (!k->nfail || k->npass)
			continue;
		dt_json_obj(&j);
		dt_json_key(&j, "path");
		dt_json_str(&j, k->path);
		dt_json_key(&j, "op");
		dt_json_str(&j, k->op);
		dt_json_key(&j, "errno");
		dt_json_str(&j, dt_errno_name(k->err));
		dt_json_key(&j, "python_line");
		dt_json_str(&j, k->py_line);
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
		const struct dt_soak_failed *fr = &s->failed[i];
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

/* --runs and --jobs: a whole number from 1 to max. */
static int soak_number(const char *val, long max, unsigned *out, const char *what)
{
	char *end;
	long v = strtol(val, &end, 10);
	if (!*val || *end || v < 1 || v > max)
		return dt_fail(DT_EXIT_INTERNAL, "soak: %s takes a number from 1 to %ld", what,
		               max);
	*out = (unsigned)v;
	return 0;
}

static int soak_opt_runs(void *args, const char *val)
{
	return soak_number(val, 1000000, &((struct dt_soak_opts *)args)->runs, "--runs");
}

static int soak_opt_jobs(void *args, const char *val)
{
	return soak_number(val, 256, &((struct dt_soak_opts *)args)->jobs, "--jobs");
}

static int soak_opt_timeout(void *args, const char *val)
{
	char *end;
	double v = strtod(val, &end);
	if (!*val || *end || !(v > 0))
		return dt_fail(DT_EXIT_INTERNAL,
		               "soak: --timeout takes seconds, such as 30 or 2.5");
	((struct dt_soak_opts *)args)->timeout = v;
	return 0;
}

/* --json is a switch, as everywhere; a file is --json=FILE */
static int soak_opt_json(void *args, const char *val)
{
	struct dt_soak_opts *o = args;
	if (!val) {
		o->json = 1;
		return 0;
	}
	if (!*val)
		return dt_fail(DT_EXIT_INTERNAL, "soak: --json= needs a file name");
	o->json_file = val;
	return 0;
}

static int soak_opt_seed(void *args, const char *val)
{
	struct dt_soak_opts *o = args;
	if (dt_parse_u64(val, &o->seed) < 0)
		return dt_fail(DT_EXIT_INTERNAL,
		               "soak: --seed takes a whole number from 0 to 18446744073709551615");
	o->have_seed = 1;
	return 0;
}

/* Checked here, kept as given: each run parses it again. */
static int soak_opt_deny(void *args, const char *val)
{
	struct dt_soak_opts *o = args;
	struct dt_deny_rule rule;
	char derr[1024];
	if (dt_deny_parse(val, &rule, derr, sizeof(derr)) < 0)
		return dt_fail_lines(DT_EXIT_INTERNAL, "soak: %s", derr);
	dt_deny_rule_free(&rule);
	o->deny[o->ndeny++] = val;
	return 0;
}

static const struct dt_option soak_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct dt_soak_opts, __VA_ARGS__)
#include "opts_soak.def"
#undef DT_OPTION
};

const struct dt_cmd_options soak_cmd = {"soak",
                                        soak_usage,
                                        soak_after,
                                        soak_options,
                                        sizeof(soak_options) / sizeof(soak_options[0]),
                                        DT_EXIT_INTERNAL,
                                        NULL,
                                        1,
                                        NULL};

/* Parses the options into o. Returns -1 to go on, else the exit status
 * (with the message printed, or the help). */
static int soak_parse(int argc, char **argv, struct dt_soak_opts *o)
{
	struct dt_parse_end end;
	int rc = dt_parse_command(&soak_cmd, argc, argv, o, &end);
	if (rc >= 0)
		return rc;
	if (end.index >= argc)
		return dt_fail(
		    DT_EXIT_INTERNAL,
		    "soak: no command given; usage: denytrace soak [options] -- COMMAND...");
	o->cmd = argv + end.index;
	return -1;
}

static int soak_separates(unsigned nfail, unsigned npass)
{
	return nfail && !npass;
}

/* "  openat /x/k.db-journal EROFS (injected): in 3 of 4 failing runs" */
static void soak_put_refusal(FILE *f, const struct dt_soak *s, const struct dt_soak_key *k)
{
	dt_put_safe(f, k->op);
	fputc(' ', f);
	dt_put_safe(f, k->path);
	fprintf(f, " %s%s", dt_errno_name(k->err), k->injected ? " (injected)" : "");
	if (k->py_line) {
		fputs(" from ", f);
		dt_put_safe(f, k->py_line);
	}
	fprintf(f, ": in %u of %u failing runs\n", k->nfail, s->failures);
}

/* A problem seen only in failing runs, as the report prints a finding:
 * title, cause, the fix once, its refusals seen only in failing runs. */
static void soak_print_problem(const struct dt_soak *s, size_t p, size_t nth)
{
	const struct dt_soak_problem *pr = &s->problems[p];
	printf("\nPROBLEM %zu: ", nth);
	dt_put_safe(stdout, pr->title);
	printf("\n  in %u of %u failing runs and in no passing run\n  cause    %s\n  advice   ",
	       pr->nfail, s->failures, dt_cause_name(pr->cause));
	dt_put_safe(stdout, pr->advice);
	fputc('\n', stdout);
	int first = 1;
	for (size_t k = 0; k < s->nkeys; k++)
		if (s->keys[k].problem == p && soak_separates(s->keys[k].nfail, s->keys[k].npass)) {
			fputs(first ? "  refused  " : "           ", stdout);
			soak_put_refusal(stdout, s, &s->keys[k]);
			first = 0;
		}
}

/* The problems present in failing runs and absent from passing ones, then
 * any other refusal seen only in failing runs; or that there are none. */
static void soak_print_separating(const struct dt_soak *s)
{
	size_t nsep = 0, nprob = 0, other = 0;
	for (size_t p = 0; p < s->nproblems; p++)
		nprob += soak_separates(s->problems[p].nfail, s->problems[p].npass);
	for (size_t k = 0; k < s->nkeys; k++) {
		const struct dt_soak_key *kk = &s->keys[k];
		int sep = soak_separates(kk->nfail, kk->npass);
		nsep += sep;
		other += sep && (kk->problem == SIZE_MAX ||
		                 !soak_separates(s->problems[kk->problem].nfail,
		                                 s->problems[kk->problem].npass));
	}
	size_t nfailing = 0;
	for (size_t k = 0; k < s->nkeys; k++)
		nfailing += s->keys[k].nfail != 0;
	if (!nfailing) {
		printf("No refusal was recorded in any failing run: the failures have another "
		       "cause.\n");
		return;
	}
	if (!nsep) {
		printf("No refusal separates failing runs from passing ones: every refusal in "
		       "them was also seen in passing runs, so the failures have another cause.\n");
		return;
	}
	char phrase[64];
	dt_problems_phrase(nprob, phrase, sizeof(phrase));
	phrase[0] = (char)(phrase[0] == 'n' ? 'N' : phrase[0]);
	printf("%s in failing runs and in no passing run (the likely cause):\n", phrase);
	for (size_t p = 0, nth = 0; p < s->nproblems; p++)
		if (soak_separates(s->problems[p].nfail, s->problems[p].npass))
			soak_print_problem(s, p, ++nth);
	if (!other)
		return;
	printf("\nRefusals seen only in failing runs, of problems passing runs had too:\n");
	for (size_t k = 0; k < s->nkeys; k++) {
		const struct dt_soak_key *kk = &s->keys[k];
		if (soak_separates(kk->nfail, kk->npass) &&
		    (kk->problem == SIZE_MAX || !soak_separates(s->problems[kk->problem].nfail,
		                                                s->problems[kk->problem].npass))) {
			fputs("  ", stdout);
			soak_put_refusal(stdout, s, kk);
		}
	}
}

/* "denytrace run --seed N [--deny RULE]... -- COMMAND", pasteable. */
/* The command's words with their secrets redacted (secrets.h), each
 * through put: CI keeps JUnit files and logs where anyone on the project
 * reads them. */
static void soak_put_cmd(FILE *f, char *const *cmd, void (*put)(FILE *, const char *))
{
	int expect = 0;
	for (char *const *c = cmd; *c; c++) {
		size_t n = strlen(*c);
		int before = expect;
		size_t need = dt_redact_arg(*c, n, NULL, 0, &expect);
		char *word = malloc(need + 1);
		if (!word)
			return;
		word[dt_redact_arg(*c, n, word, need, &before)] = 0;
		if (c != cmd)
			fputc(' ', f);
		put(f, word);
		free(word);
	}
}

static void soak_put_xml_attr(FILE *f, const char *s)
{
	dt_xml_put(f, s, 0);
}

static void soak_put_rerun(FILE *f, const struct dt_soak_opts *o, int index)
{
	fprintf(f, "denytrace run --seed %llu", (unsigned long long)dt_soak_seed(o, index));
	for (size_t k = 0; k < o->ndeny; k++) {
		fputs(" --deny ", f);
		dt_shell_word(f, o->deny[k]);
	}
	fputs(" -- ", f);
	soak_put_cmd(f, o->cmd, dt_shell_word);
	fputc('\n', f);
}

/* The failing runs, how to rerun the first, and (unless quiet) its log
 * tail and report. */
static void soak_print_failures(const struct dt_soak *s, const struct dt_soak_opts *o,
                                const char *dir)
{
	soak_print_separating(s);
	printf("\nFailing runs:");
	for (size_t k = 0; k < s->nfailed && k < 20; k++)
		printf(" #%d (%s %d)", s->failed[k].index,
		       s->failed[k].timed_out ? "timed out," : "exit", s->failed[k].status);
	printf("%s\n", s->nfailed > 20 ? " ..." : "");
	if (o->keep)
		printf("Rings of failing runs kept in %s (run-N.ring, run-N.log).\n", o->keep);
	fputs("Rerun one alone: ", stdout);
	soak_put_rerun(stdout, o, s->first_fail);
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
	    dt_report_build(&rep, &ro, err, sizeof(err)) == 0) {
		/* an empty report says less than one line */
		if (rep.denials)
			dt_report_text(stdout, &rep, 0, 0);
		else
			printf("It recorded no refusal.\n");
	}
	dt_report_free(&rep);
}

/* The files the summary goes to, begun before the first run (a path that
 * cannot be written must not cost the summary of a long soak), each under
 * a temporary name of its own until the summary is whole (outfile.h). */
struct soak_outputs {
	struct dt_outfile out, json, junit; /* -o, --json=FILE, --junit FILE */
	FILE *junit_f;                      /* junit.f, or stdout for "-" */
};

static void soak_abort_outputs(struct soak_outputs *f)
{
	if (f->out.f)
		dt_outfile_abort(&f->out);
	if (f->json.f)
		dt_outfile_abort(&f->json);
	if (f->junit.f)
		dt_outfile_abort(&f->junit);
}

/* Begins -o (then made stdout), --json=FILE and --junit. Returns -1 to go
 * on, else the exit status with the message printed. */
static int soak_open_outputs(const struct dt_soak_opts *o, struct soak_outputs *f)
{
	char err[1024];
	const char *bad = NULL;
	if (o->out && dt_outfile_begin(&f->out, o->out, DT_OUT_NEW_OR_OWN, err, sizeof(err)) < 0)
		bad = o->out;
	else if (o->json_file &&
	         dt_outfile_begin(&f->json, o->json_file, DT_OUT_NEW_OR_OWN, err, sizeof(err)) < 0)
		bad = o->json_file;
	else if (o->junit && strcmp(o->junit, "-") &&
	         dt_outfile_begin(&f->junit, o->junit, DT_OUT_NEW_OR_OWN, err, sizeof(err)) < 0)
		bad = o->junit;
	else if (o->out && (fflush(stdout) != 0 || dup2(fileno(f->out.f), 1) < 0)) {
		snprintf(err, sizeof(err), "%s", strerror(errno));
		bad = o->out;
	}
	if (bad) {
		soak_abort_outputs(f);
		return dt_fail(DT_EXIT_INTERNAL, "soak: cannot write %s (%s); nothing was run", bad,
		               err);
	}
	f->junit_f = !o->junit ? NULL : strcmp(o->junit, "-") ? f->junit.f : stdout;
	return -1;
}

/* Puts each finished output in its place; 0, or an exit status when one
 * could not be written. */
static int soak_commit_outputs(const struct dt_soak_opts *o, struct soak_outputs *f)
{
	int rc = 0;
	if (f->out.f && (fflush(stdout) != 0 || dt_outfile_commit(&f->out) != 0))
		rc =
		    dt_fail(DT_EXIT_INTERNAL, "soak: cannot write %s: %s", o->out, strerror(errno));
	if (f->json.f && dt_outfile_commit(&f->json) != 0)
		rc = dt_fail(DT_EXIT_INTERNAL, "soak: cannot write %s: %s", o->json_file,
		             strerror(errno));
	if (f->junit.f && dt_outfile_commit(&f->junit) != 0)
		rc = dt_fail(DT_EXIT_INTERNAL, "soak: cannot write %s: %s", o->junit,
		             strerror(errno));
	soak_abort_outputs(f);
	return rc;
}

/* The summary, as text or (--json) JSON, on stdout (-o FILE already put
 * there); and --json=FILE. Returns 0 or an exit status. */
static int soak_summary(const struct dt_soak *s, const struct dt_soak_opts *o,
                        const struct soak_outputs *f, const char *dir, double elapsed,
                        int interrupted)
{
	if (o->json) {
		soak_json(stdout, s, o->seed, interrupted);
	} else {
		double lo, hi;
		dt_soak_wilson(s->failures, s->done, &lo, &hi);
		printf("soak: %u run%s%s in %.1f s, %u failed: flake rate %.1f%% (95%% CI "
		       "%.1f%%-%.1f%%, Wilson); seed %llu\n",
		       s->done, s->done == 1 ? "" : "s", interrupted ? " (interrupted)" : "",
		       elapsed, s->failures, s->done ? 100.0 * s->failures / s->done : 0.0,
		       100 * lo, 100 * hi, (unsigned long long)o->seed);
		if (s->failures)
			soak_print_failures(s, o, dir);
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		return dt_fail(DT_EXIT_INTERNAL, "soak: writing the summary failed");
	if (f->json.f)
		soak_json(f->json.f, s, o->seed, interrupted);
	return 0;
}

static int soak_result_order(const void *a, const void *b)
{
	const struct dt_soak_result *x = a, *y = b;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* A failing run's <failure>: the refusals of this run seen only in failing
 * runs as the message; them, their problems, the kept ring and how to
 * rerun it as the text. */
static void soak_junit_failure(FILE *f, const struct dt_soak *s, const struct dt_soak_opts *o,
                               const struct dt_soak_result *r)
{
	char *msg = NULL, *body = NULL;
	size_t msglen = 0, bodylen = 0, n = 0;
	FILE *m = open_memstream(&msg, &msglen), *b = open_memstream(&body, &bodylen);
	if (!m || !b) {
		if (m)
			fclose(m);
		if (b)
			fclose(b);
		return;
	}
	fprintf(b, "%s %d\n", r->timed_out ? "timed out after --timeout; status" : "exit status",
	        r->status);
	for (size_t i = 0; i < r->nkeys; i++) {
		const struct dt_soak_key *k = &s->keys[r->keys[i]];
		if (!soak_separates(k->nfail, k->npass))
			continue;
		fprintf(m, "%s%s %s %s%s", n++ ? "; " : "", k->op, k->path, dt_errno_name(k->err),
		        k->injected ? " (injected)" : "");
		fputs(n == 1 ? "refusals seen only in failing runs:\n  " : "  ", b);
		soak_put_refusal(b, s, k);
		if (k->problem != SIZE_MAX) {
			fputs("    problem: ", b);
			dt_put_safe(b, s->problems[k->problem].title);
			fputs("\n    advice: ", b);
			dt_put_safe(b, s->problems[k->problem].advice);
			fputc('\n', b);
		}
	}
	if (!n)
		fprintf(m, "%s %d; no refusal of this run was seen only in failing runs",
		        r->timed_out ? "timed out, status" : "exit status", r->status);
	const struct dt_soak_failed *fr = NULL;
	for (size_t i = 0; i < s->nfailed; i++)
		if (s->failed[i].index == r->index)
			fr = &s->failed[i];
	if (fr && fr->ring[0])
		fprintf(b, "ring: %s (denytrace report %s)\n", fr->ring, fr->ring);
	else
		fputs("ring: not kept (soak --keep DIR keeps the rings of failing runs)\n", b);
	fputs("rerun: ", b);
	soak_put_rerun(b, o, r->index);
	fclose(m);
	fclose(b);
	fprintf(f, "      <failure type=\"%s\" message=\"", r->timed_out ? "timeout" : "exit");
	dt_xml_put(f, msg, 0);
	fputs("\">", f);
	dt_xml_put(f, body, 1);
	fputs("</failure>\n", f);
	free(msg);
	free(body);
}

/* The JUnit XML that CI reads (Jenkins, GitLab, GitHub Actions reporters):
 * the attributes and elements the Ant/Jenkins schema requires, no more. */
static void soak_junit(FILE *f, struct dt_soak *s, const struct dt_soak_opts *o, time_t started,
                       double secs)
{
	char host[256] = "localhost", ts[32];
	struct tm tm;
	if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
		snprintf(host, sizeof(host), "localhost");
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", gmtime_r(&started, &tm));
	qsort(s->results, s->nresults, sizeof(*s->results), soak_result_order);
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
	        "  <testsuite name=\"denytrace soak\" package=\"denytrace\" id=\"0\" "
	        "timestamp=\"%s\" hostname=\"",
	        ts);
	dt_xml_put(f, host, 0);
	fprintf(f, "\" tests=\"%zu\" failures=\"%u\" errors=\"0\" time=\"%.3f\">\n", s->nresults,
	        s->failures, secs);
	double lo, hi;
	dt_soak_wilson(s->failures, s->done, &lo, &hi);
	fprintf(f,
	        "    <properties>\n      <property name=\"seed\" value=\"%llu\"/>\n"
	        "      <property name=\"flake_rate\" value=\"%.4f\"/>\n"
	        "      <property name=\"flake_rate_ci95\" value=\"%.4f-%.4f\"/>\n"
	        "      <property name=\"command\" value=\"",
	        (unsigned long long)o->seed, s->done ? (double)s->failures / s->done : 0.0, lo, hi);
	soak_put_cmd(f, o->cmd, soak_put_xml_attr);
	fputs("\"/>\n    </properties>\n", f);
	for (size_t i = 0; i < s->nresults; i++) {
		const struct dt_soak_result *r = &s->results[i];
		fprintf(f,
		        "    <testcase name=\"run %d (seed %llu)\" classname=\"denytrace.soak\" "
		        "time=\"%.3f\"%s\n",
		        r->index, (unsigned long long)dt_soak_seed(o, r->index), r->secs,
		        r->failed ? ">" : "/>");
		if (r->failed) {
			soak_junit_failure(f, s, o, r);
			fputs("    </testcase>\n", f);
		}
	}
	fputs("    <system-out/>\n    <system-err/>\n  </testsuite>\n</testsuites>\n", f);
}

/* The temporary directory's template: under $TMPDIR, else /tmp. */
static void soak_tmp_template(char *dir, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, cap, "%s/denytrace-soak.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
}

int cmd_soak(int argc, char **argv)
{
	struct dt_soak_opts o = {.runs = 20, .jobs = 1};
	struct soak_outputs files = {0};
	o.deny = calloc((size_t)argc + 1, sizeof(*o.deny));
	char self[PATH_MAX], dir[PATH_MAX];
	soak_tmp_template(dir, sizeof(dir));
	int rc = soak_parse(argc, argv, &o);
	if (rc < 0)
		rc = soak_open_outputs(&o, &files);
	if (rc < 0)
		rc = dt_soak_prepare(&o, self, sizeof(self), dir);
	if (rc >= 0) {
		soak_abort_outputs(&files);
		free(o.deny);
		return rc;
	}

	struct sigaction sa = {0};
	sa.sa_handler = soak_on_signal;
	sigemptyset(&sa.sa_mask);
	static const int stops[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction old[3];
	for (int k = 0; k < 3; k++)
		sigaction(stops[k], &sa, &old[k]);
	struct dt_soak s = {0};
	s.first_fail = -1;
	char infra_msg[1024] = "";
	double t0 = dt_soak_now();
	time_t started = time(NULL);
	int infra = dt_soak_loop(&s, &o, self, dir, t0, infra_msg, sizeof(infra_msg));
	int interrupted = dt_soak_stop != 0;
	for (int k = 0; k < 3; k++)
		sigaction(stops[k], &old[k], NULL);

	if (infra && !s.done) {
		dt_soak_remove_dir(dir);
		soak_abort_outputs(&files);
		free(o.deny);
		return dt_fail(DT_EXIT_INTERNAL, "soak: %s", infra_msg);
	}
	double el = dt_soak_now() - t0;
	rc = soak_summary(&s, &o, &files, dir, el, interrupted);
	if (!rc && files.junit_f)
		soak_junit(files.junit_f, &s, &o, started, el);
	if (rc)
		soak_abort_outputs(&files);
	else
		rc = soak_commit_outputs(&o, &files);
	dt_soak_remove_dir(dir); /* the first failing run's files, unless kept */
	dt_soak_free(&s);
	free(o.deny);
	if (rc)
		return rc;
	return s.failures ? DT_EXIT_FOUND : interrupted ? DT_EXIT_INTERRUPTED : DT_EXIT_OK;
}
