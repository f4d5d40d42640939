/* SPDX-License-Identifier: MIT */
/* Why only sometimes: the recorded fact that separates the successful
 * writes of a path from its refused ones (every success had X, every
 * refusal Y), ranked by what the refused call needs (a create or unlink:
 * the directory's mode and owner first; a write to an existing file: the
 * file's), then the process's uid, gid and groups, its sandbox and its
 * parent program; and who changed it: the traced call that set the value
 * the refusals saw, else the time window in which something untraced did.
 *
 * Facts that are a consequence of the call itself (a refused create finds
 * no file, a successful one leaves one) are never compared. Pure: plain
 * records in, plain data out. */
#ifndef DENYTRACE_DIFFERENCE_H
#define DENYTRACE_DIFFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "records.h"

#define DT_DIFF_VALUES 4
#define DT_DIFF_SPANS 64

struct dt_report;

struct dt_diff_side {
	uint64_t count;                  /* records compared */
	char values[DT_DIFF_VALUES][96]; /* distinct values as shown */
	size_t nvalues;                  /* how many are in values */
	int more;                        /* there were more distinct values */
};

struct dt_difference {
	int computed;       /* successes of the same kind were recorded for the path */
	const char *fact;   /* id of the separating fact ("directory-mode"), NULL: none */
	const char *what;   /* the fact in words ("mode"), NULL: none */
	char subject[4096]; /* the path it is about; "" for a fact of the process */
	struct dt_diff_side ok, refused;
	/* successful creates whose directory did not let them create: the
	 * file was already there (no create was needed), so they are left out */
	uint64_t found_existing;
	char compared[512]; /* the facts compared, comma-separated ids */
	char line[1024];    /* the one line that says it */
	/* who changed it: a traced call that set a refused value ... */
	const struct dt_record *changer;
	uint64_t changers; /* calls that set a refused value */
	char changer_value[96];
	/* ... or, when none, the window in which an untraced one did */
	int outside;
	uint64_t outside_after_ns, outside_before_ns; /* 0: unknown */
	char changed[1024];                           /* one line, "" when nothing can be said */
	/* the fact over time, for the timeline: where each span of a success's
	 * value (bad 0) or a refusal's (bad 1) began, from the records that
	 * carry it, oldest first */
	struct dt_diff_span {
		uint64_t from_ns;
		int bad;
	} spans[DT_DIFF_SPANS];
	size_t nspans;
	int more_spans; /* it flipped more often than spans holds */
};

/* Compares refusals[0..nref) with the successes[0..nok) of the same kind
 * on the same path. A NULL-fact result with computed set means no recorded
 * fact separates them; line then says so and what was compared. */
void dt_difference_compute(const struct dt_report *r, const struct dt_record *const *refusals,
                           size_t nref, const struct dt_record *const *successes, size_t nok,
                           struct dt_difference *out);

/* Each fact the comparison above reads from record d (a refusal or a
 * successful write), in its order: the directory's or the file's, as the
 * call needs, then the process's; never one the call itself decides (a
 * successful create that found its file gives no directory fact). For
 * comparing across runs (soak). */
typedef void (*dt_fact_visit_fn)(void *ctx, const char *id, const char *what, const char *subject,
                                 const char *shown);
void dt_difference_each_fact(const struct dt_report *r, const struct dt_record *d,
                             dt_fact_visit_fn fn, void *ctx);

#endif
