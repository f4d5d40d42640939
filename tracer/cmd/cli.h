/* SPDX-License-Identifier: MIT */
/* What the subcommands share: their entry points, error reporting, and
 * finding the probe. */
#ifndef DENYTRACE_CLI_H
#define DENYTRACE_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "exitcodes.h"

#define DT_DEFAULT_RING "denytrace.ring"

int cmd_run(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_roots(int argc, char **argv);
int cmd_soak(int argc, char **argv);
int cmd_evidence(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_codex(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_fix(int argc, char **argv);

/* "denytrace: <message>" on stderr; returns status for `return dt_fail(...)`. */
int dt_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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
 * ../lib/denytrace/ from it (installed layout). Returns 0 or -1. */
int dt_find_probe(char *out, size_t cap);
/* NULL when path can go into LD_PRELOAD, else what stops it ("a space",
 * "a colon"): the loader splits the variable there. */
const char *dt_probe_path_problem(const char *path);

/* Matches a long option "--name" or "--name=value"; sets *val to the value
 * (next argument when not inline, advancing *i). Returns 1 on match, -1 when
 * a value is missing, 0 otherwise. */
int dt_opt(int argc, char **argv, int *i, const char *name, const char **val);

#endif
