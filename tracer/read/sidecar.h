/* SPDX-License-Identifier: MIT */
/* Files denytrace leaves beside a ring (RING.fix.md). The ring's directory
 * is one the traced program can write, so what sits at RING.fix.md may be
 * its work: a sidecar is written without following what is there
 * (outfile.h), and read back only when it is a regular file of the
 * caller's, of bounded size, whose first line names the very ring it sits
 * beside (device, inode and creation time: a new ring at the same path is
 * another ring). */
#ifndef DENYTRACE_SIDECAR_H
#define DENYTRACE_SIDECAR_H

#include <stddef.h>

#include "outfile.h"

/* Sidecars larger than this are not read back. */
#define DT_SIDECAR_MAX (1024 * 1024)

/* The identity of the ring at path, "DEV:INO:CREATED_NS", into id. 0 or -1
 * (not a ring that can be read). */
int dt_ring_id_of(const char *ring, char *id, size_t cap);

/* Opens RING+suffix for writing (dt_outfile_begin, DT_OUT_SIDECAR) and
 * writes its first line. Returns 0, or -1 with a reason in err. */
int dt_sidecar_begin(struct dt_outfile *o, const char *ring, const char *suffix, char *err,
                     size_t errlen);

/* The text of RING+suffix after its first line, malloc'ed, or NULL when
 * there is none that belongs to this ring. */
char *dt_sidecar_read(const char *ring, const char *suffix);

#endif
