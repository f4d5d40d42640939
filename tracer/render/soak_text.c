/* SPDX-License-Identifier: MIT */
/* A soak's summary as text and Markdown (soak_render.h). */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "names.h"
#include "recfmt.h"
#include "report.h"
#include "secrets.h"
#include "soak_render.h"
#include "soakfacts.h"
#include "soakmerge.h"

static void soak_print_log_tail(FILE *f, const char *log)
{
	FILE *lf = fopen(log, "re");
	if (!lf)
		return;
	char line[1024], tail[8][1024];
	int n = 0;
	while (fgets(line, sizeof(line), lf))
		snprintf(tail[n++ % 8], sizeof(tail[0]), "%s", line);
	fclose(lf);
	if (!n)
		return;
	fprintf(f, "Its output (last lines):\n");
	for (int i = n > 8 ? n - 8 : 0; i < n; i++)
		fprintf(f, "  | %s", tail[i % 8]);
}

int dt_soak_separates(unsigned nfail, unsigned npass)
{
	return nfail && !npass;
}

/* "  openat /x/k.db-journal EROFS (injected): in 3 of 4 failing runs" */
void dt_soak_put_refusal(FILE *f, const struct dt_soak *s, const struct dt_soak_key *k)
{
	dt_put_safe(f, k->op);
	fputc(' ', f);
	dt_put_safe(f, k->path);
	fprintf(f, " %s%s", dt_errno_name(k->err), k->injected ? " (injected)" : "");
	if (k->py_line) {
		fputs(" from ", f);
		dt_put_safe(f, k->py_line);
	}
	fprintf(f, ": in %u of %u failing runs\n", k->nfail, s->failures);
}

/* A problem seen only in failing runs, as the report prints a finding:
 * title, cause, the fix once, its refusals seen only in failing runs. */
static void soak_print_problem(FILE *f, const struct dt_soak *s, size_t p, size_t nth)
{
	const struct dt_soak_problem *pr = &s->problems[p];
	fprintf(f, "\nPROBLEM %zu: ", nth);
	dt_put_safe(f, pr->title);
	fprintf(f, "\n  in %u of %u failing runs and in no passing run\n  cause    %s\n  advice   ",
	        pr->nfail, s->failures, dt_cause_name(pr->cause));
	dt_put_safe(f, pr->advice);
	fputc('\n', f);
	int first = 1;
	for (size_t k = 0; k < s->nkeys; k++)
		if (s->keys[k].problem == p &&
		    dt_soak_separates(s->keys[k].nfail, s->keys[k].npass)) {
			fputs(first ? "  refused  " : "           ", f);
			dt_soak_put_refusal(f, s, &s->keys[k]);
			first = 0;
		}
}

/* The problems present in failing runs and absent from passing ones, then
 * any other refusal seen only in failing runs; or that there are none. */
static void soak_print_separating(FILE *f, const struct dt_soak *s)
{
	size_t nsep = 0, nprob = 0, other = 0;
	for (size_t p = 0; p < s->nproblems; p++)
		nprob += dt_soak_separates(s->problems[p].nfail, s->problems[p].npass);
	for (size_t k = 0; k < s->nkeys; k++) {
		const struct dt_soak_key *kk = &s->keys[k];
		int sep = dt_soak_separates(kk->nfail, kk->npass);
		nsep += sep;
		other += sep && (kk->problem == SIZE_MAX ||
		                 !dt_soak_separates(s->problems[kk->problem].nfail,
		                                    s->problems[kk->problem].npass));
	}
	size_t nfailing = 0;
	for (size_t k = 0; k < s->nkeys; k++)
		nfailing += s->keys[k].nfail != 0;
	if (!nfailing) {
		fprintf(f, "No refusal was recorded in any failing run: the failures have another "
		           "cause.\n");
		return;
	}
	if (!nsep) {
		fprintf(
		    f, "No refusal separates failing runs from passing ones: every refusal in "
		       "them was also seen in passing runs, so the failures have another cause.\n");
		return;
	}
	char phrase[64];
	dt_problems_phrase(nprob, phrase, sizeof(phrase));
	phrase[0] = (char)(phrase[0] == 'n' ? 'N' : phrase[0]);
	fprintf(f, "%s in failing runs and in no passing run (the likely cause):\n", phrase);
	for (size_t p = 0, nth = 0; p < s->nproblems; p++)
		if (dt_soak_separates(s->problems[p].nfail, s->problems[p].npass))
			soak_print_problem(f, s, p, ++nth);
	if (!other)
		return;
	fprintf(f, "\nRefusals seen only in failing runs, of problems passing runs had too:\n");
	for (size_t k = 0; k < s->nkeys; k++) {
		const struct dt_soak_key *kk = &s->keys[k];
		if (dt_soak_separates(kk->nfail, kk->npass) &&
		    (kk->problem == SIZE_MAX ||
		     !dt_soak_separates(s->problems[kk->problem].nfail,
		                        s->problems[kk->problem].npass))) {
			fputs("  ", f);
			dt_soak_put_refusal(f, s, kk);
		}
	}
}

void dt_soak_put_cmd(FILE *f, char *const *cmd, void (*put)(FILE *, const char *))
{
	int expect = 0;
	for (char *const *c = cmd; *c; c++) {
		size_t n = strlen(*c);
		int before = expect;
		size_t need = dt_redact_arg(*c, n, NULL, 0, &expect);
		char *word = malloc(need + 1);
		if (!word)
			return;
		word[dt_redact_arg(*c, n, word, need, &before)] = 0;
		if (c != cmd)
			fputc(' ', f);
		put(f, word);
		free(word);
	}
}

void dt_soak_put_rerun(FILE *f, const struct dt_soak_opts *o, int index)
{
	fprintf(f, "denytrace run --seed %llu", (unsigned long long)dt_soak_seed(o, index));
	for (size_t k = 0; k < o->ndeny; k++) {
		fputs(" --deny ", f);
		dt_shell_word(f, o->deny[k]);
	}
	fputs(" -- ", f);
	dt_soak_put_cmd(f, o->cmd, dt_shell_word);
	fputc('\n', f);
}

/* The recorded facts whose value was seen in failing runs and in no
 * passing run, most failing runs first; or that none was. */
static void soak_print_facts(FILE *f, const struct dt_soak *s)
{
	size_t order[8], n = 0;
	for (size_t i = 0; i < s->nfacts; i++) {
		if (!dt_soak_fact_separates(s, i))
			continue;
		size_t at = n < 8 ? n++ : 8;
		while (at > 0 && s->facts[order[at - 1]].nfail < s->facts[i].nfail) {
			if (at < 8)
				order[at] = order[at - 1];
			at--;
		}
		if (at < 8)
			order[at] = i;
	}
	if (!s->nfacts || s->failures == s->done)
		return;
	if (!n) {
		fprintf(f, "\nNo recorded fact separates failing runs from passing ones (compared: "
		           "modes, owners, mounts, uid, gid, groups, seccomp, parent program).\n");
		return;
	}
	fprintf(f, "\nWhat differed (recorded facts of failing runs that no passing run had):\n");
	char others[512];
	for (size_t k = 0; k < n; k++) {
		const struct dt_soak_fact *fa = &s->facts[order[k]];
		dt_soak_fact_passing_values(s, order[k], others, sizeof(others));
		fputs("  ", f);
		if (fa->subject[0]) {
			dt_put_safe(f, fa->subject);
			fputc(' ', f);
		}
		dt_put_safe(f, fa->what);
		fputc(' ', f);
		dt_put_safe(f, fa->value);
		fprintf(f, ": in %u of %u failing runs, no passing run (passing runs: ", fa->nfail,
		        s->failures);
		dt_put_safe(f, others);
		fputs(")\n", f);
	}
}

/* The failing runs, how to rerun the first, and (unless quiet) its log
 * tail and report. */
static void soak_print_failures(FILE *f, const struct dt_soak *s, const struct dt_soak_opts *o,
                                const char *dir)
{
	soak_print_separating(f, s);
	soak_print_facts(f, s);
	fprintf(f, "\nFailing runs:");
	for (size_t k = 0; k < s->nfailed && k < 20; k++) {
		fprintf(f, " #%d (%s %d", s->failed[k].index,
		        s->failed[k].timed_out ? "timed out," : "exit", s->failed[k].status);
		if (s->nhosts > 1) {
			fputs(", on ", f);
			dt_put_safe(f, s->hosts[s->failed[k].host].id.hostname);
		}
		fputc(')', f);
	}
	fprintf(f, "%s\n", s->nfailed > 20 ? " ..." : "");
	if (o->keep)
		fprintf(f, "Rings of failing runs kept in %s (run-N.ring, run-N.log).\n", o->keep);
	fputs("Rerun one alone: ", f);
	dt_soak_put_rerun(f, o, s->first_fail);
	if (o->quiet || !s->first_ring[0])
		return;
	struct dt_report rep;
	char err[512];
	const char *rings[1] = {s->first_ring};
	struct dt_report_opts ro = {0};
	fprintf(f, "\nFirst failing run (#%d):\n", s->first_fail);
	char log[PATH_MAX];
	if (o->keep || dir) {
		snprintf(log, sizeof(log), "%s/run-%d.log", o->keep ? o->keep : dir, s->first_fail);
		soak_print_log_tail(f, log);
	}
	if (dt_report_load(&rep, rings, 1, err, sizeof(err)) == 0 &&
	    dt_report_build(&rep, &ro, err, sizeof(err)) == 0) {
		/* an empty report says less than one line */
		if (rep.denials)
			dt_report_text(f, &rep, 0, 0);
		else
			fprintf(f, "It recorded no refusal.\n");
	}
	dt_report_free(&rep);
}

void dt_soak_host_name(const struct dt_soak_host *h, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s", h->id.hostname[0] ? h->id.hostname : "(no hostname)");
	if (h->nshards && n >= 0 && (size_t)n < cap)
		snprintf(out + n, cap - (size_t)n, " (shard %u/%u)", h->shard, h->nshards);
}

/* Each host's runs and failures, and where failures gather beyond chance. */
static void soak_print_hosts(FILE *f, const struct dt_soak *s)
{
	if (s->nhosts < 2)
		return;
	fprintf(f, "\nHosts:\n");
	char name[512];
	for (size_t h = 0; h < s->nhosts; h++) {
		const struct dt_soak_host *ho = &s->hosts[h];
		dt_soak_host_name(ho, name, sizeof(name));
		fputs("  ", f);
		dt_put_safe(f, name);
		fprintf(f, ": %u run%s, %u failed\n", ho->runs, ho->runs == 1 ? "" : "s",
		        ho->failures);
	}
	double pv;
	size_t c = dt_soak_concentrated(s, &pv);
	if (c == SIZE_MAX)
		return;
	dt_soak_host_name(&s->hosts[c], name, sizeof(name));
	fputs("Failures gather on ", f);
	dt_put_safe(f, name);
	fprintf(f,
	        ": %u of its %u runs failed against %u of %u overall; chance alone would "
	        "put that many there in %.2g%% of soaks (corrected for %zu hosts).\n",
	        s->hosts[c].failures, s->hosts[c].runs, s->failures, s->done, 100 * pv, s->nhosts);
}

static void soak_print_missing(FILE *f, const struct dt_soak_summary *m)
{
	if (!m->missing || !m->missing[0])
		return;
	fputs("Missing: ", f);
	dt_put_safe(f, m->missing);
	fputs("; these figures are of the other shards' runs only.\n", f);
}

void dt_soak_text(FILE *f, const struct dt_soak_summary *m)
{
	const struct dt_soak *s = m->s;
	double lo, hi;
	dt_soak_wilson(s->failures, s->done, &lo, &hi);
	fprintf(f,
	        "soak: %u run%s%s in %.1f s, %u failed: flake rate %.1f%% (95%% CI "
	        "%.1f%%-%.1f%%, Wilson); seed %llu",
	        s->done, s->done == 1 ? "" : "s", m->interrupted ? " (interrupted)" : "",
	        m->elapsed, s->failures, s->done ? 100.0 * s->failures / s->done : 0.0, 100 * lo,
	        100 * hi, (unsigned long long)m->o->seed);
	if (m->o->merge)
		fprintf(f, "; merged from %zu shard%s", s->nhosts, s->nhosts == 1 ? "" : "s");
	else if (m->o->nshards)
		fprintf(f, "; shard %u/%u", m->o->shard, m->o->nshards);
	fputc('\n', f);
	soak_print_missing(f, m);
	soak_print_hosts(f, s);
	if (s->failures && s->nhosts > 1)
		fputc('\n', f);
	if (s->failures)
		soak_print_failures(f, s, m->o, m->dir);
}

/* Markdown: table cells and text hold no markup of the program's making. */
static void md_put(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (strchr("\\`*_[]<>|#", *s))
			fputc('\\', f);
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

static void soak_md_hosts(FILE *f, const struct dt_soak *s)
{
	if (s->nhosts < 2)
		return;
	fputs("\n| host | shard | runs | failed |\n|---|---|---:|---:|\n", f);
	for (size_t h = 0; h < s->nhosts; h++) {
		const struct dt_soak_host *ho = &s->hosts[h];
		fputs("| ", f);
		md_put(f, ho->id.hostname);
		if (ho->nshards)
			fprintf(f, " | %u/%u", ho->shard, ho->nshards);
		else
			fputs(" | -", f);
		fprintf(f, " | %u | %u |\n", ho->runs, ho->failures);
	}
	double pv;
	size_t c = dt_soak_concentrated(s, &pv);
	if (c == SIZE_MAX)
		return;
	fputs("\n**Failures gather on ", f);
	md_put(f, s->hosts[c].id.hostname);
	fprintf(f, "**: %u of its %u runs failed against %u of %u overall (chance: %.2g%%).\n",
	        s->hosts[c].failures, s->hosts[c].runs, s->failures, s->done, 100 * pv);
}

static void soak_md_separating(FILE *f, const struct dt_soak *s)
{
	size_t n = 0;
	for (size_t p = 0; p < s->nproblems; p++) {
		const struct dt_soak_problem *pr = &s->problems[p];
		if (!dt_soak_separates(pr->nfail, pr->npass))
			continue;
		fputs(n++ ? "" : "\n### Only in failing runs\n\n", f);
		fputs("- **", f);
		md_put(f, pr->title);
		fprintf(f, "** (`%s`): in %u of %u failing runs, no passing run. ",
		        dt_cause_name((enum dt_cause)pr->cause), pr->nfail, s->failures);
		md_put(f, pr->advice);
		fputc('\n', f);
	}
	for (size_t k = 0; k < s->nkeys; k++) {
		const struct dt_soak_key *kk = &s->keys[k];
		if (!dt_soak_separates(kk->nfail, kk->npass))
			continue;
		fputs(n++ ? "" : "\n### Only in failing runs\n\n", f);
		fputs("- ", f);
		md_put(f, kk->op);
		fputc(' ', f);
		md_put(f, kk->path);
		fprintf(f, " %s%s: in %u of %u failing runs\n", dt_errno_name(kk->err),
		        kk->injected ? " (injected)" : "", kk->nfail, s->failures);
	}
}

void dt_soak_markdown(FILE *f, const struct dt_soak_summary *m)
{
	const struct dt_soak *s = m->s;
	double lo, hi;
	dt_soak_wilson(s->failures, s->done, &lo, &hi);
	fprintf(f,
	        "## denytrace soak\n\n**%u of %u runs failed**: flake rate %.1f%% (95%% CI "
	        "%.1f%%-%.1f%%, Wilson), seed %llu",
	        s->failures, s->done, s->done ? 100.0 * s->failures / s->done : 0.0, 100 * lo,
	        100 * hi, (unsigned long long)m->o->seed);
	if (m->o->merge)
		fprintf(f, ", %zu shard%s", s->nhosts, s->nhosts == 1 ? "" : "s");
	fputs(".\n", f);
	if (m->missing && m->missing[0]) {
		fputs("\n> **Missing**: ", f);
		md_put(f, m->missing);
		fputs(". These figures are of the other shards' runs only.\n", f);
	}
	soak_md_hosts(f, s);
	if (s->failures)
		soak_md_separating(f, s);
	for (size_t i = 0, n = 0; i < s->nfacts; i++) {
		if (!dt_soak_fact_separates(s, i))
			continue;
		const struct dt_soak_fact *fa = &s->facts[i];
		char others[512];
		dt_soak_fact_passing_values(s, i, others, sizeof(others));
		fputs(n++ ? "- " : "\n### What differed\n\n- ", f);
		md_put(f, fa->subject);
		fputc(' ', f);
		md_put(f, fa->what);
		fputs(" **", f);
		md_put(f, fa->value);
		fprintf(f, "** in %u of %u failing runs, no passing run (passing runs: ", fa->nfail,
		        s->failures);
		md_put(f, others);
		fputs(")\n", f);
	}
	if (!s->failures)
		return;
	fputs("\nRerun the first failing run alone:\n\n```sh\n", f);
	dt_soak_put_rerun(f, m->o, s->first_fail);
	fputs("```\n", f);
}
