/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* also built into helpers without the CLI's flags */
#endif
#include "ringfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exitcodes.h"
#include "safeopen.h"

int dt_ringfile_open(const char *path, struct dt_ringfile *rf, char *err, size_t errlen)
{
	memset(rf, 0, sizeof(*rf));
	rf->fd = -1;
	rf->path = path;
	struct stat st;
	int fd = dt_open_regular(path, &st);
	if (fd == DT_OPEN_NOT_REGULAR) {
		snprintf(err, errlen, "%s is not a regular file (%s)", path,
		         dt_file_kind(st.st_mode));
		return DT_EXIT_BADINPUT;
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return DT_EXIT_NOINPUT;
	}
	/* A reader holds a shared lock as writers do: a run starting meanwhile
	 * sees the ring in use (dt_ringfile_busy) and does not displace it.
	 * Not having it (a file system without flock) changes nothing here:
	 * the reader never trusts what it reads. */
	flock(fd, LOCK_SH | LOCK_NB);
	/* A ring is written by traced programs: one another user could write
	 * is not evidence we should trust or parse as root's. */
	if (st.st_uid != geteuid() && geteuid() != 0) {
		snprintf(err, errlen, "%s belongs to uid %u, not to you; refusing to read it", path,
		         (unsigned)st.st_uid);
		close(fd);
		return DT_EXIT_BADINPUT;
	}
	if ((size_t)st.st_size < sizeof(struct dt_ring_header)) {
		snprintf(err, errlen, "%s is too short to be a denytrace ring (%lld bytes)", path,
		         (long long)st.st_size);
		close(fd);
		return DT_EXIT_BADINPUT;
	}
	size_t len = (size_t)st.st_size;
	void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "cannot map %s: %s", path, strerror(errno));
		close(fd);
		return DT_EXIT_NOINPUT;
	}
	int rc = dt_ring_attach(&rf->ring, map, len);
	if (rc != 0) {
		const struct dt_ring_header *h = map;
		switch (rc) {
		case DT_RING_E_MAGIC:
			snprintf(err, errlen, "%s is not a denytrace ring (bad magic)", path);
			break;
		case DT_RING_E_VERSION:
			snprintf(
			    err, errlen,
			    "%s is ring format version %u; this denytrace reads versions %u to %u "
			    "(upgrade denytrace)",
			    path, h->version, DT_RING_VERSION_OLDEST, DT_RING_VERSION);
			break;
		case DT_RING_E_SHORT:
			snprintf(err, errlen,
			         "%s is truncated: its header says %llu bytes, the file has %zu",
			         path, (unsigned long long)dt_ring_file_size(h->nslots), len);
			break;
		default:
			snprintf(err, errlen, "%s has an inconsistent ring header", path);
		}
		munmap(map, len);
		close(fd);
		return DT_EXIT_BADINPUT;
	}
	rf->fd = fd;
	rf->map = map;
	rf->len = len;
	return 0;
}

void dt_ringfile_close(struct dt_ringfile *rf)
{
	if (rf->map)
		munmap(rf->map, rf->len);
	if (rf->fd >= 0)
		close(rf->fd);
	rf->map = NULL;
	rf->fd = -1;
}

void dt_ring_id_format(char *id, size_t cap, const struct stat *st, uint64_t created_ns)
{
	snprintf(id, cap, "%llu:%llu:%llu", (unsigned long long)st->st_dev,
	         (unsigned long long)st->st_ino, (unsigned long long)created_ns);
}

int dt_parse_size(const char *s, uint64_t *out)
{
	char *end;
	if (s[0] < '0' || s[0] > '9')
		return -1; /* strtoull would skip blanks and accept a sign */
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	uint64_t mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1024;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024;
	else if (*end == 'g' || *end == 'G')
		mul = 1024ULL * 1024 * 1024;
	else if (*end)
		return -1;
	if (*end && end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B"))
		return -1;
	if (v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

int dt_ringfile_replaceable(const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) < 0 && errno == ENOENT)
		return 0;
	int fd = dt_open_planted(path, 1, (off_t)DT_RING_MAX_SIZE + DT_RING_HEADER_SIZE, &st);
	uint64_t magic = 0;
	int ok = fd >= 0 && pread(fd, &magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
	         magic == DT_RING_MAGIC;
	if (fd >= 0)
		close(fd);
	if (ok)
		return 0;
	if (fd == DT_OPEN_NOT_REGULAR || (fd == -1 && errno == ELOOP))
		snprintf(err, errlen, "is %s",
		         fd == -1 ? "a symbolic link" : dt_file_kind(st.st_mode));
	else if (fd == DT_OPEN_NOT_OWN)
		snprintf(err, errlen, "belongs to uid %u, not to you", (unsigned)st.st_uid);
	else if (fd < 0 && fd != DT_OPEN_TOO_BIG)
		snprintf(err, errlen, "cannot be read (%s)", strerror(errno));
	else
		snprintf(err, errlen, "is not a denytrace ring");
	return -1;
}

int dt_ringfile_busy(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0; /* nothing, or not a ring: never opened */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int busy = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) < 0 &&
	           errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

uint64_t dt_ring_area(uint64_t size)
{
	/* a power of two of slots: positions map to slots by a mask */
	uint64_t nslots = 1;
	while (nslots * 2 * DT_SLOT_SIZE <= size)
		nslots *= 2;
	return nslots * DT_SLOT_SIZE;
}

/* Fills a fresh header for a ring of len bytes into hdr. */
static void ringfile_header(unsigned char *hdr, size_t len, uint32_t flags)
{
	memset(hdr, 0, DT_RING_HEADER_SIZE);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	dt_ring_init(hdr, len, flags, now, (uint64_t)getpid());
}

int dt_ringfile_create(const char *path, uint64_t size, uint32_t flags, char *err, size_t errlen)
{
	if (size < DT_RING_MIN_SIZE || size > DT_RING_MAX_SIZE) {
		snprintf(err, errlen, "ring size must be between %u KiB and %llu MiB",
		         DT_RING_MIN_SIZE / 1024, (unsigned long long)DT_RING_MAX_SIZE >> 20);
		return -1;
	}
	size_t len = dt_ring_file_size(dt_ring_area(size) / DT_SLOT_SIZE);

	char tmp[4096];
	char *dup = strdup(path);
	if (!dup || snprintf(tmp, sizeof(tmp), "%s/.denytrace-ring.XXXXXX", dirname(dup)) >=
	                (int)sizeof(tmp)) {
		free(dup);
		snprintf(err, errlen, "ring path too long: %s", path);
		return -1;
	}
	free(dup);
	/* mkstemp: O_EXCL and mode 0600, so nobody else's file is reused */
	int fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;
		char *d = strdup(path), dir[PATH_MAX];
		if (!d || !realpath(dirname(d), dir))
			snprintf(dir, sizeof(dir), "the directory of %s", path);
		free(d);
		snprintf(err, errlen,
		         "cannot create the ring %s in %s: %s; run from a directory you can write, "
		         "or name the ring with -o FILE",
		         path, dir, strerror(e));
		return -1;
	}
	if (fchmod(fd, 0600) < 0 || ftruncate(fd, (off_t)len) < 0) {
		snprintf(err, errlen, "cannot size ring %s: %s", path, strerror(errno));
		goto fail;
	}
	/* Every block now: a sparse ring on a filesystem that fills up later
	 * turns the first store into an unallocated page into SIGBUS, in the
	 * traced program (a full disk is when people need the tool). */
	int e = posix_fallocate(fd, 0, (off_t)len);
	if (e) {
		snprintf(err, errlen,
		         e == ENOSPC || e == EDQUOT
		             ? "no room for the ring %s (%zu KiB) on its filesystem: %s; free some "
		               "space, give a smaller --size, or put it elsewhere with -o"
		             : "cannot allocate the ring %s (%zu KiB): %s",
		         path, len / 1024, strerror(e));
		goto fail;
	}
	/* The header is written, not stored through a mapping: on ext4 the
	 * first fault into a fallocated (unwritten) extent reads ahead and
	 * zero-fills dozens of pages, which the next run then evicts. The file
	 * is not visible under its name yet, so the magic's order is moot.
	 * The launcher's shared lock first: the flag says writers hold one. */
	if (flock(fd, LOCK_SH) == 0)
		flags |= DT_RING_F_LOCKED;
	unsigned char hdr[DT_RING_HEADER_SIZE];
	ringfile_header(hdr, len, flags);
	if (pwrite(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		snprintf(err, errlen, "cannot write the header of ring %s: %s", path,
		         strerror(errno));
		goto fail;
	}
	/* rename replaces a symbolic link at path instead of following it */
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "cannot create ring %s: %s", path, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	unlink(tmp);
	close(fd);
	return -1;
}

/* The traced program can truncate the ring under a reader's mapping:
 * touching a page past the new end raises SIGBUS. Reads of the mapping
 * run under ring_bus_jmp; the handler jumps back out of them, and outside
 * them restores the default action (a fault elsewhere still kills). */
static __thread sigjmp_buf *ring_bus_jmp;

static void ring_on_sigbus(int sig)
{
	if (ring_bus_jmp)
		siglongjmp(*ring_bus_jmp, 1);
	signal(sig, SIG_DFL);
}

static void ring_bus_handler(void)
{
	static int installed;
	if (installed)
		return;
	struct sigaction sa = {0};
	sa.sa_handler = ring_on_sigbus;
	sa.sa_flags = SA_NODEFER; /* jumped out of: the signal must not stay blocked */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	installed = 1;
}

static uint64_t ring_head(const struct dt_ring *r)
{
	return atomic_load_explicit((_Atomic uint64_t *)&r->hdr->head, memory_order_acquire);
}

uint64_t dt_ring_tail(const struct dt_ring *r)
{
	sigjmp_buf jb;
	ring_bus_handler();
	if (sigsetjmp(jb, 0)) {
		ring_bus_jmp = NULL;
		return 0; /* the next read says the ring is gone */
	}
	ring_bus_jmp = &jb;
	uint64_t head = ring_head(r);
	ring_bus_jmp = NULL;
	return head > r->nslots ? head - r->nslots : 0;
}

int dt_ring_counters(const struct dt_ring *r, uint64_t *lost, uint64_t *dropped, uint64_t *unseen)
{
	sigjmp_buf jb;
	ring_bus_handler();
	*lost = *dropped = *unseen = 0;
	if (sigsetjmp(jb, 0)) {
		ring_bus_jmp = NULL;
		return -1;
	}
	ring_bus_jmp = &jb;
	*lost = __atomic_load_n(&r->hdr->lost, __ATOMIC_RELAXED);
	*dropped = __atomic_load_n(&r->hdr->dropped, __ATOMIC_RELAXED);
	*unseen = __atomic_load_n(&r->hdr->unseen, __ATOMIC_RELAXED);
	ring_bus_jmp = NULL;
	return 0;
}

/* A sequence word the protocol can leave at position p (ring_format.h):
 * never written, or owned, started or continued by a writer of position
 * q in the same slot (q <= p: a lap not yet rewritten, a writer that
 * died; q > p: overwritten meanwhile). Anything else was written by
 * something other than the probe. */
static int ring_seq_possible(const struct dt_ring *r, uint64_t p, uint64_t s)
{
	if (!s)
		return 1;
	uint64_t q1 = s & DT_SEQ_POS_MASK;
	return !((s & DT_SEQ_START) && (s & DT_SEQ_BUSY)) && q1 &&
	       ((q1 - 1) & (r->nslots - 1)) == (p & (r->nslots - 1));
}

static int ring_next_mapped(const struct dt_ring *r, uint64_t *pos, unsigned char *buf,
                            uint32_t *len, struct dt_read_stats *st, int stop_at_busy);

int dt_ring_next(const struct dt_ring *r, uint64_t *pos, unsigned char *buf, uint32_t *len,
                 struct dt_read_stats *st, int stop_at_busy)
{
	sigjmp_buf jb;
	ring_bus_handler();
	if (sigsetjmp(jb, 0)) {
		ring_bus_jmp = NULL;
		st->truncated = 1;
		return DT_NEXT_GONE;
	}
	ring_bus_jmp = &jb;
	int rc = ring_next_mapped(r, pos, buf, len, st, stop_at_busy);
	ring_bus_jmp = NULL;
	return rc;
}

static int ring_next_mapped(const struct dt_ring *r, uint64_t *pos, unsigned char *buf,
                            uint32_t *len, struct dt_read_stats *st, int stop_at_busy)
{
	for (;;) {
		uint64_t head =
		    atomic_load_explicit((_Atomic uint64_t *)&r->hdr->head, memory_order_acquire);
		if (head > r->nslots && *pos < head - r->nslots)
			*pos = head - r->nslots; /* overwritten meanwhile: counted in lost */
		if (*pos >= head)
			return DT_NEXT_END;
		uint64_t p = *pos;
		uint64_t s1 = atomic_load_explicit(dt_slot_seq(r, p), memory_order_acquire);
		if (s1 != ((p + 1) | DT_SEQ_START)) {
			if (stop_at_busy && (s1 == 0 || s1 == ((p + 1) | DT_SEQ_BUSY) ||
			                     (s1 & DT_SEQ_POS_MASK) < p + 1))
				return DT_NEXT_BUSY;
			if (ring_seq_possible(r, p, s1))
				st->skipped++;
			else
				st->corrupt++;
			(*pos)++;
			continue;
		}
		struct dt_rec_header rh;
		memcpy(&rh, dt_slot_data(r, p), sizeof(rh));
		uint32_t n = rh.nslots;
		if (rh.len < sizeof(rh) || rh.len > DT_REC_MAX || n != dt_rec_slots(rh.len) ||
		    p + n > head) {
			if (atomic_load_explicit(dt_slot_seq(r, p), memory_order_acquire) != s1)
				st->torn++;
			else
				st->corrupt++;
			(*pos)++;
			continue;
		}
		int ok = 1;
		uint32_t left = rh.len;
		unsigned char *dst = buf;
		for (uint32_t k = 0; k < n && ok; k++) {
			if (k > 0 && atomic_load_explicit(dt_slot_seq(r, p + k),
			                                  memory_order_acquire) != p + k + 1)
				ok = 0;
			uint32_t chunk = left < DT_SLOT_DATA ? left : DT_SLOT_DATA;
			memcpy(dst, dt_slot_data(r, p + k), chunk);
			dst += chunk;
			left -= chunk;
		}
		atomic_thread_fence(memory_order_acquire);
		if (ok && atomic_load_explicit(dt_slot_seq(r, p), memory_order_relaxed) != s1)
			ok = 0;
		for (uint32_t k = 1; k < n && ok; k++)
			if (atomic_load_explicit(dt_slot_seq(r, p + k), memory_order_relaxed) !=
			    p + k + 1)
				ok = 0;
		if (!ok) {
			if (stop_at_busy &&
			    atomic_load_explicit(dt_slot_seq(r, p + n - 1), memory_order_relaxed) ==
			        ((p + n) | DT_SEQ_BUSY))
				return DT_NEXT_BUSY;
			st->torn++;
			(*pos)++;
			continue;
		}
		const struct dt_rec_header *got = (const struct dt_rec_header *)buf;
		if (got->len != rh.len || got->pos32 != (uint32_t)p ||
		    dt_checksum_for(r->version, buf + sizeof(rh), rh.len - (uint32_t)sizeof(rh)) !=
		        got->checksum) {
			/* a writer lapped while copying can leave this behind;
			 * only a ring that has wrapped can have one */
			if (head > r->nslots)
				st->torn++;
			else
				st->corrupt++;
			(*pos)++;
			continue;
		}
		*len = rh.len;
		*pos = p + n;
		st->records++;
		return DT_NEXT_RECORD;
	}
}
