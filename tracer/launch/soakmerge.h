/* SPDX-License-Identifier: MIT */
/* soak --merge: the JSON summaries of the shards of one soak (soak --shard
 * K/N on many machines) added up into the struct dt_soak one machine's
 * soak would have made, each shard's machine a host of its own. Summaries
 * come from other machines: they are data, checked before they count. */
#ifndef DENYTRACE_SOAKMERGE_H
#define DENYTRACE_SOAKMERGE_H

#include <stddef.h>

#include "soak.h"

struct dt_jv;

/* What the merge read that the summary's renderers need besides s. */
struct dt_soak_merged {
	struct dt_jv *first; /* the first summary: owns the strings below */
	char **cmd;          /* its command (redacted as it was written) */
	const char **deny;
	double elapsed; /* the longest shard's */
	int interrupted;
	char missing[1024]; /* "shard 3/4 (runs 3, 7, 11)", or "" */
};

/* Reads files[0..n) into s (zeroed, first_fail -1) and o (seed, runs,
 * command, --deny, shard count). Returns -1 to go on, else the exit status
 * with the message printed: NOINPUT (unreadable), BADINPUT (not a soak
 * summary, or one whose runs are not its shard's), MISMATCH (not of one
 * soak, or a shard twice). A missing shard is not an error here: m->missing
 * names it. */
int dt_soak_merge(struct dt_soak *s, struct dt_soak_opts *o, struct dt_soak_merged *m,
                  char *const *files, size_t n);
void dt_soak_merged_free(struct dt_soak_merged *m);

/* The host whose share of the failures chance explains least, when chance
 * explains it at less than 1% after a Bonferroni correction for the number
 * of hosts (the binomial tail of its failures at the overall rate), with
 * that corrected probability in *pvalue; else SIZE_MAX. */
size_t dt_soak_concentrated(const struct dt_soak *s, double *pvalue);

#endif
