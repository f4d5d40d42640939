/* SPDX-License-Identifier: MIT */
/* denytrace roots: the writable roots a launch should get, and where they
 * came from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "report.h"

static const char roots_usage[] =
    "usage: denytrace roots [options] [RING...]\n"
    "\n"
    "Lists the writable roots a launch was expected to get, each with where it\n"
    "came from (--root, Codex arguments and config.toml, Hermes and hcom\n"
    "variables), the roots the sandbox actually granted (writable mounts seen\n"
    "from inside), and whether each expected root was granted. Without a ring\n"
    "(and when ./denytrace.ring does not exist) it derives them from the options\n"
    "and this shell's environment.\n"
    "\n";

/* What the command line asked for. */
struct roots_args {
	struct dt_report_opts o;
	const char **roots;
	int json;
	const char *color;
};

static const struct dt_option roots_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct roots_args, __VA_ARGS__)
#include "opts_roots.def"
#undef DT_OPTION
};

const struct dt_cmd_options roots_cmd = {"roots",
                                         roots_usage,
                                         NULL,
                                         roots_options,
                                         sizeof(roots_options) / sizeof(roots_options[0]),
                                         DT_EXIT_USAGE,
                                         NULL};

int cmd_roots(int argc, char **argv)
{
	struct roots_args ra = {0};
	const char **rings = calloc((size_t)argc + 1, sizeof(*rings));
	ra.roots = calloc((size_t)argc + 1, sizeof(*ra.roots));
	size_t nrings = 0;
	int rc = dt_parse_options(&roots_cmd, argc, argv, &ra, rings, &nrings);
	struct dt_report_opts o = ra.o;
	const char **roots = ra.roots;
	int json = ra.json;
	if (rc >= 0) {
		free(roots);
		free(rings);
		return rc;
	}
	rc = 0;
	if (!nrings && access(DT_DEFAULT_RING, F_OK) == 0)
		rings[nrings++] = DT_DEFAULT_RING;
	o.roots = roots;
	struct dt_report r;
	char err[1024];
	rc = dt_report_load(&r, rings, nrings, err, sizeof(err));
	if (!rc && !nrings) {
		/* no ring: this shell's environment stands for the worker's */
		extern char **environ;
		size_t n = 0;
		while (environ[n])
			n++;
		dt_roots_from_env(&r.roots, (const char *const *)environ, n, 0);
	}
	if (!rc)
		rc = dt_report_build(&r, &o, err, sizeof(err));
	if (rc) {
		dt_report_free(&r);
		free(roots);
		free(rings);
		return dt_fail(rc, "roots: %s", err);
	}
	if (json) {
		struct dt_json j;
		dt_json_init(&j, stdout, 1);
		dt_roots_json_array(&j, &r.roots);
		fputc('\n', stdout);
	} else {
		dt_roots_text(stdout, &r.roots, dt_color_wanted(ra.color));
	}
	dt_report_free(&r);
	free(roots);
	free(rings);
	return DT_EXIT_OK;
}
