/* SPDX-License-Identifier: MIT */
/*
 * What a recorded refusal costs, counted rather than timed: on a virtual
 * machine a system call costs about a microsecond, most of a refusal's
 * price, and a count does not move with the machine's load. strace -c
 * counts every system call of `denytrace run` and its child for two
 * numbers of refusals; the difference over the difference in refusals is
 * the price of one (the launcher's own calls cancel out).
 */
#include <criterion/criterion.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

/* A file made immutable (chattr +i), cleared before the test's directory
 * is removed, which it would otherwise keep. */
static char immutable[600];

static int chattr(const char *how, const char *path)
{
	const char *argv[] = {"chattr", how, path, NULL};
	return dtt_system(NULL, 0, argv, NULL);
}

static void teardown(void)
{
	if (immutable[0])
		chattr("-i", immutable);
	immutable[0] = 0;
	dtt_cleanup();
}

TestSuite(cost, .fini = teardown, .timeout = 120);

/* From strace -c's summary of argv (under strace -f): the calls of the
 * system calls named in names (comma-separated, each ",name,"), or of all
 * when names is NULL; -1 when it failed. */
static long system_calls_of(const char *const *argv, const char *const *env, const char *names)
{
	static int seq;
	char summary[600];
	snprintf(summary, sizeof(summary), "%s/strace-%d", dtt_tmpdir(), seq++);
	const char *full[48] = {"strace", "-f", "-c", "-o", summary};
	size_t k = 5;
	for (; *argv && k < 47; argv++)
		full[k++] = *argv;
	char out[4096];
	if (dtt_system(out, sizeof(out), full, env) != 0)
		return -1;
	FILE *f = fopen(summary, "r");
	if (!f)
		return -1;
	char line[256];
	long count = names ? 0 : -1;
	while (fgets(line, sizeof(line), f)) {
		double pct, secs;
		long usecs, calls;
		if (sscanf(line, "%lf %lf %ld %ld", &pct, &secs, &usecs, &calls) != 4)
			continue;
		char *end = line + strlen(line);
		while (end > line && (end[-1] == '\n' || end[-1] == ' '))
			*--end = 0;
		const char *name = strrchr(line, ' ');
		char want[80];
		if (!name)
			continue;
		snprintf(want, sizeof(want), ",%s,", ++name);
		if (!names && !strcmp(name, "total"))
			count = calls;
		else if (names && strstr(names, want))
			count += calls;
	}
	fclose(f);
	return count;
}

static void need_strace(void)
{
	char out[256];
	const char *version[] = {"strace", "-V", NULL};
	if (dtt_system(out, sizeof(out), version, NULL) != 0)
		cr_skip_test("strace is not installed");
}

/* bench-calls [calls] OP N PATH under `denytrace run` (with opts), or under
 * LD_PRELOAD alone when opts is NULL; the slope over N of its system calls
 * named in names (as system_calls_of). */
static double system_calls_per_call(const char *op, const char *path, const char *const *opts,
                                    const char *names)
{
	need_strace();
	char dt[600], ring[600], probe[700];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	snprintf(ring, sizeof(ring), "%s/cost.ring", dtt_tmpdir());
	snprintf(probe, sizeof(probe), "LD_PRELOAD=%s/libdenytrace.so", dtt_build());
	long totals[2];
	const char *counts[2] = {"100", "300"};
	for (int i = 0; i < 2; i++) {
		const char *argv[32];
		size_t k = 0;
		if (opts) {
			argv[k++] = dt, argv[k++] = "run", argv[k++] = "-q", argv[k++] = "-o";
			argv[k++] = ring;
			for (const char *const *o = opts; *o; o++)
				argv[k++] = *o;
			argv[k++] = "--";
		}
		argv[k++] = dtt_helper("bench-calls");
		if (strcmp(op, "refuse") != 0)
			argv[k++] = "calls";
		const char *rest[] = {op, counts[i], path, NULL};
		for (size_t j = 0; j < sizeof(rest) / sizeof(rest[0]); j++)
			argv[k++] = rest[j];
		const char *env[] = {probe, NULL};
		totals[i] = system_calls_of(argv, opts ? NULL : env, names);
	}
	cr_assert(totals[0] >= 0 && totals[1] >= 0, "strace failed");
	return (double)(totals[1] - totals[0]) / 200.0;
}

/* The probe's own system calls per refusal (ENOENT made one), of those
 * named (NULL: all, less the refused open itself). */
static double probe_calls_per_refusal(const char *extra, const char *names)
{
	char missing[600];
	snprintf(missing, sizeof(missing), "%s/missing/kanban.db", dtt_tmpdir());
	const char *opts[] = {"--errnos", "ENOENT", extra, NULL};
	return system_calls_per_call("refuse", missing, opts, names) - (names ? 0.0 : 1.0);
}

/* Was 14.5: two getpid (one for the Python frames' vfork test) and a
 * sigaltstack per record; the main thread's pid is its thread id, and
 * the signal stack is asked again only when the program set one. 11 then,
 * 12 with the record's thread id asked of the kernel (a handler's refusal
 * can clear the claim word the id was taken from: the stress flake). 6
 * with that id the one the claim asked for, and the parent, ids, groups
 * and name kept per thread until a call that changes them (selfids.c):
 * the claim's gettid, the sigprocmask pair, the parent's open and its
 * statx, the ring's madvise. 7 with the arena's madvise (a program may
 * have unmapped or protected it: test_memhostile). The total has some
 * slack: resolve.c
 * refreshes its cached directory names every 100 ms, more often per
 * refusal on a loaded machine. */
Test(cost, a_recorded_refusal_asks_for_its_ids_and_name_only_once_and_no_pid_nor_signal_stack)
{
	double per = probe_calls_per_refusal(NULL, ",getpid,sigaltstack,");
	cr_expect_leq(per, 0.05, "%.2f getpid and sigaltstack per refusal", per);
	double ids =
	    probe_calls_per_refusal(NULL, ",gettid,getppid,geteuid,getegid,getgroups,prctl,");
	cr_expect_leq(ids, 1.05, "%.2f gettid, getppid, geteuid, getegid, getgroups, prctl", ids);
	double all = probe_calls_per_refusal(NULL, NULL);
	cr_log_info("%.2f system calls of the probe's own per refusal", all);
	cr_expect_leq(all, 7.5, "%.2f system calls per refusal", all);
}

/* An EPERM refusal also records the inode flags of the path and its
 * directory (chattr's immutable, append-only). Read with FS_IOC_GETFLAGS
 * that was a stat, an open, the ioctl and a close for each, 8 system
 * calls; statx's attributes say the same in one each where the filesystem
 * reports them (ext4, xfs, btrfs, tmpfs). The path itself is resolved
 * without opening its directory once the cache knows it, and its leaf
 * with one lstat (resolve.c). */
Test(cost, an_eperm_refusal_in_a_known_directory_opens_nothing)
{
	need_strace();
	if (geteuid() != 0)
		cr_skip_test("chattr +i needs root");
	snprintf(immutable, sizeof(immutable), "%s/kanban.db", dtt_tmpdir());
	FILE *f = fopen(immutable, "w");
	cr_assert_not_null(f);
	fclose(f);
	if (chattr("+i", immutable) != 0) {
		immutable[0] = 0;
		cr_skip_test("the test's filesystem keeps no inode flags");
	}
	struct dtt_run r;
	const char *argv[] = {dtt_helper("bench-calls"), "refuse", "2", immutable, NULL};
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	const struct dt_record *d = dtt_find(&r, DT_REC_DENIAL, NULL, "/kanban.db");
	cr_assert_not_null(d, "the EPERM refusal was not recorded: %s", r.out);
	cr_assert(d->has_iflags && (d->iflags & FS_IMMUTABLE_FL), "inode flags not recorded");
	cr_expect(d->has_dir_iflags && !(d->dir_iflags & FS_IMMUTABLE_FL));
	dtt_free(&r);

	const char *opts[] = {NULL};
	double ioctls = system_calls_per_call("refuse", immutable, opts, ",ioctl,");
	cr_expect_leq(ioctls, 0.05, "%.2f ioctl per EPERM refusal", ioctls);
	/* the parent's O_PATH open and close too, its name from the cache
	 * (less the refused open itself) */
	double opens = system_calls_per_call("refuse", immutable, opts, ",openat,close,") - 1.0;
	cr_expect_leq(opens, 0.5, "%.2f openat and close per EPERM refusal", opens);
	double all = system_calls_per_call("refuse", immutable, opts, NULL) - 1.0;
	cr_log_info("%.2f system calls of the probe's own per EPERM refusal", all);
	cr_expect_leq(all, 9.5, "%.2f system calls per EPERM refusal", all); /* 8 + the arena's */
}

Test(cost, a_refusal_without_its_stack_asks_for_no_pid_nor_signal_stack)
{
	double per = probe_calls_per_refusal("--no-backtrace", ",getpid,sigaltstack,");
	cr_expect_leq(per, 0.05, "%.2f getpid and sigaltstack per refusal", per);
}

/* SQLite opens its journal at every transaction: a write-class success
 * already seen is no news, and deciding so took a gettid (the claim on
 * the thread's state came first). (The facts are looked at again every
 * 100 ms: statx, geteuid, getegid, not counted here.) */
Test(cost, a_successful_write_seen_lately_makes_no_gettid)
{
	char file[600];
	snprintf(file, sizeof(file), "%s/journal", dtt_tmpdir());
	const char *opts[] = {NULL};
	double per = system_calls_per_call("create", file, opts, ",gettid,");
	cr_expect_leq(per, 0.05, "%.2f gettid per open and close", per);
}

/* With LD_PRELOAD alone no ring is named: nothing can be recorded, and
 * a success was still looked at (gettid, and statx of the file and its
 * directory when the last look was 100 ms ago). */
Test(cost, without_a_ring_a_successful_write_makes_no_system_call_of_the_probes_own)
{
	char file[600];
	snprintf(file, sizeof(file), "%s/journal", dtt_tmpdir());
	double all = system_calls_per_call("create", file, NULL, NULL);
	double probes =
	    system_calls_per_call("create", file, NULL, ",gettid,statx,geteuid,getegid,");
	cr_expect_leq(probes, 0.0, "%.2f gettid, statx, geteuid and getegid per create", probes);
	cr_expect_leq(all, 2.05, "%.2f system calls per open and close", all);
}
