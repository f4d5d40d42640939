/* SPDX-License-Identifier: MIT */
/*
 * denytrace's model of Codex's writable roots (dt_roots_from_codex) against
 * every launch shape of codex_shapes.def, whose writable sets were recorded
 * from the real `codex sandbox` 0.169 and 0.171 (tests/integration/
 * test_codex_sandbox.c re-runs it), under each version of
 * codex_versions.def. For each shape the model must:
 *  - make exactly the recorded probe directories writable, or say that
 *    Codex would refuse the command line and list no roots;
 *  - never list a root as dropped where Codex granted it, and name the flag
 *    that dropped it where the table says;
 *  - say what the table's "says" column holds (why -P made settings
 *    irrelevant, why a flag is refused or ignored).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codex_shapes.h"
#include "report.h"
#include "roots.h"
#include "testlib.h"

/* Not under /tmp: /tmp is a writable root of its own in workspace-write. */
static char base[64];

static void setup(void)
{
	snprintf(base, sizeof(base), "/var/tmp/denytrace-model.XXXXXX");
	cr_assert_not_null(mkdtemp(base), "mkdtemp %s", base);
}

static void teardown(void)
{
	const char *argv[] = {"rm", "-rf", base, NULL};
	if (base[0])
		dtt_system(NULL, 0, argv, NULL);
}

TestSuite(codex_shapes, .init = setup, .fini = teardown);

static int says(const struct dt_rootset *rs, const char *text)
{
	if (rs->codex_refused && strstr(rs->codex_refused, text))
		return 1;
	for (size_t i = 0; i < rs->nwarnings; i++)
		if (strstr(rs->warnings[i], text))
			return 1;
	return 0;
}

static void dump(const struct dt_rootset *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		cr_log_info("  root %s%s (%s)%s%s", rs->v[i].path,
		            rs->v[i].readonly_sub ? " read-only" : "", rs->v[i].source,
		            rs->v[i].dropped_by ? " dropped by " : "",
		            rs->v[i].dropped_by ? rs->v[i].dropped_by : "");
	for (size_t i = 0; i < rs->nwarnings; i++)
		cr_log_info("  warning: %s", rs->warnings[i]);
	if (rs->codex_refused)
		cr_log_info("  refused: %s", rs->codex_refused);
}

/* The model's answer for s: "refused" or the writable probes. Returns the
 * number of problems found besides the writable set. */
static int check_shape(const struct dt_codex_shape *s, const char *version, const char *top,
                       char *got, size_t cap)
{
	struct dt_rootset rs = {0};
	char err[512] = "";
	int problems = 0;
	cr_assert_eq(dt_codex_shape_model(s, version, top, &rs, got, cap, err, sizeof(err)), 0,
	             "%s: %s", s->id, err);
	if (rs.codex_refused) {
		for (size_t i = 0; i < rs.n; i++)
			if (rs.v[i].kind == DT_ROOT_CODEX && !rs.v[i].dropped_by &&
			    !rs.v[i].readonly_sub) {
				cr_log_error("%s: Codex refuses it, yet the model lists root %s",
				             s->id, rs.v[i].path);
				problems++;
			}
	}
	/* a dropped root is not writable: no "granted; dropped by" */
	for (size_t i = 0; i < rs.n; i++) {
		const struct dt_root *r = &rs.v[i];
		for (size_t j = 0; r->dropped_by && j < dt_ncodex_probes; j++) {
			char p[PATH_MAX + 32];
			dt_codex_probe_path(dt_codex_probes[j], top, p, sizeof(p));
			if (!strcmp(p, r->path) && dt_word_in(s->writable, dt_codex_probes[j])) {
				cr_log_error("%s: %s is dropped by %s, yet Codex granted it", s->id,
				             r->path, r->dropped_by);
				problems++;
			}
		}
	}
	if (s->dropped) {
		char *want = dt_codex_shape_expand(strchr(s->dropped, ':') + 1, top),
		     p[PATH_MAX + 32];
		char probe[64];
		snprintf(probe, sizeof(probe), "%.*s", (int)(strchr(s->dropped, ':') - s->dropped),
		         s->dropped);
		dt_codex_probe_path(probe, top, p, sizeof(p));
		const struct dt_root *r = NULL;
		for (size_t i = 0; i < rs.n && !r; i++)
			if (rs.v[i].kind == DT_ROOT_CODEX && !strcmp(rs.v[i].path, p))
				r = &rs.v[i];
		if (!r || !r->dropped_by || strcmp(r->dropped_by, want)) {
			cr_log_error("%s: %s should be dropped by '%s', the model says '%s'", s->id,
			             p, want, r && r->dropped_by ? r->dropped_by : "(not dropped)");
			problems++;
		}
		free(want);
	}
	if (s->says && !says(&rs, s->says)) {
		cr_log_error("%s: the model does not say \"%s\"", s->id, s->says);
		problems++;
	}
	if (problems || !dt_same_words(got, s->writable))
		dump(&rs);
	dt_rootset_free(&rs);
	return problems;
}

/* Every shape as each checked version's binary ran it (codex_versions.def:
 * they granted the same in every shape). */
Test(codex_shapes, the_model_grants_what_the_real_codex_sandbox_granted_in_every_shape)
{
	size_t bad = 0;
	for (size_t v = 0; v < dt_ncodex_versions; v++) {
		const char *version = dt_codex_versions[v].name;
		for (size_t i = 0; i < dt_ncodex_shapes; i++) {
			const struct dt_codex_shape *s = &dt_codex_shapes[i];
			char top[PATH_MAX], got[1024];
			snprintf(top, sizeof(top), "%s/%s-%s", base, s->id, version);
			cr_assert_eq(dt_codex_shape_setup(s, top), 0, "%s: cannot set up %s", s->id,
			             top);
			int problems = check_shape(s, version, top, got, sizeof(got));
			if (problems || !dt_same_words(got, s->writable)) {
				bad++;
				cr_expect_fail(
				    "%s (Codex %s): the model says \"%s\", Codex granted "
				    "\"%s\"%s",
				    s->id, version, got, s->writable,
				    problems ? " (and see the errors above)" : "");
			}
		}
	}
	printf("codex_shapes: %zu shapes on %zu versions, %zu where the model differs from Codex\n",
	       dt_ncodex_shapes, dt_ncodex_versions, bad);
}
