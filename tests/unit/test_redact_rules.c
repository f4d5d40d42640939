/* SPDX-License-Identifier: MIT */
/* The secret rules the probe and evidence --redact share (preload/secrets.h):
 * names, values, argv words, and the record fields built from them with too
 * little room. */
#include <criterion/criterion.h>
#include <string.h>

#include "secrets.h"

static char out[512];

static const char *arg_seq(const char *const *words, size_t i)
{
	int expect = 0;
	size_t n = 0;
	for (size_t k = 0; k <= i; k++)
		n = dt_redact_arg(words[k], strlen(words[k]), out, sizeof(out) - 1, &expect);
	out[n] = 0;
	return out;
}

static const char *value(const char *in)
{
	size_t n = dt_redact_value(in, strlen(in), out, sizeof(out) - 1);
	out[n] = 0;
	return out;
}

Test(redact_rules, secret_names_match_inside_words_but_not_path_or_pwd)
{
	static const char *const secret[] = {
	    "HERMES_DB_PASS",        "CODEX_PASSPHRASE", "HCOM_PAT",
	    "GITHUBTOKEN",           "api_key",          "MY_PW",
	    "AWS_SECRET_ACCESS_KEY", "SESSION_COOKIE",   "PAT_FOR_CI",
	    "OAUTH_CLIENT"};
	static const char *const plain[] = {
	    "PATH",       "PWD",    "HOME",       "HERMES_KANBAN_DB",
	    "CODEX_HOME", "TMPDIR", "PYTHONPATH", "HCOM_DIR"};
	for (size_t i = 0; i < sizeof(secret) / sizeof(*secret); i++)
		cr_expect(dt_secret_env_name(secret[i], strlen(secret[i])), "%s", secret[i]);
	for (size_t i = 0; i < sizeof(plain) / sizeof(*plain); i++)
		cr_expect(!dt_secret_env_name(plain[i], strlen(plain[i])), "%s", plain[i]);
}

Test(redact_rules, option_values_and_name_value_words_are_redacted)
{
	const char *const w[] = {
	    "--password=hunter2", "--token", "abc", "--api-key=k", "OPENAI_API_KEY=sk", "-c", "x",
	    "--bypass-sandbox",   "next"};
	cr_expect_str_eq(arg_seq(w, 0), "--password=" DT_REDACTED);
	cr_expect_str_eq(arg_seq(w, 1), "--token");
	cr_expect_str_eq(arg_seq(w, 2), DT_REDACTED);
	cr_expect_str_eq(arg_seq(w, 3), "--api-key=" DT_REDACTED);
	cr_expect_str_eq(arg_seq(w, 4), "OPENAI_API_KEY=" DT_REDACTED);
	cr_expect_str_eq(arg_seq(w, 6), "x");
	cr_expect_str_eq(arg_seq(w, 8), "next", "bypass is not a secret word");
}

Test(redact_rules, a_secret_option_followed_by_an_option_takes_no_value)
{
	const char *const w[] = {"--token", "--verbose"};
	cr_expect_str_eq(arg_seq(w, 1), "--verbose");
}

Test(redact_rules, url_passwords_bearer_credentials_and_tokens_go)
{
	cr_expect_str_eq(value("postgres://app:pw@db:5432/x"),
	                 "postgres://app:" DT_REDACTED "@db:5432/x");
	cr_expect_str_eq(value("redis://:pw@cache"), "redis://:" DT_REDACTED "@cache");
	cr_expect_str_eq(value("http://host:8080/a@b"), "http://host:8080/a@b");
	cr_expect_str_eq(value("Authorization: Bearer abc.def"),
	                 "Authorization: Bearer " DT_REDACTED);
	cr_expect_str_eq(value("x ghp_abcdefghijklmnopqrstuv y"), "x " DT_REDACTED " y");
	/* a long hash in a path is left to evidence --redact */
	cr_expect_str_eq(value("/nix/store/0123456789abcdef0123456789abcdef-x"),
	                 "/nix/store/0123456789abcdef0123456789abcdef-x");
}

Test(redact_rules, env_entries_with_secret_names_are_dropped_others_cleaned)
{
	cr_expect_eq(dt_redact_env("HCOM_PAT=x", 10, out, sizeof(out)), 0);
	const char *e = "HERMES_DB_URL=postgres://u:p@h/db";
	size_t n = dt_redact_env(e, strlen(e), out, sizeof(out) - 1);
	out[n] = 0;
	cr_expect_str_eq(out, "HERMES_DB_URL=postgres://u:" DT_REDACTED "@h/db");
}

Test(redact_rules, argv_field_keeps_whole_words_when_the_record_is_nearly_full)
{
	unsigned char rec[4 + 30]; /* room for two words of three */
	struct dt_buf b = {rec, 0, sizeof(rec), 0};
	const char words[] = "prog\0--password=secret\0tail";
	int cut = dt_put_argv_redacted(&b, words, sizeof(words) - 1);
	cr_expect_eq(cut, 1, "the last word did not fit and should be reported cut");
	uint16_t len;
	memcpy(&len, rec + 2, 2);
	cr_expect_eq(b.len, 4u + len);
	cr_expect_eq(len, strlen("prog") + 1 + strlen("--password=" DT_REDACTED));
	cr_expect_null(memmem(rec, b.len, "secret", 6));
}

Test(redact_rules, env_field_that_does_not_fit_sets_overflow_and_writes_nothing)
{
	unsigned char rec[16];
	struct dt_buf b = {rec, 0, sizeof(rec), 0};
	const char *e = "HERMES_HOME=/a/rather/long/path";
	dt_put_env_redacted(&b, e, strlen(e));
	cr_expect_eq(b.len, 0);
	cr_expect_eq(b.overflow, 1);
}

static const char *config(const char *in)
{
	size_t n = dt_redact_config_text(in, strlen(in), out, sizeof(out) - 1);
	out[n] = 0;
	return out;
}

Test(redact_rules, a_config_keeps_the_values_denytrace_reads_and_redacts_every_other)
{
	cr_expect_str_eq(config("sandbox_mode = \"workspace-write\" # note\nmodel = \"m\"\n"),
	                 "sandbox_mode = \"workspace-write\"\nmodel = \"" DT_REDACTED "\"\n");
	cr_expect_str_eq(config("[sandbox_workspace_write]\nwritable_roots = [\n  \"/a\",\n]\n"),
	                 "[sandbox_workspace_write]\nwritable_roots = [\n  \"/a\",\n]\n");
	cr_expect_str_eq(config("[profiles.w]\nsandbox_mode = \"read-only\"\n"
	                        "[projects.\"/p\"]\ntrust_level = \"trusted\"\n"),
	                 "[profiles.w]\nsandbox_mode = \"read-only\"\n"
	                 "[projects.\"/p\"]\ntrust_level = \"trusted\"\n");
	cr_expect_str_eq(config("# token = \"t\"\ndangerously_bypass = true\n"),
	                 "dangerously_bypass = \"" DT_REDACTED "\"\n", "comments go too");
}

/* The review: whole tables were kept, so a key of the user's own beside
 * the ones denytrace reads kept its value in every evidence bundle. */
Test(redact_rules, sandbox_and_permission_tables_keep_only_the_keys_denytrace_reads)
{
	cr_expect_str_eq(config("[sandbox_workspace_write]\nwritable_roots = [\"/a\"]\n"
	                        "my_password = \"T8\"\n"),
	                 "[sandbox_workspace_write]\nwritable_roots = [\"/a\"]\n"
	                 "my_password = \"" DT_REDACTED "\"\n");
	cr_expect_str_eq(config("[permissions.w]\nextends = \":workspace\"\nextra = \"T9\"\n"
	                        "[permissions.w.filesystem]\n\"/srv\" = \"write\"\n"),
	                 "[permissions.w]\nextends = \":workspace\"\nextra = \"" DT_REDACTED "\"\n"
	                 "[permissions.w.filesystem]\n\"/srv\" = \"write\"\n");
}

Test(redact_rules, mcp_servers_keep_name_command_and_the_probe_s_variables_only)
{
	cr_expect_str_eq(config("[mcp_servers.docs]\ncommand = \"npx\"\n"
	                        "args = [\"--token\", \"T1\"]\n"
	                        "env = { \"API_KEY\" = \"T2\", LD_PRELOAD = \"/p.so\" }\n"),
	                 "[mcp_servers.docs]\ncommand = \"npx\"\nargs = \"" DT_REDACTED "\"\n"
	                 "env = { \"API_KEY\" = \"" DT_REDACTED "\", LD_PRELOAD = \"/p.so\" }\n");
	cr_expect_str_eq(config("[mcp_servers.docs.env]\nTOKEN = \"T3\"\n"),
	                 "[mcp_servers.docs.env]\nTOKEN = \"" DT_REDACTED "\"\n");
}

Test(redact_rules, headers_query_params_urls_and_multi_line_strings_in_a_config_go_whole)
{
	cr_expect_str_eq(config("[model_providers.c]\nhttp_headers = { \"X-Key\" = \"T4\" }\n"
	                        "query_params = { key = \"T5\" }\n"
	                        "base_url = \"https://h/v1?key=T6\"\n"
	                        "notes = \'\'\'\nT7\n\'\'\'\nafter = 1\n"),
	                 "[model_providers.c]\nhttp_headers = { \"X-Key\" = \"" DT_REDACTED "\" }\n"
	                 "query_params = { key = \"" DT_REDACTED "\" }\n"
	                 "base_url = \"" DT_REDACTED "\"\nnotes = \"" DT_REDACTED "\"\n"
	                 "after = \"" DT_REDACTED "\"\n");
}

/* The s10 review: a comma inside a string of an inline table split its
 * entry, and the piece after it, no pair, was kept as it stood. */
Test(redact_rules, a_comma_or_brace_inside_an_inline_table_string_stays_in_its_value)
{
	cr_expect_str_eq(config("[mcp_servers.docs]\nenv = { GREETING = \"hello, T10\" }\n"),
	                 "[mcp_servers.docs]\nenv = { GREETING = \"" DT_REDACTED "\" }\n");
	cr_expect_str_eq(
	    config("[mcp_servers.docs]\nenv = { A = \"x\\\", T11\", LD_PRELOAD = \"/p.so\" }\n"),
	    "[mcp_servers.docs]\nenv = { A = \"" DT_REDACTED "\", LD_PRELOAD = \"/p.so\" }\n");
	cr_expect_str_eq(config("[mcp_servers.docs]\nenv = { X = \"}\", LD_PRELOAD = \"/p\" }\n"),
	                 "[mcp_servers.docs]\nenv = { X = \"" DT_REDACTED
	                 "\", LD_PRELOAD = \"/p\" }\n");
}

/* The s10 review: a quoted key's escapes were not read as TOML reads
 * them. An escaped quote hid the '=' (the line, no pair, was kept), and
 * "HERMES_API_\u004bEY" is HERMES_API_KEY to Codex but matched HERMES_*. */
Test(redact_rules, a_quoted_key_with_an_escape_never_keeps_its_value)
{
	cr_expect_str_eq(config("[mcp_servers.docs.env]\n\"A\\\"B\" = \"T12\"\n"),
	                 "[mcp_servers.docs.env]\n\"A\\\"B\" = \"" DT_REDACTED "\"\n");
	cr_expect_str_eq(config("[mcp_servers.docs.env]\n\"HERMES_API_\\u004bEY\" = \"T13\"\n"),
	                 "[mcp_servers.docs.env]\n\"HERMES_API_\\u004bEY\" = \"" DT_REDACTED
	                 "\"\n");
	cr_expect_str_eq(config("[mcp_servers.\"a\\\".b\"]\ncommand = \"T14\"\n"),
	                 "[mcp_servers.\"a\\\".b\"]\ncommand = \"" DT_REDACTED "\"\n");
}

/* The s10 review: a kept MCP url keeps its query, and ?apiKey= (camelCase)
 * or ?apikey= named no secret at a word start. */
Test(redact_rules, camel_case_and_apikey_query_parameters_lose_their_value)
{
	cr_expect_str_eq(value("https://m.example/sse?apiKey=T15&accessToken=T16&page=2"),
	                 "https://m.example/sse?apiKey=" DT_REDACTED "&accessToken=" DT_REDACTED
	                 "&page=2");
	cr_expect_str_eq(value("https://m.example/sse?apikey=T17"),
	                 "https://m.example/sse?apikey=" DT_REDACTED);
	cr_expect_str_eq(value("https://m.example/sse?monkey=1&pageSize=2"),
	                 "https://m.example/sse?monkey=1&pageSize=2");
}

/* Each argv form of issue 22's list, as the words a program receives. */
Test(redact_rules, a_password_program_s_p_option_loses_its_value_attached_or_not)
{
	const char *const sshpass[] = {"/usr/bin/sshpass", "-p", "hunter2", "ssh", "host"};
	cr_expect_str_eq(arg_seq(sshpass, 1), "-p");
	cr_expect_str_eq(arg_seq(sshpass, 2), DT_REDACTED);
	cr_expect_str_eq(arg_seq(sshpass, 4), "host");
	const char *const mysql[] = {"mysql", "-uroot", "-phunter2", "db"};
	cr_expect_str_eq(arg_seq(mysql, 2), "-p" DT_REDACTED);
	cr_expect_str_eq(arg_seq(mysql, 3), "db");
	const char *const mysql2[] = {"mysql", "-p", "hunter2"};
	cr_expect_str_eq(arg_seq(mysql2, 2), DT_REDACTED);
}

Test(redact_rules, p_options_of_other_programs_keep_their_value)
{
	const char *const mkdir[] = {"mkdir", "-p", "/srv/board"};
	cr_expect_str_eq(arg_seq(mkdir, 2), "/srv/board");
	const char *const ssh[] = {"ssh", "-p", "2222", "-pv"};
	cr_expect_str_eq(arg_seq(ssh, 2), "2222");
	cr_expect_str_eq(arg_seq(ssh, 3), "-pv");
}

Test(redact_rules, user_colon_password_keeps_the_user_only)
{
	const char *const curl[] = {"curl",      "-u",           "alice:hunter2",
	                            "-ubob:pw2", "--user=c:pw3", "--user",
	                            "d:pw4",     "-u",           "root"};
	cr_expect_str_eq(arg_seq(curl, 2), "alice:" DT_REDACTED);
	cr_expect_str_eq(arg_seq(curl, 3), "-ubob:" DT_REDACTED);
	cr_expect_str_eq(arg_seq(curl, 4), "--user=c:" DT_REDACTED);
	cr_expect_str_eq(arg_seq(curl, 6), "d:" DT_REDACTED);
	cr_expect_str_eq(arg_seq(curl, 8), "root");
}

Test(redact_rules, secret_headers_and_colon_pairs_lose_their_value)
{
	cr_expect_str_eq(value("X-Api-Key: abc123"), "X-Api-Key: " DT_REDACTED);
	cr_expect_str_eq(value("Cookie: session=abc; other=def"), "Cookie: " DT_REDACTED);
	cr_expect_str_eq(value("password:hunter2"), "password:" DT_REDACTED);
	cr_expect_str_eq(value("Content-Type: text/plain"), "Content-Type: text/plain");
	cr_expect_str_eq(value("https://example.org/x"), "https://example.org/x");
}

Test(redact_rules, npm_tokens_webhook_paths_and_secret_query_values_go)
{
	cr_expect_str_eq(value("//registry/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789"),
	                 "//registry/:_authToken=" DT_REDACTED);
	cr_expect_str_eq(value("npm_abcdefghijklmnopqrstuvwxyz0123456789"), DT_REDACTED);
	cr_expect_str_eq(value("https://hooks.slack.com/services/T000/B000/XXXXsecret"),
	                 "https://hooks.slack.com/" DT_REDACTED);
	cr_expect_str_eq(value("https://discord.com/api/webhooks/123/tok-en"),
	                 "https://discord.com/" DT_REDACTED);
	cr_expect_str_eq(value("https://api.example.org/v1?key=abc&page=2"),
	                 "https://api.example.org/v1?key=" DT_REDACTED "&page=2");
	cr_expect_str_eq(value("https://x.blob/f?sv=1&sig=abc%2F"),
	                 "https://x.blob/f?sv=1&sig=" DT_REDACTED);
}
