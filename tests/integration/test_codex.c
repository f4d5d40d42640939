/* SPDX-License-Identifier: MIT */
/*
 * The real Codex CLI (@openai/codex, installed by scripts/install-codex.sh
 * into build/codex): `codex sandbox -c 'sandbox_mode="workspace-write"'`
 * runs the command in Codex's own bubblewrap + seccomp sandbox, and
 * LD_PRELOAD reaches it. A `-c sandbox_workspace_write.writable_roots=[A]`
 * override replaces the writable_roots of $CODEX_HOME/config.toml (which
 * names B): a write to B is refused with EROFS, and `denytrace report` must
 * say the root B was configured but dropped by the override.
 *
 * Facts this suite relies on (checked with Codex 0.169.0):
 *  - CODEX_HOME must not be under /tmp (Codex refuses to create its helper
 *    aliases there), so every directory Codex sees lives under build/;
 *  - the Codex binary is a static musl executable: the probe never runs
 *    inside it, so Codex's command line reaches the ring only through the
 *    launch record of `denytrace run`, which the report reads;
 *  - Codex closes inherited descriptors before it starts the command, so
 *    the probe reaches the ring by its path: the ring must lie in a
 *    writable root. dtt_run puts it under /tmp, which workspace-write
 *    makes writable.
 *
 * Skipped at once (with the reason) when `make codex`, which make test runs
 * before the suites, could not install Codex: no npm, or no registry. Build
 * and run from the repository root:
 *   make all codex build/integration/test_codex && ./build/integration/test_codex
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "names.h"
#include "report.h"
#include "testlib.h"

#define PYTHON "/usr/bin/python3"

static char codex[PATH_MAX]; /* the codex binary */
static char top[PATH_MAX];   /* dtt_codex_tmpdir(), this test's */
static char dir_a[PATH_MAX + 8], dir_b[PATH_MAX + 8], dir_w[PATH_MAX + 8];
static char home[PATH_MAX + 8], codex_home[PATH_MAX + 16];
static char env_home[PATH_MAX + 16], env_codex_home[PATH_MAX + 32];
static char old_cwd[PATH_MAX];

static void find_codex(void)
{
	char why[PATH_MAX + 512];
	const char *bin = dtt_codex(why, sizeof(why));
	if (!bin)
		cr_skip_test("%s", why);
	snprintf(codex, sizeof(codex), "%s", bin);
}

static void setup(void)
{
	if (!getcwd(old_cwd, sizeof(old_cwd)))
		old_cwd[0] = 0;
	dtt_build(); /* resolved against the repository root, before any chdir */
	find_codex();
	snprintf(top, sizeof(top), "%s", dtt_codex_tmpdir());
	snprintf(dir_a, sizeof(dir_a), "%s/A", top);
	snprintf(dir_b, sizeof(dir_b), "%s/B", top);
	snprintf(dir_w, sizeof(dir_w), "%s/W", top);
	snprintf(home, sizeof(home), "%s/home", top);
	snprintf(codex_home, sizeof(codex_home), "%s/codex-home", top);
	const char *dirs[] = {dir_a, dir_b, dir_w, home, codex_home};
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(mkdir(dirs[i], 0755), 0, "mkdir %s", dirs[i]);
	char config[PATH_MAX + 32];
	snprintf(config, sizeof(config), "%s/config.toml", codex_home);
	FILE *f = fopen(config, "w");
	cr_assert_not_null(f);
	fprintf(f, "[sandbox_workspace_write]\nwritable_roots = [\"%s\"]\n", dir_b);
	fclose(f);
	snprintf(env_home, sizeof(env_home), "HOME=%s", home);
	snprintf(env_codex_home, sizeof(env_codex_home), "CODEX_HOME=%s", codex_home);
}

static void teardown(void)
{
	if (old_cwd[0] && chdir(old_cwd) != 0)
		fprintf(stderr, "test_codex: cannot return to %s\n", old_cwd);
	dtt_cleanup();
}

TestSuite(codex, .init = setup, .fini = teardown, .timeout = 120);

/* denytrace run -- codex sandbox -c sandbox_mode="workspace-write"
 *   -c sandbox_workspace_write.writable_roots=["A"] -- sh -c SCRIPT,
 * from the workspace W. */
static void run_codex(struct dtt_run *r, const char *script)
{
	static char override[PATH_MAX + 64];
	snprintf(override, sizeof(override), "sandbox_workspace_write.writable_roots=[\"%s\"]",
	         dir_a);
	const char *argv[] = {codex, "sandbox", "-c", "sandbox_mode=\"workspace-write\"",
	                      "-c",  override,  "--", "sh",
	                      "-c",  script,    NULL};
	const char *env[] = {env_home, env_codex_home, NULL};
	cr_assert_eq(chdir(dir_w), 0);
	int rc = dtt_run(r, NULL, argv, env);
	cr_assert_eq(chdir(old_cwd), 0);
	cr_assert_eq(rc, 0, "ring unreadable: %s", r->out);
	cr_assert(!strstr(r->out, "error: unexpected argument"), "codex refused its arguments: %s",
	          r->out);
}

static void build_report(struct dt_report *rep, const char *ring)
{
	static const char *rings[1];
	rings[0] = ring;
	char err[1024] = "";
	cr_assert_eq(dt_report_load(rep, rings, 1, err, sizeof(err)), 0, "%s", err);
	struct dt_report_opts o = {0};
	cr_assert_eq(dt_report_build(rep, &o, err, sizeof(err)), 0, "%s", err);
}

static const struct dt_report_group *group_for(const struct dt_report *rep, const char *abspath)
{
	for (size_t k = 0; k < rep->ngroups; k++)
		if (!rep->groups[k].hidden && rep->groups[k].rep->p[0].abspath &&
		    !strcmp(rep->groups[k].rep->p[0].abspath, abspath))
			return &rep->groups[k];
	return NULL;
}

static const struct dt_root *codex_root(const struct dt_report *rep, const char *path)
{
	for (size_t i = 0; i < rep->roots.n; i++)
		if (rep->roots.v[i].kind == DT_ROOT_CODEX && !strcmp(rep->roots.v[i].path, path))
			return &rep->roots.v[i];
	return NULL;
}

static int file_says(const char *path, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return !strcmp(buf, text);
}

Test(codex, write_to_a_config_root_dropped_by_a_c_override_is_root_not_granted)
{
	char bf[PATH_MAX + 8], af[PATH_MAX + 8], script[4 * PATH_MAX];
	snprintf(bf, sizeof(bf), "%s/f", dir_b);
	snprintf(af, sizeof(af), "%s/f", dir_a);
	snprintf(script, sizeof(script), "echo a > %s; echo x > %s", af, bf);
	struct dtt_run run;
	run_codex(&run, script);

	/* Codex's sandbox: A writable, B (only in config.toml) not */
	cr_expect(file_says(af, "a\n"), "the write to the override's root A failed: %s", run.out);
	cr_expect_neq(access(bf, F_OK), 0,
	              "B/f was written: the override did not replace the list");
	cr_expect(strstr(run.out, "Read-only file system"), "%s", run.out);
	const struct dt_record *d = dtt_find(&run, DT_REC_DENIAL, NULL, "/B/f");
	cr_assert_not_null(d, "the refused write to B/f was not recorded; output: %s", run.out);
	cr_expect_str_eq(dt_errno_name(d->err), "EROFS");
	cr_expect_str_eq(d->p[0].abspath, bf);
	cr_expect_str_eq(d->comm, "sh");

	/* Codex's argv reaches the ring in the launch record */
	const struct dt_record *launch = NULL;
	for (size_t i = 0; i < run.n && !launch; i++)
		if (run.recs[i].type == DT_REC_LAUNCH)
			launch = &run.recs[i];
	cr_assert_not_null(launch, "no launch record");
	cr_assert_geq(launch->argc, 6);
	cr_expect_str_eq(launch->argv[0], codex);
	cr_expect_str_eq(launch->argv[1], "sandbox");
	cr_expect(strstr(launch->argv[5], dir_a), "argv[5] = %s", launch->argv[5]);
	cr_expect_str_eq(launch->cwd, dir_w);
	cr_expect_str_eq(dt_record_env(launch, "CODEX_HOME"), codex_home);

	struct dt_report rep;
	build_report(&rep, run.ring);
	cr_expect_str_eq(rep.roots.codex_sandbox_mode, "workspace-write");
	const struct dt_report_group *g = group_for(&rep, bf);
	cr_assert_not_null(g, "no group for %s", bf);
	cr_expect_str_eq(dt_cause_name(g->v.cause), "root-not-granted", "reason: %s", g->v.reason);
	cr_assert_not_null(g->v.root, "no expected root; reason: %s", g->v.reason);
	cr_expect_str_eq(g->v.root->path, dir_b);
	cr_expect(strstr(g->v.root->source, "config.toml"), "source: %s", g->v.root->source);
	cr_expect_eq(g->v.granted, 0);
	cr_assert_not_null(g->v.root->dropped_by, "B has no dropped_by");
	cr_expect(strstr(g->v.root->dropped_by, "-c sandbox_workspace_write.writable_roots="),
	          "dropped_by: %s", g->v.root->dropped_by);
	cr_expect(strstr(g->v.advice, "override"), "advice: %s", g->v.advice);
	const struct dt_root *ra = codex_root(&rep, dir_a);
	cr_assert_not_null(ra, "A is not listed as a root");
	cr_expect_eq(ra->granted, 1);
	cr_expect(strstr(ra->source, "-c sandbox_workspace_write.writable_roots"), "A's source: %s",
	          ra->source);
	cr_expect_null(group_for(&rep, af), "the write to A was refused");
	dt_report_free(&rep);

	/* the CLI's JSON says the same */
	char json[PATH_MAX + 16], cmd[3 * PATH_MAX], out[8192];
	snprintf(json, sizeof(json), "%s.json", run.ring);
	snprintf(cmd, sizeof(cmd), "'%s/denytrace' report --format json '%s' > '%s'", dtt_build(),
	         run.ring, json);
	const char *sh[] = {"sh", "-c", cmd, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "denytrace report: %s", out);
	static const char py[] =
	    "import json, sys\n"
	    "d = json.load(open(sys.argv[1]))\n"
	    "assert all(k in d for k in ('version', 'denials', 'roots', 'processes', 'summary')), "
	    "list(d)\n"
	    "x = [x for x in d['denials'] if x['abspath'] == sys.argv[2] + '/f'][0]\n"
	    "a = [r for r in d['roots'] if r['path'] == sys.argv[3] and r['kind'] == 'codex'][0]\n"
	    "print(x['errno'], x['cause'], x['expected_root'] == sys.argv[2], x['granted'],\n"
	    "      '-c sandbox_workspace_write.writable_roots' in (x['dropped_by'] or ''),\n"
	    "      a['granted'], d['codex']['sandbox_mode'], end='')\n";
	const char *pargv[] = {PYTHON, "-c", py, json, dir_b, dir_a, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "the report's JSON: %s", out);
	cr_expect_str_eq(out, "EROFS root-not-granted True False True True workspace-write");
	dtt_free(&run);
}

Test(codex, probe_inside_codex_sees_its_mounts_and_seccomp_filter)
{
	char bf[PATH_MAX + 8], script[2 * PATH_MAX];
	snprintf(bf, sizeof(bf), "%s/f", dir_b);
	snprintf(script, sizeof(script), "echo x > %s", bf);
	struct dtt_run run;
	run_codex(&run, script);
	const struct dt_record *d = dtt_find(&run, DT_REC_DENIAL, NULL, "/B/f");
	cr_assert_not_null(d, "%s", run.out);
	const struct dt_record *p = dtt_process(&run, d->pid);
	cr_assert_not_null(p, "no process record for pid %lld", (long long)d->pid);
	int root_ro = 0, w_rw = 0, a_rw = 0, b_rw = 0, w_git_ro = 0;
	char w_git[PATH_MAX + 16];
	snprintf(w_git, sizeof(w_git), "%s/.git", dir_w);
	for (size_t i = 0; i < p->nmounts; i++) {
		const struct dt_mount *m = &p->mounts[i];
		root_ro |= !strcmp(m->path, "/") && !m->rw;
		w_rw |= !strcmp(m->path, dir_w) && m->rw;
		a_rw |= !strcmp(m->path, dir_a) && m->rw;
		b_rw |= !strcmp(m->path, dir_b) && m->rw;
		w_git_ro |= !strcmp(m->path, w_git) && !m->rw;
	}
	cr_expect(root_ro, "/ should be read-only inside Codex's sandbox");
	cr_expect(w_rw, "the workspace %s is not a writable mount", dir_w);
	cr_expect(a_rw, "the override's root %s is not a writable mount", dir_a);
	cr_expect(!b_rw, "config.toml's root %s is writable despite the override", dir_b);
	cr_expect(w_git_ro, "%s is not re-mounted read-only", w_git);
	cr_expect(p->has_seccomp, "no seccomp facts");
	cr_expect_eq(p->seccomp, 2, "seccomp mode %lld", (long long)p->seccomp);
	cr_expect_geq(p->seccomp_filters, 1);
	cr_expect_eq(p->no_new_privs, 1);
	cr_expect(dt_record_env(p, "LD_PRELOAD") &&
	              strstr(dt_record_env(p, "LD_PRELOAD"), "libdenytrace"),
	          "LD_PRELOAD did not reach the sandboxed command");
	dtt_free(&run);
}

Test(codex, write_into_dot_git_of_the_workspace_is_protected_path)
{
	char cfg[PATH_MAX + 16], ok[PATH_MAX + 8], script[3 * PATH_MAX];
	snprintf(cfg, sizeof(cfg), "%s/.git/config", dir_w);
	snprintf(ok, sizeof(ok), "%s/ok", dir_w);
	snprintf(script, sizeof(script), "echo ok > %s; echo x > %s", ok, cfg);
	struct dtt_run run;
	run_codex(&run, script);
	cr_expect(file_says(ok, "ok\n"), "the workspace is not writable: %s", run.out);
	const struct dt_record *d = dtt_find(&run, DT_REC_DENIAL, NULL, "/.git/config");
	cr_assert_not_null(d, "%s", run.out);
	cr_expect_str_eq(dt_errno_name(d->err), "EROFS");

	struct dt_report rep;
	build_report(&rep, run.ring);
	const struct dt_report_group *g = group_for(&rep, cfg);
	cr_assert_not_null(g);
	cr_expect_str_eq(dt_cause_name(g->v.cause), "protected-path", "reason: %s", g->v.reason);
	cr_assert_not_null(g->v.root, "reason: %s", g->v.reason);
	cr_expect_str_eq(g->v.root->path, dir_w);
	cr_expect(strstr(g->v.root->source, "codex workspace"), "source: %s", g->v.root->source);
	cr_expect_eq(g->v.granted, 1);
	cr_expect(strstr(g->v.reason, ".git"), "reason: %s", g->v.reason);
	dt_report_free(&rep);
	dtt_free(&run);
}

/* Hermes, hcom and scripts start Codex through a wrapper: the launch record
 * then holds `sh`, and the probe never runs inside Codex (a static binary).
 * With --watch-exec the exec records carry Codex's argv, cwd and
 * environment, and the report derives its roots from them. */
Test(codex, codex_behind_a_wrapper_is_found_through_exec_records)
{
	char bf[PATH_MAX + 8], cmd[8 * PATH_MAX];
	snprintf(bf, sizeof(bf), "%s/f", dir_b);
	snprintf(cmd, sizeof(cmd),
	         "%s sandbox -c 'sandbox_mode=\"workspace-write\"' "
	         "-c 'sandbox_workspace_write.writable_roots=[\"%s\"]' -- sh -c 'echo x > %s'",
	         codex, dir_a, bf);
	const char *opts[] = {"--watch-exec", NULL};
	const char *argv[] = {"sh", "-c", cmd, NULL};
	const char *env[] = {env_home, env_codex_home, NULL};
	struct dtt_run run;
	cr_assert_eq(chdir(dir_w), 0);
	int rc = dtt_run(&run, opts, argv, env);
	cr_assert_eq(chdir(old_cwd), 0);
	cr_assert_eq(rc, 0, "ring unreadable: %s", run.out);
	cr_assert_not_null(dtt_find(&run, DT_REC_DENIAL, NULL, "/B/f"), "%s", run.out);

	struct dt_report rep;
	build_report(&rep, run.ring);
	const struct dt_report_group *g = group_for(&rep, bf);
	cr_assert_not_null(g, "no group for %s", bf);
	cr_expect_str_eq(dt_cause_name(g->v.cause), "root-not-granted");
	cr_assert_not_null(g->v.root, "no expected root");
	cr_expect_str_eq(g->v.root->path, dir_b);
	cr_expect_not_null(g->v.root->dropped_by, "the -c override is not named");
	cr_expect_not_null(codex_root(&rep, dir_a), "the override's root A is not listed");
	dt_report_free(&rep);
	dtt_free(&run);
}

/* ---- denytrace codex ---------------------------------------------------- */

/* Runs `denytrace codex -o RING [opts...] -- args...` from the workspace W
 * with HOME and CODEX_HOME set, its output in r->out, then loads the ring.
 * The exit status goes to r->status. */
static void dt_codex(struct dtt_run *r, const char *const *opts, const char *const *args)
{
	static const char *argv[64];
	size_t n = 0;
	memset(r, 0, sizeof(*r));
	snprintf(r->ring, sizeof(r->ring), "%s/codex.ring", dtt_tmpdir());
	char dt[PATH_MAX + 16];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	argv[n++] = dt;
	argv[n++] = "codex";
	argv[n++] = "--codex";
	argv[n++] = codex;
	argv[n++] = "-o";
	argv[n++] = r->ring;
	for (size_t i = 0; opts && opts[i]; i++)
		argv[n++] = opts[i];
	argv[n++] = "--";
	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	const char *env[] = {env_home, env_codex_home, NULL};
	cr_assert_eq(chdir(dir_w), 0);
	r->status = dtt_system(r->out, sizeof(r->out), argv, env);
	cr_assert_eq(chdir(old_cwd), 0);
	cr_assert_eq(dtt_load(r, r->ring), 0, "ring unreadable; output: %s", r->out);
}

static void write_config(const char *text)
{
	char config[PATH_MAX + 32];
	snprintf(config, sizeof(config), "%s/config.toml", codex_home);
	FILE *f = fopen(config, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

/* The test: under `denytrace codex -- sandbox ...`, a write to the
 * root that only config.toml names, dropped by a -c override, is reported
 * with that root and the override. */
Test(codex, denytrace_codex_reports_the_root_a_c_override_dropped)
{
	char bf[PATH_MAX + 8], script[2 * PATH_MAX], override[PATH_MAX + 64];
	snprintf(bf, sizeof(bf), "%s/f", dir_b);
	snprintf(script, sizeof(script), "echo x > %s", bf);
	snprintf(override, sizeof(override), "sandbox_workspace_write.writable_roots=[\"%s\"]",
	         dir_a);
	const char *args[] = {
	    "sandbox", "-c", "sandbox_mode=\"workspace-write\"", "-c", override, "--", "sh", "-c",
	    script,    NULL};
	struct dtt_run run;
	dt_codex(&run, NULL, args);
	cr_expect_neq(run.status, 0, "the write to B should fail: %s", run.out);
	cr_expect(strstr(run.out, "no MCP servers configured"), "%s", run.out);
	const struct dt_record *d = dtt_find(&run, DT_REC_DENIAL, NULL, "/B/f");
	cr_assert_not_null(d, "the refused write to B/f was not recorded; output: %s", run.out);
	cr_expect_str_eq(dt_errno_name(d->err), "EROFS");

	/* what `denytrace report` prints */
	char cmd[3 * PATH_MAX], out[16384];
	snprintf(cmd, sizeof(cmd), "'%s/denytrace' report '%s'", dtt_build(), run.ring);
	const char *sh[] = {"sh", "-c", cmd, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "denytrace report: %s", out);
	cr_expect(strstr(out, "root-not-granted"), "%s", out);
	char root_line[PATH_MAX + 32];
	snprintf(root_line, sizeof(root_line), "root     %s", dir_b);
	cr_expect(strstr(out, root_line), "the report does not name root %s: %s", dir_b, out);
	cr_expect(strstr(out, override), "the report does not name the override: %s", out);

	struct dt_report rep;
	build_report(&rep, run.ring);
	const struct dt_report_group *g = group_for(&rep, bf);
	cr_assert_not_null(g, "no group for %s", bf);
	cr_expect_str_eq(dt_cause_name(g->v.cause), "root-not-granted", "reason: %s", g->v.reason);
	cr_assert_not_null(g->v.root, "no expected root; reason: %s", g->v.reason);
	cr_expect_str_eq(g->v.root->path, dir_b);
	cr_assert_not_null(g->v.root->dropped_by, "the override is not named");
	cr_expect(strstr(g->v.root->dropped_by, override), "dropped_by: %s", g->v.root->dropped_by);
	cr_expect(rep.roots.codex_config_recorded, "the report did not use the ring's snapshot");
	dt_report_free(&rep);
	dtt_free(&run);
}

/* Real Codex: two launchers each pass -c writable_roots (Hermes its board,
 * then hcom its directory). Codex keeps only the last list; the report
 * names the earlier root and the override that replaced it. */
Test(codex, an_earlier_c_override_replaced_by_a_later_one_is_named)
{
	char af[PATH_MAX + 8], script[2 * PATH_MAX], first[PATH_MAX + 64], second[PATH_MAX + 64];
	snprintf(af, sizeof(af), "%s/f", dir_a);
	snprintf(script, sizeof(script), "echo x > %s", af);
	snprintf(first, sizeof(first), "sandbox_workspace_write.writable_roots=[\"%s\"]", dir_a);
	snprintf(second, sizeof(second), "sandbox_workspace_write.writable_roots=[\"%s\"]", dir_w);
	const char *args[] = {"sandbox", "-c",   "sandbox_mode=\"workspace-write\"",
	                      "-c",      first,  "-c",
	                      second,    "--",   "sh",
	                      "-c",      script, NULL};
	struct dtt_run run;
	dt_codex(&run, (const char *const[]){"-q", NULL}, args);
	cr_expect_neq(run.status, 0, "the write to A should fail: %s", run.out);
	cr_assert_not_null(dtt_find(&run, DT_REC_DENIAL, NULL, "/A/f"), "%s", run.out);

	struct dt_report rep;
	build_report(&rep, run.ring);
	const struct dt_report_group *g = group_for(&rep, af);
	cr_assert_not_null(g, "no group for %s", af);
	cr_expect_str_eq(dt_cause_name(g->v.cause), "root-not-granted", "reason: %s", g->v.reason);
	cr_assert_not_null(g->v.root, "no expected root; reason: %s", g->v.reason);
	cr_expect_str_eq(g->v.root->path, dir_a);
	cr_expect(strstr(g->v.root->source, first), "source: %s", g->v.root->source);
	cr_assert_not_null(g->v.root->dropped_by, "the later override is not named");
	cr_expect(strstr(g->v.root->dropped_by, second), "dropped_by: %s", g->v.root->dropped_by);
	cr_expect(strstr(g->v.advice, "the later"), "advice: %s", g->v.advice);
	dt_report_free(&rep);
	dtt_free(&run);
}

/* Real Codex: a table given with -c merges into the file's table, so the
 * config's writable_roots stay writable and nothing is reported dropped. */
Test(codex, a_table_override_keeps_the_config_roots_writable)
{
	char bf[PATH_MAX + 8], script[2 * PATH_MAX];
	snprintf(bf, sizeof(bf), "%s/f", dir_b);
	snprintf(script, sizeof(script), "echo x > %s && echo wrote", bf);
	const char *args[] = {"sandbox",
	                      "-c",
	                      "sandbox_mode=\"workspace-write\"",
	                      "-c",
	                      "sandbox_workspace_write={ network_access = false }",
	                      "--",
	                      "sh",
	                      "-c",
	                      script,
	                      NULL};
	struct dtt_run run;
	dt_codex(&run, (const char *const[]){"-q", NULL}, args);
	cr_expect_eq(run.status, 0, "B from config.toml should stay writable: %s", run.out);
	cr_expect_null(dtt_find(&run, DT_REC_DENIAL, NULL, "/B/f"), "%s", run.out);

	struct dt_report rep;
	build_report(&rep, run.ring);
	const struct dt_root *b = codex_root(&rep, dir_b);
	cr_assert_not_null(b, "config root B missing from the roots");
	cr_expect_null(b->dropped_by, "a merged table dropped nothing, yet: %s", b->dropped_by);
	dt_report_free(&rep);
	dtt_free(&run);
}

/* Real Codex: `codex mcp list --json` shows each server's env as Codex
 * will start it. The overrides must add the probe's keys and keep the
 * table's own (FOO, and the user's LD_PRELOAD after the probe), also when
 * the user's own -c gave an env table, and reach a server -c added. */
Test(codex, mcp_overrides_merge_into_each_servers_env_table_per_key)
{
	write_config("[mcp_servers.docs]\ncommand = \"/bin/cat\"\n"
	             "env = { FOO = \"1\", LD_PRELOAD = \"/usr/lib/libfoo.so\" }\n"
	             "[mcp_servers.\"sp ace\"]\ncommand = \"/bin/true\"\n");
	char json[PATH_MAX + 16];
	snprintf(json, sizeof(json), "%s/mcp.json", dtt_tmpdir());
	const char *args[] = {
	    "-c", "mcp_servers.docs.env={ R = \"2\" }",    "mcp", "list", "--json",
	    "-c", "mcp_servers.added.command=\"/bin/ls\"", NULL};
	struct dtt_run run;
	dt_codex(&run, NULL, args);
	cr_assert_eq(run.status, 0, "codex mcp list failed: %s", run.out);
	cr_expect(strstr(run.out, "probe carried into 3 MCP servers"), "%s", run.out);

	/* the launch record holds the argv as launched, overrides after the
	 * user's last -c */
	const struct dt_record *launch = dtt_find(&run, DT_REC_LAUNCH, NULL, NULL);
	cr_assert_not_null(launch);
	cr_assert_geq(launch->argc, 8);
	cr_expect_str_eq(launch->argv[0], codex);
	cr_expect_str_eq(launch->argv[3], "mcp");
	cr_expect_str_eq(launch->argv[6], "-c");
	cr_expect_str_eq(launch->argv[7], "mcp_servers.added.command=\"/bin/ls\"");
	cr_expect(launch->argc > 9 && !strcmp(launch->argv[8], "-c") &&
	              !strncmp(launch->argv[9], "mcp_servers.", 12),
	          "the overrides do not follow the last -c");

	/* Codex's own view of the configuration, with the same argv, through
	 * sh so that its JSON lands in a file of its own */
	const char *cargv[64];
	size_t n = 0;
	cargv[n++] = "sh";
	cargv[n++] = "-c";
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "exec \"$@\" > '%s'", json);
	cargv[n++] = cmd;
	cargv[n++] = "sh"; /* $0 */
	for (size_t i = 0; i < launch->argc && n < 63; i++)
		cargv[n++] = launch->argv[i];
	cargv[n] = NULL;
	const char *env[] = {env_home, env_codex_home, NULL};
	char out[8192];
	cr_assert_eq(dtt_system(out, sizeof(out), cargv, env), 0, "codex: %s", out);
	char probe_in[PATH_MAX], probe[PATH_MAX], ring[PATH_MAX];
	snprintf(probe_in, sizeof(probe_in), "%s/libdenytrace.so", dtt_build());
	cr_assert_not_null(realpath(probe_in, probe));
	cr_assert_not_null(realpath(run.ring, ring));
	static const char py[] =
	    "import json, sys\n"
	    "d = {s['name']: s['transport'].get('env') or {} for s in "
	    "json.load(open(sys.argv[1]))}\n"
	    "p, r = sys.argv[2], sys.argv[3]\n"
	    "docs, sp, added = d['docs'], d['sp ace'], d['added']\n"
	    "print(docs.get('FOO'), docs.get('R'), docs['LD_PRELOAD'] == p + "
	    "':/usr/lib/libfoo.so',\n"
	    "      docs['DENYTRACE_RING'] == r, 'DENYTRACE_RING_ID' in docs,\n"
	    "      sp.get('LD_PRELOAD') == p, added.get('LD_PRELOAD') == p, end='')\n";
	const char *pargv[] = {PYTHON, "-c", py, json, probe, ring, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "codex's JSON: %s", out);
	cr_expect_str_eq(out, "1 2 True True True True True");
	dtt_free(&run);
}

/* Real Codex (0.169 and 0.171): a trusted project's .codex/config.toml
 * adds MCP servers; `codex mcp list --json` from the project shows the
 * probe's variables in their env, as the servers will get them. */
Test(codex, mcp_servers_of_a_trusted_projects_layer_get_the_probe)
{
	char cfg[PATH_MAX + 64], layer[PATH_MAX + 32], json[PATH_MAX + 16];
	snprintf(cfg, sizeof(cfg), "[projects.\"%s\"]\ntrust_level = \"trusted\"\n", dir_w);
	write_config(cfg);
	snprintf(layer, sizeof(layer), "%s/.codex", dir_w);
	cr_assert_eq(mkdir(layer, 0755), 0);
	strcat(layer, "/config.toml");
	FILE *f = fopen(layer, "w");
	cr_assert_not_null(f);
	fputs("[mcp_servers.proj]\ncommand = \"/bin/cat\"\n", f);
	fclose(f);
	const char *args[] = {"mcp", "list", "--json", NULL};
	struct dtt_run run;
	dt_codex(&run, NULL, args);
	cr_assert_eq(run.status, 0, "codex mcp list failed: %s", run.out);
	cr_expect(strstr(run.out, "probe carried into 1 MCP server") && strstr(run.out, "proj"),
	          "%s", run.out);
	const struct dt_record *launch = dtt_find(&run, DT_REC_LAUNCH, NULL, NULL);
	cr_assert_not_null(launch);
	snprintf(json, sizeof(json), "%s/proj.json", dtt_tmpdir());
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "cd '%s' && exec \"$@\" > '%s'", dir_w, json);
	const char *cargv[64] = {"sh", "-c", cmd, "sh"};
	size_t n = 4;
	for (size_t i = 0; i < launch->argc && n < 63; i++)
		cargv[n++] = launch->argv[i];
	cargv[n] = NULL;
	const char *env[] = {env_home, env_codex_home, NULL};
	char out[8192], probe_in[PATH_MAX], probe[PATH_MAX];
	cr_assert_eq(dtt_system(out, sizeof(out), cargv, env), 0, "codex: %s", out);
	snprintf(probe_in, sizeof(probe_in), "%s/libdenytrace.so", dtt_build());
	cr_assert_not_null(realpath(probe_in, probe));
	static const char py[] = "import json, sys\n"
	                         "d = {s['name']: s['transport'].get('env') or {} for s in "
	                         "json.load(open(sys.argv[1]))}\n"
	                         "assert d['proj'].get('LD_PRELOAD') == sys.argv[2], d\n";
	const char *pargv[] = {PYTHON, "-c", py, json, probe, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "codex's JSON: %s", out);
	dtt_free(&run);
}

/* The snapshot of config.toml in the ring is what the report reads: the
 * file may be changed or gone by then. */
Test(codex, report_reads_the_config_snapshot_even_after_the_file_is_deleted)
{
	char bf[PATH_MAX + 8], script[2 * PATH_MAX], override[PATH_MAX + 64];
	snprintf(bf, sizeof(bf), "%s/f", dir_b);
	snprintf(script, sizeof(script), "echo x > %s", bf);
	snprintf(override, sizeof(override), "sandbox_workspace_write.writable_roots=[\"%s\"]",
	         dir_a);
	const char *args[] = {
	    "sandbox", "-c", "sandbox_mode=\"workspace-write\"", "-c", override, "--", "sh", "-c",
	    script,    NULL};
	struct dtt_run run;
	dt_codex(&run, (const char *const[]){"-q", NULL}, args);
	const struct dt_record *c = dtt_find(&run, DT_REC_CONFIG, NULL, NULL);
	cr_assert_not_null(c, "no config record: %s", run.out);
	char config[PATH_MAX + 32];
	snprintf(config, sizeof(config), "%s/config.toml", codex_home);
	cr_expect_str_eq(c->cfg_path, config);
	cr_expect_str_eq(c->cfg_role, "codex");
	cr_assert_not_null(c->cfg_text);
	cr_expect(strstr(c->cfg_text, dir_b), "snapshot: %s", c->cfg_text);
	cr_expect_not(c->cfg_trunc);

	cr_assert_eq(unlink(config), 0);
	struct dt_report rep;
	build_report(&rep, run.ring);
	const struct dt_report_group *g = group_for(&rep, bf);
	cr_assert_not_null(g, "no group for %s", bf);
	cr_expect_str_eq(dt_cause_name(g->v.cause), "root-not-granted", "reason: %s", g->v.reason);
	cr_assert_not_null(g->v.root, "config.toml is gone and the snapshot was not used");
	cr_expect_str_eq(g->v.root->path, dir_b);
	cr_expect_not_null(g->v.root->dropped_by);
	cr_expect_str_eq(rep.roots.codex_config_path, config);
	cr_expect(rep.roots.codex_config_recorded);
	dt_report_free(&rep);

	/* changed, not deleted: still the launch's view */
	char other[PATH_MAX + 64];
	snprintf(other, sizeof(other), "[sandbox_workspace_write]\nwritable_roots = [\"%s\"]\n",
	         dir_a);
	write_config(other);
	build_report(&rep, run.ring);
	g = group_for(&rep, bf);
	cr_assert_not_null(g);
	cr_assert_not_null(g->v.root, "reason: %s", g->v.reason);
	cr_expect_str_eq(g->v.root->path, dir_b);
	dt_report_free(&rep);

	/* denytrace show prints it */
	char cmd[3 * PATH_MAX], out[16384];
	snprintf(cmd, sizeof(cmd), "'%s/denytrace' show -v --type config '%s'", dtt_build(),
	         run.ring);
	const char *sh[] = {"sh", "-c", cmd, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
	cr_expect(strstr(out, "config ") && strstr(out, "bytes as launched"), "%s", out);
	cr_expect(strstr(out, "    | [sandbox_workspace_write]"), "%s", out);
	dtt_free(&run);
}

/* ---- denytrace codex: bad input (no Codex needed) ------------------------ */

static void cli_teardown(void)
{
	dtt_cleanup();
}

TestSuite(codex_cli, .fini = cli_teardown, .timeout = 120);

static int dt_status(char *out, size_t cap, const char *const *args, const char *const *env)
{
	char dt[PATH_MAX + 16];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	const char *argv[32];
	size_t n = 0;
	argv[n++] = dt;
	argv[n++] = "codex";
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return dtt_system(out, cap, argv, env);
}

Test(codex_cli, a_missing_codex_exits_127_and_says_how_to_name_it)
{
	char out[4096], ring[PATH_MAX + 16];
	snprintf(ring, sizeof(ring), "%s/r.ring", dtt_tmpdir());
	const char *a1[] = {"-o", ring, "--codex", "/nonexistent/codex", "--", "--version", NULL};
	cr_expect_eq(dt_status(out, sizeof(out), a1, NULL), 127, "%s", out);
	cr_expect(strstr(out, "/nonexistent/codex") && strstr(out, "--codex"), "%s", out);
	const char *a2[] = {"-o", ring, "--", "--version", NULL};
	const char *env[] = {"PATH=/nonexistent", "DENYTRACE_CODEX", NULL};
	cr_expect_eq(dt_status(out, sizeof(out), a2, env), 127, "%s", out);
	cr_expect(strstr(out, "no codex on PATH") && strstr(out, "DENYTRACE_CODEX"), "%s", out);
	const char *env2[] = {"DENYTRACE_CODEX=/nonexistent/dt-codex", NULL};
	cr_expect_eq(dt_status(out, sizeof(out), a2, env2), 127, "%s", out);
	cr_expect(strstr(out, "DENYTRACE_CODEX"), "%s", out);
	/* a file that is not executable */
	char plain[PATH_MAX + 16];
	snprintf(plain, sizeof(plain), "%s/codex", dtt_tmpdir());
	FILE *f = fopen(plain, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(chmod(plain, 0644), 0);
	const char *a3[] = {"-o", ring, "--codex", plain, "--", NULL};
	cr_expect_eq(dt_status(out, sizeof(out), a3, NULL), 126, "%s", out);
}

Test(codex_cli, no_dashdash_or_a_bad_option_exits_125)
{
	char out[4096];
	const char *a1[] = {"--codex", "/bin/true", "sandbox", "true", NULL};
	cr_expect_eq(dt_status(out, sizeof(out), a1, NULL), 125, "%s", out);
	cr_expect(strstr(out, "after '--'"), "%s", out);
	const char *a2[] = {"--codex", "/bin/true", NULL};
	cr_expect_eq(dt_status(out, sizeof(out), a2, NULL), 125, "%s", out);
	cr_expect(strstr(out, "no '--'"), "%s", out);
	const char *a3[] = {"--bogus", "--", "sandbox", NULL};
	cr_expect_eq(dt_status(out, sizeof(out), a3, NULL), 125, "%s", out);
	cr_expect(strstr(out, "unknown option '--bogus'"), "%s", out);
	const char *a4[] = {"--size", "1", "--", NULL};
	cr_expect_eq(dt_status(out, sizeof(out), a4, NULL), 125, "%s", out);
	const char *a5[] = {"--codex", NULL};
	cr_expect_eq(dt_status(out, sizeof(out), a5, NULL), 125, "%s", out);
	const char *a6[] = {"--help", NULL};
	cr_expect_eq(dt_status(out, sizeof(out), a6, NULL), 0, "%s", out);
	cr_expect(strstr(out, "--no-mcp") && strstr(out, "--codex PATH"), "%s", out);
}

/* A config.toml larger than a record is recorded up to a line end, marked
 * truncated with its full size; the report then reads the file and says so. */
Test(codex_cli, a_config_too_big_for_a_record_is_recorded_truncated)
{
	const char *tmp = dtt_tmpdir();
	char home_dir[PATH_MAX + 16], cfgfile[PATH_MAX + 32], ring[PATH_MAX + 16];
	snprintf(home_dir, sizeof(home_dir), "%s/ch", tmp);
	snprintf(cfgfile, sizeof(cfgfile), "%s/config.toml", home_dir);
	snprintf(ring, sizeof(ring), "%s/big.ring", tmp);
	cr_assert_eq(mkdir(home_dir, 0755), 0);
	FILE *f = fopen(cfgfile, "w");
	cr_assert_not_null(f);
	size_t size = 0;
	for (int i = 0; size < 100000; i++)
		/* keys, not comments: a recorded config keeps key names, drops comments */
		size += (size_t)fprintf(f, "padding_line_%d_of_a_large_configuration = 1\n", i);
	size += (size_t)fprintf(f, "sandbox_mode = \"workspace-write\"\n");
	fclose(f);
	char env_ch[PATH_MAX + 32];
	snprintf(env_ch, sizeof(env_ch), "CODEX_HOME=%s", home_dir);
	const char *env[] = {env_ch, NULL};
	const char *args[] = {"-q", "-o", ring, "--codex", "/bin/true", "--", NULL};
	char out[4096];
	cr_assert_eq(dt_status(out, sizeof(out), args, env), 0, "%s", out);
	struct dtt_run run;
	cr_assert_eq(dtt_load(&run, ring), 0);
	const struct dt_record *c = dtt_find(&run, DT_REC_CONFIG, NULL, NULL);
	cr_assert_not_null(c);
	cr_expect(c->cfg_trunc);
	cr_expect_eq(c->cfg_size, size);
	cr_assert_not_null(c->cfg_text);
	cr_expect_lt(c->cfg_len, size);
	cr_expect_gt(c->cfg_len, 30000);
	cr_expect_eq(c->cfg_text[c->cfg_len - 1], '\n', "not cut at a line end");
	cr_expect(!strstr(c->cfg_text, "sandbox_mode"));
	/* launched as Codex although /bin/true is not called codex */
	struct dt_report rep;
	const char *rings[] = {ring};
	char err[512];
	cr_assert_eq(dt_report_load(&rep, rings, 1, err, sizeof(err)), 0, "%s", err);
	struct dt_report_opts o = {0};
	cr_assert_eq(dt_report_build(&rep, &o, err, sizeof(err)), 0, "%s", err);
	int warned = 0;
	for (size_t i = 0; i < rep.roots.nwarnings; i++)
		warned |= strstr(rep.roots.warnings[i], "only the first") != NULL;
	cr_expect(warned, "no warning about the truncated snapshot");
	cr_expect_not(rep.roots.codex_config_recorded);
	cr_expect_str_eq(rep.roots.codex_sandbox_mode, "workspace-write", "the file was not read");
	dt_report_free(&rep);
	dtt_free(&run);
}

/* ---- denytrace codex -- exec: the probe inside an MCP server ------------- */

/* The end-to-end check that the -c mcp_servers.NAME.env.* overrides make
 * the probe run inside the MCP stdio server Codex starts. `codex exec`
 * needs a model: a stub Responses API on 127.0.0.1 (a free port, bound to
 * port 0) stands in for it, no account needed. The MCP server is a Python
 * script that, on start-up, hard-links a directory (EPERM from the kernel,
 * whatever the sandbox), writes "PID ERRNO" to a marker file, then answers
 * initialize and tools/list over stdio until Codex closes its stdin.
 *
 * What the stub (tests/helpers/responses_stub.py, started by testlib's
 * dtt_stub_start) answers, and why (checked with Codex 0.169.0):
 *  - only `wire_api = "responses"` is accepted ("chat" is a config error),
 *    and Codex POSTs BASE_URL/responses with `stream: true`;
 *  - it holds its reply until the MCP server's marker exists (bounded):
 *    Codex exits as soon as the turn completes and would end the server
 *    with it. (Codex 0.169 already waits for the servers' tool lists
 *    before its first request, whose prompt then names the deferred tool
 *    namespace mcp__NAME; the marker makes the test independent of that.)
 *  - then one SSE stream of response.created, response.output_item.done
 *    (an assistant message) and response.completed: the turn ends, Codex
 *    prints the message and exits 0 at once, about 2 s in all;
 *  - request_max_retries = stream_max_retries = 0 make a broken stub fail
 *    in a second instead of Codex's five reconnects with back-off (~25 s). */

#include <errno.h>

#define MCP_NAME "dtprobe"

/* argv: DIR LINK MARKER */
static const char mcp_py[] =
    "import json, os, sys, errno\n"
    "src, dst, marker = sys.argv[1:4]\n"
    "try:\n"
    "    os.link(src, dst)  # a directory: EPERM\n"
    "    got = 'none'\n"
    "except OSError as e:\n"
    "    got = errno.errorcode.get(e.errno, str(e.errno))\n"
    "with open(marker + '.tmp', 'w') as f:\n"
    "    f.write('%d %s\\n' % (os.getpid(), got))\n"
    "os.rename(marker + '.tmp', marker)\n"
    "def reply(i, **kw):\n"
    "    sys.stdout.write(json.dumps(dict(jsonrpc='2.0', id=i, **kw)) + '\\n')\n"
    "    sys.stdout.flush()\n"
    "while True:\n"
    "    line = sys.stdin.readline()\n"
    "    if not line:\n"
    "        break\n"
    "    try:\n"
    "        m = json.loads(line)\n"
    "    except ValueError:\n"
    "        continue\n"
    "    if 'id' not in m or 'method' not in m:\n"
    "        continue  # a notification, or a reply\n"
    "    if m['method'] == 'initialize':\n"
    "        v = (m.get('params') or {}).get('protocolVersion', '2025-06-18')\n"
    "        reply(m['id'], result={'protocolVersion': v, 'capabilities': {'tools': {}},\n"
    "                               'serverInfo': {'name': '" MCP_NAME "', 'version': '1'}})\n"
    "    elif m['method'] == 'tools/list':\n"
    "        reply(m['id'], result={'tools': [{'name': 'ping', 'description': 'ping',\n"
    "              'inputSchema': {'type': 'object', 'properties': {}}}]})\n"
    "    elif m['method'] == 'ping':\n"
    "        reply(m['id'], result={})\n"
    "    else:\n"
    "        reply(m['id'], error={'code': -32601, 'message': 'no such method'})\n";

static struct dtt_stub stub;
static char mcp_src[PATH_MAX + 16], mcp_dst[PATH_MAX + 16], mcp_marker[PATH_MAX + 16];
static char mcp_script[PATH_MAX + 16], stub_log[PATH_MAX + 16];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

static void mcp_setup(void)
{
	setup();
	const char *tmp = dtt_tmpdir();
	snprintf(mcp_src, sizeof(mcp_src), "%s/mcp-dir", tmp);
	snprintf(mcp_dst, sizeof(mcp_dst), "%s/mcp-link", tmp);
	snprintf(mcp_marker, sizeof(mcp_marker), "%s/mcp-started", tmp);
	snprintf(mcp_script, sizeof(mcp_script), "%s/mcp-server.py", tmp);
	snprintf(stub_log, sizeof(stub_log), "%s/stub.log", tmp);
	cr_assert_eq(mkdir(mcp_src, 0755), 0);
	write_file(mcp_script, mcp_py);
	char config[8 * PATH_MAX];
	snprintf(config, sizeof(config),
	         "[mcp_servers." MCP_NAME "]\ncommand = \"%s\"\n"
	         "args = [\"%s\", \"%s\", \"%s\", \"%s\"]\n",
	         PYTHON, mcp_script, mcp_src, mcp_dst, mcp_marker);
	write_config(config);
	dtt_stub_start(&stub, mcp_marker, stub_log);
}

static void mcp_teardown(void)
{
	dtt_stub_stop(&stub);
	teardown();
}

TestSuite(codex_mcp, .init = mcp_setup, .fini = mcp_teardown, .timeout = 120);

/* `denytrace codex -o RING [--no-mcp] -- exec --skip-git-repo-check -c
 * PROVIDER -c model_provider=dtstub PROMPT` from the workspace, stdin
 * /dev/null (Codex appends piped stdin to the prompt and would wait for
 * it), bounded by timeout(1); then loads the ring. */
static void run_exec(struct dtt_run *r, int no_mcp)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->ring, sizeof(r->ring), "%s/codex.ring", dtt_tmpdir());
	char dt[PATH_MAX + 16], provider[256];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	dtt_stub_provider(&stub, provider, sizeof(provider));
	const char *argv[32];
	size_t n = 0;
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = "exec timeout -k 5 40 \"$@\" < /dev/null";
	argv[n++] = "sh";
	argv[n++] = dt;
	argv[n++] = "codex";
	argv[n++] = "--codex";
	argv[n++] = codex;
	argv[n++] = "-o";
	argv[n++] = r->ring;
	if (no_mcp)
		argv[n++] = "--no-mcp";
	argv[n++] = "--";
	argv[n++] = "exec";
	argv[n++] = "--skip-git-repo-check";
	argv[n++] = "-c";
	argv[n++] = provider;
	argv[n++] = "-c";
	argv[n++] = DTT_STUB_MODEL;
	argv[n++] = "say hi";
	argv[n] = NULL;
	const char *env[] = {env_home, env_codex_home, NULL};
	cr_assert_eq(chdir(dir_w), 0);
	r->status = dtt_system(r->out, sizeof(r->out), argv, env);
	cr_assert_eq(chdir(old_cwd), 0);
	cr_assert_eq(dtt_load(r, r->ring), 0, "ring unreadable; output: %s", r->out);
}

static void read_text(const char *path, char *buf, size_t cap)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = 0;
}

/* The MCP server's marker: its pid and the errno its os.link got. The
 * server must have run and been refused, with the probe or without. */
static long mcp_server_ran(const struct dtt_run *r)
{
	char marker[128], log[4096];
	read_text(mcp_marker, marker, sizeof(marker));
	read_text(stub_log, log, sizeof(log));
	long pid = 0;
	char err[32] = "";
	cr_assert_eq(sscanf(marker, "%ld %31s", &pid, err), 2,
	             "Codex did not start the MCP server (no marker %s); stub log: %s; output: %s",
	             mcp_marker, log, r->out);
	cr_assert_str_eq(err, "EPERM", "the MCP server's os.link got %s, not EPERM", err);
	cr_expect(strstr(log, "responses") && strstr(log, "marker=1"), "stub log: %s", log);
	return pid;
}

static const struct dt_record *record_of(const struct dtt_run *r, int type, long pid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == type && r->recs[i].pid == pid)
			return &r->recs[i];
	return NULL;
}

Test(codex_mcp, the_probe_records_a_refusal_inside_the_mcp_server_codex_starts)
{
	struct dtt_run run;
	run_exec(&run, 0);
	cr_expect_eq(run.status, 0, "codex exec failed: %s", run.out);
	cr_expect(strstr(run.out, "probe carried into 1 MCP server"), "%s", run.out);
	cr_expect(strstr(run.out, DTT_STUB_REPLY), "Codex did not print the stub's reply: %s",
	          run.out);
	long pid = mcp_server_ran(&run);

	/* the refused link, recorded by the probe in the server's process */
	const struct dt_record *d = dtt_find(&run, DT_REC_DENIAL, NULL, "/mcp-dir");
	cr_assert_not_null(d, "no denial from the MCP server (pid %ld) in the ring; output: %s",
	                   pid, run.out);
	cr_expect_eq(d->pid, pid, "the denial's pid %lld is not the MCP server's %ld",
	             (long long)d->pid, pid);
	cr_expect_str_eq(d->comm, "python3");
	cr_expect(d->op && !strncmp(d->op, "link", 4), "op %s", d->op ? d->op : "(null)");
	cr_expect_str_eq(dt_errno_name(d->err), "EPERM");
	cr_expect_str_eq(d->p[0].abspath, mcp_src);
	cr_expect(d->p[1].abspath && !strcmp(d->p[1].abspath, mcp_dst), "second path %s",
	          d->p[1].abspath ? d->p[1].abspath : "(null)");

	/* its process record: started by Codex (not by denytrace), with the
	 * probe in LD_PRELOAD from the overrides (DENYTRACE_RING is not among
	 * the variables a record keeps; the denial above shows it arrived) */
	const struct dt_record *p = record_of(&run, DT_REC_PROCESS, pid);
	cr_assert_not_null(p, "no process record for the MCP server's pid %ld", pid);
	char probe_in[PATH_MAX], probe[PATH_MAX];
	snprintf(probe_in, sizeof(probe_in), "%s/libdenytrace.so", dtt_build());
	cr_assert_not_null(realpath(probe_in, probe));
	const char *pre = dt_record_env(p, "LD_PRELOAD");
	cr_expect(pre && strstr(pre, probe), "LD_PRELOAD in the MCP server: %s",
	          pre ? pre : "(unset)");
	cr_expect(p->argc >= 2 && !strcmp(p->argv[1], mcp_script), "argv[1] %s",
	          p->argc >= 2 ? p->argv[1] : "(none)");
	const struct dt_record *launch = dtt_find(&run, DT_REC_LAUNCH, NULL, NULL);
	cr_assert_not_null(launch);
	cr_expect_neq(p->ppid, launch->pid, "the MCP server's parent is denytrace, not Codex");
	dtt_free(&run);
}

/* The same run with --no-mcp: Codex still starts the server and its link
 * is still refused (the marker says so), but Codex's cleared environment
 * keeps the probe out, and the ring holds nothing from it. */
Test(codex_mcp, without_the_overrides_the_mcp_server_runs_unprobed)
{
	struct dtt_run run;
	run_exec(&run, 1);
	cr_expect_eq(run.status, 0, "codex exec failed: %s", run.out);
	cr_expect(strstr(run.out, DTT_STUB_REPLY), "Codex did not print the stub's reply: %s",
	          run.out);
	long pid = mcp_server_ran(&run);
	cr_expect_null(record_of(&run, DT_REC_PROCESS, pid), "a process record from pid %ld", pid);
	cr_expect_null(record_of(&run, DT_REC_DENIAL, pid), "a denial from pid %ld", pid);
	cr_expect_eq(dtt_count(&run, DT_REC_DENIAL, NULL, "/mcp-dir"), 0);
	dtt_free(&run);
}
