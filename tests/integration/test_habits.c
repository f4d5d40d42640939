/* SPDX-License-Identifier: MIT */
/* One set of habits across the commands (issue 17): --json is a switch and
 * files come from -o; run, codex and soak keep 125 for their own failures;
 * `help CMD`; every help has its exit statuses and lists every cause; the
 * previous ring is kept; errors say what to do next; run's summary counts
 * as the report does; soak numbers runs from 1. Real CLI, real processes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "classify.h"
#include "ring_format.h"
#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(habits, .fini = teardown, .timeout = 120);

static const char *cli(void)
{
	static char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/denytrace", dtt_build());
	return path;
}

/* denytrace ARGS... run from dir; stdout and stderr in out. */
static int in_dir(const char *dir, char *out, size_t cap, const char *const *args)
{
	const char *argv[64] = {"sh", "-c", "cd \"$0\" && exec \"$@\"", dir, cli()};
	size_t n = 5;
	for (const char *const *a = args; *a && n < 63; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	return dtt_system(out, cap, argv, NULL);
}

static const char *sub(const char *name)
{
	static char path[4][PATH_MAX];
	static int k;
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dtt_tmpdir(), name);
	mkdir(path[k], 0755);
	return path[k];
}

/* python3 -c 'import json; d = json.load(open(FILE)); print(EXPR)' */
static void json_eval(const char *file, const char *expr, char *out, size_t cap)
{
	char code[2048];
	snprintf(code, sizeof(code), "import json; d = json.load(open('%s')); print(%s)", file,
	         expr);
	const char *argv[] = {"python3", "-c", code, NULL};
	cr_assert_eq(dtt_system(out, cap, argv, NULL), 0, "python: %s", out);
	out[strcspn(out, "\n")] = 0;
}

/* ---- 4: --json is a switch; -o names the file ---------------------------- */

Test(habits, soak_json_is_a_switch_and_the_summary_file_comes_from_o)
{
	const char *dir = sub("soak-json");
	static char out[65536];
	const char *a1[] = {"soak", "--runs", "2", "--json", "--", "true", NULL};
	cr_assert_eq(in_dir(dir, out, sizeof(out), a1), 0, "%s", out);
	char dashdash[PATH_MAX + 8];
	snprintf(dashdash, sizeof(dashdash), "%s/--", dir);
	cr_expect_neq(access(dashdash, F_OK), 0, "soak --json wrote a file named '--'");
	cr_expect_eq(out[0], '{', "soak --json printed no JSON on stdout: %s", out);
	struct dt_jv *doc = dtt_json(out);
	uint64_t runs = 0;
	cr_expect(dt_jv_u64(doc, "runs", &runs) == 0 && runs == 2, "%s", out);
	dt_jv_free(doc);

	char file[PATH_MAX + 16], v[256];
	snprintf(file, sizeof(file), "%s/s.json", dir);
	const char *a2[] = {"soak", "--runs", "2", "--json", "-o", file, "--", "true", NULL};
	cr_assert_eq(in_dir(dir, out, sizeof(out), a2), 0, "%s", out);
	cr_expect_str_empty(out, "-o FILE: the summary still went to stdout: %s", out);
	json_eval(file, "(d['runs'], d['failures'])", v, sizeof(v));
	cr_expect_str_eq(v, "(2, 0)");
}

/* ---- 11: soak numbering, the no-refusal line, rounded JSON ----------------- */

Test(habits, soak_numbers_failing_runs_from_1_and_says_in_one_line_when_no_refusal_explains_them)
{
	static char out[65536];
	const char *a[] = {"soak", "--runs", "2", "--", "false", NULL};
	cr_assert_eq(in_dir(sub("soak-false"), out, sizeof(out), a), 1, "%s", out);
	cr_expect(strstr(out, "Failing runs: #1 (exit 1) #2 (exit 1)"), "%s", out);
	cr_expect(!strstr(out, "#0"), "a run numbered #0: %s", out);
	cr_expect(strstr(out, "First failing run (#1)"), "%s", out);
	cr_expect(strstr(out, "No refusal was recorded in any failing run"), "%s", out);
	cr_expect(!strstr(out, "denytrace report:"), "an empty report was printed: %s", out);
}

Test(habits, soak_json_rates_carry_the_precision_the_text_shows)
{
	char file[PATH_MAX + 16], v[512];
	static char out[65536];
	const char *dir = sub("soak-round");
	snprintf(file, sizeof(file), "%s/r.json", dir);
	const char *a[] = {"soak", "--runs", "3", "--json", "-o", file, "--", "true", NULL};
	cr_assert_eq(in_dir(dir, out, sizeof(out), a), 0, "%s", out);
	/* 0 failures of 3: the Wilson interval starts at exactly 0 */
	json_eval(file,
	          "(d['ci_low'], d['flake_rate'], all(round(d[k], 3) == d[k] for k in "
	          "('ci_low', 'ci_high', 'flake_rate')))",
	          v, sizeof(v));
	cr_expect_str_eq(v, "(0, 0, True)");
}

/* ---- 6: the previous ring is kept --------------------------------------- */

Test(habits, a_second_run_keeps_the_previous_ring_as_ring_old_and_says_so)
{
	const char *dir = sub("old");
	static char out[65536];
	const char *a[] = {"run", "--", "true", NULL};
	cr_assert_eq(in_dir(dir, out, sizeof(out), a), 0, "%s", out);
	char ring[PATH_MAX + 32], old[PATH_MAX + 32];
	snprintf(ring, sizeof(ring), "%s/denytrace.ring", dir);
	snprintf(old, sizeof(old), "%s/denytrace.ring.old", dir);
	struct stat first, kept;
	cr_assert_eq(stat(ring, &first), 0);
	cr_expect(!strstr(out, "kept the previous"), "nothing to keep yet: %s", out);

	cr_assert_eq(in_dir(dir, out, sizeof(out), a), 0, "%s", out);
	cr_assert_eq(stat(old, &kept), 0, "no denytrace.ring.old after a second run: %s", out);
	cr_expect_eq(kept.st_ino, first.st_ino, "denytrace.ring.old is not the first ring");
	cr_expect(strstr(out, "kept the previous denytrace.ring as denytrace.ring.old"), "%s", out);
}

/* ---- 6b: every run a new ring file; the displaced one keeps its own records -- */

static ino_t ino_in(const char *dir, const char *name)
{
	char path[PATH_MAX + 64];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* Waits up to 10 s for dir/name to exist. */
static int appears(const char *dir, const char *name)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; i < 1000; i++) {
		if (access(path, F_OK) == 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

static long pid_in(const char *dir, const char *name)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	long pid = 0;
	if (f) {
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return pid;
}

/* `run -q -- python3 -c SCRIPT` from dir: its status, output in out. */
static int run_python(const char *dir, const char *script, char *out, size_t cap)
{
	const char *a[] = {"run", "-q", "--", "python3", "-c", script, NULL};
	return in_dir(dir, out, cap, a);
}

/* Preludes of the lingering processes below. PY_DETACH: the script goes
 * on in a detached child (its parent exits, so `run` returns) writing to
 * /dev/null (no pipe of the test's kept open). PY_CLOSE_RING: it keeps no
 * inherited descriptor of the ring, and reaches it by path. PY_WAIT_GO:
 * it waits until the test creates `go` in its directory (touch_in). */
#define PY_DETACH                                                                                  \
	"import os, sys, time\n"                                                                   \
	"if os.fork(): sys.exit(0)\n"                                                              \
	"os.setsid()\n"                                                                            \
	"for fd in (0, 1, 2): os.dup2(os.open(os.devnull, os.O_RDWR), fd)\n"
#define PY_CLOSE_RING "os.close(int(os.environ['DENYTRACE_FD']))\n"
#define PY_WAIT_GO                                                                                 \
	"for i in range(1000):\n"                                                                  \
	"    if os.path.exists('go'): break\n"                                                     \
	"    time.sleep(0.01)\n"

static void touch_in(const char *dir, const char *name)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fclose(f);
}

/* `run -q -- touch /sys/NAME` from dir: a refusal of one's own (EACCES
 * from sysfs, root or not), which touch reports with status 1. */
static void run_refusing(const char *dir, const char *name, char *out, size_t cap)
{
	char target[128];
	snprintf(target, sizeof(target), "/sys/%s", name);
	const char *a[] = {"run", "-q", "--", "touch", target, NULL};
	cr_assert_eq(in_dir(dir, out, cap, a), 1, "%s", out);
}

/* Every run gets a new ring file, never the displaced one reused: a
 * leftover process of an earlier run may still hold a descriptor of it
 * (issue 22; test_rings_kept forges through one). The current ring and
 * .old hold only their own runs' records. */
Test(habits, every_run_gets_a_new_ring_file_and_the_displaced_one_holds_only_its_own_records)
{
	const char *dir = sub("reuse");
	static char out[65536];
	run_refusing(dir, "dt-reuse-first", out, sizeof(out));
	ino_t first = ino_in(dir, "denytrace.ring");
	run_refusing(dir, "dt-reuse-second", out, sizeof(out));
	ino_t second = ino_in(dir, "denytrace.ring");
	run_refusing(dir, "dt-reuse-third", out, sizeof(out));
	ino_t third = ino_in(dir, "denytrace.ring");
	cr_expect(third != first && third != second, "the third ring reuses an earlier file");
	const char *show[] = {"show", "denytrace.ring", NULL};
	cr_assert_eq(in_dir(dir, out, sizeof(out), show), 0, "%s", out);
	cr_expect(strstr(out, "/sys/dt-reuse-third"), "%s", out);
	cr_expect(!strstr(out, "dt-reuse-first"), "the first run's record survived: %s", out);
	const char *show_old[] = {"show", "denytrace.ring.old", NULL};
	cr_assert_eq(in_dir(dir, out, sizeof(out), show_old), 0, "%s", out);
	cr_expect(strstr(out, "/sys/dt-reuse-second"), "%s", out);
	/* what the command inherits is what a fresh ring's descriptor is */
	const char *flags = "import fcntl, os\n"
	                    "fd = int(os.environ['DENYTRACE_FD'])\n"
	                    "print('flags', fcntl.fcntl(fd, fcntl.F_GETFL) & (os.O_NONBLOCK | 3),"
	                    " fcntl.fcntl(fd, fcntl.F_GETFD))\n";
	cr_assert_eq(run_python(dir, flags, out, sizeof(out)), 0, "%s", out);
	cr_expect(strstr(out, "flags 2 0"), "O_RDWR, no O_NONBLOCK, inherited: %s", out);
	ino_t fourth = ino_in(dir, "denytrace.ring");
	cr_expect(fourth != second && fourth != third, "the fourth ring reuses an earlier file");
}

/* A process of the first run that holds its ring: the descriptor it
 * inherited (sleep), or a mapping it made by path after closing that
 * descriptor (python). Neither ring may be reused while they live. */
Test(habits, a_ring_a_lingering_process_still_holds_is_not_reused)
{
	static char out[65536];
	const char *by_fd = sub("linger-fd"), *by_path = sub("linger-path");
	const char *hold_fd[] = {"run", "-q", "--",
	                         "sh",  "-c", "sleep 30 </dev/null >/dev/null 2>&1 & echo $! > pid",
	                         NULL};
	cr_assert_eq(in_dir(by_fd, out, sizeof(out), hold_fd), 0, "%s", out);
	const char *hold_path = PY_DETACH PY_CLOSE_RING "try: open('/sys/dt-linger-path', 'w')\n"
	                                                "except OSError: pass\n"
	                                                "open('pid', 'w').write(str(os.getpid()))\n"
	                                                "time.sleep(30)\n";
	cr_assert_eq(run_python(by_path, hold_path, out, sizeof(out)), 0, "%s", out);
	int up = appears(by_path, "pid");
	ino_t first_fd = ino_in(by_fd, "denytrace.ring"),
	      first_path = ino_in(by_path, "denytrace.ring");
	for (int i = 0; i < 2; i++) {
		run_refusing(by_fd, "dt-linger-next", out, sizeof(out));
		run_refusing(by_path, "dt-linger-next", out, sizeof(out));
	}
	ino_t third_fd = ino_in(by_fd, "denytrace.ring"),
	      third_path = ino_in(by_path, "denytrace.ring");
	long pids[] = {pid_in(by_fd, "pid"), pid_in(by_path, "pid")};
	for (int i = 0; i < 2; i++)
		if (pids[i] > 0)
			kill((pid_t)pids[i], SIGKILL);
	cr_assert(up, "the python process never mapped its ring");
	/* a ring in use is neither reused nor moved: later runs write beside it
	 * (denytrace-PID.ring), so its holders' records still reach it */
	cr_expect_eq(third_fd, first_fd, "displaced while a process held its descriptor");
	cr_expect_eq(third_path, first_path, "displaced while a process mapped it by path");
	/* once they are gone it is displaced, and runs get new files again */
	usleep(100000);
	run_refusing(by_fd, "dt-linger-last", out, sizeof(out));
	run_refusing(by_fd, "dt-linger-last", out, sizeof(out));
	cr_expect_neq(ino_in(by_fd, "denytrace.ring"), first_fd,
	              "still the first ring after its holders are gone");
}

/* A process of the first run that attaches only after a third run: its
 * path now names the third run's ring (a new file), and DENYTRACE_RING_ID
 * keeps it out. */
Test(habits, a_late_writer_of_an_earlier_run_stays_out_of_a_later_runs_ring)
{
	static char out[65536];
	const char *dir = sub("late");
	const char *late =
	    PY_DETACH PY_CLOSE_RING PY_WAIT_GO "try: open('/sys/dt-late-writer', 'w')\n"
	                                       "except OSError: pass\n"
	                                       "open('done', 'w').close()\n";
	cr_assert_eq(run_python(dir, late, out, sizeof(out)), 0, "%s", out);
	ino_t first = ino_in(dir, "denytrace.ring");
	run_refusing(dir, "dt-late-second", out, sizeof(out));
	run_refusing(dir, "dt-late-third", out, sizeof(out));
	cr_assert_neq(ino_in(dir, "denytrace.ring"), first, "the third run kept the first ring");
	touch_in(dir, "go");
	cr_assert(appears(dir, "done"), "the late writer never finished");
	const char *show[] = {"show", "denytrace.ring", NULL};
	cr_assert_eq(in_dir(dir, out, sizeof(out), show), 0, "%s", out);
	cr_expect(strstr(out, "/sys/dt-late-third"), "%s", out);
	cr_expect(!strstr(out, "dt-late-writer"), "an earlier run's process wrote here: %s", out);
}

/* A process still attached when its ring's header says another run owns
 * it (what a reuse does, and what a writer that could not lock would
 * see): its later refusals go nowhere. The header is rewritten here by
 * hand; the reuse itself waits for every lock. */
Test(habits, a_writer_stops_at_the_first_record_after_its_ring_changed_hands)
{
	static char out[65536];
	const char *dir = sub("handover");
	const char *w = PY_DETACH "def refuse(p):\n"
	                          "    try: open(p, 'w')\n"
	                          "    except OSError: pass\n"
	                          "refuse('/sys/dt-before-handover')\n"
	                          "open('attached', 'w').close()\n" PY_WAIT_GO
	                          "refuse('/sys/dt-after-handover')\n"
	                          "open('done', 'w').close()\n";
	cr_assert_eq(run_python(dir, w, out, sizeof(out)), 0, "%s", out);
	cr_assert(appears(dir, "attached"), "the writer never refused");
	char ring[PATH_MAX + 32];
	snprintf(ring, sizeof(ring), "%s/denytrace.ring", dir);
	int fd = open(ring, O_RDWR);
	cr_assert_geq(fd, 0);
	uint64_t created;
	off_t at = offsetof(struct dt_ring_header, created_ns);
	cr_assert_eq(pread(fd, &created, sizeof(created), at), (ssize_t)sizeof(created));
	created++;
	cr_assert_eq(pwrite(fd, &created, sizeof(created), at), (ssize_t)sizeof(created));
	close(fd);
	touch_in(dir, "go");
	cr_assert(appears(dir, "done"), "the writer never finished");
	const char *show[] = {"show", "denytrace.ring", NULL};
	cr_assert_eq(in_dir(dir, out, sizeof(out), show), 0, "%s", out);
	/* (the launch record quotes the script, paths and all) */
	cr_expect(strstr(out, "/sys/dt-before-handover: EACCES"), "%s", out);
	cr_expect(!strstr(out, "/sys/dt-after-handover: EACCES"), "written after the handover: %s",
	          out);
}

/* ---- 7: 125 for denytrace's own failures ---------------------------------- */

Test(habits, run_codex_and_soak_exit_125_for_their_own_usage_errors_and_pass_the_commands_2)
{
	static char out[65536];
	const char *dir = sub("exit");
	const char *bad[][4] = {
	    {"run", "--bogus", "--", "true"},
	    {"codex", "--bogus", "--", "sandbox"},
	    {"soak", "--bogus", "--", "true"},
	    {"soak", "--runs", "0", "--"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *a[] = {bad[i][0], bad[i][1], bad[i][2], bad[i][3], NULL};
		int st = in_dir(dir, out, sizeof(out), a);
		cr_expect_eq(st, 125, "denytrace %s %s: exit %d: %s", a[0], a[1], st, out);
	}
	const char *own[] = {"run", "-q", "--", "sh", "-c", "exit 2", NULL};
	cr_expect_eq(in_dir(dir, out, sizeof(out), own), 2, "the command's own 2: %s", out);
}

/* ---- 8, 12: help --------------------------------------------------------- */

static const char *const commands[] = {"run", "codex",    "show",   "report", "roots",
                                       "fix", "evidence", "doctor", "soak",   "demo"};

Test(habits, help_cmd_prints_that_commands_help_and_every_help_has_exit_statuses)
{
	static char a[65536], b[65536], top[65536];
	const char *t[] = {"--help", NULL};
	cr_assert_eq(in_dir("/", top, sizeof(top), t), 0);
	cr_expect(strstr(top, "man denytrace"), "the top-level help does not point at the manual");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const char *h1[] = {"help", commands[i], NULL};
		const char *h2[] = {commands[i], "--help", NULL};
		cr_expect_eq(in_dir("/", a, sizeof(a), h1), 0, "help %s: %s", commands[i], a);
		cr_expect_eq(in_dir("/", b, sizeof(b), h2), 0, "%s --help: %s", commands[i], b);
		cr_expect_str_eq(a, b, "`denytrace help %s` differs from `%s --help`", commands[i],
		                 commands[i]);
		cr_expect_str_neq(a, top, "`denytrace help %s` printed the top-level help",
		                  commands[i]);
		cr_expect(strstr(b, "exit status"), "%s --help has no exit-status section",
		          commands[i]);
		cr_expect(!strstr(b, "README"),
		          "%s --help points at README.md, which make install "
		          "does not install",
		          commands[i]);
	}
}

Test(habits, report_help_and_the_man_page_name_every_cause_the_classifier_has)
{
	static char out[65536], man[262144];
	const char *a[] = {"report", "--help", NULL};
	cr_assert_eq(in_dir("/", out, sizeof(out), a), 0);
	FILE *f = fopen("man/denytrace.1", "r");
	cr_assert_not_null(f, "run from the repository root: man/denytrace.1");
	man[fread(man, 1, sizeof(man) - 1, f)] = 0;
	fclose(f);
	for (int c = 0; c < DT_CAUSE_COUNT; c++) {
		const char *name = dt_cause_name((enum dt_cause)c);
		cr_expect(strstr(out, name), "report --help does not list the cause %s", name);
		/* the man page writes the hyphens as \- */
		char roff[64], *o = roff;
		for (const char *p = name; *p && o < roff + sizeof(roff) - 3; p++) {
			if (*p == '-')
				*o++ = '\\';
			*o++ = *p;
		}
		*o = 0;
		cr_expect(strstr(man, name) || strstr(man, roff), "the man page lacks the cause %s",
		          name);
	}
}

/* ---- 9: errors that say what to do next ---------------------------------- */

Test(habits, run_where_no_ring_can_be_created_names_the_directory_and_suggests_o)
{
	static char out[65536];
	const char *a[] = {"run", "--", "true", NULL};
	/* /proc takes no new files, for root too */
	int st = in_dir("/proc", out, sizeof(out), a);
	cr_expect_eq(st, 125, "%s", out);
	cr_expect(strstr(out, "in /proc"), "the directory is not named: %s", out);
	cr_expect(strstr(out, "-o FILE"), "no hint at -o: %s", out);
}

Test(habits, report_and_show_without_a_ring_say_to_record_one_with_run)
{
	static char out[65536];
	const char *dir = sub("no-ring");
	const char *cmds[] = {"report", "show"};
	for (size_t i = 0; i < 2; i++) {
		const char *a[] = {cmds[i], NULL};
		cr_expect_eq(in_dir(dir, out, sizeof(out), a), 3, "%s: %s", cmds[i], out);
		cr_expect(strstr(out, "denytrace run -- COMMAND"), "%s: %s", cmds[i], out);
		cr_expect(strstr(out, dir), "%s does not name the directory: %s", cmds[i], out);
	}
}

/* ---- 10: the Codex warning only where Codex is ---------------------------- */

Test(habits, the_codex_descriptor_warning_appears_only_when_the_ring_shows_codex)
{
	static char out[65536];
	const char *dir = sub("codex-warning");
	const char *plain[] = {"run", "--", "ls", "/nonexistent", NULL};
	cr_expect_eq(in_dir(dir, out, sizeof(out), plain), 2, "%s", out);
	cr_expect(!strstr(out, "Codex"), "a plain failing command got the Codex warning: %s", out);

	/* a stand-in named codex that fails without refusals */
	char fake[PATH_MAX + 16];
	snprintf(fake, sizeof(fake), "%s/codex", dir);
	FILE *f = fopen(fake, "w");
	cr_assert_not_null(f);
	fputs("#!/bin/sh\nexit 1\n", f);
	fclose(f);
	chmod(fake, 0755);
	const char *codex[] = {"run", "--", fake, "sandbox", "--", "true", NULL};
	cr_expect_eq(in_dir(dir, out, sizeof(out), codex), 1, "%s", out);
	cr_expect(strstr(out, "could not reach the ring: Codex closes inherited"),
	          "no warning for Codex: %s", out);
}

/* ---- 5: one counting rule for run and report ------------------------------ */

/* The N of "PREFIX ...: N refusal(s)" on the line that starts with prefix. */
static long count_after(const char *out, const char *prefix)
{
	const char *p = strstr(out, prefix);
	p = p ? strstr(p, ": ") : NULL;
	return p ? strtol(p + 2, NULL, 10) : -1;
}

Test(habits, run_summary_counts_and_hides_refusals_as_the_report_does)
{
	static char out[65536], rep[65536];
	const char *dir = sub("count");
	char lock[PATH_MAX + 8];
	snprintf(lock, sizeof(lock), "%s/L", dir);
	FILE *f = fopen(lock, "w");
	cr_assert_not_null(f);
	fclose(f);
	/* flock -n on a file its parent holds: lock contention, recorded with
	 * EAGAIN asked for, which the report hides; plus one real refusal (sysfs
	 * takes no mkdir: EPERM for root, EACCES for others) */
	const char *a[] = {"run",
	                   "--errnos",
	                   "EPERM,EACCES,EROFS,EXDEV,EAGAIN",
	                   "--",
	                   "sh",
	                   "-c",
	                   "flock L flock -n L true; mkdir /sys/dt-x; exit 0",
	                   NULL};
	cr_assert_eq(in_dir(dir, out, sizeof(out), a), 0, "%s", out);
	const char *r[] = {"report", "denytrace.ring", NULL};
	cr_assert_eq(in_dir(dir, rep, sizeof(rep), r), 0, "%s", rep);
	/* the report's first line: "N problem(s): N refusal(s) in ..." */
	long n_run = count_after(out, "denytrace: "), n_rep = count_after(rep, "");
	cr_expect_eq(n_run, 1, "run counted %ld: %s", n_run, out);
	cr_expect_eq(n_run, n_rep, "run says %ld, report %ld\nrun:\n%s\nreport:\n%s", n_run, n_rep,
	             out, rep);
	cr_expect(strstr(out, "1 lock-contention failure hidden; `denytrace report --all` shows"),
	          "run does not say what it hides, in the report's words: %s", out);
	cr_expect(strstr(rep, "(1 lock-contention failure hidden; --all shows them)"), "%s", rep);
	cr_expect(strstr(out, "1 refusal (1 "), "plural: %s", out);
	cr_expect(!strstr(out, " 1 records") && !strstr(rep, " 1 records"), "plural: %s %s", out,
	          rep);
}
