// SPDX-License-Identifier: MIT
/* Handoff failures with no refusal (handoff.h). */
#include "handoff.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codexargs.h"
#include "recfmt.h"
#include "report.h"
#include "roots_int.h"

const char *dt_handoff_kind_name(enum dt_handoff_kind k)
{
	return k == DT_HANDOFF_ENV_LOST ? "environment-lost" : "wrong-board";
}

static int board_var(const char *entry)
{
	return starts_with(entry, "HERMES_") || starts_with(entry, "HCOM_");
}

/* The launch record: what denytrace started, with its environment. */
static const struct dt_record *launch_of(const struct dt_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == DT_REC_LAUNCH)
			return &r->recs[i];
	return NULL;
}

/* The nearest traced ancestor of p, else the launch; NULL when p is the
 * launch's own process or there is neither. */
static const struct dt_record *launcher_of(const struct dt_report *r, const struct dt_record *p)
{
	const struct dt_record *launch = launch_of(r);
	long pid = (long)p->ppid;

	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		const struct dt_record *a = dt_report_proc(r, p, pid);
		if (launch && pid == launch->pid)
			return launch;
		if (!a)
			return launch && launch->pid != p->pid ? launch : NULL;
		if (a->nenv)
			return a;
		pid = (long)a->ppid;
	}
	return launch && launch->pid != p->pid ? launch : NULL;
}

/* The SQLite database pid wrote (a successful write, else any record of
 * it), or NULL. */
static const struct dt_record *board_opened(const struct dt_report *r, long pid, int written)
{
	const struct dt_record *any = NULL;

	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *d = &r->recs[i];
		if (d->pid != pid || !d->sqlite || strcmp(d->sqlite, "db"))
			continue;
		if (d->type == DT_REC_WRITE)
			return d;
		if (!any && (d->type == DT_REC_DENIAL || d->type == DT_REC_REOPEN))
			any = d;
	}
	return written ? NULL : any;
}

static const char *env_value(const struct dt_record *rec, const char *entry, size_t namelen)
{
	for (size_t i = 0; i < rec->nenv; i++)
		if (!strncmp(rec->env[i], entry, namelen) && rec->env[i][namelen] == '=')
			return rec->env[i] + namelen + 1;
	return NULL;
}

static void collect_lost(const struct dt_record *launcher, const struct dt_record *p,
                         struct dt_handoff *h)
{
	for (size_t i = 0; i < launcher->nenv; i++) {
		const char *e = launcher->env[i], *eq = strchr(e, '=');
		const char *here;
		if (!eq || !board_var(e))
			continue;
		here = env_value(p, e, (size_t)(eq - e));
		if (here && !strcmp(here, eq + 1))
			continue;
		h->vars = xrealloc(h->vars, (h->nvars + 1) * sizeof(*h->vars));
		h->vars[h->nvars++] =
		    (struct dt_handoff_var){xasprintf("%.*s", (int)(eq - e), e), eq + 1, here};
	}
}

static char *hop_text(const struct dt_record *launcher, const struct dt_record *p,
                      const char *server)
{
	const char *who = launcher->type == DT_REC_LAUNCH ? "the launch" : launcher->comm;
	char *mid = (long)p->ppid != (long)launcher->pid
	                ? xasprintf(" -> pid %lld (%s, not traced)", (long long)p->ppid,
	                            server ? "Codex" : "its parent")
	                : xstrdup("");
	char *s = xasprintf("%s (pid %lld)%s -> %s%s%s (pid %lld, %s)", who ? who : "?",
	                    (long long)launcher->pid, mid, server ? "MCP server " : "",
	                    server ? server : "",
	                    server    ? ""
	                    : p->comm ? p->comm
	                              : "?",
	                    (long long)p->pid, p->comm ? p->comm : "?");
	free(mid);
	return s;
}

/* The -c in the launch that sets one of the lost variables for another
 * server: the override that went astray (hermes-agent #111707). */
static char *astray_override(const struct dt_record *launch, const struct dt_handoff *h)
{
	for (size_t i = 0; launch && i + 1 < launch->argc; i++) {
		const char *w = launch->argv[i + 1];
		if (strcmp(launch->argv[i], "-c") || !starts_with(w, "mcp_servers."))
			continue;
		for (size_t k = 0; k < h->nvars; k++) {
			char *needle = xasprintf(".env.%s=", h->vars[k].name);
			const char *at = strstr(w, needle);
			size_t slen = at ? (size_t)(at - w) - strlen("mcp_servers.") : 0;
			int other = at && (!h->server || strlen(h->server) != slen ||
			                   strncmp(w + strlen("mcp_servers."), h->server, slen));
			free(needle);
			if (other)
				return xasprintf("-c %s sets it for the server %.*s, not for %s", w,
				                 (int)slen, w + strlen("mcp_servers."),
				                 h->server ? h->server : "this process");
		}
	}
	return NULL;
}

/* A TOML key as written in a table header: bare when it may be. */
static char *toml_key(const char *name)
{
	size_t bare =
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");
	char *q = *name && !name[bare] ? xstrdup(name) : dt_toml_quote(name);
	if (!q)
		oom();
	return q;
}

/* The fix of a server's lost variables: its env_vars line, and the -c
 * that sets it, one shell word, where Codex's -c can name the server
 * (its keys split at every '.'). Names may be the traced program's. */
static void server_fix(const struct dt_mcp_server *s, struct dt_handoff *h)
{
	const char *where = s->env_vars_from ? s->env_vars_from
	                    : s->defined_in  ? s->defined_in
	                                     : "config.toml";
	char *key = toml_key(s->name), *word = NULL, *c = NULL;
	size_t len = 0;
	if (dt_codex_key_segment_ok(s->name)) {
		h->fix_override = xasprintf("mcp_servers.%s.env_vars=%s", s->name, h->fix_env_vars);
		FILE *f = open_memstream(&word, &len);
		if (!f)
			oom();
		dt_shell_word(f, h->fix_override);
		if (fclose(f) != 0)
			oom();
		c = xasprintf(
		    ", or codex -c %s (a -c list replaces the layers' list, so it repeats "
		    "theirs)",
		    word);
	}
	h->fix = xasprintf("env_vars = %s in [mcp_servers.%s] of %s%s", h->fix_env_vars, key, where,
	                   c ? c
	                     : " (Codex's -c cannot name this server: its keys split at every "
	                       "'.')");
	free(c);
	free(word);
	free(key);
}

/* The change that carries the lost variables: names in the server's
 * env_vars (merged with its list), or in the parent's environment. */
static void env_fix(const struct dt_mcp_server *s, struct dt_handoff *h)
{
	const char **names = xrealloc(NULL, (h->nvars + 1) * sizeof(*names));
	char *keep;

	for (size_t k = 0; k < h->nvars; k++)
		names[k] = h->vars[k].name;
	if (s) {
		h->fix_env_vars = dt_mcp_env_vars_merged(s, names, h->nvars);
		server_fix(s, h);
	} else {
		keep = xstrdup("");
		for (size_t k = 0; k < h->nvars; k++) {
			char *next = xasprintf("%s%s%s", keep, k ? ", " : "", names[k]);
			free(keep);
			keep = next;
		}
		h->fix = xasprintf("keep %s in the environment pid %lld starts pid %ld with", keep,
		                   (long long)h->pid, h->pid);
		free(keep);
	}
	free(names);
}

/* Hermes reads these to find the board (roots_env.c) */
static int locates_board(const char *name)
{
	static const char *const v[] = {"HERMES_KANBAN_DB", "HERMES_KANBAN_HOME", "HERMES_HOME",
	                                "HERMES_KANBAN_BOARD", "HERMES_DATA_DIR_SUFFIX"};
	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++)
		if (!strcmp(name, v[i]))
			return 1;
	return 0;
}

static int same_path(const char *a, const char *b);

/* A variable that only locates the board is moot when the process opened
 * the board its launcher's environment names anyway. */
static void drop_moot(const struct dt_record *launcher, const char *opened, struct dt_handoff *h)
{
	char *why = NULL, *named = dt_hermes_board(launcher->env, launcher->nenv, &why);
	size_t k = 0;

	for (size_t i = 0; i < h->nvars; i++) {
		if (named && locates_board(h->vars[i].name) && same_path(opened, named))
			free(h->vars[i].name);
		else
			h->vars[k++] = h->vars[i];
	}
	h->nvars = k;
	free(named);
	free(why);
}

static struct dt_handoff *push(struct dt_handoffs *hs)
{
	hs->v = xrealloc(hs->v, (hs->n + 1) * sizeof(*hs->v));
	memset(&hs->v[hs->n], 0, sizeof(*hs->v));
	return &hs->v[hs->n++];
}

static void env_lost(const struct dt_report *r, const struct dt_record *p, struct dt_handoffs *hs)
{
	const struct dt_record *launcher = launcher_of(r, p), *db;
	const struct dt_mcp_server *s;
	struct dt_handoff h = {DT_HANDOFF_ENV_LOST};

	if (!launcher || !(db = board_opened(r, (long)p->pid, 0)))
		return;
	collect_lost(launcher, p, &h);
	drop_moot(launcher, dt_report_path(db), &h);
	if (!h.nvars)
		return;
	s = dt_mcp_server_for(r->roots.mcp, r->roots.nmcp, p->argv, p->argc);
	h.pid = (long)p->pid;
	h.comm = p->comm;
	h.server = s ? s->name : NULL;
	h.board = dt_report_path(db);
	h.hop = hop_text(launcher, p, h.server);
	h.why = astray_override(launch_of(r), &h);
	env_fix(s, &h);
	*push(hs) = h;
}

static int same_path(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (!strcmp(a, b))
		return 1;
	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

static void wrong_board(const struct dt_report *r, const struct dt_record *p, const char *named,
                        struct dt_handoffs *hs)
{
	const struct dt_record *db = board_opened(r, (long)p->pid, 1);
	const char *path = db ? dt_report_path(db) : NULL;
	struct dt_handoff *h;
	char *why = NULL, *own;

	if (!path || strcmp(base_name(path), "kanban.db") || same_path(path, named))
		return;
	own = dt_hermes_board(p->env, p->nenv, &why);
	h = push(hs);
	h->kind = DT_HANDOFF_WRONG_BOARD;
	h->pid = (long)p->pid;
	h->comm = p->comm;
	h->board = path;
	h->named = xstrdup(named);
	h->why = why ? why : xstrdup("its environment does not say (no HOME recorded)");
	const struct dt_mcp_server *s =
	    dt_mcp_server_for(r->roots.mcp, r->roots.nmcp, p->argv, p->argc);
	h->server = s ? s->name : NULL;
	h->fix = xasprintf("give pid %ld the launch's HERMES_KANBAN_DB=%s (see the environment "
	                   "lost on the way, when it is listed)",
	                   h->pid, named);
	free(own);
}

void dt_handoffs_build(const struct dt_report *r, struct dt_handoffs *hs)
{
	const struct dt_record *launch = launch_of(r);
	char *why = NULL, *named = NULL;
	int hermes = 0;

	memset(hs, 0, sizeof(*hs));
	for (size_t i = 0; launch && i < launch->nenv; i++)
		hermes |= starts_with(launch->env[i], "HERMES_");
	/* the board the launch named: only a Hermes launch names one */
	if (hermes)
		named = dt_hermes_board(launch->env, launch->nenv, &why);
	for (size_t i = 0; i < r->nprocs; i++) {
		/* a process may have several images: the last speaks for it */
		if (dt_report_proc(r, r->procs[i], (long)r->procs[i]->pid) != r->procs[i])
			continue;
		env_lost(r, r->procs[i], hs);
		if (named)
			wrong_board(r, r->procs[i], named, hs);
	}
	free(named);
	free(why);
}

void dt_handoffs_free(struct dt_handoffs *hs)
{
	for (size_t i = 0; i < hs->n; i++) {
		struct dt_handoff *h = &hs->v[i];
		free(h->named);
		free(h->why);
		free(h->hop);
		for (size_t k = 0; k < h->nvars; k++)
			free(h->vars[k].name);
		free(h->vars);
		free(h->fix);
		free(h->fix_env_vars);
		free(h->fix_override);
	}
	free(hs->v);
	memset(hs, 0, sizeof(*hs));
}
