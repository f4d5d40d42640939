// SPDX-License-Identifier: MIT
/*
 * Tests for tracer/read/toml.c, the TOML subset reader for Codex's config.toml.
 *
 * Build from the repository root (fixture paths are relative to it):
 *   gcc -std=gnu11 -Wall -Wextra -Werror -Itracer/read tracer/read/toml.c \
 *       tests/unit/test_toml.c -lcriterion -o /tmp/test_toml && /tmp/test_toml
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "toml.h"

#ifndef TOML_FIXTURES
#define TOML_FIXTURES "tests/unit/toml"
#endif

/* ---- helpers ---------------------------------------------------------- */

static struct toml_value *parse_ok(const char *text)
{
	char err[256] = "";
	struct toml_value *root;

	root = toml_parse(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(root, "expected the input to parse, got: %s", err);
	cr_assert_eq(root->type, TOML_TABLE);
	return root;
}

static struct toml_value *parse_fixture(const char *name)
{
	char path[512], err[256] = "";
	struct toml_value *root;

	snprintf(path, sizeof(path), "%s/%s", TOML_FIXTURES, name);
	root = toml_parse_file(path, err, sizeof(err));
	cr_assert_not_null(root, "%s should parse, got: %s", path, err);
	return root;
}

/* Asserts that err is exactly "line N: ..." and mentions fragment. */
static void assert_error(const char *err, int line, const char *fragment)
{
	char prefix[32];

	snprintf(prefix, sizeof(prefix), "line %d: ", line);
	cr_assert(!strncmp(err, prefix, strlen(prefix)),
	          "expected the error to start with '%s', got '%s'", prefix, err);
	cr_assert(strstr(err, fragment), "expected the error to mention '%s', got '%s'", fragment,
	          err);
}

static void expect_error(const char *text, int line, const char *fragment)
{
	char err[256] = "";
	struct toml_value *root;

	root = toml_parse(text, strlen(text), err, sizeof(err));
	cr_assert_null(root, "expected a parse error mentioning '%s' for:\n%s", fragment, text);
	assert_error(err, line, fragment);
}

static void expect_fixture_error(const char *name, int line, const char *fragment)
{
	char path[512], err[256] = "";
	struct toml_value *root;

	snprintf(path, sizeof(path), "%s/%s", TOML_FIXTURES, name);
	root = toml_parse_file(path, err, sizeof(err));
	cr_assert_null(root, "%s should be rejected", path);
	assert_error(err, line, fragment);
}

static const char *str_of(const struct toml_value *v)
{
	cr_assert_not_null(v, "value is missing");
	cr_assert_eq(v->type, TOML_STRING, "value is not a string");
	return v->str;
}

static long long int_of(const struct toml_value *v)
{
	cr_assert_not_null(v, "value is missing");
	cr_assert_eq(v->type, TOML_INT, "value is not an integer");
	return v->i;
}

static int bool_of(const struct toml_value *v)
{
	cr_assert_not_null(v, "value is missing");
	cr_assert_eq(v->type, TOML_BOOL, "value is not a boolean");
	return v->b;
}

static const struct toml_value *array_of(const struct toml_value *v, size_t n)
{
	cr_assert_not_null(v, "value is missing");
	cr_assert_eq(v->type, TOML_ARRAY, "value is not an array");
	cr_assert_eq(v->n, n, "array has %zu items, expected %zu", v->n, n);
	return v;
}

static const struct toml_value *table_of(const struct toml_value *v, size_t n)
{
	cr_assert_not_null(v, "value is missing");
	cr_assert_eq(v->type, TOML_TABLE, "value is not a table");
	cr_assert_eq(v->n, n, "table has %zu entries, expected %zu", v->n, n);
	return v;
}

static char *read_whole_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1 << 16);

	cr_assert_not_null(f, "cannot open %s", path);
	cr_assert_not_null(buf);
	*len = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

/* ---- realistic Codex configurations ----------------------------------- */

Test(codex_config, top_level_scalars_are_read)
{
	struct toml_value *root = parse_fixture("codex_config.toml");
	const struct toml_value *notify;

	cr_assert_str_eq(str_of(toml_get(root, "model", NULL)), "gpt-5-codex");
	cr_assert_str_eq(str_of(toml_get(root, "approval_policy", NULL)), "on-request");
	cr_assert_str_eq(str_of(toml_get(root, "sandbox_mode", NULL)), "workspace-write");
	cr_assert_eq(int_of(toml_get(root, "model_context_window", NULL)), 272000);
	notify = array_of(toml_get(root, "notify", NULL), 2);
	cr_assert_str_eq(str_of(&notify->items[1]), "/home/u/.codex/notify.py");
	toml_free(root);
}

Test(codex_config, sandbox_workspace_write_roots_and_network)
{
	struct toml_value *root = parse_fixture("codex_config.toml");
	const struct toml_value *roots;

	roots = array_of(toml_get(root, "sandbox_workspace_write", "writable_roots", NULL), 2);
	cr_assert_str_eq(str_of(&roots->items[0]), "/srv/a");
	cr_assert_str_eq(str_of(&roots->items[1]), "/home/u/.hermes/kanban");
	cr_assert_eq(roots->line, 14);
	cr_assert_eq(roots->items[1].line, 16);
	cr_assert_eq(bool_of(toml_get(root, "sandbox_workspace_write", "network_access", NULL)), 0);
	cr_assert_eq(bool_of(toml_get(root, "sandbox_workspace_write", "exclude_slash_tmp", NULL)),
	             1);
	toml_free(root);
}

Test(codex_config, mcp_server_command_args_and_env_inline_table)
{
	struct toml_value *root = parse_fixture("codex_config.toml");
	const struct toml_value *docs, *args, *env;

	docs = toml_get(root, "mcp_servers", "docs", NULL);
	cr_assert_str_eq(str_of(toml_table_get(docs, "command")), "npx");
	args = array_of(toml_table_get(docs, "args"), 4);
	cr_assert_str_eq(str_of(&args->items[1]), "@upstash/context7-mcp");
	/* A literal string keeps its backslashes. */
	cr_assert_str_eq(str_of(&args->items[3]), "C:\\keys\\ctx7");
	env = table_of(toml_table_get(docs, "env"), 2);
	cr_assert_str_eq(str_of(toml_table_get(env, "LD_PRELOAD")),
	                 "/usr/lib/denytrace/libdenytrace.so");
	cr_assert_str_eq(str_of(toml_table_get(env, "NODE_OPTIONS")), "--max-old-space-size=4096");
	cr_assert_eq(int_of(toml_table_get(docs, "startup_timeout_sec")), 20);
	toml_free(root);
}

Test(codex_config, quoted_header_keys_keep_their_dots_and_slashes)
{
	struct toml_value *root = parse_fixture("codex_config.toml");

	cr_assert_str_eq(str_of(toml_get(root, "mcp_servers", "figma.remote", "url", NULL)),
	                 "https://mcp.figma.com/mcp");
	cr_assert_null(toml_get(root, "mcp_servers", "figma", NULL));
	cr_assert_str_eq(
	    str_of(toml_get(root, "projects", "/home/u/src/denytrace", "trust_level", NULL)),
	    "trusted");
	toml_free(root);
}

Test(codex_config, profiles_are_separate_tables)
{
	struct toml_value *root = parse_fixture("codex_config.toml");
	const struct toml_value *profiles, *fast;

	profiles = table_of(toml_get(root, "profiles", NULL), 2);
	cr_assert_str_eq(profiles->keys[0], "fast");
	cr_assert_str_eq(profiles->keys[1], "deep");
	fast = toml_table_get(profiles, "fast");
	cr_assert_eq(fast->line, 39);
	cr_assert_str_eq(str_of(toml_table_get(fast, "approval_policy")), "never");
	cr_assert_str_eq(str_of(toml_table_get(fast, "sandbox_mode")), "read-only");
	/* A profile's model must not leak into or from the top level. */
	cr_assert_str_eq(str_of(toml_table_get(fast, "model")), "gpt-5-codex-mini");
	cr_assert_str_eq(str_of(toml_get(root, "model", NULL)), "gpt-5-codex");
	toml_free(root);
}

Test(codex_config, table_entries_keep_file_order)
{
	static const char *const expected[] = {
	    "model",
	    "model_provider",
	    "model_reasoning_effort",
	    "approval_policy",
	    "sandbox_mode",
	    "notify",
	    "model_context_window",
	    "sandbox_workspace_write",
	    "shell_environment_policy",
	    "mcp_servers",
	    "profiles",
	    "projects",
	    "tui",
	    "history",
	};
	struct toml_value *root = parse_fixture("codex_config.toml");
	size_t k;

	table_of(root, sizeof(expected) / sizeof(expected[0]));
	for (k = 0; k < root->n; k++)
		cr_assert_str_eq(root->keys[k], expected[k]);
	toml_free(root);
}

Test(codex_config, permission_profiles_with_quoted_and_dotted_keys)
{
	struct toml_value *root = parse_fixture("codex_permissions.toml");
	const struct toml_value *fs, *roots, *domains, *edit, *project_roots;

	cr_assert_str_eq(str_of(toml_get(root, "default_permissions", NULL)),
	                 "restricted-workspace");
	fs = toml_get(root, "permissions", "restricted-workspace", "filesystem", NULL);
	cr_assert_str_eq(str_of(toml_table_get(fs, ":minimal")), "read");
	cr_assert_str_eq(str_of(toml_table_get(fs, "/home/u/.hermes/kanban")), "write");
	cr_assert_eq(int_of(toml_table_get(fs, "glob_scan_max_depth")), 3);
	roots = table_of(toml_table_get(fs, ":workspace_roots"), 3);
	cr_assert_str_eq(str_of(toml_table_get(roots, "private/**")), "deny");
	cr_assert_eq(bool_of(toml_get(root, "permissions", "restricted-workspace",
	                              "workspace_roots", "/home/u/project", NULL)),
	             1);
	domains = table_of(
	    toml_get(root, "permissions", "restricted-workspace", "network", "domains", NULL), 2);
	cr_assert_str_eq(str_of(toml_table_get(domains, "*.internal.example")), "allow");

	edit = toml_get(root, "permissions", "project-edit", NULL);
	project_roots = table_of(toml_get(edit, "filesystem", ":project_roots", NULL), 2);
	cr_assert_str_eq(str_of(toml_table_get(project_roots, "**/*.env")), "none");
	cr_assert_eq(bool_of(toml_get(edit, "network", "enabled", NULL)), 0);
	toml_free(root);
}

Test(codex_config, crlf_file_reads_like_lf_file)
{
	char path[512], err[256] = "";
	struct toml_value *root;
	const struct toml_value *roots;
	size_t len, k, out = 0;
	char *lf, *crlf;

	snprintf(path, sizeof(path), "%s/codex_config.toml", TOML_FIXTURES);
	lf = read_whole_file(path, &len);
	crlf = malloc(len * 2 + 1);
	cr_assert_not_null(crlf);
	for (k = 0; k < len; k++) {
		if (lf[k] == '\n')
			crlf[out++] = '\r';
		crlf[out++] = lf[k];
	}
	root = toml_parse(crlf, out, err, sizeof(err));
	cr_assert_not_null(root, "CRLF config should parse, got: %s", err);
	roots = array_of(toml_get(root, "sandbox_workspace_write", "writable_roots", NULL), 2);
	cr_assert_str_eq(str_of(&roots->items[1]), "/home/u/.hermes/kanban");
	cr_assert_eq(roots->items[1].line, 16);
	toml_free(root);
	free(lf);
	free(crlf);
}

/* ---- keys and tables -------------------------------------------------- */

Test(keys, dotted_keys_create_nested_tables)
{
	struct toml_value *root = parse_ok("a.b.c = 1\n"
	                                   "a.b.d = \"x\"\n"
	                                   "a.e = true\n");
	const struct toml_value *a, *b;

	a = table_of(toml_get(root, "a", NULL), 2);
	b = table_of(toml_table_get(a, "b"), 2);
	cr_assert_eq(int_of(toml_table_get(b, "c")), 1);
	cr_assert_str_eq(str_of(toml_table_get(b, "d")), "x");
	cr_assert_eq(bool_of(toml_table_get(a, "e")), 1);
	cr_assert_eq(b->line, 1, "a dotted table starts where it is first named");
	toml_free(root);
}

Test(keys, dotted_keys_allow_spaces_and_quoted_parts)
{
	struct toml_value *root = parse_ok("site . \"google.com\" = true\n"
	                                   "'lit.key' .x = 1\n");

	cr_assert_eq(bool_of(toml_get(root, "site", "google.com", NULL)), 1);
	cr_assert_eq(int_of(toml_get(root, "lit.key", "x", NULL)), 1);
	toml_free(root);
}

Test(keys, dotted_keys_inside_a_header_table)
{
	struct toml_value *root = parse_ok("[mcp_servers.docs]\n"
	                                   "env.LD_PRELOAD = \"/x.so\"\n"
	                                   "env.HOME = \"/h\"\n");

	table_of(toml_get(root, "mcp_servers", "docs", "env", NULL), 2);
	cr_assert_str_eq(str_of(toml_get(root, "mcp_servers", "docs", "env", "LD_PRELOAD", NULL)),
	                 "/x.so");
	toml_free(root);
}

Test(keys, bare_keys_may_be_digits_and_dashes)
{
	struct toml_value *root = parse_ok("1234 = 1\nbare-key_2 = 2\n\"\" = 3\n");

	cr_assert_eq(int_of(toml_get(root, "1234", NULL)), 1);
	cr_assert_eq(int_of(toml_get(root, "bare-key_2", NULL)), 2);
	cr_assert_eq(int_of(toml_get(root, "", NULL)), 3);
	toml_free(root);
}

Test(keys, quoted_keys_use_string_escapes)
{
	struct toml_value *root = parse_ok("\"tab\\there\" = 1\n'no\\tesc' = 2\n");

	cr_assert_eq(int_of(toml_get(root, "tab\there", NULL)), 1);
	cr_assert_eq(int_of(toml_get(root, "no\\tesc", NULL)), 2);
	toml_free(root);
}

Test(keys, header_with_spaces_and_quoted_dotted_part)
{
	struct toml_value *root = parse_ok("[ a . \"b.c\" . d ]\nx = 1\n");

	cr_assert_eq(int_of(toml_get(root, "a", "b.c", "d", "x", NULL)), 1);
	cr_assert_eq(toml_get(root, "a", "b.c", "d", NULL)->line, 1);
	toml_free(root);
}

Test(keys, implicit_table_may_be_defined_later)
{
	struct toml_value *root = parse_ok("[a.b]\nx = 1\n[a]\ny = 2\n");

	cr_assert_eq(int_of(toml_get(root, "a", "b", "x", NULL)), 1);
	cr_assert_eq(int_of(toml_get(root, "a", "y", NULL)), 2);
	toml_free(root);
}

Test(keys, header_may_add_subtable_below_dotted_table)
{
	struct toml_value *root = parse_ok("[fruit]\n"
	                                   "apple.color = \"red\"\n"
	                                   "[fruit.apple.texture]\n"
	                                   "smooth = true\n");

	cr_assert_str_eq(str_of(toml_get(root, "fruit", "apple", "color", NULL)), "red");
	cr_assert_eq(bool_of(toml_get(root, "fruit", "apple", "texture", "smooth", NULL)), 1);
	toml_free(root);
}

Test(keys, empty_header_table_exists)
{
	struct toml_value *root = parse_ok("[features]\n[tui]\n");

	table_of(toml_get(root, "features", NULL), 0);
	table_of(toml_get(root, "tui", NULL), 0);
	toml_free(root);
}

Test(keys, header_cannot_reopen_dotted_table)
{
	expect_error("[fruit]\napple.color = \"red\"\n[fruit.apple]\n", 3, "dotted keys");
}

Test(keys, dotted_key_cannot_extend_header_table)
{
	expect_error("[a.b]\nz = 9\n[a]\nb.t = 1\n", 4, "cannot add keys to table 'b'");
}

Test(keys, dotted_key_through_non_table_is_rejected)
{
	expect_error("a = 1\na.b = 2\n", 2, "'a' is already an integer");
}

Test(keys, header_through_non_table_is_rejected)
{
	expect_error("a = [1]\n[a.b]\n", 2, "'a' is already an array");
}

Test(keys, header_naming_a_value_is_rejected)
{
	expect_error("[a]\nb = 1\n[a.b]\n", 3, "'b' is already an integer");
}

Test(keys, key_redefining_implicit_table_is_duplicate)
{
	expect_error("[a.b]\nx = 1\n[a]\nb = 2\n", 4, "duplicate key 'b'");
}

/* ---- strings ---------------------------------------------------------- */

Test(strings, basic_escapes_decode)
{
	struct toml_value *root = parse_ok("s = \"q\\\" bs\\\\ n\\n t\\t r\\r b\\b f\\f\"\n");

	cr_assert_str_eq(str_of(toml_get(root, "s", NULL)), "q\" bs\\ n\n t\t r\r b\b f\f");
	toml_free(root);
}

Test(strings, unicode_escapes_become_utf8)
{
	struct toml_value *root = parse_ok("s = \"\\u00e9\\u20AC\\U0001F600\\u007f\"\n");

	cr_assert_str_eq(str_of(toml_get(root, "s", NULL)),
	                 "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\x7F");
	toml_free(root);
}

Test(strings, raw_utf8_passes_through)
{
	/* Two-, three- (incl. an E0 lead) and four-byte sequences, in a value
	 * and in a quoted key. */
	struct toml_value *root = parse_ok("s = \"h\xC3\xA9 \xE2\x82\xAC \xE0\xA4\x85\"\n"
	                                   "\"\xF0\x9F\x98\x80\" = '\xF4\x8F\xBF\xBF'\n");

	cr_assert_str_eq(str_of(toml_get(root, "s", NULL)), "h\xC3\xA9 \xE2\x82\xAC \xE0\xA4\x85");
	cr_assert_str_eq(str_of(toml_get(root, "\xF0\x9F\x98\x80", NULL)), "\xF4\x8F\xBF\xBF");
	toml_free(root);
}

Test(strings, literal_strings_keep_backslashes_and_double_quotes)
{
	struct toml_value *root = parse_ok("s = 'C:\\n\\t \"quoted\"'\ne = ''\n");

	cr_assert_str_eq(str_of(toml_get(root, "s", NULL)), "C:\\n\\t \"quoted\"");
	cr_assert_str_eq(str_of(toml_get(root, "e", NULL)), "");
	toml_free(root);
}

Test(strings, multiline_basic_trims_first_newline_and_joins_lines)
{
	struct toml_value *root = parse_ok("s = \"\"\"\n"
	                                   "one\n"
	                                   "two \\\n"
	                                   "     three\\t\"\"\"\n"
	                                   "after = 1\n");

	cr_assert_str_eq(str_of(toml_get(root, "s", NULL)), "one\ntwo three\t");
	cr_assert_eq(toml_get(root, "s", NULL)->line, 1);
	cr_assert_eq(toml_get(root, "after", NULL)->line, 5);
	toml_free(root);
}

Test(strings, multiline_quotes_before_closing_delimiter_are_content)
{
	struct toml_value *root = parse_ok("a = \"\"\"say \"hi\"\"\"\"\"\n"
	                                   "b = '''it''s'''''\n");

	cr_assert_str_eq(str_of(toml_get(root, "a", NULL)), "say \"hi\"\"");
	cr_assert_str_eq(str_of(toml_get(root, "b", NULL)), "it''s''");
	toml_free(root);
}

Test(strings, multiline_literal_keeps_everything)
{
	struct toml_value *root = parse_ok("s = '''\r\n"
	                                   "C:\\path\\ \r\n"
	                                   "  # not a comment\r\n"
	                                   "'''\n");

	cr_assert_str_eq(str_of(toml_get(root, "s", NULL)), "C:\\path\\ \n  # not a comment\n");
	toml_free(root);
}

Test(strings, nul_escape_is_rejected)
{
	expect_error("a = 1\ns = \"x\\u0000y\"\n", 2, "U+0000");
}

Test(strings, surrogate_escape_is_rejected)
{
	expect_error("s = \"\\uD800\"\n", 1, "not a Unicode scalar value");
}

Test(strings, escape_beyond_unicode_is_rejected)
{
	expect_error("s = \"\\U00110000\"\n", 1, "not a Unicode scalar value");
}

Test(strings, short_unicode_escape_is_rejected)
{
	expect_error("s = \"\\u12\"\n", 1, "4 hexadecimal digits");
}

Test(strings, toml_1_1_escapes_are_rejected)
{
	expect_error("s = \"\\e[0m\"\n", 1, "invalid escape");
	expect_error("s = \"\\x41\"\n", 1, "invalid escape");
}

Test(strings, unterminated_multiline_reports_opening_line)
{
	expect_error("a = 1\ns = \"\"\"\nline\nline\n", 2, "unterminated multi-line string");
	expect_error("s = '''\nline\n", 1, "unterminated multi-line string");
}

Test(strings, too_many_closing_quotes_are_rejected)
{
	expect_error("s = \"\"\"x\"\"\"\"\"\"\n", 1, "too many quotes");
}

Test(strings, control_characters_must_be_escaped)
{
	expect_error("a = 1\ns = \"x\x01y\"\n", 2, "control character U+0001");
	expect_error("s = \"x\x7Fy\"\n", 1, "control character U+007F");
}

/* ---- numbers and booleans --------------------------------------------- */

Test(numbers, decimal_integers_with_signs_and_underscores)
{
	struct toml_value *root =
	    parse_ok("a = +42\nb = -17\nc = 1_000_000\nd = 0\ne = -0\n"
	             "max = 9223372036854775807\nmin = -9223372036854775808\n");

	cr_assert_eq(int_of(toml_get(root, "a", NULL)), 42);
	cr_assert_eq(int_of(toml_get(root, "b", NULL)), -17);
	cr_assert_eq(int_of(toml_get(root, "c", NULL)), 1000000);
	cr_assert_eq(int_of(toml_get(root, "d", NULL)), 0);
	cr_assert_eq(int_of(toml_get(root, "e", NULL)), 0);
	cr_assert_eq(int_of(toml_get(root, "max", NULL)), LLONG_MAX);
	cr_assert_eq(int_of(toml_get(root, "min", NULL)), LLONG_MIN);
	toml_free(root);
}

Test(numbers, out_of_range_integers_are_rejected)
{
	expect_error("a = 9223372036854775808\n", 1, "does not fit in 64 bits");
	expect_error("a = -9223372036854775809\n", 1, "does not fit in 64 bits");
}

Test(numbers, malformed_integers_are_rejected)
{
	expect_error("a = 012\n", 1, "leading zeros");
	expect_error("a = 1__0\n", 1, "'_' must sit between digits");
	expect_error("a = _1\n", 1, "invalid integer '_1'");
	expect_error("a = 1_\n", 1, "'_' must sit between digits");
	expect_error("a = --1\n", 1, "invalid value");
}

Test(numbers, non_decimal_integers_are_unsupported)
{
	expect_error("a = 0xff\n", 1, "unsupported value");
	expect_error("a = 0o17\n", 1, "only decimal integers");
}

/* Codex accepts floats (tool_timeout_sec = 60.5): refusing them would
 * refuse the whole config. */
static double float_of(const char *text)
{
	char err[256] = "";
	struct toml_value *root = toml_parse(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(root, "parse failed: %s", err);
	const struct toml_value *v = toml_table_get(root, "b");
	cr_assert_not_null(v);
	cr_assert_eq(v->type, TOML_FLOAT, "b is not a float in %s", text);
	double f = v->f;
	toml_free(root);
	return f;
}

Test(numbers, floats_are_parsed)
{
	cr_expect_float_eq(float_of("b = 1.5\n"), 1.5, 1e-12);
	cr_expect_float_eq(float_of("b = 1e3\n"), 1000.0, 1e-9);
	cr_expect_float_eq(float_of("b = -2.5E-3\n"), -0.0025, 1e-12);
	cr_expect_float_eq(float_of("b = 6.626e-34\n"), 6.626e-34, 1e-40);
	cr_expect_float_eq(float_of("b = 224_617.445_991\n"), 224617.445991, 1e-6);
	cr_expect(float_of("b = inf\n") > 1e308);
	cr_expect(float_of("b = -inf\n") < -1e308);
	double n = float_of("b = nan\n");
	cr_expect(n != n);
}

Test(numbers, malformed_floats_are_rejected_with_their_line)
{
	expect_error("a = 1\nb = 1.\n", 2, "invalid float");
	expect_error("b = .5\n", 1, "");
	expect_error("b = 1.e5\n", 1, "invalid float");
	expect_error("b = 01.5\n", 1, "invalid float");
	expect_error("b = 1e\n", 1, "invalid float");
	expect_error("b = 1__0.0\n", 1, "invalid float");
}

Test(numbers, dates_and_times_are_unsupported_values)
{
	expect_error("d = 1979-05-27\n", 1, "unsupported value");
	expect_error("d = 1979-05-27T07:32:00Z\n", 1, "dates and times");
	expect_error("d = 1979-05-27 07:32:00\n", 1, "dates and times");
	expect_error("d = 07:32:00\n", 1, "dates and times");
}

Test(numbers, booleans_and_lookalikes)
{
	struct toml_value *root = parse_ok("t = true\nf = false\n");

	cr_assert_eq(bool_of(toml_get(root, "t", NULL)), 1);
	cr_assert_eq(bool_of(toml_get(root, "f", NULL)), 0);
	toml_free(root);
	expect_error("t = True\n", 1, "invalid value 'True'");
	expect_error("t = truex\n", 1, "invalid value 'truex'");
	expect_error("mode = workspace-write\n", 1, "strings must be quoted");
}

/* ---- arrays ----------------------------------------------------------- */

Test(arrays, multiline_with_comments_and_trailing_comma)
{
	struct toml_value *root = parse_ok("roots = [ # opening comment\n"
	                                   "  \"/a\",   # first\n"
	                                   "\n"
	                                   "  # a whole-line comment\n"
	                                   "  '/b' ,\n"
	                                   "]\n"
	                                   "next = 1\n");
	const struct toml_value *roots;

	roots = array_of(toml_get(root, "roots", NULL), 2);
	cr_assert_str_eq(str_of(&roots->items[0]), "/a");
	cr_assert_str_eq(str_of(&roots->items[1]), "/b");
	cr_assert_eq(roots->items[0].line, 2);
	cr_assert_eq(roots->items[1].line, 5);
	cr_assert_eq(toml_get(root, "next", NULL)->line, 7);
	toml_free(root);
}

Test(arrays, empty_nested_and_mixed)
{
	struct toml_value *root = parse_ok("e = []\n"
	                                   "c = [ # nothing\n"
	                                   "]\n"
	                                   "n = [[1, 2], [\"x\"], [], {k = true}]\n");
	const struct toml_value *n;

	array_of(toml_get(root, "e", NULL), 0);
	array_of(toml_get(root, "c", NULL), 0);
	n = array_of(toml_get(root, "n", NULL), 4);
	cr_assert_eq(int_of(&array_of(&n->items[0], 2)->items[1]), 2);
	cr_assert_str_eq(str_of(&array_of(&n->items[1], 1)->items[0]), "x");
	array_of(&n->items[2], 0);
	cr_assert_eq(bool_of(toml_table_get(table_of(&n->items[3], 1), "k")), 1);
	toml_free(root);
}

Test(arrays, missing_comma_is_rejected)
{
	expect_error("a = [\n  \"x\"\n  \"y\"\n]\n", 3, "expected ',' or ']'");
}

Test(arrays, lone_or_double_comma_is_rejected)
{
	expect_error("a = [,]\n", 1, "expected a value, found ','");
	expect_error("a = [1,,2]\n", 1, "expected a value, found ','");
}

Test(arrays, input_ending_after_an_item_reports_opening_line)
{
	expect_error("x = 1\na = [1,\n  2", 2, "unterminated array");
	expect_error("a = [\"/a\"", 1, "unterminated array");
}

/* ---- inline tables ---------------------------------------------------- */

Test(inline_tables, empty_nested_and_dotted)
{
	struct toml_value *root =
	    parse_ok("e = {}\n"
	             "o = { exporter = { otlp-http = { endpoint = \"https://x\", "
	             "headers = { \"x-key\" = \"${T}\" } } } }\n"
	             "d = { a.b = 1, a.c = 2 }\n");
	const struct toml_value *d;

	table_of(toml_get(root, "e", NULL), 0);
	cr_assert_str_eq(
	    str_of(toml_get(root, "o", "exporter", "otlp-http", "headers", "x-key", NULL)), "${T}");
	d = table_of(toml_get(root, "d", "a", NULL), 2);
	cr_assert_eq(int_of(toml_table_get(d, "c")), 2);
	toml_free(root);
}

Test(inline_tables, cannot_be_extended_by_header)
{
	expect_error("env = { A = \"1\" }\n[env]\nB = \"2\"\n", 2, "defined inline");
	expect_error("env = { A = \"1\" }\n[env.sub]\n", 2, "defined inline");
}

Test(inline_tables, cannot_be_extended_by_dotted_key)
{
	expect_error("env = { A = \"1\" }\nenv.B = \"2\"\n", 2, "defined inline");
}

Test(inline_tables, nested_inline_cannot_be_extended_inside)
{
	expect_error("a = { b = { c = 1 }, b.d = 2 }\n", 1, "defined inline");
}

Test(inline_tables, duplicate_keys_inside_are_rejected)
{
	expect_error("x = 1\nenv = { A = \"1\", A = \"2\" }\n", 2, "duplicate key 'A'");
}

Test(inline_tables, must_stay_on_one_line)
{
	expect_error("env = {\n  A = \"1\"\n}\n", 1, "single line");
	expect_error("env = { A = \"1\",\n  B = \"2\" }\n", 1, "single line");
}

Test(inline_tables, trailing_comma_is_rejected)
{
	expect_error("env = { A = \"1\", }\n", 1, "trailing comma");
}

Test(inline_tables, unterminated_is_rejected)
{
	expect_error("a = 1\nenv = { A = \"1\"", 2, "unterminated inline table");
	expect_error("env = { A = \"1\" B = 2 }\n", 1, "expected ',' or '}'");
}

/* ---- toml_parse_value: Codex -c key=value overrides ------------------- */

Test(parse_value, array_of_paths)
{
	char err[256] = "";
	struct toml_value *v = toml_parse_value("[\"/a\", \"/b\"]", err, sizeof(err));

	cr_assert_not_null(v, "%s", err);
	array_of(v, 2);
	cr_assert_str_eq(str_of(&v->items[0]), "/a");
	cr_assert_str_eq(str_of(&v->items[1]), "/b");
	toml_free(v);
}

Test(parse_value, strings_booleans_integers_tables)
{
	char err[256] = "";
	struct toml_value *v;

	v = toml_parse_value("\"workspace-write\"", err, sizeof(err));
	cr_assert_str_eq(str_of(v), "workspace-write");
	toml_free(v);
	v = toml_parse_value("  'C:\\x'  ", err, sizeof(err));
	cr_assert_str_eq(str_of(v), "C:\\x");
	toml_free(v);
	v = toml_parse_value("true", err, sizeof(err));
	cr_assert_eq(bool_of(v), 1);
	toml_free(v);
	v = toml_parse_value("-3", err, sizeof(err));
	cr_assert_eq(int_of(v), -3);
	toml_free(v);
	v = toml_parse_value("{ LD_PRELOAD = \"/x.so\" } # note\n", err, sizeof(err));
	cr_assert_str_eq(str_of(toml_table_get(table_of(v, 1), "LD_PRELOAD")), "/x.so");
	toml_free(v);
}

Test(parse_value, multiline_array_value)
{
	char err[256] = "";
	struct toml_value *v = toml_parse_value("[\n  \"/a\",\n  \"/b\",\n]\n", err, sizeof(err));

	cr_assert_not_null(v, "%s", err);
	array_of(v, 2);
	cr_assert_eq(v->items[1].line, 3);
	toml_free(v);
}

Test(parse_value, bare_word_is_an_error_not_a_string)
{
	char err[256] = "";

	cr_assert_null(toml_parse_value("workspace-write", err, sizeof(err)));
	assert_error(err, 1, "strings must be quoted");
}

Test(parse_value, trailing_text_is_rejected)
{
	char err[256] = "";

	cr_assert_null(toml_parse_value("\"a\" \"b\"", err, sizeof(err)));
	assert_error(err, 1, "expected end of input after the value");
	cr_assert_null(toml_parse_value("[\"/a\"]\nx", err, sizeof(err)));
	assert_error(err, 2, "expected end of input after the value");
}

Test(parse_value, empty_and_unsupported_are_rejected)
{
	char err[256] = "";

	cr_assert_null(toml_parse_value("", err, sizeof(err)));
	assert_error(err, 1, "expected a value, found end of input");
	cr_assert_null(toml_parse_value("   # only a comment", err, sizeof(err)));
	assert_error(err, 1, "expected a value");
	cr_assert_null(toml_parse_value("1979-05-27", err, sizeof(err)));
	assert_error(err, 1, "unsupported value");
	cr_assert_null(toml_parse_value("key = 1", err, sizeof(err)));
	cr_assert_null(toml_parse_value(NULL, err, sizeof(err)));
}

/* ---- malformed Codex configs, each with the line that is wrong -------- */

Test(errors, unterminated_string)
{
	expect_fixture_error("bad_unterminated_string.toml", 5, "unterminated string");
}

Test(errors, missing_equals)
{
	expect_fixture_error("bad_missing_equals.toml", 5, "expected '=' after key");
}

Test(errors, duplicate_key)
{
	expect_fixture_error("bad_duplicate_key.toml", 4, "duplicate key 'sandbox_mode'");
}

Test(errors, redefined_table)
{
	expect_fixture_error("bad_redefined_table.toml", 7,
	                     "table 'sandbox_workspace_write' is defined more than once");
}

Test(config, a_float_timeout_does_not_refuse_the_config)
{
	char err[256] = "";
	struct toml_value *root =
	    toml_parse_file("tests/unit/toml/float_timeout.toml", err, sizeof(err));
	cr_assert_not_null(root, "%s", err);
	const struct toml_value *t =
	    toml_get(root, "mcp_servers", "docs", "tool_timeout_sec", NULL);
	cr_assert_not_null(t);
	cr_expect_eq(t->type, TOML_FLOAT);
	cr_expect_float_eq(t->f, 60.5, 1e-12);
	toml_free(root);
}

Test(errors, bad_escape)
{
	expect_fixture_error("bad_escape.toml", 3,
	                     "invalid escape sequence: backslash followed by 'P'");
}

Test(errors, unterminated_array_reports_opening_line)
{
	expect_fixture_error("bad_unterminated_array.toml", 4, "unterminated array");
}

Test(errors, garbage_after_value)
{
	expect_fixture_error("bad_garbage_after_value.toml", 2, "expected end of line after value");
}

Test(errors, array_of_tables)
{
	expect_fixture_error("bad_array_of_tables.toml", 3,
	                     "arrays of tables ([[...]]) are not supported");
}

Test(errors, date_value)
{
	expect_fixture_error("bad_date.toml", 3, "dates and times");
}

Test(errors, garbage_after_header)
{
	expect_error("a = 1\n[tui] x\n", 2, "after table header");
	expect_error("[tui\n", 1, "expected ']'");
	expect_error("[]\n", 1, "expected a key");
}

Test(errors, missing_value)
{
	expect_error("a =\nb = 1\n", 1, "expected a value, found end of line");
	expect_error("a = # nothing\n", 1, "expected a value");
	expect_error("= 1\n", 1, "expected a key");
}

Test(errors, newline_inside_basic_string)
{
	expect_error("a = 1\nb = \"abc\ndef\"\n", 2, "unterminated string");
	expect_error("b = 'abc", 1, "unterminated string");
	expect_error("a = 1\nb = 'abc\n'\n", 2, "unterminated string");
}

Test(errors, multiline_string_as_key)
{
	expect_error("\"\"\"k\"\"\" = 1\n", 1, "cannot be a key");
}

Test(errors, invalid_utf8_is_rejected)
{
	expect_error("a = 1\nb = \"\xC3\x28\"\n", 2, "invalid UTF-8");
	expect_error("b = \"\xED\xA0\x80\"\n", 1, "invalid UTF-8");
	expect_error("# \xF8\x88\x80\x80\x80\n", 1, "invalid UTF-8");
	expect_error("b = \"\xE2\x82\"", 1, "invalid UTF-8");
}

Test(errors, bare_carriage_return_is_rejected)
{
	expect_error("a = 1\rb = 2\n", 1, "carriage return");
}

Test(errors, nul_byte_in_input_is_rejected)
{
	static const char text[] = "a = 1\n# x\0y\n";
	char err[256] = "";

	cr_assert_null(toml_parse(text, sizeof(text) - 1, err, sizeof(err)));
	assert_error(err, 2, "control character U+0000");
}

Test(errors, error_message_is_truncated_safely)
{
	char err[8];

	memset(err, 'x', sizeof(err));
	cr_assert_null(toml_parse("a = 0x1", 7, err, sizeof(err)));
	cr_assert_eq(strlen(err), sizeof(err) - 1);
	cr_assert_str_eq(err, "line 1:");
	cr_assert_null(toml_parse("a = 0x1", 7, NULL, 0));
}

Test(errors, hostile_key_is_sanitised_in_message)
{
	char err[256] = "";
	const char *text = "\"\\u001b[31m\" = 1\n\"\\u001b[31m\" = 2\n";

	cr_assert_null(toml_parse(text, strlen(text), err, sizeof(err)));
	assert_error(err, 2, "duplicate key '?[31m'");
	cr_assert_null(strchr(err, '\x1b'));
}

Test(errors, long_key_is_shortened_in_message)
{
	/* "x" and 60 two-byte characters: the 48-byte cut falls inside a
	 * character, and the message must not keep half of it. */
	char key[122], text[300], err[256] = "";
	const char *at;
	int k;

	key[0] = 'x';
	for (k = 0; k < 60; k++)
		memcpy(key + 1 + 2 * k, "\xC3\xA9", 2);
	key[121] = '\0';
	snprintf(text, sizeof(text), "\"%s\" = 1\n\"%s\" = 2\n", key, key);
	cr_assert_null(toml_parse(text, strlen(text), err, sizeof(err)));
	assert_error(err, 2, "duplicate key 'x\xC3\xA9");
	at = strstr(err, "...'");
	cr_assert_not_null(at, "long key should end in '...': %s", err);
	cr_assert_eq(at - strchr(err, '\'') - 1, 47,
	             "expected 'x' and 23 whole characters before '...': %s", err);
}

/* ---- API behaviour ---------------------------------------------------- */

Test(api, lookups_of_missing_or_non_table_paths_return_null)
{
	struct toml_value *root = parse_ok("a = 1\n[t]\nk = \"v\"\n");

	cr_assert_null(toml_get(root, "missing", NULL));
	cr_assert_null(toml_get(root, "a", "below_an_int", NULL));
	cr_assert_null(toml_get(root, "t", "missing", "deeper", NULL));
	cr_assert_null(toml_get(NULL, "a", NULL));
	cr_assert_eq(toml_get(root, NULL), root);
	cr_assert_null(toml_table_get(toml_get(root, "a", NULL), "x"));
	cr_assert_null(toml_table_get(NULL, "x"));
	cr_assert_null(toml_table_get(root, NULL));
	cr_assert_str_eq(str_of(toml_get(root, "t", "k", NULL)), "v");
	toml_free(root);
	toml_free(NULL);
}

Test(api, empty_and_comment_only_inputs_give_empty_tables)
{
	struct toml_value *root = parse_ok("");

	table_of(root, 0);
	cr_assert_eq(root->line, 1);
	toml_free(root);
	root = parse_ok("\xEF\xBB\xBF# only a comment\r\n\n   \t\n");
	table_of(root, 0);
	toml_free(root);
	root = toml_parse(NULL, 0, NULL, 0);
	cr_assert_not_null(root);
	table_of(root, 0);
	toml_free(root);
}

Test(api, null_text_with_a_length_is_an_error)
{
	char err[256] = "";

	cr_assert_null(toml_parse(NULL, 5, err, sizeof(err)));
	cr_assert_str_eq(err, "no input text");
}

Test(api, input_need_not_be_nul_terminated)
{
	/* Only the first 5 bytes are the document; the rest must be unseen. */
	static const char text[] = "a = 1 = garbage";
	struct toml_value *root = toml_parse(text, 5, NULL, 0);

	cr_assert_not_null(root);
	cr_assert_eq(int_of(toml_get(root, "a", NULL)), 1);
	toml_free(root);
}

Test(api, table_bookkeeping_fields_are_zero)
{
	struct toml_value *root = parse_ok("[a.b]\nc.d = 1\ne = { f = 1 }\n");
	const struct toml_value *b = toml_get(root, "a", "b", NULL);

	cr_assert_eq(root->i, 0);
	cr_assert_eq(root->b, 0);
	cr_assert_eq(b->i, 0);
	cr_assert_eq(b->b, 0);
	cr_assert_eq(toml_get(b, "c", NULL)->b, 0);
	cr_assert_eq(toml_get(b, "e", NULL)->i, 0);
	toml_free(root);
}

Test(api, parse_file_reports_io_errors_with_path)
{
	char err[256] = "";

	cr_assert_null(toml_parse_file(TOML_FIXTURES "/no-such-file.toml", err, sizeof(err)));
	cr_assert(strstr(err, "no-such-file.toml: No such file"), "%s", err);
	cr_assert_null(toml_parse_file(TOML_FIXTURES, err, sizeof(err)));
	cr_assert(strstr(err, "Is a directory"), "%s", err);
	cr_assert_null(toml_parse_file(NULL, err, sizeof(err)));
}

Test(api, parse_file_reads_non_regular_files)
{
	struct toml_value *root = toml_parse_file("/dev/null", NULL, 0);

	cr_assert_not_null(root);
	table_of(root, 0);
	toml_free(root);
}

/* Feeds size bytes of text (repeating unit) into a pipe from a child
 * process and parses it through /dev/fd, where no size is known up front. */
static struct toml_value *parse_from_pipe(const char *unit, size_t size, char *err, size_t errlen)
{
	struct toml_value *root;
	char path[64];
	int fds[2];
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		/* units packed into 4 KiB writes: a write per unit made the
		 * 4 MiB case 12 s long under qemu-user */
		static char block[4096];
		size_t ul = strlen(unit), fill = 0, sent = 0;

		close(fds[0]);
		while (fill + ul <= sizeof(block)) {
			memcpy(block + fill, unit, ul);
			fill += ul;
		}
		while (sent < size) {
			size_t n = size - sent < fill ? size - sent : fill;

			if (write(fds[1], block, n) != (ssize_t)n)
				_exit(0);
			sent += n;
		}
		_exit(0);
	}
	close(fds[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
	root = toml_parse_file(path, err, errlen);
	close(fds[0]);
	waitpid(pid, NULL, 0);
	return root;
}

Test(api, parse_file_reads_a_pipe_larger_than_its_first_buffer)
{
	char err[256] = "";
	struct toml_value *root;

	/* 200 KiB of comments, then nothing else: grows the buffer twice. */
	root = parse_from_pipe("# padding padding padding padding padding\n", 200 * 1024 - 9, err,
	                       sizeof(err));
	cr_assert_not_null(root, "%s", err);
	table_of(root, 0);
	toml_free(root);
}

Test(limits, oversized_pipe_is_rejected)
{
	char err[256] = "";

	cr_assert_null(parse_from_pipe("\n", TOML_MAX_INPUT + 4096, err, sizeof(err)));
	cr_assert(strstr(err, "larger than 4 MiB"), "%s", err);
}

/* ---- limits ----------------------------------------------------------- */

static char *repeat(const char *head, const char *unit, int count, const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(hl + ul * count + tl + 1), *p = s;
	int k;

	cr_assert_not_null(s);
	memcpy(p, head, hl);
	p += hl;
	for (k = 0; k < count; k++, p += ul)
		memcpy(p, unit, ul);
	memcpy(p, tail, tl + 1);
	return s;
}

static char *nested_arrays(int depth)
{
	char *open = repeat("a = ", "[", depth, ""), *s;
	char *close = repeat("", "]", depth, "\n");

	s = malloc(strlen(open) + strlen(close) + 1);
	cr_assert_not_null(s);
	strcpy(s, open);
	strcat(s, close);
	free(open);
	free(close);
	return s;
}

Test(limits, nesting_of_64_arrays_is_accepted)
{
	char *text = nested_arrays(TOML_MAX_DEPTH);
	struct toml_value *root = parse_ok(text);

	toml_free(root);
	free(text);
}

Test(limits, nesting_of_65_arrays_is_rejected)
{
	char *text = nested_arrays(TOML_MAX_DEPTH + 1);

	expect_error(text, 1, "nesting deeper than 64");
	free(text);
}

Test(limits, deep_inline_tables_are_rejected)
{
	char *text = repeat("a = ", "{b = ", 70, "");

	expect_error(text, 1, "nesting deeper than 64");
	free(text);
}

Test(limits, header_and_dotted_keys_count_towards_depth)
{
	/* 64 header parts are allowed; one more dotted part is not. */
	char *header = repeat("[", "a.", TOML_MAX_DEPTH - 1, "a]\nx = 1\n");
	char *dotted = repeat("[", "a.", TOML_MAX_DEPTH - 1, "a]\ny.z = 1\n");
	char *too_long = repeat("", "a.", TOML_MAX_DEPTH, "a = 1\n");
	struct toml_value *root = parse_ok(header);

	toml_free(root);
	expect_error(dotted, 2, "nesting deeper than 64");
	expect_error(too_long, 1, "more than 64 dotted parts");
	free(header);
	free(dotted);
	free(too_long);
}

Test(limits, input_over_4_mib_is_rejected)
{
	size_t len = TOML_MAX_INPUT + 1;
	char *text = malloc(len), err[256] = "";

	cr_assert_not_null(text);
	memset(text, '\n', len);
	cr_assert_null(toml_parse(text, len, err, sizeof(err)));
	cr_assert(strstr(err, "larger than"), "%s", err);
	/* Exactly at the limit is still fine. */
	struct toml_value *root = toml_parse(text, len - 1, err, sizeof(err));
	cr_assert_not_null(root, "%s", err);
	toml_free(root);
	free(text);
}

Test(limits, oversized_file_is_rejected)
{
	char path[] = "/tmp/test_toml_big_XXXXXX", err[256] = "";
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, TOML_MAX_INPUT + 1), 0);
	close(fd);
	cr_assert_null(toml_parse_file(path, err, sizeof(err)));
	unlink(path);
	cr_assert(strstr(err, "larger than 4 MiB"), "%s", err);
}

Test(limits, many_keys_parse_and_duplicates_are_still_found, .timeout = 120)
{
	enum { KEYS = 100000 };
	size_t cap = KEYS * 24, len = 0;
	char *text = malloc(cap), err[256] = "";
	struct toml_value *root;
	int k;

	cr_assert_not_null(text);
	for (k = 0; k < KEYS; k++)
		len += snprintf(text + len, cap - len, "key%d = %d\n", k, k);
	root = toml_parse(text, len, err, sizeof(err));
	cr_assert_not_null(root, "%s", err);
	cr_assert_eq(root->n, KEYS);
	cr_assert_eq(int_of(toml_get(root, "key99999", NULL)), 99999);
	toml_free(root);

	len += snprintf(text + len, cap - len, "key4242 = 0\n");
	cr_assert_null(toml_parse(text, len, err, sizeof(err)));
	assert_error(err, KEYS + 1, "duplicate key 'key4242'");
	free(text);
}

Test(toml, utf8_ok_accepts_utf8_and_refuses_stray_bytes_and_surrogates)
{
	cr_expect(toml_utf8_ok(""));
	cr_expect(toml_utf8_ok("/w/caf\xc3\xa9/r.ring"));
	cr_expect(!toml_utf8_ok("/w/r\xff.ring"));
	cr_expect(!toml_utf8_ok("/w/\xed\xa0\x80")); /* a surrogate */
	cr_expect(!toml_utf8_ok("/w/\xc3"));         /* cut short */
}

/* A ring names Codex's config files: a FIFO there (with a writer that
 * never writes) must not make the read wait, even when it replaced a
 * regular file after the caller looked. */
Test(toml, a_regular_file_read_refuses_a_fifo_with_a_writer_at_once)
{
	char dir[] = "/tmp/toml-fifo.XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/config.toml", dir);
	cr_assert_eq(mkfifo(path, 0600), 0);
	int writer = open(path, O_RDWR); /* a writer that never writes */
	cr_assert_geq(writer, 0);
	alarm(10); /* a wait would end the test here, failed */
	char err[256];
	struct toml_value *v = toml_parse_regular_file(path, err, sizeof(err));
	alarm(0);
	cr_expect_null(v);
	cr_expect(strstr(err, "not a regular file"), "%s", err);
	close(writer);
	unlink(path);
	rmdir(dir);
}
