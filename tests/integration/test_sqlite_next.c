/* SPDX-License-Identifier: MIT */
/*
 * A finding's "next" line quotes the error the worker printed. A real
 * Python sqlite3 worker (the system's libsqlite3) writes a board it may
 * not fully write, under bubblewrap (EROFS) and Landlock (EACCES), in WAL
 * and DELETE journal mode; the message SQLite gave it must be the one the
 * report's finding quotes. In WAL mode a read-only reopen of the database
 * is not what fails: the reopened connection cannot create -wal.
 */
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

TestSuite(sqlite_next, .fini = teardown, .timeout = 120);

static char board[PATH_MAX], db[PATH_MAX + 16], ring[PATH_MAX + 16];

/* board/kanban.db in journal mode mode, closed (no side files left). */
static void make_board(const char *mode)
{
	snprintf(board, sizeof(board), "%s/board", dtt_tmpdir());
	snprintf(db, sizeof(db), "%s/kanban.db", board);
	cr_assert_eq(mkdir(board, 0755), 0);
	char code[256];
	snprintf(code, sizeof(code),
	         "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\n"
	         "c.execute('pragma journal_mode=%s')\nc.execute('create table t(a)')\n"
	         "c.commit(); c.close()\n",
	         mode);
	const char *py[] = {"/usr/bin/python3", "-c", code, db, NULL};
	char said[4096];
	cr_assert_eq(dtt_system(said, sizeof(said), py, NULL), 0, "%s", said);
}

/* The worker: one insert; on failure prints "error: MESSAGE" and exits 1. */
static const char worker[] = "import sqlite3, sys\n"
                             "try:\n"
                             "    c = sqlite3.connect(sys.argv[1])\n"
                             "    c.execute('insert into t values (1)')\n"
                             "    c.commit()\n"
                             "except sqlite3.Error as e:\n"
                             "    print('error: %s' % e)\n"
                             "    sys.exit(1)\n";

/* Hermes' way: WAL, falling back to DELETE journal mode when WAL fails. */
static const char hermes_worker[] = "import sqlite3, sys\n"
                                    "try:\n"
                                    "    c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                                    "    try:\n"
                                    "        c.execute('pragma journal_mode=wal')\n"
                                    "    except sqlite3.Error:\n"
                                    "        c.execute('pragma journal_mode=delete')\n"
                                    "    c.execute('begin immediate')\n"
                                    "    c.execute('insert into t values (1)')\n"
                                    "    c.execute('commit')\n"
                                    "except sqlite3.Error as e:\n"
                                    "    print('error: %s' % e)\n"
                                    "    sys.exit(1)\n";

static const char *worker_code = worker;

/* Runs sandbox... python3 -B -c WORKER DB under denytrace run; returns
 * the message the worker printed (static storage). */
static const char *run_worker(const char *const *sandbox)
{
	const char *argv[32];
	size_t n = 0;
	for (; sandbox[n]; n++)
		argv[n] = sandbox[n];
	const char *tail[] = {"/usr/bin/python3", "-B", "-c", worker_code, db, NULL};
	for (size_t i = 0; i < 6; i++)
		argv[n++] = tail[i];
	static struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	cr_assert_eq(r.status, 1, "the worker did not fail: %s", r.out);
	snprintf(ring, sizeof(ring), "%s", r.ring);
	static char msg[512];
	const char *e = strstr(r.out, "error: ");
	cr_assert_not_null(e, "%s", r.out);
	snprintf(msg, sizeof(msg), "\"%.*s\"", (int)strcspn(e + 7, "\n"), e + 7);
	dtt_free(&r);
	return msg;
}

/* The report's findings' next lines, one per line. */
static const char *findings_next(void)
{
	char cli[PATH_MAX];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *argv[] = {cli, "report", "--format", "json", "--root", board, ring, NULL};
	static char out[262144], next[8192];
	int st = dtt_system(out, sizeof(out), argv, NULL);
	cr_assert(st == 0 || st == 1, "report exit %d: %s", st, out);
	struct dt_jv *doc = dtt_json(out);
	const struct dt_jv *f = dt_jv_get(doc, "findings");
	size_t len = 0;
	next[0] = 0;
	for (size_t i = 0; f && f->type == DT_JV_ARR && i < f->n; i++) {
		const char *s = dt_jv_str(&f->v[i], "next");
		len += (size_t)snprintf(next + len, sizeof(next) - len, "%s\n", s ? s : "None");
		cr_assert_lt(len, sizeof(next));
	}
	dt_jv_free(doc);
	return next;
}

static void expect_next_quotes(const char *const *sandbox, const char *want)
{
	const char *msg = run_worker(sandbox);
	cr_assert_str_eq(msg, want, "SQLite's own behaviour changed: the worker printed %s", msg);
	const char *next = findings_next();
	cr_expect(strstr(next, msg), "the worker printed %s; the finding says: %s", msg, next);
	cr_expect_eq(strchr(next, '\n') - next + 1, (long)strlen(next), "not one finding: %s",
	             next);
}

static void need_bwrap(void)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
}

static void need_landlock(void)
{
	if (!dtt_have_landlock())
		cr_skip_test("Landlock is not available here");
}

#define UNABLE "\"unable to open database file\""
#define READONLY "\"attempt to write a readonly database\""

Test(sqlite_next, a_wal_board_in_a_read_only_directory_fails_to_open_and_the_finding_says_so)
{
	need_bwrap();
	make_board("wal");
	const char *sb[DTT_BWRAP_RW_WORDS + 1] = {NULL};
	dtt_bwrap_rw(sb, NULL);
	expect_next_quotes(sb, UNABLE);
}

Test(sqlite_next, a_wal_board_writable_in_a_read_only_directory_fails_to_open_the_wal)
{
	need_bwrap();
	make_board("wal");
	const char *sb[DTT_BWRAP_RW_WORDS + 1] = {NULL};
	dtt_bwrap_rw(sb, db);
	expect_next_quotes(sb, UNABLE);
}

Test(sqlite_next, a_delete_mode_board_in_a_read_only_directory_is_written_read_only)
{
	need_bwrap();
	make_board("delete");
	const char *sb[DTT_BWRAP_RW_WORDS + 1] = {NULL};
	dtt_bwrap_rw(sb, NULL);
	expect_next_quotes(sb, READONLY);
}

Test(sqlite_next, a_delete_mode_board_writable_in_a_read_only_directory_cannot_open_its_journal)
{
	need_bwrap();
	make_board("delete");
	const char *sb[DTT_BWRAP_RW_WORDS + 1] = {NULL};
	dtt_bwrap_rw(sb, db);
	expect_next_quotes(sb, UNABLE);
}

Test(sqlite_next, a_wal_board_landlock_refuses_is_a_readonly_directory)
{
	need_landlock();
	make_board("wal");
	const char *sb[] = {dtt_helper("landlock-run"), "--rw", "/dev/null", "--", NULL};
	expect_next_quotes(sb, READONLY);
}

Test(sqlite_next, a_delete_mode_board_landlock_lets_write_but_not_its_directory_is_readonly)
{
	need_landlock();
	make_board("delete");
	const char *sb[] = {
	    dtt_helper("landlock-run"), "--rw", db, "--rw", "/dev/null", "--", NULL};
	expect_next_quotes(sb, READONLY);
}

Test(sqlite_next,
     a_wal_worker_falling_back_to_delete_mode_in_a_read_only_directory_still_cannot_open)
{
	need_bwrap();
	make_board("wal");
	worker_code = hermes_worker;
	const char *sb[DTT_BWRAP_RW_WORDS + 1] = {NULL};
	dtt_bwrap_rw(sb, NULL);
	expect_next_quotes(sb, UNABLE);
}
