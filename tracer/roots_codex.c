// SPDX-License-Identifier: MIT
/*
 * The writable roots of a Codex launch (roots.h: dt_roots_from_codex):
 * config.toml, the -p layer and the -c overrides merged as Codex 0.169
 * merges them (codex-rs config/mod.rs derive_sandbox_policy), then the
 * sandbox mode, the workspace, /tmp, --add-dir, writable_roots and the
 * read-only subpaths inside each root.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "roots_int.h"
#include "safeopen.h"

/* ---- Codex: config.toml, the -p layer and -c overrides ------------------ */

/*
 * Codex 0.169 reads config.toml, then the -p/--profile NAME layer
 * $CODEX_HOME/NAME.config.toml deep-merged over it, then the -c overrides
 * over both. Seen with 0.169 (codex debug prompt-input, codex sandbox):
 * writable_roots=[B] in config.toml and [A] in the layer leave A writable,
 * not B; a layer holding only exclude_slash_tmp keeps B; -c writable_roots
 * beats the layer's; the layer's sandbox_mode beats config.toml's and -c
 * sandbox_mode beats the layer's; relative paths in the layer are taken
 * against $CODEX_HOME; -p with no such file runs without a layer; and -p
 * NAME with [profiles.NAME] (or any profile = "X") in config.toml is
 * refused ("move those settings into .../NAME.config.toml").
 */
struct codex_cfg {
	const struct toml_value *file; /* NULL when none was read */
	const char *path;
	const struct toml_value *layer; /* the -p layer, NULL when none was read */
	const char *layer_path;
	const struct dt_codex_cli *cli;
};

static const struct toml_value *walk(const struct toml_value *v, const char *const *keys,
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
static const struct toml_value *override_at(const struct dt_codex_override *o,
                                            const char *const *keys, size_t nkeys)
{
	if (!override_covers(o, keys, nkeys))
		return NULL;
	return walk(dt_codex_override_value(o), keys + o->nkeys, nkeys - o->nkeys);
}

/* The value at keys after the -p layer and the -c overrides. Codex merges
 * a table-valued override into the file's table (seen with 0.169: -c
 * 'sandbox_workspace_write={ network_access = true }' keeps the file's
 * writable_roots), while any other value, a list included, replaces what
 * was there; the layer merges over config.toml the same way. So the last
 * override that gives keys a value decides, else the layer, else the file.
 * *from says which override decided, *in_layer whether the layer did
 * (either may be NULL). */
static const struct toml_value *cfg_get(const struct codex_cfg *c, const char *const *keys,
                                        size_t nkeys, const struct dt_codex_override **from,
                                        bool *in_layer)
{
	const struct toml_value *v;

	if (from)
		*from = NULL;
	if (in_layer)
		*in_layer = false;
	for (size_t i = c->cli->nov; i-- > 0;) {
		v = override_at(&c->cli->ov[i], keys, nkeys);
		if (!v)
			continue;
		if (from)
			*from = &c->cli->ov[i];
		return v;
	}
	v = walk(c->layer, keys, nkeys);
	if (v) {
		if (in_layer)
			*in_layer = true;
		return v;
	}
	return walk(c->file, keys, nkeys);
}

/* Where the value cfg_get found came from, for messages. */
static const char *cfg_where(const struct codex_cfg *c, const struct dt_codex_override *from,
                             bool in_layer)
{
	return from ? from->text : in_layer ? c->layer_path : c->path;
}

static const char *cfg_string(struct dt_rootset *rs, const struct codex_cfg *c,
                              const char *const *keys, size_t nkeys, const char *what)
{
	const struct dt_codex_override *from;
	bool in_layer;
	const struct toml_value *v = cfg_get(c, keys, nkeys, &from, &in_layer);

	if (!v)
		return NULL;
	if (v->type != TOML_STRING) {
		dt_roots_warn(rs, "%s in %s is not a string; ignored", what,
		              cfg_where(c, from, in_layer));
		return NULL;
	}
	return v->str;
}

static bool cfg_bool(struct dt_rootset *rs, const struct codex_cfg *c, const char *key)
{
	const char *keys[] = {"sandbox_workspace_write", key};
	const struct dt_codex_override *from;
	bool in_layer;
	const struct toml_value *v = cfg_get(c, keys, 2, &from, &in_layer);

	if (!v)
		return false;
	if (v->type != TOML_BOOL) {
		dt_roots_warn(rs, "sandbox_workspace_write.%s in %s is not a boolean; ignored", key,
		              cfg_where(c, from, in_layer));
		return false;
	}
	return v->b != 0;
}

static bool known_mode(const char *m)
{
	return !strcmp(m, "read-only") || !strcmp(m, "workspace-write") ||
	       !strcmp(m, "danger-full-access");
}

/* Codex: with no sandbox_mode anywhere, a project with a trust_level
 * (trusted or untrusted) runs workspace-write. The project is the
 * workspace itself or the top of the git repository around it. */
static bool project_trust_set(const struct codex_cfg *c, const char *dir)
{
	const char *keys[] = {"projects", dir, "trust_level"};
	const struct toml_value *v = cfg_get(c, keys, 3, NULL, NULL);

	return v && v->type == TOML_STRING &&
	       (!strcmp(v->str, "trusted") || !strcmp(v->str, "untrusted"));
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

static bool project_has_trust(const struct codex_cfg *c, const char *workspace)
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

/* ---- Codex: roots ----------------------------------------------------------- */

static const char *const codex_protected[] = {".git", ".codex", ".agents", ".aws"};

static void add_writable(struct dt_rootset *rs, struct strlist *writable, const char *path,
                         const char *source, const char *knob)
{
	struct dt_root *r = dt_roots_add(rs, path, DT_ROOT_CODEX, source, knob);

	if (r && !strlist_has(writable, r->path))
		strlist_push(writable, r->path);
}

/* The roots an array of writable_roots names, resolved like Codex does:
 * "~" against home, relative paths against base. */
static void list_roots(struct dt_rootset *rs, const struct toml_value *v, const char *where,
                       const char *base, const char *home, struct strlist *out)
{
	if (!v)
		return;
	if (v->type != TOML_ARRAY) {
		dt_roots_warn(rs,
		              "sandbox_workspace_write.writable_roots in %s is not an array; "
		              "ignored",
		              where);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct toml_value *it = &v->items[i];
		char *p;

		if (it->type != TOML_STRING || !*it->str) {
			dt_roots_warn(rs, "writable_roots in %s: item %zu is not a path; ignored",
			              where, i + 1);
			continue;
		}
		p = resolve_path(it->str, base, home);
		if (!p) {
			dt_roots_warn(rs, "writable_roots in %s: cannot resolve \"%s\"; ignored",
			              where, it->str);
			continue;
		}
		if (!strlist_has(out, p))
			strlist_push(out, p);
		free(p);
	}
}

static const char override_knob[] = "the -c sandbox_workspace_write.writable_roots=[...] override";

/* The roots of a writable_roots list that a higher layer replaced, added
 * with dropped_by set and granted 0, unless something kept them writable
 * or they are already known. */
static void add_dropped(struct dt_rootset *rs, const struct strlist *writable,
                        const struct toml_value *list, const char *where, const char *base,
                        const char *home, const char *source, const char *knob,
                        const char *dropped_by)
{
	struct strlist lost = {0};

	list_roots(rs, list, where, base, home, &lost);
	for (size_t i = 0; i < lost.n; i++) {
		struct dt_root *r;

		if (strlist_has(writable, lost.v[i]) || find_root(rs, lost.v[i], DT_ROOT_CODEX))
			continue;
		r = dt_roots_add(rs, lost.v[i], DT_ROOT_CODEX, source, knob);
		if (r) {
			r->dropped_by = xstrdup(dropped_by);
			r->granted = 0;
		}
	}
	strlist_free(&lost);
}

static void codex_workspace_write_roots(struct dt_rootset *rs, const struct codex_cfg *cfg,
                                        const struct dt_codex_launch *l, const char *workspace)
{
	const struct dt_codex_cli *cli = cfg->cli;
	const char *keys[] = {"sandbox_workspace_write", "writable_roots"};
	const struct dt_codex_override *from;
	const struct toml_value *list, *layer_list;
	bool in_layer;
	struct strlist writable = {0}, roots = {0};
	char *cfg_dir = cfg->path ? dir_name(cfg->path) : NULL;
	char *layer_dir = cfg->layer_path ? dir_name(cfg->layer_path) : NULL;
	char *s, *k;

	if (workspace) {
		s = cli->cd ? xasprintf("codex %s %s", cli->cd_text, cli->cd)
		            : xstrdup("codex workspace (cwd)");
		k = xasprintf("codex --add-dir %s", workspace);
		add_writable(rs, &writable, workspace, s, k);
		free(s);
		free(k);
	}
	if (!cfg_bool(rs, cfg, "exclude_slash_tmp"))
		add_writable(rs, &writable, "/tmp", "codex workspace-write: /tmp",
		             "codex --add-dir /tmp");
	if (nonempty(l->tmpdir) && !cfg_bool(rs, cfg, "exclude_tmpdir_env_var")) {
		if (l->tmpdir[0] != '/') {
			dt_roots_warn(rs,
			              "TMPDIR=%s is not absolute; Codex does not make it "
			              "writable",
			              l->tmpdir);
		} else {
			s = xasprintf("codex workspace-write: TMPDIR=%s", l->tmpdir);
			k = xasprintf("codex --add-dir %s", l->tmpdir);
			add_writable(rs, &writable, l->tmpdir, s, k);
			free(s);
			free(k);
		}
	}
	for (size_t i = 0; i < cli->nadd; i++) {
		char *p = resolve_path(cli->add_dirs[i], workspace, l->home);

		if (!p) {
			dt_roots_warn(rs,
			              "codex --add-dir %s: cannot tell which directory it "
			              "names; ignored",
			              cli->add_dirs[i]);
			continue;
		}
		s = xasprintf("codex --add-dir %s", cli->add_dirs[i]);
		k = xasprintf("codex --add-dir %s", p);
		add_writable(rs, &writable, p, s, k);
		free(s);
		free(k);
		free(p);
	}

	list = cfg_get(cfg, keys, 2, &from, &in_layer);
	if (from) {
		/* -c paths are relative to where Codex was started */
		list_roots(rs, list, from->text, l->cwd, l->home, &roots);
		free(rs->codex_override);
		rs->codex_override = xstrdup(from->text);
		for (size_t i = 0; i < roots.n; i++)
			add_writable(rs, &writable, roots.v[i], from->text, override_knob);
	} else if (in_layer) {
		s = xasprintf("%s [sandbox_workspace_write] writable_roots", cfg->layer_path);
		k = xasprintf("writable_roots in %s", cfg->layer_path);
		list_roots(rs, list, cfg->layer_path, layer_dir, l->home, &roots);
		for (size_t i = 0; i < roots.n; i++)
			add_writable(rs, &writable, roots.v[i], s, k);
		free(s);
		free(k);
	} else if (cfg->path) {
		s = xasprintf("%s [sandbox_workspace_write] writable_roots", cfg->path);
		k = xasprintf("writable_roots in %s", cfg->path);
		list_roots(rs, list, cfg->path, cfg_dir, l->home, &roots);
		for (size_t i = 0; i < roots.n; i++)
			add_writable(rs, &writable, roots.v[i], s, k);
		free(s);
		free(k);
	}

	/* A later override replaces an earlier one too: two launchers that
	 * each pass their own -c writable_roots (Hermes its board, hcom its
	 * directory) leave only the last one's roots. */
	for (size_t i = 0; from && i < cfg->cli->nov && &cfg->cli->ov[i] != from; i++) {
		const struct toml_value *earlier = override_at(&cfg->cli->ov[i], keys, 2);

		if (earlier)
			add_dropped(rs, &writable, earlier, cfg->cli->ov[i].text, l->cwd, l->home,
			            cfg->cli->ov[i].text, override_knob, from->text);
	}

	/* An override replaces the layer's list and the file's, and the
	 * layer's list replaces the file's: what only a replaced list named
	 * is not writable, though its owner may well think it is. */
	layer_list = walk(cfg->layer, keys, 2);
	if (from && layer_list) {
		s = xasprintf("%s [sandbox_workspace_write] writable_roots", cfg->layer_path);
		add_dropped(rs, &writable, layer_list, cfg->layer_path, layer_dir, l->home, s,
		            override_knob, from->text);
		free(s);
	}
	if ((from || layer_list) && cfg->path) {
		s = xasprintf("%s [sandbox_workspace_write] writable_roots", cfg->path);
		k = layer_list ? xasprintf("writable_roots in %s", cfg->layer_path) : NULL;
		add_dropped(rs, &writable, walk(cfg->file, keys, 2), cfg->path, cfg_dir, l->home, s,
		            layer_list ? k : override_knob,
		            layer_list ? cfg->layer_path : from->text);
		free(s);
		free(k);
	}
	for (size_t i = 0; i < writable.n; i++) {
		for (size_t j = 0; j < sizeof(codex_protected) / sizeof(*codex_protected); j++) {
			const char *w = writable.v[i];
			char *p = xasprintf("%s/%s", strcmp(w, "/") ? w : "", codex_protected[j]);
			struct dt_root *r;

			s = xasprintf("codex keeps %s read-only inside writable root %s",
			              codex_protected[j], w);
			if (!find_root(rs, p, DT_ROOT_CODEX)) {
				r = dt_roots_add(rs, p, DT_ROOT_CODEX, s, NULL);
				if (r)
					r->readonly_sub = 1;
			}
			free(s);
			free(p);
		}
	}
	strlist_free(&roots);
	strlist_free(&writable);
	free(cfg_dir);
	free(layer_dir);
}

/* The -p NAME layer Codex read: the ring's snapshot of it, else
 * $CODEX_HOME/NAME.config.toml (or ~/.codex/NAME.config.toml) as it is
 * now. ring_launch: the launch has a config.toml snapshot, so `denytrace
 * codex` would have recorded a layer it could read. Returns the parsed
 * layer with *path set, or NULL with *path NULL when there is none. */
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
			dt_roots_warn(rs,
			              "%s as recorded at launch: %s; Codex's sandbox settings in "
			              "it are ignored",
			              snap->cfg_path, terr);
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
	v = toml_parse_file(*path, terr, sizeof(terr));
	if (!v) {
		dt_roots_warn(rs, "%s%s%s; Codex's sandbox settings in it are ignored",
		              starts_with(terr, *path) ? "" : *path,
		              starts_with(terr, *path) ? "" : ": ", terr);
		free(*path);
		*path = NULL;
	}
	return v;
}

/* The profile settings: with -p NAME, the layer (Codex 0.169 refuses a
 * legacy profile selector or [profiles.NAME] table beside it); without
 * -p, a legacy profile = "NAME" in config.toml, read as the
 * [profiles.NAME] table older Codex applied (0.169 refuses it too).
 * Returns the legacy table's sandbox_mode, or NULL. */
static const char *codex_profile(struct dt_rootset *rs, struct codex_cfg *cfg,
                                 const struct dt_codex_launch *l, bool ring_launch,
                                 struct toml_value **layer, char **layer_path)
{
	const char *kkey[] = {"profile"};
	const struct dt_codex_override *from;
	bool in_layer, recorded;
	const char *profile = cfg->cli->profile;
	const struct toml_value *key;
	const char *legacy = NULL, *where;

	if (nonempty(profile)) {
		*layer = load_layer(rs, l, profile, ring_launch, layer_path, &recorded);
		cfg->layer = *layer;
		cfg->layer_path = *layer_path;
		free(rs->codex_profile_path);
		rs->codex_profile_path = xstrdup(*layer_path);
		rs->codex_profile_recorded = recorded;
	}
	key = cfg_get(cfg, kkey, 1, &from, &in_layer);
	where = cfg_where(cfg, from, in_layer);
	if (key && key->type == TOML_STRING)
		legacy = key->str;
	else if (key)
		dt_roots_warn(rs, "profile in %s is not a string; ignored", where);

	if (nonempty(profile)) {
		const char *kp[] = {"profiles", profile};
		char *dest =
		    *layer_path ? xstrdup(*layer_path) : xasprintf("%s.config.toml", profile);

		if (walk(cfg->file, kp, 2) || (legacy && !strcmp(legacy, profile)))
			dt_roots_warn(
			    rs,
			    "codex --profile %s with the legacy [profiles.%s] table or "
			    "profile = \"%s\" in %s: Codex 0.169 refuses this configuration "
			    "(\"move those settings into %s\"); the legacy settings are "
			    "ignored here",
			    profile, profile, profile, walk(cfg->file, kp, 2) ? cfg->path : where,
			    dest);
		else if (legacy)
			dt_roots_warn(
			    rs,
			    "legacy profile = \"%s\" in %s: Codex 0.169 refuses it (\"use "
			    "--profile %s with %s.config.toml instead\")",
			    legacy, where, legacy, legacy);
		free(dest);
		return NULL;
	}
	if (legacy) {
		const char *kp[] = {"profiles", legacy};
		const char *kpm[] = {"profiles", legacy, "sandbox_mode"};
		bool has = cfg_get(cfg, kp, 2, NULL, NULL) != NULL;

		dt_roots_warn(rs,
		              "legacy profile = \"%s\" in %s: Codex 0.169 refuses it (\"use "
		              "--profile %s with %s.config.toml instead\"); %s",
		              legacy, where, legacy, legacy,
		              has ? "its [profiles] table is applied here as older Codex did"
		                  : "and there is no such [profiles] table either");
		if (has)
			return cfg_string(rs, cfg, kpm, 3, "sandbox_mode");
	}
	return NULL;
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

int dt_roots_from_codex(struct dt_rootset *rs, const struct dt_codex_launch *l,
                        const char *config_path, char *err, size_t errlen)
{
	struct dt_codex_cli cli = {0};
	struct codex_cfg cfg = {0};
	struct toml_value *file = NULL, *layer = NULL;
	char *path = NULL, *workspace = NULL, *layer_path = NULL;
	const char *mode, *profile_mode, *top_mode;
	char terr[512];

	if (err && errlen)
		err[0] = 0;
	if (!rs || !l)
		return 0;

	/* The config first: an explicit one that cannot be read stops
	 * everything before the set is touched. */
	const struct dt_record *snap = l->config_snapshot;
	bool from_ring = false;

	if (config_path) {
		path = xstrdup(config_path);
	} else if (snap && snap->cfg_path && snap->cfg_text && !snap->cfg_trunc) {
		/* what Codex read at launch, not what the file says now */
		file = toml_parse(snap->cfg_text, snap->cfg_len, terr, sizeof(terr));
		if (file) {
			path = xstrdup(snap->cfg_path);
			from_ring = true;
		} else {
			dt_roots_warn(rs,
			              "%s as recorded at launch: %s; Codex's sandbox settings in "
			              "it are ignored",
			              snap->cfg_path, terr);
		}
	} else if (snap && snap->cfg_path && !snap->cfg_text) {
		if (snap->cfg_errno != ENOENT)
			dt_roots_warn(rs,
			              "%s could not be read at launch (%s); Codex's sandbox settings "
			              "in it are unknown",
			              snap->cfg_path, strerror(snap->cfg_errno));
		/* ENOENT: no config at launch; one created later is not Codex's */
	} else if (snap && snap->cfg_path) {
		dt_roots_warn(rs,
		              "the ring holds only the first %zu of %llu bytes of %s; it is read as "
		              "it is now, which may differ from what Codex read",
		              snap->cfg_len, (unsigned long long)snap->cfg_size, snap->cfg_path);
		path = xstrdup(snap->cfg_path);
	} else if (nonempty(l->codex_home)) {
		char *home = resolve_path(l->codex_home, l->cwd, NULL);

		if (home)
			path = xasprintf("%s/config.toml", strcmp(home, "/") ? home : "");
		else
			dt_roots_warn(rs,
			              "CODEX_HOME=%s is relative and the cwd is unknown; "
			              "config.toml not read",
			              l->codex_home);
		free(home);
	} else if (nonempty(l->home) && l->home[0] == '/') {
		path = xasprintf("%s/.codex/config.toml", strcmp(l->home, "/") ? l->home : "");
	}
	if (path && !from_ring) {
		struct stat st;

		int found = stat(path, &st) == 0;
		int unreadable = 0;
		if (!config_path && !found && errno == ENOENT) {
			free(path); /* no config is Codex's default, not a problem */
			path = NULL;
		} else {
			/* a FIFO or a device there would block or never end */
			if (found && !S_ISREG(st.st_mode))
				snprintf(terr, sizeof(terr), "%s is not a regular file (%s)", path,
				         dt_file_kind(st.st_mode));
			else if ((file = toml_parse_file(path, terr, sizeof(terr))) == NULL)
				unreadable = errno != 0 && errno != EISDIR && errno != EFBIG;
			if (!file && config_path) {
				if (starts_with(terr, path))
					set_err(err, errlen, "%s", terr);
				else
					set_err(err, errlen, "%s: %s", path, terr);
				free(path);
				return unreadable ? -2 : -1;
			}
			if (!file) {
				dt_roots_warn(rs,
				              "%s%s%s; Codex's sandbox settings in it are "
				              "ignored",
				              starts_with(terr, path) ? "" : path,
				              starts_with(terr, path) ? "" : ": ", terr);
				free(path);
				path = NULL;
			}
		}
	}
	free(rs->codex_config_path);
	rs->codex_config_path = xstrdup(path);
	rs->codex_config_recorded = from_ring;

	dt_codex_cli_parse(rs, &cli, l->argv, l->argc);
	cfg.file = file;
	cfg.path = path;
	cfg.cli = &cli;

	/* Codex takes a relative -C against the cwd and uses the result
	 * as the workspace. */
	if (cli.cd && *cli.cd) {
		workspace = resolve_path(cli.cd, l->cwd, NULL);
		if (!workspace)
			dt_roots_warn(rs, "codex %s %s: relative and the cwd is unknown",
			              cli.cd_text, cli.cd);
	} else if (nonempty(l->cwd) && l->cwd[0] == '/') {
		workspace = normalize_path(NULL, l->cwd);
	}

	profile_mode =
	    codex_profile(rs, &cfg, l, !config_path && snap != NULL, &layer, &layer_path);
	{
		const char *k1[] = {"sandbox_mode"};

		top_mode = cfg_string(rs, &cfg, k1, 1, "sandbox_mode");
	}
	mode = cli.mode ? cli.mode : profile_mode ? profile_mode : top_mode;
	if (cli.sandbox_cmd && !cli.mode) {
		/* Codex 0.169's `codex sandbox` ignores sandbox_mode from its
		 * files (config.toml, the -p layer) and project trust: it is
		 * read-only unless -c says otherwise */
		const char *k1[] = {"sandbox_mode"};
		const struct dt_codex_override *from;
		bool in_layer;
		const struct toml_value *v = cfg_get(&cfg, k1, 1, &from, &in_layer);
		if (!from) {
			if (mode)
				dt_roots_warn(rs,
				              "codex sandbox ignores sandbox_mode = \"%s\" in %s: "
				              "it runs read-only unless -c sandbox_mode=... is given",
				              mode,
				              v ? cfg_where(&cfg, from, in_layer) : "a legacy profile");
			mode = "read-only";
		}
	}
	if (!mode)
		mode = workspace && project_has_trust(&cfg, workspace) ? "workspace-write"
		                                                       : "read-only";
	free(rs->codex_sandbox_mode);
	rs->codex_sandbox_mode = xstrdup(mode);

	if (!known_mode(mode))
		dt_roots_warn(rs,
		              "codex sandbox mode \"%s\" is not read-only, workspace-write "
		              "or danger-full-access (Codex refuses to start)",
		              mode);
	else if (!strcmp(mode, "workspace-write"))
		codex_workspace_write_roots(rs, &cfg, l, workspace);

	free(workspace);
	dt_codex_cli_free(&cli);
	toml_free(file);
	toml_free(layer);
	free(path);
	free(layer_path);
	return 0;
}
