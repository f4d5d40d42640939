/* SPDX-License-Identifier: MIT */
#include "findings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static int dt_str_cmp(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a || !b)
		return a ? 1 : -1;
	return strcmp(a, b);
}

/* Orders groups so that one finding's are adjacent, most refusals first. */
static int dt_finding_key_cmp(const struct dt_report_group *x, const struct dt_report_group *y)
{
	if (x->v.cause != y->v.cause)
		return x->v.cause < y->v.cause ? -1 : 1;
	int c = dt_str_cmp(x->v.root ? x->v.root->path : NULL, y->v.root ? y->v.root->path : NULL);
	if (c)
		return c;
	int gx = x->v.root ? x->v.granted : -1, gy = y->v.root ? y->v.granted : -1;
	if (gx != gy)
		return gx < gy ? -1 : 1;
	return strcmp(x->v.subject, y->v.subject);
}

static int dt_group_order(const void *a, const void *b, void *ctx)
{
	const struct dt_report_group *g = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = dt_finding_key_cmp(&g[i], &g[j]);
	if (c)
		return c;
	if (g[i].count != g[j].count)
		return g[i].count > g[j].count ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int dt_finding_order(const void *a, const void *b)
{
	const struct dt_finding *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->first_ns < y->first_ns ? -1 : x->first_ns > y->first_ns;
}

static void dt_finding_title(struct dt_finding *f)
{
	const char *fmt = dt_cause_title(f->cause);
	const char *what = f->subject[0] ? f->subject : f->root ? f->root->path : "these paths";
	if (strstr(fmt, "%s"))
		snprintf(f->title, sizeof(f->title), fmt, what);
	else
		snprintf(f->title, sizeof(f->title), "%s", fmt);
}

static int dt_same_py_line(const struct dt_py_frame *a, const struct dt_py_frame *b)
{
	return a->line == b->line && !strcmp(a->file, b->file) && !strcmp(a->func, b->func);
}

static void dt_finding_add_site(struct dt_finding *f, const struct dt_report_group *g)
{
	if (!g->py_site)
		return;
	for (size_t i = 0; i < f->nsites; i++)
		if (dt_same_py_line(f->sites[i].at, g->py_site)) {
			f->sites[i].count += g->count;
			return;
		}
	if (f->nsites == DT_FINDING_SITES) {
		f->more_sites = 1;
		return;
	}
	f->sites[f->nsites].at = g->py_site;
	f->sites[f->nsites++].count = g->count;
}

static int dt_site_order(const void *a, const void *b)
{
	const struct dt_py_site *x = a, *y = b;
	return (x->count < y->count) - (x->count > y->count);
}

/* Folds group g into finding f (groups arrive most refusals first). The
 * words come from the earliest group: its refusal came first, and what the
 * program did next followed it. */
static void dt_finding_add(struct dt_finding *f, const struct dt_report_group *g)
{
	if (!f->ngroups) {
		f->cause = g->v.cause;
		f->root = g->v.root;
		f->granted = g->v.root ? g->v.granted : -1;
		f->subject = g->v.subject;
		f->missing_right = g->v.missing_right;
		f->last_ns = g->last_ns;
	}
	if (!f->ngroups || g->first_ns < f->first_ns) {
		f->reason = g->v.reason;
		f->advice = g->v.advice;
		f->first_ns = g->first_ns;
		if (!f->next_is_error)
			f->next = g->next ? g->next : f->next;
	} else if (!f->next) {
		f->next = g->next;
	}
	/* the error SQLite returns outranks the steps before it (a read-only
	 * reopen fails nothing yet): the line says what the worker printed */
	if (g->next_is_error && (!f->next_is_error || g->first_ns < f->next_ns)) {
		f->next = g->next;
		f->next_is_error = 1;
		f->next_ns = g->first_ns;
	}
	/* the difference of the group with the most refusals that names a fact */
	if (g->intermittent &&
	    (!f->intermittent || (!f->diff->fact && g->diff.fact) ||
	     (!f->diff->fact == !g->diff.fact && g->diff.refused.count > f->diff->refused.count))) {
		f->intermittent = 1;
		f->diff = &g->diff;
	}
	dt_finding_add_site(f, g);
	f->count += g->count;
	if (g->last_ns > f->last_ns)
		f->last_ns = g->last_ns;
	f->ngroups++;
}

int dt_findings_build(const struct dt_report_group *groups, size_t ngroups, struct dt_findings *out)
{
	memset(out, 0, sizeof(*out));
	size_t n = 0;
	out->idx = malloc((ngroups + 1) * sizeof(*out->idx));
	out->v = calloc(ngroups + 1, sizeof(*out->v));
	if (!out->idx || !out->v) {
		dt_findings_free(out);
		return -1;
	}
	for (size_t k = 0; k < ngroups; k++)
		if (!groups[k].hidden)
			out->idx[n++] = k;
	qsort_r(out->idx, n, sizeof(*out->idx), dt_group_order, (void *)groups);
	for (size_t i = 0; i < n; i++) {
		const struct dt_report_group *g = &groups[out->idx[i]];
		if (!i || dt_finding_key_cmp(&groups[out->idx[i - 1]], g)) {
			out->v[out->n].groups = &out->idx[i];
			out->n++;
		}
		dt_finding_add(&out->v[out->n - 1], g);
	}
	for (size_t i = 0; i < out->n; i++) {
		dt_finding_title(&out->v[i]);
		qsort(out->v[i].sites, out->v[i].nsites, sizeof(struct dt_py_site), dt_site_order);
	}
	qsort(out->v, out->n, sizeof(*out->v), dt_finding_order);
	return 0;
}

void dt_findings_free(struct dt_findings *f)
{
	free(f->v);
	free(f->idx);
	memset(f, 0, sizeof(*f));
}

const char *dt_py_site_phrase(const struct dt_py_site *s, char *buf, size_t cap)
{
	char line[24] = "";
	if (s->at->line)
		snprintf(line, sizeof(line), ":%u", s->at->line);
	snprintf(buf, cap, "refused in %s at %s%s, %llu time%s", s->at->func,
	         dt_py_basename(s->at->file), line, (unsigned long long)s->count,
	         s->count == 1 ? "" : "s");
	return buf;
}

const char *dt_problems_phrase(size_t n, char *buf, size_t cap)
{
	if (!n)
		snprintf(buf, cap, "no problems");
	else
		snprintf(buf, cap, "%zu problem%s", n, n == 1 ? "" : "s");
	return buf;
}
