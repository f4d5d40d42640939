/* SPDX-License-Identifier: MIT */
/* The fix computation: the bwrap and Codex command-line rewrites, and a
 * plan that never grants more than the findings' expected roots. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fix.h"
#include "roots.h"

static char *joined(const struct dt_argv *a)
{
	static char buf[4096];
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < a->n; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "", a->v[i]);
	return buf;
}

static void rewrite_bwrap(const char *const *argv, size_t argc, const char *dir, int want_rc,
                          const char *want)
{
	struct dt_argv a;
	char what[512];
	dt_argv_copy(&a, argv, argc);
	long at = dt_argv_find_bwrap(argv, argc);
	cr_assert_geq(at, 0);
	int rc = dt_bwrap_grant(&a, (size_t)at, dir, what, sizeof(what));
	cr_assert_eq(rc, want_rc, "rc %d: %s", rc, what);
	if (want)
		cr_assert_str_eq(joined(&a), want);
	cr_assert_null(a.v[a.n], "the vector stays NULL-terminated");
	dt_argv_free(&a);
}

Test(fix, a_bwrap_bind_goes_after_the_last_mount_above_the_root_and_before_mounts_inside_it)
{
	const char *argv[] = {"timeout", "60",   "bwrap", "--ro-bind", "/",       "/",
	                      "--bind",  "/w",   "/w",    "--ro-bind", "/b/.git", "/b/.git",
	                      "--dev",   "/dev", "--",    "python3",   "w.py"};
	rewrite_bwrap(argv, 17, "/b", 0,
	              "timeout 60 bwrap --ro-bind / / --bind /b /b --bind /w /w --ro-bind /b/.git "
	              "/b/.git --dev /dev -- python3 w.py");
}

Test(fix, a_read_only_bind_of_the_root_itself_becomes_a_writable_one)
{
	const char *argv[] = {"bwrap", "--ro-bind", "/", "/", "--ro-bind-try", "/b", "/b", "sh"};
	rewrite_bwrap(argv, 8, "/b", 0, "bwrap --ro-bind / / --bind-try /b /b sh");
}

Test(fix, a_bind_maps_the_root_through_the_mount_that_holds_it_from_the_host)
{
	const char *argv[] = {"bwrap", "--ro-bind", "/srv/host", "/h", "--chdir", "/h", "sh"};
	rewrite_bwrap(argv, 7, "/h/board", 0,
	              "bwrap --ro-bind /srv/host /h --bind /srv/host/board /h/board --chdir /h sh");
}

Test(fix, a_root_already_bound_writable_needs_no_change)
{
	const char *argv[] = {"bwrap", "--ro-bind", "/", "/", "--bind", "/b", "/b", "--", "sh"};
	rewrite_bwrap(argv, 9, "/b/sub", 1, "bwrap --ro-bind / / --bind /b /b -- sh");
}

Test(fix, an_unknown_bwrap_option_is_refused_rather_than_guessed)
{
	const char *argv[] = {"bwrap", "--ro-bind", "/", "/", "--frobnicate", "x", "sh"};
	rewrite_bwrap(argv, 7, "/b", -1, NULL);
}

Test(fix, a_bwrap_command_line_names_the_sources_of_its_writable_binds_only)
{
	const char *argv[] = {"/usr/bin/bwrap",
	                      "--ro-bind",
	                      "/",
	                      "/",
	                      "--bind",
	                      "/w",
	                      "/in",
	                      "--tmpfs",
	                      "/tmp",
	                      "--dev-bind-try",
	                      "/d",
	                      "/d",
	                      "--",
	                      "sh",
	                      "--bind",
	                      "/not",
	                      "/not"};
	const char *out[4];
	cr_assert_eq(dt_bwrap_writable_sources(argv, 17, out, 4), 2);
	cr_expect_str_eq(out[0], "/w", "the host side of the bind, not where it shows");
	cr_expect_str_eq(out[1], "/d");
}

Test(fix, a_command_line_that_is_not_bwrap_or_writes_unnamed_host_places_has_no_known_binds)
{
	const char *out[4];
	const char *wrapped[] = {"env", "bwrap", "--bind", "/w", "/w", "sh"};
	cr_expect_eq(dt_bwrap_writable_sources(wrapped, 6, out, 4), -1,
	             "a word before bwrap runs outside its sandbox");
	const char *fd[] = {"bwrap", "--bind-fd", "3", "/w", "sh"};
	cr_expect_eq(dt_bwrap_writable_sources(fd, 5, out, 4), -1);
	const char *overlay[] = {"bwrap", "--overlay", "/up", "/work", "/w", "sh"};
	cr_expect_eq(dt_bwrap_writable_sources(overlay, 6, out, 4), -1);
	const char *unknown[] = {"bwrap", "--frobnicate", "x", "sh"};
	cr_expect_eq(dt_bwrap_writable_sources(unknown, 4, out, 4), -1);
}

Test(fix, codex_gets_one_roots_override_after_its_last_c_in_place_of_every_earlier_one)
{
	const char *argv[] = {"env",
	                      "X=1",
	                      "codex",
	                      "-c",
	                      "sandbox_workspace_write.writable_roots=[\"/b\"]",
	                      "sandbox",
	                      "-c",
	                      "sandbox_mode=\"workspace-write\"",
	                      "--config=sandbox_workspace_write.writable_roots=[\"/a\"]",
	                      "--",
	                      "sh",
	                      "-c",
	                      "sandbox_workspace_write.writable_roots=[]"};
	struct dt_argv a;
	char what[512];
	dt_argv_copy(&a, argv, 13);
	long at = dt_argv_find_codex(argv, 13);
	cr_assert_eq(at, 2);
	const char *roots[] = {"/a", "/b"};
	cr_assert_eq(dt_codex_set_roots(&a, 2, roots, 2, 0, what, sizeof(what)), 0, "%s", what);
	cr_assert_str_eq(joined(&a),
	                 "env X=1 codex sandbox -c sandbox_mode=\"workspace-write\" -c "
	                 "sandbox_workspace_write.writable_roots=[\"/a\",\"/b\"] -- sh -c "
	                 "sandbox_workspace_write.writable_roots=[]");
	dt_argv_free(&a);
}

Test(fix, codex_without_any_c_gets_it_right_after_the_program_with_the_mode)
{
	const char *argv[] = {"/opt/codex", "sandbox", "--", "sh"};
	struct dt_argv a;
	char what[512];
	dt_argv_copy(&a, argv, 4);
	const char *roots[] = {"/b"};
	cr_assert_eq(dt_codex_set_roots(&a, 0, roots, 1, 1, what, sizeof(what)), 0);
	cr_assert_str_eq(joined(&a),
	                 "/opt/codex -c sandbox_workspace_write.writable_roots=[\"/b\"] "
	                 "-c sandbox_mode=\"workspace-write\" sandbox -- sh");
	dt_argv_free(&a);
}

/* A rootset as the report derives it for a Codex launch whose -c list
 * ["/a"] dropped config.toml's "/b". */
static void codex_rootset(struct dt_rootset *rs)
{
	memset(rs, 0, sizeof(*rs));
	dt_roots_add(rs, "/w", DT_ROOT_CODEX, "codex workspace (cwd)", NULL);
	dt_roots_add(rs, "/a", DT_ROOT_CODEX, "-c sandbox_workspace_write.writable_roots=[\"/a\"]",
	             NULL);
	struct dt_root *b = dt_roots_add(rs, "/b", DT_ROOT_CODEX, "config.toml", NULL);
	b->granted = 0;
	b->dropped_by = strdup("-c sandbox_workspace_write.writable_roots=[\"/a\"]");
	dt_roots_add(rs, "/c", DT_ROOT_HERMES, "HERMES_KANBAN_DB=/c/kanban.db", NULL);
	rs->codex_sandbox_mode = strdup("workspace-write");
	rs->codex_override = strdup("-c sandbox_workspace_write.writable_roots=[\"/a\"]");
	rs->codex_list = calloc(1, sizeof(char *));
	rs->codex_list[0] = strdup("/a");
	rs->ncodex_list = 1;
}

static const struct dt_root *root_of(const struct dt_rootset *rs, const char *path)
{
	for (size_t i = 0; i < rs->n; i++)
		if (!strcmp(rs->v[i].path, path))
			return &rs->v[i];
	return NULL;
}

Test(fix, the_roots_a_fix_grants_are_exactly_the_expected_roots_of_the_findings)
{
	struct dt_rootset rs;
	codex_rootset(&rs);
	const char *argv[] = {"codex", "sandbox",
	                      "-c",    "sandbox_workspace_write.writable_roots=[\"/a\"]",
	                      "--",    "sh"};
	struct dt_fix_launch l = {argv, 6, 0, "/w", &rs};
	struct dt_record d = {0};
	d.err = EROFS;
	d.op = "open";
	const struct dt_record *refs[] = {&d};
	struct dt_fix_problem p[] = {
	    {DT_CAUSE_ROOT_NOT_GRANTED, root_of(&rs, "/b"), 0, "/b", refs, 1, NULL},
	    {DT_CAUSE_OUTSIDE_ROOTS, NULL, -1, "/elsewhere", refs, 1, NULL},
	    {DT_CAUSE_ROOT_NOT_GRANTED, root_of(&rs, "/c"), 0, "/c", refs, 1, NULL},
	    {DT_CAUSE_PROTECTED_PATH, root_of(&rs, "/w"), 1, "/w/.git", refs, 1, NULL},
	};
	struct dt_fix_plan plan;
	dt_fix_plan_build(p, 4, &l, &plan);
	cr_assert_eq(plan.sandbox, DT_SB_CODEX);
	/* granted by the fixes, all together: /b and /c, the findings' roots,
	 * and /elsewhere, the one outside every root, as a candidate that the
	 * command line does not get (only the traced program named it, and it
	 * is not under /tmp) */
	size_t ngrants = 0;
	for (size_t i = 0; i < plan.n; i++)
		for (size_t g = 0; g < plan.fixes[i].ngrants; g++) {
			cr_assert(!strcmp(plan.fixes[i].grants[g],
			                  p[i].root ? p[i].root->path : p[i].subject),
			          "finding %zu grants %s, not its root", i,
			          plan.fixes[i].grants[g]);
			cr_assert_eq(plan.fixes[i].candidate, p[i].root == NULL);
			ngrants++;
		}
	cr_assert_eq(ngrants, 3);
	cr_assert_eq(plan.fixes[0].kind, DT_FIX_COMMAND_LINE);
	cr_assert_eq(plan.fixes[1].kind, DT_FIX_COMMAND_LINE, "no root: a candidate");
	cr_assert_not_null(strstr(plan.fixes[1].change, "candidate"));
	cr_assert_eq(plan.fixes[3].kind, DT_FIX_PROGRAM);
	cr_assert_not_null(strstr(plan.fixes[2].launcher, "HERMES_KANBAN_DB"));
	/* one -c holding the list it replaces and every grant */
	cr_assert_not_null(plan.argv);
	struct dt_argv a = {plan.argv, plan.argc};
	cr_assert_str_eq(joined(&a), "codex sandbox -c "
	                             "sandbox_workspace_write.writable_roots=[\"/a\",\"/b\","
	                             "\"/c\"] -- sh");
	cr_assert(plan.fixes[1].claimed, "the candidate is not marked the traced program's");
	/* a line to paste for /b does not grant /elsewhere unawares; the
	 * candidate's own line does */
	cr_assert_str_eq(plan.fixes[0].copy[0],
	                 "-c 'sandbox_workspace_write.writable_roots=[\"/a\",\"/b\",\"/c\"]'");
	cr_assert_str_eq(plan.fixes[1].copy[0],
	                 "-c 'sandbox_workspace_write.writable_roots=[\"/a\",\"/b\",\"/c\","
	                 "\"/elsewhere\"]'");
	dt_fix_plan_free(&plan);
	dt_rootset_free(&rs);
}

static struct dt_record mode_refusal(uint32_t pmode, uint32_t puid, uint32_t pgid, int64_t uid,
                                     int64_t gid)
{
	struct dt_record d = {0};
	d.err = EACCES;
	d.op = "open";
	d.writes = 1;
	d.uid = uid;
	d.gid = gid;
	d.p[0].abspath = "/srv/board/kanban.db-wal";
	d.p[0].has_st = 1;
	d.p[0].st.valid = DT_SF_PARENT | DT_SF_MOUNT;
	d.p[0].st.parent_mode = S_IFDIR | pmode;
	d.p[0].st.parent_uid = puid;
	d.p[0].st.parent_gid = pgid;
	return d;
}

/* The plan for a file-permissions refusal under root (NULL: no expected
 * root), launched from /work. */
static struct dt_fix_plan mode_plan_in(const struct dt_record *d, struct dt_rootset *rs,
                                       const char *root)
{
	static const struct dt_record *refs[1];
	static struct dt_fix_problem p;
	static struct dt_root r;
	const char *argv[] = {"python3", "w.py"};
	struct dt_fix_launch l = {argv, 2, 0, "/work", rs};
	refs[0] = d;
	r = (struct dt_root){.path = (char *)root, .kind = DT_ROOT_EXPLICIT, .granted = -1};
	p = (struct dt_fix_problem){
	    DT_CAUSE_FILE_PERMISSIONS, root ? &r : NULL, -1, "/srv/board", refs, 1, NULL, 0};
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	return plan;
}

static struct dt_fix_plan mode_plan(const struct dt_record *d, struct dt_rootset *rs)
{
	return mode_plan_in(d, rs, "/srv/board");
}

Test(fix, a_mode_fix_adds_only_the_missing_bits_of_the_class_the_process_is_in)
{
	struct dt_rootset rs = {0};
	struct dt_record d = mode_refusal(0555, 1000, 1000, 1000, 1000);
	struct dt_fix_plan plan = mode_plan(&d, &rs);
	cr_assert_eq(plan.fixes[0].kind, DT_FIX_OUTSIDE);
	cr_assert_str_eq(plan.fixes[0].copy[0], "chmod u+w /srv/board");
	cr_assert_eq(plan.fixes[0].disk.mode, 0755);
	dt_fix_plan_free(&plan);
	d = mode_refusal(0750, 0, 50, 1000, 50);
	plan = mode_plan(&d, &rs);
	cr_assert_str_eq(plan.fixes[0].copy[0], "chmod g+w /srv/board");
	dt_fix_plan_free(&plan);
}

Test(fix, another_users_directory_is_handed_to_the_uid_never_opened_to_everyone)
{
	struct dt_rootset rs = {0};
	struct dt_record d = mode_refusal(0755, 0, 0, 65534, 65534);
	struct dt_fix_plan plan = mode_plan(&d, &rs);
	cr_assert_str_eq(plan.fixes[0].copy[0], "chown 65534 /srv/board");
	for (size_t i = 0; i < plan.fixes[0].ncopy; i++) {
		cr_assert_null(strstr(plan.fixes[0].copy[i], "777"));
		cr_assert_null(strstr(plan.fixes[0].copy[i], "o+"));
	}
	for (size_t i = 0; i < plan.fixes[0].ncopy; i++)
		cr_assert_null(strstr(plan.fixes[0].copy[i], "uid 0"), "run as root: %s",
		               plan.fixes[0].copy[i]);
	/* --verify makes the same change on an overlay, with the launch as it was */
	cr_assert_str_eq(plan.fixes[0].disk.path, "/srv/board");
	cr_assert_eq(plan.fixes[0].disk.uid, 65534);
	cr_assert_eq(plan.fixes[0].disk.mode, -1);
	cr_assert(!plan.argv || plan.argv_for_disk, "the launch's command line was changed");
	dt_fix_plan_free(&plan);
}

Test(fix, a_mode_fix_outside_every_expected_root_is_refused_with_the_reason)
{
	struct dt_rootset rs = {0};
	struct dt_record d = mode_refusal(0755, 0, 0, 65534, 65534);
	struct dt_fix_plan plan = mode_plan_in(&d, &rs, NULL);
	cr_assert_eq(plan.fixes[0].kind, DT_FIX_NONE);
	cr_assert_eq(plan.fixes[0].ncopy, 0);
	cr_assert_not_null(strstr(plan.fixes[0].why, "no expected root"), "%s", plan.fixes[0].why);
	dt_fix_plan_free(&plan);
	/* the refused file is the root's parent's: above the root */
	plan = mode_plan_in(&d, &rs, "/srv/board/sub");
	cr_assert_eq(plan.fixes[0].kind, DT_FIX_NONE);
	cr_assert_not_null(strstr(plan.fixes[0].why, "outside the expected root"), "%s",
	                   plan.fixes[0].why);
	dt_fix_plan_free(&plan);
}

Test(fix, no_fix_touches_slash_system_directories_homes_or_what_holds_the_launch)
{
	const char *argv[] = {"sh"};
	struct dt_rootset rs = {0};
	struct dt_fix_launch l = {argv, 1, 0, "/work/ws/project", &rs};
	char buf[512];
	const char *no[] = {"/",      "/etc",     "/etc/hermes", "/usr/lib/x", "/bin",
	                    "/lib64", "/boot",    "/dev/shm",    "/proc/1",    "/sys/fs",
	                    "/root",  "/root/.x", "/var",        "/home",      "/srv",
	                    "/work",  "/work/ws", getenv("HOME")};
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		if (no[i] && (geteuid() != 0 || strncmp(no[i], "/root/", 6)))
			cr_expect_not_null(dt_fix_forbidden(no[i], &l, buf, sizeof(buf)),
			                   "%s allowed", no[i]);
	const char *yes[] = {"/srv/board",           "/var/lib/hermes", "/work/ws/project",
	                     "/work/ws/project/out", "/tmp/board",      "/opt/app/data"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		cr_expect_null(dt_fix_forbidden(yes[i], &l, buf, sizeof(buf)), "%s refused: %s",
		               yes[i], buf);
}

/* /srv/board flipped: 0755 on the successes, 0555 on the refusals. */
static struct dt_fix_plan flipping_plan(const struct dt_record *d, struct dt_rootset *rs,
                                        uint32_t now_mode, struct dt_difference *x)
{
	static const struct dt_record *refs[1];
	static struct dt_fix_problem p;
	const char *argv[] = {"python3", "w.py"};
	struct dt_fix_launch l = {argv, 2, 0, "/", rs};
	memset(x, 0, sizeof(*x));
	x->computed = 1;
	x->fact = "directory-mode";
	snprintf(x->subject, sizeof(x->subject), "/srv/board");
	x->ok.nvalues = 1;
	snprintf(x->ok.values[0], sizeof(x->ok.values[0]), "0755");
	snprintf(x->line, sizeof(x->line), "/srv/board/ was 0755 ... and 0555 ...");
	snprintf(x->changed, sizeof(x->changed), "changed from outside the traced processes");
	refs[0] = d;
	static struct dt_root r;
	r = (struct dt_root){.path = "/srv/board", .kind = DT_ROOT_EXPLICIT, .granted = -1};
	p = (struct dt_fix_problem){.cause = DT_CAUSE_FILE_PERMISSIONS,
	                            .root = &r,
	                            .granted = -1,
	                            .subject = "/srv/board",
	                            .refusals = refs,
	                            .nrefusals = 1,
	                            .diff = x};
	p.now.known = 1;
	p.now.mode = S_IFDIR | now_mode;
	p.now.uid = p.now.gid = 1000;
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	return plan;
}

Test(fix, a_directory_that_flips_and_is_writable_now_gets_no_chmod_that_changes_nothing)
{
	struct dt_rootset rs = {0};
	struct dt_difference x;
	struct dt_record d = mode_refusal(0555, 1000, 1000, 1000, 1000);
	struct dt_fix_plan plan = flipping_plan(&d, &rs, 0755, &x);
	const struct dt_fix *f = &plan.fixes[0];
	cr_assert_eq(f->kind, DT_FIX_OUTSIDE);
	cr_assert(strstr(f->change, "nothing to chmod: /srv/board is 0755"), "%s", f->change);
	for (size_t i = 0; i < f->ncopy; i++)
		cr_assert_null(strstr(f->copy[i], "chmod u+w"), "%s", f->copy[i]);
	cr_assert(strstr(f->why, "changed from outside the traced processes"), "%s", f->why);
	dt_fix_plan_free(&plan);

	/* read-only now: the chmod is right, and says the path flips */
	plan = flipping_plan(&d, &rs, 0555, &x);
	f = &plan.fixes[0];
	cr_assert_str_eq(f->copy[0], "chmod u+w /srv/board");
	cr_assert(strstr(f->copy[f->ncopy - 1], "it flips: changed from outside"), "%s",
	          f->copy[f->ncopy - 1]);
	dt_fix_plan_free(&plan);
}

Test(fix, a_redacted_or_cut_launch_cannot_be_rewritten)
{
	struct dt_rootset rs = {0};
	dt_roots_add(&rs, "/b", DT_ROOT_EXPLICIT, "--root", NULL);
	const char *argv[] = {"bwrap", "--ro-bind", "/", "/", "sh", "-c", "<redacted>"};
	struct dt_fix_launch l = {argv, 7, 0, "/", &rs};
	struct dt_record d = {0};
	d.err = EROFS;
	const struct dt_record *refs[] = {&d};
	struct dt_fix_problem p = {DT_CAUSE_ROOT_NOT_GRANTED, &rs.v[0], 0, "/b", refs, 1, NULL};
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	cr_assert_null(plan.argv);
	cr_assert_not_null(strstr(plan.no_rewrite, "redacted"));
	cr_assert_str_eq(plan.fixes[0].copy[0], "--bind /b /b", "the change is still said");
	dt_fix_plan_free(&plan);
	dt_rootset_free(&rs);
}

Test(fix, without_a_c_list_to_fix_codex_exec_gets_add_dir_after_its_subcommand)
{
	struct dt_rootset rs = {0};
	struct dt_root *b = dt_roots_add(&rs, "/b", DT_ROOT_HCOM, "HCOM_DIR=/b", NULL);
	b->granted = 0;
	rs.codex_sandbox_mode = strdup("workspace-write");
	rs.codex_add_dir_ok = 1;
	const char *argv[] = {"codex", "-s", "workspace-write", "exec", "write the board"};
	struct dt_fix_launch l = {argv, 5, 0, "/w", &rs};
	struct dt_record d = {0};
	d.err = EROFS;
	const struct dt_record *refs[] = {&d};
	struct dt_fix_problem p = {DT_CAUSE_ROOT_NOT_GRANTED, b, 0, "/b", refs, 1, NULL};
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	cr_assert_not_null(plan.argv, "%s", plan.no_rewrite ? plan.no_rewrite : "");
	struct dt_argv a = {plan.argv, plan.argc};
	cr_assert_str_eq(joined(&a), "codex -s workspace-write exec --add-dir /b write the board");
	cr_assert_str_eq(plan.fixes[0].copy[0], "--add-dir /b");
	cr_assert_not_null(strstr(plan.fixes[0].launcher, "HCOM_DIR=/b"));
	dt_fix_plan_free(&plan);
	dt_rootset_free(&rs);
}

Test(fix, a_landlock_refusal_gets_a_rule_with_the_rights_its_calls_needed_and_no_rerun)
{
	struct dt_rootset rs = {0};
	struct dt_root *b = dt_roots_add(&rs, "/b", DT_ROOT_EXPLICIT, "--root", NULL);
	const char *argv[] = {"python3", "w.py"};
	struct dt_fix_launch l = {argv, 2, 0, "/w", &rs};
	struct dt_record create = {0}, unlink_ = {0};
	create.err = unlink_.err = EACCES;
	create.op = "openat";
	unlink_.op = "unlink";
	const struct dt_record *refs[] = {&create, &unlink_};
	struct dt_fix_problem p = {DT_CAUSE_ROOT_NOT_GRANTED, b, -1, "/b", refs, 2, NULL};
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	cr_assert_eq(plan.fixes[0].kind, DT_FIX_OUTSIDE);
	cr_assert_eq(plan.fixes[0].sandbox, DT_SB_LANDLOCK);
	const char *rule = plan.fixes[0].copy[0];
	cr_assert_not_null(strstr(rule, "\"/b\""), "%s", rule);
	cr_assert_not_null(strstr(rule, "LANDLOCK_ACCESS_FS_MAKE_REG"), "%s", rule);
	cr_assert_not_null(strstr(rule, "LANDLOCK_ACCESS_FS_REMOVE_FILE"), "%s", rule);
	cr_assert_null(strstr(rule, "REMOVE_DIR"), "a right no call needed: %s", rule);
	cr_assert_null(plan.argv, "nothing to run: Landlock is not on the command line");
	dt_fix_plan_free(&plan);
	dt_rootset_free(&rs);
}

Test(fix, codex_started_by_a_launcher_gets_the_c_to_set_where_the_launcher_builds_it)
{
	struct dt_rootset rs;
	codex_rootset(&rs);
	const char *argv[] = {"hermes", "kanban", "work"};
	struct dt_fix_launch l = {argv, 3, 0, "/w", &rs};
	struct dt_record d = {0};
	d.err = EROFS;
	const struct dt_record *refs[] = {&d};
	struct dt_fix_problem p = {
	    DT_CAUSE_ROOT_NOT_GRANTED, root_of(&rs, "/c"), 0, "/c", refs, 1, NULL};
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	cr_assert_eq(plan.fixes[0].kind, DT_FIX_OUTSIDE, "not on the recorded command line");
	cr_assert_eq(plan.fixes[0].sandbox, DT_SB_CODEX);
	cr_assert_str_eq(plan.fixes[0].copy[0],
	                 "-c 'sandbox_workspace_write.writable_roots=[\"/a\",\"/c\"]'");
	cr_assert_not_null(strstr(plan.fixes[0].launcher, "HERMES_KANBAN_ROOT=/c"));
	cr_assert_null(plan.argv, "nothing to rewrite or run");
	dt_fix_plan_free(&plan);
	dt_rootset_free(&rs);
}

/* Issue 22: every line to paste stays one word per path, whatever the
 * path holds. */
static struct dt_fix_plan quoting_plan(struct dt_rootset *rs, const char *dir,
                                       const char *const *argv, size_t argc, int err)
{
	static struct dt_record d;
	static const struct dt_record *refs[1];
	static struct dt_fix_problem p;
	memset(rs, 0, sizeof(*rs));
	struct dt_root *b = dt_roots_add(rs, dir, DT_ROOT_EXPLICIT, "--root", NULL);
	struct dt_fix_launch l = {argv, argc, 0, "/w", rs};
	d = (struct dt_record){0};
	d.err = err;
	d.op = "openat";
	refs[0] = &d;
	p = (struct dt_fix_problem){DT_CAUSE_ROOT_NOT_GRANTED, b, 0, dir, refs, 1, NULL, 0};
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	return plan;
}

Test(fix, a_bwrap_bind_of_a_path_with_a_space_is_shell_quoted)
{
	struct dt_rootset rs;
	const char *argv[] = {"bwrap", "--ro-bind", "/", "/", "--", "sh"};
	struct dt_fix_plan plan = quoting_plan(&rs, "/home/u/my board", argv, 6, EROFS);
	cr_assert_eq(plan.fixes[0].ncopy, 1);
	cr_assert_str_eq(plan.fixes[0].copy[0], "--bind '/home/u/my board' '/home/u/my board'");
	cr_assert_not_null(plan.argv);
	dt_fix_plan_free(&plan);
	dt_rootset_free(&rs);
	/* a quote of its own, and a command substitution that must stay text */
	plan = quoting_plan(&rs, "/srv/it's $(id)", argv, 6, EROFS);
	cr_assert_str_eq(plan.fixes[0].copy[0],
	                 "--bind '/srv/it'\"'\"'s $(id)' '/srv/it'\"'\"'s $(id)'");
	dt_fix_plan_free(&plan);
	dt_rootset_free(&rs);
}

Test(fix, a_codex_root_is_toml_quoted_inside_a_shell_quoted_c)
{
	struct dt_rootset rs;
	const char *argv[] = {"codex", "sandbox", "--", "sh"};
	struct dt_fix_plan plan = quoting_plan(&rs, "/home/u/my \"board\"", argv, 4, EROFS);
	int seen = 0;
	for (size_t i = 0; i < plan.fixes[0].ncopy; i++)
		seen |= !strcmp(plan.fixes[0].copy[i],
		                "-c 'sandbox_workspace_write.writable_roots=[\"/home/u/my "
		                "\\\"board\\\"\"]'") ||
		        !strcmp(plan.fixes[0].copy[i], "--add-dir '/home/u/my \"board\"'");
	cr_assert(seen, "no quoted line: %s", plan.fixes[0].copy[0]);
	dt_fix_plan_free(&plan);
	dt_rootset_free(&rs);
}

Test(fix, a_landlock_rule_names_its_directory_as_one_c_string)
{
	struct dt_rootset rs;
	const char *argv[] = {"python3", "w.py"};
	struct dt_fix_plan plan = quoting_plan(&rs, "/srv/a\"b\\c", argv, 2, EACCES);
	cr_assert_eq(plan.fixes[0].sandbox, DT_SB_LANDLOCK);
	cr_assert_not_null(strstr(plan.fixes[0].copy[0], "open(\"/srv/a\\\"b\\\\c\", O_PATH)"),
	                   "%s", plan.fixes[0].copy[0]);
	dt_fix_plan_free(&plan);
	dt_rootset_free(&rs);
}

Test(fix, a_bind_whose_host_side_is_a_system_directory_is_refused)
{
	struct dt_rootset rs;
	const char *argv[] = {"bwrap", "--ro-bind", "/etc", "/data", "--", "sh"};
	struct dt_fix_plan plan = quoting_plan(&rs, "/data/board", argv, 6, EROFS);
	cr_assert_eq(plan.fixes[0].kind, DT_FIX_NONE);
	cr_assert_eq(plan.fixes[0].ngrants, 0);
	cr_assert_not_null(strstr(plan.fixes[0].why, "/etc is a system directory"), "%s",
	                   plan.fixes[0].why);
	for (size_t i = 0; plan.argv && i < plan.argc; i++)
		cr_assert_null(strstr(plan.argv[i], "/etc/board"), "the re-run binds /etc/board");
	dt_fix_plan_free(&plan);
	dt_rootset_free(&rs);
}

Test(fix, no_codex_list_is_built_from_a_launch_record_that_is_not_the_launch)
{
	struct dt_rootset rs;
	codex_rootset(&rs); /* its list, /a, read from the ring's record */
	const char *argv[] = {"codex", "sandbox", "--", "sh"};
	struct dt_fix_launch l = {argv, 4, 0, "/w", &rs, 1};
	struct dt_record d = {0};
	d.err = EROFS;
	d.op = "open";
	const struct dt_record *refs[] = {&d};
	struct dt_fix_problem p = {
	    DT_CAUSE_ROOT_NOT_GRANTED, root_of(&rs, "/b"), 0, "/b", refs, 1, NULL, 1};
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	cr_assert_null(plan.argv, "a -c list built from the program's record");
	cr_assert_not_null(plan.no_rewrite);
	cr_assert_not_null(strstr(plan.no_rewrite, "not this launch"), "%s", plan.no_rewrite);
	cr_assert(plan.fixes[0].claimed);
	dt_fix_plan_free(&plan);
	dt_rootset_free(&rs);
}

/* ---- inode flags: chattr ---- */

/* The expected root /srv (--root), where the chattr plans' files are. */
static const struct dt_root *srv_root(struct dt_rootset *rs)
{
	if (!root_of(rs, "/srv"))
		dt_roots_add(rs, "/srv", DT_ROOT_EXPLICIT, "--root", NULL);
	return root_of(rs, "/srv");
}

/* The plan for one immutable-file refusal of op on path under root (may
 * be NULL), whose own flags (or, dir, its directory's) are iflags,
 * launched from /work. */
static struct dt_fix_plan chattr_plan_in(struct dt_rootset *rs, const char *op, const char *path,
                                         uint64_t iflags, int dir, const struct dt_root *root)
{
	static struct dt_record d;
	static const struct dt_record *refs[1];
	static struct dt_fix_problem p;
	const char *argv[] = {"python3", "w.py"};
	struct dt_fix_launch l = {argv, 2, 0, "/work", rs};
	d = (struct dt_record){0};
	d.err = EPERM;
	d.op = op;
	d.has_flags = 1;
	d.flags = O_WRONLY | O_APPEND;
	d.p[0].abspath = d.p[0].realpath = path;
	d.has_iflags = !dir;
	d.has_dir_iflags = dir;
	*(dir ? &d.dir_iflags : &d.iflags) = iflags;
	refs[0] = &d;
	p = (struct dt_fix_problem){DT_CAUSE_IMMUTABLE_FILE, root, -1, path, refs, 1, NULL, 0};
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	return plan;
}

static struct dt_fix_plan chattr_plan(struct dt_rootset *rs, const char *op, const char *path,
                                      uint64_t iflags, int dir)
{
	return chattr_plan_in(rs, op, path, iflags, dir, srv_root(rs));
}

Test(fix, an_immutable_file_gets_chattr_minus_i_on_its_path_shell_quoted)
{
	struct dt_rootset rs = {0};
	struct dt_fix_plan plan = chattr_plan(&rs, "open", "/srv/my board/f", FS_IMMUTABLE_FL, 0);
	const struct dt_fix *f = &plan.fixes[0];
	cr_assert_eq(f->kind, DT_FIX_OUTSIDE, "%s", f->why);
	cr_assert_str_eq(f->copy[0], "chattr -i '/srv/my board/f'");
	cr_expect_str_eq(f->disk.path, "/srv/my board/f");
	cr_expect_eq(f->disk.clear_iflags, FS_IMMUTABLE_FL);
	cr_expect_eq(f->disk.mode, -1);
	cr_expect_eq(f->disk.uid, -1);
	dt_fix_plan_free(&plan);
}

Test(fix, a_file_both_immutable_and_append_only_gets_both_flags_cleared_for_a_write)
{
	struct dt_rootset rs = {0};
	struct dt_fix_plan plan =
	    chattr_plan(&rs, "truncate", "/srv/board/f", FS_IMMUTABLE_FL | FS_APPEND_FL, 0);
	cr_assert_str_eq(plan.fixes[0].copy[0], "chattr -ia /srv/board/f");
	cr_expect_eq(plan.fixes[0].disk.clear_iflags, FS_IMMUTABLE_FL | FS_APPEND_FL);
	dt_fix_plan_free(&plan);
}

Test(fix, an_append_only_directory_refusing_an_unlink_gets_chattr_minus_a_on_the_directory)
{
	struct dt_rootset rs = {0};
	struct dt_fix_plan plan = chattr_plan(&rs, "unlink", "/srv/board/f", FS_APPEND_FL, 1);
	cr_assert_str_eq(plan.fixes[0].copy[0], "chattr -a /srv/board");
	cr_expect_str_eq(plan.fixes[0].disk.path, "/srv/board");
	dt_fix_plan_free(&plan);
}

/* The ring is the traced program's: a flag the disk does not carry now
 * gets no chattr. */
static struct dt_fix_plan chattr_plan_now(struct dt_rootset *rs, uint32_t now)
{
	static struct dt_record d;
	static const struct dt_record *refs[1];
	static struct dt_fix_problem p;
	const char *argv[] = {"python3", "w.py"};
	struct dt_fix_launch l = {argv, 2, 0, "/work", rs};
	d = (struct dt_record){0};
	d.err = EPERM;
	d.op = "open";
	d.p[0].abspath = d.p[0].realpath = "/srv/board/f";
	d.has_iflags = 1;
	d.iflags = FS_IMMUTABLE_FL;
	refs[0] = &d;
	p = (struct dt_fix_problem){
	    DT_CAUSE_IMMUTABLE_FILE, srv_root(rs), -1, "/srv/board/f", refs, 1, NULL, 0};
	p.iflags_now.known = 1;
	p.iflags_now.flags = now;
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	return plan;
}

Test(fix, a_flag_the_file_does_not_carry_now_gets_no_chattr)
{
	struct dt_rootset rs = {0};
	struct dt_fix_plan plan = chattr_plan_now(&rs, 0);
	cr_assert_eq(plan.fixes[0].kind, DT_FIX_NONE);
	cr_expect_eq(plan.fixes[0].ncopy, 0);
	cr_expect_not_null(strstr(plan.fixes[0].why, "no immutable flag now"), "%s",
	                   plan.fixes[0].why);
	dt_fix_plan_free(&plan);
	plan = chattr_plan_now(&rs, FS_IMMUTABLE_FL);
	cr_expect_eq(plan.fixes[0].kind, DT_FIX_OUTSIDE, "the flag is there: chattr -i");
	dt_fix_plan_free(&plan);
}

Test(fix, an_immutable_file_in_a_system_directory_gets_no_chattr)
{
	struct dt_rootset rs = {0};
	struct dt_fix_plan plan = chattr_plan(&rs, "open", "/etc/resolv.conf", FS_IMMUTABLE_FL, 0);
	cr_assert_eq(plan.fixes[0].kind, DT_FIX_NONE);
	cr_expect_eq(plan.fixes[0].ncopy, 0);
	cr_expect_null(plan.fixes[0].disk.path);
	cr_expect_not_null(strstr(plan.fixes[0].why, "/etc"), "%s", plan.fixes[0].why);
	dt_fix_plan_free(&plan);
}

/* The s9 review's open item: chattr -i was offered for a flagged file no
 * expected root holds (~/.ssh/authorized_keys, which the worker chose by
 * failing to write it), as chmod and chown are not. */
Test(fix, an_immutable_file_outside_every_expected_root_gets_no_chattr)
{
	struct dt_rootset rs = {0};
	struct dt_fix_plan plan =
	    chattr_plan_in(&rs, "open", "/home/u/.ssh/authorized_keys", FS_IMMUTABLE_FL, 0, NULL);
	cr_assert_eq(plan.fixes[0].kind, DT_FIX_NONE, "%s", plan.fixes[0].why);
	cr_expect_eq(plan.fixes[0].ncopy, 0);
	cr_expect_null(plan.fixes[0].disk.path, "--verify would clear it on an overlay");
	cr_expect_not_null(strstr(plan.fixes[0].why, "no expected root"), "%s", plan.fixes[0].why);
	dt_fix_plan_free(&plan);
}

/* ---- Landlock: REFER, and a launcher on the command line ---- */

/* The plan for one EXDEV rename of top/a/f to top/b/f (top: "/w" by
 * default), its expected root root (may be NULL), claimed or not. */
static struct dt_fix_plan refer_plan_in(struct dt_rootset *rs, const char *const *argv, size_t argc,
                                        const char *top, const struct dt_root *root, int claimed)
{
	static struct dt_record d;
	static const struct dt_record *refs[1];
	static struct dt_fix_problem p;
	static char from[PATH_MAX], to[PATH_MAX], subject[PATH_MAX];
	struct dt_fix_launch l = {argv, argc, 0, "/w", rs};
	snprintf(from, sizeof(from), "%s/a/f", top);
	snprintf(to, sizeof(to), "%s/b/f", top);
	snprintf(subject, sizeof(subject), "%s/a", top);
	d = (struct dt_record){0};
	d.err = EXDEV;
	d.op = "rename";
	d.p[0].abspath = d.p[0].realpath = from;
	d.p[1].abspath = d.p[1].realpath = to;
	refs[0] = &d;
	p = (struct dt_fix_problem){DT_CAUSE_LANDLOCK_REFER, root, -1, subject, refs, 1, NULL, 0};
	p.claimed = claimed;
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	return plan;
}

static struct dt_fix_plan refer_plan(struct dt_rootset *rs, const char *const *argv, size_t argc)
{
	return refer_plan_in(rs, argv, argc, "/w", NULL, 0);
}

/* A directory under /tmp with a/ and b/ in it: where anyone may write. */
static const char *refer_tmp(void)
{
	static char top[] = "/tmp/dt-refer.XXXXXX";
	char sub[sizeof(top) + 4];
	cr_assert_not_null(mkdtemp(top));
	snprintf(sub, sizeof(sub), "%s/a", top);
	cr_assert_eq(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/b", top);
	cr_assert_eq(mkdir(sub, 0700), 0);
	return top;
}

static void refer_tmp_remove(const char *top)
{
	char sub[PATH_MAX];
	snprintf(sub, sizeof(sub), "%s/a", top);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/b", top);
	rmdir(sub);
	rmdir(top);
}

Test(fix, a_landlock_refer_rename_gets_refer_beneath_both_directories_with_abi_2)
{
	struct dt_rootset rs = {0};
	const char *argv[] = {"python3", "w.py"};
	struct dt_fix_plan plan = refer_plan(&rs, argv, 2);
	const struct dt_fix *f = &plan.fixes[0];
	cr_assert_eq(f->kind, DT_FIX_OUTSIDE, "%s", f->why ? f->why : "");
	cr_expect_eq(f->sandbox, DT_SB_LANDLOCK);
	cr_assert_eq(f->landlock.ndirs, 2);
	cr_expect_str_eq(f->landlock.dirs[0], "/w/a");
	cr_expect_str_eq(f->landlock.dirs[1], "/w/b");
	cr_expect_str_eq(f->landlock.rights, "MAKE_REG|REMOVE_FILE|REFER");
	cr_expect_eq(f->landlock.abi, 2);
	int rules = 0;
	for (size_t i = 0; i < f->ncopy; i++)
		rules += strstr(f->copy[i], "LANDLOCK_ACCESS_FS_REFER") != NULL &&
		         strstr(f->copy[i], "path_beneath") != NULL;
	cr_expect_eq(rules, 2, "one path-beneath rule with REFER per directory");
	cr_expect_not_null(f->no_verify, "the program builds its ruleset: not verifiable");
	dt_fix_plan_free(&plan);
}

Test(fix, a_landlock_launcher_on_the_command_line_gets_the_rules_and_its_abi_raised)
{
	struct dt_rootset rs = {0};
	const char *argv[] = {
	    "/x/landlock-run", "--abi", "1", "--rw", "/w", "--", "mv", "a/f", "b/f"};
	const char *top = refer_tmp();
	/* under a root the user named (--root): a candidate is never applied */
	struct dt_root root = {.path = (char *)top, .kind = DT_ROOT_EXPLICIT, .granted = -1};
	struct dt_fix_plan plan = refer_plan_in(&rs, argv, 9, top, &root, 0);
	const struct dt_fix *f = &plan.fixes[0];
	cr_assert_eq(f->kind, DT_FIX_COMMAND_LINE, "%s", f->why ? f->why : "");
	cr_expect_null(f->no_verify, "%s", f->no_verify);
	cr_expect_eq(plan.sandbox, DT_SB_LANDLOCK);
	struct dt_argv a = {plan.argv, plan.argc};
	char want[4 * PATH_MAX];
	/* one rule, on the root that holds both directories */
	snprintf(
	    want, sizeof(want),
	    "/x/landlock-run --rule %s=MAKE_REG|REMOVE_FILE|REFER --abi 2 --rw /w -- mv a/f b/f",
	    top);
	cr_expect_str_eq(joined(&a), want);
	snprintf(want, sizeof(want), "--rule '%s=MAKE_REG|REMOVE_FILE|REFER'", top);
	cr_expect_str_eq(f->copy[0], want);
	dt_fix_plan_free(&plan);
	refer_tmp_remove(top);
}

/* With no expected root the two directories are the traced program's
 * choice (a rename out of ~/.ssh): the rule is shown, never handed to the
 * re-run, unless they lie where anyone may write (above). */
Test(fix, a_landlock_refer_rule_only_the_refusals_name_outside_tmp_is_not_applied)
{
	struct dt_rootset rs = {0};
	const char *argv[] = {
	    "/x/landlock-run", "--abi", "1", "--rw", "/w", "--", "mv", "a/f", "b/f"};
	struct dt_fix_plan plan = refer_plan(&rs, argv, 9);
	const struct dt_fix *f = &plan.fixes[0];
	cr_expect(f->claimed, "not marked as the traced program's");
	cr_expect_not_null(f->no_verify);
	cr_expect_null(plan.argv, "the re-run would get the rule");
	dt_fix_plan_free(&plan);
}

/* A root a traced process named for itself (HERMES_KANBAN_DB=~/.ssh/x.db)
 * gets no grant on the re-run: a Landlock rule is a grant too. */
Test(fix, a_landlock_refer_rule_beneath_a_root_the_program_named_is_not_applied)
{
	struct dt_rootset rs = {0};
	const char *argv[] = {
	    "/x/landlock-run", "--abi", "1", "--rw", "/w", "--", "mv", "a/f", "b/f"};
	const char *top = refer_tmp();
	struct dt_root root = {.path = (char *)top, .kind = DT_ROOT_HERMES};
	struct dt_fix_plan plan = refer_plan_in(&rs, argv, 9, top, &root, 1);
	const struct dt_fix *f = &plan.fixes[0];
	cr_expect(f->claimed, "not marked as the traced program's");
	cr_expect_not_null(f->no_verify);
	cr_expect_null(plan.argv, "the re-run would get the rule");
	dt_fix_plan_free(&plan);
	refer_tmp_remove(top);
}

Test(fix, a_landlock_refer_beneath_a_system_directory_is_refused)
{
	struct dt_rootset rs = {0};
	const char *argv[] = {"python3", "w.py"};
	static struct dt_record d;
	const struct dt_record *refs[] = {&d};
	struct dt_fix_launch l = {argv, 2, 0, "/w", &rs};
	d.err = EXDEV;
	d.op = "rename";
	d.p[0].realpath = "/etc/a";
	d.p[1].realpath = "/etc/sub/a";
	struct dt_fix_problem p = {DT_CAUSE_LANDLOCK_REFER, NULL, -1, "/etc", refs, 1, NULL, 0};
	struct dt_fix_plan plan;
	dt_fix_plan_build(&p, 1, &l, &plan);
	cr_assert_eq(plan.fixes[0].kind, DT_FIX_NONE);
	cr_expect_eq(plan.fixes[0].ncopy, 0);
	dt_fix_plan_free(&plan);
}
