/* SPDX-License-Identifier: MIT */
/* "Sometimes it cannot write the board": real SQLite workers (Python's
 * sqlite3, DELETE and WAL journals) under a plain `denytrace run`, while
 * something flips what their writes depend on. The report must name the
 * recorded fact that separated the writes that worked from the refused
 * ones, the traced process that flipped it (or the window in which an
 * untraced one did), say so when no recorded fact explains the flip, and
 * `fix` must not propose a change the path already has. */
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

TestSuite(intermittent, .fini = teardown, .timeout = 120);

/* One transaction per connection, so that DELETE mode creates the journal
 * and WAL mode the -wal and -shm (the last connection deletes them) at
 * every write; failures are counted, not fatal. */
static const char worker_py[] = "import sqlite3, sys, time\n"
                                "db, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
                                "fails = 0\n"
                                "for i in range(n):\n"
                                "    con = sqlite3.connect(db, timeout=5, isolation_level=None)\n"
                                "    try:\n"
                                "        con.execute('PRAGMA journal_mode=%s' % mode)\n"
                                "        con.execute('BEGIN IMMEDIATE')\n"
                                "        con.execute('INSERT INTO t(v) VALUES (?)', (i,))\n"
                                "        con.execute('COMMIT')\n"
                                "    except sqlite3.Error:\n"
                                "        fails += 1\n"
                                "    finally:\n"
                                "        con.close()\n"
                                "    time.sleep(0.02)\n"
                                "print('worker: %d of %d writes failed' % (fails, n))\n";

/* Flips the directory's mode (or, with "immutable", its inode flag
 * through chattr, which no record carries) n times, ending as it began. */
static const char flipper_py[] = "import os, subprocess, sys, time\n"
                                 "d, how, n = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
                                 "for i in range(n):\n"
                                 "    if how == 'mode':\n"
                                 "        os.chmod(d, 0o555)\n"
                                 "    else:\n"
                                 "        subprocess.run(['chattr', '+i', d], check=True)\n"
                                 "    time.sleep(0.1)\n"
                                 "    if how == 'mode':\n"
                                 "        os.chmod(d, 0o755)\n"
                                 "    else:\n"
                                 "        subprocess.run(['chattr', '-i', d], check=True)\n"
                                 "    time.sleep(0.1)\n";

/* The first finding's difference, one field a line: fact, the values on
 * successes, on refusals, the changer's "comm op value" or "-", whether
 * it changed outside, the line itself. */
static const char difference_py[] =
    "import json, sys\n"
    "r = json.load(sys.stdin)\n"
    "f = r['findings']\n"
    "d = f[0]['difference'] if f else None\n"
    "if not d:\n"
    "    print('none'); sys.exit(0)\n"
    "c = d['changed_by']\n"
    "print(d['fact'] or '-')\n"
    "print(' '.join(d['successes']['values']) or '-')\n"
    "print(' '.join(d['refusals']['values']) or '-')\n"
    "print('%s %s %s' % (c['comm'], c['op'], c['value']) if c else '-')\n"
    "print(1 if d['changed_outside'] else 0)\n"
    "print(d['line'])\n";

struct difference {
	char fact[64], ok[128], refused[128], changer[128], line[2048];
	int outside;
};

static char out[1 << 16];

struct world {
	char dir[PATH_MAX], board[PATH_MAX], db[PATH_MAX], worker[PATH_MAX], flipper[PATH_MAX],
	    ring[PATH_MAX];
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/* A board directory owned by uid 65534 (mode 0755) holding a database
 * with one table; the scripts beside it. */
static void world_make(struct world *w)
{
	/* the workers run as other uids (setpriv), which needs root */
	if (geteuid() != 0)
		cr_skip_test("needs root: the worker runs as uid 65534 (setpriv)");
	const char *t = dtt_tmpdir();
	cr_assert_eq(chmod(t, 0755), 0);
	snprintf(w->dir, sizeof(w->dir), "%s", t);
	snprintf(w->board, sizeof(w->board), "%s/kanban", t);
	snprintf(w->db, sizeof(w->db), "%s/kanban/kanban.db", t);
	snprintf(w->worker, sizeof(w->worker), "%s/worker.py", t);
	snprintf(w->flipper, sizeof(w->flipper), "%s/flipper.py", t);
	snprintf(w->ring, sizeof(w->ring), "%s/board.ring", t);
	write_file(w->worker, worker_py);
	write_file(w->flipper, flipper_py);
	cr_assert_eq(mkdir(w->board, 0755), 0);
	const char *mk[] = {"/usr/bin/python3", "-c",
	                    "import sqlite3, sys\n"
	                    "c = sqlite3.connect(sys.argv[1])\n"
	                    "c.execute('CREATE TABLE t(v)')\n"
	                    "c.commit()\n",
	                    w->db, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), mk, NULL), 0, "%s", out);
	cr_assert_eq(chown(w->board, 65534, 65534), 0);
	cr_assert_eq(chown(w->db, 65534, 65534), 0);
}

/* Runs the shell command fmt, in which %1$s is the build directory, %2$s
 * the ring, %3$s the board directory, %4$s the database, %5$s the worker
 * and %6$s the flipper (the paths hold no quotes). */
static void sh(const char *fmt, const struct world *w)
{
	char cmd[16 * PATH_MAX];
	snprintf(cmd, sizeof(cmd), fmt, dtt_build(), w->ring, w->board, w->db, w->worker,
	         w->flipper);
	const char *argv[] = {"sh", "-c", cmd, NULL};
	int st = dtt_system(out, sizeof(out), argv, NULL);
	cr_assert_eq(st, 0, "%s\n%s", cmd, out);
}

#define AS_NOBODY "setpriv --reuid 65534 --regid 65534 --clear-groups "
#define PY "/usr/bin/python3 "

/* 1 when the worker reported some failed writes and some that worked. */
static int worker_was_intermittent(void)
{
	int failed = -1, total = -1;
	const char *p = strstr(out, "worker: ");
	if (p)
		sscanf(p, "worker: %d of %d writes failed", &failed, &total);
	return failed > 0 && failed < total;
}

static void difference_of(const struct world *w, struct difference *d)
{
	/* sh -c CMD SCRIPT: the script is $0; report's own status (1: refusals) is not python's */
	char cmd[2 * PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd),
	         "'%s/denytrace' report --format json '%s' | /usr/bin/python3 -c \"$0\"",
	         dtt_build(), w->ring);
	const char *run[] = {"sh", "-c", cmd, difference_py, NULL};
	int st = dtt_system(out, sizeof(out), run, NULL);
	cr_assert_eq(st, 0, "%s", out);
	memset(d, 0, sizeof(*d));
	char *save = NULL, *line = strtok_r(out, "\n", &save);
	cr_assert_not_null(line);
	snprintf(d->fact, sizeof(d->fact), "%s", line);
	cr_assert_str_neq(d->fact, "none", "the finding has no difference");
	char *fields[5] = {d->ok, d->refused, d->changer, NULL, d->line};
	size_t caps[5] = {sizeof(d->ok), sizeof(d->refused), sizeof(d->changer), 0,
	                  sizeof(d->line)};
	for (int i = 0; i < 5; i++) {
		line = strtok_r(NULL, "\n", &save);
		cr_assert_not_null(line, "field %d missing", i);
		if (fields[i])
			snprintf(fields[i], caps[i], "%s", line);
		else
			d->outside = atoi(line);
	}
}

/* The timeline's band of the separating fact: its label, and how many
 * spans of each side it draws ("label good bad"). */
static const char band_py[] =
    "import sys, xml.etree.ElementTree as ET\n"
    "ns = '{http://www.w3.org/2000/svg}'\n"
    "root = ET.parse(sys.stdin).getroot()\n"
    "label = [''.join(t.itertext()) for t in root.iter(ns + 'text')\n"
    "         if ''.join(t.itertext()).startswith('directory-mode')]\n"
    "spans = [r.get('fill') for r in root.iter(ns + 'rect') if r.get('fill-opacity') == '0.45']\n"
    "print('%s|%d|%d' % (label[0] if label else '-', spans.count('#2ca02c'),\n"
    "                    spans.count('#d62728')))\n";

/* denytrace fix's text. */
static void fix_of(const struct world *w)
{
	char cli[PATH_MAX];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *argv[] = {cli, "fix", w->ring, NULL};
	dtt_system(out, sizeof(out), argv, NULL);
}

Test(intermittent, a_directory_mode_flipped_by_a_traced_process_is_named_drawn_and_not_re_applied)
{
	struct world w;
	world_make(&w);
	sh("'%1$s/denytrace' run -q -o '%2$s' -- sh -c '" PY "%6$s %3$s mode 6 & " AS_NOBODY PY
	   "%5$s %4$s DELETE 60; wait'",
	   &w);
	cr_assert(worker_was_intermittent(), "not intermittent: %s", out);
	struct difference d;
	difference_of(&w, &d);
	cr_expect_str_eq(d.fact, "directory-mode", "%s", d.line);
	cr_expect_str_eq(d.ok, "0755", "%s", d.line);
	cr_expect_str_eq(d.refused, "0555", "%s", d.line);
	cr_expect_str_eq(d.changer, "python3 chmod 0555", "%s", d.line);
	cr_expect_eq(d.outside, 0);

	/* the timeline draws it as a band: 0755 spans and 0555 spans */
	char cmd[2 * PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd),
	         "'%s/denytrace' report --format svg '%s' | /usr/bin/python3 -c \"$0\"",
	         dtt_build(), w.ring);
	const char *svg[] = {"sh", "-c", cmd, band_py, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), svg, NULL), 0, "%s", out);
	char label[256] = "";
	int good = 0, bad = 0;
	cr_assert_eq(sscanf(out, "%255[^|]|%d|%d", label, &good, &bad), 3, "%s", out);
	cr_expect_str_eq(label, "directory-mode: 0755 / 0555");
	cr_expect(good > 0 && bad > 0, "%d good and %d bad spans", good, bad);

	/* the board is 0755 again: "chmod u+w" would change nothing */
	fix_of(&w);
	cr_expect_null(strstr(out, "chmod u+w"), "a fix that changes nothing:\n%s", out);
	cr_expect(strstr(out, "python3") && strstr(out, "chmod"), "the flipper is not named:\n%s",
	          out);
}

Test(intermittent, a_directory_mode_flipped_by_an_untraced_process_is_said_to_come_from_outside)
{
	struct world w;
	world_make(&w);
	/* the flipper runs beside denytrace, not under it */
	sh(PY "%6$s %3$s mode 6 & '%1$s/denytrace' run -q -o '%2$s' -- " AS_NOBODY PY
	      "%5$s %4$s WAL 60; wait",
	   &w);
	cr_assert(worker_was_intermittent(), "not intermittent: %s", out);
	struct difference d;
	difference_of(&w, &d);
	cr_expect_str_eq(d.fact, "directory-mode", "%s", d.line);
	cr_expect_str_eq(d.ok, "0755", "%s", d.line);
	cr_expect_str_eq(d.refused, "0555", "%s", d.line);
	cr_expect_str_eq(d.changer, "-", "no traced process changed it: %s", d.line);
	cr_expect_eq(d.outside, 1, "%s", d.line);
}

Test(intermittent, the_same_worker_launched_alternately_as_two_uids_is_told_by_its_uid)
{
	struct world w;
	world_make(&w);
	sh("'%1$s/denytrace' run -q -o '%2$s' -- sh -c 'for i in 1 2 3; do " AS_NOBODY PY
	   "%5$s %4$s DELETE 1; setpriv --reuid 65533 --regid 65534 --clear-groups " PY
	   "%5$s %4$s DELETE 1; done'",
	   &w);
	struct difference d;
	difference_of(&w, &d);
	cr_expect_str_eq(d.fact, "uid", "%s", d.line);
	cr_expect_str_eq(d.ok, "65534", "%s", d.line);
	cr_expect_str_eq(d.refused, "65533", "%s", d.line);
}

Test(intermittent, a_flip_no_recorded_fact_explains_is_said_to_be_unexplained)
{
	struct world w;
	world_make(&w);
	const char *chattr[] = {"chattr", "-i", w.board, NULL};
	if (dtt_system(out, sizeof(out), chattr, NULL) != 0)
		cr_skip_test("chattr does not work here: %s", out);
	/* the immutable flag refuses even root; no record carries it */
	sh("'%1$s/denytrace' run -q -o '%2$s' -- sh -c '" PY "%6$s %3$s immutable 6 & " PY
	   "%5$s %4$s DELETE 60; wait'",
	   &w);
	cr_assert(worker_was_intermittent(), "not intermittent: %s", out);
	struct difference d;
	difference_of(&w, &d);
	cr_expect_str_eq(d.fact, "-", "a guess: %s", d.line);
	cr_expect(strstr(d.line, "no recorded fact separates"), "%s", d.line);
	cr_expect(strstr(d.line, "compared: directory-mode"), "%s", d.line);
	cr_expect_null(strstr(d.line, "exist"), "a consequence presented as the cause: %s", d.line);
}

Test(intermittent, a_steady_worker_records_few_successes_by_default_and_none_with_refusals_only)
{
	struct world w;
	world_make(&w);
	const char *worker[] = {"/usr/bin/python3", w.worker, w.db, "DELETE", "100", NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, worker, NULL), 0);
	size_t news = dtt_count(&r, DT_REC_WRITE, NULL, NULL);
	/* a process that only writes gets no process record (reading /proc
	 * in every writing process of a tree is the cost); each write carries
	 * the mount namespace the report compares */
	cr_expect_eq(dtt_count(&r, DT_REC_PROCESS, NULL, NULL), 0);
	const struct dt_record *rec = dtt_find(&r, DT_REC_WRITE, NULL, NULL);
	cr_expect(rec && rec->mnt_ns, "a write without its mount namespace");
	dtt_free(&r);
	/* 100 journals created and unlinked: the first of each is news */
	cr_expect(news >= 2 && news <= 12, "%zu successful writes recorded", news);

	const char *all[] = {"--all", NULL};
	cr_assert_eq(dtt_run(&r, all, worker, NULL), 0);
	cr_expect_geq(dtt_count(&r, DT_REC_WRITE, NULL, NULL), 200);
	dtt_free(&r);

	const char *none[] = {"--refusals-only", NULL};
	cr_assert_eq(dtt_run(&r, none, worker, NULL), 0);
	cr_expect_eq(dtt_count(&r, DT_REC_WRITE, NULL, NULL), 0);
	dtt_free(&r);
}

Test(intermittent, a_shell_writing_to_dev_null_leaves_no_record_by_default)
{
	/* every shell redirects to /dev/null: recording it would attach the
	 * ring and write a process record in each */
	const char *sh_null[] = {"/bin/sh", "-c", "echo x > /dev/null", NULL};
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, sh_null, NULL), 0);
	cr_expect_eq(dtt_count(&r, DT_REC_WRITE, NULL, NULL), 0);
	cr_expect_eq(dtt_count(&r, DT_REC_PROCESS, NULL, NULL), 0);
	dtt_free(&r);
}

Test(intermittent, all_and_refusals_only_together_are_a_usage_error)
{
	struct dtt_cli c;
	const char *args[] = {"run", "--all", "--refusals-only", "--", "true", NULL};
	dtt_cli(&c, args);
	cr_expect_eq(c.status, 125);
	cr_expect(strstr(c.err, "--refusals-only"), "%s", c.err);
}
