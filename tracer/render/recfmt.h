/* SPDX-License-Identifier: MIT */
/* One record as text (for people) or as a JSON object (the contract). */
#ifndef DENYTRACE_RECFMT_H
#define DENYTRACE_RECFMT_H

#include <stdio.h>

#include "json.h"
#include "records.h"
#include "symbolize.h"

/* Length of the character at p when it may reach a terminal as it is
 * (printable ASCII, or valid UTF-8 that is not a C1 control such as CSI),
 * else 0. Every string from a ring or a traced program goes out through
 * this test: a program chooses its own paths, symbols and argv. */
int dt_safe_len(const unsigned char *p);

/* Prints s with control characters and invalid bytes escaped (\xNN) and
 * backslashes doubled: a path can carry terminal escape sequences. */
void dt_put_safe(FILE *f, const char *s);

/* Prints a line a user pastes (its words made by dt_shell_word, its
 * values by dt_toml_quote) as it is: doubled backslashes would change
 * the value of every \xNN in a $'...' word and every escape in a TOML
 * string. Bytes dt_safe_len refuses still go out as \xNN. */
void dt_put_pasteable(FILE *f, const char *s);

/* Prints a multi-line text (a config excerpt) as it is, newlines and
 * backslashes included, every other byte dt_safe_len refuses as \xNN. */
void dt_put_text(FILE *f, const char *s);

/* Prints s as one shell word a user can paste back: as is when it holds
 * only safe characters, else in '...', or in $'...' with \xNN escapes when
 * it holds control characters or bytes that are not valid UTF-8 (never a
 * raw control byte, whatever s holds). No backslash ever stands before a
 * quote: a renderer that doubles or drops backslashes cannot end it. */
void dt_shell_word(FILE *f, const char *s);

/* dt_shell_word into out (cut short to cap, always terminated). */
void dt_shell_word_str(char *out, size_t cap, const char *s);

/* "2026-11-30T00:12:01.123456Z" */
void dt_format_time(uint64_t ns, char *out, size_t cap);

/* Text: one line, plus indented detail lines when verbose (realpath, stat
 * facts, stack). sym may be NULL (no stack names). */
void dt_record_text(FILE *f, const struct dt_record *r, int verbose, struct dt_symbolizer *sym);

/* JSON object with the fields documented in README.md ("show --jsonl"). */
void dt_record_json(struct dt_json *j, const struct dt_record *r, struct dt_symbolizer *sym);

/* The Python frames, innermost first, one "FUNC at FILE:LINE" line each
 * after indent, and a line saying so when deeper ones were cut. */
void dt_pyframes_text(FILE *f, const struct dt_record *r, const char *indent);
/* The Python frames as [{function, file, line}], innermost first. */
void dt_pyframes_json(struct dt_json *j, const struct dt_record *r);
/* The stack as symbolized frames, into the current JSON position (array). */
void dt_frames_json(struct dt_json *j, const struct dt_record *r, struct dt_symbolizer *sym);

/* "ro" facts summary: "exists, regular 0644 uid 0, parent 0755 uid 0, mount ro" */
void dt_stat_text(const struct dt_stat_facts *st, char *out, size_t cap);

#endif
