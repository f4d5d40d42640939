/* SPDX-License-Identifier: MIT */
/* Secrets in names and values (secrets.h). Plain loops over bytes: this runs
 * in the probe, where locale-dependent ctype and libc string calls are
 * avoided. */
#include "secrets.h"

static int dt_upper(int c)
{
	return c >= 'a' && c <= 'z' ? c - 32 : c;
}

static int dt_alnum(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int dt_token_char(int c)
{
	return dt_alnum(c) || c == '+' || c == '=' || c == '_' || c == '-';
}

static size_t dt_cstrlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

/* s (n bytes) starts with word, ignoring case */
static int dt_starts_ci(const char *s, size_t n, const char *word)
{
	size_t i = 0;
	for (; word[i]; i++)
		if (i >= n || dt_upper((unsigned char)s[i]) != word[i])
			return 0;
	return 1;
}

/* Anywhere in a name: PASS covers PASSWORD, PASSWD and PASSPHRASE. */
static const char *const dt_secret_parts[] = {"KEY",        "TOKEN", "SECRET", "PASS",
                                              "CREDENTIAL", "AUTH",  "COOKIE", "PRIVATE"};
/* Only as a whole word: PAT inside PATH, PW inside PWD are not secrets;
 * APIKEY, whose KEY starts no word of its own. */
static const char *const dt_secret_words[] = {"PAT", "PW", "APIKEY"};

static int dt_is_sep(int c)
{
	return c == '_' || c == '-' || c == '.';
}

/* A word starts after a separator, or at a capital after a small letter
 * (apiKey, accessToken). */
static int dt_word_start(const char *name, size_t i)
{
	if (i == 0 || dt_is_sep((unsigned char)name[i - 1]))
		return 1;
	return name[i] >= 'A' && name[i] <= 'Z' && name[i - 1] >= 'a' && name[i - 1] <= 'z';
}

/* anywhere: a part at any offset; else only at the start of a word */
static int dt_secret_name_match(const char *name, size_t n, int anywhere)
{
	for (size_t i = 0; i < n; i++) {
		int word_start = dt_word_start(name, i);
		if (!anywhere && !word_start)
			continue;
		for (size_t k = 0; k < sizeof(dt_secret_parts) / sizeof(*dt_secret_parts); k++)
			if (dt_starts_ci(name + i, n - i, dt_secret_parts[k]))
				return 1;
		if (!word_start)
			continue;
		for (size_t k = 0; k < sizeof(dt_secret_words) / sizeof(*dt_secret_words); k++) {
			size_t wl = dt_cstrlen(dt_secret_words[k]);
			if (dt_starts_ci(name + i, n - i, dt_secret_words[k]) &&
			    (i + wl == n || dt_is_sep((unsigned char)name[i + wl])))
				return 1;
		}
	}
	return 0;
}

int dt_secret_env_name(const char *name, size_t n)
{
	return dt_secret_name_match(name, n, 1);
}

/* A JSON Web Token, eyJ<header>.<claims>.<signature> (base64url; the
 * signature may be empty): a bearer credential whatever option carries it.
 * Its length, or 0. */
static size_t dt_jwt_span(const char *s, size_t avail)
{
	if (avail < 3 || s[0] != 'e' || s[1] != 'y' || s[2] != 'J')
		return 0;
	size_t i = 0, dots = 0;
	while (i < avail && (dt_token_char((unsigned char)s[i]) || s[i] == '.')) {
		if (s[i] == '.' && (i == 0 || s[i - 1] == '.'))
			return 0; /* an empty header or claims: not a token */
		dots += s[i] == '.';
		i++;
	}
	return dots == 2 ? i : 0;
}

/* A word with a known token prefix (sk-..., ghp_..., AKIA...): its length. */
static size_t dt_secret_prefixed_span(const char *s, size_t avail, int prev, size_t *run_out)
{
	static const struct {
		const char *prefix;
		size_t min_rest;
	} shapes[] = {{"sk-", 16},   {"ghp_", 20},     {"gho_", 20},        {"ghu_", 20},
	              {"ghs_", 20},  {"ghr_", 20},     {"github_pat_", 20}, {"xoxa-", 10},
	              {"xoxb-", 10}, {"xoxp-", 10},    {"xoxr-", 10},       {"xoxs-", 10},
	              {"AKIA", 16},  {"ASIA", 16},     {"glpat-", 16},      {"npm_", 30},
	              {"hf_", 30},   {"sk_live_", 16}, {"rk_live_", 16}};
	size_t run = 0;
	*run_out = 0;
	if (prev && dt_token_char(prev) && prev != '=')
		return 0; /* mid-word; but KEY=TOKEN starts one */
	size_t jwt = dt_jwt_span(s, avail);
	if (jwt) {
		*run_out = jwt;
		return jwt;
	}
	while (run < avail && dt_token_char((unsigned char)s[run]))
		run++;
	*run_out = run;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		size_t pl = dt_cstrlen(shapes[i].prefix), k = 0;
		while (k < pl && k < run && s[k] == shapes[i].prefix[k])
			k++;
		if (k == pl && run >= pl + shapes[i].min_rest)
			return run;
	}
	return 0;
}

size_t dt_secret_span(const char *s, size_t avail, int prev)
{
	size_t run;
	if (dt_secret_prefixed_span(s, avail, prev, &run))
		return run;
	if (run < 32)
		return 0;
	/* 32+ letters and digits mixed: likely a key, possibly a hash or a
	 * path segment, which is why only evidence --redact uses this part */
	int lower = 0, upper = 0, digit = 0, hex = 1;
	for (size_t i = 0; i < run; i++) {
		int c = (unsigned char)s[i];
		lower |= c >= 'a' && c <= 'z';
		upper |= c >= 'A' && c <= 'Z';
		digit |= c >= '0' && c <= '9';
		hex &= (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	}
	if ((hex && digit && (lower || upper)) || (lower && upper && digit))
		return run;
	return 0;
}

/* A bounded output cursor: counts what the result needs, copies what fits. */
struct dt_out {
	char *p;
	size_t len, cap;
};

static void dt_out_put(struct dt_out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, o->len++)
		if (o->len < o->cap)
			o->p[o->len] = s[i];
}

static void dt_out_redacted(struct dt_out *o)
{
	dt_out_put(o, DT_REDACTED, sizeof(DT_REDACTED) - 1);
}

/* At in[i] == ':' of "://": the authority's userinfo password, if any.
 * Returns how many input bytes were consumed (0: not a URL with one). */
static size_t dt_url_userinfo(const char *in, size_t n, size_t i, struct dt_out *o)
{
	if (i + 3 > n || in[i + 1] != '/' || in[i + 2] != '/')
		return 0;
	size_t a = i + 3, colon = 0, e = a;
	while (e < n && in[e] != '@' && in[e] != '/' && in[e] != '?' && in[e] != '#' &&
	       in[e] != ' ' && in[e] != '"' && in[e] != '\'')
		if (in[e++] == ':' && !colon)
			colon = e; /* just past the first ':' */
	if (e >= n || in[e] != '@' || !colon)
		return 0;
	dt_out_put(o, in + i, colon - i); /* "://user:" */
	dt_out_redacted(o);
	return e - i; /* the '@' is copied by the caller */
}

/* At a word start: "Bearer X" / "Basic X" with X redacted. */
static size_t dt_auth_scheme(const char *in, size_t n, size_t i, struct dt_out *o)
{
	static const char *const schemes[] = {"BEARER ", "BASIC "};
	for (size_t k = 0; k < 2; k++) {
		size_t sl = dt_cstrlen(schemes[k]);
		if (!dt_starts_ci(in + i, n - i, schemes[k]))
			continue;
		size_t e = i + sl;
		while (e < n && in[e] == ' ')
			e++;
		size_t v = e;
		while (e < n && in[e] != ' ' && in[e] != '"' && in[e] != '\'')
			e++;
		if (e == v)
			return 0;
		dt_out_put(o, in + i, v - i);
		dt_out_redacted(o);
		return e - i;
	}
	return 0;
}

static int dt_name_char(int c)
{
	return dt_alnum(c) || c == '-' || c == '_';
}

/* The end of a value that runs to the end of its line or quoted string. */
static size_t dt_value_end(const char *in, size_t n, size_t v)
{
	while (v < n && in[v] != '\n' && in[v] != '"' && in[v] != '\'')
		v++;
	return v;
}

/* At a word start: "X-Api-Key: VALUE", "Cookie: ...", "password:PW" (a
 * header or a colon pair whose name says secret, not "scheme://"), the
 * value up to the end of its line or string redacted. */
static size_t dt_secret_pair(const char *in, size_t n, size_t i, struct dt_out *o)
{
	size_t e = i;
	while (e < n && dt_name_char((unsigned char)in[e]))
		e++;
	if (e == i || e >= n || in[e] != ':' || (e + 1 < n && in[e + 1] == '/') ||
	    !dt_secret_name_match(in + i, e - i, 1))
		return 0;
	size_t v = e + 1;
	while (v < n && in[v] == ' ')
		v++;
	size_t end = dt_value_end(in, n, v);
	/* "Authorization: Bearer X" keeps its scheme (dt_auth_scheme) */
	if (end == v || dt_starts_ci(in + v, n - v, "BEARER ") ||
	    dt_starts_ci(in + v, n - v, "BASIC "))
		return 0;
	dt_out_put(o, in + i, v - i);
	dt_out_redacted(o);
	return end - i;
}

/* At '?' or '&': a query parameter whose name says secret (key, token,
 * sig, ...), its value redacted up to the next parameter. */
static size_t dt_secret_query(const char *in, size_t n, size_t i, struct dt_out *o)
{
	size_t e = i + 1;
	while (e < n && dt_name_char((unsigned char)in[e]))
		e++;
	if (e == i + 1 || e >= n || in[e] != '=')
		return 0;
	if (!dt_secret_name_match(in + i + 1, e - i - 1, 0) && !dt_starts_ci(in + i + 1, 3, "SIG"))
		return 0;
	size_t v = e + 1;
	while (v < n && in[v] != '&' && in[v] != '#' && in[v] != ' ' && in[v] != '"' &&
	       in[v] != '\'' && in[v] != '\n')
		v++;
	dt_out_put(o, in + i, e + 1 - i);
	dt_out_redacted(o);
	return v - i;
}

/* At ':' of "://": a webhook URL (hooks.HOST, or /hooks/ or /webhooks/ in
 * its path), whose path is its secret: everything after the host goes. */
static size_t dt_webhook_url(const char *in, size_t n, size_t i, struct dt_out *o)
{
	if (i + 3 > n || in[i + 1] != '/' || in[i + 2] != '/')
		return 0;
	size_t a = i + 3, h = a;
	while (h < n && in[h] != '/' && in[h] != ' ' && in[h] != '"' && in[h] != '\'')
		h++;
	size_t end = h;
	while (end < n && in[end] != ' ' && in[end] != '"' && in[end] != '\'' && in[end] != '\n')
		end++;
	int hook = dt_starts_ci(in + a, h - a, "HOOKS.");
	for (size_t k = h; !hook && k + 7 <= end; k++)
		hook = dt_starts_ci(in + k, end - k, "/HOOKS/") ||
		       dt_starts_ci(in + k, end - k, "/WEBHOOKS/");
	if (!hook || end == h)
		return 0;
	dt_out_put(o, in + i, h - i);
	dt_out_put(o, "/", 1);
	dt_out_redacted(o);
	return end - i;
}

size_t dt_redact_value(const char *in, size_t n, char *out, size_t cap)
{
	struct dt_out o = {out, 0, cap};
	for (size_t i = 0; i < n;) {
		int prev = i ? (unsigned char)in[i - 1] : 0;
		size_t used = in[i] == ':' ? dt_webhook_url(in, n, i, &o) : 0;
		if (!used && in[i] == ':')
			used = dt_url_userinfo(in, n, i, &o);
		if (!used && (in[i] == '?' || in[i] == '&'))
			used = dt_secret_query(in, n, i, &o);
		if (!used && !dt_name_char(prev) && prev != '.' && prev != '/')
			used = dt_secret_pair(in, n, i, &o);
		if (!used && !dt_alnum(prev))
			used = dt_auth_scheme(in, n, i, &o);
		size_t run;
		if (!used && (used = dt_secret_prefixed_span(in + i, n - i, prev, &run)) > 0)
			dt_out_redacted(&o);
		if (used) {
			i += used;
			continue;
		}
		dt_out_put(&o, in + i, 1);
		i++;
	}
	return o.len;
}

/* NAME of NAME=VALUE as a shell would take it: [A-Za-z_][A-Za-z0-9_]*. */
static size_t dt_env_like_name(const char *in, size_t n)
{
	size_t i = 0;
	while (i < n && (dt_alnum((unsigned char)in[i]) || in[i] == '_'))
		i++;
	return i > 0 && i < n && in[i] == '=' && !(in[0] >= '0' && in[0] <= '9') ? i : 0;
}

/* What dt_redact_arg carries from one word to the next in *expect. */
enum {
	DT_ARG_VALUE = 1,   /* the previous word was a secret option: this is its value */
	DT_ARG_USERPW = 2,  /* after -u / --user: USER:PASSWORD */
	DT_ARG_PW_PROG = 4, /* a program whose -p takes a password ran earlier in argv */
};

/* Programs whose -p (or -pVALUE) is a password, not a port or a path. */
static int dt_password_program(const char *in, size_t n)
{
	static const char *const progs[] = {"MYSQL",       "MYSQLDUMP",    "MYSQLADMIN",
	                                    "MYSQLIMPORT", "MYSQLCHECK",   "MYSQLSHOW",
	                                    "MARIADB",     "MARIADB-DUMP", "SSHPASS"};
	size_t b = n;
	while (b > 0 && in[b - 1] != '/')
		b--;
	for (size_t k = 0; k < sizeof(progs) / sizeof(*progs); k++)
		if (n - b == dt_cstrlen(progs[k]) && dt_starts_ci(in + b, n - b, progs[k]))
			return 1;
	return 0;
}

/* USER:PASSWORD (curl's -u), the part after the first ':' redacted. */
static size_t dt_user_password(const char *in, size_t n, struct dt_out *o)
{
	size_t c = 0;
	while (c < n && in[c] != ':')
		c++;
	if (c == n)
		dt_out_put(o, in, n);
	else {
		dt_out_put(o, in, c + 1);
		dt_out_redacted(o);
	}
	return o->len;
}

/* An option word: the secret-named rules, -u/--user, and a password
 * program's -p. Returns 1 when handled into o. */
static int dt_redact_option(const char *in, size_t n, struct dt_out *o, int *expect)
{
	size_t d = in[1] == '-' ? 2 : 1, eq = d;
	while (eq < n && in[eq] != '=')
		eq++;
	if (eq > d && dt_secret_name_match(in + d, eq - d, 0)) {
		dt_out_put(o, in, eq == n ? n : eq + 1);
		if (eq == n)
			*expect |= DT_ARG_VALUE; /* --token VALUE */
		else
			dt_out_redacted(o); /* --password=VALUE */
		return 1;
	}
	int user =
	    (d == 2 && eq - d == 4 && dt_starts_ci(in + d, 4, "USER")) || (d == 1 && in[1] == 'u');
	if (user && (d == 1 ? n == 2 : eq == n)) {
		dt_out_put(o, in, n);
		*expect |= DT_ARG_USERPW;
		return 1;
	}
	if (user) { /* -uUSER:PW, --user=USER:PW */
		size_t at = d == 1 ? 2 : eq + 1;
		dt_out_put(o, in, at);
		struct dt_out rest = {o->p ? o->p + (o->len < o->cap ? o->len : o->cap) : o->p, 0,
		                      o->len < o->cap ? o->cap - o->len : 0};
		o->len += dt_user_password(in + at, n - at, &rest);
		return 1;
	}
	if ((*expect & DT_ARG_PW_PROG) && d == 1 && in[1] == 'p') {
		dt_out_put(o, in, 2);
		if (n == 2)
			*expect |= DT_ARG_VALUE; /* -p PW */
		else
			dt_out_redacted(o); /* -pPW */
		return 1;
	}
	return 0;
}

size_t dt_redact_arg(const char *in, size_t n, char *out, size_t cap, int *expect)
{
	struct dt_out o = {out, 0, cap};
	int was = *expect;
	*expect &= DT_ARG_PW_PROG;
	if (n > 1 && in[0] == '-') {
		if (dt_redact_option(in, n, &o, expect))
			return o.len;
	} else if (was & DT_ARG_VALUE) {
		dt_out_redacted(&o);
		return o.len;
	} else if (was & DT_ARG_USERPW) {
		return dt_user_password(in, n, &o);
	} else if (dt_password_program(in, n)) {
		*expect |= DT_ARG_PW_PROG;
	}
	size_t nl = dt_env_like_name(in, n);
	if (nl && dt_secret_env_name(in, nl)) {
		dt_out_put(&o, in, nl + 1);
		dt_out_redacted(&o);
		return o.len;
	}
	o.len = dt_redact_value(in, n, out, cap);
	return o.len;
}

size_t dt_redact_env(const char *entry, size_t n, char *out, size_t cap)
{
	size_t nl = 0;
	while (nl < n && entry[nl] != '=')
		nl++;
	if (nl == n || dt_secret_env_name(entry, nl))
		return 0;
	struct dt_out o = {out, 0, cap};
	dt_out_put(&o, entry, nl + 1);
	size_t vl = dt_redact_value(entry + nl + 1, n - nl - 1, o.len < cap ? out + o.len : out,
	                            o.len < cap ? cap - o.len : 0);
	return o.len + vl;
}

/* Room for one more field's value in b, at most what its 16-bit length
 * can say; 0 when not even the field header fits. */
static size_t dt_field_room(const struct dt_buf *b)
{
	if (b->len > b->cap || b->cap - b->len < 4)
		return 0;
	size_t room = b->cap - b->len - 4;
	return room > 0xffff ? 0xffff : room;
}

static void dt_field_close(struct dt_buf *b, uint16_t tag, size_t n)
{
	uint16_t n16 = (uint16_t)n;
	__builtin_memcpy(b->p + b->len, &tag, 2);
	__builtin_memcpy(b->p + b->len + 2, &n16, 2);
	b->len += 4 + (uint32_t)n;
}

int dt_put_argv_redacted(struct dt_buf *b, const char *words, size_t n)
{
	size_t room = dt_field_room(b), len = 0;
	char *out = (char *)b->p + b->len + 4;
	int expect = 0, cut = 0;
	if (!room) {
		b->overflow = 1;
		return 1;
	}
	for (size_t i = 0; i < n;) {
		size_t e = i;
		while (e < n && words[e])
			e++;
		size_t sep = len ? 1 : 0;
		size_t need = dt_redact_arg(words + i, e - i, out + len + sep,
		                            room > len + sep ? room - len - sep : 0, &expect);
		if (len + sep + need > room) {
			cut = 1; /* keep whole words only */
			break;
		}
		if (sep)
			out[len] = 0;
		len += sep + need;
		i = e + 1;
	}
	dt_field_close(b, DT_T_ARGV, len);
	return cut;
}

void dt_put_env_redacted(struct dt_buf *b, const char *entry, size_t n)
{
	size_t room = dt_field_room(b);
	size_t need = dt_redact_env(entry, n, (char *)b->p + b->len + 4, room);
	if (!need)
		return; /* a secret: dropped */
	if (need > room) {
		b->overflow = 1;
		return;
	}
	dt_field_close(b, DT_T_ENV, need);
}

/* ---- config snapshots: keep what denytrace reads, redact every other value ---- */

/* Keys whose values denytrace uses (roots, sandbox mode, permission
 * profiles, MCP servers' commands and the probe's own variables), as
 * dotted patterns: "*" is one key, "**" any rest, "X*" a key starting X. */
static const char *const dt_cfg_kept[] = {
    "sandbox_mode",
    "profile",
    "default_permissions",
    /* the keys Codex reads there, not the whole table: a key of a
     * user's own beside them keeps its value out */
    "sandbox_workspace_write.writable_roots",
    "sandbox_workspace_write.network_access",
    "sandbox_workspace_write.exclude_tmpdir_env_var",
    "sandbox_workspace_write.exclude_slash_tmp",
    "profiles.*.sandbox_mode",
    "profiles.*.default_permissions",
    "profiles.*.sandbox_workspace_write.writable_roots",
    "profiles.*.sandbox_workspace_write.network_access",
    "profiles.*.sandbox_workspace_write.exclude_tmpdir_env_var",
    "profiles.*.sandbox_workspace_write.exclude_slash_tmp",
    /* a permission profile: what it extends and its filesystem entries
     * (roots_codex.c), not its other settings */
    "permissions.*.extends",
    "permissions.*.filesystem",
    "permissions.*.filesystem.**",
    "projects.*.trust_level",
    "mcp_servers.*.command",
    "mcp_servers.*.env.LD_PRELOAD",
    "mcp_servers.*.env.DENYTRACE_*",
    /* what each server's environment is made of (codex_mcp.h); not its
     * args, which may hold a token */
    "mcp_servers.*.url",
    "mcp_servers.*.env_vars",
    "mcp_servers.*.env.HERMES_*",
    "mcp_servers.*.env.HCOM_*",
    "mcp_servers.*.env.CODEX_HOME",
    "profiles.*.mcp_servers.*.command",
    "profiles.*.mcp_servers.*.env.LD_PRELOAD",
    "profiles.*.mcp_servers.*.env.DENYTRACE_*",
};

/* A key path: its keys, quotes stripped, each ending in DT_CFG_SEP. */
#define DT_CFG_SEP '\x01'
struct dt_cfg_path {
	char s[512];
	size_t n;
	int cut; /* too long: never kept */
};

static int dt_cfg_seg_match(const char *pat, size_t pl, const char *seg, size_t sl)
{
	if (pl == 1 && pat[0] == '*')
		return 1;
	if (pl > 1 && pat[pl - 1] == '*')
		return sl >= pl - 1 && !__builtin_memcmp(pat, seg, pl - 1);
	return pl == sl && !__builtin_memcmp(pat, seg, pl);
}

static int dt_cfg_pattern_match(const char *pat, const struct dt_cfg_path *p)
{
	size_t i = 0, at = 0;
	for (;;) {
		size_t pe = i;
		while (pat[pe] && pat[pe] != '.')
			pe++;
		if (pe - i == 2 && pat[i] == '*' && pat[i + 1] == '*')
			return at < p->n; /* at least one key more */
		if (at >= p->n)
			return 0;
		size_t se = at;
		while (se < p->n && p->s[se] != DT_CFG_SEP)
			se++;
		if (!dt_cfg_seg_match(pat + i, pe - i, p->s + at, se - at))
			return 0;
		at = se + 1;
		if (!pat[pe])
			return at >= p->n;
		i = pe + 1;
	}
}

static int dt_cfg_kept_path(const struct dt_cfg_path *p)
{
	size_t last = p->n ? p->n - 1 : 0;
	while (last > 0 && p->s[last - 1] != DT_CFG_SEP)
		last--;
	/* HERMES_API_KEY matches HERMES_* and is still a secret */
	if (p->cut || dt_secret_env_name(p->s + last, p->n ? p->n - 1 - last : 0))
		return 0;
	for (size_t k = 0; k < sizeof(dt_cfg_kept) / sizeof(*dt_cfg_kept); k++)
		if (dt_cfg_pattern_match(dt_cfg_kept[k], p))
			return 1;
	return 0;
}

static void dt_cfg_path_put(struct dt_cfg_path *p, char c)
{
	if (p->n + 2 < sizeof(p->s))
		p->s[p->n++] = c;
	else
		p->cut = 1;
}

/* Appends the dotted key in[0..n) (bare or quoted keys, blanks around
 * the dots) to p. A quoted key with an escape is never kept: TOML reads
 * "HERMES_API_\u004bEY" as HERMES_API_KEY, which HERMES_* must not keep. */
static void dt_cfg_path_add(struct dt_cfg_path *p, const char *in, size_t n)
{
	char q = 0;
	int open = 0; /* a key has begun */
	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		if (q == '"' && c == '\\') {
			p->cut = 1;
			i++;
		} else if (q) {
			if (c == q)
				q = 0;
			else
				dt_cfg_path_put(p, c);
		} else if (c == '"' || c == '\'') {
			q = c;
			open = 1;
		} else if (c == '.') {
			dt_cfg_path_put(p, DT_CFG_SEP);
			open = 0;
		} else if (c != ' ' && c != '\t') {
			dt_cfg_path_put(p, c);
			open = 1;
		}
	}
	if (open)
		dt_cfg_path_put(p, DT_CFG_SEP);
}

/* Where a TOML value stands while it is scanned: inside which string
 * (0, a quote, or 'D' and 'S' for the triple-quoted ones) and how deep
 * in arrays and inline tables. */
struct dt_cfg_scan {
	char str;
	int depth;
};

static int dt_cfg_scan_open(const struct dt_cfg_scan *sc)
{
	return sc->depth > 0 || sc->str == 'D' || sc->str == 'S';
}

/* In a string at in[i]: moves past its end when it ends there. */
static size_t dt_cfg_scan_string(struct dt_cfg_scan *sc, const char *in, size_t n, size_t i)
{
	char c = in[i];
	int basic = sc->str == '"' || sc->str == 'D';
	int triple = sc->str == 'D' || sc->str == 'S';
	if (basic && c == '\\')
		return i + 1;
	if (c != (basic ? '"' : '\''))
		return i;
	if (!triple) {
		sc->str = 0;
		return i;
	}
	if (i + 2 < n && in[i + 1] == c && in[i + 2] == c) {
		sc->str = 0;
		return i + 2;
	}
	return i;
}

/* Takes in[i] (and what an escape or a triple quote joins to it) into
 * sc; returns the index of the last byte taken. */
static size_t dt_cfg_scan_step(struct dt_cfg_scan *sc, const char *in, size_t n, size_t i)
{
	char c = in[i];
	if (sc->str)
		return dt_cfg_scan_string(sc, in, n, i);
	if (c == '"' || c == '\'') {
		int triple = i + 2 < n && in[i + 1] == c && in[i + 2] == c;
		sc->str = triple ? (c == '"' ? 'D' : 'S') : c;
		return i + (triple ? 2 : 0);
	}
	if (c == '[' || c == '{')
		sc->depth++;
	else if (c == ']' || c == '}')
		sc->depth -= sc->depth > 0;
	return i;
}

/* Scans in[0..n) from sc; returns where a comment starts (n when none). */
static size_t dt_cfg_scan(struct dt_cfg_scan *sc, const char *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!sc->str && in[i] == '#')
			return i;
		i = dt_cfg_scan_step(sc, in, n, i);
	}
	if (sc->str == '"' || sc->str == '\'')
		sc->str = 0; /* one-line strings end with their line */
	return n;
}

/* The first stop in in[0..n) outside a quoted key, or n. A basic key's
 * \" does not end it. */
static size_t dt_cfg_key_end(const char *in, size_t n, char stop)
{
	char q = 0;
	for (size_t i = 0; i < n; i++) {
		if (q == '"' && in[i] == '\\')
			i++;
		else if (q)
			q = in[i] == q ? 0 : q;
		else if (in[i] == '"' || in[i] == '\'')
			q = in[i];
		else if (in[i] == stop)
			return i;
	}
	return n;
}

/* The first '=' of in[0..n) outside quotes, or n. */
static size_t dt_cfg_equals(const char *in, size_t n)
{
	return dt_cfg_key_end(in, n, '=');
}

/* A value kept: still through dt_redact_value (a command may hold one). */
static void dt_cfg_kept_value(struct dt_out *o, const char *in, size_t n)
{
	size_t room = o->len < o->cap ? o->cap - o->len : 0;
	o->len += dt_redact_value(in, n, room ? o->p + o->len : o->p, room);
}

static void dt_cfg_inline(struct dt_out *o, const struct dt_cfg_path *at, const char *in, size_t n,
                          int level);

/* One "KEY = VALUE" (a line, or an entry of an inline table) under at. */
static void dt_cfg_pair(struct dt_out *o, const struct dt_cfg_path *at, const char *in, size_t n,
                        int level)
{
	size_t eq = dt_cfg_equals(in, n), e = n;
	while (e > 0 && (in[e - 1] == ' ' || in[e - 1] == '\t' || in[e - 1] == '\r'))
		e--;
	if (eq >= e) {
		/* not a pair, so not TOML either: nothing says what it holds */
		dt_out_redacted(o);
		return;
	}
	struct dt_cfg_path p = *at;
	dt_cfg_path_add(&p, in, eq);
	size_t v = eq + 1;
	while (v < e && (in[v] == ' ' || in[v] == '\t'))
		v++;
	dt_out_put(o, in, v);
	if (v < e && in[v] == '{' && level < 8)
		dt_cfg_inline(o, &p, in + v, e - v, level + 1);
	else if (dt_cfg_kept_path(&p))
		dt_cfg_kept_value(o, in + v, e - v);
	else
		dt_out_put(o, "\"" DT_REDACTED "\"", sizeof(DT_REDACTED) + 1);
}

/* An inline table { K = V, ... } under at: each entry judged alone. */
static void dt_cfg_inline(struct dt_out *o, const struct dt_cfg_path *at, const char *in, size_t n,
                          int level)
{
	struct dt_cfg_scan sc = {0, 0};
	size_t start = 1;
	int first = 1;
	dt_out_put(o, "{", 1);
	for (size_t i = 1; i <= n; i++) {
		/* a string's ',' or '}' is its own: the scan goes on past
		 * its end, not one byte at a time */
		if (i < n && (sc.str || sc.depth > 0 || (in[i] != ',' && in[i] != '}'))) {
			i = dt_cfg_scan_step(&sc, in, n, i);
			continue;
		}
		size_t a = start;
		while (a < i && (in[a] == ' ' || in[a] == '\t'))
			a++;
		if (a < i) {
			dt_out_put(o, first ? " " : ", ", first ? 1 : 2);
			dt_cfg_pair(o, at, in + a, i - a, level);
			first = 0;
		}
		if (i == n || in[i] == '}')
			break;
		start = i + 1;
	}
	dt_out_put(o, first ? "}" : " }", first ? 1 : 2);
}

/* What carries from one line of a config to the next. */
struct dt_cfg_state {
	struct dt_cfg_path table;
	struct dt_cfg_scan cont; /* a multi-line value still open */
	int cont_kept;
};

/* [TABLE] or [[TABLE]]: the path the next keys are under. */
static void dt_cfg_header(struct dt_cfg_state *st, struct dt_out *o, const char *in, size_t n,
                          size_t t)
{
	size_t b = t;
	while (b < n && in[b] == '[')
		b++;
	size_t e = b + dt_cfg_key_end(in + b, n - b, ']');
	st->table.n = 0;
	st->table.cut = 0;
	dt_cfg_path_add(&st->table, in + b, e - b);
	while (e < n && in[e] == ']')
		e++;
	dt_out_put(o, in, e);
}

static void dt_cfg_line(struct dt_cfg_state *st, struct dt_out *o, const char *in, size_t n)
{
	if (dt_cfg_scan_open(&st->cont)) {
		size_t c = dt_cfg_scan(&st->cont, in, n);
		if (st->cont_kept)
			dt_cfg_kept_value(o, in, c);
		return; /* else its first line said "<redacted>": the rest goes */
	}
	size_t t = 0;
	while (t < n && (in[t] == ' ' || in[t] == '\t'))
		t++;
	if (t == n || in[t] == '#' || in[t] == '\r')
		return; /* blank, or a comment: comments may hold anything */
	if (in[t] == '[') {
		dt_cfg_header(st, o, in, n, t);
		return;
	}
	size_t eq = dt_cfg_equals(in, n);
	struct dt_cfg_scan sc = {0, 0};
	size_t c = eq < n ? eq + 1 + dt_cfg_scan(&sc, in + eq + 1, n - eq - 1) : n;
	dt_cfg_pair(o, &st->table, in, c, 0);
	if (dt_cfg_scan_open(&sc)) {
		struct dt_cfg_path p = st->table;
		dt_cfg_path_add(&p, in, eq);
		st->cont = sc;
		size_t v = eq + 1;
		while (v < n && (in[v] == ' ' || in[v] == '\t'))
			v++;
		/* an inline table over lines was judged by its first line only */
		st->cont_kept = dt_cfg_kept_path(&p) && v < n && in[v] != '{';
	}
}

size_t dt_redact_config_text(const char *in, size_t n, char *out, size_t cap)
{
	struct dt_out o = {out, 0, cap};
	struct dt_cfg_state st;
	__builtin_memset(&st, 0, sizeof(st));
	for (size_t i = 0; i < n;) {
		size_t e = i;
		while (e < n && in[e] != '\n')
			e++;
		size_t before = o.len;
		dt_cfg_line(&st, &o, in + i, e - i);
		if (e < n && o.len > before)
			dt_out_put(&o, "\n", 1);
		i = e + 1;
	}
	return o.len;
}
