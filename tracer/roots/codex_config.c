// SPDX-License-Identifier: MIT
/*
 * Codex's configuration as the Codex 0.169 binary reads it (codex_int.h):
 * config.toml, the -p layer and the -c overrides merged, the values
 * checked as Codex checks them, project trust, and loading the files.
 */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codex_int.h"
#include "safeopen.h"

static struct toml_value *parse_config(struct dt_rootset *rs, const char *path, bool explicit,
                                       char *err, size_t errlen, int *rc);

/* ---- Codex: CODEX_HOME ------------------------------------------------------ */

int dt_codex_home_in_tempdir(const char *codex_home, const char *tmpdir, const char *cwd,
                             char *tempdir, size_t cap)
{
	char *home = nonempty(codex_home) ? resolve_path(codex_home, cwd, NULL) : NULL;
	char rhome[PATH_MAX], rtmp[PATH_MAX];
	const char *tmp = nonempty(tmpdir) ? tmpdir : "/tmp";
	int under = 0;

	/* one that does not exist yet is judged by its name */
	if (home && !realpath(home, rhome))
		snprintf(rhome, sizeof(rhome), "%s", home);
	if (home && realpath(tmp, rtmp)) {
		under = dt_path_under(rhome, rtmp);
		snprintf(tempdir, cap, "%s", rtmp);
	}
	free(home);
	return under;
}

/* The start-up failure users meet first with a CODEX_HOME under /tmp. */
void codex_warn_tempdir_home(struct dt_rootset *rs, const struct dt_codex_launch *l)
{
	char tmp[PATH_MAX];

	if (dt_codex_home_in_tempdir(l->codex_home, l->tmpdir, l->cwd, tmp, sizeof(tmp)))
		dt_roots_warn(
		    rs,
		    "CODEX_HOME=%s is inside the temporary directory %s: Codex refuses to "
		    "create its helper binaries there (\"Refusing to create helper "
		    "binaries under temporary dir\") and `codex sandbox` cannot start "
		    "its sandbox helper; put CODEX_HOME elsewhere",
		    l->codex_home, tmp);
}

/* ---- Codex: config.toml, the -p layer and -c overrides ------------------ */

const struct toml_value *codex_walk(const struct toml_value *v, const char *const *keys,
                                    size_t nkeys)
{
	for (size_t i = 0; v && i < nkeys; i++)
		v = toml_table_get(v, keys[i]);
	return v;
}

/* Does the override set keys, or a table above them? */
static bool override_covers(const struct dt_codex_override *o, const char *const *keys,
                            size_t nkeys)
{
	size_t k;
	if (o->nkeys > nkeys)
		return false;
	for (k = 0; k < o->nkeys && !strcmp(o->keys[k], keys[k]); k++)
		;
	return k == o->nkeys;
}

/* The value an override gives at keys (NULL if it does not cover them). */
const struct toml_value *codex_override_at(const struct dt_codex_override *o,
                                           const char *const *keys, size_t nkeys)
{
	if (!override_covers(o, keys, nkeys))
		return NULL;
	return codex_walk(dt_codex_override_value(o), keys + o->nkeys, nkeys - o->nkeys);
}

const struct toml_value *dt_codex_lookup(const struct dt_codex_cli *cli,
                                         const struct toml_value *const *files, size_t nfiles,
                                         const char *const *keys, size_t nkeys,
                                         const struct dt_codex_override **from, int *file)
{
	const struct toml_value *v;

	if (from)
		*from = NULL;
	if (file)
		*file = -1;
	for (size_t i = cli->nov; i-- > 0;) {
		if (!override_covers(&cli->ov[i], keys, nkeys))
			continue;
		v = codex_override_at(&cli->ov[i], keys, nkeys);
		if (!v)
			break; /* it replaced what earlier -c flags set there */
		if (from)
			*from = &cli->ov[i];
		return v;
	}
	for (size_t i = nfiles; i-- > 0;) {
		v = codex_walk(files[i], keys, nkeys);
		if (v) {
			if (file)
				*file = (int)i;
			return v;
		}
	}
	return NULL;
}

/* The later -c that wiped what ov[i] set at keys: the first one after it
 * that sets keys or a table above them. */
const struct dt_codex_override *codex_replaced_by(const struct dt_codex_cli *cli, size_t i,
                                                  const char *const *keys, size_t nkeys)
{
	for (size_t j = i + 1; j < cli->nov; j++)
		if (override_covers(&cli->ov[j], keys, nkeys))
			return &cli->ov[j];
	return NULL;
}

const struct toml_value *codex_cfg_get(const struct codex_cfg *c, const char *const *keys,
                                       size_t nkeys, const struct dt_codex_override **from,
                                       int *file)
{
	return dt_codex_lookup(c->cli, (const struct toml_value *const *)c->v, c->n, keys, nkeys,
	                       from, file);
}

/* Where the value cfg_get found came from, for messages. */
static const char *cfg_where(const struct codex_cfg *c, const struct dt_codex_override *from,
                             int file)
{
	return from ? from->text : file >= 0 ? c->path[file] : NULL;
}

/* How high the layer that set keys is: CODEX_RANK_C a -c, 1 + its index
 * for a file (config.toml 1), 0 none. */
int codex_cfg_rank(const struct codex_cfg *c, const char *const *keys, size_t nkeys,
                   const struct toml_value **v, const char **where)
{
	const struct dt_codex_override *from;
	int file;

	*v = codex_cfg_get(c, keys, nkeys, &from, &file);
	*where = *v ? cfg_where(c, from, file) : NULL;
	return !*v ? 0 : from ? CODEX_RANK_C : file + 1;
}

__attribute__((format(printf, 2, 3))) void codex_refuse(struct dt_rootset *rs, const char *fmt, ...)
{
	va_list ap;
	char *why;

	if (rs->codex_refused)
		return;
	va_start(ap, fmt);
	if (vasprintf(&why, fmt, ap) < 0)
		dt_out_of_memory();
	va_end(ap);
	rs->codex_refused = xasprintf("Codex would refuse this command line: %s", why);
	free(why);
}

bool codex_cfg_bool(const struct codex_cfg *c, const char *key)
{
	const char *keys[] = {"sandbox_workspace_write", key};
	const struct toml_value *v = codex_cfg_get(c, keys, 2, NULL, NULL);

	return v && v->type == TOML_BOOL && v->b;
}

bool codex_known_mode(const char *m)
{
	return !strcmp(m, "read-only") || !strcmp(m, "workspace-write") ||
	       !strcmp(m, "danger-full-access");
}

/* Codex deserialises the merged configuration before it starts anything:
 * a value of the wrong type stops it ("invalid type: string ..., expected
 * a sequence"), whatever the sandbox mode. */
void codex_validate_cfg(struct dt_rootset *rs, const struct codex_cfg *c)
{
	static const char *const bools[] = {"exclude_slash_tmp", "exclude_tmpdir_env_var",
	                                    "network_access"};
	const char *kr[] = {"sandbox_workspace_write", "writable_roots"}, *km[] = {"sandbox_mode"};
	const struct dt_codex_override *from;
	int file;
	const struct toml_value *v = codex_cfg_get(c, kr, 2, &from, &file);

	if (v && v->type != TOML_ARRAY)
		codex_refuse(rs,
		             "sandbox_workspace_write.writable_roots in %s is not a list of paths",
		             cfg_where(c, from, file));
	for (size_t i = 0; v && v->type == TOML_ARRAY && i < v->n; i++)
		if (v->items[i].type != TOML_STRING)
			codex_refuse(rs, "writable_roots in %s: item %zu is not a path",
			             cfg_where(c, from, file), i + 1);
	for (size_t k = 0; k < sizeof(bools) / sizeof(*bools); k++) {
		const char *kb[] = {"sandbox_workspace_write", bools[k]};

		v = codex_cfg_get(c, kb, 2, &from, &file);
		if (v && v->type != TOML_BOOL)
			codex_refuse(rs, "sandbox_workspace_write.%s in %s is not a boolean",
			             bools[k], cfg_where(c, from, file));
	}
	v = codex_cfg_get(c, km, 1, &from, &file);
	if (v && (v->type != TOML_STRING || !codex_known_mode(v->str)))
		codex_refuse(
		    rs,
		    "sandbox_mode%s%s%s in %s: unknown variant, expected one of `read-only`, "
		    "`workspace-write`, `danger-full-access`",
		    v->type == TOML_STRING ? " \"" : "", v->type == TOML_STRING ? v->str : "",
		    v->type == TOML_STRING ? "\"" : "", cfg_where(c, from, file));
}

/* Codex: with no sandbox_mode anywhere, a project with a trust_level
 * (trusted or untrusted) runs workspace-write. The project is the
 * workspace itself or the top of the git repository around it. */
/* dir's trust_level, from -c, the -p layer or config.toml: a project
 * layer does not vouch for itself (seen with 0.169 and 0.171). NULL when
 * none is set. */
static const char *trust_level(const struct dt_codex_cli *cli,
                               const struct toml_value *const *files, size_t nfiles,
                               const char *dir)
{
	const char *keys[] = {"projects", dir, "trust_level"};
	size_t n = nfiles < CODEX_FILE_PROJECT ? nfiles : CODEX_FILE_PROJECT;
	const struct toml_value *v = dt_codex_lookup(cli, files, n, keys, 3, NULL, NULL);

	return v && v->type == TOML_STRING ? v->str : NULL;
}

static bool project_trust_set(const struct codex_cfg *c, const char *dir)
{
	const char *t = trust_level(c->cli, (const struct toml_value *const *)c->v, c->n, dir);

	return t && (!strcmp(t, "trusted") || !strcmp(t, "untrusted"));
}

/* The nearest directory at or above dir holding .git, or NULL. */
static char *git_top(const char *dir)
{
	char *d = xstrdup(dir);

	for (;;) {
		char *git = xasprintf("%s/.git", strcmp(d, "/") ? d : "");
		struct stat st;
		bool found = lstat(git, &st) == 0;
		char *up;

		free(git);
		if (found)
			return d;
		if (!strcmp(d, "/")) {
			free(d);
			return NULL;
		}
		up = dir_name(d);
		free(d);
		d = up;
	}
}

bool codex_project_has_trust(const struct codex_cfg *c, const char *workspace)
{
	char *top;
	bool trusted;

	if (project_trust_set(c, workspace))
		return true;
	top = git_top(workspace);
	trusted = top && strcmp(top, workspace) && project_trust_set(c, top);
	free(top);
	return trusted;
}

/* Is DIR's project layer read? Its own trust_level decides, else the
 * repository top's: with the top trusted a subdirectory's layer counts,
 * with only the subdirectory trusted the top's does not (0.169, 0.171). */
static bool layer_trusted(const struct dt_codex_cli *cli, const struct toml_value *const *files,
                          size_t nfiles, const char *dir, const char *top)
{
	const char *t = trust_level(cli, files, nfiles, dir);

	if (!t && top)
		t = trust_level(cli, files, nfiles, top);
	return t && !strcmp(t, "trusted");
}

size_t dt_codex_project_layers(const struct dt_codex_cli *cli,
                               const struct toml_value *const *files, size_t nfiles,
                               const char *workspace, char **paths, size_t max)
{
	char *top = workspace ? git_top(workspace) : NULL, *d;
	const char *from = top ? top : workspace;
	size_t n = 0, depth = 0;

	if (!workspace || max == 0) {
		free(top);
		return 0;
	}
	/* the directories from the workspace up to the project root, then
	 * turned around: the outermost layer is the lowest */
	char **dirs = xrealloc(NULL, (max + 1) * sizeof(*dirs));
	dirs[depth++] = d = xstrdup(workspace);
	while (depth < max + 1 && strcmp(d, from) && strcmp(d, "/"))
		dirs[depth++] = d = dir_name(d);
	for (size_t i = depth; i-- > 0;) {
		char *p = xasprintf("%s/.codex/config.toml", strcmp(dirs[i], "/") ? dirs[i] : "");
		struct stat st;

		if (n < max && stat(p, &st) == 0 && layer_trusted(cli, files, nfiles, dirs[i], top))
			paths[n++] = p;
		else
			free(p);
		free(dirs[i]);
	}
	free(dirs);
	free(top);
	return n;
}

/* The project layers `denytrace codex` recorded: what Codex read then. */
static void recorded_project_layers(struct dt_rootset *rs, struct codex_cfg *cfg,
                                    const struct dt_codex_launch *l)
{
	char terr[512];

	cfg->n = CODEX_FILE_PROJECT;
	for (size_t i = 0; i < l->nproject_snapshots && cfg->n < CODEX_MAX_FILES; i++) {
		const struct dt_record *snap = l->project_snapshots[i];

		if (!snap->cfg_path || !snap->cfg_text || snap->cfg_trunc) {
			dt_roots_warn(rs,
			              "the project layer %s was not recorded whole at launch; its "
			              "settings are not known",
			              snap->cfg_path ? snap->cfg_path : "(no path)");
			continue;
		}
		cfg->v[cfg->n] = toml_parse(snap->cfg_text, snap->cfg_len, terr, sizeof(terr));
		if (!cfg->v[cfg->n])
			codex_refuse(rs, "%s as recorded at launch: %s", snap->cfg_path, terr);
		cfg->path[cfg->n++] = xstrdup(snap->cfg_path);
	}
}

void codex_project_layers(struct dt_rootset *rs, struct codex_cfg *cfg,
                          const struct dt_codex_launch *l, bool ring_launch, const char *workspace)
{
	char *paths[CODEX_MAX_FILES - CODEX_FILE_PROJECT];
	size_t n;
	int rc = 0;

	if (ring_launch) {
		recorded_project_layers(rs, cfg, l);
		return;
	}
	n = dt_codex_project_layers(cfg->cli, (const struct toml_value *const *)cfg->v,
	                            CODEX_FILE_PROJECT, workspace, paths,
	                            sizeof(paths) / sizeof(*paths));
	cfg->n = CODEX_FILE_PROJECT;
	for (size_t i = 0; i < n; i++) {
		/* Codex stops on a project layer it cannot parse, as on config.toml */
		cfg->v[cfg->n] = parse_config(rs, paths[i], false, NULL, 0, &rc);
		cfg->path[cfg->n++] = paths[i];
	}
}

void codex_cfg_free(struct codex_cfg *cfg)
{
	for (size_t i = 0; i < CODEX_MAX_FILES; i++) {
		toml_free(cfg->v[i]);
		free(cfg->path[i]);
	}
	memset(cfg, 0, sizeof(*cfg));
}

/* The -p NAME layer Codex read: the ring's snapshot of it, else
 * $CODEX_HOME/NAME.config.toml (or ~/.codex/NAME.config.toml) as it is
 * now. ring_launch: the launch has a config.toml snapshot, so `denytrace
 * codex` would have recorded a layer it could read. Returns the parsed
 * layer with *path set, or NULL with *path NULL when there is none (Codex
 * runs without it) or it cannot be parsed (Codex refuses to start). */
static struct toml_value *load_layer(struct dt_rootset *rs, const struct dt_codex_launch *l,
                                     const char *profile, bool ring_launch, char **path,
                                     bool *recorded)
{
	const struct dt_record *snap = l->profile_snapshot;
	struct toml_value *v;
	char terr[512];
	struct stat st;

	*path = NULL;
	*recorded = false;
	if (snap && snap->cfg_path && snap->cfg_profile && !strcmp(snap->cfg_profile, profile)) {
		if (snap->cfg_text && !snap->cfg_trunc) {
			v = toml_parse(snap->cfg_text, snap->cfg_len, terr, sizeof(terr));
			if (v) {
				*path = xstrdup(snap->cfg_path);
				*recorded = true;
				return v;
			}
			codex_refuse(rs, "%s as recorded at launch: %s", snap->cfg_path, terr);
			return NULL;
		}
		if (!snap->cfg_text) {
			if (snap->cfg_errno != ENOENT)
				dt_roots_warn(
				    rs,
				    "%s could not be read at launch (%s); Codex's sandbox "
				    "settings in it are unknown",
				    snap->cfg_path, strerror(snap->cfg_errno));
			return NULL;
		}
		dt_roots_warn(rs,
		              "the ring holds only the first %zu of %llu bytes of %s; it is read "
		              "as it is now, which may differ from what Codex read",
		              snap->cfg_len, (unsigned long long)snap->cfg_size, snap->cfg_path);
		*path = xstrdup(snap->cfg_path);
	} else if (ring_launch) {
		dt_roots_warn(rs,
		              "codex --profile %s: no %s.config.toml could be read at launch, so "
		              "Codex ran without a profile layer",
		              profile, profile);
		return NULL;
	} else if (nonempty(l->codex_home)) {
		char *home = resolve_path(l->codex_home, l->cwd, NULL);

		if (home)
			*path =
			    xasprintf("%s/%s.config.toml", strcmp(home, "/") ? home : "", profile);
		free(home);
	} else if (nonempty(l->home) && l->home[0] == '/') {
		*path = xasprintf("%s/.codex/%s.config.toml", strcmp(l->home, "/") ? l->home : "",
		                  profile);
	}
	if (!*path) {
		dt_roots_warn(
		    rs,
		    "codex --profile %s: CODEX_HOME and HOME do not say where %s.config.toml "
		    "is; its settings are unknown",
		    profile, profile);
		return NULL;
	}
	if (stat(*path, &st) != 0 && errno == ENOENT) {
		/* Codex runs without the layer then */
		dt_roots_warn(rs,
		              "codex --profile %s: there is no %s, so Codex runs without a "
		              "profile layer",
		              profile, *path);
		free(*path);
		*path = NULL;
		return NULL;
	}
	v = toml_parse_regular_file(*path, terr, sizeof(terr));
	if (!v) {
		codex_refuse(rs, "%s%s%s", starts_with(terr, *path) ? "" : *path,
		             starts_with(terr, *path) ? "" : ": ", terr);
		free(*path);
		*path = NULL;
	}
	return v;
}

/* The -p layer, and the legacy profile selectors Codex 0.169 refuses: a
 * profile = "X" key anywhere, or [profiles.NAME] in config.toml beside
 * -p NAME. */
void codex_profile(struct dt_rootset *rs, struct codex_cfg *cfg, const struct dt_codex_launch *l,
                   bool ring_launch)
{
	const char *kkey[] = {"profile"};
	const char *profile = cfg->cli->profile;
	const struct toml_value *key;
	bool recorded;

	if (nonempty(profile)) {
		cfg->v[CODEX_FILE_PROFILE] = load_layer(rs, l, profile, ring_launch,
		                                        &cfg->path[CODEX_FILE_PROFILE], &recorded);
		free(rs->codex_profile_path);
		rs->codex_profile_path = xstrdup(cfg->path[CODEX_FILE_PROFILE]);
		rs->codex_profile_recorded = recorded;
	}
	key = codex_cfg_get(cfg, kkey, 1, NULL, NULL);
	if (nonempty(profile)) {
		const char *kp[] = {"profiles", profile};

		if (codex_walk(cfg->v[CODEX_FILE_CONFIG], kp, 2) ||
		    (key && key->type == TOML_STRING && !strcmp(key->str, profile)))
			codex_refuse(
			    rs,
			    "--profile `%s` cannot be used while %s contains legacy `profile = "
			    "\"%s\"` or `[profiles.%s]` config; move those settings into "
			    "%s.config.toml",
			    profile,
			    cfg->path[CODEX_FILE_CONFIG] ? cfg->path[CODEX_FILE_CONFIG]
			                                 : "config.toml",
			    profile, profile, profile);
	}
	if (key)
		codex_refuse(
		    rs,
		    "legacy `profile = \"%s\"` config is no longer supported; use `--profile "
		    "%s` with `%s.config.toml` instead",
		    key->type == TOML_STRING ? key->str : "...",
		    key->type == TOML_STRING ? key->str : "NAME",
		    key->type == TOML_STRING ? key->str : "NAME");
}

__attribute__((format(printf, 3, 4))) static void set_err(char *err, size_t errlen, const char *fmt,
                                                          ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Parses config.toml at path. Codex stops on one it cannot parse (a
 * refusal); one it cannot read is a warning. explicit (--codex-config):
 * errors go to err with *rc -1 (invalid) or -2 (missing, unreadable). */
static struct toml_value *parse_config(struct dt_rootset *rs, const char *path, bool explicit,
                                       char *err, size_t errlen, int *rc)
{
	struct toml_value *file = NULL;
	char terr[512];
	struct stat st;
	bool found = stat(path, &st) == 0, odd = found && !S_ISREG(st.st_mode);
	bool unreadable = false;
	const char *pre = "", *sep = "";

	/* a FIFO or a device there would block or never end */
	if (odd)
		snprintf(terr, sizeof(terr), "%s is not a regular file (%s)", path,
		         dt_file_kind(st.st_mode));
	else if ((file = toml_parse_regular_file(path, terr, sizeof(terr))) == NULL)
		unreadable = errno != 0 && errno != EISDIR && errno != EFBIG;
	if (file)
		return file;
	if (!starts_with(terr, path)) {
		pre = path;
		sep = ": ";
	}
	if (explicit) {
		set_err(err, errlen, "%s%s%s", pre, sep, terr);
		*rc = unreadable ? -2 : -1;
	} else if (unreadable || odd) {
		dt_roots_warn(rs, "%s%s%s; Codex's sandbox settings in it are unknown", pre, sep,
		              terr);
	} else {
		codex_refuse(rs, "%s%s%s", pre, sep, terr);
	}
	return NULL;
}

/* config.toml as Codex read it: the ring's snapshot, else the file.
 * Returns the parsed file (NULL for none) with *path set; -1 in *rc when
 * an explicit config_path cannot be parsed. */
struct toml_value *codex_load_config(struct dt_rootset *rs, const struct dt_codex_launch *l,
                                     const char *config_path, char **path, bool *from_ring,
                                     char *err, size_t errlen, int *rc)
{
	const struct dt_record *snap = l->config_snapshot;
	struct toml_value *file = NULL;
	char terr[512];
	struct stat st;

	*path = NULL;
	*from_ring = false;
	if (config_path) {
		*path = xstrdup(config_path);
	} else if (snap && snap->cfg_path && snap->cfg_text && !snap->cfg_trunc) {
		/* what Codex read at launch, not what the file says now */
		file = toml_parse(snap->cfg_text, snap->cfg_len, terr, sizeof(terr));
		if (file) {
			*path = xstrdup(snap->cfg_path);
			*from_ring = true;
		} else {
			codex_refuse(rs, "%s as recorded at launch: %s", snap->cfg_path, terr);
		}
		return file;
	} else if (snap && snap->cfg_path && !snap->cfg_text) {
		if (snap->cfg_errno != ENOENT)
			dt_roots_warn(
			    rs,
			    "%s could not be read at launch (%s); Codex's sandbox settings "
			    "in it are unknown",
			    snap->cfg_path, strerror(snap->cfg_errno));
		/* ENOENT: no config at launch; one created later is not Codex's */
		return NULL;
	} else if (snap && snap->cfg_path) {
		dt_roots_warn(
		    rs,
		    "the ring holds only the first %zu of %llu bytes of %s; it is read as "
		    "it is now, which may differ from what Codex read",
		    snap->cfg_len, (unsigned long long)snap->cfg_size, snap->cfg_path);
		*path = xstrdup(snap->cfg_path);
	} else if (nonempty(l->codex_home)) {
		char *home = resolve_path(l->codex_home, l->cwd, NULL);

		if (home)
			*path = xasprintf("%s/config.toml", strcmp(home, "/") ? home : "");
		else
			dt_roots_warn(rs,
			              "CODEX_HOME=%s is relative and the cwd is unknown; "
			              "config.toml not read",
			              l->codex_home);
		free(home);
	} else if (nonempty(l->home) && l->home[0] == '/') {
		*path = xasprintf("%s/.codex/config.toml", strcmp(l->home, "/") ? l->home : "");
	}
	if (!*path)
		return NULL;
	if (!config_path && stat(*path, &st) != 0 && errno == ENOENT) {
		free(*path); /* no config is Codex's default, not a problem */
		*path = NULL;
		return NULL;
	}
	file = parse_config(rs, *path, config_path != NULL, err, errlen, rc);
	if (!file) {
		free(*path);
		*path = NULL;
	}
	return file;
}
