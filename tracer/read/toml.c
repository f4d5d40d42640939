// SPDX-License-Identifier: MIT
/*
 * Reader for the subset of TOML 1.0 used by Codex's config.toml; see toml.h
 * for what is accepted and what is refused.
 *
 * The input is validated as a whole (UTF-8, no control characters) before
 * parsing, so the parser proper only has to bounds-check against the end
 * pointer and never looks at a byte it has not proven to be there.
 */
#include "toml.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safeopen.h"

/*
 * TOML forbids reopening or extending a table depending on how it came to
 * exist. The public struct has no room for that, but a table never uses its
 * integer or boolean fields, so they carry a table id (for the key index)
 * and the origin flags while parsing, and are zeroed before returning.
 */
#define table_id(t) ((t)->i)
#define table_origin(t) ((t)->b)

enum table_origin {
	TABLE_IMPLICIT = 0, /* only named as a prefix of a [header] */
	TABLE_HEADER = 1,   /* has had its own [header] */
	TABLE_DOTTED = 2,   /* created by a dotted key: a.b = 1 */
	TABLE_INLINE = 4,   /* written as { ... }, closed to additions */
};

/*
 * Duplicate-key checks would be quadratic with a linear scan, and a 4 MiB
 * file can hold hundreds of thousands of keys, so the parser keeps one
 * hash index over all tables, keyed by (table id, key). It stores entry
 * positions rather than pointers because table arrays move on realloc.
 */
struct key_slot {
	uint64_t hash;
	uint32_t table; /* 0 marks an empty slot; ids start at 1 */
	uint32_t entry;
};

struct key_index {
	struct key_slot *slots;
	size_t cap; /* power of two, or 0 */
	size_t used;
};

struct parser {
	const char *cur;
	const char *end;
	int line;
	char *err;
	size_t errlen;
	bool failed;
	uint32_t last_table_id;
	struct key_index index;
};

struct strbuf {
	char *data;
	size_t len;
	size_t cap;
};

struct key_path {
	char *parts[TOML_MAX_DEPTH];
	int n;
};

/* ---- errors ---------------------------------------------------------- */

static void vreport(struct parser *p, int line, const char *fmt, va_list ap)
{
	int used = 0;

	/* The first error is the one that explains the input; later ones are
	 * consequences of unwinding. */
	if (p->failed)
		return;
	p->failed = true;
	if (!p->err || !p->errlen)
		return;
	if (line > 0)
		used = snprintf(p->err, p->errlen, "line %d: ", line);
	if (used >= 0 && (size_t)used < p->errlen)
		vsnprintf(p->err + used, p->errlen - used, fmt, ap);
}

__attribute__((format(printf, 3, 4))) static bool fail_at(struct parser *p, int line,
                                                          const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(p, line, fmt, ap);
	va_end(ap);
	return false;
}

__attribute__((format(printf, 2, 3))) static bool fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(p, p->line, fmt, ap);
	va_end(ap);
	return false;
}

static bool fail_oom(struct parser *p)
{
	return fail_at(p, 0, "out of memory");
}

/*
 * Keys come from the file and may hold escapes such as "\u001b", which must
 * not reach a terminal through an error message; long ones are shortened
 * at a character boundary so the message stays valid UTF-8.
 */
#define SHOWN_KEY_MAX 48
static const char *shown_key(const char *key, char buf[SHOWN_KEY_MAX + 4])
{
	size_t len = strlen(key);
	size_t keep = len, i;

	if (len > SHOWN_KEY_MAX) {
		keep = SHOWN_KEY_MAX;
		while (keep > 0 && ((unsigned char)key[keep] & 0xC0) == 0x80)
			keep--;
	}
	for (i = 0; i < keep; i++) {
		unsigned char c = key[i];

		buf[i] = (c < 0x20 || c == 0x7F) ? '?' : (char)c;
	}
	if (keep < len) {
		memcpy(buf + keep, "...", 3);
		keep += 3;
	}
	buf[keep] = '\0';
	return buf;
}

static const char *shown_char(int c, char buf[16])
{
	if (c < 0)
		return "end of input";
	if (c == '\n' || c == '\r')
		return "end of line";
	if (c > 0x20 && c < 0x7F)
		snprintf(buf, 16, "'%c'", c);
	else if (c == ' ')
		return "a space";
	else
		snprintf(buf, 16, "byte 0x%02X", (unsigned)c);
	return buf;
}

/* ---- input scanning --------------------------------------------------- */

static int peek(const struct parser *p)
{
	return p->cur < p->end ? (unsigned char)*p->cur : -1;
}

static int peek_at(const struct parser *p, size_t off)
{
	return (size_t)(p->end - p->cur) > off ? (unsigned char)p->cur[off] : -1;
}

static bool looking_at(const struct parser *p, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(p->end - p->cur) >= n && !memcmp(p->cur, s, n);
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_bare_key_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) || c == '_' ||
	       c == '-';
}

static void skip_ws(struct parser *p)
{
	while (p->cur < p->end && (*p->cur == ' ' || *p->cur == '\t'))
		p->cur++;
}

static bool at_newline(const struct parser *p)
{
	int c = peek(p);

	return c == '\n' || (c == '\r' && peek_at(p, 1) == '\n');
}

static bool eat_newline(struct parser *p)
{
	if (peek(p) == '\r' && peek_at(p, 1) == '\n')
		p->cur++;
	if (peek(p) != '\n')
		return false;
	p->cur++;
	p->line++;
	return true;
}

static void skip_comment(struct parser *p)
{
	if (peek(p) != '#')
		return;
	while (p->cur < p->end && *p->cur != '\n' && *p->cur != '\r')
		p->cur++;
}

/* Whitespace, comments and newlines: what may separate statements and
 * array items. */
static void skip_blank(struct parser *p)
{
	do {
		skip_ws(p);
		skip_comment(p);
	} while (eat_newline(p));
}

static bool expect_line_end(struct parser *p, const char *after)
{
	char cbuf[16];

	skip_ws(p);
	skip_comment(p);
	if (peek(p) < 0 || eat_newline(p))
		return true;
	return fail(p, "expected end of line after %s, found %s", after, shown_char(peek(p), cbuf));
}

/* Length of the UTF-8 sequence at s, or 0 if it is not well-formed
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_sequence_length(const unsigned char *s, size_t avail)
{
	unsigned char lo = 0x80, hi = 0xBF;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		len = 2;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		len = 3;
		if (s[0] == 0xE0)
			lo = 0xA0;
		else if (s[0] == 0xED)
			hi = 0x9F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		len = 4;
		if (s[0] == 0xF0)
			lo = 0x90;
		else if (s[0] == 0xF4)
			hi = 0x8F;
	} else {
		return 0;
	}
	if (avail < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

int toml_utf8_ok(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t avail = strlen(s);

	while (avail) {
		size_t n = utf8_sequence_length(u, avail);

		if (!n)
			return 0;
		u += n;
		avail -= n;
	}
	return 1;
}

/*
 * TOML allows no raw control characters anywhere except tab and line
 * breaks, and requires UTF-8; checking both once up front means the
 * string scanners can copy bytes through without re-validating them.
 */
static bool validate_input(struct parser *p)
{
	const unsigned char *s = (const unsigned char *)p->cur;
	size_t len = p->end - p->cur, i = 0;
	int line = 1;

	while (i < len) {
		unsigned char c = s[i];
		size_t seq;

		if (c == '\n') {
			line++;
			i++;
			continue;
		}
		if (c == '\r') {
			if (i + 1 < len && s[i + 1] == '\n') {
				i++;
				continue;
			}
			return fail_at(p, line, "carriage return not followed by a newline");
		}
		if ((c < 0x20 && c != '\t') || c == 0x7F)
			return fail_at(
			    p, line,
			    "control character U+%04X is not allowed (inside strings, escape it)",
			    c);
		seq = utf8_sequence_length(s + i, len - i);
		if (!seq)
			return fail_at(p, line, "invalid UTF-8");
		i += seq;
	}
	return true;
}

/* ---- strings ---------------------------------------------------------- */

static bool sb_put(struct parser *p, struct strbuf *sb, const char *s, size_t n)
{
	if (sb->cap - sb->len <= n) {
		size_t cap = sb->cap ? sb->cap * 2 : 32;
		char *data;

		/* Always leave room for the terminator sb_take() writes. */
		while (cap - sb->len <= n)
			cap *= 2;
		data = realloc(sb->data, cap);
		if (!data)
			return fail_oom(p);
		sb->data = data;
		sb->cap = cap;
	}
	memcpy(sb->data + sb->len, s, n);
	sb->len += n;
	return true;
}

static bool sb_putc(struct parser *p, struct strbuf *sb, char c)
{
	return sb_put(p, sb, &c, 1);
}

static char *sb_take(struct parser *p, struct strbuf *sb)
{
	char *s;

	if (!sb->data && !sb_put(p, sb, "", 0))
		return NULL;
	s = sb->data;
	s[sb->len] = '\0';
	sb->data = NULL;
	sb->len = sb->cap = 0;
	return s;
}

static void sb_free(struct strbuf *sb)
{
	free(sb->data);
	sb->data = NULL;
	sb->len = sb->cap = 0;
}

static bool put_utf8(struct parser *p, struct strbuf *sb, uint32_t cp)
{
	char out[4];
	size_t n;

	if (cp < 0x80) {
		out[0] = cp;
		n = 1;
	} else if (cp < 0x800) {
		out[0] = 0xC0 | (cp >> 6);
		out[1] = 0x80 | (cp & 0x3F);
		n = 2;
	} else if (cp < 0x10000) {
		out[0] = 0xE0 | (cp >> 12);
		out[1] = 0x80 | ((cp >> 6) & 0x3F);
		out[2] = 0x80 | (cp & 0x3F);
		n = 3;
	} else {
		out[0] = 0xF0 | (cp >> 18);
		out[1] = 0x80 | ((cp >> 12) & 0x3F);
		out[2] = 0x80 | ((cp >> 6) & 0x3F);
		out[3] = 0x80 | (cp & 0x3F);
		n = 4;
	}
	return sb_put(p, sb, out, n);
}

static int hex_value(int c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool parse_unicode_escape(struct parser *p, struct strbuf *sb, char kind, int digits)
{
	uint32_t cp = 0;
	int i;

	for (i = 0; i < digits; i++) {
		int h = hex_value(peek(p));

		if (h < 0)
			return fail(p, "\\%c escape needs exactly %d hexadecimal digits", kind,
			            digits);
		cp = cp * 16 + (uint32_t)h;
		p->cur++;
	}
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return fail(p, "\\%c%0*X is not a Unicode scalar value", kind, digits, cp);
	/* Values are handed out as C strings; an embedded NUL would silently
	 * cut them short, which for a path is worse than refusing. */
	if (cp == 0)
		return fail(p, "\\%c escape of U+0000 is not supported", kind);
	return put_utf8(p, sb, cp);
}

/* p->cur is just past the backslash. */
static bool parse_escape(struct parser *p, struct strbuf *sb)
{
	char cbuf[16];
	int c = peek(p);
	char plain;

	switch (c) {
	case 'b':
		plain = '\b';
		break;
	case 't':
		plain = '\t';
		break;
	case 'n':
		plain = '\n';
		break;
	case 'f':
		plain = '\f';
		break;
	case 'r':
		plain = '\r';
		break;
	case '"':
		plain = '"';
		break;
	case '\\':
		plain = '\\';
		break;
	case 'u':
		p->cur++;
		return parse_unicode_escape(p, sb, 'u', 4);
	case 'U':
		p->cur++;
		return parse_unicode_escape(p, sb, 'U', 8);
	default:
		return fail(p, "invalid escape sequence: backslash followed by %s",
		            shown_char(c, cbuf));
	}
	p->cur++;
	return sb_putc(p, sb, plain);
}

/* "...": p->cur is on the opening quote. */
static bool parse_basic_string(struct parser *p, struct strbuf *sb)
{
	p->cur++;
	for (;;) {
		int c = peek(p);

		if (c < 0 || c == '\n' || c == '\r')
			return fail(p, "unterminated string");
		p->cur++;
		if (c == '"')
			return true;
		if (c == '\\') {
			if (!parse_escape(p, sb))
				return false;
		} else if (!sb_putc(p, sb, (char)c)) {
			return false;
		}
	}
}

/* '...': p->cur is on the opening quote. */
static bool parse_literal_string(struct parser *p, struct strbuf *sb)
{
	const char *start = ++p->cur;

	while (p->cur < p->end && *p->cur != '\'') {
		if (*p->cur == '\n' || *p->cur == '\r')
			return fail(p, "unterminated string");
		p->cur++;
	}
	if (p->cur >= p->end)
		return fail(p, "unterminated string");
	if (!sb_put(p, sb, start, p->cur - start))
		return false;
	p->cur++;
	return true;
}

/*
 * A backslash at the end of a line in a """ string swallows the line break
 * and all whitespace after it. p->cur is just past the backslash; returns
 * false, consuming nothing, if this backslash is not of that kind.
 */
static bool skip_line_ending_backslash(struct parser *p)
{
	const char *save = p->cur;
	int save_line = p->line;

	skip_ws(p);
	if (!eat_newline(p)) {
		p->cur = save;
		p->line = save_line;
		return false;
	}
	for (;;) {
		skip_ws(p);
		if (!eat_newline(p))
			return true;
	}
}

/*
 * """...""" and '''...''': p->cur is on the opening delimiter. Up to two
 * quotes may sit right before the closing delimiter and belong to the
 * content, which is why a run of quotes is measured as a whole.
 */
static bool parse_multiline_string(struct parser *p, struct strbuf *sb, char quote)
{
	int start_line = p->line;

	p->cur += 3;
	/* A line break right after the opening delimiter is not content. */
	eat_newline(p);
	for (;;) {
		int c = peek(p);

		if (c < 0)
			return fail_at(p, start_line, "unterminated multi-line string");
		if (c == quote) {
			size_t run = 0;

			while (peek_at(p, run) == quote)
				run++;
			if (run > 5)
				return fail(p, "too many quotes in a row in a multi-line string");
			if (run >= 3) {
				p->cur += run;
				return sb_put(p, sb, p->cur - run, run - 3);
			}
			if (!sb_put(p, sb, p->cur, run))
				return false;
			p->cur += run;
		} else if (c == '\n' || c == '\r') {
			/* CRLF files yield the same value as LF ones. */
			eat_newline(p);
			if (!sb_putc(p, sb, '\n'))
				return false;
		} else if (c == '\\' && quote == '"') {
			p->cur++;
			if (!skip_line_ending_backslash(p) && !parse_escape(p, sb))
				return false;
		} else {
			p->cur++;
			if (!sb_putc(p, sb, (char)c))
				return false;
		}
	}
}

static bool parse_string(struct parser *p, struct strbuf *sb)
{
	if (looking_at(p, "\"\"\""))
		return parse_multiline_string(p, sb, '"');
	if (looking_at(p, "'''"))
		return parse_multiline_string(p, sb, '\'');
	if (peek(p) == '"')
		return parse_basic_string(p, sb);
	return parse_literal_string(p, sb);
}

/* ---- values and tables ------------------------------------------------ */

static void value_clear(struct toml_value *v)
{
	size_t k;

	switch (v->type) {
	case TOML_STRING:
		free(v->str);
		break;
	case TOML_ARRAY:
		for (k = 0; k < v->n; k++)
			value_clear(&v->items[k]);
		free(v->items);
		break;
	case TOML_TABLE:
		for (k = 0; k < v->n; k++) {
			free(v->keys[k]);
			value_clear(&v->vals[k]);
		}
		free(v->keys);
		free(v->vals);
		break;
	case TOML_INT:
	case TOML_BOOL:
	case TOML_FLOAT:
		break;
	}
	memset(v, 0, sizeof(*v));
}

/* Arrays and tables have no capacity field, so capacity is implied by the
 * count: 4, 8, 16, ... and a buffer is full exactly when n reaches one. */
static bool buffer_full(size_t n)
{
	return n == 0 || (n >= 4 && (n & (n - 1)) == 0);
}

static size_t grown_capacity(size_t n)
{
	return n ? n * 2 : 4;
}

static bool array_push(struct parser *p, struct toml_value *arr, struct toml_value *item)
{
	if (buffer_full(arr->n)) {
		struct toml_value *items;

		items = realloc(arr->items, grown_capacity(arr->n) * sizeof(*items));
		if (!items)
			return fail_oom(p);
		arr->items = items;
	}
	arr->items[arr->n++] = *item;
	return true;
}

static void table_init(struct parser *p, struct toml_value *t, int line, int origin)
{
	memset(t, 0, sizeof(*t));
	t->type = TOML_TABLE;
	t->line = line;
	table_id(t) = ++p->last_table_id;
	table_origin(t) = origin;
}

static uint64_t key_hash(uint32_t table, const char *key)
{
	uint64_t h = 0xcbf29ce484222325ull ^ table;

	for (; *key; key++) {
		h ^= (unsigned char)*key;
		h *= 0x100000001b3ull;
	}
	/* FNV leaves the low bits, which pick the slot, poorly mixed. */
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return h;
}

static struct toml_value *table_find(const struct parser *p, const struct toml_value *t,
                                     const char *key)
{
	const struct key_index *ix = &p->index;
	uint32_t id = (uint32_t)table_id(t);
	uint64_t h;
	size_t i;

	if (!ix->cap)
		return NULL;
	h = key_hash(id, key);
	for (i = h & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
		const struct key_slot *s = &ix->slots[i];

		if (!s->table)
			return NULL;
		if (s->table == id && s->hash == h && !strcmp(t->keys[s->entry], key))
			return &t->vals[s->entry];
	}
}

static bool index_add(struct parser *p, uint32_t table, uint32_t entry, uint64_t h)
{
	struct key_index *ix = &p->index;
	size_t i;

	/* Kept at most half full so probe runs stay short. */
	if ((ix->used + 1) * 2 > ix->cap) {
		size_t cap = ix->cap ? ix->cap * 2 : 64;
		struct key_slot *slots = calloc(cap, sizeof(*slots));
		size_t k;

		if (!slots)
			return fail_oom(p);
		for (k = 0; k < ix->cap; k++) {
			if (!ix->slots[k].table)
				continue;
			for (i = ix->slots[k].hash & (cap - 1); slots[i].table;
			     i = (i + 1) & (cap - 1))
				;
			slots[i] = ix->slots[k];
		}
		free(ix->slots);
		ix->slots = slots;
		ix->cap = cap;
	}
	for (i = h & (ix->cap - 1); ix->slots[i].table; i = (i + 1) & (ix->cap - 1))
		;
	ix->slots[i].hash = h;
	ix->slots[i].table = table;
	ix->slots[i].entry = entry;
	ix->used++;
	return true;
}

/*
 * Appends key (ownership taken, freed on failure) to table t and returns
 * its zeroed value slot. The caller has already checked that the key is
 * new. The returned pointer is only good until t gains another entry.
 */
static struct toml_value *table_add(struct parser *p, struct toml_value *t, char *key)
{
	uint32_t id = (uint32_t)table_id(t);
	struct toml_value *slot;

	if (buffer_full(t->n)) {
		size_t cap = grown_capacity(t->n);
		char **keys = realloc(t->keys, cap * sizeof(*keys));
		struct toml_value *vals;

		if (keys)
			t->keys = keys;
		vals = keys ? realloc(t->vals, cap * sizeof(*vals)) : NULL;
		if (!vals) {
			free(key);
			fail_oom(p);
			return NULL;
		}
		t->vals = vals;
	}
	if (!index_add(p, id, (uint32_t)t->n, key_hash(id, key))) {
		free(key);
		return NULL;
	}
	t->keys[t->n] = key;
	slot = &t->vals[t->n++];
	memset(slot, 0, sizeof(*slot));
	return slot;
}

static const char *type_name(enum toml_type type)
{
	switch (type) {
	case TOML_STRING:
		return "a string";
	case TOML_INT:
		return "an integer";
	case TOML_BOOL:
		return "a boolean";
	case TOML_ARRAY:
		return "an array";
	case TOML_TABLE:
		return "a table";
	case TOML_FLOAT:
		return "a float";
	}
	return "a value";
}

static bool check_depth(struct parser *p, int depth)
{
	if (depth > TOML_MAX_DEPTH)
		return fail(p, "nesting deeper than %d levels is not supported", TOML_MAX_DEPTH);
	return true;
}

/* ---- keys ------------------------------------------------------------- */

static void key_path_free(struct key_path *k)
{
	int i;

	for (i = 0; i < k->n; i++)
		free(k->parts[i]);
	k->n = 0;
}

static bool parse_simple_key(struct parser *p, char **out)
{
	struct strbuf sb = {0};
	char cbuf[16];
	int c = peek(p);

	if (c == '"' || c == '\'') {
		if (looking_at(p, "\"\"\"") || looking_at(p, "'''"))
			return fail(p, "a multi-line string cannot be a key");
		if (!(c == '"' ? parse_basic_string(p, &sb) : parse_literal_string(p, &sb))) {
			sb_free(&sb);
			return false;
		}
	} else if (is_bare_key_char(c)) {
		const char *start = p->cur;

		while (is_bare_key_char(peek(p)))
			p->cur++;
		if (!sb_put(p, &sb, start, p->cur - start))
			return false;
	} else {
		return fail(p, "expected a key, found %s", shown_char(c, cbuf));
	}
	*out = sb_take(p, &sb);
	return *out != NULL;
}

/* key, or key.key.key with optional whitespace around the dots. On failure
 * nothing is left for the caller to free. */
static bool parse_key(struct parser *p, struct key_path *k)
{
	k->n = 0;
	for (;;) {
		skip_ws(p);
		if (k->n == TOML_MAX_DEPTH) {
			key_path_free(k);
			return fail(p, "key has more than %d dotted parts", TOML_MAX_DEPTH);
		}
		if (!parse_simple_key(p, &k->parts[k->n])) {
			key_path_free(k);
			return false;
		}
		k->n++;
		skip_ws(p);
		if (peek(p) != '.')
			return true;
		p->cur++;
	}
}

/* ---- values ----------------------------------------------------------- */

static bool parse_value(struct parser *p, struct toml_value *out, int depth);
static bool parse_keyval(struct parser *p, struct toml_value *table, int depth);

static bool parse_array(struct parser *p, struct toml_value *arr, int depth)
{
	int open_line = p->line;
	char cbuf[16];

	arr->type = TOML_ARRAY;
	arr->line = open_line;
	p->cur++;
	for (;;) {
		struct toml_value item = {0};
		int c;

		skip_blank(p);
		c = peek(p);
		if (c < 0)
			goto unterminated;
		if (c == ']')
			break;
		if (!parse_value(p, &item, depth + 1))
			goto failed;
		if (!array_push(p, arr, &item)) {
			value_clear(&item);
			goto failed;
		}
		skip_blank(p);
		c = peek(p);
		if (c == ',') {
			p->cur++;
			continue;
		}
		if (c == ']')
			break;
		if (c < 0)
			goto unterminated;
		fail(p, "expected ',' or ']' after array item, found %s", shown_char(c, cbuf));
		goto failed;
	}
	p->cur++;
	return true;

unterminated:
	fail_at(p, open_line, "unterminated array");
failed:
	value_clear(arr);
	return false;
}

/* TOML 1.0 keeps inline tables on one line; say so rather than report a
 * missing key or value, which is what a newline would otherwise look like. */
static bool inline_table_ws(struct parser *p)
{
	skip_ws(p);
	if (at_newline(p) || peek(p) == '#')
		return fail(p, "an inline table must be written on a single line");
	return true;
}

static bool parse_inline_table(struct parser *p, struct toml_value *t, int depth)
{
	int open_line = p->line;
	char cbuf[16];

	table_init(p, t, open_line, TABLE_IMPLICIT);
	p->cur++;
	if (!inline_table_ws(p))
		goto failed;
	while (peek(p) != '}') {
		int c;

		if (!parse_keyval(p, t, depth) || !inline_table_ws(p))
			goto failed;
		c = peek(p);
		if (c == '}')
			break;
		if (c != ',') {
			if (c < 0)
				fail_at(p, open_line, "unterminated inline table");
			else
				fail(p, "expected ',' or '}' in inline table, found %s",
				     shown_char(c, cbuf));
			goto failed;
		}
		p->cur++;
		if (!inline_table_ws(p))
			goto failed;
		if (peek(p) == '}') {
			fail(p, "trailing comma in an inline table is not allowed");
			goto failed;
		}
	}
	p->cur++;
	table_origin(t) = TABLE_INLINE;
	return true;

failed:
	value_clear(t);
	return false;
}

enum decimal_status {
	DECIMAL_OK,
	DECIMAL_NOT_INTEGER,
	DECIMAL_LEADING_ZERO,
	DECIMAL_BAD_UNDERSCORE,
	DECIMAL_OUT_OF_RANGE,
};

static enum decimal_status parse_decimal(const char *s, size_t len, long long *out)
{
	unsigned long long magnitude = 0, limit = LLONG_MAX;
	bool negative = false, after_underscore = false;
	size_t i = 0, k;

	if (len && (s[0] == '+' || s[0] == '-')) {
		negative = s[0] == '-';
		i = 1;
	}
	if (i == len)
		return DECIMAL_NOT_INTEGER;
	for (k = i; k < len; k++)
		if (!is_digit(s[k]) && s[k] != '_')
			return DECIMAL_NOT_INTEGER;
	if (s[i] == '_' || s[len - 1] == '_')
		return DECIMAL_BAD_UNDERSCORE;
	if (s[i] == '0' && len - i > 1)
		return DECIMAL_LEADING_ZERO;
	if (negative)
		limit = (unsigned long long)LLONG_MAX + 1;
	for (k = i; k < len; k++) {
		unsigned digit;

		if (s[k] == '_') {
			if (after_underscore)
				return DECIMAL_BAD_UNDERSCORE;
			after_underscore = true;
			continue;
		}
		after_underscore = false;
		digit = s[k] - '0';
		if (magnitude > (limit - digit) / 10)
			return DECIMAL_OUT_OF_RANGE;
		magnitude = magnitude * 10 + digit;
	}
	if (negative)
		*out =
		    magnitude > (unsigned long long)LLONG_MAX ? LLONG_MIN : -(long long)magnitude;
	else
		*out = (long long)magnitude;
	return DECIMAL_OK;
}

static bool token_is(const char *s, size_t len, const char *word)
{
	return len == strlen(word) && !memcmp(s, word, len);
}

static bool looks_like_date_or_time(const char *s, size_t len)
{
	if (len >= 5 && is_digit(s[0]) && is_digit(s[1]) && is_digit(s[2]) && is_digit(s[3]) &&
	    s[4] == '-')
		return true;
	return len >= 3 && is_digit(s[0]) && is_digit(s[1]) && s[2] == ':';
}

static bool looks_like_float(const char *s, size_t len)
{
	size_t i = 0;

	if (len && (s[0] == '+' || s[0] == '-'))
		i = 1;
	if (token_is(s + i, len - i, "inf") || token_is(s + i, len - i, "nan"))
		return true;
	if (i == len || !is_digit(s[i]))
		return false;
	for (; i < len; i++)
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
			return true;
	return false;
}

/* TOML floats: [+-] int [. digits] [eE [+-] digits], or inf/nan; '_' only
 * between digits. Checked here, converted by strtod. */
static bool parse_float(const char *s, size_t len, double *out)
{
	char buf[128];
	size_t i = 0, o = 0;
	if (len >= sizeof(buf))
		return false;
	if (s[i] == '+' || s[i] == '-')
		buf[o++] = s[i++];
	if (token_is(s + i, len - i, "inf") || token_is(s + i, len - i, "nan")) {
		*out = s[i] == 'i' ? (s[0] == '-' ? -__builtin_inf() : __builtin_inf())
		                   : __builtin_nan("");
		return true;
	}
	int digits = 0, seen_dot = 0, seen_exp = 0, exp_digits = 0, frac_digits = 0;
	if (len - i >= 2 && s[i] == '0' && is_digit(s[i + 1]))
		return false; /* leading zero */
	for (; i < len; i++) {
		char c = s[i];
		if (is_digit(c)) {
			if (seen_exp)
				exp_digits++;
			else if (seen_dot)
				frac_digits++;
			else
				digits++;
			buf[o++] = c;
		} else if (c == '_') {
			if (i == 0 || i + 1 >= len || !is_digit(s[i - 1]) || !is_digit(s[i + 1]))
				return false;
		} else if (c == '.' && !seen_dot && !seen_exp && digits) {
			if (i + 1 >= len || !is_digit(s[i + 1]))
				return false;
			seen_dot = 1;
			buf[o++] = c;
		} else if ((c == 'e' || c == 'E') && !seen_exp && digits &&
		           (!seen_dot || frac_digits)) {
			seen_exp = 1;
			buf[o++] = 'e';
			if (i + 1 < len && (s[i + 1] == '+' || s[i + 1] == '-'))
				buf[o++] = s[++i];
		} else {
			return false;
		}
	}
	if (!digits || (seen_exp && !exp_digits))
		return false;
	buf[o] = 0;
	char *end;
	*out = strtod(buf, &end);
	return *end == 0;
}

static bool looks_like_radix_integer(const char *s, size_t len)
{
	size_t i = 0;

	if (len && (s[0] == '+' || s[0] == '-'))
		i = 1;
	return len - i >= 2 && s[i] == '0' &&
	       (s[i + 1] == 'x' || s[i + 1] == 'o' || s[i + 1] == 'b');
}

static bool is_bare_value_char(int c)
{
	return is_bare_key_char(c) || c == '+' || c == '.' || c == ':';
}

/* Booleans and numbers, plus everything else that is not quoted or
 * bracketed, so that unsupported TOML gets a precise complaint. */
static bool parse_bare_value(struct parser *p, struct toml_value *out)
{
	const char *s = p->cur;
	char cbuf[16];
	size_t len;
	int shown;

	while (is_bare_value_char(peek(p)))
		p->cur++;
	len = p->cur - s;
	if (!len)
		return fail(p, "expected a value, found %s", shown_char(peek(p), cbuf));
	if (token_is(s, len, "true") || token_is(s, len, "false")) {
		out->type = TOML_BOOL;
		out->b = s[0] == 't';
		return true;
	}
	switch (parse_decimal(s, len, &out->i)) {
	case DECIMAL_OK:
		out->type = TOML_INT;
		return true;
	case DECIMAL_LEADING_ZERO:
		return fail(p, "invalid integer '%.*s': leading zeros are not allowed",
		            len > 40 ? 40 : (int)len, s);
	case DECIMAL_BAD_UNDERSCORE:
		return fail(p, "invalid integer '%.*s': '_' must sit between digits",
		            len > 40 ? 40 : (int)len, s);
	case DECIMAL_OUT_OF_RANGE:
		return fail(p, "integer '%.*s' does not fit in 64 bits", len > 40 ? 40 : (int)len,
		            s);
	case DECIMAL_NOT_INTEGER:
		break;
	}
	/* Classify on the whole token, quote at most 40 bytes of it. */
	shown = len > 40 ? 40 : (int)len;
	if (looks_like_date_or_time(s, len))
		return fail(p, "unsupported value '%.*s': dates and times are not supported", shown,
		            s);
	if (looks_like_float(s, len)) {
		if (!parse_float(s, len, &out->f))
			return fail(p, "invalid float '%.*s'", shown, s);
		out->type = TOML_FLOAT;
		return true;
	}
	if (looks_like_radix_integer(s, len))
		return fail(p, "unsupported value '%.*s': only decimal integers are supported",
		            shown, s);
	return fail(p, "invalid value '%.*s' (strings must be quoted)", shown, s);
}

/* depth is the nesting level the value would have if it is an array or a
 * table. On failure *out is left empty. */
static bool parse_value(struct parser *p, struct toml_value *out, int depth)
{
	int c = peek(p);

	memset(out, 0, sizeof(*out));
	out->line = p->line;
	if (c == '"' || c == '\'') {
		struct strbuf sb = {0};

		if (!parse_string(p, &sb)) {
			sb_free(&sb);
			return false;
		}
		out->str = sb_take(p, &sb);
		if (!out->str)
			return false;
		out->type = TOML_STRING;
		return true;
	}
	if (c == '[' || c == '{') {
		if (!check_depth(p, depth))
			return false;
		return c == '[' ? parse_array(p, out, depth) : parse_inline_table(p, out, depth);
	}
	return parse_bare_value(p, out);
}

/*
 * key = value into table, which sits at nesting level depth. Dotted keys
 * may only walk through tables that dotted keys created: TOML forbids using
 * them to add to a table that has (or will get) its own [header] or was
 * written inline.
 */
static bool parse_keyval(struct parser *p, struct toml_value *table, int depth)
{
	struct toml_value *t = table, *slot, value;
	char kbuf[SHOWN_KEY_MAX + 4], cbuf[16];
	int line = p->line, i;
	struct key_path k;
	char *last;

	if (!parse_key(p, &k))
		return false;
	if (peek(p) != '=') {
		fail(p, "expected '=' after key, found %s", shown_char(peek(p), cbuf));
		goto failed;
	}
	p->cur++;
	skip_ws(p);
	for (i = 0; i < k.n - 1; i++) {
		struct toml_value *next = table_find(p, t, k.parts[i]);

		if (!next) {
			if (!check_depth(p, depth + 1))
				goto failed;
			next = table_add(p, t, k.parts[i]);
			k.parts[i] = NULL;
			if (!next)
				goto failed;
			table_init(p, next, line, TABLE_DOTTED);
		} else if (next->type != TOML_TABLE) {
			fail_at(p, line, "key '%s' is already %s, not a table",
			        shown_key(k.parts[i], kbuf), type_name(next->type));
			goto failed;
		} else if (table_origin(next) != TABLE_DOTTED) {
			fail_at(p, line,
			        "cannot add keys to table '%s' with a dotted key: it is defined %s",
			        shown_key(k.parts[i], kbuf),
			        table_origin(next) & TABLE_INLINE ? "inline"
			                                          : "by a [table] header");
			goto failed;
		}
		t = next;
		depth++;
	}
	last = k.parts[k.n - 1];
	if (table_find(p, t, last)) {
		fail_at(p, line, "duplicate key '%s'", shown_key(last, kbuf));
		goto failed;
	}
	if (!parse_value(p, &value, depth + 1))
		goto failed;
	k.parts[k.n - 1] = NULL;
	slot = table_add(p, t, last);
	if (!slot) {
		value_clear(&value);
		goto failed;
	}
	*slot = value;
	key_path_free(&k);
	return true;

failed:
	key_path_free(&k);
	return false;
}

/*
 * [a.b.c]: p->cur is on the '['. Prefixes that do not exist yet become
 * implicit tables, which a later [a] may still define; the last part must
 * not already have been defined by a header or by dotted keys.
 */
static bool parse_table_header(struct parser *p, struct toml_value *root,
                               struct toml_value **current, int *current_depth)
{
	char kbuf[SHOWN_KEY_MAX + 4], cbuf[16];
	struct toml_value *t = root;
	int line = p->line, i;
	struct key_path k;

	p->cur++;
	if (peek(p) == '[')
		return fail(p, "arrays of tables ([[...]]) are not supported");
	if (!parse_key(p, &k))
		return false;
	if (peek(p) != ']') {
		fail(p, "expected ']' to close the table header, found %s",
		     shown_char(peek(p), cbuf));
		goto failed;
	}
	p->cur++;
	for (i = 0; i < k.n; i++) {
		struct toml_value *next = table_find(p, t, k.parts[i]);
		bool last = i == k.n - 1;

		if (!next) {
			if (!check_depth(p, i + 1))
				goto failed;
			next = table_add(p, t, k.parts[i]);
			k.parts[i] = NULL;
			if (!next)
				goto failed;
			table_init(p, next, line, last ? TABLE_HEADER : TABLE_IMPLICIT);
		} else if (next->type != TOML_TABLE) {
			fail(p, "key '%s' is already %s, not a table", shown_key(k.parts[i], kbuf),
			     type_name(next->type));
			goto failed;
		} else if (table_origin(next) & TABLE_INLINE) {
			fail(p, "table '%s' is defined inline and cannot be extended",
			     shown_key(k.parts[i], kbuf));
			goto failed;
		} else if (last && (table_origin(next) & TABLE_HEADER)) {
			fail(p, "table '%s' is defined more than once",
			     shown_key(k.parts[i], kbuf));
			goto failed;
		} else if (last && (table_origin(next) & TABLE_DOTTED)) {
			fail(p, "table '%s' was already defined by dotted keys",
			     shown_key(k.parts[i], kbuf));
			goto failed;
		} else if (last) {
			table_origin(next) |= TABLE_HEADER;
		}
		t = next;
	}
	*current = t;
	*current_depth = k.n;
	key_path_free(&k);
	return expect_line_end(p, "table header");

failed:
	key_path_free(&k);
	return false;
}

static bool parse_document(struct parser *p, struct toml_value *root)
{
	struct toml_value *current = root;
	int current_depth = 0;

	if (looking_at(p, "\xEF\xBB\xBF"))
		p->cur += 3;
	for (;;) {
		skip_blank(p);
		if (peek(p) < 0)
			return true;
		if (peek(p) == '[') {
			if (!parse_table_header(p, root, &current, &current_depth))
				return false;
		} else if (!parse_keyval(p, current, current_depth) ||
		           !expect_line_end(p, "value")) {
			return false;
		}
	}
}

/* The bookkeeping in unused table fields must not leak to callers. */
static void scrub(struct toml_value *v)
{
	size_t k;

	if (v->type == TOML_TABLE) {
		v->i = 0;
		v->b = 0;
		for (k = 0; k < v->n; k++)
			scrub(&v->vals[k]);
	} else if (v->type == TOML_ARRAY) {
		for (k = 0; k < v->n; k++)
			scrub(&v->items[k]);
	}
}

static void parser_init(struct parser *p, const char *text, size_t len, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	/* Even empty input gets a real pointer: NULL + 0 is not valid C. */
	p->cur = text ? text : "";
	p->end = p->cur + (text ? len : 0);
	p->line = 1;
	p->err = err;
	p->errlen = errlen;
	if (err && errlen)
		err[0] = '\0';
}

static bool check_size(struct parser *p, size_t len)
{
	if (len > TOML_MAX_INPUT)
		return fail_at(p, 0, "input is larger than %u bytes", TOML_MAX_INPUT);
	return true;
}

/* ---- public API ------------------------------------------------------- */

struct toml_value *toml_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct toml_value *root;
	struct parser p;
	bool ok;

	parser_init(&p, text, len, err, errlen);
	if (!check_size(&p, len) || !validate_input(&p))
		return NULL;
	if (!text && len) {
		fail_at(&p, 0, "no input text");
		return NULL;
	}
	root = malloc(sizeof(*root));
	if (!root) {
		fail_oom(&p);
		return NULL;
	}
	table_init(&p, root, 1, TABLE_HEADER);
	ok = parse_document(&p, root);
	free(p.index.slots);
	if (!ok) {
		toml_free(root);
		return NULL;
	}
	scrub(root);
	return root;
}

struct toml_value *toml_parse_value(const char *text, char *err, size_t errlen)
{
	struct toml_value *value;
	struct parser p;
	char cbuf[16];
	size_t len;
	bool ok;

	parser_init(&p, text, 0, err, errlen);
	if (!text) {
		fail_at(&p, 0, "no input text");
		return NULL;
	}
	len = strnlen(text, (size_t)TOML_MAX_INPUT + 1);
	parser_init(&p, text, len, err, errlen);
	if (!check_size(&p, len) || !validate_input(&p))
		return NULL;
	value = malloc(sizeof(*value));
	if (!value) {
		fail_oom(&p);
		return NULL;
	}
	skip_blank(&p);
	ok = parse_value(&p, value, 1);
	if (ok) {
		skip_blank(&p);
		if (peek(&p) >= 0) {
			ok = fail(&p, "expected end of input after the value, found %s",
			          shown_char(peek(&p), cbuf));
			value_clear(value);
		}
	}
	free(p.index.slots);
	if (!ok) {
		free(value);
		return NULL;
	}
	scrub(value);
	return value;
}

/* Reads a whole file, refusing to hold more than TOML_MAX_INPUT bytes even
 * when the size is unknown up front (pipes, /proc). */
static char *read_file(const char *path, int regular_only, size_t *out_len, char *err,
                       size_t errlen)
{
	size_t len = 0, cap = 64 * 1024;
	const char *why = NULL;
	char *buf = NULL;
	struct stat st;
	int fd, saved;

	/* regular_only: a path the traced program may name or race (a
	 * directory swapped for a link after the caller's stat) is looked at
	 * through O_PATH and only a regular file opened (safeopen.h); opening
	 * a FIFO or a device acts on it. Else O_NONBLOCK: opening a FIFO
	 * nobody writes to returns at once (its reads then see EOF). */
	fd = regular_only ? dt_open_regular(path, &st)
	                  : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1 || (fd >= 0 && fstat(fd, &st) < 0))
		goto io_error;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto io_error;
	}
	if (fd < 0) { /* DT_OPEN_NOT_REGULAR: nothing was opened */
		why = "not a regular file";
		errno = EINVAL;
		goto error;
	}
	if (S_ISREG(st.st_mode)) {
		if ((unsigned long long)st.st_size > TOML_MAX_INPUT) {
			why = "file is larger than 4 MiB";
			errno = EFBIG;
			goto error;
		}
		/* One spare byte so the read that sees EOF has room. */
		cap = (size_t)st.st_size + 1;
	}
	/* a pipe with a writer is read as it fills, blocking as usual */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	for (;;) {
		ssize_t got;

		if (len == cap) {
			char *bigger;

			if (cap > TOML_MAX_INPUT) {
				why = "file is larger than 4 MiB";
				errno = EFBIG;
				goto error;
			}
			cap = cap * 2 > (size_t)TOML_MAX_INPUT + 1 ? (size_t)TOML_MAX_INPUT + 1
			                                           : cap * 2;
			bigger = realloc(buf, cap);
			if (!bigger) {
				errno = ENOMEM;
				goto io_error;
			}
			buf = bigger;
		} else if (!buf) {
			buf = malloc(cap);
			if (!buf) {
				errno = ENOMEM;
				goto io_error;
			}
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto io_error;
		if (got == 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	*out_len = len;
	return buf;

io_error:
	why = strerror(errno);
error:
	saved = errno;
	if (fd >= 0)
		close(fd);
	free(buf);
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", path, why);
	errno = saved;
	return NULL;
}

static struct toml_value *parse_file(const char *path, int regular_only, char *err, size_t errlen)
{
	struct toml_value *root;
	size_t len = 0;
	char *text;

	if (!path) {
		if (err && errlen)
			snprintf(err, errlen, "no path given");
		return NULL;
	}
	text = read_file(path, regular_only, &len, err, errlen);
	if (!text)
		return NULL;
	root = toml_parse(text, len, err, errlen);
	free(text);
	if (!root)
		errno = 0; /* read, but not TOML: tells it apart from an I/O error */
	return root;
}

struct toml_value *toml_parse_file(const char *path, char *err, size_t errlen)
{
	return parse_file(path, 0, err, errlen);
}

struct toml_value *toml_parse_regular_file(const char *path, char *err, size_t errlen)
{
	return parse_file(path, 1, err, errlen);
}

void toml_free(struct toml_value *root)
{
	if (!root)
		return;
	value_clear(root);
	free(root);
}

const struct toml_value *toml_table_get(const struct toml_value *t, const char *key)
{
	size_t k;

	if (!t || !key || t->type != TOML_TABLE)
		return NULL;
	for (k = 0; k < t->n; k++)
		if (!strcmp(t->keys[k], key))
			return &t->vals[k];
	return NULL;
}

const struct toml_value *toml_get(const struct toml_value *table, ...)
{
	const struct toml_value *v = table;
	const char *key;
	va_list ap;

	va_start(ap, table);
	while (v && (key = va_arg(ap, const char *)))
		v = toml_table_get(v, key);
	va_end(ap);
	return v;
}
