/* SPDX-License-Identifier: MIT */
/* The fix for an immutable or append-only inode (fix_int.h): chattr -i or
 * -a on the path whose flag refused the call, never wider. */
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fix_int.h"
#include "roots_int.h"

/* The flags to clear on the inode that refused d ("i", "a" or "ia"),
 * into letters; the path they are on into path. 0 when no flag refused. */
static int chattr_flags(const struct dt_record *d, char *path, size_t cap, char letters[3],
                        unsigned *mask)
{
	int on_dir, on_dir2;
	char flag = dt_refusing_inode_flag(d, &on_dir);
	if (!flag)
		return 0;
	/* +i and +a together: with -i alone the append-only flag would still
	 * refuse the same call, so ask the same judge once more without +i */
	struct dt_record rest = *d;
	rest.iflags &= ~(uint64_t)FS_IMMUTABLE_FL;
	rest.dir_iflags &= ~(uint64_t)FS_IMMUTABLE_FL;
	char second = flag == 'i' ? dt_refusing_inode_flag(&rest, &on_dir2) : 0;
	size_t n = 0;
	letters[n++] = flag;
	if (second == 'a' && on_dir2 == on_dir)
		letters[n++] = 'a';
	letters[n] = 0;
	*mask = (strchr(letters, 'i') ? FS_IMMUTABLE_FL : 0) |
	        (strchr(letters, 'a') ? FS_APPEND_FL : 0);
	const char *p = d->p[0].realpath ? d->p[0].realpath : d->p[0].abspath;
	snprintf(path, cap, "%s", p ? p : "");
	char *slash = on_dir ? strrchr(path, '/') : NULL;
	if (slash)
		*(slash == path ? slash + 1 : slash) = 0;
	return path[0] == '/';
}

void fix_chattr(struct dt_fix *f, const struct dt_fix_problem *p, const struct dt_fix_launch *l)
{
	char path[PATH_MAX], letters[3] = "", buf[PATH_MAX + 128];
	unsigned mask = 0;
	size_t i = 0;
	while (i < p->nrefusals &&
	       !chattr_flags(p->refusals[i], path, sizeof(path), letters, &mask))
		i++;
	f->kind = DT_FIX_NONE;
	if (i == p->nrefusals) {
		fix_set(&f->why, "the refusals carry no inode flag and no path to clear it on");
		return;
	}
	const char *no = dt_fix_forbidden(path, l, buf, sizeof(buf));
	if (no) {
		fix_set(&f->why, "no command: it would clear the %s flag of %s, and %s",
		        letters[0] == 'i' ? "immutable" : "append-only", path, no);
		return;
	}
	if (!fix_target_in_root(f, p, path, "clearing its flag"))
		return;
	if (p->iflags_now.known && p->subject && !strcmp(path, p->subject) &&
	    !(p->iflags_now.flags & mask)) {
		fix_set(
		    &f->why,
		    "no command: %s carries no %s flag now (lsattr -d shows it): it was cleared "
		    "after the run, or the ring's record of it is not true; nothing to clear",
		    path, letters[0] == 'i' ? "immutable" : "append-only");
		return;
	}
	char *q = fix_sh_word(path), dashed[8];
	snprintf(dashed, sizeof(dashed), "-%s", letters);
	f->kind = DT_FIX_OUTSIDE;
	fix_set(&f->change, "clear the %s flag of %s",
	        letters[0] == 'i' ? "immutable" : "append-only", path);
	fix_copy(f, "chattr %s %s", dashed, q);
	fix_copy(f, "# as root (CAP_LINUX_IMMUTABLE); lsattr -d %s shows the flags", q);
	fix_set(
	    &f->why,
	    "the inode flag (chattr +%s, read when the call was refused) refuses root and every "
	    "user alike, before mode bits or any sandbox: clearing it on this one path is the "
	    "whole change; if the flag is there on purpose, the worker must leave %s alone",
	    letters, path);
	free(f->disk.path);
	f->disk.path = xstrdup(path);
	f->disk.mode = f->disk.uid = -1;
	f->disk.clear_iflags = mask;
	free(q);
	/* more paths than this one: each needs its own change, one disk change
	 * per fix is what --verify applies */
	for (size_t k = i + 1; k < p->nrefusals; k++) {
		char other[PATH_MAX], l2[3];
		unsigned m2;
		if (chattr_flags(p->refusals[k], other, sizeof(other), l2, &m2) &&
		    strcmp(other, path))
			fix_set(&f->no_verify,
			        "the refusals name more than one flagged path (%s, %s): "
			        "fix them one at a time",
			        path, other);
	}
}
