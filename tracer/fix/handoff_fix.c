// SPDX-License-Identifier: MIT
/* fix --verify for the handoff findings (handoff_fix.h). */
#include "handoff_fix.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "codex_mcp.h"
#include "json.h"
#include "recfmt.h"
#include "report.h"
#include "roots_int.h"
#include "spawn.h"

static void add_override(struct dt_handoff_verify *out, const char *o);

static void free_words(char **w)
{
	for (size_t i = 0; w && w[i]; i++)
		free(w[i]);
	free(w);
}

/* The finding whose overrides carry finding i: its own, else (a wrong
 * board) those of the environment lost by the same process; NULL: none. */
static const struct dt_handoff *override_source(const struct dt_handoffs *h, size_t i)
{
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < h->n; k++) {
			const struct dt_handoff *x = &h->v[k];
			if ((pass == 0 && k != i) || (pass == 1 && x->pid != h->v[i].pid) ||
			    (!x->fix_override && !x->nfix_env_overrides))
				continue;
			return x;
		}
	return NULL;
}

static void add_overrides(const struct dt_handoff *x, struct dt_handoff_verify *out)
{
	if (x->fix_override)
		add_override(out, x->fix_override);
	for (size_t e = 0; e < x->nfix_env_overrides; e++)
		add_override(out, x->fix_env_overrides[e]);
}

static void add_override(struct dt_handoff_verify *out, const char *o)
{
	for (size_t k = 0; k < out->noverrides; k++)
		if (!strcmp(out->overrides[k], o))
			return;
	out->overrides = xrealloc(out->overrides, (out->noverrides + 1) * sizeof(char *));
	out->overrides[out->noverrides++] = xstrdup(o);
}

static void add_rename(struct dt_handoff_verify *out, const char *from, const char *to)
{
	out->rename_from = xrealloc(out->rename_from, (out->nrenames + 1) * sizeof(char *));
	out->rename_to = xrealloc(out->rename_to, (out->nrenames + 1) * sizeof(char *));
	out->rename_from[out->nrenames] = from;
	out->rename_to[out->nrenames++] = to;
}

/* word, the value of a -c, with its server renamed when a rename names
 * it: "mcp_servers.FROM.rest" becomes "mcp_servers.TO.rest". */
static char *renamed(const struct dt_handoff_verify *out, const char *word)
{
	const char *name = word + strlen("mcp_servers.");
	for (size_t r = 0; starts_with(word, "mcp_servers.") && r < out->nrenames; r++) {
		size_t n = strlen(out->rename_from[r]);
		if (!strncmp(name, out->rename_from[r], n) && name[n] == '.')
			return xasprintf("mcp_servers.%s%s", out->rename_to[r], name + n);
	}
	return xstrdup(word);
}

static void cannot(struct dt_handoff_verdict *v, char *why)
{
	v->state = DT_VERIFY_CANNOT;
	free(v->why);
	v->why = why;
}

/* A Codex command line (from) with its -c words renamed, and "-c
 * OVERRIDE" for each override after its last -c (else after the program),
 * as `denytrace codex` places its own. */
static char **argv_with(const char *const *from, size_t argc, const struct dt_handoff_verify *out)
{
	struct dt_codex_cli cli;
	size_t at, k = 0, n = out->noverrides;
	char **argv = xrealloc(NULL, (argc + 2 * n + 1) * sizeof(*argv));

	memset(&cli, 0, sizeof(cli));
	dt_codex_cli_parse(NULL, &cli, from, argc);
	at = cli.config_end ? cli.config_end : cli.args_start ? cli.args_start : argc;
	dt_codex_cli_free(&cli);
	for (size_t i = 0; i <= argc; i++) {
		if (i == at)
			for (size_t o = 0; o < n; o++) {
				argv[k++] = xstrdup("-c");
				argv[k++] = xstrdup(out->overrides[o]);
			}
		if (i == argc)
			break;
		argv[k++] =
		    i && !strcmp(from[i - 1], "-c") ? renamed(out, from[i]) : xstrdup(from[i]);
	}
	argv[k] = NULL;
	return argv;
}

/* Is NAME=value in the launch's own environment? Only a launch record
 * the trusted launch file vouches for (its argv and environment matched:
 * rs_claimed 0) says so; any other record is the traced program's. */
static int launch_had(const struct dt_fix_inputs *in, const char *name, const char *value)
{
	const struct dt_record *l = in->launch;
	size_t n = strlen(name);
	if (!l || in->l.rs_claimed || !value)
		return 0;
	for (size_t i = 0; i < l->nenv; i++)
		if (!strncmp(l->env[i], name, n) && l->env[i][n] == '=' &&
		    !strcmp(l->env[i] + n + 1, value))
			return 1;
	return 0;
}

/* The first variable whose value an env-table override of h carries but
 * the launch did not have (a process of the tree set it: the traced
 * program named it), or NULL. Such a value is shown, never run: the MCP
 * server it reaches runs outside the worker's sandbox. */
static const char *value_named_by_traced(const struct dt_handoff *h, const struct dt_fix_inputs *in)
{
	for (size_t e = 0; e < h->nfix_env_overrides; e++)
		for (size_t k = 0; k < h->nvars; k++) {
			const struct dt_handoff_var *v = &h->vars[k];
			char *key = xasprintf(".env.%s=", v->name);
			int carried = strstr(h->fix_env_overrides[e], key) != NULL;
			free(key);
			if (carried && !launch_had(in, v->name, v->launcher))
				return v->name;
		}
	return NULL;
}

static void named_by_traced(struct dt_handoff_verdict *v, const char *name)
{
	cannot(v, xasprintf("the value of %s it would pass was set inside the traced tree, not "
	                    "by the launch: named by the traced program, so shown, not run",
	                    name));
}

int dt_handoff_verify_plan(const struct dt_handoffs *h, const struct dt_fix_inputs *in,
                           struct dt_handoff_verify *out)
{
	memset(out, 0, sizeof(*out));
	out->n = h->n;
	out->v = xrealloc(NULL, (h->n + 1) * sizeof(*out->v));
	memset(out->v, 0, (h->n + 1) * sizeof(*out->v));
	for (size_t i = 0; i < h->n; i++) {
		const struct dt_handoff *src;
		if (!in->trusted || !in->via_codex || !in->l.argv)
			cannot(&out->v[i],
			       xasprintf("no Codex launch to run again: %s",
			                 !in->trusted
			                     ? (in->source ? in->source : "no launch recorded")
			                     : "the launch was not `denytrace codex`"));
		else if (value_named_by_traced(&h->v[i], in))
			named_by_traced(&out->v[i], value_named_by_traced(&h->v[i], in));
		else if (h->v[i].kind == DT_HANDOFF_NO_SUCH_SERVER && h->v[i].fix_server)
			add_rename(out, h->v[i].server, h->v[i].fix_server);
		else if (!(src = override_source(h, i)))
			cannot(&out->v[i], xasprintf("its fix is not a Codex -c override: %s",
			                             h->v[i].fix ? h->v[i].fix : "none stated"));
		/* another finding's overrides pass the same check as its own */
		else if (value_named_by_traced(src, in))
			named_by_traced(&out->v[i], value_named_by_traced(src, in));
		else
			add_overrides(src, out);
	}
	if (out->noverrides || out->nrenames)
		out->argv = argv_with(in->l.argv, in->l.argc, out);
	return (int)(out->noverrides + out->nrenames);
}

void dt_handoff_verify_share(struct dt_handoff_verify *out, char *const *argv, size_t argc)
{
	if (!out->argv)
		return;
	free_words(out->argv);
	out->argv = argv_with((const char *const *)argv, argc, out);
	out->shared = 1;
}

/* The processes of after that are finding h's: the same MCP server, else
 * the same command name. */
static int is_finding_process(const struct dt_report *before, const struct dt_handoff *h,
                              const struct dt_record *p)
{
	const struct dt_mcp_server *s;
	const char *server = h->kind == DT_HANDOFF_NO_SUCH_SERVER ? h->fix_server : h->server;
	if (!server)
		return h->comm && p->comm && !strcmp(h->comm, p->comm);
	s = dt_mcp_server_for(before->roots.mcp, before->roots.nmcp, p->argv, p->argc);
	return s && !strcmp(s->name, server);
}

static const char *env_of(const struct dt_record *p, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < p->nenv; i++)
		if (!strncmp(p->env[i], name, n) && p->env[i][n] == '=')
			return p->env[i] + n + 1;
	return NULL;
}

/* The first variable of h that p still lacks or has another value of. */
static const struct dt_handoff_var *still_lost(const struct dt_handoff *h,
                                               const struct dt_record *p)
{
	for (size_t k = 0; k < h->nvars; k++) {
		const char *now = env_of(p, h->vars[k].name);
		if (!now || strcmp(now, h->vars[k].launcher))
			return &h->vars[k];
	}
	return NULL;
}

static void judge_env_lost(const struct dt_handoff *h, const struct dt_record *p,
                           struct dt_handoff_verdict *v)
{
	const struct dt_handoff_var *lost = still_lost(h, p);
	free(v->why);
	if (lost) {
		v->state = DT_VERIFY_NOT_FIXED;
		v->why = xasprintf("pid %lld of the re-run still lacks %s", (long long)p->pid,
		                   lost->name);
	} else {
		v->state = DT_VERIFY_FIXED;
		v->why = xasprintf("pid %lld of the re-run has every variable, with the "
		                   "launcher's value",
		                   (long long)p->pid);
	}
}

static void judge_wrong_board(const struct dt_report *after, const struct dt_handoff *h,
                              const struct dt_record *p, struct dt_handoff_verdict *v)
{
	const char *wrote = dt_handoff_board_written(after, (long)p->pid);
	if (!wrote)
		return; /* this process wrote none: another of the finding's may */
	free(v->why);
	if (dt_handoff_same_path(wrote, h->named)) {
		v->state = DT_VERIFY_FIXED;
		v->why = xasprintf("pid %lld of the re-run wrote %s, the board the launch named",
		                   (long long)p->pid, wrote);
	} else {
		v->state = DT_VERIFY_NOT_FIXED;
		v->why = xasprintf("pid %lld of the re-run wrote %s, not %s", (long long)p->pid,
		                   wrote, h->named);
	}
}

/* The first variable the launch's -c mcp_servers.SERVER.env.K=... words set
 * that p lacks, or NULL. */
static char *override_lacking(const struct dt_fix_inputs *in, const char *server,
                              const struct dt_record *p)
{
	char *prefix = xasprintf("mcp_servers.%s.env.", server), *lacking = NULL;
	for (size_t i = 1; i < in->l.argc && !lacking; i++) {
		const char *w = in->l.argv[i], *eq;
		if (strcmp(in->l.argv[i - 1], "-c") || !starts_with(w, prefix) ||
		    !(eq = strchr(w, '=')))
			continue;
		char *name = xasprintf("%.*s", (int)(eq - w - strlen(prefix)), w + strlen(prefix));
		if (env_of(p, name))
			free(name);
		else
			lacking = name;
	}
	free(prefix);
	return lacking;
}

static void judge_no_such_server(const struct dt_fix_inputs *in, const struct dt_handoff *h,
                                 const struct dt_record *p, struct dt_handoff_verdict *v)
{
	char *lacking = override_lacking(in, h->server, p);
	free(v->why);
	if (lacking) {
		v->state = DT_VERIFY_NOT_FIXED;
		v->why = xasprintf("Codex started %s (pid %lld) without %s", h->fix_server,
		                   (long long)p->pid, lacking);
	} else {
		v->state = DT_VERIFY_FIXED;
		v->why = xasprintf("Codex accepted the configuration and started %s (pid %lld) "
		                   "with the overrides' variables",
		                   h->fix_server, (long long)p->pid);
	}
	free(lacking);
}

/* A finding is not fixed as soon as one of its processes shows it. */
static void judge(const struct dt_report *before, const struct dt_fix_inputs *in,
                  const struct dt_report *after, const struct dt_handoff *h,
                  struct dt_handoff_verdict *v)
{
	const char *server = h->kind == DT_HANDOFF_NO_SUCH_SERVER ? h->fix_server : h->server;
	cannot(v, xasprintf("no process of %s%s ran in the re-run%s",
	                    server ? "the MCP server " : "", server ? server : h->comm,
	                    h->kind == DT_HANDOFF_WRONG_BOARD ? " and wrote a board" : ""));
	if (h->kind == DT_HANDOFF_NO_SUCH_SERVER && after->roots.codex_refused) {
		v->state = DT_VERIFY_NOT_FIXED;
		free(v->why);
		v->why = xasprintf("the re-run's configuration is still refused: %s",
		                   after->roots.codex_refused);
		return;
	}
	for (size_t i = 0; i < after->nprocs && v->state != DT_VERIFY_NOT_FIXED; i++) {
		const struct dt_record *p = after->procs[i];
		if (dt_report_proc(after, p, (long)p->pid) != p ||
		    !is_finding_process(before, h, p))
			continue;
		if (h->kind == DT_HANDOFF_ENV_LOST)
			judge_env_lost(h, p, v);
		else if (h->kind == DT_HANDOFF_WRONG_BOARD)
			judge_wrong_board(after, h, p, v);
		else
			judge_no_such_server(in, h, p, v);
	}
}

static int load_after(const char *ring, int status, struct dt_report *after)
{
	char err[512];
	const char *rings[] = {ring};
	struct dt_report_opts o = {0};
	if (dt_report_load(after, rings, 1, err, sizeof(err)) == 0 &&
	    dt_report_build(after, &o, err, sizeof(err)) == 0)
		return 0;
	dt_report_free(after);
	return dt_fail(DT_EXIT_INTERNAL, "fix: the re-run left no readable ring (%s; exit %d)", err,
	               status);
}

int dt_handoff_verify_run(const struct dt_report *before, const struct dt_fix_inputs *in,
                          const char *after_ring, struct dt_handoff_verify *out)
{
	static char self[PATH_MAX]; /* out->cmd borrows it, and outlives this call */
	size_t argc = 0;
	int rc = dt_verify_self(self, sizeof(self));

	if (rc)
		return rc;
	while (out->argv[argc])
		argc++;
	out->cmd = dt_verify_command(self, after_ring, out->argv, argc, 1);
	if (!out->cmd)
		return dt_fail(DT_EXIT_INTERNAL, "out of memory");
	unlink(after_ring);
	/* the command's output goes to stderr: stdout is fix's report */
	struct dt_spawn sp = {
	    .argv = out->cmd, .cwd = in->l.cwd, .in = -2, .out = 2, .err = -1, .who = "fix"};
	pid_t pid = dt_spawn(&sp);
	return dt_handoff_verify_judge(before, in, after_ring,
	                               pid < 0 ? -1 : dt_wait_timeout(pid, 24 * 3600), out);
}

int dt_handoff_verify_judge(const struct dt_report *before, const struct dt_fix_inputs *in,
                            const char *after_ring, int status, struct dt_handoff_verify *out)
{
	struct dt_report after;
	int rc;
	snprintf(out->ring, sizeof(out->ring), "%s", after_ring);
	out->status = status;
	out->ran = 1;
	if ((rc = load_after(out->ring, out->status, &after)))
		return rc;
	for (size_t i = 0; i < out->n; i++)
		if (!out->v[i].why)
			judge(before, in, &after, &before->handoffs.v[i], &out->v[i]);
	dt_report_free(&after);
	return 0;
}

int dt_handoff_verify_status(const struct dt_handoff_verify *v, int rc)
{
	if (rc == DT_EXIT_FOUND)
		return rc;
	for (size_t i = 0; v->v && i < v->n; i++)
		if (v->v[i].state == DT_VERIFY_NOT_FIXED)
			return DT_EXIT_FOUND;
		else if (v->v[i].state == DT_VERIFY_CANNOT)
			rc = DT_EXIT_UNVERIFIED;
	return rc;
}

void dt_handoff_verify_text(FILE *f, const struct dt_handoff_verify *v, size_t i)
{
	if (!v->v || i >= v->n)
		return;
	fprintf(f, "   verified: %s: ", dt_verify_state_name(v->v[i].state));
	dt_put_safe(f, v->v[i].why);
	if (v->ran && v->v[i].state != DT_VERIFY_CANNOT)
		fprintf(f, " (one run%s, exit status %d, ring %s)",
		        v->shared ? " with the refusals' fix too" : "", v->status, v->ring);
	fputc('\n', f);
}

void dt_handoff_verify_json(struct dt_json *j, const struct dt_handoff_verify *v, size_t i)
{
	if (!v->v || i >= v->n)
		return;
	dt_json_key(j, "verify");
	dt_json_obj(j);
	dt_json_key(j, "state");
	dt_json_str(j, v->v[i].state == DT_VERIFY_FIXED       ? "fixed"
	               : v->v[i].state == DT_VERIFY_NOT_FIXED ? "not-fixed"
	                                                      : "cannot-verify");
	dt_json_kstr(j, "why", v->v[i].why);
	dt_json_key(j, "overrides");
	dt_json_arr(j);
	for (size_t k = 0; k < v->noverrides; k++)
		dt_json_str(j, v->overrides[k]);
	dt_json_end_arr(j);
	dt_json_key(j, "renamed");
	dt_json_obj(j);
	for (size_t k = 0; k < v->nrenames; k++) {
		dt_json_kstr(j, v->rename_from[k], v->rename_to[k]);
	}
	dt_json_end_obj(j);
	dt_json_key(j, "exit_status");
	if (v->ran)
		dt_json_int(j, v->status);
	else
		dt_json_null(j);
	dt_json_kstr(j, "ring", v->ran ? v->ring : NULL);
	dt_json_kbool(j, "shared_run", v->shared);
	dt_json_end_obj(j);
}

void dt_handoff_verify_free(struct dt_handoff_verify *v)
{
	for (size_t i = 0; v->v && i < v->n; i++)
		free(v->v[i].why);
	free(v->v);
	for (size_t i = 0; i < v->noverrides; i++)
		free(v->overrides[i]);
	free(v->overrides);
	free(v->rename_from);
	free(v->rename_to);
	free_words(v->argv);
	free(v->cmd); /* its words are borrowed */
	memset(v, 0, sizeof(*v));
}
