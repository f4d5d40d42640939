/* SPDX-License-Identifier: MIT */
/*
 * A process record has a fixed budget (DT_REC_MAX). Its mount table says
 * which roots the sandbox granted, so it is written before argv and the
 * environment: a large variable must not push mounts out. When mounts are
 * cut anyway (more than fit), the record says so and the report says the
 * cause is unknown rather than guessing from the part it has.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testlib.h"

static void setup(void)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(bigproc, .init = setup, .fini = teardown, .timeout = 120);

/* bwrap (read-only /) with nbinds writable directories named with a long
 * filler, root/ writable with root/.git read-only, running sh -c script;
 * env as dtt_run takes it. */
static void run_bwrap(struct dtt_run *r, size_t nbinds, size_t name_len, const char *script,
                      const char *const *env)
{
	const char *t = dtt_tmpdir();
	static char paths[70][4096];
	static const char *argv[256];
	static char root[512], git[512];
	size_t n = 0;
	snprintf(root, sizeof(root), "%s/root", t);
	snprintf(git, sizeof(git), "%s/root/.git", t);
	mkdir(root, 0755);
	mkdir(git, 0755);
	const char *head[] = {"bwrap", "--ro-bind", "/",  "/",  "--dev",     "/dev", "--proc",
	                      "/proc", "--bind",    root, root, "--ro-bind", git,    git};
	for (size_t i = 0; i < sizeof(head) / sizeof(*head); i++)
		argv[n++] = head[i];
	for (size_t k = 0; k < nbinds && k < 70; k++) {
		/* name_len bytes of filler, in components a filesystem accepts */
		int len = snprintf(paths[k], sizeof(paths[k]), "%s/d%03zu-", t, k);
		mkdir(paths[k], 0755);
		for (size_t done = 0; done < name_len && len < 3900; done += 200) {
			len +=
			    snprintf(paths[k] + len, sizeof(paths[k]) - (size_t)len, "/%0200d", 0);
			mkdir(paths[k], 0755);
		}
		argv[n++] = "--bind";
		argv[n++] = paths[k];
		argv[n++] = paths[k];
	}
	argv[n++] = "--";
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n] = NULL;
	cr_assert_eq(dtt_run(r, NULL, argv, env), 0, "ring unreadable: %s", r->out);
}

/* The shell's process record (argv[0] /bin/sh). */
static const struct dt_record *shell_record(const struct dtt_run *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == DT_REC_PROCESS && r->recs[i].argc &&
		    !strcmp(r->recs[i].argv[0], "/bin/sh"))
			return &r->recs[i];
	return NULL;
}

/* "CAUSE\tREASON" that `denytrace report --format json` gives the refusal
 * of a path ending in suffix (JSON read by Python's json module). */
static void verdict_for(const char *ring, const char *suffix, char *out, size_t cap)
{
	char code[1024], exe[600];
	snprintf(exe, sizeof(exe), "%s/denytrace", dtt_build());
	snprintf(code, sizeof(code),
	         "import json, subprocess, sys\n"
	         "d = json.loads(subprocess.run([sys.argv[1], 'report', '--format', 'json', "
	         "sys.argv[2]], capture_output=True).stdout)\n"
	         "print(*[x['cause'] + '\\t' + x['reason'] for x in d['denials'] "
	         "if x['path'].endswith(sys.argv[3])], sep='\\n')\n");
	const char *argv[] = {"/usr/bin/python3", "-c", code, exe, ring, suffix, NULL};
	cr_assert_eq(dtt_system(out, cap, argv, NULL), 0, "python: %s", out);
	cr_assert(out[0] && out[0] != '\n', "no refusal of ...%s in the report", suffix);
}

Test(bigproc, a_large_environment_variable_does_not_push_the_mounts_out)
{
	/* just under what one field can hold (64 KiB): the record is full */
	static char pad[64010], script[600];
	memcpy(pad, "HERMES_PAD=", 11);
	memset(pad + 11, 'x', 64000 - 11);
	const char *env[] = {pad, NULL};
	snprintf(script, sizeof(script), "echo x > '%s/root/.git/config'; true", dtt_tmpdir());
	struct dtt_run r;
	run_bwrap(&r, 20, 0, script, env);
	const struct dt_record *sh = shell_record(&r);
	cr_assert_not_null(sh, "no process record of the shell: %s", r.out);
	size_t binds = 0;
	for (size_t i = 0; i < sh->nmounts; i++)
		binds += sh->mounts[i].path && strstr(sh->mounts[i].path, "/d0") != NULL;
	cr_expect_eq(binds, 20, "%zu of the 20 writable binds kept (%zu mounts in all)", binds,
	             sh->nmounts);
	cr_expect_eq(sh->mounts_trunc, 0, "every mount fitted, yet marked truncated");
	char v[4096];
	verdict_for(r.ring, "/root/.git/config", v, sizeof(v));
	cr_expect_eq(strncmp(v, "protected-path\t", 15), 0, "verdict: %s", v);
	dtt_free(&r);
}

Test(bigproc, mounts_that_do_not_fit_are_marked_and_the_cause_is_not_guessed)
{
	static char script[600];
	snprintf(script, sizeof(script), "echo x > '%s/root/.git/config'; true", dtt_tmpdir());
	struct dtt_run r;
	/* 70 binds of 1.4 KB paths: a mount table far beyond one record */
	run_bwrap(&r, 70, 1400, script, NULL);
	const struct dt_record *sh = shell_record(&r);
	cr_assert_not_null(sh, "no process record of the shell: %s", r.out);
	cr_expect_eq(sh->mounts_trunc, 1, "only %zu mounts kept, not marked truncated",
	             sh->nmounts);
	char v[4096];
	verdict_for(r.ring, "/root/.git/config", v, sizeof(v));
	cr_expect_eq(strncmp(v, "unknown\tmount table incomplete", 30), 0, "guessed: %s", v);
	dtt_free(&r);
}
