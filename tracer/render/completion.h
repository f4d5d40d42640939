/* SPDX-License-Identifier: MIT */
/* Shell completion scripts, generated from the command table
 * (cmd/commands.def) and each command's option table (cmd/opts_NAME.def):
 * a new command or option completes without touching this file. */
#ifndef DENYTRACE_COMPLETION_H
#define DENYTRACE_COMPLETION_H

#include <stdio.h>

/* A bash script defining _denytrace and `complete -F _denytrace denytrace`. */
void dt_completion_bash(FILE *f);
/* A zsh script (#compdef denytrace) defining _denytrace with _arguments. */
void dt_completion_zsh(FILE *f);

#endif
