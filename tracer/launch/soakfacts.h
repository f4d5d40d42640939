/* SPDX-License-Identifier: MIT */
/* What differed between failing and passing runs of a soak, in recorded
 * facts (difference.c's: a directory's mode, a read-only mount, the
 * uid...), not only in refusals: each run's facts counted once per run,
 * then the values seen in failing runs and in no passing run, where
 * passing runs recorded the same fact with another value. */
#ifndef DENYTRACE_SOAKFACTS_H
#define DENYTRACE_SOAKFACTS_H

#include <stddef.h>

#include "soak.h"

struct dt_report;

/* Counts the facts of a finished run's refusals and successful writes. */
void dt_soak_tally_facts(struct dt_soak *s, const struct dt_report *rep, int failed);
/* The fact (id, subject, value) in s->facts, added when new (soak --merge
 * adds the shards' counts to it); SIZE_MAX when out of memory. */
size_t dt_soak_fact_index(struct dt_soak *s, const char *id, const char *what, const char *subject,
                          const char *value);
/* Does fact i separate: seen in failing runs, in no passing run, while
 * passing runs recorded the same fact (id and subject) with another value? */
int dt_soak_fact_separates(const struct dt_soak *s, size_t i);
/* The values passing runs had for fact i's id and subject, ", "-separated. */
void dt_soak_fact_passing_values(const struct dt_soak *s, size_t i, char *out, size_t cap);
void dt_soak_facts_free(struct dt_soak *s);

#endif
