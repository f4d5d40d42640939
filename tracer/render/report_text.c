/* SPDX-License-Identifier: MIT */
/* The report for a terminal: one screen, most important first. */
#include <string.h>

#include "names.h"
#include "recfmt.h"
#include "report.h"

struct dt_style {
	const char *bold, *red, *yellow, *green, *dim, *off;
};

static struct dt_style dt_style_for(int color)
{
	if (color)
		return (struct dt_style){"\033[1m",  "\033[31m", "\033[33m",
		                         "\033[32m", "\033[2m",  "\033[0m"};
	return (struct dt_style){"", "", "", "", "", ""};
}

static const char *dt_granted_word(int g)
{
	return g == 1 ? "granted" : g == 0 ? "NOT granted" : "grant unknown";
}

/* Index of the listed root a read-only subpath sits directly in (its path
 * is that root's path plus one component), or -1. Such subpaths (Codex's
 * .git, .codex, .agents, .aws in every root) are named on their root's
 * row instead of one row each, which buried the roots that matter. */
static ssize_t dt_protected_parent(const struct dt_rootset *rs, const struct dt_root *sub)
{
	const char *slash = strrchr(sub->path, '/');
	if (!slash || slash == sub->path)
		return -1;
	size_t plen = (size_t)(slash - sub->path);
	for (size_t k = 0; k < rs->n; k++) {
		const struct dt_root *p = &rs->v[k];
		if (!p->readonly_sub && dt_root_is_row(rs, k) && strlen(p->path) == plen &&
		    !strncmp(p->path, sub->path, plen))
			return (ssize_t)k;
	}
	return -1;
}

/* "read-only inside: .git, .codex" under root row i, when it has any. */
static void dt_protected_line(FILE *f, const struct dt_rootset *rs, size_t i)
{
	int n = 0;
	for (size_t k = 0; k < rs->n; k++) {
		const struct dt_root *sub = &rs->v[k];
		if (!sub->readonly_sub || !dt_root_is_row(rs, k) ||
		    dt_protected_parent(rs, sub) != (ssize_t)i)
			continue;
		fputs(n++ ? ", " : "      read-only inside: ", f);
		dt_put_safe(f, strrchr(sub->path, '/') + 1);
	}
	if (n)
		fputc('\n', f);
}

/* Which Codex the model followed, and which ones it was checked against. */
static void dt_codex_model_line(FILE *f, const char *version)
{
	fprintf(f, "  codex model: Codex %s (checked against", version);
	for (size_t i = 0; i < dt_ncodex_versions; i++)
		fprintf(f, "%s %s", i ? "," : "", dt_codex_versions[i].name);
	fputs(")\n", f);
}

/* What Codex itself said was writable beside the model's list, and each
 * disagreement: a model error. */
static void dt_codex_readback_text(FILE *f, const struct dt_rootset *rs, const struct dt_style *s)
{
	if (rs->codex_readback == 0 && !rs->codex_readback_why) {
		fputs("  the writable_roots above are the model's alone: pass --codex PATH to "
		      "compare "
		      "them with what `codex doctor --json` says\n",
		      f);
		return;
	}
	if (rs->codex_readback != 1) {
		fputs("  Codex itself was not asked: ", f);
		dt_put_safe(f, rs->codex_readback_why);
		fputc('\n', f);
		return;
	}
	fputs("  Codex itself says writable:", f);
	for (size_t i = 0; i < rs->ncodex_says; i++) {
		fputs(i ? ", " : " ", f);
		dt_put_safe(f, rs->codex_says[i]);
	}
	fputs(rs->ncodex_says ? "\n" : " no writable_roots\n", f);
	for (size_t i = 0; i < rs->ncodex_disagree; i++) {
		fprintf(f, "  %smodel error:%s ", s->red, s->off);
		dt_put_safe(f, rs->codex_disagree[i]);
		fputc('\n', f);
	}
}

/* One followed variable of an MCP server: its value and the rule that
 * gave it, or that it is lost. */
static void dt_mcp_var_text(FILE *f, const struct dt_mcp_var *v, const struct dt_style *s)
{
	fputs("      ", f);
	dt_put_safe(f, v->name);
	if (!v->value) {
		fprintf(f, ": %snot passed%s (Codex has ", s->red, s->off);
		dt_put_safe(f, v->launcher);
		fputs("; name it in the server's env_vars)\n", f);
		return;
	}
	fputc('=', f);
	dt_put_safe(f, v->value);
	fputs(" from ", f);
	dt_put_safe(f, v->from);
	if (v->launcher && strcmp(v->launcher, v->value)) {
		fprintf(f, " %s(Codex has ", s->yellow);
		dt_put_safe(f, v->launcher);
		fprintf(f, ")%s", s->off);
	}
	fputc('\n', f);
}

/* Each MCP stdio server with what Codex passes it of the variables that
 * decide where it writes. */
static void dt_mcp_text(FILE *f, const struct dt_rootset *rs, const struct dt_style *s)
{
	for (size_t i = 0; i < rs->nmcp; i++) {
		const struct dt_mcp_server *m = &rs->mcp[i];
		if (!m->command)
			continue;
		fputs("  MCP server ", f);
		dt_put_safe(f, m->name);
		fputs(" (", f);
		dt_put_safe(f, m->command);
		fputs(m->nvars ? "), environment from Codex:\n"
		               : "): no Hermes, hcom or "
		                 "CODEX_HOME variable to pass\n",
		      f);
		for (size_t k = 0; k < m->nvars; k++)
			dt_mcp_var_text(f, &m->vars[k], s);
	}
}

void dt_roots_text(FILE *f, const struct dt_rootset *rs, int color)
{
	struct dt_style s = dt_style_for(color);
	if (rs->codex_refused) {
		fprintf(f, "  %s", s.red);
		dt_put_safe(f, rs->codex_refused);
		fprintf(f, "%s\n", s.off);
	}
	if (!rs->n && !rs->codex_refused)
		fputs("  (no roots: pass --root DIR, or run Codex/Hermes/hcom under the probe)\n",
		      f);
	for (size_t i = 0; i < rs->n; i++) {
		const struct dt_root *rt = &rs->v[i];
		const char *src[16];
		size_t nsrc = dt_root_sources(rs, i, src, 16);
		if (!dt_root_is_row(rs, i))
			continue; /* listed once, with every source */
		if (rt->readonly_sub && dt_protected_parent(rs, rt) >= 0)
			continue; /* named on its root's row */
		fputs("  ", f);
		dt_put_safe(f, rt->path);
		fprintf(f, "\n      %s", rt->readonly_sub ? "read-only subpath: " : "");
		for (size_t k = 0; k < nsrc; k++) {
			fputs(k ? "; " : "", f);
			dt_put_safe(f, src[k]);
		}
		int granted = dt_root_row_granted(rs, i);
		if (rt->kind != DT_ROOT_EFFECTIVE || nsrc > 1)
			fprintf(f, "; %s%s%s",
			        granted == 1   ? s.green
			        : granted == 0 ? s.red
			                       : s.dim,
			        dt_granted_word(granted), s.off);
		if (rt->dropped_by) {
			fprintf(f, "; %sdropped by%s ", s.red, s.off);
			dt_put_safe(f, rt->dropped_by);
		}
		if (rt->realpath && strcmp(rt->realpath, rt->path)) {
			fputs("; realpath ", f);
			dt_put_safe(f, rt->realpath);
		}
		fputc('\n', f);
		if (!rt->readonly_sub)
			dt_protected_line(f, rs, i);
	}
	if (rs->codex_sandbox_mode) {
		fputs("  codex sandbox mode: ", f);
		dt_put_safe(f, rs->codex_sandbox_mode);
		if (rs->codex_permission_profile) {
			fputs(" (permission profile ", f);
			dt_put_safe(f, rs->codex_permission_profile);
			fputc(')', f);
		}
		if (rs->codex_config_path) {
			fputs(", config ", f);
			dt_put_safe(f, rs->codex_config_path);
			if (rs->codex_config_recorded)
				fputs(" (as recorded at launch)", f);
		}
		fputc('\n', f);
	}
	if (rs->codex_version) {
		dt_codex_model_line(f, rs->codex_version);
		dt_codex_readback_text(f, rs, &s);
	}
	dt_mcp_text(f, rs, &s);
	for (size_t i = 0; i < rs->nwarnings; i++) {
		fprintf(f, "  %swarning:%s ", s.yellow, s.off);
		dt_put_safe(f, rs->warnings[i]);
		fputc('\n', f);
	}
}

/* The set-id programs denytrace's own no_new_privs kept from their ids:
 * what the run showed is not what the program does alone. */
static void dt_setid_lost_text(FILE *f, const struct dt_report *r, const struct dt_style *s)
{
	for (size_t i = 0; i < r->nsetid_lost; i++) {
		const struct dt_record *e = r->setid_lost[i];
		fprintf(f, "  %sNO PRIVILEGE%s pid %lld ", s->yellow, s->off, (long long)e->pid);
		dt_put_safe(f, e->exe);
		fprintf(f,
		        "\n        a set-id program that would have run as uid %lld ran with the "
		        "caller's ids: denytrace's supervisor (--watch-exec, --deny) sets "
		        "no_new_privs; its refusals are denytrace's doing (setid-lost)\n",
		        (long long)e->setid_euid);
	}
}

/* What the probe could not see: without this a silent run reads as clean. */
static void dt_blind_spots_text(FILE *f, const struct dt_report *r, int color)
{
	struct dt_style s = dt_style_for(color);
	if (!r->nexecs) {
		fprintf(
		    f,
		    "\n%sExec coverage%s off: processes the probe could not enter (static "
		    "binaries, cleared environments) are not known; `denytrace run --watch-exec` "
		    "records them.\n",
		    s.bold, s.off);
		return;
	}
	fprintf(f,
	        "\n%sExec coverage%s: %zu exec%s seen, %s%zu blind%s (the probe could not enter, "
	        "or not see all of)\n",
	        s.bold, s.off, r->nexecs, r->nexecs == 1 ? "" : "s", r->nblind ? s.yellow : "",
	        r->nblind, s.off);
	for (size_t i = 0; i < r->nblind; i++) {
		const struct dt_record *e = r->blind[i];
		fprintf(f, "  %sBLIND%s pid %lld ", s.yellow, s.off, (long long)e->pid);
		dt_put_safe(f, e->exe);
		for (size_t a = 1; a < e->argc && a < 6; a++) {
			fputc(' ', f);
			dt_put_safe(f, e->argv[a]);
		}
		if (e->argc > 6 || e->argv_trunc)
			fputs(" ...", f);
		fputs("\n        ", f);
		dt_put_safe(f, e->exec_blind);
		fprintf(f, ": %s\n", dt_blind_why(e, 0));
	}
	dt_setid_lost_text(f, r, &s);
}

/* Why only sometimes, in the first lines: the fact that separated the
 * successful writes from the refused ones, and who changed it. */
static void dt_difference_text(FILE *f, const struct dt_difference *d, const struct dt_style *s)
{
	fprintf(f, "  %sdiffers%s  ", s->yellow, s->off);
	dt_put_safe(f, d->line[0] ? d->line : "the same path was also written successfully");
	fputc('\n', f);
	if (d->changed[0]) {
		fputs("  changed  ", f);
		dt_put_safe(f, d->changed);
		fputc('\n', f);
	}
}

/* One group of refusals in full (report -v, under "Details"). */
static void dt_group_text(FILE *f, const struct dt_report_group *g, const struct dt_style *st)
{
	struct dt_style s = *st;
	char flags[256], t1[48], t2[48];
	const struct dt_record *d = g->rep;
	dt_flags_name(d, flags, sizeof(flags));
	fprintf(f, "\n%s%sREFUSED%s ", s.bold, s.red, s.off);
	dt_put_safe(f, d->op);
	fprintf(f, "%s%s%s ", flags[0] ? "(" : "", flags, flags[0] ? ")" : "");
	dt_put_safe(f, g->path);
	fprintf(f, " %s%s%s", s.bold, dt_errno_name(d->err), s.off);
	if (g->count > 1)
		fprintf(f, " x%llu", (unsigned long long)g->count);
	if (d->sqlite) {
		char ev[256];
		fputs(" [sqlite ", f);
		dt_put_safe(f, d->sqlite);
		fputs(" (", f);
		dt_put_safe(f, dt_sqlite_evidence_text(d, ev, sizeof(ev)));
		fputs(")]", f);
	}
	if (!d->writes)
		fputs(" (read)", f);
	fprintf(f, "\n  cause    %s%s%s: ", s.yellow, dt_cause_name(g->v.cause), s.off);
	dt_put_safe(f, g->v.reason);
	fputc('\n', f);
	if (g->v.root) {
		fputs("  root     ", f);
		dt_put_safe(f, g->v.root->path);
		fputs(" (", f);
		dt_put_safe(f, g->v.root->source);
		fprintf(f, "), %s\n", dt_granted_word(g->v.granted));
	}
	if (d->npyframes) {
		fputs("  python\n", f);
		dt_pyframes_text(f, d, "           ");
	}
	if (d->p[0].abspath && d->p[0].realpath && strcmp(d->p[0].abspath, d->p[0].realpath)) {
		fputs("  logical  ", f);
		dt_put_safe(f, d->p[0].abspath);
		fputc('\n', f);
	}
	dt_format_time(g->first_ns, t1, sizeof(t1));
	dt_format_time(g->last_ns, t2, sizeof(t2));
	fputs("  by       ", f);
	dt_put_safe(f, d->comm);
	fputs(" pid", f);
	for (size_t i = 0; i < g->npids; i++)
		fprintf(f, "%s%ld", i ? "," : " ", g->pids[i]);
	fprintf(f, "%s; %s%s%s\n", g->more_pids ? ",..." : "", t1, g->count > 1 ? " .. " : "",
	        g->count > 1 ? t2 : "");
	if (g->next)
		fprintf(f, "  next     %s\n", g->next);
	if (g->intermittent)
		dt_difference_text(f, &g->diff, &s);
	fprintf(f, "  %sadvice%s   ", s.green, s.off);
	dt_put_safe(f, g->v.advice);
	fputc('\n', f);
}

/* How many refused paths a finding lists before "-v shows ...". */
#define DT_FINDING_PATHS 8

/* " from worker.py:28": which Python line a refused path's group is
 * (one path refused from two lines is two groups). */
static void dt_group_site_text(FILE *f, const struct dt_report_group *g)
{
	if (!g->py_site)
		return;
	fputs(" from ", f);
	dt_put_safe(f, dt_py_basename(g->py_site->file));
	if (g->py_site->line)
		fprintf(f, ":%u", g->py_site->line);
}

/* The Python lines the finding's refusals came from, most first. */
static void dt_finding_sites_text(FILE *f, const struct dt_finding *fd)
{
	char phrase[2048];
	for (size_t i = 0; i < fd->nsites; i++) {
		fputs(i ? "           " : "  python   ", f);
		dt_put_safe(f, dt_py_site_phrase(&fd->sites[i], phrase, sizeof(phrase)));
		fputc('\n', f);
	}
	if (fd->more_sites)
		fputs("           ... and from other lines (-v shows each group's stack)\n", f);
}

/* One problem: its title, cause, root, what happened next, the fix once,
 * then its refused paths one per line. */
static void dt_finding_text(FILE *f, const struct dt_report *r, const struct dt_finding *fd,
                            size_t nth, int verbose, const struct dt_style *st)
{
	struct dt_style s = *st;
	char t1[48], t2[48];
	const struct dt_report_group *g0 = &r->groups[fd->groups[0]];
	fprintf(f, "\n%s%sPROBLEM %zu%s: ", s.bold, s.red, nth, s.off);
	dt_put_safe(f, fd->title);
	dt_format_time(fd->first_ns, t1, sizeof(t1));
	dt_format_time(fd->last_ns, t2, sizeof(t2));
	fprintf(f, "\n  %llu refusal%s by ", (unsigned long long)fd->count,
	        fd->count == 1 ? "" : "s");
	dt_put_safe(f, g0->rep->comm);
	fprintf(f, " pid %ld", g0->pids[0]);
	const char *host = dt_report_host(r, g0->pid_recs[0]);
	if (host) {
		fputs(" on ", f);
		dt_put_safe(f, host);
	}
	fprintf(f, "%s; %s%s%s\n", g0->npids > 1 ? " and others" : "", t1,
	        fd->count > 1 ? " .. " : "", fd->count > 1 ? t2 : "");
	if (fd->intermittent)
		dt_difference_text(f, fd->diff, &s);
	dt_finding_sites_text(f, fd);
	fprintf(f, "  cause    %s%s%s: ", s.yellow, dt_cause_name(fd->cause), s.off);
	dt_put_safe(f, fd->reason);
	fputc('\n', f);
	if (fd->root) {
		fputs("  root     ", f);
		dt_put_safe(f, fd->root->path);
		fputs(" (", f);
		dt_put_safe(f, fd->root->source);
		fprintf(f, "), %s\n", dt_granted_word(fd->granted));
	}
	if (fd->next)
		fprintf(f, "  next     %s\n", fd->next);
	fprintf(f, "  %sadvice%s   ", s.green, s.off);
	dt_put_safe(f, fd->advice);
	fputc('\n', f);
	for (size_t i = 0; i < fd->ngroups; i++) {
		const struct dt_report_group *g = &r->groups[fd->groups[i]];
		if (i == DT_FINDING_PATHS && !verbose) {
			fprintf(f, "           ... and %zu more (-v shows them)\n",
			        fd->ngroups - i);
			break;
		}
		fputs(i ? "           " : "  refused  ", f);
		dt_put_safe(f, g->rep->op);
		fputc(' ', f);
		dt_put_safe(f, g->path);
		fprintf(f, " %s x%llu", dt_errno_name(g->rep->err), (unsigned long long)g->count);
		dt_group_site_text(f, g);
		fputc('\n', f);
	}
}

void dt_report_hidden_lines(FILE *f, const struct dt_report *r, const char *before, const char *how,
                            const char *after)
{
	if (r->hidden_denials)
		fprintf(f, "%s%llu lock-contention failure%s hidden; %s shows them%s\n", before,
		        (unsigned long long)r->hidden_denials, r->hidden_denials == 1 ? "" : "s",
		        how, after);
	if (r->hidden_setup)
		fprintf(
		    f,
		    "%s%llu refusal%s by bubblewrap while setting up the sandbox hidden; %s shows "
		    "them%s\n",
		    before, (unsigned long long)r->hidden_setup, r->hidden_setup == 1 ? "" : "s",
		    how, after);
}

static void dt_handoff_text(FILE *f, const struct dt_handoff *h, size_t n, const struct dt_style *s)
{
	fprintf(f, "\n%sHandoff %zu: %s%s (no refusal)\n", s->bold, n,
	        h->kind == DT_HANDOFF_ENV_LOST      ? "environment lost on the way"
	        : h->kind == DT_HANDOFF_WRONG_BOARD ? "wrong board"
	                                            : "override for a server that does not exist",
	        s->off);
	fprintf(f, "  process  pid %ld (", h->pid);
	dt_put_safe(f, h->comm);
	if (h->server) {
		fputs(", MCP server ", f);
		dt_put_safe(f, h->server);
	}
	fputc(')', f);
	if (h->board) {
		fputs(h->kind == DT_HANDOFF_ENV_LOST ? " opened " : " wrote ", f);
		dt_put_safe(f, h->board);
	}
	fputc('\n', f);
	if (h->named) {
		fputs("  named    the launch's board is ", f);
		dt_put_safe(f, h->named);
		fputc('\n', f);
	}
	for (size_t i = 0; i < h->nvars; i++) {
		fputs("  lost     ", f);
		dt_put_safe(f, h->vars[i].name);
		fputs(" (launcher: ", f);
		dt_put_safe(f, h->vars[i].launcher);
		fputs(h->vars[i].here ? "; here: " : "; here: unset", f);
		if (h->vars[i].here)
			dt_put_safe(f, h->vars[i].here);
		fputs(")\n", f);
	}
	if (h->hop) {
		fputs("  hop      ", f);
		dt_put_safe(f, h->hop);
		fputc('\n', f);
	}
	if (h->why) {
		fputs("  why      ", f);
		dt_put_safe(f, h->why);
		fputc('\n', f);
	}
	fprintf(f, "  %sfix%s      ", s->green, s->off);
	dt_put_pasteable(f, h->fix);
	fputc('\n', f);
}

void dt_report_text(FILE *f, const struct dt_report *r, int color, int verbose)
{
	struct dt_style s = dt_style_for(color);
	char problems[64];
	size_t shown = 0;
	for (size_t k = 0; k < r->ngroups; k++)
		shown += !r->groups[k].hidden;
	dt_problems_phrase(r->findings.n + r->handoffs.n, problems, sizeof(problems));
	problems[0] = (char)(problems[0] == 'n' ? 'N' : problems[0]);
	fprintf(f,
	        "%s%s%s: %llu refusal%s in %zu group%s; %zu process%s traced; "
	        "%llu record%s read, %llu lost\n",
	        s.bold, problems, s.off, (unsigned long long)r->denials, r->denials == 1 ? "" : "s",
	        shown, shown == 1 ? "" : "s", r->nprocs, r->nprocs == 1 ? "" : "es",
	        (unsigned long long)r->stats.records, r->stats.records == 1 ? "" : "s",
	        (unsigned long long)r->lost);
	dt_report_unreadable_line(f, r, "(", ")\n");
	char before[64], after[64];
	snprintf(before, sizeof(before), "%s(", s.dim);
	snprintf(after, sizeof(after), ")%s", s.off);
	dt_report_hidden_lines(f, r, before, "--all", after);
	if (!shown)
		fputs("\nNo refused file operations were recorded.\n", f);

	for (size_t i = 0; i < r->findings.n; i++)
		dt_finding_text(f, r, &r->findings.v[i], i + 1, verbose, &s);
	for (size_t i = 0; i < r->handoffs.n; i++)
		dt_handoff_text(f, &r->handoffs.v[i], i + 1, &s);
	if (shown && !verbose)
		fprintf(f,
		        "\n%sDetails%s: -v shows %s%zu group%s in full (call, flags, pids, "
		        "times, per-path cause).\n",
		        s.bold, s.off, shown == 1 ? "the " : "each of the ", shown,
		        shown == 1 ? "" : "s");
	else if (shown) {
		fprintf(f, "\n%sDetails%s\n", s.bold, s.off);
		for (size_t k = 0; k < r->ngroups; k++)
			if (!r->groups[k].hidden)
				dt_group_text(f, &r->groups[k], &s);
	}

	fprintf(f, "\n%sRoots%s\n", s.bold, s.off);
	dt_roots_text(f, &r->roots, color);
	if (r->denials) {
		fputs("\nBy cause:", f);
		for (int c = 0; c < DT_CAUSE_COUNT; c++)
			if (r->by_cause[c])
				fprintf(f, " %s %llu;", dt_cause_name((enum dt_cause)c),
				        (unsigned long long)r->by_cause[c]);
		fputc('\n', f);
	}
	dt_blind_spots_text(f, r, color);
	if (r->unseen)
		fprintf(f,
		        "%llu refusal%s not recorded: made after a process installed a seccomp "
		        "filter of its own, under which the probe makes no system call.\n",
		        (unsigned long long)r->unseen, r->unseen == 1 ? "" : "s");
	if (r->lost)
		fprintf(f,
		        "%s%llu records were overwritten before this report: rerun with a larger "
		        "--size.%s\n",
		        s.yellow, (unsigned long long)r->lost, s.off);
}
