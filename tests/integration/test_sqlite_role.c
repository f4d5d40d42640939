/* SPDX-License-Identifier: MIT */
/*
 * Which refused paths are SQLite's, judged by what the files are and what
 * SQLite did, not by their names (tracer/diagnose/sqlite_role.c). Real SQLite (the
 * sqlite3 shell and Python's sqlite3 module) writes to databases named
 * board.kanban, .state, data and x.db, and to y.db, a text file that is no
 * database, in a directory a real sandbox refuses: a read-only bind in
 * bubblewrap, a Landlock ruleset, or the mode bits for uid 65534. Then
 * `denytrace report --format json` and `denytrace show --jsonl` must give
 * every database the role db with its evidence, y.db none, and the refused
 * write-open of each database SQLite's next step.
 *
 * Also lock files that are not SQLite's (an application's <db>.init.lock,
 * git's index.lock): no SQLite role, and the cause the root decides.
 *
 * Build and run from the repository root:
 *   make all helpers build/integration/test_sqlite_role &&
 *   DT_BUILD=build build/integration/test_sqlite_role --jobs 1
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

#define PYTHON "/usr/bin/python3"
#define SQLITE "/usr/bin/sqlite3"

static char dir[PATH_MAX]; /* the refused directory, holding the databases */
static char ws[PATH_MAX];  /* a writable workspace, so the sandbox is not all read-only */

static void setup(void)
{
	if (access(PYTHON, X_OK) != 0 || access(SQLITE, X_OK) != 0)
		cr_skip_test("needs %s and %s", PYTHON, SQLITE);
	/* uid 65534 must reach the databases */
	cr_assert_eq(chmod(dtt_tmpdir(), 0755), 0);
	snprintf(dir, sizeof(dir), "%s/d", dtt_tmpdir());
	snprintf(ws, sizeof(ws), "%s/ws", dtt_tmpdir());
	cr_assert_eq(mkdir(dir, 0755), 0);
	cr_assert_eq(mkdir(ws, 0777), 0);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(sqlite_role, .init = setup, .fini = teardown, .timeout = 120);

static const char *const databases[] = {"board.kanban", ".state", "data", "x.db"};
#define NDB (sizeof(databases) / sizeof(databases[0]))

static const char *in_dir(const char *name)
{
	static char bufs[8][PATH_MAX + 64];
	static int k;
	char *b = bufs[k++ % 8];
	snprintf(b, PATH_MAX + 64, "%s/%s", dir, name);
	return b;
}

static void sh(const char *script)
{
	const char *argv[] = {"sh", "-c", script, NULL};
	char out[4096];
	cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 0, "%s: %s", script, out);
}

/* Real databases in DELETE mode, and y.db, which is text. */
static void make_files(void)
{
	for (size_t i = 0; i < NDB; i++) {
		const char *argv[] = {SQLITE, in_dir(databases[i]), "CREATE TABLE t(x);", NULL};
		char out[1024];
		cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 0, "%s", out);
	}
	FILE *f = fopen(in_dir("y.db"), "w");
	cr_assert_not_null(f);
	fputs("notes, not a database\n", f);
	fclose(f);
}

enum sandbox { BWRAP, LANDLOCK, MODE_BITS };

/* The worker: the sqlite3 shell on every file, Python's sqlite3 on every
 * file, then a shell append to y.db. Every write must fail. */
static void run_clients(struct dtt_run *r, enum sandbox sb)
{
	char script[8192];
	size_t n = 0;
	const char *names[NDB + 1];
	for (size_t i = 0; i < NDB; i++)
		names[i] = databases[i];
	names[NDB] = "y.db";
	n += (size_t)snprintf(script + n, sizeof(script) - n, "cd '%s' || exit 9\n", dir);
	for (size_t i = 0; i <= NDB; i++)
		n += (size_t)snprintf(script + n, sizeof(script) - n,
		                      "%s ./'%s' 'INSERT INTO t VALUES (2);'\n", SQLITE, names[i]);
	n += (size_t)snprintf(script + n, sizeof(script) - n,
	                      "%s -c 'import sqlite3, sys\n"
	                      "for p in sys.argv[1:]:\n"
	                      "    try:\n"
	                      "        c = sqlite3.connect(p)\n"
	                      "        c.execute(\"INSERT INTO t VALUES (3)\")\n"
	                      "        c.commit()\n"
	                      "        print(\"ok\", p)\n"
	                      "    except sqlite3.Error as e:\n"
	                      "        print(\"error:\", p, e)\n'",
	                      PYTHON);
	for (size_t i = 0; i <= NDB; i++)
		n += (size_t)snprintf(script + n, sizeof(script) - n, " '%s'", in_dir(names[i]));
	snprintf(script + n, sizeof(script) - n, "\necho more >> y.db\nexit 0\n");

	const char *argv[24];
	size_t a = 0;
	if (sb == BWRAP) {
		const char *pre[] = {"bwrap", "--ro-bind", "/",    "/",      "--bind", ws,
		                     ws,      "--dev",     "/dev", "--proc", "/proc",  "--"};
		for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			argv[a++] = pre[i];
	} else if (sb == LANDLOCK) {
		argv[a++] = dtt_helper("landlock-run");
		argv[a++] = "--rw";
		argv[a++] = ws;
		argv[a++] = "--";
	} else {
		const char *pre[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		                     "--"};
		for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			argv[a++] = pre[i];
	}
	argv[a++] = "sh";
	argv[a++] = "-c";
	argv[a++] = script;
	argv[a] = NULL;
	cr_assert_eq(dtt_run(r, NULL, argv, NULL), 0, "ring unreadable: %s", r->out);
	cr_assert_eq(r->status, 0, "the worker script failed: %s", r->out);
	/* what the programs themselves said */
	cr_expect(!strstr(r->out, "ok "), "a write succeeded: %s", r->out);
	cr_expect(strstr(r->out, "attempt to write a readonly database"), "%s", r->out);
	cr_expect(strstr(r->out, "file is not a database"), "y.db: %s", r->out);
}

/* Runs `denytrace ARGS... RING` and has Python turn its JSON into one line
 * per refusal: "realpath comm sqlite evidence header cause next root", tab
 * separated, "-" for null (the report's groups, or show's records). */
static void cli_rows(char *out, size_t cap, const char *ring, const char *const *args)
{
	char json[PATH_MAX + 16];
	static int seq;
	snprintf(json, sizeof(json), "%s.%d.json", ring, seq++);
	char cmd[8192];
	size_t n = (size_t)snprintf(cmd, sizeof(cmd), "'%s/denytrace'", dtt_build());
	for (const char *const *a = args; *a; a++)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " %s", *a);
	snprintf(cmd + n, sizeof(cmd) - n, " '%s' > '%s'", ring, json);
	sh(cmd);
	static const char py[] =
	    "import json, sys\n"
	    "text = open(sys.argv[1]).read()\n"
	    "try:\n"
	    "    doc = json.loads(text)\n"
	    "except ValueError:\n"
	    "    doc = None\n"
	    "if isinstance(doc, dict) and 'denials' in doc:\n"
	    "    rows = doc['denials']\n"
	    "else:\n"
	    "    rows = [json.loads(l) for l in text.splitlines() if l.strip()]\n"
	    "    rows = [x for x in rows if x['type'] == 'denial']\n"
	    "s = lambda v: '-' if v is None else str(v)\n"
	    "for x in rows:\n"
	    "    print('\\t'.join(s(x.get(k)) for k in ('realpath', 'comm', 'sqlite', "
	    "'sqlite_evidence', 'sqlite_header', 'cause', 'next', 'expected_root')))\n";
	const char *argv[] = {PYTHON, "-c", py, json, NULL};
	cr_assert_eq(dtt_system(out, cap, argv, NULL), 0, "the JSON: %s", out);
}

/* The first row for path (and comm, if given), or NULL. */
static const char *row(const char *rows, const char *path, const char *comm, char *buf, size_t cap)
{
	char key[PATH_MAX + 80];
	snprintf(key, sizeof(key), "%s\t%s", path, comm ? comm : "");
	for (const char *p = rows; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len >= strlen(key) && !strncmp(p, key, strlen(key))) {
			snprintf(buf, cap, "%.*s", (int)len, p);
			return buf;
		}
		p = e ? e + 1 : NULL;
	}
	return NULL;
}

#define READONLY_NEXT                                                                              \
	"SQLite reopened the database read-only: later writes fail with \"attempt to write a "     \
	"readonly database\""

static void expect_roles(const char *ring)
{
	char rows[65536], buf[4096], want[PATH_MAX + 128];
	const char *report[] = {"report", "--format", "json", NULL};
	cli_rows(rows, sizeof(rows), ring, report);
	for (size_t i = 0; i < NDB; i++) {
		const char *p = in_dir(databases[i]);
		const char *r = row(rows, p, NULL, buf, sizeof(buf));
		cr_assert_not_null(r, "no refusal of %s in the report:\n%s", p, rows);
		snprintf(want, sizeof(want), "\tdb\theader\tsqlite\t");
		cr_expect(strstr(r, want), "%s: want role db by header: %s", databases[i], r);
		cr_expect(strstr(r, "\t" READONLY_NEXT), "%s: want SQLite's next step: %s",
		          databases[i], r);
	}
	const char *y = row(rows, in_dir("y.db"), NULL, buf, sizeof(buf));
	cr_assert_not_null(y, "no refusal of y.db:\n%s", rows);
	cr_expect(strstr(y, "\t-\t-\t-\t"), "y.db is no database, yet: %s", y);
	cr_expect(!strstr(y, "attempt to write a readonly database"), "y.db: %s", y);

	/* show judges with the same rule, record by record, for both clients */
	const char *show[] = {"show", "--jsonl", NULL};
	cli_rows(rows, sizeof(rows), ring, show);
	static const char *const comms[] = {"sqlite3", "python3"};
	for (size_t i = 0; i < NDB; i++)
		for (size_t c = 0; c < 2; c++) {
			const char *r = row(rows, in_dir(databases[i]), comms[c], buf, sizeof(buf));
			cr_assert_not_null(r, "show has no refusal of %s by %s:\n%s", databases[i],
			                   comms[c], rows);
			cr_expect(strstr(r, "\tdb\theader\tsqlite\t"), "show: %s", r);
		}
	for (size_t c = 0; c < 2; c++) {
		const char *r = row(rows, in_dir("y.db"), comms[c], buf, sizeof(buf));
		cr_assert_not_null(r, "show has no refusal of y.db by %s:\n%s", comms[c], rows);
		cr_expect(strstr(r, "\t-\t-\t-\t"), "show: %s", r);
	}
}

/* The text (-v: the groups in full) and Markdown reports name the evidence. */
static void expect_text_names_evidence(const char *ring)
{
	char cmd[8192], out[65536];
	snprintf(cmd, sizeof(cmd),
	         "'%s/denytrace' report -v '%s'; '%s/denytrace' report --format markdown '%s'",
	         dtt_build(), ring, dtt_build(), ring);
	const char *argv[] = {"sh", "-c", cmd, NULL};
	dtt_system(out, sizeof(out), argv, NULL);
	cr_expect(strstr(out, "[sqlite db (evidence: header)]"), "%s", out);
	cr_expect(strstr(out, "SQLite db file (evidence: header)"), "%s", out);
}

Test(sqlite_role, databases_of_any_name_are_sqlite_by_header_under_a_read_only_bind)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	make_files();
	struct dtt_run r;
	run_clients(&r, BWRAP);
	expect_roles(r.ring);
	expect_text_names_evidence(r.ring);
	dtt_free(&r);
}

Test(sqlite_role, databases_of_any_name_are_sqlite_by_header_under_landlock)
{
	if (!dtt_have_landlock())
		cr_skip_test("Landlock is not available here");
	make_files();
	struct dtt_run r;
	run_clients(&r, LANDLOCK);
	expect_roles(r.ring);
	dtt_free(&r);
}

Test(sqlite_role, databases_of_any_name_are_sqlite_by_header_when_mode_bits_refuse_uid_65534)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to switch to uid 65534");
	if (access("/usr/bin/setpriv", X_OK) != 0)
		cr_skip_test("needs setpriv (util-linux)");
	make_files();
	struct dtt_run r;
	run_clients(&r, MODE_BITS);
	expect_roles(r.ring);
	dtt_free(&r);
}

/* ---- a database gone at report time -------------------------------------------------------- */

Test(sqlite_role, a_database_gone_at_report_time_keeps_its_role_by_reopen_and_says_so)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	make_files();
	struct dtt_run r;
	run_clients(&r, BWRAP);
	for (size_t i = 0; i < NDB; i++)
		cr_assert_eq(unlink(in_dir(databases[i])), 0);

	char rows[65536], buf[4096];
	const char *report[] = {"report", "--format", "json", NULL};
	cli_rows(rows, sizeof(rows), r.ring, report);
	for (size_t i = 0; i < NDB; i++) {
		const char *g = row(rows, in_dir(databases[i]), NULL, buf, sizeof(buf));
		cr_assert_not_null(g, "no refusal of %s:\n%s", databases[i], rows);
		cr_expect(strstr(g, "\tdb\treopen\tgone\t"), "%s: %s", databases[i], g);
		cr_expect(strstr(g, "\t" READONLY_NEXT), "%s: %s", databases[i], g);
	}
	char cmd[8192], out[65536];
	snprintf(cmd, sizeof(cmd), "'%s/denytrace' report -v '%s'", dtt_build(), r.ring);
	const char *argv[] = {"sh", "-c", cmd, NULL};
	dtt_system(out, sizeof(out), argv, NULL);
	cr_expect(strstr(out, "[sqlite db (evidence: reopen; header not checked: the database file "
	                      "no longer exists)]"),
	          "%s", out);
	dtt_free(&r);
}

/* The database file bound writable, its directory not: SQLite's journal is
 * refused. Its role comes from the database's header, and once the
 * database is gone, from the journal itself. */
Test(sqlite_role, a_journal_beside_a_database_gone_at_report_time_keeps_its_role_by_companion)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	make_files();
	const char *db = in_dir("board.kanban");
	char script[PATH_MAX + 128];
	snprintf(script, sizeof(script), "%s '%s' 'INSERT INTO t VALUES (2);'", SQLITE, db);
	const char *argv[] = {"bwrap", "--ro-bind", "/",     "/",  "--bind", db,   db,     "--dev",
	                      "/dev",  "--proc",    "/proc", "--", "sh",     "-c", script, NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	cr_expect_neq(r.status, 0, "the write succeeded: %s", r.out);

	char rows[65536], buf[4096], journal[PATH_MAX + 64];
	snprintf(journal, sizeof(journal), "%s-journal", db);
	const char *report[] = {"report", "--format", "json", "--root", dir, NULL};
	cli_rows(rows, sizeof(rows), r.ring, report);
	const char *g = row(rows, journal, NULL, buf, sizeof(buf));
	cr_assert_not_null(g, "no refusal of the journal:\n%s", rows);
	cr_expect(strstr(g, "\tjournal\theader\tsqlite\tsqlite-side-file\t"), "%s", g);

	cr_assert_eq(unlink(db), 0);
	cli_rows(rows, sizeof(rows), r.ring, report);
	g = row(rows, journal, NULL, buf, sizeof(buf));
	cr_assert_not_null(g, "no refusal of the journal:\n%s", rows);
	dtt_free(&r);
	if (geteuid() != 0)
		cr_skip_test("the rest needs root: only root may write the gone database whatever "
		             "its mode, which makes its journal a side file");
	/* the ring still shows the database's writable bind, and root writes
	 * whatever its mode */
	cr_expect(strstr(g, "\tjournal\tcompanion\tgone\tsqlite-side-file\t"), "%s", g);
}

/* ---- lock files that are not SQLite's ------------------------------------------------------ */

/* issue 11's repro: an application's own <db>.init.lock beside an empty
 * board database, in a directory the sandbox never granted. */
Test(sqlite_role, an_applications_init_lock_beside_a_board_db_is_root_not_granted)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *db = in_dir("kanban.db");
	FILE *f = fopen(db, "w");
	cr_assert_not_null(f);
	fclose(f);
	char env[PATH_MAX + 64], script[PATH_MAX + 64], lock[PATH_MAX + 64];
	snprintf(env, sizeof(env), "HERMES_KANBAN_DB=%s", db);
	snprintf(lock, sizeof(lock), "%s.init.lock", db);
	snprintf(script, sizeof(script), ": >> '%s'", lock);
	const char *envv[] = {env, NULL};
	const char *argv[DTT_BWRAP_RW_WORDS + 4];
	size_t n = dtt_bwrap_rw(argv, ws);
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n] = NULL;
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, envv), 0, "%s", r.out);

	char rows[65536], buf[4096], want[PATH_MAX + 64];
	const char *report[] = {"report", "--format", "json", NULL};
	cli_rows(rows, sizeof(rows), r.ring, report);
	const char *g = row(rows, lock, NULL, buf, sizeof(buf));
	cr_assert_not_null(g, "no refusal of the lock file:\n%s", rows);
	snprintf(want, sizeof(want), "\t-\t-\t-\troot-not-granted\t-\t%s", dir);
	cr_expect(strstr(g, want), "want no SQLite role and root-not-granted under %s: %s", dir, g);
	dtt_free(&r);
}

/* The same beside a real SQLite database: <db>.init.lock is still the
 * application's; <db>.lock is named like the unix-dotfile VFS's lock, but
 * the database was not writable either, so the root decides. */
Test(sqlite_role, lock_files_beside_a_real_database_nobody_could_write_are_the_roots_problem)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *db = in_dir("kanban.db");
	const char *mk[] = {SQLITE, db, "CREATE TABLE t(x);", NULL};
	char out[1024];
	cr_assert_eq(dtt_system(out, sizeof(out), mk, NULL), 0, "%s", out);
	char script[3 * PATH_MAX];
	snprintf(script, sizeof(script), "true >> '%s.init.lock'; true >> '%s.lock'", db, db);
	const char *argv[DTT_BWRAP_RW_WORDS + 4];
	size_t n = dtt_bwrap_rw(argv, ws);
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n] = NULL;
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);

	char rows[65536], buf[4096], path[PATH_MAX + 64];
	const char *report[] = {"report", "--format", "json", "--root", dir, NULL};
	cli_rows(rows, sizeof(rows), r.ring, report);
	snprintf(path, sizeof(path), "%s.init.lock", db);
	const char *g = row(rows, path, NULL, buf, sizeof(buf));
	cr_assert_not_null(g, "no refusal of %s:\n%s", path, rows);
	cr_expect(strstr(g, "\t-\t-\t-\troot-not-granted\t"), "%s", g);
	snprintf(path, sizeof(path), "%s.lock", db);
	g = row(rows, path, NULL, buf, sizeof(buf));
	cr_assert_not_null(g, "no refusal of %s:\n%s", path, rows);
	cr_expect(strstr(g, "\tlock\theader\tsqlite\troot-not-granted\t"), "%s", g);
	dtt_free(&r);
}

Test(sqlite_role, gits_index_lock_is_no_sqlite_lock)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	if (access("/usr/bin/git", X_OK) != 0)
		cr_skip_test("needs /usr/bin/git");
	char script[4 * PATH_MAX];
	snprintf(script, sizeof(script), "cd '%s' && git init -q repo && echo a > repo/f", dir);
	sh(script);
	char repo[PATH_MAX + 16], lock[PATH_MAX + 64];
	snprintf(repo, sizeof(repo), "%s/repo", dir);
	snprintf(lock, sizeof(lock), "%s/.git/index.lock", repo);
	const char *argv[] = {"bwrap",  "--ro-bind", "/",      "/",   "--dev", "/dev",
	                      "--proc", "/proc",     "--bind", ws,    ws,      "--",
	                      "git",    "-C",        repo,     "add", "f",     NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	cr_expect_neq(r.status, 0, "git add succeeded: %s", r.out);

	char rows[65536], buf[4096];
	const char *report[] = {"report", "--format", "json", "--root", repo, NULL};
	cli_rows(rows, sizeof(rows), r.ring, report);
	const char *g = row(rows, lock, NULL, buf, sizeof(buf));
	cr_assert_not_null(g, "no refusal of index.lock:\n%s", rows);
	cr_expect(strstr(g, "\t-\t-\t-\troot-not-granted\t"), "%s", g);
	dtt_free(&r);
}

/* SQLite's own dotfile lock (vfs=unix-dotfile: mkdir "<db>.lock") beside a
 * database bound writable: that one is SQLite's side-file problem. */
Test(sqlite_role, sqlites_dotfile_lock_beside_a_writable_database_is_sqlite_side_file)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	make_files();
	const char *db = in_dir("data");
	static const char py[] = "import sqlite3, sys\n"
	                         "c = sqlite3.connect('file:' + sys.argv[1] + '?vfs=unix-dotfile', "
	                         "uri=True)\n"
	                         "try:\n"
	                         "    c.execute('INSERT INTO t VALUES (2)')\n"
	                         "    c.commit()\n"
	                         "    print('ok')\n"
	                         "except sqlite3.Error as e:\n"
	                         "    print('error:', e)\n";
	const char *argv[] = {"bwrap", "--ro-bind", "/",    "/",      "--bind", db,
	                      db,      "--dev",     "/dev", "--proc", "/proc",  "--",
	                      PYTHON,  "-c",        py,     db,       NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	cr_expect(strstr(r.out, "error:"), "the write succeeded: %s", r.out);

	char rows[65536], buf[4096], lock[PATH_MAX + 64];
	snprintf(lock, sizeof(lock), "%s.lock", db);
	const char *report[] = {"report", "--format", "json", "--root", dir, NULL};
	cli_rows(rows, sizeof(rows), r.ring, report);
	const char *g = row(rows, lock, NULL, buf, sizeof(buf));
	cr_assert_not_null(g, "no refusal of the dotfile lock:\n%s", rows);
	cr_expect(strstr(g, "\tlock\theader\tsqlite\tsqlite-side-file\t"), "%s", g);
	dtt_free(&r);
}

/* ---- fossil: the original case ----------------------------------------------------- */

/* fossil keeps its repository (*.fossil) and its checkout state (.fslckout)
 * in SQLite databases. A commit with neither writable: both write-opens are
 * refused and reopened read-only, and fossil prints SQLite's "attempt to
 * write a readonly database". */
Test(sqlite_role, fossils_repository_and_checkout_are_sqlite_databases_by_header)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	if (access("/usr/bin/fossil", X_OK) != 0)
		cr_skip_test(
		    "needs /usr/bin/fossil (Debian package fossil; scripts/install-deps.sh)");
	char script[4 * PATH_MAX], home[PATH_MAX + 16], envhome[PATH_MAX + 16];
	snprintf(home, sizeof(home), "%s/home", ws);
	snprintf(envhome, sizeof(envhome), "HOME=%s", home);
	cr_assert_eq(mkdir(home, 0755), 0);
	snprintf(
	    script, sizeof(script),
	    "set -e; export HOME='%s' USER=tester; cd '%s'; mkdir co;"
	    "fossil init -A tester proj.fossil >/dev/null; cd co;"
	    "fossil open ../proj.fossil >/dev/null; echo hi > a.txt; fossil add a.txt >/dev/null",
	    home, dir);
	sh(script);
	char co[PATH_MAX + 16];
	snprintf(co, sizeof(co), "%s/co", dir);
	const char *env[] = {envhome, "USER=tester", NULL};
	const char *argv[] = {"bwrap",  "--ro-bind", "/",      "/",     "--bind",        home, home,
	                      "--dev",  "/dev",      "--proc", "/proc", "--chdir",       co,   "--",
	                      "fossil", "commit",    "-m",     "x",     "--no-warnings", NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, env), 0, "%s", r.out);
	cr_expect_neq(r.status, 0, "the commit succeeded: %s", r.out);
	cr_expect(strstr(r.out, "attempt to write a readonly database"), "%s", r.out);

	char rows[65536], buf[4096], path[PATH_MAX + 64];
	const char *report[] = {"report", "--format", "json", "--root", dir, NULL};
	cli_rows(rows, sizeof(rows), r.ring, report);
	static const char *const files[] = {"proj.fossil", "co/.fslckout"};
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		const char *g = row(rows, path, NULL, buf, sizeof(buf));
		cr_assert_not_null(g, "no refusal of %s:\n%s", files[i], rows);
		cr_expect(strstr(g, "\tdb\theader\tsqlite\troot-not-granted\t" READONLY_NEXT),
		          "%s: %s", files[i], g);
	}
	dtt_free(&r);
}

/* ---- was the database writable for that process? ------------------------------------------- */

/* Landlock grants writing the database file but not its directory: SQLite
 * opens the database read-write, and creating its journal is refused with
 * EACCES on a read-write mount. Only a run that records successful writes
 * (the default) shows the database was writable: then the journal is
 * SQLite's side-file problem; with --refusals-only the record does not
 * say, and the root decides. */
static void landlock_journal_case(int successes, const char *want_cause, const char *want_reason)
{
	if (!dtt_have_landlock())
		cr_skip_test("Landlock is not available here");
	make_files();
	const char *db = in_dir("board.kanban");
	const char *argv[] = {dtt_helper("landlock-run"),  "--rw", db, "--rw", ws, "--", SQLITE, db,
	                      "INSERT INTO t VALUES (2);", NULL};
	const char *opts[] = {"--refusals-only", NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, successes ? NULL : opts, argv, NULL), 0, "%s", r.out);
	cr_expect_neq(r.status, 0, "the write succeeded: %s", r.out);

	char rows[65536], buf[4096], journal[PATH_MAX + 64];
	snprintf(journal, sizeof(journal), "%s-journal", db);
	const char *report[] = {"report", "--format", "json", "--root", dir, NULL};
	cli_rows(rows, sizeof(rows), r.ring, report);
	const char *g = row(rows, journal, NULL, buf, sizeof(buf));
	cr_assert_not_null(g, "no refusal of the journal:\n%s", rows);
	char want[256];
	snprintf(want, sizeof(want), "\tjournal\theader\tsqlite\t%s\t", want_cause);
	cr_expect(strstr(g, want), "want %s: %s", want_cause, g);
	if (want_reason) {
		const char *sh_argv[] = {"sh", "-c", NULL, NULL};
		char cmd[2 * PATH_MAX], out[65536];
		snprintf(cmd, sizeof(cmd), "'%s/denytrace' report --root '%s' '%s'", dtt_build(),
		         dir, r.ring);
		sh_argv[2] = cmd;
		dtt_system(out, sizeof(out), sh_argv, NULL);
		cr_expect(strstr(out, want_reason), "%s", out);
	}
	dtt_free(&r);
}

Test(sqlite_role, a_journal_beside_a_database_the_run_shows_written_is_sqlite_side_file)
{
	landlock_journal_case(
	    1, "sqlite-side-file",
	    "the database itself was writable (this process opened it for writing)");
}

Test(sqlite_role,
     a_journal_beside_a_database_not_shown_writable_with_refusals_only_is_the_roots_problem)
{
	landlock_journal_case(0, "root-not-granted", NULL);
}
