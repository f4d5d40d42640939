/* SPDX-License-Identifier: MIT */
/* denytrace completion: a shell completion script on standard output. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "completion.h"
#include "options.h"

static const char completion_usage[] =
    "usage: denytrace completion [bash|zsh]\n"
    "\n"
    "Prints a completion script for bash (the default) or zsh, generated from\n"
    "denytrace's own command and option tables. make install puts both where\n"
    "the shells look; to try one now: source <(denytrace completion bash)\n"
    "\n";

struct completion_args {
	int help;
};

static const struct dt_option completion_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct completion_args, __VA_ARGS__)
#include "opts_completion.def"
#undef DT_OPTION
};

const struct dt_cmd_options completion_cmd = {"completion",
                                              completion_usage,
                                              NULL,
                                              completion_options,
                                              sizeof(completion_options) /
                                                  sizeof(completion_options[0]),
                                              DT_EXIT_USAGE,
                                              NULL};

int cmd_completion(int argc, char **argv)
{
	struct completion_args a = {0};
	const char *operands[argc > 0 ? argc : 1];
	size_t n = 0;
	int rc = dt_parse_options(&completion_cmd, argc, argv, &a, operands, &n);
	if (rc >= 0)
		return rc;
	const char *shell = n ? operands[0] : "bash";
	if (n > 1)
		return dt_fail(DT_EXIT_USAGE, "completion: one shell at most; see 'denytrace "
		                              "completion --help'");
	if (!strcmp(shell, "bash"))
		dt_completion_bash(stdout);
	else if (!strcmp(shell, "zsh"))
		dt_completion_zsh(stdout);
	else
		return dt_fail(DT_EXIT_USAGE,
		               "completion: '%s' is not a shell it knows: bash or zsh", shell);
	if (fflush(stdout) || ferror(stdout))
		return dt_fail(DT_EXIT_IO, "completion: writing the script failed");
	return DT_EXIT_OK;
}
