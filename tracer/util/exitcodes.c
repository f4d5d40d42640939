/* SPDX-License-Identifier: MIT */
#include "exitcodes.h"

#include <string.h>

#include "options.h"

static const struct {
	const char *command;
	int status;
	const char *text;
} dt_exit_uses[] = {
#define DT_EXIT(id, value, meaning)
#define DT_EXIT_FOR(command, id, text) {command, DT_EXIT_##id, text},
#include "exitcodes.def"
#undef DT_EXIT
#undef DT_EXIT_FOR
};

void dt_exit_help(FILE *f, const char *command)
{
	char buf[2048];
	size_t len = (size_t)snprintf(buf, sizeof(buf), "exit status:");
	const char *sep = " ";
	for (size_t i = 0; i < sizeof(dt_exit_uses) / sizeof(dt_exit_uses[0]); i++) {
		if (strcmp(dt_exit_uses[i].command, command) || len >= sizeof(buf))
			continue;
		if (dt_exit_uses[i].status >= 0)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d\001%s", sep,
			                        dt_exit_uses[i].status, dt_exit_uses[i].text);
		else
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", sep,
			                        dt_exit_uses[i].text);
		/* the command's own status comes first; a semicolon sets it apart */
		sep = dt_exit_uses[i].status < 0 ? "; " : ", ";
	}
	if (len + 1 < sizeof(buf))
		strcat(buf, ".");
	dt_wrap(f, buf, 0, 0);
}
