/* SPDX-License-Identifier: MIT */
/* Strings a traced program chose stay inert and every output stays valid:
 * XML (the SVG timeline, JUnit) never holds a character XML forbids, a
 * Markdown table keeps its columns whatever a path holds, and a reader
 * neither dies when the ring is truncated under it nor keeps quiet about
 * the records it could not use. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

#define U_FFFF "\xef\xbf\xbf"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(outputs_valid, .fini = teardown, .timeout = 180);

static char out[1 << 17];

static void need_xmllint(void)
{
	if (access("/usr/bin/xmllint", X_OK) != 0)
		cr_skip_test("xmllint is missing (apt-get install libxml2-utils)");
}

static void expect_valid_xml(const char *path)
{
	const char *lint[] = {"/usr/bin/xmllint", "--noout", path, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), lint, NULL), 0, "xmllint %s: %s", path, out);
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

Test(outputs_valid, the_svg_timeline_stays_valid_xml_with_u_ffff_in_a_process_name)
{
	need_xmllint();
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir();
	/* the lane's label is the process's name, which is its program's */
	char prog[PATH_MAX], cmd[3 * PATH_MAX];
	snprintf(prog, sizeof(prog), "%s/t" U_FFFF "h", top);
	snprintf(cmd, sizeof(cmd), "cp /usr/bin/touch '%s'", prog);
	const char *cp[] = {"/bin/sh", "-c", cmd, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), cp, NULL), 0, "%s", out);
	const char *argv[DTT_BWRAP_RW_WORDS + 4];
	size_t n = dtt_bwrap_rw(argv, top);
	argv[n++] = prog;
	argv[n++] = "/usr/ab";
	argv[n] = NULL;
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	char svg[PATH_MAX];
	snprintf(svg, sizeof(svg), "%s/t.svg", top);
	snprintf(cmd, sizeof(cmd), "'%s' report --format svg '%s' > '%s'", dtt_denytrace(), r.ring,
	         svg);
	const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
	expect_valid_xml(svg);
	dtt_free(&r);
}

Test(outputs_valid, junit_stays_valid_xml_0600_and_without_the_command_line_s_password)
{
	need_xmllint();
	const char *top = dtt_tmpdir();
	char junit[PATH_MAX];
	snprintf(junit, sizeof(junit), "%s/junit.xml", top);
	const char *argv[] = {dtt_denytrace(),
	                      "soak",
	                      "-q",
	                      "--runs",
	                      "2",
	                      "--junit",
	                      junit,
	                      "--",
	                      "sh",
	                      "-c",
	                      "exit 1",
	                      "x" U_FFFF "y",
	                      "--password=hunter2-secret",
	                      "sshpass",
	                      "-p",
	                      "pw-after-p",
	                      NULL};
	dtt_system(out, sizeof(out), argv, NULL);
	struct stat st;
	cr_assert_eq(stat(junit, &st), 0, "no JUnit file: %s", out);
	cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
	expect_valid_xml(junit);
	const char *xml = slurp(junit);
	cr_expect_null(strstr(xml, "hunter2-secret"), "%s", xml);
	cr_expect_null(strstr(xml, "pw-after-p"), "%s", xml);
}

Test(outputs_valid, a_pipe_in_a_root_path_keeps_the_evidence_roots_table_whole)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir();
	char root[PATH_MAX], bundle[PATH_MAX + 8], report[PATH_MAX + 32];
	snprintf(root, sizeof(root), "%s/my|board", top);
	cr_assert_eq(mkdir(root, 0755), 0);
	const char *argv[DTT_BWRAP_RW_WORDS + 4];
	size_t n = dtt_bwrap_rw(argv, top);
	argv[n++] = "touch";
	argv[n++] = "/usr/x";
	argv[n] = NULL;
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	snprintf(bundle, sizeof(bundle), "%s/b", top);
	const char *ev[] = {dtt_denytrace(), "evidence", "--out", bundle,
	                    "--root",        root,       r.ring,  NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), ev, NULL), 0, "%s", out);
	snprintf(report, sizeof(report), "%s/report.md", bundle);
	char *md = slurp(report);
	cr_assert_not_null(md);
	/* every table row naming the root has as many cell separators as its
	 * table's header */
	size_t rows = 0;
	for (char *line = strtok(md, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] != '|' || !strstr(line, "board"))
			continue;
		int seps = 0;
		for (char *p = line; *p; p++)
			seps += *p == '|' && (p == line || p[-1] != '\\');
		cr_expect(seps == 4 || seps == 5, "a row with %d cells' separators: %s", seps,
		          line);
		rows++;
	}
	cr_expect_geq(rows, 1, "the root is in no table row (or its | is not escaped)");
	dtt_free(&r);
}

/* A ring of a few records written by the test. */
static void small_ring(struct dtt_ring *w, const char *path, int records)
{
	cr_assert_eq(dtt_ring_create(w, path, 0), 0);
	for (int i = 0; i < records; i++) {
		dtt_ring_begin(w, DT_REC_DENIAL, 100 + i, "w");
		dt_put_str(&w->b, DT_T_OP, "open");
		dt_put_u64(&w->b, DT_T_ERRNO, EROFS);
		dt_put_str(&w->b, DT_T_PATH, "/usr/x");
		cr_assert_eq(dtt_ring_commit(w), 0);
	}
}

Test(outputs_valid, a_reader_of_a_ring_truncated_under_it_stops_instead_of_dying_of_sigbus)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/r.ring", dtt_tmpdir());
	struct dtt_ring w;
	small_ring(&w, path, 40);
	dtt_ring_close(&w);
	struct dt_ringfile rf;
	char err[512];
	cr_assert_eq(dt_ringfile_open(path, &rf, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(truncate(path, 0), 0);
	static unsigned char buf[DT_REC_MAX];
	struct dt_read_stats st = {0};
	uint64_t pos = dt_ring_tail(&rf.ring);
	uint32_t len;
	int got;
	while ((got = dt_ring_next(&rf.ring, &pos, buf, &len, &st, 0)) == DT_NEXT_RECORD)
		;
	cr_expect_eq(got, DT_NEXT_GONE);
	cr_expect(st.truncated);
	dt_ringfile_close(&rf);
}

/* report --format json on path, into path.json; its exit status. */
static int report_json(const char *path)
{
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof(cmd), "'%s' report --format json '%s' > '%s.json'", dtt_denytrace(),
	         path, path);
	const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
	return dtt_system(out, sizeof(out), sh, NULL);
}

/* A whole number at summary.key in the report path.json. */
static long json_number(const char *path, const char *key)
{
	char json[PATH_MAX + 8];
	snprintf(json, sizeof(json), "%s.json", path);
	const char *py[] = {
	    "python3",
	    "-c",
	    "import json,sys; print(json.load(open(sys.argv[1]))['summary'][sys.argv[2]])",
	    json,
	    key,
	    NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), py, NULL), 0, "%s: %s", key, out);
	return atol(out);
}

Test(outputs_valid, a_sequence_word_the_probe_never_writes_is_counted_corrupt_and_said)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/r.ring", dtt_tmpdir());
	struct dtt_ring w;
	small_ring(&w, path, 3);
	/* not of this slot, not a flag combination the protocol has */
	atomic_store(dt_slot_seq(&w.r, 0), 0x00000000deadbeefULL | DT_SEQ_START | DT_SEQ_BUSY);
	dtt_ring_close(&w);
	int st = report_json(path);
	cr_expect_eq(st, 4, "report exits %d for a corrupt ring", st);
	cr_expect_geq(json_number(path, "records_corrupt"), 1);
}

Test(outputs_valid, a_record_whose_sequence_word_was_zeroed_is_counted_skipped_and_said)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/r.ring", dtt_tmpdir());
	struct dtt_ring w;
	small_ring(&w, path, 3);
	atomic_store(dt_slot_seq(&w.r, 0), 0); /* what hides a record, as a writer can */
	dtt_ring_close(&w);
	report_json(path);
	cr_expect_geq(json_number(path, "records_skipped"), 1);
	cr_expect_eq(json_number(path, "records_read"), 2);
}

/* The advice's bubblewrap words are pasted into a shell: a directory the
 * traced program named $(...) must reach it as one quoted word. */
Test(outputs_valid, the_advice_s_bwrap_words_quote_a_directory_named_like_a_command)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *top = dtt_tmpdir();
	char rw[PATH_MAX], odd[PATH_MAX], file[PATH_MAX + 8];
	snprintf(rw, sizeof(rw), "%s/rw", top);
	cr_assert_eq(mkdir(rw, 0755), 0);
	snprintf(odd, sizeof(odd), "%s/a $(touch pwned) b", top);
	cr_assert_eq(mkdir(odd, 0755), 0);
	snprintf(file, sizeof(file), "%s/f", odd);
	const char *argv[DTT_BWRAP_RW_WORDS + 4];
	size_t n = dtt_bwrap_rw(argv, rw);
	argv[n++] = "touch";
	argv[n++] = file;
	argv[n] = NULL;
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	cr_assert_eq(report_json(r.ring), 0, "%s", out);
	char json[PATH_MAX + 8];
	snprintf(json, sizeof(json), "%s.json", r.ring);
	const char *py[] = {"python3", "-c",
	                    "import json,sys\n"
	                    "for f in json.load(open(sys.argv[1]))['findings']:\n"
	                    "    print(f.get('advice') or '')",
	                    json, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), py, NULL), 0, "%s", out);
	char want[2 * PATH_MAX];
	snprintf(want, sizeof(want), "--bind '%s' '%s'", odd, odd);
	cr_expect(strstr(out, want), "the advice does not hold %s:\n%s", want, out);
	dtt_free(&r);
}
