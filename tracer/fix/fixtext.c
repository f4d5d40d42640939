/* SPDX-License-Identifier: MIT */
/* denytrace fix's outputs (fixout.h): the text, and the proof beside the ring. */
#include "fixout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "recfmt.h"
#include "sidecar.h"
#include "soak.h"

/* ---- text ---- */

static void fix_text_verdict(FILE *f, const struct dt_verify *v, size_t i, const char *no_verify)
{
	const struct dt_verify_result *r = &v->v[i];
	fprintf(f, "   verified: %s", dt_verify_state_name(r->state));
	if (r->state == DT_VERIFY_CANNOT) {
		fputs(" (", f);
		dt_put_safe(f, no_verify         ? no_verify
		               : v->rerun_why[0] ? v->rerun_why
		                                 : "nothing was run");
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

void dt_fix_put_argv(FILE *f, char *const *argv)
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

void dt_fix_text(FILE *f, const struct dt_fix_inputs *in, const struct dt_fix_plan *plan,
                 const struct dt_verify *v)
{
	size_t ncl = 0, held = 0;
	for (size_t i = 0; i < plan->n; i++) {
		ncl += plan->fixes[i].kind == DT_FIX_COMMAND_LINE;
		held += plan->fixes[i].kind == DT_FIX_COMMAND_LINE && plan->fixes[i].claimed;
	}
	/* a claimed or candidate grant is shown, not applied: not "fixed" */
	fprintf(f, "%zu problem%s, %zu fixed on the command line", plan->n, plan->n == 1 ? "" : "s",
	        ncl - held);
	if (held)
		fprintf(f, ", %zu held back", held);
	fprintf(f, " (sandbox: %s)\n", dt_fix_sandbox_name(plan->sandbox));
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
		dt_fix_put_argv(f, plan->argv);
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

/* Failures with no refusal (handoff.h): their change is said, and
 * verified by a re-run of its own (handoff_fix.h). */
void dt_fix_text_handoffs(FILE *f, const struct dt_handoffs *h, const struct dt_handoff_verify *hv)
{
	for (size_t i = 0; i < h->n; i++) {
		fprintf(f, "\nhandoff %zu (%s, no refusal), pid %ld: ", i + 1,
		        dt_handoff_kind_name(h->v[i].kind), h->v[i].pid);
		dt_put_pasteable(f, h->v[i].fix);
		fputc('\n', f);
		dt_handoff_verify_text(f, hv, i);
	}
}

/* ---- the proof, for evidence ---- */

/* "cd DIR && WORDS" as a fenced block, after a line saying what it was. */
static void fix_md_command(FILE *f, const char *what, const char *cwd, char *const *cmd)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return;
	fputs("cd ", m);
	dt_shell_word(m, cwd ? cwd : ".");
	fputs(" &&", m);
	dt_fix_put_argv(m, cmd);
	if (fclose(m) == 0) {
		fprintf(f, "\n%s\n\n", what);
		dt_md_fence(f, "sh", text);
	}
	free(text);
}

static void fix_md_verified(FILE *f, const struct dt_fix_inputs *in, const struct dt_verify *v)
{
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
	if (!v->cmd)
		fputs("\nNothing was run: no fix is a change to the command line.\n", f);
	else
		fix_md_command(
		    f,
		    "The command that was run (the user's launch with the fix, under the "
		    "probe):",
		    v->cwd, v->cmd);
}

/* Each handoff finding's change (handoff.h): the words, and the -c
 * overrides that carry it, one per line. */
static void fix_md_handoff_fixes(FILE *f, const struct dt_handoffs *h)
{
	for (size_t i = 0; i < h->n; i++) {
		const struct dt_handoff *x = &h->v[i];
		fprintf(f, "\nHandoff %zu (%s, no refusal), pid %ld: ", i + 1,
		        dt_handoff_kind_name(x->kind), x->pid);
		dt_md_text(f, x->fix ? x->fix : "no fix can be stated");
		fputs("\n\n", f);
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);
		if (m && x->fix_override) {
			fputs("-c ", m);
			dt_shell_word(m, x->fix_override);
			fputc('\n', m);
		}
		for (size_t k = 0; m && k < x->nfix_env_overrides; k++) {
			fputs("-c ", m);
			dt_shell_word(m, x->fix_env_overrides[k]);
			fputc('\n', m);
		}
		if (m && fclose(m) == 0 && len)
			dt_md_fence(f, "", text);
		free(text);
	}
}

/* The handoff findings' verdicts, and the run they were judged from when
 * it was not the refusals' run. */
static void fix_md_handoffs_verified(FILE *f, const struct dt_fix_inputs *in,
                                     const struct dt_handoffs *h,
                                     const struct dt_handoff_verify *hv)
{
	if (!h->n || !hv->v)
		return;
	fputs("\n| handoff | result | what the re-run showed |\n|---|---|---|\n", f);
	for (size_t i = 0; i < h->n; i++) {
		fprintf(f, "| %zu. %s | %s | ", i + 1, dt_handoff_kind_name(h->v[i].kind),
		        dt_verify_state_name(hv->v[i].state));
		dt_md_text(f, hv->v[i].why);
		fputs(" |\n", f);
	}
	if (hv->shared)
		fputs("\nThe handoffs were judged from the same run as the refusals: its command "
		      "carries both fixes.\n",
		      f);
	else if (hv->cmd)
		fix_md_command(f,
		               "The command that was run for the handoffs (the user's launch "
		               "with their overrides, under the probe):",
		               in->l.cwd, hv->cmd);
	else
		fputs("\nNothing was run for the handoffs: none of their fixes is a Codex -c "
		      "override of a launch denytrace may run.\n",
		      f);
}

/* RING.fix.md: "Suggested fix" and "Verified", appended to report.md by
 * `denytrace evidence` (sidecar.h: never written through what the traced
 * program put there). Returns 0 or -1 with a reason in err. */
int dt_fix_write_proof(const char *ring, const struct dt_fix_inputs *in,
                       const struct dt_fix_plan *plan, const struct dt_verify *v,
                       const struct dt_handoffs *h, const struct dt_handoff_verify *hv, char *err,
                       size_t errlen)
{
	struct dt_sidecar out;
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
	fix_md_handoff_fixes(f, h);
	fputs("\n## Verified\n\n", f);
	if (v->v)
		fix_md_verified(f, in, v);
	fix_md_handoffs_verified(f, in, h, hv);
	return dt_sidecar_commit(&out, err, errlen);
}
