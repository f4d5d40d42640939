/* SPDX-License-Identifier: MIT */
/*
 * Handoff failures with no refusal, with the real Codex: `denytrace codex
 * -- exec` against the stub Responses API (tests/helpers/responses_stub.py)
 * and a stdio MCP server that writes a Hermes board the way hermes-tools
 * does (tests/helpers/board_mcp.py: HERMES_KANBAN_DB, else Hermes' default
 * board under HERMES_HOME, else ~/.hermes).
 *
 * What Codex does, checked first with 0.169.0 and 0.171.0 (the same):
 *  - the server gets Codex's default set (HOME among them) and the names
 *    in its env_vars copied from Codex's environment, then its env table
 *    over them: with no env_vars, HERMES_KANBAN_DB and HERMES_HOME are
 *    gone, and the server writes ~/.hermes/kanban.db, successfully;
 *  - with env_vars = ["HERMES_KANBAN_DB", ...] it writes the launch's board;
 *  - `-c mcp_servers.X.env.K="v"` for an X no layer gives a command or a
 *    url stops Codex before it starts: exit 1, "invalid transport" and
 *    "in `mcp_servers.X`" on stderr (exec, sandbox, mcp alike).
 * fix --verify re-runs the launch from its launch file with the override
 * the report proposed, and judges from the new ring whether the server
 * now has the variables and writes the launch's board.
 * One `codex exec` took 5 s on an idle machine and 40 s or more under the
 * shared build load: the hang guards are wide on purpose.
 * Skipped (with the reason) where `make codex` could not install Codex.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

#define PYTHON "/usr/bin/python3"

static char codex[PATH_MAX];
static char top[PATH_MAX]; /* dtt_codex_tmpdir() */
static char home[PATH_MAX + 16], codex_home[PATH_MAX + 16], hermes_home[PATH_MAX + 16];
static char board[PATH_MAX + 32], work[PATH_MAX + 16], marker[PATH_MAX + 16];
static char stub_log[PATH_MAX + 16], ring[PATH_MAX + 16], json[PATH_MAX + 16];
static struct dtt_stub stub;

static void setup(void)
{
	char why[PATH_MAX + 512];
	dtt_build(); /* resolved against the repository root, before any chdir */
	const char *bin = dtt_codex(why, sizeof(why));
	if (!bin)
		cr_skip_test("%s", why);
	snprintf(codex, sizeof(codex), "%s", bin);
	snprintf(top, sizeof(top), "%s", dtt_codex_tmpdir());
	snprintf(home, sizeof(home), "%s/home", top);
	snprintf(codex_home, sizeof(codex_home), "%s/codex-home", top);
	snprintf(hermes_home, sizeof(hermes_home), "%s/hermes-home", top);
	snprintf(work, sizeof(work), "%s/W", top);
	char boards[PATH_MAX + 16];
	snprintf(boards, sizeof(boards), "%s/boards", top);
	const char *dirs[] = {home, codex_home, hermes_home, work, boards};
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(mkdir(dirs[i], 0755), 0, "mkdir %s", dirs[i]);
	snprintf(board, sizeof(board), "%s/kanban.db", boards);
	snprintf(marker, sizeof(marker), "%s/mcp-started", top);
	snprintf(stub_log, sizeof(stub_log), "%s/stub.log", top);
	snprintf(ring, sizeof(ring), "%s/h.ring", top);
	snprintf(json, sizeof(json), "%s/report.json", top);
	dtt_stub_start(&stub, marker, stub_log);
}

static void teardown(void)
{
	dtt_stub_stop(&stub);
	dtt_cleanup();
}

TestSuite(codex_handoff, .init = setup, .fini = teardown, .timeout = 240);

/* config.toml: hermes-tools, the board's server, with extra lines in its
 * table, then more (other servers). */
static void write_config_args(const char *args_extra, const char *tools_extra, const char *more)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/config.toml", codex_home);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f,
	        "[mcp_servers.hermes-tools]\ncommand = \"%s\"\nargs = [\"%s\", \"%s\"%s]\n%s\n%s",
	        PYTHON, dtt_helper_script("board_mcp.py"), marker, args_extra ? args_extra : "",
	        tools_extra ? tools_extra : "", more ? more : "");
	cr_assert_eq(fclose(f), 0);
}

static void write_config(const char *tools_extra, const char *more)
{
	write_config_args(NULL, tools_extra, more);
}

/* The stub's notes, for a failure's message. */
static const char *stub_notes(void)
{
	static char buf[4096];
	buf[0] = 0;
	FILE *f = fopen(stub_log, "r");
	if (f) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = 0;
		fclose(f);
	}
	return buf;
}

/* words, run from the workspace with a Hermes dispatcher's variables and
 * stdout into stdout_file (NULL: with stderr into out), bounded by
 * timeout(1). Returns its status. */
static int in_workspace(const char *const *words, const char *stdout_file, char *out, size_t cap)
{
	char e_home[PATH_MAX + 16], e_ch[PATH_MAX + 32], e_hh[PATH_MAX + 32], e_db[PATH_MAX + 48];
	snprintf(e_home, sizeof(e_home), "HOME=%s", home);
	snprintf(e_ch, sizeof(e_ch), "CODEX_HOME=%s", codex_home);
	snprintf(e_hh, sizeof(e_hh), "HERMES_HOME=%s", hermes_home);
	snprintf(e_db, sizeof(e_db), "HERMES_KANBAN_DB=%s", board);
	const char *env[] = {e_home, e_ch, e_hh, e_db, "HERMES_KANBAN_TASK=t_1", NULL};
	const char *argv[40];
	size_t n = 0;
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = stdout_file ? "cd \"$0\" && out=$1 && shift && exec timeout -k 5 180 \"$@\" "
	                          "< /dev/null > \"$out\""
	                        : "cd \"$0\" && exec timeout -k 5 90 \"$@\" < /dev/null";
	argv[n++] = work;
	if (stdout_file)
		argv[n++] = stdout_file;
	for (size_t i = 0; words[i] && n < sizeof(argv) / sizeof(*argv) - 1; i++)
		argv[n++] = words[i];
	argv[n] = NULL;
	return dtt_system(out, cap, argv, env);
}

/* `denytrace codex -o RING -- exec ... [-c extra] "say hi"` from the
 * workspace. Returns its status; its output in out. */
static int dt_codex_exec(const char *extra, char *out, size_t cap)
{
	char dt[PATH_MAX + 16], provider[256];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	dtt_stub_provider(&stub, provider, sizeof(provider));
	const char *words[24];
	size_t n = 0;
	const char *pre[] = {dt,
	                     "codex",
	                     "--codex",
	                     codex,
	                     "-o",
	                     ring,
	                     "--",
	                     "exec",
	                     "--skip-git-repo-check",
	                     "-c",
	                     provider,
	                     "-c",
	                     DTT_STUB_MODEL};
	for (size_t i = 0; i < sizeof(pre) / sizeof(*pre); i++)
		words[n++] = pre[i];
	if (extra) {
		words[n++] = "-c";
		words[n++] = extra;
	}
	words[n++] = "say hi";
	words[n] = NULL;
	unlink(marker);
	unlink(ring);
	unlink(stub_log);
	return in_workspace(words, NULL, out, cap);
}

/* `denytrace fix --verify --yes --format json RING` with the launch's
 * environment, its JSON into json. Returns its status. */
static int fix_verify_rooted(const char *root, char *out, size_t cap)
{
	char dt[PATH_MAX + 16];
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	const char *words[] = {dt,     "fix",    "--verify", "--yes", "--format",
	                       "json", "--root", root,       ring,    NULL};
	if (!root) /* no --root: the ring follows --format's value */
		words[6] = ring, words[7] = NULL;
	unlink(marker);
	return in_workspace(words, json, out, cap);
}

static int fix_verify(char *out, size_t cap)
{
	return fix_verify_rooted(NULL, out, cap);
}

/* `denytrace report --format json RING` into json. */
static void report_json(void)
{
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof(cmd), "'%s/denytrace' report --format json '%s' > '%s'", dtt_build(),
	         ring, json);
	const char *sh[] = {"sh", "-c", cmd, NULL};
	char out[4096];
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
}

/* Runs a Python check on the report (sys.argv[1]) and the marker
 * (argv[2]); extra arguments after. */
static void check(const char *py, const char *a3, const char *a4)
{
	char out[8192];
	const char *argv[] = {PYTHON, "-c", py, json, marker, a3, a4, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), argv, NULL), 0, "%s", out);
}

static const char common_py[] = "import json, sys\n"
                                "r = json.load(open(sys.argv[1]))\n"
                                "m = json.load(open(sys.argv[2]))\n"
                                "h = r['handoff']\n"
                                "lost = [x for x in h if x['kind'] == 'environment-lost']\n"
                                "wrong = [x for x in h if x['kind'] == 'wrong-board']\n";

/* The server without env_vars: the board variables are gone at the MCP
 * hop and it writes Hermes' default board. Both findings, with the fix;
 * the fix, applied, makes it write the launch's board and the report
 * quiet. */
Test(codex_handoff, a_board_variable_lost_at_the_mcp_hop_is_named_with_its_fix_and_verified)
{
	static char out[65536];
	write_config(NULL, NULL);
	int st = dt_codex_exec(NULL, out, sizeof(out));
	cr_assert_eq(st, 0, "%s; stub: %s", out, stub_notes());
	report_json();
	char py[4096];
	snprintf(
	    py, sizeof(py),
	    "%s"
	    "assert m['db'] == sys.argv[4], m\n"
	    "assert len(lost) == 1 and lost[0]['mcp_server'] == 'hermes-tools', h\n"
	    "names = [v['name'] for v in lost[0]['lost']]\n"
	    "assert 'HERMES_KANBAN_DB' in names and 'HERMES_HOME' in names, names\n"
	    "assert lost[0]['pid'] == m['pid'] and lost[0]['board'] == m['db'], lost\n"
	    "assert 'Codex' in lost[0]['hop'] and 'hermes-tools' in lost[0]['hop'], lost\n"
	    "assert lost[0]['fix_override'].startswith('mcp_servers.hermes-tools.env_vars=['), "
	    "lost\n"
	    "assert len(wrong) == 1 and wrong[0]['named_board'] == sys.argv[3], wrong\n"
	    "assert wrong[0]['board'] == m['db'] and 'default board' in wrong[0]['why'], wrong\n"
	    "s = [x for x in r['codex']['mcp_servers'] if x['name'] == 'hermes-tools'][0]\n"
	    "e = {v['name']: v for v in s['environment']}\n"
	    "assert not e['HERMES_KANBAN_DB']['passed'], e\n"
	    "assert e['HERMES_KANBAN_DB']['codex_has'] == sys.argv[3], e\n"
	    "open(sys.argv[1] + '.fix', 'w').write(lost[0]['fix_override'])\n",
	    common_py);
	char fallback[PATH_MAX + 32];
	snprintf(fallback, sizeof(fallback), "%s/.hermes/kanban.db", home);
	check(py, board, fallback);

	/* the fix the report proposed, on the same launch */
	char fix[4096] = "", fixfile[PATH_MAX + 16];
	snprintf(fixfile, sizeof(fixfile), "%s.fix", json);
	FILE *f = fopen(fixfile, "r");
	cr_assert_not_null(f, "the report proposed no -c override");
	cr_assert_not_null(fgets(fix, sizeof(fix), f));
	fclose(f);
	st = dt_codex_exec(fix, out, sizeof(out));
	cr_assert_eq(st, 0, "%s; stub: %s", out, stub_notes());
	report_json();
	snprintf(
	    py, sizeof(py),
	    "%s"
	    "assert m['db'] == sys.argv[3] and m['env']['HERMES_KANBAN_DB'] == sys.argv[3], m\n"
	    "assert h == [], h\n",
	    common_py);
	check(py, board, NULL);
}

/* The launch of a config whose board server takes args_extra, recorded,
 * then fix --verify on it: its status want_status, and py (check's) true
 * of its JSON with a3. */
static void verify_launch(const char *args_extra, int want_status, const char *py, const char *a3)
{
	static char out[65536];
	write_config_args(args_extra, NULL, NULL);
	cr_assert_eq(dt_codex_exec(NULL, out, sizeof(out)), 0, "%s; stub: %s", out, stub_notes());
	int st = fix_verify(out, sizeof(out));
	cr_expect_eq(st, want_status, "fix --verify's status: %s; stub: %s", out, stub_notes());
	check(py, a3, NULL);
}

/* fix --verify on that run: denytrace re-runs the launch from its launch
 * file with the proposed override added, and the new ring shows the
 * server with the variables, writing the launch's board: every handoff
 * finding fixed, exit 0. */
Test(codex_handoff, fix_verify_reruns_the_launch_with_the_override_and_proves_the_handoff_fixed)
{
	const char *py =
	    "import json, sys, os\n"
	    "f = json.load(open(sys.argv[1]))\n"
	    "m = json.load(open(sys.argv[2]))\n"
	    "h = f['handoff']\n"
	    "kinds = sorted(x['kind'] for x in h)\n"
	    "assert kinds == ['environment-lost', 'wrong-board'], h\n"
	    "lost = [x for x in h if x['kind'] == 'environment-lost'][0]\n"
	    "for x in h:\n"
	    "    v = x['verify']\n"
	    "    assert v['state'] == 'fixed', x\n"
	    "    assert v['overrides'] == [lost['override']], v\n"
	    "    assert v['exit_status'] == 0 and os.path.exists(v['ring']), v\n"
	    "assert m['db'] == sys.argv[3] and m['env']['HERMES_KANBAN_DB'] == sys.argv[3], m\n";
	verify_launch(NULL, 0, py, board);
}

/* A server whose own command line pins another board: the override
 * brings it the variables (that finding fixed) and it still writes its
 * own board (that one not fixed): fix --verify exits 1. */
Test(codex_handoff, fix_verify_says_not_fixed_when_the_rerun_still_writes_another_board)
{
	char pinned[PATH_MAX + 64], args[PATH_MAX + 64];
	snprintf(pinned, sizeof(pinned), "%s/pinned/kanban.db", top);
	snprintf(args, sizeof(args), ", \"--db\", \"%s\"", pinned);
	const char *py = "import json, sys\n"
	                 "h = {x['kind']: x for x in json.load(open(sys.argv[1]))['handoff']}\n"
	                 "assert h['environment-lost']['verify']['state'] == 'fixed', h\n"
	                 "w = h['wrong-board']['verify']\n"
	                 "assert w['state'] == 'not-fixed' and sys.argv[3] in w['why'], w\n";
	verify_launch(args, 1, py, pinned);
}

/* The server's own env table sets HERMES_KANBAN_DB to a stale board: the
 * table wins over env_vars (codex_mcp.h), so only an env entry carries the
 * launch's value. The fix says so, and fix --verify proves it (exit 0). */
Test(codex_handoff, a_variable_the_env_table_overrides_is_fixed_by_an_env_entry_and_verified)
{
	static char out[65536];
	char table[PATH_MAX + 64], stale[PATH_MAX + 32];
	snprintf(stale, sizeof(stale), "%s/stale/kanban.db", top);
	snprintf(table, sizeof(table), "env = { HERMES_KANBAN_DB = \"%s\" }", stale);
	write_config(table, NULL);
	cr_assert_eq(dt_codex_exec(NULL, out, sizeof(out)), 0, "%s; stub: %s", out, stub_notes());
	report_json();
	char py1[1024];
	snprintf(py1, sizeof(py1),
	         "%s"
	         "assert m['db'] == sys.argv[4], m\n"
	         "assert len(lost) == 1, h\n"
	         "assert lost[0]['fix_env_overrides'] == ["
	         "'mcp_servers.hermes-tools.env.HERMES_KANBAN_DB=\"%%s\"' %% sys.argv[3]], lost\n",
	         common_py);
	check(py1, board, stale);
	int st = fix_verify(out, sizeof(out));
	cr_expect_eq(st, 0, "fix --verify's status: %s; stub: %s", out, stub_notes());
	const char *py2 = "import json, sys\n"
	                  "m = json.load(open(sys.argv[2]))\n"
	                  "h = json.load(open(sys.argv[1]))['handoff']\n"
	                  "assert all(x['verify']['state'] == 'fixed' for x in h), h\n"
	                  "assert m['db'] == sys.argv[3], m\n";
	check(py2, board, NULL);
}

/* The same server given env_vars: it writes the launch's board, and the
 * report has nothing to say beyond where each variable came from. */
Test(codex_handoff, a_server_given_env_vars_is_not_reported)
{
	static char out[65536];
	write_config("env_vars = [\"HERMES_KANBAN_DB\", \"HERMES_KANBAN_TASK\"]", NULL);
	cr_assert_eq(dt_codex_exec(NULL, out, sizeof(out)), 0, "%s; stub: %s", out, stub_notes());
	report_json();
	char py[2048];
	snprintf(py, sizeof(py),
	         "%s"
	         "assert m['db'] == sys.argv[3], m\n"
	         "assert h == [], h\n"
	         "s = [x for x in r['codex']['mcp_servers'] if x['name'] == 'hermes-tools'][0]\n"
	         "e = {v['name']: v for v in s['environment']}\n"
	         "assert e['HERMES_KANBAN_DB']['passed'] and "
	         "e['HERMES_KANBAN_DB']['value'] == sys.argv[3], e\n"
	         "assert e['HERMES_KANBAN_DB']['from'].startswith('env_vars in '), e\n"
	         "assert not e['HERMES_HOME']['passed'], e\n",
	         common_py);
	check(py, board, NULL);
}

/* hermes-agent #111707: the overrides name hermes-mcp, which no layer
 * defines. Codex refuses its configuration before it starts anything;
 * denytrace says so first, in Codex's words, and passes Codex's status
 * through. */
Test(codex_handoff, an_override_for_a_server_that_does_not_exist_is_refused_as_codex_refuses)
{
	static char out[65536];
	write_config(NULL, NULL);
	int st = dt_codex_exec("mcp_servers.hermes-mcp.env.HERMES_KANBAN_TASK=\"t_1\"", out,
	                       sizeof(out));
	cr_expect_eq(st, 1, "Codex's own exit status: %s", out);
	/* Codex: "invalid transport\nin `mcp_servers.hermes-mcp`" */
	cr_expect(strstr(out, "invalid transport\nin `mcp_servers.hermes-mcp`"), "%s", out);
	const char *said = strstr(out, "denytrace: Codex would refuse this command line: invalid "
	                               "transport in `mcp_servers.hermes-mcp`");
	cr_expect(said, "%s", out);
	cr_expect(said && said < strstr(out, "invalid transport\n"),
	          "denytrace did not say it before Codex: %s", out);
	cr_expect(access(marker, F_OK) != 0, "Codex started the MCP server");
}

/* The same refused launch in the report: the override names hermes-mcp,
 * the configured server is hermes-tools. fix --verify re-runs it with the
 * override renamed: Codex accepts it and starts hermes-tools with the
 * variable the override set (exit 0). */
Test(codex_handoff, fix_verify_renames_an_override_for_a_server_that_does_not_exist)
{
	static char out[65536];
	write_config(NULL, NULL);
	cr_assert_eq(dt_codex_exec("mcp_servers.hermes-mcp.env.HERMES_KANBAN_TASK=\"t_9\"", out,
	                           sizeof(out)),
	             1, "Codex's own exit status: %s", out);
	report_json();
	const char *py1 = "import json, sys\n"
	                  "h = json.load(open(sys.argv[1]))['handoff']\n"
	                  "assert [x['kind'] for x in h] == ['no-such-server'], h\n"
	                  "assert h[0]['mcp_server'] == 'hermes-mcp', h\n"
	                  "assert h[0]['fix_server'] == 'hermes-tools', h\n"
	                  "assert 'invalid transport' in h[0]['why'], h\n";
	check(py1, NULL, NULL);
	int st = fix_verify(out, sizeof(out));
	cr_expect_eq(st, 0, "fix --verify's status: %s; stub: %s", out, stub_notes());
	const char *py2 = "import json, sys\n"
	                  "m = json.load(open(sys.argv[2]))\n"
	                  "h = json.load(open(sys.argv[1]))['handoff']\n"
	                  "v = h[0]['verify']\n"
	                  "assert v['state'] == 'fixed', v\n"
	                  "assert v['renamed'] == {'hermes-mcp': 'hermes-tools'}, v\n"
	                  "assert m['env']['HERMES_KANBAN_TASK'] == 't_9', m\n";
	check(py2, NULL, NULL);
}

/* The override lands on a server of the user's that has that name: the
 * board's server still lacks the variable, and the report says where the
 * override went. */
Test(codex_handoff, an_override_landing_on_an_unrelated_server_is_named)
{
	static char out[65536];
	char more[2 * PATH_MAX];
	snprintf(more, sizeof(more),
	         "[mcp_servers.hermes-mcp]\ncommand = \"%s\"\nargs = [\"%s\", \"%s.other\", "
	         "\"--no-board\"]\n",
	         PYTHON, dtt_helper_script("board_mcp.py"), marker);
	write_config(NULL, more);
	char over[PATH_MAX + 64];
	snprintf(over, sizeof(over), "mcp_servers.hermes-mcp.env.HERMES_KANBAN_DB=\"%s\"", board);
	cr_assert_eq(dt_codex_exec(over, out, sizeof(out)), 0, "%s; stub: %s", out, stub_notes());
	report_json();
	char py[2048];
	snprintf(
	    py, sizeof(py),
	    "%s"
	    "assert len(lost) == 1 and lost[0]['mcp_server'] == 'hermes-tools', h\n"
	    "assert 'sets it for the server hermes-mcp, not for hermes-tools' in "
	    "lost[0]['why'], lost\n"
	    "s = {x['name']: x for x in r['codex']['mcp_servers']}\n"
	    "e = {v['name']: v for v in s['hermes-mcp']['environment']}\n"
	    "assert e['HERMES_KANBAN_DB']['from'].startswith('-c mcp_servers.hermes-mcp'), e\n",
	    common_py);
	check(py, board, NULL);
}

/* How many turns the stub model served since dt_codex_exec: one per run
 * of codex exec. */
static int stub_turns(void)
{
	int n = 0;
	char line[256];
	FILE *f = fopen(stub_log, "r");
	while (f && fgets(line, sizeof(line), f))
		n += !strncmp(line, "responses ", 10);
	if (f)
		fclose(f);
	return n;
}

/* RING.fix.md, the proof `denytrace evidence` appends, carries the
 * handoff findings' fixes and verdicts: its handoff table, parsed, has
 * one row per finding of fix's JSON, with the same state. */
Test(codex_handoff, the_proof_for_evidence_has_the_handoff_verdicts_of_fix_verify)
{
	static char out[65536];
	write_config(NULL, NULL);
	cr_assert_eq(dt_codex_exec(NULL, out, sizeof(out)), 0, "%s; stub: %s", out, stub_notes());
	int st = fix_verify(out, sizeof(out));
	cr_expect_eq(st, 0, "fix --verify's status: %s; stub: %s", out, stub_notes());
	char proof[PATH_MAX + 32];
	snprintf(proof, sizeof(proof), "%s.fix.md", ring);
	const char *py =
	    "import json, re, sys\n"
	    "h = json.load(open(sys.argv[1]))['handoff']\n"
	    "md = open(sys.argv[3]).read().split('\\n')\n"
	    "at = [i for i, l in enumerate(md) if l.startswith('| handoff | result |')]\n"
	    "assert len(at) == 1, 'no handoff verdicts in RING.fix.md'\n"
	    "rows = []\n"
	    "for l in md[at[0] + 2:]:\n"
	    "    if not l.startswith('|'):\n"
	    "        break\n"
	    "    rows.append([c.strip() for c in re.split(r'(?<!\\\\)\\|', l)[1:-1]])\n"
	    "assert len(rows) == len(h) == 2, (rows, h)\n"
	    "state = {'fixed': 'fixed', 'not-fixed': 'not fixed', 'cannot-verify': 'cannot "
	    "verify'}\n"
	    "for x, r in zip(h, rows):\n"
	    "    assert r[0].endswith(x['kind']) and r[1] == state[x['verify']['state']], (r, x)\n"
	    "    assert r[2], r\n"
	    "assert any(x['override'] and x['override'] in '\\n'.join(md) for x in h), md\n";
	check(py, proof, NULL);
}

/* A run with a refusal (the server's hard link to a directory: EPERM)
 * beside its handoff findings: fix --verify says once what it will run
 * and runs Codex once, with the refusal's -c and the handoffs' override
 * in one command line, and judges both from that one ring. */
Test(codex_handoff, fix_verify_runs_one_rerun_for_the_refusals_and_the_handoffs)
{
	static char out[65536];
	char side[PATH_MAX + 16], args[PATH_MAX + 64];
	snprintf(side, sizeof(side), "%s/side", top);
	cr_assert_eq(mkdir(side, 0755), 0);
	snprintf(side, sizeof(side), "%s/side/dir", top);
	cr_assert_eq(mkdir(side, 0755), 0);
	snprintf(args, sizeof(args), ", \"--link-dir\", \"%s\"", side);
	write_config_args(args, NULL, NULL);
	cr_assert_eq(dt_codex_exec(NULL, out, sizeof(out)), 0, "%s; stub: %s", out, stub_notes());
	cr_assert_eq(stub_turns(), 1, "stub: %s", stub_notes());
	/* the refused directory named as a root: a candidate alone is never
	 * applied by --verify */
	snprintf(side, sizeof(side), "%s/side", top);
	int st = fix_verify_rooted(side, out, sizeof(out));
	/* the link is refused whatever the sandbox grants: that one is not fixed */
	cr_expect_eq(st, 1, "fix --verify's status: %s; stub: %s", out, stub_notes());
	const char *said = strstr(out, "runs your command again");
	cr_expect(said && !strstr(said + 1, "runs your command again"),
	          "not one announcement of what runs:\n%s", out);
	cr_expect_eq(stub_turns(), 2, "Codex ran %d times for fix --verify; stub: %s",
	             stub_turns() - 1, stub_notes());
	const char *py =
	    "import json, sys, os\n"
	    "f = json.load(open(sys.argv[1]))\n"
	    "v = f['verified']\n"
	    "assert [x['verify']['state'] for x in f['fixes']] == ['not-fixed'], f['fixes']\n"
	    "cmd = ' '.join(v['command'])\n"
	    "assert 'sandbox_workspace_write.writable_roots=' in cmd, cmd\n"
	    "assert 'mcp_servers.hermes-tools.env_vars=' in cmd, cmd\n"
	    "h = f['handoff']\n"
	    "assert sorted(x['kind'] for x in h) == ['environment-lost', 'wrong-board'], h\n"
	    "for x in h:\n"
	    "    assert x['verify']['state'] == 'fixed', x\n"
	    "    assert x['verify']['shared_run'] and x['verify']['ring'] == v['ring'], x\n"
	    "assert not os.path.exists(sys.argv[3]), 'a second re-run left ' + sys.argv[3]\n";
	char second[PATH_MAX + 32];
	snprintf(second, sizeof(second), "%s.handoff.ring", ring);
	check(py, second, NULL);
}

/* The same run soaked (--runs 1): the soak carries only the refusals'
 * fix, so the handoffs get a run of their own after it, but fix --verify
 * still says once, before anything runs, every command it will run. */
Test(codex_handoff, fix_verify_runs_announces_the_soak_and_the_handoff_run_together)
{
	static char out[65536];
	char side[PATH_MAX + 16], args[PATH_MAX + 64], dt[PATH_MAX + 16];
	snprintf(side, sizeof(side), "%s/side", top);
	cr_assert_eq(mkdir(side, 0755), 0);
	snprintf(side, sizeof(side), "%s/side/dir", top);
	cr_assert_eq(mkdir(side, 0755), 0);
	snprintf(args, sizeof(args), ", \"--link-dir\", \"%s\"", side);
	write_config_args(args, NULL, NULL);
	cr_assert_eq(dt_codex_exec(NULL, out, sizeof(out)), 0, "%s; stub: %s", out, stub_notes());
	snprintf(dt, sizeof(dt), "%s/denytrace", dtt_build());
	snprintf(side, sizeof(side), "%s/side", top);
	const char *words[] = {dt,         "fix",  "--verify", "--yes", "--runs", "1",
	                       "--format", "json", "--root",   side,    ring,     NULL};
	in_workspace(words, json, out, sizeof(out));
	const char *said = strstr(out, "runs your command again");
	const char *then = said ? strstr(said, "then once with the handoffs' overrides") : NULL;
	const char *ran = strstr(out, "OpenAI Codex");
	cr_expect(said && !strstr(said + 1, "runs your command again"),
	          "not one announcement of what runs:\n%s", out);
	cr_expect(then && (!ran || then < ran), "the handoffs' run was not announced first:\n%s",
	          out);
	const char *py = "import json, sys\n"
	                 "h = json.load(open(sys.argv[1]))['handoff']\n"
	                 "for x in h:\n"
	                 "    v = x['verify']\n"
	                 "    assert not v['shared_run'] and v['ring'] == sys.argv[3], v\n";
	char second[PATH_MAX + 32];
	snprintf(second, sizeof(second), "%s.handoff.ring", ring);
	check(py, second, NULL);
}

/* ---- without Codex: the model, and a hop that drops the variables ------- */

static void plain_teardown(void)
{
	dtt_cleanup();
}

TestSuite(handoff_plain, .fini = plain_teardown, .timeout = 120);

/* Codex's rules for one server, from --codex-args and this environment
 * (no ring of a Codex launch): the env table wins over env_vars, env_vars
 * copies Codex's value, HOME is in Codex's default set, and a board
 * variable named nowhere is not passed. */
Test(handoff_plain, the_model_says_what_each_server_gets_and_from_which_layer)
{
	const char *tmp = dtt_tmpdir();
	char ch[PATH_MAX + 16], cfg[PATH_MAX + 32];
	snprintf(ch, sizeof(ch), "%s/ch", tmp);
	cr_assert_eq(mkdir(ch, 0755), 0);
	snprintf(cfg, sizeof(cfg), "%s/config.toml", ch);
	FILE *f = fopen(cfg, "w");
	cr_assert_not_null(f);
	fputs("[mcp_servers.tools]\ncommand = \"/bin/true\"\n"
	      "env_vars = [\"HERMES_KANBAN_DB\", \"HERMES_KANBAN_TASK\"]\n"
	      "env = { HERMES_KANBAN_TASK = \"from-table\" }\n",
	      f);
	fclose(f);
	char cmd[4 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && '%s/denytrace' run -q -o e.ring -- true && CODEX_HOME='%s' "
	         "HERMES_KANBAN_DB=/b/kanban.db HERMES_KANBAN_TASK=t_1 HERMES_HOME=/h HOME=/home/u "
	         "'%s/denytrace' report --format json --codex-args 'exec hi' e.ring > r.json",
	         tmp, dtt_build(), ch, dtt_build());
	const char *sh[] = {"sh", "-c", cmd, NULL};
	char out[8192];
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
	char json_path[PATH_MAX + 16];
	snprintf(json_path, sizeof(json_path), "%s/r.json", tmp);
	const char *py =
	    "import json, sys\n"
	    "s = json.load(open(sys.argv[1]))['codex']['mcp_servers']\n"
	    "e = {v['name']: v for v in s[0]['environment']}\n"
	    "assert e['HERMES_KANBAN_DB']['value'] == '/b/kanban.db', e\n"
	    "assert e['HERMES_KANBAN_DB']['from'] == 'env_vars in ' + sys.argv[2], e\n"
	    "assert e['HERMES_KANBAN_TASK']['value'] == 'from-table', e\n"
	    "assert e['HERMES_KANBAN_TASK']['codex_has'] == 't_1', e\n"
	    "assert e['HERMES_KANBAN_TASK']['from'] == 'env table in ' + sys.argv[2], e\n"
	    "assert not e['HERMES_HOME']['passed'], e\n"
	    "assert e['HERMES_HOME']['codex_has'] == '/h', e\n";
	const char *pargv[] = {PYTHON, "-c", py, json_path, cfg, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "%s", out);
}

/* In a new directory (returned): a child started without the board
 * variables its parent had, which then writes a board, recorded in c.ring
 * with HOME=DIR/HOME; then report --format json into r.json, and then
 * `denytrace OUTPUT_ARGS` (its output redirected as the words say). */
static const char *lost_board_world(const char *home_dir, const char *output_args)
{
	const char *tmp = dtt_tmpdir(), *server = dtt_helper_script("board_mcp.py");
	cr_assert_not_null(server);
	char cmd[6 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && mkdir -p '%s' boards && HOME='%s/%s' HERMES_KANBAN_DB='%s/boards/"
	         "kanban.db' HERMES_KANBAN_TASK=t_1 '%s' run -q --all -o c.ring -- sh -c "
	         "'env -u HERMES_KANBAN_DB -u HERMES_KANBAN_TASK %s %s %s/m < /dev/null' && "
	         "'%s' report --format json c.ring > r.json && '%s' %s",
	         tmp, home_dir, tmp, home_dir, tmp, dtt_denytrace(), PYTHON, server, tmp,
	         dtt_denytrace(), dtt_denytrace(), output_args);
	const char *sh[] = {"sh", "-c", cmd, NULL};
	char out[8192];
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
	return tmp;
}

/* A child started without the board variables its parent had, which then
 * writes a board: the environment lost on the way (no MCP server: the fix
 * is the parent's) and the wrong board, both paths named. */
Test(handoff_plain, a_child_that_lost_the_board_variables_is_named_and_so_is_the_board_it_wrote)
{
	const char *tmp = lost_board_world("home", "fix --format json c.ring > f.json");
	char json_path[PATH_MAX + 16], named[PATH_MAX + 32], wrote[PATH_MAX + 32];
	snprintf(json_path, sizeof(json_path), "%s/r.json", tmp);
	snprintf(named, sizeof(named), "%s/boards/kanban.db", tmp);
	snprintf(wrote, sizeof(wrote), "%s/home/.hermes/kanban.db", tmp);
	const char *py = "import json, sys\n"
	                 "h = json.load(open(sys.argv[1]))['handoff']\n"
	                 "lost = [x for x in h if x['kind'] == 'environment-lost']\n"
	                 "wrong = [x for x in h if x['kind'] == 'wrong-board']\n"
	                 "assert len(lost) == 1 and lost[0]['board'] == sys.argv[3], h\n"
	                 "names = sorted(v['name'] for v in lost[0]['lost'])\n"
	                 "assert names == ['HERMES_KANBAN_DB', 'HERMES_KANBAN_TASK'], names\n"
	                 "assert lost[0]['mcp_server'] is None and lost[0]['fix'], lost\n"
	                 "# the parent starts it: the fix names both, not the child twice\n"
	                 "assert lost[0]['fix'].count('pid %d' % lost[0]['pid']) == 1, lost\n"
	                 "assert len(wrong) == 1 and wrong[0]['named_board'] == sys.argv[2], h\n"
	                 "assert wrong[0]['board'] == sys.argv[3], wrong\n"
	                 "assert 'default board' in wrong[0]['why'], wrong\n"
	                 "f = json.load(open(sys.argv[1][:-6] + 'f.json'))['handoff']\n"
	                 "assert [x['kind'] for x in f] == [x['kind'] for x in h], f\n"
	                 "assert all(x['fix'] for x in f), f\n";
	const char *pargv[] = {PYTHON, "-c", py, json_path, named, wrote, NULL};
	char out[8192];
	cr_expect_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "%s", out);
}

/* The Markdown report's handoff table, cell by cell against the JSON
 * report's "handoff" array: the same facts, with a '|' in every path (a
 * HOME named so) escaped so that the table keeps its columns. */
static const char md_table_py[] =
    "import json, re, sys\n"
    "d = sys.argv[1]\n"
    "h = json.load(open(d + '/r.json'))['handoff']\n"
    "lines = open(d + '/r.md').read().split('\\n')\n"
    "at = [i for i, l in enumerate(lines) if l.startswith('| handoff | kind |')]\n"
    "assert len(at) == 1, 'no handoff table'\n"
    "def cells(l):\n"
    "    return [c.strip() for c in re.split(r'(?<!\\\\)\\|', l)[1:-1]]\n"
    "def code(c):\n"
    "    m = re.fullmatch(r'(`+)( ?)(.*)\\2\\1', c)\n"
    "    return m.group(3).replace('\\\\|', '|') if m else None\n"
    "def text(c):\n"
    "    return re.sub(r'\\\\(.)', r'\\1', c)\n"
    "head = cells(lines[at[0]])\n"
    "rows = []\n"
    "for l in lines[at[0] + 2:]:\n"
    "    if not l.startswith('|'):\n"
    "        break\n"
    "    c = cells(l)\n"
    "    assert len(c) == len(head), (head, c)\n"
    "    rows.append(dict(zip(head, c)))\n"
    "assert len(rows) == len(h) == 2, (rows, h)\n"
    "for x, row in zip(h, rows):\n"
    "    assert code(row['kind']) == x['kind'], row\n"
    "    assert int(row['pid']) == x['pid'], row\n"
    "    assert code(row['process']) == x['comm'], row\n"
    "    assert code(row['board']) == x['board'] and '|' in x['board'], row\n"
    "    assert code(row[\"launch's board\"]) == x['named_board'], row\n"
    "    assert row['MCP server'] == '' and x['mcp_server'] is None, row\n"
    "    lost = [re.match(r'`+ (\\S+) `+: launcher', v).group(1)\n"
    "            for v in row['lost'].split('<br>') if v]\n"
    "    assert lost == [v['name'] for v in x['lost']], (lost, x['lost'])\n"
    "    for k in ('hop', 'why', 'fix'):\n"
    "        assert text(row[k]) == (x[k] or ''), (k, row[k], x[k])\n";

Test(handoff_plain, the_markdown_report_has_the_handoff_findings_in_a_table_with_the_json_facts)
{
	/* a HOME with a | in it: every board path needs its cell escaped */
	const char *tmp = lost_board_world("ho|me", "report --format markdown c.ring > r.md");
	const char *pargv[] = {PYTHON, "-c", md_table_py, tmp, NULL};
	char out[8192];
	cr_expect_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "%s", out);
}

/* The same child under `denytrace run`: its fix is its parent's
 * environment, not a Codex override, so fix --verify runs nothing for it
 * and says it cannot verify (exit 9), with the reason (no Codex launch:
 * `run` without a sandbox it reads leaves no launch file either). */
Test(handoff_plain, fix_verify_cannot_verify_a_handoff_whose_fix_is_not_a_codex_override)
{
	const char *tmp = dtt_tmpdir(), *server = dtt_helper_script("board_mcp.py");
	cr_assert_not_null(server);
	char cmd[6 * PATH_MAX];
	snprintf(
	    cmd, sizeof(cmd),
	    "cd '%s' && mkdir -p home boards && export HOME='%s/home' && HERMES_KANBAN_DB='%s/"
	    "boards/kanban.db' HERMES_KANBAN_TASK=t_1 '%s/denytrace' run -q --all -o c.ring -- "
	    "sh -c 'env -u HERMES_KANBAN_DB -u HERMES_KANBAN_TASK %s %s %s/m < /dev/null' && "
	    "'%s/denytrace' fix --verify --yes --format json c.ring > f.json; echo $? > st",
	    tmp, tmp, tmp, dtt_build(), PYTHON, server, tmp, dtt_build());
	const char *sh[] = {"sh", "-c", cmd, NULL};
	char out[8192];
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", tmp);
	const char *py =
	    "import json, sys\n"
	    "d = sys.argv[1]\n"
	    "assert open(d + '/st').read().strip() == '9', open(d + '/st').read()\n"
	    "h = json.load(open(d + '/f.json'))['handoff']\n"
	    "assert len(h) == 2, h\n"
	    "for x in h:\n"
	    "    v = x['verify']\n"
	    "    assert v['state'] == 'cannot-verify', v\n"
	    "    assert 'no Codex launch to run again' in v['why'] and v['ring'] is None, v\n";
	const char *pargv[] = {PYTHON, "-c", py, dir, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "%s", out);
}

/* hcom resolves its database as aannoo/hcom does at commit 13ef196 (hcom
 * 0.7.24; src/paths.rs resolve_hcom_dir_from_env and db_path): $HCOM_DIR
 * when non-empty, else $HOME/.hcom, then hcom.db there. This child lost
 * HCOM_DIR and writes the one under HOME, in hcom's call shape (our own
 * Python, sqlite3, WAL): the wrong board names both paths, the writer and
 * the rule its environment resolved by. */
static const char hcom_writer_py[] =
    "import os, sqlite3\n"
    "d = os.environ.get('HCOM_DIR') or os.path.join(os.environ['HOME'], '.hcom')\n"
    "os.makedirs(d, mode=0o700, exist_ok=True)\n"
    "c = sqlite3.connect(os.path.join(d, 'hcom.db'), timeout=5)\n"
    "c.execute('PRAGMA journal_mode=WAL')\n"
    "c.execute('CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, data TEXT)')\n"
    "c.execute(\"INSERT INTO events (data) VALUES ('done')\")\n"
    "c.commit()\n"
    "c.close()\n";

Test(handoff_plain, an_hcom_database_the_launch_did_not_name_is_a_wrong_board_with_both_paths)
{
	const char *tmp = dtt_tmpdir();
	char script[PATH_MAX + 16];
	snprintf(script, sizeof(script), "%s/hcom_writer.py", tmp);
	FILE *f = fopen(script, "w");
	cr_assert_not_null(f);
	fputs(hcom_writer_py, f);
	cr_assert_eq(fclose(f), 0);
	char cmd[6 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && mkdir -p home team && HOME='%s/home' HCOM_DIR='%s/team' "
	         "'%s/denytrace' run -q --all -o h.ring -- sh -c 'env -u HCOM_DIR %s %s' && "
	         "'%s/denytrace' report --format json h.ring > r.json",
	         tmp, tmp, tmp, dtt_build(), PYTHON, script, dtt_build());
	const char *sh[] = {"sh", "-c", cmd, NULL};
	char out[8192];
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
	char json_path[PATH_MAX + 16], named[PATH_MAX + 32], wrote[PATH_MAX + 32];
	snprintf(json_path, sizeof(json_path), "%s/r.json", tmp);
	snprintf(named, sizeof(named), "%s/team/hcom.db", tmp);
	snprintf(wrote, sizeof(wrote), "%s/home/.hcom/hcom.db", tmp);
	const char *py = "import json, sys\n"
	                 "h = json.load(open(sys.argv[1]))['handoff']\n"
	                 "wrong = [x for x in h if x['kind'] == 'wrong-board']\n"
	                 "assert len(wrong) == 1, h\n"
	                 "w = wrong[0]\n"
	                 "assert w['named_board'] == sys.argv[2] and w['board'] == sys.argv[3], w\n"
	                 "assert w['comm'].startswith('python') and w['pid'] > 0, w\n"
	                 "assert \"hcom's default ~/.hcom\" in w['why'], w\n"
	                 "assert 'HCOM_DIR=' + sys.argv[2][:-8] in w['fix'], w\n"
	                 "lost = [x for x in h if x['kind'] == 'environment-lost']\n"
	                 "assert [v['name'] for v in lost[0]['lost']] == ['HCOM_DIR'], lost\n";
	const char *pargv[] = {PYTHON, "-c", py, json_path, named, wrote, NULL};
	cr_expect_eq(dtt_system(out, sizeof(out), pargv, NULL), 0, "%s", out);
}
