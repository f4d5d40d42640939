/* SPDX-License-Identifier: MIT */
/* Exit statuses of the denytrace CLI (documented in README.md and --help). */
#ifndef DENYTRACE_EXITCODES_H
#define DENYTRACE_EXITCODES_H

enum dt_exit {
	DT_EXIT_OK = 0,
	DT_EXIT_FOUND = 1,    /* report --fail-on-denial: refusals were found */
	DT_EXIT_USAGE = 2,    /* bad command line */
	DT_EXIT_NOINPUT = 3,  /* an input file is missing or unreadable */
	DT_EXIT_BADINPUT = 4, /* an input is not a ring, is truncated, newer, corrupt */
	DT_EXIT_IO = 5,       /* writing output or creating a ring failed */
	DT_EXIT_NODEP = 6,    /* demo: python3 (with sqlite3) is missing */
	/* run, codex, soak: denytrace itself failed, bad usage included. These
	 * pass the command's own status through, so 2 would be ambiguous;
	 * 125 is env(1)'s and timeout(1)'s habit. */
	DT_EXIT_INTERNAL = 125,
	DT_EXIT_NOEXEC = 126,   /* run: the command could not be executed */
	DT_EXIT_NOTFOUND = 127, /* run: the command was not found */
};

#endif
