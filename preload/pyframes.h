/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's Python stack, for refusal records: when the process
 * runs CPython (3.11 or later, its symbols exported by the main program),
 * DT_T_PYFRAME fields, innermost first, and DT_T_PYTRUNC when the stack was
 * deeper than the record keeps. Anything else (no Python, an interpreter
 * finalizing, a thread Python does not know) adds nothing.
 */
#ifndef DENYTRACE_PYFRAMES_H
#define DENYTRACE_PYFRAMES_H

#include <stddef.h>

#include "probe.h"
#include "ring.h"

/* scratch: memory the probe owns, free for the duration of the call, where
 * CPython's dump is read back (at least a few KiB). Never from a vfork
 * child (not even the lookup: the memory is its parent's); the caller
 * knows one by its pid. */
DT_HIDDEN void dt_put_pyframes(struct dt_buf *b, char *scratch, size_t cap);

#endif
