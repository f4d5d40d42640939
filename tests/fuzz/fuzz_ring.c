/* SPDX-License-Identifier: MIT */
// fuzz-sources: tracer/read/ringfile.c tracer/read/safeopen.c tracer/read/records.c preload/ring.c
/*
 * libFuzzer target: an arbitrary file handed to the ring reader. A ring is
 * written by the traced programs, so the CLI must survive any bytes: attach
 * (header checks), walk every record (slot protocol, lengths, checksums),
 * decode each (tag-length-value fields) without reading or writing out of
 * bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "ringfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* small inputs stand for the header: grow them into a minimal ring so
	 * that the slot walk is reached, with the input's bytes in the header
	 * and in the first slots */
	size_t len = dt_ring_file_size(16);
	if (size > len)
		len = size;
	unsigned char *map = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!map)
		return 0;
	memset(map, 0, len);
	memcpy(map, data, size);
	struct dt_ring_header *h = (struct dt_ring_header *)map;
	if (size < sizeof(*h)) {
		h->magic = DT_RING_MAGIC;
		h->version = DT_RING_VERSION;
		h->header_size = DT_RING_HEADER_SIZE;
		h->slot_size = DT_SLOT_SIZE;
		h->nslots = 16;
	}
	struct dt_ring r;
	if (dt_ring_attach(&r, map, len) == 0) {
		unsigned char *buf = malloc(DT_REC_MAX);
		struct dt_read_stats st = {0};
		uint64_t pos = dt_ring_tail(&r);
		uint32_t rlen;
		int guard = 0;
		while (buf && guard++ < 100000 &&
		       dt_ring_next(&r, &pos, buf, &rlen, &st, 0) == DT_NEXT_RECORD) {
			struct dt_record rec;
			if (dt_record_decode(buf, rlen, pos, &rec) == 0)
				dt_record_free(&rec);
		}
		free(buf);
	}
	/* the decoder alone, on the raw bytes as one record */
	if (size >= sizeof(struct dt_rec_header) && size <= DT_REC_MAX) {
		struct dt_record rec;
		if (dt_record_decode(data, (uint32_t)size, 0, &rec) == 0)
			dt_record_free(&rec);
	}
	free(map);
	return 0;
}
