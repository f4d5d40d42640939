/* SPDX-License-Identifier: MIT */
/*
 * The probe looks each real function up at its wrapper's first call. These
 * tests make that first call where it is delicate (threads racing it, a
 * signal handler before anything was resolved, a handler racing the main
 * thread, a vfork child) in a real read-only bind mount (bubblewrap), and
 * check that every call returned what the kernel returns and that every
 * refusal was recorded. tests/helpers/firstcall.c is the program.
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

TestSuite(firstcall, .init = setup, .fini = teardown, .timeout = 120);

static void run_firstcall(struct dtt_run *r, const char *mode, const char *n)
{
	const char *argv[DTT_BWRAP_RW_WORDS + 6];
	size_t k = dtt_bwrap_rw(argv, rw);
	const char *rest[] = {dtt_helper("firstcall"), mode, ro, rw, n, NULL};
	for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++)
		argv[k++] = rest[i];
	cr_assert_eq(dtt_run(r, NULL, argv, NULL), 0, "ring unreadable: %s", r->out);
	cr_assert_eq(r->status, 0, "firstcall %s: %s", mode, r->out);
	cr_assert(strstr(r->out, "status OK\n"), "%s", r->out);
}

/* How many EROFS refusals of op were recorded for paths RO/name... */
static size_t refusals(const struct dtt_run *r, const char *op, const char *name)
{
	char prefix[600];
	snprintf(prefix, sizeof(prefix), "%s/%s", ro, name);
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *d = &r->recs[i];
		if (d->type != DT_REC_DENIAL || !d->op || strcmp(d->op, op) || !d->p[0].abspath)
			continue;
		if (!strncmp(d->p[0].abspath, prefix, strlen(prefix)) &&
		    !strcmp(dt_errno_name(d->err), "EROFS"))
			n++;
	}
	return n;
}

Test(firstcall, threads_racing_the_first_calls_get_real_results_and_every_refusal_is_recorded)
{
	struct dtt_run r;
	run_firstcall(&r, "threads", NULL);
	cr_expect_eq(refusals(&r, "mkdir", "m-"), 8, "mkdir: %s", r.out);
	cr_expect_eq(refusals(&r, "symlink", "s-"), 8, "symlink: %s", r.out);
	cr_expect_eq(refusals(&r, "creat", "c-"), 8, "creat: %s", r.out);
	cr_expect_eq(refusals(&r, "mkdirat", "a-"), 8, "mkdirat: %s", r.out);
	dtt_free(&r);
}

Test(firstcall, a_signal_handler_making_the_first_calls_gets_real_results_and_is_recorded)
{
	struct dtt_run r;
	run_firstcall(&r, "signal", NULL);
	cr_expect_eq(refusals(&r, "mkdir", "sig"), 1, "%s", r.out);
	dtt_free(&r);
}

Test(firstcall, a_handler_racing_the_main_threads_first_call_gets_real_results)
{
	struct dtt_run r;
	run_firstcall(&r, "sigrace", "40");
	/* every image refused in main at least once (the helper checked that
	 * every call, main's and the handler's, returned EROFS). A handler
	 * that interrupts main while it attaches the ring drops its record
	 * (preload/init.c, dt_ring_get), so only some of theirs are here. */
	cr_expect_geq(refusals(&r, "rmdir", "m"), 40, "%s", r.out);
	cr_expect_geq(refusals(&r, "rmdir", "h"), 1, "%s", r.out);
	dtt_free(&r);
}

Test(firstcall, a_vfork_child_making_the_first_calls_leaves_working_wrappers_to_its_parent)
{
	struct dtt_run r;
	run_firstcall(&r, "vfork", NULL);
	cr_expect_eq(refusals(&r, "mkdir", "vfork"), 1, "%s", r.out);
	cr_expect_eq(refusals(&r, "mkdir", "parent"), 1, "%s", r.out);
	dtt_free(&r);
}
