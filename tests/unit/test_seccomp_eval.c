/* SPDX-License-Identifier: MIT */
/*
 * preload/seccomp_eval.c: what a seccomp filter answers for the probe's
 * ring check, worked out from its BPF program, against what the kernel
 * answers for the same filter and call. The filters come from libseccomp
 * (allow-lists, deny-lists, argument rules, as programs build them) and by
 * hand (what libseccomp never emits).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seccomp_eval.h"

#define POPULATE_WRITE 23

static struct sock_filter prog[BPF_MAXINSNS];
static unsigned prog_len;

/* A libseccomp context, or the test skipped where libseccomp makes none:
 * under qemu-user, which refuses seccomp to its guests, libseccomp finds
 * no kernel support (make cross-aarch64 runs the unit suites there). */
static scmp_filter_ctx new_ctx(uint32_t dflt)
{
	scmp_filter_ctx ctx = seccomp_init(dflt);
	if (!ctx)
		cr_skip_test("libseccomp makes no filter here (qemu-user refuses seccomp to its "
		             "guests)");
	return ctx;
}

/* ctx's program, as seccomp_load would install it, into prog. */
static void export(scmp_filter_ctx ctx)
{
	cr_assert_not_null(ctx);
	FILE *f = tmpfile();
	cr_assert_not_null(f);
	cr_assert_eq(seccomp_export_bpf(ctx, fileno(f)), 0);
	rewind(f);
	prog_len = (unsigned)fread(prog, sizeof(prog[0]), BPF_MAXINSNS, f);
	fclose(f);
	seccomp_release(ctx);
	cr_assert_gt(prog_len, 0);
}

static struct seccomp_data call(long nr, void *addr, long advice)
{
	struct seccomp_data d = {.nr = (int)nr, .arch = dt_seccomp_arch()};
	d.args[0] = (uint64_t)(uintptr_t)addr;
	d.args[1] = 4096;
	d.args[2] = (uint64_t)advice;
	return d;
}

/* The kernel's answer: prog installed in a child, which then makes the
 * call; 1 when it returned 0 (allowed), 0 when it failed or was killed,
 * -1 when no filter can be installed here (qemu-user refuses seccomp to
 * its guests: the filter would apply to its own calls). */
static int kernel_allows(void *page, long advice)
{
	/* a filter at NULL: EFAULT from a kernel that reads it (nothing is
	 * installed), ENOSYS from qemu-user, whose forked guests also ended
	 * the suite with status 1 */
	errno = 0;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, NULL) != -1 || errno != EFAULT)
		return -1;
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct sock_fprog fp = {(unsigned short)prog_len, prog};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) != 0)
			_exit(3);
		long rc = syscall(SYS_madvise, page, 4096, advice);
		syscall(SYS_exit_group, rc == 0 ? 0 : 1);
	}
	int st = 0;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Our answer and the kernel's for madvise(page, 4096, advice). */
static void expect_same(void *page, long advice, int want)
{
	struct seccomp_data d = call(SYS_madvise, page, advice);
	int ours = dt_seccomp_allows(prog, prog_len, &d);
	cr_expect_eq(ours, want, "advice %ld: the evaluator says %d", advice, ours);
	int kernel = kernel_allows(page, advice);
	if (kernel < 0)
		cr_log_info("no seccomp filter can be installed here (qemu-user?): the "
		            "evaluator is not compared with the kernel");
	else
		cr_expect_eq(kernel, want, "advice %ld: the kernel disagrees", advice);
}

static void *page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(p, MAP_FAILED);
	return p;
}

static scmp_filter_ctx allow_list(uint32_t dflt)
{
	scmp_filter_ctx ctx = new_ctx(dflt);
	cr_assert_not_null(ctx);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(exit_group), 0), 0);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 0), 0);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 0), 0);
	return ctx;
}

Test(seccomp_eval, an_allow_list_without_madvise_refuses_the_check)
{
	export(allow_list(SCMP_ACT_KILL_PROCESS));
	expect_same(page(), POPULATE_WRITE, 0);
}

Test(seccomp_eval, an_allow_list_with_madvise_lets_the_check_through)
{
	scmp_filter_ctx ctx = allow_list(SCMP_ACT_KILL_PROCESS);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(madvise), 0), 0);
	export(ctx);
	expect_same(page(), POPULATE_WRITE, 1);
}

/* madvise allowed for MADV_DONTNEED alone, as malloc needs it: the check's
 * advice is another */
Test(seccomp_eval, madvise_allowed_for_another_advice_refuses_the_check)
{
	scmp_filter_ctx ctx = allow_list(SCMP_ACT_ERRNO(EPERM));
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(madvise), 1,
	                              SCMP_A2(SCMP_CMP_EQ, MADV_DONTNEED)),
	             0);
	export(ctx);
	void *p = page();
	expect_same(p, POPULATE_WRITE, 0);
	expect_same(p, MADV_DONTNEED, 1);
}

Test(seccomp_eval, a_deny_list_is_asked_about_the_call_itself)
{
	scmp_filter_ctx ctx = new_ctx(SCMP_ACT_ALLOW);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 0), 0);
	export(ctx);
	expect_same(page(), POPULATE_WRITE, 1);
	ctx = new_ctx(SCMP_ACT_ALLOW);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(madvise), 0), 0);
	export(ctx);
	expect_same(page(), POPULATE_WRITE, 0);
}

/* SECCOMP_RET_LOG allows (and logs); a trap, a trace or a user
 * notification leaves the call to someone else: not allowed */
Test(seccomp_eval, log_allows_and_trap_does_not)
{
	export(new_ctx(SCMP_ACT_LOG));
	expect_same(page(), POPULATE_WRITE, 1);
	scmp_filter_ctx ctx = new_ctx(SCMP_ACT_ALLOW);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(madvise), 0), 0);
	export(ctx);
	struct seccomp_data d = call(SYS_madvise, page(), POPULATE_WRITE);
	cr_expect_eq(dt_seccomp_allows(prog, prog_len, &d), 0);
}

/* What libseccomp never writes, by hand: a program that reads the
 * instruction pointer, jumps past its end, divides by zero, or never
 * returns is not answered for. */
Test(seccomp_eval, programs_it_cannot_answer_for_with_certainty_are_refused)
{
	struct seccomp_data d = call(SYS_madvise, page(), POPULATE_WRITE);
	struct sock_filter ip[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	cr_expect_eq(dt_seccomp_allows(ip, 2, &d), 0);
	struct sock_filter out[] = {BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 5),
	                            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	cr_expect_eq(dt_seccomp_allows(out, 2, &d), 0);
	struct sock_filter div[] = {BPF_STMT(BPF_LD | BPF_IMM, 7),
	                            BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
	                            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	cr_expect_eq(dt_seccomp_allows(div, 3, &d), 0);
	struct sock_filter noret[] = {BPF_STMT(BPF_LD | BPF_IMM, 7)};
	cr_expect_eq(dt_seccomp_allows(noret, 1, &d), 0);
	cr_expect_eq(dt_seccomp_allows(NULL, 0, &d), 0);
}

/* The scratch memory, X and arithmetic, which hand-written filters use:
 * the nr rebuilt in X through M[3] and compared there. */
Test(seccomp_eval, scratch_memory_and_arithmetic_are_followed)
{
	struct seccomp_data d = call(SYS_madvise, page(), POPULATE_WRITE);
	struct sock_filter p[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 5),
	    BPF_STMT(BPF_ST, 3),
	    BPF_STMT(BPF_LDX | BPF_MEM, 3),
	    BPF_STMT(BPF_MISC | BPF_TXA, 0),
	    BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 5),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 1, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)};
	prog_len = sizeof(p) / sizeof(p[0]);
	memcpy(prog, p, sizeof(p));
	expect_same(page(), POPULATE_WRITE, 1);
	d.nr = SYS_mprotect;
	cr_expect_eq(dt_seccomp_allows(p, prog_len, &d), 0);
}
