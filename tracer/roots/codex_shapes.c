/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codex_shapes.h"
#include "roots.h"
#include "spawn.h"
#include "words.h"

const struct dt_codex_shape dt_codex_shapes[] = {
#define SHAPE(id, config, layer, tmpdir, args, writable, dropped, says)                            \
	{#id, config, layer, tmpdir, args, writable, dropped, says},
#include "codex_shapes.def"
#undef SHAPE
};
const size_t dt_ncodex_shapes = sizeof(dt_codex_shapes) / sizeof(*dt_codex_shapes);

const char *const dt_codex_probes[] = {
    "A",      "B",        "C",         "W",      "W2",   "T",     "/tmp", "A/.git",
    "W/.git", "W/.codex", "W/.agents", "W/.aws", "hh/r", "W/rel", "L",    "home/rel",
};
const size_t dt_ncodex_probes = sizeof(dt_codex_probes) / sizeof(*dt_codex_probes);

char *dt_codex_shape_expand(const char *s, const char *top)
{
	size_t n = 1, tl = strlen(top);
	for (const char *p = s; *p; p++)
		n += p[0] == '$' && p[1] == 'X' ? tl : 1;
	char *out = malloc(n), *o = out;
	if (!out)
		return NULL;
	for (const char *p = s; *p; p++) {
		if (p[0] == '$' && p[1] == 'X') {
			memcpy(o, top, tl);
			o += tl;
			p++;
		} else {
			*o++ = *p;
		}
	}
	*o = 0;
	return out;
}

const char *dt_codex_probe_path(const char *probe, const char *top, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%s%s", probe[0] == '/' ? "" : top, probe[0] == '/' ? "" : "/", probe);
	return buf;
}

static int write_expanded(const char *path, const char *text, const char *top)
{
	char *t = dt_codex_shape_expand(text, top);
	FILE *f = t ? fopen(path, "wx") : NULL;
	int ok = f && fputs(t, f) >= 0;
	if (f && fclose(f) != 0)
		ok = 0;
	free(t);
	return ok ? 0 : -1;
}

int dt_codex_shape_setup(const struct dt_codex_shape *s, const char *top)
{
	static const char *const dirs[] = {
	    "home", "home/rel", "hh",       "hh/r",      "A",      "A/.git", "B",  "C",
	    "W",    "W/.git",   "W/.codex", "W/.agents", "W/.aws", "W/rel",  "W2", "T"};
	char path[PATH_MAX];
	if (mkdir(top, 0755) != 0)
		return -1;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", top, dirs[i]);
		if (mkdir(path, 0755) != 0)
			return -1;
	}
	char target[PATH_MAX];
	snprintf(target, sizeof(target), "%s/A", top);
	snprintf(path, sizeof(path), "%s/L", top);
	if (symlink(target, path) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/home/config.toml", top);
	if (s->config && write_expanded(path, s->config, top) != 0)
		return -1;
	const char *colon = s->layer ? strchr(s->layer, ':') : NULL;
	if (!colon)
		return 0;
	if (memchr(s->layer, '/', (size_t)(colon - s->layer)))
		snprintf(path, sizeof(path), "%s/%.*s", top, (int)(colon - s->layer), s->layer);
	else
		snprintf(path, sizeof(path), "%s/home/%.*s.config.toml", top,
		         (int)(colon - s->layer), s->layer);
	return write_expanded(path, colon + 1, top);
}

/* Codex's words for s, expanded: argv[1..] of `codex ARGS -- CMD...`. */
static char **shape_words(const struct dt_codex_shape *s, const char *top, size_t *n)
{
	char *args = dt_codex_shape_expand(s->args, top);
	char **words = args ? dt_split_words(args, n) : NULL;
	free(args);
	return words;
}

static int model_writable(const struct dt_rootset *rs, const char *path)
{
	char real[PATH_MAX];
	const char *p = realpath(path, real) ? real : path;
	const struct dt_root *r = dt_root_for_path(rs, p, 1u << DT_ROOT_CODEX, 1);
	return r && !r->readonly_sub && !r->dropped_by;
}

int dt_codex_shape_model(const struct dt_codex_shape *s, const char *version, const char *top,
                         struct dt_rootset *rs, char *got, size_t cap, char *err, size_t errcap)
{
	char home[PATH_MAX + 8], chome[PATH_MAX + 8], cwd[PATH_MAX + 8];
	size_t nw = 0;
	char **words = shape_words(s, top, &nw);
	char *tmpdir = s->tmpdir ? dt_codex_shape_expand(s->tmpdir, top) : NULL;
	const char **argv = words ? calloc(nw + 4, sizeof(*argv)) : NULL;
	int rc = -1;
	got[0] = 0;
	if (!argv) {
		snprintf(err, errcap, "%s: its arguments cannot be split", s->id);
		goto out;
	}
	size_t k = 0;
	argv[k++] = "codex";
	for (size_t i = 0; i < nw; i++)
		argv[k++] = words[i];
	argv[k++] = "--";
	argv[k++] = "sh";
	snprintf(home, sizeof(home), "%s/hh", top);
	snprintf(chome, sizeof(chome), "%s/home", top);
	snprintf(cwd, sizeof(cwd), "%s/W", top);
	struct dt_codex_launch l = {.argv = argv,
	                            .argc = k,
	                            .cwd = cwd,
	                            .home = home,
	                            .codex_home = chome,
	                            .tmpdir = tmpdir,
	                            .codex_version = version};
	if (dt_roots_from_codex(rs, &l, NULL, err, errcap) != 0)
		goto out;
	rc = 0;
	if (rs->codex_refused) {
		snprintf(got, cap, "refused");
		goto out;
	}
	int all = rs->codex_sandbox_mode && !strcmp(rs->codex_sandbox_mode, "danger-full-access");
	for (size_t i = 0; i < dt_ncodex_probes; i++) {
		char p[PATH_MAX + 32];
		dt_codex_probe_path(dt_codex_probes[i], top, p, sizeof(p));
		if (all || model_writable(rs, p))
			dt_word_add(got, cap, dt_codex_probes[i]);
	}
out:
	free(argv);
	dt_words_free(words);
	free(tmpdir);
	return rc;
}

/* The probe an "OK PATH" line of the command names, or NULL. */
static const char *probe_of(const char *path, size_t len, const char *top)
{
	for (size_t i = 0; i < dt_ncodex_probes; i++) {
		char full[PATH_MAX + 32];
		dt_codex_probe_path(dt_codex_probes[i], top, full, sizeof(full));
		if (strlen(full) == len && !strncmp(full, path, len))
			return dt_codex_probes[i];
	}
	return NULL;
}

/* The command Codex runs: "RAN", then "OK DIR" for each probe directory it
 * could create a file in; the files are removed again at the end. Shell
 * built-ins only, but for one rm: a shape costs Codex's start-up, not 32
 * more processes. */
static char *probe_script(const char *top)
{
	size_t cap = 256 + dt_ncodex_probes * (strlen(top) + 16);
	char *script = malloc(cap);
	if (!script)
		return NULL;
	snprintf(script, cap, "echo RAN; set --; for d in");
	for (size_t i = 0; i < dt_ncodex_probes; i++) {
		char p[PATH_MAX + 32];
		dt_codex_probe_path(dt_codex_probes[i], top, p, sizeof(p));
		size_t l = strlen(script);
		snprintf(script + l, cap - l, " '%s'", p);
	}
	size_t l = strlen(script);
	snprintf(script + l, cap - l,
	         "; do if true 2>/dev/null >\"$d/.dtshape.$$\"; then echo \"OK $d\"; "
	         "set -- \"$@\" \"$d/.dtshape.$$\"; fi; done; [ $# -eq 0 ] || rm -f \"$@\"");
	return script;
}

int dt_codex_shape_run(const struct dt_codex_shape *s, const char *codex, const char *top,
                       int timeout_ms, char *seen, size_t cap, char *out, size_t outcap)
{
	char w[PATH_MAX + 8], env_codex[PATH_MAX + 16], env_home[PATH_MAX + 16],
	    env_tmp[PATH_MAX + 16];
	size_t nw = 0;
	char **words = shape_words(s, top, &nw);
	char *tmpdir = s->tmpdir ? dt_codex_shape_expand(s->tmpdir, top) : NULL;
	char *script = probe_script(top);
	const char **argv = words ? calloc(nw + 8, sizeof(*argv)) : NULL;
	int rc = -1;
	seen[0] = 0;
	if (!argv || !script)
		goto out;
	/* Codex runs in $X/W: env's --chdir, so the capture needs no cwd */
	snprintf(w, sizeof(w), "--chdir=%s/W", top);
	size_t k = 0;
	argv[k++] = "env";
	argv[k++] = w;
	argv[k++] = codex;
	for (size_t i = 0; i < nw; i++)
		argv[k++] = words[i];
	argv[k++] = "--";
	argv[k++] = "sh";
	argv[k++] = "-c";
	argv[k++] = script;
	snprintf(env_codex, sizeof(env_codex), "CODEX_HOME=%s/home", top);
	snprintf(env_home, sizeof(env_home), "HOME=%s/hh", top);
	if (tmpdir)
		snprintf(env_tmp, sizeof(env_tmp), "TMPDIR=%s", tmpdir);
	else
		snprintf(env_tmp, sizeof(env_tmp), "TMPDIR");
	const char *env[] = {env_codex, env_home, env_tmp, "RUST_BACKTRACE=0", NULL};
	size_t half = outcap / 2;
	rc = dt_capture(argv, env, timeout_ms, out, half, out + half, outcap - half);
	if (rc == -1)
		goto out;
	if (!strstr(out, "RAN\n"))
		snprintf(seen, cap, "refused");
	for (const char *l = out; (l = strstr(l, "OK ")); l++) {
		if (l != out && l[-1] != '\n')
			continue;
		const char *e = strchr(l, '\n');
		const char *p = probe_of(l + 3, e ? (size_t)(e - l - 3) : strlen(l + 3), top);
		if (p && !dt_word_in(seen, p))
			dt_word_add(seen, cap, p);
	}
	/* one text: Codex's messages after the command's */
	size_t n = strlen(out);
	if (out + half != out + n)
		memmove(out + n, out + half, strlen(out + half) + 1);
out:
	free(argv);
	free(script);
	dt_words_free(words);
	free(tmpdir);
	return rc;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void shape_compare(const struct dt_codex_shape *s, const char *codex, const char *version,
                          const char *top, struct dt_codex_shape_result *r)
{
	char out[16384], err[512] = "";
	struct dt_rootset rs = {0};
	*r = (struct dt_codex_shape_result){.shape = s};
	if (dt_codex_shape_setup(s, top) != 0) {
		r->status = DT_SHAPE_NOT_RUN;
		snprintf(r->why, sizeof(r->why), "cannot set up %s: %s", top, strerror(errno));
		return;
	}
	int rc =
	    dt_codex_shape_run(s, codex, top, 30000, r->codex, sizeof(r->codex), out, sizeof(out));
	if (rc < 0) {
		r->status = DT_SHAPE_NOT_RUN;
		snprintf(r->why, sizeof(r->why), "%s",
		         rc == -2 ? "Codex ran over 30 s" : "Codex could not be started");
		return;
	}
	if (dt_codex_shape_model(s, version, top, &rs, r->model, sizeof(r->model), err,
	                         sizeof(err)) != 0) {
		r->status = DT_SHAPE_NOT_RUN;
		snprintf(r->why, sizeof(r->why), "the model failed: %s", err);
	} else {
		r->status = dt_same_words(r->codex, r->model) ? DT_SHAPE_AGREE : DT_SHAPE_DIFFER;
	}
	dt_rootset_free(&rs);
}

int dt_codex_shapes_check(const char *codex, const char *version, struct dt_codex_shape_result *res,
                          void (*progress)(size_t done, size_t n, void *arg), void *arg, char *err,
                          size_t errcap)
{
	char base[] = "/var/tmp/denytrace-shapes.XXXXXX";
	if (!mkdtemp(base)) {
		snprintf(err, errcap, "cannot create a directory in /var/tmp: %s", strerror(errno));
		return -1;
	}
	int differ = 0;
	for (size_t i = 0; i < dt_ncodex_shapes; i++) {
		char top[sizeof(base) + 128];
		snprintf(top, sizeof(top), "%s/%s", base, dt_codex_shapes[i].id);
		shape_compare(&dt_codex_shapes[i], codex, version, top, &res[i]);
		differ += res[i].status == DT_SHAPE_DIFFER;
		if (progress)
			progress(i + 1, dt_ncodex_shapes, arg);
	}
	nftw(base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return differ;
}
