/* SPDX-License-Identifier: MIT */
/* evidence --redact on the records themselves: what the bundle's redaction
 * rules are made of, and the records' argv, environment and config text. */
#include <ctype.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recfmt.h"
#include "redact.h"
#include "report.h"

static const char *pool_keep(struct dt_strpool *p, char *s)
{
	if (s && p->n == p->cap) {
		char **v = realloc(p->v, (p->cap = p->cap ? 2 * p->cap : 64) * sizeof(*v));
		if (!v) {
			free(s);
			return NULL;
		}
		p->v = v;
	}
	if (s)
		p->v[p->n++] = s;
	return s;
}

void dt_strpool_free(struct dt_strpool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
}

/* One argv word through the shared rules; *expect as dt_redact_arg. */
static const char *redact_word(struct dt_strpool *p, const char *w, int *expect)
{
	int e = *expect;
	size_t need = dt_redact_arg(w, strlen(w), NULL, 0, &e);
	char *out = malloc(need + 1);
	if (!out)
		return DT_REDACTED;
	dt_redact_arg(w, strlen(w), out, need, expect);
	out[need] = 0;
	const char *kept = pool_keep(p, out);
	return kept ? kept : DT_REDACTED;
}

/* A recorded config file through dt_redact_config_text. */
static void redact_config_text(struct dt_record *rec, struct dt_strpool *p)
{
	size_t need = dt_redact_config_text(rec->cfg_text, rec->cfg_len, NULL, 0);
	char *out = malloc(need + 1);
	if (out) {
		dt_redact_config_text(rec->cfg_text, rec->cfg_len, out, need);
		out[need] = 0;
	}
	rec->cfg_text = pool_keep(p, out); /* NULL: shown as unreadable */
	rec->cfg_len = rec->cfg_text ? need : 0;
}

/* evidence --redact: the argv and environment of every record, and the
 * config files `denytrace codex` recorded, through the rules the probe
 * applies (preload/secrets.h), whichever version wrote the ring, before
 * anything is rendered: every file of the bundle sees them. */
void dt_redact_records(struct dt_report *r, struct dt_strpool *p)
{
	for (size_t i = 0; i < r->n; i++) {
		struct dt_record *rec = &r->recs[i];
		int expect = 0;
		for (size_t k = 0; k < rec->argc; k++)
			rec->argv[k] = redact_word(p, rec->argv[k], &expect);
		size_t kept = 0;
		for (size_t k = 0; k < rec->nenv; k++) {
			const char *e = rec->env[k];
			size_t need = dt_redact_env(e, strlen(e), NULL, 0);
			char *out = need ? malloc(need + 1) : NULL;
			if (!out)
				continue; /* a secret name: dropped */
			dt_redact_env(e, strlen(e), out, need);
			out[need] = 0;
			if (pool_keep(p, out))
				rec->env[kept++] = out;
		}
		rec->nenv = kept;
		if (rec->cfg_text)
			redact_config_text(rec, p);
	}
}

static void add_user_of_uid(struct dt_redaction *rd, int64_t uid)
{
	if (uid < 0)
		return;
	struct passwd *pw = getpwuid((uid_t)uid);
	if (!pw)
		return;
	dt_redact_user(rd, pw->pw_name);
	if (pw->pw_uid >= 1000 && pw->pw_uid != 65534)
		dt_redact_home(rd, pw->pw_dir);
}

/* Could a recorded HOME, replaced wherever it occurs in a bundle file,
 * only ever replace a path? It is the traced program's to choose: "/text"
 * would turn every "</text>" of the SVG into "<~>", "\": " every JSON
 * key's end into "~". So: absolute, two components at least, none of the
 * characters markup is made of, and a directory on this host (so is what
 * it resolves to). */
static int home_is_only_a_path(const char *home)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                            "0123456789/._-+@,:=%~";
	if (!home || home[0] != '/' || !strchr(home + 1, '/') || home[strspn(home, plain)])
		return 0;
	char real[PATH_MAX];
	struct stat st;
	return stat(home, &st) == 0 && S_ISDIR(st.st_mode) && realpath(home, real) &&
	       real[strspn(real, plain)] == 0 && strchr(real + 1, '/');
}

/* Is name a word the bundle's JSON or SVG is made of? Replaced as a word
 * in every file, it would break them: "null" a JSON value, "font" the
 * attribute font-size, "UTF" the SVG's XML declaration. */
static int markup_word(const char *name)
{
	static const char *const words[] = {
	    "true",        "false",      "null",        "svg",          "xml",         "version",
	    "encoding",    "UTF",        "xmlns",       "http",         "www",         "w3",
	    "org",         "www.w3.org", "w3.org",      "text",         "tspan",       "line",
	    "rect",        "title",      "fill",        "fill-opacity", "opacity",     "font",
	    "font-family", "font-size",  "font-weight", "family",       "size",        "weight",
	    "height",      "width",      "stroke",      "anchor",       "text-anchor", "viewBox",
	    "x1",          "x2",         "y1",          "y2",           "ox",          "sans",
	    "sans-serif",  "serif",      "bold",        "start",        "middle",      "end",
	    "DejaVu",      "Verdana"};
	for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
		if (!strcmp(name, words[i]))
			return 1;
	return 0;
}

/* A user name a record holds is the traced program's to choose: an
 * account of this host, else a name of the portable user name characters
 * that is no word of the bundle's markup. */
static void redact_recorded_user(struct dt_redaction *rd, const char *name)
{
	static const char portable[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                               "0123456789._-";
	if (!name)
		return;
	int shaped = (isalpha((unsigned char)name[0]) || name[0] == '_') &&
	             !name[strspn(name, portable)] && !markup_word(name);
	if (shaped || getpwnam(name))
		dt_redact_user(rd, name);
}

/* The home directories and user names of this user and of every process
 * in the rings. */
void dt_redact_collect(struct dt_redaction *rd, const struct dt_report *r)
{
	dt_redact_home(rd, getenv("HOME"));
	struct passwd *pw = getpwuid(getuid());
	if (pw) {
		dt_redact_home(rd, pw->pw_dir);
		dt_redact_user(rd, pw->pw_name);
	}
	dt_redact_user(rd, getenv("USER"));
	dt_redact_user(rd, getenv("LOGNAME"));
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *rec = &r->recs[i];
		if (rec->type == DT_REC_PROCESS || rec->type == DT_REC_LAUNCH) {
			const char *home = dt_record_env(rec, "HOME");
			if (home_is_only_a_path(home))
				dt_redact_home(rd, home);
			redact_recorded_user(rd, dt_record_env(rec, "USER"));
			redact_recorded_user(rd, dt_record_env(rec, "LOGNAME"));
		}
		if (i == 0 || rec->uid != r->recs[i - 1].uid)
			add_user_of_uid(rd, rec->uid);
		if (rec->ruid != rec->uid && rec->type == DT_REC_PROCESS)
			add_user_of_uid(rd, rec->ruid);
	}
}
