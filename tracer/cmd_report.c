/* SPDX-License-Identifier: MIT */
/* denytrace report: each refusal linked to its root, with a cause. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

static const char report_usage[] =
    "usage: denytrace report [options] [RING...]\n"
    "\n"
    "Diagnoses the refusals recorded in RING (default ./denytrace.ring; several\n"
    "rings merge). It opens with the problems: refusals with one fix (the same\n"
    "expected root, cause, grant and the path the fix names) are one problem,\n"
    "linked to the writable root that should have covered them, whether the\n"
    "sandbox granted it, what the program did next and what to change. The\n"
    "groups by path, call, errno and cause follow (-v: in full).\n"
    "\n"
    "options:\n"
    "  --format FMT          text (default), json (the stable contract), markdown,\n"
    "                        svg (the timeline: a lane per process, refusals by\n"
    "                        problem, --all's writes, when SQLite's side files existed)\n"
    "  --json, --markdown    short for --format json / markdown\n"
    "  --root DIR            an expected writable root (repeatable)\n"
    "  --codex-config FILE   read Codex's config.toml from FILE\n"
    "  --codex-args 'ARGS'   the Codex command line, when the ring does not hold it\n"
    "  --all                 also show lock contention (EACCES/EAGAIN on locks)\n"
    "  --fail-on-denial      exit 1 when any refusal is reported\n"
    "  -v, --verbose         text: every group in full under \"Details\"\n"
    "  --color WHEN          auto (default: on a terminal, unless NO_COLOR), always, never\n"
    "  -h, --help            this help\n";

/* The causes come from the classifier's own table, so the help cannot
 * list fewer than the report uses. */
static void report_help(FILE *f)
{
	fputs(report_usage, f);
	fputs("\ncauses, in order of precedence (man denytrace says more):\n", f);
	for (int c = 0; c < DT_CAUSE_COUNT; c++)
		fprintf(f, "  %-18s %s\n", dt_cause_name((enum dt_cause)c),
		        dt_cause_meaning((enum dt_cause)c));
	fputc('\n', f);
	dt_exit_help(f, "report");
}

static int report_color(const char *when)
{
	if (!strcmp(when, "always"))
		return 1;
	if (!strcmp(when, "never"))
		return 0;
	const char *nc = getenv("NO_COLOR");
	return isatty(1) && !(nc && *nc);
}

int cmd_report(int argc, char **argv)
{
	struct dt_report_opts o = {0};
	const char **roots = calloc((size_t)argc + 1, sizeof(*roots));
	const char **rings = calloc((size_t)argc + 1, sizeof(*rings));
	size_t nrings = 0;
	const char *format = "text", *color = "auto", *val;
	int fail_on_denial = 0, verbose = 0, rc = 0, m;
	for (int i = 1; i < argc && !rc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			report_help(stdout);
			free(roots);
			free(rings);
			return DT_EXIT_OK;
		} else if (dt_report_opt(argc, argv, &i, &o, roots, &rc)) {
			continue;
		} else if ((m = dt_opt(argc, argv, &i, "--format", &val))) {
			if (m < 0 || (strcmp(val, "text") && strcmp(val, "json") && strcmp(val, "markdown") &&
			              strcmp(val, "svg")))
				rc = dt_fail(DT_EXIT_USAGE,
				             "report: --format takes text, json, markdown or svg");
			format = val;
		} else if (!strcmp(a, "--json")) {
			format = "json";
		} else if (!strcmp(a, "--markdown")) {
			format = "markdown";
		} else if ((m = dt_opt(argc, argv, &i, "--color", &val))) {
			if (m < 0 || (strcmp(val, "auto") && strcmp(val, "always") && strcmp(val, "never")))
				rc = dt_fail(DT_EXIT_USAGE, "report: --color takes auto, always or never");
			color = val;
		} else if (!strcmp(a, "--all")) {
			o.all = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose = 1;
		} else if (!strcmp(a, "--fail-on-denial")) {
			fail_on_denial = 1;
		} else if (a[0] == '-' && a[1]) {
			rc = dt_fail(DT_EXIT_USAGE, "report: unknown option '%s'; see 'denytrace report --help'", a);
		} else {
			rings[nrings++] = a;
		}
	}
	if (rc) {
		free(roots);
		free(rings);
		return rc;
	}
	if (!nrings && (rc = dt_default_ring_check("report"))) {
		free(roots);
		free(rings);
		return rc;
	}
	if (!nrings)
		rings[nrings++] = DT_DEFAULT_RING;
	o.roots = roots;

	struct dt_report r;
	char err[1024];
	rc = dt_report_load(&r, rings, nrings, err, sizeof(err));
	if (!rc)
		rc = dt_report_build(&r, &o, err, sizeof(err));
	if (rc) {
		dt_report_free(&r);
		free(roots);
		free(rings);
		return dt_fail(rc, "report: %s", err);
	}
	if (!strcmp(format, "json"))
		dt_report_json(stdout, &r);
	else if (!strcmp(format, "markdown"))
		dt_report_markdown(stdout, &r);
	else if (!strcmp(format, "svg"))
		dt_report_svg(stdout, &r);
	else
		dt_report_text(stdout, &r, report_color(color), verbose);
	int found = r.denials > 0;
	uint64_t corrupt = r.stats.corrupt;
	dt_report_free(&r);
	free(roots);
	free(rings);
	if (fflush(stdout) != 0 || ferror(stdout))
		return dt_fail(DT_EXIT_IO, "report: writing the output failed");
	/* as show: the report is printed, but from an input that is not intact */
	if (corrupt)
		return dt_fail(DT_EXIT_BADINPUT, "report: %llu corrupt record%s skipped",
		               (unsigned long long)corrupt, corrupt == 1 ? "" : "s");
	return fail_on_denial && found ? DT_EXIT_FOUND : DT_EXIT_OK;
}
