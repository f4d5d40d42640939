/* SPDX-License-Identifier: MIT */
/* denytrace fix on real launches: the bubblewrap bind a missing board root
 * needs, verified by running the worker again; one Codex -c holding the
 * root a later -c dropped, verified with the real `codex sandbox`; a flaky
 * worker soaked before and after; and the inputs it must refuse without
 * running anything. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <poll.h>
#include <pty.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recfmt.h"
#include "testlib.h"

/* An ext4 image mounted over a test's board (board_on_ext4): its flagged
 * files cannot be removed, so it goes first, whatever the test did. */
static char ext4_board[PATH_MAX];

static void teardown(void)
{
	if (ext4_board[0])
		umount2(ext4_board, MNT_DETACH);
	dtt_cleanup();
}

TestSuite(fix_verify, .fini = teardown, .timeout = 240);

static char out[1 << 17];

/* A board directory, a workspace, and a worker script that counts its runs
 * in the workspace (runs) and writes the board on the runs where
 * (count % every) == 0, exiting 1 when that write fails. */
struct world {
	char top[PATH_MAX], board[PATH_MAX + 8], work[PATH_MAX + 8], worker[PATH_MAX + 16];
	char runs[PATH_MAX + 16];
};

static void make_world_named(struct world *w, int every, const char *board)
{
	snprintf(w->top, sizeof(w->top), "%s", dtt_tmpdir());
	snprintf(w->board, sizeof(w->board), "%s/%s", w->top, board);
	snprintf(w->work, sizeof(w->work), "%s/work", w->top);
	snprintf(w->worker, sizeof(w->worker), "%s/worker.sh", w->top);
	snprintf(w->runs, sizeof(w->runs), "%s/runs", w->work);
	cr_assert_eq(mkdir(w->board, 0755), 0);
	cr_assert_eq(mkdir(w->work, 0755), 0);
	FILE *f = fopen(w->worker, "w");
	cr_assert_not_null(f);
	fprintf(f,
	        "#!/bin/sh\n"
	        "n=$(wc -l < %s/runs 2>/dev/null || echo 0)\n"
	        "echo run >> %s/runs\n"
	        "if [ $((n %% %d)) -eq 0 ]; then echo done > '%s/status' || exit 1; fi\n",
	        w->work, w->work, every, w->board);
	fclose(f);
	cr_assert_eq(chmod(w->worker, 0755), 0);
}

static void make_world(struct world *w, int every)
{
	make_world_named(w, every, "board");
}

static int lines_in(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;
	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* Records the worker in bwrap with only the workspace writable. */
static void record_bwrap(struct world *w, struct dtt_run *r)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *argv[] = {"bwrap", "--ro-bind", "/",       "/",       "--bind",
	                      w->work, w->work,     "--dev",   "/dev",    "--chdir",
	                      w->work, "--",        "/bin/sh", w->worker, NULL};
	char cwd[PATH_MAX];
	dtt_build(); /* resolved against the repository root, before the chdir */
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(w->work), 0);
	cr_assert_eq(dtt_run(r, NULL, argv, NULL), 0);
	cr_assert_eq(chdir(cwd), 0);
	cr_assert_neq(r->status, 0, "the worker wrote its board: %s", r->out);
}

/* denytrace fix ARGS... (through sh, with stdin from /dev/null, and the
 * redirections redir). */
static int fix_redirected(const char *const *args, const char *redir)
{
	char cmd[8192];
	size_t n = (size_t)snprintf(cmd, sizeof(cmd), "exec '%s' fix", dtt_denytrace());
	for (size_t i = 0; args[i]; i++)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " '%s'", args[i]);
	snprintf(cmd + n, sizeof(cmd) - n, " </dev/null %s", redir);
	const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	return dtt_system(out, sizeof(out), argv, NULL);
}

/* denytrace fix ARGS..., its standard output and error into out. */
static int fix(const char *const *args)
{
	return fix_redirected(args, "");
}

Test(fix_verify, bubblewrap_gets_the_bind_of_the_board_root_and_verify_shows_its_refusals_gone)
{
	struct world w;
	make_world(&w, 1);
	struct dtt_run r;
	record_bwrap(&w, &r);
	char bind[2 * PATH_MAX + 16];
	snprintf(bind, sizeof(bind), "--bind %s %s", w.board, w.board);

	const char *plain[] = {"--root", w.board, r.ring, NULL};
	cr_assert_eq(fix(plain), 0, "%s", out);
	cr_expect(strstr(out, bind), "no %s in:\n%s", bind, out);
	cr_expect_eq(lines_in(w.runs), 1, "fix without --verify ran the worker");

	const char *verify[] = {"--verify", "--yes", "--root", w.board, r.ring, NULL};
	cr_assert_eq(fix(verify), 0, "%s", out);
	cr_expect(strstr(out, "runs your command again"), "it does not say so first:\n%s", out);
	cr_expect(strstr(out, "verified: fixed: 0 refusals (was 1)"), "%s", out);
	cr_expect_eq(lines_in(w.runs), 2, "the worker did not run once more");
	char status[PATH_MAX + 16], proof[PATH_MAX + 16];
	snprintf(status, sizeof(status), "%s/status", w.board);
	cr_expect_eq(access(status, F_OK), 0, "the fixed run did not write the board");
	/* nothing on disk changed by fix itself: the board keeps its mode */
	struct stat st;
	cr_assert_eq(stat(w.board, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0755);
	/* the proof for evidence */
	snprintf(proof, sizeof(proof), "%s.fix.md", r.ring);
	FILE *f = fopen(proof, "r");
	cr_assert_not_null(f, "no %s", proof);
	char md[8192];
	md[fread(md, 1, sizeof(md) - 1, f)] = 0;
	fclose(f);
	cr_expect(strstr(md, "## Suggested fix") && strstr(md, "## Verified") && strstr(md, bind),
	          "%s", md);
	/* and evidence's report.md ends with it */
	char bundle[PATH_MAX + 16], report[PATH_MAX + 32];
	snprintf(bundle, sizeof(bundle), "%s/bundle", w.top);
	const char *ev[] = {dtt_denytrace(), "evidence", "--out", bundle,
	                    "--root",        w.board,    r.ring,  NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), ev, NULL), 0, "%s", out);
	snprintf(report, sizeof(report), "%s/report.md", bundle);
	f = fopen(report, "r");
	cr_assert_not_null(f, "no %s: %s", report, out);
	static char rmd[1 << 16];
	rmd[fread(rmd, 1, sizeof(rmd) - 1, f)] = 0;
	fclose(f);
	const char *sf = strstr(rmd, "\n## Suggested fix"), *vf = strstr(rmd, "\n## Verified");
	cr_expect(sf && vf && vf > sf && strstr(vf, "| fixed | 1 refusals | 0 refusals |"),
	          "report.md does not end with the fix and its proof:\n%s", rmd);
	dtt_free(&r);
}

Test(fix_verify, the_json_grants_exactly_the_expected_roots_of_the_findings)
{
	struct world w;
	make_world(&w, 1);
	struct dtt_run r;
	record_bwrap(&w, &r);
	const char *args[] = {"--format", "json", "--root", w.board, r.ring, NULL};
	cr_assert_eq(fix(args), 0, "%s", out);
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/fix.json", w.top);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(out, f);
	fclose(f);
	/* as Python's json reads it: the union of grants, and of the roots */
	const char *py[] = {"/usr/bin/python3", "-c",
	                    "import json, sys\n"
	                    "j = json.load(open(sys.argv[1]))\n"
	                    "g = sorted({d for f in j['fixes'] for d in f['grants']})\n"
	                    "r = sorted({f['root'] for f in j['fixes'] if f['grants']})\n"
	                    "print(' '.join(g) + '|' + ' '.join(r))\n",
	                    path, NULL};
	char res[4096];
	cr_assert_eq(dtt_system(res, sizeof(res), py, NULL), 0, "%s", res);
	char want[2 * PATH_MAX + 8];
	snprintf(want, sizeof(want), "%s|%s\n", w.board, w.board);
	cr_expect_str_eq(res, want);
	dtt_free(&r);
}

Test(fix_verify, runs_soaks_a_flaky_worker_before_and_after_with_intervals)
{
	struct world w;
	make_world(&w, 2); /* writes the board on every other run */
	struct dtt_run r;
	record_bwrap(&w, &r);
	const char *args[] = {"--verify", "--yes", "--runs", "20", "--root", w.board, r.ring, NULL};
	int st = fix(args);
	cr_assert_eq(st, 0, "exit %d:\n%s", st, out);
	cr_expect(strstr(out, "flake rate: 50.0% (10 of 20 runs failed, 95% CI "),
	          "before: not 10 of 20:\n%s", out);
	cr_expect(strstr(out, " -> 0.0% (0 of 20 runs failed, 95% CI 0.0%-"), "after:\n%s", out);
	cr_expect(strstr(out, "verified: fixed: refused in 0 of 20 runs (was 10 of 20)"), "%s",
	          out);
	cr_expect_eq(lines_in(w.runs), 41, "1 recorded run, 20 before, 20 after");
	dtt_free(&r);
}

Test(fix_verify, verify_without_yes_and_no_terminal_runs_nothing_and_exits_2)
{
	struct world w;
	make_world(&w, 1);
	struct dtt_run r;
	record_bwrap(&w, &r);
	const char *args[] = {"--verify", "--root", w.board, r.ring, NULL};
	cr_expect_eq(fix(args), 2, "%s", out);
	cr_expect(strstr(out, "pass --yes"), "%s", out);
	cr_expect_eq(lines_in(w.runs), 1, "the worker ran without --yes");
	dtt_free(&r);
}

/* Reads the pseudo-terminal's master into log until needle shows (NULL:
 * until the other side is gone) or 30 s pass. Returns 1 when seen. */
static int pty_read_until(int master, char *log, size_t cap, size_t *len, const char *needle)
{
	for (;;) {
		if (needle && strstr(log, needle))
			return 1;
		struct pollfd p = {master, POLLIN, 0};
		if (poll(&p, 1, 30000) <= 0)
			return 0;
		ssize_t n = read(master, log + *len, cap - 1 - *len);
		if (n <= 0)
			return needle == NULL; /* EIO: the last holder of the slave closed it */
		*len += (size_t)n;
		log[*len] = 0;
	}
}

/* denytrace fix ARGS... on a real terminal: answer is typed once the
 * question shows. Returns the exit status (128+N for signal N); what the
 * terminal showed goes to log. */
static int fix_on_pty(const char *answer, const char *const *args, char *log, size_t cap)
{
	const char *argv[32] = {dtt_denytrace(), "fix"};
	size_t n = 2;
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	int master;
	pid_t pid = forkpty(&master, NULL, NULL, NULL);
	cr_assert_geq(pid, 0, "forkpty: %s", strerror(errno));
	if (pid == 0) {
		execv(argv[0], (char *const *)argv);
		_exit(126);
	}
	size_t len = 0;
	log[0] = 0;
	int asked = pty_read_until(master, log, cap, &len, "[y/N] ");
	if (asked)
		cr_assert_eq(write(master, answer, strlen(answer)), (ssize_t)strlen(answer));
	pty_read_until(master, log, cap, &len, NULL);
	close(master);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	cr_assert(asked, "fix --verify did not ask:\n%s", log);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* n, no, Enter, end of input (^D) and ^C, each on a real terminal */
static void expect_declined(const char *answer, const char *name)
{
	struct world w;
	make_world(&w, 1);
	struct dtt_run r;
	record_bwrap(&w, &r);
	static char log[1 << 16];
	const char *args[] = {"--verify", "--root", w.board, r.ring, NULL};
	int st = fix_on_pty(answer, args, log, sizeof(log));
	cr_expect_eq(st, 7, "answer %s: exit %d, not 7 (declined):\n%s", name, st, log);
	cr_expect_eq(lines_in(w.runs), 1, "answer %s ran the worker again:\n%s", name, log);
	char status[PATH_MAX + 16];
	snprintf(status, sizeof(status), "%s/status", w.board);
	cr_expect_neq(access(status, F_OK), 0, "answer %s wrote the board", name);
	dtt_free(&r);
}

Test(fix_verify, answering_n_on_a_terminal_runs_nothing_and_exits_7)
{
	expect_declined("n\n", "n");
}

Test(fix_verify, answering_no_on_a_terminal_runs_nothing_and_exits_7)
{
	expect_declined("no\n", "no");
}

Test(fix_verify, pressing_enter_on_a_terminal_runs_nothing_and_exits_7)
{
	expect_declined("\n", "Enter");
}

Test(fix_verify, end_of_input_on_a_terminal_runs_nothing_and_exits_7)
{
	expect_declined("\x04", "^D");
}

Test(fix_verify, ctrl_c_on_a_terminal_runs_nothing_and_exits_7)
{
	expect_declined("\x03", "^C");
}

Test(fix_verify, answering_yes_on_a_terminal_runs_the_fixed_launch_once)
{
	struct world w;
	make_world(&w, 1);
	struct dtt_run r;
	record_bwrap(&w, &r);
	static char log[1 << 16];
	const char *args[] = {"--verify", "--root", w.board, r.ring, NULL};
	int st = fix_on_pty("yes\n", args, log, sizeof(log));
	cr_expect_eq(st, 0, "exit %d:\n%s", st, log);
	cr_expect_eq(lines_in(w.runs), 2, "yes did not run the worker once:\n%s", log);
	dtt_free(&r);
}

/* What a hostile worker can do to the ring it writes: append a record of
 * type (a launch: after hiding the real one, by zeroing slot 0's sequence
 * word) of argv in cwd with the environment entries env (may be NULL). */
static void forge_record(const char *ring, int type, const char *const *argv, const char *cwd,
                         const char *const *env)
{
	struct dtt_ring w;
	cr_assert_eq(dtt_ring_open(&w, ring), 0);
	uint64_t *seq0 = (uint64_t *)((char *)w.map + DT_RING_HEADER_SIZE);
	if (type == DT_REC_LAUNCH)
		__atomic_store_n(seq0, 0, __ATOMIC_RELEASE);
	char words[2 * PATH_MAX + 256];
	size_t n = 0;
	for (size_t i = 0; argv[i]; i++)
		n += (size_t)snprintf(words + n, sizeof(words) - n, "%s", argv[i]) + 1;
	dtt_ring_begin(&w, type, type == DT_REC_LAUNCH ? 100 : 4242,
	               type == DT_REC_LAUNCH ? "denytrace" : "codex");
	dt_put(&w.b, DT_T_ARGV, words, (uint32_t)(n - 1));
	dt_put_str(&w.b, DT_T_CWD, cwd);
	for (size_t i = 0; env && env[i]; i++)
		dt_put_str(&w.b, DT_T_ENV, env[i]);
	cr_assert_eq(dtt_ring_commit(&w), 0);
	dtt_ring_close(&w);
}

static void forge_launch_env(const char *ring, const char *const *argv, const char *cwd,
                             const char *const *env)
{
	forge_record(ring, DT_REC_LAUNCH, argv, cwd, env);
}

static void forge_launch_argv(const char *ring, const char *const *argv, const char *cwd)
{
	forge_launch_env(ring, argv, cwd, NULL);
}

/* ... whose bwrap makes the whole host writable and creates marker. */
static void forge_launch(const char *ring, const char *marker)
{
	char script[PATH_MAX + 16];
	snprintf(script, sizeof(script), "touch %s", marker);
	const char *argv[] = {"bwrap", "--bind",  "/",  "/",    "--dev", "/dev",
	                      "--",    "/bin/sh", "-c", script, NULL};
	forge_launch_argv(ring, argv, dtt_tmpdir());
}

/* The launch file goes to $XDG_STATE_HOME/denytrace/launches: the test's
 * own directory, outside what the worker's sandbox makes writable. */
static void private_state(const char *top)
{
	char state[PATH_MAX + 16];
	snprintf(state, sizeof(state), "%s/state", top);
	cr_assert_eq(setenv("XDG_STATE_HOME", state, 1), 0);
}

/* A world whose worker ran once under bwrap, recorded into r, the launch
 * file kept out of the sandbox's reach. */
static void recorded_world(struct world *w, struct dtt_run *r)
{
	make_world(w, 1);
	private_state(w->top);
	record_bwrap(w, r);
}

/* fix's output shows the board, which the worker named, as its claim and
 * did not bind it writable in the command it ran again. */
static void expect_claim_not_bound(const struct world *w)
{
	char bind[2 * PATH_MAX + 16];
	snprintf(bind, sizeof(bind), "--bind %s %s ", w->board, w->board);
	const char *ran = strstr(out, "runs your command again");
	cr_expect(ran == NULL || strstr(ran, bind) == NULL, "the claimed root was bound:\n%s", out);
	cr_expect(strstr(out, "named by the traced program"), "%s", out);
}

Test(fix_verify, a_forged_launch_record_is_never_run_and_the_launch_file_is)
{
	struct world w;
	struct dtt_run r;
	recorded_world(&w, &r);
	char marker[PATH_MAX + 16];
	snprintf(marker, sizeof(marker), "%s/forged-ran", w.top);
	forge_launch(r.ring, marker);
	const char *args[] = {"--verify", "--yes", "--root", w.board, r.ring, NULL};
	int st = fix(args);
	cr_expect_eq(st, 0, "exit %d:\n%s", st, out);
	cr_expect_neq(access(marker, F_OK), 0, "the forged launch ran:\n%s", out);
	cr_expect_eq(lines_in(w.runs), 2, "the user's launch did not run once more:\n%s", out);
	cr_expect(strstr(out, "launch: denytrace's launch file "), "%s", out);
	dtt_free(&r);
}

/* Without a launch file (HOME elsewhere when fix runs) the ring's record
 * is all there is: shown as the claim it is, never run, once or soaked. */
static void expect_claim_not_run(const char *runs)
{
	struct world w;
	struct dtt_run r;
	recorded_world(&w, &r);
	char marker[PATH_MAX + 16], other[PATH_MAX + 16];
	snprintf(marker, sizeof(marker), "%s/forged-ran", w.top);
	snprintf(other, sizeof(other), "%s/elsewhere", w.top);
	forge_launch(r.ring, marker);
	cr_assert_eq(setenv("XDG_STATE_HOME", other, 1), 0);
	const char *once[] = {"--verify", "--yes", "--root", w.board, r.ring, NULL};
	const char *soak[] = {"--verify", "--yes", "--runs", runs, "--root", w.board, r.ring, NULL};
	int st = fix(runs ? soak : once);
	cr_expect_eq(st, 8, "exit %d, not 8 (no launch the user made):\n%s", st, out);
	cr_expect_neq(access(marker, F_OK), 0, "the forged launch ran:\n%s", out);
	cr_expect_eq(lines_in(w.runs), 1, "something ran:\n%s", out);
	cr_expect(strstr(out, "would run") && strstr(out, "touch ") && strstr(out, "claim") &&
	              strstr(out, " -- COMMAND"),
	          "it does not show the claim and ask for the command:\n%s", out);
	dtt_free(&r);
}

Test(fix_verify, without_a_launch_file_a_forged_launch_record_is_shown_and_not_run)
{
	expect_claim_not_run(NULL);
}

Test(fix_verify, without_a_launch_file_runs_soaks_nothing_of_a_forged_launch_record)
{
	expect_claim_not_run("3");
}

/* A forged Codex launch names the board as a root of its own choosing, so
 * that the fix for the real launch would grant it. */
Test(fix_verify, codex_roots_of_a_forged_launch_record_are_shown_as_claims_and_never_applied)
{
	struct world w;
	struct dtt_run r;
	recorded_world(&w, &r);
	char list[PATH_MAX + 64];
	snprintf(list, sizeof(list), "sandbox_workspace_write.writable_roots=[\"%s\"]", w.board);
	const char *argv[] = {"codex", "sandbox", "-c", "sandbox_mode=\"workspace-write\"",
	                      "-c",    list,      "--", "sh",
	                      NULL};
	forge_launch_argv(r.ring, argv, w.work);
	const char *args[] = {"--verify", "--yes", r.ring, NULL};
	fix(args);
	expect_claim_not_bound(&w);
	cr_expect_null(strstr(out, "verified: fixed"), "%s", out);
	dtt_free(&r);
}

/* The same words as the real launch, and an environment of the worker's
 * choosing that names the board as Hermes' root; fix with those words
 * after -- when dashdash is set, else with the launch file. */
static void expect_forged_environment_applies_nothing(int dashdash)
{
	struct world w;
	struct dtt_run r;
	recorded_world(&w, &r);
	const char *argv[] = {"bwrap", "--ro-bind", "/",       "/",      "--bind",
	                      w.work,  w.work,      "--dev",   "/dev",   "--chdir",
	                      w.work,  "--",        "/bin/sh", w.worker, NULL};
	char db[PATH_MAX + 32];
	snprintf(db, sizeof(db), "HERMES_KANBAN_DB=%s/kanban.db", w.board);
	const char *env[] = {db, NULL};
	forge_launch_env(r.ring, argv, w.work, env);
	const char *args[32] = {"--verify", "--yes", r.ring, dashdash ? "--" : NULL};
	for (size_t i = 0, n = 4; dashdash && argv[i]; i++)
		args[n++] = argv[i];
	/* in the launch's directory: only the environment tells them apart */
	char cwd[PATH_MAX];
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(w.work), 0);
	fix(args);
	cr_assert_eq(chdir(cwd), 0);
	expect_claim_not_bound(&w);
	dtt_free(&r);
}

Test(fix_verify, a_forged_launch_environment_names_no_root_verify_applies)
{
	expect_forged_environment_applies_nothing(0);
}

/* The s10 review: with the command after --, a launch record with the
 * same words was taken as the launch whatever environment it claimed. */
Test(fix_verify,
     a_forged_launch_environment_names_no_root_verify_applies_to_the_command_after_dashdash)
{
	expect_forged_environment_applies_nothing(1);
}

/* The s10 review: the first record whose words are Codex's gave the
 * Codex roots, a process record the worker appended as well as the
 * launch's. Under a bwrap launch, its -c list named the board, which
 * --verify then bound as the launch's own root. */
Test(fix_verify, a_codex_process_record_the_worker_forged_names_no_root_verify_applies)
{
	struct world w;
	struct dtt_run r;
	recorded_world(&w, &r);
	char roots[PATH_MAX + 64];
	snprintf(roots, sizeof(roots), "sandbox_workspace_write.writable_roots=[\"%s\"]", w.board);
	const char *argv[] = {"codex", "-c", roots, "-s", "workspace-write", "exec", "hi", NULL};
	forge_record(r.ring, DT_REC_PROCESS, argv, w.work, NULL);
	const char *args[] = {"--verify", "--yes", r.ring, NULL};
	fix(args);
	expect_claim_not_bound(&w);
	dtt_free(&r);
}

Test(fix_verify, the_command_after_dashdash_is_fixed_and_run_instead_of_any_record)
{
	struct world w;
	struct dtt_run r;
	recorded_world(&w, &r);
	char marker[PATH_MAX + 16];
	snprintf(marker, sizeof(marker), "%s/forged-ran", w.top);
	forge_launch(r.ring, marker);
	const char *args[] = {"--verify",  "--yes", "--root",  w.board,  r.ring, "--",   "bwrap",
	                      "--ro-bind", "/",     "/",       "--bind", w.work, w.work, "--dev",
	                      "/dev",      "--",    "/bin/sh", w.worker, NULL};
	int st = fix(args);
	cr_expect_eq(st, 0, "exit %d:\n%s", st, out);
	cr_expect_neq(access(marker, F_OK), 0, "the forged launch ran:\n%s", out);
	cr_expect_eq(lines_in(w.runs), 2, "the given command did not run:\n%s", out);
	cr_expect(strstr(out, "verified: fixed: 0 refusals (was 1)"), "%s", out);
	dtt_free(&r);
}

/* XDG_STATE_HOME inside the workspace the sandbox binds writable, and
 * HOME outside it: the places a launch file may go, the first of them
 * writable by the worker. */
static void state_in_workspace(struct world *w)
{
	char state[PATH_MAX + 16], home[PATH_MAX + 16];
	snprintf(state, sizeof(state), "%s/state", w->work);
	snprintf(home, sizeof(home), "%s/home", w->top);
	cr_assert_eq(mkdir(home, 0700), 0);
	cr_assert_eq(setenv("XDG_STATE_HOME", state, 1), 0);
	cr_assert_eq(setenv("HOME", home, 1), 0);
}

Test(fix_verify, a_launch_file_goes_where_the_sandbox_cannot_write_and_is_trusted_there)
{
	struct world w;
	make_world(&w, 1);
	state_in_workspace(&w);
	struct dtt_run r;
	record_bwrap(&w, &r);
	char exposed[PATH_MAX + 64], sealed[PATH_MAX + 64];
	snprintf(exposed, sizeof(exposed), "%s/state/denytrace/launches", w.work);
	snprintf(sealed, sizeof(sealed), "launch: denytrace's launch file %s/home/.local/state/",
	         w.top);
	const char *args[] = {"--verify", "--yes", "--root", w.board, r.ring, NULL};
	int st = fix(args);
	cr_expect_eq(st, 0, "exit %d:\n%s", st, out);
	cr_expect(strstr(out, sealed), "not the launch file out of the sandbox's reach:\n%s", out);
	cr_expect_eq(lines_in(w.runs), 2, "the user's launch did not run once more:\n%s", out);
	const char *ls[] = {"/bin/sh", "-c", "ls -A \"$0\" 2>/dev/null", exposed, NULL};
	char listing[4096];
	dtt_system(listing, sizeof(listing), ls, NULL);
	cr_expect_str_eq(listing, "", "a launch file where the worker can write: %s", listing);
	dtt_free(&r);
}

/* The worker can write $XDG_STATE_HOME: outside the probe, it hides its
 * mount tables from the ring and writes a launch file for its ring there,
 * one that makes the whole host writable and creates marker. */
Test(fix_verify, a_launch_file_the_worker_plants_where_it_can_write_is_never_run)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	struct world w;
	make_world(&w, 1);
	state_in_workspace(&w);
	char marker[PATH_MAX + 16], script[4 * PATH_MAX];
	snprintf(marker, sizeof(marker), "%s/planted-ran", w.top);
	snprintf(script, sizeof(script),
	         "echo done > %s/status; env -u LD_PRELOAD %s \"$DENYTRACE_RING\" %s; exit 1",
	         w.board, dtt_helper("plant-launch"), marker);
	const char *argv[] = {"bwrap", "--ro-bind", "/",  "/",       "--bind", w.work, w.work,
	                      "--dev", "/dev",      "--", "/bin/sh", "-c",     script, NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0);
	char planted[PATH_MAX + 64];
	snprintf(planted, sizeof(planted), "%s/state/denytrace/launches", w.work);
	cr_assert_eq(access(planted, F_OK), 0, "the worker planted nothing: %s", r.out);
	const char *args[] = {"--verify", "--yes", "--root", w.board, r.ring, NULL};
	int st = fix(args);
	cr_expect_neq(access(marker, F_OK), 0, "the planted launch ran:\n%s", out);
	cr_expect_eq(st, 8, "exit %d, not 8 (no launch the user made):\n%s", st, out);
	dtt_free(&r);
}

/* A worker in bwrap with only its workspace writable, which names its own
 * board root inside the sandbox (the launch's environment has none) and
 * fails to write it. */
static void record_self_named(struct world *w, struct dtt_run *r, const char *db)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	char script[2 * PATH_MAX + 64];
	snprintf(script, sizeof(script),
	         "HERMES_KANBAN_DB=%s sh -c 'echo x > \"$HERMES_KANBAN_DB\"'", db);
	const char *argv[] = {"bwrap",   "--ro-bind", "/",    "/",       "--bind", w->work,
	                      w->work,   "--dev",     "/dev", "--chdir", w->work,  "--",
	                      "/bin/sh", "-c",        script, NULL};
	char cwd[PATH_MAX];
	dtt_build();
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(w->work), 0);
	cr_assert_eq(dtt_run(r, NULL, argv, NULL), 0);
	cr_assert_eq(chdir(cwd), 0);
}

/* fix --format json into a file, read back by Python: prints the result
 * of expr over the JSON j. */
static void fix_json_query(const char *dir, const char *const *args, const char *expr, char *res,
                           size_t cap)
{
	const char *a[16] = {"--format", "json"};
	size_t n = 2;
	for (size_t i = 0; args[i]; i++)
		a[n++] = args[i];
	a[n] = NULL;
	int st = fix_redirected(a, "2>/dev/null"); /* a re-run's output goes to stderr */
	cr_assert(st == 0 || st == 1, "exit %d:\n%s", st, out);
	char path[PATH_MAX + 16], code[1024];
	snprintf(path, sizeof(path), "%s/fix.json", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(out, f);
	fclose(f);
	snprintf(code, sizeof(code),
	         "import json, sys\nj = json.load(open(sys.argv[1]))\nprint(%s)\n", expr);
	const char *py[] = {"/usr/bin/python3", "-c", code, path, NULL};
	cr_assert_eq(dtt_system(res, cap, py, NULL), 0, "%s", res);
}

Test(fix_verify, a_board_the_worker_names_at_slash_gets_no_bind_of_slash)
{
	struct world w;
	make_world(&w, 1);
	struct dtt_run r;
	record_self_named(&w, &r, "/kanban.db");
	const char *args[] = {r.ring, NULL};
	cr_assert_eq(fix(args), 0, "%s", out);
	cr_expect_null(strstr(out, "--bind / /"), "it proposes binding /:\n%s", out);
	cr_expect(strstr(out, "it is /, the whole file system"), "it does not say why:\n%s", out);
	char res[4096];
	fix_json_query(w.top, args, "sorted({g for f in j['fixes'] for g in f['grants']})", res,
	               sizeof(res));
	cr_expect_str_eq(res, "[]\n", "grants: %s", res);
	dtt_free(&r);
}

Test(fix_verify, a_board_the_worker_names_in_etc_gets_no_grant_of_etc)
{
	struct world w;
	make_world(&w, 1);
	struct dtt_run r;
	record_self_named(&w, &r, "/etc/kanban.db");
	const char *args[] = {r.ring, NULL};
	char res[4096];
	fix_json_query(w.top, args,
	               "[(f['root'], f['kind'], f['grants'], f['copy']) for f in j['fixes']]", res,
	               sizeof(res));
	cr_expect(strstr(res, "('/etc', 'none', [], [])"), "a fix for /etc: %s", res);
	cr_expect_null(strstr(out, "--bind /etc"), "%s", out);
	dtt_free(&r);
}

Test(fix_verify, a_root_the_worker_names_for_itself_is_shown_and_never_applied_by_verify)
{
	struct world w;
	make_world(&w, 1);
	private_state(w.top);
	char db[PATH_MAX + 16];
	snprintf(db, sizeof(db), "%s/kanban.db", w.board);
	struct dtt_run r;
	record_self_named(&w, &r, db);
	const char *args[] = {"--verify", "--yes", r.ring, NULL};
	int st = fix(args);
	cr_expect_eq(st, 9, "exit %d, not 9 (could not verify):\n%s", st, out);
	cr_expect(strstr(out, "named by the traced program"), "%s", out);
	cr_expect(strstr(out, "verified: cannot verify (its root is named by the traced program"),
	          "%s", out);
	char bind[2 * PATH_MAX + 16];
	snprintf(bind, sizeof(bind), "--bind %s %s", w.board, w.board);
	cr_expect(strstr(out, bind), "the fix is not shown:\n%s", out);
	cr_expect_neq(access(db, F_OK), 0, "the re-run was given the worker's own root");
	dtt_free(&r);
}

/* uid 65534 creating /etc/worker and /root/.bashrc: mode bits refuse it */
Test(fix_verify, a_worker_of_another_uid_failing_in_etc_and_root_gets_no_chown_of_either)
{
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
		cr_skip_test("needs root and setpriv to run a worker as uid 65534");
	struct world w;
	make_world(&w, 1);
	const char *argv[] = {"setpriv",
	                      "--reuid=65534",
	                      "--regid=65534",
	                      "--clear-groups",
	                      "--",
	                      "sh",
	                      "-c",
	                      "touch /etc/worker; echo x > /root/.bashrc",
	                      NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0);
	const char *args[] = {r.ring, NULL};
	cr_assert_eq(fix(args), 0, "%s", out);
	cr_expect_neq(strstr(out, "2 problems"), NULL, "%s", out);
	cr_expect_null(strstr(out, "chown 65534 /etc"), "%s", out);
	cr_expect_null(strstr(out, "chown 65534 /root"), "%s", out);
	cr_expect_null(strstr(out, "uid 0"), "it says to run as root:\n%s", out);
	cr_expect_null(strstr(out, "chmod"), "%s", out);
	dtt_free(&r);
}

/* Issue 33, item 8: a worker that, once it can write its board, writes
 * somewhere else the sandbox keeps read-only. */
static void record_bwrap_new_refusal(struct world *w, struct dtt_run *r)
{
	FILE *f = fopen(w->worker, "w");
	cr_assert_not_null(f);
	fprintf(f,
	        "#!/bin/sh\n"
	        "echo run >> %s/runs\n"
	        "echo done > %s/status || exit 1\n"
	        "echo x > %s/elsewhere 2>/dev/null\n"
	        "exit 0\n",
	        w->work, w->board, w->top);
	fclose(f);
	record_bwrap(w, r);
}

Test(fix_verify, new_refusals_in_the_verified_run_are_reported_and_count_against_fixed)
{
	struct world w;
	make_world(&w, 1);
	private_state(w.top);
	struct dtt_run r;
	record_bwrap_new_refusal(&w, &r);
	const char *args[] = {"--verify", "--yes", "--root", w.board, r.ring, NULL};
	int st = fix(args);
	cr_expect_eq(st, 1, "exit %d, not 1 (not fixed):\n%s", st, out);
	cr_expect_null(strstr(out, "verified: fixed"), "it says fixed:\n%s", out);
	cr_expect(strstr(out, "new refusals in the verified run: 1"), "%s", out);
	char res[4096], elsewhere[PATH_MAX + 16];
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", w.top);
	const char *json[] = {"--verify", "--yes", "--root", w.board, r.ring, NULL};
	fix_json_query(w.top, json,
	               "(j['verified']['new_refusals'], [n['path'] for n in j['verified']['new']], "
	               "[f['verify']['state'] for f in j['fixes']])",
	               res, sizeof(res));
	char want[PATH_MAX + 64];
	snprintf(want, sizeof(want), "(1, ['%s'], ['not-fixed'])\n", elsewhere);
	cr_expect_str_eq(res, want);
	dtt_free(&r);
}

Test(fix_verify, runs_counts_fixed_runs_with_new_refusals_against_fixed)
{
	struct world w;
	make_world(&w, 1);
	private_state(w.top);
	struct dtt_run r;
	record_bwrap_new_refusal(&w, &r);
	const char *args[] = {"--verify", "--yes", "--runs", "3", "--root", w.board, r.ring, NULL};
	int st = fix(args);
	cr_expect_eq(st, 1, "exit %d, not 1 (not fixed):\n%s", st, out);
	cr_expect_null(strstr(out, "verified: fixed"), "it says fixed:\n%s", out);
	cr_expect(strstr(out, "in 3 of 3 fixed runs"), "%s", out);
	dtt_free(&r);
}

/* A ring written record by record: a launch of argv (NULL: none) and one
 * refusal of path with EROFS. */
static const char *hand_ring(const char *name, const char *const *argv, const char *path)
{
	static char ring[PATH_MAX];
	snprintf(ring, sizeof(ring), "%s/%s", dtt_tmpdir(), name);
	struct dtt_ring w;
	cr_assert_eq(dtt_ring_create(&w, ring, 0), 0);
	if (argv) {
		char words[4096];
		size_t n = 0;
		for (size_t i = 0; argv[i]; i++)
			n += (size_t)snprintf(words + n, sizeof(words) - n, "%s", argv[i]) + 1;
		dtt_ring_begin(&w, DT_REC_LAUNCH, 100, "denytrace");
		dt_put(&w.b, DT_T_ARGV, words, (uint32_t)(n - 1));
		dt_put_str(&w.b, DT_T_CWD, dtt_tmpdir());
		cr_assert_eq(dtt_ring_commit(&w), 0);
	}
	dtt_ring_begin(&w, DT_REC_DENIAL, 101, "worker");
	dt_put_str(&w.b, DT_T_OP, "open");
	dt_put_u64(&w.b, DT_T_ERRNO, EROFS);
	dt_put_u64(&w.b, DT_T_ACCESS, 1);
	dt_put_str(&w.b, DT_T_PATH, path);
	dt_put_str(&w.b, DT_T_ABSPATH, path);
	cr_assert_eq(dtt_ring_commit(&w), 0);
	dtt_ring_close(&w);
	return ring;
}

Test(fix_verify, a_ring_without_a_launch_record_exits_3_and_runs_nothing)
{
	const char *ring = hand_ring("nolaunch.ring", NULL, "/srv/board/kanban.db");
	const char *args[] = {"--verify", "--yes", "--root", "/srv/board", ring, NULL};
	cr_expect_eq(fix(args), 3, "%s", out);
	cr_expect(strstr(out, "no launch record"), "%s", out);
}

Test(fix_verify, a_launch_whose_command_is_not_found_exits_127_and_runs_nothing)
{
	const char *argv[] = {"/nonexistent/bwrap", "--ro-bind", "/", "/", "sh", NULL};
	const char *ring = hand_ring("notfound.ring", argv, "/srv/board/kanban.db");
	/* given after --: a ring's own record is never run */
	const char *args[] = {"--verify", "--yes", "--root", "/srv/board", ring,    "--",
	                      argv[0],    argv[1], argv[2],  argv[3],      argv[4], NULL};
	cr_expect_eq(fix(args), 127, "%s", out);
	cr_expect(strstr(out, "not found") && strstr(out, "nothing was run"), "%s", out);
	char after[PATH_MAX + 16];
	snprintf(after, sizeof(after), "%s.fixed.ring", ring);
	cr_expect_neq(access(after, F_OK), 0, "a re-run ring exists");
}

Test(fix_verify, a_launch_bwrap_options_cannot_be_read_from_exits_4_and_runs_nothing)
{
	const char *argv[] = {"bwrap", "--ro-bind", "/", "/", "--frobnicate", "x", "sh", NULL};
	const char *ring = hand_ring("unparsable.ring", argv, "/srv/board/kanban.db");
	const char *args[] = {"--verify", "--yes", "--root", "/srv/board", ring,
	                      "--",       argv[0], argv[1],  argv[2],      argv[3],
	                      argv[4],    argv[5], argv[6],  NULL};
	cr_expect_eq(fix(args), 4, "%s", out);
	cr_expect(strstr(out, "--frobnicate"), "%s", out);
}

/* The real Codex's world: board, other, work, home and CODEX_HOME in
 * dtt_codex_tmpdir(), removed by the suite's fini even when a test fails. */
struct codex_world {
	const char *codex;
	char top[64], board[PATH_MAX], other[PATH_MAX], work[PATH_MAX], home[PATH_MAX],
	    ch[PATH_MAX];
	char e_home[PATH_MAX + 8], e_ch[PATH_MAX + 16], status[PATH_MAX + 16];
	const char *env[3];
};

static void codex_world(struct codex_world *w)
{
	static char why[PATH_MAX + 512];
	w->codex = dtt_codex(why, sizeof(why));
	if (!w->codex)
		cr_skip_test("%s", why);
	snprintf(w->top, sizeof(w->top), "%s", dtt_codex_tmpdir());
	snprintf(w->board, sizeof(w->board), "%s/board", w->top);
	snprintf(w->other, sizeof(w->other), "%s/other", w->top);
	snprintf(w->work, sizeof(w->work), "%s/work", w->top);
	snprintf(w->home, sizeof(w->home), "%s/home", w->top);
	snprintf(w->ch, sizeof(w->ch), "%s/codex-home", w->top);
	const char *dirs[] = {w->board, w->other, w->work, w->home, w->ch};
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(mkdir(dirs[i], 0755), 0);
	snprintf(w->e_home, sizeof(w->e_home), "HOME=%s", w->home);
	snprintf(w->e_ch, sizeof(w->e_ch), "CODEX_HOME=%s", w->ch);
	snprintf(w->status, sizeof(w->status), "%s/status", w->board);
	w->env[0] = w->e_home;
	w->env[1] = w->e_ch;
	w->env[2] = NULL;
}

static void codex_world_file(const struct codex_world *w, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", w->ch, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

/* denytrace run -o RING -- codex ARGS... -- sh -c 'echo done > BOARD/status'
 * from the workspace; the board must stay unwritten. */
static void codex_record(struct codex_world *w, struct dtt_run *r, const char *const *args)
{
	const char *argv[32];
	size_t n = 0;
	char script[PATH_MAX + 32];
	snprintf(script, sizeof(script), "echo done > %s", w->status);
	argv[n++] = w->codex;
	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	const char *tail[] = {"--", "sh", "-c", script, NULL};
	for (size_t i = 0; i < 5; i++)
		argv[n++] = tail[i];
	char cwd[PATH_MAX];
	dtt_build();
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(w->work), 0);
	int rc = dtt_run(r, NULL, argv, w->env);
	cr_assert_eq(chdir(cwd), 0);
	cr_assert_eq(rc, 0, "%s", r->out);
	cr_assert_neq(access(w->status, F_OK), 0, "the board was written: %s", r->out);
}

/* fix --verify --yes on ring: one -c holding other and board, and fixed. */
static void codex_expect_fixed(struct codex_world *w, const char *ring)
{
	const char *fargs[] = {dtt_denytrace(), "fix", "--verify", "--yes", ring, NULL};
	int st = dtt_system(out, sizeof(out), fargs, w->env);
	char both[3 * PATH_MAX];
	snprintf(both, sizeof(both), "writable_roots=[\"%s\",\"%s\"]", w->other, w->board);
	cr_expect_eq(st, 0, "exit %d:\n%s", st, out);
	cr_expect(strstr(out, both), "no one -c holding both roots (%s):\n%s", both, out);
	cr_expect(strstr(out, "verified: fixed: 0 refusals (was 1)"), "%s", out);
	cr_expect_eq(access(w->status, F_OK), 0, "codex with the fix did not write the board");
}

/* The real Codex: a worker whose board root the first -c named and a
 * later -c dropped (the last -c for a key wins; lists do not merge). */
Test(fix_verify, codex_gets_one_c_holding_the_dropped_board_root_and_verify_reruns_codex_sandbox)
{
	struct codex_world w;
	codex_world(&w);
	char c1[PATH_MAX + 64], c2[PATH_MAX + 64];
	snprintf(c1, sizeof(c1), "sandbox_workspace_write.writable_roots=[\"%s\"]", w.board);
	snprintf(c2, sizeof(c2), "sandbox_workspace_write.writable_roots=[\"%s\"]", w.other);
	const char *args[] = {"sandbox", "-c", "sandbox_mode=\"workspace-write\"", "-c", c1, "-c",
	                      c2,        NULL};
	struct dtt_run r;
	codex_record(&w, &r, args);
	codex_expect_fixed(&w, r.ring);
	/* the dropping -c is gone from the fixed command line */
	const char *line = strstr(out, "the launch with every command-line fix:");
	cr_expect(line && !strstr(line, c2), "%s", out);
	dtt_free(&r);
}

/* The -p layer's writable_roots replaced config.toml's board root. */
Test(fix_verify, codex_gets_the_board_root_a_profile_layer_dropped)
{
	struct codex_world w;
	codex_world(&w);
	char text[2 * PATH_MAX];
	snprintf(text, sizeof(text), "[sandbox_workspace_write]\nwritable_roots = [\"%s\"]\n",
	         w.board);
	codex_world_file(&w, "config.toml", text);
	snprintf(text, sizeof(text), "[sandbox_workspace_write]\nwritable_roots = [\"%s\"]\n",
	         w.other);
	codex_world_file(&w, "ci.config.toml", text);
	const char *args[] = {"sandbox", "-p", "ci", "-c", "sandbox_mode=\"workspace-write\"",
	                      NULL};
	struct dtt_run r;
	codex_record(&w, &r, args);
	codex_expect_fixed(&w, r.ring);
	dtt_free(&r);
}

/* A launch by `denytrace codex`: its config.toml named the board, the -c
 * on the command line replaced that list, and denytrace added overrides
 * carrying the probe into an MCP server. The fix and the re-run leave
 * those out (they name the old ring), and the re-run is `denytrace codex`
 * again. */
Test(fix_verify, a_denytrace_codex_launch_is_fixed_without_its_probe_overrides)
{
	struct codex_world w;
	codex_world(&w);
	char text[2 * PATH_MAX], c2[PATH_MAX + 64], ring[PATH_MAX + 16], cmd[8 * PATH_MAX];
	snprintf(text, sizeof(text),
	         "[sandbox_workspace_write]\nwritable_roots = [\"%s\"]\n\n"
	         "[mcp_servers.docs]\ncommand = \"/bin/cat\"\n",
	         w.board);
	codex_world_file(&w, "config.toml", text);
	snprintf(c2, sizeof(c2), "sandbox_workspace_write.writable_roots=[\"%s\"]", w.other);
	snprintf(ring, sizeof(ring), "%s/c.ring", w.work);
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && exec '%s' codex -q -o '%s' --codex '%s' -- sandbox -c "
	         "'sandbox_mode=\"workspace-write\"' -c '%s' -- sh -c 'echo done > %s'",
	         w.work, dtt_denytrace(), ring, w.codex, c2, w.status);
	const char *rec[] = {"/bin/sh", "-c", cmd, NULL};
	dtt_system(out, sizeof(out), rec, w.env);
	cr_assert_neq(access(w.status, F_OK), 0, "the board was written: %s", out);
	codex_expect_fixed(&w, ring);
	const char *line = strstr(out, "the launch with every command-line fix:");
	cr_assert_not_null(line, "%s", out);
	cr_expect_null(strstr(line, "mcp_servers"), "the probe's overrides are in the fix:\n%s",
	               out);
}

/* What a hostile worker can do to the config snapshot `denytrace codex`
 * wrote beside its launch: hide it (zero its sequence word) and append
 * its own, of the same writer and file, whose text is text. */
static void forge_config(const char *ring, const char *text)
{
	struct dtt_run r;
	cr_assert_eq(dtt_load(&r, ring), 0);
	const struct dt_record *real = dtt_find(&r, DT_REC_CONFIG, NULL, NULL);
	cr_assert_not_null(real, "no config snapshot in %s", ring);
	/* a record's pos is where it ends: it starts where the one before ends */
	uint64_t start = 0;
	for (size_t i = 0; i < r.n; i++)
		if (r.recs[i].pos < real->pos && r.recs[i].pos > start)
			start = r.recs[i].pos;
	struct dtt_ring w;
	cr_assert_eq(dtt_ring_open(&w, ring), 0);
	__atomic_store_n(dt_slot_seq(&w.r, start), 0, __ATOMIC_RELEASE);
	dtt_ring_begin(&w, DT_REC_CONFIG, (long)real->pid, "denytrace");
	dt_put_str(&w.b, DT_T_CONFIG_ROLE, "codex");
	dt_put_str(&w.b, DT_T_CONFIG_PATH, real->cfg_path);
	if (real->cfg_version)
		dt_put_str(&w.b, DT_T_CONFIG_VERSION, real->cfg_version);
	dt_put_u64(&w.b, DT_T_CONFIG_SIZE, strlen(text));
	dt_put(&w.b, DT_T_CONFIG_TEXT, text, (uint32_t)strlen(text));
	cr_assert_eq(dtt_ring_commit(&w), 0);
	dtt_ring_close(&w);
	dtt_free(&r);
}

/* `denytrace codex` read a config.toml that names other as the only root;
 * the worker replaces that snapshot with one that names the board too, so
 * that the fix of the launch the user made would grant the board. fix
 * --verify --yes with the launch file, or (dashdash) with the launch's own
 * words after --, from its directory and with its environment. */
static void expect_rewritten_snapshot_applies_nothing(int dashdash)
{
	struct codex_world w;
	codex_world(&w);
	char text[2 * PATH_MAX], ring[PATH_MAX + 16], cmd[8 * PATH_MAX], state[PATH_MAX + 16];
	snprintf(text, sizeof(text), "[sandbox_workspace_write]\nwritable_roots = [\"%s\"]\n",
	         w.other);
	codex_world_file(&w, "config.toml", text);
	snprintf(state, sizeof(state), "%s/state", w.top);
	cr_assert_eq(setenv("XDG_STATE_HOME", state, 1), 0);
	snprintf(ring, sizeof(ring), "%s/c.ring", w.work);
	const char *launch = "sandbox -c 'sandbox_mode=\"workspace-write\"' -- sh -c 'echo done > ";
	snprintf(cmd, sizeof(cmd), "cd '%s' && exec '%s' codex -q -o '%s' --codex '%s' -- %s%s'",
	         w.work, dtt_denytrace(), ring, w.codex, launch, w.status);
	const char *rec[] = {"/bin/sh", "-c", cmd, NULL};
	dtt_system(out, sizeof(out), rec, w.env);
	cr_assert_neq(access(w.status, F_OK), 0, "the board was written: %s", out);
	snprintf(text, sizeof(text),
	         "[sandbox_workspace_write]\nwritable_roots = [\"%s\", \"%s\"]\n", w.other,
	         w.board);
	forge_config(ring, text);
	snprintf(cmd, sizeof(cmd), "cd '%s' && exec '%s' fix --verify --yes '%s'", w.work,
	         dtt_denytrace(), ring);
	if (dashdash)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " -- '%s' %s%s'", w.codex,
		         launch, w.status);
	const char *fix_sh[] = {"/bin/sh", "-c", cmd, NULL};
	dtt_system(out, sizeof(out), fix_sh, w.env);
	cr_expect_neq(access(w.status, F_OK), 0, "the claimed root was granted and run:\n%s", out);
	cr_expect(strstr(out, "by the traced program"), "%s", out);
}

Test(fix_verify, a_config_snapshot_the_worker_rewrote_names_no_root_verify_applies)
{
	expect_rewritten_snapshot_applies_nothing(0);
}

/* The s10 review: with the command after --, no launch file holds the
 * snapshots' digests, and the ring's were believed. */
Test(fix_verify, a_config_snapshot_the_worker_rewrote_names_no_root_verify_applies_after_dashdash)
{
	expect_rewritten_snapshot_applies_nothing(1);
}

/* The real Codex, its launch's state in state_home (XDG_STATE_HOME) and
 * its -c options codex_c: its worker, outside the probe, hides its mount
 * tables and plants a launch file there that makes the whole host
 * writable and creates a marker; fix --verify must not run it. */
static void expect_planted_codex_launch_never_runs(struct codex_world *w, const char *state_home,
                                                   const char *codex_c)
{
	char state[PATH_MAX + 32], marker[PATH_MAX + 16], script[4 * PATH_MAX];
	char ring[PATH_MAX + 16], cmd[8 * PATH_MAX];
	snprintf(state, sizeof(state), "XDG_STATE_HOME=%s", state_home);
	snprintf(marker, sizeof(marker), "%s/planted-ran", w->top);
	snprintf(ring, sizeof(ring), "%s/c.ring", w->work);
	const char *env[] = {w->e_home, w->e_ch, state, NULL};
	snprintf(script, sizeof(script),
	         "echo done > %s; env -u LD_PRELOAD %s \"$DENYTRACE_RING\" %s; exit 1", w->status,
	         dtt_helper("plant-launch"), marker);
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && exec '%s' run -q -o '%s' -- '%s' sandbox -c "
	         "'sandbox_mode=\"workspace-write\"'%s -- sh -c '%s'",
	         w->work, dtt_denytrace(), ring, w->codex, codex_c, script);
	const char *rec[] = {"/bin/sh", "-c", cmd, NULL};
	dtt_system(out, sizeof(out), rec, env);
	char planted[PATH_MAX + 64];
	snprintf(planted, sizeof(planted), "%s/denytrace/launches", state_home);
	cr_assert_eq(access(planted, F_OK), 0, "the worker planted nothing: %s", out);
	const char *fargs[] = {dtt_denytrace(), "fix",    "--verify", "--yes",
	                       "--root",        w->board, ring,       NULL};
	int st = dtt_system(out, sizeof(out), fargs, env);
	cr_expect_neq(access(marker, F_OK), 0, "the planted launch ran:\n%s", out);
	cr_expect_eq(st, 8, "exit %d, not 8 (no launch the user made):\n%s", st, out);
}

/* XDG_STATE_HOME in the workspace, which Codex lets the worker write. */
Test(fix_verify, a_launch_file_a_codex_worker_plants_in_its_workspace_is_never_run)
{
	struct codex_world w;
	codex_world(&w);
	char state[PATH_MAX + 16];
	snprintf(state, sizeof(state), "%s/state", w.work);
	expect_planted_codex_launch_never_runs(&w, state, "");
}

/* ---- issue 25: every finding gets a fix, and --verify says what it proved ---- */

/* The proof --verify reads: fix's JSON (args), asked through Python's json
 * and shlex, expr printed; the exit status of fix returned. */
static int fix_py(const char *dir, const char *const *args, const char *expr, char *res, size_t cap)
{
	int st = fix_redirected(args, "2>/dev/null");
	char path[PATH_MAX + 16], code[2048];
	snprintf(path, sizeof(path), "%s/fix-py.json", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(out, f);
	fclose(f);
	snprintf(code, sizeof(code),
	         "import json, shlex, sys\nj = json.load(open(sys.argv[1]))\nprint(%s)\n", expr);
	const char *py[] = {"/usr/bin/python3", "-c", code, path, NULL};
	cr_assert_eq(dtt_system(res, cap, py, NULL), 0, "%s\n%s", res, out);
	return st;
}

/* A candidate is the traced program's choice, even in a private directory
 * under /tmp (the shape of /tmp/tmux-UID): --verify holds it back until
 * the user names it with --root, and then applies and proves it. */
Test(fix_verify, plain_bubblewrap_without_root_gets_a_candidate_verified_once_named_as_root)
{
	struct world w;
	struct dtt_run r;
	recorded_world(&w, &r);
	char res[8192], want[3 * PATH_MAX];
	const char *plain[] = {"--format", "json", r.ring, NULL};
	cr_assert_eq(fix_py(w.top, plain,
	                    "[(f['cause'], f['candidate'], f['kind'], f['grants']) for f in "
	                    "j['fixes']]",
	                    res, sizeof(res)),
	             0, "%s", out);
	snprintf(want, sizeof(want), "[('outside-roots', True, 'command-line', ['%s'])]\n",
	         w.board);
	cr_expect_str_eq(res, want);
	cr_expect_eq(lines_in(w.runs), 1, "fix without --verify ran the worker");

	char status[PATH_MAX + 16];
	snprintf(status, sizeof(status), "%s/status", w.board);
	const char *verify[] = {"--verify", "--yes", "--format", "json", r.ring, NULL};
	int st =
	    fix_py(w.top, verify,
	           "[(f['verify']['state'], f['named_by_traced_program']) for f in j['fixes']]",
	           res, sizeof(res));
	cr_expect_neq(st, 0, "a held-back candidate counted as verified:\n%s", out);
	cr_expect_str_eq(res, "[('cannot-verify', True)]\n");
	cr_expect_neq(access(status, F_OK), 0, "the candidate was granted to a re-run");

	const char *named[] = {"--verify", "--yes", "--root", w.board,
	                       "--format", "json",  r.ring,   NULL};
	st = fix_py(w.top, named, "[f['verify']['state'] for f in j['fixes']]", res, sizeof(res));
	cr_expect_eq(st, 0, "exit %d:\n%s", st, out);
	cr_expect_str_eq(res, "['fixed']\n");
	cr_expect_eq(access(status, F_OK), 0, "the fixed run did not write the board");
	dtt_free(&r);
}

Test(fix_verify, report_and_fix_name_the_same_bind_for_a_board_outside_every_root)
{
	struct world w;
	make_world(&w, 1);
	struct dtt_run r;
	record_bwrap(&w, &r);
	const char *rep[] = {dtt_denytrace(), "report", "--format", "json", r.ring, NULL};
	static char rjson[1 << 17];
	cr_assert_eq(dtt_system(rjson, sizeof(rjson), rep, NULL), 0, "%s", rjson);
	char bind[2 * PATH_MAX + 16];
	snprintf(bind, sizeof(bind), "--bind %s %s", w.board, w.board);
	cr_expect(strstr(rjson, bind), "the report advises no %s:\n%s", bind, rjson);
	const char *args[] = {r.ring, NULL};
	cr_assert_eq(fix(args), 0, "%s", out);
	cr_expect(strstr(out, bind), "fix proposes no %s:\n%s", bind, out);
	cr_expect(strstr(out, "candidate"), "it is not labelled a candidate:\n%s", out);
	cr_expect_null(strstr(out, "none can be stated"), "%s", out);
	dtt_free(&r);
}

/* A worker whose board is a read-only .git inside its writable workspace:
 * the fix is the program's to make, so nothing can be verified. */
Test(fix_verify, a_protected_path_is_not_verified_and_fix_verify_exits_non_zero)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	struct world w;
	make_world(&w, 1);
	private_state(w.top);
	char git[PATH_MAX + 16], script[PATH_MAX + 64];
	snprintf(git, sizeof(git), "%s/.git", w.work);
	cr_assert_eq(mkdir(git, 0755), 0);
	snprintf(script, sizeof(script), "echo x > %s/config", git);
	const char *argv[] = {"bwrap", "--ro-bind", "/",  "/",    "--bind", w.work,
	                      w.work,  "--ro-bind", git,  git,    "--dev",  "/dev",
	                      "--",    "/bin/sh",   "-c", script, NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0);
	char res[4096];
	const char *args[] = {"--verify", "--yes", "--format", "json", r.ring, NULL};
	int st = fix_py(w.top, args,
	                "[(f['cause'], f['verify']['state'], bool(f['verify']['why_not'])) for f "
	                "in j['fixes']]",
	                res, sizeof(res));
	cr_expect_eq(st, 9, "exit %d, not 9 (could not verify):\n%s", st, out);
	cr_expect_str_eq(res, "[('protected-path', 'cannot-verify', True)]\n");
	/* what a deploy script does with it */
	char cmd[2 * PATH_MAX + 128];
	snprintf(cmd, sizeof(cmd),
	         "'%s' fix --verify --yes '%s' </dev/null >/dev/null 2>&1 && echo deploy",
	         dtt_denytrace(), r.ring);
	const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
	char said[256];
	dtt_system(said, sizeof(said), sh, NULL);
	cr_expect_null(strstr(said, "deploy"), "fix --verify --yes && deploy deployed");
	dtt_free(&r);
}

/* Every line fix prints to copy, and the launch it prints, read back by
 * a shell's rules (shlex), are the words meant: a space stays inside. */
Test(fix_verify, a_board_path_with_a_space_gives_fix_lines_that_paste_into_a_shell)
{
	struct world w;
	make_world_named(&w, 1, "my board");
	private_state(w.top);
	struct dtt_run r;
	record_bwrap(&w, &r);
	char res[8192], want[3 * PATH_MAX];
	/* named as a root: a candidate alone is never written into the launch */
	const char *json[] = {"--root", w.board, "--format", "json", r.ring, NULL};
	cr_assert_eq(fix_py(w.top, json,
	                    "[shlex.split(c) for f in j['fixes'] for c in f['copy']] + "
	                    "[shlex.split(shlex.join(j['command_line'])) == j['command_line']]",
	                    res, sizeof(res)),
	             0, "%s", out);
	snprintf(want, sizeof(want), "[['--bind', '%s', '%s'], True]\n", w.board, w.board);
	cr_expect_str_eq(res, want);
	/* the text's launch line, pasted into a shell, runs the fixed launch */
	const char *text[] = {"--root", w.board, r.ring, NULL};
	cr_assert_eq(fix(text), 0, "%s", out);
	const char *line = strstr(out, "   $ cd ");
	cr_assert_not_null(line, "no launch line:\n%s", out);
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "%.*s", (int)strcspn(line + 5, "\n"), line + 5);
	const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
	char said[4096];
	cr_expect_eq(dtt_system(said, sizeof(said), sh, NULL), 0, "%s: %s", cmd, said);
	char status[PATH_MAX + 16];
	snprintf(status, sizeof(status), "%s/status", w.board);
	cr_expect_eq(access(status, F_OK), 0, "the pasted launch did not write the board: %s", cmd);
	dtt_free(&r);
}

/* A board in WAL mode whose -wal and -shm the last connection removed:
 * the worker must create, truncate and delete them. */
struct wal_world {
	char top[PATH_MAX], board[PATH_MAX + 8], work[PATH_MAX + 8], worker[PATH_MAX + 16];
	char db[PATH_MAX + 32];
};

static void make_wal_world(struct wal_world *w)
{
	if (!dtt_have_landlock())
		cr_skip_test("Landlock is not available here");
	snprintf(w->top, sizeof(w->top), "%s", dtt_tmpdir());
	snprintf(w->board, sizeof(w->board), "%s/board", w->top);
	snprintf(w->work, sizeof(w->work), "%s/work", w->top);
	snprintf(w->worker, sizeof(w->worker), "%s/worker.py", w->top);
	snprintf(w->db, sizeof(w->db), "%s/kanban.db", w->board);
	cr_assert_eq(mkdir(w->board, 0755), 0);
	cr_assert_eq(mkdir(w->work, 0755), 0);
	const char *mk[] = {"/usr/bin/python3", "-c",
	                    "import sqlite3, sys\n"
	                    "c = sqlite3.connect(sys.argv[1])\n"
	                    "c.execute('pragma journal_mode=wal')\n"
	                    "c.execute('create table t(a)')\n"
	                    "c.commit(); c.close()\n",
	                    w->db, NULL};
	char said[4096];
	cr_assert_eq(dtt_system(said, sizeof(said), mk, NULL), 0, "%s", said);
	FILE *f = fopen(w->worker, "w");
	cr_assert_not_null(f);
	fprintf(f,
	        "import sqlite3\n"
	        "c = sqlite3.connect('%s')\n"
	        "for i in range(20):\n"
	        "    c.execute('insert into t values (?)', (i,))\n"
	        "    c.commit()\n"
	        "c.close()\n",
	        w->db);
	fclose(f);
}

/* landlock-run --rw WORK --rw /dev/null [--rule BOARD=RIGHTS] -- python3 -B
 * WORKER under denytrace run, from the workspace. */
static void record_wal_worker(struct wal_world *w, const char *rule, struct dtt_run *r)
{
	char rulearg[PATH_MAX + 1024];
	const char *argv[16];
	size_t n = 0;
	argv[n++] = dtt_helper("landlock-run");
	argv[n++] = "--rw";
	argv[n++] = w->work;
	argv[n++] = "--rw";
	argv[n++] = "/dev/null";
	if (rule) {
		snprintf(rulearg, sizeof(rulearg), "%s=%s", w->board, rule);
		argv[n++] = "--rule";
		argv[n++] = rulearg;
	}
	argv[n++] = "--";
	argv[n++] = "/usr/bin/python3";
	argv[n++] = "-B";
	argv[n++] = w->worker;
	argv[n] = NULL;
	char cwd[PATH_MAX];
	dtt_build();
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(w->work), 0);
	cr_assert_eq(dtt_run(r, NULL, argv, NULL), 0);
	cr_assert_eq(chdir(cwd), 0);
}

Test(fix_verify,
     a_landlock_rule_for_a_wal_board_holds_every_right_sqlite_needs_and_verify_applies_it)
{
	struct wal_world w;
	make_wal_world(&w);
	private_state(w.top);
	struct dtt_run r;
	record_wal_worker(&w, NULL, &r);
	cr_assert_neq(r.status, 0, "the worker wrote its board without a rule: %s", r.out);
	char res[8192];
	const char *args[] = {"--format", "json", "--root", w.board, r.ring, NULL};
	cr_assert_eq(fix_py(w.top, args,
	                    "j['sandbox'], [f['sandbox'] for f in j['fixes']], '|'.join(r for f "
	                    "in j['fixes'] for c in f['copy'] if 'allowed_access' in c for r in "
	                    "c.split('allowed_access = ')[1].split(' | '))",
	                    res, sizeof(res)),
	             0, "%s", out);
	cr_expect(!strncmp(res, "landlock ['landlock'] ", 22), "the header says: %s", res);
	const char *rights = strrchr(res, ' ');
	cr_assert_not_null(rights);
	char rule[1024];
	snprintf(rule, sizeof(rule), "%.*s", (int)strcspn(rights + 1, "\n"), rights + 1);
	const char *need[] = {"WRITE_FILE", "TRUNCATE", "MAKE_REG", "REMOVE_FILE"};
	for (size_t i = 0; i < 4; i++)
		cr_expect(strstr(rule, need[i]), "no %s in %s", need[i], rule);
	/* the rule, applied exactly by the test's own Landlock launcher */
	struct dtt_run fixed;
	record_wal_worker(&w, rule, &fixed);
	cr_expect_eq(fixed.status, 0, "the worker failed with the rule %s: %s", rule, fixed.out);
	cr_expect_eq(dtt_count(&fixed, DT_REC_DENIAL, NULL, NULL), 0,
	             "refusals left with the rule %s", rule);
	/* the launcher on the command line builds the ruleset: --verify gives
	 * it the rule and runs the worker clean the first time */
	const char *verify[] = {"--verify", "--yes", "--format", "json",
	                        "--root",   w.board, r.ring,     NULL};
	int st =
	    fix_py(w.top, verify,
	           "[(f['kind'], f['verify']['state']) for f in j['fixes']], j['command_line'][1], "
	           "j['command_line'][2].split('=')[0] == j['fixes'][0]['grants'][0], "
	           "j['verified']['exit_status']",
	           res, sizeof(res));
	cr_expect_eq(st, 0, "exit %d, not 0:\n%s", st, out);
	cr_expect_str_eq(res, "[('command-line', 'fixed')] --rule True 0\n");
	dtt_free(&fixed);
	dtt_free(&r);
}

/* A board the worker (uid 65534) may not create files in, by its mode
 * (0555, the worker's own) or its owner (root's, 0755), recorded with
 * setpriv; fix --verify proves the chmod or chown on an overlay of the
 * board in a private mount namespace: the disk keeps mode and owner, and
 * the file the fixed run wrote is not on it. */
static void expect_disk_change_verified(mode_t mode, uid_t owner, const char *change)
{
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
		cr_skip_test("needs root and setpriv to run a worker as uid 65534");
	struct world w;
	make_world(&w, 1);
	private_state(w.top);
	cr_assert_eq(chmod(w.top, 0755), 0);
	cr_assert_eq(chown(w.work, 65534, 65534), 0);
	cr_assert_eq(chown(w.board, owner, owner), 0);
	cr_assert_eq(chmod(w.board, mode), 0);
	const char *argv[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
	                      "--",      "/bin/sh",       w.worker,        NULL};
	char cwd[PATH_MAX];
	dtt_build();
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(w.work), 0);
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0);
	cr_assert_eq(chdir(cwd), 0);
	cr_assert_neq(r.status, 0, "the worker wrote its board: %s", r.out);
	char res[4096], want[PATH_MAX + 128];
	/* setpriv is no sandbox denytrace reads: no launch file, the command given */
	const char *args[] = {"--verify", "--yes", "--format", "json",  "--root", w.board,
	                      r.ring,     "--",    argv[0],    argv[1], argv[2],  argv[3],
	                      argv[4],    argv[5], argv[6],    NULL};
	int st = fix_py(w.top, args,
	                "[(f['cause'], f['copy'][0], f['verify']['state']) for f in j['fixes']]",
	                res, sizeof(res));
	cr_expect_eq(st, 0, "exit %d:\n%s", st, out);
	snprintf(want, sizeof(want), "[('file-permissions', '%s %s', 'fixed')]\n", change, w.board);
	cr_expect_str_eq(res, want);
	cr_expect_eq(lines_in(w.runs), 2, "the worker did not run once more");
	struct stat sb;
	cr_assert_eq(stat(w.board, &sb), 0);
	cr_expect_eq(sb.st_mode & 07777, mode, "the board's mode changed on disk: %o", sb.st_mode);
	cr_expect_eq(sb.st_uid, owner, "the board's owner changed on disk: %u", sb.st_uid);
	char status[PATH_MAX + 16];
	snprintf(status, sizeof(status), "%s/status", w.board);
	cr_expect_neq(access(status, F_OK), 0, "the fixed run's write reached the disk");
	dtt_free(&r);
}

Test(fix_verify, a_chmod_of_a_0555_board_is_verified_on_an_overlay_and_the_board_stays_0555)
{
	expect_disk_change_verified(0555, 65534, "chmod u+w");
}

Test(fix_verify, a_chown_of_roots_board_is_verified_on_an_overlay_and_the_board_stays_roots)
{
	expect_disk_change_verified(0755, 0, "chown 65534");
}

/* ---- immutable and append-only files (chattr) ---- */

/* The world's board directory as an ext4 file system (tmpfs keeps no
 * immutable flag for chattr to clear in every kernel), in a mount
 * namespace of this test's own: it vanishes with the test. */
static void board_on_ext4(struct world *w)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to mount an ext4 image and set chattr +i");
	char img[PATH_MAX + 16], said[4096];
	snprintf(img, sizeof(img), "%s/board.img", w->top);
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		cr_skip_test("no private mount namespace here: %s", strerror(errno));
	const char *trunc[] = {"/usr/bin/truncate", "-s", "8M", img, NULL};
	const char *mkfs[] = {"/sbin/mkfs.ext4", "-q", "-F", img, NULL};
	const char *mnt[] = {"/bin/mount", "-o", "loop", img, w->board, NULL};
	cr_assert_eq(dtt_system(said, sizeof(said), trunc, NULL), 0, "%s", said);
	if (dtt_system(said, sizeof(said), mkfs, NULL) != 0)
		cr_skip_test("mkfs.ext4 cannot make a file system image here: %s", said);
	if (dtt_system(said, sizeof(said), mnt, NULL) != 0)
		cr_skip_test("no loop device to mount an ext4 image on here: %s", said);
	snprintf(ext4_board, sizeof(ext4_board), "%s", w->board);
}

static unsigned inode_flags(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW), flags = 0;
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(ioctl(fd, FS_IOC_GETFLAGS, &flags), 0, "%s: %s", path, strerror(errno));
	close(fd);
	return (unsigned)flags;
}

/* A board file the worker (root, no sandbox) overwrites, flagged with
 * chattr +flag: fix says chattr -flag on it, and --verify proves it on an
 * overlay whose copy has the flag cleared; the disk keeps flag and bytes. */
static void expect_chattr_verified(char flag, unsigned bit)
{
	struct world w;
	make_world(&w, 1);
	private_state(w.top);
	board_on_ext4(&w);
	char status[PATH_MAX + 16], said[4096], plus[4] = {'+', flag, 0, 0};
	snprintf(status, sizeof(status), "%s/status", w.board);
	FILE *f = fopen(status, "w");
	cr_assert_not_null(f);
	fputs("old\n", f);
	fclose(f);
	const char *chattr[] = {"/usr/bin/chattr", plus, status, NULL};
	cr_assert_eq(dtt_system(said, sizeof(said), chattr, NULL), 0, "%s", said);
	const char *argv[] = {"/bin/sh", w.worker, NULL};
	char cwd[PATH_MAX];
	dtt_build();
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(w.work), 0);
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0);
	cr_assert_eq(chdir(cwd), 0);
	cr_assert_neq(r.status, 0, "the worker wrote its flagged board: %s", r.out);
	char res[4096], want[PATH_MAX + 128];
	/* no sandbox: no launch file, the command given; the board is a root
	 * (a flag outside every root gets no chattr) */
	const char *args[] = {"--verify", "--yes", "--root", w.board, "--format", "json",
	                      r.ring,     "--",    argv[0],  argv[1], NULL};
	int st = fix_py(w.top, args,
	                "[(f['cause'], f['copy'][:1], f['verify']['state']) for f in j['fixes']]",
	                res, sizeof(res));
	cr_expect_eq(st, 0, "exit %d:\n%s", st, out);
	snprintf(want, sizeof(want), "[('immutable-file', ['chattr -%c %s'], 'fixed')]\n", flag,
	         status);
	cr_expect_str_eq(res, want);
	cr_expect_eq(lines_in(w.runs), 2, "the worker did not run once more");
	cr_expect(inode_flags(status) & bit, "the flag was cleared on disk");
	f = fopen(status, "r");
	cr_assert_not_null(f);
	char got[64] = "";
	cr_expect_not_null(fgets(got, sizeof(got), f));
	fclose(f);
	cr_expect_str_eq(got, "old\n", "the fixed run's write reached the disk");
	dtt_free(&r);
}

Test(fix_verify, an_immutable_board_file_gets_chattr_i_verified_on_an_overlay_and_keeps_its_flag)
{
	expect_chattr_verified('i', FS_IMMUTABLE_FL);
}

Test(fix_verify, an_append_only_board_file_gets_chattr_a_verified_on_an_overlay_and_keeps_its_flag)
{
	expect_chattr_verified('a', FS_APPEND_FL);
}

/* ---- Landlock's REFER ---- */

/* Two directories of one mount, and a worker that makes a file in one and
 * moves it to the other: under an ABI-1 ruleset the rename is refused with
 * EXDEV (mv copies instead), whatever --rw says. */
struct refer_world {
	char top[PATH_MAX], a[PATH_MAX + 8], b[PATH_MAX + 8], script[3 * PATH_MAX];
};

static void make_refer_world(struct refer_world *w)
{
	if (!dtt_have_landlock())
		cr_skip_test("Landlock is not available here");
	snprintf(w->top, sizeof(w->top), "%s", dtt_tmpdir());
	snprintf(w->a, sizeof(w->a), "%s/a", w->top);
	snprintf(w->b, sizeof(w->b), "%s/b", w->top);
	cr_assert_eq(mkdir(w->a, 0755), 0);
	cr_assert_eq(mkdir(w->b, 0755), 0);
	snprintf(w->script, sizeof(w->script), "echo x > %s/f && mv %s/f %s/f", w->a, w->a, w->b);
	private_state(w->top);
}

static void record_refer(struct refer_world *w, const char *const *argv, struct dtt_run *r)
{
	char cwd[PATH_MAX];
	dtt_build();
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(w->top), 0);
	cr_assert_eq(dtt_run(r, NULL, argv, NULL), 0);
	cr_assert_eq(chdir(cwd), 0);
	cr_assert_eq(r->status, 0, "mv did not copy instead: %s", r->out);
	cr_assert_geq(dtt_count(r, DT_REC_DENIAL, NULL, NULL), 1, "no refusal recorded");
}

Test(fix_verify, mv_between_directories_under_an_abi_1_ruleset_gets_refer_and_verify_runs_it_clean)
{
	struct refer_world w;
	make_refer_world(&w);
	const char *argv[] = {dtt_helper("landlock-run"),
	                      "--abi",
	                      "1",
	                      "--rw",
	                      w.top,
	                      "--rw",
	                      "/dev/null",
	                      "--",
	                      "/bin/sh",
	                      "-c",
	                      w.script,
	                      NULL};
	struct dtt_run r;
	record_refer(&w, argv, &r);
	char res[8192], want[4 * PATH_MAX];
	/* the directories named as a root (the two alone are a candidate, which
	 * --verify never applies): one rule on it */
	const char *args[] = {"--root", w.top, "--format", "json", r.ring, NULL};
	cr_assert_eq(fix_py(w.top, args,
	                    "[(f['cause'], f['kind'], f['sandbox']) for f in j['fixes']], "
	                    "j['command_line'][1:7]",
	                    res, sizeof(res)),
	             0, "%s", out);
	snprintf(want, sizeof(want),
	         "[('landlock-refer', 'command-line', 'landlock')] ['--rule', "
	         "'%s=MAKE_REG|REMOVE_FILE|REFER', '--abi', '2', '--rw', '%s']\n",
	         w.top, w.top);
	cr_expect_str_eq(res, want);
	const char *verify[] = {"--verify", "--yes", "--root", w.top,
	                        "--format", "json",  r.ring,   NULL};
	int st = fix_py(w.top, verify,
	                "[f['verify']['state'] for f in j['fixes']], j['verified']['exit_status']",
	                res, sizeof(res));
	cr_expect_eq(st, 0, "exit %d:\n%s", st, out);
	cr_expect_str_eq(res, "['fixed'] 0\n");
	dtt_free(&r);
}

/* The same worker restricting itself (the launcher inside its script, not
 * on the command line): the rule is printed, and --verify says why it
 * cannot apply it and exits 9. */
Test(fix_verify, a_landlock_ruleset_the_program_builds_itself_is_not_verified_and_exits_9)
{
	struct refer_world w;
	make_refer_world(&w);
	char run[PATH_MAX + 16];
	snprintf(run, sizeof(run), "%s/run.sh", w.top);
	FILE *f = fopen(run, "w");
	cr_assert_not_null(f);
	fprintf(f, "exec '%s' --abi 1 --rw '%s' --rw /dev/null -- /bin/sh -c '%s'\n",
	        dtt_helper("landlock-run"), w.top, w.script);
	fclose(f);
	const char *argv[] = {"/bin/sh", run, NULL};
	struct dtt_run r;
	record_refer(&w, argv, &r);
	char res[8192];
	const char *verify[] = {"--verify", "--yes", "--root", w.top,
	                        "--format", "json",  r.ring,   NULL};
	int st = fix_py(w.top, verify,
	                "[(f['cause'], f['verify']['state'], 'Landlock' in f['verify']['why_not']) "
	                "for f in j['fixes']]",
	                res, sizeof(res));
	cr_expect_eq(st, 9, "exit %d, not 9:\n%s", st, out);
	cr_expect_str_eq(res, "[('landlock-refer', 'cannot-verify', True)]\n");
	dtt_free(&r);
}

/* ---- issue 22, the review: places a launch file must not go ---- */

/* XDG_STATE_HOME outside the workspace, but in a root the launch's -c
 * writable_roots names: the worker writes the launch file of its ring there. */
Test(fix_verify, a_launch_file_is_not_put_where_codex_writable_roots_let_the_worker_replace_it)
{
	struct codex_world w;
	codex_world(&w);
	char codex_c[PATH_MAX + 64];
	snprintf(codex_c, sizeof(codex_c), " -c 'sandbox_workspace_write.writable_roots=[\"%s\"]'",
	         w.other);
	expect_planted_codex_launch_never_runs(&w, w.other, codex_c);
}

/* bwrap behind a wrapper word (timeout) binds the workspace that holds
 * XDG_STATE_HOME, and HOME is unset: the launcher cannot read that
 * bwrap's binds as the command, so no place is out of the worker's reach. */
Test(fix_verify, a_sandbox_the_launcher_cannot_read_gets_no_launch_file_the_worker_can_replace)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	struct world w;
	make_world(&w, 1);
	state_in_workspace(&w);
	char marker[PATH_MAX + 16], script[4 * PATH_MAX];
	snprintf(marker, sizeof(marker), "%s/planted-ran", w.top);
	snprintf(script, sizeof(script),
	         "echo done > %s/status; env -u LD_PRELOAD %s \"$DENYTRACE_RING\" %s; exit 1",
	         w.board, dtt_helper("plant-launch"), marker);
	const char *argv[] = {"timeout", "600",  "bwrap", "--ro-bind", "/",    "/",
	                      "--bind",  w.work, w.work,  "--dev",     "/dev", "--",
	                      "/bin/sh", "-c",   script,  NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0);
	char planted[PATH_MAX + 64];
	snprintf(planted, sizeof(planted), "%s/state/denytrace/launches", w.work);
	cr_assert_eq(access(planted, F_OK), 0, "the worker planted nothing: %s", r.out);
	/* the place the launcher would otherwise take next: out of reach, so
	 * that only the launcher's own choice decides */
	char sealed[PATH_MAX + 64];
	snprintf(sealed, sizeof(sealed), "%s/home/.local/state/denytrace/launches", w.top);
	const char *ls[] = {"/bin/sh", "-c", "ls -A \"$0\" 2>/dev/null", sealed, NULL};
	char listing[4096];
	dtt_system(listing, sizeof(listing), ls, NULL);
	cr_expect_str_eq(listing, "", "a launch file for a sandbox it cannot read: %s", listing);
	const char *args[] = {"--verify", "--yes", "--root", w.board, r.ring, NULL};
	int st = fix(args);
	cr_expect_neq(access(marker, F_OK), 0, "the planted launch ran:\n%s", out);
	cr_expect_eq(st, 8, "exit %d, not 8 (no launch the user made):\n%s", st, out);
	dtt_free(&r);
}

/* The JSON's verified.command is what ran, this denytrace binary first:
 * its first word borrowed a buffer of the re-run's stack frame, and was
 * read after that frame was gone. */
Test(fix_verify, the_json_names_the_command_verify_ran_starting_with_this_denytrace)
{
	struct world w;
	make_world(&w, 1);
	struct dtt_run r;
	record_bwrap(&w, &r);
	const char *args[] = {"--verify", "--yes", "--root", w.board, r.ring, NULL};
	char res[PATH_MAX + 64], want[PATH_MAX + 2];
	fix_json_query(w.top, args, "j['verified']['command'][0]", res, sizeof(res));
	cr_assert_not_null(realpath(dtt_denytrace(), want));
	strcat(want, "\n");
	cr_expect_str_eq(res, want);
	dtt_free(&r);
}

/* The s10 review: a re-run whose sandbox failed to start (bwrap exits 1:
 * a bind source that is not there) never ran the worker, so it had no
 * refusal, and every finding read "fixed" with exit 0; once, or each of
 * runs (NULL: once) soaked runs. */
static void expect_never_ran_verifies_nothing(const char *runs)
{
	struct world w;
	struct dtt_run r;
	recorded_world(&w, &r);
	char missing[PATH_MAX + 16];
	snprintf(missing, sizeof(missing), "%s/missing", w.top);
	const char *args[32] = {"--verify", "--yes", "--root", w.board, "--format", "json", r.ring};
	size_t n = 7;
	if (runs) {
		args[n++] = "--runs";
		args[n++] = runs;
	}
	const char *cmd[] = {"--",   "bwrap",  "--ro-bind", "/",      "/",     "--bind", w.work,
	                     w.work, "--bind", missing,     "/mnt/x", "--dev", "/dev",   "--chdir",
	                     w.work, "--",     "/bin/sh",   w.worker, NULL};
	for (size_t i = 0; cmd[i]; i++)
		args[n++] = cmd[i];
	char res[4096];
	int st =
	    fix_py(w.top, args, "[f['verify']['state'] for f in j['fixes']]", res, sizeof(res));
	cr_expect_str_eq(res, "['cannot-verify']\n", "%s", out);
	cr_expect_neq(st, 0, "fix --verify --yes said all was proved:\n%s", out);
	dtt_free(&r);
}

Test(fix_verify, a_re_run_that_never_ran_the_refused_program_verifies_nothing)
{
	expect_never_ran_verifies_nothing(NULL);
}

Test(fix_verify, soaked_re_runs_that_never_ran_the_refused_program_verify_nothing)
{
	expect_never_ran_verifies_nothing("2");
}
