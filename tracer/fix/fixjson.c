/* SPDX-License-Identifier: MIT */
/* denytrace fix's JSON (fixout.h). */
#include "fixout.h"

#include <stdio.h>

#include "json.h"
#include "names.h"
#include "soak.h"

/* ---- JSON ---- */

static void fix_json_strs(struct dt_json *j, const char *key, char *const *v, size_t n)
{
	dt_json_key(j, key);
	dt_json_arr(j);
	for (size_t i = 0; i < n; i++)
		dt_json_str(j, v[i]);
	dt_json_end_arr(j);
}

static void fix_json_verdict(struct dt_json *j, const struct dt_verify *v, size_t i,
                             const char *no_verify)
{
	const struct dt_verify_result *r = &v->v[i];
	dt_json_key(j, "verify");
	dt_json_obj(j);
	dt_json_key(j, "state");
	dt_json_str(j, r->state == DT_VERIFY_FIXED       ? "fixed"
	               : r->state == DT_VERIFY_NOT_FIXED ? "not-fixed"
	                                                 : "cannot-verify");
	dt_json_kstr(j, "why_not",
	             r->state != DT_VERIFY_CANNOT ? NULL
	             : no_verify                  ? no_verify
	             : v->rerun_why[0]            ? v->rerun_why
	                                          : NULL);
	dt_json_kuint(j, "refusals_before", r->before);
	if (v->runs) {
		dt_json_kuint(j, "runs_refused_before", r->runs_before);
		dt_json_kuint(j, "runs_refused_after", r->runs_after);
	} else {
		dt_json_kuint(j, "refusals_after", r->after);
	}
	dt_json_end_obj(j);
}

static void fix_json_one(struct dt_json *j, const struct dt_fix_inputs *in,
                         const struct dt_fix_plan *plan, const struct dt_verify *v, size_t i)
{
	const struct dt_fix *x = &plan->fixes[i];
	dt_json_obj(j);
	dt_json_kstr(j, "title", in->titles[i]);
	dt_json_kstr(j, "cause", dt_cause_name(in->p[i].cause));
	dt_json_kstr(j, "root", in->p[i].root ? in->p[i].root->path : NULL);
	dt_json_kuint(j, "refusals", in->counts[i]);
	dt_json_kstr(j, "kind", dt_fix_kind_name(x->kind));
	dt_json_kstr(j, "sandbox", dt_fix_sandbox_name(x->sandbox));
	dt_json_kstr(j, "change", x->change);
	fix_json_strs(j, "copy", x->copy, x->ncopy);
	dt_json_kstr(j, "why", x->why);
	dt_json_kstr(j, "launcher", x->launcher);
	dt_json_kbool(j, "named_by_traced_program", x->claimed);
	dt_json_kbool(j, "candidate", x->candidate);
	fix_json_strs(j, "grants", x->grants, x->ngrants);
	if (v && v->v)
		fix_json_verdict(j, v, i, x->no_verify);
	dt_json_end_obj(j);
}

static void fix_json_soak(struct dt_json *j, const char *key, unsigned done, unsigned failed)
{
	double lo, hi;
	dt_soak_wilson(failed, done, &lo, &hi);
	dt_json_key(j, key);
	dt_json_obj(j);
	dt_json_kuint(j, "runs", done);
	dt_json_kuint(j, "failures", failed);
	dt_json_kdouble(j, "flake_rate", done ? (double)failed / done : 0.0);
	dt_json_kdouble(j, "ci_low", lo);
	dt_json_kdouble(j, "ci_high", hi);
	dt_json_end_obj(j);
}

static void fix_json_new(struct dt_json *j, const struct dt_verify *v)
{
	dt_json_kuint(j, "new_refusals", v->new_refusals);
	if (v->runs) {
		dt_json_kuint(j, "runs_with_new_refusals", v->runs_new);
	}
	dt_json_key(j, "new");
	dt_json_arr(j);
	for (size_t i = 0; i < v->nnew_paths; i++) {
		const struct dt_verify_new *n = &v->new_paths[i];
		dt_json_obj(j);
		dt_json_kstr(j, "path", n->path);
		dt_json_kstr(j, "op", n->op);
		dt_json_kstr(j, "errno", dt_errno_name(n->err));
		dt_json_kuint(j, "count", n->count);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

static void fix_json_run(struct dt_json *j, const struct dt_verify *v)
{
	size_t n = 0;
	while (v->cmd && v->cmd[n])
		n++;
	dt_json_key(j, "verified");
	dt_json_obj(j);
	fix_json_strs(j, "command", v->cmd, n);
	dt_json_kstr(j, "cwd", v->cwd);
	if (v->runs) {
		fix_json_soak(j, "before", v->done_before, v->failed_before);
		fix_json_soak(j, "after", v->done_after, v->failed_after);
		dt_json_kbool(j, "interrupted", v->interrupted);
	} else {
		dt_json_kint(j, "exit_status", v->status);
		dt_json_kstr(j, "ring", v->ring);
	}
	fix_json_new(j, v);
	dt_json_end_obj(j);
}

static void fix_json_handoffs(struct dt_json *j, const struct dt_handoffs *h,
                              const struct dt_handoff_verify *hv)
{
	dt_json_key(j, "handoff");
	dt_json_arr(j);
	for (size_t i = 0; i < h->n; i++) {
		dt_json_obj(j);
		dt_json_kstr(j, "kind", dt_handoff_kind_name(h->v[i].kind));
		dt_json_kint(j, "pid", h->v[i].pid);
		dt_json_kstr(j, "fix", h->v[i].fix);
		dt_json_kstr(j, "env_vars", h->v[i].fix_env_vars);
		dt_json_kstr(j, "override", h->v[i].fix_override);
		dt_handoff_verify_json(j, hv, i);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

void dt_fix_json(FILE *f, const char *const *rings, size_t nrings, const struct dt_fix_inputs *in,
                 const struct dt_fix_plan *plan, const struct dt_verify *v,
                 const struct dt_handoffs *h, const struct dt_handoff_verify *hv)
{
	struct dt_json j;
	dt_json_init(&j, f, 1);
	dt_json_obj(&j);
	dt_json_key(&j, "version");
	dt_json_int(&j, 1);
	fix_json_strs(&j, "rings", (char *const *)rings, nrings);
	dt_json_key(&j, "sandbox");
	dt_json_str(&j, dt_fix_sandbox_name(plan->sandbox));
	dt_json_key(&j, "cwd");
	dt_json_str(&j, in->l.cwd);
	if (plan->argv)
		fix_json_strs(&j, "command_line", plan->argv, plan->argc);
	else {
		dt_json_key(&j, "command_line");
		dt_json_null(&j);
	}
	dt_json_key(&j, "no_rewrite");
	dt_json_str(&j, plan->no_rewrite);
	dt_json_key(&j, "launch_trusted");
	dt_json_bool(&j, in->trusted);
	dt_json_key(&j, "launch_source");
	dt_json_str(&j, in->source);
	dt_json_key(&j, "fixes");
	dt_json_arr(&j);
	for (size_t i = 0; i < plan->n; i++)
		fix_json_one(&j, in, plan, v, i);
	dt_json_end_arr(&j);
	if (v && v->cmd)
		fix_json_run(&j, v);
	fix_json_handoffs(&j, h, hv);
	dt_json_end_obj(&j);
	fputc('\n', f);
}
