/* SPDX-License-Identifier: MIT */
/* The roots a report judges against: --root, Codex's (from the first Codex
 * launch in the rings, or --codex-args), Hermes and hcom from every
 * environment recorded, and what each sandbox granted. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codex_binary.h"
#include "envfilter.h"
#include "exitcodes.h"
#include "report.h"
#include "report_int.h"
#include "words.h"

/* The config.toml snapshot (profile NULL) or the --profile layer's
 * snapshot (profile non-NULL: any layer) `denytrace codex` wrote beside its
 * launch record (same writer pid), or NULL. */
static const struct dt_record *dt_codex_config_record(const struct dt_report *r,
                                                      const struct dt_record *launch, int profile)
{
	if (launch->type != DT_REC_LAUNCH)
		return NULL;
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *c = &r->recs[i];
		if (c->type == DT_REC_CONFIG && c->pid == launch->pid && c->ring == launch->ring &&
		    !c->cfg_profile == !profile && dt_streq(c->cfg_role, "codex"))
			return c;
	}
	return NULL;
}

static const struct dt_record *dt_codex_snapshot(const struct dt_report *r,
                                                 const struct dt_record *launch)
{
	return dt_codex_config_record(r, launch, 0);
}

/* The project layers `denytrace codex` recorded beside its launch record,
 * in the order it wrote them (outermost first); malloc'ed, *n of them. */
static const struct dt_record **dt_codex_project_records(const struct dt_report *r,
                                                         const struct dt_record *launch, size_t *n)
{
	const struct dt_record **v = NULL;
	*n = 0;
	for (size_t i = 0; launch->type == DT_REC_LAUNCH && i < r->n; i++) {
		const struct dt_record *c = &r->recs[i];
		if (c->type != DT_REC_CONFIG || c->pid != launch->pid || c->ring != launch->ring ||
		    !dt_streq(c->cfg_role, "codex-project"))
			continue;
		const struct dt_record **nv = realloc(v, (*n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[(*n)++] = c;
	}
	return v;
}

static void dt_report_codex(struct dt_report *r, const struct dt_record *rec, const char *version,
                            const char *bin)
{
	struct dt_codex_launch l = {0};
	const struct dt_record **projects = dt_codex_project_records(r, rec, &l.nproject_snapshots);
	l.project_snapshots = projects;
	l.config_snapshot = dt_codex_snapshot(r, rec);
	l.codex_version = version             ? version
	                  : l.config_snapshot ? l.config_snapshot->cfg_version
	                                      : NULL;
	l.profile_snapshot = dt_codex_config_record(r, rec, 1);
	l.argv = rec->argv;
	l.argc = rec->argc;
	l.cwd = rec->cwd;
	l.home = dt_record_env(rec, "HOME");
	l.codex_home = dt_record_env(rec, "CODEX_HOME");
	l.tmpdir = dt_record_env(rec, "TMPDIR");
	l.env = rec->env;
	l.nenv = rec->nenv;
	char err[512];
	if (dt_roots_from_codex(&r->roots, &l, NULL, err, sizeof(err)) < 0)
		dt_roots_warn(&r->roots, "%s", err);
	else if (bin)
		dt_codex_readback(&r->roots, bin, &l);
	free(projects);
}

int dt_argv_mentions(const struct dt_record *rec, const char *word)
{
	for (size_t i = 0; i < rec->argc && i < 2; i++) {
		const char *b = strrchr(rec->argv[i], '/');
		b = b ? b + 1 : rec->argv[i];
		if (strstr(b, word))
			return 1;
	}
	return 0;
}

/* --root DIRs, relative ones taken against the cwd. */
static void dt_report_explicit_roots(struct dt_report *r, const struct dt_report_opts *o)
{
	for (size_t i = 0; i < o->nroots; i++) {
		char abs[PATH_MAX];
		const char *p = o->roots[i];
		if (p[0] != '/' && getcwd(abs, sizeof(abs))) {
			size_t l = strlen(abs);
			snprintf(abs + l, sizeof(abs) - l, "/%s", p);
			p = abs;
		}
		dt_roots_add(&r->roots, p, DT_ROOT_EXPLICIT, "--root", NULL);
	}
}

/* This shell's variables a record would keep (envfilter.h): it stands
 * for the environment of the Codex that --codex-args describes. */
static const char **dt_report_shell_env(size_t *n)
{
	extern char **environ;
	size_t cap = 0;
	while (environ[cap])
		cap++;
	const char **v = calloc(cap + 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; v && i < cap; i++) {
		const char *eq = strchr(environ[i], '=');
		if (eq && dt_env_name_is_wanted(environ[i], (size_t)(eq - environ[i]),
		                                getenv("DENYTRACE_ENV")))
			v[(*n)++] = environ[i];
	}
	return v;
}

/* The roots of the Codex command line --codex-args gives (with
 * --codex-config). Returns 0, or an exit status with err set. */
static int dt_report_codex_args(struct dt_report *r, const struct dt_report_opts *o,
                                const char *version, char *err, size_t errlen)
{
	char cwd[PATH_MAX];
	size_t nw = 0;
	char **words = dt_split_words(o->codex_args ? o->codex_args : "codex", &nw);
	if (!words) {
		snprintf(err, errlen, "--codex-args: unterminated quote");
		return DT_EXIT_USAGE;
	}
	/* accept the arguments with or without a leading "codex" */
	const char **argv = calloc(nw + 2, sizeof(*argv));
	size_t k = 0;
	if (!nw || !dt_argv_is_codex((const char *const *)words, nw))
		argv[k++] = "codex";
	for (size_t i = 0; i < nw; i++)
		argv[k++] = words[i];
	struct dt_codex_launch l = {argv,
	                            k,
	                            getcwd(cwd, sizeof(cwd)),
	                            getenv("HOME"),
	                            getenv("CODEX_HOME"),
	                            getenv("TMPDIR")};
	l.codex_version = version;
	const char **env = dt_report_shell_env(&l.nenv);
	l.env = env;
	int rc = dt_roots_from_codex(&r->roots, &l, o->codex_config, err, errlen);
	free(env);
	if (rc == 0 && o->codex_bin)
		dt_codex_readback(&r->roots, o->codex_bin, &l);
	free(argv);
	dt_words_free(words);
	if (rc < 0) /* README: 3 unreadable input, 4 invalid input */
		return rc == -2 ? DT_EXIT_NOINPUT : DT_EXIT_BADINPUT;
	return 0;
}

/* The first Codex launch in the rings gives the Codex roots. */
static void dt_report_codex_seen(struct dt_report *r, const char *version, const char *bin)
{
	int seen = 0;
	for (size_t i = 0; i < r->n && !seen; i++) {
		const struct dt_record *rec = &r->recs[i];
		/* exec records (--watch-exec) see Codex even when a wrapper
		 * started it and the probe never ran inside it */
		/* a launch with a Codex config snapshot is Codex's, whatever
		 * its binary is called (denytrace codex --codex PATH) */
		if ((rec->type == DT_REC_LAUNCH || rec->type == DT_REC_PROCESS ||
		     rec->type == DT_REC_EXEC) &&
		    (dt_argv_is_codex(rec->argv, rec->argc) || dt_codex_snapshot(r, rec))) {
			dt_report_codex(r, rec, version, bin);
			r->roots.codex_record = rec;
			seen = 1;
		}
	}
}

/* Roots: explicit, Codex, Hermes/hcom from every environment seen,
 * effective from sandboxed processes. Returns 0, or an exit status. */
int dt_report_roots(struct dt_report *r, const struct dt_report_opts *o, int hcom, char *err,
                    size_t errlen)
{
	char version[256] = "";
	dt_report_explicit_roots(r, o);
	if (o->codex_bin) {
		int rc =
		    dt_codex_binary_version(o->codex_bin, version, sizeof(version), err, errlen);
		if (rc)
			return rc;
	}
	if (o->codex_args || o->codex_config) {
		int rc = dt_report_codex_args(r, o, version[0] ? version : NULL, err, errlen);
		if (rc)
			return rc;
	} else {
		dt_report_codex_seen(r, version[0] ? version : NULL, o->codex_bin);
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *rec = &r->recs[i];
		if (rec->type == DT_REC_PROCESS || rec->type == DT_REC_LAUNCH ||
		    rec->type == DT_REC_EXEC)
			dt_roots_from_env(&r->roots, rec->env, rec->nenv,
			                  hcom && dt_argv_mentions(rec, "hcom"));
	}
	for (size_t i = 0; i < r->nprocs; i++)
		if (dt_proc_sandboxed(r->procs[i]))
			dt_roots_from_mounts(&r->roots, r->procs[i]);
	dt_roots_mark_granted(&r->roots, r->procs, r->nprocs);
	return 0;
}
