// SPDX-License-Identifier: MIT
/*
 * uring-open PATH: creates PATH for writing through io_uring (IORING_OP_OPENAT
 * submitted with raw system calls, no liburing), not through libc, and prints
 * "uring openat: OK" or "uring openat: ERRNAME". Prints "uring unavailable"
 * and exits 77 when io_uring cannot be set up here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	int fd = (int)syscall(__NR_io_uring_setup, 1, &p);
	if (fd < 0) {
		printf("uring unavailable: %s\n", strerror(errno));
		return 77;
	}
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQ_RING);
	char *cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_CQ_RING);
	struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
	                                 MAP_SHARED, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return 3;
	struct io_uring_sqe *e = &sqes[0];
	memset(e, 0, sizeof(*e));
	e->opcode = IORING_OP_OPENAT;
	e->fd = AT_FDCWD;
	e->addr = (unsigned long)argv[1];
	e->open_flags = O_WRONLY | O_CREAT;
	e->len = 0644;
	unsigned *tail = (unsigned *)(sq + p.sq_off.tail);
	unsigned *array = (unsigned *)(sq + p.sq_off.array);
	array[*tail & *(unsigned *)(sq + p.sq_off.ring_mask)] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return 4;
	unsigned *head = (unsigned *)(cq + p.cq_off.head);
	struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	int res = cqes[*head & *(unsigned *)(cq + p.cq_off.ring_mask)].res;
	if (res >= 0)
		printf("uring openat: OK\n");
	else
		printf("uring openat: %s\n", strerrorname_np(-res));
	return 0;
}
