/* SPDX-License-Identifier: MIT */
/* denytrace soak: run a worker many times under the probe (and --deny
 * rules), and name the refusals that separate failing runs from passing
 * ones. Each run is a `denytrace run` of its own, under a keeper that
 * kills its whole tree (soak.c), with its own ring. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "denyrule.h"
#include "options.h"
#include "outfile.h"
#include "soak_session.h"

static const char soak_usage[] =
    "usage: denytrace soak [options] -- COMMAND [ARGS...]\n"
    "       denytrace soak --merge [options] SUMMARY.json...\n"
    "\n"
    "Runs COMMAND many times, each under `denytrace run` with its own ring, J at\n"
    "a time, and reports how often it fails and which refusals were seen in\n"
    "failing runs but never in passing ones: the likely cause of the flake.\n"
    "With --shard K/N it runs one machine's share of the runs; --merge adds the\n"
    "shards' summaries up to the one a single machine would have printed.\n"
    "\n";

static const char soak_after[] =
    "A progress line (runs, failures, refusals, elapsed time, rate) is shown on a\n"
    "terminal. Ctrl-C (or SIGTERM, SIGHUP) stops the runs in flight, with every\n"
    "process they started, and prints the summary of the runs that finished. The\n"
    "flake rate comes with a 95% Wilson interval. -o, --json=FILE and --junit are\n"
    "opened before the first run. Temporary files go under $TMPDIR (else /tmp).\n"
    "\n";

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

/* --shard K/N: 1 <= K <= N <= 100000 */
static int soak_opt_shard(void *args, const char *val)
{
	struct dt_soak_opts *o = args;
	unsigned k, n;
	char tail;
	if (sscanf(val, "%u/%u%c", &k, &n, &tail) != 2 || !k || k > n || n > 100000)
		return dt_fail(DT_EXIT_INTERNAL,
		               "soak: --shard takes K/N, shard K (from 1) of N, such as 2/4");
	o->shard = k;
	o->nshards = n;
	return 0;
}

static int soak_opt_shards(void *args, const char *val)
{
	return soak_number(val, 100000, &((struct dt_soak_opts *)args)->shards, "--shards");
}

/* --shards N takes K from the engine's index; a shard needs the seed every
 * other shard uses, and --merge runs nothing. */
static int soak_check_shard(struct dt_soak_opts *o)
{
	if (o->merge && (o->nshards || o->shards || o->ndeny))
		return dt_fail(DT_EXIT_INTERNAL,
		               "soak: --merge runs nothing: --shard, --shards and --deny are "
		               "the shards' own (their summaries say them)");
	if (o->shards && o->nshards && o->shards != o->nshards)
		return dt_fail(DT_EXIT_INTERNAL, "soak: --shards %u and --shard %u/%u disagree",
		               o->shards, o->shard, o->nshards);
	if (o->shards && !o->nshards) {
		const char *idx = getenv("JOB_COMPLETION_INDEX");
		char *end;
		unsigned long k = idx && *idx ? strtoul(idx, &end, 10) : 0;
		if (!idx || !*idx || *end || k >= o->shards)
			return dt_fail(
			    DT_EXIT_INTERNAL,
			    "soak: --shards %u takes this shard's number from "
			    "$JOB_COMPLETION_INDEX (0 to %u, as a Kubernetes Indexed Job "
			    "sets it), which is %s%s%s; give --shard K/N instead",
			    o->shards, o->shards - 1, idx ? "'" : "not set", idx ? idx : "",
			    idx ? "'" : "");
		o->shard = (unsigned)k + 1;
		o->nshards = o->shards;
	}
	if (o->nshards && !o->have_seed)
		return dt_fail(DT_EXIT_INTERNAL,
		               "soak: --shard needs --seed: every shard must give each run the "
		               "seed one soak would (pick one number, the same for all shards)");
	return -1;
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
	if (end.index >= argc && o->merge)
		return dt_fail(DT_EXIT_INTERNAL,
		               "soak: --merge needs the shards' summaries: denytrace soak --merge "
		               "[options] SUMMARY.json...");
	if (end.index >= argc)
		return dt_fail(
		    DT_EXIT_INTERNAL,
		    "soak: no command given; usage: denytrace soak [options] -- COMMAND...");
	o->cmd = argv + end.index;
	return -1;
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
	struct dt_soak_outputs files = {0};
	o.deny = calloc((size_t)argc + 1, sizeof(*o.deny));
	char self[PATH_MAX], dir[PATH_MAX];
	soak_tmp_template(dir, sizeof(dir));
	int rc = soak_parse(argc, argv, &o);
	if (rc < 0)
		rc = soak_check_shard(&o);
	if (rc < 0)
		rc = dt_soak_outputs_open(&o, &files);
	if (rc < 0 && o.merge) {
		const char **deny = o.deny;
		rc = dt_soak_session_merge(&o, &files);
		o.deny = deny;
	} else if (rc < 0) {
		rc = dt_soak_prepare(&o, self, sizeof(self), dir);
		if (rc < 0)
			rc = dt_soak_session_run(&o, &files, self, dir);
		else
			dt_soak_outputs_abort(&files);
	} else {
		dt_soak_outputs_abort(&files);
	}
	free(o.deny);
	return rc;
}
