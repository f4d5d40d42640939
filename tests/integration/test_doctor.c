/* SPDX-License-Identifier: MIT */
/* denytrace doctor: passes on a machine where the probe works, and fails,
 * naming the check, when the probe is missing or cannot be loaded. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codex_shapes.h"
#include "roots.h"
#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(doctor, .fini = teardown, .timeout = 120);

static int doctor(char *out, size_t cap, const char *arg, const char *const *env)
{
	char cli[4096];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *argv[] = {cli, "doctor", arg, NULL};
	return dtt_system(out, cap, argv, env);
}

/* Field (status, detail, fix) of the check called name in doctor's JSON,
 * or "". */
static const char *check_field(const char *json, const char *name, const char *field, char *buf,
                               size_t cap)
{
	struct dt_jv *doc = dtt_json(json);
	const char *s = dt_jv_str(dtt_jfind(doc, "checks", "name", name), field);
	snprintf(buf, cap, "%s", s ? s : "");
	dt_jv_free(doc);
	return buf;
}

static const char *check_status(const char *json, const char *name, char *buf, size_t cap)
{
	return check_field(json, name, "status", buf, cap);
}

/* doctor's verdict: 1 when its JSON says "ok": true. */
static int doctor_ok(const char *json)
{
	struct dt_jv *doc = dtt_json(json);
	int ok = dt_jv_true(doc, "ok");
	dt_jv_free(doc);
	return ok;
}

Test(doctor, passes_here_and_its_json_says_the_probe_is_found_and_loads)
{
	char out[16384], st[32];
	const char *env[] = {"DENYTRACE_PROBE=", NULL};
	cr_assert_eq(doctor(out, sizeof(out), "--json", env), 0, "doctor failed: %s", out);
	cr_expect(doctor_ok(out), "%s", out);
	cr_expect_str_eq(check_status(out, "probe_found", st, sizeof(st)), "ok", "%s", out);
	cr_expect_str_eq(check_status(out, "probe_loadable", st, sizeof(st)), "ok", "%s", out);
	cr_expect_str_eq(check_status(out, "ring_writable", st, sizeof(st)), "ok", "%s", out);
	const char *names[] = {"bubblewrap", "landlock",   "seccomp_notify",
	                       "codex",      "codex_home", NULL};
	for (const char *const *n = names; *n; n++)
		cr_expect_neq(check_status(out, *n, st, sizeof(st))[0], 0, "no %s check: %s", *n,
		              out);
}

Test(doctor, text_output_has_one_status_line_per_check)
{
	char out[16384];
	const char *env[] = {"DENYTRACE_PROBE=", NULL};
	cr_assert_eq(doctor(out, sizeof(out), NULL, env), 0, "doctor failed: %s", out);
	int lines = 0;
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		if (!strncmp(l, "denytrace ", 10))
			continue;
		cr_expect(!strncmp(l, "ok ", 3) || !strncmp(l, "warn ", 5) ||
		              !strncmp(l, "FAIL ", 5),
		          "line without a status: %s", l);
		lines++;
	}
	cr_expect_eq(lines, 8, "want 8 checks, got %d", lines);
}

Test(doctor, missing_probe_is_a_failure_with_exit_1)
{
	char out[16384], st[32];
	const char *env[] = {"DENYTRACE_PROBE=/nonexistent/libdenytrace.so", NULL};
	cr_expect_eq(doctor(out, sizeof(out), "--json", env), 1, "%s", out);
	cr_expect_str_eq(check_status(out, "probe_found", st, sizeof(st)), "fail", "%s", out);
	cr_expect(!doctor_ok(out), "%s", out);
}

Test(doctor, probe_that_cannot_be_preloaded_fails_the_load_check)
{
	char bogus[600], out[16384], st[32], env1[700];
	snprintf(bogus, sizeof(bogus), "%s/libdenytrace.so", dtt_tmpdir());
	FILE *f = fopen(bogus, "w");
	cr_assert_not_null(f);
	fputs("not an ELF object\n", f);
	fclose(f);
	snprintf(env1, sizeof(env1), "DENYTRACE_PROBE=%s", bogus);
	const char *env[] = {env1, NULL};
	cr_expect_eq(doctor(out, sizeof(out), "--json", env), 1, "%s", out);
	cr_expect_str_eq(check_status(out, "probe_found", st, sizeof(st)), "ok", "%s", out);
	cr_expect_str_eq(check_status(out, "probe_loadable", st, sizeof(st)), "fail", "%s", out);
}

/* A stand-in codex on PATH that prints version; the PATH entry for env. */
static void fake_codex_on_path(const char *version, char *path, size_t cap)
{
	char bin[600];
	snprintf(bin, sizeof(bin), "%s/bin", dtt_tmpdir());
	mkdir(bin, 0755);
	cr_assert_not_null(dtt_fake_codex(bin, version));
	snprintf(path, cap, "PATH=%s:%s", bin, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
}

Test(doctor, reports_codex_found_on_path_with_its_version_and_the_checked_ones)
{
	char out[16384], st[32], path[8192];
	fake_codex_on_path("0.171.0", path, sizeof(path));
	const char *env[] = {path, "DENYTRACE_PROBE=", "CODEX_HOME=", NULL};
	cr_assert_eq(doctor(out, sizeof(out), "--json", env), 0, "%s", out);
	cr_expect_str_eq(check_status(out, "codex", st, sizeof(st)), "ok", "%s", out);
	char detail[1024];
	check_field(out, "codex", "detail", detail, sizeof(detail));
	cr_expect(strstr(detail, "codex-cli 0.171.0"), "version not reported: %s", out);
	for (size_t i = 0; i < dt_ncodex_versions; i++)
		cr_expect(strstr(detail, dt_codex_versions[i].name),
		          "checked version %s not named: %s", dt_codex_versions[i].name, out);
}

/* A Codex newer than every checked one may lay out its sandbox otherwise:
 * doctor says so instead of "ok". */
Test(doctor, warns_when_the_installed_codex_is_newer_than_the_checked_ones)
{
	char out[16384], st[32], path[8192];
	fake_codex_on_path("9.8.7", path, sizeof(path));
	const char *env[] = {path, "DENYTRACE_PROBE=", "CODEX_HOME=", NULL};
	cr_assert_eq(doctor(out, sizeof(out), "--json", env), 0, "%s", out);
	cr_expect_str_eq(check_status(out, "codex", st, sizeof(st)), "warn", "%s", out);
	char detail[1024];
	check_field(out, "codex", "detail", detail, sizeof(detail));
	cr_expect(strstr(detail, "codex-cli 9.8.7"), "version not reported: %s", out);
	cr_expect(strstr(detail, dt_codex_versions[dt_ncodex_versions - 1].name),
	          "the version it is modelled as is not named: %s", out);
}

/* Codex 0.169 and 0.171: "Refusing to create helper binaries under
 * temporary dir" when CODEX_HOME is inside $TMPDIR (else /tmp). */
Test(doctor, warns_about_a_codex_home_inside_the_temporary_directory)
{
	char out[16384], st[32], home[700], tmp[700];
	snprintf(tmp, sizeof(tmp), "TMPDIR=%s", dtt_tmpdir());
	snprintf(home, sizeof(home), "CODEX_HOME=%s/ch", dtt_tmpdir());
	const char *env[] = {home, tmp, "DENYTRACE_PROBE=", NULL};
	cr_assert_eq(doctor(out, sizeof(out), "--json", env), 0, "%s", out);
	cr_expect_str_eq(check_status(out, "codex_home", st, sizeof(st)), "warn", "%s", out);
	const char *outside[] = {"CODEX_HOME=/var/lib/codex-home", tmp, "DENYTRACE_PROBE=", NULL};
	cr_assert_eq(doctor(out, sizeof(out), "--json", outside), 0, "%s", out);
	cr_expect_str_eq(check_status(out, "codex_home", st, sizeof(st)), "ok", "%s", out);
}

/* A checkout's denytrace finds the Codex `make codex` put beside it
 * (build/codex) when none is on PATH, and without one never advises
 * `npm install -g`, which an ordinary user cannot run. */
Test(doctor, finds_the_codex_make_codex_installed_beside_it_and_never_advises_npm_g)
{
	char dir[600], bin[700], cli[4096], out[16384], st[32];
	snprintf(dir, sizeof(dir), "%s/build", dtt_tmpdir());
	snprintf(bin, sizeof(bin), "%s/codex/node_modules/.bin", dir);
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s/denytrace' '%s/'", bin, dtt_build(),
	         dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cli, sizeof(cli), "%s/denytrace", dir);
	const char *argv[] = {cli, "doctor", "--json", NULL};
	const char *env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
	                     "DENYTRACE_PROBE=", "CODEX_HOME=", NULL};
	dtt_system(out, sizeof(out), argv, env);
	cr_expect_str_eq(check_status(out, "codex", st, sizeof(st)), "warn", "%s", out);
	char fix[512];
	check_field(out, "codex", "fix", fix, sizeof(fix));
	cr_expect(!strstr(out, "npm install -g"), "advises npm -g: %s", out);
	cr_expect(strstr(fix, "--prefix"), "no user-level install advised: %s", out);
	cr_assert_not_null(dtt_fake_codex(bin, "0.171.0"));
	dtt_system(out, sizeof(out), argv, env);
	cr_expect_str_eq(check_status(out, "codex", st, sizeof(st)), "ok", "%s", out);
	cr_expect(
	    strstr(check_field(out, "codex", "detail", fix, sizeof(fix)), "codex-cli 0.171.0"),
	    "%s", out);
}

/* A "Codex" that runs the command with no sandbox at all, as a model that
 * is wrong about every granting shape would be: --codex-shapes fails,
 * names each differing shape with both answers, and only those. */
Test(doctor, codex_shapes_names_every_shape_where_codex_and_the_model_differ)
{
	char bin[600], path[8192], fake[700];
	snprintf(bin, sizeof(bin), "%s/bin", dtt_tmpdir());
	mkdir(bin, 0755);
	snprintf(fake, sizeof(fake), "%s/codex", bin);
	FILE *f = fopen(fake, "w");
	cr_assert_not_null(f);
	fputs("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'codex-cli 0.171.0'; exit 0; }\n"
	      "while [ $# -gt 0 ] && [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n",
	      f);
	cr_assert_eq(fclose(f), 0);
	chmod(fake, 0755);
	snprintf(path, sizeof(path), "PATH=%s:%s", bin,
	         getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	const char *env[] = {path, "DENYTRACE_PROBE=", "CODEX_HOME=", NULL};
	char cli[4096];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *argv[] = {cli, "doctor", "--json", "--codex-shapes", NULL};
	static char out[262144];
	cr_assert_eq(dtt_system(out, sizeof(out), argv, env), 1, "%s", out);
	char st[32];
	cr_expect_str_eq(check_status(out, "codex_shapes", st, sizeof(st)), "fail", "%s", out);

	/* every directory is writable without a sandbox: a shape differs
	 * exactly where the recorded table (what the real Codex did, which
	 * the model matches) says anything else */
	const char *all = "A B C W W2 T /tmp A/.git W/.git W/.codex W/.agents W/.aws hh/r W/rel L "
	                  "home/rel";
	size_t want_differ = 0;
	struct dt_jv *doc = dtt_json(out);
	for (size_t i = 0; i < dt_ncodex_shapes; i++) {
		const struct dt_codex_shape *s = &dt_codex_shapes[i];
		int differs = !dt_same_words(s->writable, all);
		want_differ += differs;
		const char *got = dt_jv_str(dtt_jfind(doc, "codex_shapes", "id", s->id), "status");
		cr_expect_str_eq(got ? got : "", differs ? "differ" : "agree", "%s", s->id);
	}
	size_t got_differ = dtt_jcount(doc, "codex_shapes", "status", "differ");
	size_t got_agree = dtt_jcount(doc, "codex_shapes", "status", "agree");
	dt_jv_free(doc);
	cr_expect_eq(got_differ, want_differ, "%s", out);
	cr_expect_eq(got_agree + got_differ, dt_ncodex_shapes, "%s", out);
	cr_expect_gt(want_differ, 50, "the table grants less than everything almost everywhere");
}
