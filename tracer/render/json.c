/* SPDX-License-Identifier: MIT */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void dt_json_init(struct dt_json *j, FILE *out, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->pretty = pretty;
	j->first[0] = 1;
}

static void dt_json_indent(struct dt_json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->out);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->out);
}

/* Before a value: a comma unless first in its container (a value after a
 * key never takes one). */
static void dt_json_sep(struct dt_json *j)
{
	if (j->first[j->depth] == 2) { /* just wrote a key */
		j->first[j->depth] = 0;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->out);
	j->first[j->depth] = 0;
	if (j->depth > 0)
		dt_json_indent(j);
}

static void dt_json_open(struct dt_json *j, char c)
{
	dt_json_sep(j);
	fputc(c, j->out);
	if (j->depth < 63)
		j->depth++;
	j->first[j->depth] = 1;
}

static void dt_json_close(struct dt_json *j, char c)
{
	int empty = j->first[j->depth] == 1;
	if (j->depth > 0)
		j->depth--;
	if (!empty)
		dt_json_indent(j);
	fputc(c, j->out);
}

void dt_json_obj(struct dt_json *j)
{
	dt_json_open(j, '{');
}
void dt_json_arr(struct dt_json *j)
{
	dt_json_open(j, '[');
}
void dt_json_end_obj(struct dt_json *j)
{
	dt_json_close(j, '}');
}
void dt_json_end_arr(struct dt_json *j)
{
	dt_json_close(j, ']');
}

/* Length of a valid UTF-8 sequence at s, or 0. */
static int dt_utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	if (!n || s[0] >= 0xf5)
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && s[0] == 0xe0 && s[1] < 0xa0)
		return 0; /* overlong */
	if (n == 3 && s[0] == 0xed && s[1] >= 0xa0)
		return 0; /* surrogate */
	if (n == 4 && s[0] == 0xf0 && s[1] < 0x90)
		return 0;
	if (n == 4 && s[0] == 0xf4 && s[1] >= 0x90)
		return 0;
	return n;
}

void dt_json_escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	const unsigned char *run = s; /* bytes that need no escaping go out in one write */
	while (*s) {
		unsigned char c = *s;
		int n = c >= 0x20 && c != 0x7f && c != '"' && c != '\\' ? dt_utf8_len(s) : 0;
		/* U+0080..U+009F are valid UTF-8 but C1 controls (CSI, NEL): a
		 * consumer printing the value raw would act on them */
		int c1 = n == 2 && c == 0xc2 && s[1] < 0xa0;
		/* U+202A..U+202E, U+2066..U+2069: bidi overrides that reorder
		 * the text a consumer shows after them */
		int bidi = n == 3 && c == 0xe2 &&
		           ((s[1] == 0x80 && s[2] >= 0xaa && s[2] <= 0xae) ||
		            (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9));
		if (n > 0 && !c1 && !bidi) {
			s += n;
			continue;
		}
		if (s > run)
			fwrite(run, 1, (size_t)(s - run), f);
		if (c1) {
			fprintf(f, "\\u%04x", s[1]);
			s++;
		} else if (bidi) {
			fprintf(f, "\\u%04x", 0x2000 | ((s[1] & 0x3f) << 6) | (s[2] & 0x3f));
			s += 2;
		} else if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else {
			/* a control character, or a byte that is not valid UTF-8 */
			fprintf(f, "\\u%04x", c);
		}
		run = ++s;
	}
	if (s > run)
		fwrite(run, 1, (size_t)(s - run), f);
}

void dt_json_key(struct dt_json *j, const char *k)
{
	dt_json_sep(j);
	fputc('"', j->out);
	dt_json_escape(j->out, k);
	fputs(j->pretty ? "\": " : "\":", j->out);
	j->first[j->depth] = 2;
}

void dt_json_str(struct dt_json *j, const char *s)
{
	if (!s) {
		dt_json_null(j);
		return;
	}
	dt_json_sep(j);
	fputc('"', j->out);
	dt_json_escape(j->out, s);
	fputc('"', j->out);
}

void dt_json_int(struct dt_json *j, int64_t v)
{
	dt_json_sep(j);
	fprintf(j->out, "%" PRId64, v);
}

void dt_json_uint(struct dt_json *j, uint64_t v)
{
	dt_json_sep(j);
	fprintf(j->out, "%" PRIu64, v);
}

void dt_json_bool(struct dt_json *j, int v)
{
	dt_json_sep(j);
	fputs(v ? "true" : "false", j->out);
}

void dt_json_null(struct dt_json *j)
{
	dt_json_sep(j);
	fputs("null", j->out);
}

void dt_json_double(struct dt_json *j, double v)
{
	dt_json_sep(j);
	if (isfinite(v))
		fprintf(j->out, "%.6g", v);
	else
		fputs("null", j->out);
}

void dt_json_kstr(struct dt_json *j, const char *k, const char *s)
{
	dt_json_key(j, k);
	dt_json_str(j, s);
}

void dt_json_kint(struct dt_json *j, const char *k, int64_t v)
{
	dt_json_key(j, k);
	dt_json_int(j, v);
}

void dt_json_kuint(struct dt_json *j, const char *k, uint64_t v)
{
	dt_json_key(j, k);
	dt_json_uint(j, v);
}

void dt_json_kbool(struct dt_json *j, const char *k, int v)
{
	dt_json_key(j, k);
	dt_json_bool(j, v);
}

void dt_json_knull(struct dt_json *j, const char *k)
{
	dt_json_key(j, k);
	dt_json_null(j);
}

void dt_json_kdouble(struct dt_json *j, const char *k, double v)
{
	dt_json_key(j, k);
	dt_json_double(j, v);
}
