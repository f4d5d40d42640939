/* SPDX-License-Identifier: MIT */
/* denytrace soak: a worker that fails only when an injected refusal hits
 * its board-DB journal; timeouts; Ctrl-C. The JSON summary is checked with
 * Python's json module. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exitcodes.h"
#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(soak, .fini = teardown, .timeout = 120);

/* One board write: sqlite in DELETE journal mode; exits 3 when it fails. */
static const char worker[] = "import sqlite3, sys\n"
                             "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                             "try:\n"
                             "    c.execute('PRAGMA journal_mode=DELETE')\n"
                             "    c.execute('CREATE TABLE IF NOT EXISTS t (x)')\n"
                             "    c.execute('BEGIN IMMEDIATE')\n"
                             "    c.execute('INSERT INTO t VALUES (1)')\n"
                             "    c.execute('COMMIT')\n"
                             "    print('ok')\n"
                             "except sqlite3.Error as e:\n"
                             "    print('error:', e)\n"
                             "    sys.exit(3)\n";

/* Prints json_expr evaluated on the JSON in file (as d). */
static void json_eval(const char *file, const char *expr, char *out, size_t cap)
{
	char code[2048];
	snprintf(code, sizeof(code), "import json; d = json.load(open('%s')); print(%s)", file,
	         expr);
	const char *argv[] = {"/usr/bin/python3", "-c", code, NULL};
	cr_assert_eq(dtt_system(out, cap, argv, NULL), 0, "python: %s", out);
	out[strcspn(out, "\n")] = 0;
}

Test(soak, a_flaky_board_write_is_traced_to_the_refusal_that_separates_failing_runs)
{
	char py[1024], db[1024], keep[1024], json[1024], rule[1200], cli[1024], out[65536];
	snprintf(py, sizeof(py), "%s/worker.py", dtt_tmpdir());
	snprintf(db, sizeof(db), "%s/board/kanban.db", dtt_tmpdir());
	snprintf(keep, sizeof(keep), "%s/keep", dtt_tmpdir());
	snprintf(json, sizeof(json), "%s/soak.json", dtt_tmpdir());
	char json_opt[1100];
	snprintf(json_opt, sizeof(json_opt), "--json=%s", json);
	snprintf(rule, sizeof(rule), "%s/board/*.db-journal,op=create,errno=EROFS,p=0.3",
	         dtt_tmpdir());
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	FILE *f = fopen(py, "w");
	fputs(worker, f);
	fclose(f);
	char dir[1100];
	snprintf(dir, sizeof(dir), "%s/board", dtt_tmpdir());
	cr_assert_eq(mkdir(dir, 0755), 0);

	const char *argv[] = {cli,      "soak", "--runs",           "12", "--jobs", "2",
	                      "--seed", "1000", "--keep",           keep, json_opt, "--deny",
	                      rule,     "--",   "/usr/bin/python3", py,   db,       NULL};
	int st = dtt_system(out, sizeof(out), argv, NULL);
	cr_assert_eq(st, 1, "soak should report failures (exit 1): %s", out);

	char v[4096];
	json_eval(json, "d['runs']", v, sizeof(v));
	cr_expect_str_eq(v, "12");
	json_eval(json, "d['failures']", v, sizeof(v));
	int failures = atoi(v);
	cr_expect(failures > 0 && failures < 12, "failures %d of 12 at p=0.3 per journal",
	          failures);
	json_eval(json, "round(d['flake_rate'] * 12)", v, sizeof(v));
	cr_expect_eq(atoi(v), failures);
	json_eval(json, "d['ci_low'] < d['flake_rate'] < d['ci_high']", v, sizeof(v));
	cr_expect_str_eq(v, "True");
	json_eval(json, "len(d['failed_runs'])", v, sizeof(v));
	cr_expect_eq(atoi(v), failures);
	json_eval(json, "all(r['exit_status'] == 3 for r in d['failed_runs'])", v, sizeof(v));
	cr_expect_str_eq(v, "True");

	/* the separating refusal: the journal's creation, injected */
	json_eval(json,
	          "[(s['path'], s['errno'], s['injected'], s['failing_runs'], s['passing_runs']) "
	          "for s in d['separating_refusals']]",
	          v, sizeof(v));
	char want[2048];
	snprintf(want, sizeof(want), "[('%s-journal', 'EROFS', True, %d, 0)]", db, failures);
	cr_expect_str_eq(v, want);

	/* and the problem they make, as the report names it */
	json_eval(json,
	          "[(p['cause'], p['failing_runs'], p['passing_runs']) for p in "
	          "d['separating_problems']]",
	          v, sizeof(v));
	snprintf(want, sizeof(want), "[('injected', %d, 0)]", failures);
	cr_expect_str_eq(v, want);

	/* failing rings are kept and readable */
	json_eval(json, "d['failed_runs'][0]['ring']", v, sizeof(v));
	cr_expect_eq(strncmp(v, keep, strlen(keep)), 0, "ring %s not in %s", v, keep);
	const char *rep_argv[] = {cli, "report", v, NULL};
	char rep[65536];
	cr_expect_eq(dtt_system(rep, sizeof(rep), rep_argv, NULL), 0, "%s", rep);
	cr_expect(strstr(rep, "injected"), "%s", rep);

	/* the text summary says the same */
	cr_expect(strstr(out, "flake rate"), "%s", out);
	cr_expect(strstr(out, "95% CI"), "%s", out);
	cr_expect(strstr(out, "-journal EROFS (injected)"), "%s", out);
	cr_expect(strstr(out, "First failing run"), "%s", out);
}

Test(soak, a_run_past_its_timeout_is_killed_and_counted_failed)
{
	char json[1024], cli[1024], out[65536], v[256];
	snprintf(json, sizeof(json), "%s/t.json", dtt_tmpdir());
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *argv[] = {
	    cli,      "soak", "--runs", "2",  "--jobs", "2",  "--timeout",           "0.5",
	    "--json", "-o",   json,     "--", "sh",     "-c", "sleep 30 & sleep 30", NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 1, "%s", out);
	json_eval(json, "(d['runs'], d['failures'], [r['timed_out'] for r in d['failed_runs']])", v,
	          sizeof(v));
	cr_expect_str_eq(v, "(2, 2, [True, True])");
}

Test(soak, ctrl_c_stops_cleanly_and_still_prints_the_summary)
{
	char cli[1024], json[1024];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	snprintf(json, sizeof(json), "%s/int.json", dtt_tmpdir());
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		char json_opt[1100];
		snprintf(json_opt, sizeof(json_opt), "--json=%s", json);
		execl(cli, cli, "soak", "--runs", "1000", json_opt, "--", "sh", "-c", "sleep 0.05",
		      (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	usleep(800 * 1000);
	kill(pid, SIGINT);
	char out[8192];
	size_t len = 0;
	ssize_t n;
	while ((n = read(p[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = 0;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d: %s", st, out);
	cr_expect(strstr(out, "(interrupted)"), "%s", out);
	char v[256];
	json_eval(json, "(d['interrupted'], 0 < d['runs'] < 1000, d['failures'])", v, sizeof(v));
	cr_expect_str_eq(v, "(True, True, 0)");
}

/* The "Rerun one alone" line is a shell command that reruns exactly the
 * failing command, quotes and all. */
Test(soak, rerun_one_alone_line_pastes_back_into_a_shell_with_quotes_intact)
{
	char cli[1024], out[65536], line[4096], rerun[8192], out2[65536];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *script = "echo \"it's $1 'here'\"; exit 3";
	const char *argv[] = {cli,       "soak", "--runs", "1",  "-q",  "--",
	                      "/bin/sh", "-c",   script,   "sh", "a b", NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 1, "%s", out);
	const char *l = strstr(out, "Rerun one alone: ");
	cr_assert_not_null(l, "%s", out);
	l += strlen("Rerun one alone: ");
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(l, "\n"), l);
	cr_assert_eq(strncmp(line, "denytrace run ", 14), 0, "%s", line);
	snprintf(rerun, sizeof(rerun), "cd '%s' && PATH='%s':\"$PATH\" %s", dtt_tmpdir(),
	         dtt_build(), line);
	const char *sh[] = {"/bin/sh", "-c", rerun, NULL};
	int status = dtt_system(out2, sizeof(out2), sh, NULL);
	cr_expect_eq(status, 3, "rerun `%s` exited %d: %s", line, status, out2);
	cr_expect_not_null(strstr(out2, "it's a b 'here'"), "rerun `%s` printed: %s", line, out2);
}

/* The schema test of --junit: tests/integration/junit.xsd, beside this file. */
static void junit_xsd(char *out, size_t cap)
{
	const char *slash = strrchr(__FILE__, '/');
	snprintf(out, cap, "%.*sjunit.xsd", slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__);
}

Test(soak, junit_has_a_testcase_per_run_and_a_failing_one_names_its_separating_refusal)
{
	char py[1024], db[1024], keep[1024], xml[1024], rule[1200], cli[1024], out[65536],
	    xsd[1024];
	junit_xsd(xsd, sizeof(xsd));
	if (access("/usr/bin/xmllint", X_OK) != 0)
		cr_skip_test("xmllint is missing (apt-get install libxml2-utils)");
	cr_assert_eq(access(xsd, R_OK), 0, "no %s: run from the repository root", xsd);
	snprintf(py, sizeof(py), "%s/worker.py", dtt_tmpdir());
	snprintf(db, sizeof(db), "%s/board/kanban.db", dtt_tmpdir());
	snprintf(keep, sizeof(keep), "%s/keep", dtt_tmpdir());
	snprintf(xml, sizeof(xml), "%s/soak.xml", dtt_tmpdir());
	snprintf(rule, sizeof(rule), "%s/board/*.db-journal,op=create,errno=EROFS,p=0.3",
	         dtt_tmpdir());
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	FILE *f = fopen(py, "w");
	fputs(worker, f);
	fclose(f);
	char dir[1100];
	snprintf(dir, sizeof(dir), "%s/board", dtt_tmpdir());
	cr_assert_eq(mkdir(dir, 0755), 0);

	const char *argv[] = {cli,      "soak",   "--runs", "12", "--jobs",           "2",
	                      "--seed", "1000",   "--keep", keep, "--junit",          xml,
	                      "-q",     "--deny", rule,     "--", "/usr/bin/python3", py,
	                      db,       NULL};
	int st = dtt_system(out, sizeof(out), argv, NULL);
	cr_assert_eq(st, 1, "soak should report failures (exit 1): %s", out);

	/* valid against the Ant/Jenkins schema CI servers read */
	const char *lint[] = {"/usr/bin/xmllint", "--noout", "--schema", xsd, xml, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), lint, NULL), 0, "xmllint: %s", out);

	/* one testcase per run; each failing one names the journal refusal, the
	 * one seen only in failing runs, the worker's line that made it, and its
	 * own kept ring */
	static const char check[] =
	    "import sys, xml.etree.ElementTree as E\n"
	    "db, keep = sys.argv[2], sys.argv[3]\n"
	    "s = E.parse(sys.argv[1]).getroot().find('testsuite')\n"
	    "cases = s.findall('testcase')\n"
	    "bad = [c for c in cases if c.find('failure') is not None]\n"
	    "assert len(cases) == 12, len(cases)\n"
	    "assert 0 < len(bad) < 12 and int(s.get('failures')) == len(bad), len(bad)\n"
	    "for c in cases:\n"
	    "    n, seed = c.get('name').split()[1], c.get('name').split()[3].rstrip(')')\n"
	    "    assert int(seed) == 1000 + int(n) - 1, c.get('name')\n"
	    "    fl = c.find('failure')\n"
	    "    if fl is None:\n"
	    "        assert len(c) == 0, c.get('name')\n"
	    "        continue\n"
	    "    assert fl.get('message').endswith(db + '-journal EROFS (injected)'), "
	    "fl.get('message')\n"
	    "    assert 'ring: %s/run-%s.ring' % (keep, n) in fl.text, fl.text\n"
	    "    assert 'EROFS (injected) from <module> at worker.py:' in fl.text, fl.text\n"
	    "print('ok', len(bad))\n";
	const char *pargv[] = {"/usr/bin/python3", "-c", check, xml, db, keep, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "%s", out);
}

Test(soak, the_summary_names_the_problem_present_only_in_failing_runs)
{
	char py[1024], db[1024], rule[1200], cli[1024], out[65536], dir[1100];
	snprintf(py, sizeof(py), "%s/worker.py", dtt_tmpdir());
	snprintf(db, sizeof(db), "%s/board/kanban.db", dtt_tmpdir());
	snprintf(rule, sizeof(rule), "%s/board/*.db-journal,op=create,errno=EROFS,p=0.3",
	         dtt_tmpdir());
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	FILE *f = fopen(py, "w");
	fputs(worker, f);
	fclose(f);
	snprintf(dir, sizeof(dir), "%s/board", dtt_tmpdir());
	cr_assert_eq(mkdir(dir, 0755), 0);
	const char *argv[] = {cli,  "soak",   "--runs", "12", "--seed",           "1000",
	                      "-q", "--deny", rule,     "--", "/usr/bin/python3", py,
	                      db,   NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 1, "%s", out);

	/* the flake rate first, then the problem as the report prints it */
	cr_expect_eq(strncmp(out, "soak: 12 runs", 13), 0, "%s", out);
	const char *p = strstr(out, "1 problem in failing runs and in no passing run");
	cr_assert_not_null(p, "%s", out);
	cr_expect(strstr(p, "\nPROBLEM 1: refused on purpose by a --deny rule\n"), "%s", out);
	cr_expect(strstr(p, "  cause    injected\n"), "%s", out);
	/* and the worker's line that made the refused call */
	const char *k = strstr(p, "-journal EROFS (injected) from <module> at worker.py:");
	cr_expect(k && strstr(k, ": in "), "%s", out);
}

/* How many processes run `sleep ARG` (ARG exact): the marks of a test's
 * own processes, whoever their parent is now. */
static int sleepers(const char *arg)
{
	DIR *d = opendir("/proc");
	cr_assert_not_null(d);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d))) {
		char path[300], buf[256];
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = 0;
		if (len > 6 && !strcmp(buf, "sleep") && !strcmp(buf + 6, arg))
			n++;
	}
	closedir(d);
	return n;
}

/* A sleep argument no other test uses at the same time. */
static void sleep_mark(char *out, size_t cap, int k)
{
	snprintf(out, cap, "%d.%d", 900 + k, (int)getpid());
}

Test(soak, a_timeout_leaves_no_process_of_the_run_behind)
{
	char cli[1024], out[65536], a[32], b[32], c[32], script[256];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	sleep_mark(a, sizeof(a), 1);
	sleep_mark(b, sizeof(b), 2);
	sleep_mark(c, sizeof(c), 3);
	/* setsid: a session of its own; timeout(1): a process group of its own */
	snprintf(script, sizeof(script), "setsid sleep %s & timeout 60 sleep %s & sleep %s", a, b,
	         c);
	const char *argv[] = {cli, "soak", "--runs", "1",  "-q",   "--timeout",
	                      "1", "--",   "sh",     "-c", script, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 1, "%s", out);
	cr_expect_eq(sleepers(a) + sleepers(b) + sleepers(c), 0,
	             "left behind: setsid %d, timeout %d, plain %d", sleepers(a), sleepers(b),
	             sleepers(c));
}

Test(soak, ctrl_c_leaves_no_process_of_the_runs_behind)
{
	char cli[1024], a[32], b[32], script[256];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	sleep_mark(a, sizeof(a), 4);
	sleep_mark(b, sizeof(b), 5);
	snprintf(script, sizeof(script), "setsid sleep %s & sleep %s", a, b);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execl(cli, cli, "soak", "--runs", "4", "--jobs", "2", "-q", "--", "sh", "-c",
		      script, (char *)NULL);
		_exit(127);
	}
	for (int k = 0; k < 1000 && (sleepers(a) < 2 || sleepers(b) < 2); k++)
		usleep(10 * 1000);
	cr_assert_eq(sleepers(a), 2, "the runs did not start");
	kill(pid, SIGINT);
	int st;
	waitpid(pid, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d", st);
	cr_expect_eq(sleepers(a) + sleepers(b), 0, "left behind: setsid %d, plain %d", sleepers(a),
	             sleepers(b));
}

static void soak_expect_refused(const char *const *argv, const char *const *env, const char *needle,
                                const char *marker)
{
	char out[65536];
	int st = dtt_system(out, sizeof(out), argv, env);
	cr_expect_eq(st, 125, "exit %d: %s", st, out);
	cr_expect(strstr(out, needle), "no '%s' in: %s", needle, out);
	cr_expect_neq(access(marker, F_OK), 0, "a run started: %s exists", marker);
}

Test(soak, keep_accepts_only_a_directory_of_the_callers_own)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to make a directory of another user");
	char cli[1024], theirs[1024], file[1024], dangling[1024], marker[1024], script[1200];
	const char *top = dtt_tmpdir();
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	snprintf(theirs, sizeof(theirs), "%s/theirs", top);
	snprintf(file, sizeof(file), "%s/file", top);
	snprintf(dangling, sizeof(dangling), "%s/dangling", top);
	snprintf(marker, sizeof(marker), "%s/ran", top);
	snprintf(script, sizeof(script), "touch '%s'; exit 1", marker);
	cr_assert_eq(mkdir(theirs, 0700) | chown(theirs, 65533, 65533), 0);
	cr_assert_eq(close(open(file, O_WRONLY | O_CREAT, 0600)), 0);
	cr_assert_eq(symlink("/nonexistent/keep", dangling), 0);
	const char *dirs[] = {theirs, file, dangling};
	for (size_t i = 0; i < 3; i++) {
		const char *argv[] = {cli,     "soak", "--runs", "1",  "-q",   "--keep",
		                      dirs[i], "--",   "sh",     "-c", script, NULL};
		soak_expect_refused(argv, NULL, "soak: --keep: ", marker);
	}
}

Test(soak, keep_never_writes_through_a_symlink_planted_in_it)
{
	char cli[1024], keep[256], victim[1024], planted[300], out[65536];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	/* tmpfs: another filesystem than the runs' rings, so they are copied */
	snprintf(keep, sizeof(keep), "/dev/shm/dtt-keep.%d", (int)getpid());
	snprintf(victim, sizeof(victim), "%s/victim", dtt_tmpdir());
	snprintf(planted, sizeof(planted), "%s/run-1.ring", keep);
	cr_assert_eq(mkdir(keep, 0700), 0);
	FILE *f = fopen(victim, "w");
	cr_assert_not_null(f);
	fputs("precious\n", f);
	fclose(f);
	cr_assert_eq(symlink(victim, planted), 0);
	const char *argv[] = {cli,      "soak", "--runs", "1",     "-q",
	                      "--keep", keep,   "--",     "false", NULL};
	const char *env[] = {"TMPDIR=/tmp", NULL};
	int st = dtt_system(out, sizeof(out), argv, env);
	char buf[64] = "";
	f = fopen(victim, "r");
	cr_assert_not_null(f);
	cr_expect(fgets(buf, sizeof(buf), f) && !strcmp(buf, "precious\n"),
	          "the file behind the symlink was overwritten");
	fclose(f);
	struct stat sb;
	int kept = lstat(planted, &sb) == 0 && S_ISREG(sb.st_mode);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", keep);
	cr_expect_eq(system(cmd), 0);
	cr_expect_eq(st, 1, "%s", out);
	cr_expect(kept, "the failing run's ring was not kept as a file of its own");
}

Test(soak, an_output_that_cannot_be_written_is_refused_before_the_first_run)
{
	char cli[1024], bad[1024], marker[1024], script[1200], json_opt[1100];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	snprintf(bad, sizeof(bad), "%s/missing/out", dtt_tmpdir());
	snprintf(marker, sizeof(marker), "%s/ran", dtt_tmpdir());
	snprintf(script, sizeof(script), "touch '%s'", marker);
	snprintf(json_opt, sizeof(json_opt), "--json=%s", bad);
	const char *outs[][2] = {{"-o", bad}, {"--junit", bad}, {json_opt, NULL}};
	for (size_t i = 0; i < 3; i++) {
		const char *argv[] = {cli,
		                      "soak",
		                      "--runs",
		                      "1",
		                      "-q",
		                      outs[i][0],
		                      outs[i][1] ? outs[i][1] : "--",
		                      outs[i][1] ? "--" : "sh",
		                      outs[i][1] ? "sh" : "-c",
		                      outs[i][1] ? "-c" : script,
		                      outs[i][1] ? script : NULL,
		                      NULL};
		soak_expect_refused(argv, NULL, "soak: cannot write ", marker);
	}
}

Test(soak, a_command_that_does_not_exist_exits_125_not_a_flake)
{
	char cli[1024], out[65536];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *argv[] = {cli, "soak", "--runs", "3", "-q", "--", "/nonexistent/worker", NULL};
	int st = dtt_system(out, sizeof(out), argv, NULL);
	cr_expect_eq(st, 125, "exit %d: %s", st, out);
	cr_expect(strstr(out, "cannot run '/nonexistent/worker'"), "%s", out);
}

Test(soak, its_files_go_under_tmpdir_and_none_is_left_after_sighup)
{
	char cli[1024], tmp[1024], env_tmp[1100], a[32], script[256], first[256];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	snprintf(tmp, sizeof(tmp), "%s/t", dtt_tmpdir());
	snprintf(env_tmp, sizeof(env_tmp), "TMPDIR=%s", tmp);
	cr_assert_eq(mkdir(tmp, 0700), 0);
	sleep_mark(a, sizeof(a), 6);
	snprintf(script, sizeof(script), "sleep %s", a);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		putenv(env_tmp);
		execl(cli, cli, "soak", "--runs", "1", "-q", "--", "sh", "-c", script,
		      (char *)NULL);
		_exit(127);
	}
	for (int k = 0; k < 1000 && !sleepers(a); k++)
		usleep(10 * 1000);
	DIR *d = opendir(tmp);
	cr_assert_not_null(d);
	struct dirent *e;
	first[0] = 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "denytrace-soak.", 15))
			snprintf(first, sizeof(first), "%s", e->d_name);
	closedir(d);
	cr_expect(first[0], "soak's directory is not under $TMPDIR");
	kill(pid, SIGHUP);
	int st;
	waitpid(pid, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d", st);
	d = opendir(tmp);
	cr_assert_not_null(d);
	int left = 0;
	while ((e = readdir(d)))
		left += e->d_name[0] != '.';
	closedir(d);
	cr_expect_eq(left, 0, "soak left files in $TMPDIR");
}

/* ---- many machines: --shard, --merge, host identity ------------------- */

/* Prints what python code prints (with json imported), for sharded soaks'
 * summaries: the checks read structure. */
static void py_eval(const char *code, char *out, size_t cap)
{
	char full[8192];
	snprintf(full, sizeof(full), "import json, sys\n%s", code);
	const char *argv[] = {"/usr/bin/python3", "-c", full, NULL};
	cr_assert_eq(dtt_system(out, cap, argv, NULL), 0, "python: %s", out);
	out[strcspn(out, "\n")] = 0;
}

/* Can this test give a process a UTS namespace (hostname) of its own? */
static int have_uts_namespaces(void)
{
	const char *argv[] = {"/usr/bin/unshare", "-u", "/bin/true", NULL};
	return dtt_system(NULL, 0, argv, NULL) == 0;
}

/* Runs `denytrace soak ARGS...` in a UTS namespace of its own whose
 * hostname is host, as one machine of a CI matrix; returns its status. */
static int soak_on_host(const char *host, const char *const *args, const char *const *env,
                        char *out, size_t cap)
{
	static char cli[1024];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *argv[96] = {"/usr/bin/unshare",
	                        "-u",
	                        "/bin/sh",
	                        "-c",
	                        "hostname \"$0\" && exec \"$@\"",
	                        host,
	                        cli,
	                        "soak"};
	size_t n = 8;
	for (size_t i = 0; args[i] && n < 95; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return dtt_system(out, cap, argv, env);
}

/* Writes the board worker, makes its directory; the --deny rule that makes
 * it flaky, into rule. */
static void board_worker(char *py, char *db, char *rule, size_t cap)
{
	snprintf(py, cap, "%s/worker.py", dtt_tmpdir());
	snprintf(db, cap, "%s/board/kanban.db", dtt_tmpdir());
	snprintf(rule, cap, "%s/board/*.db-journal,op=create,errno=EROFS,p=0.3", dtt_tmpdir());
	FILE *f = fopen(py, "w");
	cr_assert_not_null(f);
	fputs(worker, f);
	fclose(f);
	char dir[1100];
	snprintf(dir, sizeof(dir), "%s/board", dtt_tmpdir());
	mkdir(dir, 0755);
}

/* The board as every machine starts with it: the table made, so that no
 * run depends on which ran first (each host of a matrix has its own). */
static void fresh_board(const char *db)
{
	char code[2048];
	snprintf(code, sizeof(code),
	         "import os, sqlite3\n"
	         "if os.path.exists('%s'): os.unlink('%s')\n"
	         "sqlite3.connect('%s').execute('CREATE TABLE t (x)')",
	         db, db, db);
	const char *argv[] = {"/usr/bin/python3", "-c", code, NULL};
	char out[4096];
	cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 0, "%s", out);
}

static void tmp_path(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", dtt_tmpdir(), name);
}

Test(soak, shards_on_three_hosts_add_up_to_the_soak_one_machine_runs_with_the_same_seed,
     .timeout = 180)
{
	if (!have_uts_namespaces())
		cr_skip_test("no UTS namespaces here (unshare -u failed)");
	char py[1024], db[1024], rule[1024], out[65536], v[8192];
	board_worker(py, db, rule, sizeof(py));
	char whole[1024], whole_opt[1100];
	tmp_path(whole, sizeof(whole), "whole.json");
	snprintf(whole_opt, sizeof(whole_opt), "--json=%s", whole);
	const char *one[] = {"--runs",  "9",      "--seed", "77", "--jobs",           "1",
	                     whole_opt, "--deny", rule,     "--", "/usr/bin/python3", py,
	                     db,        NULL};
	fresh_board(db);
	int st = soak_on_host("one-machine", one, NULL, out, sizeof(out));
	cr_assert(st == 0 || st == 1, "unsharded soak: %d: %s", st, out);

	char json[3][1100], junit[3][1100], keep[3][1100];
	for (int k = 0; k < 3; k++) {
		char host[32], shard[16], name[64];
		snprintf(host, sizeof(host), "shard-%d", k + 1);
		snprintf(shard, sizeof(shard), "%d/3", k + 1);
		snprintf(name, sizeof(name), "s%d.json", k + 1);
		tmp_path(v, sizeof(v), name);
		snprintf(json[k], sizeof(json[k]), "--json=%s", v);
		snprintf(name, sizeof(name), "s%d.xml", k + 1);
		tmp_path(junit[k], sizeof(junit[k]), name);
		snprintf(name, sizeof(name), "keep%d", k + 1);
		tmp_path(keep[k], sizeof(keep[k]), name);
		const char *args[] = {
		    "--runs", "9",     "--seed",           "77",     "--shard", shard,   "--jobs",
		    "1",      json[k], "--junit",          junit[k], "--keep",  keep[k], "--deny",
		    rule,     "--",    "/usr/bin/python3", py,       db,        NULL};
		fresh_board(db);
		st = soak_on_host(host, args, NULL, out, sizeof(out));
		cr_assert(st == 0 || st == 1, "shard %s: %d: %s", shard, st, out);
	}
	char merged[1024], mjunit[1024], cli[1024], s1[1024], s2[1024], s3[1024];
	tmp_path(merged, sizeof(merged), "merged.json");
	tmp_path(mjunit, sizeof(mjunit), "merged.xml");
	tmp_path(s1, sizeof(s1), "s1.json");
	tmp_path(s2, sizeof(s2), "s2.json");
	tmp_path(s3, sizeof(s3), "s3.json");
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *merge[] = {cli,       "soak", "--merge", "--json", "-o", merged,
	                       "--junit", mjunit, s3,        s1,       s2,   NULL};
	st = dtt_system(out, sizeof(out), merge, NULL);

	char code[6000];
	snprintf(code, sizeof(code),
	         "a = json.load(open('%s')); b = json.load(open('%s'))\n"
	         "fails = lambda d: sorted(r['index'] for r in d['results'] if r['failed'])\n"
	         "idx = sorted(r['index'] for r in b['results'])\n"
	         "seeds = {r['index']: r['seed'] for r in a['results']} == "
	         "{r['index']: r['seed'] for r in b['results']}\n"
	         "sep = lambda d: sorted((s['path'], s['errno'], s['failing_runs'], "
	         "s['passing_runs']) for s in d['separating_refusals'])\n"
	         "print((a['runs'], a['failures']) == (b['runs'], b['failures']), "
	         "fails(a) == fails(b), idx == list(range(1, 10)), seeds, sep(a) == sep(b), "
	         "(a['flake_rate'], a['ci_low'], a['ci_high']) == "
	         "(b['flake_rate'], b['ci_low'], b['ci_high']), 0 < b['failures'] < 9)",
	         whole, merged);
	py_eval(code, v, sizeof(v));
	cr_expect_str_eq(v, "True True True True True True True");
	cr_expect_eq(st, DT_EXIT_FOUND, "merge exits 1 when a run failed: %s", out);

	/* each run ran on the host of its shard, and the hosts say who they are */
	snprintf(code, sizeof(code),
	         "b = json.load(open('%s'))\n"
	         "boot = open('/proc/sys/kernel/random/boot_id').read().strip()\n"
	         "raw = open('/etc/machine-id').read().strip()\n"
	         "h = b['hosts']\n"
	         "print(sorted(x['hostname'] for x in h), "
	         "all(h[r['host']]['shard'] == (r['index'] - 1) %% 3 + 1 for r in b['results']), "
	         "all(x['boot_id'] == boot for x in h), "
	         "all(len(x['machine_id_hash']) == 64 and raw not in x['machine_id_hash'] "
	         "for x in h), b['missing_shards'])",
	         merged);
	py_eval(code, v, sizeof(v));
	cr_expect_str_eq(v, "['shard-1', 'shard-2', 'shard-3'] True True True None");
	snprintf(code, sizeof(code), "print(json.load(open('%s'))['host']['hostname'])", s2);
	py_eval(code, v, sizeof(v));
	cr_expect_str_eq(v, "shard-2", "a shard's own summary names its host");

	/* one JUnit file: valid, a testsuite per host, testcase names unique */
	char xsd[1024];
	junit_xsd(xsd, sizeof(xsd));
	const char *lint[] = {"/usr/bin/xmllint", "--noout", "--schema", xsd, mjunit, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), lint, NULL), 0, "%s", out);
	snprintf(code, sizeof(code),
	         "import xml.etree.ElementTree as E\n"
	         "t = E.parse('%s').getroot()\n"
	         "names = [c.get('name') for c in t.iter('testcase')]\n"
	         "print(len(names), len(set(names)), sorted(s.get('hostname') for s in "
	         "t.iter('testsuite')), sorted(p.get('name') for p in t.iter('property') if "
	         "p.get('name').startswith('host.'))[:2])",
	         mjunit);
	py_eval(code, v, sizeof(v));
	cr_expect_str_eq(v, "9 9 ['shard-1', 'shard-2', 'shard-3'] ['host.boot_id', "
	                    "'host.boot_id']");
}

/* Three quick shards of `sh -c CMD` (runs 1..runs) on hosts shard-1..3,
 * summaries in TMP/NAME-K.json; which is a bit set of the shards to run. */
static void quick_shards(const char *name, const char *cmd, const char *runs, const char *seed,
                         int which)
{
	char out[65536];
	for (int k = 0; k < 3; k++) {
		if (!(which & 1 << k))
			continue;
		char host[32], shard[16], file[128], json[1100], path[1024];
		snprintf(host, sizeof(host), "shard-%d", k + 1);
		snprintf(shard, sizeof(shard), "%d/3", k + 1);
		snprintf(file, sizeof(file), "%s-%d.json", name, k + 1);
		tmp_path(path, sizeof(path), file);
		snprintf(json, sizeof(json), "--json=%s", path);
		const char *args[] = {"--runs", runs,      "--seed", seed, "--shard",
		                      shard,    "--jobs",  "2",      json, "-q",
		                      "--",     "/bin/sh", "-c",     cmd,  NULL};
		int st = soak_on_host(host, args, NULL, out, sizeof(out));
		cr_assert(st == 0 || st == 1, "%s shard %s: %d: %s", name, shard, st, out);
	}
}

/* denytrace soak --merge FILES... (options first); its status. */
static int merge_of(char *out, size_t cap, const char *opt, const char *const *names)
{
	static char paths[8][1024], cli[1024];
	const char *argv[16] = {cli, "soak", "--merge"};
	size_t n = 3;
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	if (opt)
		argv[n++] = opt;
	for (size_t i = 0; names[i] && i < 8; i++) {
		tmp_path(paths[i], sizeof(paths[i]), names[i]);
		argv[n++] = paths[i];
	}
	argv[n] = NULL;
	return dtt_system(out, cap, argv, NULL);
}

Test(soak, a_shard_missing_from_the_merge_is_named_with_its_runs_not_dropped_silently)
{
	if (!have_uts_namespaces())
		cr_skip_test("no UTS namespaces here (unshare -u failed)");
	char out[65536], v[1024];
	quick_shards("m", "true", "6", "3", 1 | 4);
	const char *names[] = {"m-1.json", "m-3.json", NULL};
	cr_expect_eq(merge_of(out, sizeof(out), NULL, names), DT_EXIT_INCOMPLETE, "%s", out);
	cr_expect(strstr(out, "shard 2/3 (runs 2, 5)"), "%s", out);
	char merged[1024], opt[1100];
	tmp_path(merged, sizeof(merged), "m.json");
	snprintf(opt, sizeof(opt), "--json=%s", merged);
	cr_expect_eq(merge_of(out, sizeof(out), opt, names), DT_EXIT_INCOMPLETE, "%s", out);
	char code[2048];
	snprintf(code, sizeof(code),
	         "d = json.load(open('%s')); print(d['runs'], d['missing_shards'])", merged);
	py_eval(code, v, sizeof(v));
	cr_expect_str_eq(v, "4 shard 2/3 (runs 2, 5)");
}

Test(soak, a_summary_of_another_soak_is_refused_saying_what_differs)
{
	if (!have_uts_namespaces())
		cr_skip_test("no UTS namespaces here (unshare -u failed)");
	char out[65536];
	quick_shards("a", "true", "6", "3", 1 | 2);
	quick_shards("seed", "true", "6", "4", 4);
	quick_shards("cmd", "exit 0", "6", "3", 4);
	quick_shards("runs", "true", "9", "3", 4);
	const char *seed[] = {"a-1.json", "a-2.json", "seed-3.json", NULL};
	cr_expect_eq(merge_of(out, sizeof(out), NULL, seed), DT_EXIT_MISMATCH, "%s", out);
	cr_expect(strstr(out, "seed-3.json is not a shard of the soak") &&
	              strstr(out, "its --seed is 4, not 3"),
	          "%s", out);
	const char *cmd[] = {"a-1.json", "a-2.json", "cmd-3.json", NULL};
	cr_expect_eq(merge_of(out, sizeof(out), NULL, cmd), DT_EXIT_MISMATCH, "%s", out);
	cr_expect(strstr(out, "its command is '/bin/sh -c exit 0', not '/bin/sh -c true'"), "%s",
	          out);
	const char *runs[] = {"a-1.json", "runs-3.json", NULL};
	cr_expect_eq(merge_of(out, sizeof(out), NULL, runs), DT_EXIT_MISMATCH, "%s", out);
	cr_expect(strstr(out, "its --runs is 9, not 6"), "%s", out);
	const char *twice[] = {"a-1.json", "a-2.json", "a-1.json", NULL};
	cr_expect_eq(merge_of(out, sizeof(out), NULL, twice), DT_EXIT_MISMATCH, "%s", out);
	cr_expect(strstr(out, "shard 1/3 is given twice"), "%s", out);
	char other[1024];
	tmp_path(other, sizeof(other), "other.json");
	FILE *f = fopen(other, "w");
	fputs("{\"runs\": 3, \"failures\": 0}\n", f);
	fclose(f);
	const char *notone[] = {"a-1.json", "other.json", NULL};
	cr_expect_eq(merge_of(out, sizeof(out), NULL, notone), DT_EXIT_BADINPUT, "%s", out);
	cr_expect(strstr(out, "other.json is not a soak summary"), "%s", out);
	const char *gone[] = {"a-1.json", "no-such.json", NULL};
	cr_expect_eq(merge_of(out, sizeof(out), NULL, gone), DT_EXIT_NOINPUT, "%s", out);
	cr_expect(strstr(out, "no-such.json"), "%s", out);
}

Test(soak, failures_that_gather_on_one_host_beyond_chance_are_noted)
{
	if (!have_uts_namespaces())
		cr_skip_test("no UTS namespaces here (unshare -u failed)");
	char out[65536], v[1024];
	/* the same command everywhere; only the host called shard-2 fails it */
	quick_shards("g", "test \"$(hostname)\" != shard-2", "24", "1", 7);
	const char *names[] = {"g-1.json", "g-2.json", "g-3.json", NULL};
	cr_expect_eq(merge_of(out, sizeof(out), NULL, names), DT_EXIT_FOUND, "%s", out);
	cr_expect(strstr(out, "Failures gather on shard-2 (shard 2/3): 8 of its 8 runs failed"),
	          "%s", out);
	char merged[1024], opt[1100], code[1024];
	tmp_path(merged, sizeof(merged), "g.json");
	snprintf(opt, sizeof(opt), "--json=%s", merged);
	merge_of(out, sizeof(out), opt, names);
	snprintf(code, sizeof(code),
	         "d = json.load(open('%s')); g = d['failures_gather_on']\n"
	         "print(d['hosts'][g['host']]['hostname'], g['p_value'] < 0.01)",
	         merged);
	py_eval(code, v, sizeof(v));
	cr_expect_str_eq(v, "shard-2 True");
}

Test(soak, a_shard_needs_a_seed_and_shards_takes_its_number_from_job_completion_index)
{
	char cli[1024], out[65536], v[1024], json[1024], opt[1100];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *noseed[] = {cli, "soak", "--shard", "1/2", "--", "true", NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), noseed, NULL), 125, "%s", out);
	cr_expect(strstr(out, "--shard needs --seed"), "%s", out);
	const char *bad[] = {cli, "soak", "--shard", "3/2", "--seed", "1", "--", "true", NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), bad, NULL), 125, "%s", out);
	cr_expect(strstr(out, "--shard takes K/N"), "%s", out);
	tmp_path(json, sizeof(json), "k8s.json");
	snprintf(opt, sizeof(opt), "--json=%s", json);
	const char *k8s[] = {cli, "soak", "--shards", "2",  "--seed", "9", "--runs",
	                     "5", "-q",   opt,        "--", "true",   NULL};
	const char *no_index[] = {"JOB_COMPLETION_INDEX=", NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), k8s, no_index), 125, "%s", out);
	cr_expect(strstr(out, "$JOB_COMPLETION_INDEX"), "%s", out);
	const char *index1[] = {"JOB_COMPLETION_INDEX=1", NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), k8s, index1), 0, "%s", out);
	char code[1024];
	snprintf(code, sizeof(code),
	         "d = json.load(open('%s')); print(d['shard'], sorted((r['index'], r['seed']) for "
	         "r in d['results']))",
	         json);
	py_eval(code, v, sizeof(v));
	cr_expect_str_eq(v, "{'index': 2, 'count': 2} [(2, 10), (4, 12)]");
}

/* docs/soak-github-actions.yml and docs/soak-k8s-indexed-job.yaml, run as
 * their engines would (tests/integration/soak_examples.py: YAML parsed,
 * every shard in a UTS namespace of its own): the merge equals the soak
 * one machine runs with the same seed. */
static void run_docs_example(const char *engine)
{
	if (!have_uts_namespaces())
		cr_skip_test("no UTS namespaces here (unshare -u failed)");
	const char *check[] = {"/usr/bin/python3", "-c", "import yaml", NULL};
	if (dtt_system(NULL, 0, check, NULL) != 0)
		cr_skip_test("python3-yaml is missing (scripts/install-deps.sh installs it)");
	char here[1024], script[1100], docs[1100], py[1024], work[1024], out[65536], v[4096];
	const char *slash = strrchr(__FILE__, '/');
	snprintf(here, sizeof(here), "%.*s", slash ? (int)(slash - __FILE__) : 1,
	         slash ? __FILE__ : ".");
	snprintf(script, sizeof(script), "%s/soak_examples.py", here);
	snprintf(docs, sizeof(docs), "%s/../../docs", here);
	snprintf(py, sizeof(py), "%s/worker.py", dtt_tmpdir());
	snprintf(work, sizeof(work), "%s/examples", dtt_tmpdir());
	FILE *f = fopen(py, "w");
	fputs(worker, f);
	fclose(f);
	cr_assert_eq(mkdir(work, 0700), 0);
	const char *argv[] = {
	    "/usr/bin/python3", script, dtt_build(), docs, work, py, engine, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 0, "%s", out);
	char result[1024], code[4096];
	snprintf(result, sizeof(result), "%s/result.json", dtt_tmpdir());
	f = fopen(result, "w");
	fputs(out, f);
	fclose(f);
	snprintf(code, sizeof(code),
	         "r = json.load(open('%s'))\n"
	         "print(r['same_runs'], r['same_failing_runs'], r['same_separating_refusals'], "
	         "r['every_index_once'], r['hosts'] == r['expected_hosts'], len(r['hosts']), "
	         "r['runs'], r['merge_status'] == (1 if r['failures'] else 0), "
	         "r.get('rings_found', True), r.get('step_summary_has_title', True))",
	         result);
	py_eval(code, v, sizeof(v));
	cr_expect_str_eq(v, "True True True True True 4 10 True True True", "%s: %s", engine, out);
}

Test(soak, the_docs_ci_matrix_example_runs_and_adds_up_to_one_machines_soak)
{
	run_docs_example("github");
}

Test(soak, the_docs_indexed_job_example_runs_and_adds_up_to_one_machines_soak)
{
	run_docs_example("kubernetes");
}

/* Two hosts (UTS namespaces) whose traced processes have the same pids
 * (pid namespaces of their own): one report over both rings keeps them
 * apart and names each one's host. */
Test(soak, rings_of_two_hosts_whose_processes_share_pids_report_distinct_processes)
{
	if (!have_uts_namespaces())
		cr_skip_test("no UTS namespaces here (unshare -u failed)");
	char cli[1024], out[65536], v[4096], script[4096], ring[2][1024], target[1024];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	tmp_path(target, sizeof(target), "board.db");
	static const char *const hosts[] = {"alpha", "beta"};
	for (int h = 0; h < 2; h++) {
		char name[32];
		snprintf(name, sizeof(name), "%s.ring", hosts[h]);
		tmp_path(ring[h], sizeof(ring[h]), name);
		snprintf(script, sizeof(script),
		         "hostname %s && exec '%s' run -q -o '%s' --deny '%s,errno=EACCES' -- "
		         "/usr/bin/python3 -c \"import sys\ntry: open(sys.argv[1], 'w')\nexcept "
		         "OSError: pass\" '%s'",
		         hosts[h], cli, ring[h], target, target);
		const char *argv[] = {"/usr/bin/unshare", "-u", "-p",   "-f", "--mount-proc",
		                      "/bin/sh",          "-c", script, NULL};
		cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 0, "%s", out);
	}
	char json[1024];
	tmp_path(json, sizeof(json), "two-hosts.json");
	snprintf(script, sizeof(script), "'%s' report --format json '%s' '%s' > '%s'", cli, ring[0],
	         ring[1], json);
	const char *rep[] = {"/bin/sh", "-c", script, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), rep, NULL), 0, "%s", out);
	char code[2048];
	snprintf(code, sizeof(code),
	         "d = json.load(open('%s')); p = d['processes']\n"
	         "print(len(p), len(set(x['pid'] for x in p)), sorted(x['hostname'] for x in p), "
	         "d['summary']['processes'])",
	         json);
	py_eval(code, v, sizeof(v));
	cr_expect_str_eq(v, "2 1 ['alpha', 'beta'] 2", "one pid, two processes, two hosts");
	const char *text[] = {cli, "report", ring[0], ring[1], NULL};
	dtt_system(out, sizeof(out), text, NULL);
	cr_expect(strstr(out, " on alpha and others;"), "%s", out);
}

/* Issue 24's "across runs": a board directory another step flips to 0555
 * before every third run; the worker (uid 65534, the directory's owner)
 * cannot create its journal then. The summary names the recorded fact
 * that separates failing runs from passing ones, not only the refusal,
 * and so does the merge of two shards. */
Test(soak, the_summary_names_the_fact_that_separates_failing_runs_from_passing_ones, .timeout = 180)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to run the worker as another user");
	char py[1024], db[1024], rule[1024], out[65536], v[4096], script[4096], board[1024];
	board_worker(py, db, rule, sizeof(py));
	fresh_board(db);
	tmp_path(board, sizeof(board), "board");
	/* the worker runs as 65534: it must reach its script and board */
	cr_assert_eq(chmod(dtt_tmpdir(), 0711), 0);
	cr_assert_eq(chmod(py, 0644), 0);
	cr_assert_eq(chown(board, 65534, 65534), 0);
	cr_assert_eq(chown(db, 65534, 65534), 0);
	snprintf(script, sizeof(script),
	         "n=$(cat counter 2>/dev/null || echo 0); echo $((n + 1)) > counter; "
	         "if [ $((n %% 3)) = 0 ]; then chmod 555 '%s'; else chmod 755 '%s'; fi; "
	         "exec setpriv --reuid 65534 --regid 65534 --clear-groups /usr/bin/python3 '%s' "
	         "'%s'",
	         board, board, py, db);
	char cli[1024], json[1024], opt[1100];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	tmp_path(json, sizeof(json), "facts.json");
	snprintf(opt, sizeof(opt), "--json=%s", json);
	char cd[1200];
	snprintf(cd, sizeof(cd), "cd '%s' && exec \"$@\"", dtt_tmpdir());
	const char *shell[] = {"/bin/sh", "-c",      cd,       "sh",   cli, "soak",
	                       "--runs",  "6",       "--seed", "1",    opt, "-q",
	                       "--",      "/bin/sh", "-c",     script, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), shell, NULL), 1, "%s", out);
	cr_expect(strstr(out, "What differed"), "%s", out);
	char code[2048];
	snprintf(code, sizeof(code),
	         "d = json.load(open('%s'))\n"
	         "print(d['failures'], [(f['subject'], f['what'], f['value'], f['failing_runs'], "
	         "f['passing_runs'], f['passing_values']) for f in d['separating_facts']])",
	         json);
	py_eval(code, v, sizeof(v));
	char want[2048];
	snprintf(want, sizeof(want), "2 [('%s', 'mode', '0555', 2, 0, '0755')]", board);
	cr_expect_str_eq(v, want);

	/* two shards of the same soak: the merge names the same fact */
	char s1[1024], s2[1024], o1[1100], o2[1100];
	tmp_path(s1, sizeof(s1), "f1.json");
	tmp_path(s2, sizeof(s2), "f2.json");
	snprintf(o1, sizeof(o1), "--json=%s", s1);
	snprintf(o2, sizeof(o2), "--json=%s", s2);
	for (int k = 0; k < 2; k++) {
		const char *sh[] = {"/bin/sh",   "-c",   cd,        "sh",
		                    cli,         "soak", "--runs",  "6",
		                    "--seed",    "1",    "--shard", k ? "2/2" : "1/2",
		                    k ? o2 : o1, "-q",   "--",      "/bin/sh",
		                    "-c",        script, NULL};
		int st = dtt_system(out, sizeof(out), sh, NULL);
		cr_assert(st == 0 || st == 1, "%s", out);
	}
	const char *merge[] = {cli, "soak", "--merge", s1, s2, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), merge, NULL), 1, "%s", out);
	snprintf(want, sizeof(want), "  %s mode 0555: in ", board);
	cr_expect(strstr(out, want) && strstr(out, "no passing run (passing runs: 0755)"), "%s",
	          out);
}
