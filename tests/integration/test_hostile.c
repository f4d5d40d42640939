/* SPDX-License-Identifier: MIT */
/*
 * Programs written to trip the probe up (the open risks of issue 23):
 * each must run as it does without the probe, and its refusals must be
 * recorded or, where the probe cannot record them, counted.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ringfile.h"
#include "testlib.h"

TestSuite(hostile, .fini = dtt_cleanup, .timeout = 120);

/* The ring header's counters: records the probe dropped, records
 * overwritten (lost), refusals under the program's own filter (unseen). */
struct counters {
	uint64_t dropped, lost, unseen;
};

static struct counters ring_counters(const char *ring)
{
	struct dt_ringfile rf;
	char err[512];
	cr_assert_eq(dt_ringfile_open(ring, &rf, err, sizeof(err)), 0, "%s", err);
	struct counters c = {__atomic_load_n(&rf.ring.hdr->dropped, __ATOMIC_RELAXED),
	                     __atomic_load_n(&rf.ring.hdr->lost, __ATOMIC_RELAXED),
	                     __atomic_load_n(&rf.ring.hdr->unseen, __ATOMIC_RELAXED)};
	dt_ringfile_close(&rf);
	return c;
}

/* A thread made by a raw clone without its own thread-local storage
 * shares the probe's thread-local state with the thread that made it:
 * both refusing at once, one took the other's arena and stack (SIGSEGV,
 * "stack smashing detected"), or wrote records twice. Now one of two
 * refusals that meet is counted dropped. The two threads share errno too,
 * so a refusal whose errno the other thread overwrote is not one the probe
 * can see: every record is one refusal, but not every refusal a record. */
Test(hostile, a_raw_clone_sharing_thread_local_storage_refusing_with_its_parent)
{
	const char *cmd[] = {
	    "timeout",           "-s", "KILL", "60", dtt_helper("rawclone"), "3000",
	    dtt_ro_for_nobody(), NULL};
	const char *argv[32];
	dtt_as_nobody(argv, 32, cmd);
	static char plain[4096];
	int status = dtt_system(plain, sizeof(plain), argv, NULL);
	cr_assert_eq(status, 0, "without the probe: %s", plain);
	const char *opts[] = {"--size", "32M", NULL};
	static struct dtt_run r;
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_assert_eq(r.status, status, "exit %d under the probe (137: it hung): %s", r.status,
	             r.out);
	cr_expect_str_eq(r.out, plain);
	size_t main_n = dtt_count(&r, DT_REC_DENIAL, "open", "/main");
	size_t raw_n = dtt_count(&r, DT_REC_DENIAL, "open", "/raw");
	struct counters k = ring_counters(r.ring);
	cr_expect_leq(main_n + raw_n + k.dropped + k.lost, 6000,
	              "recorded %zu + %zu, dropped %llu, lost %llu: more than the 6000 refusals",
	              main_n, raw_n, (unsigned long long)k.dropped, (unsigned long long)k.lost);
	cr_expect_eq(dtt_count(&r, DT_REC_DENIAL, NULL, NULL), main_n + raw_n,
	             "records of refusals nobody made");
	cr_expect_geq(main_n + raw_n, 1000, "recorded %zu + %zu", main_n, raw_n);
	dtt_free(&r);
}

/* A filter installed with TSYNC lands in every thread at once, also in one
 * recording a refusal: its next system call (getppid here, which the
 * filter kills for) would kill the program. The installer now turns new
 * records away and waits for those under way. Twenty runs: each had about
 * one chance in five to die before. */
Test(hostile, a_tsync_filter_installed_while_another_thread_records)
{
	const char *cmd[] = {"timeout",           "-s", "KILL", "60", dtt_helper("tsync"),
	                     dtt_ro_for_nobody(), NULL};
	const char *argv[32];
	dtt_as_nobody(argv, 32, cmd);
	static char plain[4096];
	cr_assert_eq(dtt_system(plain, sizeof(plain), argv, NULL), 0, "without the probe: %s",
	             plain);
	for (int i = 0; i < 20; i++) {
		static struct dtt_run r;
		cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
		cr_assert_eq(r.status, 0,
		             "run %d: exit %d under the probe (159: killed by the "
		             "filter): %s",
		             i, r.status, r.out);
		cr_expect_str_eq(r.out, plain);
		/* the 200 after the filter at least, counted without a record */
		cr_expect_geq(ring_counters(r.ring).unseen, 200);
		dtt_free(&r);
	}
}

/* hostile MODE DIR as nobody, without and with the probe: the same exit
 * status and output (each line a fact the program checked about itself). */
static void same_with_probe(const char *mode, const char *dir)
{
	const char *cmd[] = {"timeout", "-s", "KILL", "60", dtt_helper("hostile"), mode, dir, NULL};
	const char *argv[32];
	dtt_as_nobody(argv, 32, cmd);
	static char plain[4096];
	int status = dtt_system(plain, sizeof(plain), argv, NULL);
	cr_assert_eq(status, 0, "%s without the probe: %s", mode, plain);
	const char *opts[] = {"--size", "8M", NULL};
	static struct dtt_run r;
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_assert_eq(r.status, status, "%s: exit %d under the probe (137: it hung): %s", mode,
	             r.status, r.out);
	cr_expect_str_eq(r.out, plain, "%s: the output differs", mode);
	dtt_free(&r);
}

/* The mask the program set (a standard and a real-time signal blocked, one
 * pending), the signals sent while it refuses (delivered, none lost), and
 * errno after each refusal are its own again once the probe returns. */
Test(hostile, the_programs_signal_mask_pending_signals_and_errno_survive_refusals)
{
	same_with_probe("mask", dtt_ro_for_nobody());
}

Test(hostile, vfork_children_refusing_exit_with_the_errno_they_saw)
{
	same_with_probe("vfork", dtt_ro_for_nobody());
}

Test(hostile, a_signal_handler_forks_children_that_refuse_while_main_refuses)
{
	same_with_probe("forksig", dtt_ro_for_nobody());
}

/* Issue 24's table of successes, 64 threads writing distinct files at once:
 * every call succeeds and errno is left as the program set it. */
Test(hostile, sixty_four_threads_writing_distinct_files_keep_their_errno)
{
	char dir[700];
	snprintf(dir, sizeof(dir), "%s/w", dtt_tmpdir());
	mkdir(dir, 0777);
	chmod(dir, 0777);
	same_with_probe("writers", dir);
}
