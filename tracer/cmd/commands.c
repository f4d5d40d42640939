/* SPDX-License-Identifier: MIT */
/* The table of subcommands, from commands.def. */
#include "cli.h"
#include "options.h"

const struct dt_command dt_commands[] = {
#define DT_COMMAND(name, summary) {#name, cmd_##name, &name##_cmd, summary},
#include "commands.def"
#undef DT_COMMAND
};
const size_t dt_ncommands = sizeof(dt_commands) / sizeof(dt_commands[0]);

const char *dt_command_nearest(const char *typed)
{
	const char *names[sizeof(dt_commands) / sizeof(dt_commands[0])];
	for (size_t i = 0; i < dt_ncommands; i++)
		names[i] = dt_commands[i].name;
	return dt_nearest_word(typed, names, dt_ncommands);
}
