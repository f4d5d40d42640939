/* SPDX-License-Identifier: MIT */
/* Findings: one problem with one fix. The report's groups (one per path,
 * op, errno and cause) are regrouped by what would fix them:
 *
 *   (expected root, cause, grant, subject)
 *
 * where the subject is the one path the fix names (dt_verdict.subject): for
 * file-permissions the directory or file whose mode bits refused, for
 * root-not-granted the root to grant. Five refusals of a database, its -wal
 * and -shm under one ungranted board directory are one finding.
 *
 * A pure function over plain data: it reads the groups, keeps pointers into
 * them (and into their verdicts and roots), and owns only its arrays. Hidden
 * groups (lock contention, sandbox set-up without --all) belong to no
 * finding. Output formats only read the result. */
#ifndef DENYTRACE_FINDINGS_H
#define DENYTRACE_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "classify.h"

struct dt_report_group;
struct dt_py_frame;
struct dt_difference;

/* A Python line the refusals of a finding came from (report.h's
 * dt_py_site), with how many came from it. */
struct dt_py_site {
	const struct dt_py_frame *at;
	uint64_t count;
};
#define DT_FINDING_SITES 4

struct dt_finding {
	char title[512]; /* one line: "... not granted to the sandbox" */
	enum dt_cause cause;
	const struct dt_root *root; /* the expected root, or NULL */
	int granted;                /* of that root: 1, 0, -1 unknown */
	const char *subject;        /* dt_verdict.subject; "" when the fix names no path */
	const char *reason;         /* the first group's reason (it names its own path) */
	const char *advice;         /* the fix, once: the first group's advice */
	const char *missing_right;  /* dt_verdict.missing_right, or NULL */
	const char *next;           /* what the program did next (first group that says), or NULL */
	int next_is_error;          /* next is the error SQLite returned (report.h) */
	uint64_t next_ns;           /* when that group's first refusal came */
	int intermittent;           /* some refused path was also written successfully */
	/* what separated the successful writes from the refusals: the first
	 * intermittent group's difference that names a fact, else the first's */
	const struct dt_difference *diff;
	uint64_t count;             /* refusals, all groups together */
	uint64_t first_ns, last_ns; /* first and last refusal */
	/* where in Python code its refusals came from, most first; more_sites:
	 * lines past DT_FINDING_SITES; 0 sites when no process ran Python */
	struct dt_py_site sites[DT_FINDING_SITES];
	size_t nsites;
	int more_sites;
	/* indices into the report's group array, most refusals first */
	const size_t *groups;
	size_t ngroups;
};

struct dt_findings {
	struct dt_finding *v; /* most refusals first; ties: earliest first */
	size_t n;
	size_t *idx; /* storage for every finding's groups */
};

/* Regroups groups[0..ngroups) into findings. Returns 0, or -1 when out of
 * memory (out is then empty). */
int dt_findings_build(const struct dt_report_group *groups, size_t ngroups,
                      struct dt_findings *out);
void dt_findings_free(struct dt_findings *f);

/* "refused in save_task at worker.py:3, 16 times": the file by its last
 * component (the full path is in the group's Python stack). */
const char *dt_py_site_phrase(const struct dt_py_site *s, char *buf, size_t cap);
/* "N problems" with the plural right: "no problems", "1 problem". */
const char *dt_problems_phrase(size_t n, char *buf, size_t cap);

#endif
