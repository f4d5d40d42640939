/* SPDX-License-Identifier: MIT */
/* denytrace run --deny: refusals injected by the seccomp supervisor, in
 * dynamic programs (the probe records them too) and static ones (only the
 * supervisor sees them); schedules; and targets that never hang. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "names.h"
#include "report.h"
#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(deny, .fini = teardown, .timeout = 120);

static const char *tmp_path(const char *name)
{
	static __thread char p[8][1024];
	static __thread int k;
	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dtt_tmpdir(), name);
	return p[k];
}

/* The supervisor's record of an injected refusal of path. */
static const struct dt_record *supervisor_denial(const struct dtt_run *r, const char *path)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *d = &r->recs[i];
		if (d->type == DT_REC_DENIAL && d->supervisor && d->p[0].abspath &&
		    !strcmp(d->p[0].abspath, path))
			return d;
	}
	return NULL;
}

Test(deny, a_rule_refuses_the_chosen_path_in_a_dynamic_program_and_nothing_else)
{
	struct dtt_run r;
	char rule[1200], script[2400];
	snprintf(rule, sizeof(rule), "%s,errno=EROFS", tmp_path("deny.txt"));
	snprintf(script, sizeof(script), "echo a > %s; echo b > %s; exit 0", tmp_path("deny.txt"),
	         tmp_path("ok.txt"));
	const char *opts[] = {"--deny", rule, NULL};
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_expect_eq(access(tmp_path("deny.txt"), F_OK), -1, "the refused file exists");
	cr_expect_eq(access(tmp_path("ok.txt"), F_OK), 0, "the other file was not written");
	cr_expect(strstr(r.out, "Read-only file system"), "sh did not see EROFS: %s", r.out);

	const struct dt_record *s = supervisor_denial(&r, tmp_path("deny.txt"));
	cr_assert_not_null(s, "no supervisor record; output: %s", r.out);
	cr_expect(s->injected);
	cr_expect_str_eq(s->op, "openat");
	cr_expect_str_eq(dt_errno_name(s->err), "EROFS");
	cr_expect_null(supervisor_denial(&r, tmp_path("ok.txt")), "ok.txt was refused");
	/* the probe recorded the same failure from inside */
	const struct dt_record *p = NULL;
	for (size_t i = 0; i < r.n; i++)
		if (r.recs[i].type == DT_REC_DENIAL && !r.recs[i].supervisor)
			p = &r.recs[i];
	cr_assert_not_null(p, "the probe recorded nothing");
	cr_expect_eq(p->pid, s->pid);

	/* the report shows one refusal, marked injected */
	struct dt_report rep;
	char err[512];
	const char *rings[] = {r.ring};
	struct dt_report_opts o = {0};
	cr_assert_eq(dt_report_load(&rep, rings, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(dt_report_build(&rep, &o, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(rep.ngroups, 1, "the probe's and the supervisor's records were not merged");
	cr_expect_eq(rep.denials, 1);
	cr_expect_eq(rep.groups[0].v.cause, DT_CAUSE_INJECTED);
	cr_expect(rep.groups[0].rep->injected);
	cr_expect(!rep.groups[0].rep->supervisor,
	          "the probe's record (with its stack) should stand");
	dt_report_free(&rep);
	dtt_free(&r);
}

Test(deny, a_rule_refuses_the_chosen_path_in_a_static_program)
{
	struct dtt_run r;
	char rule[1200];
	snprintf(rule, sizeof(rule), "%s,op=create,errno=EPERM", tmp_path("s-deny.txt"));
	const char *opts[] = {"--deny", rule, NULL};
	const char *argv[] = {dtt_helper("static-writer"), tmp_path("s-deny.txt"),
	                      tmp_path("s-ok.txt"), NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_expect_eq(r.status, 1, "the static writer should have failed once: %s", r.out);
	cr_expect(strstr(r.out, "s-deny.txt x EPERM"), "%s", r.out);
	cr_expect(strstr(r.out, "s-ok.txt . ok"), "%s", r.out);
	const struct dt_record *s = supervisor_denial(&r, tmp_path("s-deny.txt"));
	cr_assert_not_null(s, "no supervisor record: %s", r.out);
	cr_expect(s->injected);
	cr_expect_eq(dtt_count(&r, DT_REC_PROCESS, NULL, NULL), 0,
	             "the probe cannot be in a static binary");

	struct dt_report rep;
	char err[512];
	const char *rings[] = {r.ring};
	struct dt_report_opts o = {0};
	cr_assert_eq(dt_report_load(&rep, rings, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(dt_report_build(&rep, &o, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rep.ngroups, 1);
	cr_expect_eq(rep.groups[0].v.cause, DT_CAUSE_INJECTED,
	             "the supervisor's record stands alone");
	dt_report_free(&rep);
	dtt_free(&r);
}

/* Issue 11, item 4: the supervisor's record of a refusal it injected into
 * a static binary carries the realpath the probe would have recorded: the
 * directory resolved as the target sees it (a symlinked directory here),
 * plus the leaf. */
Test(deny, an_injected_refusal_in_a_static_program_has_a_realpath)
{
	struct dtt_run r;
	char rule[1200], real_dir[1200], want[1400];
	snprintf(real_dir, sizeof(real_dir), "%s", tmp_path("real"));
	cr_assert_eq(mkdir(real_dir, 0755), 0);
	cr_assert_eq(symlink(real_dir, tmp_path("link")), 0);
	snprintf(rule, sizeof(rule), "%s,op=create,errno=EPERM", tmp_path("link/f.txt"));
	const char *opts[] = {"--deny", rule, NULL};
	const char *argv[] = {dtt_helper("static-writer"), tmp_path("link/f.txt"), NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	const struct dt_record *s = supervisor_denial(&r, tmp_path("link/f.txt"));
	cr_assert_not_null(s, "no supervisor record: %s", r.out);
	char resolved[1200];
	cr_assert_not_null(realpath(real_dir, resolved));
	snprintf(want, sizeof(want), "%s/f.txt", resolved);
	cr_assert_not_null(s->p[0].realpath, "the injected refusal has no realpath");
	cr_expect_str_eq(s->p[0].realpath, want);
	dtt_free(&r);
}

Test(deny, plain_reads_and_other_ops_are_not_refused)
{
	struct dtt_run r;
	char rule[1200], script[2400];
	FILE *f = fopen(tmp_path("read.txt"), "w");
	fputs("content\n", f);
	fclose(f);
	snprintf(rule, sizeof(rule), "%s/*,op=unlink", dtt_tmpdir());
	snprintf(script, sizeof(script), "cat %s && echo more >> %s && rm %s; echo rc=$?",
	         tmp_path("read.txt"), tmp_path("read.txt"), tmp_path("read.txt"));
	const char *opts[] = {"--deny", rule, NULL};
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_expect(strstr(r.out, "content"), "the read was refused: %s", r.out);
	cr_expect(strstr(r.out, "rc=1"), "rm should have failed: %s", r.out);
	const struct dt_record *s = supervisor_denial(&r, tmp_path("read.txt"));
	cr_assert_not_null(s, "%s", r.out);
	cr_expect_str_eq(s->op, "unlinkat");
	cr_expect_eq(dtt_count(&r, DT_REC_DENIAL, "openat", NULL), 0, "an open was refused");
	dtt_free(&r);
}

Test(deny, op_new_refuses_creating_a_missing_file_but_not_opening_an_existing_one)
{
	struct dtt_run r;
	char rule[1200], script[4096];
	mkdir(tmp_path("board"), 0755);
	FILE *f = fopen(tmp_path("board/k.db-wal"), "w");
	fputs("old\n", f);
	fclose(f);
	snprintf(rule, sizeof(rule), "%s/*,op=new", tmp_path("board"));
	/* >> and > are O_CREAT opens; only those of missing files must fail,
	 * by absolute path and relative to the cwd alike */
	snprintf(script, sizeof(script),
	         "echo a >> %s && echo appended; echo b > %s || echo refused-abs; "
	         "cd %s && { echo c >> k.db-wal && echo appended-rel; echo d > k.db-shm || "
	         "echo refused-rel; }",
	         tmp_path("board/k.db-wal"), tmp_path("board/k.db-journal"), tmp_path("board"));
	const char *opts[] = {"--deny", rule, NULL};
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_expect(strstr(r.out, "appended\n"), "the existing file was refused: %s", r.out);
	cr_expect(strstr(r.out, "appended-rel"), "the existing file (relative) was refused: %s",
	          r.out);
	cr_expect(strstr(r.out, "refused-abs"), "the new file was created: %s", r.out);
	cr_expect(strstr(r.out, "refused-rel"), "the new file (relative) was created: %s", r.out);
	cr_expect(strstr(r.out, "Permission denied"), "not EACCES by default: %s", r.out);
	cr_expect_eq(access(tmp_path("board/k.db-journal"), F_OK), -1);
	cr_expect_eq(access(tmp_path("board/k.db-shm"), F_OK), -1);
	cr_expect_not_null(supervisor_denial(&r, tmp_path("board/k.db-journal")), "%s", r.out);
	cr_expect_not_null(supervisor_denial(&r, tmp_path("board/k.db-shm")), "%s", r.out);
	cr_expect_null(supervisor_denial(&r, tmp_path("board/k.db-wal")),
	               "an existing file matched op=new");
	dtt_free(&r);
}

Test(deny, relative_paths_resolve_against_the_callers_cwd)
{
	struct dtt_run r;
	char rule[1200], script[2400];
	snprintf(rule, sizeof(rule), "%s/sub/*.db-journal,op=create,errno=EROFS", dtt_tmpdir());
	snprintf(script, sizeof(script),
	         "mkdir -p %s/sub && cd %s/sub && echo x > ../sub/./k.db-journal", dtt_tmpdir(),
	         dtt_tmpdir());
	const char *opts[] = {"--deny", rule, NULL};
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_expect_neq(r.status, 0);
	const struct dt_record *s = supervisor_denial(&r, tmp_path("sub/k.db-journal"));
	cr_assert_not_null(s, "%s", r.out);
	cr_expect_str_eq(s->p[0].path, "../sub/./k.db-journal");
	dtt_free(&r);
}

Test(deny, mkdir_chmod_and_rename_rules_refuse_their_ops)
{
	struct dtt_run r;
	char r1[1200], r2[1200], r3[1200], script[4096];
	const char *d = dtt_tmpdir();
	FILE *f = fopen(tmp_path("c.txt"), "w");
	fclose(f);
	f = fopen(tmp_path("from.txt"), "w");
	fclose(f);
	snprintf(r1, sizeof(r1), "%s/m*,op=mkdir,errno=EDQUOT", d);
	snprintf(r2, sizeof(r2), "%s/c.txt,op=chmod,errno=EPERM", d);
	snprintf(r3, sizeof(r3), "%s/to.txt,op=rename,errno=EXDEV", d);
	snprintf(script, sizeof(script),
	         "mkdir %s/mdir; chmod 600 %s/c.txt; mv %s/from.txt %s/to.txt; true", d, d, d, d);
	const char *opts[] = {"--deny", r1, "--deny", r2, "--deny", r3, NULL};
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	const struct dt_record *m = supervisor_denial(&r, tmp_path("mdir"));
	const struct dt_record *c = supervisor_denial(&r, tmp_path("c.txt"));
	cr_assert_not_null(m, "%s", r.out);
	cr_assert_not_null(c, "%s", r.out);
	cr_expect_str_eq(dt_errno_name(m->err), "EDQUOT");
	cr_expect_str_eq(dt_errno_name(c->err), "EPERM");
	cr_expect_eq(access(tmp_path("mdir"), F_OK), -1);
	/* rename matches either path; mv may fall back to copying on EXDEV,
	 * but the rename itself was refused */
	const struct dt_record *rn = NULL;
	for (size_t i = 0; i < r.n; i++)
		if (r.recs[i].type == DT_REC_DENIAL && r.recs[i].supervisor && r.recs[i].op &&
		    !strncmp(r.recs[i].op, "rename", 6))
			rn = &r.recs[i];
	cr_assert_not_null(rn, "%s", r.out);
	cr_expect_str_eq(rn->p[1].abspath, tmp_path("to.txt"));
	cr_expect_str_eq(dt_errno_name(rn->err), "EXDEV");
	dtt_free(&r);
}

static void static_pattern(const char *rule_tail, const char *seed, int count, char *out,
                           size_t cap)
{
	struct dtt_run r;
	char rule[1200], n[16];
	snprintf(rule, sizeof(rule), "%s,%s", tmp_path("sched.txt"), rule_tail);
	snprintf(n, sizeof(n), "%d", count);
	const char *opts[] = {"--deny", rule, "--seed", seed, NULL};
	const char *argv[] = {dtt_helper("static-writer"), "-n", n, tmp_path("sched.txt"), NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	const char *line = strstr(r.out, "sched.txt ");
	cr_assert_not_null(line, "%s", r.out);
	line += strlen("sched.txt ");
	size_t l = strcspn(line, " ");
	cr_assert_eq(l, (size_t)count, "%s", r.out);
	snprintf(out, cap, "%.*s", (int)l, line);
	/* one supervisor record per refusal */
	size_t x = 0;
	for (size_t i = 0; i < l; i++)
		x += line[i] == 'x';
	size_t recs = 0;
	for (size_t i = 0; i < r.n; i++)
		recs += r.recs[i].type == DT_REC_DENIAL && r.recs[i].supervisor;
	cr_expect_eq(recs, x, "%zu refusals but %zu records", x, recs);
	dtt_free(&r);
}

Test(deny, nth_refuses_exactly_the_nth_match)
{
	char got[64];
	static_pattern("nth=3", "1", 6, got, sizeof(got));
	cr_expect_str_eq(got, "..x...");
}

Test(deny, first_refuses_the_first_n_matches)
{
	char got[64];
	static_pattern("first=2", "1", 5, got, sizeof(got));
	cr_expect_str_eq(got, "xx...");
}

Test(deny, p_with_a_fixed_seed_repeats_and_keeps_its_rate)
{
	static char a[512], b[512], c[512];
	static_pattern("p=0.5", "42", 400, a, sizeof(a));
	static_pattern("p=0.5", "42", 400, b, sizeof(b));
	static_pattern("p=0.5", "43", 400, c, sizeof(c));
	cr_expect_str_eq(a, b, "the same seed gave different refusals");
	cr_expect_str_neq(a, c, "another seed gave the same 400 decisions");
	int x = 0;
	for (const char *p = a; *p; p++)
		x += *p == 'x';
	/* 400 draws at 0.5: mean 200, sd 10; +-5 sd */
	cr_expect(x > 150 && x < 250, "%d of 400 refused at p=0.5", x);
}

Test(deny, no_target_hangs_when_killed_with_a_notification_pending)
{
	struct dtt_run r;
	char rule[1200];
	snprintf(rule, sizeof(rule), "%s/st*,errno=EROFS", dtt_tmpdir());
	const char *opts[] = {"--deny", rule, NULL};
	const char *argv[] = {dtt_helper("static-writer"), "--kill-storm", "50", tmp_path("st"),
	                      NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_expect_eq(r.status, 0, "%s", r.out);
	cr_expect(strstr(r.out, "storm done"), "%s", r.out);
	dtt_free(&r);
}

Test(deny, no_target_hangs_when_it_exits_mid_call)
{
	struct dtt_run r;
	char rule[1200];
	snprintf(rule, sizeof(rule), "%s/mc*,p=0.5", dtt_tmpdir());
	const char *opts[] = {"--deny", rule, NULL};
	const char *argv[] = {dtt_helper("static-writer"), "--exit-mid-call", "50", tmp_path("mc"),
	                      NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_expect_eq(r.status, 0, "%s", r.out);
	cr_expect(strstr(r.out, "storm done"), "%s", r.out);
	dtt_free(&r);
}

Test(deny, a_tree_of_50_short_lived_processes_completes_and_every_exec_is_seen)
{
	struct dtt_run r;
	char rule[1200], script[2400];
	snprintf(rule, sizeof(rule), "%s/tree-*,op=create,p=0.5", dtt_tmpdir());
	snprintf(
	    script, sizeof(script),
	    "i=0; while [ $i -lt 50 ]; do (echo $i > %s/tree-$i; /bin/true) & i=$((i+1)); done; "
	    "wait; echo tree done",
	    dtt_tmpdir());
	const char *opts[] = {"--deny", rule, "--seed", "5", NULL};
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_expect(strstr(r.out, "tree done"), "%s", r.out);
	size_t execs = dtt_count(&r, DT_REC_EXEC, NULL, NULL);
	cr_expect_geq(execs, 51, "%zu exec records for 1 sh and 50 /bin/true", execs);
	dtt_free(&r);
}

Test(deny, a_bad_rule_exits_125_with_the_bad_part_underlined)
{
	char out[4096];
	char cli[1024];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *argv[] = {cli,  "run",  "-o", tmp_path("bad.ring"), "--deny", "/x,op=crate",
	                      "--", "true", NULL};
	int st = dtt_system(out, sizeof(out), argv, NULL);
	cr_expect_eq(st, 125, "%s", out);
	cr_expect(strstr(out, "unknown op 'crate'"), "%s", out);
	cr_expect(strstr(out, "\n  /x,op=crate\n        ^^^^^\n"), "%s", out);
}

Test(deny, deny_refuses_to_start_where_notification_is_unavailable)
{
	/* A seccomp listener cannot be installed under another one (EBUSY):
	 * denytrace inside denytrace is such a place. */
	char out[8192], cli[1024], rule[1200];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	snprintf(rule, sizeof(rule), "%s/*", dtt_tmpdir());
	const char *argv[] = {cli,
	                      "run",
	                      "-q",
	                      "--watch-exec",
	                      "-o",
	                      tmp_path("outer.ring"),
	                      "--",
	                      cli,
	                      "run",
	                      "-o",
	                      tmp_path("inner.ring"),
	                      "--deny",
	                      rule,
	                      "--",
	                      "true",
	                      NULL};
	int st = dtt_system(out, sizeof(out), argv, NULL);
	cr_expect_eq(st, 125, "%s", out);
	cr_expect(strstr(out, "--deny cannot work"), "%s", out);

	/* without --deny it says so once and carries on */
	const char *argv2[] = {cli,
	                       "run",
	                       "-q",
	                       "--watch-exec",
	                       "-o",
	                       tmp_path("outer2.ring"),
	                       "--",
	                       cli,
	                       "run",
	                       "-q",
	                       "--watch-exec",
	                       "-o",
	                       tmp_path("inner2.ring"),
	                       "--",
	                       "sh",
	                       "-c",
	                       "echo ran",
	                       NULL};
	st = dtt_system(out, sizeof(out), argv2, NULL);
	cr_expect_eq(st, 0, "%s", out);
	cr_expect(strstr(out, "ran"), "%s", out);
	const char *first = strstr(out, "exec coverage off");
	cr_expect_not_null(first, "%s", out);
	cr_expect(first && !strstr(first + 1, "exec coverage off"), "said more than once: %s", out);
}

Test(deny, an_injected_refusal_in_a_pid_namespace_is_still_merged_with_the_probes)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	struct dtt_run r;
	char rule[1200], script[2400];
	snprintf(rule, sizeof(rule), "%s,errno=EROFS", tmp_path("ns.txt"));
	snprintf(script, sizeof(script), "echo x > %s; true", tmp_path("ns.txt"));
	const char *opts[] = {"--deny", rule, NULL};
	const char *argv[] = {"bwrap", "--bind",        "/",  "/",       "--dev", "/dev", "--proc",
	                      "/proc", "--unshare-pid", "--", "/bin/sh", "-c",    script, NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	const struct dt_record *s = supervisor_denial(&r, tmp_path("ns.txt"));
	cr_assert_not_null(s, "%s", r.out);
	cr_expect_gt(s->nspid, 0, "no namespaced pid recorded");
	struct dt_report rep;
	char err[512];
	const char *rings[] = {r.ring};
	struct dt_report_opts o = {0};
	cr_assert_eq(dt_report_load(&rep, rings, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(dt_report_build(&rep, &o, err, sizeof(err)), 0, "%s", err);
	size_t shown = 0;
	for (size_t k = 0; k < rep.ngroups; k++)
		if (!rep.groups[k].hidden) {
			shown++;
			cr_expect_eq(rep.groups[k].v.cause, DT_CAUSE_INJECTED, "%s",
			             rep.groups[k].v.reason);
		}
	cr_expect_eq(shown, 1, "the probe's record (pid %lld inside) was not merged",
	             (long long)s->nspid);
	dt_report_free(&rep);
	dtt_free(&r);
}

/* 1 when path exists within about 10 s (a hang guard, not a timing). */
static int appears(const char *path)
{
	for (int k = 0; k < 1000; k++) {
		if (access(path, F_OK) == 0)
			return 1;
		usleep(10 * 1000);
	}
	return 0;
}

/* `denytrace run --deny` of a command that leaves a daemon behind, which
 * waits for GO, then execs and creates DONE; a SIGTERM makes it create
 * GOT and go on. Returns denytrace's pid once it says it is waiting for
 * the daemon; its stderr goes to err. */
static pid_t run_leaving_a_daemon(const char *go, const char *done, const char *err)
{
	char rule[1200], script[4096];
	snprintf(rule, sizeof(rule), "%s,op=create", tmp_path("never"));
	snprintf(script, sizeof(script),
	         "setsid sh -c 'trap \"touch %s\" TERM; while [ ! -e %s ]; do sleep 0.05; done; "
	         "/bin/true && touch %s' </dev/null >/dev/null 2>&1 &",
	         tmp_path("got"), go, done);
	char cli[1024];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		execl(cli, cli, "run", "-o", tmp_path("daemon.ring"), "--deny", rule, "--", "sh",
		      "-c", script, (char *)NULL);
		_exit(127);
	}
	char text[8192] = "";
	for (int k = 0; k < 1000 && !strstr(text, "waiting for the background"); k++) {
		usleep(10 * 1000);
		FILE *f = fopen(err, "r");
		if (f) {
			text[fread(text, 1, sizeof(text) - 1, f)] = 0;
			fclose(f);
		}
	}
	cr_assert(strstr(text, "waiting for the background"), "%s", text);
	return pid;
}

/* Waits for pid at most about 10 s; its wait status, or -1 (then killed). */
static int reaped(pid_t pid)
{
	int st;
	for (int k = 0; k < 1000; k++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(10 * 1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

Test(deny, ctrl_c_stops_the_wait_for_a_daemon_which_keeps_working)
{
	const char *go = tmp_path("go"), *done = tmp_path("done"), *err = tmp_path("err");
	pid_t pid = run_leaving_a_daemon(go, done, err);
	kill(pid, SIGINT);
	int st = reaped(pid);
	fclose(fopen(go, "w"));
	cr_expect(st != -1, "SIGINT did not stop denytrace's wait");
	cr_expect(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
	cr_expect(appears(done), "the daemon could not exec or create a file after denytrace left");
}

Test(deny, sigterm_while_waiting_is_passed_on_to_the_daemon_which_goes_on)
{
	const char *go = tmp_path("go"), *done = tmp_path("done"), *err = tmp_path("err");
	pid_t pid = run_leaving_a_daemon(go, done, err);
	kill(pid, SIGTERM);
	int st = reaped(pid);
	cr_expect(st != -1, "SIGTERM did not stop denytrace's wait");
	cr_expect(appears(tmp_path("got")), "the daemon did not get the SIGTERM");
	fclose(fopen(go, "w"));
	cr_expect(appears(done), "the daemon could not go on after denytrace left");
}

Test(deny, a_daemon_keeps_working_after_denytrace_is_killed)
{
	const char *go = tmp_path("go"), *done = tmp_path("done"), *err = tmp_path("err");
	pid_t pid = run_leaving_a_daemon(go, done, err);
	kill(pid, SIGKILL);
	reaped(pid);
	fclose(fopen(go, "w"));
	cr_expect(appears(done), "the daemon could not exec or create a file after denytrace died");
}

Test(deny, deny_refuses_to_start_where_proc_shows_another_pid_namespace)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for a pid namespace");
	char cli[1024], rule[1200], out[8192];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	snprintf(rule, sizeof(rule), "%s,op=create", tmp_path("nsx"));
	const char *argv[] = {"unshare", "--pid", "--fork",        cli,      "run",
	                      "-q",      "-o",    tmp_path("r"),   "--deny", rule,
	                      "--",      "touch", tmp_path("nsx"), NULL};
	int st = dtt_system(out, sizeof(out), argv, NULL);
	if (strstr(out, "unshare failed"))
		cr_skip_test("no pid namespaces here: %s", out);
	cr_expect_eq(st, 125, "%s", out);
	cr_expect(strstr(out, "--mount-proc"), "%s", out);
	cr_expect_neq(access(tmp_path("nsx"), F_OK), 0, "the command ran unrefused");
}

/* Unprivileged, denytrace may not read a non-dumpable process's memory,
 * so it cannot tell which path a call names: the process must be named
 * blind, never pass for one --deny judged. */
Test(deny, a_non_dumpable_process_is_named_blind_not_passed_as_judged)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to run the command as another user");
	char udir[1024], ring[1100], target[1100], rule[1200], py[1400], cmd[2400];
	snprintf(udir, sizeof(udir), "%s/u", dtt_tmpdir());
	snprintf(ring, sizeof(ring), "%s/r.ring", udir);
	snprintf(target, sizeof(target), "%s/nd.txt", udir);
	snprintf(rule, sizeof(rule), "%s,op=create", target);
	snprintf(py, sizeof(py),
	         "import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); open('%s', 'w')", target);
	snprintf(cmd, sizeof(cmd), "chmod 755 '%s' && mkdir '%s' && chown 65534:65534 '%s'",
	         dtt_tmpdir(), udir, udir);
	cr_assert_eq(system(cmd), 0);
	struct dtt_cli c;
	const char *args[] = {"run", "-o", ring, "--deny", rule, "--", "/usr/bin/python3",
	                      "-c",  py,   NULL};
	dtt_cli_as(&c, 65534, args);
	struct dt_report rep;
	char err[512];
	const char *rings[] = {ring};
	struct dt_report_opts o = {0};
	cr_assert_eq(dt_report_load(&rep, rings, 1, err, sizeof(err)), 0, "%s: %s", err, c.err);
	cr_assert_eq(dt_report_build(&rep, &o, err, sizeof(err)), 0, "%s", err);
	int named = 0;
	for (size_t i = 0; i < rep.nblind; i++)
		named |= !strcmp(rep.blind[i]->exec_blind, "non-dumpable");
	int refused = access(target, F_OK) != 0;
	cr_expect(refused || named, "created unrefused and not named blind: %s", c.err);
	dt_report_free(&rep);
}
