/* SPDX-License-Identifier: MIT */
#include "sidecar.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launchfile.h"
#include "privdir.h"
#include "ringfile.h"
#include "safeopen.h"
#include "sha256.h"

#define SIDECAR_TAG "<!-- denytrace sidecar of ring "

int dt_ring_id_of(const char *ring, char *id, size_t cap)
{
	struct dt_ringfile rf;
	char err[512];
	if (dt_ringfile_open(ring, &rf, err, sizeof(err)) != 0)
		return -1;
	struct stat st;
	int rc = fstat(rf.fd, &st);
	if (rc == 0)
		dt_ring_id_format(id, cap, &st, rf.ring.hdr->created_ns);
	dt_ringfile_close(&rf);
	return rc;
}

static int sidecar_path(char *path, size_t cap, const char *ring, const char *suffix)
{
	return snprintf(path, cap, "%s%s", ring, suffix) < (int)cap ? 0 : -1;
}

int dt_sidecar_begin(struct dt_sidecar *s, const char *ring, const char *suffix, char *err,
                     size_t errlen)
{
	char path[PATH_MAX];
	memset(s, 0, sizeof(*s));
	snprintf(s->suffix, sizeof(s->suffix), "%s", suffix);
	snprintf(s->ring, sizeof(s->ring), "%s", ring);
	if (sidecar_path(path, sizeof(path), ring, suffix) < 0 ||
	    dt_ring_id_of(ring, s->id, sizeof(s->id)) < 0) {
		snprintf(err, errlen, "cannot name the ring %s", ring);
		return -1;
	}
	if (dt_outfile_begin(&s->out, path, DT_OUT_SIDECAR, err, errlen) < 0)
		return -1;
	if (!(s->f = open_memstream(&s->text, &s->len))) {
		dt_outfile_abort(&s->out);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* BASE/denytrace/sidecars beside the ring's launch file, made private
 * when make is set; into dir. Only where the launch could not write: a
 * ring without a launch file of ours was made by a command that may write
 * wherever the user can, digests included. 0, or -1 with why set. */
static int digest_dir(const char *ring, char *dir, size_t cap, int make, char *why, size_t whycap)
{
	struct dt_launchfile lf;
	char lwhy[PATH_MAX + 256];
	int rc = dt_launchfile_find(ring, &lf, lwhy, sizeof(lwhy));
	if (rc == 0 && dt_launchfile_sealed_dir(&lf, "sidecars", dir, cap) < 0) {
		snprintf(lwhy, sizeof(lwhy), "the command of %s could write its digests", lf.path);
		rc = -1;
	}
	dt_launchfile_free(&lf);
	if (rc != 0) {
		snprintf(why, whycap,
		         "no place out of the traced command's reach keeps its digest (%s)", lwhy);
		return -1;
	}
	/* its parent holds the launches directory: it is there */
	if (make && dt_private_dir(dir, 0700, lwhy, sizeof(lwhy)) < 0) {
		snprintf(why, whycap, "%s", lwhy);
		return -1;
	}
	return 0;
}

/* Where the digest of the sidecar of ring (id+suffix) is kept, into path.
 * 0, or -1 with why set. */
static int digest_path(const char *ring, char *path, size_t cap, const char *id, const char *suffix,
                       int make, char *why, size_t whycap)
{
	char dir[PATH_MAX], key[256], hex[65];
	if (digest_dir(ring, dir, sizeof(dir), make, why, whycap) < 0)
		return -1;
	snprintf(key, sizeof(key), "%s%s", id, suffix);
	dt_sha256_hex(key, strlen(key), hex);
	return snprintf(path, cap, "%s/%s", dir, hex) < (int)cap ? 0 : -1;
}

static int record_digest(const struct dt_sidecar *s, char *err, size_t errlen)
{
	char path[PATH_MAX], hex[65];
	struct dt_outfile o;
	if (digest_path(s->ring, path, sizeof(path), s->id, s->suffix, 1, err, errlen) < 0)
		return -1;
	if (dt_outfile_begin(&o, path, DT_OUT_NEW_OR_OWN, err, errlen) < 0)
		return -1;
	dt_sha256_hex(s->text, s->len, hex);
	fprintf(o.f, "%s\n", hex);
	if (dt_outfile_commit(&o) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int dt_sidecar_commit(struct dt_sidecar *s, char *err, size_t errlen)
{
	int rc = fclose(s->f) == 0 ? 0 : -1;
	if (rc)
		snprintf(err, errlen, "out of memory");
	char why[PATH_MAX + 512];
	/* without a digest the file is still the user's to read; evidence
	 * leaves it out */
	int unvouched = !rc && record_digest(s, why, sizeof(why)) < 0;
	if (!rc) {
		fprintf(s->out.f, SIDECAR_TAG "%s -->\n", s->id);
		fwrite(s->text, 1, s->len, s->out.f);
		if ((rc = dt_outfile_commit(&s->out)) < 0)
			snprintf(err, errlen, "cannot write %s: %s", s->out.path, strerror(errno));
	} else {
		dt_outfile_abort(&s->out);
	}
	if (!rc && unvouched) {
		snprintf(err, errlen, "%s is written, but evidence will leave it out: %s",
		         s->out.path, why);
		rc = 1;
	}
	free(s->text);
	s->text = NULL;
	return rc;
}

/* Is text's digest the one dt_sidecar_commit recorded for id+suffix? */
static int digest_matches(const char *ring, const char *id, const char *suffix, const char *text,
                          size_t len)
{
	char path[PATH_MAX], hex[65], kept[80], why[PATH_MAX + 512];
	if (digest_path(ring, path, sizeof(path), id, suffix, 0, why, sizeof(why)) < 0 ||
	    dt_read_planted(path, 1, kept, sizeof(kept)) != 65)
		return 0;
	dt_sha256_hex(text, len, hex);
	return !memcmp(kept, hex, 64) && kept[64] == '\n';
}

char *dt_sidecar_read(const char *ring, const char *suffix)
{
	char path[PATH_MAX], id[128], tag[192];
	if (sidecar_path(path, sizeof(path), ring, suffix) < 0 ||
	    dt_ring_id_of(ring, id, sizeof(id)) < 0)
		return NULL;
	snprintf(tag, sizeof(tag), SIDECAR_TAG "%s -->\n", id);
	char *text = malloc(DT_SIDECAR_MAX + 1);
	if (!text)
		return NULL;
	ssize_t n = dt_read_planted(path, 1, text, DT_SIDECAR_MAX + 1);
	size_t tl = strlen(tag);
	if (n < (ssize_t)tl || memcmp(text, tag, tl)) {
		free(text);
		return NULL;
	}
	memmove(text, text + tl, (size_t)n - tl + 1);
	if (!digest_matches(ring, id, suffix, text, (size_t)n - tl)) {
		free(text);
		return NULL;
	}
	return text;
}
