/* SPDX-License-Identifier: MIT */
/* Option tables (tracer/util/options.c): one row per option gives the parser
 * and --help; the commands' own rows are checked by test_badinput and
 * test_habits through the binary. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "options.h"

TestSuite(options);

struct t_args {
	const char **list;
	size_t nlist;
	const char *fmt, *name;
	int flag, on, called;
	const char *opt; /* --opt: "" bare, else its inline value */
};

static int t_opt(void *args, const char *val)
{
	((struct t_args *)args)->opt = val ? val : "";
	return 0;
}

static int t_call(void *args, const char *val)
{
	struct t_args *a = args;
	a->called = !strcmp(val, "x") ? 1 : -1;
	return a->called > 0 ? 0 : DT_EXIT_USAGE;
}

static const struct dt_option t_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct t_args, __VA_ARGS__)
    DT_OPTION("--list", 0, "DIR", LIST, list, nlist, "a list",
              NULL) DT_OPTION("--fmt", 0, "FMT", STRING, fmt, "a|bb|c", "one of three", NULL)
        DT_OPTION("--bb", 0, NULL, SET, fmt, "bb", "short for --fmt bb",
                  NULL) DT_OPTION("--name", 'n', "NAME", STRING, name, NULL, "any word", NULL)
            DT_OPTION("--flag", 'f', NULL, FLAG, flag, NULL, "a flag", NULL)
                DT_OPTION("--off", 0, NULL, CLEAR, on, NULL, "clears on", NULL)
                    DT_OPTION("--call", 0, "X", CALL, called, t_call, "calls back", NULL)
                        DT_OPTION("--opt", 0, NULL, CALL, opt, t_opt, "a switch or --opt=V", NULL)
                            DT_OPTION("--doc=V", 0, NULL, DOC, opt, NULL, "only a help line", NULL)
                                DT_OPTION("--help", 'h', NULL, HELP, help, NULL, "this help", NULL)
#undef DT_OPTION
};

static const struct dt_cmd_options t_cmd = {
    "t", "usage: t\n\n", NULL, t_options, sizeof(t_options) / sizeof(t_options[0]), DT_EXIT_USAGE,
    NULL};

static int parse(struct t_args *a, const char **ops, size_t *nops, char **argv)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	static const char *list[16];
	memset(a, 0, sizeof(*a));
	a->list = list;
	a->on = 1;
	*nops = 0;
	return dt_parse_options(&t_cmd, argc, argv, a, ops, nops);
}

Test(options, each_kind_lands_in_its_field_and_words_that_are_not_options_are_operands)
{
	struct t_args a;
	const char *ops[16];
	size_t n;
	char *argv[] = {"t",    "--list", "/a",    "--list=/b", "-",      "--fmt=bb", "-n",
	                "word", "-f",     "--off", "ring",      "--call", "x",        NULL};
	cr_assert_eq(parse(&a, ops, &n, argv), -1);
	cr_expect_eq(a.nlist, 2);
	cr_expect_str_eq(a.list[0], "/a");
	cr_expect_str_eq(a.list[1], "/b");
	cr_expect_str_eq(a.fmt, "bb");
	cr_expect_str_eq(a.name, "word");
	cr_expect_eq(a.flag, 1);
	cr_expect_eq(a.on, 0);
	cr_expect_eq(a.called, 1);
	cr_assert_eq(n, 2);
	cr_expect_str_eq(ops[0], "-");
	cr_expect_str_eq(ops[1], "ring");
}

/* What the parser printed to stderr (redirected by the test's .init). */
static void redirected_stderr(char *out, size_t cap)
{
	fflush(stderr);
	FILE *f = cr_get_redirected_stderr();
	size_t n = fread(out, 1, cap - 1, f);
	out[n] = 0;
}

/* Bad usage prints its message; redirected so that make test's output
 * holds no alarming lines from a test that passes. */
Test(options, bad_command_lines_are_usage_errors, .init = cr_redirect_stderr)
{
	struct t_args a;
	const char *ops[16];
	size_t n;
	char *unknown[] = {"t", "--bogus", NULL};
	char *flag_value[] = {"t", "--flag=1", NULL};
	char *missing[] = {"t", "--name", NULL};
	char *choice[] = {"t", "--fmt", "d", NULL};
	char *prefix[] = {"t", "--fm", "a", NULL};
	char *dashdash[] = {"t", "--", NULL};
	char *callback[] = {"t", "--call", "y", NULL};
	cr_expect_eq(parse(&a, ops, &n, unknown), DT_EXIT_USAGE);
	cr_expect_eq(parse(&a, ops, &n, flag_value), DT_EXIT_USAGE);
	cr_expect_eq(parse(&a, ops, &n, missing), DT_EXIT_USAGE);
	cr_expect_eq(parse(&a, ops, &n, choice), DT_EXIT_USAGE);
	cr_expect_eq(parse(&a, ops, &n, prefix), DT_EXIT_USAGE, "a prefix is not the option");
	cr_expect_eq(parse(&a, ops, &n, dashdash), DT_EXIT_USAGE);
	cr_expect_eq(parse(&a, ops, &n, callback), DT_EXIT_USAGE);
	char err[4096];
	redirected_stderr(err, sizeof(err));
	cr_expect(strstr(err, "unknown option '--bogus'; see 'denytrace t --help'"), "%s", err);
	cr_expect(strstr(err, "unknown option '--fm'; did you mean '--fmt'?"), "%s", err);
}

Test(options,
     a_call_without_argument_is_a_switch_that_takes_an_inline_value_and_doc_rows_never_match,
     .init = cr_redirect_stderr)
{
	struct t_args a;
	const char *ops[16];
	size_t n;
	char *bare[] = {"t", "--opt", "x", NULL};
	char *valued[] = {"t", "--opt=v", NULL};
	char *doc[] = {"t", "--doc=V", NULL};
	cr_assert_eq(parse(&a, ops, &n, bare), -1);
	cr_expect_str_eq(a.opt, "");
	cr_expect_eq(n, 1, "the word after a switch is an operand");
	cr_assert_eq(parse(&a, ops, &n, valued), -1);
	cr_expect_str_eq(a.opt, "v");
	cr_expect_eq(parse(&a, ops, &n, doc), DT_EXIT_USAGE);
}

Test(options, help_lists_every_row_with_help_and_joins_the_rows_without)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	dt_options_help(f, &t_cmd);
	fclose(f);
	cr_expect(strstr(buf, "usage: t\n\noptions:\n"), "%s", buf);
	cr_expect(strstr(buf, "  --fmt FMT "), "%s", buf);
	cr_expect(strstr(buf, "  -n, --name NAME "), "%s", buf);
	cr_expect(strstr(buf, "  --bb "), "%s", buf);
	cr_expect(strstr(buf, "  -h, --help "), "%s", buf);
	free(buf);
}
