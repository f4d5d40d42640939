/* SPDX-License-Identifier: MIT */
/* Helpers every subcommand uses. */
#include "cli.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set once a message has said what failed: dt_finish_stdout adds none. */
static int dt_failure_said;

int dt_fail(int status, const char *fmt, ...)
{
	dt_failure_said = 1;
	va_list ap;
	va_start(ap, fmt);
	fputs("denytrace: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return status;
}

int dt_finish_stdout(int status)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	int e = errno;
	if (!dt_failure_said)
		dt_fail(0, "writing the output failed: %s", strerror(e));
	return status ? status : DT_EXIT_IO;
}

int dt_parse_u64(const char *s, uint64_t *out)
{
	/* strtoull takes "-1" as 2^64-1 and leading blanks and a "+" too */
	if (!*s || *s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (*end || errno)
		return -1;
	*out = v;
	return 0;
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

int dt_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	if (strncmp(a, name, n))
		return 0;
	if (a[n] == '=') {
		*val = a + n + 1;
		return 1;
	}
	if (a[n])
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*val = argv[++*i];
	return 1;
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
	const char *tries[] = {"%s/libdenytrace.so", "%s/../lib/denytrace/libdenytrace.so"};
	for (size_t i = 0; i < 2; i++) {
		char cand[PATH_MAX];
		snprintf(cand, sizeof(cand), tries[i], dir);
		if (access(cand, R_OK) == 0 && realpath(cand, out) && strlen(out) < cap)
			return 0;
	}
	return -1;
}
