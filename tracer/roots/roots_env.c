// SPDX-License-Identifier: MIT
/*
 * The writable roots Hermes and hcom give their workers, from the
 * environment (roots.h: dt_roots_from_env).
 */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roots_int.h"
#include "safeopen.h"

/* ---- Hermes and hcom ----------------------------------------------------- */

static const char *env_get(const char *const *env, size_t nenv, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; env && i < nenv; i++)
		if (env[i] && !strncmp(env[i], name, n) && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

static bool env_has_prefix(const char *const *env, size_t nenv, const char *prefix)
{
	for (size_t i = 0; env && i < nenv; i++)
		if (env[i] && starts_with(env[i], prefix))
			return true;
	return false;
}

/* A path from the environment: "~" against HOME, relative against PWD
 * (the shell's idea of the cwd, all an environment offers). */
static char *env_path(struct dt_rootset *rs, const char *const *env, size_t nenv, const char *name,
                      const char *value)
{
	char *p = resolve_path(value, env_get(env, nenv, "PWD"), env_get(env, nenv, "HOME"));

	if (!p)
		dt_roots_warn(rs, "%s=%s: cannot tell which directory it names; ignored", name,
		              value);
	return p;
}

static const char hermes_knob[] =
    "HERMES_KANBAN_DB / the board's kanban root is passed to Codex as -c "
    "sandbox_workspace_write.writable_roots by Hermes' codex transport";
static const char hermes_workspace_knob[] =
    "HERMES_KANBAN_WORKSPACE (Hermes starts the worker there; Codex makes its cwd "
    "writable)";
static const char hcom_knob[] = "HCOM_DIR (hcom passes it to codex as a writable root)";

/*
 * Hermes' roots as hermes-agent itself resolves them. Checked against
 * NousResearch/hermes-agent commit 00067189dfec (hermes_cli/kanban_db.py:
 * kanban_home, get_current_board, _board_path; hermes_constants.py:
 * get_default_hermes_root):
 *  - the board DB: HERMES_KANBAN_DB (stripped, "~" expanded) pins it; else
 *    the board slug is HERMES_KANBAN_BOARD, else the one line of
 *    <root>/kanban/current (each only while that board exists: its
 *    directory holds board.json or kanban.db), else "default"; "default"
 *    is <root>/kanban.db, any other slug <root>/kanban/boards/<slug>/kanban.db.
 *  - <root>: HERMES_KANBAN_HOME (stripped, "~" expanded), else the native
 *    home ~/.hermes (+ HERMES_DATA_DIR_SUFFIX) when HERMES_HOME is unset or
 *    resolves beneath it (a profile home ~/.hermes/profiles/NAME shares the
 *    board), else X for HERMES_HOME=X/profiles/NAME, else HERMES_HOME.
 * The Codex transport (agent/transports/codex_app_server.py at commit
 * 04c46648aa44, the grant of PR #27557), when HERMES_KANBAN_TASK is set,
 * grants -c sandbox_workspace_write.writable_roots=["K"] with K =
 * dirname(HERMES_KANBAN_DB), else HERMES_KANBAN_ROOT, else
 * $HERMES_HOME/kanban ($HERMES_HOME defaulting to ~/.hermes). Later
 * hermes-agent versions add the workspace roots to that grant.
 */
struct hermes_env {
	const char *const *env;
	size_t nenv;
	struct dt_rootset *rs;
};

/* A variable as Python's os.environ.get(NAME, "").strip() sees it; NULL
 * when unset or blank. The copy lives in buf. */
static const char *hermes_var(const struct hermes_env *h, const char *name, char *buf, size_t cap)
{
	const char *v = env_get(h->env, h->nenv, name);
	size_t n;

	if (!v)
		return NULL;
	while (*v == ' ' || *v == '\t' || *v == '\n')
		v++;
	n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\n'))
		n--;
	if (!n || n >= cap)
		return NULL;
	memcpy(buf, v, n);
	buf[n] = 0;
	return buf;
}

/* The path as this machine resolves it now, else as written. */
static char *resolved_or_lexical(const char *p)
{
	char *r = realpath(p, NULL);

	return r ? r : xstrdup(p);
}

/* get_default_hermes_root() (or HERMES_KANBAN_HOME): the board root, and
 * in why which rule gave it. NULL when HOME is needed and unknown. */
static char *hermes_kanban_home(const struct hermes_env *h, char **why)
{
	char kh[4096], hh[4096];
	const char *home = env_get(h->env, h->nenv, "HOME");
	const char *sfx = env_get(h->env, h->nenv, "HERMES_DATA_DIR_SUFFIX");
	const char *v;
	char *native, *p, *a, *b;

	if ((v = hermes_var(h, "HERMES_KANBAN_HOME", kh, sizeof(kh)))) {
		*why = xasprintf("HERMES_KANBAN_HOME=%s", v);
		return env_path(h->rs, h->env, h->nenv, "HERMES_KANBAN_HOME", v);
	}
	v = env_get(h->env, h->nenv, "HERMES_HOME");
	if (!nonempty(home) || home[0] != '/') {
		if (!nonempty(v))
			return NULL;
		native = NULL;
	} else {
		native = xasprintf("%s/.hermes%s", strcmp(home, "/") ? home : "", sfx ? sfx : "");
	}
	if (!nonempty(v)) {
		*why = xasprintf("HOME=%s (Hermes' default root ~/.hermes)", home);
		return native;
	}
	snprintf(hh, sizeof(hh), "%s", v);
	p = env_path(h->rs, h->env, h->nenv, "HERMES_HOME", hh);
	if (!p) {
		free(native);
		return NULL;
	}
	a = resolved_or_lexical(p);
	b = native ? resolved_or_lexical(native) : NULL;
	if (b && dt_path_under(a, b)) {
		*why =
		    xasprintf("HERMES_HOME=%s, a home under ~/.hermes (which holds the board)", v);
		free(p);
		p = native;
		native = NULL;
	} else {
		char *up = dir_name(p);

		if (!strcmp(base_name(up), "profiles")) {
			char *top = dir_name(up);

			*why = xasprintf("HERMES_HOME=%s, a profile of %s", v, top);
			free(p);
			p = top;
		} else {
			*why = xasprintf("HERMES_HOME=%s", v);
		}
		free(up);
	}
	free(a);
	free(b);
	free(native);
	return p;
}
/* A board slug as _normalize_board_slug accepts it (lowercased into buf),
 * and only while the board exists; NULL otherwise. */
static const char *hermes_board_slug(const char *raw, const char *kroot, char *buf, size_t cap)
{
	size_t n = 0;
	char *dir, *f1, *f2;
	int exists;

	while (*raw == ' ' || *raw == '\t')
		raw++;
	for (; raw[n] && raw[n] != '\n' && raw[n] != ' ' && n + 1 < cap; n++)
		buf[n] = (char)(raw[n] >= 'A' && raw[n] <= 'Z' ? raw[n] + 32 : raw[n]);
	buf[n] = 0;
	if (!n || n > 64 || buf[0] == '-' || buf[0] == '_')
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!((buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= '0' && buf[i] <= '9') ||
		      buf[i] == '-' || buf[i] == '_'))
			return NULL;
	if (!strcmp(buf, "default"))
		return buf;
	dir = xasprintf("%s/kanban/boards/%s", kroot, buf);
	f1 = xasprintf("%s/board.json", dir);
	f2 = xasprintf("%s/kanban.db", dir);
	exists = access(f1, F_OK) == 0 || access(f2, F_OK) == 0;
	free(dir);
	free(f1);
	free(f2);
	return exists ? buf : NULL;
}

/* The board DB Hermes opens, and in why where it came from. */
static char *hermes_board_db(const struct hermes_env *h, const char *kroot, const char *kwhy,
                             char **why)
{
	char buf[4096], slug[80];
	const char *v, *s = NULL;
	char *cur;

	if ((v = hermes_var(h, "HERMES_KANBAN_DB", buf, sizeof(buf)))) {
		*why =
		    xasprintf("HERMES_KANBAN_DB=%s", env_get(h->env, h->nenv, "HERMES_KANBAN_DB"));
		return env_path(h->rs, h->env, h->nenv, "HERMES_KANBAN_DB", v);
	}
	if (!kroot)
		return NULL;
	if ((v = hermes_var(h, "HERMES_KANBAN_BOARD", buf, sizeof(buf))))
		s = hermes_board_slug(v, kroot, slug, sizeof(slug));
	cur = xasprintf("%s/kanban/current", kroot);
	/* kroot comes from a recorded environment: what sits there may be a
	 * FIFO or a link to a device, planted to hang or steer us */
	if (!s && dt_read_planted(cur, 0, buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = 0;
		s = hermes_board_slug(buf, kroot, slug, sizeof(slug));
	}
	free(cur);
	if (!s || !strcmp(s, "default")) {
		*why = xasprintf("%s: Hermes' default board <root>/kanban.db", kwhy);
		return xasprintf("%s/kanban.db", strcmp(kroot, "/") ? kroot : "");
	}
	*why = xasprintf("%s: Hermes' board %s, <root>/kanban/boards/%s/kanban.db", kwhy, s, s);
	return xasprintf("%s/kanban/boards/%s/kanban.db", strcmp(kroot, "/") ? kroot : "", s);
}

char *dt_hermes_board(const char *const *env, size_t nenv, char **why)
{
	struct dt_rootset scratch = {0}; /* env_path's warnings, not wanted here */
	struct hermes_env h = {env, nenv, &scratch};
	char *kwhy = NULL, *kroot = hermes_kanban_home(&h, &kwhy), *db;

	*why = NULL;
	db = hermes_board_db(&h, kroot, kwhy, why);
	free(kroot);
	free(kwhy);
	dt_rootset_free(&scratch);
	return db;
}

/* What Hermes' Codex transport grants (see above), or NULL when it would
 * not run (no HERMES_KANBAN_TASK, and no HERMES_KANBAN_ROOT naming it). */
static char *hermes_transport_grant(const struct hermes_env *h, char **why)
{
	const char *db = env_get(h->env, h->nenv, "HERMES_KANBAN_DB");
	const char *root = env_get(h->env, h->nenv, "HERMES_KANBAN_ROOT");
	const char *hh = env_get(h->env, h->nenv, "HERMES_HOME");
	const char *home = env_get(h->env, h->nenv, "HOME");
	char *p, *k;

	if (!env_get(h->env, h->nenv, "HERMES_KANBAN_TASK") && !nonempty(root))
		return NULL;
	if (nonempty(db)) {
		p = env_path(h->rs, h->env, h->nenv, "HERMES_KANBAN_DB", db);
		k = p ? dir_name(p) : NULL;
		free(p);
		*why = xasprintf("Hermes' Codex transport grant dirname(HERMES_KANBAN_DB)");
		return k;
	}
	if (root) {
		*why = xasprintf("HERMES_KANBAN_ROOT=%s (Hermes' Codex transport grant)", root);
		return env_path(h->rs, h->env, h->nenv, "HERMES_KANBAN_ROOT", root);
	}
	if (hh) {
		p = env_path(h->rs, h->env, h->nenv, "HERMES_HOME", hh);
		*why = xasprintf(
		    "HERMES_HOME=%s (Hermes' Codex transport grant $HERMES_HOME/kanban)", hh);
	} else if (nonempty(home) && home[0] == '/') {
		p = xasprintf("%s/.hermes", strcmp(home, "/") ? home : "");
		*why = xasprintf("HOME=%s (Hermes' Codex transport grant ~/.hermes/kanban)", home);
	} else {
		return NULL;
	}
	k = p ? xasprintf("%s/kanban", strcmp(p, "/") ? p : "") : NULL;
	free(p);
	return k;
}

static void hermes_roots(struct dt_rootset *rs, const char *const *env, size_t nenv)
{
	struct hermes_env h = {env, nenv, rs};
	const char *ws = env_get(env, nenv, "HERMES_KANBAN_WORKSPACE");
	char *kwhy = NULL, *dbwhy = NULL, *gwhy = NULL, *kroot, *db, *grant, *p, *s;

	if (!env_has_prefix(env, nenv, "HERMES_KANBAN_") && !env_get(env, nenv, "HERMES_HOME"))
		return;
	kroot = hermes_kanban_home(&h, &kwhy);
	db = hermes_board_db(&h, kroot, kwhy, &dbwhy);
	if (db) {
		p = dir_name(db);
		dt_roots_add(rs, p, DT_ROOT_HERMES, dbwhy, hermes_knob);
		free(p);
	}
	grant = hermes_transport_grant(&h, &gwhy);
	if (grant) {
		dt_roots_add(rs, grant, DT_ROOT_HERMES, gwhy, hermes_knob);
		if (db && !dt_path_under(db, grant))
			dt_roots_warn(
			    rs,
			    "Hermes opens its board at %s, but its Codex transport grants "
			    "%s: the board is outside the granted root (that mismatch is "
			    "the bug to file)",
			    db, grant);
	}
	if (nonempty(ws)) {
		p = env_path(rs, env, nenv, "HERMES_KANBAN_WORKSPACE", ws);
		if (p) {
			s = xasprintf("HERMES_KANBAN_WORKSPACE=%s", ws);
			dt_roots_add(rs, p, DT_ROOT_HERMES, s, hermes_workspace_knob);
			free(s);
		}
		free(p);
	}
	free(kroot);
	free(kwhy);
	free(db);
	free(dbwhy);
	free(grant);
	free(gwhy);
}

/*
 * hcom's directory as aannoo/hcom resolves it (src/paths.rs
 * resolve_hcom_dir_from_env, checked at commit 13ef196, hcom 0.7.24):
 * HCOM_DIR when non-empty, a leading "~" replaced by HOME, a relative path
 * taken against the cwd; else $HOME/.hcom. Its database is always
 * <dir>/hcom.db (src/paths.rs db_path, src/db/mod.rs HcomDb::open), with no
 * setting of its own. `hcom codex` grants it with -c
 * sandbox_workspace_write.writable_roots=["<dir>"] when a sandbox flag is
 * given (src/tools/codex_preprocessing.rs ensure_hcom_writable).
 */
static char *hcom_dir(struct dt_rootset *rs, const char *const *env, size_t nenv, char **why)
{
	const char *dir = env_get(env, nenv, "HCOM_DIR");
	const char *home = env_get(env, nenv, "HOME");
	char *p;

	*why = NULL;
	if (nonempty(dir)) {
		p = env_path(rs, env, nenv, "HCOM_DIR", dir);
		if (p)
			*why = xasprintf("HCOM_DIR=%s", dir);
		return p;
	}
	if (!nonempty(home) || home[0] != '/')
		return NULL;
	*why = xasprintf("HOME=%s (hcom's default ~/.hcom)", home);
	return xasprintf("%s/.hcom", strcmp(home, "/") ? home : "");
}

static void hcom_roots(struct dt_rootset *rs, const char *const *env, size_t nenv, int force_hcom)
{
	const char *home = env_get(env, nenv, "HOME");
	char *why, *p;

	if (!nonempty(env_get(env, nenv, "HCOM_DIR")) && !force_hcom &&
	    !env_has_prefix(env, nenv, "HCOM_"))
		return;
	p = hcom_dir(rs, env, nenv, &why);
	if (p)
		dt_roots_add(rs, p, DT_ROOT_HCOM, why, hcom_knob);
	else if (!nonempty(env_get(env, nenv, "HCOM_DIR")))
		dt_roots_warn(rs, "hcom's directory defaults to ~/.hcom, but HOME is %s",
		              nonempty(home) ? "relative" : "not set");
	free(why);
	free(p);
}

char *dt_hcom_db(const char *const *env, size_t nenv, char **why)
{
	struct dt_rootset scratch = {0}; /* env_path's warnings, not wanted here */
	char *dir = hcom_dir(&scratch, env, nenv, why), *db;

	dt_rootset_free(&scratch);
	if (!dir)
		return NULL;
	db = xasprintf("%s/hcom.db", strcmp(dir, "/") ? dir : "");
	free(dir);
	return db;
}

void dt_roots_from_env(struct dt_rootset *rs, const char *const *env, size_t nenv, int force_hcom)
{
	if (!rs)
		return;
	hermes_roots(rs, env, nenv);
	hcom_roots(rs, env, nenv, force_hcom);
}
