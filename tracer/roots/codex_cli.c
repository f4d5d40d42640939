// SPDX-License-Identifier: MIT
/*
 * Codex's command line as the versions of codex_versions.def read it
 * (roots.h: dt_codex_cli_parse, dt_argv_is_codex, -c overrides): which argv
 * is Codex, its own options up to "--" or the sandboxed command, and each
 * -c KEY=VALUE parsed.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roots_int.h"

/* ---- Codex: the versions the model was checked against ------------------ */

enum codex_version_id {
#define CODEX_VERSION(id, name, published) id,
#include "codex_versions.def"
#undef CODEX_VERSION
};

const struct dt_codex_version dt_codex_versions[] = {
#define CODEX_VERSION(id, name, published) {name, published},
#include "codex_versions.def"
#undef CODEX_VERSION
};
const size_t dt_ncodex_versions = sizeof(dt_codex_versions) / sizeof(*dt_codex_versions);

/* The first "N.N.N" in s as one number to compare, or -1. */
static long long version_number(const char *s)
{
	for (; s && *s; s++) {
		unsigned a, b, c;
		int n = 0;

		if (*s >= '0' && *s <= '9' && sscanf(s, "%u.%u.%u%n", &a, &b, &c, &n) == 3 &&
		    a < 100000 && b < 100000 && c < 100000)
			return ((long long)a * 100000 + b) * 100000 + c;
	}
	return -1;
}

static const char *known_list(char *buf, size_t cap)
{
	buf[0] = 0;
	for (size_t i = 0; i < dt_ncodex_versions; i++) {
		size_t n = strlen(buf);
		snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", dt_codex_versions[i].name);
	}
	return buf;
}

const struct dt_codex_version *dt_codex_version_pick(const char *reported, char *note, size_t cap)
{
	const struct dt_codex_version *newest = &dt_codex_versions[dt_ncodex_versions - 1];
	long long want = version_number(reported);
	const struct dt_codex_version *below = NULL;
	char list[128];

	if (note && cap)
		note[0] = 0;
	if (!reported)
		return newest;
	for (size_t i = 0; i < dt_ncodex_versions; i++) {
		long long v = version_number(dt_codex_versions[i].name);

		if (v == want)
			return &dt_codex_versions[i];
		if (v < want)
			below = &dt_codex_versions[i];
	}
	if (note && cap && want < 0)
		snprintf(note, cap,
		         "the Codex version \"%s\" is not a version number: modelled as %s",
		         reported, newest->name);
	else if (note && cap)
		snprintf(note, cap,
		         "Codex %s is %s the versions the model was checked against (%s): "
		         "modelled as %s",
		         reported,
		         below == newest ? "newer than"
		         : !below        ? "older than"
		                         : "between",
		         known_list(list, sizeof(list)), (below ? below : dt_codex_versions)->name);
	return want < 0 ? newest : below ? below : dt_codex_versions;
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
	free(c->refused);
	const struct dt_codex_version *v = c->version;
	memset(c, 0, sizeof(*c));
	c->version = v;
}

__attribute__((format(printf, 2, 3))) static void cli_refuse(struct dt_codex_cli *c,
                                                             const char *fmt, ...)
{
	va_list ap;

	if (c->refused)
		return;
	va_start(ap, fmt);
	if (vasprintf(&c->refused, fmt, ap) < 0)
		dt_out_of_memory();
	va_end(ap);
}

static void add_override(struct dt_codex_cli *c, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct dt_codex_override o;
	char terr[256];
	const char *k, *ke;

	if (!eq) {
		cli_refuse(c, "Invalid override (missing '='): %s", arg);
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

/* Codex's command lines (codex_options.def). */
enum codex_ctx {
	CX_TUI = 1,      /* bare `codex`, and options before a subcommand */
	CX_EXEC = 2,     /* codex exec / e */
	CX_SANDBOX = 4,  /* codex sandbox */
	CX_APPSRV = 8,   /* codex app-server */
	CX_EXECSRV = 16, /* codex exec-server */
	CX_OTHER = 32,   /* any other subcommand: its options are not checked */
};
#define CX_ALL (CX_TUI | CX_EXEC | CX_SANDBOX | CX_APPSRV | CX_EXECSRV)

enum codex_opt_role {
	OPT_OTHER,
	OPT_CONFIG,
	OPT_PROFILE,
	OPT_PERMISSIONS,
	OPT_CD,
	OPT_ADD_DIR,
	OPT_SANDBOX_MODE,
	OPT_BYPASS,
	OPT_NEEDS_PROXY,
};

static const struct codex_opt {
	char s;
	const char *l;
	bool value;
	unsigned where;
	enum codex_version_id since;
	enum codex_opt_role role;
} codex_opts[] = {
#define CODEX_OPT(s, l, value, where, since, role) {s, l, value, where, since, role},
#include "codex_options.def"
#undef CODEX_OPT
};

static unsigned codex_subcommand(const char *a)
{
	static const char *const others[] = {
	    "review", "login",   "logout", "mcp",       "mcp-server",     "completion",
	    "apply",  "a",       "resume", "fork",      "cloud",          "features",
	    "help",   "debug",   "agents", "plugin",    "update",         "doctor",
	    "queue",  "archive", "delete", "unarchive", "remote-control",
	};

	if (!strcmp(a, "sandbox"))
		return CX_SANDBOX;
	if (!strcmp(a, "exec") || !strcmp(a, "e"))
		return CX_EXEC;
	if (!strcmp(a, "app-server"))
		return CX_APPSRV;
	if (!strcmp(a, "exec-server"))
		return CX_EXECSRV;
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++)
		if (!strcmp(a, others[i]))
			return CX_OTHER;
	return 0;
}

/* The codex_opts entry argv[*i] is, advancing *i past a separate value. */
static const struct codex_opt *match_option(const char *const *argv, size_t argc, size_t *i,
                                            const char **val)
{
	const char *a = argv[*i];

	*val = NULL;
	for (size_t k = 0; k < sizeof(codex_opts) / sizeof(*codex_opts); k++) {
		const struct codex_opt *o = &codex_opts[k];

		if (o->value
		        ? option_value(argv, argc, i, o->s, o->l, val)
		        : (o->s && a[1] == o->s && !a[2]) || (a[1] == '-' && !strcmp(a + 2, o->l)))
			return o;
	}
	return NULL;
}

static const char *ctx_name(unsigned ctx)
{
	return ctx == CX_SANDBOX   ? "codex sandbox"
	       : ctx == CX_EXEC    ? "codex exec"
	       : ctx == CX_APPSRV  ? "codex app-server"
	       : ctx == CX_EXECSRV ? "codex exec-server"
	                           : "codex (before any subcommand)";
}

/* The command lines that take option o in version v (every row of its
 * name since v), and in any version (*ever). */
static unsigned option_where(const struct codex_opt *o, enum codex_version_id v, unsigned *ever)
{
	unsigned where = 0;

	*ever = 0;
	for (size_t k = 0; k < sizeof(codex_opts) / sizeof(*codex_opts); k++) {
		if (strcmp(codex_opts[k].l, o->l))
			continue;
		*ever |= codex_opts[k].where;
		if (codex_opts[k].since <= v)
			where |= codex_opts[k].where;
	}
	return where;
}

static enum codex_version_id cli_version(const struct dt_codex_cli *c)
{
	return c->version ? (enum codex_version_id)(c->version - dt_codex_versions)
	                  : (enum codex_version_id)(dt_ncodex_versions - 1);
}

/* Codex exits 2 on an option its subcommand does not take: say so, and
 * when another version takes it there, which. Returns 1 when refused. */
static int refuse_misplaced(struct dt_codex_cli *c, const struct codex_opt *o, unsigned ctx,
                            const char *a)
{
	enum codex_version_id v = cli_version(c);
	unsigned ever, where = option_where(o, v, &ever);
	const char *name = dt_codex_versions[v].name;

	if (ctx == CX_OTHER || (where & ctx))
		return 0;
	if (ever & ctx)
		cli_refuse(c, "%s does not accept %s in Codex %s (a later version does)",
		           ctx_name(ctx), a, name);
	else
		cli_refuse(c, "%s does not accept %s%s%s%s", ctx_name(ctx), a,
		           where ? "" : " (no Codex ", where ? "" : name,
		           where ? "" : " command does)");
	return 1;
}

/* What the options before it meant, for a subcommand that ignores them:
 * `codex -s workspace-write sandbox` runs read-only (seen with 0.169 and
 * 0.171). */
static void drop_tui_options(struct dt_rootset *rs, struct dt_codex_cli *c, const char *sub,
                             const char *const *seen, size_t nseen)
{
	for (size_t k = 0; k < nseen; k++)
		if (rs)
			dt_roots_warn(rs,
			              "codex %s ignores %s given before `%s` (it belongs to the "
			              "interactive CLI)",
			              sub, seen[k], sub);
	c->cd = c->cd_text = NULL;
	c->nadd = 0;
	c->sflag = NULL;
	c->bypass = 0;
}

static void apply_option(struct dt_codex_cli *c, const struct codex_opt *o, const char *a,
                         const char *val, size_t start, size_t next)
{
	switch (o->role) {
	case OPT_CONFIG:
		if (val) {
			size_t had = c->nov;
			add_override(c, val);
			if (c->nov > had) {
				c->ov[had].argi = start;
				c->ov[had].argn = next - start;
			}
		}
		c->config_end = next;
		break;
	case OPT_CD:
		c->cd = val;
		c->cd_text = a;
		break;
	case OPT_ADD_DIR:
		if (val) {
			c->add_dirs = xrealloc(c->add_dirs, (c->nadd + 1) * sizeof(*c->add_dirs));
			c->add_dirs[c->nadd++] = val;
		}
		break;
	case OPT_SANDBOX_MODE:
		c->sflag = val;
		break;
	case OPT_PROFILE:
		c->profile = val;
		break;
	case OPT_PERMISSIONS:
		if (c->perm_profile)
			cli_refuse(c,
			           "%s: the argument '--permission-profile' cannot be used "
			           "multiple times",
			           a);
		c->perm_profile = val ? val : "";
		c->perm_text = a;
		break;
	case OPT_BYPASS:
		c->bypass = 1;
		break;
	case OPT_NEEDS_PROXY:
		cli_refuse(c, "%s requires a managed network proxy", a);
		break;
	case OPT_OTHER:
		break;
	}
}

void dt_codex_cli_parse(struct dt_rootset *rs, struct dt_codex_cli *c, const char *const *argv,
                        size_t argc)
{
	unsigned ctx = CX_TUI;
	bool positional_seen = false;
	const char *tui_only[16];
	size_t ntui = 0, i = codex_args_start(argv, argc);

	if (i == 0)
		i = argc ? 1 : 0;
	c->args_start = i;
	for (; i < argc && argv[i]; i++) {
		const char *a = argv[i], *val;
		const struct codex_opt *o;
		unsigned sub;
		size_t start = i;

		/* after "--" comes the command (codex sandbox) or a prompt */
		if (!strcmp(a, "--"))
			break;
		if (a[0] != '-' || a[1] == 0) {
			if (ctx == CX_SANDBOX)
				break; /* the sandboxed command begins */
			if (ctx == CX_TUI && !positional_seen && (sub = codex_subcommand(a))) {
				ctx = sub;
				c->subcommand = a;
				if (sub == CX_SANDBOX)
					drop_tui_options(rs, c, a, tui_only, ntui);
				continue;
			}
			positional_seen = true;
			continue;
		}
		o = match_option(argv, argc, &i, &val);
		if (!o)
			continue;
		if (refuse_misplaced(c, o, ctx, a))
			continue;
		/* -c and -p reach every subcommand; -C, --add-dir, -s and
		 * the bypass before a subcommand are the TUI's */
		if (ctx == CX_TUI && o->role != OPT_CONFIG && o->role != OPT_PROFILE &&
		    o->role != OPT_OTHER && ntui < sizeof(tui_only) / sizeof(*tui_only))
			tui_only[ntui++] = a;
		apply_option(c, o, a, val, start, i + 1);
	}
	c->sandbox_cmd = ctx == CX_SANDBOX;
	c->add_dir_ok = ctx != CX_SANDBOX && ctx != CX_APPSRV;
	if (c->sandbox_cmd && c->cd && !c->perm_profile)
		cli_refuse(c, "codex sandbox takes %s only with -P/--permission-profile",
		           c->cd_text);
	/* Codex: the bypass flag, then -s */
	c->mode = c->bypass ? "danger-full-access" : c->sflag;
}
