/* SPDX-License-Identifier: MIT */
// build-flags: -ldl
/*
 * A program that embeds CPython from libpython3.X.so (as pyenv's and
 * python.org's default builds, and embedding programs, load it) instead
 * of having it linked in like Debian's /usr/bin/python3.X: the Python API
 * is in a loaded library, not in the main program.
 *
 * usage: embedpython LIB SCRIPT ARG   loads LIB (libpython3.11.so.1.0),
 *                                     runs SCRIPT with sys.argv [SCRIPT, ARG];
 *                                     exit 77 when the library is missing
 */
#include <dlfcn.h>
#include <stdio.h>

typedef void (*init_fn)(void);
typedef int (*run_fn)(const char *);
typedef int (*fini_fn)(void);

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	void *py = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!py)
		return 77;
	init_fn init = (init_fn)dlsym(py, "Py_Initialize");
	run_fn run = (run_fn)dlsym(py, "PyRun_SimpleString");
	fini_fn fini = (fini_fn)dlsym(py, "Py_FinalizeEx");
	if (!init || !run || !fini)
		return 77;
	char code[8192];
	/* the script's path and argument go in as Python string literals */
	snprintf(code, sizeof(code),
	         "import sys\nsys.argv = [%s%s%s, %s%s%s]\n"
	         "exec(compile(open(sys.argv[0]).read(), sys.argv[0], 'exec'))\n",
	         "r'''", argv[2], "'''", "r'''", argv[3], "'''");
	init();
	int rc = run(code);
	return fini() < 0 || rc != 0 ? 1 : 0;
}
