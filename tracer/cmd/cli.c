/* SPDX-License-Identifier: MIT */
/* Helpers every subcommand uses. */
#include "cli.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int dt_fail(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("denytrace: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return status;
}

int dt_default_ring_check(const char *cmd)
{
	struct stat st;
	if (lstat(DT_DEFAULT_RING, &st) == 0 || errno != ENOENT)
		return 0;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), ".");
	return dt_fail(DT_EXIT_NOINPUT,
	               "%s: no ring given and no %s in %s; record one first with `denytrace run "
	               "-- COMMAND`, or name a ring: denytrace %s RING",
	               cmd, DT_DEFAULT_RING, cwd, cmd);
}

/* Damerau-Levenshtein (optimal string alignment) distance of a and b,
 * both under 64 bytes; larger inputs count as far. */
static size_t dt_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la >= 64 || lb >= 64)
		return 64;
	size_t d[64][64];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t best = d[i - 1][j - 1] + cost;
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

const char *dt_nearest_word(const char *typed, const char *const *words, size_t n)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;
	for (size_t k = 0; k < n; k++) {
		size_t d = dt_edit_distance(typed, words[k]);
		if (d < best_d) {
			best_d = d;
			best = words[k];
		}
	}
	/* git's rule of thumb: a third of the word, at least one edit */
	size_t len = strlen(typed);
	size_t limit = len / 3 > 1 ? len / 3 : 1;
	if (len > 3 && limit < 2)
		limit = 2;
	return best && best_d <= limit ? best : NULL;
}

const char *dt_probe_path_problem(const char *path)
{
	/* ld.so splits LD_PRELOAD at spaces, tabs, newlines and colons and
	 * has no escape: such a path preloads pieces that do not exist. */
	if (strpbrk(path, ":"))
		return "a colon";
	if (strpbrk(path, " \t\n"))
		return "a space";
	return NULL;
}

int dt_find_probe(char *out, size_t cap)
{
	const char *env = getenv("DENYTRACE_PROBE");
	if (env && *env) {
		if (!realpath(env, out) || access(out, R_OK))
			return -1;
		return 0;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	const char *dir = dirname(self);
	/* beside the binary (the build tree), make install's PREFIX/lib, and
	 * the Debian package's multiarch directory */
	const char *tries[] = {
	    "%s/libdenytrace.so",
	    "%s/../lib/denytrace/libdenytrace.so",
#ifdef DT_MULTIARCH
	    "%s/../lib/" DT_MULTIARCH "/denytrace/libdenytrace.so",
#endif
	};
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		char cand[PATH_MAX];
		snprintf(cand, sizeof(cand), tries[i], dir);
		if (access(cand, R_OK) == 0 && realpath(cand, out) && strlen(out) < cap)
			return 0;
	}
	return -1;
}
