/* SPDX-License-Identifier: MIT */
/* A review of issue 22 as a hostile worker would attack it: what the
 * traced program writes into its ring, its environment and the files the
 * ring names must come out of denytrace as inert text, never as a line
 * that does something else when a user pastes it. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

#define PYTHON "/usr/bin/python3"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(hostile_ring, .fini = teardown, .timeout = 120);

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
}

/* A worker that gives itself a board variable whose name holds shell and
 * TOML syntax, then starts the user's MCP server `tools` (its command, as
 * config.toml in dir/ch says) without it: the environment lost on the way,
 * whose fix names the variable. Records it into dir/c.ring. */
static void record_named_variable_for(const char *dir, const char *server_key)
{
	const char *server = dtt_helper_script("board_mcp.py");
	cr_assert_not_null(server);
	char path[PATH_MAX + 32], text[4 * PATH_MAX];
	snprintf(text, sizeof(text), "%s/ch", dir);
	cr_assert_eq(mkdir(text, 0755), 0);
	snprintf(path, sizeof(path), "%s/ch/config.toml", dir);
	snprintf(text, sizeof(text),
	         "[mcp_servers.%s]\ncommand = \"%s\"\nargs = [\"%s\", \"%s/m\"]\n", server_key,
	         PYTHON, server, dir);
	write_file(path, text, 0644);
	snprintf(path, sizeof(path), "%s/worker.sh", dir);
	snprintf(text, sizeof(text),
	         "#!/bin/sh\n"
	         "if [ -z \"$STAGE2\" ]; then\n"
	         "  exec env \"HERMES_Q\\\"]'\\$(touch %s/pwned)'=1\" STAGE2=1 /bin/sh \"$0\"\n"
	         "fi\n"
	         "echo x > %s/w\n"
	         "env -u HERMES_KANBAN_DB -u \"HERMES_Q\\\"]'\\$(touch %s/pwned)'\" %s %s %s/m "
	         "< /dev/null\n",
	         dir, dir, dir, PYTHON, server, dir);
	write_file(path, text, 0755);
	char cmd[4 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && mkdir -p home boards && HOME='%s/home' "
	         "HERMES_KANBAN_DB='%s/boards/kanban.db' '%s/denytrace' run -q --all -o c.ring -- "
	         "./worker.sh",
	         dir, dir, dir, dtt_build());
	const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
	char out[8192];
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
}

static void record_named_variable(const char *dir)
{
	record_named_variable_for(dir, "tools");
}

/* `denytrace CMD[ FORMAT] --codex-args 'exec hi' c.ring > OUT_FILE` in dir,
 * with the launch's environment, on the ring record_named_variable_for
 * made: a report or fix of it, which exits 0 or 1. */
static void report_named_variable(const char *dir, const char *cmd, const char *format,
                                  const char *out_file)
{
	char line[4 * PATH_MAX];
	snprintf(line, sizeof(line),
	         "cd '%s' && HOME='%s/home' HERMES_KANBAN_DB='%s/boards/kanban.db' "
	         "CODEX_HOME='%s/ch' '%s/denytrace' %s%s --codex-args 'exec hi' c.ring > %s",
	         dir, dir, dir, dir, dtt_build(), cmd, format, out_file);
	const char *sh[] = {"/bin/sh", "-c", line, NULL};
	char out[8192];
	int st = dtt_system(out, sizeof(out), sh, NULL);
	cr_assert(st == 0 || st == 1, "%s: exit %d: %s", cmd, st, out);
}

/* py, given dir, succeeds, and the fix it pasted into a shell there
 * created no dir/pwned: CMD's fix is inert. */
static void expect_pasted_fix_inert(const char *dir, const char *cmd, const char *py)
{
	char out[8192];
	const char *pargv[] = {PYTHON, "-c", py, dir, NULL};
	int st = dtt_system(out, sizeof(out), pargv, NULL);
	cr_expect_eq(st, 0, "%s: %s", cmd, out);
	char pwned[PATH_MAX + 16];
	snprintf(pwned, sizeof(pwned), "%s/pwned", dir);
	cr_expect_neq(access(pwned, F_OK), 0, "%s: its pasted fix ran the worker's command", cmd);
}

/* The handoff's fix from CMD's JSON (report or fix), checked by Python:
 * its env_vars list is TOML holding exactly the names lost, and the `codex
 * -c ...` its text says, run by a shell (codex a function that does
 * nothing), creates no file. */
static void expect_inert_fix(const char *dir, const char *cmd)
{
	report_named_variable(dir, cmd, " --format json", "out.json");
	const char *py =
	    "import json, subprocess, sys, tomllib\n"
	    "d = sys.argv[1]\n"
	    "want = 'HERMES_Q\"]\\'$(touch ' + d + '/pwned)\\''\n"
	    "h = [x for x in json.load(open(d + '/out.json'))['handoff']\n"
	    "     if x['kind'] == 'environment-lost']\n"
	    "assert len(h) == 1, h\n"
	    "fix = h[0]['fix']\n"
	    "start = fix.index('codex -c ')\n"
	    "end = fix.index(' (a -c list', start)\n"
	    "subprocess.run(['/bin/sh', '-c', 'codex() { :; }; ' + fix[start:end]], cwd=d)\n"
	    "env_vars = h[0].get('fix_env_vars', h[0].get('env_vars'))\n"
	    "got = tomllib.loads('v = ' + env_vars)['v']\n"
	    "assert want in got and all(n.startswith('HERMES_') for n in got), got\n";
	expect_pasted_fix_inert(dir, cmd, py);
}

Test(hostile_ring, a_lost_variable_named_with_shell_and_toml_syntax_stays_one_name_in_report)
{
	const char *dir = dtt_tmpdir();
	record_named_variable(dir);
	expect_inert_fix(dir, "report");
}

Test(hostile_ring, a_lost_variable_named_with_shell_and_toml_syntax_stays_one_name_in_fix)
{
	const char *dir = dtt_tmpdir();
	record_named_variable(dir);
	expect_inert_fix(dir, "fix");
}

/* The `codex -c ...` a text output's fix line holds, run by a shell (codex
 * a function that does nothing) in dir: it must create no file. */
static void expect_inert_text_fix(const char *dir, const char *cmd)
{
	report_named_variable(dir, cmd, "", "out.txt");
	const char *py = "import subprocess, sys\n"
	                 "d = sys.argv[1]\n"
	                 "text = open(d + '/out.txt').read()\n"
	                 "start = text.index('codex -c ')\n"
	                 "end = text.index(' (a -c list', start)\n"
	                 "subprocess.run(['/bin/sh', '-c', 'codex() { :; }; ' + text[start:end]],\n"
	                 "               cwd=d)\n";
	expect_pasted_fix_inert(dir, cmd, py);
}

Test(hostile_ring, the_text_reports_fix_line_for_a_hostile_variable_name_pastes_inert)
{
	const char *dir = dtt_tmpdir();
	record_named_variable(dir);
	expect_inert_text_fix(dir, "report");
	expect_inert_text_fix(dir, "fix");
}

/* A worker in bwrap refused in a directory outside its binds that it
 * named `b'$(touch pwned)'x` (one it made where it could, earlier): fix's
 * text proposes binding it, report's advice too, and those words, pasted
 * after `bwrap`, must create no file. */
Test(hostile_ring, a_bind_fix_for_a_directory_named_with_shell_syntax_pastes_inert)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *dir = dtt_tmpdir();
	char ws[PATH_MAX + 8], named[PATH_MAX + 32], ring[PATH_MAX + 16], pwned[PATH_MAX + 16];
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	snprintf(named, sizeof(named), "%s/b'$(touch pwned)'x", dir);
	snprintf(ring, sizeof(ring), "%s/r.ring", dir);
	snprintf(pwned, sizeof(pwned), "%s/pwned", dir);
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(mkdir(named, 0755), 0);
	char cmd[8 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && '%s/denytrace' run -q -o r.ring -- bwrap --ro-bind / / --bind '%s' "
	         "'%s' --dev /dev -- sh -c 'echo x > \"$0/board.db\"' \"$0\" 2>/dev/null; "
	         "'%s/denytrace' fix r.ring > fix.txt; '%s/denytrace' report r.ring > report.txt",
	         dir, dtt_build(), ws, ws, dtt_build(), dtt_build());
	const char *sh[] = {"/bin/sh", "-c", cmd, named, NULL};
	char out[8192];
	dtt_system(out, sizeof(out), sh, NULL);
	const char *py =
	    "import subprocess, sys\n"
	    "d = sys.argv[1]\n"
	    "lines = [l.strip() for l in open(d + '/fix.txt')\n"
	    "         if l.startswith('      --bind ')]\n"
	    "assert lines, open(d + '/fix.txt').read()\n"
	    "report = open(d + '/report.txt').read()\n"
	    "start = report.index('(bubblewrap: --bind ') + len('(bubblewrap: ')\n"
	    "lines.append(report[start:report.index(' after --ro-bind', start)])\n"
	    "for l in lines:\n"
	    "    subprocess.run(['/bin/sh', '-c', 'bwrap() { :; }; bwrap ' + l], cwd=d)\n";
	const char *pargv[] = {PYTHON, "-c", py, dir, NULL};
	int st = dtt_system(out, sizeof(out), pargv, NULL);
	cr_expect_eq(st, 0, "%s", out);
	cr_expect_neq(access(pwned, F_OK), 0, "the pasted bind ran the worker's command");
}

/* A file in the root that is another name (a hard link) of a file outside
 * it, which a process of the worker's may not write: a chown or chmod of
 * that name would change the file outside too, so fix states none. */
Test(hostile_ring, a_hard_link_to_a_file_outside_the_root_gets_no_chown_or_chmod)
{
	if (geteuid() != 0)
		cr_skip_test("needs root, to run the worker as uid 65534");
	const char *dir = dtt_tmpdir();
	char cmd[8 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && chmod 755 . && mkdir -p W/locked && echo secret > victim && ln victim "
	         "W/locked/leaf && "
	         "chmod 777 W W/locked && '%s/denytrace' run -q -o r.ring -- setpriv --reuid 65534 "
	         "--regid 65534 --clear-groups sh -c 'echo x >> W/locked/leaf' 2>/dev/null; "
	         "'%s/denytrace' fix --format json --root '%s/W' r.ring > fix.json",
	         dir, dtt_build(), dtt_build(), dir);
	const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
	char out[8192];
	dtt_system(out, sizeof(out), sh, NULL);
	const char *py = "import json, sys\n"
	                 "j = json.load(open(sys.argv[1] + '/fix.json'))\n"
	                 "f = [x for x in j['fixes'] if x['cause'] == 'file-permissions']\n"
	                 "assert len(f) == 1, j['fixes']\n"
	                 "assert not any('chown' in c or 'chmod' in c or 'setfacl' in c\n"
	                 "               for c in f[0]['copy']), f[0]['copy']\n";
	const char *pargv[] = {PYTHON, "-c", py, dir, NULL};
	int st = dtt_system(out, sizeof(out), pargv, NULL);
	cr_expect_eq(st, 0, "%s", out);
	struct stat sb;
	char victim[PATH_MAX + 16];
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	cr_assert_eq(stat(victim, &sb), 0);
	cr_expect_eq(sb.st_uid, 0, "the file outside the root changed owner");
}

/* fix --verify as root tries a mode change on an overlay with the mode the
 * ring recorded, which the traced program can forge: here the file was
 * set-uid root when recorded (as a forged record would say) and is not
 * now. The re-run must see the file as it is plus the group's write bit,
 * not a set-uid root copy that would make the worker root again. */
Test(hostile_ring, a_recorded_set_uid_bit_never_reaches_the_overlay_verify_makes)
{
	if (geteuid() != 0)
		cr_skip_test("the overlay needs root");
	const char *dir = dtt_tmpdir();
	char cmd[8 * PATH_MAX], seen[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && chmod 755 . && mkdir -m 777 out && mkdir B && cp /bin/true B/tool && "
	         "chown 0:65534 B/tool && "
	         "chmod 04750 B/tool && '%s/denytrace' run -q -o r.ring -- setpriv --reuid 65534 "
	         "--regid 65534 --clear-groups sh -c 'echo x >> B/tool' 2>/dev/null; "
	         "chmod 0750 B/tool && '%s/denytrace' fix --verify --yes --root '%s/B' r.ring -- "
	         "setpriv --reuid 65534 --regid 65534 --clear-groups sh -c "
	         "'stat -c %%a B/tool > out/seen; echo x >> B/tool' > fix.txt 2>&1",
	         dir, dtt_build(), dtt_build(), dir);
	const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
	char out[8192];
	int st = dtt_system(out, sizeof(out), sh, NULL);
	snprintf(seen, sizeof(seen), "%s/out/seen", dir);
	FILE *f = fopen(seen, "r");
	char mode[32] = "";
	cr_assert_not_null(f, "the re-run did not run (exit %d): %s", st, out);
	cr_assert_not_null(fgets(mode, sizeof(mode), f));
	fclose(f);
	cr_expect_str_eq(mode, "770\n", "the re-run saw mode %s", mode);
	struct stat sb;
	snprintf(seen, sizeof(seen), "%s/B/tool", dir);
	cr_assert_eq(stat(seen, &sb), 0);
	cr_expect_eq(sb.st_mode & 07777, 0750, "the disk changed: %o", sb.st_mode & 07777);
}

/* A server whose name holds a '.': Codex's -c splits keys at every '.',
 * so no -c can carry its env_vars; the fix names its table, quoted. */
Test(hostile_ring, a_server_name_codex_c_cannot_address_gets_its_table_and_no_c)
{
	const char *dir = dtt_tmpdir();
	record_named_variable_for(dir, "\"a.b\"");
	report_named_variable(dir, "report", " --format json", "out.json");
	const char *py = "import json, sys\n"
	                 "h = [x for x in json.load(open(sys.argv[1] + '/out.json'))['handoff']\n"
	                 "     if x['kind'] == 'environment-lost']\n"
	                 "assert len(h) == 1 and h[0]['mcp_server'] == 'a.b', h\n"
	                 "assert h[0]['fix_override'] is None, h[0]\n"
	                 "assert 'codex -c' not in h[0]['fix'], h[0]['fix']\n"
	                 "assert '[mcp_servers.\"a.b\"]' in h[0]['fix'], h[0]['fix']\n";
	char out[8192];
	const char *pargv[] = {PYTHON, "-c", py, dir, NULL};
	int st = dtt_system(out, sizeof(out), pargv, NULL);
	cr_expect_eq(st, 0, "%s", out);
}
