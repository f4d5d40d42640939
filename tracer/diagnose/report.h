/* SPDX-License-Identifier: MIT */
/* The diagnosis as plain data: records from one or more rings, the roots,
 * and refusals grouped by (path, op, errno, cause, Python line) with their
 * verdicts.
 * Output formats (report_text.c, report_json.c, report_md.c) only read it. */
#ifndef DENYTRACE_REPORT_H
#define DENYTRACE_REPORT_H

#include <stdio.h>

#include "classify.h"
#include "difference.h"
#include "findings.h"
#include "handoff.h"
#include "json.h"
#include "records.h"
#include "ringfile.h"
#include "roots.h"
#include "sqlite_role.h"

#define DT_REPORT_VERSION 1
#define DT_GROUP_MAX_PIDS 16

struct dt_report_group {
	/* stable across runs and rings: a hash of (path, op, errno, cause,
	 * Python line);
	 * JSON writes it as 16 hex digits (denials[].id, findings[].groups) */
	uint64_t id;
	const struct dt_record *rep; /* first refusal of the group */
	const char *path;            /* realpath, else abspath, else as passed */
	struct dt_verdict v;
	uint64_t count, first_ns, last_ns;
	uint64_t missing; /* refusals whose file did not exist (stat facts) */
	long pids[DT_GROUP_MAX_PIDS];
	const struct dt_record *pid_recs[DT_GROUP_MAX_PIDS]; /* a refusal of each */
	size_t npids;
	int more_pids;
	const char *next;          /* what the program did next, or NULL */
	int next_is_error;         /* next quotes the error SQLite returns (a side file it
	                            * could not create), not a step before it */
	int intermittent;          /* also written successfully in this run */
	struct dt_difference diff; /* what separated those writes from the refusals */
	int hidden;                /* lock contention or sandbox set-up, without --all */
	/* the Python line that made the call (dt_py_site), part of the
	 * group's key; NULL when the process recorded no Python frames */
	const struct dt_py_frame *py_site;
};

struct dt_report_opts {
	const char *const *roots; /* --root DIR... */
	size_t nroots;
	const char *codex_config; /* --codex-config FILE */
	const char *codex_args;   /* --codex-args '...' */
	const char *codex_bin;    /* --codex PATH: the Codex binary to ask its version */
	int all;                  /* show lock contention */
};

struct dt_report {
	struct dt_record *recs; /* every record, oldest first */
	size_t n, cap;
	const struct dt_record **procs; /* process records */
	size_t nprocs;
	struct dt_rootset roots;
	struct dt_report_group *groups;
	size_t ngroups, groups_cap;
	struct dt_findings findings; /* the groups by what would fix them (findings.h) */
	size_t *group_of;            /* per record: 1 + the index of its group, 0 for none */
	const char *const *rings;
	size_t nrings;
	struct dt_read_stats stats;
	uint64_t lost, dropped;
	uint64_t unseen; /* refusals counted, not recorded: under a process's own seccomp filter */
	/* The counting rule `run`'s summary and the report share: denials are
	 * the refusals shown (each once, injected ones merged); lock contention
	 * (hidden_denials) and bubblewrap's own set-up refusals (hidden_setup)
	 * are hidden unless --all; refusing_procs: distinct pids among the
	 * shown ones. */
	uint64_t denials, hidden_denials, hidden_setup, reopens, writes, refusing_procs;
	uint64_t by_cause[DT_CAUSE_COUNT];
	int all;
	int multihost; /* the processes ran on more than one host (or boot) */
	/* exec coverage (seccomp supervisor): every exec seen, and those the
	 * probe could not enter; no exec records means coverage was off */
	const struct dt_record **execs;
	size_t nexecs;
	const struct dt_record **blind;
	size_t nblind;
	/* set-id programs that ran without their privilege: the supervisor's
	 * no_new_privs kept their ids (their refusals: cause setid-lost) */
	const struct dt_record **setid_lost;
	size_t nsetid_lost;
	uint64_t injected_merged;       /* supervisor refusals folded into the probe's record */
	struct dt_sqlite_judge *sqlite; /* which paths are SQLite's (sqlite_role.h) */
	struct dt_handoffs handoffs;    /* failures with no refusal (handoff.h) */
};

/* Reads and merges the rings. Returns 0, or an exit status with err set. */
int dt_report_load(struct dt_report *r, const char *const *rings, size_t nrings, char *err,
                   size_t errlen);
/* One line, between before and after, of the record slots the reader
 * could not use: corrupt (written by something other than the probe),
 * skipped (a writer died mid-record) and torn (overwritten while read),
 * and whether the ring shrank while read; nothing when all were read. */
void dt_report_unreadable_line(FILE *f, const struct dt_report *r, const char *before,
                               const char *after);

/* As dt_report_load, from a ring already mapped (run's own, whose path
 * another run may have taken over); name[0] is its path. */
int dt_report_load_mapped(struct dt_report *r, const struct dt_ring *ring, const char *const *name,
                          char *err, size_t errlen);
/* Derives the roots and classifies. Returns 0, or an exit status with err
 * set (an unreadable --codex-config). */
int dt_report_build(struct dt_report *r, const struct dt_report_opts *o, char *err, size_t errlen);
void dt_report_free(struct dt_report *r);

/* 1 when the probe's refusal probe_rec is the one the seccomp supervisor
 * injected (sup_rec): same pid (or the pid inside the target's pid namespace),
 * errno and path, sup_rec first, within 1 s. */
int dt_same_injected(const struct dt_record *probe_rec, const struct dt_record *sup_rec);

/* The path a record's groups and pictures go by: realpath, else the
 * absolute path, else the path as passed, else "". */
const char *dt_report_path(const struct dt_record *d);

/* The Python frame a refusal is said to come from: the innermost one
 * outside Python's own library (sqlite3/__init__.py, pathlib.py name no
 * line of the program), else the innermost; NULL without Python frames. */
const struct dt_py_frame *dt_py_site(const struct dt_record *d);
/* The file's last component: "worker.py" for /srv/hermes/worker.py. */
const char *dt_py_basename(const char *file);
/* The process record of pid (the latest image) in the ring record of
 * came from, or NULL. */
const struct dt_record *dt_report_proc(const struct dt_report *r, const struct dt_record *of,
                                       long pid);
/* The host rec's process ran on, when the report's processes ran on more
 * than one ("?" when its process record is missing); else NULL. */
const char *dt_report_host(const struct dt_report *r, const struct dt_record *rec);
/* The process record in force when rec was written, or NULL. */
const struct dt_record *dt_report_proc_for(const struct dt_report *r, const struct dt_record *rec);

/* Findings first; verbose adds every group in full under "Details". */
void dt_report_text(FILE *f, const struct dt_report *r, int color, int verbose);
/* One line per kind of hidden refusal, "before N ... hidden; HOW shows
 * them after", in the same words for `run` and `report`. */
void dt_report_hidden_lines(FILE *f, const struct dt_report *r, const char *before, const char *how,
                            const char *after);
void dt_report_json(FILE *f, const struct dt_report *r);
void dt_report_markdown(FILE *f, const struct dt_report *r);
/* The timeline as a standalone SVG picture (report_svg.c). */
void dt_report_svg(FILE *f, const struct dt_report *r);
/* Markdown inline code that survives any bytes; in_table escapes '|'. */
void dt_md_code_span(FILE *f, const char *s, int in_table);
/* Markdown text: control bytes escaped as \xNN, |<>*_`[]\ backslashed. */
void dt_md_text(FILE *f, const char *s);
/* A fenced code block holding text (lines as they are, control bytes
 * escaped) whose fence is longer than any run of backticks in text. */
void dt_md_fence(FILE *f, const char *lang, const char *text);

/* Roots only (denytrace roots). */
void dt_roots_text(FILE *f, const struct dt_rootset *rs, int color);
void dt_roots_json_array(struct dt_json *j, const struct dt_rootset *rs);

#endif
