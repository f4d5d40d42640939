/* SPDX-License-Identifier: MIT */
/*
 * Handoff failures that are not refusals: the write succeeded, on the
 * wrong board, or the process that should have written never had the
 * board's variables. Judged from the process records (each keeps the
 * variables that decide roots), the successful writes and the Codex
 * model's MCP servers (codex_mcp.h).
 *
 *  - environment lost: a process that opened a SQLite database lacks a
 *    HERMES_* or HCOM_* variable its launcher had, or has another value;
 *    the launcher is its nearest traced ancestor, else the launch. Named:
 *    the hop, and the env_vars line or -c override that carries it.
 *  - wrong board: a Hermes board (kanban.db) or an hcom database (hcom.db)
 *    was written that is not the one the launch named (HERMES_KANBAN_DB,
 *    else Hermes' own rules; $HCOM_DIR/hcom.db, else ~/.hcom/hcom.db, as
 *    hcom resolves it: roots_env.c), for a launch with HERMES_* or HCOM_*
 *    variables. Named: both paths, the writer, and the rule its own
 *    environment resolved by.
 *  - override for a server that does not exist (hermes-agent #111707): the
 *    launch's -c mcp_servers.X.* names an X no layer gives a command or a
 *    url, so Codex refuses its configuration before it starts anything.
 *    Named: X, Codex's refusal, and the configured stdio server the
 *    overrides were meant for when there is exactly one.
 */
#ifndef DENYTRACE_HANDOFF_H
#define DENYTRACE_HANDOFF_H

#include <stddef.h>

struct dt_report;

enum dt_handoff_kind { DT_HANDOFF_ENV_LOST, DT_HANDOFF_WRONG_BOARD, DT_HANDOFF_NO_SUCH_SERVER };

struct dt_handoff_var {
	char *name;
	const char *launcher; /* the launcher's value */
	const char *here;     /* the process's, NULL: it had none */
};

struct dt_handoff {
	enum dt_handoff_kind kind;
	long pid;
	const char *comm;
	const char *server;          /* the Codex MCP server the process is, or NULL */
	const char *board;           /* the database it opened (env lost) or wrote */
	char *named;                 /* wrong board: the board the launch named */
	char *why;                   /* wrong board: the rule the writer's own environment
	                              * resolved by; env lost: where the variable went
	                              * instead, when an override named another server */
	char *hop;                   /* env lost: launcher -> ... -> the process */
	struct dt_handoff_var *vars; /* env lost: the variables lost or changed */
	size_t nvars;
	char *fix;                /* the change, in words */
	char *fix_env_vars;       /* the server's env_vars list with the names added, as
	                           * TOML, or NULL */
	char *fix_override;       /* the -c KEY=VALUE that carries them, or NULL */
	char **fix_env_overrides; /* -c mcp_servers.S.env.VAR="value" for each lost
	                           * variable the server's env table sets: the
	                           * table wins over env_vars */
	size_t nfix_env_overrides;
	char *fix_server; /* no such server: the one the overrides should name
	                   * instead (server is the one they name), or NULL */
};

struct dt_handoffs {
	struct dt_handoff *v;
	size_t n;
};

/* Fills h from a built report (records sorted, SQLite roles judged, roots
 * derived). */
void dt_handoffs_build(const struct dt_report *r, struct dt_handoffs *h);
void dt_handoffs_free(struct dt_handoffs *h);

const char *dt_handoff_kind_name(enum dt_handoff_kind k);

/* The SQLite database process pid wrote (a successful write), or NULL. */
const char *dt_handoff_board_written(const struct dt_report *r, long pid);
/* 1 when a and b name one file: equal, or the same realpath. */
int dt_handoff_same_path(const char *a, const char *b);

#endif
