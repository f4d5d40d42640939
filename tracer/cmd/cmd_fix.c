/* SPDX-License-Identifier: MIT */
/* denytrace fix: per finding, the change that fixes it; with --verify, the
 * proof (the launch run again with the command-line fix). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fix.h"
#include "fixrun.h"
#include "json.h"
#include "launchfile.h"
#include "names.h"
#include "options.h"
#include "recfmt.h"
#include "report.h"
#include "sidecar.h"
#include "soak.h"

static const char fix_usage[] =
    "usage: denytrace fix [options] [RING...] [-- COMMAND...]\n"
    "\n"
    "Prints, for each finding of the report, the change that fixes it, in the\n"
    "terms of the launch: one Codex -c sandbox_workspace_write.writable_roots=[...]\n"
    "holding every root (and the config.toml lines), a bubblewrap --bind, a\n"
    "Landlock rule, the chmod/chown for exactly the refused uid, or why no sandbox\n"
    "change fixes it. A fix grants only the findings' expected roots; a path\n"
    "outside every root gets its directory, labelled as a candidate.\n"
    "\n"
    "The launch it changes, and that --verify runs, is COMMAND (run here) when\n"
    "given, else the one denytrace run, codex or soak recorded in its launch file\n"
    "(under $XDG_STATE_HOME/denytrace/, default ~/.local/state/denytrace/, or\n"
    "the next place the command's sandbox cannot write: see FILES in the\n"
    "manual). The launch record inside a ring is shown as what the traced\n"
    "program claims and never run: the ring is written by the program being\n"
    "traced.\n"
    "\n";

static const char fix_after[] =
    "fix never changes files, permissions or configuration: it prints those\n"
    "changes. --verify tries a chmod or chown (as root) on an overlay of the\n"
    "directory in a private mount namespace, never on the disk; it writes the new\n"
    "ring beside the first one (RING.fixed.ring) and the proof for `denytrace\n"
    "evidence` (RING.fix.md). It exits 0 only when every finding was verified\n"
    "fixed.\n"
    "\n";

struct fix_opts {
	char **cmd; /* the launch to fix and run, after "--"; NULL: none given */
	int json, verify, yes;
	unsigned runs;
	struct dt_report_opts o;
	const char **roots;
	const char **rings;
	size_t nrings;
};

static int fix_opt_format(void *args, const char *val)
{
	if (strcmp(val, "text") && strcmp(val, "json"))
		return dt_fail(DT_EXIT_USAGE, "fix: --format takes text or json");
	((struct fix_opts *)args)->json = !strcmp(val, "json");
	return 0;
}

static int fix_opt_runs(void *args, const char *val)
{
	char *end;
	long v = strtol(val, &end, 10);
	if (!*val || *end || v < 1 || v > 100000)
		return dt_fail(DT_EXIT_USAGE, "fix: --runs takes a number from 1 to 100000");
	((struct fix_opts *)args)->runs = (unsigned)v;
	return 0;
}

static const struct dt_option fix_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct fix_opts, __VA_ARGS__)
#include "opts_fix.def"
#undef DT_OPTION
};

const struct dt_cmd_options fix_cmd = {
    "fix",         fix_usage, fix_after, fix_options, sizeof(fix_options) / sizeof(fix_options[0]),
    DT_EXIT_USAGE, NULL,      0,         NULL};

/* Returns -1 to go on, else the exit status. */
static int fix_parse(int argc, char **argv, struct fix_opts *o)
{
	int end = 1;
	while (end < argc && strcmp(argv[end], "--"))
		end++;
	if (end < argc && end + 1 == argc)
		return dt_fail(DT_EXIT_USAGE, "fix: -- takes the launch's command after it");
	if (end < argc)
		o->cmd = argv + end + 1;
	int rc = dt_parse_options(&fix_cmd, end, argv, o, o->rings, &o->nrings);
	if (rc >= 0)
		return rc;
	if (o->runs && !o->verify)
		return dt_fail(DT_EXIT_USAGE,
		               "fix: --runs N soaks the launch for --verify; add --verify");
	if (!o->nrings && (rc = dt_default_ring_check("fix")))
		return rc;
	if (!o->nrings)
		o->rings[o->nrings++] = DT_DEFAULT_RING;
	o->o.roots = o->roots;
	return -1;
}

/* ---- text ---- */

static void fix_text_verdict(FILE *f, const struct dt_verify *v, size_t i, const char *no_verify)
{
	const struct dt_verify_result *r = &v->v[i];
	fprintf(f, "   verified: %s", dt_verify_state_name(r->state));
	if (r->state == DT_VERIFY_CANNOT) {
		fputs(" (", f);
		dt_put_safe(f, no_verify ? no_verify : "nothing was run");
		fputc(')', f);
	} else if (v->runs)
		fprintf(f, ": refused in %u of %u runs (was %u of %u)", r->runs_after,
		        v->done_after, r->runs_before, v->done_before);
	else
		fprintf(f, ": %llu refusal%s (was %llu)", (unsigned long long)r->after,
		        r->after == 1 ? "" : "s", (unsigned long long)r->before);
	if (r->state == DT_VERIFY_NOT_FIXED && v->new_refusals)
		fputs(", but the run brought new refusals (below)", f);
	fputc('\n', f);
}

/* The refusals the fixed run had and the recorded one did not. */
static void fix_text_new(FILE *f, const struct dt_verify *v)
{
	if (!v->new_refusals)
		return;
	fprintf(f, "\nnew refusals in the verified run%s: %llu, so no finding counts as fixed\n",
	        v->runs ? " (all fixed runs)" : "", (unsigned long long)v->new_refusals);
	if (v->runs)
		fprintf(f, "   in %u of %u fixed runs\n", v->runs_new, v->done_after);
	for (size_t i = 0; i < v->nnew_paths; i++) {
		const struct dt_verify_new *n = &v->new_paths[i];
		fputs("   ", f);
		dt_put_safe(f, n->op); /* the program's words: made safe to print */
		fprintf(f, " %s ", dt_errno_name(n->err));
		dt_put_safe(f, n->path);
		fprintf(f, " (%llu)\n", (unsigned long long)n->count);
	}
}

static void fix_text_one(FILE *f, const struct dt_fix_inputs *in, const struct dt_fix_plan *plan,
                         const struct dt_verify *v, size_t i)
{
	const struct dt_fix *x = &plan->fixes[i];
	const struct dt_fix_problem *p = &in->p[i];
	fprintf(f, "\n%zu. ", i + 1);
	dt_put_safe(f, in->titles[i]);
	fprintf(f, " [%s, %llu refusal%s]\n", dt_cause_name(p->cause),
	        (unsigned long long)in->counts[i], in->counts[i] == 1 ? "" : "s");
	if (p->root) {
		fputs("   root:     ", f);
		dt_put_safe(f, p->root->path);
		fputs(" (", f);
		dt_put_safe(f, p->root->source ? p->root->source : "");
		fputs(")\n", f);
	}
	fprintf(f, "   fix:      %s", x->kind == DT_FIX_NONE ? "none can be stated" : "");
	if (x->change)
		dt_put_safe(f, x->change);
	fputc('\n', f);
	for (size_t k = 0; k < x->ncopy; k++) {
		fputs("      ", f);
		dt_put_pasteable(f, x->copy[k]);
		fputc('\n', f);
	}
	const char *label[] = {"why:      ", "launcher: "};
	const char *val[] = {x->why, x->launcher};
	for (size_t k = 0; k < 2; k++)
		if (val[k]) {
			fprintf(f, "   %s", label[k]);
			dt_put_safe(f, val[k]);
			fputc('\n', f);
		}
	if (v && v->v)
		fix_text_verdict(f, v, i, x->no_verify);
}

static void fix_put_argv(FILE *f, char *const *argv)
{
	for (size_t i = 0; argv && argv[i]; i++) {
		fputc(' ', f);
		dt_shell_word(f, argv[i]);
	}
}

static void fix_text_flake(FILE *f, const struct dt_verify *v)
{
	double lo[2], hi[2];
	unsigned done[2] = {v->done_before, v->done_after},
	         fail[2] = {v->failed_before, v->failed_after};
	for (int k = 0; k < 2; k++)
		dt_soak_wilson(fail[k], done[k], &lo[k], &hi[k]);
	fputs("\nflake rate: ", f);
	for (int k = 0; k < 2; k++)
		fprintf(f, "%s%.1f%% (%u of %u runs failed, 95%% CI %.1f%%-%.1f%%)",
		        k ? " -> " : "", done[k] ? 100.0 * fail[k] / done[k] : 0.0, fail[k],
		        done[k], 100 * lo[k], 100 * hi[k]);
	fprintf(f, "%s\n", v->interrupted ? " (interrupted)" : "");
}

static void fix_text(FILE *f, const struct dt_fix_inputs *in, const struct dt_fix_plan *plan,
                     const struct dt_verify *v)
{
	size_t ncl = 0;
	for (size_t i = 0; i < plan->n; i++)
		ncl += plan->fixes[i].kind == DT_FIX_COMMAND_LINE;
	fprintf(f, "%zu problem%s, %zu fixed on the command line (sandbox: %s)\n", plan->n,
	        plan->n == 1 ? "" : "s", ncl, dt_fix_sandbox_name(plan->sandbox));
	if (!in->l.argv)
		fputs("(the ring has no launch record: no command line to change, and nothing "
		      "--verify could run)\n",
		      f);
	else {
		fputs("launch: ", f);
		dt_put_safe(f, in->source);
		fputc('\n', f);
	}
	for (size_t i = 0; i < plan->n; i++)
		fix_text_one(f, in, plan, v, i);
	if (plan->argv && ncl) {
		fputs(in->trusted ? "\nthe launch with every command-line fix:\n   $ cd "
		                  : "\nthe launch the ring claims, with every command-line fix "
		                    "(written by the traced program: read it before you run "
		                    "it):\n   $ cd ",
		      f);
		dt_shell_word(f, in->l.cwd ? in->l.cwd : ".");
		fputs(" &&", f);
		fix_put_argv(f, plan->argv);
		fputc('\n', f);
	} else if (plan->no_rewrite && ncl) {
		fputs("\nthe command line cannot be rewritten: ", f);
		dt_put_safe(f, plan->no_rewrite);
		fputc('\n', f);
	}
	if (v)
		fix_text_new(f, v);
	if (v && v->runs)
		fix_text_flake(f, v);
	else if (v && v->cmd)
		fprintf(f, "\nverified with one run (exit status %d), ring %s\n", v->status,
		        v->ring);
	else if (v && v->v)
		fputs("\nnothing was run: no fix here can be applied to a re-run (each says why), "
		      "so there is no before and after\n",
		      f);
}

/* Failures with no refusal (handoff.h): their change is said, not
 * applied to the command line nor verified. */
static void fix_text_handoffs(FILE *f, const struct dt_handoffs *h)
{
	for (size_t i = 0; i < h->n; i++) {
		fprintf(f, "\nhandoff %zu (%s, no refusal), pid %ld: ", i + 1,
		        dt_handoff_kind_name(h->v[i].kind), h->v[i].pid);
		dt_put_pasteable(f, h->v[i].fix);
		fputc('\n', f);
	}
}

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
	dt_json_key(j, "why_not");
	dt_json_str(j, r->state == DT_VERIFY_CANNOT ? no_verify : NULL);
	dt_json_key(j, "refusals_before");
	dt_json_uint(j, r->before);
	if (v->runs) {
		dt_json_key(j, "runs_refused_before");
		dt_json_uint(j, r->runs_before);
		dt_json_key(j, "runs_refused_after");
		dt_json_uint(j, r->runs_after);
	} else {
		dt_json_key(j, "refusals_after");
		dt_json_uint(j, r->after);
	}
	dt_json_end_obj(j);
}

static void fix_json_one(struct dt_json *j, const struct dt_fix_inputs *in,
                         const struct dt_fix_plan *plan, const struct dt_verify *v, size_t i)
{
	const struct dt_fix *x = &plan->fixes[i];
	dt_json_obj(j);
	dt_json_key(j, "title");
	dt_json_str(j, in->titles[i]);
	dt_json_key(j, "cause");
	dt_json_str(j, dt_cause_name(in->p[i].cause));
	dt_json_key(j, "root");
	dt_json_str(j, in->p[i].root ? in->p[i].root->path : NULL);
	dt_json_key(j, "refusals");
	dt_json_uint(j, in->counts[i]);
	dt_json_key(j, "kind");
	dt_json_str(j, dt_fix_kind_name(x->kind));
	dt_json_key(j, "sandbox");
	dt_json_str(j, dt_fix_sandbox_name(x->sandbox));
	dt_json_key(j, "change");
	dt_json_str(j, x->change);
	fix_json_strs(j, "copy", x->copy, x->ncopy);
	dt_json_key(j, "why");
	dt_json_str(j, x->why);
	dt_json_key(j, "launcher");
	dt_json_str(j, x->launcher);
	dt_json_key(j, "named_by_traced_program");
	dt_json_bool(j, x->claimed);
	dt_json_key(j, "candidate");
	dt_json_bool(j, x->candidate);
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
	dt_json_key(j, "runs");
	dt_json_uint(j, done);
	dt_json_key(j, "failures");
	dt_json_uint(j, failed);
	dt_json_key(j, "flake_rate");
	dt_json_double(j, done ? (double)failed / done : 0.0);
	dt_json_key(j, "ci_low");
	dt_json_double(j, lo);
	dt_json_key(j, "ci_high");
	dt_json_double(j, hi);
	dt_json_end_obj(j);
}

static void fix_json_new(struct dt_json *j, const struct dt_verify *v)
{
	dt_json_key(j, "new_refusals");
	dt_json_uint(j, v->new_refusals);
	if (v->runs) {
		dt_json_key(j, "runs_with_new_refusals");
		dt_json_uint(j, v->runs_new);
	}
	dt_json_key(j, "new");
	dt_json_arr(j);
	for (size_t i = 0; i < v->nnew_paths; i++) {
		const struct dt_verify_new *n = &v->new_paths[i];
		dt_json_obj(j);
		dt_json_key(j, "path");
		dt_json_str(j, n->path);
		dt_json_key(j, "op");
		dt_json_str(j, n->op);
		dt_json_key(j, "errno");
		dt_json_str(j, dt_errno_name(n->err));
		dt_json_key(j, "count");
		dt_json_uint(j, n->count);
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
	dt_json_key(j, "cwd");
	dt_json_str(j, v->cwd);
	if (v->runs) {
		fix_json_soak(j, "before", v->done_before, v->failed_before);
		fix_json_soak(j, "after", v->done_after, v->failed_after);
		dt_json_key(j, "interrupted");
		dt_json_bool(j, v->interrupted);
	} else {
		dt_json_key(j, "exit_status");
		dt_json_int(j, v->status);
		dt_json_key(j, "ring");
		dt_json_str(j, v->ring);
	}
	fix_json_new(j, v);
	dt_json_end_obj(j);
}

static void fix_json_handoffs(struct dt_json *j, const struct dt_handoffs *h)
{
	dt_json_key(j, "handoff");
	dt_json_arr(j);
	for (size_t i = 0; i < h->n; i++) {
		dt_json_obj(j);
		dt_json_key(j, "kind");
		dt_json_str(j, dt_handoff_kind_name(h->v[i].kind));
		dt_json_key(j, "pid");
		dt_json_int(j, h->v[i].pid);
		dt_json_key(j, "fix");
		dt_json_str(j, h->v[i].fix);
		dt_json_key(j, "env_vars");
		dt_json_str(j, h->v[i].fix_env_vars);
		dt_json_key(j, "override");
		dt_json_str(j, h->v[i].fix_override);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

static void fix_json(FILE *f, const struct fix_opts *o, const struct dt_fix_inputs *in,
                     const struct dt_fix_plan *plan, const struct dt_verify *v,
                     const struct dt_handoffs *h)
{
	struct dt_json j;
	dt_json_init(&j, f, 1);
	dt_json_obj(&j);
	dt_json_key(&j, "version");
	dt_json_int(&j, 1);
	fix_json_strs(&j, "rings", (char *const *)o->rings, o->nrings);
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
	fix_json_handoffs(&j, h);
	dt_json_end_obj(&j);
	fputc('\n', f);
}

/* ---- the proof, for evidence ---- */

static void fix_md_verified(FILE *f, const struct dt_fix_inputs *in, const struct dt_verify *v)
{
	fputs("\n## Verified\n\n", f);
	if (v->runs) {
		double lo[2], hi[2];
		dt_soak_wilson(v->failed_before, v->done_before, &lo[0], &hi[0]);
		dt_soak_wilson(v->failed_after, v->done_after, &lo[1], &hi[1]);
		fprintf(f,
		        "Flake rate over %u runs: %.1f%% (95%% CI %.1f%%-%.1f%%) before, %.1f%% "
		        "(95%% CI %.1f%%-%.1f%%) after the fix.\n\n",
		        v->runs, v->done_before ? 100.0 * v->failed_before / v->done_before : 0.0,
		        100 * lo[0], 100 * hi[0],
		        v->done_after ? 100.0 * v->failed_after / v->done_after : 0.0, 100 * lo[1],
		        100 * hi[1]);
	}
	fputs("| finding | result | before | after |\n|---|---|---|---|\n", f);
	for (size_t i = 0; i < in->n; i++) {
		const struct dt_verify_result *r = &v->v[i];
		fprintf(f, "| %zu. ", i + 1);
		dt_md_text(f, in->titles[i]);
		if (v->runs)
			fprintf(f, " | %s | refused in %u of %u runs | %u of %u runs |\n",
			        dt_verify_state_name(r->state), r->runs_before, v->done_before,
			        r->runs_after, v->done_after);
		else if (!v->cmd)
			fprintf(f, " | %s | %llu refusals | not run |\n",
			        dt_verify_state_name(r->state), (unsigned long long)r->before);
		else
			fprintf(f, " | %s | %llu refusals | %llu refusals |\n",
			        dt_verify_state_name(r->state), (unsigned long long)r->before,
			        (unsigned long long)r->after);
	}
	if (v->new_refusals) {
		fprintf(f,
		        "\nThe verified run%s brought %llu new refusal%s, so no finding counts as "
		        "fixed:\n\n",
		        v->runs ? "s" : "", (unsigned long long)v->new_refusals,
		        v->new_refusals == 1 ? "" : "s");
		for (size_t i = 0; i < v->nnew_paths; i++) {
			fputs("- ", f);
			dt_md_text(f, v->new_paths[i].op);
			fprintf(f, " %s ", dt_errno_name(v->new_paths[i].err));
			dt_md_text(f, v->new_paths[i].path);
			fputc('\n', f);
		}
	}
	char *cmd = NULL;
	size_t len = 0;
	FILE *m = v->cmd ? open_memstream(&cmd, &len) : NULL;
	if (!v->cmd)
		fputs("\nNothing was run: no fix is a change to the command line.\n", f);
	if (m) {
		fputs("cd ", m);
		dt_shell_word(m, v->cwd ? v->cwd : ".");
		fputs(" &&", m);
		fix_put_argv(m, v->cmd);
		fclose(m);
		fputs("\nThe command that was run (the user's launch with the fix, under the "
		      "probe):\n\n",
		      f);
		dt_md_fence(f, "sh", cmd);
	}
	free(cmd);
}

/* RING.fix.md: "Suggested fix" and "Verified", appended to report.md by
 * `denytrace evidence` (sidecar.h: never written through what the traced
 * program put there). Returns 0 or -1 with a reason in err. */
static int fix_write_proof(const char *ring, const struct dt_fix_inputs *in,
                           const struct dt_fix_plan *plan, const struct dt_verify *v, char *err,
                           size_t errlen)
{
	struct dt_outfile out;
	if (dt_sidecar_begin(&out, ring, ".fix.md", err, errlen) < 0)
		return -1;
	FILE *f = out.f;
	fputs("\n## Suggested fix\n\n", f);
	for (size_t i = 0; i < plan->n; i++) {
		const struct dt_fix *x = &plan->fixes[i];
		fprintf(f, "%zu. ", i + 1);
		dt_md_text(f, in->titles[i]);
		fputs(": ", f);
		dt_md_text(f, x->change ? x->change : "no fix can be stated");
		if (x->why) {
			fputs(" (", f);
			dt_md_text(f, x->why);
			fputc(')', f);
		}
		fputs("\n\n", f);
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);
		for (size_t k = 0; m && k < x->ncopy; k++)
			fprintf(m, "%s\n", x->copy[k]);
		if (m && fclose(m) == 0 && len)
			dt_md_fence(f, "", text);
		free(text);
	}
	fix_md_verified(f, in, v);
	if (dt_outfile_commit(&out) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", out.path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- running it again ---- */

/* Only an explicit y or yes (any case, surrounding blanks aside) is
 * consent: a mistyped or empty answer must not run a command. */
static int fix_answer_is_yes(const char *line)
{
	char word[8];
	size_t n = 0;
	while (*line == ' ' || *line == '\t')
		line++;
	while (*line && *line != '\n' && *line != ' ' && *line != '\t' && n < sizeof(word) - 1)
		word[n++] = (char)(*line >= 'A' && *line <= 'Z' ? *line - 'A' + 'a' : *line),
		line++;
	word[n] = 0;
	while (*line == ' ' || *line == '\t' || *line == '\r')
		line++;
	return (*line == '\n' || !*line) && (!strcmp(word, "y") || !strcmp(word, "yes"));
}

static void fix_on_interrupt(int sig)
{
	(void)sig; /* only there to make the read return EINTR */
}

/* Reads the answer with Ctrl-C turned into "no": the handler has no
 * SA_RESTART, so the read fails instead of the process dying by the
 * signal with a status a script cannot tell from the command's. */
static int fix_ask(void)
{
	struct sigaction sa = {0}, old;
	sa.sa_handler = fix_on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	fputs("Run it? [y/N] ", stderr);
	char line[64];
	int got = fgets(line, sizeof(line), stdin) != NULL;
	sigaction(SIGINT, &old, NULL);
	if (!got)
		fputc('\n', stderr); /* end of input or ^C left the cursor on the question */
	return got && fix_answer_is_yes(line);
}

/* Says what will run, and asks (or takes --yes). Returns 0 to go on,
 * else an exit status. */
static int fix_confirm(const struct fix_opts *o, const struct dt_fix_inputs *in,
                       const struct dt_fix_plan *plan)
{
	fprintf(stderr, "denytrace: fix --verify runs your command again%s, with the fix, in ",
	        o->runs ? " (as recorded, then fixed, each --runs times)" : "");
	dt_shell_word(stderr, in->l.cwd);
	fputs(":\n  ", stderr);
	fix_put_argv(stderr, plan->argv);
	fputs("\n  (nothing on disk is changed; it writes where the command writes)\n", stderr);
	if (o->yes)
		return 0;
	if (!isatty(0))
		return dt_fail(
		    DT_EXIT_USAGE,
		    "fix: stdin is not a terminal, so nobody can confirm: pass --yes to run "
		    "it; nothing was run");
	if (!fix_ask())
		return dt_fail(DT_EXIT_DECLINED, "fix: not confirmed (only y or yes runs it); "
		                                 "nothing was run");
	return 0;
}

/* Runs the launch with the fix (once or soaked), or, when no fix is a
 * command-line change, nothing; then leaves the proof beside the ring. */
static int fix_verify(const struct fix_opts *o, const struct dt_report *r,
                      const struct dt_fix_inputs *in, const struct dt_fix_plan *plan,
                      struct dt_verify *v)
{
	int rc;
	if (in->l.argv && !plan->argv && !plan->no_rewrite) {
		rc = dt_verify_none(in, v);
	} else {
		if (!in->trusted && plan->argv) {
			fputs("denytrace: fix --verify would run, in ", stderr);
			dt_shell_word(stderr, in->l.cwd ? in->l.cwd : ".");
			fputs(":\n  ", stderr);
			fix_put_argv(stderr, plan->argv);
			fputc('\n', stderr);
		}
		rc = dt_verify_check(in, plan);
		if (!rc)
			rc = fix_confirm(o, in, plan);
		if (rc)
			return rc;
		char after[PATH_MAX];
		char *abs = realpath(o->rings[0], NULL);
		snprintf(after, sizeof(after), "%s.fixed.ring", abs ? abs : o->rings[0]);
		free(abs);
		rc = o->runs ? dt_verify_soak(r, in, plan, o->runs, v)
		             : dt_verify_once(r, in, plan, after, v);
	}
	if (rc)
		return rc;
	char err[1024];
	if (fix_write_proof(o->rings[0], in, plan, v, err, sizeof(err)) < 0)
		fprintf(stderr, "denytrace: fix: %s\n", err);
	return 0;
}

/* 0 only when every finding was verified fixed: a script's
 * `fix --verify --yes && deploy` must not deploy what nobody proved. */
static int fix_verify_status(const struct dt_verify *v)
{
	int rc = DT_EXIT_OK;
	for (size_t i = 0; v->v && i < v->n; i++)
		if (v->v[i].state == DT_VERIFY_NOT_FIXED)
			return DT_EXIT_FOUND;
		else if (v->v[i].state == DT_VERIFY_CANNOT)
			rc = DT_EXIT_UNVERIFIED;
	return rc;
}

/* Which launch fix works on: the command after "--" (run here), else the
 * launch file of the first ring when the traced command could not have
 * written it, else only the ring's claim (shown, never run). Returns 0,
 * or -1 when out of memory. */
static int fix_trust(const struct fix_opts *o, const struct dt_report *r, struct dt_fix_inputs *in,
                     struct dt_launchfile *lf, char *why, size_t cap, char *cwd, size_t cwdcap)
{
	char lwhy[PATH_MAX + 256];
	if (o->cmd) {
		if (!getcwd(cwd, cwdcap))
			snprintf(cwd, cwdcap, ".");
		return dt_fix_inputs_trust(in, o->cmd, NULL, cwd, 0, "the command after --");
	}
	if (dt_launchfile_find(o->rings[0], lf, lwhy, sizeof(lwhy)) < 0) {
		snprintf(why, cap,
		         "the ring's launch record, which is the traced program's claim: no "
		         "launch file to trust (%s)",
		         lwhy);
		in->source = in->launch ? why : NULL;
		return 0;
	}
	const char *root = dt_fix_exposed(lf->path, &r->roots);
	if (root) {
		snprintf(why, cap,
		         "the ring's launch record, which is the traced program's claim: the "
		         "launch file %s lies under %s, which the command could write",
		         lf->path, root);
		in->source = in->launch ? why : NULL;
		return 0;
	}
	snprintf(why, cap, "denytrace's launch file %s", lf->path);
	if (dt_fix_inputs_trust(in, (char *const *)lf->argv, lf->env, lf->cwd,
	                        !strcmp(lf->via, "codex"), why) < 0)
		return -1;
	dt_fix_inputs_bind_configs(in, r, lf->configs, lf->nconfigs);
	return 0;
}

int cmd_fix(int argc, char **argv)
{
	struct fix_opts o = {0};
	o.roots = calloc((size_t)argc + 1, sizeof(*o.roots));
	o.rings = calloc((size_t)argc + 1, sizeof(*o.rings));
	int rc = o.roots && o.rings ? fix_parse(argc, argv, &o) : DT_EXIT_INTERNAL;
	struct dt_report r = {0};
	struct dt_fix_inputs in = {0};
	struct dt_fix_plan plan = {0};
	struct dt_verify v = {0};
	struct dt_launchfile lf = {0};
	char err[1024], why[2 * PATH_MAX + 256], cwd[PATH_MAX];
	if (rc >= 0)
		goto out;
	rc = dt_report_load(&r, o.rings, o.nrings, err, sizeof(err));
	if (!rc)
		rc = dt_report_build(&r, &o.o, err, sizeof(err));
	if (rc) {
		dt_fail(rc, "fix: %s", err);
		goto out;
	}
	if (dt_fix_inputs(&r, &in) < 0 ||
	    fix_trust(&o, &r, &in, &lf, why, sizeof(why), cwd, sizeof(cwd)) < 0) {
		rc = dt_fail(DT_EXIT_INTERNAL, "out of memory");
		goto out;
	}
	dt_fix_plan_build(in.p, in.n, &in.l, &plan);
	if (o.verify)
		dt_verify_disk_check(&plan, o.rings[0]);
	if (o.verify && (rc = fix_verify(&o, &r, &in, &plan, &v)))
		goto out;
	if (o.json) {
		fix_json(stdout, &o, &in, &plan, &v, &r.handoffs);
	} else {
		fix_text(stdout, &in, &plan, &v);
		fix_text_handoffs(stdout, &r.handoffs);
	}
	rc = fix_verify_status(&v);
	if (fflush(stdout) != 0)
		rc = DT_EXIT_IO;
out:
	dt_launchfile_free(&lf);
	dt_verify_free(&v);
	dt_fix_plan_free(&plan);
	dt_fix_inputs_free(&in);
	dt_report_free(&r);
	free(o.roots);
	free(o.rings);
	return rc;
}
