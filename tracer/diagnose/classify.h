/* SPDX-License-Identifier: MIT */
/* One refusal + its process + the roots -> one cause from a fixed
 * vocabulary, the root that should have covered the path, and advice. */
#ifndef DENYTRACE_CLASSIFY_H
#define DENYTRACE_CLASSIFY_H

#include <limits.h>

#include "mounts.h"
#include "records.h"
#include "roots.h"

/* One value per row of causes.def, in its order (the classifier's). */
enum dt_cause {
#define DT_CAUSE(id, name, rule, by_mounts, meaning, title, doc) DT_CAUSE_##id,
#include "causes.def"
#undef DT_CAUSE
	DT_CAUSE_COUNT
};

const char *dt_cause_name(enum dt_cause c);
/* One line: what the cause means. */
const char *dt_cause_meaning(enum dt_cause c);
/* A finding's title, a printf format whose %s (if any) is the path the fix
 * names. */
const char *dt_cause_title(enum dt_cause c);

struct dt_classify_cache;

/* What else the classifier needs to know about the run. */
struct dt_classify_ctx {
	/* For a SQLite companion (-journal, -wal, -shm, <db>.lock): 1 when the
	 * record shows its database was writable for this process
	 * (dt_sqlite_db_writable says why); only then is the directory
	 * SQLite's problem. Otherwise the root decides. */
	int db_writable;
	const char *db_writable_why;
	/* The exec record of the set-id program this process ran without its
	 * privilege (no_new_privs, set by the supervisor), or NULL. */
	const struct dt_record *setid_lost;
	/* What the classifier worked out for earlier refusals of this
	 * report (classify_cache.h), or NULL to work everything out. */
	struct dt_classify_cache *cache;
};

struct dt_verdict {
	enum dt_cause cause;
	const struct dt_root *root; /* expected root that should contain it, or NULL */
	int granted;                /* of that root: 1, 0, -1 unknown */
	char reason[1024];          /* why this cause, in the user's terms */
	char advice[1024];          /* what to change, where */
	/* The one path the fix names, so refusals with one fix group together
	 * (findings.h): file-permissions: the directory or file whose mode bits
	 * refused; root-not-granted, sqlite-side-file: the directory to grant;
	 * outside-roots: the directory to add as a root; symlink-mismatch: the
	 * resolved directory; protected-path: the read-only path. Empty for
	 * the other causes, whose fix does not depend on the path. */
	char subject[PATH_MAX];
	/* The access right the sandbox's rule lacks, by its Landlock name in
	 * lower case ("refer"), for a fix to add; NULL when the cause names
	 * none. */
	const char *missing_right;
};

/* proc may be NULL (no process record: the process was not traced). */
void dt_classify(const struct dt_record *denial, const struct dt_record *proc,
                 const struct dt_rootset *rs, const struct dt_classify_ctx *ctx,
                 struct dt_verdict *out);

/* What the refused op needs of its path, besides search (x) on every
 * directory on the way: create or remove an entry in the parent directory
 * (w+x on the parent), write the file (w on it), read it (r), both (rw),
 * or change its metadata (ownership). */
enum dt_need { DT_NEED_DIR, DT_NEED_FILE, DT_NEED_READ, DT_NEED_RW, DT_NEED_OWNER, DT_NEED_NONE };
enum dt_need dt_op_need(const struct dt_record *d);

/* The inode flag that refused d, on its path or (for an entry made,
 * removed or renamed) its directory: 'i' immutable, 'a' append-only, 0
 * none; *on_dir says which (immutable-file's rule, and its fix). */
char dt_refusing_inode_flag(const struct dt_record *d, int *on_dir);

/* Is this op a lock call (fcntl locks, flock)? */
int dt_op_is_lock(const char *op);

#endif
