/* SPDX-License-Identifier: MIT */
/*
 * The corpus: real programs (git, gpg, sqlite3, python3, sed, tar, rsync,
 * coreutils, flock, npm, Codex) refused by real sandboxes (bubblewrap,
 * Landlock, the Codex sandbox) or by plain owner/mode bits, one scenario
 * per block of tests/corpus/scenarios. Each scenario is run under
 * `denytrace run`, its ring is diagnosed as `denytrace report` does, and
 * every refusal under the scenario's directory must carry the expected
 * (cause, expected_root, granted) written in the table. A scenario whose
 * program or sandbox is missing here is skipped with the reason printed.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "names.h"
#include "report.h"
#include "testlib.h"

#define FIELD_MAX 2048

/* One scenario; field names are the table's keys. */
struct scenario {
	char scenario[128], program[64], sandbox[32], setup[FIELD_MAX], run[FIELD_MAX];
	char roots[FIELD_MAX], options[256], expect[FIELD_MAX], pending[512], surprise[FIELD_MAX];
	int line;
};

#define MAX_SCENARIOS 128

static const char *corpus_dir(void)
{
	static char dir[PATH_MAX + 16];
	if (!dir[0]) {
		char cwd[PATH_MAX];
		if (access("tests/corpus/scenarios", R_OK) == 0 && getcwd(cwd, sizeof(cwd)))
			snprintf(dir, sizeof(dir), "%s/tests/corpus", cwd);
		else
			snprintf(dir, sizeof(dir), "%s/../tests/corpus", dtt_build());
	}
	return dir;
}

static char *field_of(struct scenario *s, const char *key)
{
/* one if per field: the names are the struct's members */
#define KEY(k)                                                                                     \
	if (!strcmp(key, #k))                                                                      \
	return s->k
	KEY(scenario);
	KEY(program);
	KEY(sandbox);
	KEY(setup);
	KEY(run);
	KEY(roots);
	KEY(options);
	KEY(expect);
	KEY(pending);
	KEY(surprise);
#undef KEY
	return NULL;
}

static size_t field_cap(const char *key)
{
	return !strcmp(key, "scenario")  ? 128
	       : !strcmp(key, "program") ? 64
	       : !strcmp(key, "sandbox") ? 32
	       : !strcmp(key, "pending") ? 512
	       : !strcmp(key, "options") ? 256
	                                 : FIELD_MAX;
}

/* Reads the table; returns the number of scenarios (at most max). A line
 * the parser does not understand fails the suite: a typo must not drop a
 * row silently. */
static size_t load_scenarios(struct scenario *v, size_t max)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/scenarios", corpus_dir());
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot read the corpus table %s", path);
	char line[FIELD_MAX + 64];
	size_t n = 0;
	int lineno = 0;
	struct scenario *cur = NULL;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		char *sp = line + strcspn(line, " \t");
		char *val = sp + strspn(sp, " \t");
		*sp = 0;
		if (!strcmp(line, "scenario")) {
			cr_assert_lt(n, max, "%s:%d: more than %zu scenarios", path, lineno, max);
			cur = &v[n++];
			memset(cur, 0, sizeof(*cur));
			cur->line = lineno;
		}
		char *dst = cur ? field_of(cur, line) : NULL;
		cr_assert_not_null(dst, "%s:%d: unknown key '%s' (or no scenario line before it)",
		                   path, lineno, line);
		snprintf(dst, field_cap(line), "%s", val);
	}
	fclose(f);
	return n;
}

/* s with every "$T" replaced by t. */
static void expand(char *out, size_t cap, const char *s, const char *t)
{
	size_t n = 0;
	out[0] = 0;
	while (*s && n + 1 < cap) {
		if (s[0] == '$' && s[1] == 'T') {
			n += (size_t)snprintf(out + n, cap - n, "%s", t);
			s += 2;
		} else {
			out[n++] = *s++;
			out[n] = 0;
		}
	}
}

static void skip_row(const struct scenario *s, const char *why)
{
	printf("corpus: %s: skipped: %s\n", s->scenario, why);
	fflush(stdout);
	cr_skip_test("%s: %s", s->scenario, why);
}

static int have_program(const char *prog)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	const char *argv[] = {"sh", "-c", cmd, NULL};
	return dtt_system(NULL, 0, argv, NULL) == 0;
}

/* The real Codex CLI, or NULL (the reason in why). */
static const char *codex_binary(char *why, size_t cap)
{
	static char bin[PATH_MAX];
	char script[PATH_MAX + 64], out[8192];
	snprintf(script, sizeof(script), "%s/../../scripts/install-codex.sh", corpus_dir());
	const char *argv[] = {"sh", "-c", "\"$0\" 2>&1", script, NULL};
	int rc = dtt_system(out, sizeof(out), argv, NULL);
	out[strcspn(out, "\0")] = 0;
	size_t n = strlen(out);
	while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = 0;
	const char *last = strrchr(out, '\n');
	snprintf(bin, sizeof(bin), "%s", last ? last + 1 : out);
	if (rc != 0 || access(bin, X_OK) != 0) {
		snprintf(why, cap, "the Codex CLI is not available (install-codex.sh exit %d): %s",
		         rc, out);
		return NULL;
	}
	return bin;
}

/* Skips the row when its program or sandbox cannot run here; returns the
 * Codex binary for codex rows. */
static const char *check_runnable(const struct scenario *s)
{
	char why[8400];
	if (!have_program(!strcmp(s->program, "codex") ? "node" : s->program)) {
		snprintf(why, sizeof(why), "%s is not installed (scripts/install-deps.sh)",
		         s->program);
		skip_row(s, why);
	}
	if (!strcmp(s->sandbox, "bwrap") && !dtt_have_bwrap())
		skip_row(s, "bubblewrap cannot create a sandbox here");
	if (!strcmp(s->sandbox, "landlock") && !dtt_have_landlock())
		skip_row(s, "Landlock is not available in this kernel");
	if (!strcmp(s->sandbox, "nobody") && (geteuid() != 0 || !have_program("setpriv")))
		skip_row(s, "switching to uid 65534 needs root and setpriv");
	if (!strcmp(s->sandbox, "codex")) {
		const char *bin = codex_binary(why, sizeof(why));
		if (!bin)
			skip_row(s, why);
		return bin;
	}
	return "";
}

static int granted_of(const char *word)
{
	return !strcmp(word, "true") ? 1 : !strcmp(word, "false") ? 0 : -1;
}

static const char *granted_word(int g)
{
	return g == 1 ? "true" : g == 0 ? "false" : "null";
}

/* Compares every refusal under t with the expected triple; returns the
 * number of refusals judged, and the first mismatch in bad (else ""). */
static size_t judge(const struct dt_report *rep, const char *t, const char *cause, const char *root,
                    int granted, char *bad, size_t cap)
{
	size_t judged = 0;
	bad[0] = 0;
	for (size_t k = 0; k < rep->ngroups; k++) {
		const struct dt_report_group *g = &rep->groups[k];
		const char *abs = g->rep->p[0].abspath;
		if (g->hidden || !(dt_path_under(g->path, t) || (abs && dt_path_under(abs, t)))) {
			if (!g->hidden)
				printf("corpus:   (not judged, outside the scenario) %s %s %s\n",
				       g->rep->op, g->path, dt_cause_name(g->v.cause));
			continue;
		}
		judged++;
		const char *got_root = g->v.root ? g->v.root->path : "null";
		if (!bad[0] && (strcmp(dt_cause_name(g->v.cause), cause) ||
		                strcmp(got_root, root) || g->v.granted != granted))
			snprintf(bad, cap,
			         "%s %s (%s): got (%s, %s, %s), want (%s, %s, %s); reason: %s",
			         g->rep->op, g->path, dt_errno_name(g->rep->err),
			         dt_cause_name(g->v.cause), got_root, granted_word(g->v.granted),
			         cause, root, granted_word(granted), g->v.reason);
	}
	return judged;
}

static void run_scenario(const struct scenario *s, const char *codex)
{
	char t[64] = "/var/tmp/dt-corpus.XXXXXX";
	cr_assert_not_null(mkdtemp(t));
	cr_assert_eq(chmod(t, 0755), 0); /* uid 65534 must reach into it */

	char env_t[128], env_lib[PATH_MAX + 32], env_helpers[PATH_MAX + 32],
	    env_codex[PATH_MAX + 16];
	snprintf(env_t, sizeof(env_t), "T=%s", t);
	snprintf(env_lib, sizeof(env_lib), "CORPUS_LIB=%s/lib.sh", corpus_dir());
	snprintf(env_helpers, sizeof(env_helpers), "DT_HELPERS=%s/helpers", dtt_build());
	snprintf(env_codex, sizeof(env_codex), "CODEX_BIN=%s", codex);
	const char *env[] = {env_t, env_lib, env_helpers, env_codex, NULL};

	char script[FIELD_MAX + 64], out[16384];
	snprintf(script, sizeof(script), ". \"$CORPUS_LIB\" && { %s\n}", s->setup);
	const char *setup[] = {"sh", "-c", script, NULL};
	int rc = dtt_system(out, sizeof(out), setup, env);
	cr_assert_eq(rc, 0, "%s: setup failed (%d): %s", s->scenario, rc, out);

	snprintf(script, sizeof(script), ". \"$CORPUS_LIB\"; %s", s->run);
	const char *run[] = {"sh", "-c", script, NULL};
	char options[256];
	const char *opts[8] = {NULL};
	snprintf(options, sizeof(options), "%s", s->options);
	size_t nopts = 0;
	for (char *save = NULL, *w = strtok_r(options, " ", &save); w && nopts < 7;
	     w = strtok_r(NULL, " ", &save))
		opts[nopts++] = w;
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, opts, run, env), 0, "%s: ring unreadable: %s", s->scenario, r.out);

	char roots_buf[FIELD_MAX], expect[FIELD_MAX];
	expand(roots_buf, sizeof(roots_buf), s->roots, t);
	expand(expect, sizeof(expect), s->expect, t);
	const char *roots[16];
	size_t nroots = 0;
	for (char *save = NULL, *w = strtok_r(roots_buf, " ", &save); w && nroots < 16;
	     w = strtok_r(NULL, " ", &save))
		roots[nroots++] = w;
	char cause[64], root[PATH_MAX], granted[16];
	cr_assert_eq(sscanf(expect, "%63s %4095s %15s", cause, root, granted), 3,
	             "%s: expect needs CAUSE ROOT GRANTED: '%s'", s->scenario, expect);

	struct dt_report rep;
	const char *rings[] = {r.ring};
	char err[1024] = "";
	cr_assert_eq(dt_report_load(&rep, rings, 1, err, sizeof(err)), 0, "%s", err);
	struct dt_report_opts o = {.roots = roots, .nroots = nroots};
	cr_assert_eq(dt_report_build(&rep, &o, err, sizeof(err)), 0, "%s", err);

	char bad[4096];
	size_t judged = judge(&rep, t, cause, root, granted_of(granted), bad, sizeof(bad));
	if (!judged)
		snprintf(bad, sizeof(bad), "no refusal under %s was recorded; output: %s", t,
		         r.out);
	if (bad[0] && s->pending[0]) {
		dt_report_free(&rep);
		dtt_free(&r);
		snprintf(out, sizeof(out), "pending %s; now: %s", s->pending, bad);
		skip_row(s, out);
	}
	if (!bad[0] && s->pending[0])
		printf("corpus: %s passes although marked pending (%s): remove the mark\n",
		       s->scenario, s->pending);
	cr_expect(!bad[0], "corpus %s (tests/corpus/scenarios:%d, %s under %s): %s%s%s",
	          s->scenario, s->line, s->program, s->sandbox, bad,
	          s->surprise[0] ? "; note: " : "", s->surprise);
	dt_report_free(&rep);
	dtt_free(&r);
	const char *rm[] = {"rm", "-rf", t, NULL};
	dtt_system(NULL, 0, rm, NULL);
}

ParameterizedTestParameters(corpus, every_scenario_gets_the_expected_cause_root_and_grant)
{
	static struct scenario all[MAX_SCENARIOS];
	size_t n = load_scenarios(all, MAX_SCENARIOS);
	int *idx = cr_malloc(n * sizeof(*idx));
	for (size_t i = 0; i < n; i++)
		idx[i] = (int)i;
	return cr_make_param_array(int, idx, n, NULL);
}

ParameterizedTest(int *i, corpus, every_scenario_gets_the_expected_cause_root_and_grant,
                  .timeout = 120)
{
	static struct scenario all[MAX_SCENARIOS];
	size_t n = load_scenarios(all, MAX_SCENARIOS);
	cr_assert_lt((size_t)*i, n);
	const struct scenario *s = &all[*i];
	const char *codex = check_runnable(s);
	run_scenario(s, codex);
	dtt_cleanup();
}

/* The table itself: enough real programs and scenarios to mean something,
 * and every row complete. */
Test(corpus, the_table_covers_at_least_25_scenarios_over_10_programs)
{
	static struct scenario all[MAX_SCENARIOS];
	size_t n = load_scenarios(all, MAX_SCENARIOS);
	const char *progs[MAX_SCENARIOS];
	size_t np = 0;
	for (size_t i = 0; i < n; i++) {
		const struct scenario *s = &all[i];
		cr_expect(s->program[0] && s->sandbox[0] && s->run[0] && s->expect[0],
		          "scenario %s (line %d) lacks program, sandbox, run or expect",
		          s->scenario, s->line);
		size_t k = 0;
		while (k < np && strcmp(progs[k], s->program))
			k++;
		if (k == np)
			progs[np++] = s->program;
	}
	cr_expect_geq(n, 25, "only %zu scenarios", n);
	cr_expect_geq(np, 10, "only %zu distinct programs", np);
}
