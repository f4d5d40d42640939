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
    "commands:\n";

static const char dt_usage_options[] =
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
	int width = 0;
	for (size_t i = 0; i < dt_ncommands; i++)
		if ((int)strlen(dt_commands[i].name) > width)
			width = (int)strlen(dt_commands[i].name);
	for (size_t i = 0; i < dt_ncommands; i++) {
		const char *line = dt_commands[i].summary;
		fprintf(f, "  %-*s  ", width, dt_commands[i].name);
		for (size_t n; (n = strcspn(line, "\n")), line[n]; line += n + 1)
			fprintf(f, "%.*s\n%*s", (int)n, line, width + 4, "");
		fprintf(f, "%s\n", line);
	}
	fputs(dt_usage_options, f);
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
	for (size_t i = 0; i < dt_ncommands; i++)
		if (!strcmp(cmd, dt_commands[i].name))
			return dt_commands[i].fn(sub_argc, sub_argv);
	const char *near = dt_command_nearest(cmd);
	if (near)
		return dt_fail(DT_EXIT_USAGE,
		               "'%s' is not a denytrace command; did you mean '%s'? See 'denytrace "
		               "--help'",
		               cmd, near);
	return dt_fail(DT_EXIT_USAGE, "'%s' is not a denytrace command; see 'denytrace --help'",
	               cmd);
}

int main(int argc, char **argv)
{
	return dt_finish_stdout(dt_main(argc, argv));
}
