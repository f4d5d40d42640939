/* SPDX-License-Identifier: MIT */
/* denytrace doctor's checks, each a verdict (ok, warn, fail), what was
 * found, and the fix. */
#ifndef DENYTRACE_DOCTOR_H
#define DENYTRACE_DOCTOR_H

#include <stddef.h>

#include "codex_shapes.h"
#include "json.h"

enum { DT_DOCTOR_NCHECKS = 9 }; /* the last only with --codex-shapes */

enum dt_check_status { DT_CHECK_OK, DT_CHECK_WARN, DT_CHECK_FAIL };

struct dt_check {
	const char *name;
	enum dt_check_status status;
	char detail[1024];
	char fix[512];
};

/* Runs the checks into checks (DT_DOCTOR_NCHECKS places); with shapes
 * (dt_ncodex_shapes places) also every checked Codex launch shape, and
 * *shapes_ran says whether they ran. Returns how many checks ran. */
size_t dt_doctor_run(struct dt_check *checks, struct dt_codex_shape_result *shapes,
                     int *shapes_ran);
/* The shapes' verdicts: a "codex_shapes" key and its array; the text
 * lines for those that differ or did not run. */
void dt_doctor_shapes_json(struct dt_json *j, const struct dt_codex_shape_result *res);
void dt_doctor_shapes_text(const struct dt_codex_shape_result *res);

#endif
