/* SPDX-License-Identifier: MIT */
/*
 * denytrace fix's inputs and its proof: the findings of a report as the
 * problems fix.c works on, the launch they came from, and running that
 * launch again with the fix applied, once or soaked N times before and
 * after, to tell per finding whether its refusals are gone.
 *
 * The re-run is the user's own command: callers say so and ask first
 * (cmd_fix.c). It runs under `denytrace run` (or `denytrace codex` for a
 * launch that recorded Codex's configuration) in the launch's directory,
 * with the current environment (the ring holds only a filtered copy).
 */
#ifndef DENYTRACE_FIXRUN_H
#define DENYTRACE_FIXRUN_H

#include <limits.h>
#include <stdint.h>

#include "fix.h"
#include "report.h"

/* The report's findings, as fix.c's problems. */
struct dt_fix_inputs {
	struct dt_fix_problem *p;
	size_t n;
	const char **titles;   /* one line per problem */
	uint64_t *counts;      /* refusals per problem */
	const size_t **groups; /* per problem: indices into the report's groups */
	size_t *ngroups;
	const struct dt_record **refs;  /* storage for the problems' refusals */
	const struct dt_record *launch; /* the first launch record, or NULL */
	char **argv; /* its argv without the -c overrides `denytrace codex` adds to
	              * carry the probe into MCP servers (they name the old ring) */
	struct dt_fix_launch l;
	/* Where l's argv and directory come from. Only a launch the user made
	 * is ever run: the command line after fix's own "--", or the launch
	 * file denytrace wrote where the traced program cannot write. A launch
	 * record inside the ring is the traced program's claim (trusted 0). */
	int trusted;
	const char *source; /* says which, for the user */
	int via_codex;      /* re-run it under `denytrace codex` */
};
/* From the ring alone (trusted 0). Returns 0, or -1 when out of memory. */
int dt_fix_inputs(const struct dt_report *r, struct dt_fix_inputs *in);
/* The launch to fix and run is argv (NULL-terminated, borrowed: it must
 * outlive in) in cwd, which the user made; source says where it is from.
 * env: the environment entries its launch file keeps (NULL: not known).
 * When the ring's launch record says otherwise, the Codex, Hermes and hcom
 * roots read from the ring are the traced program's claim (problems'
 * claimed). Returns 0, or -1 when out of memory. */
int dt_fix_inputs_trust(struct dt_fix_inputs *in, char *const *argv, const char *const *env,
                        const char *cwd, int via_codex, const char *source);
/* After dt_fix_inputs_trust: the config snapshots the ring holds beside
 * the launch record must be the ones its launcher wrote (digests, the
 * launch file's, in order; none for the command after --, which has no
 * launch file to vouch for any); else the roots read from the ring are
 * the traced program's claim, as for a launch record that differs.
 * Returns 1 when they differ, else 0. */
int dt_fix_inputs_bind_configs(struct dt_fix_inputs *in, const struct dt_report *r,
                               const char *const *digests, size_t n);
/* The root of rs the sandbox made writable that path lies in (the traced
 * command could write it), or NULL. A command run with no sandbox had the
 * user's own rights, and the ring cannot tell more. */
const char *dt_fix_exposed(const char *path, const struct dt_rootset *rs);
void dt_fix_inputs_free(struct dt_fix_inputs *in);

/* Refusals in after that belong to problem i of before: one of its paths,
 * or its expected root with its cause. */
uint64_t dt_fix_still_refused(const struct dt_report *before, const struct dt_fix_inputs *in,
                              size_t i, const struct dt_report *after);

/* Zero is "cannot verify": a verdict nothing set (a run that never
 * happened, a result left zeroed) must never read as fixed. */
enum dt_verify_state { DT_VERIFY_CANNOT, DT_VERIFY_FIXED, DT_VERIFY_NOT_FIXED };
const char *dt_verify_state_name(enum dt_verify_state s);

struct dt_verify_result {
	enum dt_verify_state state;
	uint64_t before, after;           /* refusals: the ring's, the re-run's */
	unsigned runs_before, runs_after; /* --runs: runs in which it was refused */
};

/* A refusal of the verified run that the recorded run did not have. */
#define DT_VERIFY_NEW_PATHS 10
struct dt_verify_new {
	char path[PATH_MAX];
	char op[32];
	int err;
	uint64_t count;
};

struct dt_verify {
	struct dt_verify_result *v; /* one per problem */
	size_t n;
	char **cmd;          /* what was run (denytrace run ... -- ARGV), NULL-terminated */
	const char *cwd;     /* where */
	int status;          /* once: the re-run's exit status */
	char ring[PATH_MAX]; /* once: the re-run's ring */
	unsigned runs;       /* --runs N; 0 when run once */
	unsigned done_before, failed_before, done_after, failed_after;
	int interrupted;
	/* what the fix brought: refusals no problem accounts for and on no path
	 * the recorded run was refused; any of them and nothing is "fixed" */
	uint64_t new_refusals;
	unsigned runs_new;                                   /* --runs: fixed runs that had some */
	struct dt_verify_new new_paths[DT_VERIFY_NEW_PATHS]; /* the first of them */
	size_t nnew_paths;
	/* once: why a finding without a refusal in the re-run cannot count as
	 * fixed (the program refused did not run again), or "" */
	char rerun_why[PATH_MAX + 128];
};

/* Counts the refusals of after that neither a problem of before accounts
 * for nor any path before was refused on; the first few go to out (may be
 * NULL). */
uint64_t dt_fix_new_refusals(const struct dt_report *before, const struct dt_fix_inputs *in,
                             const struct dt_report *after, struct dt_verify *out);

/* Whether the plan's command line can run here: a launch the user made
 * (else DT_EXIT_UNTRUSTED), not cut or redacted, a directory that exists,
 * a program that is found. Returns 0, or an exit status with the message
 * printed; nothing is run. */
int dt_verify_check(const struct dt_fix_inputs *in, const struct dt_fix_plan *plan);

/* Mode, owner and inode flag changes (dt_fix.disk) are verified without
 * touching the disk: the fixed runs start in a private mount namespace
 * where each changed file's directory is an overlay (upper layer on a
 * tmpfs) carrying the new mode or owner, or the file's copy without its
 * immutable or append-only flag. That needs root (CAP_SYS_ADMIN) and a directory
 * the overlay can take, and ring (the recorded ring: the proof is written
 * beside it) outside it; a fix that cannot be verified so gets the reason
 * in its no_verify, and a command line there only for such fixes goes. */
void dt_verify_disk_check(struct dt_fix_plan *plan, const char *ring);

/* self run -q -o RING -- ARGV (or self codex ... --codex PROG -- ARGS for
 * a Codex launch that recorded its configuration); NULL-terminated, words
 * borrowed, NULL when out of memory. */
char **dt_verify_command(const char *self, const char *ring, char *const *argv, size_t argc,
                         int codex);
/* This denytrace binary's path into self. Returns 0, or an exit status
 * with the message printed. */
int dt_verify_self(char *self, size_t cap);

/* Runs the plan's command line once under the probe into after_ring, and
 * judges every problem. Returns 0, or an exit status with the message
 * printed. */
int dt_verify_once(const struct dt_report *before, const struct dt_fix_inputs *in,
                   const struct dt_fix_plan *plan, const char *after_ring, struct dt_verify *out);

/* Soaks the launch as recorded and then as fixed, runs times each, and
 * judges every problem by the runs in which it was refused. */
int dt_verify_soak(const struct dt_report *before, const struct dt_fix_inputs *in,
                   const struct dt_fix_plan *plan, unsigned runs, struct dt_verify *out);
/* No fix is a command-line change: every problem "cannot verify", nothing
 * run. */
int dt_verify_none(const struct dt_fix_inputs *in, struct dt_verify *out);
void dt_verify_free(struct dt_verify *v);

#endif
