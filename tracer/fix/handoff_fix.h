/* SPDX-License-Identifier: MIT */
/*
 * fix --verify for the handoff findings (handoff.h): failures with no
 * refusal, whose change is a Codex -c override (an MCP server's env_vars
 * list with the lost variables merged in). The proof re-runs the trusted
 * Codex launch (its launch file: fixrun.h) under `denytrace codex` with the
 * overrides added after the command line's last -c, so that they apply
 * last, and judges each finding from the new ring:
 *
 *  - environment lost: fixed when a process of that MCP server has every
 *    variable it lacked, with the launcher's value; not fixed when one ran
 *    without them;
 *  - wrong board: fixed when that server wrote the board the launch named
 *    and no other; not fixed when it wrote another board;
 *  - override for a server that does not exist: the launch's -c
 *    mcp_servers.X.* words name the configured server instead; fixed when
 *    Codex no longer refuses its configuration and that server ran with
 *    every env variable the overrides set; not fixed when Codex still
 *    refuses or the server lacks one.
 *
 * It cannot verify a finding whose fix is not an override (a child that is
 * not an MCP server: its parent's environment), a launch that is not a
 * Codex launch denytrace made (no launch file to trust), or a re-run in
 * which the server never ran or wrote no board.
 */
#ifndef DENYTRACE_HANDOFF_FIX_H
#define DENYTRACE_HANDOFF_FIX_H

#include <limits.h>
#include <stdio.h>

#include "fixrun.h"
#include "handoff.h"

struct dt_json;

struct dt_handoff_verdict {
	enum dt_verify_state state;
	char *why; /* what the re-run showed, or why it could not tell */
};

struct dt_handoff_verify {
	struct dt_handoff_verdict *v; /* one per handoff finding */
	size_t n;
	char **overrides; /* the -c values added, each once */
	size_t noverrides;
	const char **rename_from, **rename_to; /* -c mcp_servers.FROM.* become TO */
	size_t nrenames;
	char **argv;         /* the launch's argv with them, NULL-terminated; NULL:
	                      * nothing to run */
	char **cmd;          /* what ran (denytrace codex ... -- ARGV), or NULL */
	int ran;             /* a re-run was judged: status and ring are its */
	int shared;          /* argv carries the refusals' fix too: one run for both */
	int status;          /* its exit status */
	char ring[PATH_MAX]; /* its ring */
};

/* Which findings a re-run can verify, and the command line that carries
 * their overrides (out->argv; NULL when there is none: every verdict then
 * says why). Returns the number of overrides, or -1 when out of memory. */
int dt_handoff_verify_plan(const struct dt_handoffs *h, const struct dt_fix_inputs *in,
                           struct dt_handoff_verify *out);

/* Makes out->argv the refusals' fixed command line argv (argc words, a
 * Codex launch's) with the overrides and renames, so that one re-run
 * verifies both: the overrides touch only [mcp_servers], the refusals'
 * fix the sandbox or a file's mode: the verdicts are then of the launch
 * with every fix, as the user applies them. Nothing when out has no
 * command line. */
void dt_handoff_verify_share(struct dt_handoff_verify *out, char *const *argv, size_t argc);

/* Runs out->argv once under `denytrace codex` into after_ring (in the
 * launch's directory, output to stderr) and judges every finding of
 * before. Returns 0, or an exit status with the message printed. */
int dt_handoff_verify_run(const struct dt_report *before, const struct dt_fix_inputs *in,
                          const char *after_ring, struct dt_handoff_verify *out);
/* Judges every finding of before from after_ring, the ring of a re-run of
 * out->argv that exited with status. Returns 0, or an exit status with
 * the message printed. */
int dt_handoff_verify_judge(const struct dt_report *before, const struct dt_fix_inputs *in,
                            const char *after_ring, int status, struct dt_handoff_verify *out);

/* fix's exit status: rc (the refusals' verdicts: DT_EXIT_OK, FOUND or
 * UNVERIFIED) with the handoff verdicts, the worse of the two: a finding
 * not fixed, then one not verified. */
int dt_handoff_verify_status(const struct dt_handoff_verify *v, int rc);

/* Finding i's verdict: a line of text, or the "verify" member of its JSON
 * object. Nothing when fix ran without --verify. */
void dt_handoff_verify_text(FILE *f, const struct dt_handoff_verify *v, size_t i);
void dt_handoff_verify_json(struct dt_json *j, const struct dt_handoff_verify *v, size_t i);

void dt_handoff_verify_free(struct dt_handoff_verify *v);

#endif
