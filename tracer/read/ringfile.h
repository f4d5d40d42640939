/* SPDX-License-Identifier: MIT */
/* Ring files from the CLI side: creating one for a launch, opening one to
 * read (live or finished), and walking its published records. */
#ifndef DENYTRACE_RINGFILE_H
#define DENYTRACE_RINGFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ring.h"

struct dt_ringfile {
	int fd;
	void *map;
	size_t len;
	struct dt_ring ring;
	const char *path;
};

/* Opens and maps a ring for reading. Returns 0, or an exit status
 * (DT_EXIT_NOINPUT, DT_EXIT_BADINPUT) with a one-line reason in err. */
int dt_ringfile_open(const char *path, struct dt_ringfile *rf, char *err, size_t errlen);
void dt_ringfile_close(struct dt_ringfile *rf);

/* Creates path as a fresh ring of size bytes (rounded down to a whole
 * number of slots, a power of two), mode 0600, atomically replacing what
 * was there without following a symbolic link. Returns an O_RDWR fd (not
 * close-on-exec: it is meant to be inherited) or -1 with err set. */
int dt_ringfile_create(const char *path, uint64_t size, uint32_t flags, char *err, size_t errlen);

/* Whether path may become a new ring: 0 when nothing is there or it is a
 * regular file of the caller's holding a denytrace ring; else -1 with why
 * (a sentence fragment: "is a FIFO") in err. Never opens what is not a
 * regular file. */
int dt_ringfile_replaceable(const char *path, char *err, size_t errlen);

/* 1 when the ring at path is in use: some process holds the lock every
 * launcher and reader of it holds (a run still going). */
int dt_ringfile_busy(const char *path);

/* The record area a ring of size bytes gets: size rounded down to a
 * power of two of slots (the 4 KiB header comes on top). */
uint64_t dt_ring_area(uint64_t size);

/* A ring's identity, "DEV:INO:CREATED_NS", into id: the creation time
 * tells a ring from an earlier one whose file was reused (same device and
 * inode). The probe compares it with DENYTRACE_RING_ID. */
void dt_ring_id_format(char *id, size_t cap, const struct stat *st, uint64_t created_ns);

/* Parses "8M", "65536", "1G" into bytes; returns 0 or -1. */
int dt_parse_size(const char *s, uint64_t *out);

struct dt_read_stats {
	uint64_t records; /* returned */
	uint64_t skipped; /* positions holding no record start (unpublished, dead writer) */
	uint64_t torn;    /* overwritten while being read */
	uint64_t corrupt; /* bad length, slot count, checksum or sequence word */
	int truncated;    /* the file shrank under the reader (DT_NEXT_GONE) */
};

enum { DT_NEXT_END = 0, DT_NEXT_RECORD = 1, DT_NEXT_BUSY = 2, DT_NEXT_GONE = 3 };

/* First position still held by the ring (0 when the file shrank under
 * the mapping: dt_ring_next then says so). */
uint64_t dt_ring_tail(const struct dt_ring *r);

/* The header's counters of records lost to overwriting, dropped by
 * writers and refusals unrecorded. 0, or -1 (all 0) when the file shrank
 * under the mapping. */
int dt_ring_counters(const struct dt_ring *r, uint64_t *lost, uint64_t *dropped, uint64_t *unseen);

/* Reads the next valid record at or after *pos into buf (DT_REC_MAX bytes).
 * DT_NEXT_RECORD: *pos is advanced past it and *len set. DT_NEXT_END: *pos
 * reached head. DT_NEXT_BUSY (only with stop_at_busy): a writer is still
 * filling the slot at *pos; try again later. DT_NEXT_GONE: the file was
 * truncated under the mapping (st->truncated set); nothing more can be
 * read from it. Never returns a torn or corrupt record, and never dies of
 * the SIGBUS a truncated mapping raises. */
int dt_ring_next(const struct dt_ring *r, uint64_t *pos, unsigned char *buf, uint32_t *len,
                 struct dt_read_stats *st, int stop_at_busy);

#endif
