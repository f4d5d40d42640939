/* SPDX-License-Identifier: MIT */
/* Strings, lexical paths and string lists the stages share. What they
 * return is malloc'ed through xalloc.h: out of memory exits 125. */
#ifndef DENYTRACE_STRUTIL_H
#define DENYTRACE_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>

bool nonempty(const char *s);
bool starts_with(const char *s, const char *prefix);
bool ends_with(const char *s, const char *suffix);
/* The last component of path (a pointer into it). */
const char *base_name(const char *path);
/* path made absolute against base (NULL: "/"), "//", "." and ".." folded,
 * no trailing slash; symlinks left alone. */
char *normalize_path(const char *base, const char *path);
/* The directory of path, normalized ("/" for "/x"). */
char *dir_name(const char *path);

/* A list of owned strings. */
struct strlist {
	char **v;
	size_t n;
};
void strlist_push(struct strlist *l, const char *s);
bool strlist_has(const struct strlist *l, const char *s);
void strlist_free(struct strlist *l);

#endif
