/* SPDX-License-Identifier: MIT */
/*
 * One test per cause of `denytrace report`, each refusal produced for real:
 * by bubblewrap (read-only binds, a missing bind, a read-only re-bind of
 * .git, a file bound without its directory), by ordinary mode bits (a
 * non-root uid), or by another process's lock. Each test runs the worker
 * under `denytrace run`, builds the report with the report module (the code
 * behind `denytrace report`) and checks the cause, the root that should
 * have covered the path, where that root came from, and whether the sandbox
 * granted it. One test also runs the CLI and checks its JSON.
 *
 * Build and run from the repository root:
 *   make all helpers build/integration/test_causes && ./build/integration/test_causes
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "names.h"
#include "report.h"
#include "testlib.h"

#define PYTHON "/usr/bin/python3"

static char base[PATH_MAX]; /* this test's directory (under dtt_tmpdir) */
static char worker_py[PATH_MAX];

static void setup(void)
{
	snprintf(base, sizeof(base), "%s", dtt_tmpdir());
	const char *py = dtt_helper_script("hermes_worker.py");
	snprintf(worker_py, sizeof(worker_py), "%s", py ? py : "");
}

/* Paths given an inode flag (chattr +i, +a): cleared before the test's
 * directory is removed, which they would otherwise keep. */
static char flagged[4][PATH_MAX];

/* Sets or clears an inode flag (FS_IMMUTABLE_FL, FS_APPEND_FL) on path;
 * 0, or -1 when this filesystem has no such flags. */
static int set_inode_flag(const char *path, int flag, int on)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int v = 0, rc = -1;
	if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &v) == 0) {
		v = on ? v | flag : v & ~flag;
		rc = ioctl(fd, FS_IOC_SETFLAGS, &v);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static void teardown(void)
{
	for (size_t i = 0; i < sizeof(flagged) / sizeof(flagged[0]); i++)
		if (flagged[i][0]) {
			set_inode_flag(flagged[i], FS_IMMUTABLE_FL | FS_APPEND_FL, 0);
			flagged[i][0] = 0;
		}
	dtt_cleanup();
}

TestSuite(causes, .init = setup, .fini = teardown, .timeout = 120);

/* ---- helpers ------------------------------------------------------------ */

static void need_bwrap(void)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
}

static void need_python(void)
{
	if (access(PYTHON, X_OK) != 0)
		cr_skip_test("needs %s", PYTHON);
	if (!worker_py[0])
		cr_skip_test(
		    "tests/helpers/hermes_worker.py not found (run from the repository root)");
}

/* base/name, created as a directory when mkdir_it */
static const char *path_in(const char *name, int mkdir_it)
{
	static char bufs[16][PATH_MAX];
	static int k;
	char *b = bufs[k++ % 16];
	snprintf(b, PATH_MAX, "%s/%s", base, name);
	if (mkdir_it)
		cr_assert(mkdir(b, 0755) == 0, "mkdir %s", b);
	return b;
}

static int ends_with(const char *s, const char *suffix)
{
	if (!s || !suffix)
		return 0;
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

static int contains(const char *s, const char *what)
{
	return s && what && strstr(s, what);
}

/* The report module on one ring, as `denytrace report` builds it. */
static void build_report(struct dt_report *r, const char *ring, const char *const *roots,
                         size_t nroots, const char *codex_config, const char *codex_args, int all)
{
	static const char *rings[1];
	rings[0] = ring;
	char err[1024] = "";
	cr_assert_eq(dt_report_load(r, rings, 1, err, sizeof(err)), 0, "load %s: %s", ring, err);
	struct dt_report_opts o = {0};
	o.roots = roots;
	o.nroots = nroots;
	o.codex_config = codex_config;
	o.codex_args = codex_args;
	o.all = all;
	cr_assert_eq(dt_report_build(r, &o, err, sizeof(err)), 0, "build: %s", err);
}

/* The first shown group whose path ends with suffix (and op, if given). */
static const struct dt_report_group *group_for(const struct dt_report *r, const char *op,
                                               const char *suffix)
{
	for (size_t k = 0; k < r->ngroups; k++) {
		const struct dt_report_group *g = &r->groups[k];
		const struct dt_record *d = g->rep;
		if (g->hidden || (op && (!d->op || strcmp(d->op, op))))
			continue;
		if (ends_with(d->p[0].abspath, suffix) || ends_with(d->p[0].realpath, suffix))
			return g;
	}
	return NULL;
}

static const char *group_list(const struct dt_report *r)
{
	static char buf[8192];
	size_t n = 0;
	buf[0] = 0;
	for (size_t k = 0; k < r->ngroups && n < sizeof(buf); k++) {
		const struct dt_report_group *g = &r->groups[k];
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\n  %s %s %s -> %s%s", g->rep->op,
		                      g->path, dt_errno_name(g->rep->err),
		                      dt_cause_name(g->v.cause), g->hidden ? " (hidden)" : "");
	}
	return buf;
}

/* Cause, expected root (NULL: none), a substring of its source, granted. */
static void expect_verdict(const struct dt_report *r, const struct dt_report_group *g,
                           enum dt_cause cause, const char *root, const char *source, int granted)
{
	cr_assert_not_null(g, "no such refusal; groups:%s", group_list(r));
	cr_expect_str_eq(dt_cause_name(g->v.cause), dt_cause_name(cause), "%s: reason: %s", g->path,
	                 g->v.reason);
	if (!root) {
		cr_expect_null(g->v.root, "%s: expected no root, got %s", g->path,
		               g->v.root ? g->v.root->path : "");
		cr_expect_eq(g->v.granted, -1);
		return;
	}
	cr_assert_not_null(g->v.root, "%s: no expected root; reason: %s", g->path, g->v.reason);
	cr_expect_str_eq(g->v.root->path, root);
	cr_expect(contains(g->v.root->source, source), "root source \"%s\" does not mention \"%s\"",
	          g->v.root->source, source);
	cr_expect_eq(g->v.granted, granted, "%s: granted %d, want %d", g->path, g->v.granted,
	             granted);
}

/* The first refusal of the worker itself (not bubblewrap's own probing of
 * its new root while it sets the sandbox up). */
static const struct dt_record *first_worker_denial(const struct dt_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *d = &r->recs[i];
		const char *p = d->p[0].abspath ? d->p[0].abspath : d->p[0].path;
		if (d->type != DT_REC_DENIAL)
			continue;
		if (d->comm && !strcmp(d->comm, "bwrap") && p && !strncmp(p, "/newroot", 8))
			continue;
		return d;
	}
	return NULL;
}

/* bwrap --ro-bind / / [--bind B B]... [extra...] --dev /dev --proc /proc -- cmd... */
static void run_bwrap(struct dtt_run *r, const char *const *binds, const char *const *extra,
                      const char *const *cmd, const char *const *opts)
{
	const char *argv[96];
	size_t n = 0;
	argv[n++] = "bwrap";
	argv[n++] = "--ro-bind";
	argv[n++] = "/";
	argv[n++] = "/";
	for (const char *const *b = binds; b && *b; b++) {
		argv[n++] = "--bind";
		argv[n++] = *b;
		argv[n++] = *b;
	}
	for (const char *const *e = extra; e && *e; e++)
		argv[n++] = *e;
	argv[n++] = "--dev";
	argv[n++] = "/dev";
	argv[n++] = "--proc";
	argv[n++] = "/proc";
	argv[n++] = "--";
	for (const char *const *c = cmd; *c && n < 94; c++)
		argv[n++] = *c;
	argv[n] = NULL;
	cr_assert_eq(dtt_run(r, opts, argv, NULL), 0, "ring unreadable: %s", r->out);
}

static void init_board(const char *db, const char *mode)
{
	char env[PATH_MAX + 32];
	snprintf(env, sizeof(env), "HERMES_KANBAN_DB=%s", db);
	const char *argv[] = {PYTHON, worker_py, "--init", mode, NULL};
	const char *envv[] = {env, NULL};
	char out[4096];
	cr_assert_eq(dtt_system(out, sizeof(out), argv, envv), 0, "creating the board: %s", out);
	cr_assert(contains(out, mode), "journal_mode=%s not taken: %s", mode, out);
}

/* Runs `denytrace report --format json [args] RING` and has Python check
 * the JSON's top-level keys and print fields of the refusal of the path
 * ending with suffix: "cause|expected_root|root_source|granted|dropped_by|next". */
static void cli_json_denial(char *out, size_t cap, const char *ring, const char *const *args,
                            const char *suffix)
{
	char json[PATH_MAX + 16];
	snprintf(json, sizeof(json), "%s.json", ring);
	char cmd[8192];
	size_t n =
	    (size_t)snprintf(cmd, sizeof(cmd), "'%s/denytrace' report --format json", dtt_build());
	for (const char *const *a = args; a && *a; a++)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " '%s'", *a);
	snprintf(cmd + n, sizeof(cmd) - n, " '%s' > '%s'", ring, json);
	const char *sh[] = {"sh", "-c", cmd, NULL};
	char err[4096];
	cr_assert_eq(dtt_system(err, sizeof(err), sh, NULL), 0, "denytrace report failed: %s", err);
	static const char py[] =
	    "import json, sys\n"
	    "d = json.load(open(sys.argv[1]))\n"
	    "missing = [k for k in ('version', 'denials', 'roots', 'processes', 'summary') if k "
	    "not in d]\n"
	    "if missing:\n"
	    "    print('missing keys:', missing); sys.exit(1)\n"
	    "m = [x for x in d['denials'] if (x['realpath'] or x['abspath'] or "
	    "'').endswith(sys.argv[2])]\n"
	    "if not m:\n"
	    "    print('no denial for', sys.argv[2]); sys.exit(1)\n"
	    "x = m[0]\n"
	    "s = lambda v: 'null' if v is None else str(v).lower() if isinstance(v, bool) else "
	    "str(v)\n"
	    "print('|'.join(s(x[k]) for k in ('cause', 'expected_root', 'root_source', 'granted', "
	    "'dropped_by', 'next')), end='')\n";
	const char *argv[] = {PYTHON, "-c", py, json, suffix, NULL};
	cr_assert_eq(dtt_system(out, cap, argv, NULL), 0, "the report's JSON: %s", out);
}

/* ---- root-not-granted --------------------------------------------------- */

Test(causes, board_db_in_an_unbound_dir_is_root_not_granted_and_sqlite_reopens_read_only)
{
	need_bwrap();
	need_python();
	const char *ws = path_in("ws", 1);
	const char *board = path_in("board", 1);
	char db[PATH_MAX + 16], envdb[PATH_MAX + 32];
	snprintf(db, sizeof(db), "%s/kanban.db", board);
	snprintf(envdb, sizeof(envdb), "HERMES_KANBAN_DB=%s", db);
	init_board(db, "wal");

	struct dtt_run run;
	const char *binds[] = {ws, NULL};
	const char *cmd[] = {"env", envdb, PYTHON, worker_py, NULL};
	run_bwrap(&run, binds, NULL, cmd, NULL);
	cr_expect_eq(run.status, 3, "the worker should fail to report back: %s", run.out);
	cr_expect(contains(run.out, "error:"), "%s", run.out);
	cr_expect_not_null(dtt_find(&run, DT_REC_REOPEN, NULL, "/kanban.db"),
	                   "no read-only reopen of the db recorded");

	struct dt_report r;
	build_report(&r, run.ring, NULL, 0, NULL, NULL, 0);
	const struct dt_report_group *g = group_for(&r, NULL, "/kanban.db");
	expect_verdict(&r, g, DT_CAUSE_ROOT_NOT_GRANTED, board, "HERMES_KANBAN_DB", 0);
	cr_expect(g->rep->writes && contains(g->rep->op, "open"), "op %s", g->rep->op);
	cr_expect_str_eq(g->rep->sqlite, "db");
	cr_expect(contains(g->next, "reopened the database read-only"), "next: %s",
	          g->next ? g->next : "(null)");
	cr_expect(contains(g->v.advice, board), "advice: %s", g->v.advice);
	/* the db itself was refused: its -wal is the root's problem, not a
	 * side-file problem */
	const struct dt_report_group *wal = group_for(&r, NULL, "/kanban.db-wal");
	if (wal)
		expect_verdict(&r, wal, DT_CAUSE_ROOT_NOT_GRANTED, board, "HERMES_KANBAN_DB", 0);
	dt_report_free(&r);

	/* the CLI says the same in its JSON */
	char out[4096], want[4 * PATH_MAX];
	cli_json_denial(out, sizeof(out), run.ring, NULL, "/kanban.db");
	snprintf(want, sizeof(want), "root-not-granted|%s|HERMES_KANBAN_DB=%s|false|null|", board,
	         db);
	cr_expect(!strncmp(out, want, strlen(want)), "JSON says %s\nwant    %s...", out, want);
	cr_expect(contains(out, "reopened the database read-only"), "%s", out);
	dtt_free(&run);
}

Test(causes, hcom_first_refusal_is_the_chmod_of_hcom_dir_and_root_not_granted)
{
	need_bwrap();
	const char *ws = path_in("ws", 1);
	const char *hcom = path_in("hcom", 1);
	char db[PATH_MAX + 16], env[PATH_MAX + 16];
	snprintf(db, sizeof(db), "%s/hcom.db", hcom);
	FILE *f = fopen(db, "w");
	cr_assert_not_null(f);
	fclose(f);
	snprintf(env, sizeof(env), "HCOM_DIR=%s", hcom);

	struct dtt_run run;
	const char *binds[] = {ws, NULL};
	const char *cmd[] = {"env", env, dtt_helper("worker-hcom"), NULL};
	run_bwrap(&run, binds, NULL, cmd, NULL);
	cr_expect_eq(run.status, 3, "%s", run.out);

	struct dt_report r;
	build_report(&r, run.ring, NULL, 0, NULL, NULL, 0);
	const struct dt_record *first = first_worker_denial(&r);
	cr_assert_not_null(first, "no refusal recorded: %s", run.out);
	cr_expect_str_eq(first->op, "chmod");
	cr_expect_str_eq(first->p[0].abspath, hcom);
	cr_expect_str_eq(dt_errno_name(first->err), "EROFS");
	const struct dt_report_group *g = NULL;
	for (size_t k = 0; k < r.ngroups && !g; k++)
		if (r.groups[k].rep == first)
			g = &r.groups[k];
	expect_verdict(&r, g, DT_CAUSE_ROOT_NOT_GRANTED, hcom, "HCOM_DIR", 0);
	/* then the chmod 0600 of hcom.db and its open, same root */
	expect_verdict(&r, group_for(&r, "chmod", "/hcom.db"), DT_CAUSE_ROOT_NOT_GRANTED, hcom,
	               "HCOM_DIR", 0);
	dt_report_free(&r);
	dtt_free(&run);
}

/* ---- protected-path ------------------------------------------------------ */

Test(causes, git_config_under_a_read_only_rebind_inside_a_granted_root_is_protected_path)
{
	need_bwrap();
	const char *ws = path_in("ws", 1);
	const char *git = path_in("ws/.git", 1);
	char target[PATH_MAX + 16], script[2 * PATH_MAX];
	snprintf(target, sizeof(target), "%s/config", git);
	snprintf(script, sizeof(script), "echo ok > %s/ok && echo x > %s", ws, target);

	/* like Codex: the root writable, its .git re-bound read-only */
	struct dtt_run run;
	const char *binds[] = {ws, NULL};
	const char *extra[] = {"--ro-bind", git, git, NULL};
	const char *cmd[] = {"sh", "-c", script, NULL};
	run_bwrap(&run, binds, extra, cmd, NULL);
	cr_expect_neq(run.status, 0, "%s", run.out);

	struct dt_report r;
	const char *roots[] = {ws};
	build_report(&r, run.ring, roots, 1, NULL, NULL, 0);
	const struct dt_report_group *g = group_for(&r, NULL, "/.git/config");
	expect_verdict(&r, g, DT_CAUSE_PROTECTED_PATH, ws, "--root", 1);
	cr_expect(contains(g->v.reason, git), "reason: %s", g->v.reason);
	cr_expect_str_eq(dt_errno_name(g->rep->err), "EROFS");
	/* the write beside .git went through */
	cr_expect_null(group_for(&r, NULL, "/ws/ok"), "groups:%s", group_list(&r));
	dt_report_free(&r);
	dtt_free(&run);
}

/* ---- symlink-mismatch ---------------------------------------------------- */

Test(causes, write_through_a_symlink_leaving_the_granted_root_is_symlink_mismatch)
{
	need_bwrap();
	const char *ws = path_in("ws", 1);
	const char *shared = path_in("shared-board", 1); /* no root, not bound */
	char link[PATH_MAX + 16], logical[PATH_MAX + 32], real[PATH_MAX + 32];
	snprintf(link, sizeof(link), "%s/board", ws);
	cr_assert_eq(symlink(shared, link), 0);
	snprintf(logical, sizeof(logical), "%s/board/status", ws);
	snprintf(real, sizeof(real), "%s/status", shared);
	char script[2 * PATH_MAX];
	snprintf(script, sizeof(script), "echo done > %s", logical);

	struct dtt_run run;
	const char *binds[] = {ws, NULL};
	const char *cmd[] = {"sh", "-c", script, NULL};
	run_bwrap(&run, binds, NULL, cmd, NULL);
	cr_expect_neq(run.status, 0, "%s", run.out);

	struct dt_report r;
	const char *roots[] = {ws};
	build_report(&r, run.ring, roots, 1, NULL, NULL, 0);
	const struct dt_report_group *g = group_for(&r, NULL, "/status");
	cr_assert_not_null(g, "groups:%s", group_list(&r));
	cr_expect_str_eq(g->rep->p[0].abspath, logical);
	cr_expect_str_eq(g->rep->p[0].realpath, real);
	expect_verdict(&r, g, DT_CAUSE_SYMLINK_MISMATCH, ws, "--root", 1);
	cr_expect(contains(g->v.advice, shared), "advice: %s", g->v.advice);
	dt_report_free(&r);
	dtt_free(&run);
}

/* ---- sqlite-side-file ------------------------------------------------------ */

Test(causes, journal_beside_a_writable_db_in_a_read_only_dir_is_sqlite_side_file)
{
	need_bwrap();
	need_python();
	const char *ws = path_in("ws", 1);
	const char *board = path_in("board", 1);
	char db[PATH_MAX + 16], envdb[PATH_MAX + 32];
	snprintf(db, sizeof(db), "%s/kanban.db", board);
	snprintf(envdb, sizeof(envdb), "HERMES_KANBAN_DB=%s", db);
	init_board(db, "delete");

	/* the database file bound writable, its directory not */
	struct dtt_run run;
	const char *binds[] = {ws, db, NULL};
	const char *cmd[] = {"env", envdb, "HERMES_WORKER_JOURNAL=delete", PYTHON, worker_py, NULL};
	run_bwrap(&run, binds, NULL, cmd, NULL);
	cr_expect_eq(run.status, 3, "%s", run.out);

	struct dt_report r;
	build_report(&r, run.ring, NULL, 0, NULL, NULL, 0);
	cr_expect_null(group_for(&r, NULL, "/kanban.db"), "the db itself opened; groups:%s",
	               group_list(&r));
	const struct dt_report_group *g = group_for(&r, NULL, "/kanban.db-journal");
	expect_verdict(&r, g, DT_CAUSE_SQLITE_SIDE_FILE, board, "HERMES_KANBAN_DB", 0);
	cr_expect_str_eq(g->rep->sqlite, "journal");
	cr_expect(contains(g->v.reason, board), "reason: %s", g->v.reason);
	dt_report_free(&r);
	dtt_free(&run);
}

/* ---- outside-roots ------------------------------------------------------- */

Test(causes, write_where_nobody_planned_is_outside_roots)
{
	need_bwrap();
	const char *ws = path_in("ws", 1);
	const char *elsewhere = path_in("var-tmp", 1);
	char script[2 * PATH_MAX];
	snprintf(script, sizeof(script), "echo ok > %s/ok && echo x > %s/cache.bin", ws, elsewhere);

	struct dtt_run run;
	const char *binds[] = {ws, NULL};
	const char *cmd[] = {"sh", "-c", script, NULL};
	run_bwrap(&run, binds, NULL, cmd, NULL);

	struct dt_report r;
	const char *roots[] = {ws};
	build_report(&r, run.ring, roots, 1, NULL, NULL, 0);
	expect_verdict(&r, group_for(&r, NULL, "/var-tmp/cache.bin"), DT_CAUSE_OUTSIDE_ROOTS, NULL,
	               NULL, -1);
	dt_report_free(&r);
	dtt_free(&run);
}

/* ---- cross-mount ------------------------------------------------------------ */

/* Two granted binds of the same filesystem: rename between them is the
 * kernel's EXDEV (mv then copies), not a refusal of either root. */
Test(causes, rename_between_two_granted_binds_is_cross_mount)
{
	need_bwrap();
	const char *a = path_in("bind-a", 1);
	const char *b = path_in("bind-b", 1);
	char script[3 * PATH_MAX];
	snprintf(script, sizeof(script),
	         "echo x > %s/f && python3 -c 'import os,sys; os.rename(sys.argv[1], sys.argv[2])' "
	         "%s/f %s/f; exit 0",
	         a, a, b);

	struct dtt_run run;
	const char *binds[] = {a, b, NULL};
	const char *cmd[] = {"sh", "-c", script, NULL};
	run_bwrap(&run, binds, NULL, cmd, NULL);
	cr_assert_not_null(dtt_find(&run, DT_REC_DENIAL, "rename", "/bind-a/f"),
	                   "the EXDEV rename was not recorded: %s", run.out);

	struct dt_report r;
	const char *roots[] = {a, b};
	build_report(&r, run.ring, roots, 2, NULL, NULL, 0);
	const struct dt_report_group *g = group_for(&r, "rename", "/bind-a/f");
	cr_assert_not_null(g, "groups: %s", group_list(&r));
	cr_expect_eq(g->v.cause, DT_CAUSE_CROSS_MOUNT, "cause %s: %s", dt_cause_name(g->v.cause),
	             g->v.reason);
	dt_report_free(&r);
	dtt_free(&run);
}

/* ---- read-only-sandbox ----------------------------------------------------- */

Test(causes, sandbox_without_any_writable_bind_is_read_only_sandbox)
{
	need_bwrap();
	const char *ws = path_in("ws", 1);
	char script[2 * PATH_MAX];
	snprintf(script, sizeof(script), "echo x > %s/out", ws);

	struct dtt_run run;
	const char *cmd[] = {"sh", "-c", script, NULL};
	run_bwrap(&run, NULL, NULL, cmd, NULL);

	struct dt_report r;
	const char *roots[] = {ws};
	build_report(&r, run.ring, roots, 1, NULL, NULL, 0);
	expect_verdict(&r, group_for(&r, NULL, "/ws/out"), DT_CAUSE_READ_ONLY_SANDBOX, ws, "--root",
	               0);
	dt_report_free(&r);
	dtt_free(&run);
}

/* ---- file-permissions ------------------------------------------------------ */

Test(causes, non_root_user_in_a_0755_root_owned_dir_is_file_permissions)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to switch to uid 65534");
	if (access("/usr/bin/setpriv", X_OK) != 0)
		cr_skip_test("needs setpriv (util-linux)");
	/* uid 65534 must be able to reach the directory */
	cr_assert_eq(chmod(base, 0711), 0);
	const char *dir = path_in("perm", 1);
	cr_assert_eq(chmod(dir, 0755), 0);
	char script[2 * PATH_MAX];
	snprintf(script, sizeof(script), "echo x > %s/f", dir);

	struct dtt_run run;
	const char *argv[] = {
	    "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "sh", "-c", script,
	    NULL};
	cr_assert_eq(dtt_run(&run, NULL, argv, NULL), 0, "%s", run.out);
	cr_expect_neq(run.status, 0, "%s", run.out);

	struct dt_report r;
	const char *roots[] = {dir};
	build_report(&r, run.ring, roots, 1, NULL, NULL, 0);
	const struct dt_report_group *g = group_for(&r, NULL, "/perm/f");
	/* no sandbox at all: whether the root was granted is unknown */
	expect_verdict(&r, g, DT_CAUSE_FILE_PERMISSIONS, dir, "--root", -1);
	cr_expect_str_eq(dt_errno_name(g->rep->err), "EACCES");
	cr_expect_eq(g->rep->uid, 65534);
	cr_expect(contains(g->v.reason, "0755"), "reason: %s", g->v.reason);
	cr_expect(contains(g->v.reason, "65534"), "reason: %s", g->v.reason);
	dt_report_free(&r);
	dtt_free(&run);
}

/* ---- lock-contention ------------------------------------------------------- */

Test(causes, lock_held_by_another_process_is_lock_contention_shown_only_with_all)
{
	const char *dir = path_in("locks", 1);
	char file[PATH_MAX + 16];
	snprintf(file, sizeof(file), "%s/board.db", dir);

	struct dtt_run run;
	const char *opts[] = {"--all", NULL};
	const char *argv[] = {dtt_helper("worker-lock"), file, NULL};
	cr_assert_eq(dtt_run(&run, opts, argv, NULL), 0, "%s", run.out);
	cr_expect_eq(run.status, 0, "the contender did not meet the lock: %s", run.out);
	const struct dt_record *d = dtt_find(&run, DT_REC_DENIAL, NULL, "/board.db");
	cr_assert_not_null(d, "EAGAIN on F_SETLK not recorded under --all: %s", run.out);
	cr_expect(dt_op_is_lock(d->op), "op %s", d->op);
	cr_expect_str_eq(dt_errno_name(d->err), "EAGAIN");

	const char *roots[] = {dir};
	struct dt_report r;
	build_report(&r, run.ring, roots, 1, NULL, NULL, 0);
	cr_expect_null(group_for(&r, NULL, "/board.db"), "shown without --all; groups:%s",
	               group_list(&r));
	cr_expect_eq(r.hidden_denials, 1);
	cr_expect_eq(r.denials, 0);
	cr_expect_eq(r.by_cause[DT_CAUSE_LOCK_CONTENTION], 0);
	dt_report_free(&r);

	build_report(&r, run.ring, roots, 1, NULL, NULL, 1);
	const struct dt_report_group *g = group_for(&r, NULL, "/board.db");
	expect_verdict(&r, g, DT_CAUSE_LOCK_CONTENTION, dir, "--root", -1);
	cr_expect_eq(r.by_cause[DT_CAUSE_LOCK_CONTENTION], 1);
	dt_report_free(&r);
	dtt_free(&run);
}

/* ---- a Codex -c override that drops a config.toml root -------------------- */

Test(causes, config_root_dropped_by_a_c_override_is_root_not_granted_with_dropped_by)
{
	need_bwrap();
	const char *a = path_in("A", 1);
	const char *b = path_in("B", 1);
	const char *w = path_in("W", 1);
	char config[PATH_MAX + 16], args[2 * PATH_MAX], script[2 * PATH_MAX];
	snprintf(config, sizeof(config), "%s/config.toml", base);
	FILE *f = fopen(config, "w");
	cr_assert_not_null(f);
	fprintf(f,
	        "sandbox_mode = \"workspace-write\"\n\n[sandbox_workspace_write]\n"
	        "writable_roots = [\"%s\"]\n",
	        b);
	fclose(f);
	snprintf(args, sizeof(args), "exec -c 'sandbox_workspace_write.writable_roots=[\"%s\"]'",
	         a);

	/* the sandbox Codex builds from that: A (and the workspace), not B */
	snprintf(script, sizeof(script), "echo a > %s/f; echo b > %s/f", a, b);
	struct dtt_run run;
	const char *binds[] = {a, w, NULL};
	const char *cmd[] = {"sh", "-c", script, NULL};
	run_bwrap(&run, binds, NULL, cmd, NULL);

	struct dt_report r;
	build_report(&r, run.ring, NULL, 0, config, args, 0);
	cr_expect_str_eq(r.roots.codex_sandbox_mode, "workspace-write");
	const struct dt_root *rb = NULL, *ra = NULL;
	for (size_t i = 0; i < r.roots.n; i++) {
		if (r.roots.v[i].kind == DT_ROOT_CODEX && !strcmp(r.roots.v[i].path, b))
			rb = &r.roots.v[i];
		if (r.roots.v[i].kind == DT_ROOT_CODEX && !strcmp(r.roots.v[i].path, a))
			ra = &r.roots.v[i];
	}
	cr_assert_not_null(rb, "config.toml's root %s is not listed", b);
	cr_assert_not_null(ra, "the override's root %s is not listed", a);
	cr_expect(contains(rb->dropped_by, "sandbox_workspace_write.writable_roots"),
	          "dropped_by: %s", rb->dropped_by ? rb->dropped_by : "(null)");
	cr_expect_eq(rb->granted, 0);
	cr_expect_eq(ra->granted, 1);
	cr_expect_null(ra->dropped_by);

	const struct dt_report_group *g = group_for(&r, NULL, "/B/f");
	expect_verdict(&r, g, DT_CAUSE_ROOT_NOT_GRANTED, b, "config.toml", 0);
	cr_expect(contains(g->v.root->dropped_by, a), "dropped_by: %s", g->v.root->dropped_by);
	cr_expect(contains(g->v.advice, "override"), "advice: %s", g->v.advice);
	cr_expect_null(group_for(&r, NULL, "/A/f"), "groups:%s", group_list(&r));
	dt_report_free(&r);

	/* `denytrace roots --json` lists B with dropped_by */
	char cmdline[8 * PATH_MAX], out[16384];
	snprintf(
	    cmdline, sizeof(cmdline),
	    "'%s/denytrace' roots --json --codex-config '%s' --codex-args \"$DT_ARGS\" '%s' "
	    "| " PYTHON " -c 'import json,sys; rs=json.load(sys.stdin); "
	    "b=[x for x in rs if x[\"path\"]==sys.argv[1]]; "
	    "print(*((b[0][\"granted\"], b[0][\"dropped_by\"]) if b else (\"absent\",)))' '%s'",
	    dtt_build(), config, run.ring, b);
	char envargs[2 * PATH_MAX + 16];
	snprintf(envargs, sizeof(envargs), "DT_ARGS=%s", args);
	const char *sh[] = {"sh", "-c", cmdline, NULL};
	const char *env[] = {envargs, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), sh, env), 0, "%s", out);
	cr_expect(!strncmp(out, "False -c sandbox_workspace_write.writable_roots=", 48),
	          "roots: %s", out);
	dtt_free(&run);
}

/* ---- immutable-file --------------------------------------------------------- */

/* Gives path the flag (chattr +i or +a), or skips where the test's
 * filesystem keeps no inode flags (tmpfs before 6.0 among others). */
static void flag_or_skip(const char *path, int flag)
{
	size_t i = 0;
	while (i < sizeof(flagged) / sizeof(flagged[0]) - 1 && flagged[i][0])
		i++;
	snprintf(flagged[i], sizeof(flagged[i]), "%s", path);
	if (set_inode_flag(path, flag, 1) != 0)
		cr_skip_test("the filesystem of %s keeps no inode flags (FS_IOC_SETFLAGS: %s)",
		             path, strerror(errno));
}

/* `denytrace report --format json` of a ring, the refusal of the path
 * ending with suffix: "cause|missing_right|advice". */
static void cli_json_cause(char *out, size_t cap, const char *ring, const char *root,
                           const char *suffix)
{
	char cmd[4 * PATH_MAX];
	snprintf(cmd, sizeof(cmd), "'%s/denytrace' report --format json --root '%s' '%s'",
	         dtt_build(), root, ring);
	static const char py[] =
	    "import json, subprocess, sys\n"
	    "d = json.loads(subprocess.run(['sh', '-c', sys.argv[1]], capture_output=True, "
	    "check=True).stdout)\n"
	    "m = [x for x in d['denials'] if (x['abspath'] or x['realpath'] or "
	    "'').endswith(sys.argv[2])]\n"
	    "if not m:\n"
	    "    print('no denial for', sys.argv[2]); sys.exit(1)\n"
	    "f = [x for x in d['findings'] if x['cause'] == m[0]['cause']]\n"
	    "print(m[0]['cause'], m[0].get('missing_right'), f and f[0].get('missing_right'),"
	    " m[0]['advice'], sep='|', end='')\n";
	const char *argv[] = {PYTHON, "-c", py, cmd, suffix, NULL};
	cr_assert_eq(dtt_system(out, cap, argv, NULL), 0, "the report's JSON: %s", out);
}

Test(causes, write_to_an_immutable_file_as_root_without_a_sandbox_is_immutable_file)
{
	const char *dir = path_in("imm", 1);
	char file[PATH_MAX + 16], script[2 * PATH_MAX];
	snprintf(file, sizeof(file), "%s/status", dir);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	flag_or_skip(file, FS_IMMUTABLE_FL);
	snprintf(script, sizeof(script), "echo x > '%s'", file);

	struct dtt_run run;
	const char *argv[] = {"sh", "-c", script, NULL};
	cr_assert_eq(dtt_run(&run, NULL, argv, NULL), 0, "%s", run.out);
	cr_expect_neq(run.status, 0, "%s", run.out);
	const struct dt_record *d = dtt_find(&run, DT_REC_DENIAL, NULL, "/imm/status");
	cr_assert_not_null(d, "the refusal was not recorded: %s", run.out);
	cr_expect_str_eq(dt_errno_name(d->err), "EPERM");
	cr_expect(d->has_iflags && (d->iflags & FS_IMMUTABLE_FL), "inode flags not recorded");

	struct dt_report r;
	const char *roots[] = {dir};
	build_report(&r, run.ring, roots, 1, NULL, NULL, 0);
	const struct dt_report_group *g = group_for(&r, NULL, "/imm/status");
	cr_assert_not_null(g, "groups:%s", group_list(&r));
	cr_expect_str_eq(dt_cause_name(g->v.cause), "immutable-file", "reason: %s", g->v.reason);
	cr_expect_str_eq(g->v.subject, file);
	char want[PATH_MAX + 32];
	snprintf(want, sizeof(want), "chattr -i %s", file);
	cr_expect(contains(g->v.advice, want), "advice: %s", g->v.advice);
	dt_report_free(&r);
	dtt_free(&run);
}

Test(causes, write_to_an_immutable_file_as_uid_65534_is_immutable_file)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to switch to uid 65534");
	if (access("/usr/bin/setpriv", X_OK) != 0)
		cr_skip_test("needs setpriv (util-linux)");
	cr_assert_eq(chmod(base, 0711), 0);
	const char *dir = path_in("imm", 1);
	cr_assert_eq(chmod(dir, 0777), 0);
	char file[PATH_MAX + 16], script[2 * PATH_MAX];
	snprintf(file, sizeof(file), "%s/status", dir);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(chmod(file, 0666), 0);
	flag_or_skip(file, FS_IMMUTABLE_FL);
	snprintf(script, sizeof(script), "echo x > '%s'", file);

	struct dtt_run run;
	const char *argv[] = {
	    "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "sh", "-c", script,
	    NULL};
	cr_assert_eq(dtt_run(&run, NULL, argv, NULL), 0, "%s", run.out);
	cr_expect_neq(run.status, 0, "%s", run.out);

	struct dt_report r;
	const char *roots[] = {dir};
	build_report(&r, run.ring, roots, 1, NULL, NULL, 0);
	const struct dt_report_group *g = group_for(&r, NULL, "/imm/status");
	cr_assert_not_null(g, "groups:%s", group_list(&r));
	cr_expect_eq(g->rep->uid, 65534);
	cr_expect_str_eq(dt_cause_name(g->v.cause), "immutable-file", "reason: %s", g->v.reason);
	cr_expect(contains(g->v.advice, "chattr -i"), "advice: %s", g->v.advice);
	dt_report_free(&r);
	dtt_free(&run);
}

/* An append-only directory lets entries in, never out: rm is refused by
 * the directory's flag, and the advice names the directory and -a. */
Test(causes, removing_from_an_append_only_directory_is_immutable_file_naming_the_directory)
{
	need_python();
	const char *dir = path_in("log", 1);
	char file[PATH_MAX + 16], script[2 * PATH_MAX];
	snprintf(file, sizeof(file), "%s/old", dir);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	flag_or_skip(dir, FS_APPEND_FL);
	snprintf(script, sizeof(script), "rm -f '%s'", file);

	struct dtt_run run;
	const char *argv[] = {"sh", "-c", script, NULL};
	cr_assert_eq(dtt_run(&run, NULL, argv, NULL), 0, "%s", run.out);
	cr_expect_neq(run.status, 0, "%s", run.out);

	char out[8192], want[PATH_MAX + 64];
	cli_json_cause(out, sizeof(out), run.ring, dir, "/log/old");
	snprintf(want, sizeof(want), "chattr -a %s", dir);
	cr_expect(!strncmp(out, "immutable-file|", 15), "JSON: %s", out);
	cr_expect(contains(out, want), "JSON: %s", out);
	dtt_free(&run);
}

/* ---- a root that is itself a read-only mount -------------------------------- */

/* The named root bound read-only inside a writable bind of its parent: it
 * was not granted; nothing inside a granted root was protected. */
Test(causes, root_that_is_itself_a_read_only_bind_is_root_not_granted_in_roots_and_finding)
{
	need_bwrap();
	need_python();
	const char *top = path_in("top", 1);
	const char *board = path_in("top/board", 1);
	char script[2 * PATH_MAX];
	snprintf(script, sizeof(script), "echo x > '%s/status'", board);

	struct dtt_run run;
	const char *binds[] = {top, NULL};
	const char *extra[] = {"--ro-bind", board, board, NULL};
	const char *cmd[] = {"sh", "-c", script, NULL};
	run_bwrap(&run, binds, extra, cmd, NULL);
	cr_expect_neq(run.status, 0, "%s", run.out);

	struct dt_report r;
	const char *roots[] = {board};
	build_report(&r, run.ring, roots, 1, NULL, NULL, 0);
	const struct dt_report_group *g = group_for(&r, NULL, "/board/status");
	expect_verdict(&r, g, DT_CAUSE_ROOT_NOT_GRANTED, board, "--root", 0);
	dt_report_free(&r);

	/* the JSON's roots[] says the same of the root */
	char cmdline[4 * PATH_MAX], out[8192];
	snprintf(cmdline, sizeof(cmdline),
	         "'%s/denytrace' report --format json --root '%s' '%s' | " PYTHON
	         " -c 'import json,sys; d=json.load(sys.stdin); "
	         "r=[x for x in d[\"roots\"] if x[\"path\"]==sys.argv[1]]; "
	         "m=[x for x in d[\"denials\"] if x[\"abspath\"].endswith(\"/board/status\")]; "
	         "print(r[0][\"granted\"], m[0][\"cause\"], m[0][\"granted\"])' '%s'",
	         dtt_build(), board, run.ring, board);
	const char *sh[] = {"sh", "-c", cmdline, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
	cr_expect(!strncmp(out, "False root-not-granted False", 28), "roots/denial: %s", out);
	dtt_free(&run);
}

/* ---- landlock-refer ----------------------------------------------------------- */

/* Both directories writable, one mount: only Landlock's REFER right, which
 * an ABI 1 ruleset cannot grant, stands between them. mv copies instead. */
Test(causes, mv_between_directories_under_an_abi_1_landlock_ruleset_is_landlock_refer)
{
	need_python();
	if (!dtt_have_landlock())
		cr_skip_test("Landlock is not available here");
	const char *ws = path_in("ws", 1);
	path_in("ws/a", 1);
	path_in("ws/b", 1);
	char script[4 * PATH_MAX];
	snprintf(script, sizeof(script), "echo x > '%s/a/f' && mv '%s/a/f' '%s/b/f'", ws, ws, ws);

	struct dtt_run run;
	const char *argv[] = {dtt_helper("landlock-run"),
	                      "--abi",
	                      "1",
	                      "--rw",
	                      ws,
	                      "--rw",
	                      "/dev/null",
	                      "--",
	                      "sh",
	                      "-c",
	                      script,
	                      NULL};
	cr_assert_eq(dtt_run(&run, NULL, argv, NULL), 0, "%s", run.out);
	cr_expect_eq(run.status, 0, "mv falls back to copying: %s", run.out);
	const struct dt_record *d = dtt_find(&run, DT_REC_DENIAL, NULL, "/ws/a/f");
	cr_assert_not_null(d, "the EXDEV rename was not recorded: %s", run.out);
	cr_expect_str_eq(dt_errno_name(d->err), "EXDEV");

	struct dt_report r;
	const char *roots[] = {ws};
	build_report(&r, run.ring, roots, 1, NULL, NULL, 0);
	const struct dt_report_group *g = group_for(&r, NULL, "/ws/a/f");
	cr_assert_not_null(g, "groups:%s", group_list(&r));
	cr_expect_str_eq(dt_cause_name(g->v.cause), "landlock-refer", "reason: %s", g->v.reason);
	cr_expect(contains(g->v.advice, "REFER"), "advice: %s", g->v.advice);
	dt_report_free(&r);

	char out[8192];
	cli_json_cause(out, sizeof(out), run.ring, ws, "/ws/a/f");
	cr_expect(!strncmp(out, "landlock-refer|refer|refer|", 27), "JSON: %s", out);
	dtt_free(&run);
}
