/* SPDX-License-Identifier: MIT */
/* Internal to the roots module (roots.c, codex_cli.c, roots_codex.c, fix.c,
 * roots_env.c): the helpers they share, defined in roots.c; the general
 * ones are util/strutil.h's.
 * Allocation: xalloc.h (out of memory exits 125). */
#ifndef DENYTRACE_ROOTS_INT_H
#define DENYTRACE_ROOTS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "roots.h"
#include "strutil.h"
#include "xalloc.h"

char *resolve_path(const char *path, const char *base, const char *home);
struct dt_root *find_root(const struct dt_rootset *rs, const char *norm, enum dt_root_kind kind);

#endif
