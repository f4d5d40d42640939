/* SPDX-License-Identifier: MIT */
/* Symbolic names for numbers in records: errno, open flags, modes, lock
 * commands. */
#ifndef DENYTRACE_NAMES_H
#define DENYTRACE_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "records.h"

const char *dt_errno_name(int e);     /* "EROFS"; "E123" if unknown */
int dt_errno_parse(const char *name); /* "EROFS" or "30" -> 30; -1 if unknown */
/* The flags of r in symbolic form for its op: "O_RDWR|O_CREAT", "F_SETLK",
 * "LOCK_EX|LOCK_NB", "W_OK", "AT_REMOVEDIR"; "" when there are none. */
void dt_flags_name(const struct dt_record *r, char *out, size_t cap);
void dt_open_flags_name(uint64_t flags, char *out, size_t cap);
/* The enum dt_kind (preload/probe.h) of an interposed call's name, from
 * preload/calls.def; -1 for another name. */
int dt_op_kind(const char *op);

/* Why the probe could not see (all of) a process, for an exec record's
 * DT_T_EXEC_BLIND reason ("static", "setid", "non-dumpable", "io_uring",
 * "no-preload"): a sentence for the report, or (brief) a parenthesis for
 * run's summary line. */
const char *dt_blind_why(const struct dt_record *e, int brief);

#endif
