/* SPDX-License-Identifier: MIT */
/* denytrace report --format svg: the timeline of a real run, for 10 and
 * for 100,000 refusals, is valid standalone SVG (xmllint), the same size
 * whatever the number of records, and renders in headless Chromium with a
 * lane of refusal marks per process and the writes beneath (the screenshot
 * is decoded by timeline_png.py, beside this file). */
#include <criterion/criterion.h>
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

TestSuite(timeline, .fini = teardown, .timeout = 240);

/* Tries to create files under a read-only directory n times; every tenth
 * time writes a file it may write. */
static const char worker[] =
    "import os, sys\n"
    "ro, ok, n = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
    "for i in range(n):\n"
    "    try:\n"
    "        os.close(os.open('%s/f%d' % (ro, i % 5), os.O_WRONLY | os.O_CREAT))\n"
    "    except OSError:\n"
    "        pass\n"
    "    if i % 10 == 0:\n"
    "        os.close(os.open(ok, os.O_WRONLY | os.O_CREAT))\n";

static char out[1 << 16];

/* The path of a file beside this source file. */
static void beside(char *buf, size_t cap, const char *name)
{
	const char *slash = strrchr(__FILE__, '/');
	snprintf(buf, cap, "%.*s%s", slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__, name);
}

/* Runs nproc workers of n refusals each in bubblewrap (the workspace
 * writable, the rest read-only), writes the report's SVG, checks it with
 * xmllint, and returns its size; the SVG's path goes to svg. */
static long timeline_of(int nproc, int n, char *svg, size_t cap)
{
	char ws[PATH_MAX], ro[PATH_MAX], py[PATH_MAX], ok[PATH_MAX], ring[PATH_MAX],
	    cmd[8 * PATH_MAX];
	const char *t = dtt_tmpdir();
	snprintf(ws, sizeof(ws), "%s/ws", t);
	snprintf(ro, sizeof(ro), "%s/ro", t);
	snprintf(py, sizeof(py), "%s/w.py", t);
	snprintf(ok, sizeof(ok), "%s/ok", ws);
	snprintf(ring, sizeof(ring), "%s/t.ring", ws);
	snprintf(svg, cap, "%s/t.svg", t);
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(mkdir(ro, 0755), 0);
	FILE *f = fopen(py, "w");
	fputs(worker, f);
	fclose(f);
	size_t len = (size_t)snprintf(
	    cmd, sizeof(cmd),
	    "'%s/denytrace' run -q --all --size 256M -o '%s' -- bwrap --ro-bind / / "
	    "--bind '%s' '%s' --dev /dev --proc /proc -- sh -c '",
	    dtt_build(), ring, ws, ws);
	for (int i = 0; i < nproc; i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, "python3 %s %s %s %d & ", py,
		                        ro, ok, n);
	snprintf(cmd + len, sizeof(cmd) - len,
	         "wait' && '%s/denytrace' report --format svg '%s' > '%s'", dtt_build(), ring, svg);
	const char *sh[] = {"sh", "-c", cmd, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s\n%s", cmd, out);
	const char *lint[] = {"/usr/bin/xmllint", "--noout", svg, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), lint, NULL), 0, "xmllint: %s", out);
	struct stat st;
	cr_assert_eq(stat(svg, &st), 0);
	return (long)st.st_size;
}

/* The sum of the marks' ">N refused<" titles in svg: what the picture
 * says it holds. Counted here, not by a shell pipeline, so that the test
 * needs no tool a minimal Debian lacks (bc). */
static long refusals_marked(const char *svg)
{
	FILE *f = fopen(svg, "r");
	cr_assert_not_null(f, "%s", svg);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	long sum = 0;
	for (const char *p = strchr(text, '>'); p; p = strchr(p + 1, '>')) {
		char *end;
		long count = strtol(p + 1, &end, 10);
		if (end > p + 1 && !strncmp(end, " refused<", 9))
			sum += count;
	}
	return sum;
}

/* Screenshots svg with headless Chromium and returns what timeline_png.py
 * saw, in out. */
static const char *render(const char *svg)
{
	char png[PATH_MAX], url[PATH_MAX + 8], checker[PATH_MAX], size[64];
	snprintf(png, sizeof(png), "%s.png", svg);
	snprintf(url, sizeof(url), "file://%s", svg);
	/* the picture's own height, so nothing is cut off */
	FILE *f = fopen(svg, "r");
	char head[4096] = "";
	size_t n = fread(head, 1, sizeof(head) - 1, f);
	head[n] = 0;
	fclose(f);
	const char *hp = strstr(head, "height=\"");
	cr_assert_not_null(hp);
	snprintf(size, sizeof(size), "--window-size=1000,%d", atoi(hp + 8));
	char shot[PATH_MAX + 16];
	snprintf(shot, sizeof(shot), "--screenshot=%s", png);
	const char *chrome[] = {"/usr/bin/chromium",
	                        "--headless",
	                        "--no-sandbox",
	                        "--disable-gpu",
	                        "--hide-scrollbars",
	                        size,
	                        shot,
	                        url,
	                        NULL};
	int st = dtt_system(out, sizeof(out), chrome, NULL);
	cr_assert_eq(st, 0, "chromium: %s", out);
	beside(checker, sizeof(checker), "timeline_png.py");
	const char *py[] = {"/usr/bin/python3", checker, png, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), py, NULL), 0, "%s", out);
	return out;
}

static void need_tools(void)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	if (access("/usr/bin/xmllint", X_OK))
		cr_skip_test("xmllint is missing (apt-get install libxml2-utils)");
	if (access("/usr/bin/chromium", X_OK))
		cr_skip_test("headless Chromium is missing (apt-get install chromium)");
}

Test(timeline, ten_refusals_draw_one_lane_with_its_marks_and_writes)
{
	need_tools();
	char svg[PATH_MAX];
	timeline_of(1, 10, svg, sizeof(svg));
	const char *seen = render(svg);
	cr_expect(strstr(seen, "lanes 1\n"), "one process, one lane of refusals:\n%s", seen);
	cr_expect(strstr(seen, "writes 1\n"), "its writes beneath:\n%s", seen);
	cr_expect_null(strstr(seen, "inked 0\n"), "a blank picture:\n%s", seen);
}

Test(timeline, a_hundred_thousand_refusals_stay_four_lanes_in_a_picture_of_bounded_size)
{
	need_tools();
	char svg[PATH_MAX];
	long bytes = timeline_of(4, 25000, svg, sizeof(svg));
	/* marks are binned: 4 lanes x 185 buckets, not 100,000 elements */
	cr_expect_lt(bytes, 400000, "the SVG is %ld bytes", bytes);
	long marked = refusals_marked(svg);
	cr_expect_eq(marked, 100000, "the marks hold %ld refusals, not 100000", marked);
	const char *seen = render(svg);
	cr_expect(strstr(seen, "lanes 4\n"), "four processes, four lanes:\n%s", seen);
	cr_expect(strstr(seen, "writes 4\n"), "each with its writes:\n%s", seen);
}
