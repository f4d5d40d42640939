/* SPDX-License-Identifier: MIT */
/* A soak's summary as JUnit XML (soak_render.h): one testsuite per host
 * (one for a soak run here, one per shard for soak --merge), one testcase
 * per run, named by its run index, which is unique across shards. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "names.h"
#include "recfmt.h"
#include "soak_render.h"
#include "xml.h"

static int soak_result_order(const void *a, const void *b)
{
	const struct dt_soak_result *x = a, *y = b;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* A failing run's <failure>: the refusals of this run seen only in failing
 * runs as the message; them, their problems, the kept ring and how to
 * rerun it as the text. */
static void soak_junit_failure(FILE *f, const struct dt_soak *s, const struct dt_soak_opts *o,
                               const struct dt_soak_result *r)
{
	char *msg = NULL, *body = NULL;
	size_t msglen = 0, bodylen = 0, n = 0;
	FILE *m = open_memstream(&msg, &msglen), *b = open_memstream(&body, &bodylen);
	if (!m || !b) {
		if (m)
			fclose(m);
		if (b)
			fclose(b);
		return;
	}
	fprintf(b, "%s %d\n", r->timed_out ? "timed out after --timeout; status" : "exit status",
	        r->status);
	for (size_t i = 0; i < r->nkeys; i++) {
		const struct dt_soak_key *k = &s->keys[r->keys[i]];
		if (!dt_soak_separates(k->nfail, k->npass))
			continue;
		fprintf(m, "%s%s %s %s%s", n++ ? "; " : "", k->op, k->path, dt_errno_name(k->err),
		        k->injected ? " (injected)" : "");
		fputs(n == 1 ? "refusals seen only in failing runs:\n  " : "  ", b);
		dt_soak_put_refusal(b, s, k);
		if (k->problem != SIZE_MAX) {
			fputs("    problem: ", b);
			dt_put_safe(b, s->problems[k->problem].title);
			fputs("\n    advice: ", b);
			dt_put_safe(b, s->problems[k->problem].advice);
			fputc('\n', b);
		}
	}
	if (!n)
		fprintf(m, "%s %d; no refusal of this run was seen only in failing runs",
		        r->timed_out ? "timed out, status" : "exit status", r->status);
	const struct dt_soak_failed *fr = NULL;
	for (size_t i = 0; i < s->nfailed; i++)
		if (s->failed[i].index == r->index)
			fr = &s->failed[i];
	if (fr && fr->ring[0])
		fprintf(b, "ring: %s (denytrace report %s)\n", fr->ring, fr->ring);
	else
		fputs("ring: not kept (soak --keep DIR keeps the rings of failing runs)\n", b);
	fputs("rerun: ", b);
	dt_soak_put_rerun(b, o, r->index);
	fclose(m);
	fclose(b);
	fprintf(f, "      <failure type=\"%s\" message=\"", r->timed_out ? "timeout" : "exit");
	dt_xml_put(f, msg, 0);
	fputs("\">", f);
	dt_xml_put(f, body, 1);
	fputs("</failure>\n", f);
	free(msg);
	free(body);
}

static void soak_put_xml_attr(FILE *f, const char *s)
{
	dt_xml_put(f, s, 0);
}

static void soak_junit_property(FILE *f, const char *name, const char *value)
{
	fprintf(f, "      <property name=\"%s\" value=\"", name);
	dt_xml_put(f, value, 0);
	fputs("\"/>\n", f);
}

static void soak_junit_properties(FILE *f, const struct dt_soak_summary *m,
                                  const struct dt_soak_host *h)
{
	const struct dt_soak *s = m->s;
	double lo, hi;
	dt_soak_wilson(s->failures, s->done, &lo, &hi);
	fprintf(f,
	        "    <properties>\n      <property name=\"seed\" value=\"%llu\"/>\n"
	        "      <property name=\"flake_rate\" value=\"%.4f\"/>\n"
	        "      <property name=\"flake_rate_ci95\" value=\"%.4f-%.4f\"/>\n"
	        "      <property name=\"command\" value=\"",
	        (unsigned long long)m->o->seed, s->done ? (double)s->failures / s->done : 0.0, lo,
	        hi);
	dt_soak_put_cmd(f, m->o->cmd, soak_put_xml_attr);
	fputs("\"/>\n", f);
	soak_junit_property(f, "host.boot_id", h->id.boot_id);
	soak_junit_property(f, "host.machine_id_hash", h->id.machine);
	if (h->nshards) {
		char shard[64];
		snprintf(shard, sizeof(shard), "%u/%u", h->shard, h->nshards);
		soak_junit_property(f, "shard", shard);
	}
	fputs("    </properties>\n", f);
}

static void soak_junit_suite(FILE *f, const struct dt_soak_summary *m, size_t h, const char *ts)
{
	const struct dt_soak *s = m->s;
	const struct dt_soak_host *ho = &s->hosts[h];
	size_t n = 0;
	for (size_t i = 0; i < s->nresults; i++)
		n += s->results[i].host == h;
	fputs("  <testsuite name=\"denytrace soak", f);
	if (ho->nshards)
		fprintf(f, " shard %u of %u", ho->shard, ho->nshards);
	fprintf(f, "\" package=\"denytrace\" id=\"%zu\" timestamp=\"%s\" hostname=\"", h, ts);
	dt_xml_put(f, ho->id.hostname[0] ? ho->id.hostname : "localhost", 0);
	fprintf(f, "\" tests=\"%zu\" failures=\"%u\" errors=\"0\" time=\"%.3f\">\n", n,
	        ho->failures, s->nhosts == 1 ? m->elapsed : ho->elapsed);
	soak_junit_properties(f, m, ho);
	for (size_t i = 0; i < s->nresults; i++) {
		const struct dt_soak_result *r = &s->results[i];
		if (r->host != h)
			continue;
		fprintf(f,
		        "    <testcase name=\"run %d (seed %llu)\" classname=\"denytrace.soak\" "
		        "time=\"%.3f\"%s\n",
		        r->index, (unsigned long long)dt_soak_seed(m->o, r->index), r->secs,
		        r->failed ? ">" : "/>");
		if (r->failed) {
			soak_junit_failure(f, s, m->o, r);
			fputs("    </testcase>\n", f);
		}
	}
	fputs("    <system-out/>\n    <system-err/>\n  </testsuite>\n", f);
}

/* The JUnit XML that CI reads (Jenkins, GitLab, GitHub Actions reporters):
 * the attributes and elements the Ant/Jenkins schema requires, no more. */
void dt_soak_junit(FILE *f, const struct dt_soak_summary *m)
{
	char ts[32];
	struct tm tm;
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", gmtime_r(&m->started, &tm));
	qsort(m->s->results, m->s->nresults, sizeof(*m->s->results), soak_result_order);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n", f);
	for (size_t h = 0; h < m->s->nhosts; h++)
		soak_junit_suite(f, m, h, ts);
	fputs("</testsuites>\n", f);
}
