/* SPDX-License-Identifier: MIT */
/* Files denytrace leaves beside a ring (RING.fix.md). The ring's directory
 * is one the traced program can write, so what sits at RING.fix.md may be
 * its work: a sidecar is written without following what is there
 * (outfile.h), and read back only when it is a regular file of the
 * caller's, of bounded size, whose first line names the very ring it sits
 * beside (device, inode and creation time: a new ring at the same path is
 * another ring) and whose text has the digest denytrace recorded when it
 * wrote it. */
#ifndef DENYTRACE_SIDECAR_H
#define DENYTRACE_SIDECAR_H

#include <limits.h>
#include <stddef.h>

#include "outfile.h"

/* Sidecars larger than this are not read back. */
#define DT_SIDECAR_MAX (1024 * 1024)

/* The identity of the ring at path, "DEV:INO:CREATED_NS", into id. 0 or -1
 * (not a ring that can be read). */
int dt_ring_id_of(const char *ring, char *id, size_t cap);

/* A sidecar being written: the text goes to f (a memory stream) and
 * reaches the file, and its digest the caller's state directory, at
 * dt_sidecar_commit. */
struct dt_sidecar {
	FILE *f;
	char *text;
	size_t len;
	struct dt_outfile out;
	char id[128];
	char suffix[32];
	char ring[PATH_MAX];
};

/* Opens RING+suffix for writing (dt_outfile_begin, DT_OUT_SIDECAR).
 * Returns 0, or -1 with a reason in err. */
int dt_sidecar_begin(struct dt_sidecar *s, const char *ring, const char *suffix, char *err,
                     size_t errlen);

/* Writes the file (its first line naming the ring, then the text) and
 * records the text's SHA-256 in BASE/denytrace/sidecars/, beside the
 * ring's launch file (launchfile.h), when the launch's command could not
 * write there: the traced program can read the ring's identity and write
 * beside it, so only a digest kept where denytrace alone writes tells a
 * sidecar of ours from a forged one. Returns 0; 1 with a reason in err
 * when the file is written but no such place keeps its digest (a ring
 * without a launch file: evidence leaves the file out); -1 with a reason
 * in err (the file is not left then). */
int dt_sidecar_commit(struct dt_sidecar *s, char *err, size_t errlen);

/* The text of RING+suffix after its first line, malloc'ed, or NULL when
 * there is none that belongs to this ring or none whose digest
 * dt_sidecar_commit recorded. */
char *dt_sidecar_read(const char *ring, const char *suffix);

#endif
