/* SPDX-License-Identifier: MIT */
/* Names of calls, flags, and the probe's path: what the CLI derives from
 * preload/calls.def, and the paths it refuses to put in LD_PRELOAD. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "names.h"
#include "probe.h"

TestSuite(names);

Test(names, every_interposed_call_has_its_kind_from_calls_def)
{
	cr_expect_eq(dt_op_kind("openat"), DT_K_OPEN);
	cr_expect_eq(dt_op_kind("mkostemp64"), DT_K_OPEN);
	cr_expect_eq(dt_op_kind("tmpfile"), DT_K_OPEN);
	cr_expect_eq(dt_op_kind("fopen"), DT_K_FOPEN);
	cr_expect_eq(dt_op_kind("mkdtemp"), DT_K_MKDIR);
	cr_expect_eq(dt_op_kind("mkfifoat"), DT_K_MKNOD);
	cr_expect_eq(dt_op_kind("lutimes"), DT_K_UTIME);
	cr_expect_eq(dt_op_kind("euidaccess"), DT_K_ACCESS);
	cr_expect_eq(dt_op_kind("fcntl64"), DT_K_LOCK);
	cr_expect_eq(dt_op_kind("execve"), -1, "a system call the probe does not wrap");
	cr_expect_eq(dt_op_kind(NULL), -1);
}

Test(names, flags_of_temporary_files_and_effective_access_are_named)
{
	char buf[256];
	struct dt_record r = {0};
	r.op = "mkostemp";
	r.has_flags = 1;
	r.flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
	dt_flags_name(&r, buf, sizeof(buf));
	cr_expect_str_eq(buf, "O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC");
	r.op = "eaccess";
	r.has_flags = 0;
	r.cmd = W_OK | R_OK;
	dt_flags_name(&r, buf, sizeof(buf));
	cr_expect_str_eq(buf, "R_OK|W_OK");
}

Test(names, probe_path_the_loader_would_split_is_named)
{
	cr_expect_null(dt_probe_path_problem("/usr/lib/denytrace/libdenytrace.so"));
	cr_expect_str_eq(dt_probe_path_problem("/opt/my tools/libdenytrace.so"), "a space");
	cr_expect_str_eq(dt_probe_path_problem("/opt/a\tb/libdenytrace.so"), "a space");
	cr_expect_str_eq(dt_probe_path_problem("/opt/a:b/libdenytrace.so"), "a colon");
}
