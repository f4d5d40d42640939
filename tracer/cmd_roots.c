/* SPDX-License-Identifier: MIT */
/* denytrace roots: the writable roots a launch should get, and where they
 * came from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
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
    "\n"
    "options:\n"
    "  --root DIR            an expected writable root (repeatable)\n"
    "  --codex-config FILE   read Codex's config.toml from FILE\n"
    "  --codex-args 'ARGS'   a Codex command line to derive roots from\n"
    "  --json                JSON array of roots\n"
    "  -h, --help            this help\n"
    "\n";

int cmd_roots(int argc, char **argv)
{
	struct dt_report_opts o = {0};
	const char **roots = calloc((size_t)argc + 1, sizeof(*roots));
	const char **rings = calloc((size_t)argc + 1, sizeof(*rings));
	size_t nrings = 0;
	int json = 0, rc = 0;
	for (int i = 1; i < argc && !rc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(roots_usage, stdout);
			dt_exit_help(stdout, "roots");
			free(roots);
			free(rings);
			return DT_EXIT_OK;
		} else if (dt_report_opt(argc, argv, &i, &o, roots, &rc)) {
			continue;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (a[0] == '-' && a[1]) {
			rc = dt_fail(DT_EXIT_USAGE, "roots: unknown option '%s'; see 'denytrace roots --help'", a);
		} else {
			rings[nrings++] = a;
		}
	}
	if (rc) {
		free(roots);
		free(rings);
		return rc;
	}
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
		dt_roots_text(stdout, &r.roots, isatty(1) && !getenv("NO_COLOR"));
	}
	dt_report_free(&r);
	free(roots);
	free(rings);
	return DT_EXIT_OK;
}
