/* SPDX-License-Identifier: MIT */
/* denytrace fix --verify's steps around the re-run (fixverify.h): which
 * launch to trust, asking before running it, and the exit status. */
#include "fixverify.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fixout.h"
#include "recfmt.h"

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

/* Says what will run, every command exactly, and asks (or takes --yes):
 * recorded, when not NULL, runs first as it is (--runs' soak before the
 * fix). Returns 0 to go on, else an exit status. */
static int fix_confirm(const struct dt_fix_verify_opts *o, const struct dt_fix_inputs *in,
                       const struct dt_fix_plan *plan, char *const *recorded)
{
	fprintf(stderr, "denytrace: fix --verify runs your command again%s, with the fix, in ",
	        recorded ? " (as recorded, then fixed, each --runs times)" : "");
	dt_shell_word(stderr, in->l.cwd);
	fputs(":\n  ", stderr);
	if (recorded) {
		fputs("as recorded:", stderr); /* the words come with their space */
		dt_fix_put_argv(stderr, recorded);
		fputs("\n  fixed:      ", stderr);
	}
	dt_fix_put_argv(stderr, plan->argv);
	/* a launch file proves less than it seems (SECURITY): say it is one */
	fprintf(stderr, "\n  from: %s", in->source ? in->source : "the launch");
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
int dt_fix_verify(const struct dt_fix_verify_opts *o, const struct dt_report *r,
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
			dt_fix_put_argv(stderr, plan->argv);
			fputc('\n', stderr);
		}
		rc = dt_verify_check(in, plan);
		if (!rc)
			rc = fix_confirm(o, in, plan, o->runs ? in->argv : NULL);
		if (rc)
			return rc;
		char after[PATH_MAX];
		char *abs = realpath(o->ring, NULL);
		snprintf(after, sizeof(after), "%s.fixed.ring", abs ? abs : o->ring);
		free(abs);
		rc = o->runs ? dt_verify_soak(r, in, plan, o->runs, v)
		             : dt_verify_once(r, in, plan, after, v);
	}
	if (rc)
		return rc;
	char err[1024];
	if (dt_fix_write_proof(o->ring, in, plan, v, err, sizeof(err)) < 0)
		fprintf(stderr, "denytrace: fix: %s\n", err);
	return 0;
}

/* The handoff findings' own re-run: the launch with their overrides,
 * asked for as the refusals' is. */
int dt_fix_verify_handoffs(const struct dt_fix_verify_opts *o, const struct dt_report *r,
                           const struct dt_fix_inputs *in, struct dt_handoff_verify *hv)
{
	struct dt_fix_plan shown = {0};
	char after[PATH_MAX], *abs = realpath(o->ring, NULL);
	int rc = dt_handoff_verify_plan(&r->handoffs, in, hv);
	if (rc <= 0) {
		free(abs);
		return rc < 0 ? dt_fail(DT_EXIT_INTERNAL, "out of memory") : 0;
	}
	shown.argv = hv->argv;
	snprintf(after, sizeof(after), "%s.handoff.ring", abs ? abs : o->ring);
	free(abs);
	if (!(rc = fix_confirm(o, in, &shown, NULL))) /* run once, --runs or not */
		rc = dt_handoff_verify_run(r, in, after, hv);
	return rc;
}

/* 0 only when every finding was verified fixed: a script's
 * `fix --verify --yes && deploy` must not deploy what nobody proved. */
int dt_fix_verify_status(const struct dt_verify *v)
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
int dt_fix_trust(const struct dt_fix_verify_opts *o, const struct dt_report *r,
                 struct dt_fix_inputs *in, struct dt_launchfile *lf, char *why, size_t cap,
                 char *cwd, size_t cwdcap)
{
	char lwhy[PATH_MAX + 256];
	if (o->cmd) {
		if (!getcwd(cwd, cwdcap))
			snprintf(cwd, cwdcap, ".");
		return dt_fix_inputs_trust(in, o->cmd, NULL, cwd, 0, "the command after --");
	}
	int found = dt_launchfile_find(o->ring, lf, lwhy, sizeof(lwhy));
	if (found == -2) /* said here, once: the re-run and the handoffs ask `in` */
		fprintf(stderr, "denytrace: fix: launch file ignored: %s\n", lwhy);
	if (found < 0) {
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
