// SPDX-License-Identifier: MIT
/*
 * Tests for tracer/roots/roots.c: where a launch expected to write (Codex argv and
 * config.toml, Hermes, hcom, --root) and what the sandbox granted (writable
 * mounts seen from inside).
 *
 * Build and run from the repository root:
 *   make build/unit/test_roots && ./build/unit/test_roots --jobs 2
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codex_binary.h"
#include "roots.h"
#include "testlib.h"

static struct dt_rootset rs;

static void teardown(void)
{
	dt_rootset_free(&rs);
	dtt_cleanup();
}

TestSuite(roots, .fini = teardown);

/* ---- helpers --------------------------------------------------------------- */

/* A path under this test's private temporary directory. */
static const char *tmp_path(const char *name)
{
	static char bufs[32][PATH_MAX];
	static int next;
	char *b = bufs[next++ % 32];

	snprintf(b, PATH_MAX, "%s/%s", dtt_tmpdir(), name);
	return b;
}

static void mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

/* Writes text to name under the temporary directory; returns its path. */
static const char *write_file(const char *name, const char *text)
{
	const char *path = tmp_path(name);
	char dir[PATH_MAX];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	mkdir_p(dir);
	f = fopen(path, "w");
	cr_assert_not_null(f, "cannot create %s", path);
	fputs(text, f);
	fclose(f);
	return path;
}

/* A HOME with no .codex in it, so no config is read unless a test says. */
static const char *empty_home(void)
{
	const char *h = tmp_path("emptyhome");

	mkdir_p(h);
	return h;
}

static size_t count(const char *const *argv)
{
	size_t n = 0;

	while (argv[n])
		n++;
	return n;
}

struct launch {
	const char *cwd, *home, *codex_home, *tmpdir, *config;
	const char *version; /* what `codex --version` said, or NULL */
};

/* The warnings besides the one about CODEX_HOME in the temporary
 * directory, which every test whose CODEX_HOME is under dtt_tmpdir() gets. */
static size_t other_warnings(void)
{
	size_t n = 0;

	for (size_t i = 0; i < rs.nwarnings; i++)
		n += !strstr(rs.warnings[i], "Refusing to create helper binaries");
	return n;
}

/* Derives Codex roots into rs and asserts that it worked. */
static void codex(const struct launch *o, const char *const *argv)
{
	char err[512] = "";
	struct dt_codex_launch l = {
	    .argv = argv,
	    .argc = count(argv),
	    .cwd = o->cwd,
	    .home = o->home ? o->home : empty_home(),
	    .codex_home = o->codex_home,
	    .tmpdir = o->tmpdir,
	    .codex_version = o->version,
	};
	int rc = dt_roots_from_codex(&rs, &l, o->config, err, sizeof(err));

	cr_assert_eq(rc, 0, "dt_roots_from_codex failed: %s", err);
}

static const struct dt_root *find(const char *path, enum dt_root_kind kind)
{
	for (size_t i = 0; i < rs.n; i++)
		if (rs.v[i].kind == kind && !strcmp(rs.v[i].path, path))
			return &rs.v[i];
	return NULL;
}

static const struct dt_root *must_find(const char *path, enum dt_root_kind kind)
{
	const struct dt_root *r = find(path, kind);

	if (!r) {
		for (size_t i = 0; i < rs.n; i++)
			cr_log_error("have root %s (kind %d, source %s)", rs.v[i].path,
			             rs.v[i].kind, rs.v[i].source);
		cr_assert_fail("no root %s of kind %d", path, kind);
	}
	return r;
}

/* Writable (not readonly_sub) roots of a kind. */
static size_t count_writable(enum dt_root_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < rs.n; i++)
		n += rs.v[i].kind == kind && !rs.v[i].readonly_sub;
	return n;
}

static void assert_str(const char *got, const char *want)
{
	cr_assert_not_null(got, "expected \"%s\", got NULL", want);
	cr_assert_str_eq(got, want);
}

static void assert_contains(const char *got, const char *want)
{
	cr_assert_not_null(got, "expected something containing \"%s\", got NULL", want);
	cr_assert(strstr(got, want), "expected \"%s\" to contain \"%s\"", got, want);
}

static struct dt_record process(long pid, struct dt_mount *m, size_t n)
{
	struct dt_record r;

	memset(&r, 0, sizeof(r));
	r.type = DT_REC_PROCESS;
	r.pid = pid;
	r.mounts = m;
	r.nmounts = n;
	return r;
}

#define NMOUNTS(a) (sizeof(a) / sizeof(*(a)))

/* ---- paths and the set ---------------------------------------------------------- */

Test(roots, path_under_compares_whole_components)
{
	cr_assert_eq(dt_path_under("/a/bc", "/a/b"), 0);
	cr_assert_eq(dt_path_under("/a/b", "/a/b"), 1);
	cr_assert_eq(dt_path_under("/a/b/c", "/a/b"), 1);
	cr_assert_eq(dt_path_under("/a/b/c", "/"), 1);
	cr_assert_eq(dt_path_under("/", "/"), 1);
	cr_assert_eq(dt_path_under("/a", "/a/b"), 0);
	cr_assert_eq(dt_path_under("/a/b/c", "/a/b/"), 1);
}

Test(roots, add_normalises_and_merges_same_path_and_kind)
{
	struct dt_root *a =
	    dt_roots_add(&rs, "/srv//data/./x/../", DT_ROOT_EXPLICIT, "--root", NULL);

	cr_assert_not_null(a);
	assert_str(a->path, "/srv/data");
	cr_assert_eq(a->granted, -1);
	cr_assert_null(a->realpath, "a path that does not exist has no realpath");
	dt_roots_add(&rs, "/srv/data", DT_ROOT_EXPLICIT, "second", "knob");
	cr_assert_eq(rs.n, 1);
	assert_str(rs.v[0].source, "--root");
	assert_str(rs.v[0].knob, "knob");
	dt_roots_add(&rs, "/srv/data", DT_ROOT_HCOM, "other kind", NULL);
	cr_assert_eq(rs.n, 2);
	assert_str(dt_roots_add(&rs, "/..", DT_ROOT_EXPLICIT, "--root", NULL)->path, "/");
}

Test(roots, add_resolves_relative_explicit_root_against_cwd)
{
	char cwd[PATH_MAX];

	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	strcat(cwd, "/data");
	assert_str(dt_roots_add(&rs, "data/", DT_ROOT_EXPLICIT, "--root", NULL)->path, cwd);
}

Test(roots, warnings_are_kept_and_freed)
{
	dt_roots_warn(&rs, "config %s unreadable", "/x");
	dt_roots_warn(&rs, "second %d", 2);
	cr_assert_eq(other_warnings(), 2);
	assert_str(rs.warnings[0], "config /x unreadable");
}

/* ---- Codex argv ---------------------------------------------------------------- */

Test(roots, argv_is_codex_recognises_codex_launchers)
{
	const char *a1[] = {"codex", "exec", "x", NULL};
	const char *a2[] = {"/usr/local/lib/node_modules/@openai/codex/vendor/x86_64-unknown-"
	                    "linux-musl/codex/codex-x86_64-unknown-linux-musl",
	                    "exec", NULL};
	const char *a3[] = {"node", "/usr/lib/node_modules/@openai/codex/bin/codex.js", "exec",
	                    NULL};
	const char *a4[] = {"/usr/bin/node", "/usr/local/bin/codex", NULL};
	const char *n1[] = {"node", "/srv/app.js", "codex", NULL};
	const char *n2[] = {"sh", "-c", "codex exec x", NULL};
	const char *n3[] = {"codex-linux-sandbox", "--sandbox-policy-cwd", "/w", NULL};
	const char *n4[] = {"/usr/bin/codexfoo", NULL};

	cr_assert(dt_argv_is_codex(a1, count(a1)));
	cr_assert(dt_argv_is_codex(a2, count(a2)));
	cr_assert(dt_argv_is_codex(a3, count(a3)));
	cr_assert(dt_argv_is_codex(a4, count(a4)));
	cr_assert_not(dt_argv_is_codex(n1, count(n1)));
	cr_assert_not(dt_argv_is_codex(n2, count(n2)));
	cr_assert_not(dt_argv_is_codex(n3, count(n3)), "Codex's sandbox helper is not the CLI");
	cr_assert_not(dt_argv_is_codex(n4, count(n4)));
	cr_assert_not(dt_argv_is_codex(a1, 0));
}

Test(roots, codex_exec_workspace_write_gives_workspace_tmp_and_tmpdir)
{
	const char *argv[] = {"codex", "exec",  "-s",     "workspace-write",
	                      "-C",    "/work", "fix it", NULL};
	struct launch o = {.cwd = "/home/u", .tmpdir = "/var/tmp/u/"};
	const struct dt_root *w;

	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	w = must_find("/work", DT_ROOT_CODEX);
	cr_assert_eq(w->readonly_sub, 0);
	cr_assert_eq(w->granted, -1);
	assert_contains(w->knob, "codex --add-dir /work");
	assert_contains(w->source, "-C /work");
	assert_str(must_find("/tmp", DT_ROOT_CODEX)->source, "codex workspace-write: /tmp");
	assert_str(must_find("/var/tmp/u", DT_ROOT_CODEX)->source,
	           "codex workspace-write: TMPDIR=/var/tmp/u/");
	cr_assert_null(find("/home/u", DT_ROOT_CODEX), "-C replaces the cwd as workspace");
	cr_assert_eq(count_writable(DT_ROOT_CODEX), 3);
	cr_assert_null(rs.codex_config_path, "no config.toml exists under this HOME");
	cr_assert_eq(other_warnings(), 0);
}

Test(roots, codex_add_dir_and_relative_cd)
{
	const char *argv[] = {"codex",           "--cd",      "proj/./sub", "-s",
	                      "workspace-write", "--add-dir", "../shared",  "--add-dir=/abs/dir",
	                      "--add-dir",       "~/notes",   NULL};
	struct launch o = {.cwd = "/home/u", .home = "/home/u"};

	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	must_find("/home/u/proj/sub", DT_ROOT_CODEX);
	/* Codex resolves --add-dir against the workspace, not the cwd */
	assert_str(must_find("/home/u/proj/shared", DT_ROOT_CODEX)->source,
	           "codex --add-dir ../shared");
	assert_str(must_find("/home/u/proj/shared", DT_ROOT_CODEX)->knob,
	           "codex --add-dir /home/u/proj/shared");
	must_find("/abs/dir", DT_ROOT_CODEX);
	must_find("/home/u/notes", DT_ROOT_CODEX);
	cr_assert_null(find("/home/u", DT_ROOT_CODEX));
}

Test(roots, codex_read_only_by_default_gives_no_roots)
{
	const char *argv[] = {"codex", "exec", "--add-dir", "/x", "look around", NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "read-only");
	cr_assert_eq(rs.n, 0, "read-only has no writable root, --add-dir included");
}

Test(roots, codex_explicit_read_only_and_bypass)
{
	const char *ro[] = {"codex", "--sandbox=read-only", NULL};
	const char *yolo[] = {"codex", "exec",      "--dangerously-bypass-approvals-and-sandbox",
	                      "-s",    "read-only", "x",
	                      NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, ro);
	assert_str(rs.codex_sandbox_mode, "read-only");
	cr_assert_eq(rs.n, 0);
	codex(&o, yolo);
	assert_str(rs.codex_sandbox_mode, "danger-full-access");
	cr_assert_eq(rs.n, 0, "no sandbox: nothing to list");
}

Test(roots, codex_config_roots_exclusions_and_knobs)
{
	const char *cfg =
	    write_file("codexhome/config.toml", "sandbox_mode = \"workspace-write\"\n"
	                                        "[sandbox_workspace_write]\n"
	                                        "writable_roots = [\"/data/a\", \"rel\", \"~/b\"]\n"
	                                        "exclude_slash_tmp = true\n"
	                                        "exclude_tmpdir_env_var = true\n"
	                                        "network_access = false\n");
	const char *argv[] = {"codex", NULL};
	struct launch o = {.cwd = "/work",
	                   .home = "/home/u",
	                   .codex_home = tmp_path("codexhome"),
	                   .tmpdir = "/var/tmp"};
	char want[PATH_MAX + 64];
	const struct dt_root *a;

	codex(&o, argv);
	assert_str(rs.codex_config_path, cfg);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	a = must_find("/data/a", DT_ROOT_CODEX);
	snprintf(want, sizeof(want), "writable_roots in %s", cfg);
	assert_str(a->knob, want);
	snprintf(want, sizeof(want), "%s [sandbox_workspace_write] writable_roots", cfg);
	assert_str(a->source, want);
	/* relative to the config's directory, "~" from HOME */
	must_find(tmp_path("codexhome/rel"), DT_ROOT_CODEX);
	must_find("/home/u/b", DT_ROOT_CODEX);
	must_find("/work", DT_ROOT_CODEX);
	cr_assert_null(find("/tmp", DT_ROOT_CODEX), "exclude_slash_tmp");
	cr_assert_null(find("/var/tmp", DT_ROOT_CODEX), "exclude_tmpdir_env_var");
	cr_assert_null(rs.codex_override);
}

Test(roots, codex_exclude_slash_tmp_from_dotted_override)
{
	const char *argv[] = {"codex",
	                      "-s",
	                      "workspace-write",
	                      "-c",
	                      "sandbox_workspace_write.exclude_slash_tmp=true",
	                      NULL};
	struct launch o = {.cwd = "/work", .tmpdir = "/var/tmp"};

	codex(&o, argv);
	cr_assert_null(find("/tmp", DT_ROOT_CODEX));
	must_find("/var/tmp", DT_ROOT_CODEX);
	cr_assert_null(rs.codex_override, "not a writable_roots override");
}

Test(roots, codex_override_replaces_config_roots_and_marks_dropped)
{
	const char *cfg = write_file("ch/config.toml", "[sandbox_workspace_write]\n"
	                                               "writable_roots = [\"/b\", \"/c\"]\n");
	const char *argv[] = {"codex", "exec",
	                      "-c",    "sandbox_mode=\"workspace-write\"",
	                      "-c",    "sandbox_workspace_write.writable_roots=[\"/a\", \"/c\"]",
	                      "go",    NULL};
	const char *text = "-c sandbox_workspace_write.writable_roots=[\"/a\", \"/c\"]";
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};
	const struct dt_root *a, *b, *c;

	codex(&o, argv);
	assert_str(rs.codex_config_path, cfg);
	assert_str(rs.codex_override, text);
	a = must_find("/a", DT_ROOT_CODEX);
	assert_str(a->source, text);
	assert_str(a->knob, "the -c sandbox_workspace_write.writable_roots=[...] override");
	cr_assert_null(a->dropped_by);
	c = must_find("/c", DT_ROOT_CODEX);
	cr_assert_null(c->dropped_by, "/c is in the override too");
	b = must_find("/b", DT_ROOT_CODEX);
	assert_str(b->dropped_by, text);
	cr_assert_eq(b->granted, 0);
	assert_contains(b->source, cfg);
	cr_assert_null(find("/b/.git", DT_ROOT_CODEX), "a dropped root protects nothing");
	must_find("/a/.git", DT_ROOT_CODEX);
}

Test(roots, a_later_override_drops_the_roots_of_an_earlier_one)
{
	/* Hermes passes its board, then hcom its directory: the last -c wins */
	const char *argv[] = {
	    "codex", "sandbox",
	    "-c",    "sandbox_mode=\"workspace-write\"",
	    "-c",    "sandbox_workspace_write.writable_roots=[\"/board\"]",
	    "-c",    "sandbox_workspace_write.writable_roots=[\"/hcom\", \"/both\"]",
	    "-c",    "sandbox_workspace_write.network_access=false",
	    "--",    "worker",
	    NULL};
	const char *later = "-c sandbox_workspace_write.writable_roots=[\"/hcom\", \"/both\"]";
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	assert_str(rs.codex_override, later);
	const struct dt_root *board = must_find("/board", DT_ROOT_CODEX);
	assert_str(board->source, "-c sandbox_workspace_write.writable_roots=[\"/board\"]");
	assert_str(board->dropped_by, later);
	cr_assert_eq(board->granted, 0);
	cr_assert_null(must_find("/hcom", DT_ROOT_CODEX)->dropped_by);
	cr_assert_null(find("/board/.git", DT_ROOT_CODEX), "a dropped root protects nothing");
}

Test(roots, codex_table_override_merges_with_the_config_table)
{
	/* Codex 0.169 merges a table given with -c into the file's table: the
	 * file's writable_roots stay */
	write_file("ch/config.toml", "[sandbox_workspace_write]\n"
	                             "writable_roots = [\"/b\"]\n");
	const char *argv[] = {"codex",
	                      "-s",
	                      "workspace-write",
	                      "--config",
	                      "sandbox_workspace_write={ network_access = true }",
	                      NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};

	codex(&o, argv);
	const struct dt_root *b = must_find("/b", DT_ROOT_CODEX);
	cr_assert_null(b->dropped_by);
	cr_assert_null(rs.codex_override, "the list was not overridden");
	must_find("/b/.git", DT_ROOT_CODEX);
}

Test(roots, codex_table_override_that_holds_the_list_replaces_it)
{
	write_file("ch/config.toml", "[sandbox_workspace_write]\n"
	                             "writable_roots = [\"/b\"]\n");
	const char *argv[] = {"codex",
	                      "-s",
	                      "workspace-write",
	                      "-c",
	                      "sandbox_workspace_write={ writable_roots = [\"/a\"] }",
	                      NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};

	codex(&o, argv);
	must_find("/a", DT_ROOT_CODEX);
	assert_str(must_find("/b", DT_ROOT_CODEX)->dropped_by,
	           "-c sandbox_workspace_write={ writable_roots = [\"/a\"] }");
}

Test(roots, codex_dropped_root_stays_unless_a_mount_shows_it_writable)
{
	write_file("ch/config.toml", "[sandbox_workspace_write]\nwritable_roots = [\"/b\"]\n");
	const char *argv[] = {"codex",
	                      "-s",
	                      "workspace-write",
	                      "-c",
	                      "sandbox_workspace_write.writable_roots=[\"/a\"]",
	                      NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};
	struct dt_mount ro[] = {{"/", "ext4", 0}, {"/a", "ext4", 1}};
	struct dt_mount rw[] = {{"/", "ext4", 0}, {"/b", "ext4", 1}};
	struct dt_record p1 = process(10, ro, NMOUNTS(ro)), p2 = process(11, rw, NMOUNTS(rw));
	const struct dt_record *one[] = {&p1}, *both[] = {&p1, &p2};

	codex(&o, argv);
	dt_roots_mark_granted(&rs, NULL, 0);
	cr_assert_eq(must_find("/b", DT_ROOT_CODEX)->granted, 0, "no facts: still dropped");
	cr_assert_eq(must_find("/a", DT_ROOT_CODEX)->granted, -1);
	dt_roots_mark_granted(&rs, one, 1);
	cr_assert_eq(must_find("/b", DT_ROOT_CODEX)->granted, 0);
	cr_assert_eq(must_find("/a", DT_ROOT_CODEX)->granted, 1);
	dt_roots_mark_granted(&rs, both, 2);
	cr_assert_eq(must_find("/b", DT_ROOT_CODEX)->granted, 1,
	             "a writable mount says the override did not apply");
}

Test(roots, codex_bare_override_value_is_a_string)
{
	const char *argv[] = {"codex", "-c", "sandbox_mode=workspace-write", NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	must_find("/work", DT_ROOT_CODEX);
}

Test(roots, codex_override_without_equals_is_refused)
{
	const char *argv[] = {"codex", "-s", "workspace-write", "-c", "sandbox_mode", NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	assert_contains(rs.codex_refused, "Invalid override (missing '='): sandbox_mode");
	cr_assert_null(rs.codex_sandbox_mode);
	cr_assert_eq(rs.n, 0);
}

/* Codex 0.169: -p NAME layers $CODEX_HOME/NAME.config.toml over config.toml;
 * -s and -c beat the layer (a -c list after a -c table adds to it). */
Test(roots, codex_profile_layer_sets_the_mode)
{
	write_file("ch/config.toml", "sandbox_mode = \"read-only\"\n");
	write_file("ch/work.config.toml", "sandbox_mode = \"workspace-write\"\n");
	write_file("ch/look.config.toml", "model = \"x\"\n");
	const char *with_p[] = {"codex", "-p", "work", NULL};
	const char *no_p[] = {"codex", NULL};
	const char *other[] = {"codex", "--profile=look", NULL};
	const char *flag[] = {"codex", "--profile", "work", "-s", "read-only", NULL};
	const char *c_top[] = {"codex", "-p", "work", "-c", "sandbox_mode=\"read-only\"", NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};

	codex(&o, no_p);
	assert_str(rs.codex_sandbox_mode, "read-only");
	cr_assert_null(rs.codex_profile_path);
	codex(&o, with_p);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	assert_str(rs.codex_profile_path, tmp_path("ch/work.config.toml"));
	cr_assert_eq(other_warnings(), 0);
	must_find("/work", DT_ROOT_CODEX);
	dt_rootset_free(&rs);
	codex(&o, other);
	assert_str(rs.codex_sandbox_mode, "read-only"); /* a layer without sandbox_mode */
	codex(&o, flag);
	assert_str(rs.codex_sandbox_mode, "read-only"); /* -s beats the layer */
	codex(&o, c_top);
	assert_str(rs.codex_sandbox_mode, "read-only"); /* and so does -c */
}

Test(roots, codex_profile_layer_replaces_the_list_and_marks_dropped)
{
	const char *cfg = write_file("ch/config.toml", "[sandbox_workspace_write]\n"
	                                               "writable_roots = [\"/b\", \"/c\"]\n");
	const char *lay =
	    write_file("ch/work.config.toml", "[sandbox_workspace_write]\n"
	                                      "writable_roots = [\"/a\", \"/c\", \"rel\"]\n");
	const char *argv[] = {"codex", "-p", "work", "-s", "workspace-write", NULL};
	const char *no_p[] = {"codex", "-s", "workspace-write", NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};
	char want[PATH_MAX + 64];
	const struct dt_root *a, *b, *c;

	codex(&o, argv);
	assert_str(rs.codex_config_path, cfg);
	assert_str(rs.codex_profile_path, lay);
	cr_assert_null(rs.codex_override, "no -c override");
	a = must_find("/a", DT_ROOT_CODEX);
	snprintf(want, sizeof(want), "%s [sandbox_workspace_write] writable_roots", lay);
	assert_str(a->source, want);
	snprintf(want, sizeof(want), "writable_roots in %s", lay);
	assert_str(a->knob, want);
	cr_assert_null(a->dropped_by);
	cr_assert_null(must_find("/c", DT_ROOT_CODEX)->dropped_by, "/c is in the layer too");
	/* relative to the layer's directory, $CODEX_HOME */
	must_find(tmp_path("ch/rel"), DT_ROOT_CODEX);
	b = must_find("/b", DT_ROOT_CODEX);
	assert_str(b->dropped_by, lay);
	cr_assert_eq(b->granted, 0);
	assert_contains(b->source, cfg);
	assert_str(b->knob, want);
	cr_assert_null(find("/b/.git", DT_ROOT_CODEX), "a dropped root protects nothing");
	must_find("/a/.git", DT_ROOT_CODEX);
	c = must_find("/c", DT_ROOT_CODEX);
	assert_contains(c->source, lay);

	/* the layer's relative roots follow the layer, not an explicit config */
	dt_rootset_free(&rs);
	o.config = write_file("elsewhere/config.toml", "\n");
	codex(&o, argv);
	must_find(tmp_path("ch/rel"), DT_ROOT_CODEX);
	o.config = NULL;

	/* without -p the layer is not read */
	dt_rootset_free(&rs);
	codex(&o, no_p);
	cr_assert_null(find("/a", DT_ROOT_CODEX));
	cr_assert_null(must_find("/b", DT_ROOT_CODEX)->dropped_by);
	cr_assert_null(rs.codex_profile_path);
}

Test(roots, codex_profile_layer_table_merges_with_the_config_table)
{
	const char *cfg = write_file("ch/config.toml", "[sandbox_workspace_write]\n"
	                                               "writable_roots = [\"/b\"]\n");
	write_file("ch/work.config.toml", "sandbox_mode = \"workspace-write\"\n"
	                                  "[sandbox_workspace_write]\n"
	                                  "exclude_slash_tmp = true\n");
	const char *argv[] = {"codex", "exec", "--profile", "work", "go", NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch"), .tmpdir = "/var/tmp"};
	const struct dt_root *b;

	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	b = must_find("/b", DT_ROOT_CODEX);
	cr_assert_null(b->dropped_by, "the layer holds no list: the file's stays");
	assert_contains(b->source, cfg);
	must_find("/b/.git", DT_ROOT_CODEX);
	cr_assert_null(find("/tmp", DT_ROOT_CODEX), "the layer's exclude_slash_tmp");
	must_find("/var/tmp", DT_ROOT_CODEX);
}

Test(roots, codex_override_beats_the_profile_layer)
{
	const char *cfg = write_file("ch/config.toml", "[sandbox_workspace_write]\n"
	                                               "writable_roots = [\"/b\"]\n");
	const char *lay = write_file("ch/work.config.toml", "sandbox_mode = \"read-only\"\n"
	                                                    "[sandbox_workspace_write]\n"
	                                                    "writable_roots = [\"/a\"]\n"
	                                                    "exclude_slash_tmp = true\n");
	const char *argv[] = {"codex",
	                      "-p",
	                      "work",
	                      "-c",
	                      "sandbox_mode=\"workspace-write\"",
	                      "-c",
	                      "sandbox_workspace_write={ exclude_slash_tmp = false }",
	                      "-c",
	                      "sandbox_workspace_write.writable_roots=[\"/o\"]",
	                      NULL};
	const char *text = "-c sandbox_workspace_write.writable_roots=[\"/o\"]";
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};
	const struct dt_root *a, *b, *ov;

	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	assert_str(rs.codex_override, text);
	ov = must_find("/o", DT_ROOT_CODEX);
	cr_assert_null(ov->dropped_by);
	assert_str(ov->source, text);
	a = must_find("/a", DT_ROOT_CODEX);
	assert_str(a->dropped_by, text);
	assert_contains(a->source, lay);
	b = must_find("/b", DT_ROOT_CODEX);
	assert_str(b->dropped_by, lay); /* the layer's list replaced it first */
	assert_contains(b->source, cfg);
	must_find("/tmp", DT_ROOT_CODEX); /* the -c table merged over the layer's */
}

Test(roots, codex_legacy_profiles_table_with_p_is_refused)
{
	write_file("ch/config.toml", "sandbox_mode = \"read-only\"\n"
	                             "[profiles.work]\n"
	                             "sandbox_mode = \"workspace-write\"\n");
	const char *argv[] = {"codex", "-p", "work", NULL};
	const char *p_other[] = {"codex", "-p", "other", NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};

	codex(&o, argv);
	assert_contains(rs.codex_refused, "[profiles.work]");
	assert_contains(rs.codex_refused, "work.config.toml");
	cr_assert_null(rs.codex_sandbox_mode);
	dt_rootset_free(&rs);

	/* another profile's legacy table is harmless */
	write_file("ch/other.config.toml", "\n");
	codex(&o, p_other);
	cr_assert_eq(other_warnings(), 0, "%s", rs.nwarnings ? rs.warnings[0] : "");
}

/* The ring's snapshot of the layer wins over the file as it is now; a ring
 * from `denytrace codex` without one had no layer at launch. */
Test(roots, codex_profile_layer_from_the_ring_snapshot)
{
	const char *cfg = write_file("ch/config.toml", "[sandbox_workspace_write]\n"
	                                               "writable_roots = [\"/b\"]\n");
	const char *lay = write_file("ch/work.config.toml", "sandbox_mode = \"read-only\"\n");
	const char *argv[] = {"codex", "-p", "work", NULL};
	static const char cfg_text[] = "[sandbox_workspace_write]\nwritable_roots = [\"/b\"]\n";
	static const char lay_text[] = "sandbox_mode = \"workspace-write\"\n"
	                               "[sandbox_workspace_write]\nwritable_roots = [\"/a\"]\n";
	struct dt_record csnap, lsnap;
	struct dt_codex_launch l = {.argv = argv,
	                            .argc = count(argv),
	                            .cwd = "/work",
	                            .home = empty_home(),
	                            .codex_home = tmp_path("ch")};
	char err[256];

	memset(&csnap, 0, sizeof(csnap));
	csnap.type = DT_REC_CONFIG;
	csnap.cfg_role = "codex";
	csnap.cfg_path = cfg;
	csnap.cfg_text = cfg_text;
	csnap.cfg_len = strlen(cfg_text);
	lsnap = csnap;
	lsnap.cfg_path = lay;
	lsnap.cfg_profile = "work";
	lsnap.cfg_text = lay_text;
	lsnap.cfg_len = strlen(lay_text);

	l.config_snapshot = &csnap;
	l.profile_snapshot = &lsnap;
	cr_assert_eq(dt_roots_from_codex(&rs, &l, NULL, err, sizeof(err)), 0, "%s", err);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	cr_assert(rs.codex_profile_recorded);
	assert_str(rs.codex_profile_path, lay);
	must_find("/a", DT_ROOT_CODEX);
	assert_str(must_find("/b", DT_ROOT_CODEX)->dropped_by, lay);
	dt_rootset_free(&rs);

	/* no snapshot of the layer beside the config's: none at launch */
	l.profile_snapshot = NULL;
	cr_assert_eq(dt_roots_from_codex(&rs, &l, NULL, err, sizeof(err)), 0, "%s", err);
	assert_str(rs.codex_sandbox_mode, "read-only");
	cr_assert_null(rs.codex_profile_path);
	cr_assert_eq(other_warnings(), 1);
	assert_contains(rs.warnings[0], "work.config.toml");
	dt_rootset_free(&rs);

	/* no ring at all: the file as it is now */
	l.config_snapshot = NULL;
	cr_assert_eq(dt_roots_from_codex(&rs, &l, NULL, err, sizeof(err)), 0, "%s", err);
	assert_str(rs.codex_sandbox_mode, "read-only");
	assert_str(rs.codex_profile_path, lay);
	cr_assert_not(rs.codex_profile_recorded);
}

Test(roots, codex_legacy_profile_key_is_refused)
{
	write_file("ch/config.toml", "profile = \"work\"\n"
	                             "[profiles.work]\n"
	                             "sandbox_mode = \"workspace-write\"\n");
	const char *argv[] = {"codex", NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};

	codex(&o, argv);
	assert_contains(rs.codex_refused,
	                "legacy `profile = \"work\"` config is no longer supported");
	cr_assert_null(rs.codex_sandbox_mode);
	cr_assert_eq(rs.n, 0);
}

Test(roots, codex_missing_profile_is_a_warning)
{
	const char *argv[] = {"codex", "-p", "nope", NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	cr_assert_eq(other_warnings(), 1);
	assert_contains(rs.warnings[0], "nope");
}

Test(roots, codex_trusted_project_defaults_to_workspace_write)
{
	write_file("ch/config.toml", "[projects.\"/srv/repo\"]\ntrust_level = \"trusted\"\n");
	const char *argv[] = {"codex", "exec", "x", NULL};
	struct launch o = {.cwd = "/srv/repo", .codex_home = tmp_path("ch")};

	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	must_find("/srv/repo", DT_ROOT_CODEX);
}

Test(roots, codex_trust_of_the_enclosing_git_repository_counts)
{
	char cfg[PATH_MAX + 64];
	const char *repo = tmp_path("repo");
	const char *argv[] = {"codex", NULL};
	struct launch o = {.cwd = tmp_path("repo/src/deep"), .codex_home = tmp_path("ch")};

	mkdir_p(tmp_path("repo/.git"));
	mkdir_p(tmp_path("repo/src/deep"));
	snprintf(cfg, sizeof(cfg), "[projects.\"%s\"]\ntrust_level = \"trusted\"\n", repo);
	write_file("ch/config.toml", cfg);
	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
}

Test(roots, codex_node_entry_point)
{
	const char *argv[] = {"node",
	                      "/usr/lib/node_modules/@openai/codex/bin/codex.js",
	                      "exec",
	                      "-s",
	                      "workspace-write",
	                      "-C",
	                      "/w",
	                      "task",
	                      NULL};
	struct launch o = {.cwd = "/"};

	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	must_find("/w", DT_ROOT_CODEX);
	cr_assert_null(find("/", DT_ROOT_CODEX));
}

Test(roots, codex_sandbox_ignores_the_commands_options)
{
	const char *argv[] = {"codex",     "sandbox",
	                      "-c",        "sandbox_mode=\"workspace-write\"",
	                      "--",        "sh",
	                      "-c",        "true",
	                      "-C",        "/evil",
	                      "--add-dir", "/evil2",
	                      "-s",        "danger-full-access",
	                      "-s",        "workspace-write",
	                      NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	must_find("/work", DT_ROOT_CODEX);
	cr_assert_null(find("/evil", DT_ROOT_CODEX));
	cr_assert_null(find("/evil2", DT_ROOT_CODEX));
	cr_assert_eq(other_warnings(), 0, "sh's -c must not be read as a Codex override");
}

Test(roots, codex_sandbox_ignores_sandbox_mode_from_config_toml)
{
	/* checked with Codex 0.169: `codex sandbox` is read-only unless -c
	 * sandbox_mode says otherwise, whatever config.toml says */
	write_file("ch/config.toml", "sandbox_mode = \"workspace-write\"\n"
	                             "[sandbox_workspace_write]\nwritable_roots = [\"/b\"]\n");
	const char *argv[] = {"codex", "sandbox", "--", "sh", "-c", "true", NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};

	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "read-only");
	cr_assert_null(find("/b", DT_ROOT_CODEX), "no writable roots in read-only mode");
	cr_assert_eq(other_warnings(), 1);
	assert_contains(rs.warnings[0], "codex sandbox ignores sandbox_mode");

	/* the same config under `codex exec` is workspace-write */
	dt_rootset_free(&rs);
	memset(&rs, 0, sizeof(rs));
	const char *exec_argv[] = {"codex", "exec", "go", NULL};
	codex(&o, exec_argv);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	must_find("/b", DT_ROOT_CODEX);
}

/* Codex 0.169 has no `codex sandbox linux`: the word is the command. */
Test(roots, codex_sandbox_takes_linux_as_the_command)
{
	const char *argv[] = {"codex",           "sandbox", "linux", "-s",
	                      "workspace-write", "sh",      "-c",    "sandbox_mode=\"read-only\"",
	                      "--add-dir",       "/evil",   NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	cr_assert_null(rs.codex_refused, "%s", rs.codex_refused);
	assert_str(rs.codex_sandbox_mode, "read-only"); /* no -c before the command */
	cr_assert_null(find("/evil", DT_ROOT_CODEX));
}

Test(roots, codex_protected_subpaths_are_readonly_subs)
{
	const char *argv[] = {"codex", "-s", "workspace-write", NULL};
	struct launch o = {.cwd = "/work"};
	const char *names[] = {".git", ".codex", ".agents", ".aws"};
	const struct dt_root *r;

	codex(&o, argv);
	for (size_t i = 0; i < 4; i++) {
		char p[64], src[128];

		snprintf(p, sizeof(p), "/work/%s", names[i]);
		snprintf(src, sizeof(src), "codex keeps %s read-only inside writable root /work",
		         names[i]);
		r = must_find(p, DT_ROOT_CODEX);
		cr_assert_eq(r->readonly_sub, 1, "%s", p);
		assert_str(r->source, src);
		cr_assert_null(r->knob);
	}
	must_find("/tmp/.git", DT_ROOT_CODEX);
	r = dt_root_for_path(&rs, "/work/.git/config", DT_EXPECTED_KINDS, 0);
	assert_str(r->path, "/work");
	r = dt_root_for_path(&rs, "/work/.git/config", DT_EXPECTED_KINDS, 1);
	assert_str(r->path, "/work/.git");
	r = dt_root_for_path(&rs, "/work/.github/x", DT_EXPECTED_KINDS, 1);
	assert_str(r->path, "/work");
}

Test(roots, codex_malformed_explicit_config_is_an_error_with_its_line)
{
	const char *cfg = write_file("bad.toml", "sandbox_mode = \"workspace-write\"\n"
	                                         "[sandbox_workspace_write\n");
	const char *argv[] = {"codex", "-s", "workspace-write", NULL};
	struct dt_codex_launch l = {.argv = argv, .argc = 2, .cwd = "/work", .home = "/nohome"};
	char err[512] = "";

	cr_assert_eq(dt_roots_from_codex(&rs, &l, cfg, err, sizeof(err)), -1);
	assert_contains(err, cfg);
	assert_contains(err, "line 2");
	cr_assert_eq(rs.n, 0, "nothing is derived from a config that cannot be read");
}

/* -2: missing or unreadable (exit 3), not -1: invalid (exit 4) */
Test(roots, codex_missing_explicit_config_is_an_error)
{
	const char *argv[] = {"codex", NULL};
	struct dt_codex_launch l = {.argv = argv, .argc = 1, .cwd = "/work"};
	char err[512] = "";

	cr_assert_eq(dt_roots_from_codex(&rs, &l, tmp_path("nope.toml"), err, sizeof(err)), -2);
	assert_contains(err, "nope.toml");
}

/* Codex 0.169 stops on a config.toml it cannot parse: nothing runs. */
Test(roots, codex_malformed_default_config_is_refused)
{
	write_file("ch/config.toml", "sandbox_mode = \n");
	const char *argv[] = {"codex", "-s", "workspace-write", NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};

	codex(&o, argv);
	assert_contains(rs.codex_refused, "Codex would refuse this command line");
	assert_contains(rs.codex_refused, "line 1");
	assert_contains(rs.codex_refused, tmp_path("ch/config.toml"));
	cr_assert_null(rs.codex_config_path);
	cr_assert_eq(rs.n, 0, "Codex started nothing: no roots");
}

Test(roots, codex_default_config_under_home)
{
	const char *cfg =
	    write_file("h/.codex/config.toml", "sandbox_mode = \"workspace-write\"\n");
	const char *argv[] = {"codex", NULL};
	struct launch o = {.cwd = "/work", .home = tmp_path("h")};

	codex(&o, argv);
	assert_str(rs.codex_config_path, cfg);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
}

/* ---- Hermes and hcom ---------------------------------------------------------------- */

Test(roots, hermes_db_pins_the_board_and_the_transport_grants_its_directory)
{
	const char *all[] = {"HERMES_KANBAN_DB=/h/kanban/boards/x/kanban.db",
	                     "HERMES_KANBAN_ROOT=/r", "HERMES_HOME=/hh", "PATH=/bin"};
	const struct dt_root *r;

	dt_roots_from_env(&rs, all, 4, 0);
	r = must_find("/h/kanban/boards/x", DT_ROOT_HERMES);
	assert_str(r->source, "HERMES_KANBAN_DB=/h/kanban/boards/x/kanban.db");
	assert_contains(r->knob, "HERMES_KANBAN_DB");
	cr_assert_eq(count_writable(DT_ROOT_HERMES), 1);
	cr_assert_eq(other_warnings(), 0);
}

/* hermes-agent's get_default_hermes_root: a HERMES_HOME outside ~/.hermes
 * is the root itself, and the default board is <root>/kanban.db, not
 * anything under <root>/kanban. */
Test(roots, hermes_home_alone_puts_the_default_board_at_its_top)
{
	const char *env[] = {"HOME=/home/u", "HERMES_HOME=/hh/"};
	const struct dt_root *r;

	dt_roots_from_env(&rs, env, 2, 0);
	r = must_find("/hh", DT_ROOT_HERMES);
	assert_contains(r->source, "HERMES_HOME=/hh/");
	assert_contains(r->source, "<root>/kanban.db");
	cr_assert_eq(rs.n, 1);
}

Test(roots, hermes_kanban_home_beats_hermes_home)
{
	const char *env[] = {"HOME=/home/u", "HERMES_HOME=/hh", "HERMES_KANBAN_HOME= /kh "};

	dt_roots_from_env(&rs, env, 3, 0);
	assert_contains(must_find("/kh", DT_ROOT_HERMES)->source, "HERMES_KANBAN_HOME=/kh");
	cr_assert_eq(rs.n, 1);
}

Test(roots, hermes_profile_homes_share_the_board_of_their_root)
{
	const char *under_native[] = {"HOME=/home/u", "HERMES_HOME=/home/u/.hermes/profiles/coder"};
	const char *custom[] = {"HOME=/home/u", "HERMES_HOME=/srv/hermes/profiles/coder"};

	dt_roots_from_env(&rs, under_native, 2, 0);
	must_find("/home/u/.hermes", DT_ROOT_HERMES);
	cr_assert_eq(rs.n, 1);
	dt_rootset_free(&rs);

	dt_roots_from_env(&rs, custom, 2, 0);
	assert_contains(must_find("/srv/hermes", DT_ROOT_HERMES)->source,
	                "a profile of /srv/hermes");
	cr_assert_eq(rs.n, 1);
}

Test(roots, hermes_named_board_only_while_it_exists)
{
	const char *kroot = tmp_path("kh");
	char env_kh[4200];
	const char *env[] = {"HOME=/home/u", env_kh, "HERMES_KANBAN_BOARD=Ops"};
	char want[4200];

	snprintf(env_kh, sizeof(env_kh), "HERMES_KANBAN_HOME=%s", kroot);
	dt_roots_from_env(&rs, env, 3, 0);
	must_find(kroot, DT_ROOT_HERMES); /* no such board: the default one */
	dt_rootset_free(&rs);

	write_file("kh/kanban/boards/ops/board.json", "{}\n");
	dt_roots_from_env(&rs, env, 3, 0);
	snprintf(want, sizeof(want), "%s/kanban/boards/ops", kroot);
	assert_contains(must_find(want, DT_ROOT_HERMES)->source, "board ops");
	cr_assert_eq(rs.n, 1);
}

Test(roots, hermes_current_board_file_names_the_board)
{
	const char *kroot = tmp_path("kc");
	char env_kh[4200], want[4200];
	const char *env[] = {"HOME=/home/u", env_kh};

	snprintf(env_kh, sizeof(env_kh), "HERMES_KANBAN_HOME=%s", kroot);
	write_file("kc/kanban/boards/night/kanban.db", "");
	write_file("kc/kanban/current", "night\n");
	dt_roots_from_env(&rs, env, 2, 0);
	snprintf(want, sizeof(want), "%s/kanban/boards/night", kroot);
	must_find(want, DT_ROOT_HERMES);
}

/* The transport's grant ($HERMES_HOME/kanban) and the board Hermes opens
 * ($HERMES_HOME/kanban.db) disagree: both are listed, and one line says so. */
Test(roots, hermes_transport_grant_that_misses_the_board_is_named)
{
	const char *env[] = {"HOME=/home/u", "HERMES_HOME=/hh", "HERMES_KANBAN_TASK=t1"};

	dt_roots_from_env(&rs, env, 3, 0);
	must_find("/hh", DT_ROOT_HERMES);
	assert_contains(must_find("/hh/kanban", DT_ROOT_HERMES)->source, "transport");
	cr_assert_eq(other_warnings(), 1);
	assert_contains(rs.warnings[0], "/hh/kanban.db");
	assert_contains(rs.warnings[0], "outside the granted root");
}

Test(roots, hermes_kanban_root_is_the_transport_grant)
{
	const char *env[] = {"HOME=/home/u", "HERMES_KANBAN_ROOT=/r", "HERMES_HOME=/hh"};

	dt_roots_from_env(&rs, env, 3, 0);
	assert_str(must_find("/r", DT_ROOT_HERMES)->source,
	           "HERMES_KANBAN_ROOT=/r (Hermes' Codex transport grant)");
	must_find("/hh", DT_ROOT_HERMES);
}

Test(roots, hermes_workspace_is_a_root_too)
{
	const char *env[] = {"HERMES_KANBAN_DB=/h/kanban.db", "HERMES_KANBAN_WORKSPACE=/ws/t1"};

	dt_roots_from_env(&rs, env, 2, 0);
	must_find("/h", DT_ROOT_HERMES);
	assert_str(must_find("/ws/t1", DT_ROOT_HERMES)->source, "HERMES_KANBAN_WORKSPACE=/ws/t1");
}

Test(roots, hermes_worker_without_paths_uses_the_default_home)
{
	const char *env[] = {"HOME=/home/u", "HERMES_KANBAN_TASK=t1"};

	dt_roots_from_env(&rs, env, 2, 0);
	must_find("/home/u/.hermes", DT_ROOT_HERMES);
	must_find("/home/u/.hermes/kanban", DT_ROOT_HERMES);
}

Test(roots, no_hermes_or_hcom_variables_no_roots)
{
	const char *env[] = {"HOME=/home/u", "PATH=/bin", "HCOMX=1"};

	dt_roots_from_env(&rs, env, 3, 0);
	cr_assert_eq(rs.n, 0);
}

Test(roots, hcom_dir_and_default)
{
	const char *dir[] = {"HOME=/home/u", "HCOM_DIR=/srv/hcom"};
	const char *other[] = {"HOME=/home/u", "HCOM_INSTANCE=abc"};
	const char *plain[] = {"HOME=/home/u"};
	const struct dt_root *r;

	dt_roots_from_env(&rs, dir, 2, 0);
	r = must_find("/srv/hcom", DT_ROOT_HCOM);
	assert_str(r->source, "HCOM_DIR=/srv/hcom");
	assert_str(r->knob, "HCOM_DIR (hcom passes it to codex as a writable root)");
	cr_assert_eq(rs.n, 1);
	dt_rootset_free(&rs);

	dt_roots_from_env(&rs, other, 2, 0);
	must_find("/home/u/.hcom", DT_ROOT_HCOM);
	dt_rootset_free(&rs);

	dt_roots_from_env(&rs, plain, 1, 0);
	cr_assert_eq(rs.n, 0, "no sign of hcom");
	dt_roots_from_env(&rs, plain, 1, 1);
	must_find("/home/u/.hcom", DT_ROOT_HCOM);
}

Test(roots, env_relative_path_uses_pwd)
{
	const char *env[] = {"PWD=/srv", "HCOM_DIR=state/hcom"};
	const char *nopwd[] = {"HCOM_DIR=state/hcom"};

	dt_roots_from_env(&rs, env, 2, 0);
	must_find("/srv/state/hcom", DT_ROOT_HCOM);
	dt_rootset_free(&rs);
	dt_roots_from_env(&rs, nopwd, 1, 0);
	cr_assert_eq(rs.n, 0);
	cr_assert_eq(other_warnings(), 1);
}

/* ---- effective roots ------------------------------------------------------------------ */

Test(roots, mounts_keep_real_writable_dirs_and_skip_pseudo_filesystems)
{
	struct dt_mount m[] = {
	    {"/", "ext4", 0},
	    {"/proc", "proc", 1},
	    {"/sys", "sysfs", 0},
	    {"/sys/fs/cgroup", "cgroup2", 1},
	    {"/dev", "tmpfs", 1},
	    {"/dev/shm", "tmpfs", 1},
	    {"/dev/pts", "devpts", 1},
	    {"/dev/null", "devtmpfs", 1},
	    {"/dev/mqueue", "mqueue", 1},
	    {"/proc/sys/fs/binfmt_misc", "binfmt_misc", 1},
	    {"/work", "ext4", 1},
	    {"/work/.git", "ext4", 0},
	    {"/tmp", "tmpfs", 1},
	    {"/run", "tmpfs", 1},
	    {"/run/user/1000", "tmpfs", 1},
	    {"/work", "ext4", 1},
	    {"/dev/data", "xfs", 1},
	    {"/usr", "ext4", 0},
	};
	struct dt_record p = process(42, m, NMOUNTS(m));
	const char *want[] = {"/work", "/tmp", "/run", "/run/user/1000", "/dev/data"};

	dt_roots_from_mounts(&rs, &p);
	cr_assert_eq(rs.n, 5);
	for (size_t i = 0; i < 5; i++) {
		const struct dt_root *r = must_find(want[i], DT_ROOT_EFFECTIVE);

		assert_str(r->source, "writable mount (pid 42)");
		cr_assert_eq(r->granted, 1);
		cr_assert_null(r->knob);
	}
}

Test(roots, mounts_include_a_writable_slash)
{
	struct dt_mount m[] = {{"/", "overlay", 1}, {"/proc", "proc", 1}};
	struct dt_record p = process(7, m, NMOUNTS(m));

	dt_roots_from_mounts(&rs, &p);
	cr_assert_eq(rs.n, 1);
	must_find("/", DT_ROOT_EFFECTIVE);
}

/* ---- granted ------------------------------------------------------------------------------ */

Test(roots, granted_when_a_sandboxed_process_has_it_writable)
{
	struct dt_mount m[] = {{"/", "ext4", 0}, {"/work", "ext4", 1}, {"/tmp", "tmpfs", 1}};
	struct dt_record p = process(5, m, NMOUNTS(m));
	const struct dt_record *procs[] = {&p};

	dt_roots_add(&rs, "/work/sub/db", DT_ROOT_EXPLICIT, "--root", NULL);
	dt_roots_add(&rs, "/work", DT_ROOT_EFFECTIVE, "writable mount (pid 5)", NULL)->granted = 1;
	dt_roots_mark_granted(&rs, procs, 1);
	cr_assert_eq(must_find("/work/sub/db", DT_ROOT_EXPLICIT)->granted, 1);
	cr_assert_eq(must_find("/work", DT_ROOT_EFFECTIVE)->granted, 1, "effective untouched");
}

Test(roots, not_granted_when_every_sandboxed_process_has_it_read_only)
{
	struct dt_mount m1[] = {{"/", "ext4", 0}, {"/work", "ext4", 1}};
	struct dt_mount m2[] = {{"/", "ext4", 0}, {"/tmp", "tmpfs", 1}};
	struct dt_mount host[] = {{"/", "ext4", 1}};
	struct dt_record p1 = process(1, m1, 2), p2 = process(2, m2, 2), p3 = process(3, host, 1);
	const struct dt_record *procs[] = {&p1, &p2, &p3};

	dt_roots_add(&rs, "/home/u/.hcom", DT_ROOT_HCOM, "HCOM_DIR=/home/u/.hcom", NULL);
	dt_roots_add(&rs, "/tmp/x", DT_ROOT_HCOM, "HCOM_DIR=/tmp/x", NULL);
	dt_roots_mark_granted(&rs, procs, 3);
	cr_assert_eq(must_find("/home/u/.hcom", DT_ROOT_HCOM)->granted, 0,
	             "an unsandboxed process writing there proves nothing");
	cr_assert_eq(must_find("/tmp/x", DT_ROOT_HCOM)->granted, 1);
}

Test(roots, read_only_sub_mount_is_not_granted)
{
	const char *argv[] = {"codex", "-s", "workspace-write", NULL};
	struct launch o = {.cwd = "/work"};
	/* as Codex's bwrap lays it out: rw root, ro .git over it */
	struct dt_mount m[] = {{"/", "ext4", 0},
	                       {"/work", "ext4", 1},
	                       {"/work/.git", "ext4", 0},
	                       {"/tmp", "tmpfs", 1}};
	struct dt_record p = process(9, m, NMOUNTS(m));
	const struct dt_record *procs[] = {&p};

	codex(&o, argv);
	dt_roots_mark_granted(&rs, procs, 1);
	cr_assert_eq(must_find("/work", DT_ROOT_CODEX)->granted, 1);
	cr_assert_eq(must_find("/work/.git", DT_ROOT_CODEX)->granted, 0);
	cr_assert_eq(must_find("/work/.codex", DT_ROOT_CODEX)->granted, 1,
	             "no ro mount there: writable in fact");
}

Test(roots, later_mount_at_the_same_place_decides)
{
	struct dt_mount m[] = {{"/", "ext4", 0}, {"/data", "ext4", 1}, {"/data", "ext4", 0}};
	struct dt_record p = process(9, m, NMOUNTS(m));
	const struct dt_record *procs[] = {&p};

	dt_roots_add(&rs, "/data", DT_ROOT_EXPLICIT, "--root", NULL);
	dt_roots_mark_granted(&rs, procs, 1);
	cr_assert_eq(rs.v[0].granted, 0);
}

Test(roots, unknown_without_a_sandboxed_process)
{
	struct dt_mount host[] = {{"/", "ext4", 1}, {"/work", "ext4", 1}};
	struct dt_mount none[] = {{"/work", "ext4", 1}};
	struct dt_record p = process(1, host, 2), q = process(2, none, 1);
	const struct dt_record *procs[] = {&p, &q};

	dt_roots_add(&rs, "/work", DT_ROOT_EXPLICIT, "--root", NULL);
	dt_roots_mark_granted(&rs, procs, 2);
	cr_assert_eq(rs.v[0].granted, -1);
	dt_roots_mark_granted(&rs, NULL, 0);
	cr_assert_eq(rs.v[0].granted, -1);
}

Test(roots, granted_follows_the_realpath_of_a_symlinked_root)
{
	char real[PATH_MAX];
	const char *link = tmp_path("link");
	struct dt_mount m[] = {{"/", "ext4", 0}, {real, "ext4", 1}};
	struct dt_record p = process(9, m, NMOUNTS(m));
	const struct dt_record *procs[] = {&p};

	mkdir_p(tmp_path("real"));
	cr_assert_not_null(realpath(tmp_path("real"), real));
	cr_assert_eq(symlink(real, link), 0);
	dt_roots_add(&rs, link, DT_ROOT_EXPLICIT, "--root", NULL);
	assert_str(rs.v[0].realpath, real);
	dt_roots_mark_granted(&rs, procs, 1);
	cr_assert_eq(rs.v[0].granted, 1);
}

/* ---- lookup ---------------------------------------------------------------------------------- */

Test(roots, root_for_path_takes_the_longest_prefix)
{
	dt_roots_add(&rs, "/", DT_ROOT_EFFECTIVE, "writable mount (pid 1)", NULL);
	dt_roots_add(&rs, "/srv", DT_ROOT_EXPLICIT, "--root", NULL);
	dt_roots_add(&rs, "/srv/kanban", DT_ROOT_HERMES, "HERMES_KANBAN_ROOT=/srv/kanban", NULL);
	dt_roots_add(&rs, "/srv/kan", DT_ROOT_HCOM, "HCOM_DIR=/srv/kan", NULL);

	assert_str(dt_root_for_path(&rs, "/srv/kanban/kanban.db", DT_EXPECTED_KINDS, 0)->path,
	           "/srv/kanban");
	assert_str(dt_root_for_path(&rs, "/srv/kanbanx/db", DT_EXPECTED_KINDS, 0)->path, "/srv");
	assert_str(dt_root_for_path(&rs, "/srv/kanban/kanban.db", 1u << DT_ROOT_EXPLICIT, 0)->path,
	           "/srv");
	cr_assert_null(dt_root_for_path(&rs, "/etc/passwd", DT_EXPECTED_KINDS, 0));
	assert_str(dt_root_for_path(&rs, "/etc/passwd", 1u << DT_ROOT_EFFECTIVE, 0)->path, "/");
	cr_assert_null(dt_root_for_path(&rs, "/srv/x", 0, 0));
}

Test(roots, root_for_path_matches_through_a_symlinked_root)
{
	char real[PATH_MAX], want[PATH_MAX + 16];
	const char *link = tmp_path("home-link");
	const struct dt_root *r;

	mkdir_p(tmp_path("data/home"));
	cr_assert_not_null(realpath(tmp_path("data/home"), real));
	cr_assert_eq(symlink(real, link), 0);
	dt_roots_add(&rs, link, DT_ROOT_HCOM, "HCOM_DIR", NULL);
	dt_roots_add(&rs, dtt_tmpdir(), DT_ROOT_EXPLICIT, "--root", NULL);
	snprintf(want, sizeof(want), "%s/hcom.db", real);
	r = dt_root_for_path(&rs, want, DT_EXPECTED_KINDS, 0);
	cr_assert_not_null(r);
	assert_str(r->path, link);
	snprintf(want, sizeof(want), "%s/hcom.db", link);
	assert_str(dt_root_for_path(&rs, want, DT_EXPECTED_KINDS, 0)->path, link);
}

Test(roots, codex_prompt_after_double_dash_is_not_an_option)
{
	const char *argv[] = {"codex", "exec",   "-s", "workspace-write", "--", "--add-dir=/evil",
	                      "-C",    "/evil2", NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	must_find("/work", DT_ROOT_CODEX);
	cr_assert_null(find("/evil", DT_ROOT_CODEX));
	cr_assert_null(find("/evil2", DT_ROOT_CODEX));
}

Test(roots, codex_override_key_and_value_may_be_spaced)
{
	const char *argv[] = {"codex",
	                      "-c",
	                      " sandbox_mode = \"workspace-write\" ",
	                      "-c",
	                      "sandbox_workspace_write.writable_roots = [ \"/k\" ] # board",
	                      NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	must_find("/k", DT_ROOT_CODEX);
	cr_assert_eq(other_warnings(), 0);
}

/* ---- Codex 0.169 as the real binary does it (see codex_shapes.def) -------------- */

/* Item 1 of issue 16: a -c table replaces what earlier -c flags set in it. */
Test(roots, a_c_table_wipes_what_earlier_c_flags_set_in_that_table)
{
	write_file("ch/config.toml", "[sandbox_workspace_write]\nwritable_roots = [\"/b\"]\n");
	const char *argv[] = {"codex", "sandbox",
	                      "-c",    "sandbox_mode=\"workspace-write\"",
	                      "-c",    "sandbox_workspace_write.writable_roots=[\"/a\"]",
	                      "-c",    "sandbox_workspace_write={network_access=true}",
	                      "--",    "sh",
	                      NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};

	codex(&o, argv);
	const struct dt_root *b = must_find("/b", DT_ROOT_CODEX);
	cr_assert_null(b->dropped_by, "config.toml's list applies again: %s", b->dropped_by);
	assert_str(must_find("/a", DT_ROOT_CODEX)->dropped_by,
	           "-c sandbox_workspace_write={network_access=true}");
	cr_assert_null(rs.codex_override, "no -c list decides");
}

/* Item 2: -P :workspace grants the workspace (-C), /tmp and $TMPDIR, and
 * says what it made irrelevant. */
Test(roots, permission_profile_workspace_grants_the_workspace_and_tmp_only)
{
	const char *argv[] = {"codex", "sandbox",
	                      "-C",    "/w2",
	                      "-P",    ":workspace",
	                      "-c",    "sandbox_mode=\"read-only\"",
	                      "-c",    "sandbox_workspace_write.writable_roots=[\"/a\"]",
	                      "--",    "sh",
	                      NULL};
	struct launch o = {.cwd = "/work", .tmpdir = "/var/tmp/t"};
	bool said = false;

	codex(&o, argv);
	cr_assert_null(rs.codex_refused, "%s", rs.codex_refused);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	assert_str(rs.codex_permission_profile, ":workspace");
	must_find("/w2", DT_ROOT_CODEX);
	must_find("/tmp", DT_ROOT_CODEX);
	must_find("/var/tmp/t", DT_ROOT_CODEX);
	cr_assert_null(find("/a", DT_ROOT_CODEX));
	cr_assert_null(find("/work", DT_ROOT_CODEX));
	for (size_t i = 0; i < rs.nwarnings; i++)
		said |= strstr(rs.warnings[i], "-P :workspace") &&
		        strstr(rs.warnings[i], "sandbox_mode") &&
		        strstr(rs.warnings[i], "writable_roots");
	cr_assert(said, "no warning that -P made sandbox_mode and writable_roots irrelevant");
}

/* Item 3: codex sandbox takes no --add-dir; Codex exits 2, nothing runs. */
Test(roots, codex_sandbox_with_add_dir_is_refused_and_lists_no_roots)
{
	const char *argv[] = {"codex", "sandbox", "--add-dir",
	                      "/a",    "-c",      "sandbox_mode=\"workspace-write\"",
	                      "--",    "sh",      NULL};
	const char *no_p[] = {"codex", "sandbox", "-C",
	                      "/w2",   "-c",      "sandbox_mode=\"workspace-write\"",
	                      "--",    "sh",      NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	assert_contains(rs.codex_refused, "Codex would refuse this command line");
	assert_contains(rs.codex_refused, "codex sandbox does not accept --add-dir");
	cr_assert_eq(rs.n, 0);
	cr_assert_null(rs.codex_sandbox_mode);
	dt_rootset_free(&rs);
	codex(&o, no_p);
	assert_contains(rs.codex_refused, "-C only with -P");
	cr_assert_eq(rs.n, 0);
}

/* Item 4: dropped_by names the -c that removed a list, never a root that
 * is granted. */
Test(roots, dropped_by_names_the_flag_that_removed_the_list)
{
	const char *argv[] = {"codex", "sandbox",
	                      "-c",    "sandbox_mode=\"workspace-write\"",
	                      "-c",    "sandbox_workspace_write.writable_roots=[\"/c\"]",
	                      "-c",    "sandbox_workspace_write.writable_roots=[\"/b\"]",
	                      "-c",    "sandbox_workspace_write={exclude_slash_tmp=true}",
	                      "--",    "sh",
	                      NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	assert_str(must_find("/c", DT_ROOT_CODEX)->dropped_by,
	           "-c sandbox_workspace_write.writable_roots=[\"/b\"]");
	assert_str(must_find("/b", DT_ROOT_CODEX)->dropped_by,
	           "-c sandbox_workspace_write={exclude_slash_tmp=true}");
	cr_assert_null(find("/tmp", DT_ROOT_CODEX), "the table excluded /tmp");
	for (size_t i = 0; i < rs.n; i++)
		cr_assert(!rs.v[i].dropped_by || rs.v[i].granted != 1, "%s granted and dropped",
		          rs.v[i].path);
}

/* --full-auto is gone in 0.169: every command line refuses it. */
Test(roots, codex_full_auto_is_refused)
{
	const char *argv[] = {"codex", "exec", "--full-auto", "task", NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	assert_contains(rs.codex_refused, "--full-auto");
	cr_assert_eq(rs.n, 0);
}

/* -s before `sandbox` belongs to the TUI: codex sandbox runs read-only. */
Test(roots, tui_options_before_sandbox_are_ignored_with_a_warning)
{
	const char *argv[] = {"codex", "-s", "workspace-write", "--add-dir", "/a", "sandbox", "--",
	                      "sh",    NULL};
	struct launch o = {.cwd = "/work"};

	codex(&o, argv);
	cr_assert_null(rs.codex_refused, "%s", rs.codex_refused);
	assert_str(rs.codex_sandbox_mode, "read-only");
	cr_assert_eq(rs.n, 0);
	cr_assert_eq(other_warnings(), 2);
	assert_contains(rs.warnings[0], "codex sandbox ignores -s given before `sandbox`");
	assert_contains(rs.warnings[1], "--add-dir");
}

/* Which options each command line takes, as Codex 0.169 answered with
 * "unexpected argument" (exit 2) or not: -P is codex sandbox's alone, exec
 * has no -a, app-server no -C or --add-dir. */
Test(roots, each_subcommand_refuses_the_options_it_does_not_take)
{
	static const struct {
		const char *argv[8];
		const char *says; /* NULL: Codex starts */
	} cases[] = {
	    {{"codex", "exec", "-P", ":workspace", "task"}, "codex exec does not accept -P"},
	    {{"codex", "-P", ":workspace"}, "does not accept -P"},
	    {{"codex", "exec", "-a", "never", "task"}, "codex exec does not accept -a"},
	    {{"codex", "app-server", "--add-dir", "/x"},
	     "codex app-server does not accept --add-dir"},
	    {{"codex", "app-server", "-C", "/x"}, "codex app-server does not accept -C"},
	    {{"codex", "exec", "-s", "workspace-write", "--add-dir", "/x", "task"}, NULL},
	    {{"codex", "-a", "never", "-C", "/w", "--add-dir", "/x"}, NULL},
	    {{"codex", "review", "-c", "x=1", "--whatever"}, NULL},
	};
	struct launch o = {.cwd = "/work"};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		memset(&rs, 0, sizeof(rs));
		codex(&o, cases[i].argv);
		if (cases[i].says)
			assert_contains(rs.codex_refused, cases[i].says);
		else
			cr_assert_null(rs.codex_refused, "%s: %s", cases[i].argv[1],
			               rs.codex_refused);
		dt_rootset_free(&rs);
	}
}

Test(roots, advice_for_app_server_names_no_add_dir)
{
	write_file("ch/config.toml", "sandbox_mode = \"workspace-write\"\n");
	const char *argv[] = {"codex", "app-server", "--listen", "stdio://", NULL};
	struct launch o = {.cwd = "/work", .codex_home = tmp_path("ch")};
	char hint[512];

	codex(&o, argv);
	cr_assert_null(rs.codex_refused, "%s", rs.codex_refused);
	assert_str(rs.codex_sandbox_mode, "workspace-write");
	dt_codex_grant_hint(&rs, "/x", hint, sizeof(hint));
	cr_assert_null(strstr(hint, "--add-dir"), "%s", hint);
	cr_assert_null(strstr(must_find("/work", DT_ROOT_CODEX)->knob, "--add-dir"));
}

/* ---- Codex versions (codex_versions.def) ------------------------------------ */

/* 1 when one of rs's warnings holds text. */
static int warned(const char *text)
{
	for (size_t i = 0; i < rs.nwarnings; i++)
		if (strstr(rs.warnings[i], text))
			return 1;
	return 0;
}

/* Command lines the two checked versions answer differently, as their
 * binaries did: 0.171 added --remote and --remote-auth-token-env to exec
 * (and exec resume, exec review) and two exec-server options; 0.169 exits
 * 2 on each ("unexpected argument"). */
Test(roots, each_version_takes_the_options_its_binary_takes)
{
	static const struct {
		const char *version;
		const char *argv[8];
		const char *says; /* NULL: Codex starts */
	} cases[] = {
	    {"codex-cli 0.171.0", {"codex", "exec", "--remote", "ws://h:1", "task"}, NULL},
	    {"codex-cli 0.171.0",
	     {"codex", "exec", "resume", "--remote-auth-token-env", "T"},
	     NULL},
	    {"codex-cli 0.169.0",
	     {"codex", "exec", "--remote", "ws://h:1", "task"},
	     "codex exec does not accept --remote in Codex 0.169.0"},
	    {"codex-cli 0.169.0",
	     {"codex", "exec", "review", "--remote-auth-token-env", "T"},
	     "does not accept --remote-auth-token-env in Codex 0.169.0"},
	    {"codex-cli 0.169.0", {"codex", "--remote", "ws://h:1"}, NULL},
	    {"codex-cli 0.171.0",
	     {"codex", "exec-server", "--tcp-upstream-proxy", "h:1",
	      "--linux-sandbox-transparent-tcp"},
	     NULL},
	    {"codex-cli 0.169.0",
	     {"codex", "exec-server", "--tcp-upstream-proxy", "h:1"},
	     "codex exec-server does not accept --tcp-upstream-proxy in Codex 0.169.0"},
	    {"codex-cli 0.171.0",
	     {"codex", "exec-server", "-P", ":workspace"},
	     "does not accept -P"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct launch o = {.cwd = "/work", .version = cases[i].version};

		memset(&rs, 0, sizeof(rs));
		codex(&o, cases[i].argv);
		if (cases[i].says)
			assert_contains(rs.codex_refused, cases[i].says);
		else
			cr_assert_null(rs.codex_refused, "case %zu: %s", i, rs.codex_refused);
		dt_rootset_free(&rs);
	}
}

/* 0.169: "unexpected argument '--transparent-tcp'"; 0.171 takes it and
 * stops: "--transparent-tcp requires a managed network proxy", with
 * --enable network_proxy too. Neither runs the command. */
Test(roots, sandbox_transparent_tcp_is_refused_by_both_versions_with_no_roots)
{
	const char *argv[] = {"codex",
	                      "sandbox",
	                      "--enable",
	                      "network_proxy",
	                      "--transparent-tcp",
	                      "-c",
	                      "sandbox_mode=\"workspace-write\"",
	                      "--",
	                      "true",
	                      NULL};
	const char *versions[] = {"codex-cli 0.169.0", "codex-cli 0.171.0", NULL};

	for (const char *const *v = versions; *v; v++) {
		struct launch o = {.cwd = "/work", .version = *v};

		memset(&rs, 0, sizeof(rs));
		codex(&o, argv);
		assert_contains(rs.codex_refused, "--transparent-tcp");
		cr_assert_eq(rs.n, 0, "%s: Codex runs nothing, yet %zu roots", *v, rs.n);
		dt_rootset_free(&rs);
	}
}

Test(roots, the_model_says_which_version_it_follows)
{
	const char *argv[] = {"codex", "exec", "task", NULL};
	struct launch o = {.cwd = "/work", .version = "codex-cli 0.169.0"};

	codex(&o, argv);
	assert_str(rs.codex_version, "0.169.0");
	cr_assert_eq(other_warnings(), 0, "an exact version needs no note: %s", rs.warnings[0]);
	dt_rootset_free(&rs);
	memset(&rs, 0, sizeof(rs));
	o.version = NULL;
	codex(&o, argv);
	assert_str(rs.codex_version, dt_codex_versions[dt_ncodex_versions - 1].name);
}

Test(roots, an_unchecked_version_is_modelled_as_the_nearest_older_one_and_said)
{
	char note[512];

	assert_str(dt_codex_version_pick("codex-cli 0.172.3", note, sizeof(note))->name, "0.171.0");
	assert_contains(note, "newer than");
	assert_str(dt_codex_version_pick("codex-cli 0.170.0", note, sizeof(note))->name, "0.169.0");
	assert_contains(note, "0.170.0");
	assert_str(dt_codex_version_pick("codex-cli 0.100.0", note, sizeof(note))->name, "0.169.0");
	assert_contains(note, "older than");
	assert_str(dt_codex_version_pick("codex-cli 0.171.0", note, sizeof(note))->name, "0.171.0");
	cr_assert_str_empty(note);
	assert_str(dt_codex_version_pick("garbage", note, sizeof(note))->name, "0.171.0");
	assert_contains(note, "garbage");
}

/* Codex compares CODEX_HOME with its temporary directory ($TMPDIR, else
 * /tmp) through symlinks: under it, "Refusing to create helper binaries
 * under temporary dir" (0.169 and 0.171); with TMPDIR elsewhere, /tmp is
 * fine. */
Test(roots, codex_home_inside_the_temporary_directory_is_warned_about)
{
	const char *argv[] = {"codex", "sandbox", "--", "true", NULL};
	const char *tmpd = tmp_path("T"), *home = tmp_path("T/ch"), *other = tmp_path("O");
	const char *link = tmp_path("link");

	mkdir_p(home);
	mkdir_p(other);
	cr_assert_eq(symlink(home, link), 0);
	struct launch o = {.cwd = "/work", .codex_home = link, .tmpdir = tmpd};
	codex(&o, argv);
	cr_assert(warned("Refusing to create helper binaries"), "no warning for %s", link);
	dt_rootset_free(&rs);
	memset(&rs, 0, sizeof(rs));
	o.tmpdir = other;
	codex(&o, argv);
	cr_assert(!warned("Refusing"), "CODEX_HOME outside TMPDIR=%s warned", other);
}

/* ---- Codex's project layer (DIR/.codex/config.toml) ---------------------------- */

/* A project at tmp W with its layer's writable_roots and config.toml's
 * trust line for trusted_dir ("" for none); returns the workspace. */
static const char *project(const char *layer_list, const char *trusted_dir, const char *level)
{
	char cfg[2 * PATH_MAX], layer[PATH_MAX + 64];

	snprintf(cfg, sizeof(cfg),
	         "[sandbox_workspace_write]\nwritable_roots = [\"%s\"]\n"
	         "%s%s%s%s%s",
	         tmp_path("A"), *trusted_dir ? "[projects.\"" : "", trusted_dir,
	         *trusted_dir ? "\"]\ntrust_level = \"" : "", *trusted_dir ? level : "",
	         *trusted_dir ? "\"\n" : "");
	write_file("ch/config.toml", cfg);
	snprintf(layer, sizeof(layer), "[sandbox_workspace_write]\nwritable_roots = [\"%s\"]\n",
	         layer_list);
	write_file("W/.codex/config.toml", layer);
	return tmp_path("W");
}

static const char *const workspace_write[] = {
    "codex", "sandbox", "-c", "sandbox_mode=\"workspace-write\"", "--", "true", NULL};

/* Seen with 0.169 and 0.171: a root listed only in a trusted project's
 * .codex/config.toml is writable, and the list replaces config.toml's; a
 * -c list made from the model's list (fix) must repeat it. */
Test(roots, a_trusted_projects_layer_replaces_the_config_list)
{
	const char *w = project(tmp_path("P"), tmp_path("W"), "trusted");
	struct launch o = {.cwd = w, .codex_home = tmp_path("ch")};

	codex(&o, workspace_write);
	cr_assert_null(must_find(tmp_path("P"), DT_ROOT_CODEX)->dropped_by);
	assert_contains(must_find(tmp_path("P"), DT_ROOT_CODEX)->source, "W/.codex/config.toml");
	assert_contains(must_find(tmp_path("A"), DT_ROOT_CODEX)->dropped_by,
	                "W/.codex/config.toml");
	cr_assert_eq(rs.ncodex_list, 1);
	assert_str(rs.codex_list[0], tmp_path("P"));
}

Test(roots, an_untrusted_or_unlisted_projects_layer_is_not_read)
{
	const char *levels[] = {"untrusted", NULL};

	for (const char *const *lv = levels;; lv++) {
		const char *w = project(tmp_path("P"), *lv ? tmp_path("W") : "", *lv ? *lv : "");
		struct launch o = {.cwd = w, .codex_home = tmp_path("ch")};

		memset(&rs, 0, sizeof(rs));
		codex(&o, workspace_write);
		cr_assert_null(find(tmp_path("P"), DT_ROOT_CODEX), "%s", *lv ? *lv : "no trust");
		cr_assert_null(must_find(tmp_path("A"), DT_ROOT_CODEX)->dropped_by);
		dt_rootset_free(&rs);
		if (!*lv)
			break;
	}
	memset(&rs, 0, sizeof(rs));
}

/* Seen with 0.169 and 0.171: the project layer beats the -p layer. */
Test(roots, the_project_layer_is_above_the_profile_layer_and_below_c)
{
	const char *w = project(tmp_path("P"), tmp_path("W"), "trusted");
	char prof[PATH_MAX + 64];
	snprintf(prof, sizeof(prof), "[sandbox_workspace_write]\nwritable_roots = [\"%s\"]\n",
	         tmp_path("B"));
	write_file("ch/p.config.toml", prof);
	const char *argv[] = {"codex", "sandbox", "-p",
	                      "p",     "-c",      "sandbox_mode=\"workspace-write\"",
	                      "--",    "true",    NULL};
	struct launch o = {.cwd = w, .codex_home = tmp_path("ch")};

	codex(&o, argv);
	cr_assert_null(must_find(tmp_path("P"), DT_ROOT_CODEX)->dropped_by);
	assert_contains(must_find(tmp_path("B"), DT_ROOT_CODEX)->dropped_by,
	                "W/.codex/config.toml");
}

/* In a git repository the project runs from its top down to the cwd:
 * with the top trusted every layer on the way is read, the deepest last;
 * with only the cwd trusted the top's layer is not (0.169, 0.171). */
Test(roots, a_repositorys_layers_follow_the_trust_of_each_directory_or_the_top)
{
	char sub[PATH_MAX + 64];
	project(tmp_path("P"), tmp_path("W"), "trusted");
	mkdir_p(tmp_path("W/.git"));
	snprintf(sub, sizeof(sub), "[sandbox_workspace_write]\nwritable_roots = [\"%s\"]\n",
	         tmp_path("B"));
	write_file("W/sub/.codex/config.toml", sub);
	struct launch o = {.cwd = tmp_path("W/sub"), .codex_home = tmp_path("ch")};

	codex(&o, workspace_write);
	cr_assert_null(must_find(tmp_path("B"), DT_ROOT_CODEX)->dropped_by);
	assert_contains(must_find(tmp_path("P"), DT_ROOT_CODEX)->dropped_by,
	                "W/sub/.codex/config.toml");
	dt_rootset_free(&rs);
	memset(&rs, 0, sizeof(rs));
	project(tmp_path("P"), tmp_path("W/sub"), "trusted");
	codex(&o, workspace_write);
	cr_assert_null(find(tmp_path("P"), DT_ROOT_CODEX), "the top's layer counted");
	cr_assert_null(must_find(tmp_path("B"), DT_ROOT_CODEX)->dropped_by);
}

/* The shape of codex doctor --json's sandbox check in 0.169 and 0.171:
 * "path N" holds "DIR (write)" or "DIR (read)"; "path N source" is not a
 * path; other checks' paths do not count. */
Test(roots, codex_doctor_write_paths_are_read_from_its_sandbox_check)
{
	static const char json[] =
	    "{\"checks\": {\"state.paths\": {\"details\": {\"path 1\": \"/state (write)\"}},"
	    "\"sandbox.filesystem_paths\": {\"details\": {"
	    "\"path 1\": \"/a b/\\\"q\\\" (write); path resolved (read/write access not tested)\","
	    "\"path 1 source\": \"effective filesystem policy (entry provenance unavailable)\","
	    "\"path 2\": \"/a/.git (read); missing (may be intentional)\","
	    "\"path 3\": \"/c (write); missing (may be intentional)\"},"
	    "\"remediation\": null}, \"x\": {\"details\": {\"path 1\": \"/late (write)\"}}}}";
	size_t n = 0;
	char **v = dt_codex_doctor_write_paths(json, &n);

	cr_assert_eq(n, 2);
	assert_str(v[0], "/a b/\"q\"");
	assert_str(v[1], "/c");
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The hint is a line to paste into a shell; the directory's name may be
 * the traced program's choice. */
Test(roots, codex_grant_hints_quote_the_directory_for_a_shell)
{
	struct dt_rootset hint = {0};
	char out[1024];
	hint.codex_add_dir_ok = 1;
	dt_codex_grant_hint(&hint, "/srv/a b $(touch pwned)", out, sizeof(out));
	cr_expect(strstr(out, "--add-dir '/srv/a b $(touch pwned)'"), "%s", out);
	hint.codex_add_dir_ok = 0;
	hint.codex_permission_profile = "workspace";
	dt_codex_grant_hint(&hint, "/srv/a b $(touch pwned)", out, sizeof(out));
	cr_expect(strstr(out, "-C '/srv/a b $(touch pwned)'"), "%s", out);
}
