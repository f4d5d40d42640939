/* SPDX-License-Identifier: MIT */
// build-flags: -rdynamic
/*
 * A program that is not CPython but exports the names the probe looks up
 * for the dumper it uses from 3.12 on (Py_Version,
 * PyGILState_GetThisThreadState, _Py_IsFinalizing, _Py_DumpTraceback), in
 * shapes where the probe must decline to dump: no Python frames, no crash.
 * A function the probe must not reach aborts.
 *
 * usage: fakepython SHAPE PATH    open PATH for writing once (refused by
 *                                 the caller's sandbox), exit 0
 *   SHAPE  old         Py_Version 3.10: every function aborts
 *          3.11        3.11 without PyCode_Addr2Line and PyUnicode_Type
 *                      (what the direct reader needs): every function
 *                      aborts
 *          finalizing  3.12, the interpreter finalizing: only
 *                      _Py_IsFinalizing may be called
 *          no-thread   3.12, a thread Python does not know (no thread
 *                      state): the dumper aborts
 *          dumps       3.12, the dumper writes one frame, as CPython's
 *                      does: `fake_func` at /fake/app.py:7 (the lookup
 *                      works in a position-independent program)
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned long Py_Version = 0x030a00f0UL;
static const char *shape = "";

static int tstate;

void *PyGILState_GetThisThreadState(void)
{
	if (!strcmp(shape, "dumps"))
		return &tstate;
	if (strcmp(shape, "no-thread"))
		abort();
	return NULL;
}

int _Py_IsFinalizing(void)
{
	if (!strcmp(shape, "old") || !strcmp(shape, "3.11"))
		abort();
	return !strcmp(shape, "finalizing");
}

void _Py_DumpTraceback(int fd, void *ts)
{
	static const char dump[] = "Stack (most recent call first):\n"
	                           "  File \"/fake/app.py\", line 7 in fake_func\n";
	if (strcmp(shape, "dumps") || ts != &tstate)
		abort();
	if (write(fd, dump, sizeof(dump) - 1) < 0)
		abort();
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	shape = argv[1];
	if (!strcmp(shape, "3.11"))
		Py_Version = 0x030b02f0UL;
	else if (strcmp(shape, "old"))
		Py_Version = 0x030c00f0UL;
	int fd = open(argv[2], O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	return 0;
}
