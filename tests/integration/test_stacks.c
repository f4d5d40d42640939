/* SPDX-License-Identifier: MIT */
/*
 * The probe's cached unwinder (preload/unwind.c), the only one on the
 * refusal path, records the stacks libgcc's unwinder sees, frame for frame
 * (module and offset), on the stacks of real programs and on each kind of
 * frame it must cross (tests/helpers/stackshapes.c, which asks libgcc in
 * the program itself after each refusal); where it stops short (a signal
 * frame, a CFA expression, CFI that lies) the record says so, and the
 * frames it has are libgcc's. And stacks libgcc cannot take without
 * hanging or crashing the program (a JIT registering frames, CFI that
 * misses a push) leave the program as it runs without the probe.
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
 * words (module by file name), in the order they were recorded; and the
 * stacks the program's own libgcc printed, by refused file name. */
struct stacks {
	size_t n;
	char s[MAXDEN][2048];
	char path[MAXDEN][64]; /* the refused file's name */
	int truncated[MAXDEN];
	int status;
	char out[65536];
	char ring[4096];
};

static void run_stacks(struct stacks *st, const char *const *cmd)
{
	const char *argv[32];
	dtt_as_nobody(argv, 32, cmd);
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s: ring unreadable: %s", cmd[0], r.out);
	st->n = 0;
	st->status = r.status;
	snprintf(st->ring, sizeof(st->ring), "%s", r.ring);
	snprintf(st->out, sizeof(st->out), "%s", r.out);
	for (size_t i = 0; i < r.n && st->n < MAXDEN; i++) {
		const struct dt_record *d = &r.recs[i];
		if (d->type != DT_REC_DENIAL || !d->p[0].abspath ||
		    (strncmp(d->p[0].abspath, ro, strlen(ro)) &&
		     strncmp(d->p[0].abspath, ro_files, strlen(ro_files))))
			continue;
		const char *leaf = strrchr(d->p[0].abspath, '/');
		snprintf(st->path[st->n], sizeof(st->path[0]), "%s", leaf ? leaf + 1 : "");
		st->truncated[st->n] = d->stack_trunc;
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

/* The k-th line "libgcc NAME: ..." of the program's output, its words
 * after the colon, or NULL. */
static const char *libgcc_line(const struct stacks *st, const char *name, size_t k, char *out,
                               size_t cap)
{
	char key[96];
	snprintf(key, sizeof(key), "libgcc %s:", name);
	const char *p = st->out;
	while ((p = strstr(p, key))) {
		if ((p == st->out || p[-1] == '\n') && k-- == 0) {
			p += strlen(key);
			size_t n = strcspn(p, "\n");
			snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
			return out;
		}
		p++;
	}
	return NULL;
}

/* The words of a stack after its first frame: the refusing function's
 * own return address differs (the probe's is its open call's, libgcc's
 * the call that asked it), the callers' must not. At most max words. */
static void callers(const char *stack, size_t max, char *out, size_t cap)
{
	const char *p = strchr(stack, ' ');
	p = p ? strchr(p + 1, ' ') : NULL;
	size_t n = 0;
	out[0] = 0;
	while (p && n < max) {
		const char *e = strchr(p + 1, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		size_t have = strlen(out);
		snprintf(out + have, cap - have, "%.*s", (int)len, p);
		n++;
		p = e;
	}
}

/* Each refusal's stack is whole (not cut) and, past the refusing
 * function, the stack the program's libgcc saw there. */
static void expect_libgcc_stacks(const char *const *cmd)
{
	static struct stacks st;
	run_stacks(&st, cmd);
	cr_assert_gt(st.n, 0, "%s: no refusal recorded (exit %d): %s", cmd[0], st.status, st.out);
	for (size_t i = 0; i < st.n; i++) {
		char gcc[4096], want[4096], got[4096];
		size_t k = 0;
		for (size_t j = 0; j < i; j++)
			k += !strcmp(st.path[j], st.path[i]);
		cr_assert_not_null(libgcc_line(&st, st.path[i], k, gcc, sizeof(gcc)),
		                   "%s: the program printed no libgcc stack for %s: %s", cmd[0],
		                   st.path[i], st.out);
		size_t frames = words(st.s[i]);
		cr_expect_gt(frames, 2, "%s: a short stack: %s", cmd[0], st.s[i]);
		cr_expect_not(st.truncated[i], "%s: the stack was cut: %s", cmd[0], st.s[i]);
		/* libgcc's words start at refuse (one fewer than the probe's op) */
		char padded[4200];
		snprintf(padded, sizeof(padded), "x:%s", gcc);
		callers(st.s[i], frames - 1, got, sizeof(got));
		callers(padded, frames - 1, want, sizeof(want));
		cr_expect_str_eq(got, want, "%s: refusal %zu (%s) differs from libgcc's stack",
		                 cmd[0], i, st.path[i]);
	}
}

static void shape(const char *name)
{
	const char *cmd[] = {dtt_helper("stackshapes"), name, ro, NULL};
	expect_libgcc_stacks(cmd);
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

/* Bounded by the thread's stack, not by a fixed distance from the stack
 * pointer: a 20 MiB frame in a 64 MiB thread stack is walked through. */
Test(stacks, a_20_mib_frame_is_walked_through)
{
	shape("huge");
}

/* Eight threads refusing at once, each from its own depth: every one of
 * their 200 stacks is its thread's, libgcc's; the cache, filled and read
 * by all of them together, never answers one thread with another's rule. */
Test(stacks, eight_threads_at_once_each_get_their_own_stack)
{
	const char *cmd[] = {dtt_helper("stackshapes"), "threads", ro, NULL};
	static struct stacks st;
	run_stacks(&st, cmd);
	cr_assert_eq(st.n, 201, "%s", st.out);
	const char *want[8] = {0};
	for (size_t i = 1; i < st.n; i++) {
		int t = st.path[i][0] == 't' ? st.path[i][1] - '0' : -1;
		cr_assert(t >= 0 && t < 8, "%s", st.path[i]);
		if (!want[t])
			want[t] = st.s[i];
		cr_expect_str_eq(st.s[i], want[t], "record %zu of t%d: %s, not %s", i, t, st.s[i],
		                 want[t]);
	}
	for (int t = 0; t < 8; t++)
		cr_assert_not_null(want[t], "no refusal of t%d", t);
	/* thread t is t + 1 calls deeper than no nesting */
	cr_expect_gt(words(want[7]), words(want[0]), "%s / %s", want[7], want[0]);
	expect_libgcc_stacks(cmd);
}

/* Stacks the cached unwinder stops in: the refusal at index `at` is
 * recorded, its stack marked cut after at least one frame, and the frames
 * it has are the first of libgcc's. */
static void expect_cut(const char *name, size_t want, size_t at)
{
	const char *cmd[] = {dtt_helper("stackshapes"), name, ro, NULL};
	static struct stacks st;
	run_stacks(&st, cmd);
	cr_assert_eq(st.n, want, "%s: %s", name, st.out);
	cr_expect(st.truncated[at], "%s: the stack is not marked cut: %s", name, st.s[at]);
	size_t frames = words(st.s[at]);
	cr_expect_geq(frames, 1, "%s: no frame before the cut", name);
	char gcc[4096], padded[4200], got[4096], wantw[4096];
	cr_assert_not_null(libgcc_line(&st, st.path[at], 0, gcc, sizeof(gcc)), "%s", st.out);
	snprintf(padded, sizeof(padded), "x:%s", gcc);
	callers(st.s[at], frames - 1, got, sizeof(got));
	callers(padded, frames - 1, wantw, sizeof(wantw));
	cr_expect_str_eq(got, wantw, "%s: the frames before the cut are not libgcc's", name);
	cr_expect_gt(words(gcc), frames, "%s: libgcc saw no more than the cut stack", name);
}

/* A signal frame: the stack ends at the handler's return into the
 * kernel's trampoline. The plain refusal before it is whole. */
Test(stacks, a_signal_handler_stack_ends_at_the_signal_frame)
{
	expect_cut("signal", 2, 1);
}

/* A CFA that is a DWARF expression (realignment through DRAP). */
Test(stacks, a_frame_realigned_through_drap_ends_the_stack)
{
	expect_cut("drap", 1, 0);
}

/* The program's status and output with and without the probe, the first
 * under a hang guard (SIGKILL after 60 s: status 137). */
static void expect_unchanged(const char *name, struct stacks *st)
{
	const char *cmd[] = {"timeout", "-s", "KILL", "60", dtt_helper("stackshapes"),
	                     name,      ro,   NULL};
	const char *argv[32];
	dtt_as_nobody(argv, 32, cmd);
	char plain[65536];
	int status = dtt_system(plain, sizeof(plain), argv, NULL);
	run_stacks(st, cmd);
	cr_assert_eq(status, 0, "%s without the probe: exit %d: %s", name, status, plain);
	cr_assert_eq(st->status, status, "%s under the probe: exit %d (137: it hung): %s", name,
	             st->status, st->out);
	cr_expect_str_eq(st->out, plain, "%s: the output differs under the probe", name);
}

/* libgcc's unwinder in a handler takes object_mutex, which the
 * interrupted __register_frame holds: the probe must not call it. */
Test(stacks, a_jit_registering_frames_with_a_refusing_alarm_handler_runs_as_without_the_probe)
{
	static struct stacks st;
	expect_unchanged("jit", &st);
	size_t jit = 0;
	for (size_t i = 0; i < st.n; i++)
		jit += !strcmp(st.path[i], "jit");
	cr_expect_eq(jit, 100, "the handlers' refusals: %zu recorded, not 100", jit);
}

/* CFI missing a push names 0x10 as the return address: the stack stops
 * there (libgcc's fallback reads the code at 0x10 and crashes). */
Test(stacks, cfi_that_misses_a_push_cuts_the_stack_and_nothing_else)
{
	static struct stacks st;
	expect_unchanged("badcfi", &st);
	cr_assert_eq(st.n, 2, "%s", st.out);
	cr_expect_str_eq(st.path[1], "badcfi");
	cr_expect(st.truncated[1], "not marked cut: %s", st.s[1]);
	/* refuse, refuse_badcfi, the stub; then at most the address it named */
	cr_expect_geq(words(st.s[1]), 3, "%s", st.s[1]);
	cr_expect_leq(words(st.s[1]), 4, "%s", st.s[1]);
	cr_expect(!strncmp(st.s[1], "open: stackshapes+", 18), "%s", st.s[1]);
	/* the report's JSON says which stack was cut */
	char sh[5000], out[4096];
	snprintf(sh, sizeof(sh),
	         "'%s/denytrace' report --format json '%s' | python3 -c '"
	         "import json, sys\n"
	         "d = json.load(sys.stdin)\n"
	         "for x in d[\"denials\"]:\n"
	         "    print(x[\"path\"].rsplit(\"/\", 1)[1], x[\"backtrace_truncated\"])'",
	         dtt_build(), st.ring);
	const char *argv[] = {"sh", "-c", sh, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 0, "%s", out);
	cr_expect_str_eq(out, "plain False\nbadcfi True\n");
}

/* Each refusal of cmd has a stack of more than two frames that is not cut. */
static void expect_whole_stacks(const char *const *cmd)
{
	static struct stacks st;
	run_stacks(&st, cmd);
	cr_assert_gt(st.n, 0, "%s: no refusal recorded (exit %d): %s", cmd[0], st.status, st.out);
	for (size_t i = 0; i < st.n; i++) {
		cr_expect_gt(words(st.s[i]), 2, "%s: a short stack: %s", cmd[0], st.s[i]);
		cr_expect_not(st.truncated[i], "%s: a cut stack: %s", cmd[0], st.s[i]);
	}
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
			expect_whole_stacks(cmds[i]);
	}
}

/* ---- plugins unloaded and loaded again ------------------------------------ */

/* reload's command: `reload MODE WORK ro ARGS...`, WORK writable by all. */
static void reload_cmd(const char **cmd, const char *mode, const char *a, const char *b)
{
	static char work[600], so[2][700];
	snprintf(work, sizeof(work), "%s/work", dtt_tmpdir());
	mkdir(work, 0777);
	chmod(work, 0777);
	snprintf(so[0], sizeof(so[0]), "%s/helpers/plugin-%s.so", dtt_build(), a);
	if (b)
		snprintf(so[1], sizeof(so[1]), "%s/helpers/plugin-%s.so", dtt_build(), b);
	size_t k = 0;
	cmd[k++] = dtt_helper("reload");
	cmd[k++] = mode;
	cmd[k++] = work;
	cmd[k++] = ro;
	cmd[k++] = so[0];
	if (b)
		cmd[k++] = so[1];
	cmd[k] = NULL;
}

/* A plugin loaded, refused in and unloaded, then its other build (the same
 * code at the same offsets, another frame size) loaded at the same address
 * by the same path: its refusal's stack is the one a fresh process loading
 * only that build records, not one read with the first build's rules. */
static void expect_reloaded_stack(const char *first, const char *second)
{
	const char *cmd[8];
	static struct stacks reloaded, fresh;
	reload_cmd(cmd, "seq", first, second);
	run_stacks(&reloaded, cmd);
	cr_assert_eq(reloaded.status, 0, "%s", reloaded.out);
	cr_assert_eq(reloaded.n, 2, "%s", reloaded.out);
	const char *b0 = strstr(reloaded.out, "base 0 "), *b1 = strstr(reloaded.out, "base 1 ");
	cr_assert(b0 && b1, "%s", reloaded.out);
	cr_assert_eq(strcspn(b0 + 7, "\n"), strcspn(b1 + 7, "\n"));
	cr_assert(!strncmp(b0 + 7, b1 + 7, strcspn(b0 + 7, "\n")),
	          "the second build was not loaded where the first was: %s", reloaded.out);
	reload_cmd(cmd, "seq", second, NULL);
	run_stacks(&fresh, cmd);
	cr_assert_eq(fresh.n, 1, "%s", fresh.out);
	cr_expect_gt(words(fresh.s[0]), 4, "%s", fresh.s[0]);
	cr_expect_not(reloaded.truncated[1], "the reloaded plugin's stack was cut: %s",
	              reloaded.s[1]);
	cr_expect_str_eq(reloaded.s[1], fresh.s[0], "the reloaded %s build's stack", second);
}

Test(stacks, a_plugin_rebuilt_with_a_bigger_frame_and_reloaded_gets_its_own_stack)
{
	expect_reloaded_stack("small", "big");
}

Test(stacks, a_plugin_rebuilt_with_a_smaller_frame_and_reloaded_gets_its_own_stack)
{
	expect_reloaded_stack("big", "small");
}

/* Eight threads loading and unloading the two builds (from two paths)
 * against each other's refusals, 240 in all: the program is unharmed and
 * every stack is whole and starts in the build its thread loaded. */
Test(stacks, eight_threads_racing_dlopen_and_dlclose_get_whole_stacks)
{
	const char *cmd[8];
	static struct stacks st;
	reload_cmd(cmd, "race", "small", "big");
	run_stacks(&st, cmd);
	cr_assert_eq(st.status, 0, "%s", st.out);
	cr_assert_eq(st.n, 240, "%s", st.out);
	for (size_t i = 0; i < st.n; i++) {
		char want[32];
		snprintf(want, sizeof(want), "open: %s.so+", st.path[i]);
		cr_expect(!strncmp(st.s[i], want, strlen(want)), "%s", st.s[i]);
		cr_expect_not(st.truncated[i], "a cut stack: %s", st.s[i]);
		cr_expect_eq(words(st.s[i]), 5, "plugin, load_and_refuse, racer, libc twice: %s",
		             st.s[i]);
	}
}
