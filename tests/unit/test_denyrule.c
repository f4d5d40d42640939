/* SPDX-License-Identifier: MIT */
/* The --deny grammar (tracer/launch/denyrule.c): good rules, bad rules and the
 * messages that point at the bad part, and the decider's schedules. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "denyrule.h"

static struct dt_deny_rule rule;
static char err[1024];

static void teardown(void)
{
	dt_deny_rule_free(&rule);
}

TestSuite(denyrule, .fini = teardown);

static int parse(const char *text)
{
	err[0] = 0;
	return dt_deny_parse(text, &rule, err, sizeof(err));
}

/* The caret line of the message: how many spaces, then how many carets. */
static void caret(size_t *col, size_t *len)
{
	const char *last = strrchr(err, '\n');
	cr_assert_not_null(last, "no caret line in: %s", err);
	last++;
	*col = strspn(last, " ") - 2; /* the rule line is indented by two */
	*len = strspn(last + *col + 2, "^");
}

Test(denyrule, a_bare_glob_refuses_every_op_with_eacces_always)
{
	cr_assert_eq(parse("/srv/board/*.db"), 0, "%s", err);
	cr_expect_str_eq(rule.glob, "/srv/board/*.db");
	cr_expect_eq(rule.ops, DT_DENY_ANY);
	cr_expect_eq(rule.err, EACCES);
	cr_expect_eq(rule.when, DT_DENY_ALWAYS);
}

Test(denyrule, the_issue_example_parses_every_key)
{
	cr_assert_eq(parse("/srv/board/*.db-journal,op=create,errno=EROFS,p=0.2"), 0, "%s", err);
	cr_expect_str_eq(rule.glob, "/srv/board/*.db-journal");
	cr_expect_eq(rule.ops, DT_DENY_CREATE);
	cr_expect_eq(rule.err, EROFS);
	cr_expect_eq(rule.when, DT_DENY_PROB);
	cr_expect_float_eq(rule.p, 0.2, 1e-12);
}

Test(denyrule, ops_join_with_plus)
{
	cr_assert_eq(parse("/x,op=unlink+rename+chmod"), 0, "%s", err);
	cr_expect_eq(rule.ops, DT_DENY_UNLINK | DT_DENY_RENAME | DT_DENY_CHMOD);
	char name[64];
	dt_deny_ops_name(rule.ops, name, sizeof(name));
	cr_expect_str_eq(name, "unlink+rename+chmod");
}

Test(denyrule, nth_and_first_take_counts)
{
	cr_assert_eq(parse("/x,nth=3"), 0, "%s", err);
	cr_expect_eq(rule.when, DT_DENY_NTH);
	cr_expect_eq(rule.n, 3);
	dt_deny_rule_free(&rule);
	cr_assert_eq(parse("/x,first=2,errno=ENOSPC"), 0, "%s", err);
	cr_expect_eq(rule.when, DT_DENY_FIRST);
	cr_expect_eq(rule.n, 2);
	cr_expect_eq(rule.err, ENOSPC);
}

Test(denyrule, a_comma_inside_brackets_belongs_to_the_glob)
{
	cr_assert_eq(parse("/data/a[,]b*,op=write"), 0, "%s", err);
	cr_expect_str_eq(rule.glob, "/data/a[,]b*");
	cr_expect_eq(rule.ops, DT_DENY_WRITE);
}

Test(denyrule, an_unknown_op_is_named_and_underlined)
{
	const char *text = "/x/*,op=create+crate";
	cr_assert_eq(parse(text), -1);
	cr_expect(strstr(err, "unknown op 'crate'"), "%s", err);
	size_t col, len;
	caret(&col, &len);
	cr_expect_eq(col, (size_t)(strstr(text, "crate") - text), "%s", err);
	cr_expect_eq(len, 5u, "%s", err);
}

Test(denyrule, an_unknown_key_is_named_and_underlined)
{
	const char *text = "/x,errno=EROFS,prob=0.5";
	cr_assert_eq(parse(text), -1);
	cr_expect(strstr(err, "unknown key 'prob'"), "%s", err);
	size_t col, len;
	caret(&col, &len);
	cr_expect_eq(col, (size_t)(strstr(text, "prob") - text), "%s", err);
	cr_expect_eq(len, 4u, "%s", err);
}

Test(denyrule, bad_values_are_refused_with_what_they_take)
{
	static const struct {
		const char *rule, *msg;
	} bad[] = {
	    {"/x,errno=EWHAT", "not an errno name"},
	    {"/x,errno=13", "not an errno name"},
	    {"/x,p=1.5", "probability from 0 to 1"},
	    {"/x,p=-0.1", "probability from 0 to 1"},
	    {"/x,p=abc", "probability from 0 to 1"},
	    {"/x,nth=0", "whole number from 1"},
	    {"/x,first=2x", "whole number from 1"},
	    {"/x,nth=", "has no value"},
	    {"/x,op", "is not KEY=VALUE"},
	    {"/x,,op=write", "empty setting"},
	    {"/x,op=write,", "empty setting"},
	    {"/x,p=0.5,nth=2", "exclude each other"},
	    {"/x,op=write,op=create", "op given twice"},
	    {"relative/*.db", "start it with '/'"},
	    {",op=write", "no glob"},
	    {"", "empty rule"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(parse(bad[i].rule), -1, "'%s' was accepted", bad[i].rule);
		cr_expect(strstr(err, bad[i].msg), "'%s': message '%s' lacks '%s'", bad[i].rule,
		          err, bad[i].msg);
		dt_deny_rule_free(&rule);
	}
}

/* EINTR and EAGAIN ask the program to try again: a rule refusing every
 * match would livelock a program that does. Bounded by nth= or first=,
 * they are what a retry loop's test needs. */
Test(denyrule, try_again_errnos_are_refused_unless_nth_or_first_bounds_the_rule)
{
	static const char *const unbounded[] = {"/x,errno=EINTR", "/x,errno=EAGAIN",
	                                        "/x,errno=EINTR,p=0.5",
	                                        "/x,op=write,errno=EAGAIN,p=1"};
	for (size_t i = 0; i < sizeof(unbounded) / sizeof(unbounded[0]); i++) {
		cr_expect_eq(parse(unbounded[i]), -1, "'%s' was accepted", unbounded[i]);
		cr_expect(strstr(err, "nth=N or first=N"), "'%s': message '%s'", unbounded[i], err);
		dt_deny_rule_free(&rule);
	}
	static const char *const bounded[] = {"/x,errno=EINTR,nth=3", "/x,errno=EAGAIN,first=2",
	                                      "/x,nth=1,errno=EINTR"};
	for (size_t i = 0; i < sizeof(bounded) / sizeof(bounded[0]); i++) {
		cr_expect_eq(parse(bounded[i]), 0, "'%s' refused: %s", bounded[i], err);
		dt_deny_rule_free(&rule);
	}
}

/* first=2^64-1 bounds nothing a retry loop will ever reach. */
Test(denyrule, try_again_errnos_with_a_huge_first_are_refused)
{
	static const char *const huge[] = {"/x,errno=EAGAIN,first=18446744073709551615",
	                                   "/x,first=1000001,errno=EINTR"};
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		cr_expect_eq(parse(huge[i]), -1, "'%s' was accepted", huge[i]);
		dt_deny_rule_free(&rule);
	}
	cr_expect_eq(parse("/x,errno=EAGAIN,first=1000000"), 0, "%s", err);
	dt_deny_rule_free(&rule);
	/* other errnos take any count */
	cr_expect_eq(parse("/x,errno=EROFS,first=18446744073709551615"), 0, "%s", err);
	dt_deny_rule_free(&rule);
}

static struct dt_deny_set set_of(const char *text, uint64_t seed)
{
	struct dt_deny_set s = {0};
	struct dt_deny_rule r;
	cr_assert_eq(dt_deny_parse(text, &r, err, sizeof(err)), 0, "%s", err);
	dt_deny_add(&s, &r);
	s.seed = seed;
	return s;
}

Test(denyrule, nth_fires_exactly_once_at_the_nth_match)
{
	struct dt_deny_set s = set_of("/d/*.db,nth=3,errno=EROFS", 0);
	char got[8] = {0};
	for (int i = 0; i < 6; i++)
		got[i] = dt_deny_decide(&s, "/d/a.db", DT_DENY_WRITE, NULL) ? 'x' : '.';
	cr_expect_str_eq(got, "..x...");
	cr_expect_eq(dt_deny_decide(&s, "/d/a.txt", DT_DENY_WRITE, NULL), 0,
	             "other paths never match");
	dt_deny_set_free(&s);
}

Test(denyrule, ops_not_in_the_rule_do_not_count_as_matches)
{
	struct dt_deny_set s = set_of("/d/*,op=unlink,first=1", 0);
	int rule_i;
	cr_expect_eq(dt_deny_decide(&s, "/d/f", DT_DENY_CREATE | DT_DENY_WRITE, &rule_i), 0);
	cr_expect_eq(rule_i, -1);
	cr_expect_eq(dt_deny_decide(&s, "/d/f", DT_DENY_UNLINK, &rule_i), EACCES);
	cr_expect_eq(rule_i, 0);
	cr_expect_eq(dt_deny_decide(&s, "/d/f", DT_DENY_UNLINK, NULL), 0, "first=1 fired once");
	dt_deny_set_free(&s);
}

Test(denyrule, op_new_parses_names_itself_and_is_part_of_any)
{
	cr_assert_eq(parse("/srv/board/*,op=new+unlink"), 0, "%s", err);
	cr_expect_eq(rule.ops, DT_DENY_NEW | DT_DENY_UNLINK);
	char name[64];
	dt_deny_ops_name(rule.ops, name, sizeof(name));
	cr_expect_str_eq(name, "unlink+new");
	cr_expect(DT_DENY_ANY & DT_DENY_NEW, "any must cover new");
	dt_deny_rule_free(&rule);
	cr_assert_eq(parse("/x,op=nwe"), -1);
	cr_expect(strstr(err, "create, new, write"), "the op list lacks new: %s", err);
}

Test(denyrule, op_new_matches_a_create_of_a_missing_file_only)
{
	/* the supervisor adds DT_DENY_NEW only when the file is missing; an
	 * O_CREAT open of an existing file is create+write without it */
	struct dt_deny_set s = set_of("/b/*,op=new", 0);
	cr_expect_eq(dt_deny_decide(&s, "/b/k.db-wal", DT_DENY_CREATE | DT_DENY_WRITE, NULL), 0,
	             "an existing file was refused");
	cr_expect_eq(
	    dt_deny_decide(&s, "/b/k.db-wal", DT_DENY_CREATE | DT_DENY_WRITE | DT_DENY_NEW, NULL),
	    EACCES);
	cr_expect_eq(dt_deny_decide(&s, "/b/k.db", DT_DENY_WRITE, NULL), 0,
	             "a plain write matched");
	cr_expect_eq(s.v[0].matches, 1, "calls without new counted as matches");
	dt_deny_set_free(&s);
	/* a create rule still refuses every O_CREAT open, existing or not */
	s = set_of("/b/*,op=create", 0);
	cr_expect_eq(dt_deny_decide(&s, "/b/k.db-wal", DT_DENY_CREATE | DT_DENY_WRITE, NULL),
	             EACCES);
	dt_deny_set_free(&s);
}

Test(denyrule, a_star_crosses_slashes)
{
	struct dt_deny_set s = set_of("/srv/*.db", 0);
	cr_expect_eq(dt_deny_decide(&s, "/srv/board/deep/k.db", DT_DENY_WRITE, NULL), EACCES);
	dt_deny_set_free(&s);
}

Test(denyrule, p_with_a_seed_repeats_and_keeps_its_rate)
{
	struct dt_deny_set a = set_of("/x,p=0.3", 42), b = set_of("/x,p=0.3", 42),
	                   c = set_of("/x,p=0.3", 43);
	int fired = 0, same = 1, differ = 0;
	for (int i = 0; i < 2000; i++) {
		int x = dt_deny_decide(&a, "/x", DT_DENY_WRITE, NULL) != 0;
		int y = dt_deny_decide(&b, "/x", DT_DENY_WRITE, NULL) != 0;
		int z = dt_deny_decide(&c, "/x", DT_DENY_WRITE, NULL) != 0;
		fired += x;
		same &= x == y;
		differ |= x != z;
	}
	cr_expect(same, "the same seed gave different refusals");
	cr_expect(differ, "another seed gave the very same 2000 decisions");
	/* 2000 draws at 0.3: mean 600, sd 20.5; +-5 sd */
	cr_expect(fired > 497 && fired < 703, "fired %d of 2000 at p=0.3", fired);
	dt_deny_set_free(&a);
	dt_deny_set_free(&b);
	dt_deny_set_free(&c);
}
