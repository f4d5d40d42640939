/* SPDX-License-Identifier: MIT */
/* denytrace: find out why a sandboxed worker cannot write its database. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ring_format.h"
#include "version.h"

static const char dt_usage[] =
    "usage: denytrace <command> [options] [args]\n"
    "\n"
    "Records the file operations a sandbox refuses (EPERM, EACCES, EROFS, EXDEV)\n"
    "from inside the traced programs, with an LD_PRELOAD probe, into a ring file.\n"
    "\n"
    "commands:\n"
    "  run      run a command under the probe and record refusals\n"
    "  codex    run the real Codex CLI under the probe, into its MCP servers too\n"
    "  show     print the records of a ring file (text, or --jsonl)\n"
    "  report   link each refusal to its writable root, name the cause, advise\n"
    "  roots    list the writable roots a launch should get, and where they came from\n"
    "  soak     run a command many times (with --deny rules): flake rate, and the\n"
    "           refusals that separate failing runs from passing ones\n"
    "  fix      per finding, the change that fixes it; --verify runs the launch\n"
    "           again with it and says which findings are gone\n"
    "  evidence write a bundle for a maintainer (reports, facts, rings; --redact)\n"
    "  doctor   check that the probe, rings and sandboxes work on this machine\n"
    "  demo     run a self-contained Hermes board-DB scenario and report on it\n"
    "\n"
    "options:\n"
    "  -h, --help     this help; `denytrace help <command>` for a command\n"
    "  -V, --version  print the version\n"
    "\n";

static const char dt_usage_end[] =
    "\n"
    "`denytrace help <command>` is `denytrace <command> --help`. The manual:\n"
    "man denytrace.\n";

/* The exit statuses come from exitcodes.def, as every command's do. */
static void dt_help(FILE *f)
{
	fputs(dt_usage, f);
	dt_exit_help(f, "denytrace");
	fputs(dt_usage_end, f);
}

static int dt_main(int argc, char **argv)
{
	if (argc < 2) {
		dt_help(stderr);
		return DT_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || (!strcmp(cmd, "help") && argc < 3)) {
		dt_help(stdout);
		return DT_EXIT_OK;
	}
	/* `denytrace help CMD` is `denytrace CMD --help`, as in git */
	char *help_argv[] = {argc > 2 ? argv[2] : NULL, "--help", NULL};
	int sub_argc = argc - 1;
	char **sub_argv = argv + 1;
	if (!strcmp(cmd, "help")) {
		cmd = argv[2];
		sub_argc = 2;
		sub_argv = help_argv;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("denytrace %s (ring format %u)\n", DT_VERSION_STRING, DT_RING_VERSION);
		return DT_EXIT_OK;
	}
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {{"run", cmd_run},      {"show", cmd_show},   {"report", cmd_report},
	            {"roots", cmd_roots},  {"codex", cmd_codex}, {"soak", cmd_soak},
	            {"fix", cmd_fix},      {"demo", cmd_demo},   {"evidence", cmd_evidence},
	            {"doctor", cmd_doctor}};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmd, cmds[i].name))
			return cmds[i].fn(sub_argc, sub_argv);
	return dt_fail(DT_EXIT_USAGE, "'%s' is not a denytrace command; see 'denytrace --help'",
	               cmd);
}

int main(int argc, char **argv)
{
	return dt_finish_stdout(dt_main(argc, argv));
}
