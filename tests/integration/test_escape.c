/* SPDX-License-Identifier: MIT */
/*
 * Whatever a ring holds, reading it is safe: no output of show, report,
 * roots or evidence carries a control character that denytrace did not put
 * there itself. A traced program chooses its paths, comm, argv, environment,
 * cwd and even its symbol and source file names; a ring file can hold any
 * bytes at all. Two rings: one written by a real program that picks hostile
 * names for everything (tests/helpers/evilnames.c, its symbols rewritten),
 * one built field by field with every string tag hostile, plus records of
 * random bytes (a fixed seed: the same bytes every run).
 *
 * "Control" here: C0 bytes but newline and tab, DEL, C1 code points
 * (U+0080..U+009F, CSI among them), bidi overrides (U+202A..U+202E,
 * U+2066..U+2069: they reorder what is shown after them) and bytes that are
 * not valid UTF-8 (a lone 0x9b is CSI to an 8-bit terminal). Escaped forms (\x1b, \u001b) are
 * fine: they are text.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

TestSuite(escape, .fini = teardown, .timeout = 120);

/* What a hostile string may carry (each is a way to act on a terminal, a
 * Markdown renderer or a JSON consumer). */
static const char *const payloads[] = {
    "\x1b[2J\x1b[Hall clear", /* clear the screen, home the cursor */
    "\x9b"
    "31m", /* CSI as one 8-bit byte */
    "\xc2\x9b"
    "1m",                    /* CSI as UTF-8 (U+009B) */
    "\x07\r\b\x7f",          /* bell, return, backspace, DEL */
    "\xc2\x85next",          /* NEL (U+0085) */
    "\x1b]0;title\x07",      /* OSC: set the window title */
    "\n## forged heading\n", /* a line of its own */
    "```` |x| <b> \\",       /* fences, table cells, HTML, backslash */
    "\xe2\x80\xae"
    "txt.exe", /* right-to-left override (U+202E) */
};
#define NPAYLOADS (sizeof(payloads) / sizeof(payloads[0]))

/* "/evil<k><payload>/leaf": a hostile path (k picks the payload). */
static const char *evil(size_t k, const char *prefix)
{
	static char buf[16][256];
	static size_t slot;
	slot = (slot + 1) % 16;
	snprintf(buf[slot], sizeof(buf[slot]), "%s%zu%sz", prefix, k, payloads[k % NPAYLOADS]);
	return buf[slot];
}

/* ---- the check ----------------------------------------------------------- */

/* Offset of the first control character in buf[0..len), or -1. */
static long first_control(const unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = buf[i];
		if (c < 0x80) {
			if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
				return (long)i;
			i++;
			continue;
		}
		size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
		if (!n || i + n > len)
			return (long)i;
		for (size_t k = 1; k < n; k++)
			if ((buf[i + k] & 0xc0) != 0x80)
				return (long)i;
		if (n == 2 && c == 0xc2 && buf[i + 1] < 0xa0)
			return (long)i; /* C1 */
		if (n == 3 && c == 0xe2 &&
		    ((buf[i + 1] == 0x80 && buf[i + 2] >= 0xaa && buf[i + 2] <= 0xae) ||
		     (buf[i + 1] == 0x81 && buf[i + 2] >= 0xa6 && buf[i + 2] <= 0xa9)))
			return (long)i; /* bidi override */
		i += n;
	}
	return -1;
}

static void expect_clean(const char *what, const char *buf, size_t len)
{
	long at = first_control((const unsigned char *)buf, len);
	if (at < 0)
		return;
	long from = at > 60 ? at - 60 : 0;
	cr_expect_fail("%s: control byte 0x%02x at offset %ld, after: \"%.*s\"", what,
	               (unsigned char)buf[at], at, (int)(at - from), buf + from);
}

static void expect_cli_clean(const char *const *args)
{
	struct dtt_cli c;
	dtt_cli(&c, args);
	char what[256];
	snprintf(what, sizeof(what), "`denytrace %s %s %s` (status %d) stdout", args[0],
	         args[1] ? args[1] : "", args[1] && args[2] ? args[2] : "", c.status);
	cr_expect(c.status >= 0 && c.status < 100, "%s: killed or hung", what);
	cr_expect(strlen(c.out) > 0 || strlen(c.err) > 0, "%s: no output at all", what);
	expect_clean(what, c.out, strlen(c.out));
	snprintf(what + strlen(what) - 6, 8, "stderr");
	expect_clean(what, c.err, strlen(c.err));
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	do {
		if (n + 4096 > cap)
			buf = realloc(buf, cap = (n + 4096) * 2);
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got);
	fclose(f);
	*len = n;
	return buf;
}

/* Every output of every reading command on ring, evidence's files included. */
static void expect_every_output_clean(const char *ring, const char *tag)
{
	const char *cases[][5] = {
	    {"show", ring, NULL},
	    {"show", "-v", ring, NULL},
	    {"show", "--jsonl", ring, NULL},
	    {"report", ring, NULL},
	    {"report", "--all", ring, NULL},
	    {"report", "--format", "json", ring, NULL},
	    {"report", "--format", "markdown", ring, NULL},
	    {"report", "--format", "svg", ring, NULL},
	    {"report", "-v", ring, NULL},
	    {"roots", ring, NULL},
	    {"roots", "--json", ring, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_cli_clean(cases[i]);
	char dir[600];
	snprintf(dir, sizeof(dir), "%s/bundle-%s", dtt_tmpdir(), tag);
	const char *ev[] = {"evidence", "--out", dir, ring, NULL};
	expect_cli_clean(ev);
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "no bundle in %s", dir);
	size_t checked = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t nl = strlen(e->d_name);
		if (e->d_name[0] == '.' || (nl > 5 && !strcmp(e->d_name + nl - 5, ".ring")))
			continue; /* the ring copy is the input itself */
		char path[1200];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		size_t len;
		char *buf = slurp(path, &len);
		cr_assert_not_null(buf, "%s", path);
		char what[1300];
		snprintf(what, sizeof(what), "evidence %s", e->d_name);
		expect_clean(what, buf, len);
		free(buf);
		checked++;
	}
	closedir(d);
	/* the picture of the same names is still XML */
	char svg[1300], out[4096];
	snprintf(svg, sizeof(svg), "%s/timeline.svg", dir);
	const char *xml[] = {"/usr/bin/python3", "-c",
	                     "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])", svg,
	                     NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), xml, NULL), 0, "%s: timeline.svg is not XML: %s",
	             tag, out);
	cr_expect_geq(checked, 4, "bundle files checked: %zu", checked);
}

/* ---- a ring built field by field ----------------------------------------- */

static void put_argv(struct dt_buf *b, const char *const *argv)
{
	char buf[2048];
	size_t n = 0;
	for (const char *const *a = argv; *a; a++) {
		size_t l = strlen(*a) + 1;
		memcpy(buf + n, *a, l);
		n += l;
	}
	dt_put(b, DT_T_ARGV, buf, (uint32_t)n);
}

static void put_env(struct dt_buf *b, const char *name, const char *value)
{
	char e[512];
	snprintf(e, sizeof(e), "%s=%s", name, value);
	dt_put_str(b, DT_T_ENV, e);
}

static void put_paths(struct dt_buf *b, size_t k, int second)
{
	int d = second ? DT_T_PATH2 - DT_T_PATH : 0;
	dt_put_str(b, DT_T_PATH + d, evil(k, "rel"));
	dt_put_str(b, DT_T_DIRPATH + d, evil(k + 1, "/dir"));
	dt_put_str(b, DT_T_ABSPATH + d, evil(k + 2, "/srv/board/"));
	dt_put_str(b, DT_T_REALPATH + d, evil(k + 3, "/srv/board/"));
	struct dt_stat_facts st = {DT_SF_PARENT | DT_SF_MOUNT, 0, 0, 0, 040755, 0, 0, 0, 1};
	dt_put(b, DT_T_STAT + d, &st, sizeof(st));
}

static void put_refusal(struct dtt_ring *w, int type, size_t k)
{
	dtt_ring_begin(w, type, 4000 + (long)k, evil(k, "comm"));
	dt_put_str(&w->b, DT_T_OP, evil(k, "op"));
	dt_put_u64(&w->b, DT_T_ERRNO, type == DT_REC_DENIAL ? (k % 2 ? EROFS : EACCES) : 0);
	dt_put_u64(&w->b, DT_T_FLAGS, O_WRONLY | O_CREAT);
	dt_put_str(&w->b, DT_T_FMODE, evil(k, "w"));
	dt_put_u64(&w->b, DT_T_ACCESS, 1);
	dt_put_str(&w->b, DT_T_SQLITE, evil(k, "journal"));
	put_paths(&w->b, k, 0);
	if (k % 2)
		put_paths(&w->b, k + 4, 1);
	struct dt_frame fr = {0x401000, 0x1000, 0, 0};
	dt_put(&w->b, DT_T_FRAME, &fr, sizeof(fr));
	dt_put_str(&w->b, DT_T_MODULE, evil(k, "/nonexistent/lib"));
	cr_assert_eq(dtt_ring_commit(w), 0, "record %zu did not fit", k);
}

static void put_process(struct dtt_ring *w, int type, size_t k)
{
	dtt_ring_begin(w, type, 4000 + (long)k, evil(k, "comm"));
	dt_put_u64(&w->b, DT_T_PPID, 1);
	dt_put_str(&w->b, DT_T_EXE, evil(k, "/usr/bin/exe"));
	dt_put_str(&w->b, DT_T_CWD, evil(k + 1, "/work/cwd"));
	dt_put_str(&w->b, DT_T_VERSION, evil(k, "v"));
	dt_put_str(&w->b, DT_T_PRELOAD, evil(k, "/lib/probe.so"));
	const char *argv[] = {"codex",
	                      "-c",
	                      "sandbox_mode=\"workspace-write\"",
	                      "--cd",
	                      evil(k, "/ws"),
	                      "--add-dir",
	                      evil(k + 1, "/add"),
	                      "-c",
	                      "sandbox_workspace_write.writable_roots=[\"/evil\\u001b[2J\"]",
	                      NULL};
	put_argv(&w->b, argv);
	put_env(&w->b, "HOME", evil(k + 2, "/home/u"));
	put_env(&w->b, "CODEX_HOME", evil(k + 3, "/home/u/.codex"));
	put_env(&w->b, "HERMES_HOME", evil(k + 4, "/hermes"));
	put_env(&w->b, "HERMES_KANBAN_DB", evil(k + 5, "/board/kanban.db"));
	put_env(&w->b, "HCOM_DIR", evil(k + 6, "/hcom"));
	put_env(&w->b, "TMPDIR", evil(k + 7, "/tmp/t"));
	for (size_t m = 0; m < 3; m++) {
		unsigned char mb[300];
		struct dt_mount_fact mf = {m ? DT_MF_RW : 0, 0};
		const char *mp = evil(k + m, "/mnt/m");
		memcpy(mb, &mf, sizeof(mf));
		memcpy(mb + sizeof(mf), mp, strlen(mp));
		dt_put(&w->b, DT_T_MOUNT, mb, (uint32_t)(sizeof(mf) + strlen(mp)));
	}
	dt_put_u64(&w->b, DT_T_SECCOMP, 2);
	if (type == DT_REC_EXEC) {
		dt_put_u64(&w->b, DT_T_SUPERVISOR, 1);
		dt_put_str(&w->b, DT_T_EXEC_BLIND, k % 2 ? "static" : evil(k, "blind"));
	}
	cr_assert_eq(dtt_ring_commit(w), 0, "record %zu did not fit", k);
}

static void put_config(struct dtt_ring *w, size_t k)
{
	dtt_ring_begin(w, DT_REC_CONFIG, 4000 + (long)k, "denytrace");
	char text[1024];
	snprintf(text, sizeof(text),
	         "sandbox_mode = \"workspace-write\" # %s\n[sandbox_workspace_write]\n"
	         "writable_roots = [\n  \"%s\",\n%s\n]\n",
	         payloads[k % NPAYLOADS], evil(k, "/root"), payloads[(k + 1) % NPAYLOADS]);
	dt_put_str(&w->b, DT_T_CONFIG_PATH, evil(k, "/home/u/.codex/config"));
	dt_put_str(&w->b, DT_T_CONFIG_ROLE, "codex");
	if (k % 2)
		dt_put_str(&w->b, DT_T_CONFIG_PROFILE, evil(k, "prof"));
	dt_put_str(&w->b, DT_T_CONFIG_TEXT, text);
	dt_put_u64(&w->b, DT_T_CONFIG_SIZE, strlen(text));
	cr_assert_eq(dtt_ring_commit(w), 0);
}

/* xorshift: random bytes that are the same every run */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static const char *random_string(char *buf, size_t cap)
{
	size_t n = 1 + rnd() % (cap - 2);
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)(1 + rnd() % 255);
	buf[n] = 0;
	return buf;
}

static void put_random_refusal(struct dtt_ring *w, size_t k)
{
	char a[64], b[64], c[96], d[32];
	dtt_ring_begin(w, DT_REC_DENIAL, 5000 + (long)k, random_string(a, sizeof(a)));
	dt_put_str(&w->b, DT_T_OP, random_string(d, sizeof(d)));
	dt_put_u64(&w->b, DT_T_ERRNO, EACCES);
	dt_put_u64(&w->b, DT_T_ACCESS, 1);
	dt_put_str(&w->b, DT_T_SQLITE, random_string(b, sizeof(b)));
	snprintf(c + 1, sizeof(c) - 1, "%s", random_string(a, sizeof(a)));
	c[0] = '/';
	dt_put_str(&w->b, DT_T_PATH, c);
	dt_put_str(&w->b, DT_T_ABSPATH, c);
	cr_assert_eq(dtt_ring_commit(w), 0);
}

Test(escape, no_output_of_a_ring_with_every_string_field_hostile_holds_a_control_byte)
{
	char ring[600];
	snprintf(ring, sizeof(ring), "%s/hostile.ring", dtt_tmpdir());
	struct dtt_ring w;
	cr_assert_eq(dtt_ring_create(&w, ring, 4 << 20), 0);
	for (size_t k = 0; k < 2 * NPAYLOADS; k++) {
		put_process(&w, k % 2 ? DT_REC_PROCESS : DT_REC_LAUNCH, k);
		put_process(&w, DT_REC_EXEC, k);
		put_config(&w, k);
		put_refusal(&w, DT_REC_DENIAL, k);
		put_refusal(&w, k % 2 ? DT_REC_WRITE : DT_REC_REOPEN, k);
	}
	for (size_t k = 0; k < 200; k++)
		put_random_refusal(&w, k);
	dtt_ring_close(&w);
	expect_every_output_clean(ring, "fields");
}

/* ---- a real program naming itself ----------------------------------------- */

/* Replaces every occurrence of marker in the file with repl (same length). */
static size_t patch_file(const char *path, const char *marker, const char *repl)
{
	size_t len, n = 0, ml = strlen(marker);
	cr_assert_eq(strlen(repl), ml, "replacement must keep the length");
	char *buf = slurp(path, &len);
	cr_assert_not_null(buf);
	for (char *p = buf; (p = memmem(p, len - (size_t)(p - buf), marker, ml)); p += ml, n++)
		memcpy(p, repl, ml);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
	return n;
}

Test(escape, no_output_about_a_program_with_hostile_names_holds_a_control_byte)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *t = dtt_tmpdir();
	/* the program's own binary, its cwd and its target carry escapes */
	char bin[600], cwd[600], ro[600], target[700], ring[600], cmd[4096];
	snprintf(bin, sizeof(bin), "%s/evil\x1b[2Jbin\xc2\x9b", t);
	snprintf(cwd, sizeof(cwd), "%s/cwd\x1b]0;x\x07", t);
	snprintf(ro, sizeof(ro), "%s/ro", t);
	snprintf(target, sizeof(target), "%s/\x1b[31mboard\x9b.db", ro);
	cr_assert_eq(mkdir(cwd, 0755), 0);
	cr_assert_eq(mkdir(ro, 0755), 0);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", dtt_helper("evilnames"), bin);
	cr_assert_eq(system(cmd), 0);
	cr_assert_geq(patch_file(bin, "DTEVILSYM_MARKER_0123456789",
	                         "\x1b[2J\x1b[Hall_clear\xc2\x9b"
	                         "1m_______"),
	              1, "symbol marker not found");
	patch_file(bin, "DTEVILFILE_MARKER_0123456789",
	           "\x1b]0;pwned\x07\x1b[1A\x9b"
	           "2K___________");
	cr_assert_eq(chmod(bin, 0755), 0);

	snprintf(ring, sizeof(ring), "%s/program.ring", t);
	char exe[600];
	snprintf(exe, sizeof(exe), "%s/denytrace", dtt_build());
	const char *argv[] = {exe,
	                      "run",
	                      "-q",
	                      "-o",
	                      ring,
	                      "--",
	                      "bwrap",
	                      "--ro-bind",
	                      "/",
	                      "/",
	                      "--dev",
	                      "/dev",
	                      "--proc",
	                      "/proc",
	                      "--chdir",
	                      cwd,
	                      "--",
	                      bin,
	                      "co\x1b[8m\x9b",
	                      target,
	                      "--password=\x1b[2J",
	                      NULL};
	const char *env[] = {"HERMES_HOME=/h\x1b[2Jermes",
	                     "CODEX_HOME=/c\xc2\x9b"
	                     "odex",
	                     "HCOM_DIR=/hc\x07om", NULL};
	static char out[65536];
	int status = dtt_system(out, sizeof(out), argv, env);
	cr_assert_eq(status, 0, "%s", out);
	struct dtt_run r;
	cr_assert_eq(dtt_load(&r, ring), 0);
	int found = 0;
	for (size_t i = 0; i < r.n; i++)
		found |= r.recs[i].type == DT_REC_DENIAL && r.recs[i].p[0].abspath &&
		         !strcmp(r.recs[i].p[0].abspath, target) && r.recs[i].nframes > 0;
	dtt_free(&r);
	cr_assert(found, "the refusal (with a stack) was not recorded: %s", out);
	expect_every_output_clean(ring, "program");
}
