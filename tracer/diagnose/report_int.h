/* SPDX-License-Identifier: MIT */
/* Internal to report.c and report_roots.c. */
#ifndef DENYTRACE_REPORT_INT_H
#define DENYTRACE_REPORT_INT_H

#include <string.h>

#include "report.h"

static inline int dt_streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* The file name of argv[0] or argv[1] (a script run by its interpreter) holds word:
 * rec is that program's. */
int dt_argv_mentions(const struct dt_record *rec, const char *word);
/* Roots: explicit, Codex, Hermes/hcom from every environment seen,
 * effective from sandboxed processes. Returns 0, or an exit status with
 * err set. */
int dt_report_roots(struct dt_report *r, const struct dt_report_opts *o, int hcom, char *err,
                    size_t errlen);

#endif
