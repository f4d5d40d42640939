/* SPDX-License-Identifier: MIT */
/*
 * The traced program must survive whatever happens to the ring, to its
 * sandbox and to its limits: a full disk, a ring truncated under it, a
 * seccomp filter it installs itself, a low RLIMIT_NOFILE. Real programs
 * (sh, dd, truncate, touch, sed), real mounts in a private mount namespace.
 * Refusals come from sysfs, which refuses creating files even to root.
 */
#include <criterion/criterion.h>
#include <errno.h>
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

TestSuite(survive, .fini = teardown, .timeout = 120);

static const char *cli(void)
{
	static char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/denytrace", dtt_build());
	return path;
}

/* Runs script with sh inside a private mount namespace (mounts vanish with
 * it), with $DT the CLI and $T a fresh directory. */
static int in_private_mounts(char *out, size_t cap, const char *script)
{
	if (geteuid() != 0)
		cr_skip_test("mounting a small tmpfs needs root");
	const char *probe[] = {"unshare", "-m", "true", NULL};
	if (dtt_system(NULL, 0, probe, NULL) != 0)
		cr_skip_test("unshare -m does not work here");
	char dt[PATH_MAX + 8], t[PATH_MAX + 8];
	snprintf(dt, sizeof(dt), "DT=%s", cli());
	snprintf(t, sizeof(t), "T=%s", dtt_tmpdir());
	const char *env[] = {dt, t, NULL};
	const char *argv[] = {"unshare", "-m", "sh", "-c", script, NULL};
	return dtt_system(out, cap, argv, env);
}

static size_t refusals_of(const struct dtt_run *r, const char *path)
{
	return dtt_count(r, DT_REC_DENIAL, NULL, path);
}

/* ---- 1: full disk, truncated ring -------------------------------------- */

Test(survive, ring_space_is_allocated_so_a_full_disk_kills_neither_the_program_nor_run)
{
	char out[8192];
	int st = in_private_mounts(
	    out, sizeof(out),
	    "mkdir $T/tiny && mount -t tmpfs -o size=512k none $T/tiny || exit 99\n"
	    "$DT run -o $T/tiny/r.ring --size 256K -- sh -c 'dd if=/dev/zero of=$T/tiny/fill \\\n"
	    "  bs=4k 2>/dev/null; for i in 1 2 3 4 5 6 7 8; do touch /sys/dt-full$i; done; echo "
	    "survived'\n"
	    "echo run=$?; cp $T/tiny/r.ring $T/r.ring\n");
	cr_assert_neq(st, 99, "cannot mount a tmpfs: %s", out);
	cr_expect(strstr(out, "survived\n"), "the program died: %s", out);
	cr_expect(strstr(out, "run=0\n"), "denytrace run died or failed: %s", out);
	struct dtt_run r;
	char ring[PATH_MAX];
	snprintf(ring, sizeof(ring), "%s/r.ring", dtt_tmpdir());
	cr_assert_eq(dtt_load(&r, ring), 0, "ring unreadable: %s", out);
	for (int i = 1; i <= 8; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/sys/dt-full%d", i);
		cr_expect_eq(refusals_of(&r, path), 1,
		             "the refusal of %s on a full disk was not recorded", path);
	}
	dtt_free(&r);
}

Test(survive, ring_that_does_not_fit_is_refused_before_the_command_starts)
{
	char out[8192];
	int st = in_private_mounts(
	    out, sizeof(out),
	    "mkdir $T/tiny && mount -t tmpfs -o size=64k none $T/tiny || exit 99\n"
	    "$DT run -q -o $T/tiny/r.ring --size 256K -- touch $T/started\n");
	cr_assert_neq(st, 99, "cannot mount a tmpfs: %s", out);
	cr_expect_eq(st, 125, "exit %d: %s", st, out);
	cr_expect(strstr(out, "no room for the ring") && strstr(out, "r.ring"), "%s", out);
	char started[PATH_MAX];
	snprintf(started, sizeof(started), "%s/started", dtt_tmpdir());
	cr_expect_neq(access(started, F_OK), 0, "the command ran although the ring did not fit");
}

/* sh refuses a redirect (the probe attaches), truncate shortens the ring,
 * sh refuses again in the same process: a store into the truncated mapping
 * was SIGBUS for sh, and for run when it read the ring to summarise. */
Test(survive, ring_truncated_under_a_running_program_kills_neither_it_nor_run)
{
	char ring[PATH_MAX], script[PATH_MAX * 2];
	snprintf(ring, sizeof(ring), "%s/t.ring", dtt_tmpdir());
	snprintf(
	    script, sizeof(script),
	    "echo x > /sys/dt-before; truncate -s 4096 %s; echo y > /sys/dt-after; echo survived",
	    ring);
	const char *argv[] = {cli(), "run", "-o", ring, "--", "sh", "-c", script, NULL};
	char out[8192];
	int st = dtt_system(out, sizeof(out), argv, NULL);
	cr_expect_eq(st, 0, "exit %d: %s", st, out);
	cr_expect(strstr(out, "survived\n"), "the program died: %s", out);
	cr_expect(strstr(out, "was truncated while the command ran"), "%s", out);
}

/* ---- 6: a probe path the loader would split ---------------------------- */

/* A copy of the CLI and the probe in "DIR/with space/": the CLI finds the
 * probe beside itself. */
static const char *copy_to_spaced_dir(void)
{
	static char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/with space", dtt_tmpdir());
	char script[4 * PATH_MAX];
	snprintf(script, sizeof(script),
	         "mkdir -p \"%s\" && cp \"%s/denytrace\" \"%s/libdenytrace.so\" \"%s/\"", dir,
	         dtt_build(), dtt_build(), dir);
	const char *argv[] = {"sh", "-c", script, NULL};
	cr_assert_eq(dtt_system(NULL, 0, argv, NULL), 0, "cannot copy the build to %s", dir);
	return dir;
}

Test(survive, run_refuses_a_probe_path_with_a_space_and_names_it)
{
	const char *dir = copy_to_spaced_dir();
	char cli_copy[PATH_MAX + 16], ring[PATH_MAX], marker[PATH_MAX];
	snprintf(cli_copy, sizeof(cli_copy), "%s/denytrace", dir);
	snprintf(ring, sizeof(ring), "%s/s.ring", dtt_tmpdir());
	snprintf(marker, sizeof(marker), "%s/started", dtt_tmpdir());
	const char *argv[] = {cli_copy, "run", "-q", "-o", ring, "--", "touch", marker, NULL};
	const char *env[] = {"DENYTRACE_PROBE=", NULL};
	char out[8192];
	int st = dtt_system(out, sizeof(out), argv, env);
	cr_expect_eq(st, 125, "exit %d: %s", st, out);
	cr_expect(strstr(out, dir) && strstr(out, "contains a space"), "%s", out);
	cr_expect(!strstr(out, "cannot be preloaded"), "the loader got the split path: %s", out);
	cr_expect_neq(access(marker, F_OK), 0, "the command ran without the probe");
}

Test(survive, doctor_fails_a_probe_path_with_a_space_and_says_why)
{
	const char *dir = copy_to_spaced_dir();
	char cli_copy[PATH_MAX + 16];
	snprintf(cli_copy, sizeof(cli_copy), "%s/denytrace", dir);
	const char *argv[] = {cli_copy, "doctor", NULL};
	const char *env[] = {"DENYTRACE_PROBE=", NULL};
	char out[16384];
	int st = dtt_system(out, sizeof(out), argv, env);
	cr_expect_neq(st, 0, "doctor passed: %s", out);
	cr_expect(strstr(out, "contains a space") && strstr(out, "splits LD_PRELOAD"), "%s", out);
}

/* ---- 7: a low RLIMIT_NOFILE --------------------------------------------- */

/* Python opens files until EMFILE, prints how many, closes them, then makes
 * a refused open (sysfs refuses creating files even to root). */
static const char count_opens[] = "import os\n"
                                  "fds = []\n"
                                  "try:\n"
                                  "    while True: fds.append(os.open('/dev/null', os.O_RDONLY))\n"
                                  "except OSError: pass\n"
                                  "print('opened', len(fds))\n"
                                  "for fd in fds: os.close(fd)\n"
                                  "try: open('/sys/dt-nofile', 'w')\n"
                                  "except OSError: pass\n";

/* Output of python3 under `ulimit LIMIT` alone (ring NULL) or under run. */
static int opens_under_limit(const char *limit, const char *ring, char *out, size_t cap)
{
	if (access("/usr/bin/python3", X_OK) != 0)
		cr_skip_test("/usr/bin/python3 is not installed");
	char script[PATH_MAX * 2];
	if (ring)
		snprintf(script, sizeof(script),
		         "ulimit %s && exec \"%s\" run -q -o \"%s\" -- /usr/bin/python3 -c \"$PY\"",
		         limit, cli(), ring);
	else
		snprintf(script, sizeof(script), "ulimit %s && exec /usr/bin/python3 -c \"$PY\"",
		         limit);
	char py[sizeof(count_opens) + 8];
	snprintf(py, sizeof(py), "PY=%s", count_opens);
	const char *env[] = {py, NULL};
	const char *argv[] = {"sh", "-c", script, NULL};
	return dtt_system(out, cap, argv, env);
}

static void same_number_of_files_under_run(const char *limit)
{
	char alone[4096], traced[4096], ring[PATH_MAX];
	snprintf(ring, sizeof(ring), "%s/nofile.ring", dtt_tmpdir());
	cr_assert_eq(opens_under_limit(limit, NULL, alone, sizeof(alone)), 0, "%s", alone);
	cr_assert(strstr(alone, "opened "), "%s", alone);
	cr_expect_eq(opens_under_limit(limit, ring, traced, sizeof(traced)), 0, "%s", traced);
	cr_expect_str_eq(traced, alone,
	                 "under `ulimit %s` the program opened %s under run, %s alone", limit,
	                 traced, alone);
	struct dtt_run r;
	cr_assert_eq(dtt_load(&r, ring), 0);
	cr_expect_eq(refusals_of(&r, "/sys/dt-nofile"), 1, "the refusal was not recorded");
	dtt_free(&r);
}

Test(survive, low_soft_file_limit_leaves_the_program_every_descriptor)
{
	same_number_of_files_under_run("-S -n 6");
}

Test(survive, low_hard_file_limit_leaves_the_program_every_descriptor)
{
	same_number_of_files_under_run("-n 6");
}

/* ---- 4: refusals glibc makes internally -------------------------------- */

/* sed -i writes a temporary file beside its input with mkostemp (glibc's
 * internal open) and renames it over the input: in a read-only directory
 * the refusal happens inside glibc. */
Test(survive, sed_in_place_in_a_read_only_directory_records_its_temporary_file)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	char dir[PATH_MAX], file[PATH_MAX + 8], ring[PATH_MAX];
	if (!realpath(dtt_tmpdir(), dir))
		cr_assert_fail("no temporary directory");
	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(ring, sizeof(ring), "%s/sed.ring", dir);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fputs("a\n", f);
	fclose(f);
	const char *argv[] = {cli(),       "run", "-o", ring,     "--",   "bwrap",
	                      "--ro-bind", "/",   "/",  "--dev",  "/dev", "--proc",
	                      "/proc",     "sed", "-i", "s/a/b/", file,   NULL};
	char out[8192];
	int st = dtt_system(out, sizeof(out), argv, NULL);
	cr_expect_neq(st, 0, "sed -i succeeded in a read-only directory: %s", out);
	cr_expect(strstr(out, "couldn't open temporary file"), "%s", out);
	cr_expect(!strstr(out, "no refusal was recorded"), "%s", out);
	struct dtt_run r;
	cr_assert_eq(dtt_load(&r, ring), 0);
	size_t found = 0;
	for (size_t i = 0; i < r.n; i++) {
		const struct dt_record *d = &r.recs[i];
		if (d->type == DT_REC_DENIAL && d->op && !strncmp(d->op, "mkostemp", 8) &&
		    d->p[0].abspath && !strncmp(d->p[0].abspath, dir, strlen(dir)) &&
		    d->err == EROFS)
			found++;
	}
	cr_expect_eq(found, 1, "sed's refused temporary file was not recorded: %s", out);
	dtt_free(&r);
}

Test(survive, failure_without_a_record_lists_likely_causes_instead_of_guessing_one)
{
	char ring[PATH_MAX];
	snprintf(ring, sizeof(ring), "%s/fail.ring", dtt_tmpdir());
	const char *argv[] = {cli(), "run", "-o", ring, "--", "sh", "-c", "exit 3", NULL};
	char out[8192];
	cr_expect_eq(dtt_system(out, sizeof(out), argv, NULL), 3, "%s", out);
	cr_expect(strstr(out, "no refusal was recorded. Likely causes:"), "%s", out);
	cr_expect(strstr(out, "a reason other than a refused file operation"), "%s", out);
	cr_expect(strstr(out, "a call glibc makes internally"), "%s", out);
	/* the ring shows no Codex: its closed descriptors are not a likely cause */
	cr_expect(!strstr(out, "could not reach the ring"), "%s", out);
}

/* ---- 5: set-id programs --------------------------------------------------- */

/* DIR/suid-touch: a copy of touch, set-user-ID to uid 1234. Run by root,
 * its effective uid differs from its real one: the loader's secure mode,
 * which drops LD_PRELOAD. Skips where set-id bits do not take effect. */
static const char *setuid_touch(void)
{
	if (geteuid() != 0)
		cr_skip_test("making a set-user-ID copy needs root");
	static char touch[PATH_MAX];
	char id[PATH_MAX], script[4 * PATH_MAX];
	snprintf(touch, sizeof(touch), "%s/suid-touch", dtt_tmpdir());
	snprintf(id, sizeof(id), "%s/suid-id", dtt_tmpdir());
	snprintf(script, sizeof(script),
	         "cp /usr/bin/touch %s && cp /usr/bin/id %s && chown 1234:1234 %s %s && "
	         "chmod 4755 %s %s && %s -u",
	         touch, id, touch, id, touch, id, id);
	const char *argv[] = {"sh", "-c", script, NULL};
	char out[256];
	if (dtt_system(out, sizeof(out), argv, NULL) != 0 || strcmp(out, "1234\n"))
		cr_skip_test("set-user-ID bits do not take effect here (%s)", out);
	return touch;
}

static void expect_setid_named(const char *out, const char *ring, const char *touch)
{
	cr_expect(strstr(out, "0 refusals"), "%s", out);
	const char *line = strstr(out, touch);
	cr_expect(line && strstr(line, "set-id: the loader drops LD_PRELOAD"),
	          "the summary does not name the set-id program: %s", out);
	const char *argv[] = {cli(), "report", ring, NULL};
	char report[16384];
	dtt_system(report, sizeof(report), argv, NULL);
	line = strstr(report, touch);
	cr_expect(line && strstr(line, "setid: a set-user-ID or set-group-ID program"),
	          "the report does not name the set-id program: %s", report);
}

Test(survive, set_id_command_is_named_as_a_blind_spot_by_run_and_report)
{
	const char *touch = setuid_touch();
	char ring[PATH_MAX];
	snprintf(ring, sizeof(ring), "%s/setid.ring", dtt_tmpdir());
	const char *argv[] = {cli(), "run", "-o", ring, "--", touch, "/sys/dt-setid", NULL};
	char out[8192];
	cr_expect_eq(dtt_system(out, sizeof(out), argv, NULL), 1, "%s", out);
	expect_setid_named(out, ring, touch);
}

Test(survive, set_id_program_deeper_in_the_tree_is_named_with_exec_coverage)
{
	const char *touch = setuid_touch();
	char ring[PATH_MAX], script[PATH_MAX + 64];
	snprintf(ring, sizeof(ring), "%s/setid-tree.ring", dtt_tmpdir());
	snprintf(script, sizeof(script), "%s /sys/dt-setid", touch);
	const char *argv[] = {cli(), "run", "--watch-exec", "-o",   ring,
	                      "--",  "sh",  "-c",           script, NULL};
	char out[8192];
	cr_expect_eq(dtt_system(out, sizeof(out), argv, NULL), 1, "%s", out);
	if (strstr(out, "exec coverage off"))
		cr_skip_test("seccomp user notification is not available here: %s", out);
	expect_setid_named(out, ring, touch);
}

/* ---- 3: a seccomp filter the program installs itself -------------------- */

/* The program allows only openat, write and exit_group, then refuses: the
 * probe's own calls used to kill it with SIGSYS at its first refusal. */
static void survives_its_own_allow_list(const char *mode, int recorded)
{
	char ring[PATH_MAX];
	snprintf(ring, sizeof(ring), "%s/seccomp-%s.ring", dtt_tmpdir(), mode);
	const char *argv[] = {
	    cli(), "run", "-o", ring, "--", dtt_helper("seccomp-late"), mode, "/sys/dt-seccomp",
	    "5",   NULL};
	char out[8192];
	int st = dtt_system(out, sizeof(out), argv, NULL);
	cr_expect_eq(st, 0, "exit %d (159 is SIGSYS): %s", st, out);
	cr_expect(strstr(out, recorded ? "survived: 6 refused" : "survived: 5 refused"), "%s", out);
	cr_expect(strstr(out, "5 more refusals not recorded: made after a process installed a "
	                      "seccomp filter"),
	          "%s", out);
	struct dtt_run r;
	cr_assert_eq(dtt_load(&r, ring), 0);
	cr_expect_eq(refusals_of(&r, "/sys/dt-seccomp"), (size_t)recorded, "%s", out);
	dtt_free(&r);
	const char *formats[] = {"text", "markdown"};
	for (size_t i = 0; i < 2; i++) {
		const char *report[] = {cli(), "report", "--format", formats[i], ring, NULL};
		dtt_system(out, sizeof(out), report, NULL);
		cr_expect(strstr(out, "5 refusals not recorded") ||
		              strstr(out, "5 more refusals not recorded"),
		          "%s report: %s", formats[i], out);
	}
}

Test(survive, allow_list_seccomp_filter_installed_before_any_refusal_is_not_fatal)
{
	survives_its_own_allow_list("before", 0);
}

Test(survive, allow_list_seccomp_filter_installed_after_a_refusal_is_not_fatal)
{
	survives_its_own_allow_list("after", 1);
}

Test(survive, allow_list_seccomp_filter_installed_with_prctl_is_not_fatal)
{
	survives_its_own_allow_list("prctl", 1);
}

Test(survive, allow_list_seccomp_filter_installed_with_a_raw_prctl_syscall_is_not_fatal)
{
	survives_its_own_allow_list("rawprctl", 1);
}

Test(survive, second_seccomp_filter_stacked_on_an_allow_list_is_not_fatal)
{
	survives_its_own_allow_list("twice", 1);
}

Test(survive, fork_after_a_seccomp_filter_that_forbids_getpid_is_not_fatal)
{
	survives_its_own_allow_list("fork", 1);
}

Test(survive, seccomp_filter_installed_with_a_full_register_operation_is_not_fatal)
{
	survives_its_own_allow_list("highbits", 1);
}
