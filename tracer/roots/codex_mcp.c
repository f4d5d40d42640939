// SPDX-License-Identifier: MIT
/*
 * Each MCP server's environment as Codex will build it (codex_mcp.h), from
 * the merged configuration (codex_int.h) and the environment Codex starts
 * with.
 */

#include "codex_mcp.h"

#include <stdlib.h>
#include <string.h>

#include "codex_int.h"
#include "codexargs.h"
#include "envfilter.h"

/* Codex's default set on Unix (rmcp-client/src/utils.rs DEFAULT_ENV_VARS);
 * __CF_USER_TEXT_ENCODING is macOS's and never set here. */
static const char *const codex_default_vars[] = {
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
};

int dt_mcp_var_followed(const char *name, size_t n)
{
	if ((n >= 7 && !memcmp(name, "HERMES_", 7)) || (n >= 5 && !memcmp(name, "HCOM_", 5)))
		return 1;
	if (n == 10 && !memcmp(name, "CODEX_HOME", 10))
		return 1;
	/* a record keeps a name outside the built-in list only when
	 * DENYTRACE_ENV asked for it */
	return !dt_env_name_is_wanted(name, n, NULL) && !dt_secret_env_name(name, n);
}

static void var_free(struct dt_mcp_var *v)
{
	free(v->name);
	free(v->launcher);
	free(v->value);
	free(v->from);
}

void dt_mcp_servers_free(struct dt_mcp_server *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct dt_mcp_server *s = &v[i];
		free(s->name);
		free(s->command);
		for (size_t k = 0; k < s->nargs; k++)
			free(s->args[k]);
		free(s->args);
		free(s->url);
		free(s->defined_in);
		for (size_t k = 0; k < s->nenv_vars; k++)
			free(s->env_vars[k]);
		free(s->env_vars);
		free(s->env_vars_from);
		free(s->env_from);
		for (size_t k = 0; k < s->nvars; k++)
			var_free(&s->vars[k]);
		free(s->vars);
	}
	free(v);
}

const struct dt_mcp_var *dt_mcp_var_of(const struct dt_mcp_server *s, const char *name)
{
	for (size_t i = 0; s && i < s->nvars; i++)
		if (!strcmp(s->vars[i].name, name))
			return &s->vars[i];
	return NULL;
}

static int args_match(const struct dt_mcp_server *s, const char *const *argv, size_t argc)
{
	if (!s->args_known)
		return 1; /* the command alone tells */
	if (argc != s->nargs + 1)
		return 0;
	for (size_t k = 0; k < s->nargs; k++)
		if (strcmp(argv[k + 1], s->args[k]))
			return 0;
	return 1;
}

const struct dt_mcp_server *dt_mcp_server_for(const struct dt_mcp_server *v, size_t n,
                                              const char *const *argv, size_t argc)
{
	if (!argc || !argv[0])
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct dt_mcp_server *s = &v[i];
		if (!s->command || !args_match(s, argv, argc))
			continue;
		/* Codex resolves a bare command on PATH */
		if (!strcmp(s->command, argv[0]) ||
		    !strcmp(base_name(s->command), base_name(argv[0])))
			return s;
	}
	return NULL;
}

char *dt_mcp_env_vars_merged(const struct dt_mcp_server *s, const char *const *add, size_t nadd)
{
	struct strlist names = {0};
	char *out = xstrdup("["), *next;

	for (size_t i = 0; i < s->nenv_vars; i++)
		strlist_push(&names, s->env_vars[i]);
	for (size_t i = 0; i < nadd; i++)
		if (!strlist_has(&names, add[i]))
			strlist_push(&names, add[i]);
	for (size_t i = 0; i < names.n; i++) {
		/* a recorded name is the traced program's: one TOML string */
		char *q = dt_toml_quote(names.v[i]);
		if (!q)
			dt_out_of_memory();
		next = xasprintf("%s%s%s", out, i ? ", " : "", q);
		free(q);
		free(out);
		out = next;
	}
	next = xasprintf("%s]", out);
	free(out);
	strlist_free(&names);
	return next;
}

/* ---- the model ---------------------------------------------------------- */

static void add_table_keys(struct strlist *names, const struct toml_value *t)
{
	for (size_t i = 0; t && t->type == TOML_TABLE && i < t->n; i++)
		if (!strlist_has(names, t->keys[i]))
			strlist_push(names, t->keys[i]);
}

/* Every server a layer names, files first, then the -c layer replayed in
 * order (a `-c mcp_servers={...}` replaces what earlier -c flags named). */
static void server_names(const struct codex_cfg *c, struct strlist *names)
{
	struct strlist layer = {0};

	for (size_t i = 0; i < c->n; i++)
		add_table_keys(names, toml_table_get(c->v[i], "mcp_servers"));
	for (size_t i = 0; i < c->cli->nov; i++) {
		const struct dt_codex_override *o = &c->cli->ov[i];
		if (o->nkeys < 1 || strcmp(o->keys[0], "mcp_servers"))
			continue;
		if (o->nkeys == 1) {
			strlist_free(&layer);
			add_table_keys(&layer, dt_codex_override_value(o));
		} else if (!strlist_has(&layer, o->keys[1])) {
			strlist_push(&layer, o->keys[1]);
		}
	}
	for (size_t i = 0; i < layer.n; i++)
		if (!strlist_has(names, layer.v[i]))
			strlist_push(names, layer.v[i]);
	strlist_free(&layer);
}

static const struct toml_value *server_get(const struct codex_cfg *c, const char *server,
                                           const char *key, const char *sub, const char **where)
{
	const char *keys[] = {"mcp_servers", server, key, sub};
	const struct toml_value *v;

	codex_cfg_rank(c, keys, sub ? 4 : 3, &v, where);
	return v;
}

static const char *launcher_value(const struct dt_codex_launch *l, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < l->nenv; i++)
		if (!strncmp(l->env[i], name, n) && l->env[i][n] == '=')
			return l->env[i] + n + 1;
	return NULL;
}

static const char *env_var_name(const struct toml_value *item)
{
	const struct toml_value *n;

	if (item->type == TOML_STRING)
		return item->str;
	n = toml_table_get(item, "name");
	return n && n->type == TOML_STRING ? n->str : NULL;
}

static void read_env_vars(const struct codex_cfg *c, struct dt_mcp_server *s)
{
	const char *where;
	const struct toml_value *v = server_get(c, s->name, "env_vars", NULL, &where);

	if (!v || v->type != TOML_ARRAY)
		return;
	s->env_vars_from = xstrdup(where);
	for (size_t i = 0; i < v->n; i++) {
		const char *name = env_var_name(&v->items[i]);
		if (!name)
			continue;
		s->env_vars = xrealloc(s->env_vars, (s->nenv_vars + 1) * sizeof(*s->env_vars));
		s->env_vars[s->nenv_vars++] = xstrdup(name);
	}
}

static void read_command(const struct codex_cfg *c, struct dt_mcp_server *s)
{
	const char *where, *uwhere, *awhere;
	const struct toml_value *cmd = server_get(c, s->name, "command", NULL, &where);
	const struct toml_value *args = server_get(c, s->name, "args", NULL, &awhere);
	const struct toml_value *url = server_get(c, s->name, "url", NULL, &uwhere);

	if (cmd && cmd->type == TOML_STRING)
		s->command = xstrdup(cmd->str);
	if (url && url->type == TOML_STRING)
		s->url = xstrdup(url->str);
	if (cmd || url)
		s->defined_in = xstrdup(cmd ? where : uwhere);
	/* a config snapshot redacts args (a token may be among them) */
	s->args_known = !args || args->type == TOML_ARRAY;
	for (size_t i = 0; args && args->type == TOML_ARRAY && i < args->n; i++) {
		if (args->items[i].type != TOML_STRING)
			continue;
		s->args = xrealloc(s->args, (s->nargs + 1) * sizeof(*s->args));
		s->args[s->nargs++] = xstrdup(args->items[i].str);
	}
}

static int in_list(const char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return 1;
	return 0;
}

/* What the server gets for name: the env table wins, then env_vars and
 * the default set copy Codex's own value. */
static void decide_var(const struct codex_cfg *c, const struct dt_codex_launch *l,
                       const struct dt_mcp_server *s, struct dt_mcp_var *v)
{
	const char *where, *mine = launcher_value(l, v->name);
	const struct toml_value *t = server_get(c, s->name, "env", v->name, &where);

	v->launcher = mine ? xstrdup(mine) : NULL;
	if (t && t->type == TOML_STRING) {
		v->value = xstrdup(t->str);
		v->from = starts_with(where, "-c ") ? xstrdup(where)
		                                    : xasprintf("env table in %s", where);
	} else if (mine && in_list((const char *const *)s->env_vars, s->nenv_vars, v->name)) {
		v->value = xstrdup(mine);
		v->from = xasprintf("env_vars in %s", s->env_vars_from);
	} else if (mine &&
	           in_list(codex_default_vars,
	                   sizeof(codex_default_vars) / sizeof(*codex_default_vars), v->name)) {
		v->value = xstrdup(mine);
		v->from = xstrdup("Codex's default variables");
	}
}

static void add_var(struct dt_mcp_server *s, const char *name)
{
	if (dt_mcp_var_of(s, name))
		return;
	s->vars = xrealloc(s->vars, (s->nvars + 1) * sizeof(*s->vars));
	memset(&s->vars[s->nvars], 0, sizeof(*s->vars));
	s->vars[s->nvars++].name = xstrdup(name);
}

/* The followed names: the launcher's, then those the env table sets. */
static void follow_vars(const struct codex_cfg *c, const struct dt_codex_launch *l,
                        struct dt_mcp_server *s)
{
	const char *where;
	const struct toml_value *env = server_get(c, s->name, "env", NULL, &where);

	for (size_t i = 0; i < l->nenv; i++) {
		const char *eq = strchr(l->env[i], '=');
		char *name;
		if (!eq || !dt_mcp_var_followed(l->env[i], (size_t)(eq - l->env[i])))
			continue;
		name = xasprintf("%.*s", (int)(eq - l->env[i]), l->env[i]);
		add_var(s, name);
		free(name);
	}
	if (env)
		s->env_from = xstrdup(where);
	for (size_t i = 0; env && env->type == TOML_TABLE && i < env->n; i++)
		if (dt_mcp_var_followed(env->keys[i], strlen(env->keys[i])))
			add_var(s, env->keys[i]);
	for (size_t i = 0; i < s->nvars; i++)
		decide_var(c, l, s, &s->vars[i]);
}

/* The -c that names a server, or the file whose table does. */
static const char *named_by(const struct codex_cfg *c, const char *server)
{
	for (size_t i = 0; i < c->cli->nov; i++) {
		const struct dt_codex_override *o = &c->cli->ov[i];
		if (o->nkeys >= 2 && !strcmp(o->keys[0], "mcp_servers") &&
		    !strcmp(o->keys[1], server))
			return o->text;
	}
	for (size_t i = 0; i < c->n; i++) {
		const char *keys[] = {"mcp_servers", server};
		if (codex_walk(c->v[i], keys, 2) && c->path[i])
			return c->path[i];
	}
	return "a -c mcp_servers table";
}

void codex_mcp_model(struct dt_rootset *rs, const struct codex_cfg *c,
                     const struct dt_codex_launch *l)
{
	struct strlist names = {0};

	server_names(c, &names);
	for (size_t i = 0; i < names.n; i++) {
		struct dt_mcp_server s = {.name = xstrdup(names.v[i])};

		read_command(c, &s);
		if (!s.command && !s.url)
			/* Codex's words, then ours (seen with 0.169 and 0.171:
			 * exec, sandbox and mcp stop with exit 1) */
			codex_refuse(rs,
			             "invalid transport in `mcp_servers.%s`: no layer gives the "
			             "server a command or a url, so Codex stops before it starts "
			             "anything (exit 1); %s names a server that does not exist",
			             s.name, named_by(c, s.name));
		read_env_vars(c, &s);
		if (s.command)
			follow_vars(c, l, &s);
		rs->mcp = xrealloc(rs->mcp, (rs->nmcp + 1) * sizeof(*rs->mcp));
		rs->mcp[rs->nmcp++] = s;
	}
	strlist_free(&names);
}
