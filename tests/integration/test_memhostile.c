/* SPDX-License-Identifier: MIT */
/*
 * Programs that handle memory and descriptors they did not make, and whose
 * threads and children refuse while that happens (tests/helpers/
 * memhostile.c, racehostile.c): each must run as it does without the
 * probe, and its refusals be recorded where the probe's memory is still
 * there to record them with.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

TestSuite(memhostile, .fini = dtt_cleanup, .timeout = 120);

/* HELPER MODE DIR as nobody, without and with the probe: the same exit
 * status and output. Returns the run (its ring loaded) for more checks. */
static struct dtt_run *same_with_probe_sized(const char *helper, const char *mode, int ring_kept,
                                             const char *size)
{
	const char *cmd[] = {"timeout",           "-s", "KILL", "60", dtt_helper(helper), mode,
	                     dtt_ro_for_nobody(), NULL};
	const char *argv[16];
	dtt_as_nobody(argv, 16, cmd);
	static char plain[4096];
	int status = dtt_system(plain, sizeof(plain), argv, NULL);
	cr_assert_eq(status, 0, "%s without the probe: %s", mode, plain);
	const char *opts[] = {"--size", size, NULL};
	static struct dtt_run r;
	int loaded = dtt_run(&r, opts, argv, NULL);
	cr_assert(loaded == 0 || !ring_kept, "%s", r.out);
	cr_assert_eq(r.status, status, "%s: exit %d under the probe (137: it hung): %s", mode,
	             r.status, r.out);
	cr_expect_str_eq(r.out, plain, "%s: the output differs", mode);
	return &r;
}

static struct dtt_run *same_with_probe_ring(const char *helper, const char *mode, int ring_kept)
{
	return same_with_probe_sized(helper, mode, ring_kept, "8M");
}

static struct dtt_run *same_with_probe(const char *helper, const char *mode)
{
	return same_with_probe_ring(helper, mode, 1);
}

/* The same, and a record of a refused open of each leaf (NULL ends them). */
static void same_and_refused(const char *helper, const char *mode, ...)
{
	struct dtt_run *r = same_with_probe(helper, mode);
	va_list ap;
	va_start(ap, mode);
	for (const char *leaf; (leaf = va_arg(ap, const char *));)
		cr_expect(dtt_find(r, DT_REC_DENIAL, "open", leaf), "%s: no record of %s", mode,
		          leaf);
	va_end(ap);
	dtt_free(r);
}

/* A program that keeps its buffers from its children marks every mapping
 * it did not start with MADV_DONTFORK, the probe's ring and arenas among
 * them: its fork child's refusal stored into a ring and ran on an arena
 * stack that were not there (SIGSEGV). */
Test(memhostile, a_fork_child_without_the_probes_memory_refuses_as_without_the_probe)
{
	/* /child1 and /child2: the child maps the ring anew */
	same_and_refused("memhostile", "dontfork", "/first", "/child1", "/child2", "/after", NULL);
}

/* Mappings it did not start with unmapped, then refusals: they stored into
 * the unmapped ring and arena (SIGSEGV). */
Test(memhostile, a_program_that_unmaps_the_probes_memory_refuses_as_without_the_probe)
{
	same_and_refused("memhostile", "unmap", "/first", NULL);
}

Test(memhostile, a_program_that_makes_the_probes_memory_read_only_refuses_as_without_the_probe)
{
	same_and_refused("memhostile", "readonly", "/first", NULL);
}

/* Only the middle of the ring read-only: the ring check looks at its last
 * page, and the record that lapped into the middle raised SIGSEGV. The
 * slots mapped ahead are checked now, and the process goes quiet there. */
Test(memhostile, a_program_that_protects_the_middle_of_the_ring_refuses_as_without_the_probe)
{
	same_and_refused("memhostile", "ringmiddle", "/first", "/lapped", NULL);
}

Test(memhostile, a_fork_child_whose_probe_arenas_were_wiped_records_its_refusals)
{
	same_and_refused("memhostile", "wipe", "/child1", "/child2", "/after", NULL);
}

/* Past RLIMIT_MEMLOCK or RLIMIT_AS the ring cannot be mapped: the
 * refusals are lost, the program is not changed. After mlockall
 * (MCL_FUTURE) the probe's arena was locked memory too, and the program's
 * own 1 MiB mmap, within its limit without the probe, failed. */
Test(memhostile, a_program_at_its_memory_limits_runs_as_without_the_probe)
{
	dtt_free(same_with_probe("memhostile", "mlock"));
	dtt_free(same_with_probe("memhostile", "aslimit"));
}

/* RLIMIT_DATA at 0 refuses the probe's private arena: the three refusals
 * went unrecorded and uncounted (a report of nothing at all). */
Test(memhostile, a_program_without_room_for_private_memory_has_its_refusals_recorded)
{
	struct dtt_run *r = same_with_probe("memhostile", "datalimit");
	cr_expect_eq(dtt_count(r, DT_REC_DENIAL, "open", "/nodata"), 3);
	dtt_free(r);
}

/* Every descriptor from 3 on is the program's own file: the probe leaves
 * it as the program wrote it and finds the ring by its path. */
Test(memhostile, a_program_that_dup2s_onto_every_descriptor_keeps_its_file_and_is_recorded)
{
	struct dtt_run *r = same_with_probe("memhostile", "closefds");
	cr_expect_eq(dtt_count(r, DT_REC_DENIAL, "open", "/closed"), 3);
	dtt_free(r);
}

/* The same before the probe attached, onto the ring's own number: the
 * probe finds another file there, leaves it (and its offset) alone, and
 * opens no descriptor of its own that stays. */
Test(memhostile, a_program_that_takes_the_rings_descriptor_number_first_keeps_its_file)
{
	dtt_free(same_with_probe("memhostile", "closefirst"));
}

Test(memhostile, fork_and_vfork_storms_refusing_beside_refusing_threads)
{
	struct dtt_run *r = same_with_probe("racehostile", "forkstorm");
	cr_expect_geq(dtt_count(r, DT_REC_DENIAL, "open", "/forked"), 200);
	cr_expect_geq(dtt_count(r, DT_REC_DENIAL, "open", "/vforked"), 200);
	dtt_free(r);
}

Test(memhostile, a_sigsegv_handler_leaving_by_siglongjmp_while_threads_refuse)
{
	same_and_refused("racehostile", "segv", "/main", "/thread", NULL);
}

Test(memhostile, a_clone3_thread_on_an_8k_stack_refuses_and_is_recorded)
{
	same_and_refused("racehostile", "clone3", "/clone3", NULL);
}

/* Asynchronous cancellation reaches a thread wherever it is, but in a
 * record: the probe holds SIGCANCEL back there too (record.c's dt_record),
 * so that the thread never ends on the arena's stack. */
Test(memhostile, threads_cancelled_asynchronously_while_they_refuse)
{
	same_and_refused("racehostile", "cancel", "/cancelled", NULL);
}

/* A thread cancelled while its refusal, the process's first, attached the
 * ring left the attach under way for good: every other thread of the
 * process waited for it, gave up and lost its records (one child or two
 * in a hundred). */
Test(memhostile, a_thread_cancelled_while_it_attaches_the_ring_loses_no_other_threads_records)
{
	/* each child's thread refuses until cancelled, some 100 records a
	 * child: 8 MiB lapped over the first children's records when the
	 * machine was quick (75 to 86 of 100 left); 64 MiB hold them all */
	struct dtt_run *r = same_with_probe_sized("racehostile", "cancelfirst", 1, "64M");
	size_t after = dtt_count(r, DT_REC_DENIAL, "open", "/aftercancel");
	cr_expect_eq(after, 100,
	             "%zu of 100 children's refusals after the cancel recorded (%zu records, %llu "
	             "positions skipped, %llu torn, %llu corrupt): %s",
	             after, r->n, (unsigned long long)r->stats.skipped,
	             (unsigned long long)r->stats.torn, (unsigned long long)r->stats.corrupt,
	             r->out);
	dtt_free(r);
}

/* The ring truncated, grown and overwritten through the inherited
 * descriptor while eight threads refuse: the records are the program's to
 * destroy, its run is not the probe's to change. */
Test(memhostile, the_ring_truncated_and_rewritten_under_refusing_threads)
{
	dtt_free(same_with_probe_ring("racehostile", "ringfd", 0));
}
