/* SPDX-License-Identifier: MIT */
#include "denyrule.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

static const struct {
	const char *name;
	unsigned bits;
} dt_deny_op_names[] = {
    {"create", DT_DENY_CREATE}, {"write", DT_DENY_WRITE}, {"unlink", DT_DENY_UNLINK},
    {"rename", DT_DENY_RENAME}, {"mkdir", DT_DENY_MKDIR}, {"chmod", DT_DENY_CHMOD},
    {"new", DT_DENY_NEW},       {"any", DT_DENY_ANY}, /* "any" last: see dt_deny_ops_name */
};

/* "message\n  RULE\n  ^^^^" with the carets under text[off, off+len). */
static int dt_deny_error(char *err, size_t errlen, const char *text, size_t off, size_t len,
                         const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int dt_deny_error(char *err, size_t errlen, const char *text, size_t off, size_t len,
                         const char *fmt, ...)
{
	if (!err || !errlen)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	size_t used = n < 0 ? 0 : (size_t)n < errlen ? (size_t)n : errlen - 1;
	size_t tl = strlen(text);
	if (tl > 200) /* a huge rule: the message alone */
		return -1;
	if (len == 0)
		len = 1;
	n = snprintf(err + used, errlen - used, "\n  %s\n  ", text);
	used += n < 0 ? 0 : (size_t)n;
	for (size_t i = 0; i < off + len && used + 1 < errlen; i++)
		err[used++] = i < off ? ' ' : '^';
	err[used < errlen ? used : errlen - 1] = 0;
	return -1;
}

static int dt_parse_count(const char *v, uint64_t *out)
{
	if (!*v || *v < '0' || *v > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (*end || errno || x == 0)
		return -1;
	*out = x;
	return 0;
}

static int dt_parse_prob(const char *v, double *out)
{
	if (!*v || !((*v >= '0' && *v <= '9') || *v == '.'))
		return -1;
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (*end || errno || !(x >= 0.0 && x <= 1.0))
		return -1;
	*out = x;
	return 0;
}

/* End of the glob: the first comma outside a bracket expression. */
static size_t dt_glob_end(const char *s)
{
	size_t i = 0;
	while (s[i] && s[i] != ',') {
		if (s[i] == '\\' && s[i + 1]) {
			i += 2;
		} else if (s[i] == '[') {
			size_t j = i + 1;
			if (s[j] == '!' || s[j] == '^')
				j++;
			if (s[j] == ']')
				j++;
			while (s[j] && s[j] != ']')
				j++;
			i = s[j] ? j + 1 : i + 1; /* an unclosed '[' is an ordinary character */
		} else {
			i++;
		}
	}
	return i;
}

/* The op= value val (at column voff of text): ops joined with '+'. 0, or
 * -1 with err set. */
static int dt_deny_parse_ops(const char *text, const char *val, size_t vl, size_t voff,
                             unsigned *out, char *err, size_t errlen)
{
	unsigned ops = 0;
	size_t o = 0;
	while (o <= vl) {
		size_t wl = strcspn(val + o, "+");
		unsigned bits = 0;
		for (size_t k = 0; k < sizeof(dt_deny_op_names) / sizeof(dt_deny_op_names[0]); k++)
			if (strlen(dt_deny_op_names[k].name) == wl &&
			    !strncmp(dt_deny_op_names[k].name, val + o, wl))
				bits = dt_deny_op_names[k].bits;
		if (!bits)
			return dt_deny_error(err, errlen, text, voff + o, wl,
			                     "--deny: unknown op '%.*s' (ops: create, new, "
			                     "write, unlink, rename, mkdir, chmod, any; join "
			                     "several with +)",
			                     (int)wl, val + o);
		ops |= bits;
		o += wl + 1;
	}
	*out = ops;
	return 0;
}

/* p=, nth= or first= (key) with its value val at column voff. 0, or -1
 * with err set. */
static int dt_deny_parse_when(const char *text, const char *key, const char *val, size_t vl,
                              size_t voff, struct dt_deny_rule *out, char *err, size_t errlen)
{
	if (key[0] == 'p') {
		if (dt_parse_prob(val, &out->p) < 0)
			return dt_deny_error(err, errlen, text, voff, vl,
			                     "--deny: p takes a probability from 0 to 1, "
			                     "such as 0.25");
		out->when = DT_DENY_PROB;
	} else {
		if (dt_parse_count(val, &out->n) < 0)
			return dt_deny_error(err, errlen, text, voff, vl,
			                     "--deny: %s takes a whole number from 1", key);
		out->when = key[0] == 'n' ? DT_DENY_NTH : DT_DENY_FIRST;
	}
	return 0;
}

int dt_deny_parse(const char *text, struct dt_deny_rule *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->ops = DT_DENY_ANY;
	out->err = EACCES;
	if (!text || !*text)
		return dt_deny_error(
		    err, errlen, "", 0, 0,
		    "--deny: empty rule; give a glob such as '/srv/board/*.db-journal'");
	size_t gl = dt_glob_end(text);
	if (gl == 0)
		return dt_deny_error(err, errlen, text, 0, 1,
		                     "--deny: no glob before the first comma");
	if (text[0] != '/' && text[0] != '*' && text[0] != '?' && text[0] != '[')
		return dt_deny_error(err, errlen, text, 0, gl,
		                     "--deny: the glob is matched against absolute paths: start it "
		                     "with '/' (or '*')");
	int seen_op = 0, seen_errno = 0, seen_when = 0;
	size_t when_off = 0, when_len = 0, errno_off = 0, errno_len = 0;
	const char *s = text + gl;
	while (*s == ',') {
		s++;
		size_t off = (size_t)(s - text);
		size_t len = strcspn(s, ",");
		const char *eq = memchr(s, '=', len);
		if (!len)
			return dt_deny_error(
			    err, errlen, text, off ? off - 1 : 0, 1,
			    "--deny: empty setting (two commas, or a trailing comma)");
		if (!eq)
			return dt_deny_error(
			    err, errlen, text, off, len,
			    "--deny: '%.*s' is not KEY=VALUE (keys: op, errno, p, nth, first)",
			    (int)len, s);
		size_t kl = (size_t)(eq - s), vl = len - kl - 1;
		char key[16], val[128];
		if (kl >= sizeof(key) || vl >= sizeof(val))
			return dt_deny_error(err, errlen, text, off, len,
			                     "--deny: setting too long");
		memcpy(key, s, kl);
		key[kl] = 0;
		memcpy(val, eq + 1, vl);
		val[vl] = 0;
		size_t voff = off + kl + 1;
		if (!vl)
			return dt_deny_error(err, errlen, text, off, len,
			                     "--deny: '%s' has no value", key);
		if (!strcmp(key, "op")) {
			if (seen_op++)
				return dt_deny_error(err, errlen, text, off, len,
				                     "--deny: op given twice");
			unsigned ops = 0;
			if (dt_deny_parse_ops(text, val, vl, voff, &ops, err, errlen) < 0)
				return -1;
			out->ops = ops;
		} else if (!strcmp(key, "errno")) {
			if (seen_errno++)
				return dt_deny_error(err, errlen, text, off, len,
				                     "--deny: errno given twice");
			int e = dt_errno_parse(val);
			if (e <= 0 || (val[0] >= '0' && val[0] <= '9'))
				return dt_deny_error(
				    err, errlen, text, voff, vl,
				    "--deny: '%s' is not an errno name (EACCES, EPERM, EROFS, "
				    "ENOSPC, EIO, ...)",
				    val);
			out->err = e;
			errno_off = voff;
			errno_len = vl;
		} else if (!strcmp(key, "p") || !strcmp(key, "nth") || !strcmp(key, "first")) {
			if (seen_when++)
				return dt_deny_error(
				    err, errlen, text, off, len,
				    "--deny: p, nth and first exclude each other (first one at "
				    "column %zu)",
				    when_off + 1);
			when_off = off;
			when_len = len;
			if (dt_deny_parse_when(text, key, val, vl, voff, out, err, errlen) < 0)
				return -1;
		} else {
			return dt_deny_error(
			    err, errlen, text, off, kl,
			    "--deny: unknown key '%s' (keys: op, errno, p, nth, first)", key);
		}
		s += len;
	}
	/* a program retries a call that says "try again": refusing every
	 * match would spin it forever */
	if ((out->err == EINTR || out->err == EAGAIN) && out->when != DT_DENY_NTH &&
	    out->when != DT_DENY_FIRST)
		return dt_deny_error(
		    err, errlen, text, errno_off, errno_len,
		    "--deny: errno=%s means \"try again\": a program that retries "
		    "would never get past it; bound the rule with nth=N or first=N",
		    dt_errno_name(out->err));
	/* first=2^64-1 is as unbounded as no bound at all */
	if ((out->err == EINTR || out->err == EAGAIN) && out->when == DT_DENY_FIRST &&
	    out->n > DT_DENY_RETRY_MAX)
		return dt_deny_error(err, errlen, text, when_off, when_len,
		                     "--deny: errno=%s with first=%llu: a program that retries "
		                     "would spin that many times; first= is at most %d here",
		                     dt_errno_name(out->err), (unsigned long long)out->n,
		                     DT_DENY_RETRY_MAX);
	out->text = strdup(text);
	out->glob = strndup(text, gl);
	if (!out->text || !out->glob) {
		dt_deny_rule_free(out);
		return dt_deny_error(err, errlen, "", 0, 0, "--deny: out of memory");
	}
	return 0;
}

void dt_deny_rule_free(struct dt_deny_rule *r)
{
	free(r->text);
	free(r->glob);
	r->text = r->glob = NULL;
}

int dt_deny_add(struct dt_deny_set *s, struct dt_deny_rule *r)
{
	struct dt_deny_rule *v = realloc(s->v, (s->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	s->v = v;
	s->v[s->n++] = *r;
	memset(r, 0, sizeof(*r));
	return 0;
}

void dt_deny_set_free(struct dt_deny_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		dt_deny_rule_free(&s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

unsigned dt_deny_ops(const struct dt_deny_set *s)
{
	unsigned ops = 0;
	for (size_t i = 0; i < s->n; i++)
		ops |= s->v[i].ops;
	return ops;
}

static uint64_t dt_splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int dt_deny_decide(struct dt_deny_set *s, const char *abspath, unsigned ops, int *rule)
{
	if (rule)
		*rule = -1;
	for (size_t i = 0; i < s->n; i++) {
		struct dt_deny_rule *r = &s->v[i];
		if (!(r->ops & ops) || fnmatch(r->glob, abspath, 0) != 0)
			continue;
		if (rule)
			*rule = (int)i;
		uint64_t m = ++r->matches;
		int fire = 0;
		switch (r->when) {
		case DT_DENY_ALWAYS:
			fire = 1;
			break;
		case DT_DENY_NTH:
			fire = m == r->n;
			break;
		case DT_DENY_FIRST:
			fire = m <= r->n;
			break;
		case DT_DENY_PROB: {
			uint64_t h =
			    dt_splitmix(s->seed ^ dt_splitmix((uint64_t)i * 0x100000001b3ULL + m));
			fire = (double)(h >> 11) * 0x1.0p-53 < r->p;
			break;
		}
		}
		if (!fire)
			return 0;
		r->fired++;
		return r->err;
	}
	return 0;
}

void dt_deny_ops_name(unsigned ops, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	if (ops == DT_DENY_ANY) {
		snprintf(out, cap, "any");
		return;
	}
	for (size_t k = 0; k + 1 < sizeof(dt_deny_op_names) / sizeof(dt_deny_op_names[0]); k++)
		if (ops & dt_deny_op_names[k].bits) {
			int w = snprintf(out + n, cap - n, "%s%s", n ? "+" : "",
			                 dt_deny_op_names[k].name);
			if (w < 0 || (size_t)w >= cap - n)
				return;
			n += (size_t)w;
		}
}
