/* SPDX-License-Identifier: MIT */
#ifndef DENYTRACE_PATHNORM_H
#define DENYTRACE_PATHNORM_H

#include <stddef.h>

/* Joins path to base (unless path is absolute or base NULL) and removes
 * ".", ".." and repeated slashes without touching the filesystem; ".." at
 * the top stays at "/", as the kernel does; no trailing slash. Returns the
 * length, 0 if it did not fit in cap. */
size_t dt_normalize(char *out, size_t cap, const char *base, const char *path);

#endif
