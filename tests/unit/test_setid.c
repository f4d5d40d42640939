/* SPDX-License-Identifier: MIT */
/* dt_exec_setid: which execs run in the loader's secure mode, where
 * LD_PRELOAD is dropped and the probe cannot enter. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor.h"
#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(setid, .fini = teardown);

static const char *program(const char *name, mode_t mode, uid_t owner)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dtt_tmpdir(), name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(chown(path, owner, (gid_t)-1), 0);
	cr_assert_eq(chmod(path, mode), 0);
	return path;
}

Test(setid, set_user_id_program_of_another_owner_runs_in_secure_mode)
{
	if (geteuid() != 0)
		cr_skip_test("giving a file to another owner needs root");
	cr_expect(dt_exec_setid(getpid(), program("other", 04755, 1234)));
	cr_expect(!dt_exec_setid(getpid(), program("plain", 0755, 1234)),
	          "a program without set-id bits");
	cr_expect(!dt_exec_setid(getpid(), program("own", 04755, geteuid())),
	          "set-user-ID to the caller's own id changes nothing");
	cr_expect(!dt_exec_setid(getpid(), "/nonexistent/program"));
}
