/* SPDX-License-Identifier: MIT */
/*
 * Every record says who made its call: parent, effective uid and gid,
 * groups and the thread's name. The probe asks the kernel once per thread
 * and keeps the answers until a call that can change them runs
 * (preload/selfids.c); these tests change each one between two refusals
 * and read the records back.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(selfids, .fini = teardown, .timeout = 120);

static struct dtt_run run;

static void run_idchange(void)
{
	if (geteuid() != 0)
		cr_skip_test("changing ids needs root");
	/* as 65534 the test's directory refuses search (EACCES) */
	const char *opts[] = {"--errnos", "ENOENT,EACCES", NULL};
	const char *argv[] = {dtt_helper("idchange"), dtt_tmpdir(), NULL};
	cr_assert_eq(dtt_run(&run, opts, argv, NULL), 0, "%s", run.out);
	cr_assert_eq(run.status, 0, "idchange failed: %s", run.out);
}

static const struct dt_record *refusal(const char *step)
{
	char suffix[64];
	snprintf(suffix, sizeof(suffix), "/missing/%s", step);
	const struct dt_record *r = dtt_find(&run, DT_REC_DENIAL, NULL, suffix);
	cr_assert_not_null(r, "no refusal recorded at step %s", step);
	return r;
}

static int has_group(const struct dt_record *r, uint32_t g)
{
	for (int i = 0; i < r->ngroups; i++)
		if (r->groups[i] == g)
			return 1;
	return 0;
}

Test(selfids, each_refusal_carries_the_ids_set_just_before_it)
{
	run_idchange();
	cr_expect_eq(refusal("start")->uid, 0);
	cr_expect(!has_group(refusal("start"), 4242));
	cr_expect(has_group(refusal("setgroups"), 4242), "setgroups not seen");
	cr_expect_eq(refusal("setegid")->gid, 65534, "setegid not seen");
	cr_expect_eq(refusal("seteuid")->uid, 65534, "seteuid not seen");
	cr_expect_eq(refusal("back")->uid, 0, "seteuid back to root not seen");
	cr_expect_eq(refusal("back")->gid, 0, "setegid back to root not seen");
	cr_expect_eq(refusal("raw")->uid, 65533, "syscall(SYS_setresuid) not seen");
	dtt_free(&run);
}

/* The wrappers of selfids.def the test above does not reach; each step's
 * value differs from the one before it, so a call not seen leaves the
 * record with the old one. */
Test(selfids, each_id_call_of_the_selfids_table_is_seen_by_the_next_refusal)
{
	run_idchange();
	cr_expect_eq(refusal("libc")->uid, 0);
	cr_expect_eq(refusal("setresuid")->uid, 65531, "setresuid not seen");
	cr_expect_eq(refusal("setreuid")->uid, 65530, "setreuid not seen");
	cr_expect_eq(refusal("setresgid")->gid, 65529, "setresgid not seen");
	cr_expect_eq(refusal("setregid")->gid, 65528, "setregid not seen");
	cr_expect_eq(refusal("setgid")->gid, 65527, "setgid not seen");
	cr_expect(has_group(refusal("initgroups"), 4343), "initgroups not seen");
	cr_expect_eq(refusal("child")->uid, 0);
	cr_expect_eq(refusal("setuid")->uid, 65526, "setuid not seen");
	dtt_free(&run);
}

/* A row added to the table without a step of idchange's fails here. */
Test(selfids, every_call_of_the_selfids_table_has_a_step)
{
	run_idchange();
	const char *path = dtt_repo_file("preload/selfids.def");
	cr_assert_not_null(path, "cannot find preload/selfids.def");
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	int ns = dtt_find(&run, DT_REC_DENIAL, NULL, "/missing/unshare") != NULL;
	char line[1024], name[64], suffix[96];
	int rows = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "DT_SELFID(%63[^,]", name) != 1)
			continue;
		rows++;
		if (!ns && (!strcmp(name, "unshare") || !strcmp(name, "setns")))
			continue; /* no user namespace here: the other test skips */
		snprintf(suffix, sizeof(suffix), "/missing/%s", name);
		cr_expect_not_null(dtt_find(&run, DT_REC_DENIAL, NULL, suffix),
		                   "selfids.def's %s has no step in idchange", name);
	}
	fclose(f);
	cr_expect_eq(rows, 13, "selfids.def lists %d calls", rows);
	dtt_free(&run);
}

static uint32_t overflow_uid(void)
{
	unsigned id = 65534;
	FILE *f = fopen("/proc/sys/kernel/overflowuid", "r");
	if (f) {
		if (fscanf(f, "%u", &id) != 1)
			id = 65534;
		fclose(f);
	}
	return id;
}

/* In a user namespace that maps nobody, ids read as the overflow id: a
 * process that enters one (either way) keeps nothing from before. */
Test(selfids, entering_a_user_namespace_is_seen_by_the_next_refusal)
{
	run_idchange();
	if (!dtt_find(&run, DT_REC_DENIAL, NULL, "/missing/unshare"))
		cr_skip_test("no user namespace can be made here");
	cr_expect_eq(refusal("ns")->uid, 0);
	cr_expect_eq(refusal("unshare")->uid, overflow_uid(), "unshare not seen");
	cr_expect_eq(refusal("ns-join")->uid, 0);
	cr_expect_eq(refusal("setns")->uid, overflow_uid(), "setns not seen");
	dtt_free(&run);
}

Test(selfids, each_refusal_carries_the_thread_name_set_just_before_it)
{
	run_idchange();
	cr_expect_str_eq(refusal("start")->comm, "idchange");
	cr_expect_str_eq(refusal("prctl")->comm, "renamed", "prctl(PR_SET_NAME) not seen");
	cr_expect_str_eq(refusal("pthread_setname_np")->comm, "named-np",
	                 "pthread_setname_np not seen");
	dtt_free(&run);
}

Test(selfids, a_thread_sees_an_id_change_made_by_another_thread)
{
	run_idchange();
	cr_expect_eq(refusal("thread-1")->uid, 0);
	cr_expect_eq(refusal("thread-2")->uid, 65532, "the other thread's seteuid not seen");
	dtt_free(&run);
}

Test(selfids, a_fork_child_records_its_own_parent)
{
	run_idchange();
	const struct dt_record *parent = refusal("start"), *child = refusal("child");
	cr_expect_neq(child->pid, parent->pid);
	cr_expect_eq(child->ppid, parent->pid, "the child's parent is the process that forked it");
	dtt_free(&run);
}
