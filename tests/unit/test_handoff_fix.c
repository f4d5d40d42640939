// SPDX-License-Identifier: MIT
/*
 * Tests for dt_handoff_verify_plan (tracer/fix/handoff_fix.c): which
 * handoff findings a re-run of the trusted Codex launch may carry. A value
 * an env-table override would pass to an MCP server (which runs outside
 * the worker's sandbox) must be the launch's own, not one a process of the
 * traced tree set: the ring is the traced program's to write.
 *
 *   make build/unit/test_handoff_fix && ./build/unit/test_handoff_fix
 */
#include <criterion/criterion.h>
#include <string.h>

#include "handoff_fix.h"

static const char *launch_env[] = {"HERMES_KANBAN_DB=/w/board/kanban.db", "HOME=/home/u"};
static const char *argv[] = {"codex", "exec", "-c", "x=1", "hi", NULL};

/* A launch record with launch_env, vouched for by the launch file
 * (rs_claimed 0), and one env-lost finding whose table override passes
 * HERMES_KANBAN_DB=value. */
static int plan(const char *value, int rs_claimed, struct dt_handoff_verify *out)
{
	static struct dt_record launch;
	static struct dt_fix_inputs in;
	static struct dt_handoff_var var;
	static struct dt_handoff h;
	static char *overrides[1];
	static char override[512];
	static struct dt_handoffs hs;
	memset(&launch, 0, sizeof(launch));
	launch.type = DT_REC_LAUNCH;
	launch.env = launch_env;
	launch.nenv = 2;
	memset(&in, 0, sizeof(in));
	in.launch = &launch;
	in.trusted = 1;
	in.via_codex = 1;
	in.l.argv = argv;
	in.l.argc = 5;
	in.l.rs_claimed = rs_claimed;
	var.name = "HERMES_KANBAN_DB";
	var.launcher = value;
	snprintf(override, sizeof(override), "mcp_servers.hermes-tools.env.HERMES_KANBAN_DB=\"%s\"",
	         value);
	overrides[0] = override;
	memset(&h, 0, sizeof(h));
	h.kind = DT_HANDOFF_ENV_LOST;
	h.vars = &var;
	h.nvars = 1;
	h.fix_env_overrides = overrides;
	h.nfix_env_overrides = 1;
	hs.v = &h;
	hs.n = 1;
	return dt_handoff_verify_plan(&hs, &in, out);
}

Test(handoff_fix, a_value_the_launch_had_is_carried_by_the_rerun)
{
	struct dt_handoff_verify v;
	cr_expect_eq(plan("/w/board/kanban.db", 0, &v), 1);
	/* planned to run: no reason why not, and no verdict before the run */
	cr_expect_null(v.v[0].why, "%s", v.v[0].why ? v.v[0].why : "");
	cr_expect_eq(v.v[0].state, DT_VERIFY_CANNOT);
	cr_expect_not_null(v.argv);
	dt_handoff_verify_free(&v);
}

Test(handoff_fix, a_value_set_inside_the_traced_tree_is_shown_not_run)
{
	struct dt_handoff_verify v;
	cr_expect_eq(plan("/home/u/.config/autostart/x.desktop", 0, &v), 0);
	cr_expect_eq(v.v[0].state, DT_VERIFY_CANNOT);
	cr_expect(v.v[0].why && strstr(v.v[0].why, "named by the traced program"), "%s",
	          v.v[0].why ? v.v[0].why : "(none)");
	cr_expect_null(v.argv);
	dt_handoff_verify_free(&v);
}

Test(handoff_fix, a_launch_record_the_launch_file_does_not_vouch_for_names_nothing)
{
	struct dt_handoff_verify v;
	cr_expect_eq(plan("/w/board/kanban.db", 1, &v), 0);
	cr_expect_eq(v.v[0].state, DT_VERIFY_CANNOT);
	dt_handoff_verify_free(&v);
}

/* A shared re-run: the refusals' fixed command line, its own -c words
 * kept, with the handoffs' override after its last -c (where Codex applies
 * it last) and before the prompt. */
Test(handoff_fix, a_shared_rerun_adds_the_overrides_to_the_refusals_fixed_command_line)
{
	struct dt_handoff_verify v;
	char *fixed[] = {"codex", "exec", "-c",
	                 "x=1",   "-c",   "sandbox_workspace_write.writable_roots=[\"/w/board\"]",
	                 "hi",    NULL};
	const char *want[] = {
	    "codex", "exec",
	    "-c",    "x=1",
	    "-c",    fixed[5],
	    "-c",    "mcp_servers.hermes-tools.env.HERMES_KANBAN_DB=\"/w/board/kanban.db\"",
	    "hi",    NULL};
	cr_assert_eq(plan("/w/board/kanban.db", 0, &v), 1);
	dt_handoff_verify_share(&v, fixed, 7);
	cr_expect(v.shared);
	for (size_t i = 0; want[i] || v.argv[i]; i++) {
		cr_assert(want[i] && v.argv[i], "word %zu: %s, want %s", i,
		          v.argv[i] ? v.argv[i] : "(end)", want[i] ? want[i] : "(end)");
		cr_expect_str_eq(v.argv[i], want[i], "word %zu", i);
	}
	dt_handoff_verify_free(&v);
}

/* A wrong-board finding carries the overrides of the environment its
 * process lost (add_overrides_of); those must pass the same check as when
 * the env-lost finding carries them itself. */
Test(handoff_fix, a_wrong_board_finding_does_not_carry_a_value_set_inside_the_traced_tree)
{
	static const char *traced = "/home/u/.config/autostart/x.desktop";
	static struct dt_record launch;
	static struct dt_fix_inputs in;
	static struct dt_handoff_var var;
	static struct dt_handoff h[2];
	static char override[512];
	static char *overrides[1] = {override};
	static struct dt_handoffs hs;
	launch.type = DT_REC_LAUNCH;
	launch.env = launch_env;
	launch.nenv = 2;
	in.launch = &launch;
	in.trusted = 1;
	in.via_codex = 1;
	in.l.argv = argv;
	in.l.argc = 5;
	var.name = "HERMES_KANBAN_DB";
	var.launcher = traced;
	snprintf(override, sizeof(override), "mcp_servers.hermes-tools.env.HERMES_KANBAN_DB=\"%s\"",
	         traced);
	h[0].kind = DT_HANDOFF_WRONG_BOARD;
	h[0].pid = 42;
	h[1].kind = DT_HANDOFF_ENV_LOST;
	h[1].pid = 42;
	h[1].vars = &var;
	h[1].nvars = 1;
	h[1].fix_env_overrides = overrides;
	h[1].nfix_env_overrides = 1;
	hs.v = h;
	hs.n = 2;
	struct dt_handoff_verify v;
	dt_handoff_verify_plan(&hs, &in, &v);
	for (size_t k = 0; k < v.noverrides; k++)
		cr_expect_null(strstr(v.overrides[k], traced), "the re-run carries %s",
		               v.overrides[k]);
	cr_expect_null(v.argv, "a re-run was planned with the traced program's value");
	cr_expect_eq(v.v[0].state, DT_VERIFY_CANNOT);
	dt_handoff_verify_free(&v);
}
