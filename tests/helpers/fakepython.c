/* SPDX-License-Identifier: MIT */
// build-flags: -rdynamic
/*
 * A program that is not CPython but exports the names the probe looks up
 * (Py_Version, PyGILState_GetThisThreadState, _Py_IsFinalizing, the
 * dumper _Py_DumpTraceback it uses from 3.12 on, and what the 3.13 reader
 * needs: PyUnicode_Type, PyCode_Type, PyUnstable_InterpreterFrame_GetLine),
 * in shapes where the probe must decline, dump or read. A function the
 * probe must not reach aborts.
 *
 * usage: fakepython SHAPE PATH    open PATH for writing once (refused by
 *                                 the caller's sandbox), exit 0
 *   SHAPE  old         Py_Version 3.10: every function aborts
 *          3.11        3.11 without PyCode_Addr2Line (what its direct
 *                      reader needs): every function aborts
 *          finalizing  3.12, the interpreter finalizing: only
 *                      _Py_IsFinalizing may be called
 *          no-thread   3.12, a thread Python does not know (no thread
 *                      state): the dumper aborts
 *          dumps       3.12, the dumper writes one frame, as CPython's
 *                      does: `fake_func` at /fake/app.py:7 (the lookup
 *                      works in a position-independent program)
 *          3.13        3.13's thread state and frames, laid out as
 *                      Debian 13's python3.13 (pyframes.c's figures):
 *                      an incomplete frame, `fake_func` at
 *                      /fake/app.py:7, a C-stack frame, then a generator's
 *                      `outér` at line 12 (a non-ASCII name); the line
 *                      function aborts for the frames to skip
 *          3.14        the same objects, but Py_Version 3.14: the 3.13
 *                      reader must not read them (its line function
 *                      aborts); the dumper writes nothing
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned long Py_Version = 0x030a00f0UL;
static const char *shape = "";

static int tstate;

/* Only their addresses matter: ob_type of a code object and of a str. */
long PyCode_Type[52];
long PyUnicode_Type[52];

/* 3.13's objects as bytes at its offsets (preload/pyframes.c's dt_py313) */
struct obj {
	_Alignas(8) unsigned char b[256];
};
static struct obj ts313, frames[4], codes[2], strs[3], none;
enum { TS_FRAME = 72, FR_EXEC = 0, FR_PREV = 8, FR_INSTR = 56, FR_OWNER = 70 };
enum { OWNED_BY_THREAD = 0, OWNED_BY_GENERATOR = 1, OWNED_BY_CSTACK = 3 };
enum { CO_FILE = 112, CO_NAME = 120, CO_FIRST = 184, CO_BYTECODE = 200 };

static int is313(void)
{
	return !strcmp(shape, "3.13") || !strcmp(shape, "3.14");
}

static void put_ptr(struct obj *o, size_t off, const void *p)
{
	memcpy(o->b + off, &p, sizeof(p));
}

/* a compact str of one byte a character: ASCII data at 40, Latin-1 at 56 */
static void make_str(struct obj *o, const char *latin1)
{
	int64_t len = (int64_t)strlen(latin1);
	int ascii = 1;
	for (const char *c = latin1; *c; c++)
		ascii &= (unsigned char)*c < 0x80;
	uint32_t state = 1u << 2 | 1u << 5 | (unsigned)ascii << 6; /* kind 1, compact */
	put_ptr(o, 8, PyUnicode_Type);
	memcpy(o->b + 16, &len, 8);
	memcpy(o->b + 32, &state, 4);
	memcpy(o->b + (ascii ? 40 : 56), latin1, (size_t)len);
}

static void make_code(struct obj *o, struct obj *file, struct obj *name)
{
	int first = 1; /* instructions before the second code unit: incomplete */
	put_ptr(o, 8, PyCode_Type);
	put_ptr(o, CO_FILE, file);
	put_ptr(o, CO_NAME, name);
	memcpy(o->b + CO_FIRST, &first, sizeof(first));
}

static void make_frame(struct obj *f, struct obj *exec, struct obj *previous, int instr,
                       unsigned char owner)
{
	put_ptr(f, FR_EXEC, exec);
	put_ptr(f, FR_PREV, previous);
	put_ptr(f, FR_INSTR, exec->b + CO_BYTECODE + instr);
	f->b[FR_OWNER] = owner;
}

static void make_313_stack(void)
{
	make_str(&strs[0], "/fake/app.py");
	make_str(&strs[1], "fake_func");
	make_str(&strs[2], "out\xe9r");
	make_code(&codes[0], &strs[0], &strs[1]);
	make_code(&codes[1], &strs[0], &strs[2]);
	make_frame(&frames[3], &codes[1], NULL, 0, OWNED_BY_GENERATOR);
	make_frame(&frames[2], &none, &frames[3], 0, OWNED_BY_CSTACK);
	make_frame(&frames[1], &codes[0], &frames[2], 4, OWNED_BY_THREAD);
	make_frame(&frames[0], &codes[0], &frames[1], 0, OWNED_BY_THREAD);
	put_ptr(&ts313, TS_FRAME, &frames[0]);
}

int PyUnstable_InterpreterFrame_GetLine(void *frame)
{
	if (strcmp(shape, "3.13"))
		abort();
	if (frame == &frames[1])
		return 7;
	if (frame == &frames[3])
		return 12;
	abort();
}

void *PyGILState_GetThisThreadState(void)
{
	if (!strcmp(shape, "dumps"))
		return &tstate;
	if (is313())
		return &ts313;
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
	if (!strcmp(shape, "3.14") && ts == &ts313)
		return;
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
	else if (!strcmp(shape, "3.13"))
		Py_Version = 0x030d05f0UL;
	else if (!strcmp(shape, "3.14"))
		Py_Version = 0x030e00f0UL;
	else if (strcmp(shape, "old"))
		Py_Version = 0x030c00f0UL;
	if (is313())
		make_313_stack();
	int fd = open(argv[2], O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	return 0;
}
