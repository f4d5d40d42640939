/* SPDX-License-Identifier: MIT */
/* The report as JSON: the stable contract for tools (README.md, "JSON"). */
#include <string.h>

#include "json.h"
#include "names.h"
#include "recfmt.h"
#include "report.h"

static const char *const kind_names[] = {"explicit", "effective", "codex", "hermes", "hcom"};

static void dt_json_granted(struct dt_json *j, int g)
{
	if (g < 0)
		dt_json_null(j);
	else
		dt_json_bool(j, g);
}

void dt_roots_json_array(struct dt_json *j, const struct dt_rootset *rs)
{
	dt_json_arr(j);
	for (size_t i = 0; i < rs->n; i++) {
		const struct dt_root *rt = &rs->v[i];
		const char *src[16];
		size_t nsrc = dt_root_sources(rs, i, src, 16);
		if (!dt_root_is_row(rs, i))
			continue; /* one object per path, with every source */
		dt_json_obj(j);
		dt_json_kstr(j, "path", rt->path);
		dt_json_kstr(j, "realpath", rt->realpath);
		dt_json_kstr(j, "source", rt->source);
		dt_json_key(j, "sources");
		dt_json_arr(j);
		for (size_t k = 0; k < nsrc; k++)
			dt_json_str(j, src[k]);
		dt_json_end_arr(j);
		dt_json_kstr(j, "kind", kind_names[rt->kind]);
		dt_json_key(j, "granted");
		dt_json_granted(j, dt_root_row_granted(rs, i));
		dt_json_kbool(j, "readonly", rt->readonly_sub);
		dt_json_kstr(j, "dropped_by", rt->dropped_by);
		dt_json_kstr(j, "knob", rt->knob);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

static void dt_json_diff_side(struct dt_json *j, const struct dt_diff_side *s)
{
	dt_json_obj(j);
	dt_json_kuint(j, "count", s->count);
	dt_json_key(j, "values");
	dt_json_arr(j);
	for (size_t i = 0; i < s->nvalues; i++)
		dt_json_str(j, s->values[i]);
	dt_json_end_arr(j);
	dt_json_end_obj(j);
}

/* The fact that separated the successful writes from the refused ones
 * (null when none was recorded), and who changed it. */
static void dt_json_difference(struct dt_json *j, const struct dt_difference *d)
{
	if (!d || !d->computed) {
		dt_json_null(j);
		return;
	}
	char t[48];
	dt_json_obj(j);
	dt_json_kstr(j, "fact", d->fact);
	dt_json_kstr(j, "subject", d->subject[0] ? d->subject : NULL);
	dt_json_key(j, "successes");
	dt_json_diff_side(j, &d->ok);
	dt_json_key(j, "refusals");
	dt_json_diff_side(j, &d->refused);
	dt_json_kstr(j, "compared", d->compared);
	dt_json_kstr(j, "line", d->line);
	dt_json_key(j, "changed_by");
	if (d->changer) {
		dt_json_obj(j);
		dt_json_kint(j, "pid", d->changer->pid);
		dt_json_kstr(j, "comm", d->changer->comm);
		dt_json_kstr(j, "op", d->changer->op);
		dt_json_kstr(j, "value", d->changer_value);
		dt_json_key(j, "time");
		dt_format_time(d->changer->time_real, t, sizeof(t));
		dt_json_str(j, t);
		dt_json_kuint(j, "calls", d->changers);
		dt_json_end_obj(j);
	} else {
		dt_json_null(j);
	}
	dt_json_key(j, "changed_outside");
	if (d->outside) {
		dt_json_obj(j);
		dt_json_key(j, "after");
		if (d->outside_after_ns) {
			dt_format_time(d->outside_after_ns, t, sizeof(t));
			dt_json_str(j, t);
		} else {
			dt_json_null(j);
		}
		dt_json_key(j, "before");
		dt_format_time(d->outside_before_ns, t, sizeof(t));
		dt_json_str(j, t);
		dt_json_end_obj(j);
	} else {
		dt_json_null(j);
	}
	dt_json_end_obj(j);
}

static void dt_report_json_summary(struct dt_json *j, const struct dt_report *r)
{
	dt_json_key(j, "summary");
	dt_json_obj(j);
	dt_json_kuint(j, "problems", r->findings.n);
	dt_json_kuint(j, "denials", r->denials);
	dt_json_key(j, "groups");
	size_t shown = 0;
	for (size_t k = 0; k < r->ngroups; k++)
		shown += !r->groups[k].hidden;
	dt_json_uint(j, shown);
	dt_json_kuint(j, "hidden_lock_contention", r->hidden_denials);
	dt_json_kuint(j, "hidden_sandbox_setup", r->hidden_setup);
	dt_json_key(j, "by_cause");
	dt_json_obj(j);
	for (int c = 0; c < DT_CAUSE_COUNT; c++)
		if (r->by_cause[c]) {
			dt_json_kuint(j, dt_cause_name((enum dt_cause)c), r->by_cause[c]);
		}
	dt_json_end_obj(j);
	dt_json_kuint(j, "reopens", r->reopens);
	dt_json_kuint(j, "writes", r->writes);
	dt_json_kuint(j, "processes", r->nprocs);
	dt_json_kuint(j, "records_read", r->stats.records);
	dt_json_kuint(j, "records_lost", r->lost);
	dt_json_kuint(j, "records_dropped", r->dropped);
	dt_json_kuint(j, "refusals_unrecorded_under_own_seccomp", r->unseen);
	dt_json_kuint(j, "records_corrupt", r->stats.corrupt);
	dt_json_kuint(j, "records_skipped", r->stats.skipped);
	dt_json_kuint(j, "records_torn", r->stats.torn);
	dt_json_kbool(j, "ring_truncated_while_read", r->stats.truncated);
	dt_json_kbool(j, "exec_coverage", r->nexecs > 0);
	dt_json_kuint(j, "execs_seen", r->nexecs);
	dt_json_kuint(j, "blind", r->nblind);
	dt_json_end_obj(j);
}

static const char *dt_group_id(uint64_t id, char *buf, size_t cap)
{
	snprintf(buf, cap, "%016llx", (unsigned long long)id);
	return buf;
}

/* The Python lines its refusals came from, most first: "python_lines"
 * [{function, file, line, count}] and "python_lines_more". */
static void dt_report_json_sites(struct dt_json *j, const struct dt_finding *fd)
{
	dt_json_key(j, "python_lines");
	dt_json_arr(j);
	for (size_t i = 0; i < fd->nsites; i++) {
		const struct dt_py_frame *at = fd->sites[i].at;
		dt_json_obj(j);
		dt_json_kstr(j, "function", at->func);
		dt_json_kstr(j, "file", at->file);
		dt_json_key(j, "line");
		if (at->line)
			dt_json_uint(j, at->line);
		else
			dt_json_null(j);
		dt_json_kuint(j, "count", fd->sites[i].count);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
	dt_json_kbool(j, "python_lines_more", fd->more_sites);
}

/* One problem with one fix: its groups by id (findings.h). */
static void dt_report_json_finding(struct dt_json *j, const struct dt_report *r,
                                   const struct dt_finding *fd)
{
	char buf[64];
	dt_json_obj(j);
	dt_json_kstr(j, "title", fd->title);
	dt_json_kstr(j, "cause", dt_cause_name(fd->cause));
	dt_json_kstr(j, "expected_root", fd->root ? fd->root->path : NULL);
	dt_json_kstr(j, "root_source", fd->root ? fd->root->source : NULL);
	dt_json_key(j, "granted");
	dt_json_granted(j, fd->root ? fd->granted : -1);
	dt_json_kstr(j, "subject", fd->subject[0] ? fd->subject : NULL);
	dt_json_kstr(j, "reason", fd->reason);
	dt_json_kstr(j, "advice", fd->advice);
	dt_json_kstr(j, "missing_right", fd->missing_right);
	dt_json_kstr(j, "next", fd->next);
	dt_json_key(j, "intermittent");
	if (fd->intermittent)
		dt_json_str(j, fd->diff->line);
	else
		dt_json_null(j);
	dt_json_key(j, "difference");
	dt_json_difference(j, fd->intermittent ? fd->diff : NULL);
	dt_json_kuint(j, "count", fd->count);
	dt_report_json_sites(j, fd);
	dt_json_key(j, "first");
	dt_format_time(fd->first_ns, buf, sizeof(buf));
	dt_json_str(j, buf);
	dt_json_key(j, "last");
	dt_format_time(fd->last_ns, buf, sizeof(buf));
	dt_json_str(j, buf);
	dt_json_key(j, "groups");
	dt_json_arr(j);
	for (size_t i = 0; i < fd->ngroups; i++)
		dt_json_str(j, dt_group_id(r->groups[fd->groups[i]].id, buf, sizeof(buf)));
	dt_json_end_arr(j);
	dt_json_end_obj(j);
}

/* One group of refusals. */
static void dt_report_json_group(struct dt_json *j, const struct dt_report_group *g)
{
	char buf[256];
	const struct dt_record *d = g->rep;
	dt_json_obj(j);
	dt_json_kstr(j, "id", dt_group_id(g->id, buf, sizeof(buf)));
	dt_json_kstr(j, "path", d->p[0].path);
	dt_json_kstr(j, "abspath", d->p[0].abspath);
	dt_json_kstr(j, "realpath", d->p[0].realpath);
	if (d->p[1].path || d->p[1].abspath) {
		dt_json_kstr(j, "path2", d->p[1].path);
		dt_json_kstr(j, "realpath2", d->p[1].realpath);
	}
	dt_json_kstr(j, "op", d->op);
	dt_json_kstr(j, "errno", dt_errno_name(d->err));
	dt_json_key(j, "flags");
	dt_flags_name(d, buf, sizeof(buf));
	dt_json_str(j, buf[0] ? buf : NULL);
	dt_json_kstr(j, "access", d->writes ? "write" : "read");
	dt_json_kuint(j, "count", g->count);
	dt_json_key(j, "pids");
	dt_json_arr(j);
	for (size_t i = 0; i < g->npids; i++)
		dt_json_int(j, g->pids[i]);
	dt_json_end_arr(j);
	dt_json_kstr(j, "comm", d->comm);
	dt_json_key(j, "first");
	dt_format_time(g->first_ns, buf, sizeof(buf));
	dt_json_str(j, buf);
	dt_json_key(j, "last");
	dt_format_time(g->last_ns, buf, sizeof(buf));
	dt_json_str(j, buf);
	dt_json_kstr(j, "sqlite", d->sqlite);
	dt_json_kstr(j, "sqlite_evidence", d->sqlite_evidence);
	dt_json_kstr(j, "sqlite_header",
	             d->sqlite ? dt_sqlite_header_name(d->sqlite_header) : NULL);
	dt_json_kstr(j, "cause", dt_cause_name(g->v.cause));
	dt_json_kstr(j, "reason", g->v.reason);
	dt_json_kstr(j, "expected_root", g->v.root ? g->v.root->path : NULL);
	dt_json_kstr(j, "root_source", g->v.root ? g->v.root->source : NULL);
	dt_json_key(j, "granted");
	dt_json_granted(j, g->v.root ? g->v.granted : -1);
	dt_json_kstr(j, "dropped_by", g->v.root ? g->v.root->dropped_by : NULL);
	dt_json_kstr(j, "next", g->next);
	dt_json_key(j, "intermittent");
	if (g->intermittent)
		dt_json_str(j, g->diff.line);
	else
		dt_json_null(j);
	dt_json_key(j, "difference");
	dt_json_difference(j, g->intermittent ? &g->diff : NULL);
	dt_json_kstr(j, "advice", g->v.advice);
	dt_json_kstr(j, "missing_right", g->v.missing_right);
	dt_json_kbool(j, "injected", d->injected);
	dt_json_key(j, "python_stack");
	dt_pyframes_json(j, d);
	dt_json_kbool(j, "python_truncated", d->py_trunc);
	dt_json_key(j, "backtrace");
	dt_frames_json(j, d, NULL);
	dt_json_kbool(j, "backtrace_truncated", d->stack_trunc);
	dt_json_end_obj(j);
}

static void dt_strings_arr(struct dt_json *j, char *const *v, size_t n)
{
	dt_json_arr(j);
	for (size_t i = 0; i < n; i++)
		dt_json_str(j, v[i]);
	dt_json_end_arr(j);
}

/* What codex doctor --json said beside the model: asked (true, false, or
 * null when it failed), why not, its writable paths, the disagreements. */
static void dt_report_json_readback(struct dt_json *j, const struct dt_rootset *rs)
{
	dt_json_key(j, "readback");
	dt_json_obj(j);
	dt_json_key(j, "asked");
	if (rs->codex_readback < 0)
		dt_json_null(j);
	else
		dt_json_bool(j, rs->codex_readback);
	dt_json_kstr(j, "why_not", rs->codex_readback_why);
	dt_json_key(j, "writable");
	dt_strings_arr(j, rs->codex_says, rs->ncodex_says);
	dt_json_key(j, "model_errors");
	dt_strings_arr(j, rs->codex_disagree, rs->ncodex_disagree);
	dt_json_end_obj(j);
}

static void dt_report_json_mcp_var(struct dt_json *j, const struct dt_mcp_var *v)
{
	dt_json_obj(j);
	dt_json_kstr(j, "name", v->name);
	dt_json_kbool(j, "passed", v->value != NULL);
	dt_json_kstr(j, "value", v->value);
	dt_json_kstr(j, "from", v->from);
	dt_json_kstr(j, "codex_has", v->launcher);
	dt_json_end_obj(j);
}

/* codex.mcp_servers: each server and the environment Codex gives it */
static void dt_report_json_mcp(struct dt_json *j, const struct dt_rootset *rs)
{
	dt_json_key(j, "mcp_servers");
	dt_json_arr(j);
	for (size_t i = 0; i < rs->nmcp; i++) {
		const struct dt_mcp_server *m = &rs->mcp[i];
		dt_json_obj(j);
		dt_json_kstr(j, "name", m->name);
		dt_json_kstr(j, "command", m->command);
		dt_json_key(j, "args");
		dt_strings_arr(j, m->args, m->nargs);
		dt_json_kstr(j, "url", m->url);
		dt_json_key(j, "env_vars");
		dt_strings_arr(j, m->env_vars, m->nenv_vars);
		dt_json_kstr(j, "env_vars_from", m->env_vars_from);
		dt_json_key(j, "environment");
		dt_json_arr(j);
		for (size_t k = 0; k < m->nvars; k++)
			dt_report_json_mcp_var(j, &m->vars[k]);
		dt_json_end_arr(j);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

static void dt_report_json_codex(struct dt_json *j, const struct dt_report *r)
{
	dt_json_key(j, "codex");
	if (r->roots.codex_sandbox_mode || r->roots.codex_config_path || r->roots.codex_refused) {
		dt_json_obj(j);
		dt_json_kstr(j, "refused", r->roots.codex_refused);
		dt_json_kstr(j, "sandbox_mode", r->roots.codex_sandbox_mode);
		dt_json_kstr(j, "permission_profile", r->roots.codex_permission_profile);
		dt_json_kstr(j, "config", r->roots.codex_config_path);
		dt_json_kbool(j, "config_recorded", r->roots.codex_config_recorded);
		dt_json_kstr(j, "writable_roots_override", r->roots.codex_override);
		dt_json_kstr(j, "model_version", r->roots.codex_version);
		dt_report_json_readback(j, &r->roots);
		dt_report_json_mcp(j, &r->roots);
		dt_json_end_obj(j);
	} else {
		dt_json_null(j);
	}
}

static void dt_report_json_handoff(struct dt_json *j, const struct dt_handoff *h)
{
	dt_json_obj(j);
	dt_json_kstr(j, "kind", dt_handoff_kind_name(h->kind));
	dt_json_kint(j, "pid", h->pid);
	dt_json_kstr(j, "comm", h->comm);
	dt_json_kstr(j, "mcp_server", h->server);
	dt_json_kstr(j, "board", h->board);
	dt_json_kstr(j, "named_board", h->named);
	dt_json_key(j, "lost");
	dt_json_arr(j);
	for (size_t i = 0; i < h->nvars; i++) {
		dt_json_obj(j);
		dt_json_kstr(j, "name", h->vars[i].name);
		dt_json_kstr(j, "launcher", h->vars[i].launcher);
		dt_json_kstr(j, "here", h->vars[i].here);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
	dt_json_kstr(j, "hop", h->hop);
	dt_json_kstr(j, "why", h->why);
	dt_json_kstr(j, "fix", h->fix);
	dt_json_kstr(j, "fix_env_vars", h->fix_env_vars);
	dt_json_kstr(j, "fix_override", h->fix_override);
	dt_json_key(j, "fix_env_overrides");
	dt_json_arr(j);
	for (size_t i = 0; i < h->nfix_env_overrides; i++)
		dt_json_str(j, h->fix_env_overrides[i]);
	dt_json_end_arr(j);
	dt_json_kstr(j, "fix_server", h->fix_server);
	dt_json_end_obj(j);
}

/* A set-id program the supervisor's no_new_privs kept from its ids. */
static void dt_report_json_setid_lost(struct dt_json *j, const struct dt_record *e)
{
	dt_json_obj(j);
	dt_json_kint(j, "pid", e->pid);
	dt_json_kstr(j, "exe", e->exe);
	dt_json_kint(j, "would_run_as_uid", e->setid_euid);
	dt_json_end_obj(j);
}

/* One process the probe could not enter. */
static void dt_report_json_blind(struct dt_json *j, const struct dt_record *e)
{
	char buf[256];
	dt_json_obj(j);
	dt_json_kint(j, "pid", e->pid);
	dt_json_key(j, "ppid");
	if (e->ppid)
		dt_json_int(j, e->ppid);
	else
		dt_json_null(j);
	dt_json_kstr(j, "exe", e->exe);
	dt_json_key(j, "argv");
	dt_json_arr(j);
	for (size_t a = 0; a < e->argc; a++)
		dt_json_str(j, e->argv[a]);
	dt_json_end_arr(j);
	dt_json_kstr(j, "reason", e->exec_blind);
	dt_json_key(j, "static");
	if (e->exec_static < 0)
		dt_json_null(j);
	else
		dt_json_bool(j, e->exec_static);
	dt_json_kstr(j, "ld_preload", e->preload);
	dt_json_key(j, "time");
	dt_format_time(e->time_real, buf, sizeof(buf));
	dt_json_str(j, buf);
	dt_json_end_obj(j);
}

static void dt_report_json_process(struct dt_json *j, const struct dt_record *p)
{
	dt_json_obj(j);
	dt_json_kint(j, "pid", p->pid);
	dt_json_kint(j, "ppid", p->ppid);
	dt_json_kstr(j, "exe", p->exe);
	dt_json_key(j, "argv");
	dt_json_arr(j);
	for (size_t a = 0; a < p->argc; a++)
		dt_json_str(j, p->argv[a]);
	dt_json_end_arr(j);
	dt_json_kstr(j, "cwd", p->cwd);
	dt_json_kstr(j, "hostname", p->hostname);
	dt_json_kstr(j, "boot_id", p->boot_id);
	dt_json_kbool(j, "sandboxed", dt_proc_sandboxed(p));
	dt_json_key(j, "writable_mounts");
	dt_json_arr(j);
	for (size_t m = 0; m < p->nmounts; m++)
		if (p->mounts[m].rw)
			dt_json_str(j, p->mounts[m].path);
	dt_json_end_arr(j);
	dt_json_end_obj(j);
}

void dt_report_json(FILE *f, const struct dt_report *r)
{
	struct dt_json j;
	dt_json_init(&j, f, 1);
	dt_json_obj(&j);
	dt_json_key(&j, "version");
	dt_json_int(&j, DT_REPORT_VERSION);
	dt_json_key(&j, "rings");
	dt_json_arr(&j);
	for (size_t i = 0; i < r->nrings; i++)
		dt_json_str(&j, r->rings[i]);
	dt_json_end_arr(&j);

	dt_report_json_summary(&j, r);

	dt_json_key(&j, "findings");
	dt_json_arr(&j);
	for (size_t i = 0; i < r->findings.n; i++)
		dt_report_json_finding(&j, r, &r->findings.v[i]);
	dt_json_end_arr(&j);
	/* failures with no refusal: the board written, the environment lost */
	dt_json_key(&j, "handoff");
	dt_json_arr(&j);
	for (size_t i = 0; i < r->handoffs.n; i++)
		dt_report_json_handoff(&j, &r->handoffs.v[i]);
	dt_json_end_arr(&j);

	dt_json_key(&j, "denials");
	dt_json_arr(&j);
	for (size_t k = 0; k < r->ngroups; k++) {
		const struct dt_report_group *g = &r->groups[k];
		if (g->hidden)
			continue;
		dt_report_json_group(&j, g);
	}
	dt_json_end_arr(&j);

	dt_json_key(&j, "roots");
	dt_roots_json_array(&j, &r->roots);
	dt_report_json_codex(&j, r);
	dt_json_key(&j, "warnings");
	dt_json_arr(&j);
	for (size_t i = 0; i < r->roots.nwarnings; i++)
		dt_json_str(&j, r->roots.warnings[i]);
	dt_json_end_arr(&j);

	/* processes the probe could not enter; empty with exec_coverage false
	 * means unknown, not none */
	dt_json_key(&j, "blind_spots");
	dt_json_arr(&j);
	for (size_t i = 0; i < r->nblind; i++)
		dt_report_json_blind(&j, r->blind[i]);
	dt_json_end_arr(&j);
	/* set-id programs that ran without their privilege under the
	 * supervisor: their refusals are the cause setid-lost */
	dt_json_key(&j, "setid_without_privilege");
	dt_json_arr(&j);
	for (size_t i = 0; i < r->nsetid_lost; i++)
		dt_report_json_setid_lost(&j, r->setid_lost[i]);
	dt_json_end_arr(&j);

	dt_json_key(&j, "processes");
	dt_json_arr(&j);
	for (size_t i = 0; i < r->nprocs; i++)
		dt_report_json_process(&j, r->procs[i]);
	dt_json_end_arr(&j);
	dt_json_end_obj(&j);
	fputc('\n', f);
}
