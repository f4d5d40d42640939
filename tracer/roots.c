// SPDX-License-Identifier: MIT
/*
 * Writable roots: the ones a launch was expected to get (from --root, from
 * Codex's command line and config.toml, from Hermes' and hcom's environment)
 * and the ones the sandbox actually granted (writable mounts seen from
 * inside). See roots.h; the Codex rules follow codex-rs (config/mod.rs
 * derive_sandbox_policy, utils/absolute-path) as of Codex 0.169.
 */
#include "roots.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pathnorm.h"
#include "toml.h"

/* ---- small helpers ----------------------------------------------------- */

/* Out of memory in a CLI that reads a handful of strings: nothing sensible
 * is left to do. */
static void oom(void)
{
	fputs("denytrace: out of memory\n", stderr);
	abort();
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

static char *xstrdup(const char *s)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		oom();
	return d;
}

__attribute__((format(printf, 1, 2))) static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	va_end(ap);
	return s;
}

static bool nonempty(const char *s)
{
	return s && *s;
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Lexical normalisation: path made absolute against base (NULL: "/"), with
 * "//", "." and ".." folded and no trailing slash. ".." at the top stays at
 * "/", as the kernel does. Symlinks are left alone on purpose: a root is
 * compared by what was written and, separately, by its realpath.
 */
static char *normalize_path(const char *base, const char *path)
{
	size_t cap = (base ? strlen(base) : 0) + strlen(path) + 3; /* always fits */
	char *out = xrealloc(NULL, cap);

	dt_normalize(out, cap, base, path);
	return out;
}

/* "~" and "~/x" name the home directory, as Codex's AbsolutePathBuf reads
 * them; then relative paths are taken against base. NULL when the path
 * needs a home or base that is unknown. */
static char *resolve_path(const char *path, const char *base, const char *home)
{
	if (!strcmp(path, "~") || starts_with(path, "~/")) {
		if (!nonempty(home) || home[0] != '/')
			return NULL;
		return normalize_path(home, path[1] ? path + 2 : ".");
	}
	if (path[0] != '/' && (!nonempty(base) || base[0] != '/'))
		return NULL;
	return normalize_path(base, path);
}

static char *dir_name(const char *path)
{
	char *d = normalize_path(NULL, path);
	char *slash = strrchr(d, '/');

	if (slash == d)
		d[1] = 0;
	else if (slash)
		*slash = 0;
	return d;
}

struct strlist {
	char **v;
	size_t n;
};

static void strlist_push(struct strlist *l, const char *s)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = xstrdup(s);
}

static bool strlist_has(const struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

static void strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* ---- the set ------------------------------------------------------------ */

int dt_path_under(const char *path, const char *root)
{
	size_t rl;

	if (!path || !root || !*root)
		return 0;
	rl = strlen(root);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (rl == 1 && root[0] == '/')
		return path[0] == '/';
	if (strncmp(path, root, rl))
		return 0;
	return path[rl] == 0 || path[rl] == '/';
}

static struct dt_root *find_root(const struct dt_rootset *rs, const char *norm,
                                 enum dt_root_kind kind)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].kind == kind && !strcmp(rs->v[i].path, norm))
			return &rs->v[i];
	return NULL;
}

/* Relative paths are taken against this process's cwd: that is what a
 * user means by `--root ./data`. Derived roots are made absolute by their
 * source's own rules before they get here. */
struct dt_root *dt_roots_add(struct dt_rootset *rs, const char *path, enum dt_root_kind kind,
                             const char *source, const char *knob)
{
	struct dt_root *r;
	char *norm;

	if (!rs || !nonempty(path))
		return NULL;
	if (path[0] == '/') {
		norm = normalize_path(NULL, path);
	} else {
		char *cwd = getcwd(NULL, 0);

		norm = normalize_path(cwd ? cwd : "/", path);
		free(cwd);
	}
	r = find_root(rs, norm, kind);
	if (r) {
		free(norm);
		if (!r->knob && knob)
			r->knob = xstrdup(knob);
		return r;
	}
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 16;
		rs->v = xrealloc(rs->v, rs->cap * sizeof(*rs->v));
	}
	r = &rs->v[rs->n++];
	memset(r, 0, sizeof(*r));
	r->path = norm;
	r->realpath = realpath(norm, NULL);
	r->source = xstrdup(source);
	r->knob = xstrdup(knob);
	r->kind = kind;
	r->granted = -1;
	return r;
}

void dt_roots_warn(struct dt_rootset *rs, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		oom();
	va_end(ap);
	rs->warnings = xrealloc(rs->warnings, (rs->nwarnings + 1) * sizeof(*rs->warnings));
	rs->warnings[rs->nwarnings++] = msg;
}

void dt_rootset_free(struct dt_rootset *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->v[i].path);
		free(rs->v[i].realpath);
		free(rs->v[i].source);
		free(rs->v[i].knob);
		free(rs->v[i].dropped_by);
	}
	free(rs->v);
	free(rs->codex_sandbox_mode);
	free(rs->codex_config_path);
	free(rs->codex_override);
	free(rs->codex_profile_path);
	for (size_t i = 0; i < rs->nwarnings; i++)
		free(rs->warnings[i]);
	free(rs->warnings);
	memset(rs, 0, sizeof(*rs));
}

/* ---- Codex: command line ------------------------------------------------ */

/* Codex's own helpers re-exec the binary under these names with argv that
 * is not Codex's command line (a serialized policy, a proxy's flags). */
static const char *const codex_helper_names[] = {
    "codex-linux-sandbox",
    "codex-responses-api-proxy",
    "codex-execve-wrapper",
};

static bool is_codex_name(const char *arg)
{
	const char *b = base_name(arg);

	if (!strcmp(b, "codex") || !strcmp(b, "codex.js"))
		return true;
	if (!starts_with(b, "codex-"))
		return false;
	for (size_t i = 0; i < sizeof(codex_helper_names) / sizeof(*codex_helper_names); i++)
		if (starts_with(b, codex_helper_names[i]))
			return false;
	return true;
}

/* Index of Codex's first own argument: after argv[0], or after
 * "node [node options] .../codex.js" (the npm package's entry point; its
 * "#!/usr/bin/env node" shim also shows up as node .../bin/codex).
 * 0 when argv is not Codex. */
static size_t codex_args_start(const char *const *argv, size_t argc)
{
	const char *b;

	if (argc == 0 || !argv[0])
		return 0;
	if (is_codex_name(argv[0]))
		return 1;
	b = base_name(argv[0]);
	if (!starts_with(b, "node"))
		return 0;
	for (size_t i = 1; i < argc && argv[i]; i++) {
		if (argv[i][0] == '-')
			continue;
		if (ends_with(argv[i], "codex.js") || !strcmp(base_name(argv[i]), "codex"))
			return i + 1;
		return 0;
	}
	return 0;
}

int dt_argv_is_codex(const char *const *argv, size_t argc)
{
	return codex_args_start(argv, argc) != 0;
}

const struct toml_value *dt_codex_override_value(const struct dt_codex_override *o)
{
	return o->parsed ? o->parsed : &o->literal;
}

void dt_codex_cli_free(struct dt_codex_cli *c)
{
	for (size_t i = 0; i < c->nov; i++) {
		struct dt_codex_override *o = &c->ov[i];

		free(o->text);
		for (size_t k = 0; k < o->nkeys; k++)
			free(o->keys[k]);
		free(o->keys);
		toml_free(o->parsed);
		free(o->literal.str);
	}
	free(c->ov);
	free(c->add_dirs);
	memset(c, 0, sizeof(*c));
}

static void add_override(struct dt_rootset *rs, struct dt_codex_cli *c, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct dt_codex_override o;
	char terr[256];
	const char *k, *ke;

	if (!eq) {
		if (rs)
			dt_roots_warn(rs,
			              "codex -c %s: no '=' (Codex refuses such an override); ignored",
			              arg);
		return;
	}
	memset(&o, 0, sizeof(o));
	o.text = xasprintf("-c %s", arg);
	k = arg;
	ke = eq;
	while (k < ke && (*k == ' ' || *k == '\t'))
		k++;
	while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
		ke--;
	for (const char *p = k; p <= ke; p++) {
		const char *s = p;

		while (p < ke && *p != '.')
			p++;
		o.keys = xrealloc(o.keys, (o.nkeys + 1) * sizeof(*o.keys));
		o.keys[o.nkeys] = xrealloc(NULL, (size_t)(p - s) + 1);
		memcpy(o.keys[o.nkeys], s, (size_t)(p - s));
		o.keys[o.nkeys][p - s] = 0;
		o.nkeys++;
	}
	o.parsed = toml_parse_value(eq + 1, terr, sizeof(terr));
	if (!o.parsed) {
		const char *v = eq + 1, *ve = v + strlen(v);

		while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r')
			v++;
		while (ve > v &&
		       (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\n' || ve[-1] == '\r'))
			ve--;
		while (v < ve && (*v == '"' || *v == '\''))
			v++;
		while (ve > v && (ve[-1] == '"' || ve[-1] == '\''))
			ve--;
		o.literal.type = TOML_STRING;
		o.literal.str = xrealloc(NULL, (size_t)(ve - v) + 1);
		memcpy(o.literal.str, v, (size_t)(ve - v));
		o.literal.str[ve - v] = 0;
	}
	c->ov = xrealloc(c->ov, (c->nov + 1) * sizeof(*c->ov));
	c->ov[c->nov++] = o;
}

/* Matches option a (argv[*i]) against -s / --long, in the forms clap takes:
 * "-s V", "-sV", "-s=V", "--long V", "--long=V". Sets *val (NULL when the
 * value is missing) and advances *i past a separate value. */
static bool option_value(const char *const *argv, size_t argc, size_t *i, char shortopt,
                         const char *longopt, const char **val)
{
	const char *a = argv[*i];

	if (shortopt && a[0] == '-' && a[1] == shortopt) {
		if (a[2] == 0) {
			*val = *i + 1 < argc ? argv[++*i] : NULL;
			return true;
		}
		*val = a + 2 + (a[2] == '=');
		return true;
	}
	if (longopt && a[0] == '-' && a[1] == '-' && starts_with(a + 2, longopt)) {
		const char *rest = a + 2 + strlen(longopt);

		if (*rest == 0) {
			*val = *i + 1 < argc ? argv[++*i] : NULL;
			return true;
		}
		if (*rest == '=') {
			*val = rest + 1;
			return true;
		}
	}
	return false;
}

/* Codex options whose value must not be mistaken for a subcommand or,
 * under `codex sandbox`, for the start of the command. */
static const struct {
	char s;
	const char *l;
} codex_valued_options[] = {
    {'m', "model"}, {'i', "image"},       {'a', "ask-for-approval"},    {0, "local-provider"},
    {0, "color"},   {0, "output-schema"}, {'o', "output-last-message"}, {0, "enable"},
    {0, "disable"},
};

enum codex_sub { SUB_NONE, SUB_OTHER, SUB_SANDBOX };

static enum codex_sub codex_subcommand(const char *a)
{
	static const char *const others[] = {
	    "exec",       "e",          "review",     "login", "logout", "mcp",
	    "mcp-server", "app-server", "completion", "apply", "a",      "resume",
	    "fork",       "cloud",      "features",   "help",
	};

	if (!strcmp(a, "sandbox") || !strcmp(a, "debug"))
		return SUB_SANDBOX;
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++)
		if (!strcmp(a, others[i]))
			return SUB_OTHER;
	return SUB_NONE;
}

static bool sandbox_platform_word(const char *a)
{
	return !strcmp(a, "linux") || !strcmp(a, "landlock") || !strcmp(a, "macos") ||
	       !strcmp(a, "seatbelt") || !strcmp(a, "windows");
}

void dt_codex_cli_parse(struct dt_rootset *rs, struct dt_codex_cli *c, const char *const *argv,
                        size_t argc)
{
	enum codex_sub sub = SUB_NONE;
	bool positional_seen = false, platform_seen = false;
	const char *full_auto = NULL, *bypass = NULL, *sflag = NULL;
	size_t i = codex_args_start(argv, argc);

	if (i == 0)
		i = argc ? 1 : 0;
	c->args_start = i;
	for (; i < argc && argv[i]; i++) {
		const char *a = argv[i], *val = NULL;
		bool skipped = false;

		/* Everything after "--" is the command (codex sandbox) or a
		 * prompt: Codex never reads it as its own options. */
		if (!strcmp(a, "--"))
			break;
		if (a[0] != '-' || a[1] == 0) {
			if (sub == SUB_SANDBOX) {
				if (!platform_seen && sandbox_platform_word(a)) {
					platform_seen = true;
					continue;
				}
				break; /* the sandboxed command begins */
			}
			if (sub == SUB_NONE && !positional_seen) {
				sub = codex_subcommand(a);
				c->sandbox_cmd = !strcmp(a, "sandbox");
				if (sub != SUB_NONE)
					continue;
			}
			positional_seen = true;
			continue;
		}
		if (option_value(argv, argc, &i, 'c', "config", &val)) {
			if (val)
				add_override(rs, c, val);
			c->config_end = i + 1;
		} else if (option_value(argv, argc, &i, 'C', "cd", &val)) {
			c->cd = val;
			c->cd_text = a;
		} else if (option_value(argv, argc, &i, 0, "add-dir", &val)) {
			if (val) {
				c->add_dirs =
				    xrealloc(c->add_dirs, (c->nadd + 1) * sizeof(*c->add_dirs));
				c->add_dirs[c->nadd++] = val;
			}
		} else if (option_value(argv, argc, &i, 's', "sandbox", &val)) {
			sflag = val;
		} else if (option_value(argv, argc, &i, 'p', "profile", &val)) {
			c->profile = val;
		} else if (!strcmp(a, "--full-auto")) {
			full_auto = "workspace-write";
		} else if (!strcmp(a, "--dangerously-bypass-approvals-and-sandbox") ||
		           !strcmp(a, "--yolo")) {
			bypass = "danger-full-access";
		} else {
			for (size_t k = 0; !skipped && k < sizeof(codex_valued_options) /
			                                       sizeof(*codex_valued_options);
			     k++)
				skipped = option_value(argv, argc, &i, codex_valued_options[k].s,
				                       codex_valued_options[k].l, &val);
		}
	}
	/* Codex: --full-auto, then the bypass flag, then -s. */
	c->mode = full_auto ? full_auto : bypass ? bypass : sflag;
}

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

		if (!config_path && stat(path, &st) != 0 && errno == ENOENT) {
			free(path); /* no config is Codex's default, not a problem */
			path = NULL;
		} else {
			file = toml_parse_file(path, terr, sizeof(terr));
			if (!file && config_path) {
				if (starts_with(terr, path))
					set_err(err, errlen, "%s", terr);
				else
					set_err(err, errlen, "%s: %s", path, terr);
				free(path);
				return -1;
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

/* ---- lookup ------------------------------------------------------------------ */

const struct dt_root *dt_root_for_path(const struct dt_rootset *rs, const char *path,
                                       unsigned kinds_mask, int want_readonly)
{
	const struct dt_root *best = NULL;
	size_t best_score = 0;

	if (!rs || !path)
		return NULL;
	for (size_t i = 0; i < rs->n; i++) {
		const struct dt_root *r = &rs->v[i];
		size_t score = 0;

		if (!(kinds_mask & (1u << r->kind)))
			continue;
		if (r->readonly_sub && !want_readonly)
			continue;
		/* Longer match wins; at equal length the logical path beats
		 * the realpath. Scores start at 1 so "/" still counts. */
		if (dt_path_under(path, r->path))
			score = 2 * strlen(r->path) + 2;
		if (r->realpath && dt_path_under(path, r->realpath) &&
		    2 * strlen(r->realpath) + 1 > score)
			score = 2 * strlen(r->realpath) + 1;
		if (score > best_score) {
			best = r;
			best_score = score;
		}
	}
	return best;
}
