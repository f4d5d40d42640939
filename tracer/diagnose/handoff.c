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
	return k == DT_HANDOFF_ENV_LOST      ? "environment-lost"
	       : k == DT_HANDOFF_WRONG_BOARD ? "wrong-board"
	                                     : "no-such-server";
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

int dt_handoff_same_path(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (!strcmp(a, b))
		return 1;
	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

const char *dt_handoff_board_written(const struct dt_report *r, long pid)
{
	const struct dt_record *db = board_opened(r, pid, 1);
	return db ? dt_report_path(db) : NULL;
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
		dt_out_of_memory();
	return q;
}

/* " -c WORD" for each override, each one shell word: names in them may
 * be the traced program's. */
static char *c_words(char *const *v, size_t n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		dt_out_of_memory();
	for (size_t k = 0; k < n; k++) {
		fputs(" -c ", f);
		dt_shell_word(f, v[k]);
	}
	if (fclose(f) != 0)
		dt_out_of_memory();
	return out;
}

/* Does the server's env table (a file's, or a -c env.VAR) set the
 * variable? Then it wins over env_vars, and only another env entry
 * carries the launcher's value. */
static int table_sets(const struct dt_mcp_server *s, const char *name)
{
	const struct dt_mcp_var *v = dt_mcp_var_of(s, name);
	return v && v->from && (starts_with(v->from, "env table") || starts_with(v->from, "-c "));
}

/* -c mcp_servers.S.env.VAR="value" for each lost variable the table sets;
 * the rest go to names (nnames of them). */
static void env_overrides(const struct dt_mcp_server *s, struct dt_handoff *h, const char **names,
                          size_t *nnames)
{
	*nnames = 0;
	for (size_t k = 0; k < h->nvars; k++) {
		/* a name from the ring that would be more than one key segment
		 * (a '.' or '=' in it) never becomes a -c key */
		if (!table_sets(s, h->vars[k].name) || !dt_codex_key_segment_ok(h->vars[k].name) ||
		    !dt_codex_key_segment_ok(s->name)) {
			names[(*nnames)++] = h->vars[k].name;
			continue;
		}
		char *q = dt_toml_quote(h->vars[k].launcher);
		h->fix_env_overrides =
		    xrealloc(h->fix_env_overrides, (h->nfix_env_overrides + 1) * sizeof(char *));
		h->fix_env_overrides[h->nfix_env_overrides++] =
		    xasprintf("mcp_servers.%s.env.%s=%s", s->name, h->vars[k].name, q);
		free(q);
	}
}

static char *joined(char *const *v, size_t n, const char *sep)
{
	char *out = xstrdup("");
	for (size_t k = 0; k < n; k++) {
		char *next = xasprintf("%s%s%s", out, k ? sep : "", v[k]);
		free(out);
		out = next;
	}
	return out;
}

static void server_env_fix(const struct dt_mcp_server *s, struct dt_handoff *h)
{
	const char **names = xrealloc(NULL, (h->nvars + 1) * sizeof(*names));
	const char *where = s->env_vars_from ? s->env_vars_from
	                    : s->defined_in  ? s->defined_in
	                                     : "config.toml";
	char *list = NULL, *key = toml_key(s->name);
	size_t nnames;

	env_overrides(s, h, names, &nnames);
	if (nnames && dt_codex_key_segment_ok(s->name)) {
		h->fix_env_vars = dt_mcp_env_vars_merged(s, names, nnames);
		h->fix_override = xasprintf("mcp_servers.%s.env_vars=%s", s->name, h->fix_env_vars);
		char *word = c_words(&h->fix_override, 1);
		list = xasprintf("env_vars = %s in [mcp_servers.%s] of %s, or codex%s (a -c list "
		                 "replaces the layers' list, so it repeats theirs)",
		                 h->fix_env_vars, key, where, word);
		free(word);
	} else if (nnames) {
		h->fix_env_vars = dt_mcp_env_vars_merged(s, names, nnames);
		list = xasprintf("env_vars = %s in [mcp_servers.%s] of %s (Codex's -c cannot name "
		                 "this server: its keys split at every '.')",
		                 h->fix_env_vars, key, where);
	}
	if (h->nfix_env_overrides) {
		char *words = c_words(h->fix_env_overrides, h->nfix_env_overrides);
		h->fix =
		    xasprintf("%s%scodex%s (its env table sets %s, and the table wins over "
		              "env_vars)",
		              list ? list : "", list ? "; and " : "", words,
		              h->nfix_env_overrides == 1 ? "that variable" : "those variables");
		free(words);
	} else
		h->fix = list ? xstrdup(list) : xstrdup("");
	free(list);
	free(key);
	free(names);
}

/* The change that carries the lost variables: names in the server's
 * env_vars (merged with its list) or entries of its env table, or in the
 * parent's environment. */
static void env_fix(const struct dt_mcp_server *s, long parent, struct dt_handoff *h)
{
	if (s) {
		server_env_fix(s, h);
		return;
	}
	char **names = xrealloc(NULL, (h->nvars + 1) * sizeof(*names));
	for (size_t k = 0; k < h->nvars; k++)
		names[k] = h->vars[k].name;
	char *keep = joined(names, h->nvars, ", ");
	h->fix = xasprintf("keep %s in the environment pid %ld starts pid %ld with", keep, parent,
	                   h->pid);
	free(keep);
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

/* A variable that only locates the board is moot when the process opened
 * the board its launcher's environment names anyway. */
static void drop_moot(const struct dt_record *launcher, const char *opened, struct dt_handoff *h)
{
	char *why = NULL, *named = dt_hermes_board(launcher->env, launcher->nenv, &why);
	size_t k = 0;

	for (size_t i = 0; i < h->nvars; i++) {
		if (named && locates_board(h->vars[i].name) && dt_handoff_same_path(opened, named))
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
	env_fix(s, (long)p->ppid, &h);
	*push(hs) = h;
}

/* The boards a launch names, and how each program finds its own. */
struct board_kind {
	const char *file;   /* the database's file name */
	const char *prefix; /* a launch with a variable of this prefix names one */
	char *(*resolve)(const char *const *env, size_t nenv, char **why);
	const char *pin; /* the variable that carries it */
	int pin_is_dir;  /* pin names the database's directory */
};

static const struct board_kind board_kinds[] = {
    {"kanban.db", "HERMES_", dt_hermes_board, "HERMES_KANBAN_DB", 0},
    {"hcom.db", "HCOM_", dt_hcom_db, "HCOM_DIR", 1},
};

/* The first database named k->file that pid wrote, or NULL. */
static const char *board_written_as(const struct dt_report *r, long pid, const char *file)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *d = &r->recs[i];
		if (d->pid == pid && d->type == DT_REC_WRITE && d->sqlite &&
		    !strcmp(d->sqlite, "db") && !strcmp(base_name(dt_report_path(d)), file))
			return dt_report_path(d);
	}
	return NULL;
}

static void wrong_board(const struct dt_report *r, const struct dt_record *p,
                        const struct board_kind *k, const char *named, struct dt_handoffs *hs)
{
	const char *path = board_written_as(r, (long)p->pid, k->file);
	struct dt_handoff *h;
	char *why = NULL, *own, *pin;

	if (!path || dt_handoff_same_path(path, named))
		return;
	own = k->resolve(p->env, p->nenv, &why);
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
	pin = k->pin_is_dir ? dir_name(named) : xstrdup(named);
	h->fix = xasprintf("give pid %ld the launch's %s=%s (see the environment lost on the "
	                   "way, when it is listed)",
	                   h->pid, k->pin, pin);
	free(pin);
	free(own);
}

/* The board of kind k the launch named, or NULL when it names none. */
static char *named_board(const struct dt_record *launch, const struct board_kind *k)
{
	char *why = NULL, *named = NULL;
	int involved = 0;

	for (size_t i = 0; launch && i < launch->nenv; i++)
		involved |= starts_with(launch->env[i], k->prefix);
	if (involved)
		named = k->resolve(launch->env, launch->nenv, &why);
	free(why);
	/* the resolver returns its own allocation; cppcheck reads the call
	 * through the table as returning &why */
	// cppcheck-suppress returnDanglingLifetime
	return named;
}

/* The server named by the -c key w (after "mcp_servers."), or NULL. */
static const struct dt_mcp_server *override_server(const struct dt_report *r, const char *w)
{
	const char *name = w + strlen("mcp_servers."), *dot = strchr(name, '.');
	for (size_t i = 0; dot && i < r->roots.nmcp; i++)
		if (strlen(r->roots.mcp[i].name) == (size_t)(dot - name) &&
		    !strncmp(r->roots.mcp[i].name, name, (size_t)(dot - name)))
			return &r->roots.mcp[i];
	return NULL;
}

/* The one stdio server other than skip, or NULL when there are none or
 * several. */
static const char *only_other_server(const struct dt_report *r, const struct dt_mcp_server *skip)
{
	const char *found = NULL;
	for (size_t i = 0; i < r->roots.nmcp; i++) {
		if (&r->roots.mcp[i] == skip || !r->roots.mcp[i].command)
			continue;
		if (found)
			return NULL;
		found = r->roots.mcp[i].name;
	}
	return found;
}

static int already_named(const struct dt_handoffs *hs, const char *server)
{
	for (size_t i = 0; i < hs->n; i++)
		if (hs->v[i].kind == DT_HANDOFF_NO_SUCH_SERVER && !strcmp(hs->v[i].server, server))
			return 1;
	return 0;
}

static void no_such_server(const struct dt_report *r, const struct dt_record *launch,
                           struct dt_handoffs *hs)
{
	for (size_t i = 0; launch && i + 1 < launch->argc; i++) {
		const char *w = launch->argv[i + 1];
		const struct dt_mcp_server *s;
		if (strcmp(launch->argv[i], "-c") || !starts_with(w, "mcp_servers.") ||
		    !(s = override_server(r, w)) || s->command || s->url ||
		    already_named(hs, s->name))
			continue;
		struct dt_handoff *h = push(hs);
		const char *other = only_other_server(r, s);
		h->kind = DT_HANDOFF_NO_SUCH_SERVER;
		h->pid = (long)launch->pid;
		h->comm = launch->comm;
		h->server = s->name;
		h->why = xasprintf("-c %s names the server %s, which no layer gives a command or "
		                   "a url: Codex refuses its configuration (\"invalid transport\", "
		                   "exit 1) before it starts anything",
		                   w, s->name);
		if (other && !dt_codex_key_segment_ok(other))
			other = NULL; /* no -c key can name it */
		h->fix_server = other ? xstrdup(other) : NULL;
		h->fix = other ? xasprintf("name the server that exists: -c mcp_servers.%s.... "
		                           "instead of -c mcp_servers.%s....",
		                           other, s->name)
		               : xasprintf("drop the -c mcp_servers.%s.... overrides, or name the "
		                           "configured server they are for",
		                           s->name);
	}
}

void dt_handoffs_build(const struct dt_report *r, struct dt_handoffs *hs)
{
	const struct dt_record *launch = launch_of(r);
	enum { NKINDS = sizeof(board_kinds) / sizeof(*board_kinds) };
	char *named[NKINDS];

	memset(hs, 0, sizeof(*hs));
	for (size_t k = 0; k < NKINDS; k++)
		named[k] = named_board(launch, &board_kinds[k]);
	for (size_t i = 0; i < r->nprocs; i++) {
		/* a process may have several images: the last speaks for it */
		if (dt_report_proc(r, r->procs[i], (long)r->procs[i]->pid) != r->procs[i])
			continue;
		env_lost(r, r->procs[i], hs);
		for (size_t k = 0; k < NKINDS; k++)
			if (named[k])
				wrong_board(r, r->procs[i], &board_kinds[k], named[k], hs);
	}
	for (size_t k = 0; k < NKINDS; k++)
		free(named[k]);
	no_such_server(r, launch, hs);
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
		free(h->fix_server);
		for (size_t k = 0; k < h->nfix_env_overrides; k++)
			free(h->fix_env_overrides[k]);
		free(h->fix_env_overrides);
	}
	free(hs->v);
	memset(hs, 0, sizeof(*hs));
}
