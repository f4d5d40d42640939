/* SPDX-License-Identifier: MIT */
/*
 * Which paths of a run are SQLite's files, and in which role. The one home
 * of that rule: show, report and evidence all ask here.
 *
 * A path is a SQLite database when its first 16 bytes are "SQLite format 3"
 * and a NUL (read at report time, never by the probe), or when the run shows
 * SQLite's own pattern on it: a refused O_RDWR|O_CREAT open reopened O_RDONLY
 * by the same process, or its -journal, -wal or -shm refused or written. A
 * readable file with other first bytes is not a database, whatever happened
 * to it. The companions (-journal, -wal, -shm, and the unix-dotfile VFS's
 * <db>.lock) get their role only beside such a database, never by their
 * name alone; SQLite's temp files (etilqs_*) are known by name. The role the
 * probe wrote into the record is a name-based hint, re-judged here.
 */
#ifndef DENYTRACE_SQLITE_ROLE_H
#define DENYTRACE_SQLITE_ROLE_H

#include <stddef.h>

#include "records.h"

/* What the database's first bytes said when judged (rec->sqlite_header). */
enum dt_sqlite_header {
	DT_SQLHDR_UNREAD,     /* not judged, or the role needs no database */
	DT_SQLHDR_SQLITE,     /* "SQLite format 3\0" */
	DT_SQLHDR_OTHER,      /* a regular file with other first bytes */
	DT_SQLHDR_EMPTY,      /* zero bytes: SQLite's new, empty database */
	DT_SQLHDR_GONE,       /* no such file at report time */
	DT_SQLHDR_UNREADABLE, /* not a regular file, or could not be read */
};

/* "sqlite", "other", "empty", "gone", "unreadable"; NULL for UNREAD. */
const char *dt_sqlite_header_name(int header);
/* Why the header is not the evidence ("header not checked: ..."), or NULL
 * when the header itself decided. */
const char *dt_sqlite_header_note(int header);
/* The suffix a companion role stands for ("-journal" for "journal"), NULL
 * for "db", "temp" and anything else. */
const char *dt_sqlite_suffix(const char *role);

/* "evidence: reopen; header not checked: ..." for a judged record with a
 * role, into buf; "" without one. */
const char *dt_sqlite_evidence_text(const struct dt_record *rec, char *buf, size_t cap);

struct dt_sqlite_judge;

struct dt_sqlite_judge *dt_sqlite_judge_new(void);
void dt_sqlite_judge_free(struct dt_sqlite_judge *j);
/* Takes in what rec shows (refusals, reopens, writes); any order. */
void dt_sqlite_judge_add(struct dt_sqlite_judge *j, const struct dt_record *rec);
/* Sets rec->sqlite, rec->sqlite_evidence and rec->sqlite_header from what
 * was added so far (NULL, NULL, UNREAD when rec is no SQLite file). */
void dt_sqlite_judge_record(struct dt_sqlite_judge *j, struct dt_record *rec);

/* For a judged companion refusal of proc's process: was the database beside
 * it writable for that process? 1 (why says how it is known), 0 not, -1 the
 * record does not say. Only then is the directory SQLite's problem. */
int dt_sqlite_db_writable(struct dt_sqlite_judge *j, const struct dt_record *side,
                          const struct dt_record *proc, const char **why);

#endif
