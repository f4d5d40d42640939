/* SPDX-License-Identifier: MIT */
/* denytrace demo: both phases run to the end, in bounded time; each phase's
 * report.json names the board directory HERMES_KANBAN_DB implies and the
 * cause the way the phase was produced implies; phase 1 is intermittent;
 * the fallbacks work; nothing is left outside the output directory; bad
 * options are refused. */
#include <criterion/criterion.h>
#include <dirent.h>
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

TestSuite(demo, .fini = teardown, .timeout = 120);

static char out[1 << 17];

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	static char buf[4][1 << 20];
	static int k;
	char *b = buf[k++ % 4];
	size_t n = fread(b, 1, sizeof(buf[0]) - 1, f);
	b[n] = 0;
	fclose(f);
	return b;
}

/* Every value of "key": "..." in a pretty-printed report, one at a time:
 * returns the value of the next occurrence after *pos, or NULL. */
static const char *next_value(const char *json, const char *key, const char **pos, char *val,
                              size_t cap)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	const char *at = strstr(*pos ? *pos : json, pat);
	if (!at)
		return NULL;
	at += strlen(pat);
	size_t n = strcspn(at, "\"");
	snprintf(val, cap, "%.*s", (int)(n < cap ? n : cap - 1), at);
	*pos = at + n;
	return val;
}

/* The report of a phase: every refusal group has the expected root and
 * cause; returns how many groups, and how many are marked intermittent. */
static size_t check_report(const char *dir, int phase, const char *cause, size_t *intermittent)
{
	char path[PATH_MAX], board[PATH_MAX], val[PATH_MAX];
	snprintf(path, sizeof(path), "%s/phase%d/report.json", dir, phase);
	snprintf(board, sizeof(board), "%s/phase%d/hermes/kanban", dir, phase);
	const char *json = slurp(path);
	cr_assert_not_null(json, "no %s", path);
	size_t groups = 0;
	const char *pos = NULL;
	while (next_value(json, "cause", &pos, val, sizeof(val))) {
		groups++;
		cr_expect_str_eq(val, cause, "phase %d: a refusal has cause %s, not %s", phase, val,
		                 cause);
	}
	pos = NULL;
	size_t roots = 0;
	while (next_value(json, "expected_root", &pos, val, sizeof(val))) {
		roots++;
		cr_expect_str_eq(val, board,
		                 "phase %d: the expected root is not the board directory", phase);
	}
	cr_expect_eq(roots, groups, "phase %d: a refusal has no expected root", phase);
	pos = NULL;
	*intermittent = 0;
	while (next_value(json, "intermittent", &pos, val, sizeof(val)))
		++*intermittent;
	/* the board must be refused in every phase: the wal at least */
	cr_expect(strstr(json, "/kanban.db-wal\""), "phase %d: no refusal of kanban.db-wal", phase);
	return groups;
}

/* The findings of a phase's report.json, as Python's json module reads
 * them: how many, how many groups the first holds, how many denial groups
 * the report has, and whether the first is intermittent. */
struct demo_findings {
	int n, groups0, denials, intermittent0;
	char groups[512]; /* "op:file" of each denial group, space-separated */
};

static struct demo_findings phase_findings(const char *dir, int phase)
{
	char path[PATH_MAX], res[256];
	snprintf(path, sizeof(path), "%s/phase%d/report.json", dir, phase);
	const char *argv[] = {"/usr/bin/python3", "-c",
	                      "import json, sys\n"
	                      "r = json.load(open(sys.argv[1]))\n"
	                      "f = r['findings']\n"
	                      "print(len(f), len(f[0]['groups']) if f else -1, len(r['denials']),"
	                      " int(bool(f and f[0]['intermittent'])),"
	                      " ' '.join('%s:%s' % (d['op'], (d['abspath'] or '?').split('/')[-1])"
	                      " for d in r['denials']))\n",
	                      path, NULL};
	int st = dtt_system(res, sizeof(res), argv, NULL);
	cr_assert_eq(st, 0, "python3 could not read %s: %s", path, res);
	struct demo_findings f;
	int used = 0;
	cr_assert_eq(
	    sscanf(res, "%d %d %d %d %n", &f.n, &f.groups0, &f.denials, &f.intermittent0, &used), 4,
	    "%s", res);
	snprintf(f.groups, sizeof(f.groups), "%s", res + used);
	return f;
}

/* Phase 2's denial groups ("op:file" each) are the board's: the opens of
 * the database and its -wal and -shm, as root their fchowns, and at most
 * the fchmod of a side file (see the caller); nothing else. A call made
 * from two lines of the worker is two groups (they differ by Python line). */
static void expect_board_groups(const char *groups, int root)
{
	static const char *const need[] = {"open64:kanban.db", "open64:kanban.db-wal",
	                                   "open64:kanban.db-shm", "fchown:kanban.db-wal",
	                                   "fchown:kanban.db-shm"};
	static const char *const may[] = {"fchmod:kanban.db-wal", "fchmod:kanban.db-shm"};
	size_t nneed = root ? 5 : 3, seen = 0;
	int have[5] = {0};
	char copy[512], *save = NULL;
	snprintf(copy, sizeof(copy), "%s", groups);
	for (char *g = strtok_r(copy, " \n", &save); g; g = strtok_r(NULL, " \n", &save)) {
		int known = 0;
		for (size_t i = 0; i < nneed; i++)
			if (!strcmp(g, need[i])) {
				known = 1;
				seen += !have[i]++;
			}
		for (size_t i = 0; i < 2; i++)
			known |= !strcmp(g, may[i]);
		cr_expect(known, "phase 2: a group %s, not the board's: %s", g, groups);
	}
	cr_expect_eq(seen, nneed, "phase 2: %zu of the board's %zu groups: %s", seen, nneed,
	             groups);
}

/* "worker: F of N writes failed" of phase (the first or second such line). */
static void worker_count(const char *text, int nth, int *failed, int *total)
{
	*failed = *total = -1;
	const char *p = text;
	for (int i = 0; i < nth && p; i++) {
		p = strstr(p, "worker: ");
		while (p && sscanf(p, "worker: %d of %d writes failed", failed, total) != 2)
			p = strstr(p + 1, "worker: ");
		if (p)
			p++;
	}
}

static size_t entries(const char *dir, char *first, size_t cap)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	struct dirent *e;
	size_t n = 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			if (!n)
				snprintf(first, cap, "%s", e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

Test(demo, runs_both_phases_and_each_report_names_the_board_root_and_its_cause)
{
	char tmp[PATH_MAX], env_tmp[PATH_MAX + 8], name[256], dir[PATH_MAX];
	/* open to other users, as /tmp is: as root, phase 1 runs the worker as
	 * nobody, who must reach the board */
	cr_assert_eq(chmod(dtt_tmpdir(), 0755), 0);
	snprintf(tmp, sizeof(tmp), "%s/tmp", dtt_tmpdir());
	cr_assert_eq(mkdir(tmp, 0755), 0);
	snprintf(env_tmp, sizeof(env_tmp), "TMPDIR=%s", tmp);
	const char *argv[] = {dtt_denytrace(), "demo", "--writes", "16", NULL};
	const char *env[] = {env_tmp, NULL};
	int st = dtt_system(out, sizeof(out), argv, env);
	cr_assert_eq(st, 0, "demo exit %d:\n%s", st, out);

	/* one directory under TMPDIR, the one it printed, and nothing else */
	cr_assert_eq(entries(tmp, name, sizeof(name)), 1, "TMPDIR holds more than the output");
	cr_expect_eq(strncmp(name, "denytrace-demo.", 15), 0, "%s", name);
	snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
	char line[PATH_MAX + 32];
	snprintf(line, sizeof(line), "demo output: %s", dir);
	cr_expect(strstr(out, line), "the output directory is not printed:\n%s", out);

	/* phase 1: as root the real directory refusal, else the emulation */
	int root = geteuid() == 0;
	cr_expect(strstr(out, root ? "(uid-switch)" : "(deny-emulation)"), "%s", out);
	int failed, total;
	worker_count(out, 1, &failed, &total);
	cr_expect_eq(total, 16, "%s", out);
	cr_expect(failed > 0 && failed < total, "phase 1 is not intermittent: %d of %d failed\n%s",
	          failed, total, out);
	size_t inter;
	size_t groups = check_report(dir, 1, root ? "file-permissions" : "injected", &inter);
	cr_expect_gt(groups, 0, "phase 1 reported no refusal");
	cr_expect_gt(inter, 0, "phase 1: no refusal is marked intermittent");
	/* one problem (the board directory's mode bits, or the one rule), and
	 * it is intermittent */
	struct demo_findings f = phase_findings(dir, 1);
	cr_expect_eq(f.n, 1, "phase 1: %d findings, not 1", f.n);
	cr_expect_eq(f.groups0, f.denials, "phase 1: the finding holds %d of %d groups", f.groups0,
	             f.denials);
	cr_expect(f.intermittent0, "phase 1: the finding is not marked intermittent");

	/* phase 2: a real sandbox when there is one; every write fails */
	int sandbox = dtt_have_bwrap() || dtt_have_landlock();
	worker_count(out, 2, &failed, &total);
	cr_expect_eq(failed, 16, "phase 2: %d of %d failed\n%s", failed, total, out);
	groups = check_report(dir, 2, sandbox ? "root-not-granted" : "injected", &inter);
	cr_expect_gt(groups, 0, "phase 2 reported no refusal");
	cr_expect_eq(inter, 0, "phase 2 claims intermittency");
	/* the database, -wal and -shm by open and fchown: five groups, one
	 * ungranted board directory, one problem, and the report says so first */
	f = phase_findings(dir, 2);
	cr_expect_eq(f.n, 1, "phase 2: %d findings, not 1", f.n);
	cr_expect_eq(f.groups0, f.denials, "phase 2: the finding holds %d of %d groups", f.groups0,
	             f.denials);
	/* SQLite fchowns its new files only as root (os_unix.c, robustFchown):
	 * without root, the three opens alone. One more group is SQLite's own
	 * race, not noise: robust_open fchmods a side file it opened that is
	 * empty and of another mode, which the dispatcher's new -wal is for the
	 * moment between its creation and the dispatcher's own fchmod; the
	 * read-only bind refuses that too. */
	if (sandbox)
		expect_board_groups(f.groups, geteuid() == 0);
	cr_expect(strstr(out, "phase2/workspace/denytrace.ring\n1 problem: "),
	          "phase 2's report does not open with \"1 problem\":\n%s", out);

	/* step 3: fix --verify prints the bind of the board directory and runs
	 * the worker again with it: the board's refusals are gone */
	if (dtt_have_bwrap()) {
		char bind[2 * PATH_MAX + 16];
		snprintf(bind, sizeof(bind),
		         "--bind %s/phase2/hermes/kanban %s/phase2/hermes/kanban", dir, dir);
		cr_expect(strstr(out, bind), "fix does not print %s:\n%s", bind, out);
		const char *v = strstr(out, "verified: fixed: 0 refusals (was ");
		cr_expect(v && atoi(v + 33) > 0,
		          "fix --verify did not report the refusals gone:\n%s", out);
		cr_expect(strstr(out, "worker: 0 of 16 writes failed"),
		          "the worker run with the fix still failed:\n%s", out);
	} else {
		cr_expect(strstr(out, "verified: cannot verify"), "%s", out);
	}

	/* the dispatcher closed the board last: no side files left, and the
	 * board is still in WAL mode (the worker's fallback did not switch it) */
	char p[PATH_MAX + 32];
	for (int ph = 1; ph <= 2; ph++) {
		snprintf(p, sizeof(p), "%s/phase%d/hermes/kanban/kanban.db-wal", dir, ph);
		cr_expect_neq(access(p, F_OK), 0, "%s left behind", p);
		snprintf(p, sizeof(p), "%s/phase%d/report.md", dir, ph);
		cr_expect_eq(access(p, R_OK), 0, "no %s", p);
	}
}

Test(demo, the_emulations_work_even_as_root_and_json_summarises_them)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/emu", dtt_tmpdir());
	const char *argv[] = {dtt_denytrace(), "demo", "--emulate", "--json", "--writes", "12",
	                      "--out",         dir,    NULL};
	int st = dtt_system(out, sizeof(out), argv, NULL);
	cr_assert_eq(st, 0, "demo exit %d:\n%s", st, out);
	cr_expect_eq(out[0], '{', "--json printed more than JSON:\n%s", out);
	struct dt_jv *doc = dtt_json(out);
	cr_expect_str_eq(dtt_jstr(doc, "phases.0.mode"), "deny-emulation", "%s", out);
	cr_expect_str_eq(dtt_jstr(doc, "phases.1.mode"), "deny-sandbox", "%s", out);
	const char *rule = dtt_jstr(doc, "phases.0.deny_rule");
	cr_expect(rule && strstr(rule, ",op=new+unlink"), "phase 1 rule is not op=new:\n%s", out);
	int failed[2] = {-1, -1};
	for (int k = 0; k < 2; k++) {
		const struct dt_jv *n = dtt_jget(doc, k ? "phases.1.failed" : "phases.0.failed");
		if (n && n->type == DT_JV_NUM)
			failed[k] = atoi(n->text);
	}
	dt_jv_free(doc);
	cr_expect(failed[0] > 0 && failed[0] < 12, "phase 1 is not intermittent: %d of 12 failed",
	          failed[0]);
	cr_expect_eq(failed[1], 12, "phase 2: %d of 12 failed", failed[1]);
	size_t inter;
	cr_expect_gt(check_report(dir, 1, "injected", &inter), 0);
	cr_expect_gt(inter, 0, "phase 1: no refusal is marked intermittent");
	cr_expect_gt(check_report(dir, 2, "injected", &inter), 0);
	struct demo_findings f = phase_findings(dir, 1);
	cr_expect(f.n == 1 && f.intermittent0, "phase 1: %d findings, intermittent %d", f.n,
	          f.intermittent0);
	f = phase_findings(dir, 2);
	cr_expect(f.n == 1 && f.groups0 == f.denials,
	          "phase 2: %d findings holding %d of %d groups", f.n, f.groups0, f.denials);
	/* step 3 on an injected refusal: no sandbox change, nothing re-run */
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/phase2/fix.json", dir);
	const char *fix = slurp(path);
	cr_assert_not_null(fix, "no %s", path);
	struct dt_jv *fixes = dtt_json(fix);
	const struct dt_jv *program = dtt_jfind(fixes, "fixes", "kind", "program");
	cr_expect_not_null(program, "no program fix: %s", fix);
	cr_expect_str_eq(dtt_jstr(program, "verify.state"), "cannot-verify", "%s", fix);
	dt_jv_free(fixes);
}

Test(demo, bad_options_exit_2_and_a_full_out_directory_exits_5)
{
	static const char *const bad[][3] = {
	    {"--writes", "0", NULL}, {"--writes", "101", NULL}, {"--phase", "3", NULL},
	    {"--bogus", NULL, NULL}, {"--out", NULL, NULL},     {"extra", NULL, NULL},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[] = {dtt_denytrace(), "demo", bad[i][0], bad[i][1], NULL};
		int st = dtt_system(out, sizeof(out), argv, NULL);
		cr_expect_eq(st, 2, "demo %s %s: exit %d", bad[i][0], bad[i][1] ? bad[i][1] : "",
		             st);
		cr_expect(strstr(out, "denytrace: demo: "), "no message for %s: %s", bad[i][0],
		          out);
	}
	char full[PATH_MAX], file[PATH_MAX + 8];
	snprintf(full, sizeof(full), "%s/full", dtt_tmpdir());
	snprintf(file, sizeof(file), "%s/x", full);
	mkdir(full, 0755);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	const char *argv[] = {dtt_denytrace(), "demo", "--out", full, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), argv, NULL), 5, "%s", out);
	cr_expect(strstr(out, "already holds files"), "%s", out);
}

Test(demo, a_missing_python_exits_6_with_what_to_install)
{
	const char *argv[] = {dtt_denytrace(), "demo", NULL};
	const char *env[] = {"DENYTRACE_PYTHON=/nonexistent/python3", NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), argv, env), 6, "%s", out);
	cr_expect(strstr(out, "apt-get install python3"), "%s", out);
}

/* demo --out DIR runs python from DIR, as root too: a directory that
 * another user owns or can write, or below a parent another user can
 * change, is refused before anything is written into it or run from it. */
static void expect_out_refused(long uid, const char *dir, const char *made)
{
	struct dtt_cli c;
	const char *args[] = {"demo", "--out", dir, NULL};
	dtt_cli_as(&c, uid, args);
	cr_expect_eq(c.status, 5, "demo --out %s as uid %ld: exit %d: %s", dir, uid, c.status,
	             c.err);
	cr_expect(strstr(c.err, "denytrace: demo: --out: "), "no message: %s", c.err);
	char first[256] = "";
	cr_expect_eq(entries(made, first, sizeof(first)), 0, "%s holds %s", made, first);
}

Test(demo, an_out_directory_another_user_can_change_is_refused_and_nothing_runs_from_it)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to make directories of other users");
	const char *top = dtt_tmpdir();
	chmod(top, 0755); /* reachable by the ordinary users below */
	char theirs[PATH_MAX], open_[PATH_MAX], parent[PATH_MAX], below[PATH_MAX + 8];
	snprintf(theirs, sizeof(theirs), "%s/theirs", top);
	snprintf(open_, sizeof(open_), "%s/open", top);
	snprintf(parent, sizeof(parent), "%s/parent", top);
	snprintf(below, sizeof(below), "%s/new", parent);
	cr_assert_eq(mkdir(theirs, 0755) | chown(theirs, 65533, 65533), 0);
	cr_assert_eq(mkdir(open_, 0755) | chmod(open_, 0777), 0);
	cr_assert_eq(mkdir(parent, 0755) | chown(parent, 65533, 65533), 0);
	/* root, and an ordinary user, given another ordinary user's directory */
	expect_out_refused(-1, theirs, theirs);
	expect_out_refused(65534, theirs, theirs);
	/* root's own directory that everybody may write */
	expect_out_refused(-1, open_, open_);
	/* a new directory whose parent another user can rename or replace */
	expect_out_refused(-1, below, parent);
}
