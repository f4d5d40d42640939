/* SPDX-License-Identifier: MIT */
/* denytrace run: create a ring, run a command with the probe, summarise. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "run.h"

static const char run_usage[] =
    "usage: denytrace run [options] -- COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND with libdenytrace.so in LD_PRELOAD and records every file\n"
    "operation that fails with EPERM, EACCES, EROFS or EXDEV into a ring file,\n"
    "then prints a short summary on stderr and exits with COMMAND's status\n"
    "(128+N when it was killed by signal N).\n"
    "\n";

static const char run_after[] =
    "RULE is GLOB[,KEY=VALUE...]. GLOB is an fnmatch(3) pattern matched against\n"
    "the absolute path (lexically resolved against the caller's cwd or dirfd;\n"
    "'*' also matches '/'; write a comma as [,]). Keys:\n"
    "  op=OPS      create, new, write, unlink, rename, mkdir, chmod or any\n"
    "              (default), several joined with +; an open with O_CREAT is\n"
    "              create, an open for writing or with O_TRUNC is write (plain\n"
    "              reads never match); new is a create of a file that does not\n"
    "              exist yet (checked when the call is made), so an open of an\n"
    "              existing file never matches it: 'DIR/*,op=new' refuses what a\n"
    "              directory the caller may not write would\n"
    "  errno=NAME  the error to return (default EACCES)\n"
    "  p=P         refuse each match with probability P (0..1; see --seed)\n"
    "  nth=N       refuse only the Nth match\n"
    "  first=N     refuse the first N matches\n"
    "              (none of p, nth, first: refuse every match)\n"
    "example: --deny '/srv/board/*.db-journal,op=create,errno=EROFS,p=0.2'\n"
    "Injected refusals are recorded as such; `denytrace report` says injected.\n"
    "\n"
    "Signals sent to denytrace (SIGTERM, SIGHUP, SIGINT from kill...) are\n"
    "forwarded to COMMAND. The probe reaches a sandbox through an inherited\n"
    "descriptor, so the ring stays writable even where the filesystem is not.\n"
    "\n";

static const struct dt_option run_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct dt_run_opts, __VA_ARGS__)
#include "opts_run.def"
#undef DT_OPTION
};

const struct dt_cmd_options run_cmd = {"run",
                                       run_usage,
                                       run_after,
                                       run_options,
                                       sizeof(run_options) / sizeof(run_options[0]),
                                       DT_EXIT_INTERNAL,
                                       NULL,
                                       1,
                                       NULL};

int cmd_run(int argc, char **argv)
{
	struct dt_run_opts o;
	dt_run_opts_init(&o);
	o.cmd = "run";
	struct dt_parse_end end;
	int rc = dt_parse_command(&run_cmd, argc, argv, &o, &end);
	if (rc >= 0) {
		dt_run_opts_free(&o);
		return rc;
	}
	int i = end.index;
	if (i >= argc) {
		dt_run_opts_free(&o);
		return dt_fail(
		    DT_EXIT_INTERNAL,
		    "run: no command given; usage: denytrace run [options] -- COMMAND...");
	}
	struct dt_run_ring rr;
	if ((rc = dt_run_check_command("run", argv[i])) || (rc = dt_run_ring_create(&o, &rr))) {
		dt_run_opts_free(&o);
		return rc;
	}
	rc = dt_run_launch(&o, &rr, argv + i);
	dt_run_opts_free(&o);
	return rc;
}
