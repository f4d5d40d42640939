/* SPDX-License-Identifier: MIT */
#include "ringfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int dt_ringfile_create(const char *path, uint64_t size, uint32_t flags, char *err, size_t errlen)
{
	if (size < DT_RING_MIN_SIZE || size > DT_RING_MAX_SIZE) {
		snprintf(err, errlen, "ring size must be between %u KiB and %llu MiB",
		         DT_RING_MIN_SIZE / 1024, (unsigned long long)DT_RING_MAX_SIZE >> 20);
		return -1;
	}
	/* size is the record area; the 4 KiB header comes on top */
	uint64_t nslots = 1;
	while (nslots * 2 * DT_SLOT_SIZE <= size)
		nslots *= 2;
	size_t len = dt_ring_file_size(nslots);

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
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "cannot map ring %s: %s", path, strerror(errno));
		goto fail;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	dt_ring_init(map, len, flags, (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec,
	             (uint64_t)getpid());
	munmap(map, len);
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

uint64_t dt_ring_tail(const struct dt_ring *r)
{
	uint64_t head =
	    atomic_load_explicit((_Atomic uint64_t *)&r->hdr->head, memory_order_acquire);
	return head > r->nslots ? head - r->nslots : 0;
}

int dt_ring_next(const struct dt_ring *r, uint64_t *pos, unsigned char *buf, uint32_t *len,
                 struct dt_read_stats *st, int stop_at_busy)
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
			st->skipped++;
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
