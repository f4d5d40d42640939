/* SPDX-License-Identifier: MIT */
/* denytrace demo: the whole product on a Hermes-shaped board database, with
 * nothing but this binary, its probe and Python 3 (the scenario: demo.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "demo.h"
#include "options.h"

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
    "                      Its cause depends on who runs it: as root\n"
    "                      file-permissions; as any other user injected (the\n"
    "                      --deny rule's refusals: nothing to change).\n"
    "  2 root not granted  the same worker in a sandbox that was not granted the\n"
    "                      board directory (bubblewrap, else Landlock, else a\n"
    "                      --deny rule); root-not-granted for every user under\n"
    "                      bubblewrap or Landlock.\n"
    "Each phase ends with `denytrace report` (also saved as report.json and\n"
    "report.md). Phase 2 then takes a third step: `denytrace fix --verify`\n"
    "prints the change (the bubblewrap --bind of the board directory) and runs\n"
    "the worker again with it, to show its refusals gone (fix.json with --json);\n"
    "a Landlock rule it prints but cannot verify, and says why.\n"
    "Everything goes into one output directory, whose path is printed; nothing\n"
    "is left anywhere else.\n"
    "\n";

static const char demo_after[] =
    "Needs python3 with its sqlite3 module: $DENYTRACE_PYTHON (an absolute path),\n"
    "else /usr/bin/python3, else python3 on PATH.\n"
    "\n";

static int demo_out(void *args, const char *val)
{
	if (!*val)
		return dt_fail(DT_EXIT_USAGE, "demo: --out needs a directory");
	((struct dt_demo_opts *)args)->out = val;
	return 0;
}

static int demo_phase(void *args, const char *val)
{
	if (strcmp(val, "1") && strcmp(val, "2"))
		return dt_fail(DT_EXIT_USAGE, "demo: --phase takes 1 or 2");
	((struct dt_demo_opts *)args)->phases = val[0] == '1' ? 1 : 2;
	return 0;
}

static int demo_writes(void *args, const char *val)
{
	char *end;
	long n = strtol(val, &end, 10);
	if (!*val || *end || n < 1 || n > DT_DEMO_MAX_WRITES)
		return dt_fail(DT_EXIT_USAGE, "demo: --writes takes a number from 1 to %d",
		               DT_DEMO_MAX_WRITES);
	((struct dt_demo_opts *)args)->writes = (int)n;
	return 0;
}

static const struct dt_option demo_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct dt_demo_opts, __VA_ARGS__)
#include "opts_demo.def"
#undef DT_OPTION
};

const struct dt_cmd_options demo_cmd = {"demo",
                                        demo_usage,
                                        demo_after,
                                        demo_options,
                                        sizeof(demo_options) / sizeof(demo_options[0]),
                                        DT_EXIT_USAGE,
                                        NULL};

int cmd_demo(int argc, char **argv)
{
	struct dt_demo_opts d = {.writes = 20, .phases = 3};
	const char **words = calloc((size_t)argc + 1, sizeof(*words));
	size_t nwords = 0;
	int rc = dt_parse_options(&demo_cmd, argc, argv, &d, words, &nwords);
	if (rc < 0 && nwords)
		rc = dt_fail(DT_EXIT_USAGE,
		             "demo: unknown argument '%s'; see 'denytrace demo --help'", words[0]);
	free(words);
	if (rc >= 0)
		return rc;
	return dt_demo_run(&d);
}
