/* SPDX-License-Identifier: MIT */
/*
 * The probe's cached unwinder (preload/unwind.c) records the stacks
 * libgcc's unwinder records, frame for frame (module and offset), on the
 * stacks of real programs and on each kind of frame it must cross or
 * decline (tests/helpers/stackshapes.c). DENYTRACE_BACKTRACE=libgcc and
 * =fast make one unwinder alone do the work; unset, the cached one works
 * and libgcc takes over where it declines.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static char ro[600], ro_files[600];

static void setup(void)
{
	/* root is refused nothing by mode bits: the programs run as nobody */
	chmod(dtt_tmpdir(), 0755);
	snprintf(ro, sizeof(ro), "%s/ro", dtt_tmpdir());
	snprintf(ro_files, sizeof(ro_files), "%s/files", dtt_tmpdir());
	mkdir(ro, 0755);
	mkdir(ro_files, 0755);
	FILE *f;
	char p[700];
	snprintf(p, sizeof(p), "%s/text", ro_files);
	if ((f = fopen(p, "w"))) {
		fputs("a\n", f);
		fclose(f);
	}
	chmod(p, 0644);
	chmod(ro_files, 0555);
	chmod(ro, 0555);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(stacks, .init = setup, .fini = teardown, .timeout = 120);

#define MAXDEN 256

/* The stack of each refusal under the directories above, as "module+offset"
 * words (module by file name), in the order they were recorded. */
struct stacks {
	size_t n;
	char s[MAXDEN][2048];
	char path[MAXDEN][64]; /* the refused file's name */
	int status;
	char out[2048];
};

static void run_stacks(struct stacks *st, const char *mode, const char *const *cmd)
{
	const char *argv[32];
	size_t k = 0;
	if (geteuid() == 0) {
		static const char *const drop[] = {"setpriv", "--reuid=65534", "--regid=65534",
		                                   "--clear-groups"};
		for (size_t i = 0; i < 4; i++)
			argv[k++] = drop[i];
	}
	for (size_t i = 0; cmd[i] && k < 31; i++)
		argv[k++] = cmd[i];
	argv[k] = NULL;
	char envvar[64];
	snprintf(envvar, sizeof(envvar), "DENYTRACE_BACKTRACE=%s", mode);
	const char *env[] = {envvar, NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, mode ? env : NULL), 0, "%s: ring unreadable: %s",
	             cmd[0], r.out);
	st->n = 0;
	st->status = r.status;
	snprintf(st->out, sizeof(st->out), "%s", r.out);
	for (size_t i = 0; i < r.n && st->n < MAXDEN; i++) {
		const struct dt_record *d = &r.recs[i];
		if (d->type != DT_REC_DENIAL || !d->p[0].abspath ||
		    (strncmp(d->p[0].abspath, ro, strlen(ro)) &&
		     strncmp(d->p[0].abspath, ro_files, strlen(ro_files))))
			continue;
		const char *leaf = strrchr(d->p[0].abspath, '/');
		snprintf(st->path[st->n], sizeof(st->path[0]), "%s", leaf ? leaf + 1 : "");
		char *s = st->s[st->n++];
		size_t len = (size_t)snprintf(s, 2048, "%s:", d->op);
		for (size_t f = 0; f < d->nframes && len < 2048; f++) {
			const char *mod = d->frames[f].module < d->nmodules
			                      ? d->modules[d->frames[f].module]
			                      : "?";
			const char *base = strrchr(mod, '/');
			len +=
			    (size_t)snprintf(s + len, 2048 - len, " %s+%llx", base ? base + 1 : mod,
			                     (unsigned long long)d->frames[f].offset);
		}
	}
	dtt_free(&r);
}

static size_t words(const char *s)
{
	size_t n = 0;
	for (const char *p = strchr(s, ' '); p; p = strchr(p + 1, ' '))
		n++;
	return n;
}

/* Runs cmd with libgcc alone, the cached unwinder alone and both; each
 * refusal's stack must be the same under all three, and not empty. */
static void expect_same_stacks(const char *const *cmd)
{
	static struct stacks gcc, fast, both;
	run_stacks(&gcc, "libgcc", cmd);
	run_stacks(&fast, "fast", cmd);
	run_stacks(&both, NULL, cmd);
	cr_assert_gt(gcc.n, 0, "%s: no refusal recorded (exit %d): %s", cmd[0], gcc.status,
	             gcc.out);
	cr_expect_eq(fast.n, gcc.n, "%s", cmd[0]);
	cr_expect_eq(both.n, gcc.n, "%s", cmd[0]);
	for (size_t i = 0; i < gcc.n && i < fast.n && i < both.n; i++) {
		cr_expect_gt(words(gcc.s[i]), 2, "%s: a short stack: %s", cmd[0], gcc.s[i]);
		cr_expect_str_eq(fast.s[i], gcc.s[i], "%s: the cached unwinder's stack differs",
		                 cmd[0]);
		cr_expect_str_eq(both.s[i], gcc.s[i], "%s", cmd[0]);
	}
}

static void shape(const char *name)
{
	const char *cmd[] = {dtt_helper("stackshapes"), name, ro, NULL};
	expect_same_stacks(cmd);
}

Test(stacks, plain_calls)
{
	shape("plain");
}

Test(stacks, a_recursion_deeper_than_a_record_keeps)
{
	shape("deep");
}

Test(stacks, a_frame_grown_by_alloca)
{
	shape("alloca");
}

Test(stacks, a_function_that_realigns_its_stack)
{
	shape("realign");
}

Test(stacks, a_second_thread)
{
	shape("thread");
}

/* Eight threads refusing at once, each from its own depth: every one of
 * their 200 stacks is its thread's, the same from the cached unwinder
 * alone as from libgcc; the cache, filled and read by all of them
 * together, never answers one thread with another's rule. */
Test(stacks, eight_threads_at_once_each_get_their_own_stack)
{
	const char *cmd[] = {dtt_helper("stackshapes"), "threads", ro, NULL};
	static struct stacks gcc, fast;
	run_stacks(&gcc, "libgcc", cmd);
	run_stacks(&fast, "fast", cmd);
	cr_assert_eq(gcc.n, 201, "%s", gcc.out);
	cr_assert_eq(fast.n, 201, "%s", fast.out);
	/* libgcc's stack of each thread's file (after the plain refusal
	 * that loaded it), then every record against it */
	const char *want[8] = {0};
	for (size_t i = 1; i < gcc.n; i++) {
		int t = gcc.path[i][0] == 't' ? gcc.path[i][1] - '0' : -1;
		cr_assert(t >= 0 && t < 8, "%s", gcc.path[i]);
		if (!want[t])
			want[t] = gcc.s[i];
		cr_expect_str_eq(gcc.s[i], want[t], "libgcc itself differs for t%d", t);
	}
	for (int t = 0; t < 8; t++)
		cr_assert_not_null(want[t], "no refusal of t%d", t);
	/* thread t is t + 1 calls deeper than no nesting: t + 2 frames of
	 * stackshapes more than thread 0 would have with none */
	cr_expect_gt(words(want[7]), words(want[0]), "%s / %s", want[7], want[0]);
	for (size_t i = 1; i < fast.n; i++) {
		int t = fast.path[i][1] - '0';
		cr_assert(fast.path[i][0] == 't' && t >= 0 && t < 8, "%s", fast.path[i]);
		cr_expect_str_eq(fast.s[i], want[t], "record %zu of t%d: %s, not %s", i, t,
		                 fast.s[i], want[t]);
	}
}

/* Stacks the cached unwinder declines: alone it records none for the
 * refusal at index `at`; with libgcc behind it, libgcc's whole stack. */
static void expect_declined(const char *name, size_t want, size_t at)
{
	const char *cmd[] = {dtt_helper("stackshapes"), name, ro, NULL};
	static struct stacks gcc, fast, both;
	run_stacks(&gcc, "libgcc", cmd);
	run_stacks(&fast, "fast", cmd);
	run_stacks(&both, NULL, cmd);
	cr_assert_eq(gcc.n, want, "%s: %s", name, gcc.out);
	cr_assert_eq(fast.n, want, "%s: %s", name, fast.out);
	cr_assert_eq(both.n, want, "%s: %s", name, both.out);
	for (size_t i = 0; i < want; i++) {
		cr_expect_str_eq(both.s[i], gcc.s[i], "%s", name);
		if (i != at)
			cr_expect_str_eq(fast.s[i], gcc.s[i], "%s", name);
	}
	cr_expect_str_eq(fast.s[at], "open:", "%s: the cached unwinder did not decline", name);
	cr_expect_gt(words(gcc.s[at]), 4, "%s: libgcc's stack is short: %s", name, gcc.s[at]);
}

/* A signal frame: libgcc crosses it into the interrupted code. The plain
 * refusal before it is the cached unwinder's. */
Test(stacks, a_signal_handler_is_unwound_by_libgcc)
{
	expect_declined("signal", 2, 1);
}

/* A CFA that is a DWARF expression (realignment through DRAP). */
Test(stacks, a_frame_realigned_through_drap_is_unwound_by_libgcc)
{
	expect_declined("drap", 1, 0);
}

/* A frame larger than the cached unwinder follows. */
Test(stacks, a_20_mib_frame_is_unwound_by_libgcc)
{
	expect_declined("huge", 1, 0);
}

/* Real programs, Debian's builds: Python's sqlite3 module (libpython,
 * libsqlite3), the sqlite3 shell, git, sed, coreutils. */
Test(stacks, real_programs)
{
	char db[700], repo[700], text[700], py[900], dst[700];
	snprintf(db, sizeof(db), "%s/board.db", ro);
	snprintf(repo, sizeof(repo), "%s/repo", ro);
	snprintf(text, sizeof(text), "%s/text", ro_files);
	snprintf(dst, sizeof(dst), "%s/copy", ro);
	snprintf(py, sizeof(py),
	         "import sqlite3\n"
	         "try:\n"
	         "    sqlite3.connect(%s%s%s).execute('create table t(x)')\n"
	         "except sqlite3.Error:\n"
	         "    pass\n",
	         "'", db, "'");
	const char *const cmds[][6] = {
	    {"/usr/bin/python3", "-c", py, NULL},
	    {"/usr/bin/sqlite3", db, "create table t(x)", NULL},
	    {"/usr/bin/git", "init", "-q", repo, NULL},
	    {"/bin/sed", "-i", "s/a/b/", text, NULL},
	    {"/bin/mkdir", dst, NULL},
	    {"/bin/cp", text, dst, NULL},
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int have = access(cmds[i][0], X_OK) == 0;
		cr_expect(have, "%s is missing (scripts/install-deps.sh installs it)", cmds[i][0]);
		if (have)
			expect_same_stacks(cmds[i]);
	}
}
