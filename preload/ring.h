/* SPDX-License-Identifier: MIT */
/* Writing to a mapped ring; see ring_format.h for the protocol. Safe in
 * signal handlers and vfork children: atomics and memcpy only. */
#ifndef DENYTRACE_RING_H
#define DENYTRACE_RING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "ring_format.h"

struct dt_ring {
	struct dt_ring_header *hdr;
	unsigned char *slots;
	uint64_t nslots;
	size_t map_len;
	uint32_t version; /* the file's format: dt_checksum_for's argument */
	/* slots [ahead_from, ahead_to), absolute positions, that this
	 * process's mapping has faulted in already (dt_ring_write) */
	uint64_t ahead_from, ahead_to;
};

/* Checks a mapped file's header against its length and fills *r.
 * Returns 0, or a negative DT_RING_E_* code. A ring of an older format
 * version (DT_RING_VERSION_OLDEST on) attaches for reading; dt_ring_write
 * writes only to the current one. */
int dt_ring_attach(struct dt_ring *r, void *map, size_t len);

/* Initialises the header of a freshly created, zero-filled file of len
 * bytes. Returns 0, or -1 if len is not a valid ring size. */
int dt_ring_init(void *map, size_t len, uint32_t flags, uint64_t created_ns, uint64_t creator_pid);

/* Appends one record. rec starts with a struct dt_rec_header whose len and
 * type are set; nslots and checksum are filled here. Returns 0 when
 * published, -1 when dropped (too large, or overtaken by a full lap),
 * DT_RING_W_GONE when the file no longer covers the mapping (truncated by
 * someone): nothing was written, and nothing should be again. */
#define DT_RING_W_GONE (-2)
int dt_ring_write(struct dt_ring *r, void *rec);

/* dt_ring_write after the caller found dt_ring_intact: the same, with
 * DT_RING_W_GONE only when the slots it maps ahead would fault (unmapped
 * or protected by the program). */
int dt_ring_append(struct dt_ring *r, void *rec);

/* 1 while the file still covers the whole mapping and a store to its last
 * page would not fault (see ring.c); a write into a truncated ring would
 * raise SIGBUS, one into a mapping the program unmapped or protected
 * SIGSEGV. */
int dt_ring_intact(const struct dt_ring *r);

/* The same check for any of the probe's own mappings (its arenas): 0 when
 * a store to [p, p + len) would fault. p is page-aligned. */
int dt_mapping_writable(const void *p, size_t len);

/* How dt_ring_intact sees a truncated file: decided once per process, at
 * its first check, by asking MADV_POPULATE_WRITE about a page it knows is
 * past the end of a file (ring.c). */
enum dt_ring_check {
	DT_RING_CHECK_UNDECIDED,
	DT_RING_CHECK_POPULATE, /* the kernel refuses to populate it: madvise */
	DT_RING_CHECK_FUTEX,    /* populated anyway (qemu-user): a shared futex wake */
	DT_RING_CHECK_NONE,     /* a kernel before 5.14 (EINVAL): not checked */
};

/* What the self-test's madvise answer (rc, and errno when rc is -1) means
 * for the check; an answer the test could not get is the futex's. */
enum dt_ring_check dt_ring_check_for(long rc, int err);

/* Uses check c in this process from now on, as if the self-test had
 * chosen it: the way to run the futex check on a kernel that tells the
 * truth (tests); DT_RING_CHECK_UNDECIDED has the next check decide again. */
void dt_ring_use_check(enum dt_ring_check c);

/* The check this process uses, decided now if it was not yet. */
enum dt_ring_check dt_ring_check_decided(void);

/* Counts a record given up on before it reached dt_ring_write. */
void dt_ring_count_dropped(struct dt_ring *r);

/* Size of the file for a ring of nslots slots. */
static inline size_t dt_ring_file_size(uint64_t nslots)
{
	return DT_RING_HEADER_SIZE + (size_t)nslots * DT_SLOT_SIZE;
}

static inline _Atomic uint64_t *dt_slot_seq(const struct dt_ring *r, uint64_t pos)
{
	return (_Atomic uint64_t *)(r->slots + (pos & (r->nslots - 1)) * DT_SLOT_SIZE);
}

static inline unsigned char *dt_slot_data(const struct dt_ring *r, uint64_t pos)
{
	return r->slots + (pos & (r->nslots - 1)) * DT_SLOT_SIZE + 8;
}

static inline uint32_t dt_rec_slots(uint32_t len)
{
	return (len + DT_SLOT_DATA - 1) / DT_SLOT_DATA;
}

enum {
	DT_RING_E_MAGIC = -1,   /* not a denytrace ring */
	DT_RING_E_VERSION = -2, /* a version this build does not read */
	DT_RING_E_SHORT = -3,   /* file shorter than its header says */
	DT_RING_E_HEADER = -4,  /* header fields inconsistent */
};

/* Building records: tag-length-value fields into a bounded buffer. A field
 * that does not fit sets overflow and is left out, never written past cap. */
struct dt_buf {
	unsigned char *p;
	uint32_t len, cap;
	int overflow;
};

static inline void dt_put(struct dt_buf *b, uint16_t tag, const void *v, uint32_t n)
{
	if (n > 0xffff)
		n = 0xffff;
	/* written so that it cannot wrap: len never exceeds cap */
	if (b->len > b->cap || b->cap - b->len < 4 + n) {
		b->overflow = 1;
		return;
	}
	unsigned char *d = b->p + b->len;
	__builtin_memcpy(d, &tag, 2);
	uint16_t n16 = (uint16_t)n;
	__builtin_memcpy(d + 2, &n16, 2);
	if (n)
		__builtin_memcpy(d + 4, v, n);
	b->len += 4 + n;
}

static inline void dt_put_u64(struct dt_buf *b, uint16_t tag, uint64_t v)
{
	dt_put(b, tag, &v, 8);
}

static inline void dt_put_str(struct dt_buf *b, uint16_t tag, const char *s)
{
	if (!s)
		return;
	size_t n = strlen(s);
	dt_put(b, tag, s, n > 0xffff ? 0xffff : (uint32_t)n); /* a longer one is cut */
}

/* The two clocks every record starts with (clock_gettime is the vDSO: no
 * system call, safe in the probe). */
static inline void dt_put_times(struct dt_buf *b)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	dt_put_u64(b, DT_T_TIME_REAL, (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	dt_put_u64(b, DT_T_TIME_MONO, (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
}

#endif
