/* SPDX-License-Identifier: MIT */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify_cache.h"
#include "cli.h"
#include "exitcodes.h"
#include "names.h"
#include "report_int.h"

/* Adds the records of one ring to r; buf holds DT_REC_MAX bytes. */
static void report_add_ring(struct dt_report *r, const struct dt_ring *ring, unsigned char *buf,
                            const char *name, size_t index)
{
	int truncated = r->stats.truncated;
	r->stats.truncated = 0;
	uint64_t pos = dt_ring_tail(ring);
	uint32_t len;
	while (dt_ring_next(ring, &pos, buf, &len, &r->stats, 0) == DT_NEXT_RECORD) {
		if (r->n == r->cap) {
			r->cap = r->cap ? r->cap * 2 : 256;
			r->recs = realloc(r->recs, r->cap * sizeof(*r->recs));
		}
		if (dt_record_decode(buf, len, pos, &r->recs[r->n]) == 0)
			r->recs[r->n++].ring = index;
		else
			r->stats.corrupt++;
	}
	uint64_t lost, dropped, unseen;
	if (dt_ring_counters(ring, &lost, &dropped, &unseen) < 0)
		r->stats.truncated = 1;
	r->lost += lost;
	r->dropped += dropped;
	r->unseen += unseen;
	if (r->stats.truncated)
		dt_fail(0,
		        "%s shrank while it was read (truncated by whoever can write it); "
		        "the records read before that are used",
		        name);
	r->stats.truncated |= truncated;
}

int dt_report_load(struct dt_report *r, const char *const *rings, size_t nrings, char *err,
                   size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->rings = rings;
	r->nrings = nrings;
	unsigned char *buf = malloc(DT_REC_MAX);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return DT_EXIT_INTERNAL;
	}
	for (size_t k = 0; k < nrings; k++) {
		struct dt_ringfile rf;
		int rc = dt_ringfile_open(rings[k], &rf, err, errlen);
		if (rc) {
			free(buf);
			return rc;
		}
		report_add_ring(r, &rf.ring, buf, rings[k], k);
		dt_ringfile_close(&rf);
	}
	free(buf);
	return 0;
}

int dt_report_load_mapped(struct dt_report *r, const struct dt_ring *ring, const char *const *name,
                          char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->rings = name;
	r->nrings = 1;
	unsigned char *buf = malloc(DT_REC_MAX);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return DT_EXIT_INTERNAL;
	}
	report_add_ring(r, ring, buf, name[0], 0);
	free(buf);
	return 0;
}

void dt_report_unreadable_line(FILE *f, const struct dt_report *r, const char *before,
                               const char *after)
{
	const struct dt_read_stats *st = &r->stats;
	if (!st->corrupt && !st->skipped && !st->torn && !st->truncated)
		return;
	fprintf(f,
	        "%sunreadable: %llu corrupt record%s (not written by the probe), %llu slot%s "
	        "skipped (a writer died mid-record), %llu torn (overwritten while read)%s%s",
	        before, (unsigned long long)st->corrupt, st->corrupt == 1 ? "" : "s",
	        (unsigned long long)st->skipped, st->skipped == 1 ? "" : "s",
	        (unsigned long long)st->torn,
	        st->truncated ? "; the ring shrank while it was read" : "", after);
}

static int dt_rec_cmp(const void *a, const void *b)
{
	const struct dt_record *x = a, *y = b;
	if (x->time_real != y->time_real)
		return x->time_real < y->time_real ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

const struct dt_record *dt_report_proc(const struct dt_report *r, const struct dt_record *of,
                                       long pid)
{
	const struct dt_record *best = NULL;
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i]->pid == pid && r->procs[i]->ring == of->ring)
			best = r->procs[i];
	return best;
}

const char *dt_report_host(const struct dt_report *r, const struct dt_record *rec)
{
	if (!r->multihost)
		return NULL;
	const struct dt_record *p = dt_report_proc_for(r, rec);
	return p && p->hostname ? p->hostname : "?";
}

/* Whether the process records name more than one host (hostname and boot
 * id): then a report says which host each process ran on. */
static int dt_report_multihost(const struct dt_report *r)
{
	for (size_t i = 1; i < r->nprocs; i++) {
		const struct dt_record *a = r->procs[0], *b = r->procs[i];
		if (!dt_streq(a->hostname, b->hostname) || !dt_streq(a->boot_id, b->boot_id))
			return 1;
	}
	return 0;
}

/* The process record in force when rec was written: the latest image of
 * that pid that started before it. */
const struct dt_record *dt_report_proc_for(const struct dt_report *r, const struct dt_record *rec)
{
	const struct dt_record *best = NULL;
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i]->pid == rec->pid && r->procs[i]->ring == rec->ring &&
		    r->procs[i]->time_real <= rec->time_real)
			best = r->procs[i];
	return best ? best : dt_report_proc(r, rec, rec->pid);
}

int dt_same_injected(const struct dt_record *probe_rec, const struct dt_record *sup_rec)
{
	if (probe_rec->type != DT_REC_DENIAL || probe_rec->supervisor ||
	    sup_rec->type != DT_REC_DENIAL || !sup_rec->supervisor || !sup_rec->injected ||
	    probe_rec->err != sup_rec->err)
		return 0;
	/* in a pid namespace (bwrap --unshare-pid) the probe sees another pid */
	if (probe_rec->ring != sup_rec->ring ||
	    (probe_rec->pid != sup_rec->pid &&
	     !(sup_rec->nspid && probe_rec->pid == sup_rec->nspid)))
		return 0;
	uint64_t a = sup_rec->time_real, b = probe_rec->time_real;
	if (b + 1000000ULL < a || b > a + 1000000000ULL) /* 1 ms of clock slack before */
		return 0;
	for (int k = 0; k < 2; k++) {
		const char *s = sup_rec->p[k].abspath;
		if (s &&
		    (dt_streq(s, probe_rec->p[0].abspath) ||
		     dt_streq(s, probe_rec->p[0].realpath) ||
		     dt_streq(s, probe_rec->p[1].abspath) || dt_streq(s, probe_rec->p[1].realpath)))
			return 1;
	}
	return 0;
}

const char *dt_report_path(const struct dt_record *d)
{
	return d->p[0].realpath  ? d->p[0].realpath
	       : d->p[0].abspath ? d->p[0].abspath
	       : d->p[0].path    ? d->p[0].path
	                         : "";
}

/* A small hash index over record positions: bucket heads and chains, built
 * once per report, so that the lookups below are not a scan of every record
 * per refusal (make bench found report quadratic in the ring size). Chains
 * may hold other keys that share a bucket: callers compare the real key. */
struct dt_hidx {
	size_t nb;
	size_t *bucket; /* 1 + position, 0 for none */
	size_t *next;   /* per position: 1 + next position in the chain */
};

static uint64_t dt_hash_bytes(const char *s, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t dt_hash_str(const char *s)
{
	return dt_hash_bytes(s ? s : "", s ? strlen(s) : 0, 1469598103934665603ULL);
}

static void dt_hidx_init(struct dt_hidx *x, size_t n)
{
	x->nb = 2 * n + 1;
	x->bucket = calloc(x->nb, sizeof(*x->bucket));
	x->next = calloc(n + 1, sizeof(*x->next));
}

static void dt_hidx_add(struct dt_hidx *x, uint64_t h, size_t i)
{
	if (!x->bucket || !x->next)
		return;
	x->next[i] = x->bucket[h % x->nb];
	x->bucket[h % x->nb] = i + 1;
}

static size_t dt_hidx_first(const struct dt_hidx *x, uint64_t h)
{
	return x->bucket ? x->bucket[h % x->nb] : 0;
}

static void dt_hidx_free(struct dt_hidx *x)
{
	free(x->bucket);
	free(x->next);
	x->bucket = x->next = NULL;
}

/* Built by dt_report_build for the helpers below. */
static struct dt_hidx dt_reopens; /* reopen records, by path as passed and realpath */
static struct dt_hidx dt_writes;  /* --all write records, by group path */

/* A -journal, -wal or -shm SQLite had to create and could not: the error
 * it returns (os_unix.c, unixOpen and unixOpenSharedMemory). A new journal
 * or WAL refused with EACCES is SQLITE_READONLY_DIRECTORY; any other
 * refusal, and any of -shm (it retries read-only, and there is no file),
 * is SQLITE_CANTOPEN. In WAL mode this error is what the program sees even
 * after a read-only reopen of the database: the reopened connection still
 * needs -wal and -shm to read (and a fallback to DELETE journal mode cannot
 * switch a read-only connection out of WAL). */
static void dt_group_next_side_open(struct dt_report_group *g, const char *role, int err)
{
	g->next_is_error = 1;
	if (strcmp(role, "shm") && err == EACCES)
		g->next = !strcmp(role, "wal")
		              ? "SQLite could not create the WAL (SQLITE_READONLY_DIRECTORY): the "
		                "statement fails with \"attempt to write a readonly database\""
		              : "SQLite could not create its journal (SQLITE_READONLY_DIRECTORY): "
		                "the write fails with \"attempt to write a readonly database\"";
	else
		g->next = !strcmp(role, "wal")
		              ? "SQLite could not create the WAL (SQLITE_CANTOPEN): the statement "
		                "fails with \"unable to open database file\""
		          : !strcmp(role, "shm")
		              ? "SQLite could not create -shm (SQLITE_CANTOPEN): the statement "
		                "fails with \"unable to open database file\""
		              : "SQLite could not create its journal (SQLITE_CANTOPEN): the write "
		                "fails with \"unable to open database file\"";
}

/* The read-only reopen by pid of the file named path or realpath at or
 * after since (monotonic ns), or NULL. */
static const struct dt_record *dt_reopen_of(const struct dt_report *r, const struct dt_record *d,
                                            const char *path, const char *realpath, uint64_t since)
{
	uint64_t keys[2] = {dt_hash_str(path), dt_hash_str(realpath)};
	for (int k = 0; k < 2; k++)
		for (size_t j = dt_hidx_first(&dt_reopens, keys[k]); j;
		     j = dt_reopens.next[j - 1]) {
			size_t i = j - 1 >= r->n ? j - 1 - r->n : j - 1; /* see the index's build */
			const struct dt_record *x = &r->recs[i];
			/* a pid is a process only within its ring (another
			 * host's rings reuse pids) */
			if (x->type == DT_REC_REOPEN && x->pid == d->pid && x->ring == d->ring &&
			    x->time_mono >= since &&
			    ((path && dt_streq(x->p[0].path, path)) ||
			     (realpath && dt_streq(x->p[0].realpath, realpath))))
				return x;
		}
	return NULL;
}

static void dt_group_next(struct dt_report *r, struct dt_report_group *g)
{
	const struct dt_record *d = g->rep;
	const char *op = d->op ? d->op : "";
	int opens = strstr(op, "open") || !strncmp(op, "creat", 5);
	const char *role = d->sqlite ? d->sqlite : "";
	int side = !strcmp(role, "journal") || !strcmp(role, "wal") || !strcmp(role, "shm");
	/* most of its refusals found no file (SQLite had to create it): what
	 * the worker printed most often. Checked first: a file that was not
	 * there was not reopened, a later read-only open of it is another
	 * call's. */
	int missing = g->missing * 2 >= g->count;
	if (side && opens && missing) {
		dt_group_next_side_open(g, role, d->err);
		return;
	}
	/* only a refused open has a read-only reopen as its sequel (an
	 * fchown or a chmod of the same file has none) */
	if (opens && dt_reopen_of(r, d, d->p[0].path, d->p[0].realpath, d->time_mono)) {
		g->next = d->sqlite && !strcmp(d->sqlite, "db")
		              ? "SQLite reopened the database read-only: later writes fail with "
		                "\"attempt to write a readonly database\""
		              : "the program opened the same path read-only instead: later writes "
		                "through it will fail";
		return;
	}
	if (!strcmp(role, "journal") && opens)
		g->next = "SQLite cannot start a transaction without its journal: the write fails";
	else if ((!strcmp(role, "wal") || !strcmp(role, "shm")) && opens)
		g->next =
		    "SQLite cannot use the database in WAL mode without writing -wal and -shm: "
		    "its reads and writes fail";
	/* closing the last connection deletes them; a failure there is benign */
	else if ((!strcmp(role, "wal") || !strcmp(role, "shm")) &&
	         (strstr(op, "unlink") || strstr(op, "remove")))
		g->next = "SQLite could not delete it when the last connection closed: it stays "
		          "beside the database, and writers that open the database meanwhile find "
		          "it and succeed";
}

/* Two calls of the same kind: both opens, both renames... ("openat" and
 * "open64" are the same kind; "chmod" and "fchmod" too). */
static int dt_same_kind(const char *a, const char *b)
{
	static const char *const kinds[] = {"open",   "creat", "rename", "link",     "unlink",
	                                    "remove", "rmdir", "mkdir",  "mknod",    "truncate",
	                                    "chmod",  "chown", "utime",  "futimens", "symlink"};
	if (!a || !b)
		return 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strstr(a, kinds[i]) && strstr(b, kinds[i]))
			return 1;
	/* fopen and open are both opens */
	return strstr(a, "open") && strstr(b, "open");
}

/* The same path was written successfully too (recorded by default when
 * the facts were news, every time with --all): the failure is
 * intermittent, and the fact that separated the two is the clue. */
static void dt_group_intermittent(struct dt_report *r, struct dt_report_group *g, size_t gi)
{
	const struct dt_record *d = g->rep;
	if (g->v.cause == DT_CAUSE_LOCK_CONTENTION || dt_op_is_lock(d->op) || !d->writes)
		return;
	size_t nok = 0;
	for (size_t j = dt_hidx_first(&dt_writes, dt_hash_str(g->path)); j;
	     j = dt_writes.next[j - 1]) {
		const struct dt_record *w = &r->recs[j - 1];
		nok += w->type == DT_REC_WRITE && dt_streq(dt_report_path(w), g->path) &&
		       dt_same_kind(w->op, d->op);
	}
	if (!nok)
		return;
	const struct dt_record **ok = malloc(nok * sizeof(*ok));
	const struct dt_record **ref = malloc((g->count + 1) * sizeof(*ref));
	size_t n = 0, nref = 0;
	for (size_t j = dt_hidx_first(&dt_writes, dt_hash_str(g->path)); ok && j;
	     j = dt_writes.next[j - 1]) {
		const struct dt_record *w = &r->recs[j - 1];
		if (w->type == DT_REC_WRITE && dt_streq(dt_report_path(w), g->path) &&
		    dt_same_kind(w->op, d->op))
			ok[n++] = w;
	}
	for (size_t i = 0; ref && i < r->n && nref <= g->count; i++)
		if (r->group_of[i] == gi + 1)
			ref[nref++] = &r->recs[i];
	g->intermittent = 1;
	if (ok && ref)
		dt_difference_compute(r, ref, nref, ok, n, &g->diff);
	free(ok);
	free(ref);
}

/* bubblewrap probes its new root while setting the sandbox up (access of
 * /newroot/... for writing): the launcher's own business, not the worker's. */
static int dt_is_setup(const struct dt_record *d)
{
	const char *p = d->p[0].abspath ? d->p[0].abspath : d->p[0].path;
	return d->comm && !strcmp(d->comm, "bwrap") && p && !strncmp(p, "/newroot", 8) &&
	       (p[8] == 0 || p[8] == '/');
}

/* A probe record's process as its own pid namespace numbers it, and when. */
struct dt_pid_time {
	int64_t pid;
	uint64_t t;
};

static int dt_pid_time_order(const void *a, const void *b)
{
	const struct dt_pid_time *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->t > y->t) - (x->t < y->t);
}

/* The first of v[0..n) (sorted) at or after (pid, t), or n. */
static size_t dt_pid_time_from(const struct dt_pid_time *v, size_t n, int64_t pid, uint64_t t)
{
	size_t lo = 0, hi = n;
	struct dt_pid_time key = {pid, t};
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (dt_pid_time_order(&v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Execs whose image would announce the probe (DENYTRACE_ENTRY) and after
 * which that process wrote no entry record, before its next exec, ran
 * without it, whatever their LD_PRELOAD said: ld.so could not open the
 * file (a sandbox hid it) or the probe could not reach the ring. They are
 * marked "hidden". */
static void dt_report_judge_entry(struct dt_report *r)
{
	struct dt_pid_time *entries = calloc(r->n + 1, sizeof(*entries));
	struct dt_pid_time *execs = calloc(r->nexecs + 1, sizeof(*execs));
	size_t nentries = 0;
	for (size_t i = 0; entries && execs && i < r->n; i++)
		if (r->recs[i].type == DT_REC_ENTRY)
			entries[nentries++] =
			    (struct dt_pid_time){r->recs[i].pid, r->recs[i].time_mono};
	for (size_t i = 0; entries && execs && i < r->nexecs; i++) {
		const struct dt_record *e = r->execs[i];
		execs[i] = (struct dt_pid_time){e->nspid ? e->nspid : e->pid, e->time_mono};
	}
	if (entries && execs) {
		qsort(entries, nentries, sizeof(*entries), dt_pid_time_order);
		qsort(execs, r->nexecs, sizeof(*execs), dt_pid_time_order);
	}
	for (size_t i = 0; entries && execs && i < r->nexecs; i++) {
		struct dt_record *e = (struct dt_record *)r->execs[i];
		if (!e->exec_entry || !e->exec_probe || e->exec_blind)
			continue;
		int64_t pid = e->nspid ? e->nspid : e->pid;
		size_t next = dt_pid_time_from(execs, r->nexecs, pid, e->time_mono + 1);
		uint64_t until =
		    next < r->nexecs && execs[next].pid == pid ? execs[next].t : UINT64_MAX;
		size_t k = dt_pid_time_from(entries, nentries, pid, e->time_mono);
		if (k < nentries && entries[k].pid == pid && entries[k].t < until)
			continue;
		e->exec_blind = "hidden";
		r->blind[r->nblind++] = e;
	}
	free(entries);
	free(execs);
}

static void dt_report_exec_coverage(struct dt_report *r)
{
	/* exec coverage */
	r->execs = calloc(r->n + 1, sizeof(*r->execs));
	r->blind = calloc(r->n + 1, sizeof(*r->blind));
	r->setid_lost = calloc(r->n + 1, sizeof(*r->setid_lost));
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == DT_REC_EXEC) {
			r->execs[r->nexecs++] = &r->recs[i];
			if (r->recs[i].exec_blind)
				r->blind[r->nblind++] = &r->recs[i];
			if (r->recs[i].setid_lost)
				r->setid_lost[r->nsetid_lost++] = &r->recs[i];
		}
	if (r->execs && r->blind)
		dt_report_judge_entry(r);
}

/* The image refusal d's process ran when it was refused, when that is a
 * set-id program the supervisor's no_new_privs kept from its privilege:
 * the process's last exec before d (the supervisor names it by the pid of
 * denytrace's namespace, and by the process's own as well). */
static const struct dt_record *dt_report_setid_lost_for(const struct dt_report *r,
                                                        const struct dt_record *d)
{
	const struct dt_record *last = NULL;
	if (!r->nsetid_lost)
		return NULL;
	for (size_t i = 0; i < r->nexecs; i++) {
		const struct dt_record *e = r->execs[i];
		if ((e->pid == d->pid || (e->nspid && e->nspid == d->pid)) && e->ring == d->ring &&
		    e->time_mono <= d->time_mono)
			last = e;
	}
	return last && last->setid_lost ? last : NULL;
}

/* A refusal the supervisor injected into a process the probe is in is
 * recorded twice: keep the probe's (it has the stack), marked injected.
 * Returns the flags of the supervisor's records folded into it. */
static unsigned char *dt_report_merge_injected(struct dt_report *r)
{
	unsigned char *merged = calloc(r->n + 1, 1);
	size_t *sup = calloc(r->n + 1, sizeof(*sup)), nsup = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == DT_REC_DENIAL && r->recs[i].supervisor)
			sup[nsup++] = i; /* usually none: only --deny writes them */
	for (size_t i = 0; i < r->n && nsup; i++) {
		struct dt_record *d = &r->recs[i];
		if (d->type != DT_REC_DENIAL || d->supervisor)
			continue;
		for (size_t q = 0; q < nsup; q++) {
			size_t k = sup[q];
			if (!merged[k] && dt_same_injected(d, &r->recs[k])) {
				merged[k] = 1;
				d->injected = 1;
				r->injected_merged++;
				break;
			}
		}
	}
	free(sup);
	return merged;
}

/* Which paths are SQLite's, from every record of the run (sqlite_role.h). */
static void dt_report_judge_sqlite(struct dt_report *r, const unsigned char *merged)
{
	r->sqlite = dt_sqlite_judge_new();
	for (size_t i = 0; i < r->n; i++)
		if (!merged[i])
			dt_sqlite_judge_add(r->sqlite, &r->recs[i]);
	for (size_t i = 0; i < r->n; i++)
		dt_sqlite_judge_record(r->sqlite, &r->recs[i]);
}

/* The indexes the per-group lookups use. */
static void dt_report_index(struct dt_report *r)
{
	dt_hidx_init(&dt_reopens, 2 * r->n);
	dt_hidx_init(&dt_writes, r->n);
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *x = &r->recs[i];
		if (x->type == DT_REC_WRITE)
			dt_hidx_add(&dt_writes, dt_hash_str(dt_report_path(x)), i);
		else if (x->type == DT_REC_REOPEN) {
			uint64_t a = dt_hash_str(x->p[0].path), b = dt_hash_str(x->p[0].realpath);
			dt_hidx_add(&dt_reopens, a, i);
			if (b != a)
				/* a second chain entry: positions r->n.. stand for the realpath key
				 */
				dt_hidx_add(&dt_reopens, b, r->n + i);
		}
	}
}

/* A new, zeroed group. The array grows with the groups, not with the
 * records: a group is several KiB (reason, advice, subject). NULL when out
 * of memory. */
static struct dt_report_group *dt_report_new_group(struct dt_report *r)
{
	if (r->ngroups == r->groups_cap) {
		size_t cap = r->groups_cap ? 2 * r->groups_cap : 64;
		struct dt_report_group *ng = realloc(r->groups, cap * sizeof(*ng));
		if (!ng)
			return NULL;
		memset(ng + r->groups_cap, 0, (cap - r->groups_cap) * sizeof(*ng));
		r->groups = ng;
		r->groups_cap = cap;
	}
	return &r->groups[r->ngroups++];
}

/* Python's own library: the interpreter's lib directory, but not the
 * packages installed into it, and its frozen modules. */
static int dt_py_stdlib(const char *file)
{
	const char *lib = strstr(file, "/lib/python3");
	return !strncmp(file, "<frozen ", 8) ||
	       (lib && !strstr(lib, "/site-packages/") && !strstr(lib, "/dist-packages/"));
}

const struct dt_py_frame *dt_py_site(const struct dt_record *d)
{
	for (size_t i = 0; i < d->npyframes; i++)
		if (!dt_py_stdlib(d->pyframes[i].file))
			return &d->pyframes[i];
	return d->npyframes ? &d->pyframes[0] : NULL;
}

const char *dt_py_basename(const char *file)
{
	const char *slash = strrchr(file, '/');
	return slash && slash[1] ? slash + 1 : file;
}

static uint64_t dt_py_site_hash(const struct dt_py_frame *s)
{
	return s ? dt_hash_str(s->file) * 17 + dt_hash_str(s->func) * 3 + s->line : 0;
}

static int dt_py_site_same(const struct dt_py_frame *a, const struct dt_py_frame *b)
{
	if (!a || !b)
		return a == b;
	return a->line == b->line && !strcmp(a->file, b->file) && !strcmp(a->func, b->func);
}

/* Classifies refusal d and adds it to its group (path, op, errno, cause,
 * Python line).
 * Returns 1 when the report shows it, 0 when it is hidden. */
static int dt_report_add_denial(struct dt_report *r, const struct dt_report_opts *o,
                                struct dt_hidx *groups, struct dt_classify_cache *cc,
                                const struct dt_record *d)
{
	const struct dt_record *proc = dt_report_proc_for(r, d);
	struct dt_classify_ctx ctx = {.cache = cc};
	ctx.db_writable = dt_sqlite_db_writable(r->sqlite, d, proc, &ctx.db_writable_why);
	ctx.setid_lost = dt_report_setid_lost_for(r, d);
	struct dt_verdict v;
	dt_classify(d, proc, &r->roots, &ctx, &v);
	const char *path = dt_report_path(d);
	const struct dt_py_frame *site = dt_py_site(d);
	uint64_t gh = dt_hash_str(path) * 31 + dt_hash_str(d->op) * 7 + (uint64_t)d->err * 131 +
	              (uint64_t)v.cause + dt_py_site_hash(site) * 1031;
	struct dt_report_group *g = NULL;
	for (size_t j = dt_hidx_first(groups, gh); j && !g; j = groups->next[j - 1]) {
		struct dt_report_group *c = &r->groups[j - 1];
		if (!strcmp(c->path, path) && dt_streq(c->rep->op, d->op) &&
		    c->rep->err == d->err && c->v.cause == v.cause &&
		    dt_py_site_same(c->py_site, site))
			g = c;
	}
	if (!g) {
		if (!(g = dt_report_new_group(r)))
			return 0;
		dt_hidx_add(groups, gh, r->ngroups - 1);
		g->id = gh;
		g->rep = d;
		g->path = path;
		g->py_site = site;
		g->v = v;
		g->first_ns = d->time_real;
		g->hidden = !o->all && (v.cause == DT_CAUSE_LOCK_CONTENTION || dt_is_setup(d));
	}
	g->count++;
	g->missing += !(d->p[0].has_st && (d->p[0].st.valid & DT_SF_EXISTS));
	g->last_ns = d->time_real;
	r->group_of[d - r->recs] = (size_t)(g - r->groups) + 1;
	int have = 0;
	for (size_t k = 0; k < g->npids; k++)
		have |= g->pids[k] == d->pid && g->pid_recs[k]->ring == d->ring;
	if (!have && g->npids < DT_GROUP_MAX_PIDS) {
		g->pid_recs[g->npids] = d;
		g->pids[g->npids++] = d->pid;
	} else if (!have)
		g->more_pids = 1;
	if (g->hidden && dt_is_setup(d))
		r->hidden_setup++;
	else if (g->hidden)
		r->hidden_denials++;
	else {
		r->denials++;
		r->by_cause[v.cause]++;
	}
	return !g->hidden;
}

static int dt_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Distinct values among v[0..n) (sorts v). */
static uint64_t dt_count_distinct(int64_t *v, size_t n)
{
	uint64_t distinct = 0;
	if (v)
		qsort(v, n, sizeof(*v), dt_cmp_i64);
	for (size_t i = 0; v && i < n; i++)
		distinct += i == 0 || v[i] != v[i - 1];
	return distinct;
}

int dt_report_build(struct dt_report *r, const struct dt_report_opts *o, char *err, size_t errlen)
{
	r->all = o->all;
	if (r->n)
		qsort(r->recs, r->n, sizeof(*r->recs), dt_rec_cmp);
	r->procs = calloc(r->n + 1, sizeof(*r->procs));
	int hcom = 0;
	for (size_t i = 0; i < r->n; i++) {
		struct dt_record *rec = &r->recs[i];
		if (rec->type == DT_REC_PROCESS)
			r->procs[r->nprocs++] = rec;
		if ((rec->type == DT_REC_PROCESS || rec->type == DT_REC_LAUNCH) &&
		    dt_argv_mentions(rec, "hcom"))
			hcom = 1;
	}
	r->multihost = dt_report_multihost(r);
	int rc = dt_report_roots(r, o, hcom, err, errlen);
	if (rc)
		return rc;
	dt_report_exec_coverage(r);
	unsigned char *merged = dt_report_merge_injected(r);
	dt_report_judge_sqlite(r, merged);
	dt_report_index(r);

	/* classify and group */
	r->group_of = calloc(r->n + 1, sizeof(*r->group_of));
	struct dt_hidx groups;
	dt_hidx_init(&groups, r->n);
	int64_t *shown_pids = malloc((r->n + 1) * sizeof(*shown_pids));
	size_t nshown = 0;
	struct dt_classify_cache *cc = dt_classify_cache_new(); /* NULL: no cache, same verdicts */
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *d = &r->recs[i];
		if (merged[i])
			continue;
		if (d->type == DT_REC_REOPEN)
			r->reopens++;
		if (d->type == DT_REC_WRITE)
			r->writes++;
		if (d->type == DT_REC_DENIAL && dt_report_add_denial(r, o, &groups, cc, d) &&
		    shown_pids)
			shown_pids[nshown++] = (int64_t)d->ring << 32 | d->pid; /* pid_max < 2^23 */
	}
	dt_classify_cache_free(cc);
	free(merged);
	r->refusing_procs = dt_count_distinct(shown_pids, nshown);
	free(shown_pids);
	for (size_t k = 0; k < r->ngroups; k++) {
		dt_group_next(r, &r->groups[k]);
		dt_group_intermittent(r, &r->groups[k], k);
	}
	dt_hidx_free(&groups);
	dt_hidx_free(&dt_reopens);
	dt_hidx_free(&dt_writes);
	dt_handoffs_build(r, &r->handoffs);
	if (dt_findings_build(r->groups, r->ngroups, &r->findings)) {
		snprintf(err, errlen, "out of memory");
		return DT_EXIT_INTERNAL;
	}
	return 0;
}

void dt_report_free(struct dt_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		dt_record_free(&r->recs[i]);
	free(r->recs);
	free(r->procs);
	free(r->groups);
	free(r->group_of);
	dt_findings_free(&r->findings);
	dt_handoffs_free(&r->handoffs);
	free(r->execs);
	free(r->blind);
	free(r->setid_lost);
	dt_rootset_free(&r->roots);
	dt_sqlite_judge_free(r->sqlite);
	memset(r, 0, sizeof(*r));
}
