/* SPDX-License-Identifier: MIT */
/* The output primitives every string from a ring or a traced program goes
 * through: JSON strings, text, shell words, Markdown spans and fences. None
 * may let a control character through raw (C0 but newline, DEL, C1 such as
 * CSI U+009B, bytes that are not UTF-8). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "recfmt.h"
#include "report.h"

static char *out;
static size_t outlen;

static FILE *sink(void)
{
	free(out);
	out = NULL;
	FILE *f = open_memstream(&out, &outlen);
	cr_assert_not_null(f);
	return f;
}

static const char *done(FILE *f)
{
	fclose(f);
	return out;
}

static void teardown(void)
{
	free(out);
	out = NULL;
}

TestSuite(safe_output, .fini = teardown);

Test(safe_output, json_escapes_c1_controls_given_as_utf8)
{
	FILE *f = sink();
	dt_json_escape(f, "a\xc2\x9b"
	                  "1m\xc2\x85z\xc2\xa0");
	cr_expect_str_eq(done(f), "a\\u009b1m\\u0085z\xc2\xa0"); /* U+00A0 stays */
}

Test(safe_output, json_escapes_c0_del_and_invalid_bytes)
{
	FILE *f = sink();
	dt_json_escape(f, "\x1b[2J\x7f\x9b\"\\\n");
	cr_expect_str_eq(done(f), "\\u001b[2J\\u007f\\u009b\\\"\\\\\\n");
}

Test(safe_output, text_escapes_escape_sequences_and_keeps_valid_utf8)
{
	FILE *f = sink();
	dt_put_safe(f, "\x1b[2J\xc2\x9b\x9b\\ \xc3\xa9\n");
	cr_expect_str_eq(done(f), "\\x1b[2J\\xc2\\x9b\\x9b\\\\ \xc3\xa9\\x0a");
}

Test(safe_output, multi_line_text_keeps_newlines_and_backslashes_only)
{
	FILE *f = sink();
	dt_put_text(f, "a = \"C:\\\\x\"\n\x1b]0;t\x07\n");
	cr_expect_str_eq(done(f), "a = \"C:\\\\x\"\n\\x1b]0;t\\x07\n");
}

Test(safe_output, shell_words_quote_as_needed_and_spell_control_bytes)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
	    {"plain/path-1.db", "plain/path-1.db"},
	    {"a b", "'a b'"},
	    {"it's", "'it'\"'\"'s'"},
	    {"", "''"},
	    {"\x1b[2J'x\\", "$'\\x1b[2J\\x27x\\x5c'"},
	    {"c1\xc2\x9b", "$'c1\\xc2\\x9b'"},
	    {"\xc3\xa9t\xc3\xa9", "'\xc3\xa9t\xc3\xa9'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = sink();
		dt_shell_word(f, cases[i].in);
		cr_expect_str_eq(done(f), cases[i].want, "input %zu", i);
	}
}

Test(safe_output, markdown_fence_outgrows_any_backtick_run_inside)
{
	FILE *f = sink();
	dt_md_fence(f, "toml", "a = 1\n`````\nb\x1b[2J\n");
	cr_expect_str_eq(done(f), "``````toml\na = 1\n`````\nb\\x1b[2J\n``````\n");
	f = sink();
	dt_md_fence(f, "sh", "echo hi");
	cr_expect_str_eq(done(f), "```sh\necho hi\n```\n");
}

Test(safe_output, markdown_spans_and_text_escape_c1_and_invalid_bytes)
{
	FILE *f = sink();
	dt_md_code_span(f, "p\xc2\x9b|q", 1);
	cr_expect_str_eq(done(f), "` p\\xc2\\x9b\\|q `");
	f = sink();
	dt_md_text(f, "*x*\x9b");
	cr_expect_str_eq(done(f), "\\*x\\*\\x9b");
}

/* A right-to-left override makes "exe.txt" of "txt.exe": never raw. */
Test(safe_output, bidi_overrides_are_escaped_in_text_and_json)
{
	FILE *f = sink();
	dt_put_safe(f, "a\xe2\x80\xaegpj.exe\xe2\x81\xa6");
	cr_expect_str_eq(done(f), "a\\xe2\\x80\\xaegpj.exe\\xe2\\x81\\xa6");
	f = sink();
	dt_json_escape(f, "a\xe2\x80\xae"
	                  "b\xe2\x81\xa9"
	                  "c\xe2\x80\x94");
	cr_expect_str_eq(done(f), "a\\u202eb\\u2069c\xe2\x80\x94"); /* an em dash stays */
}
