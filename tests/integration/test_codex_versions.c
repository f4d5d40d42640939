/* SPDX-License-Identifier: MIT */
/*
 * Which Codex the model follows: the version of the binary --codex PATH
 * names (roots, report) or `denytrace codex` ran and recorded in the ring,
 * else the newest checked one (tracer/roots/codex_versions.def). The Codex
 * binaries here are stand-ins that answer --version as the real ones do
 * ("codex-cli 0.169.0"), so this runs where npm cannot.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testlib.h"

#define PYTHON "/usr/bin/python3"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(codex_versions, .fini = teardown, .timeout = 60);

/* A stand-in Codex that says it is version and otherwise exits 0. */
static const char *fake_codex(const char *version)
{
	static char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/codex-%s", dtt_tmpdir(), version);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "#!/bin/sh\n[ \"$1\" = --version ] && echo 'codex-cli %s'\nexit 0\n", version);
	fclose(f);
	cr_assert_eq(chmod(path, 0755), 0);
	return path;
}

/* 0.171 added exec --remote; 0.169 exits 2 on it. */
Test(codex_versions, roots_follows_the_version_of_the_binary_codex_names)
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

Test(codex_versions, a_codex_that_cannot_be_found_is_exit_127)
{
	struct dtt_cli c;
	const char *a[] = {"roots", "--codex", "/nonexistent/codex", "--codex-args", "exec", NULL};
	dtt_cli(&c, a);
	cr_expect_eq(c.status, 127, "%s%s", c.out, c.err);
	cr_expect(strstr(c.err, "/nonexistent/codex"), "%s", c.err);
}

/* The report of a ring reads the version `denytrace codex` recorded, not
 * a binary the ring names (the traced program writes the ring). */
Test(codex_versions, the_report_models_the_version_denytrace_codex_recorded)
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
