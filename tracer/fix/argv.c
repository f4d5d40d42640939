/* SPDX-License-Identifier: MIT */
/* The launch's command line rewritten with a fix: bubblewrap's mounts,
 * Codex's -c and --add-dir (fix.h), and the words that go into it. */
#include "fix.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codexargs.h"
#include "fix_int.h"
#include "mounts.h"
#include "names.h"
#include "recfmt.h"
#include "roots_int.h"

/* s as one shell word (recfmt's quoting), malloc'ed. */
char *fix_sh_word(const char *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		dt_out_of_memory();
	dt_shell_word(f, s);
	if (fclose(f) != 0)
		dt_out_of_memory();
	return out;
}

/* "OPT 'src' 'dir'": a bwrap mount as one line to paste into a shell. */
char *fix_mount_words(const char *opt, const char *src, const char *dir)
{
	char *qs = fix_sh_word(src), *qd = fix_sh_word(dir);
	char *line = xasprintf("%s %s %s", opt, qs, qd);
	free(qs);
	free(qd);
	return line;
}

/* s as a C string literal, quotes included: a path pasted into a program
 * must stay one string whatever bytes it holds. */
char *fix_c_string(const char *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		dt_out_of_memory();
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(f, "\\%03o", *p); /* octal: no hex digit can follow into it */
		else
			fputc(*p, f);
	fputc('"', f);
	if (fclose(f) != 0)
		dt_out_of_memory();
	return out;
}

void dt_argv_copy(struct dt_argv *a, const char *const *argv, size_t argc)
{
	a->v = xrealloc(NULL, (argc + 1) * sizeof(*a->v));
	for (size_t i = 0; i < argc; i++)
		a->v[i] = xstrdup(argv[i] ? argv[i] : "");
	a->v[argc] = NULL;
	a->n = argc;
}

void dt_argv_free(struct dt_argv *a)
{
	for (size_t i = 0; a->v && i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = 0;
}

static void argv_insert(struct dt_argv *a, size_t at, const char *word)
{
	a->v = xrealloc(a->v, (a->n + 2) * sizeof(*a->v));
	memmove(a->v + at + 1, a->v + at, (a->n - at + 1) * sizeof(*a->v));
	a->v[at] = xstrdup(word);
	a->n++;
}

static void argv_erase(struct dt_argv *a, size_t at, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(a->v[at + i]);
	memmove(a->v + at, a->v + at + count, (a->n - at - count + 1) * sizeof(*a->v));
	a->n -= count;
}

/* ---- bubblewrap ---- */

enum bw_role { BW_OTHER, BW_RW, BW_RO, BW_MOUNT };

static const struct bw_opt {
	const char *name;
	int nargs;
	enum bw_role role;
} bw_opts[] = {
#define BWRAP_OPT(name, nargs, role) {name, nargs, role},
#include "bwrap_options.def"
#undef BWRAP_OPT
};

static const struct bw_opt *bw_lookup(const char *a)
{
	for (size_t k = 0; k < sizeof(bw_opts) / sizeof(*bw_opts); k++)
		if (!strcmp(a, bw_opts[k].name))
			return &bw_opts[k];
	return NULL;
}

long dt_argv_find_bwrap(const char *const *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++)
		if (argv[i] && !strcmp(base_name(argv[i]), "bwrap"))
			return (long)i;
	return -1;
}

long dt_argv_find_landlock(const char *const *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++)
		if (argv[i] && !strcmp(base_name(argv[i]), "landlock-run"))
			return (long)i;
	return -1;
}

void dt_landlock_add_rules(struct dt_argv *a, size_t at, char *const *dirs, size_t ndirs,
                           const char *rights, int abi)
{
	for (size_t i = at + 1; i + 1 < a->n && strcmp(a->v[i], "--"); i++)
		if (!strcmp(a->v[i], "--abi") && atoi(a->v[i + 1]) < abi) {
			free(a->v[i + 1]);
			a->v[i + 1] = xasprintf("%d", abi);
		}
	for (size_t k = ndirs; k-- > 0;) {
		char *rule = xasprintf("%s=%s", dirs[k], rights);
		argv_insert(a, at + 1, rule);
		argv_insert(a, at + 1, "--rule");
		free(rule);
	}
}

long dt_argv_find_codex(const char *const *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++)
		if (argv[i] && dt_argv_is_codex(argv + i, argc - i))
			return (long)i;
	return -1;
}

/* The mount of the bwrap command line that decides about dir: the last
 * one whose destination contains it. */
struct bw_scan {
	long decider;     /* index of its option word, -1: none */
	size_t decider_n; /* its words, the option included */
	size_t cmd;       /* where options end: "--" or the command */
};

static int bw_scan(const struct dt_argv *a, size_t at, const char *dir, struct bw_scan *s,
                   char *what, size_t cap)
{
	size_t i = at + 1;
	s->decider = -1;
	while (i < a->n && strcmp(a->v[i], "--") && !strncmp(a->v[i], "--", 2)) {
		const struct bw_opt *o = bw_lookup(a->v[i]);
		if (!o || i + (size_t)o->nargs >= a->n) {
			snprintf(what, cap, "bwrap option %s is %s", a->v[i],
			         o ? "missing its value" : "not one bwrap 0.8 knows");
			return -1;
		}
		const char *dest = o->nargs ? a->v[i + (size_t)o->nargs] : NULL;
		if (o->role != BW_OTHER && dest && dt_path_under(dir, dest)) {
			s->decider = (long)i;
			s->decider_n = 1 + (size_t)o->nargs;
		}
		i += 1 + (size_t)o->nargs;
	}
	if (i >= a->n) {
		snprintf(what, cap, "the bwrap command line has no command to run");
		return -1;
	}
	s->cmd = i;
	return 0;
}

char *dt_bwrap_host_path(const struct dt_argv *a, size_t at, const char *dir)
{
	struct bw_scan s;
	char what[256];
	if (bw_scan(a, at, dir, &s, what, sizeof(what)) < 0)
		return NULL;
	const struct bw_opt *o = s.decider >= 0 ? bw_lookup(a->v[s.decider]) : NULL;
	if (!o || (o->role != BW_RO && o->role != BW_RW))
		return xstrdup(dir);
	const char *dest = a->v[s.decider + 2], *from = a->v[s.decider + 1];
	const char *rest = dir + strlen(dest);
	return xasprintf("%s%s%s", strcmp(from, "/") ? from : "",
	                 *rest == '/' || !strcmp(dest, "/") ? "" : "/",
	                 !strcmp(dest, "/") ? dir : rest);
}

int dt_bwrap_grant(struct dt_argv *a, size_t at, const char *dir, char *what, size_t cap)
{
	struct bw_scan s;
	if (bw_scan(a, at, dir, &s, what, cap) < 0)
		return -1;
	const struct bw_opt *o = s.decider >= 0 ? bw_lookup(a->v[s.decider]) : NULL;
	if (o && o->role == BW_RW) {
		char *m = fix_mount_words(o->name, a->v[s.decider + 1], a->v[s.decider + 2]);
		snprintf(what, cap, "%s already makes %s writable", m, dir);
		free(m);
		return 1;
	}
	if (o && o->role == BW_RO && !strcmp(a->v[s.decider + 2], dir)) {
		/* "--ro-bind" -> "--bind", "--ro-bind-try" -> "--bind-try" */
		char *rw = xasprintf("--%s", o->name + 5);
		char *m = fix_mount_words(rw, a->v[s.decider + 1], dir);
		snprintf(what, cap, "%s instead of %s", m, o->name);
		free(m);
		free(a->v[s.decider]);
		a->v[s.decider] = rw;
		return 0;
	}
	char *src = dt_bwrap_host_path(a, at, dir);
	if (!src)
		src = xstrdup(dir);
	size_t pos = s.decider >= 0 ? (size_t)s.decider + s.decider_n : s.cmd;
	argv_insert(a, pos, "--bind");
	argv_insert(a, pos + 1, src);
	argv_insert(a, pos + 2, dir);
	char *m = fix_mount_words("--bind", src, dir);
	snprintf(what, cap, "%s", m);
	free(m);
	free(src);
	return 0;
}

int dt_bwrap_writable_sources(const char *const *argv, size_t argc, const char **out, size_t cap)
{
	/* only bwrap as the command itself: a word before it runs unsandboxed */
	if (!argc || !argv[0] || strcmp(base_name(argv[0]), "bwrap"))
		return -1;
	size_t n = 0, i = 1;
	while (i < argc && strcmp(argv[i], "--") && !strncmp(argv[i], "--", 2)) {
		const struct bw_opt *o = bw_lookup(argv[i]);
		/* a descriptor's directory or an overlay's upper one: host
		 * places the command line does not name; --args FD: options
		 * it does not show (a --bind among them) */
		if (!o || i + (size_t)o->nargs >= argc || !strcmp(o->name, "--bind-fd") ||
		    !strcmp(o->name, "--overlay") || !strcmp(o->name, "--args"))
			return -1;
		if (o->role == BW_RW) {
			if (n == cap)
				return -1;
			out[n++] = argv[i + 1];
		}
		i += 1 + (size_t)o->nargs;
	}
	return (int)n;
}

/* ---- Codex ---- */

char *dt_codex_roots_value(const char *const *roots, size_t nroots)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	if (!f)
		dt_out_of_memory();
	fputs("sandbox_workspace_write.writable_roots=[", f);
	for (size_t i = 0; i < nroots; i++) {
		char *q = dt_toml_quote(roots[i]);
		fprintf(f, "%s%s", i ? "," : "", q ? q : "\"\"");
		free(q);
	}
	fputc(']', f);
	if (fclose(f) != 0)
		dt_out_of_memory();
	return s;
}

static int is_roots_override(const struct dt_codex_override *o)
{
	return o->nkeys == 2 && !strcmp(o->keys[0], "sandbox_workspace_write") &&
	       !strcmp(o->keys[1], "writable_roots");
}

int dt_codex_set_roots(struct dt_argv *a, size_t at, const char *const *roots, size_t nroots,
                       int workspace_write, char *what, size_t cap)
{
	struct dt_codex_cli cli = {0};
	dt_codex_cli_parse(NULL, &cli, (const char *const *)a->v + at, a->n - at);
	if (cli.refused) {
		snprintf(what, cap, "Codex would refuse the command line: %s", cli.refused);
		dt_codex_cli_free(&cli);
		return -1;
	}
	size_t pos = cli.config_end ? cli.config_end : cli.args_start;
	/* from the last: indices of earlier ones stay valid */
	for (size_t k = cli.nov; k-- > 0;) {
		const struct dt_codex_override *o = &cli.ov[k];
		if (!is_roots_override(o))
			continue;
		argv_erase(a, at + o->argi, o->argn);
		if (o->argi < pos)
			pos -= o->argn;
	}
	dt_codex_cli_free(&cli);
	char *val = dt_codex_roots_value(roots, nroots);
	argv_insert(a, at + pos, "-c");
	argv_insert(a, at + pos + 1, val);
	if (workspace_write) {
		argv_insert(a, at + pos + 2, "-c");
		argv_insert(a, at + pos + 3, "sandbox_mode=\"workspace-write\"");
	}
	char *w = fix_sh_word(val);
	snprintf(what, cap, "-c %s%s", w,
	         workspace_write ? " -c 'sandbox_mode=\"workspace-write\"'" : "");
	free(w);
	free(val);
	return 0;
}

/* --add-dir DIR for each root, after the subcommand (exec) or the
 * program: before a subcommand it would be the interactive CLI's. */
int fix_codex_add_dirs(struct dt_argv *a, size_t at, const char *const *roots, size_t nroots)
{
	struct dt_codex_cli cli = {0};
	dt_codex_cli_parse(NULL, &cli, (const char *const *)a->v + at, a->n - at);
	size_t pos = cli.args_start;
	for (size_t i = at; cli.subcommand && i < a->n; i++)
		if (a->v[i] == cli.subcommand)
			pos = i - at + 1;
	int bad = cli.refused != NULL || !cli.add_dir_ok;
	dt_codex_cli_free(&cli);
	if (bad)
		return -1;
	for (size_t k = 0; k < nroots; k++) {
		argv_insert(a, at + pos++, "--add-dir");
		argv_insert(a, at + pos++, roots[k]);
	}
	return 0;
}

/* ---- the fixes ---- */
