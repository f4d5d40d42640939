// SPDX-License-Identifier: MIT
/*
 * Tests for tracer/diagnose/findings.c: the report's groups regrouped into findings,
 * one per fix, keyed by (expected root, cause, grant, subject). The groups
 * are built by hand, as plain data: findings read nothing else.
 *
 *   make build/unit/test_findings && ./build/unit/test_findings --jobs 2
 */
#include <criterion/criterion.h>
#include <string.h>

#include "findings.h"
#include "report.h"

static struct dt_root data_root = {.path = "/srv/data", .source = "--root"};
static struct dt_root out_root = {.path = "/srv/out", .source = "--root"};

static struct dt_report_group g[16];
static size_t ng;
static struct dt_findings fs;

static void teardown(void)
{
	dt_findings_free(&fs);
	memset(g, 0, sizeof(g));
	ng = 0;
}

TestSuite(findings, .fini = teardown);

static struct dt_report_group *add(const char *path, enum dt_cause cause,
                                   const struct dt_root *root, int granted, const char *subject,
                                   uint64_t count, uint64_t first_ns)
{
	struct dt_report_group *x = &g[ng++];
	x->path = path;
	x->v.cause = cause;
	x->v.root = root;
	x->v.granted = granted;
	snprintf(x->v.subject, sizeof(x->v.subject), "%s", subject);
	snprintf(x->v.reason, sizeof(x->v.reason), "reason for %s", path);
	snprintf(x->v.advice, sizeof(x->v.advice), "advice for %s", subject);
	x->count = count;
	x->first_ns = first_ns;
	x->last_ns = first_ns + count;
	return x;
}

static void build(void)
{
	cr_assert_eq(dt_findings_build(g, ng, &fs), 0);
}

Test(findings, a_database_and_its_side_files_under_one_ungranted_root_are_one_finding)
{
	add("/srv/data/k.db", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 20, 100);
	add("/srv/data/k.db-wal", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 30, 101);
	add("/srv/data/k.db-wal", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 10, 102);
	add("/srv/data/k.db-shm", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 10, 103);
	add("/srv/data/k.db-shm", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 10, 104);
	build();

	cr_assert_eq(fs.n, 1);
	const struct dt_finding *f = &fs.v[0];
	cr_assert_eq(f->ngroups, 5);
	cr_assert_eq(f->count, 80);
	cr_assert_eq(f->root, &data_root);
	cr_assert_eq(f->granted, 0);
	cr_assert_str_eq(f->title, "/srv/data not granted to the sandbox");
	/* groups most refusals first: the -wal's 30 */
	cr_assert_eq(f->groups[0], 1);
	cr_assert_eq(f->groups[1], 0);
	/* the words of the earliest refusal: the database's */
	cr_assert_str_eq(f->reason, "reason for /srv/data/k.db");
	cr_assert_eq(f->first_ns, 100);
	cr_assert_eq(f->last_ns, 131); /* the -wal's 30 from 101 */
}

Test(findings, another_root_another_cause_or_another_grant_is_another_finding)
{
	add("/srv/data/a", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 1, 100);
	add("/srv/out/b", DT_CAUSE_ROOT_NOT_GRANTED, &out_root, 0, "/srv/out", 1, 101);
	add("/srv/out/c.db-wal", DT_CAUSE_SQLITE_SIDE_FILE, &out_root, 0, "/srv/out", 1, 102);
	add("/srv/out/d", DT_CAUSE_ROOT_NOT_GRANTED, &out_root, -1, "/srv/out", 1, 103);
	build();

	cr_assert_eq(fs.n, 4);
	for (size_t i = 0; i < fs.n; i++)
		cr_assert_eq(fs.v[i].ngroups, 1);
}

Test(findings, file_permissions_split_by_the_directory_whose_bits_refused)
{
	add("/srv/a/x", DT_CAUSE_FILE_PERMISSIONS, &data_root, -1, "/srv/a", 3, 100);
	add("/srv/a/y", DT_CAUSE_FILE_PERMISSIONS, &data_root, -1, "/srv/a", 2, 101);
	add("/srv/b/z", DT_CAUSE_FILE_PERMISSIONS, &data_root, -1, "/srv/b", 1, 102);
	build();

	cr_assert_eq(fs.n, 2);
	cr_assert_eq(fs.v[0].ngroups, 2);
	cr_assert_str_eq(fs.v[0].subject, "/srv/a");
	cr_assert_str_eq(fs.v[0].title, "/srv/a: its mode bits refuse the worker's user");
	cr_assert_str_eq(fs.v[0].advice, "advice for /srv/a");
	cr_assert_eq(fs.v[1].ngroups, 1);
	cr_assert_str_eq(fs.v[1].subject, "/srv/b");
}

Test(findings, most_refusals_first_then_earliest)
{
	add("/srv/out/late", DT_CAUSE_ROOT_NOT_GRANTED, &out_root, 0, "/srv/out", 2, 300);
	add("/srv/data/x", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 1, 200);
	add("/srv/data/y", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 4, 250);
	add("/elsewhere/z", DT_CAUSE_OUTSIDE_ROOTS, NULL, -1, "/elsewhere", 2, 100);
	build();

	cr_assert_eq(fs.n, 3);
	cr_assert_eq(fs.v[0].root, &data_root);
	cr_assert_eq(fs.v[0].count, 5);
	/* two findings of 2 refusals: the earlier first */
	cr_assert_null(fs.v[1].root);
	cr_assert_str_eq(fs.v[1].title, "writes to /elsewhere, outside every root");
	cr_assert_eq(fs.v[2].root, &out_root);
}

Test(findings, one_intermittent_group_makes_the_finding_intermittent)
{
	add("/srv/a/k.db-wal", DT_CAUSE_FILE_PERMISSIONS, &data_root, -1, "/srv/a", 20, 100);
	struct dt_report_group *x =
	    add("/srv/a/k.db-shm", DT_CAUSE_FILE_PERMISSIONS, &data_root, -1, "/srv/a", 1, 150);
	x->intermittent = 1;
	x->diff.computed = 1;
	snprintf(x->diff.line, sizeof(x->diff.line), "the uid was 7 on ...");
	x->next = "SQLite could not delete it";
	build();

	cr_assert_eq(fs.n, 1);
	cr_assert(fs.v[0].intermittent);
	cr_assert_eq(fs.v[0].diff, &x->diff);
	/* the earliest group said nothing of what came next: a later one's */
	cr_assert_str_eq(fs.v[0].next, "SQLite could not delete it");
}

Test(findings, a_finding_without_an_intermittent_group_is_not_intermittent)
{
	add("/srv/data/a", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 1, 100);
	add("/srv/data/b", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 1, 101);
	build();

	cr_assert_not(fs.v[0].intermittent);
	cr_assert_null(fs.v[0].diff);
}

Test(findings, hidden_groups_belong_to_no_finding)
{
	add("/srv/data/a", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 1, 100);
	add("/srv/data/x.db", DT_CAUSE_LOCK_CONTENTION, &data_root, 0, "", 9, 90)->hidden = 1;
	build();

	cr_assert_eq(fs.n, 1);
	cr_assert_eq(fs.v[0].ngroups, 1);
	cr_assert_eq(fs.v[0].groups[0], 0);
}

Test(findings, no_groups_no_findings)
{
	build();
	cr_assert_eq(fs.n, 0);
}

Test(findings, problems_phrase_has_the_plural_right)
{
	char b[32];
	cr_assert_str_eq(dt_problems_phrase(0, b, sizeof(b)), "no problems");
	cr_assert_str_eq(dt_problems_phrase(1, b, sizeof(b)), "1 problem");
	cr_assert_str_eq(dt_problems_phrase(2, b, sizeof(b)), "2 problems");
}

/* Python lines (report.h's py_site): a finding sums its groups' refusals
 * by line, most first, keeps DT_FINDING_SITES of them and says there were
 * more; the phrase names the file by its last component. */
Test(findings, a_finding_counts_its_refusals_by_python_line_most_first)
{
	static const struct dt_py_frame save = {"/srv/hermes/worker.py", "save_task", 3};
	static const struct dt_py_frame save2 = {"/srv/hermes/worker.py", "save_task", 3};
	static const struct dt_py_frame claim = {"/srv/hermes/worker.py", "claim", 9};
	add("/srv/data/k.db", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 4, 100)
	    ->py_site = &claim;
	add("/srv/data/k.db-wal", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 10, 101)
	    ->py_site = &save;
	add("/srv/data/k.db-shm", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 6, 102)
	    ->py_site = &save2; /* the same line, another record's copy */
	add("/srv/data/k.db-journal", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 1,
	    103); /* no Python frames */
	build();
	cr_assert_eq(fs.n, 1);
	const struct dt_finding *f = &fs.v[0];
	cr_assert_eq(f->nsites, 2);
	cr_expect_not(f->more_sites);
	cr_expect_str_eq(f->sites[0].at->func, "save_task");
	cr_expect_eq(f->sites[0].count, 16);
	cr_expect_str_eq(f->sites[1].at->func, "claim");
	cr_expect_eq(f->sites[1].count, 4);
	char buf[256];
	cr_expect_str_eq(dt_py_site_phrase(&f->sites[0], buf, sizeof(buf)),
	                 "refused in save_task at worker.py:3, 16 times");
	cr_expect_str_eq(dt_py_site_phrase(&f->sites[1], buf, sizeof(buf)),
	                 "refused in claim at worker.py:9, 4 times");
}

Test(findings, a_finding_from_more_python_lines_than_it_lists_says_so)
{
	static struct dt_py_frame at[DT_FINDING_SITES + 1];
	for (unsigned i = 0; i <= DT_FINDING_SITES; i++) {
		at[i] = (struct dt_py_frame){"w.py", "f", i + 1};
		add("/srv/data/k.db", DT_CAUSE_ROOT_NOT_GRANTED, &data_root, 0, "/srv/data", 1,
		    100 + i)
		    ->py_site = &at[i];
	}
	build();
	cr_assert_eq(fs.n, 1);
	cr_expect_eq(fs.v[0].nsites, DT_FINDING_SITES);
	cr_expect(fs.v[0].more_sites);
}
