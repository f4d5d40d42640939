/* SPDX-License-Identifier: MIT */
/* Gathering the facts for maintainers (facts.h). */
#include "facts.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "classify.h"
#include "ring_format.h"
#include "safeopen.h"
#include "spawn.h"
#include "version.h"
#include "xalloc.h"

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

/* This machine: denytrace's version, the kernel, the distribution, WSL. */
static void dt_facts_system(struct dt_facts *f)
{
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
}

/* Codex on PATH and what `codex --version` says. */
static void dt_facts_codex(struct dt_facts *f)
{
	if (dt_which("codex", f->codex_path, sizeof(f->codex_path)) == 0) {
		const char *argv[] = {f->codex_path, "--version", NULL};
		f->codex_status = dt_capture(argv, NULL, 10000, f->codex_version,
		                             sizeof(f->codex_version), NULL, 0);
		size_t n = strlen(f->codex_version);
		while (n && isspace((unsigned char)f->codex_version[n - 1]))
			f->codex_version[--n] = 0;
	}
}

/* The config lines that decide the sandbox, with every value denytrace
 * does not read as "<redacted>": a snapshot `denytrace codex` recorded is
 * so already (codex_launch.c); the file read here, a user's own, may keep
 * a password in [sandbox_workspace_write] or [permissions.*] as well. */
static char *excerpt_redacted(const char *text, size_t len)
{
	size_t need = dt_redact_config_text(text, len, NULL, 0);
	char *red = malloc(need + 1);
	if (!red)
		dt_out_of_memory();
	dt_redact_config_text(text, len, red, need);
	red[need] = 0;
	char *excerpt = dt_codex_config_excerpt(red);
	free(red);
	return excerpt;
}

/* Codex's config.toml: the path, and its excerpt from the snapshot the
 * ring holds, else from the file as it is now. */
static void dt_facts_config(struct dt_facts *f, const struct dt_report *r)
{
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
		/* the path may come from a ring: never wait on a FIFO there */
		int fd = dt_open_regular(f->config_path, NULL);
		cf = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (fd >= 0 && !cf)
			close(fd);
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
		f->config_excerpt = excerpt_redacted(text ? text : "", text ? tlen : 0);
		free(text);
	}
}

/* The HOME of every traced process, once each, with its realpath. */
static void dt_facts_homes(struct dt_facts *f, const struct dt_report *r)
{
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
}

static void dt_facts_roots(struct dt_facts *f, const struct dt_report *r)
{
	f->roots = calloc(r->roots.n + 1, sizeof(*f->roots));
	for (size_t i = 0; i < r->roots.n; i++) {
		const struct dt_root *rt = &r->roots.v[i];
		if (rt->readonly_sub || !dt_root_is_row(&r->roots, i))
			continue; /* .git and friends themselves; a path listed already */
		const char *src[16];
		size_t nsrc = dt_root_sources(&r->roots, i, src, 16);
		struct dt_fact_root *fr = &f->roots[f->nroots++];
		char real[PATH_MAX];
		fr->path = strdup(rt->path);
		fr->realpath = rt->realpath               ? strdup(rt->realpath)
		               : realpath(rt->path, real) ? strdup(real)
		                                          : NULL;
		size_t len = 1;
		for (size_t k = 0; k < nsrc; k++)
			len += strlen(src[k]) + 2;
		fr->source = calloc(1, len);
		for (size_t k = 0; fr->source && k < nsrc; k++) {
			if (k)
				strcat(fr->source, "; ");
			strcat(fr->source, src[k]);
		}
		fr->protected_by = dt_protected_component(rt->path);
		if (!fr->protected_by)
			fr->protected_by = dt_protected_component(fr->realpath);
	}
}

static void dt_facts_launches(struct dt_facts *f, const struct dt_report *r)
{
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

void dt_facts_collect(struct dt_facts *f, const struct dt_report *r)
{
	memset(f, 0, sizeof(*f));
	dt_facts_system(f);
	dt_facts_sandboxes(f, r);
	dt_facts_codex(f);
	dt_facts_config(f, r);
	const char *home = getenv("HOME");
	snprintf(f->home, sizeof(f->home), "%s", home ? home : "");
	if (!home || !realpath(home, f->home_real))
		f->home_real[0] = 0;
	dt_facts_homes(f, r);
	dt_facts_roots(f, r);
	dt_facts_launches(f, r);
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
