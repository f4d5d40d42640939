/* SPDX-License-Identifier: MIT */
/* What the subcommands share: their entry points, error reporting, and
 * finding the probe. */
#ifndef DENYTRACE_CLI_H
#define DENYTRACE_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "exitcodes.h"

#define DT_DEFAULT_RING "denytrace.ring"

struct dt_cmd_options;

/* Each command's entry point and option table (cmd/commands.def). */
#define DT_COMMAND(name, summary)                                                                  \
	int cmd_##name(int argc, char **argv);                                                     \
	extern const struct dt_cmd_options name##_cmd;
#include "commands.def"
#undef DT_COMMAND

/* The commands in commands.def's order, for dispatch, --help, "did you
 * mean" and the completion scripts. */
struct dt_command {
	const char *name;
	int (*fn)(int, char **);
	const struct dt_cmd_options *options;
	const char *summary;
};
extern const struct dt_command dt_commands[];
extern const size_t dt_ncommands;
/* The command a mistyped one most likely meant, or NULL. */
const char *dt_command_nearest(const char *typed);

/* --color WHEN: "always", "never", or "auto"/NULL: on a terminal unless
 * NO_COLOR is set to something (no-color.org). */
int dt_color_wanted(const char *when);

/* "denytrace: <message>" on stderr; returns status for `return dt_fail(...)`. */
int dt_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* dt_fail keeping the message's newlines, for text from the user's own
 * command line shown on several lines (a --deny rule under its carets);
 * never for a path or word a traced program chose. */
int dt_fail_lines(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* What a command returns, checked against standard output: a write that
 * failed (a full disk, a closed pipe's EPIPE) turns success into
 * DT_EXIT_IO, with a message unless one was given already. */
int dt_finish_stdout(int status);
/* A whole number from 0 to 2^64-1 (decimal, 0x hex, 0 octal), nothing
 * before or after it: 0, or -1 (a sign, an overflow, junk). */
int dt_parse_u64(const char *s, uint64_t *out);

/* For a command that reads ./denytrace.ring when no ring is named: 0 when
 * it exists (or is there but unreadable: opening it says why), else
 * DT_EXIT_NOINPUT with a message saying to record one first. */
int dt_default_ring_check(const char *cmd);

/* Absolute path of libdenytrace.so: $DENYTRACE_PROBE, beside the CLI, or
 * ../lib/denytrace/ (make install) or ../lib/MULTIARCH/denytrace/ (the
 * Debian package) from it. Returns 0 or -1. */
int dt_find_probe(char *out, size_t cap);
/* What to tell the user when dt_find_probe fails. */
#define DT_PROBE_NOT_FOUND                                                                         \
	"cannot find libdenytrace.so beside the denytrace binary, in ../lib/denytrace/ or in "     \
	"../lib/MULTIARCH/denytrace/; set DENYTRACE_PROBE to its path"
/* NULL when path can go into LD_PRELOAD, else what stops it ("a space",
 * "a colon"): the loader splits the variable there. */
const char *dt_probe_path_problem(const char *path);

/* The word of words[0..n) nearest to typed (edit distance, a swap of two
 * letters counting one), when it is near enough to be a likely typo; else
 * NULL. For "did you mean". */
const char *dt_nearest_word(const char *typed, const char *const *words, size_t n);

#endif
