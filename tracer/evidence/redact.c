/* SPDX-License-Identifier: MIT */
/* Secrets, redaction and the config.toml excerpt (redact.h). */
#include "redact.h"

#include <ctype.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- secrets ---- */

int dt_env_is_secret(const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t n = eq ? (size_t)(eq - entry) : strlen(entry);
	if (dt_secret_env_name(entry, n))
		return 1;
	if (!eq)
		return 0;
	const char *v = eq + 1;
	for (size_t i = 0; v[i]; i++)
		if (dt_secret_span(v + i, strlen(v + i), i ? (unsigned char)v[i - 1] : 0))
			return 1;
	return 0;
}

/* ---- redaction ---- */

static void dt_redact_push(struct dt_redaction *rd, const char *from, const char *to, int word)
{
	if (!from || !*from)
		return;
	for (size_t i = 0; i < rd->n; i++)
		if (!strcmp(rd->v[i].from, from))
			return;
	if (rd->n == rd->cap) {
		rd->cap = rd->cap ? rd->cap * 2 : 16;
		rd->v = realloc(rd->v, rd->cap * sizeof(*rd->v));
	}
	rd->v[rd->n].from = strdup(from);
	rd->v[rd->n].to = to;
	rd->v[rd->n].word = word;
	rd->n++;
}

/* The forms a string takes in the bundle's files: as is, inside Markdown
 * text (report_md.c escapes |<>*_`[]\), in a Markdown table cell, in JSON. */
static void dt_redact_push_forms(struct dt_redaction *rd, const char *s, const char *to, int word)
{
	size_t n = strlen(s);
	char *buf = malloc(2 * n + 1);
	dt_redact_push(rd, s, to, word);
	const char *sets[] = {"|<>*_`[]\\", "|", "\"\\"};
	for (size_t k = 0; k < 3; k++) {
		size_t o = 0;
		for (size_t i = 0; i < n; i++) {
			if (strchr(sets[k], s[i]))
				buf[o++] = '\\';
			buf[o++] = s[i];
		}
		buf[o] = 0;
		dt_redact_push(rd, buf, to, word);
	}
	free(buf);
}

void dt_redact_home(struct dt_redaction *rd, const char *home)
{
	if (!home || !*home)
		return;
	char norm[PATH_MAX];
	snprintf(norm, sizeof(norm), "%s", home);
	size_t n = strlen(norm);
	while (n > 1 && norm[n - 1] == '/')
		norm[--n] = 0;
	if (n > 1)
		dt_redact_push_forms(rd, norm, "~", 0);
	char real[PATH_MAX];
	if (realpath(norm, real) && strlen(real) > 1)
		dt_redact_push_forms(rd, real, "~", 0);
}

void dt_redact_user(struct dt_redaction *rd, const char *name)
{
	if (!name || strlen(name) < 2)
		return;
	struct passwd *pw = getpwnam(name);
	if (!strcmp(name, "root") || !strcmp(name, "nobody") || (pw && pw->pw_uid < 1000)) {
		if (!strstr(rd->kept, name)) {
			size_t l = strlen(rd->kept);
			snprintf(rd->kept + l, sizeof(rd->kept) - l, "%s%s", l ? ", " : "", name);
		}
		return;
	}
	dt_redact_push_forms(rd, name, "<user>", 1);
}

static int dt_word_char(int c)
{
	return isalnum(c) || c == '_';
}

static int dt_path_char(int c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.';
}

struct dt_ebuf {
	char *p;
	size_t len, cap;
};

static void dt_ebuf_put(struct dt_ebuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static char *dt_replace_rule(const struct dt_redact_rule *rule, const char *in, size_t len,
                             size_t *outlen)
{
	struct dt_ebuf b = {0};
	size_t fl = strlen(rule->from), tl = strlen(rule->to);
	size_t i = 0, copied = 0;
	while (i + fl <= len) {
		const char *hit = memmem(in + i, len - i, rule->from, fl);
		if (!hit)
			break;
		size_t at = (size_t)(hit - in);
		unsigned char before = at ? (unsigned char)in[at - 1] : 0;
		unsigned char after = at + fl < len ? (unsigned char)in[at + fl] : 0;
		int ok = rule->word ? !dt_word_char(before) && !dt_word_char(after)
		                    : !dt_path_char(after);
		if (ok) {
			dt_ebuf_put(&b, in + copied, at - copied);
			dt_ebuf_put(&b, rule->to, tl);
			copied = at + fl;
			i = copied;
		} else {
			i = at + 1;
		}
	}
	dt_ebuf_put(&b, in + copied, len - copied);
	*outlen = b.len;
	return b.p;
}

static int dt_rule_order(const void *a, const void *b)
{
	const struct dt_redact_rule *x = a, *y = b;
	if (x->word != y->word)
		return x->word - y->word;
	size_t lx = strlen(x->from), ly = strlen(y->from);
	return lx < ly ? 1 : lx > ly ? -1 : 0;
}

char *dt_redact_apply(const struct dt_redaction *rd, const char *in, size_t len, size_t *outlen)
{
	struct dt_redact_rule *rules = malloc((rd->n + 1) * sizeof(*rules));
	memcpy(rules, rd->v, rd->n * sizeof(*rules));
	qsort(rules, rd->n, sizeof(*rules), dt_rule_order);
	char *cur = malloc(len + 1);
	memcpy(cur, in, len);
	cur[len] = 0;
	size_t curlen = len;
	for (size_t k = 0; k < rd->n; k++) {
		size_t nl;
		char *next = dt_replace_rule(&rules[k], cur, curlen, &nl);
		free(cur);
		cur = next;
		curlen = nl;
	}
	free(rules);
	struct dt_ebuf b = {0};
	dt_ebuf_put(&b, "", 0);
	for (size_t i = 0; i < curlen;) {
		size_t s = dt_secret_span(cur + i, curlen - i, i ? (unsigned char)cur[i - 1] : 0);
		if (s) {
			dt_ebuf_put(&b, "<redacted>", 10);
			i += s;
		} else {
			dt_ebuf_put(&b, cur + i, 1);
			i++;
		}
	}
	free(cur);
	*outlen = b.len;
	return b.p;
}

void dt_redaction_free(struct dt_redaction *rd)
{
	for (size_t i = 0; i < rd->n; i++)
		free(rd->v[i].from);
	free(rd->v);
	rd->v = NULL;
	rd->n = rd->cap = 0;
}

/* ---- config.toml excerpt ---- */

/* Change in [ / { nesting over a TOML line, ignoring strings and comments. */
static int dt_toml_nesting(const char *s, size_t n)
{
	int d = 0;
	char q = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (q) {
			if (c == '\\' && q == '"' && i + 1 < n)
				i++;
			else if (c == q)
				q = 0;
		} else if (c == '"' || c == '\'') {
			q = c;
		} else if (c == '#') {
			break;
		} else if (c == '[' || c == '{') {
			d++;
		} else if (c == ']' || c == '}') {
			d--;
		}
	}
	return d;
}

static int dt_toml_wanted_table(const char *name)
{
	return !strcmp(name, "sandbox_workspace_write") || !strcmp(name, "permissions") ||
	       !strncmp(name, "permissions.", 12);
}

/* A key (possibly dotted, possibly quoted parts) that decides the sandbox. */
static int dt_toml_wanted_key(const char *key, int top_level)
{
	char k[256];
	size_t o = 0;
	for (const char *p = key; *p && o + 1 < sizeof(k); p++)
		if (*p != '"' && *p != '\'' && *p != ' ' && *p != '\t')
			k[o++] = *p;
	k[o] = 0;
	/* inside another table, a dotted key belongs to that table */
	if (top_level && (dt_toml_wanted_table(k) || !strncmp(k, "sandbox_workspace_write.", 24) ||
	                  !strncmp(k, "permissions.", 12)))
		return 1;
	const char *last = strrchr(k, '.');
	last = last ? last + 1 : k;
	return !strcmp(last, "sandbox_mode") || !strcmp(last, "default_permissions");
}

char *dt_codex_config_excerpt(const char *text)
{
	struct dt_ebuf b = {0};
	dt_ebuf_put(&b, "", 0);
	const char *header = NULL;
	size_t header_len = 0;
	int in_wanted = 0, header_out = 0, depth = 0, keep_cont = 0;
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *t = line;
		while (t < line + len && (*t == ' ' || *t == '\t'))
			t++;
		size_t tl = len - (size_t)(t - line);
		if (depth > 0) {
			if (keep_cont) {
				dt_ebuf_put(&b, line, len);
				dt_ebuf_put(&b, "\n", 1);
			}
			depth += dt_toml_nesting(t, tl);
		} else if (!tl || *t == '#' || *t == '\r') {
			/* blank or comment */
		} else if (*t == '[') {
			char name[256];
			size_t o = 0;
			for (const char *p = t; p < t + tl && *p != ']' && o + 1 < sizeof(name);
			     p++)
				if (*p != '[' && *p != ' ' && *p != '\t' && *p != '"' && *p != '\'')
					name[o++] = *p;
			name[o] = 0;
			header = line;
			header_len = len;
			in_wanted = dt_toml_wanted_table(name);
			header_out = 0;
			if (in_wanted) {
				dt_ebuf_put(&b, line, len);
				dt_ebuf_put(&b, "\n", 1);
				header_out = 1;
			}
		} else {
			const char *eq = memchr(t, '=', tl);
			char key[256] = "";
			if (eq) {
				size_t kl = (size_t)(eq - t);
				snprintf(key, sizeof(key), "%.*s", (int)(kl < 255 ? kl : 255), t);
			}
			int keep = eq && (in_wanted || dt_toml_wanted_key(key, header == NULL));
			if (keep) {
				if (!header_out && header) {
					dt_ebuf_put(&b, header, header_len);
					dt_ebuf_put(&b, "\n", 1);
					header_out = 1;
				}
				dt_ebuf_put(&b, line, len);
				dt_ebuf_put(&b, "\n", 1);
			}
			if (eq) {
				depth = dt_toml_nesting(eq + 1, tl - (size_t)(eq + 1 - t));
				keep_cont = keep;
			}
		}
		if (depth < 0)
			depth = 0;
		line = nl ? nl + 1 : NULL;
	}
	return b.p;
}
