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

struct dt_rootset;
struct dt_codex_launch;

/* Asks `BIN doctor --json` what is writable for launch l (already modelled
 * into rs by dt_roots_from_codex): run in l's workspace with its
 * CODEX_HOME, its -c flags that decide the sandbox (no others: a ring's
 * command line is the traced program's) and the mode the model found.
 * Codex 0.169 and 0.171 list there only the paths a writable_roots list
 * (the one in effect) names, as "path N: DIR (write)". Sets rs's
 * codex_readback, codex_says and, for every path one side lists and the
 * other does not, a line in codex_disagree naming the layer the model
 * took its list from. Not asked (said in codex_readback_why) where the
 * comparison means nothing: Codex would refuse the launch, the mode is not
 * workspace-write, a permission profile decides, or a -p layer is in play
 * (codex doctor takes no --profile). */
void dt_codex_readback(struct dt_rootset *rs, const char *bin, const struct dt_codex_launch *l);

/* The "(write)" paths of codex doctor --json's output (its
 * sandbox.filesystem_paths check); malloc'ed, *n of them. Exposed for
 * tests that feed it a doctored answer. */
char **dt_codex_doctor_write_paths(const char *json, size_t *n);

#endif
