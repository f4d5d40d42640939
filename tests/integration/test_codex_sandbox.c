/* SPDX-License-Identifier: MIT */
/*
 * The real `codex sandbox` (the Codex `make codex` found or installed: 0.171,
 * or 0.169 with CODEX_VERSION=0.169.0) on every launch shape of
 * tracer/roots/codex_shapes.def:
 * the command tries to create a file in each probe directory, and the
 * directories it could write must be the ones the table recorded, or Codex
 * must refuse to start where the table says "refused". The unit test
 * checks denytrace's model against the same table, so together they show
 * the model matches the binary.
 *
 * DT_RECORD_SHAPES=1 prints what Codex let each shape write, to record the
 * table for a new Codex version. Skipped (with the reason) when Codex
 * is not installed.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codex_binary.h"
#include "codex_shapes.h"
#include "report.h"
#include "roots.h"
#include "testlib.h"

static char codex[PATH_MAX];
static char base[PATH_MAX]; /* dtt_codex_tmpdir() */

static void setup(void)
{
	char why[PATH_MAX + 512];
	const char *bin = dtt_codex(why, sizeof(why));
	if (!bin)
		cr_skip_test("%s", why);
	snprintf(codex, sizeof(codex), "%s", bin);
	snprintf(base, sizeof(base), "%s", dtt_codex_tmpdir());
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(codex_shapes, .init = setup, .fini = teardown, .timeout = 300);

/* Runs Codex on shape s; writes "refused" or the probes it could write
 * (in dt_codex_probes order) to seen. */
static void run_shape(const struct dt_codex_shape *s, char *seen, size_t cap, char *out,
                      size_t outcap)
{
	char top[PATH_MAX + 128];
	snprintf(top, sizeof(top), "%s/%s", base, s->id);
	cr_assert_eq(dt_codex_shape_setup(s, top), 0, "%s: cannot set up %s", s->id, top);
	int rc = dt_codex_shape_run(s, codex, top, 100000, seen, cap, out, outcap);
	cr_assert_geq(rc, 0, "%s: Codex could not be run or hung (%d): %s", s->id, rc, out);
	if (!strcmp(seen, "refused"))
		cr_expect_neq(rc, 0, "%s: Codex did not run the command yet exited 0: %s", s->id,
		              out);
}

/* The shapes in parts: each test stays within the suites' 120 s limit on
 * a loaded machine (a shape runs Codex once or twice, about 2 s each). */
enum { SHAPE_PARTS = 4 };
static size_t part_start(int part)
{
	return dt_ncodex_shapes * (size_t)part / SHAPE_PARTS;
}

ParameterizedTestParameters(codex_shapes, the_real_codex_sandbox_grants_what_the_table_recorded)
{
	static int parts[SHAPE_PARTS] = {0, 1, 2, 3};
	return cr_make_param_array(int, parts, SHAPE_PARTS);
}

ParameterizedTest(int *part, codex_shapes, the_real_codex_sandbox_grants_what_the_table_recorded)
{
	int record = getenv("DT_RECORD_SHAPES") != NULL;
	size_t bad = 0;
	for (size_t i = part_start(*part); i < part_start(*part + 1); i++) {
		const struct dt_codex_shape *s = &dt_codex_shapes[i];
		char seen[1024], out[16384];
		run_shape(s, seen, sizeof(seen), out, sizeof(out));
		if (record)
			printf("%-55s %s\n", s->id, seen);
		if (!dt_same_words(seen, s->writable)) {
			bad++;
			cr_expect_fail(
			    "%s: Codex let it write \"%s\", the table says \"%s\"; output: %s",
			    s->id, seen, s->writable, out);
		}
	}
	printf("codex_shapes part %d: %zu shapes run, %zu differ from the table\n", *part,
	       part_start(*part + 1) - part_start(*part), bad);
	fflush(stdout);
}

/* Codex's own read-back (codex doctor --json) of every shape the model can
 * compare with it: the paths Codex lists as writable and the model's
 * writable_roots list must be the same. */
ParameterizedTestParameters(codex_shapes, codex_doctor_reads_back_the_models_writable_roots)
{
	static int parts[SHAPE_PARTS] = {0, 1, 2, 3};
	return cr_make_param_array(int, parts, SHAPE_PARTS);
}

ParameterizedTest(int *part, codex_shapes, codex_doctor_reads_back_the_models_writable_roots)
{
	size_t asked = 0, bad = 0;
	for (size_t i = part_start(*part); i < part_start(*part + 1); i++) {
		const struct dt_codex_shape *s = &dt_codex_shapes[i];
		char top[PATH_MAX + 128], w[PATH_MAX + 160], home[PATH_MAX + 160],
		    chome[PATH_MAX + 160];
		snprintf(top, sizeof(top), "%s/rb-%s", base, s->id);
		cr_assert_eq(dt_codex_shape_setup(s, top), 0, "%s: cannot set up %s", s->id, top);
		snprintf(w, sizeof(w), "%s/W", top);
		snprintf(home, sizeof(home), "%s/hh", top);
		snprintf(chome, sizeof(chome), "%s/home", top);
		char *args = dt_codex_shape_expand(s->args, top),
		     *tmpdir = s->tmpdir ? dt_codex_shape_expand(s->tmpdir, top) : NULL;
		size_t nw = 0;
		char **words = dt_split_words(args, &nw);
		const char **argv = calloc(nw + 4, sizeof(*argv));
		size_t k = 0;
		argv[k++] = codex;
		for (size_t j = 0; j < nw; j++)
			argv[k++] = words[j];
		argv[k++] = "--";
		argv[k++] = "true";
		struct dt_codex_launch l = {.argv = argv,
		                            .argc = k,
		                            .cwd = w,
		                            .home = home,
		                            .codex_home = chome,
		                            .tmpdir = tmpdir};
		struct dt_rootset rs = {0};
		char err[512];
		cr_assert_eq(dt_roots_from_codex(&rs, &l, NULL, err, sizeof(err)), 0, "%s", err);
		dt_codex_readback(&rs, codex, &l);
		cr_expect_geq(rs.codex_readback, 0, "%s: %s", s->id, rs.codex_readback_why);
		asked += rs.codex_readback == 1;
		for (size_t d = 0; d < rs.ncodex_disagree; d++, bad++)
			cr_expect_fail("%s: %s", s->id, rs.codex_disagree[d]);
		dt_rootset_free(&rs);
		dt_words_free(words);
		free(argv);
		free(args);
		free(tmpdir);
	}
	printf("codex_shapes part %d: codex doctor asked on %zu shapes, %zu disagreements\n", *part,
	       asked, bad);
	cr_expect_gt(asked, 0, "no shape of this part could be compared");
}
