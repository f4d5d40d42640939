// SPDX-License-Identifier: MIT
/*
 * Tests for dt_launch_writable (tracer/launch/launchfile.c): what a
 * command line's sandbox can write, as the launcher reads it before the
 * command starts, to keep the launch file out of the traced program's
 * reach. Codex's configuration is written to a CODEX_HOME of the test's.
 *
 *   make build/unit/test_launch_writable && ./build/unit/test_launch_writable
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launchfile.h"

static char home[PATH_MAX];

static void setup(void)
{
	snprintf(home, sizeof(home), "/tmp/dt-launch-writable.XXXXXX");
	cr_assert_not_null(mkdtemp(home));
	setenv("CODEX_HOME", home, 1);
	setenv("HOME", home, 1);
	unsetenv("TMPDIR");
}

static void teardown(void)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/config.toml", home);
	unlink(path);
	rmdir(home);
}

TestSuite(launch_writable, .init = setup, .fini = teardown);

/* The places argv can write, space-separated, or "none" (-1). */
static const char *writable(const char *const *argv)
{
	static char out[8192];
	const char *w[64];
	int n = dt_launch_writable(argv, "/work/ws", w, 63);
	if (n < 0)
		return "none";
	out[0] = 0;
	for (int i = 0; i < n; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? " " : "", w[i]);
	return out;
}

static int holds(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

Test(launch_writable, bubblewrap_as_the_command_writes_its_binds)
{
	const char *argv[] = {"bwrap",    "--ro-bind", "/",  "/",  "--bind",
	                      "/work/ws", "/work/ws",  "--", "sh", NULL};
	cr_expect_str_eq(writable(argv), "/work/ws");
}

Test(launch_writable, bubblewrap_behind_a_wrapper_word_may_write_anywhere)
{
	const char *argv[] = {"timeout", "60",      "bwrap",   "--ro-bind", "/",  "/",
	                      "--bind",  "/home/u", "/home/u", "--",        "sh", NULL};
	cr_expect_str_eq(writable(argv), "/");
}

Test(launch_writable, a_sandbox_denytrace_does_not_read_may_write_anywhere)
{
	const char *argv[] = {"firejail", "--private", "sh", NULL};
	cr_expect_str_eq(writable(argv), "/");
}

Test(launch_writable, landlock_run_as_the_command_writes_its_rw_and_rule_paths)
{
	const char *argv[] = {"/usr/lib/x/landlock-run",
	                      "--abi",
	                      "1",
	                      "--rw",
	                      "/work/ws",
	                      "--rw=/dev/null",
	                      "--rule",
	                      "/work/board=MAKE_REG|WRITE_FILE",
	                      "--",
	                      "sh",
	                      NULL};
	cr_expect_str_eq(writable(argv), "/work/ws /dev/null /work/board");
}

Test(launch_writable, landlock_run_with_an_option_it_does_not_read_names_none)
{
	const char *argv[] = {"landlock-run", "--rw", "/work/ws", "--unknown", "--", "sh", NULL};
	cr_expect_str_eq(writable(argv), "none");
}

Test(launch_writable, a_sandbox_started_by_a_shell_names_none)
{
	const char *argv[] = {"sh", "-c", "bwrap --ro-bind / / --bind /work/ws /work/ws sh", NULL};
	cr_expect_str_eq(writable(argv), "none");
}

Test(launch_writable, a_command_without_a_sandbox_names_none)
{
	const char *argv[] = {"python3", "worker.py", NULL};
	cr_expect_str_eq(writable(argv), "none");
}

Test(launch_writable, codex_writes_the_writable_roots_of_its_config_toml)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/config.toml", home);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("sandbox_mode = \"workspace-write\"\n"
	      "[sandbox_workspace_write]\nwritable_roots = [\"/srv/state\"]\n",
	      f);
	fclose(f);
	/* codex exec follows config.toml's sandbox_mode (codex sandbox does not) */
	const char *argv[] = {"codex", "exec", "hi", NULL};
	const char *got = writable(argv);
	cr_expect(holds(got, "/srv/state"), "%s", got);
	cr_expect(holds(got, "/work/ws") && holds(got, "/tmp"), "%s", got);
}

Test(launch_writable, codex_writes_the_writable_roots_of_a_c_override)
{
	const char *argv[] = {"codex", "sandbox",
	                      "-c",    "sandbox_mode=\"workspace-write\"",
	                      "-c",    "sandbox_workspace_write.writable_roots=[\"/srv/state\"]",
	                      "--",    "sh",
	                      NULL};
	const char *got = writable(argv);
	cr_expect(holds(got, "/srv/state"), "%s", got);
}

Test(launch_writable, codex_with_full_access_may_write_anywhere)
{
	const char *full[] = {"codex", "exec", "-s", "danger-full-access", "hi", NULL};
	cr_expect_str_eq(writable(full), "/");
	const char *yolo[] = {"codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "hi",
	                      NULL};
	cr_expect_str_eq(writable(yolo), "/");
}

/* Codex refuses a -c for a server no layer defines ("invalid transport",
 * exit 1, before it starts anything): the model has no mode for it, and
 * nothing runs, so the launcher's lower bound holds, and the launch file
 * can be kept (fix --verify then re-runs it with the server renamed). */
Test(launch_writable, a_codex_command_line_codex_refuses_writes_only_the_lower_bound)
{
	const char *argv[] = {"codex", "exec", "-c", "mcp_servers.nope.env.A=\"1\"", "hi", NULL};
	const char *w = writable(argv);
	cr_expect(!holds(w, "/"), "%s", w);
	cr_expect(holds(w, "/work/ws") && holds(w, "/tmp"), "%s", w);
}

/* ... unless a word of it asks for full access, should the model be wrong
 * about the refusal. */
Test(launch_writable, a_refused_codex_command_line_asking_for_full_access_may_write_anywhere)
{
	const char *argv[] = {"codex", "exec",
	                      "-c",    "mcp_servers.nope.env.A=\"1\"",
	                      "-c",    "sandbox_mode=\"danger-full-access\"",
	                      "hi",    NULL};
	cr_expect_str_eq(writable(argv), "/");
}
