/* SPDX-License-Identifier: MIT */
/* denytrace evidence: the bundle from a real bubblewrap refusal holds every
 * part, and --redact leaves no home directory, user name or secret in it. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

#define SECRET_KEY "sk-abc123def456ghi789jkl012mno345pqr"
#define SECRET_GH "ghp_Zy9xW8vU7tS6rQ5pO4nM3lK2jI1hG0fEdCbA"

static char home[512], rw[512], board[512];
static struct dtt_run worker;

static const char *cli(void)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/denytrace", dtt_build());
	return path;
}

/* A worker in bwrap with only rw/ writable, run as "alice" with a
 * distinctive HOME, refused twice: in its home and in a board directory
 * named after the user. */
static void setup(void)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *t = dtt_tmpdir();
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/home", t);
	mkdir(dir, 0755);
	snprintf(home, sizeof(home), "%s/home/alice-secret-home", t);
	mkdir(home, 0755);
	snprintf(rw, sizeof(rw), "%s/rw", t);
	mkdir(rw, 0755);
	snprintf(dir, sizeof(dir), "%s/srv", t);
	mkdir(dir, 0755);
	snprintf(board, sizeof(board), "%s/srv/alice", t);
	mkdir(board, 0755);
	char script[2048];
	snprintf(script, sizeof(script),
	         "echo x > \"$HOME/notes.txt\"; echo y > %s/kanban.db; echo z > %s/ok; exit 0",
	         board, rw);
	char env_home[600];
	snprintf(env_home, sizeof(env_home), "HOME=%s", home);
	const char *env[] = {env_home,
	                     "USER=alice",
	                     "LOGNAME=alice",
	                     "OPENAI_API_KEY=" SECRET_KEY,
	                     "CODEX_EXTRA=" SECRET_GH, /* recorded (CODEX_*), secret-shaped */
	                     NULL};
	const char *argv[] = {"bwrap", "--ro-bind", "/",     "/",  "--bind", rw,   rw,     "--dev",
	                      "/dev",  "--proc",    "/proc", "--", "sh",     "-c", script, NULL};
	const char *opts[] = {"--env", "OPENAI_API_KEY", NULL};
	cr_assert_eq(dtt_run(&worker, opts, argv, env), 0, "ring unreadable: %s", worker.out);
	cr_assert_not_null(dtt_find(&worker, DT_REC_DENIAL, NULL, "/notes.txt"),
	                   "the worker's refusal was not recorded: %s", worker.out);
}

static void teardown(void)
{
	dtt_free(&worker);
	dtt_cleanup();
}

TestSuite(evidence, .init = setup, .fini = teardown, .timeout = 120);

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = (n + 4096 + 1) * 2;
			buf = realloc(buf, cap);
		}
		size_t got = fread(buf + n, 1, 4096, f);
		if (!got)
			break;
		n += got;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

static int has_file(const char *dir, const char *name)
{
	char p[1024];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

static int run_evidence(char *out, size_t cap, const char *dir, int redact)
{
	const char *argv[] = {cli(),
	                      "evidence",
	                      "--out",
	                      dir,
	                      redact ? "--redact" : worker.ring,
	                      redact ? worker.ring : NULL,
	                      NULL};
	return dtt_system(out, cap, argv, NULL);
}

Test(evidence, bundle_holds_reports_facts_ring_copy_and_a_tarball_of_them)
{
	char dir[600], out[8192];
	snprintf(dir, sizeof(dir), "%s/bundle", dtt_tmpdir());
	cr_assert_eq(run_evidence(out, sizeof(out), dir, 0), 0, "evidence failed: %s", out);

	const char *parts[] = {"report.md",  "report.json",   "timeline.svg",
	                       "facts.json", "records.jsonl", NULL};
	for (const char *const *p = parts; *p; p++)
		cr_expect(has_file(dir, *p), "%s missing from the bundle", *p);
	const char *ring_base = strrchr(worker.ring, '/') + 1;
	cr_expect(has_file(dir, ring_base), "ring copy %s missing", ring_base);

	char path[1024];
	size_t a_len, b_len;
	snprintf(path, sizeof(path), "%s/%s", dir, ring_base);
	char *copy = slurp(path, &a_len), *orig = slurp(worker.ring, &b_len);
	cr_assert(copy && orig);
	cr_expect(a_len == b_len && !memcmp(copy, orig, a_len),
	          "the ring copy differs from the ring");
	free(copy);
	free(orig);

	snprintf(path, sizeof(path), "%s/report.md", dir);
	char *md = slurp(path, NULL);
	cr_assert_not_null(md);
	char *summary = strstr(md, "refused file operation"), *facts = strstr(md, "## Facts");
	cr_expect(summary && facts && summary < facts,
	          "report.md: summary must come before the facts");
	cr_expect(strstr(md, "notes.txt"), "report.md does not name the refused path");
	cr_expect(strstr(md, "[`timeline.svg`](timeline.svg)"),
	          "report.md does not link the timeline");
	cr_expect(strstr(md, "**kernel**") && strstr(md, "**distribution**") &&
	              strstr(md, "**WSL**"),
	          "report.md lacks the machine facts");
	cr_expect(strstr(md, "### Launch command lines") && strstr(md, "bwrap --ro-bind"),
	          "report.md lacks the launch command line");
	free(md);

	snprintf(path, sizeof(path), "%s/facts.json", dir);
	char *fj = slurp(path, NULL);
	cr_assert_not_null(fj);
	struct dt_jv *facts_doc = dtt_json(fj);
	const char *keys[] = {"denytrace_version",
	                      "kernel",
	                      "distribution",
	                      "wsl",
	                      "sandboxes_seen",
	                      "codex",
	                      "codex_config",
	                      "home",
	                      "roots",
	                      "launches",
	                      NULL};
	for (const char *const *k = keys; *k; k++)
		cr_expect_not_null(dt_jv_get(facts_doc, *k), "facts.json lacks %s", *k);
	const struct dt_jv *sb = dt_jv_get(facts_doc, "sandboxes_seen");
	int bubblewrap = 0;
	for (size_t i = 0; sb && sb->type == DT_JV_ARR && i < sb->n; i++)
		bubblewrap |= sb->v[i].type == DT_JV_STR && !strcmp(sb->v[i].text, "bubblewrap");
	cr_expect(bubblewrap, "bubblewrap not seen in: %s", fj);
	cr_expect_not_null(dtt_jget(facts_doc, "roots.0.under_protected"),
	                   "roots lack the .git/.codex/.agents fact");
	dt_jv_free(facts_doc);
	free(fj);

	snprintf(path, sizeof(path), "%s/report.json", dir);
	char *rj = slurp(path, NULL);
	cr_assert_not_null(rj);
	cr_expect(rj[0] == '{' && strstr(rj, "notes.txt"), "report.json does not hold the refusal");
	free(rj);

	/* the tarball lists the same files */
	char tarball[700], list[8192];
	snprintf(tarball, sizeof(tarball), "%s.tar.gz", dir);
	const char *tar[] = {"tar", "-tzf", tarball, NULL};
	cr_assert_eq(dtt_system(list, sizeof(list), tar, NULL), 0, "tar -tzf: %s", list);
	const char *all[] = {"report.md",  "report.json",   "timeline.svg",
	                     "facts.json", "records.jsonl", ring_base,
	                     NULL};
	for (const char *const *p = all; *p; p++) {
		char want[512];
		snprintf(want, sizeof(want), "bundle/%s\n", *p);
		cr_expect(strstr(list, want), "%s not in the tarball: %s", *p, list);
	}
}

/* Every file under dir (recursively) must be free of each needle.
 * Returns how many files were read. */
static int scan_tree(const char *dir, const char *const *needles)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "cannot open %s", dir);
	struct dirent *e;
	int files = 0;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char p[2048];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		for (const char *const *n = needles; *n; n++)
			cr_expect(!strstr(e->d_name, *n), "file name %s holds '%s'", p, *n);
		struct stat st;
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			files += scan_tree(p, needles);
			continue;
		}
		size_t len;
		char *text = slurp(p, &len);
		cr_assert_not_null(text, "cannot read %s", p);
		for (const char *const *n = needles; *n; n++)
			cr_expect(!memmem(text, len, *n, strlen(*n)), "%s still holds '%s'", p, *n);
		free(text);
		files++;
	}
	closedir(d);
	return files;
}

static void expect_clean_tree(const char *dir, const char *const *needles)
{
	cr_expect_geq(scan_tree(dir, needles), 4, "too few files under %s", dir);
}

/* dir/name is well-formed XML, as Python's parser reads it. */
static void expect_xml(const char *dir, const char *name)
{
	char path[1024], out[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	const char *argv[] = {"/usr/bin/python3", "-c",
	                      "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])", path,
	                      NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), argv, NULL), 0, "%s is not XML: %s", name, out);
}

Test(evidence, redact_leaves_no_home_user_name_or_secret_in_any_file)
{
	char dir[600], out[8192];
	snprintf(dir, sizeof(dir), "%s/redacted", dtt_tmpdir());
	cr_assert_eq(run_evidence(out, sizeof(out), dir, 1), 0, "evidence --redact failed: %s",
	             out);
	/* the ring really carried them (else the check below proves nothing) */
	int saw_home = 0;
	for (size_t i = 0; i < worker.n; i++) {
		const char *h = worker.recs[i].type == DT_REC_PROCESS
		                    ? dt_record_env(&worker.recs[i], "HOME")
		                    : NULL;
		saw_home |= h && !strcmp(h, home);
	}
	cr_assert(saw_home, "no process record holds HOME=%s", home);

	const char *needles[] = {home,        "alice-secret-home", "alice", SECRET_KEY,
	                         "sk-abc123", SECRET_GH,           "ghp_",  NULL};
	expect_clean_tree(dir, needles);

	char x[700], tarball[700];
	snprintf(x, sizeof(x), "%s/untarred", dtt_tmpdir());
	snprintf(tarball, sizeof(tarball), "%s.tar.gz", dir);
	mkdir(x, 0700);
	const char *untar[] = {"tar", "-xzf", tarball, "-C", x, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), untar, NULL), 0, "tar -xzf: %s", out);
	expect_clean_tree(x, needles);

	/* replaced, not merely dropped; the raw ring is left out */
	char path[1024];
	snprintf(path, sizeof(path), "%s/records.jsonl", dir);
	char *recs = slurp(path, NULL);
	cr_assert_not_null(recs);
	cr_expect(strstr(recs, "\"HOME\":\"~\""), "HOME not shown as ~");
	cr_expect(strstr(recs, "\"USER\":\"<user>\""), "USER not shown as <user>");
	cr_expect(strstr(recs, "/srv/<user>/kanban.db"),
	          "the user name in a path was not replaced");
	free(recs);
	const char *ring_base = strrchr(worker.ring, '/') + 1;
	cr_expect(!has_file(dir, ring_base), "the raw ring must not be in a redacted bundle");
	snprintf(path, sizeof(path), "%s/report.md", dir);
	char *md = slurp(path, NULL);
	cr_assert_not_null(md);
	cr_expect(strstr(md, "Redacted"), "report.md does not say it is redacted");
	free(md);
	/* "<user>" is text in the picture, not a tag: it still parses */
	expect_xml(dir, "timeline.svg");
}

Test(evidence, refuses_to_overwrite_a_directory_that_holds_files)
{
	char dir[600], keep[700], out[4096];
	snprintf(dir, sizeof(dir), "%s/taken", dtt_tmpdir());
	mkdir(dir, 0700);
	snprintf(keep, sizeof(keep), "%s/mine.txt", dir);
	FILE *f = fopen(keep, "w");
	cr_assert_not_null(f);
	fputs("precious\n", f);
	fclose(f);
	cr_expect_eq(run_evidence(out, sizeof(out), dir, 0), 5, "want exit 5: %s", out);
	cr_expect(strstr(out, "refusing to overwrite"), "no message: %s", out);
	cr_expect(!has_file(dir, "report.md"), "wrote into an occupied directory");
	char *text = slurp(keep, NULL);
	cr_expect(text && !strcmp(text, "precious\n"), "the existing file was changed");
	free(text);
}

/* Another local user who made the (empty) bundle directory first could
 * swap the files in it before tar reads them, or the directory for a link
 * before denytrace writes into it. */
Test(evidence, refuses_an_empty_directory_another_user_owns)
{
	char dir[600], out[4096];
	snprintf(dir, sizeof(dir), "%s/planted", dtt_tmpdir());
	cr_assert_eq(mkdir(dir, 0777), 0);
	cr_assert_eq(chown(dir, 65534, 65534), 0);
	cr_assert_eq(chmod(dir, 0777), 0);
	cr_expect_eq(run_evidence(out, sizeof(out), dir, 0), 5, "want exit 5: %s", out);
	cr_expect(strstr(out, "uid 65534"), "no message naming the owner: %s", out);
	cr_expect(!has_file(dir, "report.md"), "wrote into another user's directory");
}

/* A ring from `denytrace codex` holds config.toml as Codex read it: the
 * bundle quotes that snapshot, not the file as it is by the time a
 * maintainer asks (here: rewritten after the run). */
Test(evidence, codex_config_lines_come_from_the_snapshot_in_the_ring)
{
	const char *t = dtt_tmpdir();
	char codex_home[600], config[700], ring[700], dir[700], env_ch[700], out[16384];
	snprintf(codex_home, sizeof(codex_home), "%s/codex-home", t);
	mkdir(codex_home, 0755);
	snprintf(config, sizeof(config), "%s/config.toml", codex_home);
	FILE *f = fopen(config, "w");
	cr_assert_not_null(f);
	fputs("sandbox_mode = \"workspace-write\"\n"
	      "[sandbox_workspace_write]\n"
	      "writable_roots = [\"/srv/as-launched\"]\n",
	      f);
	fclose(f);
	snprintf(ring, sizeof(ring), "%s/codex.ring", t);
	snprintf(env_ch, sizeof(env_ch), "CODEX_HOME=%s", codex_home);
	/* any program stands in for Codex: only the launch and the snapshot matter */
	const char *run[] = {cli(), "codex", "-q", "--codex", "/bin/true", "-o", ring, "--", NULL};
	const char *env[] = {env_ch, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), run, env), 0, "%s", out);

	f = fopen(config, "w");
	cr_assert_not_null(f);
	fputs("[sandbox_workspace_write]\nwritable_roots = [\"/srv/changed-later\"]\n", f);
	fclose(f);

	snprintf(dir, sizeof(dir), "%s/bundle-codex", t);
	const char *ev[] = {cli(), "evidence", "--out", dir, ring, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), ev, env), 0, "%s", out);
	char p[800];
	snprintf(p, sizeof(p), "%s/facts.json", dir);
	char *facts = slurp(p, NULL);
	cr_assert_not_null(facts);
	struct dt_jv *facts_doc = dtt_json(facts);
	cr_expect(dt_jv_true(dt_jv_get(facts_doc, "codex_config"), "recorded"), "%s", facts);
	dt_jv_free(facts_doc);
	cr_expect(strstr(facts, "/srv/as-launched"), "the snapshot's roots are missing: %s", facts);
	cr_expect_null(strstr(facts, "/srv/changed-later"), "the file's later state leaked in");
	free(facts);
	snprintf(p, sizeof(p), "%s/report.md", dir);
	char *md = slurp(p, NULL);
	cr_assert_not_null(md);
	cr_expect(strstr(md, "(as recorded at launch)"), "%s", md);
	free(md);
}

/* Whether the line of md that is exactly `line` lies inside a fenced code
 * block, following CommonMark: a fence opens with 3+ backticks at the start
 * of a line and closes only with a line of at least as many backticks. */
static int md_line_is_fenced(const char *md, const char *line)
{
	size_t fence = 0; /* open fence length, 0 outside */
	for (const char *l = md; *l;) {
		size_t len = strcspn(l, "\n"), ticks = strspn(l, "`");
		if (len == strlen(line) && !strncmp(l, line, len))
			return fence > 0;
		if (!fence && ticks >= 3)
			fence = ticks;
		else if (fence && ticks >= fence && ticks == len)
			fence = 0;
		l += len + (l[len] == '\n');
	}
	return -1; /* not found */
}

Test(evidence, config_excerpt_holding_a_fence_stays_inside_its_code_block)
{
	const char *t = dtt_tmpdir();
	char codex_home[600], config[700], ring[700], dir[700], env_ch[700], out[16384];
	snprintf(codex_home, sizeof(codex_home), "%s/codex-home-fence", t);
	mkdir(codex_home, 0755);
	snprintf(config, sizeof(config), "%s/config.toml", codex_home);
	FILE *f = fopen(config, "w");
	cr_assert_not_null(f);
	/* not valid TOML, but the ring records what the file held */
	fputs("[sandbox_workspace_write]\nwritable_roots = [\n````\n# injected heading\n]\n", f);
	fclose(f);
	snprintf(ring, sizeof(ring), "%s/fence.ring", t);
	snprintf(env_ch, sizeof(env_ch), "CODEX_HOME=%s", codex_home);
	const char *run[] = {cli(), "codex", "-q", "--codex", "/bin/true", "-o", ring, "--", NULL};
	const char *env[] = {env_ch, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), run, env), 0, "%s", out);
	snprintf(dir, sizeof(dir), "%s/bundle-fence", t);
	const char *ev[] = {cli(), "evidence", "--out", dir, ring, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), ev, env), 0, "%s", out);
	char p[800];
	snprintf(p, sizeof(p), "%s/report.md", dir);
	char *md = slurp(p, NULL);
	cr_assert_not_null(md);
	/* fenced, or gone: a comment in a recorded config is dropped (secrets.h) */
	cr_expect_neq(md_line_is_fenced(md, "# injected heading"), 0,
	              "the config's fence closed the code block early:\n%s", md);
	free(md);
}

/* A same-uid process that wins the race: the moment evidence starts a
 * program to pack the bundle (tar, or gzip), it moves the bundle away and
 * puts a directory of its own under the bundle's name. Every program of
 * that name on PATH is this stand-in, which swaps once, then runs the
 * real one. */
static void swapping_packers(const char *bin, const char *bundle)
{
	mkdir(bin, 0755);
	const char *names[] = {"tar", "gzip", NULL};
	for (const char *const *n = names; *n; n++) {
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", bin, *n);
		FILE *f = fopen(path, "w");
		cr_assert_not_null(f);
		fprintf(f,
		        "#!/bin/sh\n"
		        "if [ ! -e '%s.moved' ]; then\n"
		        "  mv '%s' '%s.moved' && mkdir '%s' && echo FORGED > '%s/report.md'\n"
		        "fi\n"
		        "exec /bin/%s \"$@\"\n",
		        bundle, bundle, bundle, bundle, bundle, *n);
		fclose(f);
		cr_assert_eq(chmod(path, 0755), 0);
	}
}

Test(evidence, a_bundle_swapped_before_packing_does_not_change_the_tarball)
{
	char dir[600], bin[600], out[8192], path[PATH_MAX + 8], env_path[PATH_MAX + 700];
	snprintf(dir, sizeof(dir), "%s/bundle", dtt_tmpdir());
	snprintf(bin, sizeof(bin), "%s/bin", dtt_tmpdir());
	swapping_packers(bin, dir);
	snprintf(env_path, sizeof(env_path), "PATH=%s:%s", bin, getenv("PATH"));
	const char *env[] = {env_path, NULL};
	const char *argv[] = {cli(), "evidence", "--out", dir, worker.ring, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), argv, env), 0, "evidence failed: %s", out);
	snprintf(path, sizeof(path), "%s.moved", dir);
	cr_assert_eq(access(path, F_OK), 0, "the stand-in never swapped the bundle: %s", out);
	char tarball[700], md[8192];
	snprintf(tarball, sizeof(tarball), "%s.tar.gz", dir);
	const char *x[] = {"/bin/tar", "-xzOf", tarball, "bundle/report.md", NULL};
	cr_assert_eq(dtt_system(md, sizeof(md), x, NULL), 0, "tar -xzOf: %s", md);
	cr_expect_null(strstr(md, "FORGED"), "the tarball packed the swapped-in bundle");
	cr_expect(strstr(md, "notes.txt"), "the tarball's report.md is not evidence's:\n%s", md);
}
