/* SPDX-License-Identifier: MIT */
/*
 * A reader for the subset of TOML 1.0 that Codex's config.toml uses.
 *
 * Debian 12 ships no C TOML library, and guessing at the meaning of a
 * sandbox configuration is worse than refusing it, so anything outside the
 * subset is rejected with "line N: message" instead of being approximated.
 *
 * Understood: comments, [tables] and [a."b.c"] headers, bare/quoted/dotted
 * keys, basic and literal strings (single- and multi-line), decimal
 * integers, floats (Codex accepts timeouts such as 60.5), booleans, arrays
 * (multi-line, trailing comma, comments) and inline tables.
 *
 * Rejected: dates and times, hexadecimal/octal/binary integers,
 * arrays of tables ([[x]]), "\u0000" in strings (values are C strings),
 * TOML 1.1 extensions (newlines or a trailing comma in inline tables,
 * "\e" and "\xHH" escapes), nesting deeper than TOML_MAX_DEPTH and inputs
 * larger than TOML_MAX_INPUT.
 */
#ifndef DENYTRACE_TOML_H
#define DENYTRACE_TOML_H

#include <stddef.h>

/* Tables and arrays nested deeper than this are refused, which bounds the
 * recursion of the parser and of toml_free(). The root table is depth 0. */
#define TOML_MAX_DEPTH 64

/* A config file bigger than this is not a config file. */
#define TOML_MAX_INPUT (4u * 1024u * 1024u)

enum toml_type { TOML_STRING, TOML_INT, TOML_BOOL, TOML_ARRAY, TOML_TABLE, TOML_FLOAT };

struct toml_value {
	enum toml_type type;
	int line;                 /* line where the value starts (1-based) */
	char *str;                /* TOML_STRING, NUL-terminated UTF-8 */
	long long i;              /* TOML_INT */
	double f;                 /* TOML_FLOAT */
	int b;                    /* TOML_BOOL */
	size_t n;                 /* ARRAY: items; TABLE: entries */
	struct toml_value *items; /* ARRAY items */
	char **keys;              /* TABLE keys (parallel to vals) */
	struct toml_value *vals;  /* TABLE values */
};

/*
 * Parses text (len bytes, need not be NUL-terminated). On success returns a
 * TOML_TABLE root (caller frees with toml_free). On error returns NULL and
 * writes "line N: message" into err (errlen bytes). Errors that belong to
 * no line (input too large, out of memory) carry no "line N: " prefix.
 * Table entries keep the order in which their keys first appeared.
 */
struct toml_value *toml_parse(const char *text, size_t len, char *err, size_t errlen);

/* As toml_parse(), reading the file at path; err also covers I/O errors,
 * which are reported as "PATH: reason". Opening never waits for a FIFO's
 * writer. On failure errno is 0 when the file was read but is not valid
 * TOML, EFBIG when it is over 4 MiB, else the I/O error (ENOENT, EISDIR). */
struct toml_value *toml_parse_file(const char *path, char *err, size_t errlen);
/* As toml_parse_file(), but only a regular file is read (checked on the
 * descriptor it reads): for a path the traced program may swap for a FIFO
 * (a ring names Codex's config files). */
struct toml_value *toml_parse_regular_file(const char *path, char *err, size_t errlen);

/*
 * Parses one TOML value, the right-hand side of "key = value", e.g. the
 * value half of Codex's "-c key=value" overrides: ["/a", "/b"], "x", true,
 * { k = 1 }. Surrounding whitespace, newlines and a trailing comment are
 * allowed. Returns NULL with err set if text is not exactly one value;
 * falling back to treating the text as a bare string is the caller's call.
 */
struct toml_value *toml_parse_value(const char *text, char *err, size_t errlen);

/* Frees a value returned by toml_parse*() together with everything in it.
 * Accepts NULL. Must not be given a value that lives inside another one. */
void toml_free(struct toml_value *root);

/* 1 when s (NUL-terminated) is valid UTF-8, which every TOML string is:
 * bytes that are not cannot be written as one, escapes included. */
int toml_utf8_ok(const char *s);

/* Returns the value stored under key in table t, or NULL if t is NULL, not a
 * table, or has no such key. */
const struct toml_value *toml_table_get(const struct toml_value *t, const char *key);

/*
 * Walks a path of keys from a table, one key per argument, terminated by
 * NULL: toml_get(root, "sandbox_workspace_write", "writable_roots", NULL).
 * Keys are not split on '.', so toml_get(root, "projects", "/srv/a.b", NULL)
 * finds [projects."/srv/a.b"]. Returns NULL if any step is absent or is not
 * a table; with no keys at all it returns table itself.
 */
const struct toml_value *toml_get(const struct toml_value *table, ...) __attribute__((sentinel));

#endif /* DENYTRACE_TOML_H */
