// build-flags: -D_GNU_SOURCE -Ipreload -Itracer/read -Itracer/render -Itracer/util preload/ring.c tracer/read/ringfile.c tracer/read/safeopen.c tracer/read/records.c
/*
 * bench-ring: the ring file's writer and reader at full speed, for the
 * benchmark (scripts/bench.py). It uses preload/ring.c (dt_ring_write, the
 * probe's own writer) and tracer/read/ringfile.c + tracer/read/records.c (the CLI's
 * reader) directly.
 *
 *   bench-ring write RING SLOTS WRITERS TOTAL RECSIZE
 *       Creates RING with SLOTS slots (a power of two), fills one lap of it
 *       so that its pages exist (the page cache of a ring in use), then forks
 *       WRITERS processes that each map the ring themselves, as traced
 *       processes do, wait for a common start and write TOTAL/WRITERS
 *       records of exactly RECSIZE bytes. Prints one JSON object: records
 *       published and dropped, seconds from the start to the last writer's
 *       end, records per second, and the writers' CPU time (on a busy machine
 *       records per CPU-second says what the writer costs, records per second
 *       what the machine delivered).
 *
 *   bench-ring fill RING SLOTS [DISTINCT]
 *       Creates RING with SLOTS slots and writes realistic records (denials
 *       of ~550 bytes with a three-frame stack into libc and this program,
 *       and a ~1 KiB process record every 100 denials) until the next one
 *       would overwrite the first: a full ring, nothing lost. The denials
 *       cycle through DISTINCT paths (0, the default: every one different).
 *       Prints a JSON object with the record count.
 *
 *   bench-ring read RING PASSES
 *       Reads RING PASSES times with dt_ring_next + dt_record_decode (what
 *       `denytrace show` does before formatting) and prints records per
 *       second of the median pass.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "records.h"
#include "ring.h"
#include "ringfile.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "bench-ring: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Creates path as a zero-filled ring of nslots slots; returns it mapped. */
static void create_ring(const char *path, uint64_t nslots, struct dt_ring *r)
{
	size_t len = dt_ring_file_size(nslots);
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		die("create");
	if (ftruncate(fd, (off_t)len) < 0)
		die("ftruncate");
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	close(fd);
	if (dt_ring_init(map, len, 0, now_ns(CLOCK_REALTIME), (uint64_t)getpid()) != 0 ||
	    dt_ring_attach(r, map, len) != 0) {
		fprintf(stderr, "bench-ring: %llu slots is not a valid ring\n",
		        (unsigned long long)nslots);
		exit(1);
	}
}

/* Maps an existing ring for writing, as the probe does from an fd. */
static void map_ring(const char *path, struct dt_ring *r)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open");
	struct stat st;
	if (fstat(fd, &st) < 0)
		die("fstat");
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	close(fd);
	if (dt_ring_attach(r, map, (size_t)st.st_size) != 0) {
		fprintf(stderr, "bench-ring: %s is not a ring\n", path);
		exit(1);
	}
}

/* ---- realistic records ------------------------------------------------- */

struct frame_src {
	const char *module;
	uint64_t offset;
};
static struct frame_src frames[3];
static char exe_path[PATH_MAX];

/* Three return addresses as the probe would record them: in libc's open
 * and fopen, and in this program's main. */
static void init_frames(void *main_addr)
{
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	exe_path[n > 0 ? n : 0] = 0;
	void *addrs[3] = {(void *)&open, (void *)&fopen, main_addr};
	for (int i = 0; i < 3; i++) {
		Dl_info info;
		frames[i].module = exe_path;
		frames[i].offset = 0x1000;
		if (dladdr(addrs[i], &info) && info.dli_fbase) {
			frames[i].offset =
			    (uint64_t)((char *)addrs[i] - (char *)info.dli_fbase) + 0x1b;
			if (i < 2 && info.dli_fname && info.dli_fname[0] == '/')
				frames[i].module = info.dli_fname;
		}
	}
}

static void put_common(struct dt_buf *b, uint64_t pid, const char *comm)
{
	dt_put_u64(b, DT_T_TIME_REAL, now_ns(CLOCK_REALTIME));
	dt_put_u64(b, DT_T_TIME_MONO, now_ns(CLOCK_MONOTONIC));
	dt_put_u64(b, DT_T_PID, pid);
	dt_put_u64(b, DT_T_TID, pid);
	dt_put_u64(b, DT_T_PPID, 1000);
	dt_put_u64(b, DT_T_UID, 1000);
	dt_put_u64(b, DT_T_GID, 1000);
	dt_put_str(b, DT_T_COMM, comm);
}

/* Path number id, exactly len bytes long (len >= 48): a directory per
 * project, the id in hex, letters to pad. */
static void make_path(char *path, size_t len, uint64_t id)
{
	int n = snprintf(path, len + 1, "/home/agent/work/proj-%llu/.hermes/kanban/%08llx-",
	                 (unsigned long long)(id % 97), (unsigned long long)id);
	for (size_t i = n > 0 ? (size_t)n : 0; i < len; i++)
		path[i] = (char)('a' + (id + i) % 26);
	path[len] = 0;
}

static uint32_t put_denial(unsigned char *buf, uint32_t cap, uint64_t pid, uint64_t seq,
                           uint64_t id, size_t plen0, size_t plen1, int with_frames)
{
	char path[2048];
	struct dt_rec_header *rh = (struct dt_rec_header *)buf;
	memset(rh, 0, sizeof(*rh));
	struct dt_buf b = {buf, sizeof(*rh), cap, 0};
	rh->type = DT_REC_DENIAL;
	put_common(&b, pid, "python3");
	dt_put_str(&b, DT_T_OP, "open64");
	dt_put_u64(&b, DT_T_ERRNO, id % 3 ? EROFS : EACCES);
	dt_put_u64(&b, DT_T_ACCESS, 1);
	dt_put_u64(&b, DT_T_FLAGS, O_RDWR | O_CREAT | O_CLOEXEC);
	dt_put_u64(&b, DT_T_MODE, 0644);
	make_path(path, plen0, id);
	dt_put_str(&b, DT_T_PATH, path);
	make_path(path, plen1, id);
	dt_put_str(&b, DT_T_ABSPATH, path);
	dt_put_str(&b, DT_T_REALPATH, path);
	struct dt_stat_facts sf = {DT_SF_PARENT | DT_SF_MOUNT, 0, 0, 0, 040755, 1000, 1000, 0, 1};
	dt_put(&b, DT_T_STAT, &sf, sizeof(sf));
	dt_put_str(&b, DT_T_SQLITE, id % 5 ? "db" : "journal");
	if (with_frames) {
		for (int i = 0; i < 3; i++) {
			struct dt_frame f = {0x7f0000000000ULL + frames[i].offset,
			                     frames[i].offset + (seq % 4) * 2, i < 2 ? 0 : 1, 0};
			dt_put(&b, DT_T_FRAME, &f, sizeof(f));
		}
		dt_put_str(&b, DT_T_MODULE, frames[0].module);
		dt_put_str(&b, DT_T_MODULE, frames[2].module);
	}
	rh->len = b.len;
	return b.overflow ? 0 : b.len;
}

/* A refused SQLite write-open, as the probe records it: path, abspath,
 * realpath, stat facts, SQLite role, and with_frames a three-frame stack.
 * id numbers the path (and decides errno and SQLite role, so that records
 * with the same id fall in one report group). want > 0: the paths are sized
 * so that the record is exactly want bytes (0 when that is impossible);
 * want == 0: paths of 56 bytes. */
static uint32_t build_denial(unsigned char *buf, uint32_t cap, uint64_t pid, uint64_t seq,
                             uint64_t id, uint32_t want, int with_frames)
{
	uint32_t base = put_denial(buf, cap, pid, seq, id, 56, 56, with_frames);
	if (!want || !base)
		return base;
	long extra = (long)want - (long)base; /* spread over the three paths */
	long p1 = 56 + extra / 3, p0 = 56 + extra - 2 * (extra / 3);
	if (p0 < 48 || p1 < 48 || p0 > 2000 || p1 > 2000)
		return 0;
	return put_denial(buf, cap, pid, seq, id, (size_t)p0, (size_t)p1, with_frames);
}

static uint32_t build_process(unsigned char *buf, uint32_t cap, uint64_t pid)
{
	struct dt_rec_header *rh = (struct dt_rec_header *)buf;
	memset(rh, 0, sizeof(*rh));
	struct dt_buf b = {buf, sizeof(*rh), cap, 0};
	rh->type = DT_REC_PROCESS;
	put_common(&b, pid, "python3");
	dt_put_str(&b, DT_T_VERSION, "0.1.0");
	dt_put_u64(&b, DT_T_EUID_REAL, 1000);
	dt_put_str(&b, DT_T_EXE, "/usr/bin/python3.11");
	dt_put_str(&b, DT_T_CWD, "/home/agent/work/proj");
	static const char argv[] = "python3\0worker.py\0--board\0/home/agent/.hermes/kanban.db";
	dt_put(&b, DT_T_ARGV, argv, sizeof(argv) - 1);
	dt_put_str(&b, DT_T_ENV, "HOME=/home/agent");
	dt_put_str(&b, DT_T_ENV, "PWD=/home/agent/work/proj");
	dt_put_str(&b, DT_T_ENV, "HERMES_KANBAN_DB=/home/agent/.hermes/kanban.db");
	dt_put_str(&b, DT_T_ENV, "LD_PRELOAD=/usr/local/lib/denytrace/libdenytrace.so");
	dt_put_u64(&b, DT_T_SECCOMP, 2);
	dt_put_u64(&b, DT_T_SECCOMP_FILTERS, 1);
	dt_put_u64(&b, DT_T_NO_NEW_PRIVS, 1);
	dt_put_u64(&b, DT_T_MNT_NS, 4026532201ULL);
	dt_put_u64(&b, DT_T_USER_NS, 4026532200ULL);
	static const char *mounts[] = {"/",
	                               "/usr",
	                               "/etc",
	                               "/home/agent/work/proj",
	                               "/tmp",
	                               "/dev",
	                               "/proc",
	                               "/sys",
	                               "/dev/shm",
	                               "/home/agent/.cache",
	                               "/run",
	                               "/var",
	                               "/opt",
	                               "/home/agent/.config",
	                               "/home/agent/.local",
	                               "/dev/pts",
	                               "/dev/mqueue",
	                               "/srv"};
	for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		unsigned char blob[256];
		struct dt_mount_fact mf = {(i == 3 || i == 4) ? DT_MF_RW : 0, 0};
		memcpy(blob, &mf, 8);
		size_t ml = strlen(mounts[i]);
		memcpy(blob + 8, mounts[i], ml + 1);
		memcpy(blob + 9 + ml, "ext4", 4);
		dt_put(&b, DT_T_MOUNT, blob, (uint32_t)(13 + ml));
	}
	rh->len = b.len;
	return b.len;
}

/* ---- modes ------------------------------------------------------------- */

struct shared {
	_Atomic int ready;
	_Atomic int go;
	struct {
		double start, end, cpu;
		uint64_t ok, dropped;
	} w[64];
};

static int mode_write(const char *path, uint64_t nslots, int writers, uint64_t total,
                      uint32_t recsize)
{
	if (writers < 1 || writers > 64)
		return 2;
	struct dt_ring ring;
	create_ring(path, nslots, &ring);
	static unsigned char rec[DT_REC_MAX];
	uint32_t len = build_denial(rec, sizeof(rec), 1, 0, 0, recsize, 0);
	if (len != recsize) {
		fprintf(stderr, "bench-ring: cannot build a %u-byte record (got %u)\n", recsize,
		        len);
		return 1;
	}
	/* one lap: every page of the file exists, as in a ring in use */
	for (uint64_t pos = 0; pos < nslots; pos += dt_rec_slots(len))
		dt_ring_write(&ring, rec);

	struct shared *sh =
	    mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap shared");
	uint64_t each = total / (uint64_t)writers;
	for (int w = 0; w < writers; w++) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			struct dt_ring r;
			map_ring(path, &r);
			unsigned char *mine = malloc(DT_REC_MAX);
			uint32_t l = build_denial(mine, DT_REC_MAX, (uint64_t)getpid(), (uint64_t)w,
			                          (uint64_t)w, recsize, 0);
			(void)l;
			atomic_fetch_add(&sh->ready, 1);
			while (!atomic_load(&sh->go))
				sched_yield();
			uint64_t ok = 0, dropped = 0;
			struct timespec c0, c1;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
			double t0 = now_s();
			for (uint64_t i = 0; i < each; i++) {
				if (dt_ring_write(&r, mine) == 0)
					ok++;
				else
					dropped++;
			}
			double t1 = now_s();
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
			sh->w[w].cpu = (double)(c1.tv_sec - c0.tv_sec) +
			               (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
			sh->w[w].start = t0;
			sh->w[w].end = t1;
			sh->w[w].ok = ok;
			sh->w[w].dropped = dropped;
			_exit(0);
		}
	}
	while (atomic_load(&sh->ready) < writers)
		sched_yield();
	atomic_store(&sh->go, 1);
	int failed = 0;
	for (int w = 0; w < writers; w++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed = 1;
	}
	if (failed) {
		fprintf(stderr, "bench-ring: a writer failed\n");
		return 1;
	}
	double start = sh->w[0].start, end = sh->w[0].end;
	uint64_t ok = 0, dropped = 0;
	double cpu = 0;
	for (int w = 0; w < writers; w++) {
		cpu += sh->w[w].cpu;
		if (sh->w[w].start < start)
			start = sh->w[w].start;
		if (sh->w[w].end > end)
			end = sh->w[w].end;
		ok += sh->w[w].ok;
		dropped += sh->w[w].dropped;
	}
	double secs = end - start;
	uint64_t lost = atomic_load((_Atomic uint64_t *)&ring.hdr->lost);
	printf("{\"writers\": %d, \"record_bytes\": %u, \"record_slots\": %u, \"published\": %llu, "
	       "\"dropped\": %llu, \"lost_to_wrap\": %llu, \"seconds\": %.6f, "
	       "\"records_per_s\": %.0f, \"cpu_seconds\": %.6f, \"records_per_cpu_s\": %.0f}\n",
	       writers, len, dt_rec_slots(len), (unsigned long long)ok, (unsigned long long)dropped,
	       (unsigned long long)lost, secs, secs > 0 ? (double)ok / secs : 0.0, cpu,
	       cpu > 0 ? (double)ok / cpu : 0.0);
	return 0;
}

static int mode_fill(const char *path, uint64_t nslots, uint64_t distinct, void *main_addr)
{
	struct dt_ring ring;
	create_ring(path, nslots, &ring);
	init_frames(main_addr);
	static unsigned char rec[DT_REC_MAX];
	uint64_t n = 0, denials = 0, processes = 0, bytes = 0, pos = 0;
	uint64_t pid = 4242;
	for (;;) {
		uint32_t len;
		int proc = n % 101 == 0;
		if (proc) {
			pid++;
			len = build_process(rec, sizeof(rec), pid);
		} else {
			len = build_denial(rec, sizeof(rec), pid, n,
			                   distinct ? denials % distinct : denials, 0, 1);
		}
		if (pos + dt_rec_slots(len) > nslots)
			break;
		if (dt_ring_write(&ring, rec) != 0) {
			fprintf(stderr, "bench-ring: write failed while filling\n");
			return 1;
		}
		pos += dt_rec_slots(len);
		bytes += len;
		n++;
		if (proc)
			processes++;
		else
			denials++;
	}
	printf(
	    "{\"records\": %llu, \"denials\": %llu, \"processes\": %llu, \"distinct_paths\": %llu, "
	    "\"slots_used\": %llu, \"nslots\": %llu, \"mean_record_bytes\": %.1f, "
	    "\"file_bytes\": %zu}\n",
	    (unsigned long long)n, (unsigned long long)denials, (unsigned long long)processes,
	    (unsigned long long)(distinct && distinct < denials ? distinct : denials),
	    (unsigned long long)pos, (unsigned long long)nslots,
	    n ? (double)bytes / (double)n : 0.0, dt_ring_file_size(nslots));
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int mode_read(const char *path, int passes)
{
	if (passes < 1 || passes > 1000)
		return 2;
	struct dt_ringfile rf;
	char err[512];
	if (dt_ringfile_open(path, &rf, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench-ring: %s\n", err);
		return 1;
	}
	unsigned char *buf = malloc(DT_REC_MAX);
	double *rate = malloc(sizeof(double) * (size_t)passes);
	uint64_t records = 0;
	for (int p = 0; p < passes; p++) {
		struct dt_read_stats st = {0};
		uint64_t pos = dt_ring_tail(&rf.ring);
		uint32_t len;
		uint64_t n = 0;
		double t0 = now_s();
		while (dt_ring_next(&rf.ring, &pos, buf, &len, &st, 0) == DT_NEXT_RECORD) {
			struct dt_record r;
			if (dt_record_decode(buf, len, pos, &r) == 0) {
				n++;
				dt_record_free(&r);
			}
		}
		double t1 = now_s();
		rate[p] = (double)n / (t1 - t0);
		records = n;
		if (st.corrupt || st.torn) {
			fprintf(stderr, "bench-ring: %llu corrupt, %llu torn records\n",
			        (unsigned long long)st.corrupt, (unsigned long long)st.torn);
			return 1;
		}
	}
	qsort(rate, (size_t)passes, sizeof(double), cmp_double);
	printf("{\"records\": %llu, \"passes\": %d, \"records_per_s\": %.0f, "
	       "\"best_records_per_s\": %.0f}\n",
	       (unsigned long long)records, passes, rate[passes / 2], rate[passes - 1]);
	free(rate);
	free(buf);
	dt_ringfile_close(&rf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "write"))
		return mode_write(argv[2], strtoull(argv[3], NULL, 10), atoi(argv[4]),
		                  strtoull(argv[5], NULL, 10), (uint32_t)atoi(argv[6]));
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "fill"))
		return mode_fill(argv[2], strtoull(argv[3], NULL, 10),
		                 argc == 5 ? strtoull(argv[4], NULL, 10) : 0, (void *)&main);
	if (argc == 4 && !strcmp(argv[1], "read"))
		return mode_read(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: bench-ring write RING SLOTS WRITERS TOTAL RECSIZE\n"
	                "       bench-ring fill RING SLOTS [DISTINCT]\n"
	                "       bench-ring read RING PASSES\n");
	return 2;
}
