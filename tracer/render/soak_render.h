/* SPDX-License-Identifier: MIT */
/* A soak's summary, as text, Markdown, JSON and JUnit XML: the same for a
 * soak run here and for the shards' summaries soak --merge added up. The
 * JSON is also what --merge reads back (soakmerge.h), so it carries every
 * run and every refusal's counts, not only the separating ones. */
#ifndef DENYTRACE_SOAK_RENDER_H
#define DENYTRACE_SOAK_RENDER_H

#include <stdio.h>
#include <time.h>

#include "soak.h"

/* What the summary is of. */
struct dt_soak_summary {
	struct dt_soak *s; /* its results are sorted by index for JUnit */
	const struct dt_soak_opts *o;
	const char *dir; /* where the first failing run's log is, or NULL */
	double elapsed;
	int interrupted;
	time_t started;
	/* soak --merge: the shards whose summary was not given, one line
	 * ("shard 3/4: runs 3, 7, 11"), or "" */
	const char *missing;
};

/* The format's name and version, in every JSON summary: what --merge
 * accepts. */
#define DT_SOAK_FORMAT "denytrace-soak-summary"
#define DT_SOAK_FORMAT_VERSION 1

void dt_soak_text(FILE *f, const struct dt_soak_summary *m);
void dt_soak_markdown(FILE *f, const struct dt_soak_summary *m);
void dt_soak_json(FILE *f, const struct dt_soak_summary *m);
void dt_soak_junit(FILE *f, const struct dt_soak_summary *m);

/* Shared by the formats. */
int dt_soak_separates(unsigned nfail, unsigned npass);
/* The command's words with their secrets redacted (secrets.h), each
 * through put: CI keeps summaries where anyone on the project reads them. */
void dt_soak_put_cmd(FILE *f, char *const *cmd, void (*put)(FILE *, const char *));
/* "openat /x/k.db-journal EROFS (injected): in 3 of 4 failing runs" */
void dt_soak_put_refusal(FILE *f, const struct dt_soak *s, const struct dt_soak_key *k);
/* "denytrace run --seed N [--deny RULE]... -- COMMAND", pasteable. */
void dt_soak_put_rerun(FILE *f, const struct dt_soak_opts *o, int index);
/* "host-a (shard 1/4)" */
void dt_soak_host_name(const struct dt_soak_host *h, char *out, size_t cap);

#endif
