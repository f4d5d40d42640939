/* SPDX-License-Identifier: MIT */
/* The shared spawner hands a child exactly the descriptors it was asked to. */
#include <criterion/criterion.h>
#include <string.h>

#include "spawn.h"

Test(spawn, child_with_stdin_from_dev_null_holds_no_second_dev_null_descriptor)
{
	/* one line per descriptor of find itself: "NUMBER TARGET" */
	const char *argv[] = {"find",    "/proc/self/fd", "-mindepth", "1",
	                      "-printf", "%f %l\n",       NULL};
	char out[4096] = "", err[256] = "";
	int st = dt_capture(argv, NULL, 10000, out, sizeof(out), err, sizeof(err));
	cr_assert_eq(st, 0, "find failed: %s", err);
	int devnull = 0;
	for (const char *p = out; (p = strstr(p, " /dev/null\n")); p++)
		devnull++;
	cr_expect_eq(devnull, 1, "descriptors on /dev/null in the child (want only 0):\n%s", out);
	cr_expect(strstr(out, "0 /dev/null\n") != NULL, "stdin is not /dev/null:\n%s", out);
}
