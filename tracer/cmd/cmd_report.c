/* SPDX-License-Identifier: MIT */
/* denytrace report: each refusal linked to its root, with a cause. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "report.h"
#include "termwrap.h"

static const char report_usage[] =
    "usage: denytrace report [options] [RING...]\n"
    "\n"
    "Diagnoses the refusals recorded in RING (default ./denytrace.ring; several\n"
    "rings merge). It opens with the problems: refusals with one fix (the same\n"
    "expected root, cause, grant and the path the fix names) are one problem,\n"
    "linked to the writable root that should have covered them, whether the\n"
    "sandbox granted it, what the program did next and what to change. The\n"
    "groups by path, call, errno and cause follow (-v: in full).\n"
    "\n";

/* What the command line asked for. */
struct report_args {
	struct dt_report_opts o;
	const char **roots;
	const char *format, *color;
	int fail_on_denial, verbose;
};

static const struct dt_option report_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct report_args, __VA_ARGS__)
#include "opts_report.def"
#undef DT_OPTION
};

/* The causes come from the classifier's own table, so the help cannot
 * list fewer than the report uses. */
static void report_causes_help(FILE *f)
{
	fputs("causes, in order of precedence (man denytrace says more):\n", f);
	for (int c = 0; c < DT_CAUSE_COUNT; c++) {
		fprintf(f, "  %-18s ", dt_cause_name((enum dt_cause)c));
		dt_wrap(f, dt_cause_meaning((enum dt_cause)c), 21, 21);
	}
	fputc('\n', f);
}

const struct dt_cmd_options report_cmd = {"report",
                                          report_usage,
                                          NULL,
                                          report_options,
                                          sizeof(report_options) / sizeof(report_options[0]),
                                          DT_EXIT_USAGE,
                                          report_causes_help};

/* The text report: on a terminal wrapped at its width, elsewhere whole
 * lines (a pipe's reader wraps for itself). */
static void report_text_to_terminal(const struct dt_report *r, int color, int verbose)
{
	int width = dt_term_width(1);
	FILE *f = width ? dt_term_wrap_open(stdout, width) : NULL;
	dt_report_text(f ? f : stdout, r, color, verbose);
	if (f)
		fclose(f);
}

int cmd_report(int argc, char **argv)
{
	struct report_args ra = {.format = "text", .color = "auto"};
	const char **rings = calloc((size_t)argc + 1, sizeof(*rings));
	ra.roots = calloc((size_t)argc + 1, sizeof(*ra.roots));
	size_t nrings = 0;
	int rc = dt_parse_options(&report_cmd, argc, argv, &ra, rings, &nrings);
	struct dt_report_opts o = ra.o;
	const char **roots = ra.roots;
	const char *format = ra.format;
	int fail_on_denial = ra.fail_on_denial, verbose = ra.verbose;
	if (rc >= 0) {
		free(roots);
		free(rings);
		return rc;
	}
	rc = 0;
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
	else if (!strcmp(format, "markdown") || !strcmp(format, "md"))
		dt_report_markdown(stdout, &r);
	else if (!strcmp(format, "svg"))
		dt_report_svg(stdout, &r);
	else
		report_text_to_terminal(&r, dt_color_wanted(ra.color), verbose);
	int found = r.denials > 0;
	uint64_t corrupt = r.stats.corrupt;
	int truncated = r.stats.truncated;
	dt_report_free(&r);
	free(roots);
	free(rings);
	if (fflush(stdout) != 0 || ferror(stdout))
		return dt_fail(DT_EXIT_IO, "report: writing the output failed");
	/* as show: the report is printed, but from an input that is not intact */
	if (truncated)
		return dt_fail(DT_EXIT_BADINPUT, "report: a ring shrank while it was read");
	if (corrupt)
		return dt_fail(DT_EXIT_BADINPUT, "report: %llu corrupt record%s skipped",
		               (unsigned long long)corrupt, corrupt == 1 ? "" : "s");
	return fail_on_denial && found ? DT_EXIT_FOUND : DT_EXIT_OK;
}
