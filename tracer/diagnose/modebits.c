/* SPDX-License-Identifier: MIT */
/* The filesystem's own refusal (modebits.h): what the owner, group and
 * mode bits the probe saw allow this process, as the kernel checks them. */
#include "modebits.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "classify.h"

/* Do the mode bits give this process the wanted rights (4 r, 2 w, 1 x)?
 * The owner's bits, else the group's for the primary or any supplementary
 * group, else the others' (the kernel's order). A ring without the groups
 * gives a group the process might be in the benefit of the doubt. */
static int dt_mode_allows(const struct dt_record *d, uint32_t mode, uint32_t uid, uint32_t gid,
                          unsigned want)
{
	int in_group = (uint64_t)gid == (uint64_t)d->gid;
	for (int i = 0; i < d->ngroups && !in_group; i++)
		in_group = d->groups[i] == gid;
	unsigned bits = (uint64_t)uid == (uint64_t)d->uid ? (mode >> 6) & 7
	                : in_group                        ? (mode >> 3) & 7
	                                                  : mode & 7;
	if ((bits & want) == want)
		return 1;
	return d->ngroups < 0 && (uint64_t)uid != (uint64_t)d->uid && ((mode >> 3) & want) == want;
}

static const char *const dt_want_words[8] = {
    "",         "search (x)", "write (w)",           "write and search (wx)",
    "read (r)", "",           "read and write (rw)", ""};

/* Search (x) on the directories of the path: the one the probe could not
 * look into on the way, else the parent itself. */
static int dt_denied_search(const struct dt_record *d, char *why, size_t cap)
{
	const struct dt_pathinfo *p = &d->p[0];
	if (p->search_dir && !dt_mode_allows(d, p->search.mode, p->search.uid, p->search.gid, 1)) {
		snprintf(why, cap,
		         "uid %lld may not search (x) %s (mode %04o, owner %u:%u), so nothing "
		         "beneath it can be reached",
		         (long long)d->uid, p->search_dir, p->search.mode & 07777, p->search.uid,
		         p->search.gid);
		return 1;
	}
	if ((p->st.valid & DT_SF_PARENT) &&
	    !dt_mode_allows(d, p->st.parent_mode, p->st.parent_uid, p->st.parent_gid, 1)) {
		snprintf(why, cap,
		         "uid %lld may not search (x) the directory (mode %04o, owner %u:%u), so "
		         "nothing in it can be reached",
		         (long long)d->uid, p->st.parent_mode & 07777, p->st.parent_uid,
		         p->st.parent_gid);
		return 1;
	}
	return 0;
}

/* A sticky directory (/tmp): only the file's or the directory's owner may
 * remove or rename an entry. */
static int dt_denied_sticky(const struct dt_record *d, char *why, size_t cap)
{
	const struct dt_pathinfo *p = &d->p[0];
	const char *op = d->op ? d->op : "";
	if (!(p->st.parent_mode & S_ISVTX) || !(p->st.valid & DT_SF_EXISTS) ||
	    p->st.uid == (uint32_t)d->uid || p->st.parent_uid == (uint32_t)d->uid ||
	    !(strstr(op, "unlink") || strstr(op, "remove") || strstr(op, "rmdir") ||
	      strstr(op, "rename")))
		return 0;
	snprintf(why, cap,
	         "the directory is sticky (mode %04o): only the owner of the file (uid %u) "
	         "or of the directory may remove or rename it, and the process runs as uid %lld",
	         p->st.parent_mode & 07777, p->st.uid, (long long)d->uid);
	return 1;
}

/* An open that may create, refused although the file it found allows the
 * access: the file was not there at the call, which needed write and search
 * on a directory that denies them, and another process created it before
 * the probe looked (a root writer beside an unprivileged one). */
static int dt_created_since(const struct dt_record *d, char *why, size_t cap)
{
	const struct dt_pathinfo *p = &d->p[0];
	const char *op = d->op ? d->op : "";
	int creates = !strncmp(op, "creat", 5) ||
	              (strstr(op, "open") && d->has_flags && (d->flags & O_CREAT));
	if (!creates || !(p->st.valid & DT_SF_PARENT) ||
	    dt_mode_allows(d, p->st.parent_mode, p->st.parent_uid, p->st.parent_gid, 3))
		return 0;
	snprintf(why, cap,
	         "the file did not exist at the call (it exists now, mode %04o owned by %u:%u, "
	         "which would have allowed it: another process created it since); creating it "
	         "needs write and search (wx) on the directory, which is mode %04o owned by "
	         "%u:%u, and the process runs as uid %lld",
	         p->st.mode & 07777, p->st.uid, p->st.gid, p->st.parent_mode & 07777,
	         p->st.parent_uid, p->st.parent_gid, (long long)d->uid);
	return 1;
}

/* An ordinary permission problem: a read-write mount, and the owner and
 * mode bits deny this (non-root) user what the op needs. */
int dt_denied_by_mode(const struct dt_record *d, char *why, size_t cap)
{
	const struct dt_pathinfo *p = &d->p[0];
	/* unknown mount flags could hide a read-only mount; a directory the
	 * walk could not search is known without them */
	if (!p->has_st || (!(p->st.valid & DT_SF_MOUNT) && !p->search_dir) ||
	    ((p->st.valid & DT_SF_MOUNT) && (p->st.mount_flags & ST_RDONLY)))
		return 0;
	if ((d->err != EACCES && d->err != EPERM) || d->uid == 0)
		return 0; /* root passes mode checks (CAP_DAC_OVERRIDE) */
	if (dt_denied_search(d, why, cap))
		return 1;
	enum dt_need need = dt_op_need(d);
	unsigned want = need == DT_NEED_READ   ? 4
	                : need == DT_NEED_FILE ? 2
	                : need == DT_NEED_RW   ? 6
	                                       : 0;
	if (need == DT_NEED_DIR && (p->st.valid & DT_SF_PARENT)) {
		if (dt_denied_sticky(d, why, cap))
			return 1;
		if (dt_mode_allows(d, p->st.parent_mode, p->st.parent_uid, p->st.parent_gid, 3))
			return 0;
		snprintf(
		    why, cap,
		    "creating or removing an entry needs write and search (wx) on the directory, "
		    "which is mode %04o owned by %u:%u, and the process runs as uid %lld",
		    p->st.parent_mode & 07777, p->st.parent_uid, p->st.parent_gid,
		    (long long)d->uid);
		return 1;
	}
	if (want && (p->st.valid & DT_SF_EXISTS)) {
		if (dt_mode_allows(d, p->st.mode, p->st.uid, p->st.gid, want))
			return dt_created_since(d, why, cap);
		snprintf(why, cap,
		         "it needs %s on the file; the file is mode %04o owned by %u:%u and the "
		         "process runs as uid %lld",
		         dt_want_words[want], p->st.mode & 07777, p->st.uid, p->st.gid,
		         (long long)d->uid);
		return 1;
	}
	if (need == DT_NEED_OWNER && (p->st.valid & DT_SF_EXISTS) &&
	    p->st.uid != (uint32_t)d->uid) {
		snprintf(why, cap,
		         "the file belongs to uid %u and only its owner may change it (process uid "
		         "%lld)",
		         p->st.uid, (long long)d->uid);
		return 1;
	}
	return 0;
}
