/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mremap; also built into helpers without the CLI's flags */
#endif
#include "ring.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rawsys.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

int dt_ring_init(void *map, size_t len, uint32_t flags, uint64_t created_ns, uint64_t creator_pid)
{
	if (len <= DT_RING_HEADER_SIZE)
		return -1;
	uint64_t nslots = (len - DT_RING_HEADER_SIZE) / DT_SLOT_SIZE;
	if (nslots < 16 || (nslots & (nslots - 1)) || dt_ring_file_size(nslots) != len)
		return -1;
	struct dt_ring_header *h = map;
	h->version = DT_RING_VERSION;
	h->header_size = DT_RING_HEADER_SIZE;
	h->slot_size = DT_SLOT_SIZE;
	h->flags = flags;
	h->nslots = nslots;
	h->created_ns = created_ns;
	h->creator_pid = creator_pid;
	/* The magic goes last: a reader that sees it sees a whole header. */
	atomic_store_explicit((_Atomic uint64_t *)&h->magic, DT_RING_MAGIC, memory_order_release);
	return 0;
}

int dt_ring_attach(struct dt_ring *r, void *map, size_t len)
{
	const struct dt_ring_header *h = map;
	if (len < sizeof(*h))
		return DT_RING_E_SHORT;
	if (atomic_load_explicit((_Atomic uint64_t *)&h->magic, memory_order_acquire) !=
	    DT_RING_MAGIC)
		return DT_RING_E_MAGIC;
	if (h->version < DT_RING_VERSION_OLDEST || h->version > DT_RING_VERSION)
		return DT_RING_E_VERSION;
	if (h->header_size != DT_RING_HEADER_SIZE || h->slot_size != DT_SLOT_SIZE ||
	    h->nslots < 16 || (h->nslots & (h->nslots - 1)) ||
	    h->nslots > DT_RING_MAX_SIZE / DT_SLOT_SIZE)
		return DT_RING_E_HEADER;
	if (len < dt_ring_file_size(h->nslots))
		return DT_RING_E_SHORT;
	r->hdr = map;
	r->slots = (unsigned char *)map + DT_RING_HEADER_SIZE;
	r->nslots = h->nslots;
	r->map_len = len;
	r->version = h->version;
	r->ahead_from = r->ahead_to = 0;
	return 0;
}

/* Truncating the file under a shared mapping turns every store past the
 * new end into SIGBUS, in whichever process stores: the traced program.
 * Checked here, by the mapping itself, rather than caught: catching SIGBUS
 * means owning a process-wide handler, which the program can see, replace
 * and race with (SQLite and JVMs handle SIGBUS themselves). Faulting the
 * last page in for writing answers EFAULT where a store would have raised
 * the signal; if the last page is there, the file covers the whole
 * mapping. It needs no descriptor (the program may have closed the
 * ring's) and costs one system call per record. A truncation between this
 * check and the stores that follow (microseconds) still kills.
 *
 * The kernel's own way to fault a page in is MADV_POPULATE_WRITE (5.14).
 * An emulator may answer it with success and do nothing (qemu-user 7.2
 * does, for every advice it does not pass on), so the first check of a
 * process asks it about a page it knows is past the end of a file of its
 * own; where that is not refused, a shared futex wake (ring_futex_touch)
 * faults the page in instead: it resolves the address to the file's page (a fault, EFAULT
 * past the end) before looking for waiters, emulators hand it to the
 * kernel as it is, and a program's own seccomp filter allows it (its libc
 * needs it). Not the kernel's way everywhere: it may wake a thread that
 * waits on that word of the ring, which nobody does but a program that
 * wants to be woken. */
static _Atomic int ring_check = DT_RING_CHECK_UNDECIDED;
static _Atomic size_t ring_page; /* set before ring_check is, read after */

/* the kernel's page size, not 4096: on a 16K or 64K page kernel a
 * misaligned address makes madvise answer EINVAL, silencing the check */
static size_t ring_page_learn(void)
{
	size_t page = getauxval(AT_PAGESZ);
	page = page ? page : 4096;
	atomic_store_explicit(&ring_page, page, memory_order_relaxed);
	return page;
}

enum dt_ring_check dt_ring_check_for(long rc, int err)
{
	if (rc == 0)
		return DT_RING_CHECK_FUTEX; /* a page past the end populated: a lie */
	if (err == EFAULT)
		return DT_RING_CHECK_POPULATE;
	if (err == EINVAL)
		return DT_RING_CHECK_NONE; /* before 5.14: trusted, as it always was */
	return DT_RING_CHECK_FUTEX;        /* no answer: the check that holds anywhere */
}

/* Whether MADV_POPULATE_WRITE refuses a page past the end of a file, as
 * dt_ring_check_for reads it. The file is the one behind a shared
 * anonymous page: growing its mapping leaves the file one page long, so
 * the second page is past its end. No descriptor: a memfd would take the
 * lowest free number, which the program may be about to get from open. */
static enum dt_ring_check ring_check_decide(size_t page)
{
	long rc = -1;
	int err = ENOMEM;
	/* libc's mmap, not SYS_mmap: a 32-bit build's is mmap2 */
	unsigned char *m =
	    mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return dt_ring_check_for(rc, err);
	size_t len = page;
	unsigned char *grown = mremap(m, page, 2 * page, MREMAP_MAYMOVE);
	if (grown != MAP_FAILED) {
		rc = syscall(SYS_madvise, grown + page, page, MADV_POPULATE_WRITE);
		err = rc ? errno : 0;
		m = grown;
		len = 2 * page;
	}
	munmap(m, len);
	return dt_ring_check_for(rc, err);
}

/* Lazily, at the first check of the process (loading stays cheap); two
 * threads that race here both find the same answer. */
static enum dt_ring_check ring_check_get(void)
{
	int c = atomic_load_explicit(&ring_check, memory_order_acquire);
	if (__builtin_expect(c != DT_RING_CHECK_UNDECIDED, 1))
		return (enum dt_ring_check)c;
	c = ring_check_decide(ring_page_learn());
	atomic_store_explicit(&ring_check, c, memory_order_release);
	return (enum dt_ring_check)c;
}

enum dt_ring_check dt_ring_check_decided(void)
{
	int saved = errno;
	enum dt_ring_check c = ring_check_get();
	errno = saved;
	return c;
}

void dt_ring_use_check(enum dt_ring_check c)
{
	ring_page_learn();
	atomic_store_explicit(&ring_check, c, memory_order_release);
}

/* A futex operation that stores into the word at p, adding 0 to it
 * atomically (FUTEX_WAKE_OP: no other writer's store is lost): the kernel
 * faults the page in for writing, and answers EFAULT where a store would
 * fault (past the end of the file, not mapped, read-only). A plain
 * FUTEX_WAKE only reads: it saw no read-only page. */
static long ring_futex_touch(const void *p)
{
	return syscall(SYS_futex, p, FUTEX_WAKE_OP, 0, 0, p,
	               FUTEX_OP(FUTEX_OP_ADD, 0, FUTEX_OP_CMP_EQ, 0));
}

/* Whether a store to [p, p + len) would fault, as check c sees it. The
 * program may have unmapped the probe's memory (ENOMEM), made it read-only
 * or PROT_NONE (EINVAL), or marked it MADV_DONTFORK before forking this
 * process (ENOMEM): a store would raise SIGSEGV, so each counts as a
 * fault. The futex looks at p's page alone. */
static int ring_store_faults(const void *p, size_t len, enum dt_ring_check c)
{
	long rc;
	if (c == DT_RING_CHECK_POPULATE)
		rc = syscall(SYS_madvise, p, len, MADV_POPULATE_WRITE);
	else /* no FUTEX_PRIVATE_FLAG: only a shared wake looks the page up */
		rc = ring_futex_touch(p);
	if (rc == 0)
		return 0;
	/* ENOMEM is also no memory to populate with (a cgroup at its limit,
	 * pages swapped out): that is no reason to forget an arena or the
	 * ring for good, and only msync tells a page that is not mapped */
	if (errno == ENOMEM)
		return syscall(SYS_msync, p, len, MS_ASYNC) != 0;
	return errno == EFAULT || errno == EINVAL;
}

int dt_ring_intact(const struct dt_ring *r)
{
	int saved = errno;
	enum dt_ring_check c = ring_check_get();
	size_t page = atomic_load_explicit(&ring_page, memory_order_relaxed);
	unsigned char *last = (unsigned char *)r->hdr + ((r->map_len - 1) & ~(page - 1));
	int faults = c != DT_RING_CHECK_NONE && ring_store_faults(last, page, c);
	errno = saved;
	return !faults;
}

int dt_mapping_writable(const void *p, size_t len)
{
	int saved = errno;
	enum dt_ring_check c = ring_check_get();
	int faults = c != DT_RING_CHECK_NONE && ring_store_faults(p, len, c);
	errno = saved;
	return !faults;
}

void dt_ring_count_dropped(struct dt_ring *r)
{
	if (!dt_ring_intact(r))
		return;
	atomic_fetch_add_explicit((_Atomic uint64_t *)&r->hdr->dropped, 1, memory_order_relaxed);
}

/* A page fault costs more than a system call, by far on a VM (about
 * 13 us against 1 us here), and on a ring this process has not written
 * yet every few records land on a page it has not mapped. So the slots
 * from a record on are mapped DT_RING_AHEAD bytes at a time, by one
 * MADV_POPULATE_WRITE: make bench's page faults per refusal went from 0.2
 * to 0.0. Only where the ring check found that advice truthful: elsewhere
 * it would be a system call for nothing. Threads race on the window
 * harmlessly: the worst is one call too many. Returns 1 where the advice
 * fails as a store would: the program unmapped or protected those
 * slots. */
#define DT_RING_AHEAD (64u << 10)

static int ring_map_ahead(struct dt_ring *r, uint64_t pos, uint32_t n)
{
	uint64_t from = __atomic_load_n(&r->ahead_from, __ATOMIC_RELAXED);
	uint64_t to = __atomic_load_n(&r->ahead_to, __ATOMIC_RELAXED);
	if (to - from >= r->nslots || (pos >= from && pos + n <= to))
		return 0; /* the whole ring is mapped, or this record's part */
	if (pos < from || pos > to)
		from = pos; /* not where this process stopped: a new window */
	size_t page = atomic_load_explicit(&ring_page, memory_order_relaxed);
	uint64_t first = pos & (r->nslots - 1);
	uint64_t count = DT_RING_AHEAD / DT_SLOT_SIZE;
	if (count < n)
		count = n;
	if (count > r->nslots - first)
		count = r->nslots - first; /* up to the ring's end; the next lap starts anew */
	uintptr_t start = (uintptr_t)(r->slots + first * DT_SLOT_SIZE) & ~(uintptr_t)(page - 1);
	uintptr_t end = (uintptr_t)(r->slots + (first + count) * DT_SLOT_SIZE);
	int saved = errno;
	int faults = ring_store_faults((const void *)start, end - start, DT_RING_CHECK_POPULATE);
	errno = saved;
	if (faults)
		return 1;
	__atomic_store_n(&r->ahead_from, from, __ATOMIC_RELAXED);
	__atomic_store_n(&r->ahead_to, pos + count, __ATOMIC_RELAXED);
	return 0;
}

int dt_ring_write(struct dt_ring *r, void *rec)
{
	if (r->version != DT_RING_VERSION)
		return -1; /* an older format, attached for reading: left as it is */
	if (!dt_ring_intact(r))
		return DT_RING_W_GONE;
	return dt_ring_append(r, rec);
}

int dt_ring_append(struct dt_ring *r, void *rec)
{
	struct dt_rec_header *rh = rec;
	_Atomic uint64_t *head = (_Atomic uint64_t *)&r->hdr->head;
	_Atomic uint64_t *lost = (_Atomic uint64_t *)&r->hdr->lost;
	_Atomic uint64_t *dropped = (_Atomic uint64_t *)&r->hdr->dropped;

	if (r->version != DT_RING_VERSION)
		return -1;
	uint32_t n = dt_rec_slots(rh->len);
	if (rh->len < sizeof(*rh) || rh->len > DT_REC_MAX || n > r->nslots / 4) {
		atomic_fetch_add_explicit(dropped, 1, memory_order_relaxed);
		return -1;
	}
	uint64_t pos = atomic_fetch_add_explicit(head, n, memory_order_relaxed);
	/* slots the program unmapped or protected, in the middle of the ring
	 * (the ring check sees its last page only): the reserved slots are
	 * left unclaimed, as by a writer that died there */
	if (ring_check_get() == DT_RING_CHECK_POPULATE && ring_map_ahead(r, pos, n))
		return DT_RING_W_GONE;
	rh->nslots = (uint16_t)n;
	rh->pos32 = (uint32_t)pos;
	rh->checksum =
	    dt_checksum((unsigned char *)rec + sizeof(*rh), rh->len - (uint32_t)sizeof(*rh));

	/* 2: claim, never taking a slot from a newer position */
	uint32_t claimed = 0;
	for (; claimed < n; claimed++) {
		_Atomic uint64_t *seq = dt_slot_seq(r, pos + claimed);
		uint64_t mine = (pos + claimed + 1) | DT_SEQ_BUSY;
		uint64_t old = atomic_load_explicit(seq, memory_order_relaxed);
		int took = 0;
		while ((old & DT_SEQ_POS_MASK) < pos + claimed + 1) {
			if (atomic_compare_exchange_weak_explicit(
			        seq, &old, mine, memory_order_relaxed, memory_order_relaxed)) {
				took = 1;
				break;
			}
		}
		if (!took)
			break; /* lapped: a newer record owns this slot */
		if ((old & (DT_SEQ_START | DT_SEQ_BUSY)) == DT_SEQ_START)
			atomic_fetch_add_explicit(lost, 1, memory_order_relaxed);
	}
	/* Readers that saw the old published seq must see BUSY before any of
	 * the new bytes (seqlock writer side). */
	atomic_thread_fence(memory_order_release);

	/* 3: copy, slot by slot, while the claim holds */
	const unsigned char *src = rec;
	uint32_t left = rh->len;
	int ok = claimed == n;
	for (uint32_t k = 0; k < n && ok; k++) {
		uint64_t mine = (pos + k + 1) | DT_SEQ_BUSY;
		if (atomic_load_explicit(dt_slot_seq(r, pos + k), memory_order_relaxed) != mine) {
			ok = 0;
			break;
		}
		uint32_t chunk = left < DT_SLOT_DATA ? left : DT_SLOT_DATA;
		memcpy(dt_slot_data(r, pos + k), src, chunk);
		src += chunk;
		left -= chunk;
	}

	/* 4: publish continuations, then the first slot */
	for (uint32_t k = n; ok && k-- > 1;) {
		uint64_t want = (pos + k + 1) | DT_SEQ_BUSY;
		if (!atomic_compare_exchange_strong_explicit(dt_slot_seq(r, pos + k), &want,
		                                             pos + k + 1, memory_order_release,
		                                             memory_order_relaxed))
			ok = 0;
	}
	if (ok) {
		uint64_t want = (pos + 1) | DT_SEQ_BUSY;
		ok = atomic_compare_exchange_strong_explicit(
		    dt_slot_seq(r, pos), &want, (pos + 1) | DT_SEQ_START, memory_order_release,
		    memory_order_relaxed);
	}
	/* An abandoned record leaves its claimed slots BUSY at an old
	 * position: readers skip them, and the next lap reclaims them. */
	if (!ok)
		atomic_fetch_add_explicit(dropped, 1, memory_order_relaxed);
	return ok ? 0 : -1;
}
