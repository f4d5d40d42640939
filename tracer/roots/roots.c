// SPDX-License-Identifier: MIT
/*
 * The root set (roots.h): adding and merging roots, warnings, lookup by
 * path. The general string helpers: util/strutil.c. Where roots come from: codex_cli.c and
 * roots_codex.c (Codex's command line and config.toml, following codex-rs config/mod.rs
 * derive_sandbox_policy and utils/absolute-path as of Codex 0.169),
 * roots_env.c (Hermes' and hcom's environment), mounts.c (what the sandbox
 * actually granted: writable mounts seen from inside).
 */
#include "roots.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pathnorm.h"
#include "roots_int.h"

/* ---- helpers ------------------------------------------------------------ */

/* "~" and "~/x" name the home directory, as Codex's AbsolutePathBuf reads
 * them; then relative paths are taken against base. NULL when the path
 * needs a home or base that is unknown. */
char *resolve_path(const char *path, const char *base, const char *home)
{
	if (!strcmp(path, "~") || starts_with(path, "~/")) {
		if (!nonempty(home) || home[0] != '/')
			return NULL;
		return normalize_path(home, path[1] ? path + 2 : ".");
	}
	if (path[0] != '/' && (!nonempty(base) || base[0] != '/'))
		return NULL;
	return normalize_path(base, path);
}

/* ---- the set ------------------------------------------------------------ */

int dt_path_under(const char *path, const char *root)
{
	size_t rl;

	if (!path || !root || !*root)
		return 0;
	rl = strlen(root);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (rl == 1 && root[0] == '/')
		return path[0] == '/';
	if (strncmp(path, root, rl))
		return 0;
	return path[rl] == 0 || path[rl] == '/';
}

struct dt_root *find_root(const struct dt_rootset *rs, const char *norm, enum dt_root_kind kind)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].kind == kind && !strcmp(rs->v[i].path, norm))
			return &rs->v[i];
	return NULL;
}

/* Relative paths are taken against this process's cwd: that is what a
 * user means by `--root ./data`. Derived roots are made absolute by their
 * source's own rules before they get here. */
/* Another source naming a root already there. Every process's writable
 * mounts name the same roots again: one of those is enough. */
static void root_add_source(struct dt_root *r, const char *source)
{
	if (!nonempty(source) || r->kind == DT_ROOT_EFFECTIVE ||
	    (r->source && !strcmp(r->source, source)) || r->nalso >= 8)
		return;
	for (size_t k = 0; k < r->nalso; k++)
		if (!strcmp(r->also[k], source))
			return;
	r->also = xrealloc(r->also, (r->nalso + 1) * sizeof(*r->also));
	r->also[r->nalso++] = xstrdup(source);
}

static bool same_row(const struct dt_root *a, const struct dt_root *b)
{
	return !strcmp(a->path, b->path) && a->readonly_sub == b->readonly_sub;
}

int dt_root_is_row(const struct dt_rootset *rs, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (same_row(&rs->v[k], &rs->v[i]))
			return 0;
	return 1;
}

static size_t push_source(const char **out, size_t n, size_t max, const char *s)
{
	if (!nonempty(s) || n >= max)
		return n;
	for (size_t k = 0; k < n; k++)
		if (!strcmp(out[k], s))
			return n;
	out[n] = s;
	return n + 1;
}

size_t dt_root_sources(const struct dt_rootset *rs, size_t i, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t k = i; k < rs->n; k++) {
		const struct dt_root *r = &rs->v[k];
		if (k != i && !same_row(r, &rs->v[i]))
			continue;
		n = push_source(out, n, max, r->source);
		for (size_t a = 0; a < r->nalso; a++)
			n = push_source(out, n, max, r->also[a]);
	}
	return n;
}

int dt_root_row_granted(const struct dt_rootset *rs, size_t i)
{
	for (size_t k = i; k < rs->n; k++)
		if ((k == i || same_row(&rs->v[k], &rs->v[i])) &&
		    rs->v[k].kind != DT_ROOT_EFFECTIVE)
			return rs->v[k].granted;
	return 1;
}

struct dt_root *dt_roots_add(struct dt_rootset *rs, const char *path, enum dt_root_kind kind,
                             const char *source, const char *knob)
{
	struct dt_root *r;
	char *norm;

	if (!rs || !nonempty(path))
		return NULL;
	if (path[0] == '/') {
		norm = normalize_path(NULL, path);
	} else {
		char *cwd = getcwd(NULL, 0);

		norm = normalize_path(cwd ? cwd : "/", path);
		free(cwd);
	}
	r = find_root(rs, norm, kind);
	if (r) {
		free(norm);
		if (!r->knob && knob)
			r->knob = xstrdup(knob);
		root_add_source(r, source);
		return r;
	}
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 16;
		rs->v = xrealloc(rs->v, rs->cap * sizeof(*rs->v));
	}
	r = &rs->v[rs->n++];
	memset(r, 0, sizeof(*r));
	r->path = norm;
	r->realpath = realpath(norm, NULL);
	r->source = xstrdup(source);
	r->knob = xstrdup(knob);
	r->kind = kind;
	r->granted = -1;
	return r;
}

void dt_roots_warn(struct dt_rootset *rs, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		dt_out_of_memory();
	va_end(ap);
	rs->warnings = xrealloc(rs->warnings, (rs->nwarnings + 1) * sizeof(*rs->warnings));
	rs->warnings[rs->nwarnings++] = msg;
}

void dt_rootset_free(struct dt_rootset *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->v[i].path);
		free(rs->v[i].realpath);
		free(rs->v[i].source);
		free(rs->v[i].knob);
		free(rs->v[i].dropped_by);
		for (size_t k = 0; k < rs->v[i].nalso; k++)
			free(rs->v[i].also[k]);
		free(rs->v[i].also);
	}
	free(rs->v);
	free(rs->codex_sandbox_mode);
	free(rs->codex_config_path);
	free(rs->codex_override);
	for (size_t i = 0; i < rs->ncodex_list; i++)
		free(rs->codex_list[i]);
	free(rs->codex_list);
	free(rs->codex_profile_path);
	free(rs->codex_refused);
	free(rs->codex_permission_profile);
	free(rs->codex_readback_why);
	for (size_t i = 0; i < rs->ncodex_says; i++)
		free(rs->codex_says[i]);
	free(rs->codex_says);
	for (size_t i = 0; i < rs->ncodex_disagree; i++)
		free(rs->codex_disagree[i]);
	free(rs->codex_disagree);
	for (size_t i = 0; i < rs->nwarnings; i++)
		free(rs->warnings[i]);
	free(rs->warnings);
	dt_mcp_servers_free(rs->mcp, rs->nmcp);
	memset(rs, 0, sizeof(*rs));
}

/* ---- lookup ------------------------------------------------------------------ */

const struct dt_root *dt_root_for_path(const struct dt_rootset *rs, const char *path,
                                       unsigned kinds_mask, int want_readonly)
{
	const struct dt_root *best = NULL;
	size_t best_score = 0;

	if (!rs || !path)
		return NULL;
	for (size_t i = 0; i < rs->n; i++) {
		const struct dt_root *r = &rs->v[i];
		size_t score = 0;

		if (!(kinds_mask & (1u << r->kind)))
			continue;
		if (r->readonly_sub && !want_readonly)
			continue;
		/* Longer match wins; at equal length the logical path beats
		 * the realpath. Scores start at 1 so "/" still counts. */
		if (dt_path_under(path, r->path))
			score = 2 * strlen(r->path) + 2;
		if (r->realpath && dt_path_under(path, r->realpath) &&
		    2 * strlen(r->realpath) + 1 > score)
			score = 2 * strlen(r->realpath) + 1;
		if (score > best_score) {
			best = r;
			best_score = score;
		}
	}
	return best;
}
