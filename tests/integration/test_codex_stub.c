/* SPDX-License-Identifier: MIT */
/*
 * The Codex model with stand-in Codex binaries that answer --version as the
 * real ones do ("codex-cli 0.169.0"), so this runs where npm cannot:
 *  - which Codex the model follows: the version of the binary --codex PATH
 *    names (roots, report) or `denytrace codex` ran and recorded in the
 *    ring, else the newest checked one (tracer/roots/codex_versions.def);
 *  - the trusted project's layers `denytrace codex` records, which the
 *    report reads instead of the files.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

#define PYTHON "/usr/bin/python3"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(codex_stub, .fini = teardown, .timeout = 120);

/* A stand-in Codex that says it is version, in a directory of its own. */
static const char *fake_codex(const char *version)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/codex-%s", dtt_tmpdir(), version);
	mkdir(dir, 0755);
	const char *path = dtt_fake_codex(dir, version);
	cr_assert_not_null(path);
	return path;
}

/* 0.171 added exec --remote; 0.169 exits 2 on it. */
Test(codex_stub, roots_follows_the_version_of_the_binary_codex_names)
{
	struct dtt_cli c;
	const char *old = fake_codex("0.169.0");
	const char *a1[] = {"roots", "--codex", old, "--codex-args", "exec --remote ws://h:1 task",
	                    NULL};
	dtt_cli(&c, a1);
	cr_assert_eq(c.status, 0, "%s%s", c.out, c.err);
	cr_expect(strstr(c.out, "does not accept --remote in Codex 0.169.0"), "%s", c.out);
	const char *cur = fake_codex("0.171.0");
	const char *a2[] = {"roots", "--codex", cur, "--codex-args", "exec --remote ws://h:1 task",
	                    NULL};
	dtt_cli(&c, a2);
	cr_assert_eq(c.status, 0, "%s%s", c.out, c.err);
	cr_expect(!strstr(c.out, "would refuse"), "%s", c.out);
	cr_expect(strstr(c.out, "codex model: Codex 0.171.0"), "%s", c.out);
}

Test(codex_stub, a_codex_that_cannot_be_found_is_exit_127)
{
	struct dtt_cli c;
	const char *a[] = {"roots", "--codex", "/nonexistent/codex", "--codex-args", "exec", NULL};
	dtt_cli(&c, a);
	cr_expect_eq(c.status, 127, "%s%s", c.out, c.err);
	cr_expect(strstr(c.err, "/nonexistent/codex"), "%s", c.err);
}

/* The report of a ring reads the version `denytrace codex` recorded, not
 * a binary the ring names (the traced program writes the ring). */
Test(codex_stub, the_report_models_the_version_denytrace_codex_recorded)
{
	char ring[PATH_MAX + 16], home[PATH_MAX + 16], json[PATH_MAX + 16];
	snprintf(ring, sizeof(ring), "%s/v.ring", dtt_tmpdir());
	snprintf(home, sizeof(home), "%s/ch", dtt_tmpdir());
	snprintf(json, sizeof(json), "%s/v.json", dtt_tmpdir());
	mkdir(home, 0755);
	const char *codex = fake_codex("0.169.0");
	char cmd[4 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	         "CODEX_HOME='%s' '%s/denytrace' codex -q -o '%s' --codex '%s' -- exec --remote "
	         "ws://h:1 task && '%s/denytrace' report --format json '%s' > '%s'",
	         home, dtt_build(), ring, codex, dtt_build(), ring, json);
	const char *sh[] = {"sh", "-c", cmd, NULL};
	char out[8192];
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
	const char *py = "import json, sys\n"
	                 "c = json.load(open(sys.argv[1]))['codex']\n"
	                 "assert c['model_version'] == '0.169.0', c\n"
	                 "assert '--remote' in (c['refused'] or ''), c\n";
	const char *pargv[] = {PYTHON, "-c", py, json, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "%s", out);
}

/* The report of a ring reads the project layer as `denytrace codex`
 * recorded it: a root only the trusted project's .codex/config.toml lists
 * is still known after the file is gone. */
Test(codex_stub, the_report_reads_the_recorded_project_layer)
{
	const char *tmp = dtt_tmpdir();
	char w[PATH_MAX], home[PATH_MAX], layer[PATH_MAX + 32], ring[PATH_MAX + 16], p[PATH_MAX];
	snprintf(w, sizeof(w), "%s/W", tmp);
	snprintf(home, sizeof(home), "%s/ch", tmp);
	snprintf(p, sizeof(p), "%s/P", tmp);
	snprintf(layer, sizeof(layer), "%s/.codex", w);
	snprintf(ring, sizeof(ring), "%s/p.ring", tmp);
	const char *dirs[] = {w, home, layer, p};
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(mkdir(dirs[i], 0755), 0, "mkdir %s", dirs[i]);
	strcat(layer, "/config.toml");
	FILE *f = fopen(layer, "w");
	cr_assert_not_null(f);
	fprintf(f, "[sandbox_workspace_write]\nwritable_roots = [\"%s\"]\n", p);
	fclose(f);
	char cfg[PATH_MAX + 32];
	snprintf(cfg, sizeof(cfg), "%s/config.toml", home);
	f = fopen(cfg, "w");
	cr_assert_not_null(f);
	fprintf(f, "[projects.\"%s\"]\ntrust_level = \"trusted\"\n", w);
	fclose(f);
	const char *codex = fake_codex("0.171.0");
	char cmd[6 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && CODEX_HOME='%s' '%s/denytrace' codex -q -o '%s' --codex '%s' -- "
	         "sandbox -c 'sandbox_mode=\"workspace-write\"' -- true && rm '%s' && "
	         "'%s/denytrace' roots --json '%s'",
	         w, home, dtt_build(), ring, codex, layer, dtt_build(), ring);
	const char *sh[] = {"sh", "-c", cmd, NULL};
	static char out[65536];
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
	char json[PATH_MAX + 16];
	snprintf(json, sizeof(json), "%s/roots.json", tmp);
	f = fopen(json, "w");
	cr_assert_not_null(f);
	fputs(out, f);
	fclose(f);
	const char *py = "import json, sys\n"
	                 "roots = json.load(open(sys.argv[1]))\n"
	                 "r = [x for x in roots if x['path'] == sys.argv[2]]\n"
	                 "assert r and not r[0].get('dropped_by'), roots\n";
	const char *pargv[] = {PYTHON, "-c", py, json, p, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "%s", out);
}

/* A Codex 0.171 whose `codex doctor --json` says only /elsewhere is
 * writable, whatever the configuration. */
static const char *doctored_codex(void)
{
	static char bin[PATH_MAX];
	snprintf(bin, sizeof(bin), "%s/doctored-codex", dtt_tmpdir());
	FILE *f = fopen(bin, "w");
	cr_assert_not_null(f);
	fputs("#!/bin/sh\n"
	      "[ \"$1\" = --version ] && { echo 'codex-cli 0.171.0'; exit 0; }\n"
	      "cat <<'EOF'\n"
	      "{\"checks\": {\"sandbox.filesystem_paths\": {\"details\": {\n"
	      "\"path 1\": \"/elsewhere (write); path resolved\",\n"
	      "\"path 1 source\": \"effective filesystem policy\"}, \"remediation\": null}}}\n"
	      "EOF\n",
	      f);
	fclose(f);
	cr_assert_eq(chmod(bin, 0755), 0);
	return bin;
}

/* A Codex whose read-back disagrees with the model (a doctored `codex
 * doctor --json`): every path on either side alone is a model error, and
 * the JSON report says so. */
Test(codex_stub, a_readback_that_disagrees_is_reported_as_a_model_error)
{
	const char *tmp = dtt_tmpdir(), *bin = doctored_codex();
	char a[PATH_MAX], json[PATH_MAX + 16];
	snprintf(a, sizeof(a), "%s/A", tmp);
	snprintf(json, sizeof(json), "%s/r.json", tmp);
	char args[PATH_MAX + 128];
	snprintf(args, sizeof(args),
	         "sandbox -c 'sandbox_mode=\"workspace-write\"' -c "
	         "'sandbox_workspace_write.writable_roots=[\"%s\"]'",
	         a);
	char cmd[4 * PATH_MAX];
	snprintf(
	    cmd, sizeof(cmd),
	    "cd '%s' && '%s/denytrace' run -q -o e.ring -- true && CODEX_HOME='%s/ch' "
	    "'%s/denytrace' report --format json --codex '%s' --codex-args \"$1\" e.ring > '%s'",
	    tmp, dtt_build(), tmp, dtt_build(), bin, json);
	const char *sh[] = {"sh", "-c", cmd, "sh", args, NULL};
	char out[8192];
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
	const char *py = "import json, sys\n"
	                 "rb = json.load(open(sys.argv[1]))['codex']['readback']\n"
	                 "assert rb['asked'] is True and rb['writable'] == ['/elsewhere'], rb\n"
	                 "e = rb['model_errors']\n"
	                 "assert len(e) == 2 and '/elsewhere' in e[0] and sys.argv[2] in e[1], e\n";
	const char *pargv[] = {PYTHON, "-c", py, json, a, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "%s", out);
}

/* A FIFO as config.toml: opening it to read would wait for a writer
 * forever; denytrace codex says it did not read it and runs Codex. */
Test(codex_stub, a_fifo_config_is_not_waited_on)
{
	char home[PATH_MAX], fifo[PATH_MAX + 16], ring[PATH_MAX + 16], env_home[PATH_MAX + 16];
	snprintf(home, sizeof(home), "%s/ch", dtt_tmpdir());
	cr_assert_eq(mkdir(home, 0755), 0);
	snprintf(fifo, sizeof(fifo), "%s/config.toml", home);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	snprintf(ring, sizeof(ring), "%s/f.ring", dtt_tmpdir());
	snprintf(env_home, sizeof(env_home), "CODEX_HOME=%s", home);
	const char *codex = fake_codex("0.171.0");
	char dt[PATH_MAX];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	/* timeout: a hang fails the test instead of stalling the suite */
	const char *argv[] = {"timeout", "20",  dt,   "codex", "-o",   ring,
	                      "--codex", codex, "--", "exec",  "task", NULL};
	const char *env[] = {env_home, NULL};
	char out[8192];
	int st = dtt_system(out, sizeof(out), argv, env);
	cr_expect_eq(st, 0, "status %d (124: it hung): %s", st, out);
	cr_expect(strstr(out, "not a regular file"), "%s", out);
}

/* 8000 MCP servers: the overrides outgrow the exec's argument space, and
 * Codex would fail with "Argument list too long". denytrace says so
 * before it starts anything (exit 125), and --no-mcp is the way out. */
Test(codex_stub, too_many_mcp_servers_are_refused_before_codex_starts)
{
	char home[PATH_MAX], cfg[PATH_MAX + 16], ring[PATH_MAX + 16], env_home[PATH_MAX + 16];
	char mark[PATH_MAX + 16], bin[PATH_MAX];
	snprintf(home, sizeof(home), "%s/ch", dtt_tmpdir());
	cr_assert_eq(mkdir(home, 0755), 0);
	snprintf(cfg, sizeof(cfg), "%s/config.toml", home);
	FILE *f = fopen(cfg, "w");
	cr_assert_not_null(f);
	for (int i = 0; i < 8000; i++)
		fprintf(f, "[mcp_servers.server_%05d]\ncommand = \"/bin/true\"\n", i);
	fclose(f);
	snprintf(ring, sizeof(ring), "%s/m.ring", dtt_tmpdir());
	snprintf(env_home, sizeof(env_home), "CODEX_HOME=%s", home);
	/* a Codex that leaves a mark when it runs */
	snprintf(mark, sizeof(mark), "%s/ran", dtt_tmpdir());
	snprintf(bin, sizeof(bin), "%s/marking-codex", dtt_tmpdir());
	f = fopen(bin, "w");
	cr_assert_not_null(f);
	fprintf(f,
	        "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'codex-cli 0.171.0'; exit 0; }\n"
	        "touch '%s'\n",
	        mark);
	fclose(f);
	cr_assert_eq(chmod(bin, 0755), 0);
	char dt[PATH_MAX];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	const char *argv[] = {"timeout", "60", dt,   "codex", "-o",   ring,
	                      "--codex", bin,  "--", "exec",  "task", NULL};
	const char *env[] = {env_home, NULL};
	static char out[1 << 20];
	cr_expect_eq(dtt_system(out, sizeof(out), argv, env), 125, "%.2000s", out);
	cr_expect(strstr(out, "Argument list too long") && strstr(out, "--no-mcp"), "%.2000s", out);
	cr_expect(access(mark, F_OK) != 0, "Codex was started");
	const char *nomcp[] = {"timeout", "60", dt,   "codex", "--no-mcp", "-o", ring,
	                       "--codex", bin,  "--", "exec",  "task",     NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), nomcp, env), 0, "%.2000s", out);
	cr_expect(access(mark, F_OK) == 0, "--no-mcp did not start Codex");
}

/* denytrace codex asks the Codex it runs, before it starts it. */
Test(codex_stub, denytrace_codex_says_what_codex_itself_finds_writable_and_each_model_error)
{
	const char *tmp = dtt_tmpdir(), *bin = doctored_codex();
	char a[PATH_MAX], ring[PATH_MAX + 16], list[PATH_MAX + 64], home[PATH_MAX + 16];
	snprintf(a, sizeof(a), "%s/A", tmp);
	snprintf(ring, sizeof(ring), "%s/d.ring", tmp);
	snprintf(list, sizeof(list), "sandbox_workspace_write.writable_roots=[\"%s\"]", a);
	snprintf(home, sizeof(home), "CODEX_HOME=%s/ch", tmp);
	char dt[PATH_MAX];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	const char *argv[] = {dt,   "codex", "-o",      ring,   "--codex",
	                      bin,  "--",    "sandbox", "-c",   "sandbox_mode=\"workspace-write\"",
	                      "-c", list,    "--",      "true", NULL};
	const char *env[] = {home, NULL};
	char out[16384];
	cr_assert_eq(dtt_system(out, sizeof(out), argv, env), 0, "%s", out);
	cr_expect(strstr(out, "Codex itself says writable: /elsewhere"), "%s", out);
	cr_expect(strstr(out, "model error: Codex says /elsewhere"), "%s", out);
	cr_expect(strstr(out, "model error: the model lists") && strstr(out, a), "%s", out);
}
