/* SPDX-License-Identifier: MIT */
/* denytrace fix --verify's steps around the re-run (fixverify.h): which
 * launch to trust, asking before running it, and the exit status. */
#include "fixverify.h"

#include <limits.h>
#include <poll.h>
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
	(void)sig; /* only there to make the wait return EINTR */
}

/* Reads the answer with Ctrl-C turned into "no", rather than the process
 * dying by the signal with a status a script cannot tell from the
 * command's. SIGINT stays blocked except inside ppoll, which unblocks it
 * and waits in one step: a ^C that came just before the wait (the prompt
 * printed, the read not yet started) would otherwise run the handler
 * there and leave the read waiting for a line nobody types (seen in CI).
 * On a terminal in canonical mode the wait ends with a whole line or end
 * of input, so the read after it does not wait. */
static int fix_ask(void)
{
	struct sigaction sa = {0}, old;
	sigset_t intr, orig, during;
	sigemptyset(&intr);
	sigaddset(&intr, SIGINT);
	sigprocmask(SIG_BLOCK, &intr, &orig);
	sa.sa_handler = fix_on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	fputs("Run it? [y/N] ", stderr);
	during = orig;
	sigdelset(&during, SIGINT);
	struct pollfd in = {.fd = 0, .events = POLLIN};
	char line[64];
	int got = ppoll(&in, 1, NULL, &during) == 1 && fgets(line, sizeof(line), stdin) != NULL;
	/* unblocked while ours is still the handler: a ^C pending now is
	 * taken here, not by the caller's disposition */
	sigprocmask(SIG_SETMASK, &orig, NULL);
	sigaction(SIGINT, &old, NULL);
	if (!got)
		fputc('\n', stderr); /* end of input or ^C left the cursor on the question */
	return got && fix_answer_is_yes(line);
}

/* The command lines one question covers, in the order they run. */
struct fix_runs {
	char *const *refusals; /* the refusals' fixed launch, or NULL */
	char *const *handoffs; /* the handoffs' own re-run, or NULL */
	int shared;            /* refusals carries the handoffs' overrides too */
};

static void fix_show_argv(const char *what, char *const *argv)
{
	fprintf(stderr, "  %s\n   ", what);
	dt_fix_put_argv(stderr, argv);
	fputc('\n', stderr);
}

/* Says everything that will run, and asks once (or takes --yes). Returns
 * 0 to go on, else an exit status. */
static int fix_confirm(const struct dt_fix_verify_opts *o, const struct dt_fix_inputs *in,
                       const struct fix_runs *runs)
{
	fprintf(stderr, "denytrace: fix --verify runs your command again, in ");
	dt_shell_word(stderr, in->l.cwd);
	fputs(":\n", stderr);
	if (runs->refusals && o->runs) { /* the soak runs the launch as recorded too */
		fix_show_argv("as recorded, each --runs times:", in->argv);
		fix_show_argv("then with the fix, each --runs times:", runs->refusals);
	} else if (runs->refusals)
		fix_show_argv(runs->shared ? "once, with the fix for the refusals and the handoffs:"
		                           : "once, with the fix:",
		              runs->refusals);
	if (runs->handoffs)
		fix_show_argv(!runs->refusals
		                  ? "once, with the handoffs' overrides:"
		                  : "then once with the handoffs' overrides (a handoff is "
		                    "judged from one run, and the soaked runs carry only "
		                    "the refusals' fix):",
		              runs->handoffs);
	/* a launch file proves less than it seems (SECURITY): say it is one */
	fprintf(stderr, "  from: %s\n", in->source ? in->source : "the launch");
	fputs("  (nothing on disk is changed; it writes where the command writes)\n", stderr);
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

/* RING plus suffix, made absolute, into buf. */
static void fix_sibling(const char *ring, const char *suffix, char *buf, size_t cap)
{
	char *abs = realpath(ring, NULL);
	snprintf(buf, cap, "%s%s", abs ? abs : ring, suffix);
	free(abs);
}

/* Runs what runs says: the refusals' launch (once or soaked; when shared
 * the handoffs are judged from that same ring), then the handoffs' own. */
static int fix_run(const struct dt_fix_verify_opts *o, const struct dt_report *r,
                   const struct dt_fix_inputs *in, const struct dt_fix_plan *plan,
                   const struct fix_runs *runs, struct dt_verify *v, struct dt_handoff_verify *hv)
{
	char after[PATH_MAX];
	int rc = 0;
	if (runs->refusals) {
		struct dt_fix_plan fixed = *plan;
		fixed.argv = (char **)runs->refusals;
		for (fixed.argc = 0; fixed.argv[fixed.argc];)
			fixed.argc++;
		fix_sibling(o->ring, ".fixed.ring", after, sizeof(after));
		rc = o->runs ? dt_verify_soak(r, in, &fixed, o->runs, v)
		             : dt_verify_once(r, in, &fixed, after, v);
		if (!rc && runs->shared)
			rc = dt_handoff_verify_judge(r, in, v->ring, v->status, hv);
	}
	if (!rc && runs->handoffs) {
		fix_sibling(o->ring, ".handoff.ring", after, sizeof(after));
		rc = dt_handoff_verify_run(r, in, after, hv);
	}
	return rc;
}

/* The refusals' side: nothing to run (every verdict "cannot"), or the
 * plan's command line when it may run here. Returns 0 or an exit status. */
static int fix_refusals_run(const struct dt_fix_inputs *in, const struct dt_fix_plan *plan,
                            struct dt_verify *v, struct fix_runs *runs)
{
	if (in->l.argv && !plan->argv && !plan->no_rewrite)
		return dt_verify_none(in, v);
	if (!in->trusted && plan->argv) {
		fputs("denytrace: fix --verify would run, in ", stderr);
		dt_shell_word(stderr, in->l.cwd ? in->l.cwd : ".");
		fputs(":\n  ", stderr);
		dt_fix_put_argv(stderr, plan->argv);
		fputc('\n', stderr);
	}
	runs->refusals = plan->argv;
	return dt_verify_check(in, plan);
}

/* Runs the launch with the fix (once or soaked), or, when no fix is a
 * command-line change, nothing; the handoff findings' overrides ride in
 * the same run when it is one run; then leaves the proof beside the ring. */
int dt_fix_verify(const struct dt_fix_verify_opts *o, const struct dt_report *r,
                  const struct dt_fix_inputs *in, const struct dt_fix_plan *plan,
                  struct dt_verify *v, struct dt_handoff_verify *hv)
{
	struct fix_runs runs = {0};
	int rc = dt_handoff_verify_plan(&r->handoffs, in, hv);
	if (rc < 0)
		return dt_fail(DT_EXIT_INTERNAL, "out of memory");
	/* a ring with handoff findings only has no refusals' verdict to give */
	if ((in->n || !r->handoffs.n) && (rc = fix_refusals_run(in, plan, v, &runs)))
		return rc;
	if (runs.refusals && hv->argv && !o->runs) {
		dt_handoff_verify_share(hv, runs.refusals, plan->argc);
		runs.refusals = hv->argv;
		runs.shared = 1;
	} else {
		runs.handoffs = hv->argv;
	}
	if ((runs.refusals || runs.handoffs) && (rc = fix_confirm(o, in, &runs)))
		return rc;
	if ((rc = fix_run(o, r, in, plan, &runs, v, hv)))
		return rc;
	char err[1024];
	if (dt_fix_write_proof(o->ring, in, plan, v, &r->handoffs, hv, err, sizeof(err)) != 0)
		fprintf(stderr, "denytrace: fix: %s\n", err);
	return 0;
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
		if (dt_fix_inputs_trust(in, o->cmd, NULL, cwd, 0, "the command after --") < 0)
			return -1;
		/* no launch file holds the snapshots' digests: the ring's are
		 * the traced program's to rewrite */
		dt_fix_inputs_bind_configs(in, r, NULL, 0);
		return 0;
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
