/* SPDX-License-Identifier: MIT */
/*
 * Refusals from a real Landlock sandbox (build/helpers/landlock-run): writes
 * outside the --rw directories are EACCES, a rename or link between two
 * writable directories without the REFER right is EXDEV. The filesystem
 * stays mounted read-write, which is what tells a Landlock refusal from a
 * read-only mount (bubblewrap) in a report.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "names.h"
#include "testlib.h"

static char tmp[PATH_MAX], ro[PATH_MAX], rw[PATH_MAX];

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "cannot create %s", path);
	fputs("data\n", f);
	fclose(f);
}

/* tmp/ro (not granted: every write refused) holds f and d; tmp/rw is
 * granted and holds a/f and b (two directories for cross-directory moves). */
static void setup(void)
{
	if (!dtt_have_landlock())
		cr_skip_test("Landlock is not available here (landlock-run exits 125)");
	if (!realpath(dtt_tmpdir(), tmp))
		cr_assert_fail("no temporary directory");
	snprintf(ro, sizeof(ro), "%s/ro", tmp);
	snprintf(rw, sizeof(rw), "%s/rw", tmp);
	char p[PATH_MAX + 16];
	cr_assert_eq(mkdir(ro, 0755), 0);
	cr_assert_eq(mkdir(rw, 0755), 0);
	snprintf(p, sizeof(p), "%s/d", ro);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/f", ro);
	touch(p);
	snprintf(p, sizeof(p), "%s/a", rw);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/b", rw);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/a/f", rw);
	touch(p);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(landlock, .init = setup, .fini = teardown, .timeout = 120);

/* ---- helpers ----------------------------------------------------------- */

/* "{ro}/f" -> "/tmp/dtt.X/ro/f"; also {rw}. Rotating pool. */
static const char *expand(const char *t)
{
	static char pool[32][PATH_MAX + 64];
	static int k;
	if (!t)
		return NULL;
	char *out = pool[k];
	k = (k + 1) % 32;
	size_t n = 0;
	out[0] = 0;
	while (*t && n + 1 < sizeof(pool[0])) {
		const char *val = !strncmp(t, "{ro}", 4) ? ro : !strncmp(t, "{rw}", 4) ? rw : NULL;
		if (val) {
			n += (size_t)snprintf(out + n, sizeof(pool[0]) - n, "%s", val);
			t += 4;
		} else {
			out[n++] = *t++;
			out[n] = 0;
		}
	}
	return out;
}

enum { MAXARGV = 32 };

/* landlock-run --rw {rw} --rw /dev/null [--no-refer] -- callall OP ARGS... */
static void build_argv(const char **argv, int no_refer, const char *op, const char *const *args)
{
	size_t n = 0;
	argv[n++] = dtt_helper("landlock-run");
	argv[n++] = "--rw";
	argv[n++] = rw;
	argv[n++] = "--rw";
	argv[n++] = "/dev/null";
	if (no_refer)
		argv[n++] = "--no-refer";
	argv[n++] = "--";
	argv[n++] = dtt_helper("callall");
	argv[n++] = op;
	for (size_t i = 0; args[i] && n < MAXARGV - 1; i++)
		argv[n++] = expand(args[i]);
	argv[n] = NULL;
}

static int is_helper(const struct dt_record *rec)
{
	return rec->comm && !strncmp(rec->comm, "callall", 7);
}

static const struct dt_record *helper_record(const struct dtt_run *r, int type, size_t *count)
{
	const struct dt_record *found = NULL;
	*count = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == type && is_helper(&r->recs[i])) {
			if (!found)
				found = &r->recs[i];
			(*count)++;
		}
	return found;
}

/* The helper's refusals (its successful writes are recorded by default). */
static size_t helper_refusals(const struct dtt_run *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += is_helper(&r->recs[i]) && r->recs[i].type == DT_REC_DENIAL;
	return n;
}

static void expect_field(const char *op, const char *what, const char *got, const char *want_tmpl)
{
	const char *want = expand(want_tmpl);
	if (!want)
		cr_expect_null(got, "%s: %s should be absent, is \"%s\"", op, what, got);
	else
		cr_expect(got && !strcmp(got, want), "%s: %s is \"%s\", expected \"%s\"", op, what,
		          got ? got : "(absent)", want);
}

static const char *flags_of(const struct dt_record *d)
{
	static char buf[256];
	dt_flags_name(d, buf, sizeof(buf));
	return buf;
}

/* ---- refusals ---------------------------------------------------------- */

struct ll_case {
	const char *op;
	const char *args[7];
	int no_refer;
	const char *err;
	const char *path, *abspath, *realpath;
	const char *path2, *abspath2, *realpath2; /* rename and link */
	const char *flags;
};

/* One row per call: the formatter would spread each over a dozen lines. */
// clang-format off
static const struct ll_case cases[] = {
	/* EACCES: a write outside the granted directory */
	{"open", {"{ro}/new", "O_WRONLY|O_CREAT|O_TRUNC", "0644"}, 0, "EACCES",
	 "{ro}/new", "{ro}/new", "{ro}/new", NULL, NULL, NULL, "O_WRONLY|O_CREAT|O_TRUNC"},
	{"open", {"{ro}/f", "O_RDWR"}, 0, "EACCES",
	 "{ro}/f", "{ro}/f", "{ro}/f", NULL, NULL, NULL, "O_RDWR"},
	{"openat", {"{ro}", "f", "O_WRONLY|O_TRUNC"}, 0, "EACCES",
	 "f", "{ro}/f", "{ro}/f", NULL, NULL, NULL, "O_WRONLY|O_TRUNC"},
	{"creat", {"{ro}/new", "0644"}, 0, "EACCES",
	 "{ro}/new", "{ro}/new", "{ro}/new", NULL, NULL, NULL, "O_WRONLY|O_CREAT|O_TRUNC"},
	{"fopen", {"{ro}/f", "a"}, 0, "EACCES",
	 "{ro}/f", "{ro}/f", "{ro}/f", NULL, NULL, NULL, "O_WRONLY|O_CREAT|O_APPEND"},
	{"mkdir", {"{ro}/newdir", "0755"}, 0, "EACCES",
	 "{ro}/newdir", "{ro}/newdir", "{ro}/newdir", NULL, NULL, NULL, ""},
	{"mkdirat", {"{ro}", "newdir", "0700"}, 0, "EACCES",
	 "newdir", "{ro}/newdir", "{ro}/newdir", NULL, NULL, NULL, ""},
	{"mknod", {"{ro}/fifo", "S_IFIFO|0644", "0"}, 0, "EACCES",
	 "{ro}/fifo", "{ro}/fifo", "{ro}/fifo", NULL, NULL, NULL, ""},
	{"unlink", {"{ro}/f"}, 0, "EACCES",
	 "{ro}/f", "{ro}/f", "{ro}/f", NULL, NULL, NULL, ""},
	{"unlinkat", {"{ro}", "d", "AT_REMOVEDIR"}, 0, "EACCES",
	 "d", "{ro}/d", "{ro}/d", NULL, NULL, NULL, "AT_REMOVEDIR"},
	{"remove", {"{ro}/f"}, 0, "EACCES",
	 "{ro}/f", "{ro}/f", "{ro}/f", NULL, NULL, NULL, ""},
	{"rmdir", {"{ro}/d"}, 0, "EACCES",
	 "{ro}/d", "{ro}/d", "{ro}/d", NULL, NULL, NULL, ""},
	{"symlink", {"f", "{ro}/s"}, 0, "EACCES",
	 "{ro}/s", "{ro}/s", "{ro}/s", "f", NULL, NULL, ""},
	{"truncate", {"{ro}/f", "0"}, 0, "EACCES",
	 "{ro}/f", "{ro}/f", "{ro}/f", NULL, NULL, NULL, ""},
	{"truncate64", {"{ro}/f", "0"}, 0, "EACCES",
	 "{ro}/f", "{ro}/f", "{ro}/f", NULL, NULL, NULL, ""},
	{"rename", {"{ro}/f", "{ro}/g"}, 0, "EACCES",
	 "{ro}/f", "{ro}/f", "{ro}/f", "{ro}/g", "{ro}/g", "{ro}/g", ""},
	/* moving out of the read-only directory into the writable one is
	 * EACCES, not EXDEV: more than REFER is missing */
	{"renameat", {"{ro}", "f", "{rw}", "g"}, 0, "EACCES",
	 "f", "{ro}/f", "{ro}/f", "g", "{rw}/g", "{rw}/g", ""},
	{"link", {"{ro}/f", "{ro}/h"}, 0, "EACCES",
	 "{ro}/f", "{ro}/f", "{ro}/f", "{ro}/h", "{ro}/h", "{ro}/h", ""},
	/* EXDEV: both directories writable, REFER not granted */
	{"rename", {"{rw}/a/f", "{rw}/b/f"}, 1, "EXDEV",
	 "{rw}/a/f", "{rw}/a/f", "{rw}/a/f", "{rw}/b/f", "{rw}/b/f", "{rw}/b/f", ""},
	{"renameat", {"{rw}/a", "f", "{rw}/b", "g"}, 1, "EXDEV",
	 "f", "{rw}/a/f", "{rw}/a/f", "g", "{rw}/b/g", "{rw}/b/g", ""},
	{"renameat2", {"{rw}/a", "f", "{rw}/b", "f", "RENAME_NOREPLACE"}, 1, "EXDEV",
	 "f", "{rw}/a/f", "{rw}/a/f", "f", "{rw}/b/f", "{rw}/b/f", "RENAME_NOREPLACE"},
	{"link", {"{rw}/a/f", "{rw}/b/h"}, 1, "EXDEV",
	 "{rw}/a/f", "{rw}/a/f", "{rw}/a/f", "{rw}/b/h", "{rw}/b/h", "{rw}/b/h", ""},
	{"linkat", {"{rw}/a", "f", "{rw}/b", "h", "0"}, 1, "EXDEV",
	 "f", "{rw}/a/f", "{rw}/a/f", "h", "{rw}/b/h", "{rw}/b/h", ""},
};
// clang-format on

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void check_case(const struct ll_case *c)
{
	char op[96];
	snprintf(op, sizeof(op), "%s(%s%s)", c->op, expand(c->args[0]),
	         c->no_refer ? ", no REFER" : "");
	const char *argv[MAXARGV];
	build_argv(argv, c->no_refer, c->op, c->args);

	char direct[4096];
	cr_assert_eq(dtt_system(direct, sizeof(direct), argv, NULL), 0, "%s: %s", op, direct);
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s: ring unreadable: %s", op, r.out);
	cr_expect_eq(r.status, 0, "%s: status %d: %s", op, r.status, r.out);
	cr_expect_str_eq(r.out, direct, "%s: \"%s\" under the probe, \"%s\" without", op, r.out,
	                 direct);
	char want[64];
	snprintf(want, sizeof(want), "errno=%s\n", c->err);
	cr_expect(strstr(r.out, want), "%s: expected a failure with %s, got %s", op, c->err, r.out);

	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s: nothing recorded: %s", op, r.out);
	cr_expect_eq(n, 1, "%s: %zu denials", op, n);
	cr_expect_str_eq(d->op, c->op, "%s: recorded as %s", op, d->op);
	cr_expect_str_eq(dt_errno_name(d->err), c->err, "%s: recorded %s, the call failed with %s",
	                 op, dt_errno_name(d->err), c->err);
	cr_expect(d->writes, "%s: writes should be 1", op);
	expect_field(op, "path", d->p[0].path, c->path);
	expect_field(op, "abspath", d->p[0].abspath, c->abspath);
	expect_field(op, "realpath", d->p[0].realpath, c->realpath);
	expect_field(op, "second path", d->p[1].path, c->path2);
	expect_field(op, "second abspath", d->p[1].abspath, c->abspath2);
	expect_field(op, "second realpath", d->p[1].realpath, c->realpath2);
	cr_expect_str_eq(flags_of(d), c->flags, "%s: flags %s, expected %s", op, flags_of(d),
	                 c->flags);
	/* Landlock is no read-only mount: the stat facts say read-write */
	cr_expect(d->p[0].has_st && (d->p[0].st.valid & DT_SF_MOUNT), "%s: no mount facts", op);
	cr_expect_eq(d->p[0].st.mount_flags & ST_RDONLY, 0, "%s: mount reported read-only", op);
	if (c->realpath2) {
		cr_expect(d->p[1].has_st && (d->p[1].st.valid & DT_SF_MOUNT), "%s: no mount facts",
		          op);
		cr_expect_eq(d->p[1].st.mount_flags & ST_RDONLY, 0, "%s: second mount read-only",
		             op);
	}
	dtt_free(&r);
}

/* Criterion's worker re-executes the binary: pass indices, not pointers. */
static void free_indices(struct criterion_test_params *p)
{
	cr_free(p->params);
}

ParameterizedTestParameters(landlock, refused_write_is_recorded_with_the_errno_the_program_saw)
{
	size_t *idx = cr_malloc(NCASES * sizeof(*idx));
	for (size_t i = 0; i < NCASES; i++)
		idx[i] = i;
	return cr_make_param_array(size_t, idx, NCASES, free_indices);
}

ParameterizedTest(size_t *i, landlock, refused_write_is_recorded_with_the_errno_the_program_saw)
{
	cr_assert_lt(*i, NCASES);
	check_case(&cases[*i]);
}

/* ---- what Landlock does not restrict ------------------------------------- */

Test(landlock, metadata_changes_and_access_checks_are_not_refused_so_no_refusal_is_recorded)
{
	/* chown to the file's own owner: any user may, root or not */
	char uid[16], gid[16];
	snprintf(uid, sizeof(uid), "%u", (unsigned)geteuid());
	snprintf(gid, sizeof(gid), "%u", (unsigned)getegid());
	const struct {
		const char *op, *args[6];
	} ok[] = {
	    {"chmod", {"{ro}/f", "0600"}},
	    {"fchmod", {"{ro}/f", "0640"}},
	    {"chown", {"{ro}/f", uid, gid}},
	    {"utime", {"{ro}/f"}},
	    {"utimensat", {"{ro}", "f", "0"}},
	    {"futimens", {"{ro}/f"}},
	    /* access() asks DAC only: root "may write" what Landlock refuses */
	    {"access", {"{ro}/f", "W_OK"}},
	    {"faccessat", {"{ro}", "f", "W_OK", "0"}},
	    {"open", {"{ro}/f", "O_RDONLY"}},
	    {"open", {"/dev/null", "O_WRONLY"}},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		const char *argv[MAXARGV];
		build_argv(argv, 0, ok[i].op, ok[i].args);
		struct dtt_run r;
		cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
		cr_expect(strstr(r.out, "errno=0\n") && !strstr(r.out, "ret=-1"),
		          "%s should succeed under Landlock: %s", ok[i].op, r.out);
		cr_expect_eq(helper_refusals(&r), 0, "%s: %zu refusals", ok[i].op,
		             helper_refusals(&r));
		dtt_free(&r);
	}
}

/* ---- telling Landlock from bubblewrap ------------------------------------ */

Test(landlock, process_record_shows_a_writable_root_and_no_new_privs)
{
	const char *args[] = {"{ro}/new", "0755", NULL};
	const char *argv[MAXARGV];
	build_argv(argv, 0, "mkdir", args);
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect_str_eq(dt_errno_name(d->err), "EACCES");
	const struct dt_record *p = NULL;
	for (size_t i = 0; i < r.n; i++)
		if (r.recs[i].type == DT_REC_PROCESS && r.recs[i].pid == d->pid &&
		    is_helper(&r.recs[i]))
			p = &r.recs[i];
	cr_assert_not_null(p, "no process record for the helper");
	int root_rw = -1;
	for (size_t i = 0; i < p->nmounts; i++)
		if (!strcmp(p->mounts[i].path, "/"))
			root_rw = p->mounts[i].rw;
	cr_expect_eq(root_rw, 1, "/ should be listed read-write (%d)", root_rw);
	cr_expect_eq(p->no_new_privs, 1, "landlock_restrict_self needs no_new_privs");
	dtt_free(&r);
}

/* The same refused create, once under each sandbox: EACCES on a writable
 * mount (Landlock) against EROFS on a read-only one (bubblewrap). */
Test(landlock, same_refusal_under_bwrap_differs_in_errno_and_mount_flags)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *args[] = {"{ro}/new", "O_WRONLY|O_CREAT|O_TRUNC", "0644", NULL};
	const char *ll[MAXARGV];
	build_argv(ll, 0, "open", args);
	const char *bw[MAXARGV];
	size_t k = dtt_bwrap_rw(bw, rw);
	const char *rest[] = {
	    dtt_helper("callall"), "open", expand(args[0]), args[1], args[2], NULL};
	for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++)
		bw[k++] = rest[i];
	struct dtt_run a, b;
	cr_assert_eq(dtt_run(&a, NULL, ll, NULL), 0, "%s", a.out);
	cr_assert_eq(dtt_run(&b, NULL, bw, NULL), 0, "%s", b.out);
	size_t n;
	const struct dt_record *l = helper_record(&a, DT_REC_DENIAL, &n);
	const struct dt_record *e = helper_record(&b, DT_REC_DENIAL, &n);
	cr_assert_not_null(l, "%s", a.out);
	cr_assert_not_null(e, "%s", b.out);
	cr_expect_str_eq(dt_errno_name(l->err), "EACCES");
	cr_expect_str_eq(dt_errno_name(e->err), "EROFS");
	cr_expect_eq(l->p[0].st.mount_flags & ST_RDONLY, 0, "Landlock: mount read-write");
	cr_expect_neq(e->p[0].st.mount_flags & ST_RDONLY, 0, "bwrap: mount read-only");
	/* everything else about the call is the same */
	cr_expect_str_eq(l->p[0].abspath, e->p[0].abspath);
	cr_expect_str_eq(l->p[0].realpath, e->p[0].realpath);
	cr_expect_str_eq(flags_of(l), "O_WRONLY|O_CREAT|O_TRUNC");
	cr_expect_eq(l->flags, e->flags);
	cr_expect_eq(l->mode, e->mode);
	/* the parent directory is writable by its owner (root) in both: the
	 * refusal is not DAC's */
	cr_expect(l->p[0].st.valid & DT_SF_PARENT);
	cr_expect(l->p[0].st.parent_mode & S_IWUSR);
	dtt_free(&a);
	dtt_free(&b);
}

/* Inside the granted directory the same calls succeed: no refusal recorded. */
Test(landlock, writes_inside_the_granted_directory_succeed_and_record_no_refusal)
{
	static const struct {
		const char *op, *args[6];
	} ok[] = {
	    {"open", {"{rw}/new", "O_WRONLY|O_CREAT|O_TRUNC", "0644"}},
	    {"mkdir", {"{rw}/dir", "0755"}},
	    {"truncate", {"{rw}/a/f", "1"}},
	    {"rename", {"{rw}/a/f", "{rw}/a/g"}},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		const char *argv[MAXARGV];
		build_argv(argv, 0, ok[i].op, ok[i].args);
		struct dtt_run r;
		cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
		cr_expect(!strstr(r.out, "ret=-1"), "%s: %s", ok[i].op, r.out);
		cr_expect_eq(helper_refusals(&r), 0, "%s refused", ok[i].op);
		dtt_free(&r);
	}
}

/* Landlock decides truncation when the file is opened (ABI >= 3), and
 * landlock-run grants it wherever it grants writing: ftruncate on a
 * descriptor opened for writing in the sandbox is never refused (a file
 * outside --rw cannot be opened for writing at all). So no Landlock
 * refusal reaches ftruncate; the EROFS/EPERM table covers its record. */
Test(landlock, ftruncate_on_a_descriptor_opened_in_the_granted_directory_succeeds)
{
	const char *args[] = {"rw:{rw}/a/f", "0", NULL};
	const char *argv[MAXARGV];
	build_argv(argv, 0, "ftruncate", args);
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	cr_expect(strstr(r.out, "ret=0 errno=0"), "%s", r.out);
	cr_expect_eq(helper_refusals(&r), 0);
	dtt_free(&r);
}
