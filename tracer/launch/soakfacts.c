/* SPDX-License-Identifier: MIT */
/* Facts across a soak's runs (soakfacts.h). */
#include "soakfacts.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difference.h"
#include "report.h"

size_t dt_soak_fact_index(struct dt_soak *s, const char *id, const char *what, const char *subject,
                          const char *value)
{
	for (size_t i = 0; i < s->nfacts; i++) {
		const struct dt_soak_fact *f = &s->facts[i];
		if (!strcmp(f->id, id) && !strcmp(f->subject, subject) && !strcmp(f->value, value))
			return i;
	}
	struct dt_soak_fact *nf = realloc(s->facts, (s->nfacts + 1) * sizeof(*nf));
	if (!nf)
		return SIZE_MAX;
	s->facts = nf;
	nf[s->nfacts] =
	    (struct dt_soak_fact){strdup(id), strdup(what), strdup(subject), strdup(value), 0, 0};
	return s->nfacts++;
}

/* One run's facts, each counted once. */
struct run_facts {
	struct dt_soak *s;
	size_t *seen, n, cap;
};

static void run_fact(void *ctx, const char *id, const char *what, const char *subject,
                     const char *shown)
{
	struct run_facts *rf = ctx;
	/* a namespace id names a run, not a state: every run has its own */
	if (!strcmp(id, "mount-namespace"))
		return;
	size_t i = dt_soak_fact_index(rf->s, id, what, subject, shown);
	if (i == SIZE_MAX)
		return;
	for (size_t k = 0; k < rf->n; k++)
		if (rf->seen[k] == i)
			return;
	if (rf->n == rf->cap) {
		size_t cap = rf->cap * 2 + 16, *ns = realloc(rf->seen, cap * sizeof(*ns));
		if (!ns)
			return;
		rf->seen = ns;
		rf->cap = cap;
	}
	rf->seen[rf->n++] = i;
}

void dt_soak_tally_facts(struct dt_soak *s, const struct dt_report *rep, int failed)
{
	struct run_facts rf = {s, NULL, 0, 0};
	for (size_t i = 0; i < rep->n; i++) {
		const struct dt_record *d = &rep->recs[i];
		size_t g = rep->group_of ? rep->group_of[i] : 0;
		int shown_refusal = d->type == DT_REC_DENIAL && g && !rep->groups[g - 1].hidden;
		if (shown_refusal || d->type == DT_REC_WRITE)
			dt_difference_each_fact(rep, d, run_fact, &rf);
	}
	for (size_t k = 0; k < rf.n; k++) {
		if (failed)
			s->facts[rf.seen[k]].nfail++;
		else
			s->facts[rf.seen[k]].npass++;
	}
	free(rf.seen);
}

static int same_fact(const struct dt_soak_fact *a, const struct dt_soak_fact *b)
{
	return !strcmp(a->id, b->id) && !strcmp(a->subject, b->subject);
}

static int fact_separates(const struct dt_soak *s, size_t i)
{
	const struct dt_soak_fact *f = &s->facts[i];
	if (!f->nfail || f->npass)
		return 0;
	for (size_t k = 0; k < s->nfacts; k++)
		if (k != i && s->facts[k].npass && same_fact(&s->facts[k], f))
			return 1;
	return 0;
}

int dt_soak_fact_separates(const struct dt_soak *s, size_t i)
{
	if (!fact_separates(s, i))
		return 0;
	/* a chmod's own target is a file-mode fact of the directory a create
	 * sees as directory-mode: the same thing said once */
	const struct dt_soak_fact *f = &s->facts[i];
	for (size_t k = 0; k < i; k++)
		if (!strcmp(s->facts[k].subject, f->subject) &&
		    !strcmp(s->facts[k].what, f->what) && !strcmp(s->facts[k].value, f->value) &&
		    fact_separates(s, k))
			return 0;
	return 1;
}

void dt_soak_fact_passing_values(const struct dt_soak *s, size_t i, char *out, size_t cap)
{
	size_t at = 0;
	out[0] = 0;
	for (size_t k = 0; k < s->nfacts && at < cap; k++)
		if (s->facts[k].npass && same_fact(&s->facts[k], &s->facts[i]))
			at += (size_t)snprintf(out + at, cap - at, "%s%s", at ? ", " : "",
			                       s->facts[k].value);
}

void dt_soak_facts_free(struct dt_soak *s)
{
	for (size_t i = 0; i < s->nfacts; i++) {
		free(s->facts[i].id);
		free(s->facts[i].what);
		free(s->facts[i].subject);
		free(s->facts[i].value);
	}
	free(s->facts);
}
