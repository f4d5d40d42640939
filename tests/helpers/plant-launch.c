// build-flags: -D_GNU_SOURCE -Ipreload preload/ring.c
/*
 * plant-launch: a hostile worker whose sandbox can write
 * $XDG_STATE_HOME, run outside the probe. It hides every process record
 * of its ring (the mount tables that would show what it can write), then
 * writes a launch file for its ring, in the format denytrace writes,
 * under $XDG_STATE_HOME/denytrace/launches/, replacing any there: one
 * that runs `bwrap --bind / / --dev /dev -- /bin/sh -c 'touch MARKER'`.
 *
 * Usage: plant-launch RING MARKER [WORD...]
 *
 *   WORDs, when given, are the command the file claims instead (MARKER is
 *   then only for the caller's script to name).
 *
 *   RING is reached through the descriptor the launcher handed down
 *   ($DENYTRACE_FD) when there is one: a sandbox's file system may be
 *   read-only there.
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

static void hide_process_records(struct dt_ring *r)
{
	uint64_t head = atomic_load((_Atomic uint64_t *)&r->hdr->head);
	uint64_t from = head > r->nslots ? head - r->nslots : 0;
	for (uint64_t pos = from; pos < head; pos++) {
		_Atomic uint64_t *seq = dt_slot_seq(r, pos);
		if (atomic_load(seq) != ((pos + 1) | DT_SEQ_START))
			continue;
		const struct dt_rec_header *h = (const void *)dt_slot_data(r, pos);
		if (h->type == DT_REC_PROCESS)
			atomic_store(seq, 0);
	}
}

static void mkdirs(char *path)
{
	for (char *s = path + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(path, 0700);
			*s = '/';
		}
	mkdir(path, 0700);
}

/* The launch file's NUL-separated strings (tracer/launch/launchfile.h). */
static void plant(const struct dt_ring *r, const struct stat *st, const char *marker,
                  char *const *claim)
{
	const char *state = getenv("XDG_STATE_HOME");
	char dir[4096], path[4200], script[4200], cwd[4096];
	if (!state || !getcwd(cwd, sizeof(cwd)))
		return;
	snprintf(dir, sizeof(dir), "%s/denytrace/launches", state);
	mkdirs(dir);
	int n = snprintf(path, sizeof(path), "%s/", dir);
	for (int i = 0; i < 16; i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", r->hdr->run_id[i]);
	snprintf(path + n, sizeof(path) - (size_t)n, ".launch");
	snprintf(script, sizeof(script), "touch %s", marker);
	/* the format of the file denytrace left there, if any: an attacker
	 * writes what the installed denytrace reads */
	char old[64] = "", format[16] = "2";
	FILE *prev = fopen(path, "r");
	if (prev) {
		size_t got = fread(old, 1, sizeof(old) - 1, prev);
		fclose(prev);
		old[got] = 0;
		if (got > strlen(old) + 1)
			snprintf(format, sizeof(format), "%s", old + strlen(old) + 1);
	}
	unlink(path);
	FILE *f = fopen(path, "wx");
	if (!f)
		return;
	fchmod(fileno(f), 0600);
	fprintf(f, "denytrace-launch%c%s%c", 0, format, 0);
	for (int i = 0; i < 16; i++)
		fprintf(f, "%02x", r->hdr->run_id[i]);
	fprintf(f, "%c%llu%c%llu%crun%c%s%c", 0, (unsigned long long)st->st_dev, 0,
	        (unsigned long long)st->st_ino, 0, 0, cwd, 0);
	const char *argv[] = {"bwrap", "--bind", "/",       "/",  "--dev",
	                      "/dev",  "--",     "/bin/sh", "-c", script};
	size_t nwords = sizeof(argv) / sizeof(*argv), nclaim = 0;
	while (claim[nclaim])
		nclaim++;
	fprintf(f, "%zu%c", nclaim ? nclaim : nwords, 0);
	for (size_t i = 0; i < (nclaim ? nclaim : nwords); i++)
		fprintf(f, "%s%c", nclaim ? claim[i] : argv[i], 0);
	fprintf(f, "0%c0%c", 0, 0); /* no environment, no config snapshots */
	fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: plant-launch RING MARKER [WORD...]\n");
		return 2;
	}
	const char *inherited = getenv("DENYTRACE_FD");
	int fd = inherited ? atoi(inherited) : -1;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) /* not handed down this far */
		fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror("plant-launch: open");
		return 1;
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct dt_ring r;
	if (map == MAP_FAILED || dt_ring_attach(&r, map, (size_t)st.st_size) != 0) {
		fprintf(stderr, "plant-launch: %s is not a ring\n", argv[1]);
		return 1;
	}
	hide_process_records(&r);
	plant(&r, &st, argv[2], argv + 3);
	return 0;
}
