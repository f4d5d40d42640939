/* SPDX-License-Identifier: MIT */
/*
 * A small stack is enough: the probe takes at most 2 KiB of the host's
 * stack on a refusal, the process's first included, and makes the record
 * on a stack of its own. Each program (tests/helpers/smallstack.c) refuses
 * with little stack left, on a canary-filled stack: a SIGTERM handler on
 * an 8 KiB (SIGSTKSZ) and a 4 KiB signal stack, threads with 8 and 4 KiB
 * left, a PTHREAD_STACK_MIN thread; and a successful write, which the
 * probe judges on the host's stack, with 4 KiB left. Under the probe it
 * must exit and print as without it, its call must be in the ring, and
 * its stack's high-water mark may rise by 2 KiB at most.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static char ro[600], scratch[600];

static void setup(void)
{
	/* root is refused nothing by mode bits: the programs run as nobody */
	chmod(dtt_tmpdir(), 0755);
	snprintf(ro, sizeof(ro), "%s/ro", dtt_tmpdir());
	snprintf(scratch, sizeof(scratch), "%s/scratch", dtt_tmpdir());
	mkdir(ro, 0555);
	chmod(ro, 0555);
	mkdir(scratch, 0777);
	chmod(scratch, 0777);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(smallstack, .init = setup, .fini = teardown, .timeout = 120);

#define PROBE_STACK_MAX 2048

/* What a smallstack run opens and what it must leave in the ring: a
 * refusal in ro (exit 0), or a successful write in scratch (the helper
 * then says "refused 0" and exits 1, with the probe and without). */
struct smallstack_case {
	const char *dir;
	int rec_type, exit_status;
};
static const struct smallstack_case refusal = {ro, DT_REC_DENIAL, 0};
static const struct smallstack_case success = {scratch, DT_REC_WRITE, 1};

/* Runs smallstack MODE [ARG] DIR without and with the probe; returns the
 * stack the probe added, or -1 when the program fails without the probe
 * too (the machine's signal frame alone may not fit a 4 KiB stack). */
static long probe_stack_in(const struct smallstack_case *sc, const char *mode, const char *arg,
                           const char *leaf)
{
	char measure[700], env0[760];
	snprintf(measure, sizeof(measure), "%s/used", scratch);
	snprintf(env0, sizeof(env0), "SMALLSTACK_USED=%s", measure);
	const char *env[] = {env0, NULL};
	const char *argv[10];
	size_t k = 0;
	if (geteuid() == 0) {
		argv[k++] = "setpriv";
		argv[k++] = "--reuid=65534";
		argv[k++] = "--regid=65534";
		argv[k++] = "--clear-groups";
	}
	argv[k++] = dtt_helper("smallstack");
	argv[k++] = mode;
	if (arg)
		argv[k++] = arg;
	argv[k++] = sc->dir;
	argv[k] = NULL;

	static char plain[65536];
	int status = dtt_system(plain, sizeof(plain), argv, env);
	long without = dtt_take_number(measure);
	if (status != sc->exit_status)
		return -1;
	cr_assert_gt(without, 0, "%s %s: no measure", mode, arg ? arg : "");

	static struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, env), 0, "ring unreadable: %s", r.out);
	long with = dtt_take_number(measure);
	cr_assert_eq(r.status, status, "%s %s: exit %d under the probe, %d without: %s", mode,
	             arg ? arg : "", r.status, status, r.out);
	cr_expect_str_eq(r.out, plain, "%s %s: the output differs", mode, arg ? arg : "");
	cr_expect_eq(dtt_count(&r, sc->rec_type, "open", leaf), 1, "%s %s: the open not recorded",
	             mode, arg ? arg : "");
	dtt_free(&r);
	cr_assert_gt(with, 0);
	cr_log_info("smallstack %s %s: %ld bytes of stack without the probe, %ld with", mode,
	            arg ? arg : "", without, with);
	return with - without;
}

static long probe_stack(const char *mode, const char *arg, const char *leaf)
{
	return probe_stack_in(&refusal, mode, arg, leaf);
}

static void expect_small(const char *mode, const char *arg, const char *leaf, int may_not_fit)
{
	long added = probe_stack(mode, arg, leaf);
	if (added < 0 && may_not_fit)
		cr_skip_test("smallstack %s %s fails without the probe on this machine", mode, arg);
	cr_assert_geq(added, 0, "smallstack %s %s fails without the probe", mode, arg ? arg : "");
	cr_expect_leq(added, PROBE_STACK_MAX, "%s %s: the probe took %ld bytes of the host's stack",
	              mode, arg ? arg : "", added);
}

Test(smallstack, a_first_refusal_in_a_handler_on_a_sigstksz_signal_stack)
{
	expect_small("altstack", "8192", "/altstack", 0);
}

/* With AVX-512 the kernel's signal frame alone nearly fills 4 KiB. */
Test(smallstack, a_first_refusal_in_a_handler_on_a_4_kib_signal_stack)
{
	expect_small("altstack", "4096", "/altstack", 1);
}

Test(smallstack, a_thread_with_8_kib_of_stack_left)
{
	expect_small("thread", "8192", "/thread", 0);
}

Test(smallstack, a_thread_with_4_kib_of_stack_left)
{
	expect_small("thread", "4096", "/thread", 0);
}

Test(smallstack, a_pthread_stack_min_thread)
{
	expect_small("min", NULL, "/min", 0);
}

/* A successful write worth a record (the first of its kind) is judged on
 * the host's stack before any arena: there the probe called memcpy and
 * clock_gettime, and the loader's first binding of each (its lookup and
 * the xsave area) took more than 4 KiB: SIGSEGV, where the program alone
 * ran fine. */
Test(smallstack, a_successful_write_in_a_thread_with_4_kib_of_stack_left)
{
	long added = probe_stack_in(&success, "thread", "4096", "/thread");
	cr_assert_geq(added, 0, "smallstack thread 4096 fails without the probe");
	cr_expect_leq(added, PROBE_STACK_MAX, "the probe took %ld bytes of the host's stack",
	              added);
}
