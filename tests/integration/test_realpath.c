/* SPDX-License-Identifier: MIT */
/*
 * The realpath a refusal records is the kernel's, also when the probe
 * reuses the name of a directory it resolved a moment before (it keeps a
 * few, keyed by mount and inode, for DT_DIRCACHE_NS: preload/resolve.c).
 * One directory bound at two places is two names; a directory renamed
 * since is found under its new name once the old answer has expired.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static char dir[512], a[600], b[600];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "%s/dir", dtt_tmpdir());
	snprintf(a, sizeof(a), "%s/a", dtt_tmpdir());
	snprintf(b, sizeof(b), "%s/b", dtt_tmpdir());
	mkdir(dir, 0755);
	mkdir(a, 0755);
	mkdir(b, 0755);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(realpath, .init = setup, .fini = teardown, .timeout = 120);

static const char *const enoent[] = {"--errnos", "ENOENT", NULL};

/* The realpath recorded for the refusal whose path ends in suffix. */
static const char *realpath_of(const struct dtt_run *r, const char *suffix)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *d = &r->recs[i];
		size_t n = d->p[0].path ? strlen(d->p[0].path) : 0;
		if (d->type == DT_REC_DENIAL && n >= strlen(suffix) &&
		    !strcmp(d->p[0].path + n - strlen(suffix), suffix))
			return d->p[0].realpath;
	}
	return NULL;
}

Test(realpath, one_directory_bound_at_two_places_is_recorded_under_each_name)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	char script[2048];
	snprintf(script, sizeof(script),
	         "true > %s/missing/x1 2>/dev/null; true > %s/missing/x2 2>/dev/null; true", a, b);
	const char *argv[] = {"bwrap",  "--bind", "/",  "/",     "--bind", dir,      a,
	                      "--bind", dir,      b,    "--dev", "/dev",   "--proc", "/proc",
	                      "--",     "sh",     "-c", script,  NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, enoent, argv, NULL), 0, "ring unreadable: %s", r.out);
	char want1[700], want2[700];
	snprintf(want1, sizeof(want1), "%s/missing/x1", a);
	snprintf(want2, sizeof(want2), "%s/missing/x2", b);
	const char *got1 = realpath_of(&r, "/x1"), *got2 = realpath_of(&r, "/x2");
	cr_assert_not_null(got1, "%zu records, status %d: %s", r.n, r.status, r.out);
	cr_assert_not_null(got2, "%s", r.out);
	cr_expect_str_eq(got1, want1);
	cr_expect_str_eq(got2, want2);
	dtt_free(&r);
}

Test(realpath, a_directory_renamed_between_two_refusals_is_found_under_its_new_name)
{
	char script[2048];
	snprintf(script, sizeof(script),
	         "true > %s/missing/x1 2>/dev/null; mv %s %s/moved; sleep 0.3; "
	         "true > %s/moved/missing/x2 2>/dev/null; true",
	         dir, dir, a, a);
	const char *argv[] = {"sh", "-c", script, NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, enoent, argv, NULL), 0, "ring unreadable: %s", r.out);
	char want1[700], want2[700];
	snprintf(want1, sizeof(want1), "%s/missing/x1", dir);
	snprintf(want2, sizeof(want2), "%s/moved/missing/x2", a);
	const char *got1 = realpath_of(&r, "/x1"), *got2 = realpath_of(&r, "/x2");
	cr_assert_not_null(got1, "%s", r.out);
	cr_assert_not_null(got2, "%s", r.out);
	cr_expect_str_eq(got1, want1);
	cr_expect_str_eq(got2, want2);
	dtt_free(&r);
}

/* Within the cache's lifetime, the directory is moved away and a symbolic
 * link to it takes its name: the old name still leads to the directory,
 * but is no longer its name. */
Test(realpath, a_directory_replaced_by_a_symlink_to_it_is_found_under_its_new_name)
{
	char script[2048];
	snprintf(script, sizeof(script),
	         "true > %s/missing/x1 2>/dev/null; mv %s %s/moved; ln -s %s/moved %s; "
	         "true > %s/missing/x2 2>/dev/null; true",
	         dir, dir, a, a, dir, dir);
	const char *argv[] = {"sh", "-c", script, NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, enoent, argv, NULL), 0, "ring unreadable: %s", r.out);
	char want1[700], want2[700];
	snprintf(want1, sizeof(want1), "%s/missing/x1", dir);
	snprintf(want2, sizeof(want2), "%s/moved/missing/x2", a);
	const char *got1 = realpath_of(&r, "/x1"), *got2 = realpath_of(&r, "/x2");
	cr_assert_not_null(got1, "%s", r.out);
	cr_assert_not_null(got2, "%s", r.out);
	cr_expect_str_eq(got1, want1);
	cr_expect_str_eq(got2, want2);
	dtt_free(&r);
}

/* ext4 and xfs give a new directory the inode number of one removed a
 * moment before: the same mount and inode then name another directory.
 * Each round refuses in A, replaces A by B (often the same inode) and
 * refuses in B, all within the cache's lifetime. */
Test(realpath, a_new_directory_that_reuses_a_removed_ones_inode_is_found_under_its_own_name)
{
	char script[4096];
	size_t len = 0;
	for (int i = 0; i < 6; i++)
		len += (size_t)snprintf(
		    script + len, sizeof(script) - len,
		    "mkdir %1$s/A%2$d; true > %1$s/A%2$d/missing/x%2$d 2>/dev/null; "
		    "ia=$(stat -c %%i %1$s/A%2$d); rmdir %1$s/A%2$d; "
		    "mkdir %1$s/B%2$d; true > %1$s/B%2$d/missing/y%2$d 2>/dev/null; "
		    "echo round %2$d $ia $(stat -c %%i %1$s/B%2$d); ",
		    dir, i);
	snprintf(script + len, sizeof(script) - len, "true");
	const char *argv[] = {"sh", "-c", script, NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, enoent, argv, NULL), 0, "ring unreadable: %s", r.out);
	int reused = 0;
	for (int i = 0; i < 6; i++) {
		char round[32], want[700], suffix[32];
		unsigned long ia = 0, ib = 1;
		snprintf(round, sizeof(round), "round %d ", i);
		const char *line = strstr(r.out, round);
		cr_assert_not_null(line, "%s", r.out);
		if (sscanf(line + strlen(round), "%lu %lu", &ia, &ib) != 2 || ia != ib)
			continue;
		reused++;
		snprintf(suffix, sizeof(suffix), "/y%d", i);
		snprintf(want, sizeof(want), "%s/B%d/missing/y%d", dir, i, i);
		const char *got = realpath_of(&r, suffix);
		cr_assert_not_null(got, "%s", r.out);
		cr_expect_str_eq(got, want, "round %d: inode %lu reused", i, ia);
	}
	dtt_free(&r);
	if (!reused)
		cr_skip_test("this filesystem gave no new directory a removed one's inode");
}

/* Without statx (kernels before 4.11, older container seccomp profiles)
 * the directory's name is read without the cache, and its owner and mode
 * still come from a plain stat. */
Test(realpath, without_statx_the_parent_directory_is_still_named_and_described)
{
	char script[2048], want[700];
	snprintf(script, sizeof(script), "true > %s/missing/x1 2>/dev/null; true", dir);
	const char *argv[] = {dtt_helper("nostatx"), "sh", "-c", script, NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, enoent, argv, NULL), 0, "ring unreadable: %s", r.out);
	snprintf(want, sizeof(want), "%s/missing/x1", dir);
	const struct dt_record *d = NULL;
	for (size_t i = 0; i < r.n && !d; i++)
		if (r.recs[i].type == DT_REC_DENIAL && r.recs[i].p[0].path &&
		    strstr(r.recs[i].p[0].path, "/x1"))
			d = &r.recs[i];
	cr_assert_not_null(d, "%zu records: %s", r.n, r.out);
	cr_expect_str_eq(d->p[0].realpath, want);
	cr_expect(d->p[0].st.valid & DT_SF_PARENT, "the parent's owner and mode are missing");
	cr_expect(S_ISDIR(d->p[0].st.parent_mode), "parent mode %o", d->p[0].st.parent_mode);
	cr_expect(d->p[0].st.valid & DT_SF_MOUNT);
	dtt_free(&r);
}

/* A descriptor's refusal names the file the descriptor is open on. When
 * that file has been unlinked since (SQLite's last connection deletes the
 * -wal another still holds), the kernel's name for it ends in
 * " (deleted)": recorded as such it would be a second path for one file.
 * The record keeps the name and says the file is unlinked. */
Test(realpath, a_descriptor_whose_file_was_unlinked_is_named_without_the_kernels_mark)
{
	int root = geteuid() == 0;
	if (root && access("/usr/bin/setpriv", X_OK) != 0)
		cr_skip_test("needs setpriv (util-linux) to leave root");
	cr_assert_eq(chmod(dtt_tmpdir(), 0755), 0);
	cr_assert_eq(chmod(dir, 0777), 0);
	/* fchown to root is refused to anyone else (EPERM) */
	const char *py = "import os, sys\n"
	                 "for name, drop in (('gone', 1), ('kept', 0)):\n"
	                 "    p = os.path.join(sys.argv[1], name)\n"
	                 "    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o600)\n"
	                 "    if drop:\n"
	                 "        os.unlink(p)\n"
	                 "    try:\n"
	                 "        os.fchown(fd, 0, 0)\n"
	                 "    except PermissionError:\n"
	                 "        print('refused', name)\n";
	const char *argv[] = {"setpriv",
	                      "--reuid=65534",
	                      "--regid=65534",
	                      "--clear-groups",
	                      "/usr/bin/python3",
	                      "-c",
	                      py,
	                      dir,
	                      NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, root ? argv : argv + 4, NULL), 0, "ring unreadable: %s",
	             r.out);
	cr_assert(strstr(r.out, "refused gone") && strstr(r.out, "refused kept"), "%s", r.out);
	char gone[700], kept[700];
	snprintf(gone, sizeof(gone), "%s/gone", dir);
	snprintf(kept, sizeof(kept), "%s/kept", dir);
	const struct dt_record *g = dtt_find(&r, DT_REC_DENIAL, "fchown", "/gone");
	const struct dt_record *k = dtt_find(&r, DT_REC_DENIAL, "fchown", "/kept");
	cr_assert_not_null(g, "no fchown refusal named .../gone: %zu records: %s", r.n, r.out);
	cr_assert_not_null(k, "%s", r.out);
	cr_expect_str_eq(g->p[0].realpath, gone);
	cr_expect_str_eq(g->p[0].abspath, gone);
	cr_expect(g->p[0].st.valid & DT_SF_UNLINKED, "the unlinked file is not marked so");
	cr_expect_str_eq(k->p[0].realpath, kept);
	cr_expect_not(k->p[0].st.valid & DT_SF_UNLINKED, "a linked file is marked unlinked");
	dtt_free(&r);
}
