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
#include "fixout.h"
#include "fixrun.h"
#include "fixverify.h"
#include "options.h"
#include "report.h"

static const char fix_usage[] =
    "usage: denytrace fix [options] [RING...] [-- COMMAND...]\n"
    "\n"
    "Prints, for each finding of the report, the change that fixes it, in the\n"
    "terms of the launch: one Codex -c sandbox_workspace_write.writable_roots=[...]\n"
    "holding every root (and the config.toml lines), a bubblewrap --bind, a\n"
    "Landlock rule, the chmod/chown for exactly the refused uid, the chattr -i\n"
    "or -a of an immutable or append-only file, or why no sandbox change fixes\n"
    "it. A fix grants only the findings' expected roots; a path\n"
    "outside every root gets its directory, labelled as a candidate.\n"
    "\n"
    "The launch it changes, and that --verify runs, is COMMAND (run here) when\n"
    "given, else the one denytrace run, codex or soak recorded in its launch file\n"
    "(under $XDG_STATE_HOME/denytrace/, default ~/.local/state/denytrace/, or\n"
    "the next place the command's sandbox cannot write: see FILES in the\n"
    "manual; none for a command without a sandbox run reads, which could\n"
    "write one). The launch record inside a ring is shown as what the traced\n"
    "program claims and never run: the ring is written by the program being\n"
    "traced.\n"
    "\n";

static const char fix_after[] =
    "fix never changes files, permissions or configuration: it prints those\n"
    "changes. --verify tries a chmod, chown or chattr (as root) on an overlay of\n"
    "the directory in a private mount namespace, never on the disk, and a\n"
    "Landlock rule through a Landlock launcher (landlock-run) on the launch's\n"
    "command line; it writes the new\n"
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
	struct dt_handoff_verify hv = {0};
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
	struct dt_fix_verify_opts vo = {o.cmd, o.rings[0], o.runs, o.yes};
	if (dt_fix_inputs(&r, &in) < 0 ||
	    dt_fix_trust(&vo, &r, &in, &lf, why, sizeof(why), cwd, sizeof(cwd)) < 0) {
		rc = dt_fail(DT_EXIT_INTERNAL, "out of memory");
		goto out;
	}
	dt_fix_plan_build(in.p, in.n, &in.l, &plan);
	if (o.verify)
		dt_verify_disk_check(&plan, o.rings[0]);
	if (o.verify && (rc = dt_fix_verify(&vo, &r, &in, &plan, &v, &hv)))
		goto out;
	if (o.json) {
		dt_fix_json(stdout, o.rings, o.nrings, &in, &plan, &v, &r.handoffs, &hv);
	} else {
		dt_fix_text(stdout, &in, &plan, &v);
		dt_fix_text_handoffs(stdout, &r.handoffs, &hv);
	}
	rc = dt_handoff_verify_status(&hv, dt_fix_verify_status(&v));
	if (fflush(stdout) != 0)
		rc = DT_EXIT_IO;
out:
	dt_launchfile_free(&lf);
	dt_handoff_verify_free(&hv);
	dt_verify_free(&v);
	dt_fix_plan_free(&plan);
	dt_fix_inputs_free(&in);
	dt_report_free(&r);
	free(o.roots);
	free(o.rings);
	return rc;
}
