// SPDX-License-Identifier: MIT
/*
 * The writable roots Hermes and hcom give their workers, from the
 * environment (roots.h: dt_roots_from_env).
 */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "roots_int.h"

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

static void hermes_roots(struct dt_rootset *rs, const char *const *env, size_t nenv)
{
	const char *db = env_get(env, nenv, "HERMES_KANBAN_DB");
	const char *root = env_get(env, nenv, "HERMES_KANBAN_ROOT");
	const char *hh = env_get(env, nenv, "HERMES_HOME");
	const char *ws = env_get(env, nenv, "HERMES_KANBAN_WORKSPACE");
	const char *home = env_get(env, nenv, "HOME");
	char *p, *s;

	/* The same order as Hermes' codex transport picks its kanban root. */
	if (nonempty(db)) {
		p = env_path(rs, env, nenv, "HERMES_KANBAN_DB", db);
		if (p) {
			char *dir = dir_name(p);

			s = xasprintf("HERMES_KANBAN_DB=%s", db);
			dt_roots_add(rs, dir, DT_ROOT_HERMES, s, hermes_knob);
			free(s);
			free(dir);
		}
		free(p);
	} else if (nonempty(root)) {
		p = env_path(rs, env, nenv, "HERMES_KANBAN_ROOT", root);
		if (p) {
			s = xasprintf("HERMES_KANBAN_ROOT=%s", root);
			dt_roots_add(rs, p, DT_ROOT_HERMES, s, hermes_knob);
			free(s);
		}
		free(p);
	} else if (nonempty(hh)) {
		p = env_path(rs, env, nenv, "HERMES_HOME", hh);
		if (p) {
			char *k = xasprintf("%s/kanban", strcmp(p, "/") ? p : "");

			s = xasprintf("HERMES_HOME=%s ($HERMES_HOME/kanban)", hh);
			dt_roots_add(rs, k, DT_ROOT_HERMES, s, hermes_knob);
			free(s);
			free(k);
		}
		free(p);
	} else if (env_has_prefix(env, nenv, "HERMES_KANBAN_") && nonempty(home) &&
	           home[0] == '/') {
		/* a Kanban worker without any of the three: Hermes' own default */
		p = xasprintf("%s/.hermes/kanban", strcmp(home, "/") ? home : "");
		s = xasprintf("HOME=%s (Hermes' default kanban root ~/.hermes/kanban)", home);
		dt_roots_add(rs, p, DT_ROOT_HERMES, s, hermes_knob);
		free(s);
		free(p);
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
}

static void hcom_roots(struct dt_rootset *rs, const char *const *env, size_t nenv, int force_hcom)
{
	const char *dir = env_get(env, nenv, "HCOM_DIR");
	const char *home = env_get(env, nenv, "HOME");
	char *p, *s;

	if (nonempty(dir)) {
		p = env_path(rs, env, nenv, "HCOM_DIR", dir);
		if (p) {
			s = xasprintf("HCOM_DIR=%s", dir);
			dt_roots_add(rs, p, DT_ROOT_HCOM, s, hcom_knob);
			free(s);
		}
		free(p);
		return;
	}
	if (!force_hcom && !env_has_prefix(env, nenv, "HCOM_"))
		return;
	if (!nonempty(home) || home[0] != '/') {
		dt_roots_warn(rs, "hcom's directory defaults to ~/.hcom, but HOME is %s",
		              nonempty(home) ? "relative" : "not set");
		return;
	}
	p = xasprintf("%s/.hcom", strcmp(home, "/") ? home : "");
	s = xasprintf("HOME=%s (hcom's default ~/.hcom)", home);
	dt_roots_add(rs, p, DT_ROOT_HCOM, s, hcom_knob);
	free(s);
	free(p);
}

void dt_roots_from_env(struct dt_rootset *rs, const char *const *env, size_t nenv, int force_hcom)
{
	if (!rs)
		return;
	hermes_roots(rs, env, nenv);
	hcom_roots(rs, env, nenv, force_hcom);
}
