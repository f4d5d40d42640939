/* SPDX-License-Identifier: MIT */
#include "strutil.h"

#include <stdlib.h>
#include <string.h>

#include "pathnorm.h"
#include "xalloc.h"

bool nonempty(const char *s)
{
	return s && *s;
}

bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Lexical normalisation: path made absolute against base (NULL: "/"), with
 * "//", "." and ".." folded and no trailing slash. ".." at the top stays at
 * "/", as the kernel does. Symlinks are left alone on purpose: a root is
 * compared by what was written and, separately, by its realpath.
 */
char *normalize_path(const char *base, const char *path)
{
	size_t cap = (base ? strlen(base) : 0) + strlen(path) + 3; /* always fits */
	char *out = xrealloc(NULL, cap);

	dt_normalize(out, cap, base, path);
	return out;
}

char *dir_name(const char *path)
{
	char *d = normalize_path(NULL, path);
	char *slash = strrchr(d, '/');

	if (slash == d)
		d[1] = 0;
	else if (slash)
		*slash = 0;
	return d;
}

void strlist_push(struct strlist *l, const char *s)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = xstrdup(s);
}

bool strlist_has(const struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

void strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
