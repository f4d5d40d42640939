// build-flags: -D_GNU_SOURCE -Ipreload preload/ring.c
/*
 * ring-writer: append records to an existing denytrace ring, as a separate
 * process, so that tests can kill or stop a writer at any moment.
 *
 * Usage:
 *   ring-writer RING COUNT [--id ID] [--stall-after N]
 *
 *   Writes COUNT records (seq 0 .. COUNT-1) with dt_ring_write, then prints
 *   "wrote OK DROPPED\n" on stdout (records published, records dropped) and
 *   exits 0.
 *
 *   --id ID         the writer id stored in each record (DT_T_PID); default
 *                   the process id.
 *   --stall-after N write records 0 .. N-1, then act like a writer stopped
 *                   in the middle of record N: reserve its slots (fetch_add
 *                   on head), mark them BUSY exactly as preload/ring.c does,
 *                   copy in only the first half of its bytes, print
 *                   "stalled POS NSLOTS\n" and sleep until killed.
 *
 * Record layout (the tests verify it, see tests/unit/test_ring.c): a
 * DT_REC_DENIAL with DT_T_PID = writer id, DT_T_TID = seq, DT_T_MODE = path
 * length, DT_T_OP = "ring-writer" and DT_T_PATH = the path, whose byte i is
 * 'a' + (seq + i) % 26. Path length is (seq * 37) % 300 (one or two slots);
 * the stalled record's is 700 (four slots).
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../preload/ring.h"

static char alphabet[26 + 1024];

static uint32_t build(unsigned char *buf, uint32_t cap, uint64_t id, uint64_t seq, uint32_t plen)
{
	struct dt_rec_header *rh = (struct dt_rec_header *)buf;
	memset(rh, 0, sizeof(*rh));
	struct dt_buf b = {buf, sizeof(*rh), cap, 0};
	rh->type = DT_REC_DENIAL;
	dt_put_u64(&b, DT_T_PID, id);
	dt_put_u64(&b, DT_T_TID, seq);
	dt_put_u64(&b, DT_T_MODE, plen);
	dt_put_str(&b, DT_T_OP, "ring-writer");
	dt_put(&b, DT_T_PATH, alphabet + seq % 26, plen);
	rh->len = b.len;
	return b.len;
}

/* Steps 1-3 of the protocol (ring_format.h) for one record, stopping after
 * half of the payload: what a writer leaves behind when it dies there. */
static void stall(struct dt_ring *r, unsigned char *rec)
{
	struct dt_rec_header *rh = (struct dt_rec_header *)rec;
	uint32_t n = dt_rec_slots(rh->len);
	rh->nslots = (uint16_t)n;
	uint64_t pos =
	    atomic_fetch_add_explicit((_Atomic uint64_t *)&r->hdr->head, n, memory_order_relaxed);
	rh->pos32 = (uint32_t)pos;
	rh->checksum = dt_checksum(rec + sizeof(*rh), rh->len - (uint32_t)sizeof(*rh));
	for (uint32_t k = 0; k < n; k++) {
		uint64_t old = atomic_exchange_explicit(
		    dt_slot_seq(r, pos + k), (pos + k + 1) | DT_SEQ_BUSY, memory_order_relaxed);
		if ((old & (DT_SEQ_START | DT_SEQ_BUSY)) == DT_SEQ_START)
			atomic_fetch_add_explicit((_Atomic uint64_t *)&r->hdr->lost, 1,
			                          memory_order_relaxed);
	}
	atomic_thread_fence(memory_order_release);
	uint32_t left = rh->len / 2;
	const unsigned char *src = rec;
	for (uint32_t k = 0; k < n && left; k++) {
		uint32_t chunk = left < DT_SLOT_DATA ? left : DT_SLOT_DATA;
		memcpy(dt_slot_data(r, pos + k), src, chunk);
		src += chunk;
		left -= chunk;
	}
	printf("stalled %llu %u\n", (unsigned long long)pos, n);
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: ring-writer RING COUNT [--id ID] [--stall-after N]\n");
		return 2;
	}
	const char *path = argv[1];
	unsigned long long count = strtoull(argv[2], NULL, 10);
	unsigned long long id = (unsigned long long)getpid();
	long long stall_after = -1;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--id") && i + 1 < argc) {
			id = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--stall-after") && i + 1 < argc) {
			stall_after = strtoll(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "ring-writer: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	for (size_t i = 0; i < sizeof(alphabet); i++)
		alphabet[i] = (char)('a' + i % 26);

	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("ring-writer: open");
		return 1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		perror("ring-writer: fstat");
		return 1;
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("ring-writer: mmap");
		return 1;
	}
	close(fd);
	struct dt_ring ring;
	int rc = dt_ring_attach(&ring, map, (size_t)st.st_size);
	if (rc) {
		fprintf(stderr, "ring-writer: %s is not a usable ring (%d)\n", path, rc);
		return 1;
	}

	static unsigned char rec[4096];
	unsigned long long ok = 0, dropped = 0;
	for (unsigned long long seq = 0; seq < count; seq++) {
		if (stall_after >= 0 && seq == (unsigned long long)stall_after) {
			build(rec, sizeof(rec), id, seq, 700);
			stall(&ring, rec);
		}
		build(rec, sizeof(rec), id, seq, (uint32_t)((seq * 37) % 300));
		if (dt_ring_write(&ring, rec) == 0)
			ok++;
		else
			dropped++;
	}
	printf("wrote %llu %llu\n", ok, dropped);
	fflush(stdout);
	return 0;
}
