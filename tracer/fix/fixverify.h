/* SPDX-License-Identifier: MIT */
/*
 * The steps of denytrace fix around the re-run (fixrun.h runs it): which
 * launch is trusted, saying what will run and asking first, leaving the
 * proof beside the ring, and the exit status a script can rely on.
 */
#ifndef DENYTRACE_FIXVERIFY_H
#define DENYTRACE_FIXVERIFY_H

#include <stddef.h>

#include "fixrun.h"
#include "handoff_fix.h"
#include "launchfile.h"

struct dt_fix_verify_opts {
	char **cmd;       /* the launch after fix's "--", or NULL */
	const char *ring; /* the first ring: its launch file, RING.fixed.ring, RING.fix.md */
	unsigned runs;    /* --runs N, 0 for one run */
	int yes;          /* --yes: run without asking */
};

/* Which launch fix works on: the command after "--" (run here), else the
 * launch file of the ring when the traced command could not have written
 * it, else only the ring's claim (shown, never run). why (cap) and cwd
 * (cwdcap) hold what in points to. Returns 0, or -1 when out of memory. */
int dt_fix_trust(const struct dt_fix_verify_opts *o, const struct dt_report *r,
                 struct dt_fix_inputs *in, struct dt_launchfile *lf, char *why, size_t cap,
                 char *cwd, size_t cwdcap);
/* Runs the launch with the fix (once or soaked) after asking, or, when no
 * fix is a command-line change, nothing; the handoff findings' overrides
 * (hv, handoff_fix.h) ride in that run when it is one run, else get a run
 * of their own after it, asked for in the same question; then leaves the
 * proof of both beside the ring. Returns 0, or an exit status with the
 * message printed. */
int dt_fix_verify(const struct dt_fix_verify_opts *o, const struct dt_report *r,
                  const struct dt_fix_inputs *in, const struct dt_fix_plan *plan,
                  struct dt_verify *v, struct dt_handoff_verify *hv);
/* 0 only when every finding was verified fixed, 1 when one is not fixed,
 * else 9 when one could not be verified. */
int dt_fix_verify_status(const struct dt_verify *v);

#endif
