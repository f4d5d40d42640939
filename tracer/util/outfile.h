/* SPDX-License-Identifier: MIT */
/* Files denytrace writes. The directory they go to may be one the traced
 * program can write (a ring's own, for RING.fix.md), and the path may hold
 * a symbolic link, a FIFO or a device put there for us: nothing at the path
 * is ever opened. Each file is written under a temporary name (O_CREAT |
 * O_EXCL | O_NOFOLLOW, mode 0600) and renamed into place when complete, so
 * a reader never sees half of it either. */
#ifndef DENYTRACE_OUTFILE_H
#define DENYTRACE_OUTFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum dt_out_policy {
	/* a path the user named: a new file, or a regular file of the
	 * caller's replaced; a link, FIFO, device, directory or another
	 * user's file is refused */
	DT_OUT_NEW_OR_OWN,
	/* a file only denytrace writes (a sidecar): whatever is at the path
	 * but a directory is replaced, never followed */
	DT_OUT_SIDECAR,
};

struct dt_outfile {
	FILE *f;
	int existed; /* something was at the path when it was checked */
	char path[PATH_MAX];
	char tmp[PATH_MAX];
};

/* Why path cannot be an output under policy (a sentence fragment such as
 * "is a FIFO"), or NULL when it can; *existed says whether anything is
 * there. */
const char *dt_outfile_problem(const char *path, enum dt_out_policy policy, int *existed);

/* Checks path (dt_outfile_problem) and opens a temporary file beside it
 * for writing. Returns 0, or -1 with a one-line reason in err. */
int dt_outfile_begin(struct dt_outfile *o, const char *path, enum dt_out_policy policy, char *err,
                     size_t errlen);
/* Closes the file and renames it to its path (without replacing a file
 * that appeared there meanwhile when there was none). Returns 0, or -1
 * with errno set and the temporary file removed. */
int dt_outfile_commit(struct dt_outfile *o);
/* Gives the file up: closed and removed. */
void dt_outfile_abort(struct dt_outfile *o);

#endif
