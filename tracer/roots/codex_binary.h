/* SPDX-License-Identifier: MIT */
/*
 * Asking a Codex binary about itself: its version, and (codex doctor
 * --json) what it says is writable. Only a binary the user named on
 * denytrace's own command line (--codex PATH) or the one `denytrace codex`
 * runs: never a program a ring names, since the ring is written by the
 * traced program.
 */
#ifndef DENYTRACE_CODEX_BINARY_H
#define DENYTRACE_CODEX_BINARY_H

#include <stddef.h>

/* Runs `BIN --version` and puts its first line ("codex-cli 0.171.0") in
 * out. BIN without a '/' is looked up on PATH. Returns 0, or an exit
 * status (exitcodes.def: NOTFOUND, NOEXEC) with a message in err. */
int dt_codex_binary_version(const char *bin, char *out, size_t cap, char *err, size_t errlen);

#endif
