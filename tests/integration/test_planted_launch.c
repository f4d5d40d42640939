/* SPDX-License-Identifier: MIT */
/* A worker `denytrace run` launched without a sandbox it reads can write
 * the user's launch directory: after its run it plants a launch file for
 * its ring at the launcher's own path, claiming a command that creates a
 * marker. fix --verify must run none of it and say the file was ignored
 * (issue 22: the planted launch file). */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(planted_launch, .fini = teardown, .timeout = 240);

static char out[1 << 17];

/* A board directory of root's that the worker (uid 65534) may not create
 * its database in: a file-permissions finding, whose chown fix --verify
 * proves by running the launch again (so a trusted launch file runs). The
 * user's state directory, and the marker a planted command would create. */
struct world {
	char top[PATH_MAX], board[PATH_MAX + 16], state[PATH_MAX + 16], marker[PATH_MAX + 16];
	char e_state[PATH_MAX + 32];
};

static void make_world(struct world *w)
{
	snprintf(w->top, sizeof(w->top), "%s", dtt_tmpdir());
	snprintf(w->board, sizeof(w->board), "%s/board", w->top);
	snprintf(w->state, sizeof(w->state), "%s/state", w->top);
	snprintf(w->marker, sizeof(w->marker), "%s/planted-ran", w->top);
	snprintf(w->e_state, sizeof(w->e_state), "XDG_STATE_HOME=%s", w->state);
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
		cr_skip_test("needs root and setpriv to run a worker as uid 65534");
	cr_assert_eq(chmod(w->top, 0755), 0);
	cr_assert_eq(mkdir(w->board, 0755), 0);
	cr_assert_eq(setenv("XDG_STATE_HOME", w->state, 1), 0);
}

/* `denytrace run -- sh -c SCRIPT`, no sandbox: the worker, as uid 65534,
 * is refused its board, then (as the user, outside the probe) plants a
 * launch file for its ring claiming the words of claim (NULL-terminated). */
static void record_planting(struct world *w, struct dtt_run *r, const char *const *claim)
{
	char script[8 * PATH_MAX];
	size_t n = (size_t)snprintf(
	    script, sizeof(script),
	    "setpriv --reuid=65534 --regid=65534 --clear-groups -- /bin/sh -c 'echo x > "
	    "%s/kanban.db'; env -u LD_PRELOAD %s \"$DENYTRACE_RING\" %s",
	    w->board, dtt_helper("plant-launch"), w->marker);
	for (size_t i = 0; claim[i]; i++)
		n += (size_t)snprintf(script + n, sizeof(script) - n, " '%s'", claim[i]);
	snprintf(script + n, sizeof(script) - n, "; exit 1");
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *env[] = {w->e_state, NULL};
	cr_assert_eq(dtt_run(r, NULL, argv, env), 0);
	char planted[PATH_MAX + 64];
	snprintf(planted, sizeof(planted), "%s/denytrace/launches", w->state);
	cr_assert_eq(access(planted, F_OK), 0, "the worker planted nothing: %s", r->out);
}

/* fix --verify --yes RING, stdin from /dev/null; stdout and stderr in out. */
static int fix_verify(const struct world *w, const char *ring)
{
	char dt[PATH_MAX];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	const char *argv[] = {dt, "fix", "--verify", "--yes", "--root", w->board, ring, NULL};
	const char *env[] = {w->e_state, NULL};
	return dtt_system(out, sizeof(out), argv, env);
}

/* The planted file is named once, as ignored, and nothing of it runs. */
static void expect_ignored(const struct world *w, const char *ring)
{
	int st = fix_verify(w, ring);
	cr_expect_neq(access(w->marker, F_OK), 0, "the planted launch ran:\n%s", out);
	cr_expect_eq(st, 8, "exit %d, not 8 (no launch the user made):\n%s", st, out);
	const char *said = strstr(out, "launch file ignored: ");
	cr_expect(said && strstr(said, "/denytrace/launches/"),
	          "it does not name the ignored launch file:\n%s", out);
	cr_expect(!said || !strstr(said + 1, "launch file ignored: "), "said more than once:\n%s",
	          out);
}

Test(planted_launch, a_planted_launch_file_claiming_no_sandbox_is_ignored_and_not_run)
{
	struct world w;
	make_world(&w);
	char touch[PATH_MAX + 16];
	snprintf(touch, sizeof(touch), "touch %s", w.marker);
	const char *claim[] = {"/bin/sh", "-c", touch, NULL};
	struct dtt_run r;
	record_planting(&w, &r, claim);
	expect_ignored(&w, r.ring);
	dtt_free(&r);
}

/* bwrap started by a shell is a sandbox the launcher does not read: its
 * command line names none, so its launcher writes no launch file. */
Test(planted_launch, a_planted_launch_file_claiming_bwrap_inside_sh_c_is_ignored_and_not_run)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	struct world w;
	make_world(&w);
	char inner[2 * PATH_MAX];
	snprintf(inner, sizeof(inner), "bwrap --bind / / --dev /dev -- touch %s", w.marker);
	const char *claim[] = {"/bin/sh", "-c", inner, NULL};
	struct dtt_run r;
	record_planting(&w, &r, claim);
	expect_ignored(&w, r.ring);
	dtt_free(&r);
}

/* How many launch files the state directory state holds. */
static int launch_file_count(const char *state)
{
	char dir[PATH_MAX + 64], count[64];
	snprintf(dir, sizeof(dir), "%s/denytrace/launches", state);
	const char *ls[] = {"/bin/sh", "-c", "ls \"$0\" 2>/dev/null | grep -c '[.]launch$'", dir,
	                    NULL};
	dtt_system(count, sizeof(count), ls, NULL);
	return atoi(count);
}

/* What the launcher itself does for such a run: no launch file, so that
 * fix asks for the command instead of trusting one the worker could have
 * rewritten. */
Test(planted_launch, a_run_without_a_sandbox_denytrace_reads_leaves_no_launch_file)
{
	struct world w;
	make_world(&w);
	const char *argv[] = {"/bin/sh", "-c", "exit 0", NULL};
	const char *env[] = {w.e_state, NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, env), 0);
	cr_expect_eq(launch_file_count(w.state), 0);
	dtt_free(&r);
}

/* The s10 review: bwrap --args FD takes more options from a descriptor
 * the command line does not show, a --bind of the state directory among
 * them. The launcher's model counted only the binds it saw and wrote a
 * launch file that the sandbox could rewrite. */
Test(planted_launch, a_bwrap_that_reads_options_from_a_descriptor_gets_no_launch_file)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir();
	char state[PATH_MAX], ring[PATH_MAX + 16], args[PATH_MAX + 16], e_state[PATH_MAX + 32];
	snprintf(state, sizeof(state), "%s/state", top);
	snprintf(ring, sizeof(ring), "%s/r.ring", top);
	snprintf(args, sizeof(args), "%s/bwrap.args", top);
	snprintf(e_state, sizeof(e_state), "XDG_STATE_HOME=%s", state);
	cr_assert_eq(mkdir(state, 0700), 0);
	FILE *f = fopen(args, "w");
	cr_assert_not_null(f);
	fprintf(f, "--bind%c%s%c%s%c", 0, state, 0, state, 0);
	fclose(f);
	char path[4200];
	snprintf(path, sizeof(path), "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	const char *sh[] = {"/bin/sh",
	                    "-c",
	                    "exec \"$0\" run -q -o \"$1\" -- bwrap --args 3 --ro-bind / / "
	                    "--dev /dev true 3<\"$2\"",
	                    dtt_denytrace(),
	                    ring,
	                    args,
	                    NULL};
	const char *env[] = {e_state, path, NULL};
	int st = dtt_system(out, sizeof(out), sh, env);
	cr_expect_eq(st, 0, "run: status %d: %s", st, out);
	cr_expect_eq(launch_file_count(state), 0, "a launch file the sandbox can rewrite: %s", out);
}

/* What no check can catch (a worker with the user's power plants a file
 * claiming a sandbox that keeps it out of reach) leaves the user's eyes:
 * every command fix runs is shown exactly first, with --runs the launch
 * as recorded too, which runs before the fix. */
Test(planted_launch, verify_runs_shows_the_recorded_command_it_runs_before_the_fixed_one)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	struct world w;
	make_world(&w);
	char work[PATH_MAX + 16], worker[PATH_MAX + 32];
	snprintf(work, sizeof(work), "%s/work", w.top);
	snprintf(worker, sizeof(worker), "%s/worker.sh", w.top);
	cr_assert_eq(mkdir(work, 0755), 0);
	FILE *f = fopen(worker, "w");
	cr_assert_not_null(f);
	fprintf(f, "echo x > %s/kanban.db\n", w.board);
	fclose(f);
	const char *argv[] = {"bwrap", "--ro-bind", "/",  "/",       "--bind", work, work,
	                      "--dev", "/dev",      "--", "/bin/sh", worker,   NULL};
	const char *env[] = {w.e_state, NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, env), 0);
	cr_assert_neq(r.status, 0, "the worker wrote its board: %s", r.out);
	char dt[PATH_MAX], recorded[8 * PATH_MAX];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	const char *fix[] = {dt,  "fix",    "--verify", "--yes", "--runs",
	                     "1", "--root", w.board,    r.ring,  NULL};
	int st = dtt_system(out, sizeof(out), fix, env);
	cr_expect(st == 0 || st == 1, "exit %d:\n%s", st, out);
	snprintf(recorded, sizeof(recorded),
	         "\n  as recorded, each --runs times:\n    bwrap --ro-bind / / --bind %s %s --dev "
	         "/dev -- "
	         "/bin/sh %s\n",
	         work, work, worker);
	cr_expect(strstr(out, recorded), "the recorded command is not shown as it runs:\n%s", out);
	dtt_free(&r);
}

/* The case no check settles: the unsandboxed worker claims a bubblewrap
 * launch whose binds do not reach the launch file, so fix trusts it. What
 * holds is the user's say: before anything runs fix names the command and
 * that it comes from a launch file, and without yes (here: no terminal,
 * no --yes) it runs nothing. */
Test(planted_launch, a_planted_sandboxed_claim_is_shown_with_its_source_and_not_run_without_yes)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	struct world w;
	make_world(&w);
	char outdir[PATH_MAX + 16], touch[2 * PATH_MAX];
	snprintf(outdir, sizeof(outdir), "%s/out", w.top);
	cr_assert_eq(mkdir(outdir, 0755), 0);
	snprintf(w.marker, sizeof(w.marker), "%s/planted-ran", outdir);
	snprintf(touch, sizeof(touch), "touch %s", w.marker);
	const char *claim[] = {"bwrap", "--ro-bind", "/",  "/",       "--bind", outdir, outdir,
	                       "--dev", "/dev",      "--", "/bin/sh", "-c",     touch,  NULL};
	struct dtt_run r;
	record_planting(&w, &r, claim);
	char dt[PATH_MAX];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	const char *fix[] = {
	    "/bin/sh", "-c",    "exec \"$0\" fix --verify --root \"$1\" \"$2\" </dev/null",
	    dt,        w.board, r.ring,
	    NULL};
	const char *env[] = {w.e_state, NULL};
	int st = dtt_system(out, sizeof(out), fix, env);
	cr_expect_neq(access(w.marker, F_OK), 0, "the planted launch ran:\n%s", out);
	cr_expect_eq(st, 2, "exit %d, not 2 (nobody to say yes):\n%s", st, out);
	const char *shown = strstr(out, "runs your command again");
	cr_expect(shown && strstr(shown, touch), "the command is not shown:\n%s", out);
	cr_expect(shown && strstr(shown, "\n  from: denytrace's launch file "),
	          "it does not say the command comes from a launch file:\n%s", out);
	dtt_free(&r);
}

/* What item 2 keeps (issue 22): fix, as root here, trusts only a launch
 * file root owns. The same sandboxed claim as above, made another uid's
 * (its file, then its directories too), is never run even with --yes. */
static void expect_foreign_file_not_run(int whole_tree)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	struct world w;
	make_world(&w);
	char outdir[PATH_MAX + 16], touch[2 * PATH_MAX];
	snprintf(outdir, sizeof(outdir), "%s/out", w.top);
	cr_assert_eq(mkdir(outdir, 0777), 0);
	cr_assert_eq(chmod(outdir, 0777), 0);
	snprintf(w.marker, sizeof(w.marker), "%s/planted-ran", outdir);
	snprintf(touch, sizeof(touch), "touch %s", w.marker);
	const char *claim[] = {"bwrap", "--ro-bind", "/",  "/",       "--bind", outdir, outdir,
	                       "--dev", "/dev",      "--", "/bin/sh", "-c",     touch,  NULL};
	struct dtt_run r;
	record_planting(&w, &r, claim);
	char chown_cmd[2 * PATH_MAX];
	snprintf(chown_cmd, sizeof(chown_cmd), "chown %s65534:65534 '%s/denytrace'%s",
	         whole_tree ? "-R " : "", w.state, whole_tree ? "" : "/launches/*.launch");
	const char *sh[] = {"/bin/sh", "-c", chown_cmd, NULL};
	char said[4096];
	cr_assert_eq(dtt_system(said, sizeof(said), sh, NULL), 0, "%s", said);
	int st = fix_verify(&w, r.ring);
	cr_expect_neq(access(w.marker, F_OK), 0, "another uid's launch file ran:\n%s", out);
	cr_expect_eq(st, 8, "exit %d, not 8 (no launch the user made):\n%s", st, out);
	dtt_free(&r);
}

Test(planted_launch, as_root_a_launch_file_another_uid_owns_is_never_run)
{
	expect_foreign_file_not_run(0);
}

Test(planted_launch, as_root_a_launch_directory_another_uid_owns_is_never_read)
{
	expect_foreign_file_not_run(1);
}
