// SPDX-License-Identifier: MIT
/*
 * The writable roots of a Codex launch (roots.h: dt_roots_from_codex), as
 * the Codex 0.169 binary grants them (tracer/roots/codex_shapes.def records
 * what it granted in 54 launch shapes): config.toml, the -p layer and the
 * -c overrides merged as Codex merges them, the permission profile (-P,
 * default_permissions) or sandbox mode, the workspace, /tmp, --add-dir,
 * writable_roots and the read-only subpaths inside each root; and the
 * launches Codex refuses to start.
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
#include "recfmt.h"
#include "safeopen.h"

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

void dt_codex_grant_hint(const struct dt_rootset *rs, const char *dir, char *out, size_t cap)
{
	/* a line to paste into a shell: the directory (the traced program may
	 * have chosen its name) as one inert word */
	char word[PATH_MAX * 4 + 3];
	dt_shell_word_str(word, sizeof(word), dir);
	if (rs->codex_permission_profile)
		snprintf(
		    out, cap,
		    "-P %s grants only the workspace, /tmp and $TMPDIR: start it with -C %s, or "
		    "use a [permissions] profile that grants it",
		    rs->codex_permission_profile, word);
	else if (rs->codex_add_dir_ok)
		snprintf(out, cap, "codex --add-dir %s, or writable_roots in config.toml", word);
	else
		snprintf(out, cap,
		         "writable_roots in config.toml, or one -c "
		         "sandbox_workspace_write.writable_roots=[...] that lists every root");
}

static char *grant_knob(const struct dt_rootset *rs, const char *dir)
{
	char buf[PATH_MAX + 256];

	dt_codex_grant_hint(rs, dir, buf, sizeof(buf));
	return xstrdup(buf);
}

/* The workspace (cwd, or -C), /tmp unless excluded, $TMPDIR unless
 * excluded: what workspace-write and -P :workspace grant besides lists. */
static void base_roots(struct dt_rootset *rs, const struct dt_codex_launch *l,
                       const struct dt_codex_cli *cli, const char *workspace, bool slash_tmp,
                       bool tmpdir, struct strlist *writable)
{
	char *s, *k;

	if (workspace) {
		s = cli->cd ? xasprintf("codex %s %s", cli->cd_text, cli->cd)
		            : xstrdup("codex workspace (cwd)");
		k = grant_knob(rs, workspace);
		add_writable(rs, writable, workspace, s, k);
		free(s);
		free(k);
	}
	if (slash_tmp) {
		k = grant_knob(rs, "/tmp");
		add_writable(rs, writable, "/tmp", "codex workspace-write: /tmp", k);
		free(k);
	}
	if (tmpdir && nonempty(l->tmpdir) && l->tmpdir[0] != '/')
		dt_roots_warn(rs, "TMPDIR=%s is not absolute; Codex does not make it writable",
		              l->tmpdir);
	else if (tmpdir && nonempty(l->tmpdir)) {
		s = xasprintf("codex workspace-write: TMPDIR=%s", l->tmpdir);
		k = grant_knob(rs, l->tmpdir);
		add_writable(rs, writable, l->tmpdir, s, k);
		free(s);
		free(k);
	}
}

/* .git, .codex, .agents and .aws inside every writable root stay read-only. */
static void add_protected(struct dt_rootset *rs, const struct strlist *writable)
{
	for (size_t i = 0; i < writable->n; i++) {
		for (size_t j = 0; j < sizeof(codex_protected) / sizeof(*codex_protected); j++) {
			const char *w = writable->v[i];
			char *p = xasprintf("%s/%s", strcmp(w, "/") ? w : "", codex_protected[j]);
			char *s = xasprintf("codex keeps %s read-only inside writable root %s",
			                    codex_protected[j], w);
			struct dt_root *r;

			if (!find_root(rs, p, DT_ROOT_CODEX)) {
				r = dt_roots_add(rs, p, DT_ROOT_CODEX, s, NULL);
				if (r)
					r->readonly_sub = 1;
			}
			free(s);
			free(p);
		}
	}
}

/* The writable_roots list that decides, from the -c layer or a file
 * (config.toml, the -p layer, a project layer). */
static void decided_list(struct dt_rootset *rs, const struct codex_cfg *cfg,
                         const struct dt_codex_launch *l, const struct toml_value *list,
                         const struct dt_codex_override *from, int file, struct strlist *writable)
{
	struct strlist roots = {0};
	const char *path = from || file < 0 ? NULL : cfg->path[file];
	char *dir = path ? dir_name(path) : NULL;
	char *s = from ? xstrdup(from->text)
	               : xasprintf("%s [sandbox_workspace_write] writable_roots", path);
	char *k = from ? xstrdup(override_knob) : xasprintf("writable_roots in %s", path);

	if (from) {
		free(rs->codex_override);
		rs->codex_override = xstrdup(from->text);
	}
	/* -c paths are relative to where Codex was started, the files' to
	 * their directory ($CODEX_HOME, DIR/.codex) */
	list_roots(rs, list, s, from ? l->cwd : dir, l->home, &roots);
	for (size_t i = 0; i < roots.n; i++)
		add_writable(rs, writable, roots.v[i], s, k);
	for (size_t i = 0; i < rs->ncodex_list; i++)
		free(rs->codex_list[i]);
	free(rs->codex_list);
	rs->codex_list = roots.v; /* handed over, freed with rs */
	rs->ncodex_list = roots.n;
	free(s);
	free(k);
	free(dir);
}

/* The first file above file i that sets a writable_roots list, or -1. */
static int next_list(const struct codex_cfg *cfg, size_t i)
{
	const char *keys[] = {"sandbox_workspace_write", "writable_roots"};

	for (size_t j = i + 1; j < cfg->n; j++)
		if (codex_walk(cfg->v[j], keys, 2))
			return (int)j;
	return -1;
}

/* The lists that lost: every -c list a later -c wiped (dropped by that
 * one), and each file's list under the next file's above it, else under
 * the deciding -c list. */
static void lost_lists(struct dt_rootset *rs, const struct codex_cfg *cfg,
                       const struct dt_codex_launch *l, const struct dt_codex_override *from,
                       const struct strlist *writable)
{
	const char *keys[] = {"sandbox_workspace_write", "writable_roots"};
	const struct dt_codex_cli *cli = cfg->cli;

	for (size_t i = 0; i < cli->nov; i++) {
		const struct toml_value *v = codex_override_at(&cli->ov[i], keys, 2);
		const struct dt_codex_override *by = codex_replaced_by(cli, i, keys, 2);

		if (v && by)
			add_dropped(rs, writable, v, cli->ov[i].text, l->cwd, l->home,
			            cli->ov[i].text, override_knob, by->text);
	}
	for (size_t i = 0; i < cfg->n; i++) {
		const struct toml_value *v = codex_walk(cfg->v[i], keys, 2);
		int j = next_list(cfg, i);
		char *s, *dir, *k;

		if (!v || (j < 0 && !from))
			continue;
		s = xasprintf("%s [sandbox_workspace_write] writable_roots", cfg->path[i]);
		dir = dir_name(cfg->path[i]);
		k = j >= 0 ? xasprintf("writable_roots in %s", cfg->path[j])
		           : xstrdup(override_knob);
		add_dropped(rs, writable, v, cfg->path[i], dir, l->home, s, k,
		            j >= 0 ? cfg->path[j] : from->text);
		free(s);
		free(dir);
		free(k);
	}
}

static void codex_workspace_write_roots(struct dt_rootset *rs, const struct codex_cfg *cfg,
                                        const struct dt_codex_launch *l, const char *workspace)
{
	const struct dt_codex_cli *cli = cfg->cli;
	const char *keys[] = {"sandbox_workspace_write", "writable_roots"};
	const struct dt_codex_override *from;
	int file;
	struct strlist writable = {0};
	const struct toml_value *list;

	base_roots(rs, l, cli, workspace, !codex_cfg_bool(cfg, "exclude_slash_tmp"),
	           !codex_cfg_bool(cfg, "exclude_tmpdir_env_var"), &writable);
	for (size_t i = 0; i < cli->nadd; i++) {
		char *p = resolve_path(cli->add_dirs[i], workspace, l->home), *s, *k;

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
	list = codex_cfg_get(cfg, keys, 2, &from, &file);
	if (list)
		decided_list(rs, cfg, l, list, from, file, &writable);
	lost_lists(rs, cfg, l, from, &writable);
	add_protected(rs, &writable);
	strlist_free(&writable);
}

/* -P :workspace (or default_permissions = ":workspace"): the workspace,
 * /tmp and $TMPDIR, whatever writable_roots and the exclude_* settings say
 * (seen with 0.169). */
static void codex_workspace_profile_roots(struct dt_rootset *rs, const struct codex_cfg *cfg,
                                          const struct dt_codex_launch *l, const char *workspace)
{
	struct strlist writable = {0};

	base_roots(rs, l, cfg->cli, workspace, true, true, &writable);
	add_protected(rs, &writable);
	strlist_free(&writable);
}

/* What decides the sandbox: a permission profile (-P, or
 * default_permissions) or a sandbox mode. */
struct codex_choice {
	const char *mode;    /* read-only, workspace-write, danger-full-access; NULL
	                      * for a [permissions] profile not modelled */
	const char *profile; /* the permission profile, or NULL */
	bool ws_profile;     /* :workspace (or a profile extending it) */
	char *why;           /* where it came from, for messages */
};

/* Which of sandbox_mode and default_permissions decides, as Codex 0.169
 * does (seen with the binary): -P beats both; otherwise the higher layer
 * (-c, then -p, then config.toml) that sets either decides, and within one
 * layer default_permissions wins. `codex sandbox` takes sandbox_mode from
 * -c only unless some layer sets default_permissions; the TUI and exec
 * take -s over both, and run workspace-write in a trusted project. */
static void choose_mode(struct dt_rootset *rs, const struct codex_cfg *cfg, const char *workspace,
                        struct codex_choice *ch)
{
	const char *kdp[] = {"default_permissions"}, *ksm[] = {"sandbox_mode"}, *wdp, *wsm;
	const struct toml_value *dp, *sm;
	const struct dt_codex_cli *cli = cfg->cli;
	int rdp = codex_cfg_rank(cfg, kdp, 1, &dp, &wdp),
	    rsm = codex_cfg_rank(cfg, ksm, 1, &sm, &wsm);

	if (cli->perm_profile) {
		ch->profile = cli->perm_profile;
		ch->why = xasprintf("%s %s", cli->perm_text, cli->perm_profile);
	} else if (!cli->sandbox_cmd && cli->mode) {
		ch->mode = cli->mode;
		if (!codex_known_mode(cli->mode))
			codex_refuse(rs, "invalid value '%s' for '--sandbox <SANDBOX_MODE>'",
			             cli->mode);
	} else if (dp && rdp >= rsm) {
		if (dp->type != TOML_STRING)
			codex_refuse(rs, "default_permissions in %s is not a string", wdp);
		ch->profile = dp->type == TOML_STRING ? dp->str : "";
		ch->why = xasprintf("default_permissions = \"%s\" in %s", ch->profile, wdp);
	} else if (sm && sm->type == TOML_STRING &&
	           (rsm == CODEX_RANK_C || !cli->sandbox_cmd || dp)) {
		ch->mode = sm->str;
	} else {
		if (sm && sm->type == TOML_STRING)
			dt_roots_warn(rs,
			              "codex sandbox ignores sandbox_mode = \"%s\" in %s: it runs "
			              "read-only unless -c sandbox_mode=..., -P or "
			              "default_permissions says otherwise",
			              sm->str, wsm);
		ch->mode = !cli->sandbox_cmd && workspace && codex_project_has_trust(cfg, workspace)
		               ? "workspace-write"
		               : "read-only";
	}
}

static const char *builtin_mode(const char *profile, bool *ws)
{
	*ws = !strcmp(profile, ":workspace");
	return *ws                                       ? "workspace-write"
	       : !strcmp(profile, ":read-only")          ? "read-only"
	       : !strcmp(profile, ":danger-full-access") ? "danger-full-access"
	                                                 : NULL;
}

/* The mode a permission profile stands for: Codex 0.169's built-ins
 * :read-only, :workspace and :danger-full-access, or [permissions.NAME]
 * (modelled only when it just extends a built-in). */
static void profile_mode(struct dt_rootset *rs, const struct codex_cfg *cfg,
                         struct codex_choice *ch)
{
	const char *p = ch->profile, *kperm[] = {"permissions"}, *kp[] = {"permissions", p};
	const char *kext[] = {"permissions", p, "extends"},
	           *kfs[] = {"permissions", p, "filesystem"};
	const struct toml_value *ext;

	ch->mode = builtin_mode(p, &ch->ws_profile);
	if (ch->mode)
		return;
	if (p[0] == ':') {
		codex_refuse(rs, "default_permissions refers to unknown built-in profile `%s`", p);
		return;
	}
	if (!codex_cfg_get(cfg, kperm, 1, NULL, NULL)) {
		codex_refuse(rs, "%s: default_permissions requires a `[permissions]` table",
		             ch->why);
		return;
	}
	if (!codex_cfg_get(cfg, kp, 2, NULL, NULL)) {
		codex_refuse(rs, "default_permissions refers to undefined profile `%s`", p);
		return;
	}
	ext = codex_cfg_get(cfg, kext, 3, NULL, NULL);
	if (ext && ext->type == TOML_STRING && !codex_cfg_get(cfg, kfs, 3, NULL, NULL))
		ch->mode = builtin_mode(ext->str, &ch->ws_profile);
	if (!ch->mode)
		dt_roots_warn(rs,
		              "%s: the filesystem entries of [permissions.%s] decide what is "
		              "writable; denytrace does not model them",
		              ch->why, p);
}

/* Says which settings a permission profile made irrelevant. */
static void warn_ignored(struct dt_rootset *rs, const struct codex_cfg *cfg,
                         const struct codex_choice *ch)
{
	static const char *const keys[][2] = {
	    {"sandbox_mode", NULL},
	    {"sandbox_workspace_write", "writable_roots"},
	    {"sandbox_workspace_write", "exclude_slash_tmp"},
	    {"sandbox_workspace_write", "exclude_tmpdir_env_var"}};
	char list[256] = "";

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		size_t n = strlen(list);

		if (codex_cfg_get(cfg, keys[i], keys[i][1] ? 2 : 1, NULL, NULL))
			snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "",
			         keys[i][1] ? keys[i][1] : keys[i][0]);
	}
	if (list[0])
		dt_roots_warn(
		    rs,
		    "%s: Codex ignores %s here; the permission profile alone decides what "
		    "is writable%s",
		    ch->why, list, ch->ws_profile ? " (the workspace, /tmp and $TMPDIR)" : "");
}

/* The workspace: -C taken against the cwd, else the cwd. */
static char *codex_workspace(struct dt_rootset *rs, const struct dt_codex_cli *cli,
                             const struct dt_codex_launch *l)
{
	char *w = NULL;

	if (cli->cd && *cli->cd) {
		w = resolve_path(cli->cd, l->cwd, NULL);
		if (!w)
			dt_roots_warn(rs, "codex %s %s: relative and the cwd is unknown",
			              cli->cd_text, cli->cd);
	} else if (nonempty(l->cwd) && l->cwd[0] == '/') {
		w = normalize_path(NULL, l->cwd);
	}
	return w;
}

/* The version whose command lines the model follows: the binary's, or the
 * nearest known one (said), or the newest when the binary is unknown. */
static const struct dt_codex_version *model_version(struct dt_rootset *rs,
                                                    const struct dt_codex_launch *l)
{
	char note[512];
	const struct dt_codex_version *v =
	    dt_codex_version_pick(l->codex_version, note, sizeof(note));

	if (note[0])
		dt_roots_warn(rs, "%s", note);
	rs->codex_version = v->name;
	return v;
}

int dt_roots_from_codex(struct dt_rootset *rs, const struct dt_codex_launch *l,
                        const char *config_path, char *err, size_t errlen)
{
	struct dt_codex_cli cli = {0};
	struct codex_cfg cfg = {0};
	struct codex_choice ch = {0};
	char *workspace;
	bool from_ring;
	int rc = 0;

	if (err && errlen)
		err[0] = 0;
	if (!rs || !l)
		return 0;
	cli.version = model_version(rs, l);
	/* Codex parses its command line first, then reads its config */
	dt_codex_cli_parse(rs, &cli, l->argv, l->argc);
	if (cli.refused)
		codex_refuse(rs, "%s", cli.refused);
	rs->codex_add_dir_ok = cli.add_dir_ok;
	cfg.v[CODEX_FILE_CONFIG] = codex_load_config(
	    rs, l, config_path, &cfg.path[CODEX_FILE_CONFIG], &from_ring, err, errlen, &rc);
	if (rc < 0) {
		dt_codex_cli_free(&cli);
		return rc;
	}
	free(rs->codex_config_path);
	rs->codex_config_path = xstrdup(cfg.path[CODEX_FILE_CONFIG]);
	rs->codex_config_recorded = from_ring;
	cfg.n = CODEX_FILE_PROJECT;
	cfg.cli = &cli;
	workspace = codex_workspace(rs, &cli, l);
	codex_profile(rs, &cfg, l, !config_path && l->config_snapshot != NULL);
	codex_project_layers(rs, &cfg, l, !config_path && l->config_snapshot != NULL, workspace);
	codex_validate_cfg(rs, &cfg);
	codex_mcp_model(rs, &cfg, l);
	choose_mode(rs, &cfg, workspace, &ch);
	if (ch.profile && !rs->codex_refused)
		profile_mode(rs, &cfg, &ch);
	if (!rs->codex_refused) {
		free(rs->codex_sandbox_mode);
		rs->codex_sandbox_mode = xstrdup(ch.mode ? ch.mode : ch.profile);
		free(rs->codex_permission_profile);
		rs->codex_permission_profile = xstrdup(ch.profile);
		if (ch.profile)
			warn_ignored(rs, &cfg, &ch);
		if (ch.ws_profile)
			codex_workspace_profile_roots(rs, &cfg, l, workspace);
		else if (ch.mode && !strcmp(ch.mode, "workspace-write"))
			codex_workspace_write_roots(rs, &cfg, l, workspace);
	}
	codex_warn_tempdir_home(rs, l);
	free(ch.why);
	free(workspace);
	dt_codex_cli_free(&cli);
	codex_cfg_free(&cfg);
	return 0;
}
