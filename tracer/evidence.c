/* SPDX-License-Identifier: MIT */
/* Facts for maintainers, redaction, and short commands with a deadline. */
#include "evidence.h"
#include "report.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "classify.h"
#include "ring_format.h"
#include "version.h"

/* ---- secrets ---- */

static int dt_token_char(int c)
{
	return isalnum(c) || c == '+' || c == '=' || c == '_' || c == '-';
}

int dt_env_is_secret(const char *entry)
{
	static const char *const words[] = {"KEY",    "TOKEN",      "SECRET", "PASSWORD",
	                                    "PASSWD", "CREDENTIAL", "AUTH"};
	const char *eq = strchr(entry, '=');
	size_t n = eq ? (size_t)(eq - entry) : strlen(entry);
	char name[256];
	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	for (size_t i = 0; i < n; i++)
		name[i] = (char)toupper((unsigned char)entry[i]);
	name[n] = 0;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(name, words[i]))
			return 1;
	if (!eq)
		return 0;
	const char *v = eq + 1;
	for (size_t i = 0; v[i]; i++)
		if (dt_secret_span(v + i, strlen(v + i), i ? (unsigned char)v[i - 1] : 0))
			return 1;
	return 0;
}

size_t dt_secret_span(const char *s, size_t avail, int prev)
{
	static const struct {
		const char *prefix;
		size_t min_rest;
	} shapes[] = {{"sk-", 16},   {"ghp_", 20},  {"gho_", 20},        {"ghu_", 20},
	              {"ghs_", 20},  {"ghr_", 20},  {"github_pat_", 20}, {"xoxa-", 10},
	              {"xoxb-", 10}, {"xoxp-", 10}, {"xoxr-", 10},       {"xoxs-", 10},
	              {"AKIA", 16},  {"ASIA", 16},  {"glpat-", 16}};
	if (prev && dt_token_char(prev))
		return 0;
	size_t run = 0;
	while (run < avail && dt_token_char((unsigned char)s[run]))
		run++;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		size_t pl = strlen(shapes[i].prefix);
		if (run >= pl + shapes[i].min_rest && !strncmp(s, shapes[i].prefix, pl))
			return run;
	}
	if (run < 32)
		return 0;
	int lower = 0, upper = 0, digit = 0, hex = 1;
	for (size_t i = 0; i < run; i++) {
		unsigned char c = (unsigned char)s[i];
		lower |= islower(c) != 0;
		upper |= isupper(c) != 0;
		digit |= isdigit(c) != 0;
		hex &= isxdigit(c) != 0;
	}
	if ((hex && digit && (lower || upper)) || (lower && upper && digit))
		return run;
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

/* ---- facts ---- */

static void dt_read_line_of(const char *path, const char *key, char *out, size_t cap)
{
	out[0] = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	char line[1024];
	size_t kl = strlen(key);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) || line[kl] != '=')
			continue;
		char *v = line + kl + 1;
		v[strcspn(v, "\n")] = 0;
		size_t n = strlen(v);
		if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
			v[n - 1] = 0;
			v++;
		}
		snprintf(out, cap, "%s", v);
		break;
	}
	fclose(f);
}

static const char *dt_protected_component(const char *path)
{
	static const char *const names[] = {".git", ".codex", ".agents"};
	if (!path)
		return NULL;
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		for (size_t i = 0; i < 3; i++)
			if (n == strlen(names[i]) && !strncmp(p, names[i], n))
				return names[i];
		p += n;
	}
	return NULL;
}

static int dt_launch_worthy(const struct dt_record *rec)
{
	if (rec->type == DT_REC_LAUNCH)
		return 1;
	if (rec->type != DT_REC_PROCESS || !rec->argc)
		return 0;
	if (dt_argv_is_codex(rec->argv, rec->argc))
		return 1;
	static const char *const names[] = {"codex", "hermes", "hcom"};
	for (size_t i = 0; i < rec->argc && i < 2; i++) {
		const char *b = strrchr(rec->argv[i], '/');
		b = b ? b + 1 : rec->argv[i];
		for (size_t k = 0; k < 3; k++)
			if (!strncmp(b, names[k], strlen(names[k])))
				return 1;
	}
	return 0;
}

static int dt_same_argv(const struct dt_record *a, const struct dt_record *b)
{
	if (a->type != b->type || a->argc != b->argc)
		return 0;
	for (size_t i = 0; i < a->argc; i++)
		if (strcmp(a->argv[i], b->argv[i]))
			return 0;
	return 1;
}

static void dt_facts_sandboxes(struct dt_facts *f, const struct dt_report *r)
{
	/* with exec coverage, denytrace's own supervisor filter is one of them */
	int64_t own_filters = 0;
	for (size_t i = 0; i < r->n && !own_filters; i++)
		if (r->recs[i].type == DT_REC_EXEC || r->recs[i].supervisor)
			own_filters = 1;
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *rec = &r->recs[i];
		if (rec->comm && !strcmp(rec->comm, "bwrap"))
			f->sb_bubblewrap = 1;
		if (rec->type == DT_REC_PROCESS) {
			if (dt_proc_sandboxed(rec))
				f->sb_bubblewrap = 1;
			if (rec->has_seccomp && rec->seccomp == 2 &&
			    (!own_filters || rec->seccomp_filters > own_filters))
				f->sb_seccomp = 1;
		}
	}
	/* Landlock leaves no mount behind: a read-write mount whose mode bits
	 * allow the write, and still EACCES */
	for (size_t k = 0; k < r->ngroups; k++) {
		const struct dt_report_group *g = &r->groups[k];
		const struct dt_pathinfo *p = &g->rep->p[0];
		if (g->rep->err == EACCES && p->has_st && (p->st.valid & DT_SF_MOUNT) &&
		    !(p->st.mount_flags & 1 /* ST_RDONLY */) &&
		    g->v.cause != DT_CAUSE_FILE_PERMISSIONS &&
		    g->v.cause != DT_CAUSE_LOCK_CONTENTION && g->v.cause != DT_CAUSE_INJECTED)
			f->sb_landlock = 1;
	}
}

void dt_facts_collect(struct dt_facts *f, const struct dt_report *r)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->version, sizeof(f->version), "%s", DT_VERSION_STRING);
	f->ring_format = DT_RING_VERSION;
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(f->kernel, sizeof(f->kernel), "%s %s %s %s", u.sysname, u.release,
		         u.version, u.machine);
	dt_read_line_of("/etc/os-release", "PRETTY_NAME", f->distro, sizeof(f->distro));
	char osrel[256] = "";
	FILE *o = fopen("/proc/sys/kernel/osrelease", "re");
	if (o) {
		if (!fgets(osrel, sizeof(osrel), o))
			osrel[0] = 0;
		fclose(o);
	}
	const char *wsl_distro = getenv("WSL_DISTRO_NAME");
	if (strcasestr(osrel, "microsoft")) {
		f->wsl = 1;
		snprintf(f->wsl_why, sizeof(f->wsl_why), "kernel release names Microsoft");
	} else if (wsl_distro && *wsl_distro) {
		f->wsl = 1;
		snprintf(f->wsl_why, sizeof(f->wsl_why), "WSL_DISTRO_NAME is set");
	}
	dt_facts_sandboxes(f, r);

	if (dt_which("codex", f->codex_path, sizeof(f->codex_path)) == 0) {
		const char *argv[] = {f->codex_path, "--version", NULL};
		f->codex_status = dt_capture(argv, NULL, 10000, f->codex_version,
		                             sizeof(f->codex_version), NULL, 0);
		size_t n = strlen(f->codex_version);
		while (n && isspace((unsigned char)f->codex_version[n - 1]))
			f->codex_version[--n] = 0;
	}

	const char *home = getenv("HOME");
	const char *codex_home = getenv("CODEX_HOME");
	if (r->roots.codex_config_path)
		snprintf(f->config_path, sizeof(f->config_path), "%s", r->roots.codex_config_path);
	else if (codex_home && *codex_home)
		snprintf(f->config_path, sizeof(f->config_path), "%s/config.toml", codex_home);
	else if (home && *home)
		snprintf(f->config_path, sizeof(f->config_path), "%s/.codex/config.toml", home);
	/* The snapshot `denytrace codex` recorded at launch is what Codex
	 * read; the file may have changed since. The last one wins. */
	const struct dt_record *snap = NULL;
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *c = &r->recs[i];
		if (c->type == DT_REC_CONFIG && c->cfg_path && !c->cfg_profile &&
		    !strcmp(c->cfg_path, f->config_path))
			snap = c;
	}
	FILE *cf = NULL;
	if (snap) {
		f->config_recorded = 1;
		f->config_found = snap->cfg_text != NULL;
		if (snap->cfg_text)
			f->config_excerpt = dt_codex_config_excerpt(snap->cfg_text);
	} else if (f->config_path[0]) {
		cf = fopen(f->config_path, "re");
	}
	if (cf) {
		char *text = NULL;
		size_t tlen = 0;
		FILE *m = open_memstream(&text, &tlen);
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), cf)) > 0)
			fwrite(buf, 1, n, m);
		fclose(m);
		fclose(cf);
		f->config_found = 1;
		f->config_excerpt = dt_codex_config_excerpt(text ? text : "");
		free(text);
	}

	snprintf(f->home, sizeof(f->home), "%s", home ? home : "");
	if (!home || !realpath(home, f->home_real))
		f->home_real[0] = 0;

	f->rec_homes = calloc(r->n + 1, sizeof(*f->rec_homes));
	f->rec_homes_real = calloc(r->n + 1, sizeof(*f->rec_homes_real));
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *rec = &r->recs[i];
		const char *h = rec->type == DT_REC_PROCESS || rec->type == DT_REC_LAUNCH
		                    ? dt_record_env(rec, "HOME")
		                    : NULL;
		int dup = !h || !*h;
		for (size_t k = 0; k < f->nrec_homes && !dup; k++)
			dup = !strcmp(f->rec_homes[k], h);
		if (dup)
			continue;
		char real[PATH_MAX];
		f->rec_homes[f->nrec_homes] = strdup(h);
		f->rec_homes_real[f->nrec_homes++] = realpath(h, real) ? strdup(real) : NULL;
	}

	f->roots = calloc(r->roots.n + 1, sizeof(*f->roots));
	for (size_t i = 0; i < r->roots.n; i++) {
		const struct dt_root *rt = &r->roots.v[i];
		if (rt->readonly_sub)
			continue; /* .git and friends themselves */
		struct dt_fact_root *fr = &f->roots[f->nroots++];
		char real[PATH_MAX];
		fr->path = strdup(rt->path);
		fr->realpath = rt->realpath               ? strdup(rt->realpath)
		               : realpath(rt->path, real) ? strdup(real)
		                                          : NULL;
		fr->source = strdup(rt->source ? rt->source : "");
		fr->protected_by = dt_protected_component(rt->path);
		if (!fr->protected_by)
			fr->protected_by = dt_protected_component(fr->realpath);
	}

	f->launches = calloc(r->n + 1, sizeof(*f->launches));
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *rec = &r->recs[i];
		if (!dt_launch_worthy(rec))
			continue;
		int dup = 0;
		for (size_t k = 0; k < f->nlaunches && !dup; k++)
			dup = dt_same_argv(f->launches[k], rec);
		if (!dup)
			f->launches[f->nlaunches++] = rec;
	}
}

void dt_facts_free(struct dt_facts *f)
{
	for (size_t i = 0; i < f->nroots; i++) {
		free(f->roots[i].path);
		free(f->roots[i].realpath);
		free(f->roots[i].source);
	}
	for (size_t i = 0; i < f->nrec_homes; i++) {
		free(f->rec_homes[i]);
		free(f->rec_homes_real[i]);
	}
	free(f->rec_homes);
	free(f->rec_homes_real);
	free(f->roots);
	free(f->launches);
	free(f->config_excerpt);
	memset(f, 0, sizeof(*f));
}

static void dt_json_str_or_null(struct dt_json *j, const char *s)
{
	dt_json_str(j, s && *s ? s : NULL);
}

void dt_facts_json(FILE *out, const struct dt_facts *f)
{
	struct dt_json j;
	dt_json_init(&j, out, 1);
	dt_json_obj(&j);
	dt_json_key(&j, "denytrace_version");
	dt_json_str(&j, f->version);
	dt_json_key(&j, "ring_format");
	dt_json_uint(&j, f->ring_format);
	dt_json_key(&j, "kernel");
	dt_json_str_or_null(&j, f->kernel);
	dt_json_key(&j, "distribution");
	dt_json_str_or_null(&j, f->distro);
	dt_json_key(&j, "wsl");
	dt_json_bool(&j, f->wsl);
	dt_json_key(&j, "sandboxes_seen");
	dt_json_arr(&j);
	if (f->sb_bubblewrap)
		dt_json_str(&j, "bubblewrap");
	if (f->sb_landlock)
		dt_json_str(&j, "landlock-like");
	if (f->sb_seccomp)
		dt_json_str(&j, "seccomp");
	dt_json_end_arr(&j);
	dt_json_key(&j, "codex");
	if (!f->codex_path[0]) {
		dt_json_null(&j);
	} else {
		dt_json_obj(&j);
		dt_json_key(&j, "path");
		dt_json_str(&j, f->codex_path);
		dt_json_key(&j, "version");
		dt_json_str_or_null(&j, f->codex_status == 0 ? f->codex_version : NULL);
		dt_json_key(&j, "version_status");
		dt_json_int(&j, f->codex_status);
		dt_json_end_obj(&j);
	}
	dt_json_key(&j, "codex_config");
	dt_json_obj(&j);
	dt_json_key(&j, "path");
	dt_json_str_or_null(&j, f->config_path);
	dt_json_key(&j, "found");
	dt_json_bool(&j, f->config_found);
	dt_json_key(&j, "recorded");
	dt_json_bool(&j, f->config_recorded);
	dt_json_key(&j, "relevant_lines");
	dt_json_arr(&j);
	for (const char *p = f->config_excerpt; p && *p;) {
		size_t n = strcspn(p, "\n");
		char *line = strndup(p, n);
		dt_json_str(&j, line);
		free(line);
		p += n + (p[n] ? 1 : 0);
	}
	dt_json_end_arr(&j);
	dt_json_end_obj(&j);
	dt_json_key(&j, "home");
	dt_json_obj(&j);
	dt_json_key(&j, "path");
	dt_json_str_or_null(&j, f->home);
	dt_json_key(&j, "realpath");
	dt_json_str_or_null(&j, f->home_real);
	dt_json_key(&j, "recorded");
	dt_json_arr(&j);
	for (size_t i = 0; i < f->nrec_homes; i++) {
		dt_json_obj(&j);
		dt_json_key(&j, "path");
		dt_json_str(&j, f->rec_homes[i]);
		dt_json_key(&j, "realpath");
		dt_json_str(&j, f->rec_homes_real[i]);
		dt_json_end_obj(&j);
	}
	dt_json_end_arr(&j);
	dt_json_end_obj(&j);
	dt_json_key(&j, "roots");
	dt_json_arr(&j);
	for (size_t i = 0; i < f->nroots; i++) {
		dt_json_obj(&j);
		dt_json_key(&j, "path");
		dt_json_str(&j, f->roots[i].path);
		dt_json_key(&j, "realpath");
		dt_json_str(&j, f->roots[i].realpath);
		dt_json_key(&j, "source");
		dt_json_str(&j, f->roots[i].source);
		dt_json_key(&j, "under_protected");
		dt_json_str(&j, f->roots[i].protected_by);
		dt_json_end_obj(&j);
	}
	dt_json_end_arr(&j);
	dt_json_key(&j, "launches");
	dt_json_arr(&j);
	for (size_t i = 0; i < f->nlaunches; i++) {
		const struct dt_record *rec = f->launches[i];
		dt_json_obj(&j);
		dt_json_key(&j, "type");
		dt_json_str(&j, dt_rec_type_name(rec->type));
		dt_json_key(&j, "pid");
		dt_json_int(&j, rec->pid);
		dt_json_key(&j, "cwd");
		dt_json_str(&j, rec->cwd);
		dt_json_key(&j, "argv");
		dt_json_arr(&j);
		for (size_t k = 0; k < rec->argc; k++)
			dt_json_str(&j, rec->argv[k]);
		dt_json_end_arr(&j);
		dt_json_key(&j, "argv_truncated");
		dt_json_bool(&j, rec->argv_trunc);
		dt_json_end_obj(&j);
	}
	dt_json_end_arr(&j);
	dt_json_key(&j, "redacted");
	dt_json_bool(&j, f->redacted);
	dt_json_end_obj(&j);
	fputc('\n', out);
}


/* argv as one shell-quoted line */
static void dt_shell_line(FILE *out, const struct dt_record *rec)
{
	for (size_t k = 0; k < rec->argc; k++) {
		const char *a = rec->argv[k];
		int plain = *a != 0;
		for (const char *p = a; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr("-_./=:,+@%", *p))
				plain = 0;
		if (k)
			fputc(' ', out);
		if (plain) {
			fputs(a, out);
			continue;
		}
		fputc('\'', out);
		for (const char *p = a; *p; p++) {
			if (*p == '\'')
				fputs("'\\''", out);
			else if ((unsigned char)*p < 0x20 || *p == 0x7f)
				fprintf(out, "\\x%02x", (unsigned char)*p);
			else
				fputc(*p, out);
		}
		fputc('\'', out);
	}
	if (rec->argv_trunc)
		fputs(" ...", out);
}

void dt_facts_markdown(FILE *out, const struct dt_facts *f)
{
	fputs("\n## Facts\n\n", out);
	fprintf(out, "- **denytrace**: %s (ring format %u)\n", f->version, f->ring_format);
	fputs("- **kernel**: ", out);
	dt_md_code_span(out, f->kernel[0] ? f->kernel : "unknown", 0);
	fputs("\n- **distribution**: ", out);
	dt_md_code_span(out, f->distro[0] ? f->distro : "unknown", 0);
	fprintf(out, "\n- **WSL**: %s%s%s%s\n", f->wsl ? "yes" : "no", f->wsl ? " (" : "",
	        f->wsl ? f->wsl_why : "", f->wsl ? ")" : "");
	fputs("- **sandboxes seen**: ", out);
	int any = 0;
	if (f->sb_bubblewrap)
		fprintf(out, "%sbubblewrap", any++ ? ", " : "");
	if (f->sb_landlock)
		fprintf(out, "%sLandlock-like (EACCES on a read-write mount the mode bits allow)",
		        any++ ? ", " : "");
	if (f->sb_seccomp)
		fprintf(out, "%sseccomp filter (mode 2)", any++ ? ", " : "");
	fputs(any ? "\n" : "none recorded\n", out);
	fputs("- **Codex**: ", out);
	if (!f->codex_path[0]) {
		fputs("not found on PATH\n", out);
	} else {
		dt_md_code_span(out, f->codex_status == 0 && f->codex_version[0] ? f->codex_version
		                                                              : "version unknown", 0);
		fputs(" at ", out);
		dt_md_code_span(out, f->codex_path, 0);
		if (f->codex_status == -2)
			fputs(" (`codex --version` timed out after 10 s)", out);
		fputc('\n', out);
	}
	for (size_t i = 0; i < f->nrec_homes; i++) {
		fputs(i ? ", " : "- **HOME of the traced processes**: ", out);
		dt_md_code_span(out, f->rec_homes[i], 0);
		fputs(" (realpath ", out);
		dt_md_code_span(out, f->rec_homes_real[i] ? f->rec_homes_real[i] : "does not exist here",
				0);
		fputc(')', out);
		if (i + 1 == f->nrec_homes)
			fputc('\n', out);
	}
	fputs("- **HOME of denytrace evidence**: ", out);
	dt_md_code_span(out, f->home[0] ? f->home : "unset", 0);
	if (f->home_real[0]) {
		fputs(" (realpath ", out);
		dt_md_code_span(out, f->home_real, 0);
		fputc(')', out);
	}
	fputc('\n', out);

	fputs("\n### Codex config.toml\n\n", out);
	if (!f->config_path[0]) {
		fputs("No config path known (HOME and CODEX_HOME unset).\n", out);
	} else if (!f->config_found) {
		dt_md_code_span(out, f->config_path, 0);
		fputs(" does not exist or is unreadable.\n", out);
	} else {
		fputs("Relevant lines of ", out);
		dt_md_code_span(out, f->config_path, 0);
		fputs(f->config_recorded ? " (as recorded at launch):\n\n" : ":\n\n", out);
		if (f->config_excerpt && *f->config_excerpt)
			fprintf(out, "````toml\n%s````\n", f->config_excerpt);
		else
			fputs("(none: no sandbox_mode, default_permissions, [permissions] or "
			      "[sandbox_workspace_write])\n",
			      out);
	}

	fputs("\n### Roots\n\n", out);
	if (!f->nroots)
		fputs("No roots known.\n", out);
	else
		fputs(
		    "| root | realpath | source | under .git/.codex/.agents |\n|---|---|---|---|\n",
		    out);
	for (size_t i = 0; i < f->nroots; i++) {
		const struct dt_fact_root *fr = &f->roots[i];
		fputs("| ", out);
		dt_md_code_span(out, fr->path, 0);
		fputs(" | ", out);
		if (fr->realpath)
			dt_md_code_span(out, fr->realpath, 0);
		else
			fputs("(does not exist here)", out);
		fputs(" | ", out);
		for (const char *p = fr->source; *p; p++)
			if (*p == '|')
				fputs("\\|", out);
			else if ((unsigned char)*p >= 0x20)
				fputc(*p, out);
		fprintf(out, " | %s%s%s |\n", fr->protected_by ? "**yes** (`" : "no",
		        fr->protected_by ? fr->protected_by : "", fr->protected_by ? "`)" : "");
	}

	fputs("\n### Launch command lines\n\n", out);
	if (!f->nlaunches)
		fputs("None recorded (no launch record, no codex, hermes or hcom process).\n", out);
	for (size_t i = 0; i < f->nlaunches; i++) {
		const struct dt_record *rec = f->launches[i];
		fprintf(out, "%s (pid %lld):\n\n````sh\n",
		        rec->type == DT_REC_LAUNCH ? "Launched" : "Process", (long long)rec->pid);
		dt_shell_line(out, rec);
		fputs("\n````\n\n", out);
	}
}
