/* SPDX-License-Identifier: MIT */
/* make install into a DESTDIR: the installed CLI finds the installed probe
 * (../lib/denytrace/, or ../lib/MULTIARCH/denytrace/ as the Debian package
 * has it) on its own and records a refusal; make uninstall removes what
 * install put there. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static char dest[PATH_MAX], repo[PATH_MAX];

static void setup(void)
{
	snprintf(dest, sizeof(dest), "%s/dest", dtt_tmpdir());
	if (!getcwd(repo, sizeof(repo)))
		cr_assert_fail("getcwd");
	/* the installed layout must be found without help */
	unsetenv("DENYTRACE_PROBE");
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(install, .init = setup, .fini = teardown, .timeout = 300);

/* make TARGET into DESTDIR with PREFIX=/usr/local and, when var is not
 * NULL, one more VAR=VALUE. */
static int make_with(char *out, size_t cap, const char *target, const char *var)
{
	char destdir[PATH_MAX + 16], build[PATH_MAX + 16];
	snprintf(destdir, sizeof(destdir), "DESTDIR=%s", dest);
	snprintf(build, sizeof(build), "BUILD=%s", dtt_build());
	const char *argv[] = {"make",  "--no-print-directory",
	                      "-C",    repo,
	                      target,  "PREFIX=/usr/local",
	                      destdir, build,
	                      var,     NULL};
	return dtt_system(out, cap, argv, NULL);
}

static int make(char *out, size_t cap, const char *target)
{
	return make_with(out, cap, target, NULL);
}

static int exists(const char *rel)
{
	char p[PATH_MAX * 2];
	struct stat st;
	snprintf(p, sizeof(p), "%s/usr/local/%s", dest, rel);
	return stat(p, &st) == 0;
}

Test(install, installed_cli_traces_with_the_installed_probe_and_uninstall_removes_it)
{
	static char out[65536];
	cr_assert_eq(make(out, sizeof(out), "install"), 0, "make install failed: %s", out);
	cr_expect(exists("bin/denytrace"), "bin/denytrace not installed");
	cr_expect(exists("lib/denytrace/libdenytrace.so"), "the probe not installed");
	cr_expect(exists("share/man/man1/denytrace.1"), "the man page not installed");
	cr_expect(exists("share/bash-completion/completions/denytrace"),
	          "the bash completion not installed");
	cr_expect(exists("share/zsh/vendor-completions/_denytrace"),
	          "the zsh completion not installed");
	cr_expect(exists("share/doc/denytrace/README.md"), "the README (which the man page "
	                                                   "cites) not installed");

	char cli[PATH_MAX * 2], probe[PATH_MAX * 2];
	snprintf(cli, sizeof(cli), "%s/usr/local/bin/denytrace", dest);
	snprintf(probe, sizeof(probe), "%s/usr/local/lib/denytrace/libdenytrace.so", dest);

	const char *ver[] = {cli, "--version", NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), ver, NULL), 0, "%s", out);
	cr_expect(strstr(out, "denytrace ") && strstr(out, "ring format"), "--version says: %s",
	          out);

	if (!dtt_have_bwrap()) {
		make(out, sizeof(out), "uninstall");
		cr_skip_test("bubblewrap cannot create a sandbox here: no refusal to record");
	}
	char ro[PATH_MAX], script[PATH_MAX * 2], ring[PATH_MAX];
	snprintf(ro, sizeof(ro), "%s/ro", dtt_tmpdir());
	mkdir(ro, 0755);
	snprintf(script, sizeof(script), "echo x > %s/refused.txt; exit 0", ro);
	snprintf(ring, sizeof(ring), "%s/installed.ring", dtt_tmpdir());
	const char *run[] = {cli, "run", "-q",    "-o",   ring, "--", "bwrap", "--ro-bind",
	                     "/", "/",   "--dev", "/dev", "sh", "-c", script,  NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), run, NULL), 0, "installed run failed: %s", out);

	struct dtt_run r;
	memset(&r, 0, sizeof(r));
	cr_assert_eq(dtt_load(&r, ring), 0);
	cr_expect_not_null(dtt_find(&r, DT_REC_DENIAL, NULL, "/ro/refused.txt"),
	                   "no refusal recorded by the installed probe");
	char real_probe[PATH_MAX];
	cr_assert_not_null(realpath(probe, real_probe));
	int used = 0;
	for (size_t i = 0; i < r.n; i++) {
		const char *pre = r.recs[i].type == DT_REC_PROCESS
		                      ? dt_record_env(&r.recs[i], "LD_PRELOAD")
		                      : NULL;
		used |= pre && strstr(pre, real_probe) != NULL;
	}
	cr_expect(used, "no traced process had %s in LD_PRELOAD", real_probe);
	dtt_free(&r);

	cr_assert_eq(make(out, sizeof(out), "uninstall"), 0, "make uninstall failed: %s", out);
	cr_expect(!exists("bin/denytrace"), "bin/denytrace left behind");
	cr_expect(!exists("lib/denytrace/libdenytrace.so"), "the probe left behind");
	cr_expect(!exists("lib/denytrace"), "lib/denytrace/ left behind");
	cr_expect(!exists("share/man/man1/denytrace.1"), "the man page left behind");
	cr_expect(!exists("share/bash-completion/completions/denytrace"),
	          "the bash completion left behind");
	cr_expect(!exists("share/doc/denytrace"), "share/doc/denytrace/ left behind");
}

/* The Debian package puts the probe where Debian keeps a package's private
 * libraries, /usr/lib/MULTIARCH/denytrace: the CLI must find it there. */
Test(install, installed_cli_finds_the_probe_in_the_multiarch_library_directory)
{
	static char out[65536];
	const char *cc[] = {"cc", "-print-multiarch", NULL};
	char arch[256];
	if (dtt_system(arch, sizeof(arch), cc, NULL) || !arch[0] || arch[0] == '\n')
		cr_skip_test("the compiler names no multiarch directory");
	arch[strcspn(arch, "\n")] = 0;
	char probedir[PATH_MAX], rel[PATH_MAX];
	snprintf(probedir, sizeof(probedir), "PROBEDIR=/usr/local/lib/%s/denytrace", arch);
	snprintf(rel, sizeof(rel), "lib/%s/denytrace/libdenytrace.so", arch);
	cr_assert_eq(make_with(out, sizeof(out), "install", probedir), 0, "make install: %s", out);
	cr_expect(exists(rel), "the probe is not in %s", rel);
	cr_expect(!exists("lib/denytrace"), "the probe went to lib/denytrace too");

	char cli[PATH_MAX * 2], ring[PATH_MAX];
	snprintf(cli, sizeof(cli), "%s/usr/local/bin/denytrace", dest);
	snprintf(ring, sizeof(ring), "%s/multiarch.ring", dtt_tmpdir());
	const char *run[] = {cli, "run", "-q", "-o", ring, "--", "/bin/true", NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), run, NULL), 0, "the installed CLI: %s", out);
	cr_assert_eq(make_with(out, sizeof(out), "uninstall", probedir), 0, "uninstall: %s", out);
	cr_expect(!exists(rel), "the probe left behind");
}
