/* SPDX-License-Identifier: MIT */
/* A soak's summary as JSON (soak_render.h): what tools read, and what soak
 * --merge reads back, so every run and every refusal's counts are in it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "json.h"
#include "names.h"
#include "secrets.h"
#include "soak_render.h"
#include "soakfacts.h"
#include "soakmerge.h"

/* Rates in the JSON carry the precision the text shows (0.1%): no
 * 5.55e-17 where the interval starts at 0. */
static double soak_rate(double x)
{
	/* round() by hand: x is a rate in [0, 1], and the binary needs no libm */
	return (double)(long long)(x * 1000 + 0.5) / 1000;
}

static void soak_json_problem(struct dt_json *j, const struct dt_soak_problem *pr, int with_id)
{
	dt_json_obj(j);
	if (with_id) {
		dt_json_kstr(j, "id", pr->key);
	}
	dt_json_kstr(j, "title", pr->title);
	dt_json_kstr(j, "cause", dt_cause_name((enum dt_cause)pr->cause));
	dt_json_kstr(j, "advice", pr->advice);
	dt_json_kuint(j, "failing_runs", pr->nfail);
	dt_json_kuint(j, "passing_runs", pr->npass);
	dt_json_end_obj(j);
}

/* The problems (findings) of every run (all) or only those of failing
 * runs that no passing run had. */
static void soak_json_problems(struct dt_json *j, const struct dt_soak *s, int all)
{
	dt_json_key(j, all ? "problems" : "separating_problems");
	dt_json_arr(j);
	for (size_t p = 0; p < s->nproblems; p++)
		if (all || dt_soak_separates(s->problems[p].nfail, s->problems[p].npass))
			soak_json_problem(j, &s->problems[p], all);
	dt_json_end_arr(j);
}

static void soak_json_refusal(struct dt_json *j, const struct dt_soak_key *k, int all)
{
	dt_json_obj(j);
	dt_json_kstr(j, "path", k->path);
	dt_json_kstr(j, "op", k->op);
	dt_json_kstr(j, "errno", dt_errno_name(k->err));
	dt_json_kstr(j, "python_line", k->py_line);
	dt_json_kbool(j, "injected", k->injected);
	dt_json_kuint(j, "failing_runs", k->nfail);
	dt_json_kuint(j, "passing_runs", k->npass);
	if (all) {
		dt_json_key(j, "problem");
		if (k->problem == SIZE_MAX)
			dt_json_null(j);
		else
			dt_json_uint(j, k->problem);
	}
	dt_json_end_obj(j);
}

static void soak_json_refusals(struct dt_json *j, const struct dt_soak *s, int all)
{
	dt_json_key(j, all ? "all_refusals" : "separating_refusals");
	dt_json_arr(j);
	for (size_t i = 0; i < s->nkeys; i++)
		if (all || dt_soak_separates(s->keys[i].nfail, s->keys[i].npass))
			soak_json_refusal(j, &s->keys[i], all);
	dt_json_end_arr(j);
}

/* The facts of every run (all), or those seen in failing runs and in no
 * passing run, with the values passing runs had. */
static void soak_json_facts(struct dt_json *j, const struct dt_soak *s, int all)
{
	char others[512];
	dt_json_key(j, all ? "all_facts" : "separating_facts");
	dt_json_arr(j);
	for (size_t i = 0; i < s->nfacts; i++) {
		const struct dt_soak_fact *fa = &s->facts[i];
		if (!all && !dt_soak_fact_separates(s, i))
			continue;
		dt_json_obj(j);
		dt_json_kstr(j, "fact", fa->id);
		dt_json_kstr(j, "what", fa->what);
		dt_json_kstr(j, "subject", fa->subject[0] ? fa->subject : NULL);
		dt_json_kstr(j, "value", fa->value);
		dt_json_kuint(j, "failing_runs", fa->nfail);
		dt_json_kuint(j, "passing_runs", fa->npass);
		if (!all) {
			dt_soak_fact_passing_values(s, i, others, sizeof(others));
			dt_json_kstr(j, "passing_values", others);
		}
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

static void soak_json_failed(struct dt_json *j, const struct dt_soak *s)
{
	dt_json_key(j, "failed_runs");
	dt_json_arr(j);
	for (size_t i = 0; i < s->nfailed; i++) {
		const struct dt_soak_failed *fr = &s->failed[i];
		dt_json_obj(j);
		dt_json_kint(j, "index", fr->index);
		dt_json_kint(j, "exit_status", fr->status);
		dt_json_kbool(j, "timed_out", fr->timed_out);
		dt_json_kuint(j, "seed", fr->seed);
		dt_json_kstr(j, "ring", fr->ring[0] ? fr->ring : NULL);
		dt_json_kuint(j, "host", fr->host);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

static void soak_json_results(struct dt_json *j, const struct dt_soak_summary *m)
{
	const struct dt_soak *s = m->s;
	dt_json_key(j, "results");
	dt_json_arr(j);
	for (size_t i = 0; i < s->nresults; i++) {
		const struct dt_soak_result *r = &s->results[i];
		dt_json_obj(j);
		dt_json_kint(j, "index", r->index);
		dt_json_kuint(j, "seed", dt_soak_seed(m->o, r->index));
		dt_json_kint(j, "exit_status", r->status);
		dt_json_kbool(j, "failed", r->failed);
		dt_json_kbool(j, "timed_out", r->timed_out);
		dt_json_kdouble(j, "secs", (double)(long long)(r->secs * 1000 + 0.5) / 1000);
		dt_json_kuint(j, "host", r->host);
		dt_json_key(j, "refusals");
		dt_json_arr(j);
		for (size_t k = 0; k < r->nkeys; k++)
			dt_json_uint(j, r->keys[k]);
		dt_json_end_arr(j);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

static void soak_json_host_id(struct dt_json *j, const struct dt_host_id *id)
{
	dt_json_kstr(j, "hostname", id->hostname);
	dt_json_kstr(j, "boot_id", id->boot_id[0] ? id->boot_id : NULL);
	dt_json_kstr(j, "machine_id_hash", id->machine[0] ? id->machine : NULL);
}

static void soak_json_hosts(struct dt_json *j, const struct dt_soak *s)
{
	dt_json_key(j, "hosts");
	dt_json_arr(j);
	for (size_t h = 0; h < s->nhosts; h++) {
		const struct dt_soak_host *ho = &s->hosts[h];
		dt_json_obj(j);
		soak_json_host_id(j, &ho->id);
		dt_json_kuint(j, "shard", ho->shard);
		dt_json_kuint(j, "shards", ho->nshards);
		dt_json_kuint(j, "runs", ho->runs);
		dt_json_kuint(j, "failures", ho->failures);
		dt_json_kstr(j, "summary", ho->file);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
	double pv;
	size_t c = dt_soak_concentrated(s, &pv);
	dt_json_key(j, "failures_gather_on");
	if (c == SIZE_MAX) {
		dt_json_null(j);
		return;
	}
	dt_json_obj(j);
	dt_json_kuint(j, "host", c);
	dt_json_kdouble(j, "p_value", pv);
	dt_json_end_obj(j);
}

static void soak_json_words(struct dt_json *j, const struct dt_soak_opts *o)
{
	dt_json_key(j, "command");
	dt_json_arr(j);
	int expect = 0;
	for (char *const *c = o->cmd; c && *c; c++) {
		size_t n = strlen(*c), need;
		int before = expect;
		need = dt_redact_arg(*c, n, NULL, 0, &expect);
		char *word = malloc(need + 1);
		if (!word)
			break;
		word[dt_redact_arg(*c, n, word, need, &before)] = 0;
		dt_json_str(j, word);
		free(word);
	}
	dt_json_end_arr(j);
	dt_json_key(j, "deny");
	dt_json_arr(j);
	for (size_t k = 0; k < o->ndeny; k++)
		dt_json_str(j, o->deny[k]);
	dt_json_end_arr(j);
}

/* What the soak was: enough for --merge to tell shards of one soak from
 * another's. */
static void soak_json_identity(struct dt_json *j, const struct dt_soak_summary *m)
{
	const struct dt_soak_opts *o = m->o;
	dt_json_kstr(j, "format", DT_SOAK_FORMAT);
	dt_json_kuint(j, "format_version", DT_SOAK_FORMAT_VERSION);
	dt_json_kuint(j, "runs_planned", o->runs);
	dt_json_kbool(j, "until_fail", o->until_fail);
	soak_json_words(j, o);
	dt_json_key(j, "shard");
	if (o->nshards && !o->merge) {
		dt_json_obj(j);
		dt_json_kuint(j, "index", o->shard);
		dt_json_kuint(j, "count", o->nshards);
		dt_json_end_obj(j);
	} else {
		dt_json_null(j);
	}
	dt_json_key(j, "host");
	if (m->s->nhosts == 1) {
		dt_json_obj(j);
		soak_json_host_id(j, &m->s->hosts[0].id);
		dt_json_end_obj(j);
	} else {
		dt_json_null(j);
	}
	dt_json_kstr(j, "missing_shards", m->missing && m->missing[0] ? m->missing : NULL);
}

void dt_soak_json(FILE *f, const struct dt_soak_summary *m)
{
	const struct dt_soak *s = m->s;
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
	dt_json_uint(&j, m->o->seed);
	dt_json_key(&j, "interrupted");
	dt_json_bool(&j, m->interrupted);
	dt_json_key(&j, "elapsed_s");
	dt_json_double(&j, (double)(long long)(m->elapsed * 1000 + 0.5) / 1000);
	dt_json_key(&j, "refusals");
	dt_json_uint(&j, s->refusals);
	soak_json_identity(&j, m);
	soak_json_hosts(&j, s);
	soak_json_problems(&j, s, 0);
	soak_json_refusals(&j, s, 0);
	soak_json_facts(&j, s, 0);
	soak_json_failed(&j, s);
	soak_json_problems(&j, s, 1);
	soak_json_refusals(&j, s, 1);
	soak_json_facts(&j, s, 1);
	soak_json_results(&j, m);
	dt_json_end_obj(&j);
	fputc('\n', f);
}
