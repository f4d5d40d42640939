/* SPDX-License-Identifier: MIT */
/* What `denytrace codex` settles before Codex starts: which Codex, the
 * configuration layers it will read, as they are now (each a CONFIG
 * record in the ring, which the report reads instead of the file), and
 * the command line Codex runs with. */
#ifndef DENYTRACE_CODEX_LAUNCH_H
#define DENYTRACE_CODEX_LAUNCH_H

#include <limits.h>
#include <stddef.h>

#include "codexargs.h"
#include "roots.h"
#include "run.h"
#include "toml.h"

/* The files Codex reads, lowest first, at fixed places (an empty path: none). */
enum {
	DT_CODEX_CFG_CONFIG,
	DT_CODEX_CFG_PROFILE,
	DT_CODEX_CFG_PROJECT, /* the trusted project layers, outermost first */
	DT_CODEX_CFG_MAX = DT_CODEX_CFG_PROJECT + 16,
};

struct dt_codex_layer {
	char path[PATH_MAX];
	const char *profile; /* the --profile layer's name, NULL for config.toml */
	int project;         /* a project layer DIR/.codex/config.toml */
	char *text;
	size_t len;
	int err;
	struct toml_value *parsed;
};

/* The Codex CLI to run (given, else $DENYTRACE_CODEX, else codex on PATH)
 * as an absolute path in out. 0, or -errno (out: the name tried). */
int dt_codex_find(const char *given, char *out, size_t cap);
/* The configuration Codex will read, as it is now, at its places in cfg
 * (DT_CODEX_CFG_*); quiet: no word on a layer that cannot be read.
 * Returns how many places are used. */
size_t dt_codex_layers(const struct dt_codex_cli *cli, struct dt_codex_layer *cfg, int quiet);
/* The layer's snapshot as a CONFIG record in the ring, bound into the
 * launch file. */
void dt_codex_layer_record(struct dt_run_ring *rr, const struct dt_codex_layer *c,
                           const char *version);
/* cargv (nargs + 1 entries) with the plan's overrides after the user's
 * last -c. */
char **dt_codex_run_argv(const char **cargv, size_t nargs, const struct dt_codex_mcp_plan *plan);
/* 0 when run_argv and the environment fit in the argument space, else the
 * exit status with the message printed. */
int dt_codex_argv_fits(char *const *run_argv, const struct dt_codex_mcp_plan *plan);

#endif
