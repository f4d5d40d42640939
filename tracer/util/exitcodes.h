/* SPDX-License-Identifier: MIT */
/* Exit statuses of the denytrace CLI: one row each in exitcodes.def, with
 * what each means per command (--help and the man page come from it). */
#ifndef DENYTRACE_EXITCODES_H
#define DENYTRACE_EXITCODES_H

#include <stdio.h>

enum dt_exit {
#define DT_EXIT(id, value, meaning) DT_EXIT_##id = value,
#define DT_EXIT_FOR(command, id, text)
#include "exitcodes.def"
#undef DT_EXIT
#undef DT_EXIT_FOR
};

/* command's "exit status: ..." paragraph for its --help, from
 * exitcodes.def, wrapped to 80 columns. */
void dt_exit_help(FILE *f, const char *command);

#endif
