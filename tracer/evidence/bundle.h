/* SPDX-License-Identifier: MIT */
/* The evidence bundle: a private directory of files and a .tar.gz of it,
 * for a maintainer. Every failure is said (dt_fail) where it happens. */
#ifndef DENYTRACE_BUNDLE_H
#define DENYTRACE_BUNDLE_H

#include <limits.h>
#include <stdio.h>

#include "outfile.h"
#include "redact.h"
#include "tarball.h"

struct dt_report;

struct dt_bundle {
	char dir[PATH_MAX];
	int dfd; /* dir, opened once: every file goes in there, wherever its name points later */
	const struct dt_redaction *rd; /* NULL: write as is */
	char **files;                  /* names written, for the summary */
	size_t nfiles;
	struct dt_tarball tar; /* every file also goes in here, as written */
};

/* A memstream, filled by the caller, then written through bundle_write. */
struct dt_mem {
	char *text;
	size_t len;
	FILE *f;
};

FILE *dt_mem_open(struct dt_mem *m);
/* Writes the memstream as DIR/name, unless an earlier file failed (skip):
 * then it is only released. */
int dt_mem_commit(struct dt_bundle *b, struct dt_mem *m, const char *name, int skip);
/* Copies the ring src (the idx-th) into the bundle, if it still is one. 0 or -1. */
int dt_bundle_copy_ring(struct dt_bundle *b, const char *src, size_t idx);
/* records.jsonl, with secret-looking environment entries dropped. */
void dt_bundle_records_jsonl(FILE *f, const struct dt_report *r, int drop_secrets);
/* 1 when path exists and is not an empty directory (*not_dir: not one). */
int dt_dir_in_use(const char *path, int *not_dir);
/* Makes b->dir private to the caller and opens it. 0, or -1 with err. */
int dt_bundle_open_dir(struct dt_bundle *b, char *err, size_t cap);
/* Starts the tarball out at tarball. 0 or -1 with the message printed. */
int dt_bundle_tarball_begin(struct dt_bundle *b, struct dt_outfile *out, const char *tarball);
/* Ends the tarball: in place when every file went in (failed 0), else
 * removed. Returns 1 when it failed. */
int dt_bundle_tarball_end(struct dt_bundle *b, struct dt_outfile *out, const char *tarball,
                          int failed);

#endif
