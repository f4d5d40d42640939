/* SPDX-License-Identifier: MIT */
/*
 * The ring file: preload/ring.c writes it, tracer/read/ringfile.c reads it,
 * tracer/read/records.c decodes what was read. preload/ring_format.h is the spec
 * these tests hold the code to.
 *
 * Most tests write records of one self-checking layout (build_rec): a
 * DT_REC_DENIAL carrying a writer id (DT_T_PID), a sequence number
 * (DT_T_TID), a path length (DT_T_MODE), op "ring-writer" and a path whose
 * byte i is 'a' + (seq + i) % 26. tests/helpers/ring-writer.c writes the
 * same layout from another process. check_rec() verifies a decoded record
 * byte for byte, so a torn record the reader wrongly returned would be
 * caught even if its checksum happened to match.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "records.h"
#include "ring.h"
#include "ringfile.h"
#include "testlib.h"

/* header 16 + PID 12 + TID 12 + MODE 12 + OP (4 + 11) + PATH tag 4 */
#define REC_OVERHEAD 71u

static char alphabet[26 + 65536];

static void setup(void)
{
	for (size_t i = 0; i < sizeof(alphabet); i++)
		alphabet[i] = (char)('a' + i % 26);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(ring, .init = setup, .fini = teardown, .timeout = 120);

/* ---- rings ------------------------------------------------------------ */

struct tring {
	char path[512];
	void *map;
	size_t len;
	struct dt_ring r;
};

/* Creates NAME in the test's temporary directory and maps it read-write,
 * the way `denytrace run` and the probe do. */
static void tring_create(struct tring *t, const char *name, uint64_t size)
{
	char err[512] = "";
	snprintf(t->path, sizeof(t->path), "%s/%s", dtt_tmpdir(), name);
	int fd = dt_ringfile_create(t->path, size, 0, err, sizeof(err));
	cr_assert_geq(fd, 0, "dt_ringfile_create(%s, %llu): %s", t->path, (unsigned long long)size,
	              err);
	struct stat st;
	cr_assert_eq(fstat(fd, &st), 0);
	t->len = (size_t)st.st_size;
	t->map = mmap(NULL, t->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq(t->map, MAP_FAILED, "mmap: %s", strerror(errno));
	close(fd);
	cr_assert_eq(dt_ring_attach(&t->r, t->map, t->len), 0);
}

static void tring_unmap(struct tring *t)
{
	munmap(t->map, t->len);
}

static uint64_t hdr_load(const uint64_t *field)
{
	return atomic_load_explicit((_Atomic uint64_t *)field, memory_order_acquire);
}

/* ---- records ---------------------------------------------------------- */

static uint32_t build_rec(unsigned char *buf, uint32_t cap, uint64_t writer, uint64_t seq,
                          uint32_t plen)
{
	struct dt_rec_header *rh = (struct dt_rec_header *)buf;
	memset(rh, 0, sizeof(*rh));
	struct dt_buf b = {buf, sizeof(*rh), cap, 0};
	rh->type = DT_REC_DENIAL;
	dt_put_u64(&b, DT_T_PID, writer);
	dt_put_u64(&b, DT_T_TID, seq);
	dt_put_u64(&b, DT_T_MODE, plen);
	dt_put_str(&b, DT_T_OP, "ring-writer");
	dt_put(&b, DT_T_PATH, alphabet + seq % 26, plen);
	rh->len = b.len;
	return b.len;
}

/* NULL when d is exactly what build_rec(writer d->pid, seq d->tid) wrote. */
static const char *check_rec(const struct dt_record *d)
{
	if (d->type != DT_REC_DENIAL)
		return "wrong type";
	if (!d->op || strcmp(d->op, "ring-writer"))
		return "wrong op";
	if (!d->has_mode || !d->p[0].path)
		return "fields missing";
	size_t n = strlen(d->p[0].path);
	if (n != d->mode)
		return "path length differs from the length written";
	if (memcmp(d->p[0].path, alphabet + (uint64_t)d->tid % 26, n))
		return "path bytes differ from what was written";
	return NULL;
}

struct got {
	uint64_t writer, seq, pos;
	uint32_t len;
};

struct readout {
	struct got *g;
	size_t n, cap;
	struct dt_read_stats st;
	size_t bad; /* returned but undecodable or not what was written */
	char why[256];
	uint64_t head, tail, lost, dropped, nslots;
};

static void readout_add(struct readout *o, uint32_t version, const unsigned char *buf, uint32_t len,
                        uint64_t end)
{
	const struct dt_rec_header *rh = (const struct dt_rec_header *)buf;
	uint64_t p = end - rh->nslots;
	struct dt_record d;
	const char *why = NULL;
	if (rh->nslots != dt_rec_slots(len) || rh->len != len)
		why = "header nslots/len inconsistent";
	else if (dt_checksum_for(version, buf + sizeof(*rh), len - (uint32_t)sizeof(*rh)) !=
	         rh->checksum)
		why = "checksum mismatch in a returned record";
	else if (dt_record_decode(buf, len, p, &d) < 0)
		why = "dt_record_decode failed";
	else {
		why = check_rec(&d);
		if (!why) {
			if (o->n == o->cap) {
				o->cap = o->cap ? o->cap * 2 : 1024;
				o->g = realloc(o->g, o->cap * sizeof(*o->g));
				cr_assert_not_null(o->g);
			}
			o->g[o->n++] = (struct got){(uint64_t)d.pid, (uint64_t)d.tid, p, len};
		}
		dt_record_free(&d);
	}
	if (why) {
		if (!o->bad++)
			snprintf(o->why, sizeof(o->why), "record at %llu: %s",
			         (unsigned long long)p, why);
	}
}

/* Reads every record of a quiescent ring the way `denytrace show` does. */
static void read_ring(const char *path, struct readout *o)
{
	memset(o, 0, sizeof(*o));
	struct dt_ringfile rf;
	char err[512];
	int rc = dt_ringfile_open(path, &rf, err, sizeof(err));
	cr_assert_eq(rc, 0, "dt_ringfile_open: %s", err);
	unsigned char *buf = malloc(DT_REC_MAX);
	cr_assert_not_null(buf);
	uint64_t pos = dt_ring_tail(&rf.ring);
	o->tail = pos;
	uint32_t len;
	while (dt_ring_next(&rf.ring, &pos, buf, &len, &o->st, 0) == DT_NEXT_RECORD)
		readout_add(o, rf.ring.version, buf, len, pos);
	o->head = hdr_load(&rf.ring.hdr->head);
	o->lost = hdr_load(&rf.ring.hdr->lost);
	o->dropped = hdr_load(&rf.ring.hdr->dropped);
	o->nslots = rf.ring.nslots;
	free(buf);
	dt_ringfile_close(&rf);
}

static void readout_free(struct readout *o)
{
	free(o->g);
	o->g = NULL;
}

static void expect_clean(const struct readout *o)
{
	cr_expect_eq(o->bad, 0, "%zu bad records returned; first: %s", o->bad, o->why);
	cr_expect_eq(o->st.corrupt, 0, "%llu corrupt", (unsigned long long)o->st.corrupt);
	cr_expect_eq(o->st.torn, 0, "%llu torn in a ring nobody writes",
	             (unsigned long long)o->st.torn);
}

/* Every (writer, seq) for writer < nwriters and seq < count read exactly
 * once, and each writer's records in ring order are in sequence order. */
static void expect_complete(const struct readout *o, unsigned nwriters, unsigned count)
{
	unsigned char *seen = calloc((size_t)nwriters * count, 1);
	uint64_t *next = calloc(nwriters, sizeof(*next));
	cr_assert(seen && next);
	size_t dups = 0, foreign = 0, order = 0;
	for (size_t i = 0; i < o->n; i++) {
		const struct got *g = &o->g[i];
		if (g->writer >= nwriters || g->seq >= count) {
			foreign++;
			continue;
		}
		unsigned char *s = &seen[g->writer * count + g->seq];
		dups += *s;
		*s = 1;
		order += g->seq < next[g->writer];
		next[g->writer] = g->seq + 1;
	}
	size_t missing = 0;
	for (size_t i = 0; i < (size_t)nwriters * count; i++)
		missing += !seen[i];
	cr_expect_eq(foreign, 0, "%zu records nobody wrote", foreign);
	cr_expect_eq(dups, 0, "%zu records read twice", dups);
	cr_expect_eq(missing, 0, "%zu of %u records missing", missing, nwriters * count);
	cr_expect_eq(order, 0, "%zu records out of their writer's order", order);
	cr_expect_eq(o->n, (size_t)nwriters * count);
	free(seen);
	free(next);
}

/* ---- writers ---------------------------------------------------------- */

struct wjob {
	struct dt_ring *r;
	unsigned id, count, plen_mod;
	unsigned long ok, failed;
};

static uint32_t plen_of(unsigned id, uint64_t seq, unsigned mod)
{
	return (uint32_t)((seq * 37 + id * 11) % mod);
}

static void *writer_main(void *arg)
{
	struct wjob *j = arg;
	unsigned char *rec = malloc(DT_REC_MAX);
	if (!rec)
		return NULL;
	for (unsigned s = 0; s < j->count; s++) {
		build_rec(rec, DT_REC_MAX, j->id, s, plen_of(j->id, s, j->plen_mod));
		if (dt_ring_write(j->r, rec) == 0)
			j->ok++;
		else
			j->failed++;
	}
	free(rec);
	return NULL;
}

static void run_threads(struct wjob *jobs, unsigned n)
{
	pthread_t th[16];
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, writer_main, &jobs[i]), 0);
	for (unsigned i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* First thing in a forked child: a child left stopped or waiting by a
 * failed assertion in the parent must not outlive it. */
static void die_with_parent(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* ---- ring-writer processes -------------------------------------------- */

struct proc {
	pid_t pid;
	int out; /* its stdout */
};

static struct proc spawn_writer(const char *ring, unsigned long count, unsigned id, long stall)
{
	/* `make test-asan` builds no helpers into build-asan/: the plain
	 * build's copy does the same job (helpers are not instrumented) */
	const char *helper = dtt_helper("ring-writer");
	if (access(helper, X_OK) != 0 && access("build/helpers/ring-writer", X_OK) == 0)
		helper = "build/helpers/ring-writer";
	cr_assert_eq(access(helper, X_OK), 0, "%s is missing: run `make helpers`", helper);
	char c[32], i[32], s[32];
	snprintf(c, sizeof(c), "%lu", count);
	snprintf(i, sizeof(i), "%u", id);
	snprintf(s, sizeof(s), "%ld", stall);
	const char *argv[] = {helper, ring, c, "--id", i, stall >= 0 ? "--stall-after" : NULL,
	                      s,      NULL};
	int p[2];
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		die_with_parent();
		dup2(p[1], 1);
		execv(helper, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	return (struct proc){pid, p[0]};
}

/* One line of a helper's output, waiting at most 20 s for it. */
static void read_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	while (n + 1 < cap) {
		struct pollfd pfd = {fd, POLLIN, 0};
		int rc = poll(&pfd, 1, 20000);
		if (rc < 0 && errno == EINTR)
			continue;
		cr_assert_gt(rc, 0, "ring-writer said nothing for 20 s (got '%.*s')", (int)n, buf);
		ssize_t r = read(fd, buf + n, 1);
		if (r < 0 && errno == EINTR)
			continue;
		cr_assert_gt(r, 0, "ring-writer closed its output after '%.*s'", (int)n, buf);
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
}

static int wait_status(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		cr_assert_eq(errno, EINTR, "waitpid: %s", strerror(errno));
	return st;
}

/* Runs ring-writer to completion; returns how many records it published. */
static unsigned long run_writer(const char *ring, unsigned long count, unsigned id)
{
	struct proc p = spawn_writer(ring, count, id, -1);
	char line[128];
	read_line(p.out, line, sizeof(line));
	close(p.out);
	int st = wait_status(p.pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "ring-writer failed (status 0x%x)", st);
	unsigned long ok, dropped;
	cr_assert_eq(sscanf(line, "wrote %lu %lu", &ok, &dropped), 2, "ring-writer said '%s'",
	             line);
	return ok;
}

/* ==== one writer ======================================================= */

Test(ring, a_version_1_ring_is_read_with_its_own_checksum_and_never_written)
{
	struct tring t;
	tring_create(&t, "v1.ring", 64 * 1024);
	unsigned char rec[DT_SLOT_DATA];
	const unsigned n = 3;
	for (unsigned s = 0; s < n; s++) {
		build_rec(rec, sizeof(rec), 7, s, 10);
		cr_assert_eq(dt_ring_write(&t.r, rec), 0);
	}
	/* what a version 1 probe would have left: FNV-1a checksums */
	struct dt_ring_header *h = t.map;
	h->version = 1;
	for (unsigned s = 0; s < n; s++) {
		struct dt_rec_header *rh = (struct dt_rec_header *)dt_slot_data(&t.r, s);
		cr_assert_eq(rh->nslots, 1);
		rh->checksum = dt_checksum_v1((unsigned char *)rh + sizeof(*rh),
		                              rh->len - (uint32_t)sizeof(*rh));
	}
	struct readout o;
	read_ring(t.path, &o);
	expect_clean(&o);
	cr_expect_eq(o.n, n, "%zu of %u version 1 records read", o.n, n);
	readout_free(&o);

	struct dt_ring r1;
	cr_assert_eq(dt_ring_attach(&r1, t.map, t.len), 0, "version 1 attaches for reading");
	cr_expect_eq(r1.version, 1);
	build_rec(rec, sizeof(rec), 7, n, 10);
	cr_expect_eq(dt_ring_write(&r1, rec), -1, "a current record written into a version 1 ring");
	cr_expect_eq(hdr_load(&h->head), n, "head moved");
	tring_unmap(&t);
}

Test(ring, one_writer_round_trips_records_in_order_with_valid_checksums)
{
	struct tring t;
	tring_create(&t, "one.ring", 1024 * 1024);
	unsigned char rec[4096];
	const unsigned n = 500;
	uint64_t head = 0;
	for (unsigned s = 0; s < n; s++) {
		uint32_t len = build_rec(rec, sizeof(rec), 7, s, (s * 37) % 400);
		cr_assert_eq(dt_ring_write(&t.r, rec), 0, "record %u not published", s);
		const struct dt_rec_header *rh = (const struct dt_rec_header *)rec;
		cr_assert_eq(rh->nslots, dt_rec_slots(len), "nslots not filled in");
		cr_assert_eq(rh->checksum, dt_checksum(rec + sizeof(*rh), len - 16));
		head += dt_rec_slots(len);
	}
	struct readout o;
	read_ring(t.path, &o);
	expect_clean(&o);
	cr_expect_eq(o.head, head, "head %llu, slots written %llu", (unsigned long long)o.head,
	             (unsigned long long)head);
	cr_assert_eq(o.n, n);
	uint64_t pos = 0;
	for (unsigned i = 0; i < n; i++) {
		cr_expect_eq(o.g[i].writer, 7);
		cr_expect_eq(o.g[i].seq, i, "record %u has seq %llu", i,
		             (unsigned long long)o.g[i].seq);
		cr_expect_eq(o.g[i].pos, pos, "record %u at position %llu, expected %llu", i,
		             (unsigned long long)o.g[i].pos, (unsigned long long)pos);
		pos += dt_rec_slots(o.g[i].len);
	}
	cr_expect_eq(o.st.records, n);
	cr_expect_eq(o.st.skipped, 0);
	cr_expect_eq(o.lost, 0);
	cr_expect_eq(o.dropped, 0);
	readout_free(&o);
	tring_unmap(&t);
}

Test(ring, record_with_every_field_kind_round_trips_intact)
{
	struct tring t;
	tring_create(&t, "fields.ring", DT_RING_MIN_SIZE);
	static unsigned char rec[DT_REC_MAX];
	struct dt_rec_header *rh = (struct dt_rec_header *)rec;
	struct dt_buf b = {rec, sizeof(*rh), sizeof(rec), 0};
	rh->type = DT_REC_PROCESS;
	dt_put_u64(&b, DT_T_TIME_REAL, 1700000000123456789ULL);
	dt_put_u64(&b, DT_T_TIME_MONO, 42);
	dt_put_u64(&b, DT_T_PID, 1234);
	dt_put_u64(&b, DT_T_TID, 1235);
	dt_put_u64(&b, DT_T_PPID, 1);
	dt_put_u64(&b, DT_T_UID, 1000);
	dt_put_u64(&b, DT_T_GID, 100);
	dt_put_u64(&b, DT_T_EUID_REAL, 1001);
	dt_put_str(&b, DT_T_COMM, "worker");
	dt_put_str(&b, DT_T_OP, "openat");
	dt_put_u64(&b, DT_T_ERRNO, 30);
	dt_put_u64(&b, DT_T_FLAGS, 01101);
	dt_put_u64(&b, DT_T_MODE, 0644);
	dt_put_str(&b, DT_T_FMODE, "w+");
	dt_put_u64(&b, DT_T_CMD, (uint64_t)-5);
	dt_put_u64(&b, DT_T_ACCESS, 1);
	dt_put_u64(&b, DT_T_FD, (uint64_t)-100);
	dt_put_str(&b, DT_T_SQLITE, "wal");
	dt_put_u64(&b, DT_T_INJECTED, 1);
	dt_put_str(&b, DT_T_PATH, "db.sqlite");
	dt_put_str(&b, DT_T_DIRPATH, "/data");
	dt_put_str(&b, DT_T_ABSPATH, "/data/db.sqlite");
	dt_put_str(&b, DT_T_REALPATH, "/mnt/data/db.sqlite");
	struct dt_stat_facts sf = {DT_SF_EXISTS | DT_SF_PARENT, 0100644, 1, 2, 040755, 3, 4, 0, 1};
	dt_put(&b, DT_T_STAT, &sf, sizeof(sf));
	dt_put_str(&b, DT_T_PATH2, "new");
	dt_put_str(&b, DT_T_ABSPATH2, "/data/new");
	struct dt_stat_facts sf2 = {DT_SF_MOUNT, 0, 0, 0, 0, 0, 0, 0, 1};
	dt_put(&b, DT_T_STAT2, &sf2, sizeof(sf2));
	struct dt_frame f0 = {0x401000, 0x1000, 0, 0}, f1 = {0x7f0000001234, 0x1234, 5, 0};
	dt_put(&b, DT_T_FRAME, &f0, sizeof(f0));
	dt_put(&b, DT_T_FRAME, &f1, sizeof(f1));
	dt_put_str(&b, DT_T_MODULE, "/usr/bin/worker");
	dt_put_str(&b, DT_T_EXE, "/usr/bin/worker");
	dt_put(&b, DT_T_ARGV, "worker\0--db\0", 12);
	dt_put_u64(&b, DT_T_ARGV_TRUNC, 1);
	dt_put_str(&b, DT_T_CWD, "/home/u");
	dt_put_str(&b, DT_T_ENV, "HOME=/home/u");
	dt_put_str(&b, DT_T_ENV, "TMPDIR=/tmp");
	unsigned char mnt[8 + 16] = {DT_MF_RW};
	memcpy(mnt + 8, "/data\0ext4", 10);
	dt_put(&b, DT_T_MOUNT, mnt, 18);
	dt_put_u64(&b, DT_T_MOUNTS_TRUNC, 1);
	dt_put_u64(&b, DT_T_SECCOMP, 2);
	dt_put_u64(&b, DT_T_SECCOMP_FILTERS, 3);
	dt_put_u64(&b, DT_T_NO_NEW_PRIVS, 1);
	dt_put_u64(&b, DT_T_MNT_NS, 4026531840ULL);
	dt_put_u64(&b, DT_T_USER_NS, 4026531837ULL);
	dt_put_str(&b, DT_T_VERSION, "0.1.0");
	cr_assert_not(b.overflow);
	rh->len = b.len;
	cr_assert_gt(dt_rec_slots(b.len), 1, "meant to span slots");
	cr_assert_eq(dt_ring_write(&t.r, rec), 0);

	struct dt_ringfile rf;
	char err[512];
	cr_assert_eq(dt_ringfile_open(t.path, &rf, err, sizeof(err)), 0, "%s", err);
	static unsigned char buf[DT_REC_MAX];
	struct dt_read_stats st = {0};
	uint64_t pos = dt_ring_tail(&rf.ring);
	uint32_t len;
	cr_assert_eq(dt_ring_next(&rf.ring, &pos, buf, &len, &st, 0), DT_NEXT_RECORD);
	cr_assert_eq(len, b.len);
	cr_assert_eq(memcmp(buf, rec, len), 0, "bytes read differ from bytes written");
	struct dt_record d;
	cr_assert_eq(dt_record_decode(buf, len, 0, &d), 0);
	cr_expect_eq(d.type, DT_REC_PROCESS);
	cr_expect_eq(d.time_real, 1700000000123456789ULL);
	cr_expect_eq(d.time_mono, 42);
	cr_expect_eq(d.pid, 1234);
	cr_expect_eq(d.tid, 1235);
	cr_expect_eq(d.ppid, 1);
	cr_expect_eq(d.uid, 1000);
	cr_expect_eq(d.gid, 100);
	cr_expect_eq(d.ruid, 1001);
	cr_expect_str_eq(d.comm, "worker");
	cr_expect_str_eq(d.op, "openat");
	cr_expect_eq(d.err, 30);
	cr_expect(d.has_flags && d.flags == 01101);
	cr_expect(d.has_mode && d.mode == 0644);
	cr_expect_str_eq(d.fmode, "w+");
	cr_expect(d.has_cmd && d.cmd == -5);
	cr_expect_eq(d.writes, 1);
	cr_expect(d.has_fd && d.fd == -100);
	cr_expect_str_eq(d.sqlite_hint, "wal");
	cr_expect_eq(d.injected, 1);
	cr_expect_str_eq(d.p[0].path, "db.sqlite");
	cr_expect_str_eq(d.p[0].dirpath, "/data");
	cr_expect_str_eq(d.p[0].abspath, "/data/db.sqlite");
	cr_expect_str_eq(d.p[0].realpath, "/mnt/data/db.sqlite");
	cr_expect(d.p[0].has_st && !memcmp(&d.p[0].st, &sf, sizeof(sf)));
	cr_expect_str_eq(d.p[1].path, "new");
	cr_expect_str_eq(d.p[1].abspath, "/data/new");
	cr_expect_null(d.p[1].realpath);
	cr_expect(d.p[1].has_st && !memcmp(&d.p[1].st, &sf2, sizeof(sf2)));
	cr_assert_eq(d.nframes, 2);
	cr_expect_eq(d.frames[0].ip, 0x401000);
	cr_expect_eq(d.frames[0].offset, 0x1000);
	cr_expect_eq(d.frames[0].module, 0);
	cr_expect_eq(d.frames[1].module, UINT32_MAX, "module index 5 of 1 should be dropped");
	cr_assert_eq(d.nmodules, 1);
	cr_expect_str_eq(d.modules[0], "/usr/bin/worker");
	cr_expect_str_eq(d.exe, "/usr/bin/worker");
	cr_assert_geq(d.argc, 2);
	cr_expect_str_eq(d.argv[0], "worker");
	cr_expect_str_eq(d.argv[1], "--db");
	cr_expect_eq(d.argv_trunc, 1);
	cr_expect_str_eq(d.cwd, "/home/u");
	cr_assert_eq(d.nenv, 2);
	cr_expect_str_eq(dt_record_env(&d, "TMPDIR"), "/tmp");
	cr_assert_eq(d.nmounts, 1);
	cr_expect_str_eq(d.mounts[0].path, "/data");
	cr_expect_str_eq(d.mounts[0].fstype, "ext4");
	cr_expect_eq(d.mounts[0].rw, 1);
	cr_expect_eq(d.mounts_trunc, 1);
	cr_expect(d.has_seccomp && d.seccomp == 2);
	cr_expect_eq(d.seccomp_filters, 3);
	cr_expect_eq(d.no_new_privs, 1);
	cr_expect_eq(d.mnt_ns, 4026531840ULL);
	cr_expect_eq(d.user_ns, 4026531837ULL);
	cr_expect_str_eq(d.version, "0.1.0");
	dt_record_free(&d);
	cr_expect_eq(dt_ring_next(&rf.ring, &pos, buf, &len, &st, 0), DT_NEXT_END);
	dt_ringfile_close(&rf);
	tring_unmap(&t);
}

Test(ring, multi_slot_records_up_to_DT_REC_MAX_round_trip)
{
	struct tring t;
	/* 2048 slots: a DT_REC_MAX record (265 slots) is under a quarter */
	tring_create(&t, "big.ring", 2048 * DT_SLOT_SIZE);
	cr_assert_eq(t.r.nslots, 2048);
	static unsigned char rec[DT_REC_MAX + 64];
	/* exact slot boundaries, 10 KB, and the largest record allowed */
	const uint32_t lens[] = {DT_SLOT_DATA,         DT_SLOT_DATA + 1,     2 * DT_SLOT_DATA,
	                         2 * DT_SLOT_DATA + 1, REC_OVERHEAD + 10240, REC_OVERHEAD,
	                         DT_REC_MAX,           REC_OVERHEAD + 10240, 3 * DT_SLOT_DATA};
	const unsigned n = sizeof(lens) / sizeof(lens[0]);
	uint64_t head = 0;
	for (unsigned s = 0; s < n; s++) {
		uint32_t len = build_rec(rec, sizeof(rec), 1, s, lens[s] - REC_OVERHEAD);
		cr_assert_eq(len, lens[s]);
		cr_assert_eq(dt_ring_write(&t.r, rec), 0, "record of %u bytes not published", len);
		head += dt_rec_slots(len);
	}
	struct readout o;
	read_ring(t.path, &o);
	expect_clean(&o);
	cr_expect_eq(o.head, head);
	cr_assert_eq(o.n, n);
	for (unsigned i = 0; i < n; i++) {
		cr_expect_eq(o.g[i].seq, i);
		cr_expect_eq(o.g[i].len, lens[i], "record %u: %u bytes, wrote %u", i, o.g[i].len,
		             lens[i]);
	}
	cr_expect_eq(o.dropped, 0);
	readout_free(&o);
	tring_unmap(&t);
}

Test(ring, record_over_DT_REC_MAX_is_dropped_counted_and_not_published)
{
	struct tring t;
	tring_create(&t, "over.ring", 1024 * 1024);
	static unsigned char rec[DT_REC_MAX + 64];
	build_rec(rec, sizeof(rec), 1, 0, 100);
	cr_assert_eq(dt_ring_write(&t.r, rec), 0);
	uint64_t head = hdr_load(&t.r.hdr->head);
	uint32_t len = build_rec(rec, sizeof(rec), 1, 1, DT_REC_MAX + 1 - REC_OVERHEAD);
	cr_assert_eq(len, DT_REC_MAX + 1);
	cr_expect_eq(dt_ring_write(&t.r, rec), -1, "a record over DT_REC_MAX was written");
	cr_expect_eq(hdr_load(&t.r.hdr->dropped), 1);
	cr_expect_eq(hdr_load(&t.r.hdr->head), head, "slots were reserved for a dropped record");
	build_rec(rec, sizeof(rec), 1, 2, 100);
	cr_assert_eq(dt_ring_write(&t.r, rec), 0);

	struct readout o;
	read_ring(t.path, &o);
	expect_clean(&o);
	cr_assert_eq(o.n, 2, "read %zu records", o.n);
	cr_expect_eq(o.g[0].seq, 0);
	cr_expect_eq(o.g[1].seq, 2);
	cr_expect_eq(o.st.skipped, 0);
	cr_expect_eq(o.dropped, 1);
	readout_free(&o);
	tring_unmap(&t);
}

/* A store into a mapping past the end of a truncated file raises SIGBUS:
 * the writer checks first, and stops writing for good. */
static void expect_truncated_ring_refused(void)
{
	struct tring t;
	tring_create(&t, "shrunk.ring", 64 * 1024);
	static unsigned char rec[512];
	build_rec(rec, sizeof(rec), 1, 0, 100);
	cr_assert_eq(dt_ring_write(&t.r, rec), 0);
	cr_expect(dt_ring_intact(&t.r));
	cr_assert_eq(truncate(t.path, 4096), 0);
	cr_expect(!dt_ring_intact(&t.r), "a truncated ring reads as whole");
	build_rec(rec, sizeof(rec), 1, 1, 100);
	cr_expect_eq(dt_ring_write(&t.r, rec), DT_RING_W_GONE);
	dt_ring_count_dropped(&t.r); /* the header page is still there: counts nothing */
	cr_assert_eq(truncate(t.path, 0), 0);
	cr_expect_eq(dt_ring_write(&t.r, rec), DT_RING_W_GONE);
	dt_ring_count_dropped(&t.r); /* nothing mapped at all: must not fault */
	tring_unmap(&t);
}

Test(ring, write_into_a_ring_truncated_under_its_mapping_is_refused_without_sigbus)
{
	expect_truncated_ring_refused();
}

/* What qemu-user does to madvise, on a kernel that tells the truth: the
 * check the self-test picks there must see the truncation by itself. */
Test(ring, write_into_a_truncated_ring_is_refused_where_madvise_lies)
{
	dt_ring_use_check(DT_RING_CHECK_FUTEX);
	expect_truncated_ring_refused();
}

Test(ring, madvise_that_populates_a_page_past_the_end_of_a_file_is_not_trusted)
{
	cr_expect_eq(dt_ring_check_for(0, 0), DT_RING_CHECK_FUTEX);
	cr_expect_eq(dt_ring_check_for(-1, EFAULT), DT_RING_CHECK_POPULATE);
	/* before Linux 5.14 no check at all, as it always was there */
	cr_expect_eq(dt_ring_check_for(-1, EINVAL), DT_RING_CHECK_NONE);
	/* the self-test could not ask (its mmap refused, a filter): the futex */
	cr_expect_eq(dt_ring_check_for(-1, ENOSYS), DT_RING_CHECK_FUTEX);
	cr_expect_eq(dt_ring_check_for(-1, EPERM), DT_RING_CHECK_FUTEX);
}

/* A program may unmap or protect the probe's mappings (or mark them
 * MADV_DONTFORK and fork): a store into the ring then raises SIGSEGV, so
 * the check that sees a truncation sees these too, the futex's as well. */
static void expect_taken_ring_refused(void)
{
	struct tring t;
	tring_create(&t, "taken.ring", 64 * 1024);
	static unsigned char rec[512];
	build_rec(rec, sizeof(rec), 1, 0, 100);
	cr_assert_eq(dt_ring_write(&t.r, rec), 0);
	cr_assert_eq(mprotect(t.map, t.len, PROT_READ), 0);
	cr_expect(!dt_ring_intact(&t.r), "a read-only ring reads as writable");
	cr_assert_eq(mprotect(t.map, t.len, PROT_NONE), 0);
	cr_expect(!dt_ring_intact(&t.r), "an inaccessible ring reads as writable");
	cr_expect(!dt_mapping_writable(t.map, 4096));
	tring_unmap(&t);
	cr_expect(!dt_ring_intact(&t.r), "an unmapped ring reads as writable");
	cr_expect_eq(dt_ring_write(&t.r, rec), DT_RING_W_GONE);
}

Test(ring, a_ring_unmapped_or_protected_by_the_program_is_not_written)
{
	enum dt_ring_check c = dt_ring_check_decided();
	if (c == DT_RING_CHECK_NONE)
		cr_skip_test("a kernel before 5.14: no check at all");
	expect_taken_ring_refused(); /* the futex's under qemu-user */
}

Test(ring, a_ring_unmapped_or_protected_is_not_written_where_madvise_lies)
{
	dt_ring_use_check(DT_RING_CHECK_FUTEX);
	expect_taken_ring_refused();
}

/* The probe's self-test (raw system calls) against the same question
 * asked here through libc: the same answer, on a kernel or under qemu. */
Test(ring, self_test_answers_as_madvise_does_on_this_machine)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = memfd_create("test-ring", MFD_CLOEXEC);
	cr_assert_geq(fd, 0, "memfd_create: %s", strerror(errno));
	cr_assert_eq(ftruncate(fd, page), 0);
	unsigned char *m = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq(m, MAP_FAILED);
	int rc = madvise(m + page, (size_t)page, 23 /* MADV_POPULATE_WRITE */);
	enum dt_ring_check want = dt_ring_check_for(rc, rc ? errno : 0);
	munmap(m, 2 * (size_t)page);
	close(fd);
	cr_expect_eq(dt_ring_check_decided(), want, "the probe decided %d, madvise says %d",
	             dt_ring_check_decided(), want);
}

/* Whether the page of the mapping at off is mapped in this process: its
 * page table entry, from /proc/self/pagemap (bit 63, present; readable
 * without privilege). Not mincore, which tells the page cache, where
 * ext4's read-ahead puts pages nobody mapped. */
static int page_mapped(const struct tring *t, size_t off)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t entry = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "/proc/self/pagemap: %s", strerror(errno));
	off_t at = (off_t)(((uintptr_t)t->map + off) / (uintptr_t)page * sizeof(entry));
	cr_assert_eq(pread(fd, &entry, sizeof(entry), at), (ssize_t)sizeof(entry));
	close(fd);
	return (int)(entry >> 63);
}

/* A page fault costs a VM far more than a system call: a record maps the
 * slots after it 64 KiB at a time (where madvise tells the truth), so the
 * records that follow find their pages there, and nothing much further. */
Test(ring, a_record_maps_the_next_64_kib_of_slots_and_not_the_whole_ring)
{
	struct tring t;
	tring_create(&t, "ahead.ring", 1024 * 1024);
	size_t slots = DT_RING_HEADER_SIZE, far = slots + 512 * 1024;
	cr_assert_not(page_mapped(&t, far), "a fresh ring's pages are mapped already");
	static unsigned char rec[512];
	build_rec(rec, sizeof(rec), 1, 0, 100);
	cr_assert_eq(dt_ring_write(&t.r, rec), 0);
	if (dt_ring_check_decided() != DT_RING_CHECK_POPULATE) {
		cr_log_info("madvise is not trusted here: nothing is mapped ahead");
		tring_unmap(&t);
		return;
	}
	for (size_t off = 0; off < 64 * 1024; off += 4096)
		cr_expect(page_mapped(&t, slots + off), "slot page at +%zu KiB not mapped",
		          off / 1024);
	cr_expect_not(page_mapped(&t, far), "the whole ring was mapped");
	tring_unmap(&t);
}

/* Created rings have every block: a full disk later cannot fault a store. */
Test(ring, created_ring_has_every_block_allocated)
{
	struct tring t;
	tring_create(&t, "full.ring", 256 * 1024);
	struct stat st;
	cr_assert_eq(stat(t.path, &st), 0);
	cr_expect_geq((uint64_t)st.st_blocks * 512, (uint64_t)st.st_size,
	              "%lld bytes allocated for a %lld-byte ring", (long long)st.st_blocks * 512,
	              (long long)st.st_size);
	tring_unmap(&t);
}

Test(ring, record_larger_than_a_quarter_of_the_ring_or_shorter_than_its_header_is_dropped)
{
	struct tring t;
	tring_create(&t, "quarter.ring", DT_RING_MIN_SIZE);
	cr_assert_eq(t.r.nslots, 128);
	static unsigned char rec[DT_REC_MAX];
	uint32_t quarter = 32 * DT_SLOT_DATA;
	build_rec(rec, sizeof(rec), 1, 0, quarter - REC_OVERHEAD);
	cr_expect_eq(dt_ring_write(&t.r, rec), 0, "a record of exactly nslots/4 slots was dropped");
	build_rec(rec, sizeof(rec), 1, 1, quarter + 1 - REC_OVERHEAD);
	cr_expect_eq(dt_ring_write(&t.r, rec), -1, "a record over nslots/4 slots was written");
	struct dt_rec_header *rh = (struct dt_rec_header *)rec;
	rh->len = sizeof(*rh) - 1;
	cr_expect_eq(dt_ring_write(&t.r, rec), -1, "a record shorter than its header was written");
	cr_expect_eq(hdr_load(&t.r.hdr->dropped), 2);
	cr_expect_eq(hdr_load(&t.r.hdr->head), 32);
	struct readout o;
	read_ring(t.path, &o);
	expect_clean(&o);
	cr_expect_eq(o.n, 1);
	readout_free(&o);
	tring_unmap(&t);
}

/* ==== many writers, no wrap ============================================ */

Test(ring, four_threads_writing_at_once_publish_every_record_exactly_once)
{
	struct tring t;
	/* 4 x 20000 records of one or two slots: fits in 131072 slots */
	tring_create(&t, "threads.ring", dt_ring_file_size(131072));
	struct wjob jobs[4];
	for (unsigned i = 0; i < 4; i++)
		jobs[i] = (struct wjob){&t.r, i, 20000, 300, 0, 0};
	run_threads(jobs, 4);
	for (unsigned i = 0; i < 4; i++)
		cr_assert_eq(jobs[i].failed, 0, "thread %u: %lu records dropped", i,
		             jobs[i].failed);
	struct readout o;
	read_ring(t.path, &o);
	cr_assert_leq(o.head, o.nslots, "the ring wrapped; the test needs a bigger one");
	expect_clean(&o);
	expect_complete(&o, 4, 20000);
	cr_expect_eq(o.st.skipped, 0);
	cr_expect_eq(o.lost, 0);
	cr_expect_eq(o.dropped, 0);
	readout_free(&o);
	tring_unmap(&t);
}

Test(ring, four_processes_writing_into_one_mapping_publish_every_record_exactly_once)
{
	struct tring t;
	tring_create(&t, "procs.ring", dt_ring_file_size(131072));
	pid_t kids[4];
	for (unsigned i = 0; i < 4; i++) {
		kids[i] = fork();
		cr_assert_geq(kids[i], 0);
		if (kids[i] == 0) {
			die_with_parent();
			struct wjob j = {&t.r, i, 20000, 300, 0, 0};
			writer_main(&j);
			_exit(j.ok == 20000 ? 0 : 1);
		}
	}
	for (unsigned i = 0; i < 4; i++) {
		int st = wait_status(kids[i]);
		cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %u: status 0x%x", i, st);
	}
	struct readout o;
	read_ring(t.path, &o);
	cr_assert_leq(o.head, o.nslots, "the ring wrapped; the test needs a bigger one");
	expect_clean(&o);
	expect_complete(&o, 4, 20000);
	cr_expect_eq(o.st.skipped, 0);
	cr_expect_eq(o.lost, 0);
	cr_expect_eq(o.dropped, 0);
	readout_free(&o);
	tring_unmap(&t);
}

/* ==== wrap-around ====================================================== */

/*
 * `lost` counts published records whose first slot a later writer took
 * (the old seq had DT_SEQ_START without DT_SEQ_BUSY). With one writer every
 * record is published, and in a quiescent ring a record is unreadable
 * exactly when its first position is below head - nslots, i.e. exactly when
 * its first slot was reserved again. So lost == written - readable, exactly.
 */
Test(ring, wraparound_keeps_the_newest_records_and_counts_the_overwritten_as_lost)
{
	struct tring t;
	tring_create(&t, "wrap.ring", DT_RING_MIN_SIZE);
	cr_assert_eq(t.r.nslots, 128);
	const unsigned n = 3000;
	uint64_t *pos = calloc(n, sizeof(*pos));
	cr_assert_not_null(pos);
	unsigned char rec[4096];
	uint64_t head = 0;
	for (unsigned s = 0; s < n; s++) {
		/* 1 to 4 slots, so the tail often falls inside a record */
		uint32_t len = build_rec(rec, sizeof(rec), 3, s, (s * 53) % 900);
		cr_assert_eq(dt_ring_write(&t.r, rec), 0);
		pos[s] = head;
		head += dt_rec_slots(len);
	}
	unsigned first = 0;
	while (pos[first] < head - 128)
		first++;

	struct readout o;
	read_ring(t.path, &o);
	expect_clean(&o);
	cr_expect_eq(o.head, head);
	cr_assert_eq(o.n, n - first,
	             "read %zu records; the %u whose start is in the last 128 "
	             "slots were expected",
	             o.n, n - first);
	for (size_t i = 0; i < o.n; i++) {
		cr_expect_eq(o.g[i].seq, first + i, "record %zu: seq %llu, expected %zu", i,
		             (unsigned long long)o.g[i].seq, first + i);
		cr_expect_eq(o.g[i].pos, pos[first + i]);
	}
	cr_expect_eq(o.g[o.n - 1].seq, n - 1, "the newest record is missing");
	cr_expect_eq(o.lost, (uint64_t)(n - o.n), "lost %llu, written %u, readable %zu",
	             (unsigned long long)o.lost, n, o.n);
	cr_expect_eq(o.dropped, 0);
	/* the positions before the first readable record are continuation
	 * slots of a record whose start was overwritten */
	cr_expect_eq(o.st.skipped, pos[first] - (head - 128));
	/* a reader starting at 0 (as `show -f` does on a fresh ring) is moved
	 * to the tail: the same records, nothing extra skipped */
	{
		struct dt_ringfile rf;
		char err[512];
		cr_assert_eq(dt_ringfile_open(t.path, &rf, err, sizeof(err)), 0, "%s", err);
		static unsigned char buf[DT_REC_MAX];
		struct dt_read_stats st = {0};
		uint64_t p = 0;
		uint32_t len;
		size_t k = 0;
		while (dt_ring_next(&rf.ring, &p, buf, &len, &st, 0) == DT_NEXT_RECORD) {
			const struct dt_rec_header *rh = (const struct dt_rec_header *)buf;
			cr_expect_eq(p - rh->nslots, pos[first + k], "record %zu from 0", k);
			k++;
		}
		cr_expect_eq(k, o.n);
		cr_expect_eq(st.skipped, o.st.skipped, "from 0: %llu skipped",
		             (unsigned long long)st.skipped);
		dt_ringfile_close(&rf);
	}
	readout_free(&o);
	free(pos);
	tring_unmap(&t);
}

/*
 * With several writers lapping a tiny ring, every record is published or
 * dropped (dt_ring_write says which, and `dropped` counts the latter), and a
 * published record is readable or counted lost, never both. Equality,
 * lost + readable == published, holds only if no writer was lapped between
 * reserving its slots and publishing them: such a writer overwrites a newer
 * record without counting it (see writer_lapped_before_claiming_... and
 * writer_lapped_while_copying_...). Preemption there is possible with more
 * threads than cores, so this test asserts the bound; the exact single-writer
 * case is asserted above. For the same reason `corrupt` is logged only.
 */
Test(ring, concurrent_wraparound_never_counts_a_record_both_lost_and_readable)
{
	struct tring t;
	tring_create(&t, "cwrap.ring", DT_RING_MIN_SIZE);
	struct wjob jobs[4];
	for (unsigned i = 0; i < 4; i++)
		jobs[i] = (struct wjob){&t.r, i, 20000, 700, 0, 0};
	run_threads(jobs, 4);
	unsigned long published = 0, failed = 0;
	for (unsigned i = 0; i < 4; i++) {
		published += jobs[i].ok;
		failed += jobs[i].failed;
	}
	struct readout o;
	read_ring(t.path, &o);
	cr_expect_eq(o.bad, 0, "%zu bad records returned; first: %s", o.bad, o.why);
	cr_expect_eq(o.dropped, failed, "dropped counter %llu, writers saw %lu failures",
	             (unsigned long long)o.dropped, failed);
	cr_expect_gt(o.n, 0);
	cr_expect_leq(o.lost + o.n, published, "lost %llu + readable %zu > published %lu",
	              (unsigned long long)o.lost, o.n, published);
	/* each writer's readable records are in its order, without duplicates */
	uint64_t next[4] = {0};
	for (size_t i = 0; i < o.n; i++) {
		cr_assert_lt(o.g[i].writer, 4);
		cr_expect_geq(o.g[i].seq, next[o.g[i].writer], "writer %llu out of order",
		              (unsigned long long)o.g[i].writer);
		next[o.g[i].writer] = o.g[i].seq + 1;
	}
	cr_log_info("concurrent wrap: published %lu dropped %lu lost %llu readable %zu torn %llu "
	            "corrupt %llu",
	            published, failed, (unsigned long long)o.lost, o.n,
	            (unsigned long long)o.st.torn, (unsigned long long)o.st.corrupt);
	readout_free(&o);
	tring_unmap(&t);
}

/* ==== writers that die or stall ======================================== */

Test(ring, writer_killed_mid_record_is_skipped_and_later_records_are_still_read)
{
	struct tring t;
	tring_create(&t, "kill.ring", 1024 * 1024);
	struct proc w = spawn_writer(t.path, 100, 1, 40);
	char line[128];
	read_line(w.out, line, sizeof(line));
	unsigned long long stall_pos;
	unsigned stall_n;
	cr_assert_eq(sscanf(line, "stalled %llu %u", &stall_pos, &stall_n), 2, "said '%s'", line);
	cr_assert_gt(stall_n, 1, "the stalled record should span slots");

	/* a follow-mode reader waits at the stalled record */
	{
		struct dt_ringfile rf;
		char err[512];
		cr_assert_eq(dt_ringfile_open(t.path, &rf, err, sizeof(err)), 0, "%s", err);
		static unsigned char buf[DT_REC_MAX];
		struct dt_read_stats st = {0};
		uint64_t pos = 0;
		uint32_t len;
		int got;
		while ((got = dt_ring_next(&rf.ring, &pos, buf, &len, &st, 1)) == DT_NEXT_RECORD)
			;
		cr_expect_eq(got, DT_NEXT_BUSY, "follow reader did not wait at the busy record");
		cr_expect_eq(pos, stall_pos);
		cr_expect_eq(st.records, 40);
		dt_ringfile_close(&rf);
	}

	cr_assert_eq(kill(w.pid, SIGKILL), 0);
	int st = wait_status(w.pid);
	close(w.out);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status 0x%x", st);

	cr_assert_eq(run_writer(t.path, 50, 2), 50);

	struct readout o;
	read_ring(t.path, &o);
	expect_clean(&o);
	cr_expect_eq(o.st.skipped, stall_n, "skipped %llu positions; the dead record had %u",
	             (unsigned long long)o.st.skipped, stall_n);
	cr_assert_eq(o.n, 90, "read %zu records", o.n);
	for (size_t i = 0; i < o.n; i++) {
		if (i < 40) {
			cr_expect(o.g[i].writer == 1 && o.g[i].seq == i, "record %zu", i);
			cr_expect_lt(o.g[i].pos, stall_pos);
		} else {
			cr_expect(o.g[i].writer == 2 && o.g[i].seq == i - 40, "record %zu", i);
			cr_expect_geq(o.g[i].pos, stall_pos + stall_n);
		}
	}
	cr_expect_eq(o.lost, 0);
	cr_expect_eq(o.dropped, 0);
	readout_free(&o);
	tring_unmap(&t);
}

/* A dead writer's record was never published, so overwriting it loses
 * nothing: lost still equals published - readable exactly. */
Test(ring, dead_writers_record_is_not_counted_as_lost_when_overwritten)
{
	struct tring t;
	tring_create(&t, "deadwrap.ring", DT_RING_MIN_SIZE);
	struct proc w = spawn_writer(t.path, 10, 1, 5);
	char line[128];
	read_line(w.out, line, sizeof(line));
	cr_assert_eq(strncmp(line, "stalled ", 8), 0, "said '%s'", line);
	kill(w.pid, SIGKILL);
	wait_status(w.pid);
	close(w.out);

	unsigned char rec[4096];
	const unsigned n = 600;
	for (unsigned s = 0; s < n; s++) {
		build_rec(rec, sizeof(rec), 2, s, (s * 37) % 300);
		cr_assert_eq(dt_ring_write(&t.r, rec), 0);
	}
	struct readout o;
	read_ring(t.path, &o);
	expect_clean(&o);
	cr_assert_gt(o.n, 0);
	cr_expect_eq(o.g[o.n - 1].seq, n - 1);
	cr_expect_eq(o.lost, 5 + n - o.n, "lost %llu; published %u, readable %zu",
	             (unsigned long long)o.lost, 5 + n, o.n);
	cr_expect_eq(o.dropped, 0);
	readout_free(&o);
	tring_unmap(&t);
}

Test(ring, writers_killed_at_random_moments_leave_only_valid_records)
{
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	cr_log_info("random kill seed %u", seed);
	enum { W = 4, COUNT = 10000, ROUNDS = 4 };
	uint64_t total_skipped = 0;
	for (int round = 0; round < ROUNDS; round++) {
		struct tring t;
		char name[32];
		snprintf(name, sizeof(name), "random%d.ring", round);
		/* W x COUNT records of at most two slots: no wrap */
		tring_create(&t, name, dt_ring_file_size(131072));
		struct proc w[W];
		for (unsigned i = 0; i < W; i++)
			w[i] = spawn_writer(t.path, COUNT, i, -1);
		int killed[W] = {0}, order[W] = {0, 1, 2, 3};
		for (int i = W - 1; i > 0; i--) {
			int k = rand_r(&seed) % (i + 1), tmp = order[i];
			order[i] = order[k];
			order[k] = tmp;
		}
		for (int i = 0; i < W; i++) {
			struct timespec d = {0, (long)(rand_r(&seed) % 3000) * 1000};
			nanosleep(&d, NULL);
			kill(w[order[i]].pid, SIGKILL);
		}
		for (int i = 0; i < W; i++) {
			int st = wait_status(w[i].pid);
			close(w[i].out);
			killed[i] = WIFSIGNALED(st);
			cr_assert(killed[i] || (WIFEXITED(st) && WEXITSTATUS(st) == 0),
			          "writer %d: status 0x%x (seed %u)", i, st, seed);
		}
		struct readout o;
		read_ring(t.path, &o);
		cr_assert_leq(o.head, o.nslots, "the ring wrapped");
		cr_expect_eq(o.bad, 0, "seed %u: %zu bad; first: %s", seed, o.bad, o.why);
		cr_expect_eq(o.st.corrupt, 0, "seed %u", seed);
		cr_expect_eq(o.st.torn, 0, "seed %u", seed);
		cr_expect_eq(o.lost, 0);
		/* each killed writer leaves at most one record of two slots */
		cr_expect_leq(o.st.skipped, 2 * W, "seed %u: %llu positions skipped", seed,
		              (unsigned long long)o.st.skipped);
		total_skipped += o.st.skipped;
		/* a writer's records read back are 0 .. m-1 in ring order: all
		 * it published, nothing after a gap; a writer that finished
		 * has all COUNT */
		uint64_t next[W] = {0};
		for (size_t i = 0; i < o.n; i++) {
			cr_assert_lt(o.g[i].writer, W);
			cr_expect_eq(o.g[i].seq, next[o.g[i].writer], "seed %u: writer %llu gap",
			             seed, (unsigned long long)o.g[i].writer);
			next[o.g[i].writer] = o.g[i].seq + 1;
		}
		for (int i = 0; i < W; i++)
			if (!killed[i])
				cr_expect_eq(next[i], COUNT, "finished writer %d: %llu records", i,
				             (unsigned long long)next[i]);
		readout_free(&o);
		tring_unmap(&t);
	}
	cr_log_info("random kill: %llu positions skipped over %d rounds",
	            (unsigned long long)total_skipped, (int)ROUNDS);
}

Test(ring, reader_counts_records_with_a_bad_checksum_or_header_as_corrupt_and_skips_them)
{
	struct tring t;
	tring_create(&t, "corrupt.ring", DT_RING_MIN_SIZE);
	unsigned char rec[4096];
	/* positions: 0 A, 1-2 B, 3 C, 4 D, 5 E, 6 F, 7 G */
	const uint32_t plens[] = {10, 300, 10, 10, 10, 10, 10};
	for (unsigned s = 0; s < 7; s++) {
		build_rec(rec, sizeof(rec), 1, s, plens[s]);
		cr_assert_eq(dt_ring_write(&t.r, rec), 0);
	}
	cr_assert_eq(hdr_load(&t.r.hdr->head), 8);
	dt_slot_data(&t.r, 2)[10] ^= 0x20; /* B: a payload byte in its continuation */
	struct dt_rec_header *d = (struct dt_rec_header *)dt_slot_data(&t.r, 4);
	d->nslots = 2; /* D: slot count disagrees with its length */
	struct dt_rec_header *f = (struct dt_rec_header *)dt_slot_data(&t.r, 6);
	f->len = DT_REC_MAX + 1; /* F: longer than any record */
	struct readout o;
	read_ring(t.path, &o);
	cr_expect_eq(o.bad, 0, "%s", o.why);
	cr_expect_eq(o.st.corrupt, 3, "corrupt %llu", (unsigned long long)o.st.corrupt);
	cr_expect_eq(o.st.torn, 0);
	cr_expect_eq(o.st.skipped, 1, "B's continuation slot");
	cr_assert_eq(o.n, 4);
	const unsigned want[] = {0, 2, 4, 6};
	for (unsigned i = 0; i < 4; i++)
		cr_expect_eq(o.g[i].seq, want[i], "record %u: seq %llu", i,
		             (unsigned long long)o.g[i].seq);
	readout_free(&o);
	tring_unmap(&t);
}

/*
 * ring_format.h, step 4: "A failed CAS means a writer a full lap ahead owns
 * the slot; the record is abandoned." A writer can also be lapped before it
 * claims its slots (preempted between the fetch_add of step 1 and the seq
 * stores of step 2). It must then abandon its record too, not overwrite the
 * newer writers' published records with an older one nobody can read.
 *
 * The stall is made exact: a child process's view of the slot pages is
 * read-only, so dt_ring_append faults on its first seq store, right after
 * reserving; the SIGSEGV handler waits until the parent has written a full
 * lap, then makes the pages writable and returns, and dt_ring_write goes on.
 */
static int stall_pipe[2], go_pipe[2];
static void *stale_pages;
static size_t stale_len;
static int stale_prot = PROT_READ | PROT_WRITE; /* restored by the handler */

static void on_stale_fault(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	char c = 's';
	if (write(stall_pipe[1], &c, 1) != 1)
		_exit(3);
	while (read(go_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	mprotect(stale_pages, stale_len, stale_prot);
}

Test(ring, writer_lapped_before_claiming_its_slots_abandons_its_record_and_keeps_newer_ones)
{
	struct tring t;
	tring_create(&t, "stale.ring", DT_RING_MIN_SIZE);
	unsigned char rec[4096];
	uint64_t head0 = 0;
	/* some history, so the stale writer does not start at 0 */
	for (unsigned s = 0; s < 10; s++) {
		uint32_t len = build_rec(rec, sizeof(rec), 1, s, 10);
		cr_assert_eq(dt_ring_write(&t.r, rec), 0);
		head0 += dt_rec_slots(len);
	}
	cr_assert_eq(pipe(stall_pipe), 0);
	cr_assert_eq(pipe(go_pipe), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		die_with_parent();
		stale_pages = (unsigned char *)t.map + DT_RING_HEADER_SIZE;
		stale_len = t.len - DT_RING_HEADER_SIZE;
		struct sigaction sa = {0};
		sa.sa_sigaction = on_stale_fault;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);
		if (mprotect(stale_pages, stale_len, PROT_READ) < 0)
			_exit(4);
		build_rec(rec, sizeof(rec), 9, 0, 10); /* one slot */
		/* append: dt_ring_write would see the read-only pages and
		 * not write at all */
		_exit(dt_ring_append(&t.r, rec) == 0 ? 0 : 1);
	}
	char c;
	struct pollfd pfd = {stall_pipe[0], POLLIN, 0};
	cr_assert_eq(poll(&pfd, 1, 20000), 1, "the stale writer never reached its slots");
	cr_assert_eq(read(stall_pipe[0], &c, 1), 1);
	uint64_t stale_pos = head0;
	cr_assert_eq(hdr_load(&t.r.hdr->head), stale_pos + 1, "the child did not reserve first");

	/* a full lap and a bit, in two-slot records: the stale writer's slot
	 * now holds the continuation of one of them */
	const unsigned n = 70;
	uint64_t *pos = calloc(n, sizeof(*pos));
	uint64_t head = stale_pos + 1;
	for (unsigned s = 0; s < n; s++) {
		uint32_t len = build_rec(rec, sizeof(rec), 2, s, 300);
		cr_assert_eq(dt_rec_slots(len), 2);
		cr_assert_eq(dt_ring_write(&t.r, rec), 0);
		pos[s] = head;
		head += 2;
	}
	cr_assert_gt(head, stale_pos + 1 + t.r.nslots, "not a full lap");
	cr_assert_eq(write(go_pipe[1], "g", 1), 1);
	int st = wait_status(pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) <= 1, "stale writer: status 0x%x", st);
	int stale_published = WEXITSTATUS(st) == 0;

	unsigned first = 0;
	while (pos[first] < head - t.r.nslots)
		first++;
	struct readout o;
	read_ring(t.path, &o);
	cr_expect_not(stale_published,
	              "dt_ring_write returned 0 for a record reserved a full lap ago: it took "
	              "slots newer records had published, and its own record is below the tail");
	cr_expect_eq(o.bad, 0, "%s", o.why);
	cr_expect_eq(o.st.corrupt, 0);
	cr_expect_eq(o.st.torn, 0, "%llu torn records in a quiescent ring",
	             (unsigned long long)o.st.torn);
	cr_expect_eq(o.n, n - first, "readable %zu, expected the newest %u", o.n, n - first);
	size_t mine = 0;
	for (size_t i = 0; i < o.n; i++)
		mine += o.g[i].writer == 2 && o.g[i].seq >= first;
	cr_expect_eq(mine, n - first, "%zu of the newest %u records survived", mine, n - first);
	cr_expect_eq(o.lost + o.n, 10 + n + (unsigned)stale_published,
	             "lost %llu + readable %zu != published %u", (unsigned long long)o.lost, o.n,
	             10 + n + stale_published);
	readout_free(&o);
	free(pos);
	tring_unmap(&t);
}

/*
 * The same lap, one step later: the writer has marked its slots BUSY (step
 * 2) and stops before copying its payload (step 3). A writer a full lap
 * ahead then takes the slots over and publishes; when the stale writer
 * resumes, its CAS in step 4 fails and it abandons its record, as the spec
 * says. But by then it has copied its payload over the newer, published
 * record. The newer record must survive (or at worst be counted lost): it
 * must not turn into a corrupt record, nor into the abandoned one.
 *
 * The stop is made exact with ptrace: the child stops itself just before
 * dt_ring_write, and the parent single-steps it until the seq of its last
 * slot reads BUSY, i.e. right after step 2's exchange.
 */
struct lap_result {
	int stale_rc;        /* what dt_ring_write returned in the stale writer */
	uint64_t stale_pos;  /* its first position */
	unsigned newer;      /* records this process wrote during the lap */
	uint64_t *newer_pos; /* their positions */
	uint64_t head;
	long steps;
};

static void lap_while_copying(struct tring *t, uint32_t stale_plen, uint32_t newer_plen,
                              struct lap_result *res)
{
	unsigned char rec[4096];
	for (unsigned s = 0; s < 5; s++) {
		build_rec(rec, sizeof(rec), 1, s, 10);
		cr_assert_eq(dt_ring_write(&t->r, rec), 0);
	}
	uint64_t s0 = hdr_load(&t->r.hdr->head);
	uint32_t stale_n = dt_rec_slots(build_rec(rec, sizeof(rec), 9, 0, stale_plen));
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		die_with_parent();
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(5);
		raise(SIGSTOP);
		_exit(dt_ring_write(&t->r, rec) == 0 ? 0 : 1);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 5)
		cr_skip_test("ptrace is not permitted here");
	cr_assert(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP, "child did not stop: 0x%x", st);
	_Atomic uint64_t *last = dt_slot_seq(&t->r, s0 + stale_n - 1);
	uint64_t busy = (s0 + stale_n) | DT_SEQ_BUSY;
	long steps = 0;
	while (atomic_load(last) != busy) {
		cr_assert_lt(steps, 2000000, "the writer never marked its slot busy");
		cr_assert_eq(ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL), 0, "%s", strerror(errno));
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		cr_assert(WIFSTOPPED(st), "the writer ended while single-stepped: 0x%x", st);
		steps++;
	}
	cr_assert_eq(hdr_load(&t->r.hdr->head), s0 + stale_n);
	/* the stale writer's slots are BUSY and still hold the old bytes */

	/* a full lap past its slots, in records of newer_plen */
	res->newer = 0;
	res->newer_pos = calloc(2 * t->r.nslots, sizeof(uint64_t));
	uint64_t head = s0 + stale_n;
	while (head < s0 + stale_n + t->r.nslots + 4) {
		uint32_t len = build_rec(rec, sizeof(rec), 2, res->newer, newer_plen);
		cr_assert_eq(dt_ring_write(&t->r, rec), 0);
		res->newer_pos[res->newer++] = head;
		head += dt_rec_slots(len);
	}
	cr_assert_eq(ptrace(PTRACE_DETACH, pid, NULL, NULL), 0, "%s", strerror(errno));
	st = wait_status(pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) <= 1, "stale writer: status 0x%x", st);
	res->stale_rc = WEXITSTATUS(st) == 0 ? 0 : -1;
	res->stale_pos = s0;
	res->head = head;
	res->steps = steps;
}

/* A two-slot stale payload lands on two newer one-slot records. */
Test(ring, writer_lapped_while_copying_does_not_corrupt_the_newer_records)
{
	struct tring t;
	tring_create(&t, "copylap.ring", DT_RING_MIN_SIZE);
	struct lap_result res;
	lap_while_copying(&t, 300, 10, &res);
	cr_log_info("single-stepped %ld instructions", res.steps);
	cr_expect_eq(res.stale_rc, -1, "a writer lapped before publishing reported success");
	struct readout o;
	read_ring(t.path, &o);
	unsigned first = 0;
	while (res.newer_pos[first] < res.head - t.r.nslots)
		first++;
	cr_expect_eq(o.bad, 0, "%s", o.why);
	cr_expect_eq(o.st.corrupt, 0,
	             "%llu corrupt records: the abandoned payload was copied over newer ones",
	             (unsigned long long)o.st.corrupt);
	cr_expect_eq(o.st.torn, 0, "%llu torn records in a quiescent ring",
	             (unsigned long long)o.st.torn);
	size_t newest = 0;
	for (size_t i = 0; i < o.n; i++)
		newest += o.g[i].writer == 2 && o.g[i].seq >= first;
	uint64_t published = 5 + res.newer;
	cr_expect(newest == res.newer - first || o.lost + o.n == published,
	          "%zu of the newest %u records readable, and the missing ones are not counted "
	          "lost (lost %llu + readable %zu, published %llu)",
	          newest, res.newer - first, (unsigned long long)o.lost, o.n,
	          (unsigned long long)published);
	readout_free(&o);
	free(res.newer_pos);
	tring_unmap(&t);
}

/* Same size on both sides: the stale payload exactly replaces a newer
 * record, checksum and all. */
Test(ring, record_abandoned_by_a_lapped_writer_is_never_returned_in_place_of_a_newer_one)
{
	struct tring t;
	tring_create(&t, "copylap1.ring", DT_RING_MIN_SIZE);
	struct lap_result res;
	lap_while_copying(&t, 10, 10, &res);
	cr_expect_eq(res.stale_rc, -1, "a writer lapped before publishing reported success");
	struct readout o;
	read_ring(t.path, &o);
	expect_clean(&o);
	size_t ghosts = 0;
	for (size_t i = 0; i < o.n; i++)
		ghosts += o.g[i].writer == 9;
	cr_expect_eq(ghosts, 0,
	             "the reader returned a record whose writer abandoned it (at %llu, "
	             "a position a newer record had published)",
	             (unsigned long long)res.stale_pos + t.r.nslots);
	unsigned first = 0;
	while (res.newer_pos[first] < res.head - t.r.nslots)
		first++;
	cr_expect_eq(o.n, res.newer - first, "readable %zu, expected the newest %u", o.n,
	             res.newer - first);
	readout_free(&o);
	free(res.newer_pos);
	tring_unmap(&t);
}

/*
 * The reader's side of the seqlock, made deterministic the same way: a
 * reader in a child process maps the ring with the page holding slot 16
 * unreadable, so dt_ring_next stops (in the SIGSEGV handler) after copying
 * slot 15, the first slot of a two-slot record at position 15, and before
 * touching slot 16, its continuation. Meanwhile this process laps the ring
 * with `more` one-slot records. The reader must then discard the record as
 * torn and go on with the oldest record still held.
 */
struct stalled_read {
	int got;
	uint64_t pos;
	uint64_t writer, seq;
	struct dt_read_stats st;
};

static void read_stalled_mid_record(unsigned more, struct stalled_read *res)
{
	struct tring t;
	tring_create(&t, "readstall.ring", DT_RING_MIN_SIZE);
	unsigned char rec[4096];
	for (unsigned s = 0; s < 15; s++) {
		build_rec(rec, sizeof(rec), 4, s, 10);
		cr_assert_eq(dt_ring_write(&t.r, rec), 0);
	}
	build_rec(rec, sizeof(rec), 5, 0, 300);
	cr_assert_eq(dt_ring_write(&t.r, rec), 0);
	cr_assert_eq(hdr_load(&t.r.hdr->head), 17, "the two-slot record is not at 15-16");
	/* slot 16 starts the third page of the file */
	cr_assert_eq((DT_RING_HEADER_SIZE + 16 * DT_SLOT_SIZE) % 4096, 0);

	int res_pipe[2];
	cr_assert_eq(pipe(stall_pipe), 0);
	cr_assert_eq(pipe(go_pipe), 0);
	cr_assert_eq(pipe(res_pipe), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		die_with_parent();
		struct dt_ringfile rf;
		char err[512];
		struct stalled_read out = {0};
		unsigned char *buf = malloc(DT_REC_MAX);
		if (!buf || dt_ringfile_open(t.path, &rf, err, sizeof(err)) != 0)
			_exit(4);
		stale_pages = (unsigned char *)rf.map + DT_RING_HEADER_SIZE + 16 * DT_SLOT_SIZE;
		stale_len = 4096;
		stale_prot = PROT_READ;
		struct sigaction sa = {0};
		sa.sa_sigaction = on_stale_fault;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);
		if (mprotect(stale_pages, stale_len, PROT_NONE) < 0)
			_exit(5);
		uint64_t pos = 15;
		uint32_t len;
		out.got = dt_ring_next(&rf.ring, &pos, buf, &len, &out.st, 0);
		out.pos = pos;
		struct dt_record d;
		if (out.got == DT_NEXT_RECORD && dt_record_decode(buf, len, pos, &d) == 0) {
			out.writer = (uint64_t)d.pid;
			out.seq = (uint64_t)d.tid;
			dt_record_free(&d);
		}
		_exit(write(res_pipe[1], &out, sizeof(out)) == sizeof(out) ? 0 : 6);
	}
	close(res_pipe[1]);
	struct pollfd pfd = {stall_pipe[0], POLLIN, 0};
	cr_assert_eq(poll(&pfd, 1, 20000), 1, "the reader never reached slot 16");
	char c;
	cr_assert_eq(read(stall_pipe[0], &c, 1), 1);
	for (unsigned s = 0; s < more; s++) {
		build_rec(rec, sizeof(rec), 6, s, 10);
		cr_assert_eq(dt_ring_write(&t.r, rec), 0);
	}
	cr_assert_eq(write(go_pipe[1], "g", 1), 1);
	memset(res, 0, sizeof(*res));
	cr_assert_eq(read(res_pipe[0], res, sizeof(*res)), (ssize_t)sizeof(*res),
	             "the reader died");
	int st = wait_status(pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "reader: status 0x%x", st);
	close(res_pipe[0]);
	tring_unmap(&t);
}

Test(ring, reader_discards_a_record_whose_first_slot_is_overwritten_while_it_copies)
{
	struct stalled_read r;
	/* positions 17 .. 143: slot 15 now holds position 143, slot 16 is
	 * still the record's intact continuation */
	read_stalled_mid_record(127, &r);
	cr_assert_eq(r.got, DT_NEXT_RECORD);
	cr_expect_neq(r.writer, 5, "the overwritten record was returned");
	cr_expect(r.writer == 6 && r.seq == 0,
	          "returned writer %llu seq %llu, expected the oldest "
	          "record still held (writer 6 seq 0)",
	          (unsigned long long)r.writer, (unsigned long long)r.seq);
	cr_expect_eq(r.st.torn, 1, "torn %llu", (unsigned long long)r.st.torn);
	cr_expect_eq(r.st.corrupt, 0);
	cr_expect_eq(r.st.records, 1);
}

Test(ring, reader_discards_a_record_whose_slots_are_all_reused_while_it_copies)
{
	struct stalled_read r;
	/* positions 17 .. 144: both slots of the record reused; the
	 * continuation no longer reads 17 */
	read_stalled_mid_record(128, &r);
	cr_assert_eq(r.got, DT_NEXT_RECORD);
	cr_expect_neq(r.writer, 5, "the overwritten record was returned");
	cr_expect(r.writer == 6 && r.seq == 0, "returned writer %llu seq %llu",
	          (unsigned long long)r.writer, (unsigned long long)r.seq);
	cr_expect_eq(r.st.torn, 1, "torn %llu", (unsigned long long)r.st.torn);
	cr_expect_eq(r.st.corrupt, 0);
}

/* ==== live reader ====================================================== */

static atomic_int live_finished;

static void *live_writer_main(void *arg)
{
	writer_main(arg);
	atomic_fetch_add(&live_finished, 1);
	return NULL;
}

/*
 * A reader racing writers on a tiny ring that is lapped constantly: it must
 * never return a record that is not exactly what some writer wrote. Torn
 * copies are skipped and counted. Rounds repeat (bounded) until at least one
 * torn copy was seen, so the race was really exercised. `corrupt` is logged,
 * not asserted: a writer lapped between claiming its slots and publishing
 * genuinely corrupts a newer record (see writer_lapped_while_copying_...),
 * and the reader is right to call that corrupt.
 */
Test(ring, reader_on_a_live_ring_never_returns_a_torn_or_corrupt_record)
{
	enum { W = 2, COUNT = 150000, ROUNDS = 4 };
	struct readout o;
	memset(&o, 0, sizeof(o));
	uint64_t next[ROUNDS * W] = {0};
	size_t order = 0;
	int round;
	unsigned char *buf = malloc(DT_REC_MAX);
	cr_assert_not_null(buf);
	for (round = 0; round < ROUNDS && (round == 0 || o.st.torn == 0); round++) {
		struct tring t;
		char name[32];
		snprintf(name, sizeof(name), "live%d.ring", round);
		/* records of 1 to 4 slots */
		tring_create(&t, name, DT_RING_MIN_SIZE);
		struct wjob jobs[W];
		pthread_t th[W];
		atomic_store(&live_finished, 0);
		for (unsigned i = 0; i < W; i++) {
			jobs[i] = (struct wjob){&t.r, round * W + i, COUNT, 900, 0, 0};
			cr_assert_eq(pthread_create(&th[i], NULL, live_writer_main, &jobs[i]), 0);
		}
		/* the reader maps the file read-only, separately, like `show -f` */
		struct dt_ringfile rf;
		char err[512];
		cr_assert_eq(dt_ringfile_open(t.path, &rf, err, sizeof(err)), 0, "%s", err);
		size_t from = o.n;
		uint64_t pos = 0;
		uint32_t len;
		int joined = 0;
		for (;;) {
			int got = dt_ring_next(&rf.ring, &pos, buf, &len, &o.st, 0);
			if (got == DT_NEXT_RECORD) {
				readout_add(&o, rf.ring.version, buf, len, pos);
				continue;
			}
			if (joined)
				break;
			/* caught up: once every writer is done, one last pass */
			if (atomic_load(&live_finished) == W) {
				for (unsigned i = 0; i < W; i++)
					pthread_join(th[i], NULL);
				joined = 1;
				continue;
			}
			sched_yield();
		}
		/* the reader only moves forward, and each writer's records are at
		 * increasing positions: per writer, increasing sequence numbers */
		for (size_t i = from; i < o.n; i++) {
			const struct got *g = &o.g[i];
			cr_assert_lt(g->writer, (uint64_t)(round + 1) * W, "a record nobody wrote");
			order += g->seq < next[g->writer];
			next[g->writer] = g->seq + 1;
		}
		dt_ringfile_close(&rf);
		tring_unmap(&t);
	}
	cr_log_info("live reader, %d rounds: %zu records, %llu torn, %llu corrupt, %llu skipped",
	            round, o.n, (unsigned long long)o.st.torn, (unsigned long long)o.st.corrupt,
	            (unsigned long long)o.st.skipped);
	cr_expect_eq(o.bad, 0, "%zu torn or wrong records returned; first: %s", o.bad, o.why);
	cr_expect_eq(order, 0, "%zu records read twice or out of their writer's order", order);
	cr_expect_gt(o.n, 0);
	free(buf);
	readout_free(&o);
}

/* ==== attach, create, parse ============================================ */

Test(ring, attach_refuses_foreign_newer_short_and_inconsistent_headers)
{
	static unsigned char img[DT_RING_HEADER_SIZE + 16 * DT_SLOT_SIZE]
	    __attribute__((aligned(8)));
	struct dt_ring r;
	cr_assert_eq(dt_ring_init(img, sizeof(img), 0, 1, 2), 0);
	cr_assert_eq(dt_ring_attach(&r, img, sizeof(img)), 0);
	cr_expect_eq(r.nslots, 16);
	cr_expect_eq(dt_ring_attach(&r, img, sizeof(img) - 1), DT_RING_E_SHORT);
	cr_expect_eq(dt_ring_attach(&r, img, 100), DT_RING_E_SHORT);
	struct dt_ring_header *h = (struct dt_ring_header *)img;
	h->nslots = 24;
	cr_expect_eq(dt_ring_attach(&r, img, sizeof(img)), DT_RING_E_HEADER,
	             "nslots not a power of 2");
	h->nslots = 16;
	h->slot_size = 512;
	cr_expect_eq(dt_ring_attach(&r, img, sizeof(img)), DT_RING_E_HEADER);
	h->slot_size = DT_SLOT_SIZE;
	h->version = DT_RING_VERSION + 1;
	cr_expect_eq(dt_ring_attach(&r, img, sizeof(img)), DT_RING_E_VERSION);
	h->version = 0;
	cr_expect_eq(dt_ring_attach(&r, img, sizeof(img)), DT_RING_E_VERSION);
	h->version = DT_RING_VERSION;
	h->magic ^= 1;
	cr_expect_eq(dt_ring_attach(&r, img, sizeof(img)), DT_RING_E_MAGIC);
	cr_expect_eq(dt_ring_init(img, sizeof(img) - DT_SLOT_SIZE, 0, 1, 2), -1,
	             "15 slots is not a power of two");
}

Test(ring, ringfile_create_makes_a_0600_ring_of_a_power_of_two_slots)
{
	mode_t old = umask(0);
	char path[512], err[512];
	snprintf(path, sizeof(path), "%s/mode.ring", dtt_tmpdir());
	uint64_t size = 3 * 1024 * 1024 + 17;
	int fd = dt_ringfile_create(path, size, DT_RING_F_ALL, err, sizeof(err));
	umask(old);
	cr_assert_geq(fd, 0, "%s", err);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_expect(S_ISREG(st.st_mode));
	cr_expect_eq(st.st_mode & 07777, 0600, "mode %04o", st.st_mode & 07777);
	cr_expect_eq(st.st_uid, geteuid());
	cr_expect_eq(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	cr_expect_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0, "the fd is meant to be inherited");
	/* 2 MiB of slots + header is the largest whole ring under 3 MiB */
	cr_expect_eq((uint64_t)st.st_size, dt_ring_file_size(8192));
	struct dt_ringfile rf;
	cr_assert_eq(dt_ringfile_open(path, &rf, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(rf.ring.nslots, 8192);
	cr_expect_eq(rf.ring.hdr->flags, DT_RING_F_ALL | DT_RING_F_LOCKED,
	             "flags %#x: the one asked for, and the launcher's lock", rf.ring.hdr->flags);
	cr_expect_eq(rf.ring.hdr->creator_pid, (uint64_t)getpid());
	cr_expect_neq(rf.ring.hdr->created_ns, 0);
	cr_expect_eq(hdr_load(&rf.ring.hdr->head), 0);
	dt_ringfile_close(&rf);
	close(fd);
}

Test(ring, ringfile_create_replaces_a_symlink_instead_of_following_it)
{
	char victim[512], link[512], err[512];
	snprintf(victim, sizeof(victim), "%s/victim", dtt_tmpdir());
	snprintf(link, sizeof(link), "%s/link.ring", dtt_tmpdir());
	FILE *f = fopen(victim, "w");
	cr_assert_not_null(f);
	fputs("precious\n", f);
	fclose(f);
	cr_assert_eq(symlink(victim, link), 0);
	int fd = dt_ringfile_create(link, DT_RING_MIN_SIZE, 0, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	close(fd);
	struct stat st;
	cr_assert_eq(lstat(link, &st), 0);
	cr_expect(S_ISREG(st.st_mode), "the path is still not a regular file");
	cr_expect_eq((uint64_t)st.st_size, dt_ring_file_size(128));
	char buf[64] = "";
	f = fopen(victim, "r");
	cr_assert_not_null(f);
	cr_expect_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	cr_expect_str_eq(buf, "precious\n", "the symlink's target was written through");
	cr_assert_eq(stat(victim, &st), 0);
	cr_expect_eq(st.st_size, 9);
}

Test(ring, ringfile_create_replaces_an_existing_file_without_writing_into_it)
{
	char path[512], keep[512], err[512];
	snprintf(path, sizeof(path), "%s/old.ring", dtt_tmpdir());
	snprintf(keep, sizeof(keep), "%s/old.hardlink", dtt_tmpdir());
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("old contents\n", f);
	fclose(f);
	cr_assert_eq(link(path, keep), 0);
	int fd = dt_ringfile_create(path, DT_RING_MIN_SIZE, 0, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	close(fd);
	struct stat a, b;
	cr_assert_eq(stat(path, &a), 0);
	cr_assert_eq(stat(keep, &b), 0);
	cr_expect_neq(a.st_ino, b.st_ino, "the old inode was reused");
	cr_expect_eq(b.st_size, 13, "the old file was truncated or written");
	struct dt_ringfile rf;
	cr_expect_eq(dt_ringfile_open(path, &rf, err, sizeof(err)), 0, "%s", err);
	dt_ringfile_close(&rf);
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

Test(ring, ringfile_create_refuses_sizes_outside_the_allowed_range)
{
	char dir[512], path[600], err[512];
	snprintf(dir, sizeof(dir), "%s/sizes", dtt_tmpdir());
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/r.ring", dir);
	const uint64_t bad[] = {0, 4096, DT_RING_MIN_SIZE - 1, DT_RING_MAX_SIZE + 1, UINT64_MAX};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		cr_expect_eq(dt_ringfile_create(path, bad[i], 0, err, sizeof(err)), -1,
		             "size %llu accepted", (unsigned long long)bad[i]);
		cr_expect_neq(err[0], 0, "no reason given for size %llu",
		              (unsigned long long)bad[i]);
		cr_expect_eq(count_entries(dir), 0, "size %llu left a file behind",
		             (unsigned long long)bad[i]);
	}
	int fd = dt_ringfile_create(path, DT_RING_MIN_SIZE, 0, err, sizeof(err));
	cr_expect_geq(fd, 0, "minimum size refused: %s", err);
	close(fd);
	/* sparse: only the header page is touched */
	fd = dt_ringfile_create(path, DT_RING_MAX_SIZE, 0, err, sizeof(err));
	cr_expect_geq(fd, 0, "maximum size refused: %s", err);
	struct stat st;
	cr_assert_eq(fstat(fd, &st), 0);
	cr_expect_leq((uint64_t)st.st_size, DT_RING_MAX_SIZE + DT_RING_HEADER_SIZE);
	close(fd);
	cr_expect_eq(count_entries(dir), 1, "a temporary file was left behind");
}

Test(ring, ringfile_create_leaves_no_temporary_file_when_it_fails)
{
	char dir[512], err[512];
	snprintf(dir, sizeof(dir), "%s/fail", dtt_tmpdir());
	cr_assert_eq(mkdir(dir, 0700), 0);
	char target[600];
	snprintf(target, sizeof(target), "%s/isadir", dir);
	cr_assert_eq(mkdir(target, 0700), 0);
	/* and a non-empty one, which rename(2) cannot replace */
	char inner[700];
	snprintf(inner, sizeof(inner), "%s/x", target);
	cr_assert_eq(mkdir(inner, 0700), 0);
	err[0] = 0;
	cr_expect_eq(dt_ringfile_create(target, DT_RING_MIN_SIZE, 0, err, sizeof(err)), -1);
	cr_expect_neq(err[0], 0);
	cr_expect_eq(count_entries(dir), 1, "a temporary ring was left beside the target");
	char missing[600];
	snprintf(missing, sizeof(missing), "%s/no/such/dir/r.ring", dir);
	cr_expect_eq(dt_ringfile_create(missing, DT_RING_MIN_SIZE, 0, err, sizeof(err)), -1);
}

Test(ring, parse_size_accepts_plain_numbers_and_binary_suffixes)
{
	const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
	    {"8M", 8ULL << 20},
	    {"65536", 65536},
	    {"64K", 65536},
	    {"64k", 65536},
	    {"1G", 1ULL << 30},
	    {"2g", 2ULL << 30},
	    {"8m", 8ULL << 20},
	    {"8MiB", 8ULL << 20},
	    {"8MB", 8ULL << 20},
	    {"16KiB", 16384},
	    {"0", 0},
	    {"18446744073709551615", UINT64_MAX},
	    {"17179869183G", 17179869183ULL << 30},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 12345;
		cr_expect_eq(dt_parse_size(ok[i].s, &v), 0, "'%s' refused", ok[i].s);
		cr_expect_eq(v, ok[i].v, "'%s' -> %llu", ok[i].s, (unsigned long long)v);
	}
}

Test(ring, parse_size_refuses_garbage_negatives_and_overflow)
{
	const char *bad[] = {"",
	                     "M",
	                     "-1",
	                     "-8M",
	                     "8X",
	                     "8Mx",
	                     "8 M",
	                     "8M ",
	                     "8iB",
	                     "0x10",
	                     "1.5M",
	                     "8KK",
	                     "8MiBs",
	                     "18446744073709551616",
	                     "17179869184G",
	                     "99999999999999999999999K"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 12345;
		cr_expect_eq(dt_parse_size(bad[i], &v), -1, "'%s' accepted as %llu", bad[i],
		             (unsigned long long)v);
		cr_expect_eq(v, 12345, "'%s' refused but *out changed", bad[i]);
	}
}

Test(ring, parse_size_refuses_a_negative_number_behind_leading_blanks)
{
	/* strtoull skips blanks and negates "-1" to UINT64_MAX; the check for
	 * '-' must not be fooled by the blank */
	const char *bad[] = {" -1", "\t-65536", " -1K"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 12345;
		cr_expect_eq(dt_parse_size(bad[i], &v), -1, "'%s' accepted as %llu", bad[i],
		             (unsigned long long)v);
	}
}

/* ==== decoding ========================================================= */

struct raw {
	unsigned char b[512];
	uint32_t len;
};

static void raw_init(struct raw *r, uint16_t type)
{
	memset(r, 0, sizeof(*r));
	struct dt_rec_header *h = (struct dt_rec_header *)r->b;
	h->type = type;
	r->len = sizeof(*h);
}

static void raw_field(struct raw *r, uint16_t tag, uint16_t declared, const void *v, uint16_t n)
{
	memcpy(r->b + r->len, &tag, 2);
	memcpy(r->b + r->len + 2, &declared, 2);
	memcpy(r->b + r->len + 4, v, n);
	r->len += 4u + n;
	((struct dt_rec_header *)r->b)->len = r->len;
}

Test(ring, decode_refuses_a_field_whose_length_runs_past_the_end)
{
	struct raw r;
	struct dt_record d;
	raw_init(&r, DT_REC_DENIAL);
	raw_field(&r, DT_T_OP, 6, "openat", 6);
	cr_assert_eq(dt_record_decode(r.b, r.len, 0, &d), 0);
	cr_expect_str_eq(d.op, "openat");
	dt_record_free(&d);

	raw_init(&r, DT_REC_DENIAL);
	raw_field(&r, DT_T_OP, 6, "openat", 6);
	raw_field(&r, DT_T_PATH, 200, "/etc/passwd", 11); /* declares 200, has 11 */
	cr_expect_eq(dt_record_decode(r.b, r.len, 0, &d), -1);
	dt_record_free(&d);

	raw_init(&r, DT_REC_DENIAL);
	raw_field(&r, DT_T_PATH, 12, "/etc/passwd", 11); /* one byte short */
	cr_expect_eq(dt_record_decode(r.b, r.len, 0, &d), -1);
	dt_record_free(&d);

	/* a field header cut in half */
	raw_init(&r, DT_REC_DENIAL);
	raw_field(&r, DT_T_OP, 6, "openat", 6);
	r.b[r.len] = DT_T_PATH;
	r.len += 2;
	cr_expect_eq(dt_record_decode(r.b, r.len, 0, &d), -1);
	dt_record_free(&d);

	/* shorter than the record header */
	cr_expect_eq(dt_record_decode(r.b, sizeof(struct dt_rec_header) - 1, 0, &d), -1);
	dt_record_free(&d);
}

Test(ring, decode_ignores_unknown_tags)
{
	struct raw r;
	raw_init(&r, DT_REC_DENIAL);
	uint64_t pid = 77;
	raw_field(&r, 999, 5, "hello", 5);
	raw_field(&r, DT_T_PID, 8, &pid, 8);
	raw_field(&r, 0, 0, "", 0);
	raw_field(&r, 0xffff, 40, "0123456789012345678901234567890123456789", 40);
	raw_field(&r, DT_T_OP, 5, "mkdir", 5);
	raw_field(&r, 31, 3, "abc", 3); /* a gap in the tag list */
	struct dt_record d;
	cr_assert_eq(dt_record_decode(r.b, r.len, 5, &d), 0);
	cr_expect_eq(d.pos, 5);
	cr_expect_eq(d.type, DT_REC_DENIAL);
	cr_expect_eq(d.pid, 77);
	cr_expect_str_eq(d.op, "mkdir");
	cr_expect_null(d.p[0].path);
	dt_record_free(&d);
}

Test(ring, decode_keeps_zero_length_strings_as_empty_strings)
{
	struct raw r;
	raw_init(&r, DT_REC_DENIAL);
	raw_field(&r, DT_T_OP, 0, "", 0);
	raw_field(&r, DT_T_PATH, 0, "", 0);
	raw_field(&r, DT_T_COMM, 0, "", 0);
	raw_field(&r, DT_T_ENV, 0, "", 0);
	raw_field(&r, DT_T_ARGV, 0, "", 0);
	struct dt_record d;
	cr_assert_eq(dt_record_decode(r.b, r.len, 0, &d), 0);
	cr_assert_not_null(d.op);
	cr_expect_str_eq(d.op, "");
	cr_assert_not_null(d.p[0].path);
	cr_expect_str_eq(d.p[0].path, "");
	cr_assert_not_null(d.comm);
	cr_expect_str_eq(d.comm, "");
	cr_assert_eq(d.nenv, 1);
	cr_expect_str_eq(d.env[0], "");
	cr_assert_eq(d.argc, 1);
	cr_expect_str_eq(d.argv[0], "");
	cr_expect_null(d.p[0].abspath, "a field that is absent is NULL, unlike an empty one");
	dt_record_free(&d);
	/* a record with no fields at all */
	raw_init(&r, DT_REC_LAUNCH);
	((struct dt_rec_header *)r.b)->len = r.len;
	cr_assert_eq(dt_record_decode(r.b, r.len, 0, &d), 0);
	cr_expect_eq(d.type, DT_REC_LAUNCH);
	cr_expect_null(d.op);
	dt_record_free(&d);
}

/* A Python frame is struct dt_pyframe, the file, the function: a frame
 * whose file_len runs past its field (a hostile writer) is left out, and
 * so is one too short to hold the struct; good ones keep their order. */
static void raw_pyframe(struct raw *r, uint32_t line, uint32_t file_len, const char *names)
{
	unsigned char v[128];
	struct dt_pyframe f = {line, file_len};
	size_t n = strlen(names);
	memcpy(v, &f, sizeof(f));
	memcpy(v + sizeof(f), names, n);
	raw_field(r, DT_T_PYFRAME, (uint16_t)(sizeof(f) + n), v, (uint16_t)(sizeof(f) + n));
}

Test(ring, decode_reads_python_frames_and_leaves_out_malformed_ones)
{
	struct raw r;
	raw_init(&r, DT_REC_DENIAL);
	raw_pyframe(&r, 3, 9, "worker.pysave_task");
	raw_pyframe(&r, 7, 200, "a.pyf");         /* file_len past the field */
	raw_field(&r, DT_T_PYFRAME, 3, "abc", 3); /* shorter than the struct */
	raw_pyframe(&r, 0, 4, "b.py<module>");
	uint64_t one = 1;
	raw_field(&r, DT_T_PYTRUNC, 8, &one, 8);
	struct dt_record d;
	cr_assert_eq(dt_record_decode(r.b, r.len, 0, &d), 0);
	cr_assert_eq(d.npyframes, 2);
	cr_expect_str_eq(d.pyframes[0].file, "worker.py");
	cr_expect_str_eq(d.pyframes[0].func, "save_task");
	cr_expect_eq(d.pyframes[0].line, 3);
	cr_expect_str_eq(d.pyframes[1].file, "b.py");
	cr_expect_str_eq(d.pyframes[1].func, "<module>");
	cr_expect_eq(d.pyframes[1].line, 0);
	cr_expect(d.py_trunc);
	dt_record_free(&d);
}
