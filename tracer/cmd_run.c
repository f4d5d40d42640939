/* SPDX-License-Identifier: MIT */
/* denytrace run: create a ring, run a command with the probe, summarise. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "run.h"

static const char run_usage[] =
	"usage: denytrace run [options] -- COMMAND [ARGS...]\n"
	"\n"
	"Runs COMMAND with libdenytrace.so in LD_PRELOAD and records every file\n"
	"operation that fails with EPERM, EACCES, EROFS or EXDEV into a ring file,\n"
	"then prints a short summary on stderr and exits with COMMAND's status\n"
	"(128+N when it was killed by signal N).\n"
	"\n"
	"options:\n"
	"  -o, --output FILE   ring file to create (default ./denytrace.ring); an\n"
	"                      existing one is kept as FILE.old; --ring FILE says the same\n"
	"  --size N            ring size in bytes, K/M/G suffixes (default 1M, 8M\n"
	"                      with --all); allocated before COMMAND starts\n"
	"  --all               also record successful writes (creates, renames,\n"
	"                      unlinks, mkdir, chmod, truncates): timelines of\n"
	"                      intermittent failures\n"
	"  --errnos LIST       errnos that count as refusals, comma-separated names\n"
	"                      (default EPERM,EACCES,EROFS,EXDEV)\n"
	"  --env NAMES         also record these environment variables (comma list)\n"
	"  --no-backtrace      do not capture call stacks\n"
	"  --deny RULE         refuse matching calls of the whole tree (seccomp; works\n"
	"                      on static binaries too); repeatable, first match wins\n"
	"  --seed N            seed for p= rules (default: random, printed)\n"
	"  --watch-exec        record every exec of the tree and name the processes\n"
	"                      the probe cannot enter (static binaries, cleared or\n"
	"                      rewritten LD_PRELOAD). Off unless asked for (--deny\n"
	"                      turns it on): it installs a seccomp filter with a\n"
	"                      listener in the traced tree, which costs ~25% on\n"
	"                      exec-heavy work, makes the tree's own seccomp\n"
	"                      listeners fail with EBUSY and, unprivileged, sets\n"
	"                      no_new_privs (setuid and file capabilities stop working)\n"
	"  --no-watch-exec     do not (ignored with --deny, which needs it)\n"
	"  -q, --quiet         no summary\n"
	"  -h, --help          this help\n"
	"\n"
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

int cmd_run(int argc, char **argv)
{
	struct dt_run_opts o;
	dt_run_opts_init(&o);
	int i = 1, rc;
	for (; i < argc; i++) {
		const char *a = argv[i];
		int m;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(run_usage, stdout);
			dt_exit_help(stdout, "run");
			dt_run_opts_free(&o);
			return DT_EXIT_OK;
		}
		if ((m = dt_run_opt(argc, argv, &i, &o, "run", &rc))) {
			if (m < 0) {
				dt_run_opts_free(&o);
				return rc;
			}
		} else if (a[0] == '-') {
			dt_run_opts_free(&o);
			return dt_fail(DT_EXIT_INTERNAL, "run: unknown option '%s'; see 'denytrace run --help'", a);
		} else {
			break; /* the command starts here */
		}
	}
	if (i >= argc) {
		dt_run_opts_free(&o);
		return dt_fail(DT_EXIT_INTERNAL, "run: no command given; usage: denytrace run [options] -- COMMAND...");
	}
	struct dt_run_ring rr;
	if ((rc = dt_run_ring_create(&o, &rr))) {
		dt_run_opts_free(&o);
		return rc;
	}
	rc = dt_run_launch(&o, &rr, argv + i);
	dt_run_opts_free(&o);
	return rc;
}
