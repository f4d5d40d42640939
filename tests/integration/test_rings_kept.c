/* SPDX-License-Identifier: MIT */
/* No ring is lost, and a ring replaces nothing but a ring: a command that
 * cannot start leaves the previous ring alone; two runs at once in one
 * directory each keep their own ring and every refusal; -o never turns a
 * FIFO, a device or someone's file into a ring. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(rings_kept, .fini = teardown, .timeout = 600);

static char out[1 << 16];

/* sh -c script (DT in its environment: the denytrace binary). */
static int sh(const char *script)
{
	char env[PATH_MAX + 8];
	snprintf(env, sizeof(env), "DT=%s", dtt_denytrace());
	const char *envv[] = {env, NULL};
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	return dtt_system(out, sizeof(out), argv, envv);
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	buf[fread(buf, 1, sizeof(buf) - 1, f)] = 0;
	fclose(f);
	return buf;
}

Test(rings_kept, a_command_that_does_not_exist_leaves_the_previous_ring_untouched)
{
	const char *top = dtt_tmpdir();
	char script[2 * PATH_MAX];
	snprintf(script, sizeof(script),
	         "cd %s && \"$DT\" run -q -- true && ls -i denytrace.ring > before && "
	         "\"$DT\" run -q -- pyhton3 w.py; echo $? > status; "
	         "\"$DT\" run -q -- ./nothing-here; echo $? >> status; "
	         "ls -i denytrace.ring > after; ls",
	         top);
	sh(script);
	char path[PATH_MAX + 16], before[256];
	snprintf(path, sizeof(path), "%s/before", top);
	snprintf(before, sizeof(before), "%s", slurp(path));
	snprintf(path, sizeof(path), "%s/after", top);
	cr_expect_str_eq(slurp(path), before, "the ring was replaced: %s", out);
	snprintf(path, sizeof(path), "%s/denytrace.ring.old", top);
	cr_expect_neq(access(path, F_OK), 0, "the ring was moved to .old: %s", out);
	snprintf(path, sizeof(path), "%s/status", top);
	cr_expect_str_eq(slurp(path), "127\n127\n", "%s", out);
}

/* The path the summary in err names ("ring PATH; see"), into ring. */
static void summary_ring(const char *err, char *ring, size_t cap)
{
	const char *p = strstr(err, "denytrace: ring ");
	cr_assert_not_null(p, "no summary: %s", err);
	p += strlen("denytrace: ring ");
	size_t n = strcspn(p, ";");
	snprintf(ring, cap, "%.*s", (int)n, p);
}

/* Each worker process reaches the ring by its path (no descriptor, as
 * under Codex) and is refused 20 times; both runs overlap. */
static void two_runs_at_once(const char *top, int trial)
{
	char dir[PATH_MAX], script[4 * PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/t%d", top, trial);
	cr_assert_eq(mkdir(dir, 0755), 0);
	const char *worker = "sleep 0.2; unset DENYTRACE_FD; i=0; "
	                     "while [ $i -lt 20 ]; do touch /usr/dt-$i 2>/dev/null; "
	                     "i=$((i+1)); done";
	snprintf(script, sizeof(script),
	         "cd %s && B='bwrap --ro-bind / / --bind %s %s --dev /dev --proc /proc --'; "
	         "\"$DT\" run -- $B sh -c '%s' 2> a.err & "
	         "\"$DT\" run -- $B sh -c '%s' 2> b.err; wait",
	         dir, dir, dir, worker, worker);
	sh(script);
	char ring[2][PATH_MAX], path[PATH_MAX + 16];
	for (int k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/%c.err", dir, "ab"[k]);
		const char *err = slurp(path);
		cr_assert_not_null(err);
		char name[PATH_MAX];
		summary_ring(err, name, sizeof(name));
		snprintf(ring[k], sizeof(ring[k]), "%s/%s", dir, name);
		cr_expect(strstr(err, "denytrace: 20 refusals"),
		          "trial %d, run %c: its summary is not of its own 20 refusals:\n%s", trial,
		          "ab"[k], err);
		struct dtt_run r;
		cr_assert_eq(dtt_load(&r, ring[k]), 0);
		/* touch's opens (bubblewrap's own refusal is an access) */
		size_t mine = dtt_count(&r, DT_REC_DENIAL, "open", NULL);
		cr_expect_eq(mine, 20, "trial %d, run %c: %zu of its 20 refusals in %s", trial,
		             "ab"[k], mine, ring[k]);
		dtt_free(&r);
	}
	cr_expect_str_neq(ring[0], ring[1], "trial %d: both runs summarised %s", trial, ring[0]);
}

Test(rings_kept, two_runs_at_once_in_one_directory_each_keep_their_own_refusals)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir();
	for (int trial = 0; trial < 20; trial++)
		two_runs_at_once(top, trial);
}

Test(rings_kept, report_without_a_ring_names_the_one_it_read_and_a_newer_one_beside_it)
{
	const char *top = dtt_tmpdir();
	char script[2 * PATH_MAX];
	snprintf(script, sizeof(script),
	         "cd %s && \"$DT\" run -q -- sleep 1 & sleep 0.5; cd %s && \"$DT\" run -q -- true; "
	         "wait; \"$DT\" report --format json > /dev/null",
	         top, top);
	sh(script);
	cr_expect(strstr(out, "reading ./denytrace.ring"), "%s", out);
	cr_expect(strstr(out, "newer ring") && strstr(out, "denytrace report denytrace-"), "%s",
	          out);
}

/* denytrace run -o target -- true; then what target is. */
static void run_onto(const char *target, const char *what)
{
	char script[2 * PATH_MAX];
	snprintf(script, sizeof(script),
	         "\"$DT\" run -q -o %s -- true; echo \"status $?\"; stat -c '%%F' %s", target,
	         target);
	sh(script);
	cr_expect(strstr(out, "status 125"), "%s", out);
	cr_expect(strstr(out, what), "%s is no longer %s:\n%s", target, what, out);
}

Test(rings_kept, run_o_refuses_to_replace_a_fifo)
{
	char fifo[PATH_MAX];
	snprintf(fifo, sizeof(fifo), "%s/fifo", dtt_tmpdir());
	cr_assert_eq(mkfifo(fifo, 0666), 0);
	run_onto(fifo, "fifo");
}

Test(rings_kept, run_o_refuses_to_replace_a_file_that_is_not_a_ring)
{
	char file[PATH_MAX];
	snprintf(file, sizeof(file), "%s/notes.txt", dtt_tmpdir());
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fputs("mine\n", f);
	fclose(f);
	run_onto(file, "regular file");
	cr_expect_str_eq(slurp(file), "mine\n");
}

Test(rings_kept, run_o_refuses_to_replace_a_device_in_a_private_mount_namespace)
{
	if (geteuid() != 0)
		cr_skip_test("making a device node needs root");
	const char *top = dtt_tmpdir();
	char script[4 * PATH_MAX];
	/* a tmpfs of our own: the node is real, and nothing outside sees it */
	snprintf(script, sizeof(script),
	         "exec unshare -m sh -c 'mount --make-rprivate / && mount -t tmpfs none %s && "
	         "mknod -m 666 %s/null c 1 3 && \"$DT\" run -q -o %s/null -- true; "
	         "echo \"status $?\"; stat -c %%F %s/null'",
	         top, top, top, top);
	int st = sh(script);
	if (strstr(out, "unshare failed") || strstr(out, "Operation not permitted"))
		cr_skip_test("no private mount namespace here: %s", out);
	cr_expect_eq(st, 0, "%s", out);
	cr_expect(strstr(out, "status 125"), "%s", out);
	cr_expect(strstr(out, "character special file"), "the device was replaced:\n%s", out);
}

Test(rings_kept, a_size_that_is_not_a_power_of_two_of_slots_is_said_with_what_the_ring_holds)
{
	char ring[PATH_MAX];
	snprintf(ring, sizeof(ring), "%s/s.ring", dtt_tmpdir());
	static struct dtt_cli c;
	const char *args[] = {"run", "--size", "63K", "-o", ring, "--", "true", NULL};
	dtt_cli(&c, args);
	cr_assert_eq(c.status, 0, "%s", c.err);
	struct stat st;
	cr_assert_eq(stat(ring, &st), 0);
	cr_expect_eq(st.st_size, 36 * 1024);
	cr_expect(strstr(c.err, "32 KiB of records") && strstr(c.err, "36 KiB"),
	          "the rounding is not said: %s", c.err);
}

Test(rings_kept, a_ring_path_with_a_newline_or_an_escape_is_printed_escaped)
{
	char ring[PATH_MAX];
	snprintf(ring, sizeof(ring), "%s/a\nforged: line\x1b[31m.ring", dtt_tmpdir());
	static struct dtt_cli c;
	const char *args[] = {"run", "-o", ring, "--", "true", NULL};
	dtt_cli(&c, args);
	cr_assert_eq(c.status, 0, "%s", c.err);
	cr_expect_null(strstr(c.err, "\nforged: line"), "a line was forged:\n%s", c.err);
	cr_expect_null(strchr(c.err, '\x1b'), "a raw escape reached the terminal:\n%s", c.err);
	cr_expect_not_null(strstr(c.err, "a\\x0aforged"), "%s", c.err);
}

/* A worker of the first run leaves a process holding a plain descriptor of
 * its ring, outside the probe (its environment cleared, as a static
 * binary would be: no probe mapping, no lock); two runs later that ring
 * (by then RING.old) is displaced. The process then writes through its
 * descriptor: nothing it writes may show in the latest run's ring. (Where
 * `run` sees the first ring still held, as it does for an ordinary user,
 * the later runs write beside it, RING-PID.ring: the latest run's ring is
 * the one its own last line names.) */
Test(rings_kept, a_process_left_from_an_earlier_run_cannot_write_into_a_later_runs_ring)
{
	const char *top = dtt_tmpdir();
	char script[4 * PATH_MAX], ring[PATH_MAX], trigger[PATH_MAX], done[PATH_MAX + 8];
	snprintf(ring, sizeof(ring), "%s/r.ring", top);
	snprintf(trigger, sizeof(trigger), "%s/go", top);
	snprintf(done, sizeof(done), "%s.done", trigger);
	snprintf(
	    script, sizeof(script),
	    "\"$DT\" run -q -o %s -- env -u LD_PRELOAD %s %s %s && \"$DT\" run -q -o %s -- true && "
	    "\"$DT\" run -o %s -- true",
	    ring, dtt_helper("leftover"), ring, trigger, ring, ring);
	cr_assert_eq(sh(script), 0, "%s", out);
	FILE *f = fopen(trigger, "w");
	cr_assert_not_null(f);
	fclose(f);
	/* a hang guard: the leftover writes within milliseconds */
	for (int i = 0; i < 6000 && access(done, F_OK) != 0; i++)
		usleep(10 * 1000);
	cr_assert_eq(access(done, F_OK), 0, "the leftover process never wrote");
	/* "denytrace: ring PATH; see ..." */
	char latest[PATH_MAX] = "";
	for (const char *p = out; (p = strstr(p, "denytrace: ring ")); p++)
		snprintf(latest, sizeof(latest), "%.*s", (int)strcspn(p + 16, ";\n"), p + 16);
	cr_assert(latest[0], "the third run named no ring: %s", out);
	struct dtt_run r;
	cr_assert_eq(dtt_load(&r, latest), 0, "%s", latest);
	cr_expect_null(dtt_find(&r, DT_REC_DENIAL, NULL, "/forged-by-leftover"),
	               "a record of the first run's leftover process is in the third run's ring");
	dtt_free(&r);
}
