/* SPDX-License-Identifier: MIT */
/* The demo's scenario, run by `denytrace demo` (cmd_demo.c). */
#ifndef DENYTRACE_DEMO_H
#define DENYTRACE_DEMO_H

#define DT_DEMO_MAX_WRITES 100

struct dt_demo_opts {
	const char *out; /* --out DIR, or NULL for a new directory */
	int writes;      /* worker writes per phase, 1 to DT_DEMO_MAX_WRITES */
	int phases;      /* 1, 2, or 3 for both */
	int emulate;     /* the fallbacks even where the real thing works */
	int json;        /* a JSON summary instead of the narrative */
};

/* Runs the scenario; returns the exit status (messages printed). */
int dt_demo_run(const struct dt_demo_opts *o);

#endif
