/* SPDX-License-Identifier: MIT */
#include "codexargs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roots.h"

char *dt_toml_quote(const char *s)
{
	size_t n = 2;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += *p < 0x20 || *p == 0x7f ? 6 : *p == '"' || *p == '\\' ? 2 : 1;
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	*o++ = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			*o++ = '\\';
			*o++ = (char)*p;
		} else if (*p < 0x20 || *p == 0x7f) {
			/* TOML has no raw control characters in basic strings */
			o += sprintf(o, "\\u%04x", *p);
		} else {
			*o++ = (char)*p;
		}
	}
	*o++ = '"';
	*o = 0;
	return out;
}

int dt_codex_key_segment_ok(const char *name)
{
	return name && *name && !strchr(name, '.') && !strchr(name, '=');
}

struct strvec {
	char **v;
	size_t n;
	int oom;
};

static void strvec_push_owned(struct strvec *s, char *str)
{
	char **nv = str ? realloc(s->v, (s->n + 1) * sizeof(*nv)) : NULL;
	if (!nv) {
		free(str);
		s->oom = 1;
		return;
	}
	s->v = nv;
	s->v[s->n++] = str;
}

static int strvec_has(const struct strvec *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return 1;
	return 0;
}

static void strvec_add_unique(struct strvec *s, const char *str)
{
	if (!strvec_has(s, str))
		strvec_push_owned(s, strdup(str));
}

static void strvec_free(struct strvec *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static void add_table_keys(struct strvec *names, const struct toml_value *t)
{
	if (t && t->type == TOML_TABLE)
		for (size_t i = 0; i < t->n; i++)
			strvec_add_unique(names, t->keys[i]);
}

/* The servers the override layer names, replaying the overrides in order:
 * `-c mcp_servers={...}` replaces the layer's servers, a longer key adds
 * one. */
static void override_servers(const struct dt_codex_cli *cli, struct strvec *out)
{
	struct strvec layer = {0};
	for (size_t i = 0; i < cli->nov; i++) {
		const struct dt_codex_override *o = &cli->ov[i];
		if (o->nkeys < 1 || strcmp(o->keys[0], "mcp_servers"))
			continue;
		if (o->nkeys == 1) {
			strvec_free(&layer);
			add_table_keys(&layer, dt_codex_override_value(o));
		} else {
			strvec_add_unique(&layer, o->keys[1]);
		}
	}
	for (size_t i = 0; i < layer.n; i++)
		strvec_add_unique(out, layer.v[i]);
	out->oom |= layer.oom;
	strvec_free(&layer);
}

__attribute__((format(printf, 1, 2))) static char *str_printf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

/* The value of one variable for server: ours, then the server's own
 * LD_PRELOAD when it has one (the probe must load first to see the calls
 * the other preloads make). */
static char *server_value(const struct dt_codex_cli *cli, const struct toml_value *const *files,
                          size_t nfiles, const char *server, const char *var, const char *value)
{
	if (strcmp(var, "LD_PRELOAD"))
		return strdup(value);
	const char *keys[] = {"mcp_servers", server, "env", "LD_PRELOAD"};
	const struct toml_value *theirs = dt_codex_lookup(cli, files, nfiles, keys, 4, NULL, NULL);
	if (!theirs || theirs->type != TOML_STRING || !*theirs->str || !strcmp(theirs->str, value))
		return strdup(value);
	return str_printf("%s:%s", value, theirs->str);
}

int dt_codex_mcp_plan(const char *const *argv, size_t argc, const struct toml_value *const *files,
                      size_t nfiles, const char *const *vars, const char *const *values,
                      size_t nvars, struct dt_codex_mcp_plan *plan)
{
	struct dt_codex_cli cli = {0};
	struct strvec names = {0}, args = {0}, traced = {0}, skipped = {0};

	memset(plan, 0, sizeof(*plan));
	dt_codex_cli_parse(NULL, &cli, argv, argc);
	plan->insert_at = cli.config_end ? cli.config_end : cli.args_start ? cli.args_start : argc;

	for (size_t i = 0; i < nfiles; i++)
		add_table_keys(&names, toml_table_get(files[i], "mcp_servers"));
	override_servers(&cli, &names);

	const char *bad = NULL; /* a variable whose value no -c can carry */
	for (size_t k = 0; k < nvars && !bad; k++)
		if (!toml_utf8_ok(values[k]))
			bad = vars[k];
	for (size_t i = 0; i < names.n; i++) {
		const char *s = names.v[i];
		if (bad) {
			/* Codex would hand the server another path than ours */
			strvec_push_owned(
			    &skipped,
			    str_printf(
			        "%s: %s is not valid UTF-8, which a -c value (a TOML string) "
			        "cannot carry; give the ring a UTF-8 path (-o)",
			        s, bad));
			continue;
		}
		const char *kc[] = {"mcp_servers", s, "command"};
		const char *ku[] = {"mcp_servers", s, "url"};
		if (!dt_codex_key_segment_ok(s)) {
			strvec_push_owned(
			    &skipped,
			    str_printf("%s: its name holds '%s', where Codex splits -c keys, "
			               "so its env cannot be set key by key",
			               s, strchr(s, '.') ? "." : "="));
			continue;
		}
		if (!dt_codex_lookup(&cli, files, nfiles, kc, 3, NULL, NULL)) {
			strvec_push_owned(
			    &skipped,
			    str_printf("%s: %s", s,
			               dt_codex_lookup(&cli, files, nfiles, ku, 3, NULL, NULL)
			                   ? "a streamable HTTP server (url): no process "
			                     "to trace"
			                   : "neither command nor url: Codex refuses the "
			                     "configuration (invalid transport)"));
			continue;
		}
		for (size_t k = 0; k < nvars; k++) {
			char *v = server_value(&cli, files, nfiles, s, vars[k], values[k]);
			char *q = v ? dt_toml_quote(v) : NULL;
			free(v);
			strvec_push_owned(&args, strdup("-c"));
			strvec_push_owned(&args,
			                  q ? str_printf("mcp_servers.%s.env.%s=%s", s, vars[k], q)
			                    : NULL);
			free(q);
		}
		strvec_add_unique(&traced, s);
	}
	dt_codex_cli_free(&cli);
	int oom = names.oom | args.oom | traced.oom | skipped.oom;
	strvec_free(&names);
	plan->args = args.v;
	plan->nargs = args.n;
	plan->traced = traced.v;
	plan->ntraced = traced.n;
	plan->skipped = skipped.v;
	plan->nskipped = skipped.n;
	if (oom) {
		dt_codex_mcp_plan_free(plan);
		return -1;
	}
	return 0;
}

void dt_codex_mcp_plan_free(struct dt_codex_mcp_plan *plan)
{
	struct strvec v[] = {{plan->args, plan->nargs, 0},
	                     {plan->traced, plan->ntraced, 0},
	                     {plan->skipped, plan->nskipped, 0}};
	for (size_t i = 0; i < 3; i++)
		strvec_free(&v[i]);
	memset(plan, 0, sizeof(*plan));
}
