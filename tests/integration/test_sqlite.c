/* SPDX-License-Identifier: MIT */
/*
 * Real SQLite (Python's sqlite3 module and the sqlite3 shell) writing to a
 * database whose directory is read-only inside bubblewrap.
 *
 * Two layouts:
 *   dir ro    the whole directory is read-only: SQLite's O_RDWR|O_CREAT open
 *             of the database is refused, it silently reopens it read-only,
 *             and the write fails later;
 *   file rw   the database file itself is bound writable but its directory
 *             is not: the database opens O_RDWR, and the refusal is the
 *             creation of a side file (-journal, -wal, -shm).
 *
 * The database is reached through a symbolic link to its directory, so the
 * recorded realpath is the kernel's answer, not the name the program used.
 * (SQLite 3.40 resolves the link itself before opening; the realpath must be
 * right either way.)
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "names.h"
#include "testlib.h"

#define PYTHON "/usr/bin/python3"
#define SQLITE "/usr/bin/sqlite3"

static char realdir[512]; /* where the database lives */
static char linkdir[512]; /* symlink to realdir: the name the programs use */
static char db[600];      /* linkdir/t.db */
static char realdb[600];  /* realdir/t.db */

static void setup(void)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	if (access(PYTHON, X_OK) != 0 || access(SQLITE, X_OK) != 0)
		cr_skip_test("needs %s and %s", PYTHON, SQLITE);
	snprintf(realdir, sizeof(realdir), "%s/real-db", dtt_tmpdir());
	snprintf(linkdir, sizeof(linkdir), "%s/db", dtt_tmpdir());
	snprintf(db, sizeof(db), "%s/t.db", linkdir);
	snprintf(realdb, sizeof(realdb), "%s/t.db", realdir);
	cr_assert_eq(mkdir(realdir, 0755), 0);
	cr_assert_eq(symlink("real-db", linkdir), 0);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(sqlite, .init = setup, .fini = teardown, .timeout = 120);

/* Creates the database outside any sandbox, in journal mode mode ("delete"
 * or "wal"), and checks that no side file is left behind. */
static void make_db(const char *mode)
{
	char sql[256];
	snprintf(sql, sizeof(sql),
	         "PRAGMA journal_mode=%s; CREATE TABLE t(x); INSERT INTO t VALUES(1);", mode);
	const char *argv[] = {SQLITE, db, sql, NULL};
	char out[1024];
	cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 0, "creating the db: %s", out);
	cr_assert(strstr(out, mode), "journal_mode=%s not taken: %s", mode, out);
	char side[700];
	static const char *const suffixes[] = {"-journal", "-wal", "-shm"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(side, sizeof(side), "%s%s", realdb, suffixes[i]);
		cr_assert_neq(access(side, F_OK), 0, "%s left behind", side);
	}
}

enum layout { DIR_RO, FILE_RW };
enum client { PY, CLI };

/* Python: one INSERT, autocommit; prints "ok" or "error: MESSAGE". */
static const char py_insert[] = "import sqlite3, sys\n"
                                "try:\n"
                                "    c = sqlite3.connect(sys.argv[1])\n"
                                "    c.execute('INSERT INTO t VALUES (2)')\n"
                                "    c.commit()\n"
                                "    print('ok')\n"
                                "except sqlite3.Error as e:\n"
                                "    print('error:', e)\n";

/* Runs the client's INSERT under denytrace, inside bwrap in layout l. */
static void run_writer(struct dtt_run *r, enum client c, enum layout l, const char *const *env)
{
	const char *argv[32];
	size_t n = 0;
	argv[n++] = "bwrap";
	argv[n++] = "--ro-bind";
	argv[n++] = "/";
	argv[n++] = "/";
	if (l == FILE_RW) {
		argv[n++] = "--bind";
		argv[n++] = realdb;
		argv[n++] = realdb;
	}
	argv[n++] = "--dev";
	argv[n++] = "/dev";
	argv[n++] = "--proc";
	argv[n++] = "/proc";
	argv[n++] = "--";
	if (c == PY) {
		argv[n++] = PYTHON;
		argv[n++] = "-c";
		argv[n++] = py_insert;
	} else {
		argv[n++] = SQLITE;
	}
	argv[n++] = db;
	if (c == CLI)
		argv[n++] = "INSERT INTO t VALUES (2);";
	argv[n] = NULL;
	cr_assert_eq(dtt_run(r, NULL, argv, env), 0, "ring unreadable: %s", r->out);
}

/* The first denial the probe tagged role (its name-based hint). */
static const struct dt_record *find_role(const struct dtt_run *r, const char *role)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == DT_REC_DENIAL && r->recs[i].sqlite_hint &&
		    !strcmp(r->recs[i].sqlite_hint, role))
			return &r->recs[i];
	return NULL;
}

/* A refused O_RDWR|O_CREAT open of realdb+suffix with SQLite role role. */
static const struct dt_record *expect_refused_open(const struct dtt_run *r, const char *role,
                                                   const char *suffix)
{
	const struct dt_record *d = find_role(r, role);
	cr_assert_not_null(d, "no refusal with sqlite role %s; output: %s", role, r->out);
	char want[700];
	snprintf(want, sizeof(want), "%s%s", realdb, suffix);
	/* libsqlite3 is built with 64-bit offsets: its open() is open64 */
	cr_expect_str_eq(d->op, "open64");
	cr_expect_str_eq(dt_errno_name(d->err), "EROFS");
	cr_expect(d->has_flags);
	cr_expect_eq(d->flags & O_ACCMODE, (uint64_t)O_RDWR, "flags %#llx",
	             (unsigned long long)d->flags);
	cr_expect(d->flags & O_CREAT, "flags %#llx", (unsigned long long)d->flags);
	cr_expect(d->writes);
	cr_expect_str_eq(d->p[0].realpath, want);
	char leaf[64];
	snprintf(leaf, sizeof(leaf), "/t.db%s", suffix);
	cr_assert_not_null(d->p[0].path);
	size_t pl = strlen(d->p[0].path);
	cr_expect(pl >= strlen(leaf) && !strcmp(d->p[0].path + pl - strlen(leaf), leaf),
	          "path %s does not name %s", d->p[0].path, leaf);
	return d;
}

/* Both clients' wording of SQLITE_READONLY and SQLITE_CANTOPEN. */
#define READONLY_MSG "attempt to write a readonly database"
#define CANTOPEN_MSG "unable to open database file"

static void expect_failure(const struct dtt_run *r, enum client c, const char *msg)
{
	cr_expect(strstr(r->out, msg), "program did not report '%s': %s", msg, r->out);
	cr_expect(!strstr(r->out, "ok\n"), "the write succeeded: %s", r->out);
	if (c == CLI)
		cr_expect_neq(r->status, 0, "sqlite3 exited 0: %s", r->out);
}

/* Whole directory read-only: the refused write-open of the database, then
 * SQLite's silent read-only reopen of the same path. */
static void readonly_dir_case(enum client c, const char *mode)
{
	make_db(mode);
	struct dtt_run r;
	run_writer(&r, c, DIR_RO, NULL);
	const struct dt_record *d = expect_refused_open(&r, "db", "");
	const struct dt_record *re = dtt_find(&r, DT_REC_REOPEN, NULL, "/t.db");
	cr_assert_not_null(re, "no read-only reopen recorded; output: %s", r.out);
	cr_expect_str_eq(re->p[0].path, d->p[0].path, "reopened another path");
	cr_expect_str_eq(re->p[0].realpath, realdb);
	cr_expect_str_eq(re->op, d->op);
	cr_expect_eq(re->err, 0);
	cr_expect(re->has_flags);
	cr_expect_eq(re->flags & (O_ACCMODE | O_CREAT), (uint64_t)O_RDONLY);
	cr_expect_str_eq(re->sqlite_hint, "db");
	cr_expect(re->has_fd && re->fd >= 0, "reopen record without the descriptor");
	cr_expect_eq(re->pid, d->pid);
	cr_expect_gt(re->pos, d->pos, "reopen recorded before the refusal");
	cr_expect_eq(dtt_count(&r, DT_REC_REOPEN, NULL, NULL), 1);
	if (!strcmp(mode, "wal")) {
		/* In WAL mode the read-only connection still needs -wal, and
		 * creating it is refused too: SQLite then reports CANTOPEN,
		 * not READONLY (SQLite 3.40; even a SELECT fails this way). */
		expect_refused_open(&r, "wal", "-wal");
		expect_failure(&r, c, CANTOPEN_MSG);
	} else {
		cr_expect_null(find_role(&r, "journal"), "a journal was never attempted");
		expect_failure(&r, c, READONLY_MSG);
	}
	dtt_free(&r);
}

/* Database file writable, directory read-only: the database opens for
 * writing, creating the side file is what the sandbox refuses. */
static void writable_file_case(enum client c, const char *mode)
{
	make_db(mode);
	struct dtt_run r;
	run_writer(&r, c, FILE_RW, NULL);
	cr_expect_null(find_role(&r, "db"), "the database itself was refused: %s", r.out);
	cr_expect_eq(dtt_count(&r, DT_REC_REOPEN, NULL, NULL), 0, "nothing was reopened");
	if (!strcmp(mode, "wal")) {
		const struct dt_record *w = find_role(&r, "wal");
		const struct dt_record *s = find_role(&r, "shm");
		cr_assert(w || s, "neither -wal nor -shm refused; output: %s", r.out);
		if (w)
			expect_refused_open(&r, "wal", "-wal");
		if (s)
			expect_refused_open(&r, "shm", "-shm");
		cr_expect_null(find_role(&r, "journal"));
	} else {
		expect_refused_open(&r, "journal", "-journal");
		cr_expect_null(find_role(&r, "wal"));
	}
	/* every side-file refusal carries the role its name says */
	for (size_t i = 0; i < r.n; i++) {
		const struct dt_record *d = &r.recs[i];
		if (d->type != DT_REC_DENIAL || !d->p[0].realpath ||
		    strncmp(d->p[0].realpath, realdb, strlen(realdb)))
			continue;
		const char *suffix = d->p[0].realpath + strlen(realdb);
		if (suffix[0] != '-')
			continue; /* the database itself: checked above */
		cr_expect_not_null(d->sqlite_hint, "%s has no sqlite role", d->p[0].realpath);
		if (d->sqlite_hint)
			cr_expect_str_eq(d->sqlite_hint, suffix + 1, "role of %s",
			                 d->p[0].realpath);
	}
	/* SQLite retries the refused side file read-only, finds nothing, and
	 * gives up with CANTOPEN (EROFS is not EACCES: no READONLY_DIRECTORY) */
	expect_failure(&r, c, CANTOPEN_MSG);
	dtt_free(&r);
}

Test(sqlite, python_delete_mode_readonly_dir_records_refused_db_open_and_readonly_reopen)
{
	readonly_dir_case(PY, "delete");
}

Test(sqlite, python_wal_mode_readonly_dir_records_refused_db_open_reopen_and_wal)
{
	readonly_dir_case(PY, "wal");
}

Test(sqlite, cli_delete_mode_readonly_dir_records_refused_db_open_and_readonly_reopen)
{
	readonly_dir_case(CLI, "delete");
}

Test(sqlite, cli_wal_mode_readonly_dir_records_refused_db_open_reopen_and_wal)
{
	readonly_dir_case(CLI, "wal");
}

Test(sqlite, python_delete_mode_writable_file_readonly_dir_records_refused_journal)
{
	writable_file_case(PY, "delete");
}

Test(sqlite, python_wal_mode_writable_file_readonly_dir_records_refused_wal)
{
	writable_file_case(PY, "wal");
}

Test(sqlite, cli_delete_mode_writable_file_readonly_dir_records_refused_journal)
{
	writable_file_case(CLI, "delete");
}

Test(sqlite, cli_wal_mode_writable_file_readonly_dir_records_refused_wal)
{
	writable_file_case(CLI, "wal");
}

/* The shape of a Hermes kanban write: an explicit IMMEDIATE transaction,
 * with the database named by HERMES_KANBAN_DB. */
static const char py_hermes[] = "import os, sqlite3\n"
                                "path = os.environ['HERMES_KANBAN_DB']\n"
                                "c = sqlite3.connect(path, isolation_level=None)\n"
                                "try:\n"
                                "    c.execute('BEGIN IMMEDIATE')\n"
                                "    c.execute('INSERT INTO t VALUES (3)')\n"
                                "    c.execute('COMMIT')\n"
                                "    print('ok')\n"
                                "except sqlite3.Error as e:\n"
                                "    print('error:', e)\n";

Test(sqlite, hermes_begin_immediate_write_records_kanban_db_variable_in_process_record)
{
	make_db("delete");
	char var[700];
	snprintf(var, sizeof(var), "HERMES_KANBAN_DB=%s", db);
	const char *env[] = {var, NULL};
	const char *argv[] = {"bwrap", "--ro-bind", "/",    "/",  "--dev",   "/dev", "--proc",
	                      "/proc", "--",        PYTHON, "-c", py_hermes, NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, env), 0, "ring unreadable: %s", r.out);
	const struct dt_record *d = expect_refused_open(&r, "db", "");
	cr_expect_not_null(dtt_find(&r, DT_REC_REOPEN, NULL, "/t.db"), "no reopen: %s", r.out);
	expect_failure(&r, PY, READONLY_MSG);
	const struct dt_record *p = dtt_process(&r, d->pid);
	const struct dt_record *py = NULL;
	/* the pid was bwrap's before it exec'd python: take python's record */
	for (size_t i = 0; i < r.n; i++)
		if (r.recs[i].type == DT_REC_PROCESS && r.recs[i].pid == d->pid && r.recs[i].exe &&
		    strstr(r.recs[i].exe, "python"))
			py = &r.recs[i];
	cr_assert_not_null(p, "no process record for pid %lld", (long long)d->pid);
	cr_assert_not_null(py, "no python process record for pid %lld", (long long)d->pid);
	const char *v = dt_record_env(py, "HERMES_KANBAN_DB");
	cr_assert_not_null(v, "HERMES_KANBAN_DB missing from the process record's env");
	cr_expect_str_eq(v, db);
	dtt_free(&r);
}
