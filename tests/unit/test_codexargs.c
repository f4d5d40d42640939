/* SPDX-License-Identifier: MIT */
/* The -c overrides `denytrace codex` adds to carry the probe into Codex's
 * MCP servers: per key, TOML-quoted, after the user's own -c, never for a
 * server Codex cannot name in a -c key or that has no process. */
#include <criterion/criterion.h>
#include <string.h>

#include "codexargs.h"
#include "toml.h"

static struct toml_value *parse(const char *text)
{
	char err[256];
	struct toml_value *v = toml_parse(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(v, "%s", err);
	return v;
}

static const char *const vars[] = {"LD_PRELOAD", "DENYTRACE_RING"};
static const char *const vals[] = {"/p/libdenytrace.so", "/w/denytrace.ring"};

/* The plan for config.toml and the -p layer (either may be NULL). */
static int plan(const char *const *argv, size_t argc, const struct toml_value *config,
                const struct toml_value *profile, const char *const *v, const char *const *values,
                size_t nv, struct dt_codex_mcp_plan *p)
{
	const struct toml_value *files[] = {config, profile};
	return dt_codex_mcp_plan(argv, argc, files, 2, v, values, nv, p);
}

static int has_arg(const struct dt_codex_mcp_plan *p, const char *arg)
{
	for (size_t i = 0; i < p->nargs; i++)
		if (!strcmp(p->args[i], arg))
			return i > 0 && !strcmp(p->args[i - 1], "-c");
	return 0;
}

Test(codexargs, toml_quote_escapes_quotes_backslashes_and_controls)
{
	char *q = dt_toml_quote("a\"b\\c\nd\x01 \x7f\xc3\xa9");
	cr_assert_str_eq(q, "\"a\\\"b\\\\c\\u000ad\\u0001 \\u007f\xc3\xa9\"");
	/* and our TOML reader reads it back to the same bytes */
	char err[128];
	struct toml_value *v = toml_parse_value(q, err, sizeof(err));
	cr_assert_not_null(v, "%s", err);
	cr_assert_str_eq(v->str, "a\"b\\c\nd\x01 \x7f\xc3\xa9");
	toml_free(v);
	free(q);
	q = dt_toml_quote("");
	cr_assert_str_eq(q, "\"\"");
	free(q);
}

Test(codexargs, key_segment_refuses_dots_and_equals_only)
{
	cr_assert(dt_codex_key_segment_ok("docs"));
	cr_assert(dt_codex_key_segment_ok("sp ace"));
	cr_assert(dt_codex_key_segment_ok("\xc3\xbcn\xc3\xaf"
	                                  "code"));
	cr_assert(dt_codex_key_segment_ok("\"quoted\""), "quotes are literal for Codex");
	cr_assert_not(dt_codex_key_segment_ok("we.ird"));
	cr_assert_not(dt_codex_key_segment_ok("a=b"));
	cr_assert_not(dt_codex_key_segment_ok(""));
}

Test(codexargs, one_override_per_key_and_server_with_theirs_kept_after_the_probe)
{
	struct toml_value *cfg = parse("[mcp_servers.docs]\ncommand = \"/bin/cat\"\n"
	                               "env = { FOO = \"1\", LD_PRELOAD = \"/usr/lib/x.so\" }\n"
	                               "[mcp_servers.\"sp ace\"]\ncommand = \"/bin/true\"\n");
	const char *argv[] = {"codex", "exec", "hi"};
	struct dt_codex_mcp_plan p;
	cr_assert_eq(plan(argv, 3, cfg, NULL, vars, vals, 2, &p), 0);
	cr_assert_eq(p.ntraced, 2);
	cr_assert_str_eq(p.traced[0], "docs");
	cr_assert_str_eq(p.traced[1], "sp ace");
	cr_assert_eq(p.nargs, 8, "two -c pairs per server");
	cr_assert(
	    has_arg(&p, "mcp_servers.docs.env.LD_PRELOAD=\"/p/libdenytrace.so:/usr/lib/x.so\""));
	cr_assert(has_arg(&p, "mcp_servers.docs.env.DENYTRACE_RING=\"/w/denytrace.ring\""));
	cr_assert(has_arg(&p, "mcp_servers.sp ace.env.LD_PRELOAD=\"/p/libdenytrace.so\""),
	          "a name with a space is written as is: Codex does not unquote keys");
	for (size_t i = 1; i < p.nargs; i += 2)
		cr_assert(strstr(p.args[i], ".env.") && !strstr(p.args[i], "env={"),
		          "not per key: %s", p.args[i]);
	cr_assert_eq(p.insert_at, 1, "no -c given: right after the program");
	dt_codex_mcp_plan_free(&p);
	toml_free(cfg);
}

Test(codexargs, overrides_go_after_the_last_c_of_the_command_line)
{
	struct toml_value *cfg = parse("[mcp_servers.docs]\ncommand = \"/bin/cat\"\n");
	const char *argv[] = {"/x/codex",       "-c", "model=\"o3\"", "exec",
	                      "--config=a.b=1", "-m", "gpt",          "hi"};
	struct dt_codex_mcp_plan p;
	cr_assert_eq(plan(argv, 8, cfg, NULL, vars, vals, 2, &p), 0);
	cr_assert_eq(p.insert_at, 5, "after --config=a.b=1");
	dt_codex_mcp_plan_free(&p);
	/* under codex sandbox, a -c in the sandboxed command is not Codex's */
	const char *sb[] = {"codex", "sandbox", "-c", "x=1", "--", "sh", "-c", "y=2"};
	cr_assert_eq(plan(sb, 8, cfg, NULL, vars, vals, 2, &p), 0);
	cr_assert_eq(p.insert_at, 4);
	dt_codex_mcp_plan_free(&p);
	toml_free(cfg);
}

Test(codexargs, servers_added_by_c_or_the_profile_layer_get_the_probe_too)
{
	struct toml_value *cfg = parse("model = \"x\"\n");
	struct toml_value *prof = parse("[mcp_servers.prof]\ncommand = \"/bin/true\"\n"
	                                "env = { LD_PRELOAD = \"/prof.so\" }\n");
	const char *argv[] = {"codex",
	                      "-p",
	                      "p",
	                      "-c",
	                      "mcp_servers.cli.command=\"/bin/ls\"",
	                      "-c",
	                      "mcp_servers.cli.env.LD_PRELOAD=\"/cli.so\""};
	struct dt_codex_mcp_plan p;
	cr_assert_eq(plan(argv, 7, cfg, prof, vars, vals, 2, &p), 0);
	cr_assert_eq(p.ntraced, 2);
	cr_assert_str_eq(p.traced[0], "prof");
	cr_assert_str_eq(p.traced[1], "cli");
	cr_assert(has_arg(&p, "mcp_servers.prof.env.LD_PRELOAD=\"/p/libdenytrace.so:/prof.so\""));
	cr_assert(has_arg(&p, "mcp_servers.cli.env.LD_PRELOAD=\"/p/libdenytrace.so:/cli.so\""));
	cr_assert_eq(p.insert_at, 7);
	dt_codex_mcp_plan_free(&p);
	toml_free(prof);
	toml_free(cfg);
}

/* Codex applies the -c overrides in order, each replacing what is at its
 * key, then merges the result over the file: an env table given with -c
 * drops an earlier -c ...env.LD_PRELOAD, and the file's value shows again. */
Test(codexargs, a_later_table_override_hides_an_earlier_key_override)
{
	struct toml_value *cfg = parse("[mcp_servers.docs]\ncommand = \"/bin/cat\"\n"
	                               "env = { LD_PRELOAD = \"/file.so\" }\n");
	const char *argv[] = {"codex", "-c", "mcp_servers.docs.env.LD_PRELOAD=\"/early.so\"", "-c",
	                      "mcp_servers.docs.env={ R = \"1\" }"};
	struct dt_codex_mcp_plan p;
	cr_assert_eq(plan(argv, 5, cfg, NULL, vars, vals, 1, &p), 0);
	cr_assert(has_arg(&p, "mcp_servers.docs.env.LD_PRELOAD=\"/p/libdenytrace.so:/file.so\""),
	          "%s", p.nargs > 1 ? p.args[1] : "(none)");
	dt_codex_mcp_plan_free(&p);
	toml_free(cfg);
}

Test(codexargs, dotted_names_and_http_servers_are_skipped_with_a_reason)
{
	struct toml_value *cfg = parse("[mcp_servers.\"we.ird\"]\ncommand = \"/bin/true\"\n"
	                               "[mcp_servers.web]\nurl = \"http://127.0.0.1:9/mcp\"\n"
	                               "[mcp_servers.ok]\ncommand = \"/bin/true\"\n");
	const char *argv[] = {"codex"};
	struct dt_codex_mcp_plan p;
	cr_assert_eq(plan(argv, 1, cfg, NULL, vars, vals, 2, &p), 0);
	cr_assert_eq(p.ntraced, 1);
	cr_assert_str_eq(p.traced[0], "ok");
	cr_assert_eq(p.nskipped, 2);
	cr_assert(strstr(p.skipped[0], "we.ird: ") && strstr(p.skipped[0], "'.'"), "%s",
	          p.skipped[0]);
	cr_assert(strstr(p.skipped[1], "web: ") && strstr(p.skipped[1], "HTTP"), "%s",
	          p.skipped[1]);
	for (size_t i = 0; i < p.nargs; i++)
		cr_assert_not(strstr(p.args[i], "we") || strstr(p.args[i], "web"), "%s", p.args[i]);
	cr_assert_eq(p.insert_at, 1);
	dt_codex_mcp_plan_free(&p);
	toml_free(cfg);
}

Test(codexargs, no_servers_means_no_arguments)
{
	const char *argv[] = {"codex", "sandbox", "--", "true"};
	struct dt_codex_mcp_plan p;
	cr_assert_eq(plan(argv, 4, NULL, NULL, vars, vals, 2, &p), 0);
	cr_assert_eq(p.nargs, 0);
	cr_assert_eq(p.ntraced, 0);
	dt_codex_mcp_plan_free(&p);
}

/* A trusted project's .codex/config.toml starts its MCP servers too. */
Test(codexargs, servers_of_a_project_layer_get_the_probe)
{
	struct toml_value *cfg = parse("[mcp_servers.home]\ncommand = \"h\"\n");
	struct toml_value *proj = parse("[mcp_servers.proj]\ncommand = \"p\"\n");
	const struct toml_value *files[] = {cfg, NULL, proj};
	const char *argv[] = {"codex", "exec", "x", NULL};
	struct dt_codex_mcp_plan p;
	cr_assert_eq(dt_codex_mcp_plan(argv, 3, files, 3, vars, vals, 2, &p), 0);
	cr_expect_eq(p.ntraced, 2);
	cr_expect(has_arg(&p, "mcp_servers.proj.env.LD_PRELOAD=\"/p/libdenytrace.so\""));
	dt_codex_mcp_plan_free(&p);
	toml_free(cfg);
	toml_free(proj);
}

/* A -c value is a TOML string, always UTF-8: a ring path that is not
 * would reach the servers changed, so no server gets overrides, each says
 * why. */
Test(codexargs, a_value_that_is_not_utf8_reaches_no_server_and_says_why)
{
	struct toml_value *cfg = parse("[mcp_servers.docs]\ncommand = \"d\"\n");
	const char *const bad_vals[] = {"/p/libdenytrace.so", "/w/r\xff\xfe.ring"};
	const char *argv[] = {"codex", "exec", "x", NULL};
	struct dt_codex_mcp_plan p;
	cr_assert_eq(plan(argv, 3, cfg, NULL, vars, bad_vals, 2, &p), 0);
	cr_expect_eq(p.nargs, 0);
	cr_expect_eq(p.ntraced, 0);
	cr_assert_eq(p.nskipped, 1);
	cr_expect(strstr(p.skipped[0], "DENYTRACE_RING is not valid UTF-8"), "%s", p.skipped[0]);
	dt_codex_mcp_plan_free(&p);
	toml_free(cfg);
}
