/* SPDX-License-Identifier: MIT */
/* A small JSON reader for the JSON denytrace itself writes and reads back
 * (soak --merge reads the shards' summaries): the whole text into a tree.
 * Inputs are data from other machines: nesting is bounded, every string is
 * NUL-free after decoding (a \u0000 is refused), numbers keep their text so
 * that a 64-bit seed survives exactly. */
#ifndef DENYTRACE_JSONREAD_H
#define DENYTRACE_JSONREAD_H

#include <stddef.h>
#include <stdint.h>

enum dt_jv_type { DT_JV_NULL, DT_JV_BOOL, DT_JV_NUM, DT_JV_STR, DT_JV_ARR, DT_JV_OBJ };

struct dt_jv {
	enum dt_jv_type type;
	int boolean;
	char *text;      /* a string's bytes, a number's lexeme */
	struct dt_jv *v; /* an array's items, an object's values */
	char **keys;     /* an object's keys, n of them */
	size_t n;
};

/* Parses text[0..len) into a tree (free it with dt_jv_free), or returns
 * NULL with where and why in err. */
struct dt_jv *dt_jv_parse(const char *text, size_t len, char *err, size_t cap);
void dt_jv_free(struct dt_jv *v);

/* Object member key, or NULL (also when o is not an object). */
const struct dt_jv *dt_jv_get(const struct dt_jv *o, const char *key);
/* Member key as a string (NULL when absent or not a string). */
const char *dt_jv_str(const struct dt_jv *o, const char *key);
/* Member key as a whole number from 0 to UINT64_MAX: 0, or -1 when it is
 * absent or not one. */
int dt_jv_u64(const struct dt_jv *o, const char *key, uint64_t *out);
/* Member key as a number (0 when absent, not a number, or beyond a
 * double: 1e999). */
double dt_jv_num(const struct dt_jv *o, const char *key);
/* Member key as a whole number clamped to [lo, hi] (0 when absent): a
 * count or status from another machine, never cast out of range. */
long long dt_jv_clamp(const struct dt_jv *o, const char *key, long long lo, long long hi);
/* Member key's truth: 1 for true, else 0. */
int dt_jv_true(const struct dt_jv *o, const char *key);

#endif
