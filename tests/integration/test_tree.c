/* SPDX-License-Identifier: MIT */
/*
 * A process tree under the probe (tests/helpers/tree.c) inside bubblewrap:
 * fork, fork+exec, vfork+exec and posix_spawn children and threads, each
 * refusing a write in a read-only directory. The suite timeout is the
 * deadlock check.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "names.h"
#include "testlib.h"

static char ro[512], rw[512];

static void setup(void)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	snprintf(ro, sizeof(ro), "%s/ro", dtt_tmpdir());
	snprintf(rw, sizeof(rw), "%s/rw", dtt_tmpdir());
	mkdir(ro, 0755);
	mkdir(rw, 0755);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(tree, .init = setup, .fini = teardown, .timeout = 120);

static void run_tree(struct dtt_run *r, const char *mode)
{
	const char *argv[DTT_BWRAP_RW_WORDS + 4];
	size_t k = dtt_bwrap_rw(argv, rw);
	const char *rest[] = {dtt_helper("tree"), mode ? mode : ro, mode ? ro : NULL, NULL};
	for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++)
		argv[k++] = rest[i];
	cr_assert_eq(dtt_run(r, NULL, argv, NULL), 0, "ring unreadable: %s", r->out);
	cr_assert_eq(r->status, 0, "tree failed: %s", r->out);
	cr_assert(strstr(r->out, "status OK\n"), "%s", r->out);
}

/* The number after "key " in the helper's output, -1 if absent. */
static long out_num(const struct dtt_run *r, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "%s ", key);
	for (const char *p = r->out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, pat, strlen(pat)))
			return strtol(p + strlen(pat), NULL, 10);
	return -1;
}

static int is_tree(const struct dt_record *rec)
{
	const char *h = dtt_helper("tree");
	return rec->type == DT_REC_PROCESS && rec->exe && !strcmp(rec->exe, h);
}

/* Process records of the tree helper's image in pid; with arg (not NULL)
 * only those whose argv contains arg. */
static size_t tree_records(const struct dtt_run *r, long pid, const char *arg,
                           const struct dt_record **last)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *rec = &r->recs[i];
		if (!is_tree(rec) || rec->pid != pid)
			continue;
		int has = arg == NULL;
		for (size_t k = 0; arg && k < rec->argc; k++)
			has |= !strcmp(rec->argv[k], arg);
		if (!has)
			continue;
		n++;
		if (last)
			*last = rec;
	}
	return n;
}

/* The refusal of RO/name: recorded, EROFS, from pid. */
static const struct dt_record *expect_refusal(const struct dtt_run *r, const char *name, long pid)
{
	char suffix[600];
	snprintf(suffix, sizeof(suffix), "%s/%s", ro, name);
	const struct dt_record *d = dtt_find(r, DT_REC_DENIAL, NULL, suffix);
	cr_assert_not_null(d, "refusal of %s not recorded; output: %s", name, r->out);
	cr_expect_str_eq(d->p[0].realpath, suffix);
	cr_expect_str_eq(dt_errno_name(d->err), "EROFS");
	cr_expect_eq(d->pid, pid, "%s refused by pid %lld, expected %ld", name, (long long)d->pid,
	             pid);
	cr_expect_eq(dtt_count(r, DT_REC_DENIAL, NULL, suffix), 1, "%s recorded more than once",
	             name);
	return d;
}

Test(tree, every_member_of_the_tree_has_its_refusal_recorded)
{
	struct dtt_run r;
	run_tree(&r, NULL);
	long parent = out_num(&r, "parent");
	cr_assert_gt(parent, 0, "%s", r.out);
	expect_refusal(&r, "parent", parent);
	expect_refusal(&r, "fork", out_num(&r, "fork"));
	expect_refusal(&r, "exec-before", out_num(&r, "exec"));
	expect_refusal(&r, "exec", out_num(&r, "exec"));
	expect_refusal(&r, "vfork", out_num(&r, "vfork"));
	expect_refusal(&r, "spawn", out_num(&r, "spawn"));
	dtt_free(&r);
}

Test(tree, one_process_record_per_process_image)
{
	struct dtt_run r;
	run_tree(&r, NULL);
	long parent = out_num(&r, "parent"), fork_pid = out_num(&r, "fork"),
	     exec_pid = out_num(&r, "exec"), vfork_pid = out_num(&r, "vfork"),
	     spawn_pid = out_num(&r, "spawn");
	/* the parent: once, although 4 threads refused too */
	cr_expect_eq(tree_records(&r, parent, NULL, NULL), 1, "parent");
	/* a fork child: its own record, the parent's image */
	cr_expect_eq(tree_records(&r, fork_pid, NULL, NULL), 1, "fork child");
	/* fork then exec: one record per image, told apart by argv */
	cr_expect_eq(tree_records(&r, exec_pid, NULL, NULL), 2, "fork+exec child");
	cr_expect_eq(tree_records(&r, exec_pid, "--child", NULL), 1, "fork+exec child, exec'd");
	/* vfork and posix_spawn children refused only after exec */
	cr_expect_eq(tree_records(&r, vfork_pid, NULL, NULL), 1, "vfork child");
	cr_expect_eq(tree_records(&r, spawn_pid, NULL, NULL), 1, "spawn child");
	/* the sandbox's own image in the parent's pid (bwrap refuses an
	 * access() while it sets up) is another image, with its own record */
	size_t all = 0;
	for (size_t i = 0; i < r.n; i++)
		all += r.recs[i].type == DT_REC_PROCESS && r.recs[i].pid == parent;
	cr_expect_leq(all, 2, "pid %ld: %zu process records", parent, all);
	dtt_free(&r);
}

Test(tree, process_records_link_children_to_their_parent)
{
	struct dtt_run r;
	run_tree(&r, NULL);
	long parent = out_num(&r, "parent");
	static const char *const kids[] = {"fork", "exec", "vfork", "spawn"};
	for (size_t k = 0; k < sizeof(kids) / sizeof(kids[0]); k++) {
		long pid = out_num(&r, kids[k]);
		cr_assert_gt(pid, 0, "no %s pid: %s", kids[k], r.out);
		cr_expect_neq(pid, parent);
		for (size_t i = 0; i < r.n; i++)
			if (is_tree(&r.recs[i]) && r.recs[i].pid == pid)
				cr_expect_eq(r.recs[i].ppid, parent,
				             "%s child %ld: ppid %lld, parent is %ld", kids[k], pid,
				             (long long)r.recs[i].ppid, parent);
	}
	/* and the refusals themselves carry the same link */
	const struct dt_record *d = expect_refusal(&r, "vfork", out_num(&r, "vfork"));
	cr_expect_eq(d->ppid, parent);
	dtt_free(&r);
}

Test(tree, every_process_record_lists_the_writable_directory)
{
	struct dtt_run r;
	run_tree(&r, NULL);
	size_t seen = 0;
	for (size_t i = 0; i < r.n; i++) {
		const struct dt_record *p = &r.recs[i];
		if (!is_tree(p))
			continue;
		seen++;
		int has_rw = 0, root_ro = 0;
		for (size_t m = 0; m < p->nmounts; m++) {
			if (!strcmp(p->mounts[m].path, rw))
				has_rw = p->mounts[m].rw;
			if (!strcmp(p->mounts[m].path, "/"))
				root_ro = !p->mounts[m].rw;
		}
		cr_expect(has_rw, "pid %lld: %s not listed as writable", (long long)p->pid, rw);
		cr_expect(root_ro, "pid %lld: / not listed read-only", (long long)p->pid);
		cr_expect(!p->mounts_trunc, "pid %lld: mounts truncated", (long long)p->pid);
	}
	/* parent, fork, 2 x exec, vfork, spawn */
	cr_expect_eq(seen, 6, "%zu process records of the helper", seen);
	dtt_free(&r);
}

Test(tree, every_thread_refusal_is_recorded_with_its_tid)
{
	struct dtt_run r;
	run_tree(&r, NULL);
	long parent = out_num(&r, "parent");
	for (int k = 0; k < 4; k++) {
		char key[32], name[32];
		snprintf(key, sizeof(key), "thread %d", k);
		snprintf(name, sizeof(name), "thread-%d", k);
		long tid = out_num(&r, key);
		cr_assert_gt(tid, 0, "no tid for %s: %s", key, r.out);
		cr_expect_neq(tid, parent, "%s ran on the main thread", key);
		const struct dt_record *d = expect_refusal(&r, name, parent);
		cr_expect_eq(d->tid, tid, "%s recorded with tid %lld, expected %ld", name,
		             (long long)d->tid, tid);
	}
	dtt_free(&r);
}

/*
 * posix_spawn's file actions run in glibc's spawn child (clone with
 * CLONE_VM|CLONE_VFORK), which opens the file with the internal
 * __open_nocancel, never through the exported open/open64 the probe
 * interposes (checked on glibc 2.36). So a file action refused by the
 * sandbox is invisible to denytrace: posix_spawn returns the errno, no
 * child is ever exec'd, and the ring holds nothing about the path. This
 * test pins that down; if it starts failing, a libc now routes file
 * actions through the interposed symbols and the refusal is recorded.
 */
Test(tree, posix_spawn_file_action_refusal_is_not_seen_by_the_probe)
{
	struct dtt_run r;
	run_tree(&r, NULL);
	cr_expect_eq(out_num(&r, "spawn-action"), 30 /* EROFS */, "%s", r.out);
	char path[600];
	snprintf(path, sizeof(path), "%s/spawn-action", ro);
	for (size_t i = 0; i < r.n; i++) {
		const struct dt_record *d = &r.recs[i];
		cr_expect(!(d->p[0].abspath && strstr(d->p[0].abspath, "spawn-action")) &&
		              !(d->p[0].path && strstr(d->p[0].path, "spawn-action")),
		          "the file action's open was recorded (%s)", dt_rec_type_name(d->type));
	}
	/* the spawn that never exec'd wrote no process record either */
	for (size_t i = 0; i < r.n; i++)
		for (size_t k = 0; r.recs[i].type == DT_REC_PROCESS && k < r.recs[i].argc; k++)
			cr_expect_str_neq(r.recs[i].argv[k], "spawn-unreached");
	dtt_free(&r);
}

/*
 * A vfork child runs in its parent's address space until it execs. When it
 * fails a call there (a shell redirection, a spawn library's file action
 * through the public symbols), the probe writes the child's process record,
 * and must not make the parent write a second one afterwards.
 */
Test(tree, vfork_child_refusing_before_exec_leaves_parent_with_one_process_record)
{
	struct dtt_run r;
	run_tree(&r, "--vfork-early");
	long parent = out_num(&r, "parent"), child = out_num(&r, "vfork");
	/* each from its process's only thread: tid == pid, although the vfork
	 * child ran on its parent's thread memory (the probe's per-thread
	 * copy of the tid must not cross between them) */
	static const char *const names[] = {"parent", "vfork-early", "vfork", "parent-after"};
	for (int k = 0; k < 4; k++) {
		long pid = k == 0 || k == 3 ? parent : child;
		const struct dt_record *d = expect_refusal(&r, names[k], pid);
		cr_expect_eq(d->tid, pid, "%s recorded with tid %lld, expected %ld", names[k],
		             (long long)d->tid, pid);
	}
	/* the child: the pre-exec image (parent's argv) and the exec'd one */
	cr_expect_eq(tree_records(&r, child, NULL, NULL), 2, "vfork child");
	cr_expect_eq(tree_records(&r, parent, NULL, NULL), 1,
	             "parent %ld has %zu process records: the vfork child's record "
	             "reset the parent's once-per-process marker",
	             parent, tree_records(&r, parent, NULL, NULL));
	dtt_free(&r);
}

Test(tree, forking_while_threads_refuse_neither_deadlocks_nor_loses_the_children)
{
	struct dtt_run r;
	run_tree(&r, "--fork-storm");
	long parent = out_num(&r, "parent");
	cr_expect_eq(r.stats.corrupt, 0);
	cr_expect_eq(r.stats.torn, 0);
	for (int k = 0; k < 40; k++) {
		char key[32], name[32];
		snprintf(key, sizeof(key), "child %d", k);
		snprintf(name, sizeof(name), "storm-%d", k);
		long pid = out_num(&r, key);
		cr_assert_gt(pid, 0, "no %s: %s", key, r.out);
		const struct dt_record *d = expect_refusal(&r, name, pid);
		cr_expect_eq(d->ppid, parent);
		cr_expect_eq(tree_records(&r, pid, NULL, NULL), 1, "%s", key);
	}
	cr_expect_eq(tree_records(&r, parent, NULL, NULL), 1, "parent");
	char suffix[600];
	snprintf(suffix, sizeof(suffix), "%s/storm-thread", ro);
	cr_expect_eq(dtt_count(&r, DT_REC_DENIAL, NULL, suffix), 4 * 150,
	             "thread refusals missing");
	dtt_free(&r);
}

/* The run summary counts every process that was refused something, not
 * the first 64 of them. */
Test(tree, run_summary_counts_more_than_64_refusing_processes)
{
	char script[1024], ring[600], exe[600];
	snprintf(script, sizeof(script),
	         "i=0; while [ $i -lt 70 ]; do touch '%s'/f$i 2>/dev/null; i=$((i+1)); done; true",
	         ro);
	snprintf(ring, sizeof(ring), "%s/summary.ring", dtt_tmpdir());
	snprintf(exe, sizeof(exe), "%s/denytrace", dtt_build());
	const char *argv[] = {exe,         "run", "-o",      ring,    "--",   "bwrap",
	                      "--ro-bind", "/",   "/",       "--dev", "/dev", "--proc",
	                      "/proc",     "--",  "/bin/sh", "-c",    script, NULL};
	static char out[65536];
	int status = dtt_system(out, sizeof(out), argv, NULL);
	cr_assert_eq(status, 0, "%s", out);
	/* one refusal per touch; bubblewrap's own set-up refusals are hidden,
	 * as the report hides them (one counting rule) */
	size_t distinct = 70;
	char want[64];
	snprintf(want, sizeof(want), " in %zu processes", distinct);
	cr_expect_not_null(strstr(out, want), "summary lacks '%s': %s", want, out);
}
