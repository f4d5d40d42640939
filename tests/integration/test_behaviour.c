/* SPDX-License-Identifier: MIT */
/*
 * The probe must not change the program: same results, same errno, same
 * descriptors, same locks, nothing on stderr, no secrets in the ring, and
 * no crash when refusals come from a signal handler. The program is
 * tests/helpers/behave.c, always run inside the same bubblewrap layout
 * with and without the probe.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

static char tmp[512], ro[600], rw[600];

static void write_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(content, f);
	fclose(f);
}

static void setup(void)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	snprintf(tmp, sizeof(tmp), "%s", dtt_tmpdir());
	snprintf(ro, sizeof(ro), "%s/ro", tmp);
	snprintf(rw, sizeof(rw), "%s/rw", tmp);
	mkdir(ro, 0755);
	mkdir(rw, 0755);
	char p[700];
	snprintf(p, sizeof(p), "%s/dir", ro);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/existing", ro);
	write_file(p, "existing\n");
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(behaviour, .init = setup, .fini = teardown, .timeout = 120);

/* ---- command lines -------------------------------------------------- */

struct cmd {
	const char *argv[64];
	size_t n;
};

static void add(struct cmd *c, const char *a)
{
	cr_assert_lt(c->n, 63);
	c->argv[c->n++] = a;
	c->argv[c->n] = NULL;
}

/* bwrap with / read-only and rw/ writable. With whole_tmp, the whole test
 * directory is writable (the ring lives there) except ro/. */
static void bwrap(struct cmd *c, int whole_tmp)
{
	c->n = 0;
	add(c, "bwrap");
	add(c, "--ro-bind"), add(c, "/"), add(c, "/");
	if (whole_tmp) {
		add(c, "--bind"), add(c, tmp), add(c, tmp);
		add(c, "--ro-bind"), add(c, ro), add(c, ro);
	} else {
		add(c, "--bind"), add(c, rw), add(c, rw);
	}
	add(c, "--dev"), add(c, "/dev");
	add(c, "--proc"), add(c, "/proc");
}

static void behave(struct cmd *c, const char *mode)
{
	add(c, "--");
	add(c, dtt_helper("behave"));
	add(c, mode);
}

/* A fresh subdirectory of rw/ for one run; returns its path. */
static const char *fresh_rw(const char *name)
{
	static char path[4][700];
	static int k;
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", rw, name);
	cr_assert_eq(mkdir(path[k], 0755), 0, "%s: %s", path[k], strerror(errno));
	return path[k];
}

/* Runs argv with extra environment, stdout and stderr kept apart. Any
 * denytrace variable of ours is removed first. Returns the exit status. */
static int run_split(const char *const *argv, const char *const *env, char *out, size_t outcap,
                     char *err, size_t errcap)
{
	char of[700], ef[700];
	static int seq;
	snprintf(of, sizeof(of), "%s/out.%d", tmp, seq);
	snprintf(ef, sizeof(ef), "%s/err.%d", tmp, seq++);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int o = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(o, 1);
		dup2(e, 2);
		/* a clean descriptor table: whatever the test runner left open
		 * would put holes under the helper's numbering */
		close_range(3, ~0U, 0);
		static const char *const ours[] = {
		    "LD_PRELOAD",    "DENYTRACE_FD",        "DENYTRACE_RING", "DENYTRACE_RING_ID",
		    "DENYTRACE_ALL", "DENYTRACE_BACKTRACE", "DENYTRACE_ENV",  "DENYTRACE_ERRNOS"};
		for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
			unsetenv(ours[i]);
		for (const char *const *v = env; v && *v; v++)
			putenv((char *)*v);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	char *const bufs[2] = {out, err};
	const size_t caps[2] = {outcap, errcap};
	const char *files[2] = {of, ef};
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "r");
		size_t n = f ? fread(bufs[i], 1, caps[i] - 1, f) : 0;
		bufs[i][n] = 0;
		if (f)
			fclose(f);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `denytrace run -q -o RING [opts] -- argv` through run_split, then loads
 * the ring: like dtt_run, but with a clean descriptor table (the ring is
 * inherited, high) and stdout alone in r->out, stderr in err. */
static int probe_run(struct dtt_run *r, const char *const *opts, const char *const *argv,
                     const char *const *env, char *err, size_t errcap)
{
	static int seq;
	static char cli[700];
	memset(r, 0, sizeof(*r));
	snprintf(r->ring, sizeof(r->ring), "%s/probe%d.ring", tmp, seq++);
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *args[128];
	size_t n = 0;
	args[n++] = cli;
	args[n++] = "run";
	args[n++] = "-q";
	args[n++] = "-o";
	args[n++] = r->ring;
	for (const char *const *o = opts; o && *o; o++)
		args[n++] = *o;
	args[n++] = "--";
	for (const char *const *a = argv; *a && n < 127; a++)
		args[n++] = *a;
	args[n] = NULL;
	static char sink[4096];
	if (!err)
		err = sink, errcap = sizeof(sink);
	r->status = run_split(args, env, r->out, sizeof(r->out), err, errcap);
	return dtt_load(r, r->ring);
}

/* Whole file into a malloc'd buffer. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Where two outputs first differ, as "line N: 'plain' vs 'probe'". */
static const char *first_diff(const char *a, const char *b)
{
	static char msg[1024];
	int line = 1;
	const char *la = a, *lb = b;
	while (*a && *a == *b) {
		if (*a == '\n') {
			line++;
			la = a + 1;
			lb = b + 1;
		}
		a++, b++;
	}
	if (!*a && !*b)
		return "no difference";
	int na = (int)strcspn(la, "\n"), nb = (int)strcspn(lb, "\n");
	snprintf(msg, sizeof(msg), "line %d:\n  plain: %.*s\n  probe: %.*s", line, na, la, nb, lb);
	return msg;
}

/* The helper's own refusals in a run: denials whose path is under ro/. */
static size_t ro_denials(const struct dtt_run *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == DT_REC_DENIAL && r->recs[i].p[0].abspath &&
		    !strncmp(r->recs[i].p[0].abspath, ro, strlen(ro)))
			n++;
	return n;
}

static const char *probe_path(void)
{
	static char p[700];
	snprintf(p, sizeof(p), "%s/libdenytrace.so", dtt_build());
	return p;
}

/* ---- same results ---------------------------------------------------- */

/* Runs `behave same` plainly and under `denytrace run [opts]` in the same
 * layout; both outputs must be identical. */
static void same_with_and_without_probe(const char *const *opts)
{
	struct cmd c;
	static char plain[65536], plain_err[4096], err[4096];
	bwrap(&c, 0);
	behave(&c, "same");
	add(&c, ro);
	add(&c, fresh_rw("plain"));
	int plain_status =
	    run_split(c.argv, NULL, plain, sizeof(plain), plain_err, sizeof(plain_err));
	cr_assert_eq(plain_status, 0, "the helper failed on its own: %s%s", plain, plain_err);

	bwrap(&c, 0);
	behave(&c, "same");
	add(&c, ro);
	add(&c, fresh_rw("probe"));
	struct dtt_run r;
	cr_assert_eq(probe_run(&r, opts, c.argv, NULL, err, sizeof(err)), 0, "ring unreadable: %s",
	             err);
	cr_expect_str_eq(err, plain_err, "stderr differs under the probe: %s", err);
	/* the probe really was at work: it saw the refusals and the reopen */
	cr_expect_geq(ro_denials(&r), 25, "only %zu refusals recorded", ro_denials(&r));
	cr_expect_geq(dtt_count(&r, DT_REC_REOPEN, NULL, "/ro/existing"), 1);
	cr_expect_eq(r.status, plain_status);
	cr_expect_str_eq(r.out, plain, "output differs under the probe, %s",
	                 first_diff(plain, r.out));
	dtt_free(&r);
}

Test(behaviour, same_calls_give_same_results_and_errno_with_and_without_the_probe)
{
	same_with_and_without_probe(NULL);
}

/* The same comparison with call stacks off: isolates the backtrace code
 * (the probe's unwinder, unwind.c) from the rest of the recording path. */
Test(behaviour, same_calls_give_same_results_under_the_probe_without_backtraces)
{
	const char *opts[] = {"--no-backtrace", NULL};
	same_with_and_without_probe(opts);
}

/* With --all every successful write takes the slow path too (mkstemp's
 * template, tmpfile's FILE, errno after a success). */
Test(behaviour, same_calls_give_same_results_when_successes_are_recorded_too)
{
	const char *opts[] = {"--all", NULL};
	same_with_and_without_probe(opts);
}

/* tmpfile returns a FILE, not a descriptor: its successful create under
 * --all is recorded without an fd (it used to say 0, the program's stdin). */
Test(behaviour, tmpfile_under_all_is_recorded_without_a_made_up_descriptor)
{
	struct cmd c;
	const char *dir = fresh_rw("tmpfile");
	c.n = 0;
	add(&c, "bwrap");
	add(&c, "--ro-bind"), add(&c, "/"), add(&c, "/");
	add(&c, "--tmpfs"), add(&c, "/tmp"); /* where tmpfile makes its file */
	/* the build directory again (helper, probe), in case the checkout
	 * itself lives under /tmp */
	static char build[4096];
	snprintf(build, sizeof(build), "%s", dtt_helper("behave"));
	for (int up = 0; up < 2; up++)
		*strrchr(build, '/') = '\0';
	add(&c, "--ro-bind");
	add(&c, build);
	add(&c, build);
	add(&c, "--ro-bind"), add(&c, ro), add(&c, ro);
	add(&c, "--bind"), add(&c, rw), add(&c, rw);
	add(&c, "--dev"), add(&c, "/dev");
	add(&c, "--proc"), add(&c, "/proc");
	behave(&c, "same");
	add(&c, ro);
	add(&c, dir);
	const char *opts[] = {"--all", NULL};
	struct dtt_run r;
	cr_assert_eq(probe_run(&r, opts, c.argv, NULL, NULL, 0), 0, "ring unreadable: %s", r.out);
	cr_assert(strstr(r.out, "tmpfile                      FILE"), "%s", r.out);
	size_t seen = 0;
	for (size_t i = 0; i < r.n; i++) {
		const struct dt_record *d = &r.recs[i];
		if (d->type != DT_REC_WRITE || !d->op || strncmp(d->op, "tmpfile", 7))
			continue;
		seen++;
		cr_expect(!d->has_fd, "%s recorded with fd %lld", d->op, (long long)d->fd);
	}
	cr_expect_eq(seen, 1, "%zu tmpfile records", seen);
	dtt_free(&r);
}

/* ---- descriptors ----------------------------------------------------- */

static void fds_case(const char *const *opts)
{
	struct cmd c;
	bwrap(&c, 0);
	behave(&c, "fds");
	add(&c, ro);
	add(&c, fresh_rw("fds"));
	struct dtt_run r;
	cr_assert_eq(probe_run(&r, opts, c.argv, NULL, NULL, 0), 0, "ring unreadable: %s", r.out);
	cr_expect_geq(ro_denials(&r), 20, "the refusals were not recorded: %s", r.out);
	cr_expect(strstr(r.out, "refusals as expected"), "%s", r.out);
	cr_expect(strstr(r.out, "descriptors unchanged"),
	          "the probe left descriptors open in the program:\n%s", r.out);
	cr_expect_eq(r.status, 0);
	dtt_free(&r);
}

/* Counted after start-up (the inherited ring descriptor is there from the
 * first line of main); compared after two rounds of refusals. */
Test(behaviour, refusals_leave_no_new_descriptors_in_the_program)
{
	fds_case(NULL);
}

Test(behaviour, refusals_leave_no_new_descriptors_without_backtraces)
{
	const char *opts[] = {"--no-backtrace", NULL};
	fds_case(opts);
}

/* No inherited descriptor at all: the probe opens the ring by its path,
 * maps it and must close what it opened. */
Test(behaviour, attaching_by_ring_path_leaves_no_new_descriptors)
{
	char ring[700];
	snprintf(ring, sizeof(ring), "%s/path.ring", tmp);
	char cli[700], made[4096];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *mk[] = {cli, "run", "-q", "--size", "1M", "-o", ring, "--", "true", NULL};
	cr_assert_eq(dtt_system(made, sizeof(made), mk, NULL), 0, "%s", made);

	char preload[800], ringvar[800];
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", probe_path());
	snprintf(ringvar, sizeof(ringvar), "DENYTRACE_RING=%s", ring);
	const char *env[] = {preload, ringvar, "DENYTRACE_BACKTRACE=0", NULL};
	struct cmd c;
	bwrap(&c, 1);
	behave(&c, "fds");
	add(&c, ro);
	add(&c, fresh_rw("fds"));
	char out[65536], err[4096];
	int status = run_split(c.argv, env, out, sizeof(out), err, sizeof(err));
	cr_expect_eq(status, 0, "%s%s", out, err);
	cr_expect(strstr(out, "descriptors unchanged"), "%s", out);
	cr_expect_str_empty(err);
	struct dtt_run r;
	cr_assert_eq(dtt_load(&r, ring), 0);
	cr_expect_geq(ro_denials(&r), 20, "the probe did not reach the ring by its path");
	dtt_free(&r);
}

/* ---- closing every descriptor ---------------------------------------- */

static void expect_own_file_intact(const char *dir)
{
	char p[800];
	snprintf(p, sizeof(p), "%s/own", dir);
	size_t n;
	char *s = slurp(p, &n);
	cr_expect_str_eq(s, "the program's own data\n", "the program's file was changed");
	free(s);
}

/* The ring descriptor is gone and its number now names one of the
 * program's files; the ring's path is not reachable from the sandbox. */
Test(behaviour, closing_every_descriptor_leaves_the_program_working_and_the_probe_quiet)
{
	struct cmd c;
	const char *dir = fresh_rw("closefrom");
	bwrap(&c, 0);
	behave(&c, "closefrom");
	add(&c, ro);
	add(&c, dir);
	struct dtt_run r;
	cr_assert_eq(probe_run(&r, NULL, c.argv, NULL, NULL, 0), 0, "ring unreadable: %s", r.out);
	cr_expect_eq(r.status, 0, "%s", r.out);
	cr_expect(strstr(r.out, "closefrom ok"), "%s", r.out);
	/* "out of reach": the ring sits above a soft limit of 1024 or less */
	cr_expect(strstr(r.out, "own file on the ring's number: yes\n") ||
	              strstr(r.out, "own file on the ring's number: out of reach\n"),
	          "the ring's number was neither reused nor out of reach: %s", r.out);
	cr_expect_eq(ro_denials(&r), 0, "recorded without a ring to write to?");
	expect_own_file_intact(dir);
	dtt_free(&r);
}

/* Same, but the ring's path is writable inside the sandbox: the probe
 * falls back to it (and leaves the program's fd 3 alone). */
Test(behaviour, closing_every_descriptor_falls_back_to_the_ring_path)
{
	struct cmd c;
	const char *dir = fresh_rw("closefrom");
	bwrap(&c, 1);
	behave(&c, "closefrom");
	add(&c, ro);
	add(&c, dir);
	struct dtt_run r;
	cr_assert_eq(probe_run(&r, NULL, c.argv, NULL, NULL, 0), 0, "ring unreadable: %s", r.out);
	cr_expect_eq(r.status, 0, "%s", r.out);
	cr_expect(strstr(r.out, "closefrom ok"), "%s", r.out);
	cr_expect_geq(ro_denials(&r), 10, "the probe did not fall back to the ring path");
	char want[700];
	snprintf(want, sizeof(want), "%s/d", ro);
	cr_expect_not_null(dtt_find(&r, DT_REC_DENIAL, "mkdir", want));
	expect_own_file_intact(dir);
	dtt_free(&r);
}

/* The program closes every descriptor after the probe has recorded (and so
 * after whatever the recording opened), then reuses the numbers for its own
 * files. Later refusals must leave those files alone: no byte read from
 * them (offsets stay 0), none written into them. */
static void closefrom_late_case(const char *const *opts)
{
	struct cmd c;
	bwrap(&c, 0);
	behave(&c, "closefrom-late");
	add(&c, ro);
	add(&c, fresh_rw("late"));
	struct dtt_run r;
	cr_assert_eq(probe_run(&r, opts, c.argv, NULL, NULL, 0), 0, "ring unreadable: %s", r.out);
	cr_expect(strstr(r.out, "refusals as expected"), "%s", r.out);
	cr_expect(strstr(r.out, "files intact"), "the probe read or wrote the program's files:\n%s",
	          r.out);
	cr_expect_eq(r.status, 0, "%s", r.out);
	/* the ring stays mapped after its descriptor is closed */
	char want[700];
	snprintf(want, sizeof(want), "%s/from-thread", ro);
	cr_expect_eq(dtt_count(&r, DT_REC_DENIAL, "open", want), 1);
	snprintf(want, sizeof(want), "%s/d", ro);
	cr_expect_eq(dtt_count(&r, DT_REC_DENIAL, "mkdir", want), 2);
	dtt_free(&r);
}

Test(behaviour, closing_descriptors_after_a_refusal_keeps_the_programs_files_intact)
{
	closefrom_late_case(NULL);
}

Test(behaviour, closing_descriptors_after_a_refusal_without_backtraces_keeps_files_intact)
{
	const char *opts[] = {"--no-backtrace", NULL};
	closefrom_late_case(opts);
}

/* ---- POSIX locks ----------------------------------------------------- */

static char locked[700], alias[700];

/* ro/locked is bound writable inside its read-only directory (SQLite's
 * database in a read-only directory); ro/alias is the same file bound
 * read-only. */
static void locks_layout(struct cmd *c, const char *mode)
{
	snprintf(locked, sizeof(locked), "%s/locked", ro);
	snprintf(alias, sizeof(alias), "%s/alias", ro);
	write_file(locked, "locked\n");
	write_file(alias, "");
	c->n = 0;
	add(c, "bwrap");
	add(c, "--ro-bind"), add(c, "/"), add(c, "/");
	add(c, "--bind"), add(c, locked), add(c, locked);
	add(c, "--ro-bind"), add(c, locked), add(c, alias);
	add(c, "--dev"), add(c, "/dev");
	add(c, "--proc"), add(c, "/proc");
	behave(c, mode);
	add(c, locked);
}

Test(behaviour, refusals_on_a_locked_file_leave_its_posix_lock_held)
{
	struct cmd c;
	locks_layout(&c, "locks");
	add(&c, alias);
	add(&c, ro);
	struct dtt_run r;
	cr_assert_eq(probe_run(&r, NULL, c.argv, NULL, NULL, 0), 0, "ring unreadable: %s", r.out);
	cr_assert(strstr(r.out, "locked before: held"), "the lock was never taken: %s", r.out);
	cr_expect(strstr(r.out, "refusals 10 of 10"), "%s", r.out);
	cr_expect(strstr(r.out, "locked after: held"),
	          "the lock was dropped: the probe opened and closed the file\n%s", r.out);
	cr_expect_eq(r.status, 0, "%s", r.out);
	/* the probe did its work on those very paths while the lock was held */
	const struct dt_record *d = dtt_find(&r, DT_REC_DENIAL, "unlink", "/ro/locked");
	cr_assert_not_null(d, "%s", r.out);
	cr_expect_str_eq(d->p[0].realpath, locked);
	cr_expect(d->p[0].st.valid & DT_SF_EXISTS, "the locked file was not stat'ed");
	cr_expect_not_null(dtt_find(&r, DT_REC_DENIAL, "rename", "/ro/locked"));
	cr_expect_not_null(dtt_find(&r, DT_REC_DENIAL, "link", "/ro/locked"));
	cr_expect_not_null(dtt_find(&r, DT_REC_DENIAL, "open", "/ro/alias"));
	cr_expect_not_null(dtt_find(&r, DT_REC_DENIAL, "fchmod", "/ro/alias"));
	cr_expect_not_null(dtt_find(&r, DT_REC_REOPEN, "open", "/ro/alias"));
	dtt_free(&r);
}

/* The check itself: a second descriptor of the file, opened and closed,
 * drops the lock, and the helper reports it. */
Test(behaviour, lock_check_sees_a_lock_dropped_by_closing_another_descriptor)
{
	struct cmd c;
	locks_layout(&c, "locks-control");
	char out[4096], err[4096];
	int status = run_split(c.argv, NULL, out, sizeof(out), err, sizeof(err));
	cr_expect_eq(status, 0, "%s%s", out, err);
	cr_expect(strstr(out, "locked before: held"), "%s", out);
	cr_expect(strstr(out, "locked after: FREE"), "%s", out);
}

/* ---- a ring the probe cannot use -------------------------------------- */

/* `behave same` with LD_PRELOAD and the given variables, against a plain
 * run in the same layout: same stdout, same status, empty stderr. */
static void unusable_ring_case(const char *ringvar, const char *fdvar, int whole_tmp)
{
	char preload[800];
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", probe_path());
	const char *env[4] = {preload, ringvar, fdvar, NULL};
	if (!ringvar)
		env[1] = fdvar, env[2] = NULL;

	struct cmd c;
	static char plain_out[65536], plain_err[4096], out[65536], err[4096];
	bwrap(&c, whole_tmp);
	behave(&c, "same");
	add(&c, ro);
	add(&c, fresh_rw("plain"));
	int plain_status =
	    run_split(c.argv, NULL, plain_out, sizeof(plain_out), plain_err, sizeof(plain_err));
	cr_assert_eq(plain_status, 0, "%s%s", plain_out, plain_err);
	cr_assert_str_empty(plain_err);

	bwrap(&c, whole_tmp);
	behave(&c, "same");
	add(&c, ro);
	add(&c, fresh_rw("probe"));
	int status = run_split(c.argv, env, out, sizeof(out), err, sizeof(err));
	cr_expect_eq(status, plain_status);
	cr_expect_str_empty(err, "the probe wrote on stderr: %s", err);
	cr_expect_str_eq(out, plain_out, "output differs under the probe, %s",
	                 first_diff(plain_out, out));
}

Test(behaviour, ring_path_that_does_not_exist_changes_nothing)
{
	char v[800];
	snprintf(v, sizeof(v), "DENYTRACE_RING=%s/no/such.ring", tmp);
	unusable_ring_case(v, NULL, 0);
}

/* A real ring, but on a read-only mount inside the sandbox: untouched. */
Test(behaviour, ring_on_a_read_only_mount_changes_nothing_and_stays_untouched)
{
	char ring[700], cli[700], v[800];
	snprintf(ring, sizeof(ring), "%s/ro.ring", tmp);
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *mk[] = {cli, "run", "-q", "--size", "64K", "-o", ring, "--", "true", NULL};
	char out[4096];
	cr_assert_eq(dtt_system(out, sizeof(out), mk, NULL), 0, "%s", out);
	snprintf(v, sizeof(v), "DENYTRACE_RING=%s", ring);
	unusable_ring_case(v, NULL, 0);
	/* bwrap itself runs before the sandbox exists, where the ring is
	 * writable: as an ordinary user its own set-up writes (uid_map, its
	 * new root) are recorded, by default, like any traced process's. No
	 * record may come from inside the sandbox. */
	static struct dtt_run r;
	cr_assert_eq(dtt_load(&r, ring), 0);
	for (size_t i = 0; i < r.n; i++)
		cr_expect(!r.recs[i].comm || !strcmp(r.recs[i].comm, "bwrap") ||
		              !strcmp(r.recs[i].comm, "denytrace"),
		          "the read-only ring was written by %s (pid %lld)", r.recs[i].comm,
		          (long long)r.recs[i].pid);
	dtt_free(&r);
}

/* A writable file that is not a ring: the probe must not map it, let alone
 * write into it. */
Test(behaviour, ring_path_naming_a_writable_non_ring_file_changes_nothing)
{
	char file[700], v[800];
	snprintf(file, sizeof(file), "%s/not-a-ring", tmp);
	char junk[8192];
	for (size_t i = 0; i < sizeof(junk) - 1; i++)
		junk[i] = (char)('a' + i % 26);
	junk[sizeof(junk) - 1] = 0;
	write_file(file, junk);
	snprintf(v, sizeof(v), "DENYTRACE_RING=%s", file);
	unusable_ring_case(v, NULL, 1);
	size_t n;
	char *after = slurp(file, &n);
	cr_expect_str_eq(after, junk, "the non-ring file was modified");
	free(after);
}

/* A valid ring that another user owns, or that others may write, found by
 * path alone: the probe must not hand it this program's paths and argv. */
static void planted_ring_case(uid_t owner, mode_t mode)
{
	char ring[700], cli[700], v[800];
	snprintf(ring, sizeof(ring), "%s/planted-%u-%o.ring", tmp, (unsigned)owner, (unsigned)mode);
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *mk[] = {cli, "run", "-q", "--size", "64K", "-o", ring, "--", "true", NULL};
	char out[4096];
	cr_assert_eq(dtt_system(out, sizeof(out), mk, NULL), 0, "%s", out);
	cr_assert_eq(chown(ring, owner, owner == geteuid() ? getegid() : owner), 0);
	cr_assert_eq(chmod(ring, mode), 0);
	struct dtt_run before;
	cr_assert_eq(dtt_load(&before, ring), 0);
	size_t n0 = before.n;
	dtt_free(&before);

	snprintf(v, sizeof(v), "DENYTRACE_RING=%s", ring);
	unusable_ring_case(v, NULL, 1);
	struct dtt_run after;
	cr_assert_eq(dtt_load(&after, ring), 0);
	cr_expect_eq(after.n, n0, "the probe wrote %zu records into a ring it does not own",
	             after.n - n0);
	dtt_free(&after);
}

Test(behaviour, ring_path_owned_by_another_user_is_not_written)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to give the ring to another user (uid 65534)");
	planted_ring_case(65534, 0666);
}

Test(behaviour, ring_path_writable_by_others_is_not_written)
{
	planted_ring_case(geteuid(), 0622);
}

/* DENYTRACE_FD naming a descriptor that is not open, no ring path. */
Test(behaviour, ring_descriptor_that_is_not_open_changes_nothing)
{
	unusable_ring_case(NULL, "DENYTRACE_FD=77", 0);
}

/* ---- secrets ----------------------------------------------------------- */

static const char *const secrets[][2] = {
    {"OPENAI_API_KEY", "sk-secret123"},
    {"GITHUB_TOKEN", "ghp_x"},
    {"MY_PASSWORD", "hunter2"},
    {"AWS_SECRET_ACCESS_KEY", "aws-secret-value-42"},
    {"SOME_CREDENTIAL", "credential-value-77"},
    {"HERMES_API_TOKEN", "hermes-token-value-5"}, /* a wanted prefix */
    {"github_auth", "lowercase-auth-value"},
};
#define NSECRETS (sizeof(secrets) / sizeof(secrets[0]))

static void secrets_case(const char *const *opts)
{
	static char vars[NSECRETS][128];
	const char *env[NSECRETS + 3];
	size_t k = 0;
	for (size_t i = 0; i < NSECRETS; i++) {
		snprintf(vars[i], sizeof(vars[i]), "%s=%s", secrets[i][0], secrets[i][1]);
		env[k++] = vars[i];
	}
	env[k++] = "HERMES_HOME=/x";
	env[k++] = "PLAIN_SETTING=plain-value";
	env[k] = NULL;

	struct cmd c;
	bwrap(&c, 0);
	behave(&c, "refuse");
	add(&c, ro);
	struct dtt_run r;
	cr_assert_eq(probe_run(&r, opts, c.argv, env, NULL, 0), 0, "ring unreadable: %s", r.out);
	cr_assert(strstr(r.out, "refuse EROFS"), "%s", r.out);
	char want[700];
	snprintf(want, sizeof(want), "%s/refused", ro);
	const struct dt_record *d = dtt_find(&r, DT_REC_DENIAL, "open", want);
	cr_assert_not_null(d, "%s", r.out);

	size_t len;
	char *raw = slurp(r.ring, &len);
	for (size_t i = 0; i < NSECRETS; i++) {
		cr_expect_null(memmem(raw, len, secrets[i][1], strlen(secrets[i][1])),
		               "the value of %s is in the ring file", secrets[i][0]);
		cr_expect_null(memmem(raw, len, secrets[i][0], strlen(secrets[i][0])),
		               "the name %s is in the ring file", secrets[i][0]);
	}
	cr_expect_not_null(memmem(raw, len, "HERMES_HOME=/x", 14));
	free(raw);

	const struct dt_record *p = NULL;
	for (size_t i = 0; i < r.n; i++)
		if (r.recs[i].type == DT_REC_PROCESS && r.recs[i].pid == d->pid && r.recs[i].exe &&
		    !strcmp(r.recs[i].exe, dtt_helper("behave")))
			p = &r.recs[i];
	cr_assert_not_null(p, "no process record for the helper");
	const char *h = dt_record_env(p, "HERMES_HOME");
	cr_assert_not_null(h, "HERMES_HOME missing from the process record");
	cr_expect_str_eq(h, "/x");
	for (size_t i = 0; i < NSECRETS; i++)
		cr_expect_null(dt_record_env(p, secrets[i][0]));
	dtt_free(&r);
}

Test(behaviour, secret_variables_never_reach_the_ring_file)
{
	secrets_case(NULL);
}

/* Asking for them by name does not let them through either; an ordinary
 * name asked for does come through. */
Test(behaviour, secret_variables_named_with_env_option_are_still_withheld)
{
	const char *opts[] = {"--env", "OPENAI_API_KEY,MY_PASSWORD,GITHUB_TOKEN,PLAIN_SETTING",
	                      NULL};
	secrets_case(opts);
	/* PLAIN_SETTING: checked on a fresh run, secrets_case freed its own */
	struct cmd c;
	bwrap(&c, 0);
	behave(&c, "refuse");
	add(&c, ro);
	const char *env[] = {"PLAIN_SETTING=plain-value", NULL};
	struct dtt_run r;
	cr_assert_eq(probe_run(&r, opts, c.argv, env, NULL, 0), 0, "ring unreadable: %s", r.out);
	int found = 0;
	for (size_t i = 0; i < r.n; i++)
		if (r.recs[i].type == DT_REC_PROCESS && r.recs[i].exe &&
		    !strcmp(r.recs[i].exe, dtt_helper("behave"))) {
			const char *v = dt_record_env(&r.recs[i], "PLAIN_SETTING");
			found = v && !strcmp(v, "plain-value");
		}
	cr_expect(found, "--env PLAIN_SETTING did not reach the process record");
	dtt_free(&r);
}

/* ---- signals ------------------------------------------------------------ */

/* A SIGALRM handler (every 5 ms) refuses an open while the main loop does
 * too. Records from the handler may be dropped while it interrupted the
 * probe; the program must finish normally with errno intact everywhere. */
Test(behaviour, refusals_from_a_signal_handler_neither_crash_nor_deadlock)
{
	struct cmd c;
	bwrap(&c, 0);
	behave(&c, "signal");
	add(&c, ro);
	struct dtt_run r;
	cr_assert_eq(probe_run(&r, NULL, c.argv, NULL, NULL, 0), 0, "ring unreadable: %s", r.out);
	cr_expect_eq(r.status, 0, "%s", r.out);
	cr_expect(strstr(r.out, "0 unexpected; handler"), "%s", r.out);
	cr_expect(strstr(r.out, "refusals, 0 unexpected\n"), "%s", r.out);
	cr_expect_eq(r.stats.corrupt, 0);
	char want[700];
	snprintf(want, sizeof(want), "%s/from-main", ro);
	size_t main_recs = dtt_count(&r, DT_REC_DENIAL, NULL, want);
	cr_expect_gt(main_recs, 0, "no refusal of the main loop recorded");
	/* every record is whole: a handler never wrote into a half-built one */
	snprintf(want, sizeof(want), "%s/from-handler", ro);
	for (size_t i = 0; i < r.n; i++) {
		const struct dt_record *d = &r.recs[i];
		if (d->type != DT_REC_DENIAL || !d->p[0].abspath ||
		    strncmp(d->p[0].abspath, ro, strlen(ro)))
			continue;
		cr_expect_str_eq(d->op, "open");
		cr_expect_eq(d->err, EROFS);
		cr_expect(!strcmp(d->p[0].realpath, want) ||
		              !strcmp(d->p[0].realpath + strlen(ro), "/from-main"),
		          "mixed-up record: %s", d->p[0].realpath);
	}
	dtt_free(&r);
}

/* A timer handler that leaves by siglongjmp abandons the probe in the
 * middle of recording, 200 times; the probe must give back what those
 * levels held (after eight, the thread used to never record again). */
Test(behaviour, siglongjmp_out_of_the_probe_leaves_later_refusals_recorded)
{
	struct cmd c;
	bwrap(&c, 0);
	behave(&c, "longjmp");
	add(&c, ro);
	struct dtt_run r;
	cr_assert_eq(probe_run(&r, NULL, c.argv, NULL, NULL, 0), 0, "ring unreadable: %s", r.out);
	cr_expect_eq(r.status, 0, "%s", r.out);
	cr_expect(strstr(r.out, "jumps 200, then 1000 refusals, 0 unexpected"), "%s", r.out);
	/* an abandoned level's arena (~240 KiB) is given back, not leaked */
	const char *grew = strstr(r.out, "memory grew ");
	cr_expect(grew && atol(grew + strlen("memory grew ")) < 200, "%s", r.out);
	char want[700];
	snprintf(want, sizeof(want), "%s/after-jumps", ro);
	cr_expect_eq(dtt_count(&r, DT_REC_DENIAL, "open", want), 1000,
	             "%zu of the 1000 refusals after the jumps recorded",
	             dtt_count(&r, DT_REC_DENIAL, "open", want));
	dtt_free(&r);
}

/* A handler on a signal stack that lies above the interrupted stack, armed
 * with SS_AUTODISARM (sigaltstack then reports no signal stack while the
 * handler runs): the refusal that it interrupted is still in progress, and
 * each refusal of either is recorded exactly once, whole. */
Test(behaviour, refusals_from_a_handler_on_an_autodisarmed_signal_stack_are_each_recorded_whole)
{
	struct cmd c;
	bwrap(&c, 0);
	behave(&c, "signal-alt");
	add(&c, ro);
	struct dtt_run r;
	const char *opts[] = {"--size", "64M", "--no-backtrace", NULL};
	cr_assert_eq(probe_run(&r, opts, c.argv, NULL, NULL, 0), 0, "ring unreadable: %s", r.out);
	cr_expect_eq(r.status, 0, "%s", r.out);
	long iterations = 0;
	int handled = 0;
	const char *line = strstr(r.out, "main ");
	cr_assert(line && sscanf(line, "main %ld refusals, 0 unexpected; handler %d refusals, 0",
	                         &iterations, &handled) == 2,
	          "%s", r.out);
	cr_expect_eq(r.stats.corrupt, 0);
	cr_expect_eq(r.stats.torn + r.stats.skipped, 0);
	char want[700];
	snprintf(want, sizeof(want), "%s/from-main", ro);
	cr_expect_eq(dtt_count(&r, DT_REC_DENIAL, "open", want), (size_t)iterations, "%s", r.out);
	snprintf(want, sizeof(want), "%s/from-handler", ro);
	cr_expect_eq(dtt_count(&r, DT_REC_DENIAL, "open", want), (size_t)handled, "%s", r.out);
	dtt_free(&r);
}

/* The inode flags of an EPERM refusal's path are read through an open;
 * a FIFO (or a device) must never be opened by the probe: it would wake a
 * writer waiting for a reader. inotify sees every open of the FIFO. */
Test(behaviour, an_eperm_refusal_on_a_fifo_never_opens_it)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to switch to uid 65534");
	if (access("/usr/bin/setpriv", X_OK) != 0)
		cr_skip_test("needs setpriv (util-linux)");
	char fifo[700];
	snprintf(fifo, sizeof(fifo), "%s/fifo", rw);
	cr_assert_eq(chmod(tmp, 0711), 0);
	cr_assert_eq(chmod(rw, 0755), 0);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	cr_assert_geq(in, 0);
	cr_assert_geq(inotify_add_watch(in, fifo, IN_OPEN), 0);

	struct dtt_run r;
	const char *argv[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
	                      "--",      "chmod",         "600",           fifo,
	                      NULL};
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	const struct dt_record *d = dtt_find(&r, DT_REC_DENIAL, NULL, "/fifo");
	cr_assert_not_null(d, "the chmod refusal was not recorded: %s", r.out);
	cr_expect_eq(d->err, EPERM);
	cr_expect(!d->has_iflags, "inode flags read from a FIFO");
	char ev[4096];
	cr_expect_lt(read(in, ev, sizeof(ev)), 0, "the FIFO was opened");
	close(in);
	dtt_free(&r);
}
