/* SPDX-License-Identifier: MIT */
/* The JSON reader (jsonread.h): recursive descent over the whole text. */
#include "jsonread.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 64

struct jparse {
	const char *p, *end, *start;
	char *err;
	size_t cap;
	int failed;
};

__attribute__((format(printf, 2, 3))) static void jfail(struct jparse *j, const char *fmt, ...)
{
	if (j->failed)
		return;
	j->failed = 1;
	int n = snprintf(j->err, j->cap, "at byte %zu: ", (size_t)(j->p - j->start));
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < j->cap)
		vsnprintf(j->err + n, j->cap - (size_t)n, fmt, ap);
	va_end(ap);
}

static void jspace(struct jparse *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int jhex4(struct jparse *j, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = j->p < j->end ? *j->p++ : 0;
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
		             : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
		             : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
		                                    : 16u;
		if (d > 15) {
			jfail(j, "bad \\u escape");
			return -1;
		}
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

static size_t jutf8(unsigned cp, char *o)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A \u escape (after the u), a surrogate pair joined, into o. */
static size_t junicode(struct jparse *j, char *o)
{
	unsigned cp, lo;
	if (jhex4(j, &cp) < 0)
		return 0;
	if (cp >= 0xd800 && cp < 0xdc00 && j->end - j->p >= 6 && j->p[0] == '\\' &&
	    j->p[1] == 'u') {
		j->p += 2;
		if (jhex4(j, &lo) < 0)
			return 0;
		if (lo >= 0xdc00 && lo < 0xe000)
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		else
			j->p -= 6; /* not its pair: an escape of its own */
	}
	/* a surrogate alone is no character: UTF-8 cannot hold it */
	if (cp >= 0xd800 && cp < 0xe000)
		cp = 0xfffd;
	if (!cp) {
		jfail(j, "a string holds \\u0000");
		return 0;
	}
	return jutf8(cp, o);
}

static char jescape(char c)
{
	switch (c) {
	case '"':
	case '\\':
	case '/':
		return c;
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	default:
		return 0;
	}
}

/* A string (at its opening quote): its decoded bytes, NUL-terminated. */
static char *jstring(struct jparse *j)
{
	j->p++;
	/* decoded text is never longer than the source */
	const char *q = j->p;
	while (q < j->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	char *out = malloc((size_t)(q - j->p) + 4), *o = out;
	if (!out) {
		jfail(j, "out of memory");
		return NULL;
	}
	while (!j->failed && j->p < j->end && *j->p != '"') {
		char c = *j->p++;
		if ((unsigned char)c < 0x20) {
			jfail(j, "a control character inside a string");
		} else if (c != '\\') {
			*o++ = c;
		} else if (j->p < j->end && *j->p == 'u') {
			j->p++;
			o += junicode(j, o);
		} else if (j->p < j->end && jescape(*j->p)) {
			*o++ = jescape(*j->p++);
		} else {
			jfail(j, "bad escape");
		}
	}
	if (!j->failed && j->p >= j->end)
		jfail(j, "unterminated string");
	if (j->failed) {
		free(out);
		return NULL;
	}
	j->p++;
	*o = 0;
	return out;
}

static int jvalue(struct jparse *j, struct dt_jv *v, int depth);

static int jpush(struct jparse *j, struct dt_jv *v, char *key)
{
	struct dt_jv *nv = realloc(v->v, (v->n + 1) * sizeof(*nv));
	char **nk = v->type == DT_JV_OBJ ? realloc(v->keys, (v->n + 1) * sizeof(*nk)) : NULL;
	if (nv)
		v->v = nv;
	if (nk)
		v->keys = nk;
	if (!nv || (v->type == DT_JV_OBJ && !nk)) {
		free(key);
		jfail(j, "out of memory");
		return -1;
	}
	memset(&v->v[v->n], 0, sizeof(v->v[0]));
	if (nk)
		v->keys[v->n] = key;
	v->n++;
	return 0;
}

/* The members of an array or object, after its opening bracket. */
static int jmembers(struct jparse *j, struct dt_jv *v, int depth, char close)
{
	j->p++;
	jspace(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		jspace(j);
		if (close == '}') {
			if (j->p >= j->end || *j->p != '"') {
				jfail(j, "expected a key");
				return -1;
			}
			if (!(key = jstring(j)))
				return -1;
			jspace(j);
			if (j->p >= j->end || *j->p != ':') {
				free(key);
				jfail(j, "expected ':'");
				return -1;
			}
			j->p++;
		}
		if (jpush(j, v, key) < 0 || jvalue(j, &v->v[v->n - 1], depth + 1) < 0)
			return -1;
		jspace(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return 0;
		}
		jfail(j, "expected ',' or '%c'", close);
		return -1;
	}
}

static int jword(struct jparse *j, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n))
		return 0;
	j->p += n;
	return 1;
}

static int jnumber(struct jparse *j, struct dt_jv *v)
{
	const char *s = j->p;
	while (j->p < j->end && strchr("+-0123456789.eE", *j->p))
		j->p++;
	if (j->p == s) {
		jfail(j, "unexpected character");
		return -1;
	}
	v->type = DT_JV_NUM;
	v->text = strndup(s, (size_t)(j->p - s));
	char *e;
	strtod(v->text ? v->text : "", &e);
	if (!v->text || *e) {
		jfail(j, "bad number");
		return -1;
	}
	return 0;
}

static int jvalue(struct jparse *j, struct dt_jv *v, int depth)
{
	if (depth > JSON_MAX_DEPTH) {
		jfail(j, "nested deeper than %d", JSON_MAX_DEPTH);
		return -1;
	}
	jspace(j);
	if (j->p >= j->end) {
		jfail(j, "unexpected end");
		return -1;
	}
	switch (*j->p) {
	case '{':
		v->type = DT_JV_OBJ;
		return jmembers(j, v, depth, '}');
	case '[':
		v->type = DT_JV_ARR;
		return jmembers(j, v, depth, ']');
	case '"':
		v->type = DT_JV_STR;
		return (v->text = jstring(j)) ? 0 : -1;
	default:
		break;
	}
	if (jword(j, "true") || jword(j, "false")) {
		v->type = DT_JV_BOOL;
		v->boolean = j->p[-1] == 'e' && j->p[-2] == 'u';
		return 0;
	}
	if (jword(j, "null"))
		return 0;
	return jnumber(j, v);
}

static void jv_clear(struct dt_jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		jv_clear(&v->v[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->v);
	free(v->keys);
	free(v->text);
}

void dt_jv_free(struct dt_jv *v)
{
	if (!v)
		return;
	jv_clear(v);
	free(v);
}

struct dt_jv *dt_jv_parse(const char *text, size_t len, char *err, size_t cap)
{
	struct jparse j = {text, text + len, text, err, cap, 0};
	struct dt_jv *v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, cap, "out of memory");
		return NULL;
	}
	if (jvalue(&j, v, 0) == 0) {
		jspace(&j);
		if (j.p != j.end)
			jfail(&j, "text after the value");
	}
	if (j.failed) {
		dt_jv_free(v);
		return NULL;
	}
	return v;
}

const struct dt_jv *dt_jv_get(const struct dt_jv *o, const char *key)
{
	if (!o || o->type != DT_JV_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->v[i];
	return NULL;
}

const char *dt_jv_str(const struct dt_jv *o, const char *key)
{
	const struct dt_jv *v = dt_jv_get(o, key);
	return v && v->type == DT_JV_STR ? v->text : NULL;
}

int dt_jv_u64(const struct dt_jv *o, const char *key, uint64_t *out)
{
	const struct dt_jv *v = dt_jv_get(o, key);
	if (!v || v->type != DT_JV_NUM || v->text[0] < '0' || v->text[0] > '9')
		return -1;
	char *e;
	errno = 0;
	unsigned long long x = strtoull(v->text, &e, 10);
	if (*e || errno)
		return -1;
	*out = x;
	return 0;
}

double dt_jv_num(const struct dt_jv *o, const char *key)
{
	const struct dt_jv *v = dt_jv_get(o, key);
	double d = v && v->type == DT_JV_NUM ? strtod(v->text, NULL) : 0;
	return isfinite(d) ? d : 0; /* 1e999 reads as inf */
}

long long dt_jv_clamp(const struct dt_jv *o, const char *key, long long lo, long long hi)
{
	double d = dt_jv_num(o, key);
	return d <= (double)lo ? lo : d >= (double)hi ? hi : (long long)d;
}

int dt_jv_true(const struct dt_jv *o, const char *key)
{
	const struct dt_jv *v = dt_jv_get(o, key);
	return v && v->type == DT_JV_BOOL && v->boolean;
}
