/* SPDX-License-Identifier: MIT */
/*
 * The CLI on bad input: what `denytrace show` says and exits with for files
 * that are not (whole, current, intact, own) rings, and the exit statuses of
 * usage errors and of `denytrace run` for commands that cannot run or fail.
 *
 * Exit statuses (tracer/util/exitcodes.h): 2 usage, 3 input unreadable, 4 input
 * not a valid ring; run: the command's status, 126 not executable, 127 not
 * found, 128+N killed by signal N. Errors are one line, "denytrace: ...".
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ring.h"
#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(badinput, .fini = teardown, .timeout = 120);

/* stderr is exactly one line, "denytrace: ...", containing needle. */
static void expect_one_error_line(const struct dtt_cli *c, const char *needle)
{
	size_t len = strlen(c->err), lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += c->err[i] == '\n';
	cr_expect_eq(lines, 1, "stderr should be one line, got %zu:\n%s", lines, c->err);
	cr_expect(len > 0 && c->err[len - 1] == '\n', "stderr not newline-terminated: '%s'",
	          c->err);
	cr_expect_eq(strncmp(c->err, "denytrace: ", 11), 0, "stderr: '%s'", c->err);
	if (needle)
		cr_expect_not_null(strstr(c->err, needle), "stderr lacks '%s': %s", needle, c->err);
}

static void show(struct dtt_cli *c, const char *path)
{
	const char *args[] = {"show", path, NULL};
	dtt_cli(c, args);
}

/* ---- rings ------------------------------------------------------------- */

static const char *tmp_path(const char *name)
{
	static char path[8][600];
	static int k;
	k = (k + 1) % 8;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dtt_tmpdir(), name);
	return path[k];
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* A minimum-size ring holding one denial per path (NULL-terminated). */
static void make_ring(const char *path, const char *const *paths, size_t *file_len)
{
	char err[512];
	int fd = dt_ringfile_create(path, DT_RING_MIN_SIZE, 0, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	struct stat st;
	cr_assert_eq(fstat(fd, &st), 0);
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq(map, MAP_FAILED);
	struct dt_ring r;
	cr_assert_eq(dt_ring_attach(&r, map, (size_t)st.st_size), 0);
	for (const char *const *p = paths; p && *p; p++) {
		unsigned char rec[1024];
		struct dt_rec_header *rh = (struct dt_rec_header *)rec;
		memset(rh, 0, sizeof(*rh));
		struct dt_buf b = {rec, sizeof(*rh), sizeof(rec), 0};
		rh->type = DT_REC_DENIAL;
		dt_put_u64(&b, DT_T_TIME_REAL, 1700000000000000000ULL);
		dt_put_u64(&b, DT_T_PID, 4242);
		dt_put_str(&b, DT_T_COMM, "worker");
		dt_put_str(&b, DT_T_OP, "openat");
		dt_put_u64(&b, DT_T_ERRNO, EACCES);
		dt_put_u64(&b, DT_T_FLAGS, O_WRONLY | O_CREAT);
		dt_put_u64(&b, DT_T_ACCESS, 1);
		dt_put_str(&b, DT_T_PATH, *p);
		dt_put_str(&b, DT_T_ABSPATH, *p);
		rh->len = b.len;
		cr_assert_eq(dt_ring_write(&r, rec), 0);
	}
	munmap(map, (size_t)st.st_size);
	close(fd);
	if (file_len)
		*file_len = (size_t)st.st_size;
}

/* ==== show ============================================================== */

Test(badinput, show_of_a_missing_file_exits_3)
{
	struct dtt_cli c;
	show(&c, tmp_path("no-such.ring"));
	cr_expect_eq(c.status, 3, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "cannot open");
	cr_expect_str_empty(c.out);
}

Test(badinput, show_of_a_text_file_exits_4_not_a_ring)
{
	char text[1024];
	size_t n = 0;
	while (n + 40 < sizeof(text))
		n += (size_t)snprintf(text + n, sizeof(text) - n,
		                      "this is a plain text file, line\n");
	const char *path = tmp_path("notes.txt");
	write_file(path, text, n);
	struct dtt_cli c;
	show(&c, path);
	cr_expect_eq(c.status, 4, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "not a denytrace ring");
	cr_expect_str_empty(c.out);
}

Test(badinput, show_of_a_text_file_shorter_than_a_header_exits_4)
{
	const char *path = tmp_path("short.txt");
	write_file(path, "hello\n", 6);
	struct dtt_cli c;
	show(&c, path);
	cr_expect_eq(c.status, 4, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "denytrace ring");
}

Test(badinput, show_of_an_empty_file_exits_4)
{
	const char *path = tmp_path("empty.ring");
	write_file(path, "", 0);
	struct dtt_cli c;
	show(&c, path);
	cr_expect_eq(c.status, 4, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, NULL);
	cr_expect_str_empty(c.out);
}

Test(badinput, show_of_a_ring_truncated_to_half_exits_4_truncated)
{
	const char *path = tmp_path("half.ring");
	const char *paths[] = {"/data/a.db", NULL};
	size_t len;
	make_ring(path, paths, &len);
	cr_assert_eq(truncate(path, (off_t)(len / 2)), 0);
	struct dtt_cli c;
	show(&c, path);
	cr_expect_eq(c.status, 4, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "truncated");
	cr_expect_str_empty(c.out);
}

Test(badinput, show_of_a_newer_format_version_exits_4_naming_the_version)
{
	const char *path = tmp_path("v99.ring");
	const char *paths[] = {"/data/a.db", NULL};
	make_ring(path, paths, NULL);
	int fd = open(path, O_RDWR);
	cr_assert_geq(fd, 0);
	uint32_t v = 99;
	cr_assert_eq(pwrite(fd, &v, sizeof(v), offsetof(struct dt_ring_header, version)), 4);
	close(fd);
	struct dtt_cli c;
	show(&c, path);
	cr_expect_eq(c.status, 4, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "version 99");
	cr_expect_str_empty(c.out);
}

/* Three denials, the second with a payload byte flipped after publishing:
 * its checksum no longer matches. */
static void make_corrupt_ring(const char *path)
{
	const char *paths[] = {"/data/first.db", "/data/second.db", "/data/third.db", NULL};
	make_ring(path, paths, NULL);
	int fd = open(path, O_RDWR);
	cr_assert_geq(fd, 0);
	struct stat st;
	cr_assert_eq(fstat(fd, &st), 0);
	unsigned char *map =
	    mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq(map, MAP_FAILED);
	struct dt_ring r;
	cr_assert_eq(dt_ring_attach(&r, map, (size_t)st.st_size), 0);
	cr_assert_eq(r.hdr->head, 3, "each record should take one slot");
	unsigned char *second = dt_slot_data(&r, 1);
	unsigned char *hit = memmem(second, DT_SLOT_DATA, "second", 6);
	cr_assert_not_null(hit);
	*hit ^= 0x01; /* "second" -> "recond": the checksum no longer matches */
	munmap(map, (size_t)st.st_size);
	close(fd);
}

Test(badinput, show_of_a_ring_with_a_corrupt_record_prints_the_valid_ones_and_exits_4)
{
	const char *path = tmp_path("corrupt.ring");
	make_corrupt_ring(path);

	struct dtt_cli c;
	show(&c, path);
	cr_expect_eq(c.status, 4, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "corrupt");
	cr_expect_not_null(strstr(c.out, "/data/first.db"), "stdout: %s", c.out);
	cr_expect_not_null(strstr(c.out, "/data/third.db"), "stdout: %s", c.out);
	cr_expect_null(strstr(c.out, "second.db"), "the corrupt record was printed: %s", c.out);
	cr_expect_null(strstr(c.out, "recond.db"), "the corrupt record was printed: %s", c.out);
}

Test(badinput, report_of_a_ring_with_a_corrupt_record_reports_the_valid_ones_and_exits_4_like_show)
{
	const char *path = tmp_path("corrupt.ring");
	make_corrupt_ring(path);
	const char *args[] = {"report", "--format", "json", path, NULL};
	struct dtt_cli c;
	dtt_cli(&c, args);
	cr_expect_eq(c.status, 4, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "1 corrupt record skipped");
	cr_expect_not_null(strstr(c.out, "/data/first.db"), "stdout: %s", c.out);
	cr_expect_not_null(strstr(c.out, "/data/third.db"), "stdout: %s", c.out);
}

/* ==== files that are not regular files ================================ */

/* A FIFO nobody writes to: open(2) without O_NONBLOCK waits forever. */
static const char *make_fifo(const char *name)
{
	const char *path = tmp_path(name);
	cr_assert_eq(mkfifo(path, 0600), 0, "mkfifo %s: %s", path, strerror(errno));
	return path;
}

Test(badinput, show_report_roots_and_evidence_of_a_fifo_exit_4_at_once)
{
	const char *fifo = make_fifo("ring.fifo");
	const char *out = tmp_path("bundle");
	const char *cases[][6] = {
	    {"show", fifo, NULL},
	    {"report", fifo, NULL},
	    {"roots", fifo, NULL},
	    {"evidence", "--out", out, fifo, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtt_cli c;
		dtt_cli(&c, cases[i]);
		cr_expect_eq(c.status, 4, "%s of a FIFO: status %d (142: hung); stderr: %s",
		             cases[i][0], c.status, c.err);
		cr_expect_not_null(strstr(c.err, "not a regular file (a FIFO)"), "%s: stderr: %s",
		                   cases[i][0], c.err);
	}
}

Test(badinput, report_with_a_codex_config_that_is_a_fifo_exits_4_at_once)
{
	const char *ring = tmp_path("ok.ring");
	const char *paths[] = {"/data/a.db", NULL};
	make_ring(ring, paths, NULL);
	const char *fifo = make_fifo("config.fifo");
	const char *args[] = {"report", "--codex-config", fifo, ring, NULL};
	struct dtt_cli c;
	dtt_cli(&c, args);
	cr_expect_eq(c.status, 4, "status %d (142: hung); stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "not a regular file");
}

/* README, Exit statuses: 3 an input file is missing or unreadable. */
Test(badinput, report_with_a_missing_codex_config_exits_3_as_the_readme_says)
{
	const char *ring = tmp_path("ok.ring");
	const char *paths[] = {"/data/a.db", NULL};
	make_ring(ring, paths, NULL);
	const char *args[] = {"report", "--codex-config", tmp_path("no-such-config.toml"), ring,
	                      NULL};
	struct dtt_cli c;
	dtt_cli(&c, args);
	cr_expect_eq(c.status, 3, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "No such file");
}

/* The symbolizer opens the modules a ring's stack names: one that is a
 * FIFO must be skipped, not waited on. */
Test(badinput, show_verbose_with_a_stack_module_that_is_a_fifo_prints_the_frame_at_once)
{
	const char *fifo = make_fifo("module.fifo");
	const char *ring = tmp_path("stack.ring");
	struct dtt_ring w;
	cr_assert_eq(dtt_ring_create(&w, ring, 0), 0);
	dtt_ring_begin(&w, DT_REC_DENIAL, 4242, "worker");
	dt_put_str(&w.b, DT_T_OP, "openat");
	dt_put_u64(&w.b, DT_T_ERRNO, EACCES);
	dt_put_u64(&w.b, DT_T_ACCESS, 1);
	dt_put_str(&w.b, DT_T_PATH, "/data/a.db");
	struct dt_frame fr = {0x401000, 0x1000, 0, 0};
	dt_put(&w.b, DT_T_FRAME, &fr, sizeof(fr));
	dt_put_str(&w.b, DT_T_MODULE, fifo);
	cr_assert_eq(dtt_ring_commit(&w), 0);
	dtt_ring_close(&w);
	const char *args[] = {"show", "-v", ring, NULL};
	struct dtt_cli c;
	dtt_cli(&c, args);
	cr_expect_eq(c.status, 0, "status %d (142: hung); stderr: %s", c.status, c.err);
	cr_expect_not_null(strstr(c.out, "module.fifo+0x1000"), "stdout: %s", c.out);
}

/* open(2) of a directory with O_RDONLY succeeds; fstat then shows it is not
 * a regular file, which dt_ringfile_open reports as bad input (4), not as
 * unreadable input (3). */
Test(badinput, show_of_a_directory_exits_4_not_a_regular_file)
{
	const char *path = tmp_path("adir");
	cr_assert_eq(mkdir(path, 0700), 0);
	struct dtt_cli c;
	show(&c, path);
	cr_expect_eq(c.status, 4, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "not a regular file");
}

/*
 * A ring another user owns is refused to a non-root reader even when its
 * mode lets them read it. The ring is chowned to 65534 and made 0644; the
 * reader is uid 65533 (a different non-root user; reading it as 65534 would
 * be reading one's own ring, which the second half checks is allowed).
 */
Test(badinput, show_of_a_ring_owned_by_another_user_exits_4_for_non_root)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to drop to other uids");
	cr_assert_eq(chmod(dtt_tmpdir(), 0755), 0);
	const char *path = tmp_path("other.ring");
	const char *paths[] = {"/data/a.db", NULL};
	make_ring(path, paths, NULL);
	cr_assert_eq(chown(path, 65534, 65534), 0);
	cr_assert_eq(chmod(path, 0644), 0);
	const char *args[] = {"show", path, NULL};
	struct dtt_cli c;
	dtt_cli_as(&c, 65533, args);
	if (c.status == 200)
		cr_skip_test("cannot drop privileges here");
	cr_expect_eq(c.status, 4, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "belongs to uid 65534");
	cr_expect_str_empty(c.out);

	dtt_cli_as(&c, 65534, args);
	cr_expect_eq(c.status, 0, "its owner could not read it: %d, %s", c.status, c.err);
	cr_expect_not_null(strstr(c.out, "/data/a.db"), "stdout: %s", c.out);
}

/* ==== usage ============================================================= */

Test(badinput, show_with_an_unknown_option_exits_2)
{
	const char *args[] = {"show", "--bogus", NULL};
	struct dtt_cli c;
	dtt_cli(&c, args);
	cr_expect_eq(c.status, 2, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "--bogus");
	cr_expect_str_empty(c.out);
}

Test(badinput, unknown_command_exits_2)
{
	const char *args[] = {"frobnicate", NULL};
	struct dtt_cli c;
	dtt_cli(&c, args);
	cr_expect_eq(c.status, 2, "status %d; stderr: %s", c.status, c.err);
	expect_one_error_line(&c, "frobnicate");
	cr_expect_str_empty(c.out);
}

Test(badinput, no_command_at_all_exits_2_with_usage_on_stderr)
{
	const char *args[] = {NULL};
	struct dtt_cli c;
	dtt_cli(&c, args);
	cr_expect_eq(c.status, 2, "status %d", c.status);
	cr_expect_eq(strncmp(c.err, "usage:", 6), 0, "stderr: %s", c.err);
	cr_expect_str_empty(c.out);
}

Test(badinput, run_without_a_command_exits_125)
{
	const char *ring = tmp_path("nocmd.ring");
	const char *a1[] = {"run", NULL};
	const char *a2[] = {"run", "-o", ring, "--", NULL};
	const char *const *cases[] = {a1, a2};
	for (size_t i = 0; i < 2; i++) {
		struct dtt_cli c;
		dtt_cli(&c, cases[i]);
		cr_expect_eq(c.status, 125, "case %zu: status %d; stderr: %s", i, c.status, c.err);
		expect_one_error_line(&c, "no command");
	}
	cr_expect_neq(access(ring, F_OK), 0, "a ring was created for nothing to run");
}

Test(badinput, every_help_exits_0_and_prints_usage)
{
	const char *cases[][3] = {
	    {"--help", NULL}, {"-h", NULL},       {"help", NULL}, {"run", "--help"},
	    {"run", "-h"},    {"show", "--help"}, {"show", "-h"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtt_cli c;
		dtt_cli(&c, cases[i]);
		cr_expect_eq(c.status, 0, "denytrace %s %s: status %d", cases[i][0],
		             cases[i][1] ? cases[i][1] : "", c.status);
		cr_expect_eq(strncmp(c.out, "usage:", 6), 0, "denytrace %s %s: stdout '%.60s'",
		             cases[i][0], cases[i][1] ? cases[i][1] : "", c.out);
		cr_expect_str_empty(c.err, "denytrace %s %s: stderr '%s'", cases[i][0],
		                    cases[i][1] ? cases[i][1] : "", c.err);
	}
}

static size_t count_lines(const char *s);

/* A full standard output is a failed command, said once, never exit 0. */
Test(badinput, a_full_stdout_exits_5_with_one_message)
{
	char ring[1024], cmd[4096];
	snprintf(ring, sizeof(ring), "%s", tmp_path("full.ring"));
	const char *mk[] = {"sh", "-c", NULL, NULL};
	snprintf(cmd, sizeof(cmd), "'%s/denytrace' run -q -o '%s' -- true", dtt_build(), ring);
	mk[2] = cmd;
	char out[4096];
	cr_assert_eq(dtt_system(out, sizeof(out), mk, NULL), 0, "%s", out);
	const char *cases[] = {"roots", "--help", "--version", "roots --help", "fix", "report"};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int with_ring = !strcmp(cases[i], "fix") || !strcmp(cases[i], "report");
		snprintf(cmd, sizeof(cmd), "'%s/denytrace' %s %s >/dev/full", dtt_build(), cases[i],
		         with_ring ? ring : "");
		const char *sh[] = {"sh", "-c", cmd, NULL};
		int st = dtt_system(out, sizeof(out), sh, NULL);
		cr_expect_eq(st, 5, "denytrace %s >/dev/full: status %d: %s", cases[i], st, out);
		cr_expect(!strncmp(out, "denytrace: ", 11) && count_lines(out) == 1,
		          "denytrace %s >/dev/full: not one message: '%s'", cases[i], out);
	}
}

/* ==== run: the command's fate becomes denytrace's exit status =========== */

/* denytrace run -q -o RING -- argv..., through dtt_system (stdout and
 * stderr together in out). */
static int run_cmd(char *out, size_t cap, const char *const *argv)
{
	char exe[4096];
	snprintf(exe, sizeof(exe), "%s/denytrace", dtt_build());
	const char *args[32] = {exe, "run", "-q", "-o", tmp_path("run.ring"), "--"};
	size_t n = 6;
	for (const char *const *a = argv; *a && n < 31; a++)
		args[n++] = *a;
	args[n] = NULL;
	return dtt_system(out, cap, args, NULL);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

Test(badinput, run_of_a_missing_command_exits_127)
{
	char out[4096];
	const char *argv[] = {"/nonexistent/cmd", NULL};
	int st = run_cmd(out, sizeof(out), argv);
	cr_expect_eq(st, 127, "status %d: %s", st, out);
	cr_expect_eq(strncmp(out, "denytrace: ", 11), 0, "output: %s", out);
	cr_expect_not_null(strstr(out, "/nonexistent/cmd"), "output: %s", out);
	cr_expect_eq(count_lines(out), 1, "output: %s", out);
}

Test(badinput, run_of_a_command_not_in_path_exits_127)
{
	char out[4096];
	const char *argv[] = {"denytrace-no-such-command-xyz", NULL};
	int st = run_cmd(out, sizeof(out), argv);
	cr_expect_eq(st, 127, "status %d: %s", st, out);
}

Test(badinput, run_of_a_file_that_is_not_executable_exits_126)
{
	char out[4096];
	const char *argv[] = {"/etc/passwd", NULL};
	int st = run_cmd(out, sizeof(out), argv);
	cr_expect_eq(st, 126, "status %d: %s", st, out);
	cr_expect_eq(strncmp(out, "denytrace: ", 11), 0, "output: %s", out);
	cr_expect_eq(count_lines(out), 1, "output: %s", out);
}

Test(badinput, run_exits_with_the_commands_exit_status)
{
	char out[4096];
	const char *argv[] = {"sh", "-c", "exit 7", NULL};
	int st = run_cmd(out, sizeof(out), argv);
	cr_expect_eq(st, 7, "status %d: %s", st, out);
	const char *ok[] = {"true", NULL};
	st = run_cmd(out, sizeof(out), ok);
	cr_expect_eq(st, 0, "status %d: %s", st, out);
}

Test(badinput, run_of_a_command_killed_by_a_signal_exits_128_plus_the_signal)
{
	char out[4096];
	const char *argv[] = {"sh", "-c", "kill -TERM $$", NULL};
	int st = run_cmd(out, sizeof(out), argv);
	cr_expect_eq(st, 143, "status %d: %s", st, out);
	const char *kill9[] = {"sh", "-c", "kill -KILL $$", NULL};
	st = run_cmd(out, sizeof(out), kill9);
	cr_expect_eq(st, 137, "status %d: %s", st, out);
}

/* The command starts with the signal mask and the ignored signals it would
 * have without denytrace: run blocks signals while it starts the child, and
 * puts its own handlers aside in it (it shares run's memory until exec). */
Test(badinput, run_starts_the_command_with_the_signals_it_would_have_alone)
{
	signal(SIGHUP, SIG_IGN); /* as under nohup: the command must keep it */
	const char *argv[] = {"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL};
	char alone[4096], traced[4096];
	int st = dtt_system(alone, sizeof(alone), argv, NULL);
	cr_assert_eq(st, 0, "grep alone: %d: %s", st, alone);
	const char *ign = strstr(alone, "SigIgn:");
	cr_assert(ign && strtoull(ign + 7, NULL, 16) & 1, "SIGHUP not ignored: %s", alone);
	st = run_cmd(traced, sizeof(traced), argv);
	signal(SIGHUP, SIG_DFL);
	cr_assert_eq(st, 0, "status %d: %s", st, traced);
	cr_expect_str_eq(traced, alone);
}

/* ==== run: ring size ===================================================== */

static void expect_size_refused(const char *size)
{
	const char *ring = tmp_path("size.ring");
	const char *args[] = {"run", "-q", "-o", ring, "--size", size, "--", "true", NULL};
	struct dtt_cli c;
	dtt_cli(&c, args);
	cr_expect_eq(c.status, 125, "--size '%s': status %d; stderr: %s", size, c.status, c.err);
	expect_one_error_line(&c, NULL);
	cr_expect_neq(access(ring, F_OK), 0, "--size '%s': a ring was created", size);
}

/* strtoull reads "-1" as 2^64-1 and wraps past it: a seed that is not the
 * number given is refused, in run and in soak. */
Test(badinput, a_seed_with_a_sign_or_past_2_to_the_64_exits_125)
{
	static const char *const bad[] = {"-1", "18446744073709551616", "+5", " 5", "5x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *run[] = {"run", "-q",   "-o", tmp_path("seed.ring"), "--seed", bad[i],
		                     "--",  "true", NULL};
		const char *soak[] = {"soak", "--runs", "1",    "-q", "--seed",
		                      bad[i], "--",     "true", NULL};
		const char *const *cases[] = {run, soak};
		for (size_t k = 0; k < 2; k++) {
			struct dtt_cli c;
			dtt_cli(&c, cases[k]);
			cr_expect_eq(c.status, 125, "%s --seed '%s': status %d", cases[k][0],
			             bad[i], c.status);
			expect_one_error_line(&c, "--seed");
		}
	}
	const char *max[] = {
	    "run", "-q",   "-o", tmp_path("seed.ring"), "--seed", "18446744073709551615",
	    "--",  "true", NULL};
	struct dtt_cli c;
	dtt_cli(&c, max);
	cr_expect_eq(c.status, 0, "the largest seed was refused: %s", c.err);
}

Test(badinput, run_with_a_malformed_ring_size_exits_125)
{
	expect_size_refused("-1");
	expect_size_refused("8X");
	expect_size_refused("");
	expect_size_refused("8 M");
}

/* A size that parses but is outside 32 KiB .. 1 GiB is a bad command line
 * too: run's own failures, usage included, are 125, never the command's 2. */
Test(badinput, run_with_a_ring_size_out_of_range_exits_125)
{
	expect_size_refused("1K");
	expect_size_refused("32767");
	expect_size_refused("2G");
}
