/* SPDX-License-Identifier: MIT */
/* What a new user types: the generated completion scripts, in a real bash
 * (and zsh), "did you mean" for a mistyped command or option, and the
 * short names people guess. */
#include <criterion/criterion.h>
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

TestSuite(completion, .fini = teardown, .timeout = 120);

/* What bash's completion offers for the words typed so far (the last one
 * being completed), one word per line in out; the script is the one
 * `denytrace completion bash` prints, sourced in a fresh bash. */
static int bash_complete(char *out, size_t cap, const char *words)
{
	char script[8192];
	snprintf(script, sizeof(script),
	         "source <(\"$DT\" completion bash) || exit 9\n"
	         "COMP_WORDS=(%s)\n"
	         "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
	         "cd \"$DIR\" || exit 9\n"
	         "_denytrace\n"
	         "for w in \"${COMPREPLY[@]}\"; do printf '%%s\\n' \"$w\"; done\n",
	         words);
	char dt[4096], dir[4096];
	snprintf(dt, sizeof(dt), "DT=%s/denytrace", dtt_build());
	snprintf(dir, sizeof(dir), "DIR=%s", dtt_tmpdir());
	const char *argv[] = {"bash", "--norc", "--noprofile", "-c", script, NULL};
	const char *env[] = {dt, dir, NULL};
	return dtt_system(out, cap, argv, env);
}

/* word is one whole line of out */
static int has_line(const char *out, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = out; (p = strstr(p, word)); p += n)
		if ((p == out || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
	return 0;
}

Test(completion, a_command_completes_from_its_first_letters)
{
	char out[8192];
	cr_assert_eq(bash_complete(out, sizeof(out), "denytrace rep"), 0, "%s", out);
	cr_assert(has_line(out, "report"), "%s", out);
	cr_assert(!has_line(out, "run"), "%s", out);
}

Test(completion, an_option_completes_within_its_command)
{
	char out[8192];
	cr_assert_eq(bash_complete(out, sizeof(out), "denytrace report --for"), 0, "%s", out);
	cr_assert(has_line(out, "--format"), "%s", out);
	/* run's options are not report's */
	cr_assert_eq(bash_complete(out, sizeof(out), "denytrace report --watch"), 0, "%s", out);
	cr_assert_eq(out[0], 0, "report has no --watch-exec: %s", out);
	cr_assert_eq(bash_complete(out, sizeof(out), "denytrace run --watch"), 0, "%s", out);
	cr_assert(has_line(out, "--watch-exec"), "%s", out);
}

Test(completion, an_option_value_completes_from_its_table_of_words)
{
	char out[8192];
	cr_assert_eq(bash_complete(out, sizeof(out), "denytrace report --format j"), 0, "%s", out);
	cr_assert(has_line(out, "json"), "%s", out);
	cr_assert_eq(bash_complete(out, sizeof(out), "denytrace report --format = m"), 0, "%s",
	             out);
	cr_assert(has_line(out, "markdown"), "--format=m: %s", out);
}

Test(completion, a_ring_argument_completes_to_files)
{
	char path[4096], out[8192];
	snprintf(path, sizeof(path), "%s/worker.ring", dtt_tmpdir());
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fclose(f);
	cr_assert_eq(bash_complete(out, sizeof(out), "denytrace report wor"), 0, "%s", out);
	cr_assert(has_line(out, "worker.ring"), "%s", out);
}

Test(completion, the_word_after_dashdash_completes_to_a_command)
{
	char out[65536];
	cr_assert_eq(bash_complete(out, sizeof(out), "denytrace run -- bas"), 0, "%s", out);
	cr_assert(has_line(out, "bash"), "%s", out);
}

Test(completion, the_zsh_script_parses_and_defines_its_function)
{
	if (access("/usr/bin/zsh", X_OK) && access("/bin/zsh", X_OK))
		cr_skip_test("zsh is not installed");
	char out[8192], dt[4096];
	snprintf(dt, sizeof(dt), "DT=%s/denytrace", dtt_build());
	const char *argv[] = {"zsh", "-f", "-c",
	                      "\"$DT\" completion zsh > \"$TMP/_denytrace\" && "
	                      "zsh -n \"$TMP/_denytrace\" && head -1 \"$TMP/_denytrace\" && "
	                      "autoload -U compinit && compinit -u -d \"$TMP/dump\" && "
	                      "fpath=(\"$TMP\" $fpath) && autoload -U _denytrace && "
	                      "whence -w _denytrace",
	                      NULL};
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "TMP=%s", dtt_tmpdir());
	const char *env[] = {dt, tmp, NULL};
	cr_assert_eq(dtt_system(out, sizeof(out), argv, env), 0, "%s", out);
	cr_assert(strstr(out, "#compdef denytrace"), "%s", out);
	cr_assert(strstr(out, "_denytrace: function"), "%s", out);
}

Test(completion, an_unknown_shell_is_a_usage_error)
{
	struct dtt_cli c;
	dtt_cli(&c, (const char *[]){"completion", "fish", NULL});
	cr_assert_eq(c.status, 2, "%s", c.err);
	cr_assert(strstr(c.err, "fish"), "%s", c.err);
}

Test(completion, a_mistyped_command_names_the_one_meant)
{
	struct dtt_cli c;
	dtt_cli(&c, (const char *[]){"reprot", NULL});
	cr_assert_eq(c.status, 2, "%s", c.err);
	cr_assert(strstr(c.err, "did you mean 'report'"), "%s", c.err);
	dtt_cli(&c, (const char *[]){"xyzzy", NULL});
	cr_assert_eq(c.status, 2, "%s", c.err);
	cr_assert(!strstr(c.err, "did you mean"), "nothing is near xyzzy: %s", c.err);
}

Test(completion, a_mistyped_option_names_the_one_meant)
{
	struct dtt_cli c;
	dtt_cli(&c, (const char *[]){"report", "--fromat=json", NULL});
	cr_assert_eq(c.status, 2, "%s", c.err);
	cr_assert(strstr(c.err, "did you mean '--format'"), "%s", c.err);
	dtt_cli(&c, (const char *[]){"run", "--watch-exce", "--", "true", NULL});
	cr_assert_eq(c.status, 125, "%s", c.err);
	cr_assert(strstr(c.err, "did you mean '--watch-exec'"), "%s", c.err);
}

Test(completion, report_format_md_is_markdown)
{
	char ring[4096];
	snprintf(ring, sizeof(ring), "%s/r.ring", dtt_tmpdir());
	struct dtt_cli c;
	dtt_cli(&c, (const char *[]){"run", "-q", "-o", ring, "--", "mkdir", "/proc/denied", NULL});
	cr_assert_neq(c.status, 142, "run hung");
	static struct dtt_cli md, markdown;
	dtt_cli(&md, (const char *[]){"report", "--format", "md", ring, NULL});
	dtt_cli(&markdown, (const char *[]){"report", "--format", "markdown", ring, NULL});
	cr_assert_eq(md.status, markdown.status, "%s", md.err);
	cr_assert_neq(md.status, 2, "md rejected: %s", md.err);
	cr_assert_str_eq(md.out, markdown.out);
	cr_assert(strstr(md.out, "|"), "not a Markdown report: %s", md.out);
}

/* Every command that reads ./denytrace.ring by default says what to do
 * when there is none, not a bare "cannot open". */
Test(completion, a_command_without_a_ring_says_to_record_one_first)
{
	static const char *const cmds[] = {"report", "show", "fix", "evidence"};
	char dt[4096], dir[4096], abs[4096];
	cr_assert_not_null(realpath(dtt_build(), abs));
	snprintf(dt, sizeof(dt), "DT=%s/denytrace", abs);
	snprintf(dir, sizeof(dir), "DIR=%s", dtt_tmpdir());
	for (size_t i = 0; i < sizeof(cmds) / sizeof(*cmds); i++) {
		char out[8192], cmd[64];
		snprintf(cmd, sizeof(cmd), "CMD=%s", cmds[i]);
		const char *argv[] = {"sh", "-c", "cd \"$DIR\" && exec \"$DT\" \"$CMD\"", NULL};
		const char *env[] = {dt, dir, cmd, NULL};
		int st = dtt_system(out, sizeof(out), argv, env);
		cr_expect_eq(st, 3, "%s: status %d: %s", cmds[i], st, out);
		cr_expect(strstr(out, "record one first with `denytrace run"), "%s: %s", cmds[i],
		          out);
	}
}

/* The commands that colour (report, roots) take --color, and on a
 * terminal honour NO_COLOR (set to anything but empty, no-color.org);
 * a pipe gets no escapes. `script` gives the command a real terminal. */
Test(completion, report_and_roots_colour_on_a_terminal_unless_no_color)
{
	char dt[4096], abs[4096], out[16384];
	cr_assert_not_null(realpath(dtt_build(), abs));
	snprintf(dt, sizeof(dt), "DT=%s/denytrace", abs);
	static const char *const cases[][3] = {
	    /* shell command, expect escapes */
	    {"script -qec '\"$DT\" roots --root /tmp' /dev/null", "1"},
	    {"script -qec 'NO_COLOR=1 \"$DT\" roots --root /tmp' /dev/null", "0"},
	    {"script -qec 'NO_COLOR= \"$DT\" roots --root /tmp' /dev/null", "1"},
	    {"script -qec 'NO_COLOR=1 \"$DT\" roots --color always --root /tmp' /dev/null", "1"},
	    {"\"$DT\" roots --root /tmp | cat", "0"},
	    {"\"$DT\" roots --color always --root /tmp | cat", "1"},
	    {"script -qec '\"$DT\" roots --color never --root /tmp' /dev/null", "0"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const char *argv[] = {"sh", "-c", cases[i][0], NULL};
		const char *env[] = {dt, NULL};
		cr_assert_eq(dtt_system(out, sizeof(out), argv, env), 0, "%s: %s", cases[i][0],
		             out);
		int escapes = strstr(out, "\033[") != NULL;
		cr_expect_eq(escapes, cases[i][1][0] == '1', "%s: %s", cases[i][0], out);
	}
}

/* On a terminal the text report is wrapped at its width, continuation
 * lines indented under their text; a pipe gets whole lines. */
Test(completion, the_text_report_wraps_at_the_terminal_width_and_not_in_a_pipe)
{
	char ring[4096], dt[4096], abs[4096], rg[4200], out[65536];
	snprintf(ring, sizeof(ring), "%s/w.ring", dtt_tmpdir());
	struct dtt_cli c;
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	/* a long path, refused (read-only under bwrap): its report lines are
	 * far wider than 80 columns */
	char dir[4096], rw[4096];
	snprintf(dir, sizeof(dir),
	         "%s/a-directory-name-long-enough-to-make-the-report-line-wider-than-80",
	         dtt_tmpdir());
	snprintf(rw, sizeof(rw), "%s/rw", dtt_tmpdir());
	mkdir(rw, 0755);
	const char *argv[DTT_BWRAP_RW_WORDS + 8] = {"run", "-q", "-o", ring, "--"};
	size_t w = 5 + dtt_bwrap_rw(argv + 5, rw);
	argv[w++] = "mkdir";
	argv[w++] = dir;
	argv[w] = NULL;
	dtt_cli(&c, argv);
	cr_assert_not_null(realpath(dtt_build(), abs));
	snprintf(dt, sizeof(dt), "DT=%s/denytrace", abs);
	snprintf(rg, sizeof(rg), "RING=%s", ring);
	const char *env[] = {dt, rg, NULL};
	const char *tty[] = {"sh", "-c",
	                     "script -qec 'stty cols 80; \"$DT\" report --color never \"$RING\"' "
	                     "/dev/null",
	                     NULL};
	dtt_system(out, sizeof(out), tty, env);
	size_t longest = 0, indented = 0;
	for (char *l = out, *e; *l; l = e + (*e != 0)) {
		e = l + strcspn(l, "\n");
		size_t n = (size_t)(e - l) - (e > l && e[-1] == '\r');
		longest = n > longest ? n : longest;
		indented += n > 8 && !strncmp(l, "        ", 8);
	}
	cr_expect_leq(longest, 80, "a line of %zu columns on an 80-column terminal:\n%s", longest,
	              out);
	cr_expect_gt(indented, 0, "no continuation line:\n%s", out);
	const char *pipe[] = {"sh", "-c", "\"$DT\" report \"$RING\" | cat", NULL};
	dtt_system(out, sizeof(out), pipe, env);
	longest = 0;
	for (char *l = out, *e; *l; l = e + (*e != 0)) {
		e = l + strcspn(l, "\n");
		longest = (size_t)(e - l) > longest ? (size_t)(e - l) : longest;
	}
	cr_expect_gt(longest, 80, "a pipe got wrapped lines:\n%s", out);
}
