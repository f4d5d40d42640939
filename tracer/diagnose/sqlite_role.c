/* SPDX-License-Identifier: MIT */
#include "sqlite_role.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "classify.h"
#include "safeopen.h"

/* What one process did to one path, as the run shows it. Kept per process,
 * not per record, so that judging stays linear in the ring's size. */
struct dt_sq_proc {
	int64_t pid;
	uint64_t first_rwc;   /* earliest refused O_RDWR|O_CREAT open */
	uint64_t last_reopen; /* latest read-only reopen after a refused write-open */
	unsigned rwc : 1, reopen : 1, refused : 1, wrote : 1;
};

/* One path (keyed by realpath and by abspath). */
struct dt_sq_entry {
	struct dt_sq_entry *next; /* hash chain */
	uint64_t hash;
	size_t len;
	char *path;
	struct dt_sq_proc *procs;
	size_t nprocs, cap, last; /* last: the process looked up last */
	int reopened;             /* one process showed SQLite's refused open + read-only reopen */
	int companion;            /* its -journal, -wal or -shm was refused or written */
	int header;               /* enum dt_sqlite_header, read once */
	struct stat st;
};

struct dt_sqlite_judge {
	struct dt_sq_entry **bucket;
	size_t nb, n; /* buckets, entries: grown to keep chains short */
};

/* Companion suffixes; .lock is the unix-dotfile VFS's lock directory, and
 * the only one that is not evidence for its database (applications name
 * their own lock files <db>.lock too). */
static const struct {
	const char *role, *suffix;
	int evidence;
} dt_sq_companions[] = {
    {"journal", "-journal", 1},
    {"wal", "-wal", 1},
    {"shm", "-shm", 1},
    {"lock", ".lock", 0},
};
#define DT_SQ_NCOMP (sizeof(dt_sq_companions) / sizeof(dt_sq_companions[0]))

static const char *const dt_sq_evidence[] = {"header", "reopen", "companion", "name"};
enum { DT_EV_HEADER, DT_EV_REOPEN, DT_EV_COMPANION, DT_EV_NAME };

const char *dt_sqlite_header_name(int header)
{
	static const char *const names[] = {
	    [DT_SQLHDR_SQLITE] = "sqlite",         [DT_SQLHDR_OTHER] = "other",
	    [DT_SQLHDR_EMPTY] = "empty",           [DT_SQLHDR_GONE] = "gone",
	    [DT_SQLHDR_UNREADABLE] = "unreadable",
	};
	if (header <= DT_SQLHDR_UNREAD || header > DT_SQLHDR_UNREADABLE)
		return NULL;
	return names[header];
}

const char *dt_sqlite_header_note(int header)
{
	switch (header) {
	case DT_SQLHDR_EMPTY:
		return "header not checked: the database file is empty";
	case DT_SQLHDR_GONE:
		return "header not checked: the database file no longer exists";
	case DT_SQLHDR_UNREADABLE:
		return "header not checked: the database file could not be read";
	default:
		return NULL;
	}
}

const char *dt_sqlite_suffix(const char *role)
{
	for (size_t i = 0; role && i < DT_SQ_NCOMP; i++)
		if (!strcmp(role, dt_sq_companions[i].role))
			return dt_sq_companions[i].suffix;
	return NULL;
}

const char *dt_sqlite_evidence_text(const struct dt_record *rec, char *buf, size_t cap)
{
	const char *note = rec->sqlite ? dt_sqlite_header_note(rec->sqlite_header) : NULL;
	if (!cap)
		return buf;
	buf[0] = 0;
	if (rec->sqlite && rec->sqlite_evidence)
		snprintf(buf, cap, "evidence: %s%s%s", rec->sqlite_evidence, note ? "; " : "",
		         note ? note : "");
	return buf;
}

struct dt_sqlite_judge *dt_sqlite_judge_new(void)
{
	struct dt_sqlite_judge *j = calloc(1, sizeof(*j));
	if (j && !(j->bucket = calloc(j->nb = 256, sizeof(*j->bucket)))) {
		free(j);
		return NULL;
	}
	return j;
}

void dt_sqlite_judge_free(struct dt_sqlite_judge *j)
{
	for (size_t b = 0; j && b < j->nb; b++)
		for (struct dt_sq_entry *e = j->bucket[b], *n; e; e = n) {
			n = e->next;
			free(e->path);
			free(e->procs);
			free(e);
		}
	if (j)
		free(j->bucket);
	free(j);
}

static uint64_t dt_sq_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static void dt_sq_grow(struct dt_sqlite_judge *j)
{
	size_t nb = 2 * j->nb;
	struct dt_sq_entry **bucket = calloc(nb, sizeof(*bucket));
	if (!bucket)
		return; /* longer chains, still right */
	for (size_t b = 0; b < j->nb; b++)
		for (struct dt_sq_entry *e = j->bucket[b], *n; e; e = n) {
			n = e->next;
			e->next = bucket[e->hash % nb];
			bucket[e->hash % nb] = e;
		}
	free(j->bucket);
	j->bucket = bucket;
	j->nb = nb;
}

/* The entry of the first n bytes of path; created when create. */
static struct dt_sq_entry *dt_sq_lookup(struct dt_sqlite_judge *j, const char *path, size_t n,
                                        int create)
{
	if (!j || !path || !n)
		return NULL;
	uint64_t h = dt_sq_hash(path, n);
	struct dt_sq_entry **head = &j->bucket[h % j->nb];
	for (struct dt_sq_entry *e = *head; e; e = e->next)
		if (e->hash == h && e->len == n && !memcmp(e->path, path, n))
			return e;
	if (!create)
		return NULL;
	struct dt_sq_entry *e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strndup(path, n))) {
		free(e);
		return NULL;
	}
	e->hash = h;
	e->len = n;
	e->next = *head;
	*head = e;
	if (++j->n > 2 * j->nb)
		dt_sq_grow(j);
	return e;
}

/* pid's summary on e; created when create. */
static struct dt_sq_proc *dt_sq_proc_of(struct dt_sq_entry *e, int64_t pid, int create)
{
	if (!e)
		return NULL;
	if (e->last < e->nprocs && e->procs[e->last].pid == pid)
		return &e->procs[e->last];
	for (size_t i = 0; i < e->nprocs; i++)
		if (e->procs[i].pid == pid)
			return &e->procs[e->last = i];
	if (!create)
		return NULL;
	if (e->nprocs == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 4;
		struct dt_sq_proc *p = realloc(e->procs, cap * sizeof(*p));
		if (!p)
			return NULL;
		e->procs = p;
		e->cap = cap;
	}
	e->last = e->nprocs;
	e->procs[e->nprocs] = (struct dt_sq_proc){.pid = pid};
	return &e->procs[e->nprocs++];
}

static int dt_sq_is_open(const struct dt_record *rec)
{
	return rec->op && (strstr(rec->op, "open") || !strncmp(rec->op, "creat", 5));
}

/* How SQLite's unix VFS opens a database it may write: O_RDWR|O_CREAT,
 * never truncating, appending or exclusive. */
static int dt_sq_rwcreate(const struct dt_record *rec)
{
	uint64_t f = rec->flags;
	return dt_sq_is_open(rec) && rec->has_flags && (f & O_ACCMODE) == O_RDWR && (f & O_CREAT) &&
	       !(f & (O_TRUNC | O_APPEND | O_EXCL));
}

/* The companion index of path's suffix (its database is the rest), or -1. */
static int dt_sq_companion_of(const char *path, size_t *base)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < DT_SQ_NCOMP; i++) {
		size_t l = strlen(dt_sq_companions[i].suffix);
		if (n > l && !strcmp(path + n - l, dt_sq_companions[i].suffix) &&
		    path[n - l - 1] != '/') {
			*base = n - l;
			return (int)i;
		}
	}
	return -1;
}

/* What rec says its process did to e's path. */
static void dt_sq_note(struct dt_sq_entry *e, const struct dt_record *rec)
{
	uint64_t t = rec->time_mono;
	struct dt_sq_proc *p = NULL;
	if (rec->type == DT_REC_REOPEN &&
	    (!rec->has_flags || (rec->flags & (O_ACCMODE | O_CREAT)) == O_RDONLY)) {
		if ((p = dt_sq_proc_of(e, rec->pid, 1)) && (!p->reopen || t > p->last_reopen))
			p->last_reopen = t;
		if (p)
			p->reopen = 1;
	} else if (rec->type == DT_REC_DENIAL && rec->writes) {
		if ((p = dt_sq_proc_of(e, rec->pid, 1)) && dt_sq_rwcreate(rec)) {
			if (!p->rwc || t < p->first_rwc)
				p->first_rwc = t;
			p->rwc = 1;
		}
		if (p)
			p->refused = 1;
	} else if (rec->type == DT_REC_WRITE && rec->writes) {
		if ((p = dt_sq_proc_of(e, rec->pid, 1)))
			p->wrote = 1;
	}
	if (p && p->rwc && p->reopen && p->first_rwc <= p->last_reopen)
		e->reopened = 1;
}

void dt_sqlite_judge_add(struct dt_sqlite_judge *j, const struct dt_record *rec)
{
	if (!j ||
	    (rec->type != DT_REC_DENIAL && rec->type != DT_REC_REOPEN && rec->type != DT_REC_WRITE))
		return;
	if (dt_op_is_lock(rec->op))
		return; /* a lock is contention or held, never a write of the file */
	const char *keys[2] = {rec->p[0].realpath, rec->p[0].abspath};
	for (int k = 0; k < 2; k++) {
		const char *p = keys[k];
		if (!p || (k == 1 && keys[0] && !strcmp(p, keys[0])))
			continue;
		struct dt_sq_entry *e = dt_sq_lookup(j, p, strlen(p), 1);
		dt_sq_note(e, rec);
		size_t base;
		int c = dt_sq_companion_of(p, &base);
		if (c >= 0 && dt_sq_companions[c].evidence && rec->type != DT_REC_REOPEN) {
			struct dt_sq_entry *db = dt_sq_lookup(j, p, base, 1);
			if (db)
				db->companion = 1;
		}
	}
}

/* Pseudo filesystems, whose files are not databases and whose reads may
 * have effects. */
static int dt_sq_pseudo_fs(int fd)
{
	static const long magic[] = {0x9fa0 /* proc */,           0x62656572 /* sysfs */,
	                             0x64626720 /* debugfs */,    0x74726163 /* tracefs */,
	                             0x73636673 /* securityfs */, 0x62656570 /* configfs */,
	                             0x63677270 /* cgroup2 */,    0x27e0eb /* cgroup */,
	                             (long)0xcafe4a11 /* bpf */,  (long)0xde5e81e4 /* efivarfs */};
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0)
		return 1;
	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if ((long)sf.f_type == magic[i])
			return 1;
	return 0;
}

/* Reads the first 16 bytes of the file at e->path, once. The path is the
 * traced program's: it is opened only as the regular file an O_PATH look
 * found (safeopen.h), never by path again, which a directory swapped for
 * a link in between would turn to a FIFO or a device. */
static int dt_sq_header(struct dt_sq_entry *e)
{
	if (e->header)
		return e->header;
	static const char magic[16] = "SQLite format 3";
	e->header = DT_SQLHDR_UNREADABLE;
	int fd = dt_open_regular(e->path, &e->st);
	if (fd == -1 && (errno == ENOENT || errno == ENOTDIR))
		e->header = DT_SQLHDR_GONE;
	if (fd < 0)
		return e->header;
	char buf[16];
	if (!dt_sq_pseudo_fs(fd)) {
		ssize_t n = pread(fd, buf, sizeof(buf), 0);
		if (n == 0)
			e->header = DT_SQLHDR_EMPTY;
		else if (n == (ssize_t)sizeof(buf) && !memcmp(buf, magic, sizeof(buf)))
			e->header = DT_SQLHDR_SQLITE;
		else if (n > 0)
			e->header = DT_SQLHDR_OTHER;
	}
	close(fd);
	return e->header;
}

/* Is the file (first n bytes of real, else of abs) a SQLite database? Its
 * evidence (DT_EV_*) or -1; *header is what its first bytes said. */
static int dt_sq_database(struct dt_sqlite_judge *j, const char *real, size_t rn, const char *abs,
                          size_t an, int *header)
{
	struct dt_sq_entry *r = dt_sq_lookup(j, real, rn, real != NULL);
	struct dt_sq_entry *a = abs && (!real || rn != an || memcmp(real, abs, an))
	                            ? dt_sq_lookup(j, abs, an, !real)
	                            : NULL;
	*header = DT_SQLHDR_UNREAD;
	if (!r && !a)
		return -1;
	*header = dt_sq_header(r ? r : a);
	if (*header == DT_SQLHDR_SQLITE)
		return DT_EV_HEADER;
	if (*header == DT_SQLHDR_OTHER)
		return -1; /* readable, and not SQLite's: whatever the run did */
	if (*header == DT_SQLHDR_UNREADABLE && !S_ISREG((r ? r : a)->st.st_mode) &&
	    (r ? r : a)->st.st_mode)
		return -1; /* a directory or a device */
	if ((r && r->reopened) || (a && a->reopened))
		return DT_EV_REOPEN;
	if ((r && r->companion) || (a && a->companion))
		return DT_EV_COMPANION;
	return -1;
}

static void dt_sq_judge_path(struct dt_sqlite_judge *j, const struct dt_record *rec,
                             const struct dt_pathinfo *p, struct dt_record *out)
{
	const char *real = p->realpath, *abs = p->abspath;
	const char *any = real ? real : abs;
	if (!any)
		return;
	size_t rb = 0, ab = 0;
	int c = real ? dt_sq_companion_of(real, &rb) : -1;
	int ca = abs ? dt_sq_companion_of(abs, &ab) : -1;
	if (real && abs && ca != c)
		abs = NULL; /* named differently through a link: the realpath decides */
	if (!real)
		c = ca;
	if (c >= 0) {
		int ev = dt_sq_database(j, real, rb, abs, ab, &out->sqlite_header);
		if (ev >= 0) {
			out->sqlite = dt_sq_companions[c].role;
			out->sqlite_evidence = dt_sq_evidence[ev];
			return;
		}
	}
	const char *leaf = strrchr(any, '/');
	if (!strncmp(leaf ? leaf + 1 : any, "etilqs_", 7)) {
		out->sqlite = "temp";
		out->sqlite_evidence = dt_sq_evidence[DT_EV_NAME];
		out->sqlite_header = DT_SQLHDR_UNREAD;
		return;
	}
	/* unix-dotfile locking makes directories; a database is never one */
	if (rec->op && (strstr(rec->op, "mkdir") || strstr(rec->op, "rmdir")))
		return;
	int ev = dt_sq_database(j, real, real ? strlen(real) : 0, abs, abs ? strlen(abs) : 0,
	                        &out->sqlite_header);
	if (ev >= 0) {
		out->sqlite = "db";
		out->sqlite_evidence = dt_sq_evidence[ev];
	}
}

void dt_sqlite_judge_record(struct dt_sqlite_judge *j, struct dt_record *rec)
{
	rec->sqlite = NULL;
	rec->sqlite_evidence = NULL;
	rec->sqlite_header = DT_SQLHDR_UNREAD;
	if (!j ||
	    (rec->type != DT_REC_DENIAL && rec->type != DT_REC_REOPEN && rec->type != DT_REC_WRITE))
		return;
	for (int k = 0; k < 2 && !rec->sqlite; k++) {
		dt_sq_judge_path(j, rec, &rec->p[k], rec);
		if (!rec->sqlite)
			rec->sqlite_header = DT_SQLHDR_UNREAD;
	}
}

/* Would the mode bits let uid/gid write the file? Supplementary groups are
 * not recorded: a group-writable file gets the benefit of the doubt. */
static int dt_sq_mode_writable(const struct stat *st, int64_t uid, int64_t gid)
{
	if (uid == 0)
		return 1;
	if ((uint64_t)st->st_uid == (uint64_t)uid)
		return (st->st_mode & S_IWUSR) != 0;
	if ((uint64_t)st->st_gid == (uint64_t)gid || (st->st_mode & S_IWGRP))
		return (st->st_mode & S_IWGRP) != 0; /* maybe a supplementary group */
	return (st->st_mode & S_IWOTH) != 0;
}

/* What the run showed pid doing to the database: 1 wrote it, 0 was refused
 * writing it (or fell back to a read-only reopen), -1 nothing. */
static int dt_sq_pid_wrote(struct dt_sq_entry *e, int64_t pid)
{
	const struct dt_sq_proc *p = dt_sq_proc_of(e, pid, 0);
	if (!p || (!p->wrote && !p->refused && !p->reopen))
		return -1;
	return p->wrote;
}

int dt_sqlite_db_writable(struct dt_sqlite_judge *j, const struct dt_record *side,
                          const struct dt_record *proc, const char **why)
{
	const char *paths[2] = {side->p[0].realpath, side->p[0].abspath};
	struct dt_sq_entry *db[2] = {NULL, NULL};
	*why = NULL;
	if (!dt_sqlite_suffix(side->sqlite))
		return -1;
	for (int k = 0; k < 2; k++) {
		size_t base;
		if (paths[k] && dt_sq_companion_of(paths[k], &base) >= 0)
			db[k] = dt_sq_lookup(j, paths[k], base, 0);
	}
	for (int k = 0; k < 2; k++) {
		int w = dt_sq_pid_wrote(db[k], side->pid);
		if (w >= 0) {
			*why = w ? "this process opened it for writing" : NULL;
			return w;
		}
	}
	/* Mount and mode speak for the database only when they are what refused
	 * the side file too: a refusal on a writable mount (Landlock) would
	 * refuse the database alike. */
	const struct dt_stat_facts *st = side->p[0].has_st ? &side->p[0].st : NULL;
	int ro = side->err == EROFS ||
	         (st && (st->valid & DT_SF_MOUNT) && (st->mount_flags & ST_RDONLY));
	struct dt_sq_entry *e = db[0] ? db[0] : db[1];
	if (!ro || !e || !proc)
		return -1;
	int mount_rw = dt_proc_path_writable(proc, e->path);
	if (mount_rw == 0)
		return 0;
	if (mount_rw != 1)
		return -1;
	dt_sq_header(e);
	/* root passes the mode bits, so a database gone since needs no stat */
	int w = side->uid == 0 ? 1
	        : e->st.st_mode && S_ISREG(e->st.st_mode)
	            ? dt_sq_mode_writable(&e->st, side->uid, side->gid)
	            : -1;
	if (w == 1)
		*why = "its mount is read-write and its mode lets this process write it";
	return w;
}
