/* SPDX-License-Identifier: MIT */
/*
 * Launch files (tracer/launch/launchfile.c) are pruned: a run removes the
 * ones no ring needs any more, and never one whose ring is still where
 * its run put it, nor a recent one. Each test has a state directory of
 * its own (XDG_STATE_HOME), never the user's.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

static char state[600], launches[700], xdg[700];

static void setup(void)
{
	snprintf(state, sizeof(state), "%s/state", dtt_tmpdir());
	snprintf(launches, sizeof(launches), "%s/denytrace/launches", state);
	snprintf(xdg, sizeof(xdg), "XDG_STATE_HOME=%s", state);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(launchfiles, .init = setup, .fini = teardown, .timeout = 120);

/* `denytrace run -q -o ring -- bwrap ... true` with this test's state
 * directory: a sandbox the launcher reads, so that it writes a launch file
 * (a command without one gets none). */
static void run_true(const char *ring)
{
	char dt[600], out[4096];
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	const char *argv[] = {dt,          "run", "-q", "-o",    ring,   "--",   "bwrap",
	                      "--ro-bind", "/",   "/",  "--dev", "/dev", "true", NULL};
	char path[4200];
	snprintf(path, sizeof(path), "PATH=%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	const char *env[] = {xdg, path, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), argv, env), 0, "%s", out);
}

static size_t launch_files(void)
{
	DIR *d = opendir(launches);
	size_t n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strstr(e->d_name, ".launch") != NULL;
	if (d)
		closedir(d);
	return n;
}

/* The one launch file in the directory that is not in names. */
static void the_launch_file(char *out, size_t cap)
{
	DIR *d = opendir(launches);
	cr_assert(d, "%s", launches);
	out[0] = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (strstr(e->d_name, ".launch"))
			snprintf(out, cap, "%s/%s", launches, e->d_name);
	closedir(d);
	cr_assert(out[0], "no launch file in %s", launches);
}

static void age(const char *path, long seconds)
{
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= seconds;
	t[1] = t[0];
	cr_assert_eq(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0, "%s", path);
}

/* A launch file of another run whose ring is gone, seconds old. */
static void dead_launch_file(int i, long seconds)
{
	char path[800];
	snprintf(path, sizeof(path), "%s/%032x.launch", launches, i + 1);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0, "%s", path);
	char body[200];
	int n = snprintf(body, sizeof(body),
	                 "denytrace-launch%c1%c%032x%c1%c2%crun%c/%c1%ctrue%c0%c%s/gone-%d.ring", 0,
	                 0, i + 1, 0, 0, 0, 0, 0, 0, 0, 0, dtt_tmpdir(), i);
	cr_assert_eq(write(fd, body, (size_t)n + 1), n + 1);
	close(fd);
	age(path, seconds);
}

static void unstamp(void)
{
	char stamp[800];
	snprintf(stamp, sizeof(stamp), "%s/.pruned", launches);
	unlink(stamp);
}

Test(launchfiles, a_run_prunes_launch_files_no_ring_needs_beyond_the_newest_64)
{
	char ring[700];
	snprintf(ring, sizeof(ring), "%s/first.ring", dtt_tmpdir());
	run_true(ring); /* makes the directory */
	for (int i = 0; i < 80; i++)
		dead_launch_file(i, 2 * 3600 + i);
	unstamp();
	snprintf(ring, sizeof(ring), "%s/second.ring", dtt_tmpdir());
	run_true(ring);
	/* 64 dead ones and the two runs' own (their rings are where they were) */
	cr_expect_eq(launch_files(), 66, "%zu launch files left", launch_files());
	/* the oldest went first */
	char oldest[800], newest[800];
	snprintf(oldest, sizeof(oldest), "%s/%032x.launch", launches, 80);
	snprintf(newest, sizeof(newest), "%s/%032x.launch", launches, 1);
	cr_expect_neq(access(oldest, F_OK), 0, "%s is still there", oldest);
	cr_expect_eq(access(newest, F_OK), 0, "%s was removed", newest);
}

Test(launchfiles, a_launch_file_whose_ring_is_still_there_is_kept_however_old)
{
	char ring[700], mine[800];
	snprintf(ring, sizeof(ring), "%s/kept.ring", dtt_tmpdir());
	run_true(ring);
	the_launch_file(mine, sizeof(mine));
	age(mine, 30L * 24 * 3600);
	dead_launch_file(0, 8L * 24 * 3600); /* a week and a day: goes */
	unstamp();
	char other[700];
	snprintf(other, sizeof(other), "%s/other.ring", dtt_tmpdir());
	run_true(other);
	cr_expect_eq(access(mine, F_OK), 0, "the live ring's launch file was removed");
	cr_expect_eq(launch_files(), 2, "%zu launch files left", launch_files());
}

Test(launchfiles, a_launch_file_whose_ring_moved_to_old_is_kept)
{
	char ring[700], mine[800];
	snprintf(ring, sizeof(ring), "%s/moved.ring", dtt_tmpdir());
	run_true(ring);
	the_launch_file(mine, sizeof(mine));
	age(mine, 30L * 24 * 3600);
	unstamp();
	run_true(ring); /* displaces the first ring to moved.ring.old */
	cr_expect_eq(access(mine, F_OK), 0, "the displaced ring's launch file was removed");
}

Test(launchfiles, a_recent_launch_file_is_kept_even_when_its_ring_is_gone)
{
	char ring[700], mine[800];
	snprintf(ring, sizeof(ring), "%s/gone.ring", dtt_tmpdir());
	run_true(ring);
	the_launch_file(mine, sizeof(mine));
	unlink(ring);
	age(mine, 600);
	unstamp();
	char other[700];
	snprintf(other, sizeof(other), "%s/other.ring", dtt_tmpdir());
	run_true(other);
	cr_expect_eq(access(mine, F_OK), 0, "a ten-minute-old launch file was removed");
}

Test(launchfiles, a_week_old_launch_file_without_its_ring_goes_and_passes_are_hourly)
{
	char ring[700], mine[800];
	snprintf(ring, sizeof(ring), "%s/old.ring", dtt_tmpdir());
	run_true(ring);
	the_launch_file(mine, sizeof(mine));
	unlink(ring);
	age(mine, 8L * 24 * 3600);
	char other[700];
	snprintf(other, sizeof(other), "%s/other.ring", dtt_tmpdir());
	run_true(other); /* the first run stamped the directory: no pass yet */
	cr_expect_eq(access(mine, F_OK), 0, "a pass ran within the hour");
	unstamp();
	run_true(other);
	cr_expect_neq(access(mine, F_OK), 0, "the week-old launch file of a removed ring is there");
}
