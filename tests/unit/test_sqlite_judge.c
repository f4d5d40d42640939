// SPDX-License-Identifier: MIT
/*
 * Tests for tracer/diagnose/sqlite_role.c: which paths are SQLite's and in which
 * role, from real files' first bytes and from what records show, and
 * whether a companion's database was writable for the refused process.
 * Records are built by hand (string literals); files live in a fresh
 * directory under /tmp.
 *
 * Build and run from the repository root:
 *   make build/unit/test_sqlite_judge && ./build/unit/test_sqlite_judge
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sqlite_role.h"
#include "testlib.h"

static struct dt_sqlite_judge *j;
static char paths[16][512];
static int npaths;

static void setup(void)
{
	j = dt_sqlite_judge_new();
	cr_assert_not_null(j);
	npaths = 0;
}

static void teardown(void)
{
	dt_sqlite_judge_free(j);
	dtt_cleanup();
}

TestSuite(sqlite_role, .init = setup, .fini = teardown);

/* A path in the test directory (kept for the test's whole life). */
static const char *file(const char *name)
{
	char *p = paths[npaths++ % 16];
	snprintf(p, 512, "%s/%s", dtt_tmpdir(), name);
	return p;
}

static const char *write_file(const char *name, const void *bytes, size_t n)
{
	const char *p = file(name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(bytes, 1, n, f), n);
	fclose(f);
	return p;
}

static const char sqlite_header[] = "SQLite format 3\0and a page follows";

static struct dt_record rec(int type, long pid, uint64_t t, const char *op, uint64_t flags,
                            const char *path)
{
	struct dt_record r;
	memset(&r, 0, sizeof(r));
	r.type = type;
	r.pid = pid;
	r.time_mono = t;
	r.op = op;
	r.err = type == DT_REC_DENIAL ? EROFS : 0;
	r.has_flags = flags != (uint64_t)-1;
	r.flags = r.has_flags ? flags : 0;
	r.writes = type != DT_REC_REOPEN;
	r.p[0].path = r.p[0].abspath = r.p[0].realpath = path;
	return r;
}

static struct dt_record refused_open(long pid, uint64_t t, const char *path)
{
	return rec(DT_REC_DENIAL, pid, t, "open64", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	           path);
}

static struct dt_record reopen(long pid, uint64_t t, const char *path)
{
	return rec(DT_REC_REOPEN, pid, t, "open64", O_RDONLY | O_NOFOLLOW | O_CLOEXEC, path);
}

/* Adds every record, then judges the first. */
static struct dt_record judge(struct dt_record *recs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dt_sqlite_judge_add(j, &recs[i]);
	dt_sqlite_judge_record(j, &recs[0]);
	return recs[0];
}

#define assert_role(r, role, ev)                                                                   \
	do {                                                                                       \
		cr_assert_not_null((r).sqlite, "no role, want %s", role);                          \
		cr_assert_str_eq((r).sqlite, role);                                                \
		cr_assert_str_eq((r).sqlite_evidence, ev);                                         \
	} while (0)

/* ---- the database ----------------------------------------------------------------------- */

Test(sqlite_role, a_file_with_sqlites_header_is_a_database_whatever_its_name)
{
	const char *p = write_file("board.kanban", sqlite_header, sizeof(sqlite_header));
	struct dt_record r[] = {rec(DT_REC_DENIAL, 1, 1, "unlink", -1, p)};
	struct dt_record d = judge(r, 1);

	assert_role(d, "db", "header");
	cr_assert_eq(d.sqlite_header, DT_SQLHDR_SQLITE);
	cr_assert_null(dt_sqlite_header_note(d.sqlite_header));
}

Test(sqlite_role, a_db_named_text_file_is_no_database_even_when_sqlite_opened_it)
{
	const char *p = write_file("y.db", "notes\n", 6);
	struct dt_record r[] = {refused_open(1, 1, p), reopen(1, 2, p)};

	cr_assert_null(judge(r, 2).sqlite);
}

Test(sqlite_role, a_refused_rdwr_create_open_reopened_read_only_by_that_process_is_a_database)
{
	const char *p = file("gone.state");
	struct dt_record r[] = {refused_open(7, 10, p), reopen(7, 11, p)};
	struct dt_record d = judge(r, 2);

	assert_role(d, "db", "reopen");
	cr_assert_eq(d.sqlite_header, DT_SQLHDR_GONE);
	cr_assert_str_eq(dt_sqlite_header_note(d.sqlite_header),
	                 "header not checked: the database file no longer exists");
	char buf[256];
	cr_assert_str_eq(
	    dt_sqlite_evidence_text(&d, buf, sizeof(buf)),
	    "evidence: reopen; header not checked: the database file no longer exists");
}

Test(sqlite_role, a_reopen_by_another_process_or_before_the_refusal_is_not_sqlites_pattern)
{
	const char *p = file("data");
	struct dt_record other[] = {refused_open(7, 10, p), reopen(8, 11, p)};
	cr_assert_null(judge(other, 2).sqlite);

	dt_sqlite_judge_free(j);
	j = dt_sqlite_judge_new();
	struct dt_record before[] = {refused_open(7, 10, p), reopen(7, 9, p)};
	cr_assert_null(judge(before, 2).sqlite);
}

Test(sqlite_role, a_truncating_or_appending_open_is_not_sqlites_open)
{
	const char *p = file("log");
	struct dt_record r[] = {rec(DT_REC_DENIAL, 1, 1, "open64", O_RDWR | O_CREAT | O_APPEND, p),
	                        reopen(1, 2, p)};

	cr_assert_null(judge(r, 2).sqlite);
}

Test(sqlite_role, an_empty_file_needs_the_runs_pattern)
{
	const char *p = write_file("kanban.db", "", 0);
	struct dt_record alone[] = {refused_open(1, 1, p)};
	cr_assert_null(judge(alone, 1).sqlite);

	struct dt_record wal[] = {
	    refused_open(1, 1, p),
	    rec(DT_REC_DENIAL, 1, 2, "open64", O_RDWR | O_CREAT, file("kanban.db-wal"))};
	struct dt_record d = judge(wal, 2);
	assert_role(d, "db", "companion");
	cr_assert_eq(d.sqlite_header, DT_SQLHDR_EMPTY);
}

Test(sqlite_role, a_directory_or_a_mkdir_is_never_a_database)
{
	const char *dir = file("x.db");
	cr_assert_eq(mkdir(dir, 0755), 0);
	struct dt_record r[] = {refused_open(1, 1, dir), reopen(1, 2, dir)};
	cr_assert_null(judge(r, 2).sqlite);

	const char *p = file("new.db");
	struct dt_record m[] = {rec(DT_REC_DENIAL, 1, 1, "mkdir", -1, p), refused_open(1, 2, p),
	                        reopen(1, 3, p)};
	cr_assert_null(judge(m, 3).sqlite);
}

Test(sqlite_role, a_fifo_is_never_opened)
{
	/* opening a FIFO for reading would block: stat decides first */
	const char *p = file("pipe.db");
	cr_assert_eq(mkfifo(p, 0644), 0);
	struct dt_record r[] = {refused_open(1, 1, p), reopen(1, 2, p)};
	cr_assert_null(judge(r, 2).sqlite);
}

/* ---- companions --------------------------------------------------------------------------- */

Test(sqlite_role, a_journal_beside_a_database_has_its_databases_evidence)
{
	const char *db = write_file(".state", sqlite_header, sizeof(sqlite_header));
	char journal[600];
	snprintf(journal, sizeof(journal), "%s-journal", db);
	struct dt_record r[] = {rec(DT_REC_DENIAL, 1, 1, "open64", O_RDWR | O_CREAT, journal)};
	struct dt_record d = judge(r, 1);

	assert_role(d, "journal", "header");
	cr_assert_str_eq(dt_sqlite_suffix(d.sqlite), "-journal");
}

Test(sqlite_role, a_wal_of_a_database_gone_since_is_known_by_the_companion_itself)
{
	const char *wal = file("gone.kanban-wal");
	struct dt_record r[] = {rec(DT_REC_DENIAL, 1, 1, "unlink", -1, wal)};

	assert_role(judge(r, 1), "wal", "companion");
}

Test(sqlite_role, side_file_names_beside_a_non_sqlite_file_get_no_role)
{
	const char *db = write_file("y.db", "notes\n", 6);
	char shm[600];
	snprintf(shm, sizeof(shm), "%s-shm", db);
	struct dt_record r[] = {rec(DT_REC_DENIAL, 1, 1, "open64", O_RDWR | O_CREAT, shm)};

	cr_assert_null(judge(r, 1).sqlite);
}

Test(sqlite_role, a_lock_beside_a_known_database_is_sqlites_and_an_init_lock_is_not)
{
	const char *db = write_file("kanban.db", sqlite_header, sizeof(sqlite_header));
	char lock[600], init[600];
	snprintf(lock, sizeof(lock), "%s.lock", db);
	snprintf(init, sizeof(init), "%s.init.lock", db);
	struct dt_record l[] = {rec(DT_REC_DENIAL, 1, 1, "mkdir", -1, lock)};
	assert_role(judge(l, 1), "lock", "header");

	struct dt_record i[] = {rec(DT_REC_DENIAL, 1, 1, "open64", O_WRONLY | O_CREAT, init)};
	cr_assert_null(judge(i, 1).sqlite);
}

Test(sqlite_role, a_lock_alone_is_no_evidence_for_its_database)
{
	/* applications name their own lock files <db>.lock too */
	const char *lock = file("gone.db.lock");
	const char *db = file("gone.db");
	struct dt_record r[] = {rec(DT_REC_DENIAL, 1, 1, "open64", O_WRONLY | O_CREAT, lock),
	                        refused_open(1, 2, db)};
	cr_assert_null(judge(r, 2).sqlite);
	dt_sqlite_judge_record(j, &r[1]);
	cr_assert_null(r[1].sqlite);
}

Test(sqlite_role, sqlites_temp_files_are_known_by_name)
{
	struct dt_record r[] = {
	    rec(DT_REC_DENIAL, 1, 1, "open64", O_RDWR | O_CREAT, "/var/tmp/etilqs_3f2a9c")};

	assert_role(judge(r, 1), "temp", "name");
}

/* ---- was the database writable for the refused process? ---------------------------------- */

static struct dt_mount ro_root_rw_db[2] = {{"/", "ext4", 0}, {NULL, "ext4", 1}};

static struct dt_record process(long pid, struct dt_mount *m, size_t n)
{
	struct dt_record p;
	memset(&p, 0, sizeof(p));
	p.type = DT_REC_PROCESS;
	p.pid = pid;
	p.mounts = m;
	p.nmounts = n;
	return p;
}

Test(sqlite_role, a_database_the_process_opened_for_writing_was_writable)
{
	const char *db = file("w.db");
	char journal[600];
	snprintf(journal, sizeof(journal), "%s-journal", db);
	struct dt_record r[] = {rec(DT_REC_DENIAL, 5, 2, "open64", O_RDWR | O_CREAT, journal),
	                        rec(DT_REC_WRITE, 5, 1, "open64", O_RDWR | O_CREAT, db)};
	struct dt_record side = judge(r, 2);
	const char *why;

	cr_assert_eq(dt_sqlite_db_writable(j, &side, NULL, &why), 1);
	cr_assert_str_eq(why, "this process opened it for writing");
	side.pid = 6; /* another process: nothing known */
	cr_assert_eq(dt_sqlite_db_writable(j, &side, NULL, &why), -1);
}

Test(sqlite_role, a_database_the_process_was_refused_or_reopened_was_not_writable)
{
	const char *db = file("r.db");
	char wal[600];
	snprintf(wal, sizeof(wal), "%s-wal", db);
	struct dt_record r[] = {rec(DT_REC_DENIAL, 5, 3, "open64", O_RDWR | O_CREAT, wal),
	                        refused_open(5, 1, db), reopen(5, 2, db)};
	struct dt_record side = judge(r, 3);
	const char *why;

	cr_assert_str_eq(side.sqlite, "wal");
	cr_assert_eq(dt_sqlite_db_writable(j, &side, NULL, &why), 0);
}

Test(sqlite_role, a_read_write_mount_and_mode_speak_for_the_database_only_on_a_read_only_refusal)
{
	const char *db = write_file("m.db", sqlite_header, sizeof(sqlite_header));
	cr_assert_eq(chmod(db, 0644), 0);
	char journal[600];
	snprintf(journal, sizeof(journal), "%s-journal", db);
	struct dt_record r[] = {rec(DT_REC_DENIAL, 5, 1, "open64", O_RDWR | O_CREAT, journal)};
	struct dt_record side = judge(r, 1);
	ro_root_rw_db[1].path = db;
	struct dt_record p = process(5, ro_root_rw_db, 2);
	const char *why;

	side.uid = 0;
	cr_assert_eq(dt_sqlite_db_writable(j, &side, &p, &why), 1);
	cr_assert_str_eq(why, "its mount is read-write and its mode lets this process write it");
	/* the owner is this test's uid; another uid may not write a 0644 file */
	side.uid = (int64_t)getuid() + 4242;
	side.gid = 4242;
	cr_assert_eq(dt_sqlite_db_writable(j, &side, &p, &why), 0);
	/* EACCES on a writable mount: Landlock-like, so mount and mode prove nothing */
	side.uid = 0;
	side.err = EACCES;
	cr_assert_eq(dt_sqlite_db_writable(j, &side, &p, &why), -1);
	/* the database on the read-only mount */
	side.err = EROFS;
	struct dt_record ro = process(5, ro_root_rw_db, 1);
	cr_assert_eq(dt_sqlite_db_writable(j, &side, &ro, &why), 0);
}
