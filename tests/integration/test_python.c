/* SPDX-License-Identifier: MIT */
/*
 * The Python line that made a refused call (preload/pyframes.c): real
 * CPython workers (Debian's /usr/bin/python3, libpython linked in: 3.11 on
 * Debian 12 and 3.13 on Debian 13, each read directly) with
 * real sqlite3, refused by a read-only bubblewrap sandbox, record their
 * Python frames innermost first; the report names the function and line.
 * Programs that are not CPython, or look like it without being a usable
 * one, record none and keep running.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

#define PYTHON "/usr/bin/python3"

static char rw[600], db[700];

static void setup(void)
{
	snprintf(rw, sizeof(rw), "%s/rw", dtt_tmpdir());
	mkdir(rw, 0755);
	snprintf(db, sizeof(db), "%s/ro/board.db", dtt_tmpdir());
	char ro[700];
	snprintf(ro, sizeof(ro), "%s/ro", dtt_tmpdir());
	mkdir(ro, 0755);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(python, .init = setup, .fini = teardown, .timeout = 120);

/* Writes a worker script into the test's directory; returns its path. */
static const char *script(const char *name, const char *text)
{
	static char path[700];
	snprintf(path, sizeof(path), "%s/%s", dtt_tmpdir(), name);
	FILE *f = fopen(path, "w");
	cr_assert(f, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Runs argv under denytrace inside a sandbox where only rw is writable,
 * with extra environment entries "NAME=VALUE" (may be NULL). */
static void run_sandboxed_env(struct dtt_run *r, const char *const *argv, const char *const *env)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	cr_assert(access(PYTHON, X_OK) == 0, PYTHON " is missing (scripts/install-deps.sh)");
	const char *full[64];
	size_t n = dtt_bwrap_rw(full, rw);
	for (size_t i = 0; argv[i]; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	cr_assert_eq(dtt_run(r, NULL, full, env), 0, "ring unreadable: %s", r->out);
}

static void run_sandboxed(struct dtt_run *r, const char *const *argv)
{
	run_sandboxed_env(r, argv, NULL);
}

static void expect_frame(const struct dt_record *d, size_t i, const char *func, const char *file,
                         unsigned line)
{
	cr_assert_gt(d->npyframes, i, "frame %zu of %zu missing", i, d->npyframes);
	const struct dt_py_frame *f = &d->pyframes[i];
	cr_expect_str_eq(f->func, func, "frame %zu", i);
	cr_expect_str_eq(f->file, file, "frame %zu", i);
	cr_expect_eq(f->line, line, "frame %zu: line %u, wanted %u", i, f->line, line);
}

/* The first refusal of the board database. */
static const struct dt_record *board_refusal(const struct dtt_run *r)
{
	const struct dt_record *d = dtt_find(r, DT_REC_DENIAL, NULL, "/board.db");
	cr_assert(d, "no refusal of %s recorded:\n%s", db, r->out);
	return d;
}

static const char three_deep[] = "import sqlite3, sys\n"
                                 "def save_task(db):\n"
                                 "    sqlite3.connect(db).execute('create table t(x)')\n"
                                 "def claim(db):\n"
                                 "    save_task(db)\n"
                                 "def main():\n"
                                 "    try:\n"
                                 "        claim(sys.argv[1])\n"
                                 "    except sqlite3.Error:\n"
                                 "        pass\n"
                                 "main()\n";

Test(python, a_refusal_three_functions_deep_records_each_function_file_and_line)
{
	const char *py = script("worker.py", three_deep);
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){PYTHON, py, db, NULL});
	const struct dt_record *d = board_refusal(&r);
	expect_frame(d, 0, "save_task", py, 3);
	expect_frame(d, 1, "claim", py, 5);
	expect_frame(d, 2, "main", py, 8);
	expect_frame(d, 3, "<module>", py, 11);
	cr_expect_eq(d->npyframes, 4);
	cr_expect_not(d->py_trunc);
	cr_expect_gt(d->nframes, 0, "the native stack is still there");
	dtt_free(&r);
}

/* The finding's Python line, in the report's JSON and in its words. */
Test(python, the_report_names_the_python_function_and_line_of_a_finding)
{
	const char *py = script("worker.py", three_deep);
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){PYTHON, py, db, NULL});
	board_refusal(&r);
	char check[1200];
	snprintf(check, sizeof(check),
	         "'%s/denytrace' report --format json '%s' | " PYTHON
	         " -c 'import json,sys; d=json.load(sys.stdin)\n"
	         "f=[f for f in d[\"findings\"] if f[\"python_lines\"]]\n"
	         "assert len(f)==1, f\n"
	         "s=f[0][\"python_lines\"]\n"
	         "assert s==[{\"function\":\"save_task\",\"file\":sys.argv[1],\"line\":3,"
	         "\"count\":f[0][\"count\"]}], s\n"
	         "g=[g for g in d[\"denials\"] if g[\"python_stack\"]][0]\n"
	         "assert [x[\"function\"] for x in g[\"python_stack\"]]=="
	         "[\"save_task\",\"claim\",\"main\",\"<module>\"], g\n"
	         "assert g[\"python_truncated\"] is False' '%s'",
	         dtt_build(), r.ring, py);
	cr_expect_eq(system(check), 0, "report JSON: %s", check);
	struct dtt_cli c;
	dtt_cli(&c, (const char *const[]){"report", r.ring, NULL});
	cr_expect(strstr(c.out, "refused in save_task at worker.py:3, 1 time"), "%s", c.out);
	dtt_free(&r);
}

Test(python, eight_python_threads_refusing_at_once_each_record_their_own_stack)
{
	const char *py = script("threads.py",
	                        "import sqlite3, sys, threading\n"
	                        "gate = threading.Barrier(8)\n"
	                        "def refuse(db):\n"
	                        "    gate.wait()\n"
	                        "    try:\n"
	                        "        sqlite3.connect(db).execute('create table t(x)')\n"
	                        "    except sqlite3.Error:\n"
	                        "        pass\n"
	                        "def make(i):\n"
	                        "    def run():\n"
	                        "        refuse(sys.argv[1])\n"
	                        "    run.__code__ = run.__code__.replace(co_name='thread_%d' % i)\n"
	                        "    return run\n"
	                        "ts = [threading.Thread(target=make(i)) for i in range(8)]\n"
	                        "for t in ts: t.start()\n"
	                        "for t in ts: t.join()\n");
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){PYTHON, py, db, NULL});
	int seen[8] = {0};
	long tids[8] = {0};
	for (size_t i = 0; i < r.n; i++) {
		const struct dt_record *d = &r.recs[i];
		if (d->type != DT_REC_DENIAL || !d->p[0].abspath ||
		    strcmp(d->p[0].abspath, db) != 0 || strcmp(d->op, "open64") != 0)
			continue;
		cr_assert_geq(d->npyframes, 3, "thread %lld: %zu frames", (long long)d->tid,
		              d->npyframes);
		expect_frame(d, 0, "refuse", py, 6);
		int k = -1;
		cr_assert_eq(sscanf(d->pyframes[1].func, "thread_%d", &k), 1, "%s",
		             d->pyframes[1].func);
		cr_assert(k >= 0 && k < 8);
		if (!seen[k]++)
			tids[k] = (long)d->tid;
		cr_expect_eq(tids[k], (long)d->tid, "thread_%d's stack in another thread", k);
		cr_expect_str_eq(d->pyframes[2].func, "run", "the Thread machinery follows");
	}
	for (int k = 0; k < 8; k++)
		cr_expect(seen[k], "thread_%d recorded no refusal", k);
	dtt_free(&r);
}

/* The probe keeps the lines it computed (pyframes.c's line cache). A
 * module edited and reloaded gets new code objects, every other one at
 * the address of the one before last (pymalloc hands freed blocks back):
 * each refusal must still name the line it was made at. Version k of
 * boardmod.py has k blank lines where blank stands in base (one %s): in
 * the function before the refused call, the function's first line stays
 * and its location table changes from the third version on only in its
 * bytes; before the function, the table stays and the first line moves.
 * Either way the call is at line 4 + k. A refused open of "-version-k"
 * marks where each version begins. */
static void expect_each_version_s_line(const char *base)
{
	char mod[700];
	snprintf(mod, sizeof(mod), "%s/boardmod.py", rw);
	char text[2048];
	snprintf(text, sizeof(text),
	         "import importlib, sqlite3, sys\n"
	         "sys.dont_write_bytecode = True\n"
	         "sys.path.insert(0, sys.argv[2])\n"
	         "base = %s\n"
	         "def refuse(m):\n"
	         "    for i in range(2):\n"
	         "        try:\n"
	         "            m.save(sys.argv[1])\n"
	         "        except sqlite3.Error:\n"
	         "            pass\n"
	         "boardmod = None\n"
	         "for k in range(6):\n"
	         "    try:\n"
	         "        open('%%s-version-%%d' %% (sys.argv[1], k), 'w')\n"
	         "    except OSError:\n"
	         "        pass\n"
	         "    open(sys.argv[3], 'w').write(base %% ('\\n' * k))\n"
	         "    if boardmod:\n"
	         "        boardmod = importlib.reload(boardmod)\n"
	         "    else:\n"
	         "        import boardmod\n"
	         "    refuse(boardmod)\n",
	         base);
	const char *py = script("reload.py", text);
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){PYTHON, py, db, rw, mod, NULL});
	int version = -1, refused[6] = {0};
	for (size_t i = 0; i < r.n; i++) {
		const struct dt_record *d = &r.recs[i];
		if (d->type != DT_REC_DENIAL || !d->p[0].abspath)
			continue;
		const char *v = strstr(d->p[0].abspath, "-version-");
		if (v) {
			version = atoi(v + strlen("-version-"));
			continue;
		}
		if (strcmp(d->p[0].abspath, db) != 0 || d->npyframes < 1 ||
		    strcmp(d->pyframes[0].func, "save") != 0)
			continue;
		cr_assert(version >= 0 && version < 6, "a refusal before any version's marker");
		expect_frame(d, 0, "save", mod, 4 + (unsigned)version);
		expect_frame(d, 1, "refuse", py, 8);
		refused[version]++;
	}
	for (int k = 0; k < 6; k++)
		cr_expect_geq(refused[k], 2, "version %d: %d refusals recorded", k, refused[k]);
	dtt_free(&r);
}

Test(python, a_module_reloaded_after_each_edit_in_a_function_records_its_new_lines)
{
	expect_each_version_s_line(
	    "'import sqlite3\\ndef save(db):\\n    x = 1\\n%s'"
	    " '    sqlite3.connect(db).execute(\\'create table t(x)\\')\\n'");
}

Test(python, a_module_reloaded_after_each_edit_above_a_function_records_its_new_lines)
{
	expect_each_version_s_line(
	    "'import sqlite3\\n%sdef save(db):\\n    x = 1\\n'"
	    " '    sqlite3.connect(db).execute(\\'create table t(x)\\')\\n'");
}

Test(python, a_refusal_from_an_asyncio_task_records_the_coroutine)
{
	const char *py = script("tasks.py", "import asyncio, sqlite3, sys\n"
	                                    "async def save_task(db):\n"
	                                    "    await asyncio.sleep(0)\n"
	                                    "    sqlite3.connect(db).execute('create table t(x)')\n"
	                                    "async def main(db):\n"
	                                    "    t = asyncio.create_task(save_task(db))\n"
	                                    "    try:\n"
	                                    "        await t\n"
	                                    "    except sqlite3.Error:\n"
	                                    "        pass\n"
	                                    "asyncio.run(main(sys.argv[1]))\n");
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){PYTHON, py, db, NULL});
	const struct dt_record *d = board_refusal(&r);
	expect_frame(d, 0, "save_task", py, 4);
	cr_expect_gt(d->npyframes, 2, "the event loop's frames follow");
	dtt_free(&r);
}

Test(python, a_refusal_in_an_atexit_handler_during_shutdown_records_the_handler)
{
	const char *py = script("atexit_worker.py", "import atexit, sqlite3, sys\n"
	                                            "def flush_board():\n"
	                                            "    try:\n"
	                                            "        sqlite3.connect(sys.argv[1])"
	                                            ".execute('create table t(x)')\n"
	                                            "    except sqlite3.Error:\n"
	                                            "        pass\n"
	                                            "atexit.register(flush_board)\n");
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){PYTHON, py, db, NULL});
	cr_expect_eq(r.status, 0, "%s", r.out);
	const struct dt_record *d = board_refusal(&r);
	expect_frame(d, 0, "flush_board", py, 4);
	cr_expect_eq(d->npyframes, 1, "an atexit handler has no caller frame");
	dtt_free(&r);
}

Test(python, a_stack_deeper_than_the_bound_keeps_the_innermost_frames_and_is_marked)
{
	const char *py = script("deep.py", "import sqlite3, sys\n"
	                                   "def dig(n, db):\n"
	                                   "    if n:\n"
	                                   "        return dig(n - 1, db)\n"
	                                   "    sqlite3.connect(db).execute('create table t(x)')\n"
	                                   "try:\n"
	                                   "    dig(60, sys.argv[1])\n"
	                                   "except sqlite3.Error:\n"
	                                   "    pass\n");
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){PYTHON, py, db, NULL});
	const struct dt_record *d = board_refusal(&r);
	cr_expect(d->py_trunc, "not marked truncated");
	cr_expect_eq(d->npyframes, 32, "%zu frames", d->npyframes);
	expect_frame(d, 0, "dig", py, 5);
	expect_frame(d, 1, "dig", py, 4);
	cr_expect_gt(d->nframes, 0, "the native stack is still there");
	dtt_free(&r);
}

Test(python, a_c_program_records_no_python_frames)
{
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){"/usr/bin/touch", db, NULL});
	cr_expect_neq(r.status, 0, "touch should have failed");
	const struct dt_record *d = board_refusal(&r);
	cr_expect_eq(d->npyframes, 0);
	cr_expect_not(d->py_trunc);
	cr_expect_gt(d->nframes, 0, "the native stack is recorded as before");
	dtt_free(&r);
}

/* fakepython exports CPython's names; only the shape that is a usable
 * 3.12 with a thread state is dumped (and proves the lookup finds them,
 * and that the dumper's text is parsed). 3.14 holds 3.13's objects: read
 * with 3.13's layout, its line function would abort. */
Test(python, a_program_that_only_looks_like_python_records_no_python_frames)
{
	const char *shapes[] = {"old", "3.11", "finalizing", "no-thread", "3.14"};
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct dtt_run r;
		run_sandboxed(&r,
		              (const char *const[]){dtt_helper("fakepython"), shapes[i], db, NULL});
		cr_expect_eq(r.status, 0, "%s: the program did not survive: %s", shapes[i], r.out);
		const struct dt_record *d = board_refusal(&r);
		cr_expect_eq(d->npyframes, 0, "%s", shapes[i]);
		dtt_free(&r);
	}
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){dtt_helper("fakepython"), "dumps", db, NULL});
	cr_expect_eq(r.status, 0, "%s", r.out);
	expect_frame(board_refusal(&r), 0, "fake_func", "/fake/app.py", 7);
	dtt_free(&r);
}

/* 3.13's frames as Debian 13's python3.13 lays them out, in a program
 * that is not Python: the reader's offsets and rules, whichever Python
 * this machine has. Incomplete and C-stack frames are left out, as
 * CPython's tracebacks leave them; a generator's frame is kept. */
Test(python, a_program_shaped_like_python_3_13_has_its_frames_read_in_place)
{
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){dtt_helper("fakepython"), "3.13", db, NULL});
	cr_expect_eq(r.status, 0, "the program did not survive: %s", r.out);
	const struct dt_record *d = board_refusal(&r);
	expect_frame(d, 0, "fake_func", "/fake/app.py", 7);
	expect_frame(d, 1, "out\xc3\xa9r", "/fake/app.py", 12);
	cr_expect_eq(d->npyframes, 2);
	cr_expect_not(d->py_trunc);
	dtt_free(&r);
}

/* pyenv's and python.org's builds, and programs embedding Python, have
 * the API in libpython3.X.so rather than in the main program: the one of
 * Debian's python3's version. */
Test(python, a_python_loaded_from_libpython_records_its_frames_too)
{
	const char *py = script("worker.py", three_deep);
	char lib[64];
	const char *ver[] = {PYTHON, "-c", "import sys; print('%d.%d' % sys.version_info[:2])",
	                     NULL};
	cr_assert_eq(dtt_system(lib, sizeof(lib), ver, NULL), 0, "%s", lib);
	lib[strcspn(lib, "\n")] = 0;
	char so[96];
	snprintf(so, sizeof(so), "libpython%s.so.1.0", lib);
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){dtt_helper("embedpython"), so, py, db, NULL});
	if (r.status == 77)
		cr_skip_test("no %s here (Debian: libpython%s)", so, lib);
	const struct dt_record *d = board_refusal(&r);
	expect_frame(d, 0, "save_task", py, 3);
	expect_frame(d, 1, "claim", py, 5);
	expect_frame(d, 2, "main", py, 8);
	dtt_free(&r);
}

/* The bundle a maintainer receives: records.jsonl and report.md carry
 * the Python frames and the finding's line. */
Test(python, the_evidence_bundle_carries_the_python_frames)
{
	const char *py = script("worker.py", three_deep);
	struct dtt_run r;
	run_sandboxed(&r, (const char *const[]){PYTHON, py, db, NULL});
	board_refusal(&r);
	char out[700];
	snprintf(out, sizeof(out), "%s/bundle", dtt_tmpdir());
	struct dtt_cli c;
	dtt_cli(&c, (const char *const[]){"evidence", "--out", out, r.ring, NULL});
	cr_assert_eq(c.status, 0, "%s", c.err);
	char check[1400];
	snprintf(check, sizeof(check),
	         PYTHON
	         " -c 'import json,sys\n"
	         "recs=[json.loads(l) for l in open(sys.argv[1]+\"/records.jsonl\")]\n"
	         "d=[r for r in recs if r[\"type\"]==\"denial\" and r[\"python_stack\"]]\n"
	         "assert d and d[0][\"python_stack\"][0]=={\"function\":\"save_task\","
	         "\"file\":sys.argv[2],\"line\":3}, d\n"
	         "md=open(sys.argv[1]+\"/report.md\").read()\n"
	         "assert \"refused in save\\\\_task at worker.py:3, 1 time\" in md, md' '%s' '%s'",
	         out, py);
	cr_expect_eq(system(check), 0, "%s", check);
	dtt_free(&r);
}

/* Line number (from 1) of the first line of file holding needle at or
 * after the first line holding after; 0 when there is none. */
static unsigned line_of(const char *file, const char *after, const char *needle)
{
	FILE *f = fopen(file, "r");
	cr_assert(f, "cannot read %s", file);
	char text[4096];
	unsigned n = 0, found = 0;
	int past = 0;
	while (!found && fgets(text, sizeof(text), f)) {
		n++;
		past |= strstr(text, after) != NULL;
		if (past && strstr(text, needle))
			found = n;
	}
	fclose(f);
	return found;
}

static int ends_with(const char *s, const char *end)
{
	size_t ls = strlen(s), le = strlen(end);
	return ls >= le && strcmp(s + ls - le, end) == 0;
}

/* The report's finding for the refusal of the path ending in path_end (its
 * group's finding, read from the JSON): its first Python line is func at a
 * file ending in file_end, line line. */
static void expect_finding_line(const char *ring, const char *path_end, const char *func,
                                const char *file_end, unsigned line)
{
	struct dtt_cli c;
	dtt_cli(&c, (const char *const[]){"report", "--format", "json", ring, NULL});
	cr_assert_eq(c.status, 0, "%s", c.err);
	struct dt_jv *doc = dtt_json(c.out);
	const struct dt_jv *denials = dtt_jget(doc, "denials"), *group = NULL;
	for (size_t i = 0; denials && i < denials->n && !group; i++)
		if (ends_with(dt_jv_str(&denials->v[i], "path") ?: "", path_end))
			group = &denials->v[i];
	cr_assert(group, "no refusal of *%s in the report:\n%s", path_end, c.out);
	const char *id = dt_jv_str(group, "id");
	const struct dt_jv *findings = dtt_jget(doc, "findings"), *finding = NULL;
	for (size_t i = 0; findings && i < findings->n && !finding; i++) {
		const struct dt_jv *groups = dt_jv_get(&findings->v[i], "groups");
		for (size_t k = 0; groups && k < groups->n && !finding; k++)
			if (groups->v[k].text && id && !strcmp(groups->v[k].text, id))
				finding = &findings->v[i];
	}
	cr_assert(finding, "group %s is in no finding:\n%s", id, c.out);
	const struct dt_jv *at = dtt_jget(finding, "python_lines.0");
	cr_assert(at, "the finding has no Python line:\n%s", c.out);
	uint64_t got = 0;
	cr_expect_str_eq(dt_jv_str(at, "function"), func, "%s", c.out);
	cr_expect(ends_with(dt_jv_str(at, "file") ?: "", file_end), "file %s, wanted *%s",
	          dt_jv_str(at, "file"), file_end);
	cr_expect(dt_jv_u64(at, "line", &got) == 0 && got == line, "line %llu, wanted %u",
	          (unsigned long long)got, line);
	dt_jv_free(doc);
}

/* hermes-agent's board open as its kanban_db_connect.connect() makes it,
 * in a package of ours (tests/helpers/python_packages) installed the way pip
 * installs hermes, under a venv's lib/python3.X/site-packages: pathlib's
 * open inside a generator context manager entered by a `with`. The finding
 * names the package's function and line, not the standard library's frames
 * on either side of it, nor the worker's own. */
Test(python, a_board_open_in_an_installed_package_names_the_package_line_not_the_stdlib)
{
	char dir[700], pkg[800];
	const char *const layout[] = {"venv", "venv/lib", "venv/lib/python3.11",
	                              "venv/lib/python3.11/site-packages"};
	for (size_t i = 0; i < sizeof(layout) / sizeof(layout[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/%s", dtt_tmpdir(), layout[i]);
		mkdir(dir, 0755);
	}
	const char *src = dtt_helper_script("python_packages/kanban_board");
	cr_assert(src, "tests/helpers/python_packages/kanban_board not found");
	snprintf(pkg, sizeof(pkg), "%s/kanban_board", dir);
	cr_assert_eq(symlink(src, pkg), 0, "symlink %s", pkg);
	char board_py[900], pythonpath[800];
	snprintf(board_py, sizeof(board_py), "%s/board.py", pkg);
	snprintf(pythonpath, sizeof(pythonpath), "PYTHONPATH=%s", dir);
	unsigned line = line_of(board_py, "def board_init_lock", ".open(");
	cr_assert_gt(line, 0, "no open in %s", board_py);
	struct dtt_run r;
	run_sandboxed_env(
	    &r,
	    (const char *const[]){PYTHON, dtt_helper_script("hermes_board_worker.py"), db, NULL},
	    (const char *const[]){pythonpath, "PYTHONDONTWRITEBYTECODE=1", NULL});
	cr_expect_eq(r.status, 3, "the open was not refused: %s", r.out);
	expect_finding_line(r.ring, "/board.db.init.lock", "board_init_lock", board_py, line);
	struct dtt_cli c;
	dtt_cli(&c, (const char *const[]){"report", r.ring, NULL});
	char words[96];
	snprintf(words, sizeof(words), "refused in board_init_lock at board.py:%u, 1 time", line);
	cr_expect(strstr(c.out, words), "no \"%s\" in:\n%s", words, c.out);
	dtt_free(&r);
}

/* hermes-agent's own kanban code, from a checkout named by DT_HERMES_SRC
 * (hermes_cli/kanban_db_connect.py and what it imports), opening a board
 * in a read-only directory: the finding names hermes' function and line. */
Test(python, hermes_own_board_open_refused_read_only_names_hermes_function_and_line)
{
	const char *src = getenv("DT_HERMES_SRC");
	if (!src || !*src)
		cr_skip_test(
		    "no hermes-agent checkout: DT_HERMES_SRC=DIR runs hermes' own kanban code");
	char conn[PATH_MAX], env_db[800];
	snprintf(conn, sizeof(conn), "%s/hermes_cli/kanban_db_connect.py", src);
	unsigned line = line_of(conn, "def _cross_process_init_lock", ".open(");
	cr_assert_gt(line, 0, "no init lock open in %s", conn);
	snprintf(env_db, sizeof(env_db), "HERMES_KANBAN_DB=%s", db);
	struct dtt_run r;
	run_sandboxed_env(&r,
	                  (const char *const[]){PYTHON, dtt_helper_script("hermes_board_worker.py"),
	                                        "--hermes", src, NULL},
	                  (const char *const[]){env_db, "PYTHONDONTWRITEBYTECODE=1", NULL});
	cr_expect_eq(r.status, 3, "the board open was not refused: %s", r.out);
	expect_finding_line(r.ring, "/board.db.init.lock", "_cross_process_init_lock",
	                    "hermes_cli/kanban_db_connect.py", line);
	dtt_free(&r);
}
