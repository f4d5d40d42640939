/* SPDX-License-Identifier: MIT */
/* denytrace demo: the whole product on a Hermes-shaped board database, with
 * nothing but this binary, its probe and Python 3 (the scenario: demo.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "demo.h"

static const char demo_usage[] =
    "usage: denytrace demo [options]\n"
    "\n"
    "Runs a self-contained scenario on a Hermes-shaped board database\n"
    "(HERMES_KANBAN_DB, SQLite in WAL mode, BEGIN IMMEDIATE writes from Python's\n"
    "sqlite3) and reports on it, in two phases:\n"
    "  1 intermittent      a dispatcher opens and closes the board in WAL mode\n"
    "                      while a worker writes now and then. The worker may\n"
    "                      write kanban.db but may not create files beside it\n"
    "                      (as root: it runs as nobody and the directory is\n"
    "                      root's; otherwise a --deny op=new rule stands in), so\n"
    "                      its writes fail only while -wal and -shm are missing.\n"
    "  2 root not granted  the same worker in a sandbox that was not granted the\n"
    "                      board directory (bubblewrap, else Landlock, else a\n"
    "                      --deny rule).\n"
    "Each phase ends with `denytrace report` (also saved as report.json and\n"
    "report.md). Phase 2 then takes a third step: `denytrace fix --verify`\n"
    "prints the change (the bubblewrap --bind of the board directory) and runs\n"
    "the worker again with it, to show its refusals gone (fix.json with --json).\n"
    "Everything goes into one output directory, whose path is printed; nothing\n"
    "is left anywhere else.\n"
    "\n"
    "options:\n"
    "  --out DIR      output directory (default: a new denytrace-demo.XXXXXX\n"
    "                 under $TMPDIR or /tmp); must not exist or be empty\n"
    "  --phase N      run only phase 1 or 2 (default both)\n"
    "  --writes N     worker writes per phase, 1 to 100 (default 20)\n"
    "  --emulate      use the fallbacks even where the real thing works: the\n"
    "                 --deny emulation in phase 1, the --deny sandbox in phase 2\n"
    "  --json         print a JSON summary instead of the narrative and reports\n"
    "  -h, --help     this help\n"
    "\n"
    "Needs python3 with its sqlite3 module: $DENYTRACE_PYTHON (an absolute path),\n"
    "else /usr/bin/python3, else python3 on PATH.\n"
    "\n";

int cmd_demo(int argc, char **argv)
{
	struct dt_demo_opts d = {.writes = 20, .phases = 3};
	const char *val;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int m;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(demo_usage, stdout);
			dt_exit_help(stdout, "demo");
			return DT_EXIT_OK;
		} else if (!strcmp(a, "--emulate")) {
			d.emulate = 1;
		} else if (!strcmp(a, "--json")) {
			d.json = 1;
		} else if ((m = dt_opt(argc, argv, &i, "--out", &val))) {
			if (m < 0 || !*val)
				return dt_fail(DT_EXIT_USAGE, "demo: --out needs a directory");
			d.out = val;
		} else if ((m = dt_opt(argc, argv, &i, "--phase", &val))) {
			if (m < 0 || (strcmp(val, "1") && strcmp(val, "2")))
				return dt_fail(DT_EXIT_USAGE, "demo: --phase takes 1 or 2");
			d.phases = val[0] == '1' ? 1 : 2;
		} else if ((m = dt_opt(argc, argv, &i, "--writes", &val))) {
			char *end;
			long n = m < 0 ? 0 : strtol(val, &end, 10);
			if (m < 0 || !*val || *end || n < 1 || n > DT_DEMO_MAX_WRITES)
				return dt_fail(DT_EXIT_USAGE,
				               "demo: --writes takes a number from 1 to %d",
				               DT_DEMO_MAX_WRITES);
			d.writes = (int)n;
		} else {
			return dt_fail(DT_EXIT_USAGE,
			               "demo: unknown %s '%s'; see 'denytrace demo --help'",
			               a[0] == '-' ? "option" : "argument", a);
		}
	}
	return dt_demo_run(&d);
}
