/* SPDX-License-Identifier: MIT */
/* An ordinary permission problem, told from a sandbox's refusal by the
 * mode bits, owner and groups the probe recorded. */
#ifndef DENYTRACE_MODEBITS_H
#define DENYTRACE_MODEBITS_H

#include <stddef.h>

#include "records.h"

/* 1 when, on a read-write mount, the mode bits deny this (non-root) process
 * what d's op needs (search on the way, wx on the directory, the sticky
 * bit, r/w on the file, ownership), with why in why (cap bytes); else 0. */
int dt_denied_by_mode(const struct dt_record *d, char *why, size_t cap);

#endif
