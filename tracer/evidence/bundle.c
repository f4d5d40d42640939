/* SPDX-License-Identifier: MIT */
/* The evidence bundle's files: each written once into a directory opened
 * once, and into its .tar.gz as written (never read back). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "cli.h"
#include "outfile.h"
#include "privdir.h"
#include "recfmt.h"
#include "redact.h"
#include "report.h"
#include "ring_format.h"
#include "safeopen.h"
#include "symbolize.h"

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

/* Writes text (redacted when asked) as DIR/name. 0 or -1. */
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

FILE *dt_mem_open(struct dt_mem *m)
{
	m->text = NULL;
	m->len = 0;
	m->f = open_memstream(&m->text, &m->len);
	return m->f;
}

/* Writes the memstream as DIR/name, unless an earlier file failed (skip):
 * then it is only released. */
int dt_mem_commit(struct dt_bundle *b, struct dt_mem *m, const char *name, int skip)
{
	int rc = m->f && fclose(m->f) == 0 ? 0 : -1;
	if (rc && !skip)
		dt_fail(DT_EXIT_IO, "evidence: out of memory writing %s", name);
	if (!rc && !skip)
		rc = bundle_write(b, name, m->text ? m->text : "", m->len);
	free(m->text);
	return skip ? -1 : rc;
}

int dt_bundle_copy_ring(struct dt_bundle *b, const char *src, size_t idx)
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

/* records.jsonl, with secret-looking environment entries dropped. */
void dt_bundle_records_jsonl(FILE *f, const struct dt_report *r, int drop_secrets)
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

/* 1 when path exists and is not an empty directory. */
int dt_dir_in_use(const char *path, int *not_dir)
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
int dt_bundle_open_dir(struct dt_bundle *b, char *err, size_t cap)
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
int dt_bundle_tarball_begin(struct dt_bundle *b, struct dt_outfile *out, const char *tarball)
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
int dt_bundle_tarball_end(struct dt_bundle *b, struct dt_outfile *out, const char *tarball,
                          int failed)
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
