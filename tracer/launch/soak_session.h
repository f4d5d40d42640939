/* SPDX-License-Identifier: MIT */
/* A soak from its parsed options to its summary in place (soak.h runs the
 * runs; this is what `denytrace soak` does around them). */
#ifndef DENYTRACE_SOAK_SESSION_H
#define DENYTRACE_SOAK_SESSION_H

#include <stdio.h>

#include "outfile.h"
#include "soak.h"

/* The files the summary goes to, begun before the first run (a path that
 * cannot be written must not cost the summary of a long soak), each under
 * a temporary name of its own until the summary is whole (outfile.h). */
struct dt_soak_outputs {
	struct dt_outfile out, json, junit; /* -o, --json=FILE, --junit FILE */
	FILE *junit_f;                      /* junit.f, or stdout for "-" */
};

/* Begins -o (then made stdout), --json=FILE and --junit. Returns -1 to go
 * on, else the exit status with the message printed. */
int dt_soak_outputs_open(const struct dt_soak_opts *o, struct dt_soak_outputs *f);
void dt_soak_outputs_abort(struct dt_soak_outputs *f);
/* soak --merge FILE... (in o->cmd): the shards' summaries added up and
 * written. Returns the exit status. */
int dt_soak_session_merge(struct dt_soak_opts *o, struct dt_soak_outputs *files);
/* Runs the soak (o parsed, outputs begun, dir made by dt_soak_prepare)
 * until done or stopped by SIGINT, SIGTERM or SIGHUP, and writes its
 * summary. Returns the exit status. */
int dt_soak_session_run(struct dt_soak_opts *o, struct dt_soak_outputs *files, const char *self,
                        const char *dir);

#endif
