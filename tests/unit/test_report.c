// SPDX-License-Identifier: MIT
/*
 * Tests for tracer/diagnose/report.c and its three outputs (report_json.c,
 * report_md.c, report_text.c): refusals grouped by (path, op, errno, cause),
 * what the program did next, intermittent failures, what is hidden without
 * --all, and output that stays well-formed whatever bytes a path holds.
 *
 * Reports are built by hand: a malloc'ed array of records (pointing at
 * string literals; mem stays NULL so dt_report_free frees nothing else),
 * then dt_report_build. Every path lives under /nonexistent-dt so that no
 * root has a realpath on this machine.
 *
 * The JSON is checked by Python's json module (/usr/bin/python3), which
 * flattens it to "key=json-value" lines that the tests look up.
 *
 * Build and run from the repository root:
 *   make build/unit/test_report && ./build/unit/test_report --jobs 2
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exitcodes.h"
#include "recfmt.h"
#include "report.h"
#include "testlib.h"

static struct dt_report rep;
static char *out;  /* what an output function wrote */
static char *flat; /* the JSON, flattened by Python */

static void teardown(void)
{
	dt_report_free(&rep);
	free(out);
	out = NULL;
	free(flat);
	flat = NULL;
	dtt_cleanup();
}

TestSuite(report, .fini = teardown);

/* ---- building a report by hand ---------------------------------------------------- */

#define D "/nonexistent-dt"
#define NMOUNTS(a) (sizeof(a) / sizeof((a)[0]))

static struct dt_record *add(int type, long pid, uint64_t t)
{
	if (rep.n == rep.cap) {
		rep.cap = rep.cap ? rep.cap * 2 : 16;
		rep.recs = realloc(rep.recs, rep.cap * sizeof(*rep.recs));
		cr_assert_not_null(rep.recs);
	}
	struct dt_record *r = &rep.recs[rep.n];
	memset(r, 0, sizeof(*r));
	r->pos = rep.n;
	r->type = type;
	r->pid = pid;
	r->tid = pid;
	r->time_real = t;
	r->time_mono = t;
	r->uid = 1000;
	r->gid = 1000;
	r->comm = "worker";
	rep.n++;
	return r;
}

/* Sandboxed: "/" read-only, D/work writable, /proc. */
static struct dt_mount sandbox_mounts[] = {
    {"/", "ext4", 0},
    {"/proc", "proc", 1},
    {D "/work", "ext4", 1},
};
/* Not sandboxed. */
static struct dt_mount host_mounts[] = {
    {"/", "ext4", 1},
};

static const char *const worker_argv[] = {"python3", "worker.py"};

static struct dt_record *add_process(long pid, uint64_t t, int sandboxed, uint64_t mnt_ns)
{
	struct dt_record *p = add(DT_REC_PROCESS, pid, t);
	p->ppid = 1;
	p->exe = "/usr/bin/python3";
	p->cwd = D "/work";
	p->argv = (const char **)worker_argv;
	p->argc = 2;
	p->mounts = sandboxed ? sandbox_mounts : host_mounts;
	p->nmounts = sandboxed ? NMOUNTS(sandbox_mounts) : NMOUNTS(host_mounts);
	p->mnt_ns = mnt_ns;
	return p;
}

static struct dt_record *add_path_rec(int type, long pid, uint64_t t, const char *op, int err,
                                      const char *path)
{
	struct dt_record *d = add(type, pid, t);
	d->op = op;
	d->err = err;
	d->writes = 1;
	d->p[0].path = path;
	d->p[0].abspath = path;
	d->p[0].realpath = path;
	if (op && strstr(op, "open")) {
		/* SQLite's open of a database, and its read-only fallback */
		d->has_flags = 1;
		d->flags = type == DT_REC_REOPEN ? O_RDONLY : O_RDWR | O_CREAT;
		d->writes = type != DT_REC_REOPEN;
	}
	return d;
}

static struct dt_record *add_denial(long pid, uint64_t t, const char *op, int err, const char *path)
{
	return add_path_rec(DT_REC_DENIAL, pid, t, op, err, path);
}

static int build_opts(int all, const char *const *roots, size_t nroots)
{
	struct dt_report_opts o = {0};
	char err[256] = "";

	o.roots = roots;
	o.nroots = nroots;
	o.all = all;
	int rc = dt_report_build(&rep, &o, err, sizeof(err));
	cr_assert_eq(rc, 0, "dt_report_build: %d %s", rc, err);
	return rc;
}

static const char *const data_roots[] = {D "/data", D "/out"};

/*
 * The main scenario. Sandboxed workers 100 and 200 (mount ns 11), an
 * unsandboxed writer 300 (mount ns 22). Records are added out of time
 * order: the report sorts them.
 */
static void scenario(int all)
{
	struct dt_record *d;

	/* the second refusal of app.db comes first in the array */
	d = add_denial(200, 3000, "openat", EROFS, D "/data/app.db");
	d->sqlite_hint = "db"; /* the probe's tag: a hint the report re-judges */
	add_process(100, 1000, 1, 11);
	add_process(200, 1001, 1, 11);
	add_process(300, 1002, 0, 22)->comm = "writer";

	/* app.db refused twice (pids 100 and 200), then reopened by 100 */
	d = add_denial(100, 2000, "openat", EROFS, D "/data/app.db");
	d->sqlite_hint = "db";
	add_path_rec(DT_REC_REOPEN, 100, 2100, "openat", 0, D "/data/app.db");
	/* its journal: the db was refused too, so not a side-file problem */
	d = add_denial(100, 2200, "openat", EROFS, D "/data/app.db-journal");
	d->sqlite_hint = "journal";

	/* same path, another op: another group */
	add_denial(100, 2300, "unlink", EROFS, D "/data/app.db");

	/* reopened by another pid / before the refusal: not "next" */
	add_denial(100, 2400, "openat", EROFS, D "/data/other.txt");
	add_path_rec(DT_REC_REOPEN, 200, 2500, "openat", 0, D "/data/other.txt");
	add_path_rec(DT_REC_REOPEN, 100, 2350, "openat", 0, D "/data/before.txt");
	add_denial(100, 2450, "openat", EROFS, D "/data/before.txt");

	/* refused in the sandbox, written outside it (--all) */
	add_denial(100, 2600, "openat", EROFS, D "/out/log.txt");
	add_path_rec(DT_REC_WRITE, 300, 2700, "openat", 0, D "/out/log.txt")->comm = "writer";

	/* a -wal beside a database the worker had opened for writing (--all);
	 * the -wal existed when written */
	add_path_rec(DT_REC_WRITE, 100, 2750, "openat", 0, D "/out/y.db");
	d = add_denial(100, 2800, "openat", EROFS, D "/out/y.db-wal");
	d->sqlite_hint = "wal";
	d = add_path_rec(DT_REC_WRITE, 200, 2900, "openat", 0, D "/out/y.db-wal");
	d->sqlite_hint = "wal";
	d->p[0].has_st = 1;
	d->p[0].st.valid = DT_SF_EXISTS;

	/* lock contention and bubblewrap's own set-up */
	add_denial(100, 3100, "fcntl", EAGAIN, D "/work/x.db")->writes = 0;
	d = add_denial(400, 500, "access", EACCES, "/newroot" D "/data");
	d->comm = "bwrap";

	build_opts(all, data_roots, 2);
}

static const struct dt_report_group *group(const char *path, const char *op)
{
	const struct dt_report_group *found = NULL;

	for (size_t k = 0; k < rep.ngroups; k++)
		if (!strcmp(rep.groups[k].path, path) && !strcmp(rep.groups[k].rep->op, op)) {
			cr_assert_null(found, "two groups for %s %s", path, op);
			found = &rep.groups[k];
		}
	cr_assert_not_null(found, "no group for %s %s", path, op);
	return found;
}

/* ---- output capture ----------------------------------------------------------------- */

/* FMT_TEXT is report -v (findings, then every group in full); FMT_TEXT_SHORT
 * the default. */
enum fmt { FMT_JSON, FMT_MD, FMT_TEXT, FMT_TEXT_COLOR, FMT_TEXT_SHORT, FMT_SVG };

static const char *render(enum fmt fmt)
{
	size_t len = 0;
	FILE *f;

	free(out);
	out = NULL;
	f = open_memstream(&out, &len);
	cr_assert_not_null(f);
	switch (fmt) {
	case FMT_JSON:
		dt_report_json(f, &rep);
		break;
	case FMT_MD:
		dt_report_markdown(f, &rep);
		break;
	case FMT_TEXT:
		dt_report_text(f, &rep, 0, 1);
		break;
	case FMT_TEXT_COLOR:
		dt_report_text(f, &rep, 1, 1);
		break;
	case FMT_TEXT_SHORT:
		dt_report_text(f, &rep, 0, 0);
		break;
	case FMT_SVG:
		dt_report_svg(f, &rep);
		break;
	}
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(strlen(out), len, "output holds a NUL byte");
	return out;
}

/* Flattens JSON: "a.b[0].c=<json.dumps(value)>" per leaf, "a#=<len>" per
 * array, "a{}=<sorted keys>" per object. Exit status 3 on invalid JSON. */
static const char flatten_py[] = "import json, sys\n"
                                 "def f(p, v):\n"
                                 "    if isinstance(v, dict):\n"
                                 "        print(p + '{}=' + json.dumps(sorted(v)))\n"
                                 "        for k in v: f((p + '.' if p else '') + k, v[k])\n"
                                 "    elif isinstance(v, list):\n"
                                 "        print(p + '#=' + str(len(v)))\n"
                                 "        for i, x in enumerate(v): f(p + '[' + str(i) + ']', x)\n"
                                 "    else:\n"
                                 "        print(p + '=' + json.dumps(v))\n"
                                 "try:\n"
                                 "    d = json.load(sys.stdin)\n"
                                 "except ValueError as e:\n"
                                 "    print('INVALID JSON:', e)\n"
                                 "    sys.exit(3)\n"
                                 "f('', d)\n";

/* Renders the report as JSON, has Python parse it, and keeps the flat
 * form. Fails the test if Python rejects it. */
static void json_flat(void)
{
	char json_path[4096], py_path[4096], cmd[9000];
	FILE *f;

	render(FMT_JSON);
	snprintf(json_path, sizeof(json_path), "%s/report.json", dtt_tmpdir());
	snprintf(py_path, sizeof(py_path), "%s/flatten.py", dtt_tmpdir());
	f = fopen(json_path, "w");
	cr_assert_not_null(f);
	fputs(out, f);
	fclose(f);
	f = fopen(py_path, "w");
	cr_assert_not_null(f);
	fputs(flatten_py, f);
	fclose(f);

	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 '%s' < '%s' 2>&1", py_path, json_path);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t cap = 1 << 16, len = 0, n;
	free(flat);
	flat = malloc(cap + 2);
	flat[len++] = '\n'; /* so every key can be searched as "\nkey=" */
	while ((n = fread(flat + len, 1, cap - len, p)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			flat = realloc(flat, cap + 2);
		}
	}
	flat[len] = 0;
	int st = pclose(p);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	          "python rejected the JSON (status %d):\n%s\n--- JSON ---\n%s", st, flat, out);
}

/* The flattened value of key, as JSON text ("null", "\"x\"", "2"), or NULL. */
static const char *jget(const char *key)
{
	static char val[8192];
	char pat[1024];

	snprintf(pat, sizeof(pat), "\n%s=", key);
	const char *s = strstr(flat, pat);
	if (!s)
		return NULL;
	s += strlen(pat);
	size_t n = strcspn(s, "\n");
	if (n >= sizeof(val))
		n = sizeof(val) - 1;
	memcpy(val, s, n);
	val[n] = 0;
	return val;
}

#define assert_json(key, want)                                                                     \
	do {                                                                                       \
		const char *got_ = jget(key);                                                      \
		cr_assert_not_null(got_, "JSON has no %s", key);                                   \
		cr_assert_str_eq(got_, want, "JSON %s", key);                                      \
	} while (0)

/* Index of the JSON denial whose realpath is path (as JSON text), or -1. */
static int json_denial(const char *path_json, const char *op)
{
	char key[128], opj[128];

	snprintf(opj, sizeof(opj), "\"%s\"", op);
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "denials[%d].realpath", i);
		const char *v = jget(key);
		if (!v)
			return -1;
		if (strcmp(v, path_json))
			continue;
		snprintf(key, sizeof(key), "denials[%d].op", i);
		if (!strcmp(jget(key), opj))
			return i;
	}
	return -1;
}

static const char *dkey(int i, const char *field)
{
	static char key[8][128];
	static int next;
	char *k = key[next++ % 8];

	snprintf(k, 128, "denials[%d].%s", i, field);
	return k;
}

#define assert_has(s, sub)                                                                         \
	cr_assert_not_null(strstr((s), (sub)), "output lacks \"%s\":\n%s", (sub), (s))
#define assert_lacks(s, sub)                                                                       \
	cr_assert_null(strstr((s), (sub)), "output has \"%s\":\n%s", (sub), (s))

/* ---- grouping ------------------------------------------------------------------------ */

Test(report, same_path_op_errno_and_cause_from_two_pids_is_one_group)
{
	scenario(0);
	const struct dt_report_group *g = group(D "/data/app.db", "openat");

	cr_assert_eq(g->count, 2);
	cr_assert_eq(g->npids, 2);
	cr_assert_eq(g->pids[0], 100, "pids in time order");
	cr_assert_eq(g->pids[1], 200);
	cr_assert_not(g->more_pids);
	cr_assert_eq(g->v.cause, DT_CAUSE_ROOT_NOT_GRANTED);
	cr_assert_str_eq(g->v.root->path, D "/data");
	cr_assert_eq(g->v.granted, 0, "the sandboxed processes saw " D "/data read-only");
}

Test(report, first_and_last_are_the_earliest_and_latest_refusal)
{
	scenario(0);
	const struct dt_report_group *g = group(D "/data/app.db", "openat");

	cr_assert_eq(g->first_ns, 2000);
	cr_assert_eq(g->last_ns, 3000);
	cr_assert_eq(g->rep->pid, 100, "the representative is the first refusal");
}

Test(report, another_op_on_the_same_path_is_another_group)
{
	scenario(0);
	const struct dt_report_group *g = group(D "/data/app.db", "unlink");

	cr_assert_eq(g->count, 1);
	cr_assert_neq(g, group(D "/data/app.db", "openat"));
}

Test(report, another_errno_or_cause_is_another_group)
{
	add_process(100, 1000, 1, 11);
	add_denial(100, 2000, "openat", EROFS, D "/data/f");
	add_denial(100, 2001, "openat", EACCES, D "/data/f");
	/* same path, op and errno, but injected: another cause */
	add_denial(100, 2002, "openat", EROFS, D "/data/f")->injected = 1;
	add_denial(100, 2003, "openat", EROFS, D "/data/f");
	build_opts(0, data_roots, 1);

	cr_assert_eq(rep.ngroups, 3);
	cr_assert_eq(rep.groups[0].count, 2);
	cr_assert_eq(rep.groups[0].rep->err, EROFS);
	cr_assert_eq(rep.groups[0].v.cause, DT_CAUSE_ROOT_NOT_GRANTED);
	cr_assert_eq(rep.groups[1].rep->err, EACCES);
	cr_assert_eq(rep.groups[2].v.cause, DT_CAUSE_INJECTED);
	cr_assert_eq(rep.denials, 4);
	cr_assert_eq(rep.by_cause[DT_CAUSE_ROOT_NOT_GRANTED], 3);
	cr_assert_eq(rep.by_cause[DT_CAUSE_INJECTED], 1);
}

/* Python frames, innermost first: sqlite3's own module, then the worker. */
static struct dt_py_frame via_save[] = {
    {"/usr/lib/python3.11/sqlite3/dbapi2.py", "connect", 80},
    {D "/work/worker.py", "save_task", 3},
    {D "/work/worker.py", "main", 9},
};
static struct dt_py_frame via_claim[] = {
    {D "/work/worker.py", "claim", 12},
    {D "/work/worker.py", "main", 10},
};
static struct dt_py_frame via_save_again[] = {
    {D "/work/worker.py", "save_task", 3},
    {D "/work/worker.py", "main", 14},
};

Test(report, another_python_line_is_another_group_and_pythons_own_library_is_skipped)
{
	add_process(100, 1000, 1, 11);
	struct dt_record *d = add_denial(100, 2000, "openat", EROFS, D "/data/f");
	d->pyframes = via_save;
	d->npyframes = 3;
	d = add_denial(100, 2001, "openat", EROFS, D "/data/f");
	d->pyframes = via_claim;
	d->npyframes = 2;
	/* the same innermost worker line from another caller: the same group */
	d = add_denial(100, 2002, "openat", EROFS, D "/data/f");
	d->pyframes = via_save_again;
	d->npyframes = 2;
	add_denial(100, 2003, "openat", EROFS, D "/data/f"); /* no Python frames */
	build_opts(0, data_roots, 1);

	cr_assert_eq(rep.ngroups, 3);
	cr_assert_not_null(rep.groups[0].py_site);
	cr_expect_str_eq(rep.groups[0].py_site->func, "save_task", "sqlite3's frame is skipped");
	cr_expect_eq(rep.groups[0].count, 2);
	cr_assert_not_null(rep.groups[1].py_site);
	cr_expect_str_eq(rep.groups[1].py_site->func, "claim");
	cr_expect_null(rep.groups[2].py_site);
	cr_expect_neq(rep.groups[0].id, rep.groups[1].id);
	cr_assert_eq(rep.findings.n, 1);
	cr_expect_eq(rep.findings.v[0].nsites, 2);
}

Test(report, groups_by_realpath_so_two_spellings_merge)
{
	add_process(100, 1000, 1, 11);
	struct dt_record *a = add_denial(100, 2000, "openat", EROFS, D "/data/./f");
	a->p[0].realpath = D "/data/f";
	struct dt_record *b = add_denial(100, 2001, "openat", EROFS, "f");
	b->p[0].abspath = D "/data/sub/../f";
	b->p[0].realpath = D "/data/f";
	build_opts(0, data_roots, 1);

	cr_assert_eq(rep.ngroups, 1);
	cr_assert_eq(rep.groups[0].count, 2);
	cr_assert_str_eq(rep.groups[0].path, D "/data/f");
}

Test(report, more_than_sixteen_pids_are_marked)
{
	for (long pid = 1; pid <= DT_GROUP_MAX_PIDS + 1; pid++)
		add_denial(pid, 2000 + (uint64_t)pid, "openat", EROFS, D "/data/f");
	add_denial(1, 3000, "openat", EROFS, D "/data/f"); /* a pid seen again */
	build_opts(0, data_roots, 1);

	cr_assert_eq(rep.ngroups, 1);
	cr_assert_eq(rep.groups[0].count, DT_GROUP_MAX_PIDS + 2);
	cr_assert_eq(rep.groups[0].npids, DT_GROUP_MAX_PIDS);
	cr_assert(rep.groups[0].more_pids);
}

Test(report, a_pid_seen_twice_is_listed_once)
{
	add_denial(100, 2000, "openat", EROFS, D "/data/f");
	add_denial(100, 2001, "openat", EROFS, D "/data/f");
	build_opts(0, data_roots, 1);

	cr_assert_eq(rep.groups[0].count, 2);
	cr_assert_eq(rep.groups[0].npids, 1);
	cr_assert_not(rep.groups[0].more_pids);
}

Test(report, roots_from_options_and_effective_mounts)
{
	scenario(0);
	const struct dt_root *data = NULL, *work = NULL;

	for (size_t i = 0; i < rep.roots.n; i++) {
		if (!strcmp(rep.roots.v[i].path, D "/data"))
			data = &rep.roots.v[i];
		if (!strcmp(rep.roots.v[i].path, D "/work"))
			work = &rep.roots.v[i];
	}
	cr_assert_not_null(data);
	cr_assert_eq(data->kind, DT_ROOT_EXPLICIT);
	cr_assert_eq(data->granted, 0);
	cr_assert_not_null(work, "the sandbox's writable mount is an effective root");
	cr_assert_eq(work->kind, DT_ROOT_EFFECTIVE);
	cr_assert_eq(rep.nprocs, 3);
}

Test(report, the_process_record_in_force_is_used)
{
	/* pid 100 starts sandboxed, then execs unsandboxed: the refusal
	 * before the exec is judged with the sandboxed image (ENOSPC is a
	 * sandbox refusal only in a sandbox) */
	add_process(100, 1000, 1, 11);
	add_denial(100, 2000, "openat", ENOSPC, D "/nowhere/f");
	add_process(100, 3000, 0, 22);
	add_denial(100, 4000, "openat", ENOSPC, D "/nowhere/f");
	build_opts(0, NULL, 0);

	cr_assert_eq(rep.ngroups, 2);
	cr_assert_eq(rep.groups[0].v.cause, DT_CAUSE_OUTSIDE_ROOTS);
	cr_assert_eq(rep.groups[1].v.cause, DT_CAUSE_UNKNOWN);
	cr_assert_eq(dt_report_proc(&rep, rep.groups[1].rep, 100)->time_real, 3000,
	             "the latest image");
}

Test(report, the_same_pid_in_rings_of_two_hosts_is_two_processes_each_with_its_host)
{
	/* pid 100 sandboxed on host a (ring 0), pid 100 unsandboxed on host b
	 * (ring 1), its record later: each refusal is judged with its own
	 * host's process, not with the latest image of "pid 100" */
	struct dt_record *p = add_process(100, 1000, 1, 11);
	p->hostname = "host-a";
	p->boot_id = "boot-a";
	p = add_process(100, 1500, 0, 22);
	p->hostname = "host-b";
	p->boot_id = "boot-b";
	p->ring = 1;
	add_denial(100, 2000, "openat", ENOSPC, D "/nowhere/f");
	add_denial(100, 2500, "openat", ENOSPC, D "/nowhere/f")->ring = 1;
	build_opts(0, NULL, 0);

	cr_assert_eq(rep.ngroups, 2, "a sandbox refusal and an unknown one");
	cr_expect_eq(rep.refusing_procs, 2);
	cr_expect(rep.multihost);
	for (size_t g = 0; g < 2; g++) {
		const struct dt_record *d = rep.groups[g].rep;
		cr_expect_eq(rep.groups[g].v.cause,
		             d->ring ? DT_CAUSE_UNKNOWN : DT_CAUSE_OUTSIDE_ROOTS);
		cr_expect_str_eq(dt_report_host(&rep, d), d->ring ? "host-b" : "host-a");
	}
}

Test(report, hcom_home_only_from_the_environment_of_hcom_itself)
{
	static const char *const hcom_argv[] = {"/usr/bin/hcom", "start"};
	static const char *const env1[] = {"HOME=" D "/h1"};
	static const char *const env2[] = {"HOME=" D "/h2"};
	struct dt_record *a = add_process(100, 1000, 0, 1);
	a->argv = (const char **)hcom_argv;
	a->env = (const char **)env1;
	a->nenv = 1;
	struct dt_record *b = add_process(200, 1001, 0, 1);
	b->env = (const char **)env2;
	b->nenv = 1;
	build_opts(0, NULL, 0);

	int h1 = 0, h2 = 0;
	for (size_t i = 0; i < rep.roots.n; i++) {
		h1 |= !strcmp(rep.roots.v[i].path, D "/h1/.hcom");
		h2 |= !strcmp(rep.roots.v[i].path, D "/h2/.hcom");
	}
	cr_assert(h1, "hcom's own HOME gives ~/.hcom");
	cr_assert_not(h2, "an unrelated process's HOME does not");
}

/* ---- next ------------------------------------------------------------------------------ */

Test(report, db_refusal_then_reopen_in_the_same_pid_sets_next)
{
	scenario(0);
	const struct dt_report_group *g = group(D "/data/app.db", "openat");

	cr_assert_not_null(g->next);
	assert_has(g->next, "SQLite reopened the database read-only");
	cr_assert_eq(rep.reopens, 3);
}

Test(report, reopen_by_another_pid_or_before_the_refusal_is_not_next)
{
	scenario(0);

	cr_assert_null(group(D "/data/other.txt", "openat")->next);
	cr_assert_null(group(D "/data/before.txt", "openat")->next);
}

Test(report, reopen_of_a_plain_file_says_read_only_instead)
{
	/* not SQLite's O_RDWR|O_CREAT: an editor saving, then reading back */
	add_denial(100, 2000, "openat", EROFS, D "/data/notes.txt")->flags =
	    O_WRONLY | O_CREAT | O_TRUNC;
	add_path_rec(DT_REC_REOPEN, 100, 2001, "openat", 0, D "/data/notes.txt");
	build_opts(0, data_roots, 1);

	cr_assert_not_null(rep.groups[0].next);
	assert_has(rep.groups[0].next, "opened the same path read-only instead");
}

Test(report, side_files_without_reopen_say_what_sqlite_does_next)
{
	scenario(0);

	const char *j = group(D "/data/app.db-journal", "openat")->next;
	cr_assert_not_null(j);
	assert_has(j, "could not create its journal");
	const char *w = group(D "/out/y.db-wal", "openat")->next;
	cr_assert_not_null(w);
	assert_has(w, "could not create the WAL");
}

Test(report, a_new_wal_refused_with_eacces_is_readonly_directory_and_a_refused_unlink_stays)
{
	/* no stat facts: the wal is taken as missing, as the probe records a
	 * leaf that does not exist */
	struct dt_record *d = add_denial(100, 2000, "open64", EACCES, D "/data/k.db-wal");
	d->sqlite_hint = "wal";
	d = add_denial(100, 2100, "unlink", EACCES, D "/data/k.db-shm");
	d->sqlite_hint = "shm";
	d = add_denial(100, 2200, "open64", EROFS, D "/data/k.db-shm");
	d->sqlite_hint = "shm";
	build_opts(0, data_roots, 1);

	assert_has(group(D "/data/k.db-wal", "open64")->next, "SQLITE_READONLY_DIRECTORY");
	assert_has(group(D "/data/k.db-wal", "open64")->next,
	           "attempt to write a readonly database");
	assert_has(group(D "/data/k.db-shm", "unlink")->next, "could not delete it");
	assert_has(group(D "/data/k.db-shm", "open64")->next, "unable to open database file");
}

Test(report, a_side_file_sqlite_could_not_create_names_the_error_it_returns_by_errno)
{
	/* os_unix.c: a new journal or WAL refused with EACCES is
	 * SQLITE_READONLY_DIRECTORY, with EROFS or EPERM SQLITE_CANTOPEN */
	struct dt_record *d = add_denial(100, 2000, "open64", EROFS, D "/data/k.db-wal");
	d->sqlite_hint = "wal";
	d = add_denial(100, 2100, "open64", EPERM, D "/data/k.db-journal");
	d->sqlite_hint = "journal";
	d = add_denial(100, 2200, "open64", EACCES, D "/data/j.db-journal");
	d->sqlite_hint = "journal";
	build_opts(0, data_roots, 1);

	assert_has(group(D "/data/k.db-wal", "open64")->next, "unable to open database file");
	assert_has(group(D "/data/k.db-journal", "open64")->next, "unable to open database file");
	assert_has(group(D "/data/j.db-journal", "open64")->next,
	           "attempt to write a readonly database");
}

/* ---- SQLite side files: was the database writable for that process? ---------------------- */

Test(report, journal_of_a_refused_db_is_the_roots_problem)
{
	scenario(0);

	cr_assert_eq(group(D "/data/app.db-journal", "openat")->v.cause, DT_CAUSE_ROOT_NOT_GRANTED);
}

Test(report, wal_beside_a_db_the_process_opened_for_writing_is_a_side_file_problem)
{
	scenario(0);
	const struct dt_report_group *g = group(D "/out/y.db-wal", "openat");

	cr_assert_eq(g->v.cause, DT_CAUSE_SQLITE_SIDE_FILE);
	assert_has(g->v.reason,
	           "the database itself was writable (this process opened it for writing)");
}

Test(report, wal_beside_a_db_nobody_refused_on_a_read_only_mount_is_the_roots_problem)
{
	/* nothing says the database was writable, and its mount is not */
	add_process(100, 1000, 1, 11);
	add_denial(100, 2000, "openat", EROFS, D "/data/z.db-wal");
	build_opts(0, data_roots, 1);
	const struct dt_report_group *g = group(D "/data/z.db-wal", "openat");

	cr_assert_str_eq(g->rep->sqlite, "wal");
	cr_assert_eq(g->v.cause, DT_CAUSE_ROOT_NOT_GRANTED);
}

Test(report, a_refused_read_of_the_db_does_not_count_as_a_db_write_refusal)
{
	add_process(100, 1000, 1, 11);
	add_path_rec(DT_REC_WRITE, 100, 1500, "openat", 0, D "/data/z.db");
	add_denial(100, 2000, "openat", EACCES, D "/data/z.db")->writes = 0;
	add_denial(100, 2001, "openat", EROFS, D "/data/z.db-shm");
	build_opts(0, data_roots, 1);

	cr_assert_eq(group(D "/data/z.db-shm", "openat")->v.cause, DT_CAUSE_SQLITE_SIDE_FILE);
}

Test(report, a_refused_write_of_the_db_by_another_process_does_not_decide_for_this_one)
{
	add_process(100, 1000, 1, 11);
	add_process(200, 1001, 1, 11);
	add_path_rec(DT_REC_WRITE, 100, 1500, "openat", 0, D "/data/z.db");
	add_denial(200, 1600, "openat", EROFS, D "/data/z.db");
	add_denial(100, 2001, "openat", EROFS, D "/data/z.db-journal");
	build_opts(0, data_roots, 1);

	cr_assert_eq(group(D "/data/z.db-journal", "openat")->v.cause, DT_CAUSE_SQLITE_SIDE_FILE);
}

/* ---- intermittent ---------------------------------------------------------------------------- */

Test(report, written_elsewhere_is_intermittent_and_the_sandbox_is_what_differed)
{
	scenario(0);
	const struct dt_report_group *g = group(D "/out/log.txt", "openat");

	cr_assert(g->intermittent);
	cr_assert_str_eq(g->diff.fact, "mount-namespace");
	cr_assert_str_eq(g->diff.ok.values[0], "mnt:[22]");
	cr_assert_str_eq(g->diff.refused.values[0], "mnt:[11]");
	cr_assert_eq(rep.writes, 3);
}

Test(report, a_files_existence_after_the_call_is_never_the_difference)
{
	/* the -wal existed after the successful open and not at the refused
	 * one: a consequence of the calls, not a cause */
	scenario(0);
	const struct dt_report_group *g = group(D "/out/y.db-wal", "openat");

	cr_assert(g->intermittent);
	cr_assert_null(g->diff.fact, "%s", g->diff.line);
	assert_has(g->diff.line, "no recorded fact separates the 1 recorded successful write");
	cr_assert_null(strstr(g->diff.line, "exist"), "%s", g->diff.line);
}

Test(report, not_written_is_not_intermittent)
{
	scenario(0);
	const struct dt_report_group *g = group(D "/data/app.db", "openat");

	cr_assert_not(g->intermittent);
	cr_assert_not(g->diff.computed);
}

/* A journal created in D/data at 0755 and refused there at 0555. */
static struct dt_record *journal_rec(int type, long pid, uint64_t t, uint32_t dir_mode)
{
	struct dt_record *d = add_path_rec(
	    type, pid, t, "open64", type == DT_REC_DENIAL ? EACCES : 0, D "/data/k.db-journal");
	d->uid = 65534;
	d->p[0].has_st = 1;
	d->p[0].st.valid = DT_SF_PARENT | (type == DT_REC_DENIAL ? 0 : DT_SF_EXISTS);
	d->p[0].st.parent_mode = 040000 | dir_mode;
	d->p[0].st.parent_uid = d->p[0].st.parent_gid = 65534;
	return d;
}

Test(report, the_directory_mode_separates_and_the_traced_chmod_that_set_it_is_named)
{
	add_process(100, 1000, 0, 11);
	add_process(300, 1000, 0, 11)->comm = "backup";
	journal_rec(DT_REC_WRITE, 100, 2000, 0755);
	struct dt_record *c = add_path_rec(DT_REC_WRITE, 300, 2500, "chmod", 0, D "/data");
	c->comm = "backup";
	c->p[0].has_st = 1;
	c->p[0].st.valid = DT_SF_EXISTS;
	c->p[0].st.mode = 040555;
	journal_rec(DT_REC_DENIAL, 100, 3000, 0555);
	journal_rec(DT_REC_DENIAL, 100, 3100, 0555);
	/* opened while the journal was there: no create needed, left out */
	journal_rec(DT_REC_WRITE, 100, 3200, 0555)->flags = O_RDWR;
	journal_rec(DT_REC_WRITE, 100, 4000, 0755);
	build_opts(0, data_roots, 1);
	const struct dt_report_group *g = group(D "/data/k.db-journal", "open64");

	cr_assert_str_eq(g->diff.fact, "directory-mode");
	cr_assert_str_eq(g->diff.subject, D "/data");
	cr_assert_eq(g->diff.ok.count, 2);
	cr_assert_eq(g->diff.refused.count, 2);
	cr_assert_eq(g->diff.found_existing, 1);
	assert_has(g->diff.line, D "/data/ was 0755 on all 2 recorded successful writes and 0555 "
	                           "on all 2 refused ones");
	cr_assert_not_null(g->diff.changer);
	cr_assert_eq(g->diff.changer->pid, 300);
	assert_has(g->diff.changed, "set to 0555 by pid 300 (backup), chmod at");
	cr_assert_eq(rep.findings.v[0].diff, &g->diff);
}

Test(report, a_change_no_traced_call_made_is_placed_between_the_last_success_and_first_refusal)
{
	add_process(100, 1000, 0, 11);
	journal_rec(DT_REC_WRITE, 100, 2000, 0755);
	journal_rec(DT_REC_WRITE, 100, 2400, 0755);
	journal_rec(DT_REC_DENIAL, 100, 3000, 0555);
	build_opts(0, data_roots, 1);
	const struct dt_report_group *g = group(D "/data/k.db-journal", "open64");

	cr_assert_str_eq(g->diff.fact, "directory-mode");
	cr_assert_null(g->diff.changer);
	cr_assert(g->diff.outside);
	cr_assert_eq(g->diff.outside_after_ns, 2400);
	cr_assert_eq(g->diff.outside_before_ns, 3000);
	assert_has(g->diff.changed, "changed from outside the traced processes, between");
}

Test(report, a_read_only_mount_seen_only_from_a_sandbox_is_no_change_over_time)
{
	add_process(100, 1000, 1, 11);
	add_process(300, 1000, 0, 22);
	struct dt_record *recs[2] = {
	    add_path_rec(DT_REC_WRITE, 300, 2000, "openat", 0, D "/data/k.db"),
	    add_path_rec(DT_REC_DENIAL, 100, 3000, "openat", EROFS, D "/data/k.db")};
	for (int i = 0; i < 2; i++) {
		recs[i]->p[0].has_st = 1;
		recs[i]->p[0].st.valid = DT_SF_EXISTS | DT_SF_MOUNT;
		recs[i]->p[0].st.mode = 0100644;
		recs[i]->p[0].st.mount_flags = i ? ST_RDONLY : 0;
	}
	build_opts(0, data_roots, 1);
	const struct dt_report_group *g = group(D "/data/k.db", "openat");

	cr_assert_str_eq(g->diff.fact, "read-only-mount", "%s", g->diff.line);
	assert_has(g->diff.line, "was read-write on the 1 recorded successful write and "
	                         "read-only on the 1 refused one");
	assert_has(g->diff.changed, "no change over time: the refused processes saw it through "
	                            "another mount namespace (mnt:[11])");
	cr_assert_not(g->diff.outside);
}

Test(report, a_write_of_another_kind_is_not_intermittent)
{
	/* the file was chmod'ed successfully, but never opened for writing */
	add_denial(100, 2000, "openat", EROFS, D "/data/f");
	add_path_rec(DT_REC_WRITE, 300, 2100, "fchmodat", 0, D "/data/f");
	build_opts(1, data_roots, 1);

	cr_assert_not(rep.groups[0].intermittent);
}

Test(report, opens_of_any_spelling_are_the_same_kind)
{
	add_denial(100, 2000, "openat", EROFS, D "/data/f");
	add_path_rec(DT_REC_WRITE, 300, 2100, "fopen64", 0, D "/data/f");
	build_opts(1, data_roots, 1);

	cr_assert(rep.groups[0].intermittent);
	cr_assert(rep.groups[0].diff.computed);
}

Test(report, a_refused_read_is_never_intermittent)
{
	add_denial(100, 2000, "openat", EACCES, D "/data/f")->writes = 0;
	add_path_rec(DT_REC_WRITE, 300, 2100, "openat", 0, D "/data/f");
	build_opts(1, data_roots, 1);

	cr_assert_not(rep.groups[0].intermittent);
}

Test(report, lock_contention_is_never_intermittent)
{
	add_denial(100, 2000, "flock", EAGAIN, D "/data/f");
	add_path_rec(DT_REC_WRITE, 300, 2100, "flock", 0, D "/data/f");
	add_path_rec(DT_REC_WRITE, 300, 2200, "openat", 0, D "/data/f");
	build_opts(1, data_roots, 1);

	cr_assert_eq(rep.groups[0].v.cause, DT_CAUSE_LOCK_CONTENTION);
	cr_assert_not(rep.groups[0].intermittent);
}

/* ---- hidden ---------------------------------------------------------------------------------- */

Test(report, lock_contention_and_bwrap_setup_are_hidden_without_all)
{
	scenario(0);
	const struct dt_report_group *lock = group(D "/work/x.db", "fcntl");
	const struct dt_report_group *setup = group("/newroot" D "/data", "access");

	cr_assert_eq(lock->v.cause, DT_CAUSE_LOCK_CONTENTION);
	cr_assert(lock->hidden);
	cr_assert(setup->hidden);
	cr_assert_eq(rep.hidden_denials, 1);
	cr_assert_eq(rep.hidden_setup, 1);
	cr_assert_eq(rep.by_cause[DT_CAUSE_LOCK_CONTENTION], 0);
	/* app.db x2, its journal, unlink, other, before, log, wal */
	cr_assert_eq(rep.denials, 8);

	const char *t = render(FMT_TEXT);
	assert_has(t, "(1 lock-contention failure hidden; --all shows them)");
	assert_has(t, "(1 refusal by bubblewrap while setting up the sandbox hidden");
	assert_lacks(t, "REFUSED fcntl");
	assert_lacks(t, "/newroot");
	const char *m = render(FMT_MD);
	assert_lacks(m, "x.db");
	assert_lacks(m, "/newroot");
}

Test(report, all_shows_lock_contention_and_setup)
{
	scenario(1);

	cr_assert_not(group(D "/work/x.db", "fcntl")->hidden);
	cr_assert_not(group("/newroot" D "/data", "access")->hidden);
	cr_assert_eq(rep.hidden_denials, 0);
	cr_assert_eq(rep.hidden_setup, 0);
	cr_assert_eq(rep.by_cause[DT_CAUSE_LOCK_CONTENTION], 1);
	cr_assert_eq(rep.denials, 10);
	assert_has(render(FMT_TEXT), "REFUSED fcntl");
}

Test(report, newroot_refusal_by_another_program_is_not_hidden)
{
	add_denial(100, 2000, "access", EACCES, "/newroot/x");
	build_opts(0, NULL, 0);

	cr_assert_not(rep.groups[0].hidden);
	cr_assert_eq(rep.hidden_setup, 0);
	cr_assert_eq(rep.denials, 1);
}

Test(report, bwrap_refusal_outside_newroot_is_not_hidden)
{
	add_denial(100, 2000, "mkdir", EACCES, D "/x")->comm = "bwrap";
	build_opts(0, NULL, 0);

	cr_assert_not(rep.groups[0].hidden);
	cr_assert_eq(rep.hidden_setup, 0);
	cr_assert_eq(rep.denials, 1);
}

Test(report, bwrap_refusal_under_a_sibling_of_newroot_is_not_hidden)
{
	add_denial(100, 2000, "mkdir", EACCES, "/newrootfs/x")->comm = "bwrap";
	build_opts(0, NULL, 0);

	cr_assert_not(rep.groups[0].hidden);
	cr_assert_eq(rep.hidden_setup, 0);
}

/* ---- JSON --------------------------------------------------------------------------------------
 */

Test(report, json_has_the_documented_keys_and_values)
{
	scenario(0);
	json_flat();

	assert_json("version", "1");
	/* the documented top-level keys (more may be added) */
	static const char *const top[] = {"rings#", "summary{}", "denials#",  "roots#",
	                                  "codex",  "warnings#", "processes#"};
	for (size_t k = 0; k < sizeof(top) / sizeof(*top); k++)
		cr_assert_not_null(jget(top[k]), "JSON has no %s:\n%s", top[k], flat);
	assert_json("summary.denials", "8");
	assert_json("summary.groups", "7");
	assert_json("summary.hidden_lock_contention", "1");
	assert_json("summary.hidden_sandbox_setup", "1");
	assert_json("summary.by_cause{}", "[\"root-not-granted\", \"sqlite-side-file\"]");
	assert_json("summary.by_cause.root-not-granted", "7");
	assert_json("summary.by_cause.sqlite-side-file", "1");
	assert_json("summary.reopens", "3");
	assert_json("summary.writes", "3");
	assert_json("summary.processes", "3");
	assert_json("denials#", "7");

	int i = json_denial("\"" D "/data/app.db\"", "openat");
	cr_assert_geq(i, 0, "no JSON denial for app.db:\n%s", flat);
	assert_json(dkey(i, "cause"), "\"root-not-granted\"");
	assert_json(dkey(i, "expected_root"), "\"" D "/data\"");
	assert_json(dkey(i, "root_source"), "\"--root\"");
	assert_json(dkey(i, "granted"), "false");
	assert_json(dkey(i, "count"), "2");
	assert_json(dkey(i, "pids#"), "2");
	assert_json(dkey(i, "pids[0]"), "100");
	assert_json(dkey(i, "pids[1]"), "200");
	assert_json(dkey(i, "sqlite"), "\"db\"");
	assert_json(dkey(i, "errno"), "\"EROFS\"");
	assert_json(dkey(i, "flags"), "\"O_RDWR|O_CREAT\"");
	assert_json(dkey(i, "access"), "\"write\"");
	assert_json(dkey(i, "first"), "\"1970-01-01T00:00:00.000002Z\"");
	assert_json(dkey(i, "last"), "\"1970-01-01T00:00:00.000003Z\"");
	assert_json(dkey(i, "intermittent"), "null");
	assert_json(dkey(i, "injected"), "false");
	assert_json(dkey(i, "dropped_by"), "null");
	assert_has(jget(dkey(i, "advice")), "Make " D "/data writable");
	assert_has(jget(dkey(i, "next")), "reopened the database read-only");

	i = json_denial("\"" D "/out/log.txt\"", "openat");
	cr_assert_geq(i, 0);
	assert_has(jget(dkey(i, "intermittent")), "the mount namespace was mnt:[22]");
	assert_json(dkey(i, "sqlite"), "null");

	i = json_denial("\"" D "/out/y.db-wal\"", "openat");
	cr_assert_geq(i, 0);
	assert_json(dkey(i, "cause"), "\"sqlite-side-file\"");
	assert_json(dkey(i, "expected_root"), "\"" D "/out\"");
	assert_json(dkey(i, "sqlite"), "\"wal\"");

	/* hidden groups are not in the list */
	cr_assert_lt(json_denial("\"" D "/work/x.db\"", "fcntl"), 0);
	assert_lacks(flat, "/newroot");
}

Test(report, json_roots_and_processes)
{
	scenario(0);
	json_flat();

	assert_json("roots#", "3");
	assert_json("roots[0].path", "\"" D "/data\"");
	assert_json("roots[0].kind", "\"explicit\"");
	assert_json("roots[0].source", "\"--root\"");
	assert_json("roots[0].granted", "false");
	assert_json("roots[0].readonly", "false");
	assert_json("roots[0].realpath", "null");
	assert_json("roots[2].path", "\"" D "/work\"");
	assert_json("roots[2].kind", "\"effective\"");
	assert_json("roots[2].granted", "true");
	assert_json("codex", "null");

	assert_json("processes#", "3");
	assert_json("processes[0].pid", "100");
	assert_json("processes[0].sandboxed", "true");
	assert_json("processes[0].argv#", "2");
	assert_json("processes[0].argv[1]", "\"worker.py\"");
	assert_json("processes[0].writable_mounts#", "2");
	assert_json("processes[0].writable_mounts[1]", "\"" D "/work\"");
	assert_json("processes[2].pid", "300");
	assert_json("processes[2].sandboxed", "false");
}

Test(report, json_granted_is_null_when_unknown)
{
	/* no process record at all: nobody says whether /data was granted */
	add_denial(100, 2000, "openat", EROFS, D "/data/f");
	build_opts(0, data_roots, 1);
	json_flat();

	assert_json("denials[0].cause", "\"root-not-granted\"");
	assert_json("denials[0].granted", "null");
	assert_json("roots[0].granted", "null");
}

Test(report, json_granted_is_what_the_refusing_process_saw)
{
	/* two sandboxes in one run: pid 500's has D/data rw, pid 100's not */
	static struct dt_mount data_rw[] = {{"/", "ext4", 0}, {D "/data", "ext4", 1}};
	add_process(100, 1000, 1, 11);
	struct dt_record *p = add_process(500, 1001, 1, 55);
	p->mounts = data_rw;
	p->nmounts = NMOUNTS(data_rw);
	add_denial(100, 2000, "openat", EROFS, D "/data/f");
	build_opts(0, data_roots, 1);
	json_flat();

	assert_json("roots[0].path", "\"" D "/data\"");
	assert_json("roots[0].granted", "true");
	assert_json("denials[0].cause", "\"root-not-granted\"");
	assert_json("denials[0].granted", "false");
	assert_has(render(FMT_TEXT), D "/data (--root), NOT granted");
	assert_has(render(FMT_MD), "| **no** |");
}

Test(report, json_empty_report_is_valid)
{
	build_opts(0, NULL, 0);
	json_flat();

	assert_json("denials#", "0");
	assert_json("roots#", "0");
	assert_json("processes#", "0");
	assert_json("summary.by_cause{}", "[]");
}

/* Control characters, quotes, backslashes, DEL, bytes that are not UTF-8
 * (a lone 0xff, 0xc3 before an ASCII byte, a sequence cut short at the end)
 * and one valid multi-byte character. */
#define EVIL D "/a\"b\\c\x01\x1b[31m\n\t\x7f\xff\xc3(\xe2\x82\xac\xe2\x82"
/* What Python's json.dumps makes of it once decoded: invalid bytes are
 * their Latin-1 reading, the euro sign stays a euro sign. */
#define EVIL_JSON                                                                                  \
	"\"" D "/a\\\"b\\\\c\\u0001\\u001b[31m\\n\\t\\u007f\\u00ff\\u00c3(\\u20ac\\u00e2\\u0082\""

Test(report, json_stays_valid_whatever_bytes_a_path_holds)
{
	static const char *const argv_evil[] = {"python3", "\x1b]0;x\x07\xfe"};
	static const char *const env_evil[] = {"HERMES_KANBAN_DB=" D "/k\x01\xff/kanban.db"};
	static const char *const roots_evil[] = {EVIL};
	struct dt_record *p = add_process(100, 1000, 1, 11);
	p->argv = (const char **)argv_evil;
	p->cwd = D "/cwd\x02\xff";
	p->env = (const char **)env_evil;
	p->nenv = 1;
	struct dt_record *d = add_denial(100, 2000, "openat", EROFS, EVIL);
	d->comm = "c\x1b\"\\\xff";
	d->sqlite_hint = "db";
	d->p[1].path = "\xff\x01";
	add_denial(100, 2001, "openat", EROFS, EVIL "/sub");
	build_opts(0, roots_evil, 1);
	json_flat();

	int i = json_denial(EVIL_JSON, "openat");
	cr_assert_geq(i, 0, "the path did not survive:\n%s", flat);
	assert_json(dkey(i, "path"), EVIL_JSON);
	assert_json(dkey(i, "expected_root"), EVIL_JSON);
	assert_json(dkey(i, "comm"), "\"c\\u001b\\\"\\\\\\u00ff\"");
	assert_json(dkey(i, "path2"), "\"\\u00ff\\u0001\"");
	assert_json("roots[0].path", EVIL_JSON);
	assert_json("processes[0].argv[1]", "\"\\u001b]0;x\\u0007\\u00fe\"");
	assert_json("processes[0].cwd", "\"" D "/cwd\\u0002\\u00ff\"");
	/* raw control bytes never reach the output */
	for (const char *c = out; *c; c++)
		cr_assert(((unsigned char)*c >= 0x20 && *c != 0x7f) || *c == '\n',
		          "raw control byte 0x%02x in JSON", (unsigned char)*c);
}

/* ---- Markdown ----------------------------------------------------------------------------------
 */

/* Number of '|' in line not escaped by a backslash. */
static int table_pipes(const char *line, size_t len)
{
	int n = 0;

	for (size_t i = 0; i < len; i++)
		if (line[i] == '|' && (i == 0 || line[i - 1] != '\\'))
			n++;
	return n;
}

/* The line of s that contains needle. */
static const char *line_with(const char *s, const char *needle, size_t *len)
{
	const char *p = strstr(s, needle);

	cr_assert_not_null(p, "no line with \"%s\":\n%s", needle, s);
	while (p > s && p[-1] != '\n')
		p--;
	*len = strcspn(p, "\n");
	return p;
}

Test(report, markdown_escapes_pipes_in_table_cells)
{
	static const char *const roots_pipe[] = {D "/r|oot"};
	add_denial(100, 2000, "openat", EROFS, D "/r|oot/a|b.txt");
	build_opts(0, roots_pipe, 1);
	const char *m = render(FMT_MD);
	size_t len;

	const char *row = line_with(m, "| openat | EROFS |", &len);
	cr_assert_eq(table_pipes(row, len), 8, "a 7-column row has 8 cell pipes: %.*s", (int)len,
	             row);
	assert_has(m, D "/r\\|oot/a\\|b.txt");
	const char *hdr = line_with(m, "| path | op |", &len);
	cr_assert_eq(table_pipes(hdr, len), 8);
	/* the roots table too */
	row = line_with(m, "| --root |", &len);
	cr_assert_eq(table_pipes(row, len), 4, "%.*s", (int)len, row);
}

/* CommonMark: a code span opened by a run of N backticks ends at the next
 * run of exactly N. Checks that s..s+len is one such span. */
static void assert_one_code_span(const char *s, size_t len)
{
	size_t open = strspn(s, "`");
	cr_assert_gt(open, 0, "not a code span: %.*s", (int)len, s);
	cr_assert_lt(2 * open, len, "not a code span: %.*s", (int)len, s);
	for (size_t i = len - open; i < len; i++)
		cr_assert_eq(s[i], '`', "not closed by %zu backticks: %.*s", open, (int)len, s);
	cr_assert_neq(s[len - open - 1], '`', "closed by a longer run: %.*s", (int)len, s);
	for (size_t i = open; i < len - open;) {
		size_t run = 0;
		while (s[i + run] == '`')
			run++;
		cr_assert_neq(run, open, "span closes early at offset %zu: %.*s", i, (int)len, s);
		i += run ? run : 1;
	}
}

Test(report, markdown_code_spans_survive_backticks_in_paths)
{
	add_denial(100, 2000, "openat", EROFS, D "/a``b`c");
	add_denial(100, 2001, "openat", EROFS, "`" D "/edge`");
	build_opts(0, NULL, 0);
	const char *m = render(FMT_MD);

	/* the longest run inside is 2: the fence is 3 */
	assert_has(m, "``` " D "/a``b`c ```");
	assert_has(m, "`` `" D "/edge` ``");
	size_t len;
	const char *row = line_with(m, "a``b`c", &len);
	const char *span = strstr(row, "```");
	assert_one_code_span(span, (size_t)(strstr(span + 3, " ```") + 4 - span));
}

Test(report, markdown_escapes_control_characters)
{
	add_denial(100, 2000, "openat", EROFS, D "/esc\x1b[31m\x01")->comm = "w\x1b";
	build_opts(0, NULL, 0);
	const char *m = render(FMT_MD);

	cr_assert_null(strchr(m, '\x1b'), "raw ESC in Markdown:\n%s", m);
	cr_assert_null(strchr(m, '\x01'));
	assert_has(m, D "/esc\\x1b[31m\\x01");
}

Test(report, markdown_comm_with_a_backtick_stays_one_code_span)
{
	add_denial(100, 2000, "openat", EROFS, D "/f")->comm = "tick`<b>";
	build_opts(0, NULL, 0);
	const char *m = render(FMT_MD);
	size_t len;

	const char *line = line_with(m, "- **seen**:", &len);
	const char *by = strstr(line, "by ");
	const char *pid = strstr(line, " (pid ");
	cr_assert(by && pid && by < pid, "%.*s", (int)len, line);
	assert_one_code_span(by + 3, (size_t)(pid - by - 3));
}

Test(report, markdown_summary_and_sections)
{
	scenario(0);
	const char *m = render(FMT_MD);

	assert_has(m, "**3 problems**: 8 refused file operations (`sqlite-side-file` 1, "
	              "`root-not-granted` 7)");
	assert_has(m, "#### `root-not-granted` EROFS: ` " D "/data/app.db `");
	assert_has(m, "- **then**: SQLite reopened the database read-only");
	assert_has(m, "- **intermittent**: the mount namespace was mnt:\\[22\\] on the 1 recorded "
	              "successful write and mnt:\\[11\\] on the 1 refused one");
	assert_has(m, "| ` " D "/data/app.db ` | openat | EROFS | 2 | `root-not-granted` | ` " D
	              "/data ` | **no** |");
}

/* ---- text
 * ---------------------------------------------------------------------------------------- */

#define OSC D "/t\x1b]0;pwned\x07/f"

static void evil_text_report(void)
{
	static const char *const roots_esc[] = {D "/t\x1b]0;pwned\x07"};
	add_process(100, 1000, 1, 11);
	struct dt_record *d = add_denial(100, 2000, "openat", EROFS, OSC);
	d->comm = "w\x1b[2J";
	d->p[0].abspath = D "/logical\x1b[5m/f";
	add_denial(100, 2001, "openat", EROFS, D "/c\x1b[31m/g");
	build_opts(0, roots_esc, 1);
}

Test(report, text_without_color_has_no_escape_byte)
{
	evil_text_report();
	const char *t = render(FMT_TEXT);

	cr_assert_null(strchr(t, '\x1b'), "raw ESC in text:\n%s", t);
	cr_assert_null(strchr(t, '\x07'));
	assert_has(t, D "/t\\x1b]0;pwned\\x07/f");
	assert_has(t, D "/c\\x1b[31m/g");
	assert_has(t, "w\\x1b[2J");
	assert_has(t, "logical  " D "/logical\\x1b[5m/f");
}

Test(report, text_with_color_has_escapes_only_from_its_styles)
{
	static const char *const styles[] = {"\x1b[1m",  "\x1b[31m", "\x1b[33m",
	                                     "\x1b[32m", "\x1b[2m",  "\x1b[0m"};
	evil_text_report();
	const char *t = render(FMT_TEXT_COLOR);
	int seen = 0;

	for (const char *e = strchr(t, '\x1b'); e; e = strchr(e + 1, '\x1b')) {
		int ok = 0;
		for (size_t k = 0; k < sizeof(styles) / sizeof(*styles); k++)
			ok |= !strncmp(e, styles[k], strlen(styles[k]));
		cr_assert(ok, "ESC not from a style at: %.20s", e);
		seen++;
	}
	cr_assert_gt(seen, 0, "color=1 uses styles");
	assert_has(t, D "/t\\x1b]0;pwned\\x07/f");
	/* the path's own "ESC [31m" is escaped, not a style */
	assert_has(t, D "/c\\x1b[31m/g");
	assert_lacks(t, D "/c\x1b");
}

Test(report, text_warnings_from_the_environment_have_no_escape_byte)
{
	/* a relative HERMES_KANBAN_DB and no PWD: the roots get a warning
	 * that quotes the value */
	static const char *const env[] = {"HERMES_KANBAN_DB=rel\x1b]0;pwned\x07/kanban.db"};
	struct dt_record *p = add_process(100, 1000, 1, 11);
	p->env = (const char **)env;
	p->nenv = 1;
	build_opts(0, NULL, 0);
	cr_assert_eq(rep.roots.nwarnings, 1);
	const char *t = render(FMT_TEXT);

	assert_has(t, "warning:");
	cr_assert_null(strchr(t, '\x1b'), "raw ESC in text:\n%s", t);
}

Test(report, text_record_fields_other_than_paths_have_no_escape_byte)
{
	/* op and the SQLite role come from the ring, which lives in the
	 * traced process's memory like the paths do */
	struct dt_record *d = add_denial(100, 2000, "open\x1b[2J", EROFS, D "/f");
	d->sqlite = "db\x1b]0;x\x07";
	build_opts(0, NULL, 0);
	const char *t = render(FMT_TEXT);

	cr_assert_null(strchr(t, '\x1b'), "raw ESC in text:\n%s", t);
}

Test(report, text_summary_counts_and_groups)
{
	scenario(0);
	const char *t = render(FMT_TEXT);

	assert_has(t, "3 problems: 8 refusals in 7 groups; 3 processes traced");
	assert_has(t,
	           "REFUSED openat(O_RDWR|O_CREAT) " D "/data/app.db EROFS x2 [sqlite db "
	           "(evidence: reopen; header not checked: the database file no longer exists)]");
	assert_has(t, "  cause    root-not-granted: ");
	assert_has(t, "  root     " D "/data (--root), NOT granted");
	assert_has(t, "  by       worker pid 100,200; 1970-01-01T00:00:00.000002Z .. "
	              "1970-01-01T00:00:00.000003Z");
	assert_has(t, "  next     SQLite reopened");
	assert_has(
	    t, "  differs  the mount namespace was mnt:[22] on the 1 recorded successful write");
	assert_has(t, "By cause: sqlite-side-file 1; root-not-granted 7;");
}

Test(report, text_with_nothing_refused_says_so)
{
	add_process(100, 1000, 0, 1);
	build_opts(0, NULL, 0);
	const char *t = render(FMT_TEXT);

	assert_has(t, "0 refusals in 0 groups; 1 process traced");
	assert_has(t, "No refused file operations were recorded.");
	assert_lacks(t, "By cause");
}

/* ---- dt_put_safe ------------------------------------------------------------------------------
 */

static const char *put_safe(const char *s)
{
	size_t len;
	FILE *f;

	free(out);
	out = NULL;
	f = open_memstream(&out, &len);
	dt_put_safe(f, s);
	fclose(f);
	return out;
}

Test(report, put_safe_escapes_controls_and_backslashes)
{
	cr_assert_str_eq(put_safe("a\x1b[31m\\b\n\x7f"), "a\\x1b[31m\\\\b\\x0a\\x7f");
	cr_assert_str_eq(put_safe("/plain/\xe2\x82\xac"), "/plain/\xe2\x82\xac");
	cr_assert_str_eq(put_safe(NULL), "?");
}

/* recfmt.h: "Prints s with control characters and invalid bytes escaped
 * (\xNN)". A lone 0x9b is CSI to a terminal reading 8-bit controls. */
Test(report, put_safe_escapes_bytes_that_are_not_utf8)
{
	cr_assert_str_eq(put_safe("a\x9b"
	                          "31mb\xff"),
	                 "a\\x9b31mb\\xff");
}

/* ---- --codex-args ---------------------------------------------------------------------------- */

Test(report, unterminated_quote_in_codex_args_is_a_usage_error)
{
	struct dt_report_opts o = {0};
	char err[256] = "";

	o.codex_args = "codex --add-dir '/x";
	cr_assert_eq(dt_report_build(&rep, &o, err, sizeof(err)), DT_EXIT_USAGE);
	assert_has(err, "unterminated quote");
}

/* ---- dt_split_words -------------------------------------------------------------------------- */

static char **words;

static void words_fini(void)
{
	dt_words_free(words);
	words = NULL;
}

TestSuite(split_words, .fini = words_fini);

static void assert_words(const char *s, const char *const *want, size_t nwant)
{
	size_t n = 12345;

	words = dt_split_words(s, &n);
	cr_assert_not_null(words, "split(%s) failed", s);
	cr_assert_eq(n, nwant, "split(%s): %zu words", s, n);
	for (size_t i = 0; i < nwant; i++)
		cr_assert_str_eq(words[i], want[i], "split(%s) word %zu", s, i);
	cr_assert_null(words[nwant]);
}

Test(split_words, blanks_separate_words)
{
	static const char *const w[] = {"codex", "-s", "workspace-write", "--full-auto"};
	assert_words("  codex\t-s \n workspace-write   --full-auto ", w, 4);
}

Test(split_words, quotes_group_and_are_removed)
{
	static const char *const w[] = {"--add-dir", "/a b", "it's", "x y z", "premid dlepost"};
	assert_words("--add-dir '/a b' \"it's\" x' 'y\" \"z pre\"mid dle\"post", w, 5);
}

Test(split_words, backslash_escapes_outside_and_in_double_quotes_only)
{
	static const char *const w[] = {"a b", "c\"d", "e\\f", "g\\", "q'"};
	assert_words("a\\ b \"c\\\"d\" 'e\\f' g\\", w, 4);
	words_fini();
	assert_words("a\\ b \"c\\\"d\" 'e\\f' g\\\\ q\\'", w, 5);
}

Test(split_words, empty_quotes_make_an_empty_word)
{
	static const char *const w[] = {"x", "", "y", ""};
	assert_words("x '' y \"\"", w, 4);
}

Test(split_words, nothing_is_zero_words)
{
	assert_words("", NULL, 0);
	words_fini();
	assert_words(" \t\n ", NULL, 0);
}

Test(split_words, many_words_grow_the_array)
{
	static const char *const w[] = {"0",  "1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",  "9",
	                                "10", "11", "12", "13", "14", "15", "16", "17", "18", "19"};
	assert_words("0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", w, 20);
}

Test(split_words, unterminated_quote_is_null)
{
	cr_assert_null(dt_split_words("a \"b c", NULL));
	cr_assert_null(dt_split_words("'x", NULL));
	cr_assert_null(dt_split_words("ok \"esc\\\"", NULL));
	cr_assert_null(dt_split_words("0 1 2 3 4 5 6 7 8 9 10 11 12 'open", NULL));
}

Test(split_words, count_pointer_may_be_null)
{
	words = dt_split_words("a b", NULL);
	cr_assert_not_null(words);
	cr_assert_str_eq(words[1], "b");
	cr_assert_null(words[2]);
}

/* ---- findings ------------------------------------------------------------------------------ */

#define assert_starts(s, prefix)                                                                   \
	cr_assert(!strncmp((s), (prefix), strlen(prefix)), "does not start with %s:\n%s",          \
	          (prefix), (s))

Test(report, findings_group_the_refusals_by_root_and_cause)
{
	scenario(0);

	/* D/data (5 groups), D/out not granted (log.txt), D/out's side file */
	cr_assert_eq(rep.findings.n, 3);
	const struct dt_finding *f = &rep.findings.v[0];
	cr_assert_eq(f->ngroups, 5);
	cr_assert_eq(f->count, 6);
	cr_assert_str_eq(f->root->path, D "/data");
	cr_assert_eq(f->cause, DT_CAUSE_ROOT_NOT_GRANTED);
	/* app.db x2 first; the lock contention and bwrap's set-up are in none */
	cr_assert_str_eq(rep.groups[f->groups[0]].path, D "/data/app.db");
	cr_assert_not(f->intermittent);
	cr_assert(rep.findings.v[1].intermittent, "log.txt was written by pid 300");
	cr_assert_eq(rep.findings.v[2].cause, DT_CAUSE_SQLITE_SIDE_FILE);
}

Test(report, json_findings_list_the_ids_of_their_denial_groups)
{
	scenario(0);
	json_flat();

	assert_json("summary.problems", "3");
	assert_json("findings#", "3");
	assert_json("findings[0].groups#", "5");
	assert_json("findings[0].title", "\"" D "/data not granted to the sandbox\"");
	assert_json("findings[0].cause", "\"root-not-granted\"");
	assert_json("findings[0].expected_root", "\"" D "/data\"");
	assert_json("findings[0].granted", "false");
	assert_json("findings[0].count", "6");
	assert_json("findings[0].intermittent", "null");
	cr_assert_str_neq(jget("findings[1].intermittent"), "null");
	assert_json("denials#", "7");
	/* every id of a finding is a denial's, and the 7 ids are distinct */
	char ids[7][64];
	for (int i = 0; i < 7; i++) {
		char key[64];
		snprintf(key, sizeof(key), "denials[%d].id", i);
		cr_assert_not_null(jget(key));
		snprintf(ids[i], sizeof(ids[i]), "%s", jget(key));
		cr_assert_eq(strlen(ids[i]), 18, "%s", ids[i]);
		for (int k = 0; k < i; k++)
			cr_assert_str_neq(ids[i], ids[k]);
	}
	for (int f = 0; f < 3; f++)
		for (int i = 0;; i++) {
			char key[64];
			snprintf(key, sizeof(key), "findings[%d].groups[%d]", f, i);
			const char *id = jget(key);
			if (!id)
				break;
			int found = 0;
			for (int k = 0; k < 7; k++)
				found |= !strcmp(ids[k], id);
			cr_assert(found, "%s = %s is no denial's id", key, id);
		}
}

Test(report, group_ids_do_not_depend_on_record_order)
{
	scenario(0);
	uint64_t first = group(D "/out/log.txt", "openat")->id;
	dt_report_free(&rep);
	/* the same refusal alone, at another time, by another pid */
	add_process(100, 1000, 1, 11);
	add_denial(100, 9000, "openat", EROFS, D "/out/log.txt");
	build_opts(0, data_roots, 2);
	cr_assert_eq(group(D "/out/log.txt", "openat")->id, first);
}

Test(report, text_opens_with_the_problems_and_hides_the_groups_without_verbose)
{
	scenario(0);
	const char *t = render(FMT_TEXT_SHORT);

	assert_starts(t, "3 problems: 8 refusals in 7 groups;");
	assert_has(t, "\nPROBLEM 1: " D "/data not granted to the sandbox\n  6 refusals by worker");
	assert_has(t, "  refused  openat " D "/data/app.db EROFS x2\n");
	assert_has(t,
	           "\nPROBLEM 3: " D "/out not writable: SQLite cannot keep its side files there");
	assert_has(t, "Details: -v shows each of the 7 groups in full");
	assert_lacks(t, "REFUSED");
	/* the advice once per problem: D/data's appears once */
	const char *a = strstr(t, "Make " D "/data writable");
	cr_assert(a && !strstr(a + 1, "Make " D "/data writable"), "%s", t);

	t = render(FMT_TEXT);
	assert_has(t, "\nDetails\n");
	assert_has(t, "REFUSED openat(O_RDWR|O_CREAT) " D "/data/app.db EROFS x2");
}

Test(report, one_problem_is_singular_and_none_says_so)
{
	add_process(100, 1000, 1, 11);
	add_denial(100, 2000, "openat", EROFS, D "/data/a");
	build_opts(0, data_roots, 2);
	assert_starts(render(FMT_TEXT_SHORT), "1 problem: 1 refusal in 1 group;");
	assert_has(render(FMT_MD), "**1 problem**: 1 refused file operation");

	dt_report_free(&rep);
	add_process(100, 1000, 1, 11);
	build_opts(0, data_roots, 2);
	assert_starts(render(FMT_TEXT_SHORT), "No problems: 0 refusals in 0 groups;");
}

Test(report, markdown_has_the_problems_then_a_table_and_the_groups_collapsed)
{
	scenario(0);
	const char *m = render(FMT_MD);

	const char *p1 = strstr(m, "### Problem 1: " D "/data not granted to the sandbox");
	const char *det = strstr(m, "### Details");
	const char *open = strstr(m, "<details>\n<summary>");
	const char *close = strstr(m, "</details>");
	cr_assert(p1 && det && open && close && p1 < det && det < open && open < close, "%s", m);
	assert_has(p1, "- **refused**:\n  - ` openat ` ` " D "/data/app.db ` EROFS x2\n");
	/* the per-group sections are inside the collapsed part */
	const char *grp = strstr(m, "#### `root-not-granted`");
	cr_assert(grp && grp > open && grp < close);
}

/* ---- the timeline (report_svg.c) ------------------------------------------------------------ */

/* The SVG, parsed by Python: prints "ok", the number of <rect> with a
 * <title> ending in " refused" and the sum of their counts, and the
 * distinct y of those marks' lanes (one per process). */
static const char *svg_facts(void)
{
	static char res[4096];
	char path[4096], cmd[9000];
	render(FMT_SVG);
	snprintf(path, sizeof(path), "%s/t.svg", dtt_tmpdir());
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(out, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
	         "/usr/bin/python3 -c \"import sys, xml.etree.ElementTree as E\n"
	         "ns = '{http://www.w3.org/2000/svg}'\n"
	         "r = E.parse(sys.argv[1]).getroot()\n"
	         "m = [(x, x.find(ns + 'title').text) for x in r.iter(ns + 'rect') if x.find(ns + "
	         "'title') is not None]\n"
	         "ref = [(x, int(t.split()[0])) for x, t in m if t.endswith(' refused')]\n"
	         "print('ok', len(ref), sum(n for _, n in ref), len(set(int(x.get('y')) // 34 for "
	         "x, _ in ref)))\n"
	         "\" '%s' 2>&1",
	         path);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(res, 1, sizeof(res) - 1, p);
	res[n] = 0;
	pclose(p);
	return res;
}

Test(report, svg_is_well_formed_and_counts_every_shown_refusal)
{
	scenario(0);
	const char *s = svg_facts();
	int marks = 0, sum = 0, lanes = 0;
	cr_assert_eq(sscanf(s, "ok %d %d %d", &marks, &sum, &lanes), 3, "%s\n%s", s, out);
	/* 8 shown refusals; the lock contention and bwrap's set-up are not drawn */
	cr_expect_eq(sum, 8, "%s", s);
	cr_expect_eq(lanes, 2, "pids 100 and 200 refused: %s", s);
	assert_has(out, "PROBLEM 1: " D "/data not granted to the sandbox (6 refused)");
	assert_has(out, "successful write (recorded when its facts were news; all with --all)");
}

Test(report, svg_of_a_hundred_thousand_refusals_is_binned_into_a_bounded_picture)
{
	add_process(100, 1000, 1, 11);
	for (int i = 0; i < 100000; i++)
		add_denial(100 + i % 40, 2000 + (uint64_t)i * 1000, "openat", EROFS,
		           i % 2 ? D "/data/a" : D "/data/b");
	build_opts(0, data_roots, 2);
	const char *s = svg_facts();
	int marks = 0, sum = 0, lanes = 0;
	cr_assert_eq(sscanf(s, "ok %d %d %d", &marks, &sum, &lanes), 3, "%s", s);
	cr_expect_eq(sum, 100000, "%s", s);
	/* 40 processes: 24 lanes of their own and one for the rest */
	cr_expect_eq(lanes, 25, "%s", s);
	assert_has(out, "other processes");
	cr_expect_leq(marks, 25 * 185, "%d marks", marks);
	cr_expect_lt(strlen(out), 800000, "%zu bytes", strlen(out));
}

Test(report, svg_draws_a_side_file_where_the_records_saw_it)
{
	add_process(100, 1000, 1, 11);
	/* written at 2000 (exists), refused at 9000 (gone) */
	struct dt_record *w = add_path_rec(DT_REC_WRITE, 100, 2000, "openat", 0, D "/out/y.db-wal");
	w->sqlite = "wal";
	struct dt_record *d = add_denial(100, 9000, "openat", EROFS, D "/out/y.db-wal");
	d->sqlite = "wal";
	d->p[0].has_st = 1;
	d->p[0].st.valid = 0; /* stat found nothing: it did not exist */
	build_opts(0, data_roots, 2);
	render(FMT_SVG);
	assert_has(out, ">y.db-wal existed</text>");
	/* one band from the write, ending before the refusal's bucket */
	const char *band = strstr(out, "fill-opacity=\"0.6\"");
	cr_assert_not_null(band, "%s", out);
	cr_expect_null(strstr(band + 1, "fill-opacity=\"0.6\""), "one band only:\n%s", out);
	const char *start = band;
	while (start > out && strncmp(start, "<rect", 5))
		start--;
	int bx = -1, bw = -1, rx = -1;
	cr_assert_eq(sscanf(start, "<rect x=\"%d\" y=\"%*d\" width=\"%d\"", &bx, &bw), 2, "%s",
	             start);
	const char *mark = strstr(out, "<title>1 refused</title>");
	cr_assert_not_null(mark);
	while (mark > out && strncmp(mark, "<rect", 5))
		mark--;
	cr_assert_eq(sscanf(mark, "<rect x=\"%d\"", &rx), 1);
	cr_expect_eq(bx, 240, "the band starts with the write, at the left edge");
	cr_expect_leq(bx + bw, rx, "the band [%d, %d) reaches the refusal at %d", bx, bx + bw, rx);
}

Test(report, svg_escapes_what_a_program_chose)
{
	add_process(100, 1000, 1, 11)->comm = "<w>&\x1b";
	add_denial(100, 2000, "openat", EROFS, D "/a<b>&\"c'\x01");
	build_opts(0, data_roots, 2);
	const char *s = svg_facts();
	cr_expect_eq(strncmp(s, "ok ", 3), 0, "%s\n%s", s, out);
	cr_expect_null(strchr(out, '\x1b'));
	cr_expect_null(strchr(out, '\x01'));
	assert_has(out, "&lt;w&gt;&amp;\\x1b pid 100");
}

/* Issue 11, item 7: a path several sources name is one row with all of
 * them: the workspace from HERMES_KANBAN_WORKSPACE and from the mount
 * table, the board directory from HERMES_KANBAN_DB and --root. */
Test(report, roots_are_listed_once_with_all_their_sources)
{
	static const char *const env[] = {"HERMES_KANBAN_DB=" D "/board/kanban.db",
	                                  "HERMES_KANBAN_WORKSPACE=" D "/work"};
	static const char *const roots[] = {D "/board"};
	struct dt_record *p = add_process(100, 1000, 1, 11);
	p->env = (const char **)env;
	p->nenv = 2;
	add_denial(100, 2000, "openat", EROFS, D "/board/kanban.db");
	build_opts(0, roots, 1);

	const char *text = render(FMT_TEXT);
	const char *work = strstr(text, "  " D "/work\n");
	cr_assert_not_null(work, "no row for the workspace:\n%s", text);
	cr_assert_null(strstr(work + 1, "  " D "/work\n"), "the workspace is listed twice:\n%s",
	               text);
	assert_has(work, "HERMES_KANBAN_WORKSPACE=" D "/work; writable mount (pid 100)");
	const char *board = strstr(text, "  " D "/board\n");
	cr_assert_not_null(board);
	cr_assert_null(strstr(board + 1, "  " D "/board\n"), "the board is listed twice:\n%s",
	               text);
	assert_has(board, "--root; HERMES_KANBAN_DB=" D "/board/kanban.db");

	json_flat();
	assert_json("roots#", "2");
	assert_json("roots[0].path", "\"" D "/board\"");
	assert_json("roots[0].sources[1]", "\"HERMES_KANBAN_DB=" D "/board/kanban.db\"");
	assert_json("roots[1].path", "\"" D "/work\"");
	assert_json("roots[1].sources#", "2");
}

/* Issue 11, item 6: "next" only where it applies. A refused fchown of a
 * file the process later opened read-only did not lead to that reopen. */
Test(report, no_reopen_next_line_for_a_refusal_that_is_not_an_open)
{
	add_process(100, 1000, 1, 11);
	struct dt_record *d = add_denial(100, 2000, "fchown", EROFS, D "/data/app.db");
	d->p[0].path = NULL;
	add_path_rec(DT_REC_REOPEN, 100, 2100, "openat", 0, D "/data/app.db");
	build_opts(0, data_roots, 1);

	cr_assert_eq(rep.ngroups, 1);
	cr_assert_null(rep.groups[0].next, "next: %s", rep.groups[0].next);
}

/* Codex keeps .git, .codex, .agents and .aws read-only in every root: one
 * line under each root, not four rows per root burying the roots. */
Test(report, codex_protected_subpaths_are_named_on_their_roots_row)
{
	struct dt_report_opts o = {0};
	char err[256] = "";

	add_process(100, 1000, 1, 11);
	add_denial(100, 2000, "openat", EROFS, D "/work/.git/index.lock");
	o.codex_args = "codex sandbox -c 'sandbox_mode=\"workspace-write\"' -- true";
	cr_assert_eq(dt_report_build(&rep, &o, err, sizeof(err)), 0, "%s", err);

	const char *text = render(FMT_TEXT_SHORT);
	const char *roots = strstr(text, "\nRoots\n");
	cr_assert_not_null(roots, "%s", text);
	cr_expect_null(strstr(roots, "read-only subpath"), "a row per subpath:\n%s", roots);
	cr_expect_null(strstr(roots, "  /tmp/.git\n"), "a row per subpath:\n%s", roots);
	assert_has(roots, "      read-only inside: .git, .codex, .agents, .aws\n");
	assert_has(text, "Details: -v shows the 1 group in full");
}

Test(report, a_wal_missing_when_refused_is_not_taken_for_a_later_read_only_open_of_it)
{
	/* the -wal did not exist when its create was refused; a later
	 * iteration found it (another process made it) and opened it read-only */
	struct dt_record *d = add_denial(100, 2000, "open64", EROFS, D "/data/k.db-wal");
	d->sqlite_hint = "wal";
	add_path_rec(DT_REC_REOPEN, 100, 3000, "open64", 0, D "/data/k.db-wal");
	build_opts(0, data_roots, 1);

	assert_has(group(D "/data/k.db-wal", "open64")->next, "unable to open database file");
}
