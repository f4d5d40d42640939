// build-flags: -D_GNU_SOURCE -Ipreload preload/ring.c
/*
 * leftover: a hostile worker that leaves a process behind holding a plain
 * descriptor of its ring (no lock), to write into whatever file that
 * descriptor reaches in a later run.
 *
 * Usage: leftover RING TRIGGER
 *
 *   Opens RING read-write, then forks a detached child and exits 0 at
 *   once. The child keeps only that descriptor, waits (at most 120 s) for
 *   TRIGGER to exist, appends one DT_REC_DENIAL whose DT_T_PATH is
 *   "/forged-by-leftover" to the ring its descriptor holds, then creates
 *   TRIGGER.done and exits.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../preload/ring.h"

static void forge(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return;
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct dt_ring ring;
	if (map == MAP_FAILED || dt_ring_attach(&ring, map, (size_t)st.st_size) != 0)
		return;
	static unsigned char rec[1024];
	struct dt_rec_header *rh = (struct dt_rec_header *)rec;
	struct dt_buf b = {rec, sizeof(*rh), sizeof(rec), 0};
	rh->type = DT_REC_DENIAL;
	dt_put_u64(&b, DT_T_PID, 4242);
	dt_put_u64(&b, DT_T_TID, 4242);
	dt_put_u64(&b, DT_T_ERRNO, 13);
	dt_put_str(&b, DT_T_OP, "open");
	dt_put_str(&b, DT_T_PATH, "/forged-by-leftover");
	rh->len = b.len;
	dt_ring_write(&ring, rec);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: leftover RING TRIGGER\n");
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("leftover: open");
		return 1;
	}
	pid_t pid = fork();
	if (pid != 0)
		return pid < 0;
	setsid();
	for (int i = 0; i < 1024; i++)
		if (i != fd)
			close(i);
	char done[4096];
	snprintf(done, sizeof(done), "%s.done", argv[2]);
	/* a hang guard: the test creates TRIGGER long before */
	for (int i = 0; i < 12000 && access(argv[2], F_OK) != 0; i++)
		usleep(10 * 1000);
	forge(fd);
	close(open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	return 0;
}
