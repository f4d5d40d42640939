/* SPDX-License-Identifier: MIT */
/*
 * Stress under the real probe: tests/helpers/stress.c inside Landlock
 * (landlock-run --no-refer), every refusal a real EACCES or EXDEV, made from
 * several threads of several processes at once while they fork, fork+exec,
 * vfork+exec (itself and /bin/sh with a refused redirect) and take signals
 * whose handlers open a refused path; a tree whose parent SIGKILLs children
 * while they refuse; the minimum ring, wrapping many times.
 *
 * The helper counts, per process and per kind of call, what it attempted and
 * what failed exactly as expected, in shared memory that survives exec and
 * SIGKILL, and prints the counts; the tests hold the ring to them. Every run
 * has a hard deadline (RUN_DEADLINE): a run still going then is killed with
 * its process group and the test fails saying it deadlocked.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define RUN_DEADLINE 30 /* seconds; a run that takes longer has deadlocked */
#define BIG_RING "64M"  /* nothing wraps: 262144 slots */

static char tmp[PATH_MAX], deny[PATH_MAX + 8], ok[PATH_MAX + 8], ok2[PATH_MAX + 8];
static char min_ring[32];

static void touch(const char *dir, const char *name)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0, "cannot create %s", p);
	close(fd);
}

/* tmp/deny: not granted, holds the files the refused rename and unlink
 * name; tmp/ok and tmp/ok2: granted, but not REFER, so a rename from one to
 * the other is EXDEV. */
static void setup(void)
{
	if (!dtt_have_landlock())
		cr_skip_test("Landlock is not available here (landlock-run exits 125)");
	if (!realpath(dtt_tmpdir(), tmp))
		cr_assert_fail("no temporary directory");
	snprintf(deny, sizeof(deny), "%s/deny", tmp);
	snprintf(ok, sizeof(ok), "%s/ok", tmp);
	snprintf(ok2, sizeof(ok2), "%s/ok2", tmp);
	cr_assert_eq(mkdir(deny, 0755), 0);
	cr_assert_eq(mkdir(ok, 0755), 0);
	cr_assert_eq(mkdir(ok2, 0755), 0);
	touch(deny, "r-src");
	touch(deny, "u-src");
	touch(ok, "x-src");
	snprintf(min_ring, sizeof(min_ring), "%u", DT_RING_MIN_SIZE);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(stress, .init = setup, .fini = teardown, .timeout = 120);

/* ---- the helper's kinds of calls ---------------------------------------- */

enum cls { C_OPEN, C_MKDIR, C_RENAME, C_UNLINK, C_FOPEN, C_XDEV, C_SIG, C_SH, NCLS };
static const struct {
	const char *name; /* as the helper prints it */
	char letter;      /* first letter of the refused path's last component */
	const char *op;   /* the op the probe must record (NULL: any open) */
	int err;
} cls_info[NCLS] = {
    {"open", 'o', "open", EACCES},     {"mkdir", 'm', "mkdir", EACCES},
    {"rename", 'r', "rename", EACCES}, {"unlink", 'u', "unlink", EACCES},
    {"fopen", 'f', "fopen", EACCES},   {"xdev", 'x', "rename", EXDEV},
    {"sig", 's', "open", EACCES},      {"sh", 'h', NULL, EACCES},
};

/* One process as the helper reports it, and what the ring holds of it. */
struct proc {
	long pid;
	char image[16], state[16];
	long mismatches, writes;
	long att[NCLS], done[NCLS];
	long recs[NCLS]; /* denial records of this pid, per kind */
	long proc_recs;  /* process records of this pid */
};

struct srun {
	int status;    /* denytrace run's (the helper's) exit status */
	int timed_out; /* killed at RUN_DEADLINE */
	char ring[PATH_MAX];
	char out[1 << 18];
	struct proc procs[1024];
	size_t nprocs;
	long sig_sent, sig_handled;
	/* the ring */
	struct dtt_run rr; /* records and read stats (dtt_load) */
	uint64_t nslots, head, lost, dropped;
	uint64_t busy_slots; /* slots a writer claimed and never published */
	size_t launch_recs, other_recs;
	int show_status; /* denytrace show --jsonl */
	size_t show_lines;
	char bad[4096]; /* records that match no refusal the program made */
};

/* Runs argv in its own process group with stdout and stderr into out;
 * kills the group at the deadline. Returns the exit status (128+N for a
 * signal), sets *timed_out. */
static int run_bounded(const char *const *argv, char *out, size_t cap, size_t *lines,
                       int *timed_out)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setpgid(0, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	setpgid(pid, pid);
	close(p[1]);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	size_t len = 0;
	*timed_out = 0;
	if (lines)
		*lines = 0;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left_ms = RUN_DEADLINE * 1000L - ((now.tv_sec - start.tv_sec) * 1000L +
		                                       (now.tv_nsec - start.tv_nsec) / 1000000L);
		if (left_ms <= 0) {
			*timed_out = 1;
			kill(-pid, SIGKILL);
			break;
		}
		struct pollfd pfd = {p[0], POLLIN, 0};
		int r = poll(&pfd, 1, (int)left_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		char sink[8192];
		int keep = out && len + 1 < cap;
		ssize_t n =
		    read(p[0], keep ? out + len : sink, keep ? cap - 1 - len : sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		const char *b = keep ? out + len : sink;
		for (ssize_t i = 0; lines && i < n; i++)
			*lines += b[i] == '\n';
		if (keep)
			len += (size_t)n;
	}
	if (out && cap)
		out[len] = 0;
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static struct proc *proc_of(struct srun *s, long pid)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

/* "proc PID IMAGE STATE MISMATCHES writes=N open=A/D ..." lines */
static void parse_output(struct srun *s)
{
	for (char *line = s->out; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		struct proc pr;
		memset(&pr, 0, sizeof(pr));
		int used = 0;
		if (sscanf(line, "proc %ld %15s %15s %ld writes=%ld %n", &pr.pid, pr.image,
		           pr.state, &pr.mismatches, &pr.writes, &used) == 5 &&
		    s->nprocs < sizeof(s->procs) / sizeof(s->procs[0])) {
			char *tok = line + used;
			for (int c = 0; c < NCLS; c++) {
				char key[24];
				int n = 0;
				cr_assert_eq(sscanf(tok, "%23[a-z]=%ld/%ld %n", key, &pr.att[c],
				                    &pr.done[c], &n),
				             3, "bad helper line: %s", line);
				cr_assert_str_eq(key, cls_info[c].name);
				tok += n;
			}
			s->procs[s->nprocs++] = pr;
		}
		sscanf(line, "signals sent=%ld handled=%ld", &s->sig_sent, &s->sig_handled);
		if (nl)
			*nl = '\n';
		line = nl ? nl + 1 : NULL;
	}
}

static const char *base_name(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p ? p : "";
}

static void note_bad(struct srun *s, const char *fmt, const struct dt_record *r)
{
	size_t n = strlen(s->bad);
	if (n + 200 < sizeof(s->bad))
		snprintf(s->bad + n, sizeof(s->bad) - n, fmt, (long long)r->pid,
		         r->op ? r->op : "?", r->err, r->p[0].path ? r->p[0].path : "(none)");
}

/* Files every record under the process and kind of call it belongs to;
 * anything else goes into s->bad. */
static void match_records(struct srun *s)
{
	for (size_t i = 0; i < s->rr.n; i++) {
		const struct dt_record *r = &s->rr.recs[i];
		if (r->type == DT_REC_LAUNCH) {
			s->launch_recs++;
			continue;
		}
		if (r->type == DT_REC_PROCESS) {
			struct proc *pr = proc_of(s, (long)r->pid);
			if (pr)
				pr->proc_recs++;
			else
				note_bad(s, "process record of unknown pid %lld (%s %d %s)\n", r);
			continue;
		}
		if (r->type != DT_REC_DENIAL) {
			s->other_recs++;
			note_bad(s, "unexpected record type: pid %lld op %s errno %d path %s\n", r);
			continue;
		}
		struct proc *pr = proc_of(s, (long)r->pid);
		const char *b = base_name(r->p[0].path);
		int c = NCLS;
		for (int k = 0; k < NCLS && b[0] && b[1] == '-'; k++)
			if (cls_info[k].letter == b[0])
				c = k;
		const char *dir = c == C_XDEV ? ok : deny;
		int op_ok =
		    c < NCLS && r->op &&
		    (cls_info[c].op ? !strcmp(r->op, cls_info[c].op)
		                    : !strncmp(r->op, "open", 4) || !strncmp(r->op, "__open", 6));
		int path_ok = r->p[0].abspath && !strncmp(r->p[0].abspath, dir, strlen(dir)) &&
		              r->p[0].abspath[strlen(dir)] == '/';
		if (!pr || c == NCLS || !op_ok || r->err != cls_info[c].err || !path_ok ||
		    r->tid <= 0 || !r->time_real || !r->comm || !r->comm[0]) {
			note_bad(
			    s,
			    "denial matching no call the program made: pid %lld op %s errno %d "
			    "path %s\n",
			    r);
			continue;
		}
		pr->recs[c]++;
	}
}

static void read_header(struct srun *s)
{
	struct dt_ringfile rf;
	char err[512];
	cr_assert_eq(dt_ringfile_open(s->ring, &rf, err, sizeof(err)), 0, "%s", err);
	const struct dt_ring_header *h = rf.ring.hdr;
	s->nslots = h->nslots;
	s->head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
	s->lost = __atomic_load_n(&h->lost, __ATOMIC_RELAXED);
	s->dropped = __atomic_load_n(&h->dropped, __ATOMIC_RELAXED);
	for (uint64_t i = 0; i < s->nslots; i++)
		s->busy_slots += (__atomic_load_n(dt_slot_seq(&rf.ring, i), __ATOMIC_RELAXED) &
		                  DT_SEQ_BUSY) != 0;
	dt_ringfile_close(&rf);
}

/* denytrace run --refusals-only [--size SIZE] -- landlock-run ... --
 * stress ARGS..., then everything the tests compare: the helper's counts,
 * the ring's records filed by process and kind, the header, and `denytrace
 * show --jsonl`. The accounting is of refusals: the successful writes a
 * run records by default would be records the counts do not know. */
static struct srun *stress_run(const char *size, const char *mode, const char *workers,
                               const char *iters, const char *children, const char *flags)
{
	struct srun *s = calloc(1, sizeof(*s));
	cr_assert_not_null(s);
	static int seq;
	snprintf(s->ring, sizeof(s->ring), "%s/stress-%d.ring", tmp, seq++);
	char cli[PATH_MAX], helper[PATH_MAX], ll[PATH_MAX];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	snprintf(helper, sizeof(helper), "%s", dtt_helper("stress"));
	snprintf(ll, sizeof(ll), "%s", dtt_helper("landlock-run"));
	const char *argv[] = {cli,    "run",   "-q",         "--refusals-only",
	                      "-o",   s->ring, "--size",     size,
	                      "--",   ll,      "--no-refer", "--rw",
	                      ok,     "--rw",  ok2,          "--",
	                      helper, mode,    deny,         ok,
	                      ok2,    workers, iters,        children,
	                      flags,  NULL};
	s->status = run_bounded(argv, s->out, sizeof(s->out), NULL, &s->timed_out);
	cr_assert(!s->timed_out,
	          "deadlock: `denytrace run -- stress %s` still running after %d s; killed. "
	          "Output so far:\n%.4000s",
	          mode, RUN_DEADLINE, s->out);
	cr_assert_eq(s->status, 0,
	             "stress %s exited %d (the traced program's own checks "
	             "failed, or it crashed):\n%.4000s",
	             mode, s->status, s->out);
	parse_output(s);
	cr_assert_gt(s->nprocs, 0, "no counts from the helper:\n%.2000s", s->out);

	cr_assert_eq(dtt_load(&s->rr, s->ring), 0, "ring unreadable");
	read_header(s);
	match_records(s);

	char show_out[4096];
	const char *show[] = {cli, "show", "--jsonl", "--no-symbols", s->ring, NULL};
	int to = 0;
	s->show_status = run_bounded(show, show_out, sizeof(show_out), &s->show_lines, &to);
	cr_assert(!to, "deadlock: denytrace show still running after %d s", RUN_DEADLINE);

	long refusals = 0;
	for (size_t i = 0; i < s->nprocs; i++)
		for (int c = 0; c < NCLS; c++)
			refusals += s->procs[i].done[c];
	cr_log_info("stress %s --size %s: %zu processes, %ld refusals, %ld signals handled "
	            "(%ld sent by tgkill); ring %llu slots, head %llu (%.1f laps), %zu records "
	            "read, lost %llu, dropped %llu, torn %llu, busy slots %llu",
	            mode, size, s->nprocs, refusals, s->sig_handled, s->sig_sent,
	            (unsigned long long)s->nslots, (unsigned long long)s->head,
	            (double)s->head / (double)s->nslots, s->rr.n, (unsigned long long)s->lost,
	            (unsigned long long)s->dropped, (unsigned long long)s->rr.stats.torn,
	            (unsigned long long)s->busy_slots);
	return s;
}

static void srun_free(struct srun *s)
{
	dtt_free(&s->rr);
	free(s);
}

/* Every (pid, kind) whose record count differs from what cmp() expects. */
static int exact_or_report(const struct srun *s, int only, char *why, size_t cap)
{
	int bad = 0;
	size_t n = 0;
	why[0] = 0;
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct proc *pr = &s->procs[i];
		for (int c = 0; c < NCLS; c++) {
			if ((only >= 0 && c != only) || pr->recs[c] == pr->done[c])
				continue;
			bad++;
			if (n + 160 < cap)
				n += (size_t)snprintf(
				    why + n, cap - n,
				    "  pid %ld (%s) %s: %ld refused, %ld recorded\n", pr->pid,
				    pr->image, cls_info[c].name, pr->done[c], pr->recs[c]);
		}
	}
	return bad;
}

static long sum_done(const struct srun *s, int c)
{
	long t = 0;
	for (size_t i = 0; i < s->nprocs; i++)
		t += s->procs[i].done[c];
	return t;
}

/* Records every writer attempted: the launch record, one process record per
 * process that refused, one denial per refused call (as the program counted
 * them: an upper bound if the probe skipped some). */
static uint64_t records_made(const struct srun *s)
{
	uint64_t n = 1;
	for (size_t i = 0; i < s->nprocs; i++) {
		long any = 0;
		for (int c = 0; c < NCLS; c++) {
			n += (uint64_t)s->procs[i].att[c];
			any += s->procs[i].att[c];
		}
		n += any > 0;
	}
	return n;
}

/* ---- the tests ------------------------------------------------------------ */

Test(stress, tree_under_the_probe_finishes_in_bounded_time_with_its_own_results_unchanged)
{
	/* the same program without the probe: the reference */
	char helper[PATH_MAX], ll[PATH_MAX];
	snprintf(helper, sizeof(helper), "%s", dtt_helper("stress"));
	snprintf(ll, sizeof(ll), "%s", dtt_helper("landlock-run"));
	const char *bare[] = {ll,   "--no-refer", "--rw", ok,  "--rw", ok2, "--", helper, "mix",
	                      deny, ok,           ok2,    "3", "100",  "8", "s",  NULL};
	static char ref[1 << 16];
	int to = 0;
	int st = run_bounded(bare, ref, sizeof(ref), NULL, &to);
	cr_assert(!to, "deadlock without the probe?");
	cr_assert_eq(st, 0, "the helper fails even without the probe:\n%s", ref);

	struct srun *s = stress_run(BIG_RING, "mix", "3", "100", "8", "s");
	cr_expect(strstr(s->out, "\"mismatches\":0,"), "%s", s->out);
	static const char *const images[] = {"main", "fork", "fork-exec", "vfork-exec", "sh"};
	for (size_t k = 0; k < sizeof(images) / sizeof(images[0]); k++) {
		size_t n = 0;
		for (size_t i = 0; i < s->nprocs; i++)
			n += !strcmp(s->procs[i].image, images[k]);
		cr_expect_eq(n, strcmp(images[k], "main") ? 8 : 1, "%zu %s processes", n,
		             images[k]);
	}
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct proc *pr = &s->procs[i];
		cr_expect_str_eq(pr->state, "exited", "pid %ld (%s)", pr->pid, pr->image);
		cr_expect_eq(pr->mismatches, 0, "pid %ld (%s)", pr->pid, pr->image);
		for (int c = 0; c < NCLS; c++)
			cr_expect_eq(pr->att[c], pr->done[c],
			             "pid %ld (%s) %s: %ld of %ld calls "
			             "gave the expected error",
			             pr->pid, pr->image, cls_info[c].name, pr->done[c], pr->att[c]);
	}
	/* 3 workers x 100 rounds, 2 per fork child, 3 threads x 2 per exec'd one */
	cr_expect_eq(s->procs[0].writes, 300);
	cr_expect_gt(s->sig_handled, 0, "no signal was handled");
	cr_expect_gt(sum_done(s, C_SIG), 0);
	srun_free(s);
}

Test(stress, every_published_record_decodes_and_is_a_refusal_the_program_made)
{
	struct srun *s = stress_run(BIG_RING, "mix", "3", "100", "8", "s");
	cr_expect_eq(s->show_status, 0, "denytrace show --jsonl exited %d", s->show_status);
	cr_expect_eq(s->show_lines, s->rr.n, "show printed %zu lines for %zu records",
	             s->show_lines, s->rr.n);
	cr_expect_eq(s->rr.stats.corrupt, 0);
	cr_expect_eq(s->rr.stats.torn, 0);
	cr_expect_eq(s->rr.stats.records, s->rr.n, "a record read from the ring did not decode");
	cr_expect_eq(s->bad[0], 0, "records that match nothing the program did:\n%s", s->bad);
	cr_expect_eq(s->launch_recs, 1);
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct proc *pr = &s->procs[i];
		long any = 0;
		for (int c = 0; c < NCLS; c++) {
			cr_expect_leq(pr->recs[c], pr->att[c],
			              "pid %ld (%s) %s: %ld records for %ld calls", pr->pid,
			              pr->image, cls_info[c].name, pr->recs[c], pr->att[c]);
			any += pr->recs[c];
		}
		cr_expect_eq(pr->proc_recs, any > 0, "pid %ld (%s): %ld process records", pr->pid,
		             pr->image, pr->proc_recs);
	}
	srun_free(s);
}

Test(stress, large_ring_holds_one_denial_per_refused_call_per_pid_and_op)
{
	struct srun *s = stress_run(BIG_RING, "mix", "3", "100", "8", "s");
	cr_assert_lt(s->head, s->nslots, "the big ring wrapped");
	cr_expect_eq(s->lost, 0);
	cr_expect_eq(s->dropped, 0);
	char why[8192];
	int bad = exact_or_report(s, -1, why, sizeof(why));
	cr_expect_eq(bad, 0,
	             "%d (pid, call) pairs whose refusals are not all in the ring, although "
	             "nothing was lost or dropped (lost %llu, dropped %llu):\n%s",
	             bad, (unsigned long long)s->lost, (unsigned long long)s->dropped, why);
	srun_free(s);
}

/*
 * A fresh image attaches to the ring on its first record. Here three
 * threads of each exec'd image refuse at the same moment, before any record
 * was written: each of their refusals must be recorded (or at least
 * counted as lost or dropped), not silently skipped while one of them
 * attaches.
 */
Test(stress, threads_refusing_at_once_in_a_new_image_are_all_recorded)
{
	struct srun *s = stress_run(BIG_RING, "execs", "0", "0", "20", "");
	cr_expect_eq(s->lost, 0);
	cr_expect_eq(s->dropped, 0);
	char why[8192];
	int bad = exact_or_report(s, -1, why, sizeof(why));
	cr_expect_eq(bad, 0,
	             "%d (pid, call) pairs short of records with lost %llu and dropped %llu: "
	             "refusals made while another thread attached the ring vanished:\n%s",
	             bad, (unsigned long long)s->lost, (unsigned long long)s->dropped, why);
	srun_free(s);
}

/*
 * One thread refuses in a loop while a timer and another thread's tgkill
 * interrupt it; the handler opens a refused path. Half the time the signal
 * lands while the thread is inside the probe recording its own refusal.
 * The handler's refusal is a refusal like any other: recorded, or at least
 * counted.
 */
Test(stress, refusal_in_a_signal_handler_that_interrupts_the_probe_is_recorded)
{
	struct srun *s = stress_run(BIG_RING, "mix", "1", "300", "0", "sw");
	cr_assert_gt(s->sig_handled, 0, "no signal was handled");
	cr_expect_eq(s->lost, 0);
	cr_expect_eq(s->dropped, 0);
	char why[8192];
	cr_expect_eq(exact_or_report(s, -1, why, sizeof(why)), 0,
	             "refusals missing from the ring with lost %llu and dropped %llu:\n%s",
	             (unsigned long long)s->lost, (unsigned long long)s->dropped, why);
	srun_free(s);
}

/*
 * The minimum ring (DT_RING_MIN_SIZE: 128 slots) under the whole tree, with
 * each image's first refusal made before its threads start (the two tests
 * above cover what happens otherwise). ring_format.h: every published
 * record is readable until a claim overwrites its first slot, which counts
 * it lost once; a writer that gives up counts dropped once. So once every
 * writer has finished, read + lost + dropped never exceeds the records the
 * program caused, and equals it when no writer gave up (an abandoned record
 * can take an older one's continuation slots with it, uncounted).
 */
Test(stress, minimum_ring_wrapping_many_times_accounts_for_every_record)
{
	struct srun *s = stress_run(min_ring, "mix", "3", "100", "8", "w");
	cr_assert_eq(s->nslots, DT_RING_MIN_SIZE / DT_SLOT_SIZE);
	cr_expect_geq(s->head, 20 * s->nslots, "only %.1f laps", (double)s->head / s->nslots);
	cr_expect_gt(s->lost, 0);
	cr_expect_eq(s->show_status, 0, "denytrace show --jsonl exited %d", s->show_status);
	cr_expect_eq(s->rr.stats.corrupt, 0);
	cr_expect_eq(s->bad[0], 0, "records that match nothing the program did:\n%s", s->bad);
	for (size_t i = 0; i < s->nprocs; i++)
		for (int c = 0; c < NCLS; c++)
			cr_expect_leq(s->procs[i].recs[c], s->procs[i].done[c],
			              "pid %ld %s: %ld records for %ld calls", s->procs[i].pid,
			              cls_info[c].name, s->procs[i].recs[c], s->procs[i].done[c]);
	uint64_t made = records_made(s);
	uint64_t seen = s->rr.n + s->lost + s->dropped;
	cr_expect_leq(seen, made,
	              "read %zu + lost %llu + dropped %llu = %llu, more than the %llu records made",
	              s->rr.n, (unsigned long long)s->lost, (unsigned long long)s->dropped,
	              (unsigned long long)seen, (unsigned long long)made);
	if (s->dropped == 0) {
		cr_expect_eq(seen, made,
		             "no writer gave up, yet read %zu + lost %llu = %llu of %llu records "
		             "made",
		             s->rr.n, (unsigned long long)s->lost, (unsigned long long)seen,
		             (unsigned long long)made);
		cr_expect_eq(s->rr.stats.torn, 0);
	}
	srun_free(s);
}

/* The same on the minimum ring with signals and racing first refusals: what
 * is read is never more than what was made, and every record is valid. */
Test(stress, minimum_ring_under_signals_never_returns_an_invalid_or_extra_record)
{
	struct srun *s = stress_run(min_ring, "mix", "3", "100", "8", "s");
	cr_expect_geq(s->head, 20 * s->nslots, "only %.1f laps", (double)s->head / s->nslots);
	cr_expect_eq(s->show_status, 0, "denytrace show --jsonl exited %d", s->show_status);
	cr_expect_eq(s->show_lines, s->rr.n);
	cr_expect_eq(s->rr.stats.corrupt, 0);
	cr_expect_eq(s->bad[0], 0, "records that match nothing the program did:\n%s", s->bad);
	for (size_t i = 0; i < s->nprocs; i++)
		for (int c = 0; c < NCLS; c++)
			cr_expect_leq(s->procs[i].recs[c], s->procs[i].done[c],
			              "pid %ld %s: %ld records for %ld calls", s->procs[i].pid,
			              cls_info[c].name, s->procs[i].recs[c], s->procs[i].done[c]);
	uint64_t made = records_made(s);
	cr_expect_leq(s->rr.n + s->lost + s->dropped, made);
	srun_free(s);
}

/*
 * The parent SIGKILLs children at random moments while two threads of each
 * refuse; a child killed inside the probe leaves its slots claimed and never
 * published. The ring still reads cleanly, a killed child has a record for
 * every call that returned and none beyond the one in flight, and every
 * process that was not killed has exactly its own count.
 */
Test(stress, writers_sigkilled_mid_record_leave_a_readable_ring_and_exact_survivors)
{
	struct srun *s = stress_run(BIG_RING, "kill", "2", "150", "40", "w");
	cr_expect_eq(s->show_status, 0, "denytrace show --jsonl exited %d", s->show_status);
	cr_expect_eq(s->show_lines, s->rr.n);
	cr_expect_eq(s->rr.stats.corrupt, 0);
	cr_expect_eq(s->rr.stats.torn, 0);
	cr_expect_eq(s->bad[0], 0, "records that match nothing the program did:\n%s", s->bad);
	cr_expect_eq(s->lost, 0);
	cr_expect_eq(s->dropped, 0);
	size_t killed = 0, survived = 0;
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct proc *pr = &s->procs[i];
		if (!strcmp(pr->state, "killed")) {
			killed++;
			for (int c = 0; c < NCLS; c++) {
				cr_expect_geq(pr->recs[c], pr->done[c],
				              "killed pid %ld %s: %ld calls returned, %ld recorded",
				              pr->pid, cls_info[c].name, pr->done[c], pr->recs[c]);
				cr_expect_leq(pr->recs[c], pr->att[c],
				              "killed pid %ld %s: %ld calls made, %ld recorded",
				              pr->pid, cls_info[c].name, pr->att[c], pr->recs[c]);
			}
			continue;
		}
		cr_expect_str_eq(pr->state, "exited", "pid %ld (%s)", pr->pid, pr->image);
		survived++;
		for (int c = 0; c < NCLS; c++)
			cr_expect_eq(pr->recs[c], pr->done[c],
			             "pid %ld (%s) %s: %ld refused, %ld "
			             "recorded",
			             pr->pid, pr->image, cls_info[c].name, pr->done[c],
			             pr->recs[c]);
	}
	cr_expect_gt(killed, 0, "no child was killed");
	cr_log_info("kill: %zu children killed, %zu processes survived, %llu slots left busy",
	            killed, survived, (unsigned long long)s->busy_slots);
	srun_free(s);
}

/*
 * tests/helpers/sigstep: a traced child refuses mkdir again and again; its
 * parent delivers a signal whose handler refuses an open, steps the child
 * one instruction once the handler returned, and delivers the next: a
 * signal on each instruction from the first refusal's return on. Under
 * load a signal lands on one exact instruction now and then (test_stress
 * saw it once in three runs); here it lands on each. Every record keeps
 * the pid and thread id of the thread that made the call.
 */
/* A refusal and what follows it to the next take ~400 steps (gcc 12 -O2,
 * x86-64; where the probe holds signals back, the rest of the record is
 * one step): three refusals and more, each covered whole. */
#define SIGSTEP_STEPS "1200"

Test(stress, a_signal_on_any_instruction_after_a_refusal_leaves_both_records_whole_and_their_own)
{
	char ring[PATH_MAX + 32], cli[PATH_MAX], ll[PATH_MAX], helper[PATH_MAX];
	snprintf(ring, sizeof(ring), "%s/sigstep.ring", tmp);
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	snprintf(ll, sizeof(ll), "%s", dtt_helper("landlock-run"));
	snprintf(helper, sizeof(helper), "%s", dtt_helper("sigstep"));
	const char *argv[] = {cli,  "run",  "-q",     "--refusals-only",
	                      "-o", ring,   "--size", BIG_RING,
	                      "--", ll,     "--rw",   ok,
	                      "--", helper, deny,     SIGSTEP_STEPS,
	                      NULL};
	static char out[1 << 14];
	int to = 0;
	int st = run_bounded(argv, out, sizeof(out), NULL, &to);
	cr_assert(!to, "deadlock: sigstep still running after %d s:\n%s", RUN_DEADLINE, out);
	if (st == 77)
		cr_skip_test("the helper cannot trace its child here (ptrace refused)");
	cr_assert_eq(st, 0, "sigstep exited %d:\n%s", st, out);
	long child = 0, mkdirs = 0, handled = 0, signals = 0, steps = 0;
	const char *line = strstr(out, "child ");
	cr_assert(
	    line && sscanf(line, "child %ld mkdir %ld signals %ld", &child, &mkdirs, &handled) == 3,
	    "%s", out);
	line = strstr(out, "traced ");
	cr_assert(line && sscanf(line, "traced %ld signals %ld", &steps, &signals) == 2, "%s", out);
	cr_assert_eq(signals, steps, "%s", out);
	cr_assert_eq(handled, signals, "%s", out);

	struct dtt_run r;
	cr_assert_eq(dtt_load(&r, ring), 0, "ring unreadable");
	size_t n_mkdir = 0, n_open = 0, not_theirs = 0;
	for (size_t i = 0; i < r.n; i++) {
		const struct dt_record *d = &r.recs[i];
		if (d->type != DT_REC_DENIAL)
			continue;
		if (!strcmp(base_name(d->p[0].path), "m-x"))
			n_mkdir++;
		else if (!strcmp(base_name(d->p[0].path), "s-x"))
			n_open++;
		if (d->pid != child || d->tid != child) {
			if (!not_theirs)
				cr_log_error("%s of %s recorded as pid %lld tid %lld, made by %ld",
				             d->op, d->p[0].path, (long long)d->pid,
				             (long long)d->tid, child);
			not_theirs++;
		}
	}
	cr_expect_eq(not_theirs, 0, "%zu records name a thread that did not make the call",
	             not_theirs);
	cr_expect_eq(n_mkdir, (size_t)mkdirs, "%zu mkdir records for %ld refusals", n_mkdir,
	             mkdirs);
	cr_expect_eq(n_open, (size_t)handled, "%zu records of the handler's open for %ld", n_open,
	             handled);
	dtt_free(&r);
}
