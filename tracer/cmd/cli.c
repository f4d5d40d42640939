/* SPDX-License-Identifier: MIT */
/* Helpers every subcommand uses. */
#include "cli.h"

#include <dirent.h>
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

#include "recfmt.h"
#include "ringfile.h"

/* Set once a message has said what failed: dt_finish_stdout adds none. */
static int dt_failure_said;

/* keep_lines: the message's newlines are its own (text from the user's
 * command line laid out on several lines), not a forged line. */
static void dt_vfail(int keep_lines, const char *fmt, va_list ap)
{
	dt_failure_said = 1;
	char *msg = NULL;
	int n = vasprintf(&msg, fmt, ap);
	fputs("denytrace: ", stderr);
	/* messages name paths and words a traced program chose: a newline or
	 * an escape sequence in one must not forge a line or drive the
	 * terminal (dt_put_safe's rule, backslashes kept as they are) */
	for (const unsigned char *p = (const unsigned char *)(n >= 0 ? msg : "?"); *p;) {
		int len = dt_safe_len(p);
		if (len)
			fwrite(p, 1, (size_t)len, stderr);
		else if (keep_lines && *p == '\n')
			fputc('\n', stderr);
		else
			fprintf(stderr, "\\x%02x", *p);
		p += len ? len : 1;
	}
	fputc('\n', stderr);
	free(n >= 0 ? msg : NULL);
}

int dt_fail(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dt_vfail(0, fmt, ap);
	va_end(ap);
	return status;
}

int dt_fail_lines(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dt_vfail(1, fmt, ap);
	va_end(ap);
	return status;
}

int dt_color_wanted(const char *when)
{
	if (when && !strcmp(when, "always"))
		return 1;
	if (when && !strcmp(when, "never"))
		return 0;
	const char *nc = getenv("NO_COLOR");
	return isatty(1) && !(nc && *nc);
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

/* The ring's creation time, 0 when path holds no ring we can read. */
static uint64_t cli_ring_created(const char *path)
{
	struct dt_ringfile rf;
	char err[256];
	if (dt_ringfile_open(path, &rf, err, sizeof(err)) != 0)
		return 0;
	uint64_t created = rf.ring.hdr->created_ns;
	dt_ringfile_close(&rf);
	return created;
}

/* A run that found the default ring in use wrote its own beside it
 * (denytrace-PID.ring, run.h): name the newest one created after it. */
static void cli_say_newer_rings(const char *cmd, uint64_t created)
{
	DIR *d = opendir(".");
	if (!d)
		return;
	char newest[NAME_MAX + 1] = "";
	uint64_t newest_at = created;
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, "denytrace-", 10) || len < 15 ||
		    strcmp(e->d_name + len - 5, ".ring"))
			continue;
		uint64_t at = cli_ring_created(e->d_name);
		n += at > created;
		if (at > newest_at) {
			newest_at = at;
			snprintf(newest, sizeof(newest), "%s", e->d_name);
		}
	}
	closedir(d);
	if (!n)
		return;
	fprintf(stderr, "denytrace: %s: %zu newer ring%s beside it, from %s that found %s in use",
	        cmd, n, n == 1 ? "" : "s", n == 1 ? "a run" : "runs", DT_DEFAULT_RING);
	fputs("; the newest: denytrace ", stderr);
	fputs(cmd, stderr);
	fputc(' ', stderr);
	dt_shell_word(stderr, newest);
	fputc('\n', stderr);
}

int dt_default_ring_check(const char *cmd)
{
	struct stat st;
	if (lstat(DT_DEFAULT_RING, &st) == 0 || errno != ENOENT) {
		fprintf(stderr, "denytrace: %s: reading ./%s\n", cmd, DT_DEFAULT_RING);
		cli_say_newer_rings(cmd, cli_ring_created(DT_DEFAULT_RING));
		return 0;
	}
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
