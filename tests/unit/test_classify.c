// SPDX-License-Identifier: MIT
/*
 * Tests for tracer/diagnose/classify.c: one refusal + its process record + the roots
 * -> one cause. Each cause has a minimal case that yields it, and the
 * precedence written at the top of classify.c is checked pairwise: a case
 * that satisfies two rules must get the earlier one.
 *
 * Records are built by hand. Every path lives under /nonexistent-dt so that
 * dt_roots_add finds no realpath for the roots on this machine.
 *
 * Build and run from the repository root:
 *   make build/unit/test_classify && ./build/unit/test_classify --jobs 2
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "classify.h"
#include "classify_cache.h"
#include "roots.h"

static struct dt_rootset rs;

static void teardown(void)
{
	dt_rootset_free(&rs);
}

TestSuite(classify, .fini = teardown);
TestSuite(proc_mounts);

/* ---- helpers --------------------------------------------------------------- */

#define D "/nonexistent-dt"

/* A write refusal of path by uid/gid 1000, no stat facts, no process. */
static struct dt_record denial(const char *op, int err, const char *path)
{
	struct dt_record d;

	memset(&d, 0, sizeof(d));
	d.type = DT_REC_DENIAL;
	d.pid = 4242;
	d.comm = "worker";
	d.op = op;
	d.err = err;
	d.writes = 1;
	d.uid = 1000;
	d.gid = 1000;
	d.ngroups = -1; /* not recorded, as in older rings */
	d.p[0].path = path;
	d.p[0].abspath = path;
	d.p[0].realpath = path;
	return d;
}

/* The target does not exist; its parent directory is pmode owned by
 * puid:pgid on a mount that is read-only or not. */
static void missing_in_dir(struct dt_record *d, unsigned pmode, unsigned puid, unsigned pgid,
                           int ro)
{
	d->p[0].has_st = 1;
	d->p[0].st.valid = DT_SF_PARENT | DT_SF_MOUNT;
	d->p[0].st.parent_mode = S_IFDIR | pmode;
	d->p[0].st.parent_uid = puid;
	d->p[0].st.parent_gid = pgid;
	d->p[0].st.mount_flags = ro ? ST_RDONLY : 0;
}

/* The target exists with mode owned by uid:gid, on a rw or ro mount. */
static void existing_file(struct dt_record *d, unsigned mode, unsigned uid, unsigned gid, int ro)
{
	d->p[0].has_st = 1;
	d->p[0].st.valid = DT_SF_EXISTS | DT_SF_MOUNT;
	d->p[0].st.mode = S_IFREG | mode;
	d->p[0].st.uid = uid;
	d->p[0].st.gid = gid;
	d->p[0].st.mount_flags = ro ? ST_RDONLY : 0;
}

static struct dt_record process(struct dt_mount *mounts, size_t n)
{
	struct dt_record p;

	memset(&p, 0, sizeof(p));
	p.type = DT_REC_PROCESS;
	p.pid = 4242;
	p.mounts = mounts;
	p.nmounts = n;
	return p;
}

#define NMOUNTS(a) (sizeof(a) / sizeof((a)[0]))

static struct dt_root *root(const char *path, int granted, const char *knob)
{
	struct dt_root *r = dt_roots_add(&rs, path, DT_ROOT_EXPLICIT, "--root", knob);

	cr_assert_not_null(r);
	r->granted = granted;
	return r;
}

static struct dt_verdict classify(const struct dt_record *d, const struct dt_record *proc,
                                  int db_writable)
{
	struct dt_classify_ctx ctx = {db_writable, NULL};
	struct dt_verdict v;

	memset(&v, 0x5a, sizeof(v)); /* dt_classify must fill every field */
	dt_classify(d, proc, &rs, &ctx, &v);
	return v;
}

#define assert_cause(v, c)                                                                         \
	cr_assert_eq((v).cause, (c), "cause %s, expected %s (reason: %s)",                         \
	             dt_cause_name((v).cause), dt_cause_name(c), (v).reason)

#define assert_has(s, sub) cr_assert_not_null(strstr((s), (sub)), "\"%s\" lacks \"%s\"", (s), (sub))

/* ---- the vocabulary ------------------------------------------------------------ */

Test(classify, cause_names_are_the_documented_vocabulary)
{
	static const char *const want[DT_CAUSE_COUNT] = {
	    "injected",       "setid-lost",       "lock-contention",  "cross-mount",
	    "landlock-refer", "immutable-file",   "file-permissions", "read-only-sandbox",
	    "protected-path", "symlink-mismatch", "sqlite-side-file", "root-not-granted",
	    "outside-roots",  "unknown",
	};

	for (int c = 0; c < DT_CAUSE_COUNT; c++) {
		cr_assert_str_eq(dt_cause_name((enum dt_cause)c), want[c]);
		cr_assert_gt(strlen(dt_cause_meaning((enum dt_cause)c)), 10);
	}
	cr_assert_str_eq(dt_cause_name(DT_CAUSE_COUNT), "unknown");
	cr_assert_str_eq(dt_cause_meaning((enum dt_cause)99), dt_cause_meaning(DT_CAUSE_UNKNOWN));
}

Test(classify, a_permission_refusal_after_a_setid_exec_without_privilege_is_setid_lost)
{
	struct dt_record d = denial("openat", EACCES, D "/root/secret");
	struct dt_record e;
	memset(&e, 0, sizeof(e));
	e.type = DT_REC_EXEC;
	e.exe = "/usr/bin/suid";
	e.setid_lost = 1;
	struct dt_classify_ctx ctx = {0, NULL, &e};
	struct dt_verdict v;
	dt_classify(&d, NULL, &rs, &ctx, &v);
	assert_cause(v, DT_CAUSE_SETID_LOST);
	/* a read-only mount refuses the privileged program too */
	d.err = EROFS;
	dt_classify(&d, NULL, &rs, &ctx, &v);
	cr_assert_neq(v.cause, DT_CAUSE_SETID_LOST);
}

Test(classify, lock_ops_are_fcntl_fcntl64_and_flock_only)
{
	cr_assert(dt_op_is_lock("fcntl"));
	cr_assert(dt_op_is_lock("fcntl64"));
	cr_assert(dt_op_is_lock("flock"));
	cr_assert_not(dt_op_is_lock("lockf"));
	cr_assert_not(dt_op_is_lock("openat"));
	cr_assert_not(dt_op_is_lock("fcntl6"));
	cr_assert_not(dt_op_is_lock(NULL));
}

/* ---- 1. injected ----------------------------------------------------------------- */

Test(classify, injected_record_is_injected)
{
	struct dt_record d = denial("openat", EACCES, D "/inj/f");
	d.injected = 1;
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_INJECTED);
	assert_has(v.reason, "--deny");
	assert_has(v.reason, "EACCES");
	assert_has(v.advice, "nothing to change in the sandbox");
}

Test(classify, injected_beats_every_other_rule)
{
	/* a lock call, failing with EACCES: lock-contention but for the flag */
	struct dt_record lock = denial("flock", EACCES, D "/inj/lock");
	lock.injected = 1;
	assert_cause(classify(&lock, NULL, 0), DT_CAUSE_INJECTED);

	/* mode bits deny on a rw mount: file-permissions but for the flag */
	struct dt_record fp = denial("openat", EACCES, D "/inj/fp");
	missing_in_dir(&fp, 0755, 0, 0, 0);
	fp.injected = 1;
	assert_cause(classify(&fp, NULL, 0), DT_CAUSE_INJECTED);

	/* a read-only sandbox and an ungranted root: also injected */
	struct dt_mount m[] = {{"/", "ext4", 0}};
	struct dt_record p = process(m, NMOUNTS(m));
	root(D "/inj", 0, NULL);
	struct dt_record sb = denial("mkdir", EROFS, D "/inj/dir");
	sb.injected = 1;
	struct dt_verdict v = classify(&sb, &p, 0);
	assert_cause(v, DT_CAUSE_INJECTED);
}

/* ---- 2. lock-contention --------------------------------------------------------------- */

Test(classify, failed_lock_call_is_lock_contention)
{
	struct dt_record a = denial("fcntl", EAGAIN, D "/db/app.db");
	struct dt_record b = denial("flock", EACCES, D "/db/app.db");
	struct dt_record c = denial("fcntl64", EACCES, D "/db/app.db");

	assert_cause(classify(&a, NULL, 0), DT_CAUSE_LOCK_CONTENTION);
	assert_cause(classify(&b, NULL, 0), DT_CAUSE_LOCK_CONTENTION);
	struct dt_verdict v = classify(&c, NULL, 0);
	assert_cause(v, DT_CAUSE_LOCK_CONTENTION);
	assert_has(v.reason, D "/db/app.db");
	assert_has(v.reason, "EACCES");
}

Test(classify, lock_call_with_a_sandbox_errno_is_not_lock_contention)
{
	/* EROFS from fcntl is not someone else holding the lock */
	struct dt_record d = denial("fcntl", EROFS, D "/db/app.db");
	struct dt_verdict v = classify(&d, NULL, 0);

	cr_assert_neq(v.cause, DT_CAUSE_LOCK_CONTENTION);
	assert_cause(v, DT_CAUSE_OUTSIDE_ROOTS);
}

Test(classify, eagain_from_a_non_lock_call_is_not_lock_contention)
{
	struct dt_record d = denial("openat", EAGAIN, D "/db/app.db");

	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_LOCK_CONTENTION);
}

Test(classify, lock_contention_beats_file_permissions_facts)
{
	/* a lock refused on a rw mount where the file is not writable by
	 * this uid: still contention, never "fix the mode bits" */
	struct dt_record d = denial("fcntl", EACCES, D "/db/app.db");
	existing_file(&d, 0444, 0, 0, 0);
	d.p[0].st.valid |= DT_SF_PARENT;
	d.p[0].st.parent_mode = S_IFDIR | 0755;

	assert_cause(classify(&d, NULL, 0), DT_CAUSE_LOCK_CONTENTION);
}

/* ---- 3. file-permissions ----------------------------------------------------------------- */

Test(classify, create_in_root_owned_0755_dir_is_file_permissions)
{
	struct dt_record d = denial("openat", EACCES, D "/srv/out/new.txt");
	missing_in_dir(&d, 0755, 0, 0, 0);
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_FILE_PERMISSIONS);
	assert_has(v.reason, "0755");
	assert_has(v.reason, "uid 1000");
	assert_has(v.reason, "read-write mount");
	/* the directory is what needs fixing, not the missing file */
	assert_has(v.advice, "chown/chmod " D "/srv/out)");
	/* and the directory is what its finding is keyed by */
	cr_assert_str_eq(v.subject, D "/srv/out");
}

Test(classify, write_to_readonly_mode_file_is_file_permissions_naming_the_file)
{
	struct dt_record d = denial("openat", EACCES, D "/srv/out/conf.txt");
	existing_file(&d, 0644, 0, 0, 0);
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_FILE_PERMISSIONS);
	assert_has(v.reason, "the file is mode 0644");
	assert_has(v.advice, "chown/chmod " D "/srv/out/conf.txt)");
	cr_assert_str_eq(v.subject, D "/srv/out/conf.txt");
}

/* The demo's race, seen once in twenty runs: a root writer created the
 * -wal file between an unprivileged open(O_CREAT) refused for the
 * directory and the probe's look at it, which found a file that would
 * have allowed the open. */
Test(classify, a_create_refused_for_the_directory_of_a_file_made_since_is_file_permissions)
{
	struct dt_record d = denial("open64", EACCES, D "/srv/out/kanban.db-wal");
	existing_file(&d, 0666, 0, 0, 0);
	d.p[0].st.valid |= DT_SF_PARENT;
	d.p[0].st.parent_mode = S_IFDIR | 0755;
	d.has_flags = 1;
	d.flags = O_RDWR | O_CREAT;
	struct dt_verdict v = classify(&d, NULL, 0);
	assert_cause(v, DT_CAUSE_FILE_PERMISSIONS);
	assert_has(v.reason, "did not exist at the call");
	assert_has(v.reason, "directory, which is mode 0755");

	/* without O_CREAT the file was there: the mode bits allow, not ours */
	d.flags = O_RDWR;
	v = classify(&d, NULL, 0);
	cr_expect_neq(v.cause, DT_CAUSE_FILE_PERMISSIONS, "%s", v.reason);
	/* nor when the directory would have allowed the create */
	d.flags = O_RDWR | O_CREAT;
	d.p[0].st.parent_mode = S_IFDIR | 0777;
	v = classify(&d, NULL, 0);
	cr_expect_neq(v.cause, DT_CAUSE_FILE_PERMISSIONS, "%s", v.reason);
}

Test(classify, chmod_of_someone_elses_file_is_file_permissions)
{
	struct dt_record d = denial("fchmodat", EPERM, D "/srv/out/conf.txt");
	existing_file(&d, 0666, 0, 0, 0);
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_FILE_PERMISSIONS);
	assert_has(v.reason, "belongs to uid 0");

	/* the owner may chmod: not a mode problem */
	d.p[0].st.uid = 1000;
	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);
}

Test(classify, root_uid_is_never_file_permissions)
{
	struct dt_record d = denial("openat", EACCES, D "/srv/out/new.txt");
	missing_in_dir(&d, 0755, 1, 1, 0);
	d.uid = 0;
	d.gid = 0;
	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);

	struct dt_record f = denial("openat", EACCES, D "/srv/out/conf.txt");
	existing_file(&f, 0444, 1, 1, 0);
	f.uid = 0;
	cr_assert_neq(classify(&f, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);
}

Test(classify, group_writable_dir_of_another_group_gets_the_benefit_of_the_doubt)
{
	/* 0775 root:50, process gid 1000: a supplementary group may allow it */
	struct dt_record d = denial("mkdir", EACCES, D "/srv/shared/sub");
	missing_in_dir(&d, 0775, 0, 50, 0);
	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);

	/* the same directory without the group write bit does deny */
	missing_in_dir(&d, 0755, 0, 50, 0);
	assert_cause(classify(&d, NULL, 0), DT_CAUSE_FILE_PERMISSIONS);
}

Test(classify, dir_writable_through_the_process_group_is_not_file_permissions)
{
	struct dt_record d = denial("unlink", EACCES, D "/srv/team/f");
	missing_in_dir(&d, 0770, 0, 1000, 0);
	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);

	/* group bits r-x only, the process's own group: denied */
	missing_in_dir(&d, 0757, 0, 1000, 0);
	assert_cause(classify(&d, NULL, 0), DT_CAUSE_FILE_PERMISSIONS);
}

Test(classify, owner_bits_decide_for_the_owner)
{
	/* owned by the process's uid, owner r-x: denied though others may write */
	struct dt_record d = denial("mkdir", EACCES, D "/home/u/locked/sub");
	missing_in_dir(&d, 0577, 1000, 1000, 0);
	assert_cause(classify(&d, NULL, 0), DT_CAUSE_FILE_PERMISSIONS);

	missing_in_dir(&d, 0700, 1000, 1000, 0);
	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);
}

Test(classify, dir_needs_both_write_and_search)
{
	/* others: -w- (no x): creating an entry still fails */
	struct dt_record d = denial("mkdir", EACCES, D "/srv/drop/sub");
	missing_in_dir(&d, 0752, 0, 0, 0);
	assert_cause(classify(&d, NULL, 0), DT_CAUSE_FILE_PERMISSIONS);

	missing_in_dir(&d, 0753, 0, 0, 0);
	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);
}

/* /tmp: 01777 root:root; removing another user's file there is EPERM */
static struct dt_record sticky_unlink(unsigned file_uid, unsigned dir_uid)
{
	struct dt_record d = denial("unlinkat", EPERM, "/tmp/dt-other-users-file");
	d.p[0].has_st = 1;
	d.p[0].st.valid = DT_SF_EXISTS | DT_SF_PARENT | DT_SF_MOUNT;
	d.p[0].st.mode = S_IFREG | 0644;
	d.p[0].st.uid = file_uid;
	d.p[0].st.gid = file_uid;
	d.p[0].st.parent_mode = S_IFDIR | 01777;
	d.p[0].st.parent_uid = dir_uid;
	d.p[0].st.parent_gid = dir_uid;
	return d;
}

Test(classify, removing_another_users_file_from_a_sticky_dir_is_file_permissions)
{
	struct dt_record d = sticky_unlink(1001, 0);
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_FILE_PERMISSIONS);
	assert_has(v.reason, "sticky (mode 1777)");
	assert_has(v.reason, "uid 1001");

	d.op = "renameat2";
	assert_cause(classify(&d, NULL, 0), DT_CAUSE_FILE_PERMISSIONS);
}

Test(classify, sticky_dir_lets_the_file_or_dir_owner_remove)
{
	struct dt_record own_file = sticky_unlink(1000, 0);
	cr_assert_neq(classify(&own_file, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);

	struct dt_record own_dir = sticky_unlink(1001, 1000);
	cr_assert_neq(classify(&own_dir, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);
}

Test(classify, sticky_dir_does_not_restrict_creating)
{
	struct dt_record d = sticky_unlink(1001, 0);
	d.op = "mkdirat";
	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);
}

Test(classify, sticky_dir_record_without_op_does_not_crash)
{
	struct dt_record d = sticky_unlink(1001, 0);
	d.op = NULL;
	struct dt_verdict v = classify(&d, NULL, 0);

	cr_assert_lt((int)v.cause, DT_CAUSE_COUNT);
}

Test(classify, recorded_supplementary_groups_decide_the_group_bits)
{
	struct dt_record d = denial("mkdir", EACCES, D "/srv/shared/sub");
	missing_in_dir(&d, 0775, 0, 50, 0);
	d.ngroups = 1;
	d.groups[0] = 60;
	assert_cause(classify(&d, NULL, 0), DT_CAUSE_FILE_PERMISSIONS);
	d.groups[0] = 50;
	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);
}

/* Issue 11, item 2: a read (not only a write) refused by the mode bits. */
Test(classify, read_of_an_unreadable_file_is_file_permissions)
{
	root(D "/secret", -1, NULL);
	struct dt_record d = denial("open", EACCES, D "/secret/f");
	existing_file(&d, 0600, 0, 0, 0);
	d.writes = 0;
	d.has_flags = 1;
	d.flags = O_RDONLY;
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_FILE_PERMISSIONS);
	assert_has(v.reason, "read (r)");
}

Test(classify, a_directory_without_search_for_the_uid_is_file_permissions)
{
	/* the probe could not reach the parent: D/gnupg (0700 root) stops
	 * uid 1000 on the way */
	struct dt_record d = denial("openat", EACCES, D "/gnupg/pubring.kbx");
	d.p[0].has_st = 1;
	d.p[0].realpath = NULL;
	d.p[0].search_dir = D "/gnupg";
	d.p[0].search.mode = 040700;
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_FILE_PERMISSIONS);
	assert_has(v.reason, "may not search (x) " D "/gnupg");
	assert_has(v.advice, "chmod " D "/gnupg");

	/* the parent itself without x for the uid */
	struct dt_record e = denial("openat", EACCES, D "/dir/f");
	existing_file(&e, 0644, 1000, 1000, 0);
	e.p[0].st.valid &= ~DT_SF_EXISTS; /* stat could not look into it */
	e.p[0].st.valid |= DT_SF_PARENT;
	e.p[0].st.parent_mode = 040744;
	e.writes = 0;
	assert_cause(classify(&e, NULL, 0), DT_CAUSE_FILE_PERMISSIONS);
}

/* No read-only mount, no seccomp filter, no no_new_privs (so no Landlock):
 * no sandbox cause may be given, even for a path under an expected root. */
Test(classify, no_sandbox_never_gets_a_sandbox_cause)
{
	struct dt_mount m[] = {{"/", "ext4", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	p.has_seccomp = 1;
	p.seccomp = 0;
	p.no_new_privs = 0;
	root(D "/secret", -1, NULL);
	struct dt_record d = denial("open", EACCES, D "/secret/f");
	existing_file(&d, 0644, 0, 0, 0); /* the bits allow it: ACLs, attrs, LSM */
	d.writes = 0;
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_UNKNOWN);
	assert_has(v.reason, "no sandbox");
	cr_assert_eq(v.granted, -1);

	existing_file(&d, 0600, 0, 0, 0);
	v = classify(&d, &p, 0);
	assert_cause(v, DT_CAUSE_FILE_PERMISSIONS);
	assert_has(v.reason, "no sandbox");

	/* with no_new_privs a Landlock domain is possible: not sure */
	p.no_new_privs = 1;
	existing_file(&d, 0644, 0, 0, 0);
	cr_assert_neq(classify(&d, &p, 0).cause, DT_CAUSE_UNKNOWN);
}

Test(classify, readonly_mount_is_never_file_permissions)
{
	struct dt_record d = denial("openat", EACCES, D "/srv/out/new.txt");
	missing_in_dir(&d, 0755, 0, 0, 1);
	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);
}

Test(classify, unknown_mount_flags_are_never_file_permissions)
{
	struct dt_record d = denial("openat", EACCES, D "/srv/out/new.txt");
	missing_in_dir(&d, 0755, 0, 0, 0);
	d.p[0].st.valid &= ~DT_SF_MOUNT;
	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);
}

Test(classify, erofs_is_never_file_permissions)
{
	struct dt_record d = denial("openat", EROFS, D "/srv/out/new.txt");
	missing_in_dir(&d, 0755, 0, 0, 0);
	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_FILE_PERMISSIONS);
}

Test(classify, file_permissions_beats_root_not_granted)
{
	root(D "/proj", 0, "codex --add-dir " D "/proj");
	struct dt_record d = denial("openat", EACCES, D "/proj/out/new.txt");
	missing_in_dir(&d, 0755, 0, 0, 0);
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_FILE_PERMISSIONS);
	/* the root is still named */
	cr_assert_not_null(v.root);
	cr_assert_str_eq(v.root->path, D "/proj");
	cr_assert_eq(v.granted, 0);
}

Test(classify, file_permissions_beats_read_only_sandbox)
{
	/* the process record says "/" ro and nothing rw, but the stat facts
	 * say rw mount and mode bits that deny: the mode bits decide */
	struct dt_mount m[] = {{"/", "ext4", 0}};
	struct dt_record p = process(m, NMOUNTS(m));
	struct dt_record d = denial("openat", EACCES, D "/srv/out/new.txt");
	missing_in_dir(&d, 0755, 0, 0, 0);

	assert_cause(classify(&d, &p, 0), DT_CAUSE_FILE_PERMISSIONS);
}

/* ---- 4. read-only-sandbox ------------------------------------------------------------------ */

Test(classify, readonly_root_and_no_writable_mount_is_read_only_sandbox)
{
	struct dt_mount m[] = {
	    {"/", "ext4", 0},
	    {"/proc", "proc", 1},
	    {"/dev", "devtmpfs", 1},
	    {"/dev/shm", "tmpfs", 1},
	    {"/sys/fs/cgroup", "cgroup2", 1},
	};
	struct dt_record p = process(m, NMOUNTS(m));
	struct dt_record d = denial("openat", EROFS, D "/work/out.txt");
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_READ_ONLY_SANDBOX);
	/* no Codex in the ring: bubblewrap's words, not Codex's */
	cr_assert_null(strstr(v.advice, "workspace-write"), "%s", v.advice);
	assert_has(v.advice, "--bind " D "/work " D "/work");
}

Test(classify, read_only_sandbox_names_the_codex_mode)
{
	struct dt_mount m[] = {{"/", "ext4", 0}};
	struct dt_record p = process(m, NMOUNTS(m));
	struct dt_record d = denial("openat", EROFS, D "/work/out.txt");
	rs.codex_sandbox_mode = strdup("read-only");
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_READ_ONLY_SANDBOX);
	assert_has(v.reason, "codex sandbox mode read-only");
}

Test(classify, a_writable_pseudo_filesystem_anywhere_is_not_a_writable_root)
{
	/* judged by type, not only by place */
	struct dt_mount m[] = {{"/", "ext4", 0}, {D "/mq", "mqueue", 1}, {D "/cg", "cgroup2", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	struct dt_record d = denial("openat", EROFS, D "/work/out.txt");

	assert_cause(classify(&d, &p, 0), DT_CAUSE_READ_ONLY_SANDBOX);
}

Test(classify, one_real_writable_mount_is_not_read_only_sandbox)
{
	struct dt_mount m[] = {{"/", "ext4", 0}, {"/proc", "proc", 1}, {"/tmp", "tmpfs", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	struct dt_record d = denial("openat", EROFS, D "/work/out.txt");
	struct dt_verdict v = classify(&d, &p, 0);

	cr_assert_neq(v.cause, DT_CAUSE_READ_ONLY_SANDBOX);
	assert_cause(v, DT_CAUSE_OUTSIDE_ROOTS);
}

Test(classify, writable_slash_is_not_read_only_sandbox)
{
	struct dt_mount m[] = {{"/", "ext4", 1}, {D "/ro", "ext4", 0}};
	struct dt_record p = process(m, NMOUNTS(m));
	struct dt_record d = denial("openat", EROFS, D "/elsewhere/f");

	cr_assert_neq(classify(&d, &p, 0).cause, DT_CAUSE_READ_ONLY_SANDBOX);
}

Test(classify, no_process_record_is_not_read_only_sandbox)
{
	struct dt_record d = denial("openat", EROFS, D "/work/out.txt");

	assert_cause(classify(&d, NULL, 0), DT_CAUSE_OUTSIDE_ROOTS);
}

Test(classify, read_only_sandbox_beats_outside_roots_and_root_not_granted)
{
	struct dt_mount m[] = {{"/", "ext4", 0}, {"/proc", "proc", 1}};
	struct dt_record p = process(m, NMOUNTS(m));

	struct dt_record out = denial("openat", EROFS, D "/nowhere/f");
	assert_cause(classify(&out, &p, 0), DT_CAUSE_READ_ONLY_SANDBOX);

	root(D "/proj", 0, NULL);
	struct dt_record in = denial("openat", EROFS, D "/proj/f");
	assert_cause(classify(&in, &p, 0), DT_CAUSE_READ_ONLY_SANDBOX);
}

/* ---- 5. protected-path ------------------------------------------------------------------------
 */

static void codex_like_roots(int granted)
{
	root(D "/proj", granted, "codex --add-dir " D "/proj");
	struct dt_root *git =
	    dt_roots_add(&rs, D "/proj/.git", DT_ROOT_CODEX,
	                 "codex keeps .git read-only inside writable root " D "/proj", NULL);
	cr_assert_not_null(git);
	git->readonly_sub = 1;
}

Test(classify, readonly_subpath_of_a_granted_root_is_protected_path)
{
	codex_like_roots(1);
	struct dt_record d = denial("openat", EROFS, D "/proj/.git/index.lock");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_PROTECTED_PATH);
	assert_has(v.reason, "inside " D "/proj/.git");
	assert_has(v.reason, "codex keeps .git read-only");
	assert_has(v.advice, D "/proj/.git is kept read-only");
	/* the expected root is the writable one, not the protected subpath */
	cr_assert_not_null(v.root);
	cr_assert_str_eq(v.root->path, D "/proj");
	cr_assert_eq(v.granted, 1);
}

Test(classify, sibling_of_a_readonly_subpath_is_not_protected)
{
	codex_like_roots(1);
	/* ".github" shares a prefix with ".git" but is not inside it */
	struct dt_record d = denial("openat", EROFS, D "/proj/.github/x");

	cr_assert_neq(classify(&d, NULL, 0).cause, DT_CAUSE_PROTECTED_PATH);
}

Test(classify, protected_path_beats_root_not_granted)
{
	/* grant unknown + EROFS would be root-not-granted; the read-only
	 * subpath comes first */
	codex_like_roots(-1);
	struct dt_record d = denial("mkdir", EROFS, D "/proj/.git/refs/x");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_PROTECTED_PATH);
}

Test(classify, readonly_mount_under_a_writable_mount_is_protected_path)
{
	struct dt_mount m[] = {
	    {"/", "ext4", 0},
	    {D "/proj", "ext4", 1},
	    {D "/proj/vendor", "ext4", 0},
	};
	struct dt_record p = process(m, NMOUNTS(m));
	root(D "/proj", -1, NULL);
	struct dt_record d = denial("openat", EROFS, D "/proj/vendor/lib.o");
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_PROTECTED_PATH);
	assert_has(v.reason, D "/proj/vendor, a read-only mount inside a writable root");
	assert_has(v.advice, D "/proj/vendor is kept read-only");
}

/* A read-only .git bound over a workspace nobody named as a root: the
 * workspace's writable mount is the root it is protected inside. */
Test(classify, protected_path_keeps_the_writable_mount_it_sits_in_as_its_granted_root)
{
	struct dt_mount m[] = {
	    {"/", "ext4", 0},
	    {D "/ws", "ext4", 1},
	    {D "/ws/.git", "ext4", 0},
	};
	struct dt_record p = process(m, NMOUNTS(m));
	dt_roots_from_mounts(&rs, &p);
	struct dt_record d = denial("openat", EROFS, D "/ws/.git/index.lock");
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_PROTECTED_PATH);
	cr_assert_not_null(v.root, "protected-path lost its root");
	cr_assert_str_eq(v.root->path, D "/ws");
	assert_has(v.root->source, "writable mount");
	cr_assert_eq(v.granted, 1);
}

/* The named root itself bound read-only inside a writable parent: the
 * root was not granted; no subpath of a granted root was protected. */
Test(classify, a_root_that_is_itself_a_readonly_mount_is_root_not_granted)
{
	struct dt_mount m[] = {
	    {"/", "ext4", 0},
	    {D "/top", "ext4", 1},
	    {D "/top/board", "ext4", 0},
	};
	struct dt_record p = process(m, NMOUNTS(m));
	root(D "/top/board", -1, NULL);
	struct dt_record d = denial("openat", EROFS, D "/top/board/status");
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
	cr_assert_eq(v.granted, 0);
}

Test(classify, readonly_mount_under_only_a_pseudo_writable_mount_is_not_protected)
{
	struct dt_mount m[] = {
	    {"/", "ext4", 0},
	    {"/tmp", "tmpfs", 1},
	    {"/proc", "proc", 1},
	    {"/proc/sys", "proc", 0},
	};
	struct dt_record p = process(m, NMOUNTS(m));
	struct dt_record d = denial("openat", EROFS, "/proc/sys/kernel/x");

	cr_assert_neq(classify(&d, &p, 0).cause, DT_CAUSE_PROTECTED_PATH);
}

Test(classify, writable_mount_below_a_readonly_one_does_not_make_it_protected)
{
	/* /data ro with /data/cache rw inside: a refusal in /data/other is
	 * not "a ro mount inside a writable root" */
	struct dt_mount m[] = {
	    {"/", "ext4", 0},
	    {D "/data", "ext4", 0},
	    {D "/data/cache", "ext4", 1},
	};
	struct dt_record p = process(m, NMOUNTS(m));
	struct dt_record d = denial("openat", EROFS, D "/data/other/f");

	cr_assert_neq(classify(&d, &p, 0).cause, DT_CAUSE_PROTECTED_PATH);
}

Test(classify, readonly_mount_stacked_on_the_same_path_is_not_a_submount)
{
	struct dt_mount m[] = {
	    {"/", "ext4", 0},
	    {D "/proj", "ext4", 1},
	    {D "/proj", "ext4", 0},
	};
	struct dt_record p = process(m, NMOUNTS(m));
	struct dt_record d = denial("openat", EROFS, D "/proj/f");

	cr_assert_neq(classify(&d, &p, 0).cause, DT_CAUSE_PROTECTED_PATH);
}

/* ---- 6. symlink-mismatch ----------------------------------------------------------------------
 */

Test(classify, logical_and_real_path_under_different_roots_is_symlink_mismatch)
{
	root(D "/logical", 1, NULL);
	root(D "/real", 0, NULL);
	struct dt_record d = denial("openat", EACCES, D "/logical/link/f");
	d.p[0].realpath = D "/real/target/f";
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_SYMLINK_MISMATCH);
	assert_has(v.reason, D "/logical/link/f resolves to " D "/real/target/f");
	assert_has(v.reason, "under " D "/logical but the real one is under " D "/real");
	assert_has(v.advice, D "/real/target as the root");
	cr_assert_not_null(v.root);
	cr_assert_str_eq(v.root->path, D "/logical");
	cr_assert_eq(v.granted, 1);
}

Test(classify, symlink_to_outside_every_root_is_symlink_mismatch)
{
	root(D "/logical", 1, NULL);
	struct dt_record d = denial("openat", EROFS, D "/logical/link/f");
	d.p[0].realpath = D "/elsewhere/f";
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_SYMLINK_MISMATCH);
	assert_has(v.reason, "the real one is under no root");
}

Test(classify, symlink_within_one_root_is_not_symlink_mismatch)
{
	root(D "/proj", 0, NULL);
	struct dt_record d = denial("openat", EROFS, D "/proj/link/f");
	d.p[0].realpath = D "/proj/real/f";
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
}

Test(classify, symlink_mismatch_beats_root_not_granted)
{
	/* the logical root is not granted either: the symlink is the clue */
	root(D "/logical", 0, NULL);
	root(D "/real", 0, NULL);
	struct dt_record d = denial("openat", EROFS, D "/logical/f");
	d.p[0].realpath = D "/real/f";
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_SYMLINK_MISMATCH);
	cr_assert_str_eq(v.root->path, D "/logical");
	cr_assert_eq(v.granted, 0);
}

/* ---- 7. sqlite-side-file ----------------------------------------------------------------------
 */

static struct dt_record journal_create(void)
{
	struct dt_record d = denial("openat", EACCES, D "/kanban/board.db-journal");
	d.sqlite = "journal";
	d.has_flags = 1;
	d.flags = O_RDWR | O_CREAT;
	/* the directory's mode bits allow it: a sandbox, not the mode */
	missing_in_dir(&d, 0755, 1000, 1000, 0);
	return d;
}

Test(classify, journal_create_refused_beside_a_writable_db_is_sqlite_side_file)
{
	root(D "/kanban", 0, "HERMES_KANBAN_DB knob");
	struct dt_record d = journal_create();
	struct dt_verdict v = classify(&d, NULL, 1);

	assert_cause(v, DT_CAUSE_SQLITE_SIDE_FILE);
	assert_has(v.reason, "could not create its journal file " D "/kanban/board.db-journal");
	assert_has(v.reason, "directory " D "/kanban is not");
	assert_has(v.reason, "-journal files");
	assert_has(v.advice, "Make " D "/kanban writable");
	assert_has(v.advice, "(HERMES_KANBAN_DB knob)");
}

Test(classify, wal_unlink_refused_is_sqlite_side_file_remove)
{
	struct dt_record d = denial("unlinkat", EROFS, D "/kanban/board.db-wal");
	d.sqlite = "wal";
	struct dt_verdict v = classify(&d, NULL, 1);

	assert_cause(v, DT_CAUSE_SQLITE_SIDE_FILE);
	assert_has(v.reason, "could not remove its wal file");
	assert_has(v.reason, "-wal files");
}

Test(classify, side_file_whose_database_is_not_known_writable_is_root_not_granted)
{
	root(D "/kanban", 0, "HERMES_KANBAN_DB knob");
	struct dt_record d = journal_create();
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
	cr_assert_str_eq(v.root->path, D "/kanban");
}

Test(classify, null_context_means_the_database_is_not_known_writable)
{
	struct dt_record d = journal_create();
	struct dt_verdict v;

	dt_classify(&d, NULL, &rs, NULL, &v);
	cr_assert_neq(v.cause, DT_CAUSE_SQLITE_SIDE_FILE);
}

Test(classify, side_file_reason_says_how_the_database_was_known_writable)
{
	struct dt_record d = journal_create();
	struct dt_classify_ctx ctx = {1, "this process opened it for writing"};
	struct dt_verdict v;

	dt_classify(&d, NULL, &rs, &ctx, &v);
	assert_cause(v, DT_CAUSE_SQLITE_SIDE_FILE);
	assert_has(v.reason,
	           "the database itself was writable (this process opened it for writing)");
}

Test(classify, the_database_itself_is_not_a_side_file)
{
	struct dt_record d = journal_create();
	d.sqlite = "db";
	d.p[0].path = d.p[0].abspath = d.p[0].realpath = D "/kanban/board.db";

	cr_assert_neq(classify(&d, NULL, 1).cause, DT_CAUSE_SQLITE_SIDE_FILE);
}

Test(classify, writing_an_existing_side_file_is_sqlite_side_file)
{
	/* the -wal exists and opening it for writing failed while the
	 * database itself was not refused */
	struct dt_record d = denial("openat", EROFS, D "/kanban/board.db-wal");
	d.sqlite = "wal";
	existing_file(&d, 0644, 1000, 1000, 1);
	struct dt_verdict v = classify(&d, NULL, 1);

	assert_cause(v, DT_CAUSE_SQLITE_SIDE_FILE);
	assert_has(v.reason, "could not write its wal file");
}

Test(classify, reading_a_side_file_is_not_sqlite_side_file)
{
	struct dt_record d = denial("openat", EACCES, D "/kanban/board.db-shm");
	d.sqlite = "shm";
	d.writes = 0;

	cr_assert_neq(classify(&d, NULL, 1).cause, DT_CAUSE_SQLITE_SIDE_FILE);
}

Test(classify, a_failed_lock_on_a_side_file_is_not_sqlite_side_file)
{
	/* not EACCES/EAGAIN, so not lock contention either */
	struct dt_record d = denial("fcntl", ENOLCK, D "/kanban/board.db-shm");
	d.sqlite = "shm";

	cr_assert_neq(classify(&d, NULL, 1).cause, DT_CAUSE_SQLITE_SIDE_FILE);
}

/* ---- 8. root-not-granted ----------------------------------------------------------------------
 */

Test(classify, path_under_an_ungranted_root_is_root_not_granted)
{
	root(D "/hcom", 0, "HCOM_DIR (hcom passes it to codex as a writable root)");
	struct dt_record d = denial("openat", EROFS, D "/hcom/db/hcom.db");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
	cr_assert_not_null(v.root);
	cr_assert_str_eq(v.root->path, D "/hcom");
	cr_assert_eq(v.granted, 0);
	assert_has(v.reason, "under " D "/hcom (--root)");
	assert_has(v.reason, "did not make writable");
	assert_has(v.advice, "Make " D "/hcom writable");
	assert_has(v.advice, "HCOM_DIR (hcom passes it to codex as a writable root)");
}

Test(classify, the_deepest_root_is_the_expected_one)
{
	root(D "/a", 1, NULL);
	root(D "/a/b", 0, NULL);
	struct dt_record d = denial("openat", EROFS, D "/a/b/c/f");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
	cr_assert_str_eq(v.root->path, D "/a/b");
}

Test(classify, unknown_grant_and_a_sandbox_errno_is_root_not_granted)
{
	root(D "/proj", -1, NULL);
	struct dt_record d = denial("openat", EROFS, D "/proj/f");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
	cr_assert_eq(v.granted, -1);
	assert_has(v.reason, "refused like a root the sandbox did not grant");
}

/* Landlock: "/" read-write, no_new_privs, EACCES the mode bits allow. No
 * mount says the root was not granted; the refusal does. */
Test(classify, landlock_refusal_under_a_root_means_it_was_not_granted)
{
	struct dt_mount m[] = {{"/", "ext4", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	p.has_seccomp = 1;
	p.no_new_privs = 1;
	root(D "/board", -1, NULL);
	struct dt_record d = denial("openat", EACCES, D "/board/kanban.db");
	existing_file(&d, 0666, 0, 0, 0);
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
	cr_assert_eq(v.granted, 0);
}

Test(classify, eacces_on_a_rw_mount_the_mode_allows_is_a_sandbox_refusal)
{
	/* Landlock: rw mount, mode bits allow, EACCES anyway */
	root(D "/proj", -1, NULL);
	struct dt_record d = denial("openat", EACCES, D "/proj/f");
	missing_in_dir(&d, 0755, 1000, 1000, 0);

	assert_cause(classify(&d, NULL, 0), DT_CAUSE_ROOT_NOT_GRANTED);
}

Test(classify, unknown_grant_and_a_non_sandbox_errno_is_unknown)
{
	root(D "/proj", -1, NULL);
	struct dt_record d = denial("openat", ENOSPC, D "/proj/f");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_UNKNOWN);
	cr_assert_str_eq(v.root->path, D "/proj");
}

Test(classify, granted_root_refusal_is_unknown_and_says_granted)
{
	root(D "/proj", 1, NULL);
	struct dt_record d = denial("openat", EROFS, D "/proj/f");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_UNKNOWN);
	cr_assert_eq(v.granted, 1);
	assert_has(v.reason, "which the sandbox granted");
	assert_has(v.advice, D "/proj/f");
}

Test(classify, dropped_root_advice_explains_the_override)
{
	struct dt_root *r = root(D "/kanban", 0, "-c sandbox_workspace_write.writable_roots=[...]");
	r->dropped_by = strdup("-c sandbox_workspace_write.writable_roots=[\"/x\"]");
	struct dt_record d = denial("openat", EROFS, D "/kanban/board.db");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
	assert_has(v.reason, "an override dropped");
	assert_has(v.advice, "-c sandbox_workspace_write.writable_roots=[\"/x\"] replaced");
	assert_has(v.advice, "must repeat every root");
}

Test(classify, root_dropped_by_a_profile_layer_names_the_layer)
{
	struct dt_root *r = root(D "/kanban", 0, "writable_roots in ~/.codex/config.toml");
	r->dropped_by = strdup("/home/u/.codex/work.config.toml");
	struct dt_record d = denial("openat", EROFS, D "/kanban/board.db");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
	assert_has(v.advice, "the profile layer /home/u/.codex/work.config.toml (codex -p)");
	cr_assert_null(strstr(v.advice, "-c list override"), "%s", v.advice);
}

Test(classify, advice_without_a_knob_depends_on_codex)
{
	struct dt_mount m[] = {{"/", "ext4", 0}, {"/tmp", "tmpfs", 1}};
	struct dt_record p = process(m, NMOUNTS(m)); /* bubblewrap: "/" read-only */
	root(D "/proj", 0, NULL);
	struct dt_record d = denial("openat", EROFS, D "/proj/f");

	struct dt_verdict v = classify(&d, &p, 0);
	assert_has(v.advice, "--bind " D "/proj " D "/proj");
	cr_assert_null(strstr(v.advice, "codex"), "%s", v.advice);
	cr_assert_null(strstr(v.advice, "Landlock"), "%s", v.advice);

	rs.codex_sandbox_mode = strdup("workspace-write");
	rs.codex_add_dir_ok = 1; /* codex exec, or the TUI */
	rs.codex_override = strdup("-c sandbox_workspace_write.writable_roots=[]");
	v = classify(&d, &p, 0);
	assert_has(v.advice, "codex --add-dir " D "/proj");
	cr_assert_null(strstr(v.advice, "--bind"), "%s", v.advice);
	/* no config.toml list for the -c to replace: no such note */
	cr_assert_null(strstr(v.advice, "replaces"), "%s", v.advice);

	dt_roots_add(&rs, D "/cfgroot", DT_ROOT_CODEX,
	             "config.toml [sandbox_workspace_write] writable_roots", NULL);
	v = classify(&d, &p, 0);
	assert_has(v.advice, "Note: -c sandbox_workspace_write.writable_roots=[] replaces");
}

/* Issue 11, item 6: Landlock gets the rule, not bubblewrap's --bind. */
Test(classify, landlock_advice_names_the_rule)
{
	struct dt_mount m[] = {{"/", "ext4", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	p.has_seccomp = 1;
	p.no_new_privs = 1;
	root(D "/board", -1, NULL);
	struct dt_record d = denial("openat", EACCES, D "/board/kanban.db");
	existing_file(&d, 0666, 0, 0, 0);
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
	assert_has(v.advice, "Landlock: a path-beneath rule for " D "/board");
	cr_assert_null(strstr(v.advice, "--bind"), "%s", v.advice);
	cr_assert_null(strstr(v.advice, "codex"), "%s", v.advice);
}

/* chmod of a directory needs that directory's own mount writable, not
 * its parent's. */
Test(classify, chmod_of_a_directory_advises_the_directory_itself)
{
	struct dt_mount m[] = {{"/", "ext4", 0}, {D "/ws", "ext4", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	struct dt_record d = denial("chmod", EROFS, D "/data");
	d.p[0].has_st = 1;
	d.p[0].st.valid = DT_SF_EXISTS | DT_SF_MOUNT;
	d.p[0].st.mode = S_IFDIR | 0755;
	d.p[0].st.mount_flags = ST_RDONLY;
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_OUTSIDE_ROOTS);
	assert_has(v.advice, "add " D "/data as a root");
	assert_has(v.advice, "--bind " D "/data " D "/data");

	/* a mkdir there needs the parent */
	struct dt_record e = denial("mkdir", EROFS, D "/data/sub");
	v = classify(&e, &p, 0);
	assert_has(v.advice, "add " D "/data as a root");
}

Test(classify, granted_is_what_the_refusing_process_saw)
{
	/* pooled over the run the root was granted (another sandbox had it
	 * rw); this process sees it read-only */
	struct dt_mount m[] = {{"/", "ext4", 0}, {"/tmp", "tmpfs", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	root(D "/proj", 1, NULL);
	struct dt_record d = denial("openat", EROFS, D "/proj/f");
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
	cr_assert_eq(v.granted, 0);
	assert_has(v.reason, "did not make writable");
}

Test(classify, granted_to_this_process_is_not_root_not_granted)
{
	struct dt_mount m[] = {{"/", "ext4", 0}, {D "/proj", "ext4", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	root(D "/proj", 0, NULL);
	struct dt_record d = denial("openat", EACCES, D "/proj/f");
	struct dt_verdict v = classify(&d, &p, 0);

	cr_assert_eq(v.granted, 1);
	assert_cause(v, DT_CAUSE_UNKNOWN);
	assert_has(v.reason, "which the sandbox granted");
}

Test(classify, unsandboxed_process_keeps_the_pooled_grant)
{
	struct dt_mount m[] = {{"/", "ext4", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	root(D "/proj", 0, NULL);
	struct dt_record d = denial("openat", EROFS, D "/proj/f");
	struct dt_verdict v = classify(&d, &p, 0);

	cr_assert_eq(v.granted, 0);
	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
}

Test(classify, effective_roots_are_not_expected_roots)
{
	struct dt_root *r =
	    dt_roots_add(&rs, D "/mnt", DT_ROOT_EFFECTIVE, "writable mount (pid 1)", NULL);
	r->granted = 1;
	struct dt_record d = denial("openat", EROFS, D "/mnt/f");
	struct dt_verdict v = classify(&d, NULL, 0);

	cr_assert_null(v.root);
	assert_cause(v, DT_CAUSE_OUTSIDE_ROOTS);
}

/* ---- 9. outside-roots / 10. unknown ------------------------------------------------------------
 */

Test(classify, sandbox_errno_with_no_root_is_outside_roots)
{
	struct dt_record d = denial("openat", EROFS, D "/scratch/out/f");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_OUTSIDE_ROOTS);
	cr_assert_null(v.root);
	cr_assert_eq(v.granted, -1);
	assert_has(v.reason, "outside every expected root (none were derived");
	assert_has(v.reason, "EROFS");
	assert_has(v.advice, "add " D "/scratch/out as a root (it was refused with EROFS");
}

Test(classify, outside_roots_with_roots_and_codex_advice)
{
	root(D "/proj", 0, NULL);
	rs.codex_sandbox_mode = strdup("workspace-write");
	rs.codex_add_dir_ok = 1;
	struct dt_record d = denial("mkdir", EROFS, D "/scratch/out");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_OUTSIDE_ROOTS);
	cr_assert_null(strstr(v.reason, "none were derived"));
	assert_has(v.advice, "(codex --add-dir " D "/scratch, or writable_roots in config.toml)");
}

/* Codex 0.169's `codex sandbox` exits 2 on --add-dir: advice for its
 * launches names what it takes. */
Test(classify, advice_for_codex_sandbox_never_suggests_add_dir)
{
	const char *argv[] = {"codex", "sandbox", "-c", "sandbox_mode=\"workspace-write\"",
	                      "--",    "sh",      NULL};
	struct dt_codex_launch l = {.argv = argv, .argc = 6, .cwd = D "/proj", .home = D "/home"};
	char err[256];
	cr_assert_eq(dt_roots_from_codex(&rs, &l, NULL, err, sizeof(err)), 0, "%s", err);
	struct dt_record d = denial("mkdir", EROFS, D "/scratch/out");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_OUTSIDE_ROOTS);
	cr_assert_null(strstr(v.advice, "--add-dir"), "%s", v.advice);
	assert_has(v.advice, "writable_roots");
	for (size_t i = 0; i < rs.n; i++)
		cr_assert(!rs.v[i].knob || !strstr(rs.v[i].knob, "--add-dir"), "%s: %s",
		          rs.v[i].path, rs.v[i].knob);
}

Test(classify, readonly_mount_flag_makes_any_errno_a_sandbox_refusal)
{
	struct dt_record d = denial("openat", ENOSPC, D "/scratch/f");
	missing_in_dir(&d, 0777, 0, 0, 1);

	assert_cause(classify(&d, NULL, 0), DT_CAUSE_OUTSIDE_ROOTS);
}

Test(classify, non_sandbox_errno_with_no_root_is_unknown)
{
	struct dt_record d = denial("openat", ENOSPC, D "/scratch/f");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_UNKNOWN);
	cr_assert_null(v.root);
	assert_has(v.reason, "outside any sandbox facts");
	assert_has(v.reason, "ENOSPC");
	assert_has(v.advice, D "/scratch/f");
}

Test(classify, exdev_under_a_granted_root_is_unknown_with_the_refer_explanation)
{
	root(D "/proj", 1, NULL);
	struct dt_record d = denial("renameat2", EXDEV, D "/proj/a");
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_UNKNOWN);
	assert_has(v.reason, "renameat2 returned EXDEV");
	assert_has(v.reason, "refer right");
}

Test(classify, exdev_between_two_mounts_is_cross_mount_not_a_refusal)
{
	/* bubblewrap: / read-only, two separate binds of the same filesystem */
	struct dt_mount m[] = {{"/", "ext4", 0}, {D "/a", "ext4", 1}, {D "/b", "ext4", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	root(D "/a", 1, NULL);
	struct dt_record d = denial("rename", EXDEV, D "/a/f");
	d.p[1].path = d.p[1].abspath = d.p[1].realpath = D "/b/f";
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_CROSS_MOUNT);
	assert_has(v.reason, "mount at " D "/a");
	assert_has(v.reason, "mount at " D "/b");
	assert_has(v.advice, "Not a sandbox refusal");
}

Test(classify, exdev_within_one_mount_is_not_cross_mount)
{
	/* Landlock's refer right: both paths on the same rw mount */
	struct dt_mount m[] = {{"/", "ext4", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	root(D "/proj", 1, NULL);
	struct dt_record d = denial("renameat2", EXDEV, D "/proj/a/f");
	d.p[1].path = d.p[1].abspath = d.p[1].realpath = D "/proj/b/f";
	struct dt_verdict v = classify(&d, &p, 0);

	cr_assert_neq(v.cause, DT_CAUSE_CROSS_MOUNT, "reason: %s", v.reason);
	assert_has(v.reason, "refer right");
}

Test(classify, exdev_between_two_directories_of_one_mount_under_no_new_privs_is_landlock_refer)
{
	struct dt_mount m[] = {{"/", "ext4", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	p.no_new_privs = 1;
	root(D "/proj", 1, NULL);
	struct dt_record d = denial("renameat2", EXDEV, D "/proj/a/f");
	d.p[1].path = d.p[1].abspath = d.p[1].realpath = D "/proj/b/f";
	struct dt_verdict v = classify(&d, &p, 0);

	assert_cause(v, DT_CAUSE_LANDLOCK_REFER);
	cr_assert_str_eq(v.missing_right, "refer");
	cr_assert_str_eq(v.subject, D "/proj");
	assert_has(v.advice, "LANDLOCK_ACCESS_FS_REFER");
}

Test(classify, exdev_within_one_directory_is_not_landlock_refer)
{
	struct dt_mount m[] = {{"/", "ext4", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	p.no_new_privs = 1;
	struct dt_record d = denial("renameat2", EXDEV, D "/proj/a/f");
	d.p[1].path = d.p[1].abspath = d.p[1].realpath = D "/proj/a/g";
	struct dt_verdict v = classify(&d, &p, 0);

	cr_assert_neq(v.cause, DT_CAUSE_LANDLOCK_REFER, "reason: %s", v.reason);
	cr_assert_null(v.missing_right);
}

/* ---- immutable-file ------------------------------------------------------------ */

Test(classify, immutable_file_beats_root_not_granted_for_root)
{
	root(D "/proj", 0, NULL);
	struct dt_record d = denial("openat", EPERM, D "/proj/status");
	d.uid = 0;
	existing_file(&d, 0644, 0, 0, 0);
	d.has_iflags = 1;
	d.iflags = FS_IMMUTABLE_FL;
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_IMMUTABLE_FILE);
	cr_assert_str_eq(v.subject, D "/proj/status");
	assert_has(v.advice, "chattr -i " D "/proj/status");
}

Test(classify, immutable_file_beats_file_permissions)
{
	struct dt_record d = denial("openat", EPERM, D "/proj/status");
	existing_file(&d, 0444, 0, 0, 0);
	d.has_iflags = 1;
	d.iflags = FS_IMMUTABLE_FL;
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_IMMUTABLE_FILE);
}

Test(classify, opening_an_append_only_file_to_append_is_not_refused_by_its_flag)
{
	struct dt_record d = denial("openat", EPERM, D "/proj/log");
	existing_file(&d, 0666, 1000, 1000, 0);
	d.has_flags = 1;
	d.flags = O_WRONLY | O_APPEND;
	d.has_iflags = 1;
	d.iflags = FS_APPEND_FL;
	struct dt_verdict v = classify(&d, NULL, 0);

	cr_assert_neq(v.cause, DT_CAUSE_IMMUTABLE_FILE, "reason: %s", v.reason);
}

Test(classify, truncating_an_append_only_file_is_immutable_file_with_chattr_a)
{
	struct dt_record d = denial("openat", EPERM, D "/proj/log");
	existing_file(&d, 0666, 1000, 1000, 0);
	d.has_flags = 1;
	d.flags = O_WRONLY | O_TRUNC;
	d.has_iflags = 1;
	d.iflags = FS_APPEND_FL;
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_IMMUTABLE_FILE);
	assert_has(v.advice, "chattr -a " D "/proj/log");
}

Test(classify, creating_in_an_immutable_directory_names_the_directory)
{
	struct dt_record d = denial("openat", EPERM, D "/proj/new");
	missing_in_dir(&d, 0777, 1000, 1000, 0);
	d.has_dir_iflags = 1;
	d.dir_iflags = FS_IMMUTABLE_FL;
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_IMMUTABLE_FILE);
	cr_assert_str_eq(v.subject, D "/proj");
	assert_has(v.advice, "chattr -i " D "/proj");
}

Test(classify, an_append_only_directory_takes_new_entries)
{
	struct dt_record d = denial("openat", EPERM, D "/proj/new");
	missing_in_dir(&d, 0777, 1000, 1000, 0);
	d.has_dir_iflags = 1;
	d.dir_iflags = FS_APPEND_FL;
	struct dt_verdict v = classify(&d, NULL, 0);

	cr_assert_neq(v.cause, DT_CAUSE_IMMUTABLE_FILE, "reason: %s", v.reason);
}

Test(classify, an_inode_flag_never_explains_eacces)
{
	struct dt_record d = denial("openat", EACCES, D "/proj/status");
	existing_file(&d, 0644, 1000, 1000, 0);
	d.has_iflags = 1;
	d.iflags = FS_IMMUTABLE_FL;
	struct dt_verdict v = classify(&d, NULL, 0);

	cr_assert_neq(v.cause, DT_CAUSE_IMMUTABLE_FILE, "reason: %s", v.reason);
}

Test(classify, unknown_path_is_named_as_such)
{
	struct dt_record d = denial("openat", ENOSPC, NULL);
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_UNKNOWN);
	assert_has(v.reason, "(unknown path)");
}

Test(classify, abspath_missing_falls_back_to_realpath)
{
	root(D "/proj", 0, NULL);
	struct dt_record d = denial("openat", EROFS, "f");
	d.p[0].abspath = NULL;
	d.p[0].realpath = D "/proj/f";
	struct dt_verdict v = classify(&d, NULL, 0);

	assert_cause(v, DT_CAUSE_ROOT_NOT_GRANTED);
	assert_has(v.reason, D "/proj/f is under");
}

/* A refusal record with a SQLite role but no op (a ring field missing: the
 * ring lives in the traced process's memory, so any byte may be wrong) must
 * not crash the report. */
Test(classify, side_file_record_without_op_does_not_crash)
{
	struct dt_record d = denial(NULL, EROFS, D "/kanban/board.db-journal");
	d.sqlite = "journal";
	struct dt_verdict v = classify(&d, NULL, 0);

	cr_assert_lt((int)v.cause, DT_CAUSE_COUNT);
}

/* ---- process records: sandboxed, writable -------------------------------------------------- */

Test(proc_mounts, readonly_slash_is_sandboxed)
{
	struct dt_mount m[] = {{"/", "ext4", 0}, {"/tmp", "tmpfs", 1}};
	struct dt_record p = process(m, NMOUNTS(m));
	cr_assert(dt_proc_sandboxed(&p));

	m[0].rw = 1;
	cr_assert_not(dt_proc_sandboxed(&p));
}

Test(proc_mounts, no_slash_mount_or_no_record_is_not_sandboxed)
{
	struct dt_mount m[] = {{"/home", "ext4", 0}};
	struct dt_record p = process(m, NMOUNTS(m));

	cr_assert_not(dt_proc_sandboxed(&p));
	cr_assert_not(dt_proc_sandboxed(NULL));
	struct dt_record empty = process(NULL, 0);
	cr_assert_not(dt_proc_sandboxed(&empty));
}

Test(proc_mounts, the_later_of_two_slash_mounts_decides)
{
	/* bwrap: the host's rw "/" below, the sandbox's ro "/" stacked on it */
	struct dt_mount a[] = {{"/", "ext4", 1}, {"/", "ext4", 0}};
	struct dt_record pa = process(a, NMOUNTS(a));
	cr_assert(dt_proc_sandboxed(&pa));

	struct dt_mount b[] = {{"/", "ext4", 0}, {"/", "ext4", 1}};
	struct dt_record pb = process(b, NMOUNTS(b));
	cr_assert_not(dt_proc_sandboxed(&pb));
}

Test(proc_mounts, the_deepest_mount_decides_writability)
{
	struct dt_mount m[] = {
	    {D "/w/sub", "ext4", 0}, /* order in the table does not matter */
	    {"/", "ext4", 0},
	    {D "/w", "ext4", 1},
	};
	struct dt_record p = process(m, NMOUNTS(m));

	cr_assert_eq(dt_proc_path_writable(&p, D "/w"), 1);
	cr_assert_eq(dt_proc_path_writable(&p, D "/w/file"), 1);
	cr_assert_eq(dt_proc_path_writable(&p, D "/w/sub"), 0);
	cr_assert_eq(dt_proc_path_writable(&p, D "/w/sub/deeper/f"), 0);
	cr_assert_eq(dt_proc_path_writable(&p, D "/w/subway"), 1);
	/* component-wise: /w is not a prefix of /wx */
	cr_assert_eq(dt_proc_path_writable(&p, D "/wx/f"), 0);
	cr_assert_eq(dt_proc_path_writable(&p, "/etc/passwd"), 0);
}

Test(proc_mounts, a_later_duplicate_mount_wins)
{
	struct dt_mount m[] = {{"/", "ext4", 0}, {D "/w", "ext4", 1}, {D "/w", "ext4", 0}};
	struct dt_record p = process(m, NMOUNTS(m));
	cr_assert_eq(dt_proc_path_writable(&p, D "/w/f"), 0);

	m[1].rw = 0;
	m[2].rw = 1;
	cr_assert_eq(dt_proc_path_writable(&p, D "/w/f"), 1);
}

Test(proc_mounts, unknown_without_a_covering_mount)
{
	struct dt_mount m[] = {{D "/w", "ext4", 1}};
	struct dt_record p = process(m, NMOUNTS(m));

	cr_assert_eq(dt_proc_path_writable(&p, D "/other"), -1);
	cr_assert_eq(dt_proc_path_writable(NULL, D "/w"), -1);
	cr_assert_eq(dt_proc_path_writable(&p, NULL), -1);
}

/* ---- the report's cache --------------------------------------------------------------- */

static void assert_same_verdict(const struct dt_verdict *a, const struct dt_verdict *b,
                                const char *what)
{
	cr_assert_eq(a->cause, b->cause, "%s: cause %s, cached %s", what, dt_cause_name(a->cause),
	             dt_cause_name(b->cause));
	cr_assert_eq(a->root, b->root, "%s: another root", what);
	cr_assert_eq(a->granted, b->granted, "%s: granted %d, cached %d", what, a->granted,
	             b->granted);
	cr_assert_str_eq(a->reason, b->reason, "%s", what);
	cr_assert_str_eq(a->advice, b->advice, "%s", what);
	cr_assert_str_eq(a->subject, b->subject, "%s", what);
	cr_assert_eq(a->missing_right, b->missing_right, "%s: another missing right", what);
}

/* The refusal number k of the combinations below: each op, errno and path. */
static const char *const cache_paths[] = {
    D "/ro/f0",      D "/ro/f1", D "/ws/out", D "/ws/.git/index", D "/board/kanban.db-journal",
    D "/elsewhere/x"};
static const char *const cache_ops[] = {"openat", "mkdir", "unlink", "rename"};
static const int cache_errs[] = {EROFS, EACCES, EPERM, EXDEV};
#define CACHE_CASES (NMOUNTS(cache_paths) * NMOUNTS(cache_ops) * NMOUNTS(cache_errs))

static struct dt_record cache_case(size_t k)
{
	const char *op = cache_ops[k % NMOUNTS(cache_ops)];
	int err = cache_errs[k / NMOUNTS(cache_ops) % NMOUNTS(cache_errs)];
	struct dt_record d =
	    denial(op, err, cache_paths[k / NMOUNTS(cache_ops) / NMOUNTS(cache_errs)]);
	d.flags = O_WRONLY | O_CREAT;
	d.has_flags = !strcmp(op, "openat");
	d.p[1].realpath = !strcmp(op, "rename") ? D "/ws/moved" : NULL;
	missing_in_dir(&d, 0755, 0, 0, err == EROFS);
	return d;
}

/* One cache serves a whole report: every refusal of every process, in any
 * order. Processes here share paths and directories but differ in what
 * their mounts say (bubblewrap's read-only "/", a Landlock-like writable
 * "/" under no_new_privs, a writable root, no record at all), so a cache
 * keyed on the path alone, or on the errno alone, answers one with
 * another's mounts or another's grant hint. */
Test(classify, a_report_cache_changes_no_verdict)
{
	root(D "/ws", 1, NULL);
	root(D "/board", 0, NULL);
	struct dt_mount bw[] = {{"/", "ext4", 0}, {D "/ws", "ext4", 1}, {D "/ws/.git", "ext4", 0}};
	struct dt_mount ll[] = {{"/", "ext4", 1}};
	struct dt_mount board[] = {{"/", "ext4", 0}, {D "/board", "ext4", 1}};
	struct dt_record procs[3] = {process(bw, NMOUNTS(bw)), process(ll, NMOUNTS(ll)),
	                             process(board, NMOUNTS(board))};
	procs[1].no_new_privs = 1;
	const struct dt_record *const who[] = {&procs[0], &procs[1], &procs[2], NULL};
	struct dt_classify_cache *cc = dt_classify_cache_new();
	cr_assert_not_null(cc);
	/* twice over: the second round answers from what the first kept */
	for (size_t n = 0; n < 2 * NMOUNTS(who) * CACHE_CASES; n++) {
		size_t w = n / CACHE_CASES % NMOUNTS(who);
		struct dt_record d = cache_case(n % CACHE_CASES);
		struct dt_classify_ctx plain = {0}, cached = {.cache = cc};
		struct dt_verdict a, b;
		dt_classify(&d, who[w], &rs, &plain, &a);
		dt_classify(&d, who[w], &rs, &cached, &b);
		char what[256];
		snprintf(what, sizeof(what), "case %zu, process %zu: %s errno %d %s", n, w, d.op,
		         d.err, d.p[0].path);
		assert_same_verdict(&a, &b, what);
	}
	dt_classify_cache_free(cc);
}
