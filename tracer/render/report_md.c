/* SPDX-License-Identifier: MIT */
/* The report as Markdown, to paste into a GitHub issue. */
#include <string.h>

#include "handoff.h"
#include "names.h"
#include "recfmt.h"
#include "report.h"

/* Inline code that survives any path: control characters escaped, and a
 * fence longer than any run of backticks inside. In a table cell a '|'
 * would end the cell even inside code, so there it is escaped too. */
void dt_md_code_span(FILE *f, const char *s, int in_table)
{
	size_t run = 0, longest = 0;
	for (const char *p = s ? s : ""; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (size_t i = 0; i <= longest; i++)
		fputc('`', f);
	fputc(' ', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		int n = dt_safe_len(p);
		if (!n) {
			fprintf(f, "\\x%02x", *p++);
		} else if (*p == '|' && in_table) {
			fputs("\\|", f);
			p++;
		} else {
			fwrite(p, 1, (size_t)n, f);
			p += n;
		}
	}
	fputc(' ', f);
	for (size_t i = 0; i <= longest; i++)
		fputc('`', f);
}

void dt_md_text(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		int n = dt_safe_len(p);
		if (!n) {
			fprintf(f, "\\x%02x", *p++);
		} else if (strchr("|<>*_`[]\\", *p)) {
			fprintf(f, "\\%c", *p++);
		} else {
			fwrite(p, 1, (size_t)n, f);
			p += n;
		}
	}
}

void dt_md_fence(FILE *f, const char *lang, const char *text)
{
	/* CommonMark: a fence closes only with a run of backticks at least as
	 * long as the opening one, so open with one longer than any inside */
	size_t run = 0, longest = 0;
	for (const char *p = text ? text : ""; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	size_t n = longest < 3 ? 3 : longest + 1;
	for (size_t i = 0; i < n; i++)
		fputc('`', f);
	fprintf(f, "%s\n", lang);
	dt_put_text(f, text);
	if (text && *text && text[strlen(text) - 1] != '\n')
		fputc('\n', f);
	for (size_t i = 0; i < n; i++)
		fputc('`', f);
	fputc('\n', f);
}

/* Why only sometimes: the separating fact and who changed it. */
static void dt_md_difference(FILE *f, const struct dt_difference *d)
{
	fputs("- **intermittent**: ", f);
	dt_md_text(f, d->line[0] ? d->line : "the same path was also written successfully");
	fputc('\n', f);
	if (d->changed[0]) {
		fputs("- **changed**: ", f);
		dt_md_text(f, d->changed);
		fputc('\n', f);
	}
}

/* The per-group table under "Details". */
static void dt_md_group_table(FILE *f, const struct dt_report *r)
{
	fputs("| path | op | errno | count | cause | expected root | granted |\n", f);
	fputs("|---|---|---|---|---|---|---|\n", f);
	for (size_t k = 0; k < r->ngroups; k++) {
		const struct dt_report_group *g = &r->groups[k];
		if (g->hidden)
			continue;
		fputs("| ", f);
		dt_md_code_span(f, g->path, 1);
		fputs(" | ", f);
		dt_md_text(f, g->rep->op);
		fprintf(f, " | %s | %llu | `%s` | ", dt_errno_name(g->rep->err),
		        (unsigned long long)g->count, dt_cause_name(g->v.cause));
		if (g->v.root)
			dt_md_code_span(f, g->v.root->path, 1);
		else
			fputs("none", f);
		fprintf(f, " | %s |\n",
		        !g->v.root          ? ""
		        : g->v.granted == 1 ? "yes"
		        : g->v.granted == 0 ? "**no**"
		                            : "unknown");
	}
	fputc('\n', f);
}

/* The Python stack of a group's first refusal, innermost first. */
static void dt_md_pystack(FILE *f, const struct dt_record *d)
{
	if (!d->npyframes)
		return;
	fputs("- **Python stack**:\n", f);
	for (size_t i = 0; i < d->npyframes; i++) {
		char line[24] = "";
		if (d->pyframes[i].line)
			snprintf(line, sizeof(line), ":%u", d->pyframes[i].line);
		fputs("  - ", f);
		dt_md_code_span(f, d->pyframes[i].func, 0);
		fputs(" at ", f);
		dt_md_code_span(f, d->pyframes[i].file, 0);
		fprintf(f, "%s\n", line);
	}
	if (d->py_trunc)
		fputs("  - ... (deeper frames not recorded)\n", f);
}

/* One group in full, inside the collapsed section. */
/* " (pid 12 on host-a and others)": the host when the report spans several */
static void dt_md_pids(FILE *f, const struct dt_report *r, const struct dt_report_group *g)
{
	fprintf(f, " (pid %ld", g->pids[0]);
	const char *host = dt_report_host(r, g->pid_recs[0]);
	if (host) {
		fputs(" on ", f);
		dt_md_code_span(f, host, 0);
	}
	fprintf(f, "%s)\n", g->npids > 1 ? " and others" : "");
}

static void dt_md_group(FILE *f, const struct dt_report *r, const struct dt_report_group *g)
{
	char flags[256], t1[48];
	const struct dt_record *d = g->rep;
	dt_flags_name(d, flags, sizeof(flags));
	fprintf(f, "#### `%s` %s: ", dt_cause_name(g->v.cause), dt_errno_name(d->err));
	dt_md_code_span(f, g->path, 0);
	fputs("\n\n", f);
	fputs("- **call**: ", f);
	dt_md_code_span(f, d->op, 0);
	fprintf(f, " `%s`", flags);
	if (d->sqlite) {
		char ev[256];
		fputs(", SQLite ", f);
		dt_md_text(f, d->sqlite);
		fputs(" file (", f);
		dt_md_text(f, dt_sqlite_evidence_text(d, ev, sizeof(ev)));
		fputc(')', f);
	}
	fputc('\n', f);
	dt_md_pystack(f, d);
	fputs("- **why**: ", f);
	dt_md_text(f, g->v.reason);
	fputc('\n', f);
	if (g->v.root) {
		fputs("- **expected root**: ", f);
		dt_md_code_span(f, g->v.root->path, 0);
		fputs(" from ", f);
		dt_md_text(f, g->v.root->source);
		fputc('\n', f);
	}
	dt_format_time(g->first_ns, t1, sizeof(t1));
	fprintf(f, "- **seen**: %llu time%s, first %s, by ", (unsigned long long)g->count,
	        g->count == 1 ? "" : "s", t1);
	dt_md_code_span(f, d->comm, 0); /* comm is the process's to choose (PR_SET_NAME) */
	dt_md_pids(f, r, g);
	if (g->next)
		fprintf(f, "- **then**: %s\n", g->next);
	if (g->intermittent)
		dt_md_difference(f, &g->diff);
	fputs("- **advice**: ", f);
	dt_md_text(f, g->v.advice);
	fputs("\n\n", f);
}

static void dt_md_sites(FILE *f, const struct dt_finding *fd)
{
	char phrase[2048];
	for (size_t i = 0; i < fd->nsites; i++) {
		fputs("- **Python**: ", f);
		dt_md_text(f, dt_py_site_phrase(&fd->sites[i], phrase, sizeof(phrase)));
		fputc('\n', f);
	}
	if (fd->more_sites)
		fputs("- **Python**: and from other lines\n", f);
}

/* One problem: the fix once, its refused paths beneath. */
static void dt_md_finding(FILE *f, const struct dt_report *r, const struct dt_finding *fd,
                          size_t nth)
{
	char t1[48];
	const struct dt_report_group *g0 = &r->groups[fd->groups[0]];
	fprintf(f, "### Problem %zu: ", nth);
	dt_md_text(f, fd->title);
	fputs("\n\n", f);
	if (fd->intermittent)
		dt_md_difference(f, fd->diff);
	fprintf(f, "- **cause**: `%s`: ", dt_cause_name(fd->cause));
	dt_md_text(f, fd->reason);
	fputc('\n', f);
	if (fd->root) {
		fputs("- **expected root**: ", f);
		dt_md_code_span(f, fd->root->path, 0);
		fputs(" from ", f);
		dt_md_text(f, fd->root->source);
		fprintf(f, ", %s\n",
		        fd->granted == 1   ? "granted"
		        : fd->granted == 0 ? "**not granted**"
		                           : "grant unknown");
	}
	dt_format_time(fd->first_ns, t1, sizeof(t1));
	fprintf(f, "- **seen**: %llu refusal%s, first %s, by ", (unsigned long long)fd->count,
	        fd->count == 1 ? "" : "s", t1);
	dt_md_code_span(f, g0->rep->comm, 0);
	dt_md_pids(f, r, g0);
	dt_md_sites(f, fd);
	if (fd->next)
		fprintf(f, "- **then**: %s\n", fd->next);
	fputs("- **advice**: ", f);
	dt_md_text(f, fd->advice);
	fputs("\n- **refused**:\n", f);
	for (size_t i = 0; i < fd->ngroups; i++) {
		const struct dt_report_group *g = &r->groups[fd->groups[i]];
		fputs("  - ", f);
		dt_md_code_span(f, g->rep->op, 0);
		fputc(' ', f);
		dt_md_code_span(f, g->path, 0);
		fprintf(f, " %s x%llu", dt_errno_name(g->rep->err), (unsigned long long)g->count);
		if (g->py_site) {
			char at[1100];
			snprintf(at, sizeof(at), "%s:%u", dt_py_basename(g->py_site->file),
			         g->py_site->line);
			fputs(" from ", f);
			dt_md_code_span(f, at, 0);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
}

/* A table cell's code span, or nothing for a fact the finding lacks. */
static void dt_md_cell_code(FILE *f, const char *s)
{
	if (s)
		dt_md_code_span(f, s, 1);
}

/* Each variable lost: its name, the launcher's value and this process's. */
static void dt_md_handoff_lost(FILE *f, const struct dt_handoff *h)
{
	for (size_t i = 0; i < h->nvars; i++) {
		fputs(i ? "<br>" : "", f);
		dt_md_code_span(f, h->vars[i].name, 1);
		fputs(": launcher ", f);
		dt_md_code_span(f, h->vars[i].launcher, 1);
		fputs(", here ", f);
		if (h->vars[i].here)
			dt_md_code_span(f, h->vars[i].here, 1);
		else
			fputs("unset", f);
	}
}

/* The -c words that carry the fix, one per line of the cell. */
static void dt_md_handoff_overrides(FILE *f, const struct dt_handoff *h)
{
	if (h->fix_override)
		dt_md_code_span(f, h->fix_override, 1);
	for (size_t i = 0; i < h->nfix_env_overrides; i++) {
		fputs(i || h->fix_override ? "<br>" : "", f);
		dt_md_code_span(f, h->fix_env_overrides[i], 1);
	}
}

static void dt_md_handoff_row(FILE *f, const struct dt_handoff *h, size_t nth)
{
	fprintf(f, "| %zu | `%s` | %ld | ", nth, dt_handoff_kind_name(h->kind), h->pid);
	dt_md_cell_code(f, h->comm); /* the process's to choose (PR_SET_NAME) */
	fputs(" | ", f);
	dt_md_cell_code(f, h->server);
	fputs(" | ", f);
	dt_md_cell_code(f, h->board);
	fputs(" | ", f);
	dt_md_cell_code(f, h->named);
	fputs(" | ", f);
	dt_md_handoff_lost(f, h);
	fputs(" | ", f);
	dt_md_text(f, h->hop);
	fputs(" | ", f);
	dt_md_text(f, h->why);
	fputs(" | ", f);
	dt_md_text(f, h->fix);
	fputs(" | ", f);
	dt_md_cell_code(f, h->fix_env_vars);
	fputs(" | ", f);
	dt_md_handoff_overrides(f, h);
	fputs(" | ", f);
	dt_md_cell_code(f, h->fix_server);
	fputs(" |\n", f);
}

/* Failures with no refusal (handoff.h): the facts the JSON report's
 * "handoff" array holds, one row each. */
static void dt_md_handoffs(FILE *f, const struct dt_report *r)
{
	if (!r->handoffs.n)
		return;
	fputs("### Handoffs with no refusal\n\n"
	      "| handoff | kind | pid | process | MCP server | board | launch's board | lost | "
	      "hop | why | fix | env_vars | -c | server instead |\n"
	      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
	      f);
	for (size_t i = 0; i < r->handoffs.n; i++)
		dt_md_handoff_row(f, &r->handoffs.v[i], i + 1);
	fputc('\n', f);
}

void dt_report_markdown(FILE *f, const struct dt_report *r)
{
	char problems[64];
	fprintf(f, "## denytrace report\n\n");
	fprintf(f, "**%s**: %llu refused file operation%s",
	        dt_problems_phrase(r->findings.n + r->handoffs.n, problems, sizeof(problems)),
	        (unsigned long long)r->denials, r->denials == 1 ? "" : "s");
	int first = 1;
	for (int c = 0; c < DT_CAUSE_COUNT; c++)
		if (r->by_cause[c]) {
			fprintf(f, "%s`%s` %llu", first ? " (" : ", ",
			        dt_cause_name((enum dt_cause)c),
			        (unsigned long long)r->by_cause[c]);
			first = 0;
		}
	fprintf(f, "%s; %zu processes traced; %llu records read, %llu lost.\n\n", first ? "" : ")",
	        r->nprocs, (unsigned long long)r->stats.records, (unsigned long long)r->lost);
	dt_report_unreadable_line(f, r, "", "\n\n");
	if (r->unseen)
		fprintf(
		    f,
		    "%llu more refusal%s not recorded: made after a process installed a seccomp "
		    "filter of its own, under which the probe makes no system call.\n\n",
		    (unsigned long long)r->unseen, r->unseen == 1 ? "" : "s");

	for (size_t i = 0; i < r->findings.n; i++)
		dt_md_finding(f, r, &r->findings.v[i], i + 1);
	dt_md_handoffs(f, r);
	if (r->denials) {
		fputs("### Details\n\n", f);
		dt_md_group_table(f, r);
		/* GitHub renders Markdown inside <details> after a blank line */
		fputs("<details>\n<summary>Each group in full</summary>\n\n", f);
		for (size_t k = 0; k < r->ngroups; k++)
			if (!r->groups[k].hidden)
				dt_md_group(f, r, &r->groups[k]);
		fputs("</details>\n\n", f);
	}

	fputs("### Roots\n\n", f);
	if (r->roots.codex_refused) {
		dt_md_text(f, r->roots.codex_refused);
		fputs("\n\n", f);
	}
	fputs("| root | source | granted |\n|---|---|---|\n", f);
	for (size_t i = 0; i < r->roots.n; i++) {
		const struct dt_root *rt = &r->roots.v[i];
		const char *src[16];
		size_t nsrc = dt_root_sources(&r->roots, i, src, 16);
		if (!dt_root_is_row(&r->roots, i))
			continue; /* one row per path, with every source */
		fputs("| ", f);
		dt_md_code_span(f, rt->path, 1);
		fputs(rt->readonly_sub ? " (read-only)" : "", f);
		fputs(" | ", f);
		for (size_t k = 0; k < nsrc; k++) {
			fputs(k ? "; " : "", f);
			dt_md_text(f, src[k]);
		}
		if (rt->dropped_by) {
			fputs("; dropped by ", f);
			dt_md_code_span(f, rt->dropped_by, 1);
		}
		int granted = dt_root_row_granted(&r->roots, i);
		fprintf(f, " | %s |\n",
		        rt->kind == DT_ROOT_EFFECTIVE && nsrc < 2 ? "(mount)"
		        : granted == 1                            ? "yes"
		        : granted == 0                            ? "**no**"
		                                                  : "unknown");
	}
	if (r->nexecs) {
		fprintf(f,
		        "\n### Exec coverage\n\n%zu exec%s seen, %zu blind (the probe could not "
		        "enter).\n",
		        r->nexecs, r->nexecs == 1 ? "" : "s", r->nblind);
		for (size_t i = 0; i < r->nblind; i++) {
			fprintf(f, "%s- pid %lld ", i ? "" : "\n", (long long)r->blind[i]->pid);
			dt_md_code_span(f, r->blind[i]->exe, 0);
			fputs(": ", f);
			dt_md_text(f, r->blind[i]->exec_blind);
			fputc('\n', f);
		}
		for (size_t i = 0; i < r->nsetid_lost; i++) {
			fprintf(f, "%s- pid %lld ", i ? "" : "\n",
			        (long long)r->setid_lost[i]->pid);
			dt_md_code_span(f, r->setid_lost[i]->exe, 0);
			fprintf(f,
			        ": set-id, ran without its privilege (would have been uid %lld): "
			        "denytrace's supervisor sets no_new_privs\n",
			        (long long)r->setid_lost[i]->setid_euid);
		}
	} else {
		fputs("\n### Exec coverage\n\nOff: processes the probe could not enter are not "
		      "known.\n",
		      f);
	}
	fputs("\n<sub>Generated by denytrace.</sub>\n", f);
}
