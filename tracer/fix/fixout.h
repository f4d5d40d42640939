/* SPDX-License-Identifier: MIT */
/*
 * denytrace fix's outputs, from its inputs, plan and proof (fixrun.h):
 * the text for a terminal, the JSON contract (opts_fix.def's --format says
 * its fields), and RING.fix.md, the proof `denytrace evidence` appends.
 * They only read what they are given.
 */
#ifndef DENYTRACE_FIXOUT_H
#define DENYTRACE_FIXOUT_H

#include <stddef.h>
#include <stdio.h>

#include "fixrun.h"
#include "handoff.h"
#include "handoff_fix.h"

/* v is NULL (or empty) without --verify. */
void dt_fix_text(FILE *f, const struct dt_fix_inputs *in, const struct dt_fix_plan *plan,
                 const struct dt_verify *v);
/* Failures with no refusal (handoff.h): their change, said only. */
void dt_fix_text_handoffs(FILE *f, const struct dt_handoffs *h, const struct dt_handoff_verify *hv);
void dt_fix_json(FILE *f, const char *const *rings, size_t nrings, const struct dt_fix_inputs *in,
                 const struct dt_fix_plan *plan, const struct dt_verify *v,
                 const struct dt_handoffs *h, const struct dt_handoff_verify *hv);
/* " WORD WORD...", each a shell word. */
void dt_fix_put_argv(FILE *f, char *const *argv);
/* RING.fix.md: "Suggested fix" and "Verified", the refusals' and the
 * handoff findings' (h, hv), appended to report.md by
 * `denytrace evidence` (sidecar.h: never written through what the traced
 * program put there). Returns 0, or as dt_sidecar_commit 1 (written, not
 * vouched for evidence) or -1, with a reason in err. */
int dt_fix_write_proof(const char *ring, const struct dt_fix_inputs *in,
                       const struct dt_fix_plan *plan, const struct dt_verify *v,
                       const struct dt_handoffs *h, const struct dt_handoff_verify *hv, char *err,
                       size_t errlen);

#endif
