/* SPDX-License-Identifier: MIT */
/* denytrace evidence: a bundle a maintainer can act on, and a .tar.gz of it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "facts.h"
#include "options.h"
#include "outfile.h"
#include "privdir.h"
#include "recfmt.h"
#include "report.h"
#include "ring_format.h"
#include "safeopen.h"
#include "sidecar.h"
#include "spawn.h"
#include "tarball.h"

static const char evidence_usage[] =
    "usage: denytrace evidence [options] [RING...]\n"
    "\n"
    "Writes a bundle for a maintainer: a directory and a .tar.gz of it beside it,\n"
    "holding report.md (the Markdown report, ready to paste into an issue, then\n"
    "the facts), report.json, timeline.svg (the run as a picture), facts.json,\n"
    "records.jsonl, and copies of the rings (default ./denytrace.ring). The\n"
    "facts: denytrace version, kernel,\n"
    "distribution, WSL or not, the sandboxes seen, `codex --version`, the lines\n"
    "of Codex's config.toml that decide the sandbox, the realpath of HOME and of\n"
    "each root, whether a root sits under .git, .codex or .agents, and the launch\n"
    "command lines recorded.\n"
    "\n";

struct dt_bundle {
	char dir[PATH_MAX];
	int dfd; /* dir, opened once: every file goes in there, wherever its name points later */
	const struct dt_redaction *rd; /* NULL: write as is */
	char **files;                  /* names written, for the summary */
	size_t nfiles;
	struct dt_tarball tar; /* every file also goes in here, as written */
};

/* Writes text (redacted when asked) as DIR/name. 0 or -1. */
/* Redaction's placeholders ("<user>", "<redacted>") would be markup in an
 * XML file: there they are written as text. Returns a malloc'ed copy. */
static char *xml_placeholders(const char *in, size_t len, size_t *outlen)
{
	static const char *const ph[][2] = {{"<user>", "&lt;user&gt;"},
	                                    {"<redacted>", "&lt;redacted&gt;"}};
	char *out = malloc(len * 3 + 1);
	size_t n = 0;
	for (size_t i = 0; out && i < len;) {
		size_t k = 0;
		while (k < 2 && strncmp(in + i, ph[k][0], strlen(ph[k][0])))
			k++;
		if (k < 2 && i + strlen(ph[k][0]) <= len) {
			memcpy(out + n, ph[k][1], strlen(ph[k][1]));
			n += strlen(ph[k][1]);
			i += strlen(ph[k][0]);
		} else {
			out[n++] = in[i++];
		}
	}
	if (out)
		out[n] = 0;
	*outlen = n;
	return out;
}

static int bundle_write(struct dt_bundle *b, const char *name, const char *text, size_t len)
{
	char *red = NULL;
	if (b->rd) {
		red = dt_redact_apply(b->rd, text, len, &len);
		text = red;
	}
	size_t nl = strlen(name);
	if (b->rd && red && nl > 4 && !strcmp(name + nl - 4, ".svg")) {
		char *x = xml_placeholders(red, len, &len);
		free(red);
		text = red = x;
	}
	int fd = openat(b->dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc = fd < 0 ? -1 : 0;
	for (size_t off = 0; !rc && off < len;) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = -1;
		else
			off += (size_t)n;
	}
	if (fd >= 0 && close(fd) < 0)
		rc = -1;
	if (!rc)
		dt_tarball_file(&b->tar, name, text, len);
	free(red);
	if (rc)
		dt_fail(DT_EXIT_IO, "evidence: cannot write %s/%s: %s", b->dir, name,
		        strerror(errno));
	else
		b->files[b->nfiles++] = strdup(name);
	return rc;
}

/* A memstream, filled by the caller, then written through bundle_write. */
struct dt_mem {
	char *text;
	size_t len;
	FILE *f;
};

static FILE *mem_open(struct dt_mem *m)
{
	m->text = NULL;
	m->len = 0;
	m->f = open_memstream(&m->text, &m->len);
	return m->f;
}

/* Writes the memstream as DIR/name, unless an earlier file failed (skip):
 * then it is only released. */
static int mem_commit(struct dt_bundle *b, struct dt_mem *m, const char *name, int skip)
{
	int rc = m->f && fclose(m->f) == 0 ? 0 : -1;
	if (rc && !skip)
		dt_fail(DT_EXIT_IO, "evidence: out of memory writing %s", name);
	if (!rc && !skip)
		rc = bundle_write(b, name, m->text ? m->text : "", m->len);
	free(m->text);
	return skip ? -1 : rc;
}

static int copy_ring(struct dt_bundle *b, const char *src, size_t idx)
{
	char *dup = strdup(src);
	char name[NAME_MAX + 1];
	const char *base = basename(dup);
	if (idx)
		snprintf(name, sizeof(name), "%zu-%s", idx + 1, base);
	else
		snprintf(name, sizeof(name), "%s", base);
	free(dup);
	if (!strcmp(name, "report.md") || !strcmp(name, "report.json") ||
	    !strcmp(name, "facts.json") || !strcmp(name, "records.jsonl"))
		snprintf(name, sizeof(name), "ring-%zu.ring", idx + 1);
	char dst[PATH_MAX];
	snprintf(dst, sizeof(dst), "%s/%s", b->dir, name);
	int in = dt_open_regular(src, NULL);
	uint64_t magic = 0;
	/* read again, by name, long after it was loaded: the traced program
	 * may have put a link to a private key there since */
	if (in >= 0 && (pread(in, &magic, sizeof(magic), 0) != (ssize_t)sizeof(magic) ||
	                magic != DT_RING_MAGIC)) {
		close(in);
		dt_fail(DT_EXIT_IO, "evidence: %s is no longer a ring; it was not copied", src);
		return -1;
	}
	int out = openat(b->dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc = in < 0 || out < 0 ? -1 : 0;
	struct stat st;
	if (!rc && fstat(in, &st) == 0)
		dt_tarball_entry(&b->tar, name, (uint64_t)st.st_size);
	else
		rc = -1;
	char buf[65536];
	while (!rc) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -1 : 0;
			break;
		}
		dt_tarball_data(&b->tar, buf, (size_t)n);
		for (ssize_t off = 0; off < n && !rc;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				rc = -1;
			else
				off += w;
		}
	}
	int e = errno;
	dt_tarball_entry_end(&b->tar); /* a ring truncated meanwhile: zeros */
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0)
		rc = -1;
	if (rc) {
		dt_fail(DT_EXIT_IO, "evidence: cannot copy %s to %s: %s", src, dst, strerror(e));
		return -1;
	}
	b->files[b->nfiles++] = strdup(name);
	return 0;
}

/* Strings the redacted records point to, freed with the report. */
struct dt_strpool {
	char **v;
	size_t n, cap;
};

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

static void pool_free(struct dt_strpool *p)
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
static void redact_records(struct dt_report *r, struct dt_strpool *p)
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

/* records.jsonl, with secret-looking environment entries dropped. */
static void write_records(FILE *f, const struct dt_report *r, int drop_secrets)
{
	struct dt_symbolizer *sym = dt_symbolizer_new();
	for (size_t i = 0; i < r->n; i++) {
		struct dt_record rec = r->recs[i];
		const char **env = NULL;
		if (drop_secrets && rec.nenv) {
			env = calloc(rec.nenv, sizeof(*env));
			size_t k = 0;
			for (size_t e = 0; e < rec.nenv; e++)
				if (rec.env[e] && !dt_env_is_secret(rec.env[e]))
					env[k++] = rec.env[e];
			rec.env = env;
			rec.nenv = k;
		}
		struct dt_json j;
		dt_json_init(&j, f, 0);
		dt_record_json(&j, &rec, sym);
		fputc('\n', f);
		free(env);
	}
	dt_symbolizer_free(sym);
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

/* The home directories and user names of this user and of every process
 * in the rings. */
static void collect_redaction(struct dt_redaction *rd, const struct dt_report *r)
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
			dt_redact_home(rd, dt_record_env(rec, "HOME"));
			dt_redact_user(rd, dt_record_env(rec, "USER"));
			dt_redact_user(rd, dt_record_env(rec, "LOGNAME"));
		}
		if (i == 0 || rec->uid != r->recs[i - 1].uid)
			add_user_of_uid(rd, rec->uid);
		if (rec->ruid != rec->uid && rec->type == DT_REC_PROCESS)
			add_user_of_uid(rd, rec->ruid);
	}
}

/* 1 when path exists and is not an empty directory. */
static int dir_in_use(const char *path, int *not_dir)
{
	struct stat st;
	*not_dir = 0;
	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		*not_dir = 1;
		return 1;
	}
	DIR *d = opendir(path);
	if (!d)
		return 1;
	int entries = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			entries++;
	closedir(d);
	return entries > 0;
}

/* The bundle directory, made (or, empty, found) private to the caller:
 * the bundle holds the unredacted ring, and another user who owned it
 * could read or swap its files. Opened once without
 * following a link, so that the files land in it even when its name is
 * swapped (the ring's directory is the traced program's). 0 or -1. */
static int bundle_open_dir(struct dt_bundle *b, char *err, size_t cap)
{
	if (dt_private_dir(b->dir, 0700, err, cap) < 0)
		return -1;
	b->dfd = open(b->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (b->dfd < 0 || fstat(b->dfd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, cap, "%s changed while it was being checked; nothing was written",
		         b->dir);
		if (b->dfd >= 0)
			close(b->dfd);
		return -1;
	}
	return 0;
}

/* Starts the tarball: gzip writes a file created under a name of our own
 * and renamed into place at the end (given a path, it could follow a
 * symbolic link planted at DIR.tar.gz). 0 or -1 with the message printed. */
static int tarball_begin(struct dt_bundle *b, struct dt_outfile *out, const char *tarball)
{
	char err[1024], *dup = strdup(b->dir);
	int rc = dt_outfile_begin(out, tarball, DT_OUT_NEW_OR_OWN, err, sizeof(err));
	if (!rc && (!dup || dt_tarball_begin(&b->tar, fileno(out->f), basename(dup), err,
	                                     sizeof(err)) < 0)) {
		dt_outfile_abort(out);
		rc = -1;
	}
	free(dup);
	if (rc)
		dt_fail(DT_EXIT_IO, "evidence: %s", err);
	return rc;
}

/* Ends the tarball: in place when every file went in (failed 0), else
 * removed. Returns 1 when it failed. */
static int tarball_end(struct dt_bundle *b, struct dt_outfile *out, const char *tarball, int failed)
{
	if (dt_tarball_end(&b->tar) < 0 && !failed) {
		dt_fail(DT_EXIT_IO, "evidence: gzip could not write %s", tarball);
		failed = 1;
	}
	if (failed) {
		dt_outfile_abort(out);
		return 1;
	}
	if (dt_outfile_commit(out) < 0) {
		dt_fail(DT_EXIT_IO, "evidence: cannot create %s: %s", tarball, strerror(errno));
		return 1;
	}
	return 0;
}

/* What the command line asked for. */
struct evidence_opts {
	struct dt_report_opts o;
	const char **roots, **rings; /* argc + 1 each */
	size_t nrings;
	const char *out;
	int redact;
};

static int evidence_out(void *args, const char *val)
{
	if (!*val)
		return dt_fail(DT_EXIT_USAGE, "evidence: --out needs a directory");
	((struct evidence_opts *)args)->out = val;
	return 0;
}

static const struct dt_option evidence_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct evidence_opts, __VA_ARGS__)
#include "opts_evidence.def"
#undef DT_OPTION
};

const struct dt_cmd_options evidence_cmd = {"evidence",
                                            evidence_usage,
                                            NULL,
                                            evidence_options,
                                            sizeof(evidence_options) / sizeof(evidence_options[0]),
                                            DT_EXIT_USAGE,
                                            NULL};

/* Parses the options into e. Returns -1 to go on, else the exit status
 * (with the message printed, or the help). */
static int evidence_parse(int argc, char **argv, struct evidence_opts *e)
{
	int rc = dt_parse_options(&evidence_cmd, argc, argv, e, e->rings, &e->nrings);
	if (rc >= 0)
		return rc;
	rc = 0;
	if (rc)
		return rc;
	if (!e->nrings && (rc = dt_default_ring_check("evidence")))
		return rc;
	if (!e->nrings)
		e->rings[e->nrings++] = DT_DEFAULT_RING;
	e->o.roots = e->roots;
	return -1;
}

/* The bundle's directory (--out, or denytrace-evidence-DATE-TIME) and its
 * tarball, neither of which may hold anything yet. Returns -1 to go on,
 * else the exit status with the message printed. */
static int evidence_choose_dir(struct dt_bundle *b, const char *out, char *tarball, size_t cap)
{
	if (out) {
		snprintf(b->dir, sizeof(b->dir), "%s", out);
	} else {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(b->dir, sizeof(b->dir), "denytrace-evidence-%Y%m%d-%H%M%S", &tm);
	}
	size_t dl = strlen(b->dir);
	while (dl > 1 && b->dir[dl - 1] == '/')
		b->dir[--dl] = 0;
	snprintf(tarball, cap, "%s.tar.gz", b->dir);
	int not_dir;
	if (dir_in_use(b->dir, &not_dir))
		return dt_fail(
		    DT_EXIT_IO,
		    not_dir ? "evidence: %s exists and is not a directory; choose another --out"
		            : "evidence: %s already holds files; refusing to overwrite them "
		              "(remove it or choose another --out)",
		    b->dir);
	struct stat st;
	if (lstat(tarball, &st) == 0)
		return dt_fail(
		    DT_EXIT_IO,
		    "evidence: %s already exists; refusing to overwrite it (remove it or "
		    "choose another --out)",
		    tarball);
	return -1;
}

/* report.md: the report, the facts, and what the bundle holds. */
/* "Suggested fix" and "Verified", as `denytrace fix --verify` left them
 * beside the first ring that has them (RING.fix.md). The traced program
 * can write beside its ring: only a regular file of the caller's that
 * names this very ring is taken (sidecar.h). */
static void evidence_fix_proof(FILE *f, const struct evidence_opts *e)
{
	for (size_t i = 0; i < e->nrings; i++) {
		char *text = dt_sidecar_read(e->rings[i], ".fix.md");
		if (!text)
			continue;
		fputs(text, f);
		free(text);
		return;
	}
}

static void evidence_report_md(FILE *f, const struct dt_report *r, const struct dt_facts *facts,
                               const struct dt_redaction *rd, const struct evidence_opts *e)
{
	int redact = e->redact;
	dt_report_markdown(f, r);
	dt_facts_markdown(f, facts);
	fputs("\n### This bundle\n\n", f);
	fputs("`report.md` (this file), `report.json` (the report as JSON), "
	      "[`timeline.svg`](timeline.svg) (the run as a picture: a lane per process, refusals "
	      "coloured by problem), `facts.json` (the facts "
	      "above), `records.jsonl` (every record, as `denytrace show --jsonl` prints it)",
	      f);
	if (redact) {
		fputs(".\n\nRedacted: the home directory is shown as `~` and the user name as "
		      "`<user>` "
		      "in every file; environment entries that look like secrets were dropped, and "
		      "secret option values, URL passwords and token-shaped words replaced with "
		      "`<redacted>`. The raw ring files are **not** "
		      "included (they cannot be redacted in place); `records.jsonl` holds their "
		      "records, redacted.",
		      f);
		if (rd->kept[0])
			fprintf(f, " System account names were kept: %s.", rd->kept);
		fputc('\n', f);
	} else {
		fputs(", and the ring files (read them with `denytrace show` or `denytrace "
		      "report`).\n",
		      f);
	}
}

/* Writes the bundle's files and its tarball. Returns 1 when one failed. */
static int evidence_write(struct dt_bundle *b, const struct evidence_opts *e,
                          const struct dt_report *r, const struct dt_facts *facts,
                          const struct dt_redaction *rd, const char *tarball)
{
	struct dt_mem mem;
	struct dt_outfile tgz;
	if (tarball_begin(b, &tgz, tarball) < 0)
		return 1;
	int failed = 0;
	FILE *md = mem_open(&mem);
	evidence_report_md(md, r, facts, rd, e);
	evidence_fix_proof(md, e);
	failed = mem_commit(b, &mem, "report.md", failed) < 0;

	dt_report_json(mem_open(&mem), r);
	failed = mem_commit(b, &mem, "report.json", failed) < 0;

	dt_report_svg(mem_open(&mem), r);
	failed = mem_commit(b, &mem, "timeline.svg", failed) < 0;

	dt_facts_json(mem_open(&mem), facts);
	failed = mem_commit(b, &mem, "facts.json", failed) < 0;

	write_records(mem_open(&mem), r, e->redact);
	failed = mem_commit(b, &mem, "records.jsonl", failed) < 0;

	for (size_t i = 0; i < e->nrings && !e->redact && !failed; i++)
		failed |= copy_ring(b, e->rings[i], i);

	return tarball_end(b, &tgz, tarball, failed);
}

int cmd_evidence(int argc, char **argv)
{
	struct evidence_opts e = {0};
	e.roots = calloc((size_t)argc + 1, sizeof(*e.roots));
	e.rings = calloc((size_t)argc + 1, sizeof(*e.rings));
	struct dt_bundle b = {0};
	char tarball[PATH_MAX + 8];
	int rc = evidence_parse(argc, argv, &e);
	if (rc < 0)
		rc = evidence_choose_dir(&b, e.out, tarball, sizeof(tarball));
	if (rc >= 0) {
		free(e.roots);
		free(e.rings);
		return rc;
	}

	struct dt_report r;
	char err[1024];
	rc = dt_report_load(&r, e.rings, e.nrings, err, sizeof(err));
	if (!rc)
		rc = dt_report_build(&r, &e.o, err, sizeof(err));
	if (rc) {
		dt_report_free(&r);
		free(e.roots);
		free(e.rings);
		return dt_fail(rc, "evidence: %s", err);
	}

	if (bundle_open_dir(&b, err, sizeof(err)) < 0) {
		dt_report_free(&r);
		free(e.roots);
		free(e.rings);
		return dt_fail(DT_EXIT_IO, "evidence: %s", err);
	}

	struct dt_redaction rd = {0};
	struct dt_strpool pool = {0};
	if (e.redact) {
		collect_redaction(&rd, &r);
		redact_records(&r, &pool);
		b.rd = &rd;
	}
	struct dt_facts facts;
	dt_facts_collect(&facts, &r);
	facts.redacted = e.redact;
	b.files = calloc(e.nrings + 8, sizeof(*b.files));
	int failed = evidence_write(&b, &e, &r, &facts, &rd, tarball);
	if (!failed) {
		printf("evidence written to %s/ and %s\n", b.dir, tarball);
		for (size_t i = 0; i < b.nfiles; i++)
			printf("  %s\n", b.files[i]);
		if (e.redact)
			printf(
			    "redacted: home shown as ~, user name as <user>, secrets dropped; raw "
			    "rings left out\n");
		printf("attach %s to the issue, or paste report.md\n", tarball);
	}
	for (size_t i = 0; i < b.nfiles; i++)
		free(b.files[i]);
	free(b.files);
	close(b.dfd);
	dt_facts_free(&facts);
	dt_redaction_free(&rd);
	dt_report_free(&r);
	pool_free(&pool);
	free(e.roots);
	free(e.rings);
	if (failed)
		return DT_EXIT_IO;
	if (fflush(stdout) != 0 || ferror(stdout))
		return dt_fail(DT_EXIT_IO, "evidence: writing the output failed");
	return DT_EXIT_OK;
}
