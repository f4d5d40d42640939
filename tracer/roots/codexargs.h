/* SPDX-License-Identifier: MIT */
/*
 * Carrying the probe into the MCP servers Codex starts. Codex gives a stdio
 * MCP server a cleared environment plus its `env` table, so the probe's
 * variables must go into that table, one key at a time: a `-c` override
 * that set the whole `env` (or the server, or `mcp_servers`) would replace
 * what earlier overrides configured, the very mistake denytrace diagnoses.
 *
 * What Codex 0.169 does with `-c KEY=VALUE` (checked with the real binary):
 *  - KEY is split at every '.', quotes included, so a server whose name
 *    holds a '.' (or an '=') cannot be named in a -c key at all;
 *  - the overrides are applied in order, each replacing what is at its
 *    key, and the result is merged into config.toml (and the --profile
 *    layer) table by table: `-c mcp_servers.S.env.K="v"` adds K to the env
 *    table the file configured and keeps the rest;
 *  - -c is accepted before and after a subcommand; those before it apply
 *    first;
 *  - a streamable HTTP server (url = ...) refuses an env table.
 * Pure: argv and parsed files in, arguments out.
 */
#ifndef DENYTRACE_CODEXARGS_H
#define DENYTRACE_CODEXARGS_H

#include <stddef.h>

#include "toml.h"

struct dt_codex_mcp_plan {
	char **args; /* "-c", "mcp_servers.S.env.K=\"V\"", ... to insert */
	size_t nargs;
	size_t insert_at; /* index in Codex's argv where they go: after the last
	                   * -c of the command line (so that they apply last),
	                   * else right after the program */
	char **traced;    /* the servers that get the probe, in config order */
	size_t ntraced;
	char **skipped; /* "S: why", the servers it cannot reach */
	size_t nskipped;
};

/*
 * Plans the overrides for every MCP server of the configuration Codex will
 * see: files (nfiles of them, lowest first: config.toml, the --profile layer
 * $CODEX_HOME/NAME.config.toml, the trusted project layers
 * DIR/.codex/config.toml; NULL entries for files not read, as
 * dt_codex_lookup takes them) and the -c overrides in argv (Codex's argv,
 * argv[0] the program). vars/values (nvars of them) are the
 * variables to set in each server's env; for LD_PRELOAD, a value the server
 * already has is kept after ours. Returns 0, or -1 when out of memory.
 */
int dt_codex_mcp_plan(const char *const *argv, size_t argc, const struct toml_value *const *files,
                      size_t nfiles, const char *const *vars, const char *const *values,
                      size_t nvars, struct dt_codex_mcp_plan *plan);
void dt_codex_mcp_plan_free(struct dt_codex_mcp_plan *plan);

/* s as a TOML basic string, quotes included ("a\"b"); malloc'ed. */
char *dt_toml_quote(const char *s);

/* 1 when name can be one segment of a Codex -c key: not empty, no '.'
 * (Codex splits keys there, quotes or not) and no '=' (where the value
 * starts). */
int dt_codex_key_segment_ok(const char *name);

#endif
