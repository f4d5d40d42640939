/* SPDX-License-Identifier: MIT */
/* Internal to the roots module (roots.c, codex_cli.c, roots_codex.c, fix.c,
 * roots_env.c): the string and path helpers they share, defined in roots.c.
 * Allocation: xalloc.h (out of memory exits 125). */
#ifndef DENYTRACE_ROOTS_INT_H
#define DENYTRACE_ROOTS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "roots.h"
#include "xalloc.h"

struct strlist {
	char **v;
	size_t n;
};

bool nonempty(const char *s);
bool starts_with(const char *s, const char *prefix);
bool ends_with(const char *s, const char *suffix);
const char *base_name(const char *path);
char *normalize_path(const char *base, const char *path);
char *resolve_path(const char *path, const char *base, const char *home);
char *dir_name(const char *path);
void strlist_push(struct strlist *l, const char *s);
bool strlist_has(const struct strlist *l, const char *s);
void strlist_free(struct strlist *l);
struct dt_root *find_root(const struct dt_rootset *rs, const char *norm, enum dt_root_kind kind);

#endif
