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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(cost, .fini = teardown, .timeout = 120);

/* The total of strace -c's summary for `denytrace run` of bench-calls
 * making n refused opens (ENOENT made a refusal), -1 when it failed. */
static long system_calls_for(int n, const char *const *opts)
{
	char summary[600], ring[600], missing[600], count[16];
	snprintf(summary, sizeof(summary), "%s/strace-%d", dtt_tmpdir(), n);
	snprintf(ring, sizeof(ring), "%s/cost.ring", dtt_tmpdir());
	snprintf(missing, sizeof(missing), "%s/missing/kanban.db", dtt_tmpdir());
	snprintf(count, sizeof(count), "%d", n);
	char dt[600];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	const char *argv[32] = {"strace", "-f", "-c",       "-o",     summary, dt,
	                        "run",    "-q", "--errnos", "ENOENT", "-o",    ring};
	size_t k = 12;
	for (; opts && *opts; opts++)
		argv[k++] = *opts;
	const char *rest[] = {"--", dtt_helper("bench-calls"), "refuse", count, missing, NULL};
	for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++)
		argv[k++] = rest[i];
	char out[4096];
	if (dtt_system(out, sizeof(out), argv, NULL) != 0)
		return -1;
	FILE *f = fopen(summary, "r");
	if (!f)
		return -1;
	char line[256];
	long total = -1;
	while (fgets(line, sizeof(line), f)) {
		double pct, secs;
		long usecs, calls;
		if (strstr(line, " total") &&
		    sscanf(line, "%lf %lf %ld %ld", &pct, &secs, &usecs, &calls) == 4)
			total = calls;
	}
	fclose(f);
	return total;
}

/* The probe's own system calls per refusal: the slope, less the refused
 * open itself. */
static double probe_calls_per_refusal(const char *const *opts)
{
	char out[256];
	const char *version[] = {"strace", "-V", NULL};
	if (dtt_system(out, sizeof(out), version, NULL) != 0)
		cr_skip_test("strace is not installed");
	long few = system_calls_for(100, opts), many = system_calls_for(300, opts);
	cr_assert(few > 0 && many > few, "strace counted %ld and %ld system calls", few, many);
	return (double)(many - few) / 200.0 - 1.0;
}

/* Was 14.5: two getpid (one for the Python frames' vfork test), and a
 * sigaltstack per record; the main thread's pid is its thread id, and
 * the signal stack is asked again only when the program set one. */
Test(cost, a_recorded_refusal_makes_at_most_eleven_system_calls_of_the_probes_own)
{
	double per = probe_calls_per_refusal(NULL);
	cr_log_info("%.2f system calls of the probe's own per refusal", per);
	cr_expect_leq(per, 11.5, "%.2f system calls per refusal", per);
}

Test(cost, a_refusal_without_its_stack_makes_no_more_system_calls)
{
	const char *opts[] = {"--no-backtrace", NULL};
	double per = probe_calls_per_refusal(opts);
	cr_expect_leq(per, 11.5, "%.2f system calls per refusal", per);
}
