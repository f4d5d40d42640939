/* SPDX-License-Identifier: MIT */
#include "sidecar.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ringfile.h"
#include "safeopen.h"

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

int dt_sidecar_begin(struct dt_outfile *o, const char *ring, const char *suffix, char *err,
                     size_t errlen)
{
	char path[PATH_MAX], id[128];
	if (sidecar_path(path, sizeof(path), ring, suffix) < 0 ||
	    dt_ring_id_of(ring, id, sizeof(id)) < 0) {
		snprintf(err, errlen, "cannot name the ring %s", ring);
		return -1;
	}
	if (dt_outfile_begin(o, path, DT_OUT_SIDECAR, err, errlen) < 0)
		return -1;
	fprintf(o->f, SIDECAR_TAG "%s -->\n", id);
	return 0;
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
	return text;
}
