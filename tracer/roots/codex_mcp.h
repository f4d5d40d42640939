/* SPDX-License-Identifier: MIT */
/*
 * The environment each MCP stdio server of a Codex launch gets, for the
 * variables that decide where it writes. Codex 0.169 and 0.171 start a
 * stdio server with a cleared environment plus, in this order (later
 * wins): its default set (HOME, LOGNAME, PATH, SHELL, USER, LANG, LC_ALL,
 * TERM, TMPDIR, TZ) and the names in the server's `env_vars` list, each
 * copied from Codex's own environment when Codex has it, then the server's
 * `env` table (openai/codex codex-rs/rmcp-client/src/utils.rs,
 * create_env_for_mcp_server; checked with both binaries by
 * tests/integration/test_codex_handoff.c). A server with neither `command`
 * nor `url` in any layer stops Codex before it starts ("invalid
 * transport", exit 1).
 */
#ifndef DENYTRACE_CODEX_MCP_H
#define DENYTRACE_CODEX_MCP_H

#include <stddef.h>

struct dt_mcp_var {
	char *name;
	char *launcher; /* the value Codex had, NULL when it had none */
	char *value;    /* the value the server gets, NULL: it gets none */
	char *from;     /* which rule or layer gave it ("env table in PATH",
	                 * "-c ...", "env_vars in PATH", "Codex's default
	                 * variables"); NULL when the server gets none */
};

struct dt_mcp_server {
	char *name;
	char *command; /* NULL for a streamable HTTP server */
	char **args;
	size_t nargs;
	int args_known; /* 0: a recorded snapshot had them redacted */
	char *url;
	char *defined_in; /* the layer its command or url comes from */
	char **env_vars;  /* its env_vars list, as the layers merge it */
	size_t nenv_vars;
	char *env_vars_from;     /* the layer that set the list, or NULL */
	char *env_from;          /* the layer its env table comes from, or NULL */
	struct dt_mcp_var *vars; /* the followed variables, launcher's first */
	size_t nvars;
};

void dt_mcp_servers_free(struct dt_mcp_server *v, size_t n);

/* Is NAME (n bytes) one the model follows: HERMES_*, HCOM_*, CODEX_HOME,
 * or one that only DENYTRACE_ENV put into a record? */
int dt_mcp_var_followed(const char *name, size_t n);

/* The server's entry for NAME, or NULL. */
const struct dt_mcp_var *dt_mcp_var_of(const struct dt_mcp_server *s, const char *name);

/* The stdio server whose command line argv is (its command, by path or
 * base name, then its args), or NULL. */
const struct dt_mcp_server *dt_mcp_server_for(const struct dt_mcp_server *v, size_t n,
                                              const char *const *argv, size_t argc);

/* The server's env_vars list with add (nadd names) appended where missing,
 * as a TOML array ("[\"A\", \"B\"]"); malloc'ed. What a fix writes: the
 * user's names kept, in their order. */
char *dt_mcp_env_vars_merged(const struct dt_mcp_server *s, const char *const *add, size_t nadd);

#endif
