/* SPDX-License-Identifier: MIT */
/* A small streaming JSON writer: commas and escaping handled here so that
 * every output format stays valid whatever bytes a path holds. */
#ifndef DENYTRACE_JSON_H
#define DENYTRACE_JSON_H

#include <stdint.h>
#include <stdio.h>

struct dt_json {
	FILE *out;
	int depth;
	int first[64]; /* per nesting level: no comma needed yet */
	int pretty;
};

void dt_json_init(struct dt_json *j, FILE *out, int pretty);
void dt_json_obj(struct dt_json *j); /* { */
void dt_json_arr(struct dt_json *j); /* [ */
void dt_json_end_obj(struct dt_json *j);
void dt_json_end_arr(struct dt_json *j);
void dt_json_key(struct dt_json *j, const char *k);
void dt_json_str(struct dt_json *j, const char *s); /* NULL -> null */
void dt_json_int(struct dt_json *j, int64_t v);
void dt_json_uint(struct dt_json *j, uint64_t v);
void dt_json_bool(struct dt_json *j, int v);
void dt_json_null(struct dt_json *j);
void dt_json_double(struct dt_json *j, double v);
/* A key and its value: dt_json_key, then the value's own call. */
void dt_json_kstr(struct dt_json *j, const char *k, const char *s);
void dt_json_kint(struct dt_json *j, const char *k, int64_t v);
void dt_json_kuint(struct dt_json *j, const char *k, uint64_t v);
void dt_json_kbool(struct dt_json *j, const char *k, int v);
void dt_json_knull(struct dt_json *j, const char *k);
void dt_json_kdouble(struct dt_json *j, const char *k, double v);
/* Writes s as a JSON string body to f: control characters (C0, DEL and the
 * C1 range U+0080..U+009F) escaped, bytes that are not valid UTF-8 written
 * as \u00XX (their Latin-1 reading): the output holds no control byte. */
void dt_json_escape(FILE *f, const char *s);

#endif
