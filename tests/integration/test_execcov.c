/* SPDX-License-Identifier: MIT */
/* Exec coverage: the seccomp listener sees every exec of the tree; the
 * report names the processes the probe could not enter (blind spots). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"
#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(execcov, .fini = teardown, .timeout = 120);

static const struct dt_record *exec_of(const struct dtt_run *r, const char *exe_suffix)
{
	size_t l = strlen(exe_suffix);
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *e = &r->recs[i];
		if (e->type == DT_REC_EXEC && e->exe && strlen(e->exe) >= l &&
		    !strcmp(e->exe + strlen(e->exe) - l, exe_suffix))
			return e;
	}
	return NULL;
}

static void load_report(struct dt_report *rep, const char *ring)
{
	char err[512];
	const char *rings[] = {ring};
	struct dt_report_opts o = {0};
	cr_assert_eq(dt_report_load(rep, rings, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(dt_report_build(rep, &o, err, sizeof(err)), 0, "%s", err);
}

Test(execcov, a_static_binary_and_a_cleared_environment_are_blind_spots)
{
	struct dtt_run r;
	char script[2048];
	snprintf(script, sizeof(script),
	         "%s %s/s.txt; env -i /bin/sh -c 'echo cleared > %s/c.txt'; /bin/true; echo end",
	         dtt_helper("static-writer"), dtt_tmpdir(), dtt_tmpdir());
	const char *opts[] = {"--watch-exec", NULL};
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_expect(strstr(r.out, "end"), "%s", r.out);

	const struct dt_record *st = exec_of(&r, "/static-writer");
	cr_assert_not_null(st, "no exec record for the static helper");
	cr_expect_eq(st->exec_static, 1);
	cr_expect(st->exec_probe, "the probe was in its LD_PRELOAD, it just cannot load");
	cr_expect_str_eq(st->exec_blind, "static");
	cr_expect_gt(st->ppid, 0);
	cr_expect_geq(st->argc, 2);

	struct dt_report rep;
	load_report(&rep, r.ring);
	cr_expect_geq(rep.nexecs, 4, "sh, static-writer, env, sh, true: %zu", rep.nexecs);
	int have_static = 0, have_cleared = 0;
	for (size_t i = 0; i < rep.nblind; i++) {
		const struct dt_record *b = rep.blind[i];
		if (strstr(b->exe, "static-writer"))
			have_static = !strcmp(b->exec_blind, "static");
		else if (!strcmp(b->exe, "/bin/sh") || !strcmp(b->exe, "/usr/bin/sh"))
			have_cleared = !strcmp(b->exec_blind, "no-preload") && !b->preload;
		else
			cr_expect_fail("%s flagged (%s), but the probe entered it", b->exe,
			               b->exec_blind);
	}
	cr_expect(have_static, "the static binary is not a blind spot");
	cr_expect(have_cleared, "the env -i child is not a blind spot");
	/* the outer sh, env and /bin/true had the probe */
	const struct dt_record *t = exec_of(&r, "/true");
	cr_assert_not_null(t);
	cr_expect_null(t->exec_blind);
	cr_expect_eq(t->exec_static, 0);
	cr_expect(t->exec_probe);
	dt_report_free(&rep);
	dtt_free(&r);
}

Test(execcov, ld_preload_rewritten_without_the_probe_is_a_blind_spot)
{
	struct dtt_run r;
	const char *opts[] = {"--watch-exec", NULL};
	const char *argv[] = {"/bin/sh", "-c",
	                      "LD_PRELOAD=/nonexistent/other.so /bin/true 2>/dev/null; true", NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	const struct dt_record *t = exec_of(&r, "/true");
	cr_assert_not_null(t, "%s", r.out);
	cr_expect_str_eq(t->exec_blind, "no-preload");
	cr_expect_str_eq(t->preload, "/nonexistent/other.so");
	dtt_free(&r);
}

Test(execcov, the_report_json_lists_blind_spots_with_pid_exe_argv_and_reason)
{
	struct dtt_run r;
	const char *opts[] = {"--watch-exec", NULL};
	const char *argv[] = {"env", "-i", "/bin/sh", "-c", "true", NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	char out[65536], cli[1024];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *rep_argv[] = {cli, "report", "--json", r.ring, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), rep_argv, NULL), 0, "%s", out);
	struct dt_jv *doc = dtt_json(out);
	const struct dt_jv *bs = dtt_jfind(doc, "blind_spots", "exe", "/bin/sh");
	cr_assert_not_null(bs, "no blind spot for /bin/sh: %s", out);
	const struct dt_jv *pid = dt_jv_get(bs, "pid"), *argv_of = dt_jv_get(bs, "argv");
	cr_expect(pid && pid->type == DT_JV_NUM, "%s", out);
	cr_expect(argv_of && argv_of->type == DT_JV_ARR, "%s", out);
	cr_expect_str_eq(dt_jv_str(bs, "reason"), "no-preload", "%s", out);
	uint64_t execs = 0;
	cr_expect_eq(dt_jv_u64(dtt_jget(doc, "summary"), "execs_seen", &execs), 0, "%s", out);
	cr_expect_eq(execs, 2, "%s", out);
	dt_jv_free(doc);
	dtt_free(&r);
}

Test(execcov, a_silent_run_says_how_many_execs_it_saw_and_how_many_were_blind)
{
	char out[65536], cli[1024], ring[1024];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	snprintf(ring, sizeof(ring), "%s/silent.ring", dtt_tmpdir());
	const char *argv[] = {
	    cli,         "run", "--watch-exec", "-o", ring, "--", dtt_helper("static-writer"),
	    "/dev/null", NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 0, "%s", out);
	cr_expect(strstr(out, "0 refusals"), "%s", out);
	cr_expect(strstr(out, "1 exec seen, 1 blind"), "%s", out);
	cr_expect(strstr(out, "static-writer (static binary)"), "%s", out);

	/* and without coverage the summary says it does not know */
	const char *argv2[] = {cli, "run", "--no-watch-exec", "-o", ring, "--", "true", NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), argv2, NULL), 0, "%s", out);
	cr_expect(strstr(out, "exec coverage off"), "%s", out);
}

Test(execcov, the_listener_does_not_leak_into_the_command)
{
	struct dtt_run r;
	const char *opts[] = {"--watch-exec", NULL};
	/* every descriptor the command holds, by what it points to */
	const char *argv[] = {"/bin/sh", "-c", "ls -l /proc/self/fd/ 2>&1", NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_expect_null(strstr(r.out, "seccomp"), "a seccomp descriptor reached the command: %s",
	               r.out);
	cr_expect_null(strstr(r.out, "socket:"), "the fd-passing socket reached the command: %s",
	               r.out);
	dtt_free(&r);
}

/* Runs argv as uid 65534 (no probe); its exit status. */
static int run_as_nobody(const char *const *argv)
{
	const char *sp[16] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
	size_t n = 4;
	for (const char *const *a = argv; *a && n < 15; a++)
		sp[n++] = *a;
	sp[n] = NULL;
	char out[4096];
	return dtt_system(out, sizeof(out), sp, NULL);
}

/* The supervisor sets no_new_privs when it is not privileged, so a
 * set-uid program loses its privilege: that must be said before the run
 * and in the report, and its refusals never be blamed on the file. */
Test(execcov, a_setuid_program_without_its_privilege_is_denytraces_doing_not_the_files)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to make a set-uid-root program");
	const char *top = dtt_tmpdir();
	char suid[1024], secret[1024], udir[1024], ring[1100], cmd[4096];
	snprintf(suid, sizeof(suid), "%s/suid-cat", top);
	snprintf(secret, sizeof(secret), "%s/secret", top);
	snprintf(udir, sizeof(udir), "%s/u", top);
	snprintf(ring, sizeof(ring), "%s/r.ring", udir);
	snprintf(cmd, sizeof(cmd),
	         "cp /bin/cat '%s' && chmod 4755 '%s' && echo s > '%s' && chmod "
	         "600 '%s' && chmod 755 '%s' && mkdir '%s' && chown 65534:65534 '%s'",
	         suid, suid, secret, secret, top, udir, udir);
	cr_assert_eq(system(cmd), 0);
	const char *alone[] = {suid, secret, NULL};
	if (run_as_nobody(alone) != 0)
		cr_skip_test("set-uid programs do not gain their privilege here (nosuid?)");

	struct dtt_cli c;
	const char *args[] = {"run", "--watch-exec", "-o", ring, "--", suid, secret, NULL};
	dtt_cli_as(&c, 65534, args);
	cr_expect_neq(c.status, 0, "the program kept its privilege: %s", c.err);
	const char *before = strstr(c.err, "no_new_privs");
	const char *summary = strstr(c.err, "denytrace: 1 refusal");
	cr_expect(before && summary && before < summary, "not said before the run: %s", c.err);

	struct dt_report rep;
	load_report(&rep, ring);
	cr_expect_eq(rep.nsetid_lost, 1, "the exec is not named as without privilege");
	if (rep.nsetid_lost)
		cr_expect_eq(rep.setid_lost[0]->setid_euid, 0);
	cr_assert_eq(rep.ngroups, 1);
	cr_expect_str_eq(dt_cause_name(rep.groups[0].v.cause), "setid-lost", "blamed: %s",
	                 rep.groups[0].v.reason);
	dt_report_free(&rep);

	/* fix: no change proposed (no chown, no chmod) */
	char fixjson[8192], py[1400];
	snprintf(py, sizeof(py),
	         "import json, subprocess; d = json.loads(subprocess.run(['%s/denytrace', 'fix', "
	         "'--format', 'json', '%s'], capture_output=True).stdout); "
	         "print([(f['kind'], f.get('copy')) for f in d['fixes']])",
	         dtt_build(), ring);
	const char *pyargv[] = {"/usr/bin/python3", "-c", py, NULL};
	cr_assert_eq(dtt_system(fixjson, sizeof(fixjson), pyargv, NULL), 0, "%s", fixjson);
	cr_expect_str_eq(fixjson, "[('none', [])]\n");
}

/* /proc/self/exe names the exec'ing process's own binary, not denytrace's:
 * a static program that re-executes itself stays blind. */
Test(execcov, a_static_program_reexecuting_itself_through_proc_self_exe_is_blind_twice)
{
	struct dtt_run r;
	const char *opts[] = {"--watch-exec", NULL};
	const char *argv[] = {dtt_helper("static-writer"), "--reexec", NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	cr_expect_eq(r.status, 0, "%s", r.out);
	size_t execs = 0, blind_static = 0;
	for (size_t i = 0; i < r.n; i++)
		if (r.recs[i].type == DT_REC_EXEC) {
			execs++;
			blind_static +=
			    r.recs[i].exec_blind && !strcmp(r.recs[i].exec_blind, "static");
		}
	cr_expect_eq(execs, 2, "%zu execs", execs);
	cr_expect_eq(blind_static, 2, "the re-exec was judged by another binary");
	dtt_free(&r);
}

/* Root's supervisor must not open what an exec names before knowing it is
 * a regular file: opening a FIFO would release a writer blocked on it. */
Test(execcov, an_exec_of_a_fifo_does_not_open_it)
{
	char fifo[1024], marker[1024], script[2400];
	snprintf(fifo, sizeof(fifo), "%s/fifo", dtt_tmpdir());
	snprintf(marker, sizeof(marker), "%s/released", dtt_tmpdir());
	cr_assert_eq(mkfifo(fifo, 0755), 0);
	pid_t writer = fork();
	if (writer == 0) {
		int fd = open(fifo, O_WRONLY); /* blocks until someone opens it to read */
		if (fd >= 0)
			close(open(marker, O_WRONLY | O_CREAT, 0600));
		_exit(0);
	}
	struct dtt_run r;
	snprintf(script, sizeof(script), "'%s' 2>/dev/null; true", fifo);
	const char *opts[] = {"--watch-exec", NULL};
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	dtt_free(&r);
	/* a released writer makes the marker at once: give it a moment */
	int released = 0;
	for (int k = 0; k < 50 && !released; k++) {
		released = access(marker, F_OK) == 0;
		usleep(10 * 1000);
	}
	kill(writer, SIGKILL);
	waitpid(writer, NULL, 0);
	cr_expect(!released, "the supervisor opened the FIFO the command tried to exec");
}

/* LD_PRELOAD after the 4096th variable still counts: the probe is in. */
Test(execcov, an_exec_with_5000_variables_before_ld_preload_is_not_blind)
{
	struct dtt_run r;
	const char *opts[] = {"--watch-exec", NULL};
	const char *argv[] = {"/bin/sh", "-c",
	                      "exec env -i $(seq -f V%g=x 1 5000) LD_PRELOAD=\"$LD_PRELOAD\" "
	                      "/bin/true",
	                      NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	const struct dt_record *e = exec_of(&r, "/true");
	cr_assert_not_null(e, "no exec of /bin/true recorded");
	cr_expect(e->exec_probe, "LD_PRELOAD was not found among the variables");
	cr_expect_null(e->exec_blind, "named blind: %s", e->exec_blind);
	dtt_free(&r);
}

/* A file refused through io_uring never passes through libc, so the probe
 * cannot see it: --watch-exec names the process that set io_uring up as
 * partly blind instead of letting the run look clean. */
Test(execcov, a_process_that_sets_up_io_uring_is_named_partly_blind)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	char target[4096];
	snprintf(target, sizeof(target), "%s/refused-by-uring", dtt_tmpdir());
	const char *argv[DTT_BWRAP_RW_WORDS + 3];
	char rw[4096];
	snprintf(rw, sizeof(rw), "%s/rw", dtt_tmpdir());
	mkdir(rw, 0755);
	size_t n = dtt_bwrap_rw(argv, rw);
	argv[n++] = dtt_helper("uring-open");
	argv[n++] = target;
	argv[n] = NULL;
	struct dtt_run r;
	const char *opts[] = {"--watch-exec", NULL};
	cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0, "%s", r.out);
	if (strstr(r.out, "uring unavailable"))
		cr_skip_test("io_uring is not available here: %s", r.out);
	cr_assert(strstr(r.out, "uring openat: EROFS"), "not refused through io_uring: %s", r.out);
	cr_expect_eq(dtt_count(&r, DT_REC_DENIAL, NULL, "refused-by-uring"), 0,
	             "the probe cannot have seen it");
	struct dt_report rep;
	load_report(&rep, r.ring);
	int named = 0;
	for (size_t i = 0; i < rep.nblind; i++)
		named |= !strcmp(rep.blind[i]->exec_blind, "io_uring") &&
		         strstr(rep.blind[i]->exe, "uring-open") != NULL;
	cr_expect(named, "the io_uring process is not named blind");
	dt_report_free(&rep);
	dtt_free(&r);
}

/* The probe installed under a directory the sandbox covers with a tmpfs:
 * ld.so cannot find it, warns and runs the program without it, whose
 * LD_PRELOAD still names it. Entry is judged by the probe's own record. */
Test(execcov, a_process_whose_sandbox_hides_the_probe_is_blind_and_named_in_likely_causes)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir();
	char hide[1024], probe[1200], src[1200], env_probe[1300], script[2048];
	snprintf(hide, sizeof(hide), "%s/opt", top);
	snprintf(probe, sizeof(probe), "%s/libdenytrace.so", hide);
	snprintf(src, sizeof(src), "%s/libdenytrace.so", dtt_build());
	cr_assert_eq(mkdir(hide, 0755), 0);
	const char *cp[] = {"cp", src, probe, NULL};
	cr_assert_eq(dtt_system(NULL, 0, cp, NULL), 0);
	snprintf(env_probe, sizeof(env_probe), "DENYTRACE_PROBE=%s", probe);
	snprintf(script, sizeof(script), "echo x > '%s/out'", top);

	/* the CLI itself, not -q: its summary is under test */
	char out[65536], cli[1024], ring[1200];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	snprintf(ring, sizeof(ring), "%s/hidden.ring", top);
	const char *argv[] = {
	    cli,  "run",     "--watch-exec", "-o",   ring,    "--",   "bwrap",  "--ro-bind",
	    "/",  "/",       "--tmpfs",      hide,   "--dev", "/dev", "--proc", "/proc",
	    "--", "/bin/sh", "-c",           script, NULL};
	const char *env[] = {env_probe, NULL};
	int status = dtt_system(out, sizeof(out), argv, env);
	cr_expect_neq(status, 0, "the write should fail: %s", out);
	struct dtt_run r;
	memset(&r, 0, sizeof(r));
	cr_assert_eq(dtt_load(&r, ring), 0, "%s", out);
	cr_expect_null(dtt_find(&r, DT_REC_DENIAL, NULL, "/out"), "the probe was not hidden");

	const struct dt_record *sh = exec_of(&r, "/sh");
	cr_assert_not_null(sh, "no exec record for sh: %s", r.out);
	cr_expect(sh->exec_probe, "LD_PRELOAD still names the probe");
	struct dt_report rep;
	load_report(&rep, ring);
	int named = 0;
	for (size_t i = 0; i < rep.nblind; i++)
		named |= rep.blind[i]->pid == sh->pid && rep.blind[i]->exec_blind &&
		         !strcmp(rep.blind[i]->exec_blind, "hidden");
	cr_expect(named, "sh is not a blind spot (%zu blind): %s", rep.nblind, out);
	dt_report_free(&rep);
	cr_expect_null(strstr(out, " 0 blind"), "%s", out);
	cr_expect(strstr(out, "the probe was hidden by the sandbox"), "%s", out);
	dtt_free(&r);
}
