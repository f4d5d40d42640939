// SPDX-License-Identifier: MIT
/*
 * Codex's command line as Codex 0.169 reads it (roots.h: dt_codex_cli_parse,
 * dt_argv_is_codex, -c overrides): which argv is Codex, its own options up
 * to "--" or the sandboxed command, and each -c KEY=VALUE parsed.
 */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "roots_int.h"

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
