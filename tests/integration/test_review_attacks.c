/* SPDX-License-Identifier: MIT */
/*
 * Attacks from the adversarial review of issue 22's result, each as the
 * traced program would make it: with nothing forged, only by choosing
 * where to fail and what to put in its own environment.
 *
 *   make build/integration/test_review_attacks && ./build/integration/test_review_attacks
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static char scratch[PATH_MAX];

static void teardown(void)
{
	if (scratch[0]) {
		char cmd[PATH_MAX + 16];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", scratch);
	}
	dtt_cleanup();
}

TestSuite(review_attacks, .fini = teardown, .timeout = 180);

static char out[1 << 17];

static const char *dt(void)
{
	static char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/denytrace", dtt_build());
	return p;
}

/* A directory of the user's that is not under /tmp (where anyone may
 * write anyway): the build directory stands for ~/.ssh. */
static const char *private_dir(void)
{
	snprintf(scratch, sizeof(scratch), "%s/review-XXXXXX", dtt_build());
	cr_assert_not_null(mkdtemp(scratch));
	return scratch;
}

/* A bwrap worker whose workspace is ws fails to append to target (outside
 * every root); `fix --verify --yes` must not hand target's directory to
 * the re-run: the worker chose it, no root names it, and it is not where
 * every user may write. */
Test(review_attacks, a_directory_only_the_worker_named_outside_tmp_is_never_granted_by_verify)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir(), *secret = private_dir();
	char ws[PATH_MAX], state[PATH_MAX + 16], target[PATH_MAX + 16], script[2 * PATH_MAX];
	snprintf(ws, sizeof(ws), "%s/ws", top);
	cr_assert_eq(mkdir(ws, 0755), 0);
	snprintf(state, sizeof(state), "%s/state", top);
	cr_assert_eq(setenv("XDG_STATE_HOME", state, 1), 0);
	snprintf(target, sizeof(target), "%s/authorized_keys", secret);
	snprintf(script, sizeof(script), "echo worker-key >> '%s'", target);
	const char *argv[DTT_BWRAP_RW_WORDS + 4];
	size_t n = dtt_bwrap_rw(argv, ws);
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n] = NULL;
	char cwd[PATH_MAX];
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(ws), 0);
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	cr_assert_eq(chdir(cwd), 0);
	cr_assert_neq(access(target, F_OK), 0, "the sandbox let the worker write: %s", r.out);

	const char *fix[] = {dt(), "fix", "--verify", "--yes", "--format", "json", r.ring, NULL};
	dtt_system(out, sizeof(out), fix, NULL);
	cr_expect_neq(access(target, F_OK), 0,
	              "fix --verify --yes made %s writable for the worker:\n%s", secret, out);
	dtt_free(&r);
}

/* A bwrap worker whose own HOME is home fails to write /usr/x; then
 * `evidence --redact` of its ring into top/b. */
static void evidence_of_home(const char *home, char *bundle, size_t cap)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir();
	char sethome[PATH_MAX + 8];
	snprintf(sethome, sizeof(sethome), "HOME=%s", home);
	const char *argv[DTT_BWRAP_RW_WORDS + 6];
	size_t n = dtt_bwrap_rw(argv, top);
	argv[n++] = "/usr/bin/env";
	argv[n++] = sethome;
	argv[n++] = "touch";
	argv[n++] = "/usr/x";
	argv[n] = NULL;
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	snprintf(bundle, cap, "%s/b", top);
	const char *ev[] = {dt(), "evidence", "--redact", "--out", bundle, r.ring, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), ev, NULL), 0, "%s", out);
	dtt_free(&r);
}

/* evidence --redact replaces a recorded HOME in every file; the worker
 * chooses it, so it must not reach the markup. */
Test(review_attacks, a_worker_s_home_named_like_svg_markup_leaves_the_redacted_timeline_valid)
{
	if (access("/usr/bin/xmllint", X_OK) != 0)
		cr_skip_test("xmllint is missing (apt-get install libxml2-utils)");
	char bundle[PATH_MAX], svg[PATH_MAX + 16];
	evidence_of_home("/text", bundle, sizeof(bundle));
	snprintf(svg, sizeof(svg), "%s/timeline.svg", bundle);
	const char *lint[] = {"/usr/bin/xmllint", "--noout", svg, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), lint, NULL), 0, "xmllint: %s", out);
}

Test(review_attacks, a_worker_s_home_named_like_json_punctuation_leaves_the_redacted_json_valid)
{
	char bundle[PATH_MAX];
	evidence_of_home("\": ", bundle, sizeof(bundle));
	const char *files[] = {"report.json", "facts.json"};
	for (size_t i = 0; i < 2; i++) {
		char path[2 * PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", bundle, files[i]);
		const char *py[] = {"python3", "-c",
		                    "import json,sys; json.load(open(sys.argv[1]))", path, NULL};
		cr_expect_eq(dtt_system(out, sizeof(out), py, NULL), 0, "%s: %s", files[i], out);
	}
}
