/* SPDX-License-Identifier: MIT */
/* Helpers every subcommand uses. */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recfmt.h"
#include "ringfile.h"

int dt_fail(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	fputs("denytrace: ", stderr);
	/* messages name paths and words a traced program chose: a newline or
	 * an escape sequence in one must not forge a line or drive the
	 * terminal (dt_put_safe's rule, backslashes kept as they are) */
	for (const unsigned char *p = (const unsigned char *)(n >= 0 ? msg : "?"); *p;) {
		int len = dt_safe_len(p);
		if (len)
			fwrite(p, 1, (size_t)len, stderr);
		else
			fprintf(stderr, "\\x%02x", *p);
		p += len ? len : 1;
	}
	fputc('\n', stderr);
	free(n >= 0 ? msg : NULL);
	return status;
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
