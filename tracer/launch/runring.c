/* SPDX-License-Identifier: MIT */
/* run's ring (run.h): where it goes (beside a ring another run holds),
 * what it displaces (kept as .old), created, mapped, and its descriptor
 * moved out of the command's way. The launch itself is run.c's. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ringfile.h"
#include "run.h"

/* The command inherits the ring's descriptor. Keep it out of the numbers
 * the program hands out itself, so that its first open still returns 3 and
 * it can open as many files as without denytrace:
 * - soft RLIMIT_NOFILE above 1024 (or none): descriptor 1023, below 1024
 *   so that the descriptor table keeps its default size;
 * - 1024 or less: the number just above the soft limit, which the program
 *   can never get (F_DUPFD needs the soft limit raised for that one call);
 * - and when the hard limit forbids even that (`ulimit -n N` sets both):
 *   no descriptor at all (-1); the probe finds the ring by its path.
 * Returns the descriptor the command inherits, or -1 (fd closed). */
static int dt_ring_fd_out_of_the_way(int fd)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return fd;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1024) {
		int hi = fcntl(fd, F_DUPFD, 1023); /* the copy is not close-on-exec */
		if (hi < 0)
			return fd;
		close(fd);
		return hi;
	}
	int above = (int)rl.rlim_cur, hi = -1;
	struct rlimit raised = {(rlim_t)above + 1, rl.rlim_max};
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > rl.rlim_cur) {
		if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
			hi = fcntl(fd, F_DUPFD, above);
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	close(fd);
	return hi;
}

/* The previous ring at path becomes path.old (as perf keeps perf.data.old):
 * a second run in the same directory must not silently lose the first.
 * The file every run writes is a new one: a process left from an earlier
 * run may still hold a descriptor of a displaced ring (no lock says so:
 * a plain or O_PATH descriptor takes none), and would write into a later
 * run's ring through it. Returns an O_PATH descriptor of the displaced
 * path.old (path itself when it cannot be kept), or -1: freeing its
 * blocks waits until the command has started (see dt_run_launch). */
static int run_keep_old_ring(const char *path, int quiet)
{
	struct stat st;
	char old[PATH_MAX];
	if (lstat(path, &st) < 0 || S_ISDIR(st.st_mode) ||
	    snprintf(old, sizeof(old), "%s.old", path) >= (int)sizeof(old))
		return open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	int held = open(old, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (rename(path, old) < 0) {
		dt_fail(0, "could not keep the previous %s as %s (%s); it is replaced", path, old,
		        strerror(errno));
		if (held >= 0)
			close(held);
		return open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	if (!quiet)
		dt_fail(0, "kept the previous %s as %s", path, old);
	return held;
}

/* Creates rr->path (the previous ring kept as .old). Returns the ring's
 * descriptor, or -1 with the message printed. */
static int run_ring_file(const struct dt_run_opts *o, struct dt_run_ring *rr)
{
	char err[1024];
	rr->old_ring = run_keep_old_ring(rr->path, o->quiet);
	uint64_t size = o->size ? o->size : o->all ? DT_RING_LARGE_SIZE : DT_RING_DEFAULT_SIZE;
	int fd = dt_ringfile_create(rr->path, size, o->all ? DT_RING_F_ALL : 0, err, sizeof(err));
	if (fd < 0)
		dt_fail(0, "%s", err);
	return fd;
}

/* Maps the ring fd and moves the descriptor the command inherits out of
 * its way. Returns 0 or an exit status. */
static int run_ring_map(struct dt_run_ring *rr, int fd)
{
	if (!realpath(rr->path, rr->abs))
		snprintf(rr->abs, sizeof(rr->abs), "%s", rr->path);
	struct stat st;
	void *map = MAP_FAILED;
	if (fstat(fd, &st) == 0)
		map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	/* no read-ahead: a fault into the fallocated ring would zero-fill the
	 * pages around it on ext4, for records that mostly never come */
	if (map != MAP_FAILED)
		(void)madvise(map, (size_t)st.st_size, MADV_RANDOM);
	if (map == MAP_FAILED || dt_ring_attach(&rr->ring, map, (size_t)st.st_size) != 0) {
		close(fd);
		return dt_fail(DT_EXIT_INTERNAL, "cannot map the ring %s", rr->path);
	}
	rr->fd = dt_ring_fd_out_of_the_way(fd);
	rr->map = map;
	rr->map_len = (size_t)st.st_size;
	/* DEV:INO:CREATED: the creation time tells this run's ring from an
	 * earlier one whose file was reused (same device and inode) */
	dt_ring_id_format(rr->id, sizeof(rr->id), &st, rr->ring.hdr->created_ns);
	rr->dev = (uint64_t)st.st_dev;
	rr->ino = (uint64_t)st.st_ino;
	/* unguessable: the traced program must not be able to name a launch
	 * file in advance (a fallback from the clock would be guessable, so
	 * without randomness the run has no launch file) */
	if (getrandom(rr->run_id, sizeof(rr->run_id), GRND_NONBLOCK) == (ssize_t)sizeof(rr->run_id))
		memcpy(rr->ring.hdr->run_id, rr->run_id, sizeof(rr->run_id));
	else { /* a reused ring keeps its last run's id otherwise */
		memset(rr->run_id, 0, sizeof(rr->run_id));
		memset(rr->ring.hdr->run_id, 0, sizeof(rr->run_id));
	}
	return 0;
}

/* An exclusive lock on the ring's directory while this run chooses and
 * creates its ring: two runs starting at once would both see the path
 * free and the second would displace the first's ring. A directory
 * whose lock someone holds for long (the traced program can) only loses
 * us that guarantee: no wait beyond two seconds. Returns the locked
 * directory's descriptor, or -1. */
static int run_lock_ring_dir(const char *path)
{
	char *dup = strdup(path);
	int dfd = dup ? open(dirname(dup), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	free(dup);
	for (int k = 0; dfd >= 0 && k < 200; k++) {
		if (flock(dfd, LOCK_EX | LOCK_NB) == 0)
			return dfd;
		usleep(10 * 1000);
	}
	if (dfd >= 0)
		close(dfd);
	return -1;
}

/* out is in use by another run: this run's ring goes beside it, as
 * NAME-PID.ring (NAME.ring) or NAME-PID, under a name nothing holds. */
static int run_ring_beside(const char *out, char *path, size_t cap)
{
	size_t n = strlen(out);
	int ext = n > 5 && !strcmp(out + n - 5, ".ring");
	for (int k = 0; k < 100; k++) {
		char suffix[32];
		snprintf(suffix, sizeof(suffix), k ? "-%d-%d" : "-%d", (int)getpid(), k);
		if (snprintf(path, cap, "%.*s%s%s", (int)(ext ? n - 5 : n), out, suffix,
		             ext ? ".ring" : "") >= (int)cap)
			return -1;
		struct stat st;
		if (lstat(path, &st) < 0 && errno == ENOENT)
			return 0;
	}
	return -1;
}

/* The path this run's ring gets (rr->path), and whether what is there and
 * at PATH.old may be replaced. Returns 0 or an exit status. */
static int run_choose_ring_path(const struct dt_run_opts *o, struct dt_run_ring *rr)
{
	char why[256], old[PATH_MAX + 8];
	snprintf(rr->path, sizeof(rr->path), "%s", o->out);
	if (dt_ringfile_busy(o->out)) {
		if (run_ring_beside(o->out, rr->path, sizeof(rr->path)) < 0)
			return dt_fail(
			    DT_EXIT_INTERNAL,
			    "%s: the ring %s is in use by another run; name another with -o",
			    o->cmd, o->out);
		if (!o->quiet)
			dt_fail(0, "%s is in use by another run: this run's ring is %s", o->out,
			        rr->path);
	}
	if (dt_ringfile_replaceable(rr->path, why, sizeof(why)) < 0)
		return dt_fail(DT_EXIT_INTERNAL,
		               "%s: %s %s; a ring replaces only an earlier ring of yours: "
		               "name a new file with -o",
		               o->cmd, rr->path, why);
	snprintf(old, sizeof(old), "%s.old", rr->path);
	struct stat st;
	if (lstat(rr->path, &st) == 0 && dt_ringfile_replaceable(old, why, sizeof(why)) < 0)
		return dt_fail(DT_EXIT_INTERNAL,
		               "%s: the previous ring would be kept as %s, which %s; move it away "
		               "or name another ring with -o",
		               o->cmd, old, why);
	return 0;
}

int dt_run_ring_create(const struct dt_run_opts *o, struct dt_run_ring *rr)
{
	memset(rr, 0, sizeof(*rr));
	rr->fd = -1;
	rr->old_ring = -1;
	if (o->all && o->refusals_only)
		return dt_fail(DT_EXIT_INTERNAL,
		               "%s: --all records every successful write and --refusals-only none; "
		               "give one of them",
		               o->cmd);
	if (dt_find_probe(rr->probe, sizeof(rr->probe)) < 0)
		return dt_fail(DT_EXIT_INTERNAL, "%s", DT_PROBE_NOT_FOUND);
	const char *bad = dt_probe_path_problem(rr->probe);
	if (bad)
		return dt_fail(
		    DT_EXIT_INTERNAL,
		    "the probe's path '%s' contains %s: the loader splits LD_PRELOAD there "
		    "and would load nothing; install denytrace under a path without spaces "
		    "or colons, or set DENYTRACE_PROBE to a copy of libdenytrace.so there",
		    rr->probe, bad);
	if (o->size && dt_ring_area(o->size) != o->size && !o->quiet)
		dt_fail(0,
		        "--size %llu bytes rounds down to %llu KiB of records (a power of two of "
		        "%u-byte slots); the ring file is %llu KiB with its header",
		        (unsigned long long)o->size,
		        (unsigned long long)dt_ring_area(o->size) / 1024, DT_SLOT_SIZE,
		        (unsigned long long)(dt_ring_area(o->size) + DT_RING_HEADER_SIZE) / 1024);
	int dirlock = run_lock_ring_dir(o->out);
	int rc = run_choose_ring_path(o, rr);
	int fd = rc ? -1 : run_ring_file(o, rr);
	if (dirlock >= 0)
		close(dirlock);
	if (rc || fd < 0)
		return rc ? rc : DT_EXIT_INTERNAL;
	return run_ring_map(rr, fd);
}
