/* SPDX-License-Identifier: MIT */
/*
 * Classification: the rules of causes.def, tried in its order (the
 * contract); the first that matches wins. Each rule below fills the
 * verdict: cause, reason and advice in the user's terms.
 */
#include "classify.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "classify_cache.h"
#include "modebits.h"
#include "names.h"
#include "recfmt.h"
#include "sqlite_role.h"

static const char *const cause_names[DT_CAUSE_COUNT] = {
#define DT_CAUSE(id, name, rule, by_mounts, meaning, title, doc) name,
#include "causes.def"
#undef DT_CAUSE
};

static const char *const cause_meanings[DT_CAUSE_COUNT] = {
#define DT_CAUSE(id, name, rule, by_mounts, meaning, title, doc) meaning,
#include "causes.def"
#undef DT_CAUSE
};

static const char *const cause_titles[DT_CAUSE_COUNT] = {
#define DT_CAUSE(id, name, rule, by_mounts, meaning, title, doc) title,
#include "causes.def"
#undef DT_CAUSE
};

const char *dt_cause_name(enum dt_cause c)
{
	return c < DT_CAUSE_COUNT ? cause_names[c] : "unknown";
}

const char *dt_cause_meaning(enum dt_cause c)
{
	return c < DT_CAUSE_COUNT ? cause_meanings[c] : cause_meanings[DT_CAUSE_UNKNOWN];
}

const char *dt_cause_title(enum dt_cause c)
{
	return c < DT_CAUSE_COUNT ? cause_titles[c] : cause_titles[DT_CAUSE_UNKNOWN];
}

int dt_op_is_lock(const char *op)
{
	return op && (!strcmp(op, "fcntl") || !strcmp(op, "fcntl64") || !strcmp(op, "flock"));
}

static int dt_root_granted_to(struct dt_classify_cache *cc, const struct dt_root *root,
                              const struct dt_record *proc)
{
	if (!root)
		return -1;
	if (dt_cc_sandboxed(cc, proc)) {
		const struct dt_mount *m =
		    dt_cc_mount_for_path(cc, proc, root->realpath ? root->realpath : root->path);
		if (m)
			return m->rw;
	}
	return root->granted;
}

static enum dt_need dt_open_need(const struct dt_record *d)
{
	int acc = d->has_flags ? (int)(d->flags & O_ACCMODE) : d->writes ? O_WRONLY : O_RDONLY;
	int trunc = d->has_flags && (d->flags & O_TRUNC);
	if (acc == O_RDWR)
		return DT_NEED_RW;
	return acc == O_WRONLY || trunc ? DT_NEED_FILE : DT_NEED_READ;
}

enum dt_need dt_op_need(const struct dt_record *d)
{
	const char *op = d->op ? d->op : "";
	int exists = d->p[0].has_st && (d->p[0].st.valid & DT_SF_EXISTS);
	if (strstr(op, "open") || !strncmp(op, "creat", 5))
		return exists ? dt_open_need(d) : DT_NEED_DIR;
	if (strstr(op, "chmod") || strstr(op, "chown") || strstr(op, "utime") ||
	    strstr(op, "futimens"))
		return DT_NEED_OWNER;
	if (strstr(op, "truncate") || strstr(op, "access"))
		return DT_NEED_FILE;
	if (dt_op_is_lock(op))
		return DT_NEED_NONE;
	return DT_NEED_DIR; /* mkdir, unlink, rmdir, rename, link, symlink, mknod */
}

/* Sure that no sandbox was there for this process and path: the mount
 * over the path is read-write, no seccomp filter, and no_new_privs off,
 * without which an unprivileged process cannot enter a Landlock domain
 * (root could, holding CAP_SYS_ADMIN: never sure for uid 0). */
static int dt_no_sandbox(struct dt_classify_cache *cc, const struct dt_record *d,
                         const struct dt_record *proc, const char *real)
{
	if (!proc || !proc->has_seccomp || proc->seccomp != 0 || proc->no_new_privs || d->uid == 0)
		return 0;
	const struct dt_mount *m = dt_cc_mount_for_path(cc, proc, real);
	if (m && !m->rw)
		return 0;
	return !(d->p[0].has_st && (d->p[0].st.valid & DT_SF_MOUNT) &&
	         (d->p[0].st.mount_flags & ST_RDONLY));
}

static const char *dt_parent(const char *path, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s", path ? path : "");
	char *slash = strrchr(buf, '/');
	if (slash && slash != buf)
		*slash = 0;
	else if (slash)
		slash[1] = 0;
	return buf;
}

/* The directory the sandbox must make writable for this op: creating,
 * removing or renaming an entry needs the parent; chmod, chown, utime,
 * truncate or writing an existing directory need the path's own mount,
 * which granting the path itself gives; for an existing file, its
 * directory (the usual root) does too. */
static const char *dt_need_target(const struct dt_record *d, const char *path, char *buf,
                                  size_t cap)
{
	const struct dt_stat_facts *st = d->p[0].has_st ? &d->p[0].st : NULL;
	int is_dir = st && (st->valid & DT_SF_EXISTS) && S_ISDIR(st->mode);
	if (dt_op_need(d) != DT_NEED_DIR && is_dir) {
		snprintf(buf, cap, "%s", path);
		return buf;
	}
	return dt_parent(path, buf, cap);
}

/* Which sandbox refused it, as far as the ring shows: advice speaks its
 * language. Codex only when the ring shows Codex. */
enum dt_sandbox_kind { DT_SBX_UNKNOWN, DT_SBX_CODEX, DT_SBX_BWRAP, DT_SBX_LANDLOCK };

static enum dt_sandbox_kind dt_sandbox_kind(struct dt_classify_cache *cc,
                                            const struct dt_rootset *rs,
                                            const struct dt_record *proc)
{
	if (rs->codex_sandbox_mode)
		return DT_SBX_CODEX;
	if (dt_cc_sandboxed(cc, proc))
		return DT_SBX_BWRAP; /* "/" read-only: bubblewrap's way */
	if (proc && proc->no_new_privs)
		return DT_SBX_LANDLOCK; /* "/" writable, yet confined */
	return DT_SBX_UNKNOWN;
}

/* How to grant dir in that sandbox, in parentheses, into out. */
static void dt_word_grant_hint(struct dt_classify_cache *cc, const struct dt_rootset *rs,
                               const struct dt_record *proc, int err, const char *dir, char *out,
                               size_t cap)
{
	char hint[PATH_MAX + 256];
	switch (dt_sandbox_kind(cc, rs, proc)) {
	case DT_SBX_CODEX:
		dt_codex_grant_hint(rs, dir, hint, sizeof(hint));
		snprintf(out, cap, " (%s)", hint);
		break;
	case DT_SBX_BWRAP:
		/* words a user pastes: dir is as the traced program named it */
		dt_shell_word_str(hint, sizeof(hint), dir);
		snprintf(out, cap, " (bubblewrap: --bind %s %s after --ro-bind / /)", hint, hint);
		break;
	case DT_SBX_LANDLOCK:
		snprintf(
		    out, cap,
		    " (Landlock: a path-beneath rule for %s with the write rights: WRITE_FILE, "
		    "TRUNCATE, MAKE_*, REMOVE_*)",
		    dir);
		break;
	default:
		snprintf(out, cap, " (it was refused with %s: %s)", dt_errno_name(err),
		         err == EROFS ? "a read-only mount over it"
		                      : "a sandbox rule or a security module");
	}
}

/* dt_word_grant_hint, worded once per process, errno and directory: the
 * words depend on nothing else (the roots are the report's). Worded into a
 * buffer as large as any caller's, so a copy cut to cap is the same text
 * as words cut to cap. */
static void dt_grant_hint(struct dt_classify_cache *cc, const struct dt_rootset *rs,
                          const struct dt_record *proc, int err, const char *dir, char *out,
                          size_t cap)
{
	char words[PATH_MAX + 512];
	const char *kept = dt_cc_hint(cc, proc, err, dir);
	if (!kept) {
		dt_word_grant_hint(cc, rs, proc, err, dir, words, sizeof(words));
		dt_cc_hint_keep(cc, proc, err, dir, words);
		kept = words;
	}
	snprintf(out, cap, "%s", kept);
}

/* Does the launch's config.toml (or -p layer) hold a writable_roots list a
 * -c list could replace? */
static int dt_codex_config_has_roots(const struct dt_rootset *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].kind == DT_ROOT_CODEX && rs->v[i].source &&
		    strstr(rs->v[i].source, "config.toml") &&
		    strstr(rs->v[i].source, "writable_roots"))
			return 1;
	return 0;
}

static void dt_advise_grant(struct dt_classify_cache *cc, const struct dt_root *root,
                            const char *dir, const struct dt_rootset *rs, const struct dt_record *d,
                            const struct dt_record *proc, char *out, size_t cap)
{
	char hint[PATH_MAX + 512];
	size_t n = (size_t)snprintf(out, cap, "Make %s writable in the sandbox", dir);
	if (root && root->knob)
		snprintf(hint, sizeof(hint), " (%s)", root->knob);
	else
		dt_grant_hint(cc, rs, proc, d->err, dir, hint, sizeof(hint));
	if (n < cap)
		n += (size_t)snprintf(out + n, cap - n, "%s.", hint);
	if (root && root->dropped_by && strstr(root->dropped_by, "={") && n < cap)
		n += (size_t)snprintf(
		    out + n, cap - n,
		    " It was set by %s, but the later %s replaced that whole table "
		    "(a -c table value wipes what earlier -c flags set in it), so "
		    "the list was lost.",
		    root->source, root->dropped_by);
	else if (root && root->dropped_by && root->source && !strncmp(root->source, "-c ", 3) &&
	         n < cap)
		n += (size_t)snprintf(out + n, cap - n,
		                      " It was passed as %s, but the later %s replaced it: the "
		                      "last -c for a key wins and lists do not merge, so one "
		                      "override must hold every root.",
		                      root->source, root->dropped_by);
	else if (root && root->dropped_by && strncmp(root->dropped_by, "-c ", 3) && n < cap)
		n += (size_t)snprintf(out + n, cap - n,
		                      " It was configured, but the profile layer %s (codex -p) "
		                      "gives its own writable_roots, which replace config.toml's "
		                      "rather than add to them.",
		                      root->dropped_by);
	else if (root && root->dropped_by && n < cap)
		n += (size_t)snprintf(
		    out + n, cap - n,
		    " It was configured, but %s replaced the configured list: a -c "
		    "list override does not merge, so it must repeat every root.",
		    root->dropped_by);
	else if (rs->codex_override && dt_codex_config_has_roots(rs) && n < cap)
		snprintf(
		    out + n, cap - n,
		    " Note: %s replaces writable_roots from config.toml rather than adding to it.",
		    rs->codex_override);
}

/* Was the process in some sandbox: read-only "/" (bubblewrap, Codex), or
 * no_new_privs, which Landlock and unprivileged seccomp filters need? */
static int dt_proc_confined(struct dt_classify_cache *cc, const struct dt_record *proc)
{
	return proc && (dt_cc_sandboxed(cc, proc) || proc->no_new_privs);
}

/* What the rules look at, worked out once per refusal. */
struct dt_cls {
	const struct dt_record *d, *proc;
	const struct dt_rootset *rs;
	const struct dt_classify_ctx *ctx;
	struct dt_classify_cache *cc; /* ctx's, or NULL */
	const char *abspath, *real, *shown, *op;
	const struct dt_root *lroot, *rroot; /* roots of the logical and the real path */
	int sandboxed;
	int no_sandbox; /* sure that no sandbox was there (dt_no_sandbox) */
};

/* Did this look like a sandbox's refusal rather than the filesystem's? */
static int dt_sandbox_like(const struct dt_cls *c)
{
	const struct dt_record *d = c->d;
	int sandbox_like = d->err == EROFS || d->err == EXDEV || c->sandboxed ||
	                   (d->p[0].has_st && (d->p[0].st.valid & DT_SF_MOUNT) &&
	                    (d->p[0].st.mount_flags & ST_RDONLY));
	/* EACCES on a rw mount that the mode bits allow is a Landlock-style refusal */
	if (!sandbox_like && (d->err == EACCES || d->err == EPERM) && d->p[0].has_st &&
	    (d->p[0].st.valid & DT_SF_MOUNT))
		sandbox_like = 1;
	return sandbox_like;
}

/* The rules, in causes.def's order: each fills v and returns 1 when it
 * matches. */
static int dt_rule_injected(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *d = c->d;
	const char *op = c->op;
	if (d->injected) {
		v->cause = DT_CAUSE_INJECTED;
		snprintf(v->reason, sizeof(v->reason), "a --deny rule refused %s with %s", op,
		         dt_errno_name(d->err));
		snprintf(v->advice, sizeof(v->advice),
		         "Check that the worker handles this failure; nothing to change in the "
		         "sandbox.");
		return 1;
	}
	return 0;
}

/* The supervisor's no_new_privs kept a set-id program from its ids: a
 * refusal by permissions is then denytrace's doing, never the file's. A
 * read-only mount or a sandbox (EROFS, EXDEV) refuses the privileged too. */
static int dt_rule_setid_lost(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *d = c->d, *e = c->ctx ? c->ctx->setid_lost : NULL;
	if (!e || (d->err != EACCES && d->err != EPERM))
		return 0;
	v->cause = DT_CAUSE_SETID_LOST;
	snprintf(v->reason, sizeof(v->reason),
	         "%s ran %s, a set-id program that would have run as uid %lld, without that "
	         "privilege: denytrace's seccomp supervisor (--watch-exec, --deny) set "
	         "no_new_privs, so %s was refused with %s as uid %lld",
	         d->comm ? d->comm : "the process", e->exe ? e->exe : "?", (long long)e->setid_euid,
	         c->op, dt_errno_name(d->err), (long long)d->uid);
	snprintf(v->advice, sizeof(v->advice),
	         "Nothing to change: denytrace caused this refusal. Run without --watch-exec "
	         "and --deny (or as root) to see the program with its privilege.");
	return 1;
}

static int dt_rule_lock_contention(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *d = c->d;
	const char *shown = c->shown;
	const char *op = c->op;
	if (dt_op_is_lock(d->op) && (d->err == EACCES || d->err == EAGAIN)) {
		v->cause = DT_CAUSE_LOCK_CONTENTION;
		snprintf(v->reason, sizeof(v->reason),
		         "%s returned %s: another process holds a conflicting lock on %s", op,
		         dt_errno_name(d->err), shown);
		snprintf(
		    v->advice, sizeof(v->advice),
		    "Not a sandbox refusal. If it persists, find the lock holder (SQLite: a long "
		    "transaction; raise busy_timeout).");
		return 1;
	}
	return 0;
}

/* EXDEV because the two paths sit on different mounts, as this process
 * sees them (two bind mounts of one filesystem count). Not Landlock's refer
 * right, which refuses within one mount. */
static int dt_rule_cross_mount(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *d = c->d;
	const struct dt_record *proc = c->proc;
	const char *real = c->real;
	const char *shown = c->shown;
	const char *op = c->op;
	char dir[4096];
	if (d->err == EXDEV && proc && d->p[1].realpath && real) {
		char dir2[4096];
		const struct dt_mount *m1 =
		    dt_cc_mount_for_path(c->cc, proc, dt_parent(real, dir, sizeof(dir)));
		const struct dt_mount *m2 = dt_cc_mount_for_path(
		    c->cc, proc, dt_parent(d->p[1].realpath, dir2, sizeof(dir2)));
		if (m1 && m2 && m1 != m2) {
			v->cause = DT_CAUSE_CROSS_MOUNT;
			snprintf(v->reason, sizeof(v->reason),
			         "%s returned EXDEV: %s is on the mount at %s and %s on the mount "
			         "at %s, and a rename or link cannot cross mounts",
			         op, shown, m1->path, d->p[1].realpath, m2->path);
			snprintf(
			    v->advice, sizeof(v->advice),
			    "Not a sandbox refusal. Programs that move files fall back to copy "
			    "and delete (mv does); one that does not must, or keep both paths "
			    "on one mount (in a sandbox: under the same bind).");
			return 1;
		}
	}
	return 0;
}

/* EXDEV between two directories of one mount: not the kernel's mount rule
 * (cross-mount, above) but Landlock's, which moves a file to another
 * directory only with REFER handled and granted under both. Landlock needs
 * no_new_privs unless the caller is privileged. */
static int dt_rule_landlock_refer(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *d = c->d, *proc = c->proc;
	const char *to = d->p[1].realpath;
	char from_dir[4096], to_dir[4096];
	if (d->err != EXDEV || !proc || !to || !c->real || (!proc->no_new_privs && d->uid != 0))
		return 0;
	dt_parent(c->real, from_dir, sizeof(from_dir));
	dt_parent(to, to_dir, sizeof(to_dir));
	const struct dt_mount *m = dt_cc_mount_for_path(c->cc, proc, from_dir);
	if (!m || m != dt_cc_mount_for_path(c->cc, proc, to_dir) || !strcmp(from_dir, to_dir))
		return 0;
	v->cause = DT_CAUSE_LANDLOCK_REFER;
	v->missing_right = "refer";
	snprintf(v->reason, sizeof(v->reason),
	         "%s returned EXDEV moving %s to %s: both directories are on the mount at %s, "
	         "so it is Landlock refusing to move a file between directories without its "
	         "REFER right (a ruleset for ABI 1 can never grant it)",
	         c->op, c->shown, to, m->path);
	snprintf(v->subject, sizeof(v->subject), "%s", v->root ? v->root->path : from_dir);
	snprintf(v->advice, sizeof(v->advice),
	         "Handle LANDLOCK_ACCESS_FS_REFER in the ruleset (Landlock ABI 2 or later) and "
	         "grant it, with the write rights, in the path-beneath rule for %s, which "
	         "holds both %s and %s; or have the program copy and delete, as mv does.",
	         v->subject, from_dir, to_dir);
	return 1;
}

/* The inode flag that refused d, on its path or (for an entry made,
 * removed or renamed) its directory: 'i' immutable, 'a' append-only, 0
 * none; *on_dir says which. An append-only file still opens for
 * appending, and an append-only directory still takes new entries. */
char dt_refusing_inode_flag(const struct dt_record *d, int *on_dir)
{
	const char *op = d->op ? d->op : "";
	int appends = d->has_flags && (d->flags & O_APPEND) && strstr(op, "open");
	int removes = strstr(op, "unlink") || strstr(op, "rmdir") || strstr(op, "remove") ||
	              strstr(op, "rename");
	*on_dir = 0;
	if (d->has_iflags && (d->iflags & FS_IMMUTABLE_FL))
		return 'i';
	if (d->has_iflags && (d->iflags & FS_APPEND_FL) && !appends)
		return 'a';
	if (dt_op_need(d) != DT_NEED_DIR || !d->has_dir_iflags)
		return 0;
	*on_dir = 1;
	if (d->dir_iflags & FS_IMMUTABLE_FL)
		return 'i';
	return (d->dir_iflags & FS_APPEND_FL) && removes ? 'a' : 0;
}

/* chattr +i or +a refuses root as well, before any mode bit or sandbox is
 * asked: whatever else the record shows, this is the reason. */
static int dt_rule_immutable_file(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *d = c->d;
	int on_dir;
	char flag = d->err == EPERM ? dt_refusing_inode_flag(d, &on_dir) : 0;
	char dir[4096], word[PATH_MAX + 8];
	if (!flag)
		return 0;
	const char *path = c->real ? c->real : c->shown;
	const char *what = flag == 'i' ? "immutable" : "append-only";
	v->cause = DT_CAUSE_IMMUTABLE_FILE;
	snprintf(v->subject, sizeof(v->subject), "%s",
	         on_dir ? dt_parent(path, dir, sizeof(dir)) : path);
	snprintf(v->reason, sizeof(v->reason),
	         "%s refused %s with EPERM: %s %s is %s (chattr +%c, read when it was refused), "
	         "which refuses root and every user alike",
	         c->op, c->shown, on_dir ? "its directory" : "the file", v->subject, what, flag);
	dt_shell_word_str(word, sizeof(word), v->subject);
	snprintf(v->advice, sizeof(v->advice),
	         "If %s is meant to change, clear the attribute as root: chattr -%c %s (lsattr "
	         "shows it); no sandbox or mode bit is involved.",
	         on_dir ? "the directory" : "the file", flag, word);
	return 1;
}

/* No sandbox, and the mode bits allow it: whatever refused it, it was not
 * a sandbox, and no cause that blames one may be given. */
static int dt_rule_no_sandbox(const struct dt_cls *c, struct dt_verdict *v)
{
	if (!c->no_sandbox)
		return 0;
	v->cause = DT_CAUSE_UNKNOWN;
	v->granted = -1;
	snprintf(
	    v->reason, sizeof(v->reason),
	    "%s refused %s with %s and no sandbox (no read-only mount over it, no Landlock, no "
	    "seccomp filter), while the mode bits allow uid %lld",
	    c->op, c->shown, dt_errno_name(c->d->err), (long long)c->d->uid);
	snprintf(v->advice, sizeof(v->advice),
	         "Look at ACLs (getfacl), file attributes (lsattr: immutable, append-only) and "
	         "security modules (AppArmor, SELinux) for %s; the sandbox is not involved.",
	         c->shown);
	return 1;
}

static int dt_rule_file_permissions(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *d = c->d;
	const char *shown = c->shown;
	char why[512];
	char dir[4096];
	if (dt_denied_by_mode(d, why, sizeof(why))) {
		v->cause = DT_CAUSE_FILE_PERMISSIONS;
		snprintf(v->reason, sizeof(v->reason), "%s was refused with %s%s: %s", shown,
		         dt_errno_name(d->err),
		         c->no_sandbox
		             ? " and no sandbox (no read-only mount over it, no Landlock, "
		               "no seccomp filter)"
		             : " on a read-write mount",
		         why);
		snprintf(v->subject, sizeof(v->subject), "%s",
		         d->p[0].search_dir             ? d->p[0].search_dir
		         : dt_op_need(d) == DT_NEED_DIR ? dt_parent(shown, dir, sizeof(dir))
		                                        : shown);
		snprintf(v->advice, sizeof(v->advice),
		         "Fix ownership or mode (chown/chmod %s) or run the worker as the owner; "
		         "the sandbox is not involved.",
		         v->subject);
		return 1;
	}
	/* not the mode bits, and no sandbox either: no sandbox cause below
	 * may be given */
	return dt_rule_no_sandbox(c, v);
}

/* The sandbox rules below decide by the mount table: with part of it
 * missing, a root seen as not granted may be granted by a mount left out. */
static int dt_rule_mounts_incomplete(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *proc = c->proc;
	if (!proc || !proc->mounts_trunc || !dt_sandbox_like(c))
		return 0;
	v->cause = DT_CAUSE_UNKNOWN;
	snprintf(v->reason, sizeof(v->reason),
	         "mount table incomplete: the process record of pid %lld holds only %zu of its "
	         "mounts, so whether the sandbox made %s writable is not known",
	         (long long)proc->pid, proc->nmounts, c->shown);
	snprintf(v->advice, sizeof(v->advice),
	         "List the writable mounts inside the sandbox (grep -w rw /proc/self/mountinfo) "
	         "and check that one contains %s.",
	         c->shown);
	return 1;
}

static int dt_rule_read_only_sandbox(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *proc = c->proc;
	const struct dt_rootset *rs = c->rs;
	const char *shown = c->shown;
	int sandboxed = c->sandboxed;
	char dir[4096];
	if (sandboxed && !dt_cc_has_writable_mount(c->cc, proc)) {
		v->cause = DT_CAUSE_READ_ONLY_SANDBOX;
		snprintf(v->reason, sizeof(v->reason),
		         "the process sees the whole filesystem read-only: the sandbox granted no "
		         "writable root%s%s%s",
		         rs->codex_sandbox_mode ? " (codex sandbox mode " : "",
		         rs->codex_sandbox_mode ? rs->codex_sandbox_mode : "",
		         rs->codex_sandbox_mode ? ")" : "");
		dt_need_target(c->d, shown, dir, sizeof(dir));
		if (rs->codex_sandbox_mode)
			snprintf(
			    v->advice, sizeof(v->advice),
			    "Run the worker in workspace-write mode (codex -s workspace-write, or "
			    "sandbox_mode = \"workspace-write\" in config.toml) with %s among its "
			    "roots.",
			    dir);
		else {
			char hint[PATH_MAX + 512];
			dt_grant_hint(c->cc, rs, proc, c->d->err, dir, hint, sizeof(hint));
			snprintf(v->advice, sizeof(v->advice),
			         "Give the sandbox a writable root for %s%s.", dir, hint);
		}
		return 1;
	}
	return 0;
}

/* A read-only subpath known from Codex, or a ro mount over a rw one. */
static int dt_rule_protected_path(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *proc = c->proc;
	const struct dt_rootset *rs = c->rs;
	const char *abspath = c->abspath;
	const char *real = c->real;
	const char *shown = c->shown;
	const struct dt_root *prot =
	    abspath ? dt_root_for_path(rs, abspath, DT_EXPECTED_KINDS, 1) : NULL;
	if (prot && !prot->readonly_sub)
		prot = NULL;
	const struct dt_mount *deep = dt_cc_mount_for_path(c->cc, proc, real);
	int ro_submount = 0;
	/* a root that is itself read-only (or inside a read-only mount) was
	 * not granted: root-not-granted says so */
	const char *root_real =
	    v->root ? (v->root->realpath ? v->root->realpath : v->root->path) : NULL;
	if (deep && !deep->rw && strcmp(deep->path, "/") &&
	    !(root_real && dt_path_under(root_real, deep->path))) {
		/* is there a rw mount above it? */
		for (size_t i = 0; proc && i < proc->nmounts; i++)
			if (proc->mounts[i].rw && !dt_mount_is_pseudo(&proc->mounts[i]) &&
			    dt_path_under(deep->path, proc->mounts[i].path) &&
			    strcmp(deep->path, proc->mounts[i].path))
				ro_submount = 1;
	}
	if (prot || ro_submount) {
		v->cause = DT_CAUSE_PROTECTED_PATH;
		/* The root it is protected inside: the expected one, else the
		 * writable mount the read-only one sits in. It was granted;
		 * only the subpath was not. */
		if (!v->root && !prot && deep && deep->path[1]) {
			char above[4096];
			v->root = dt_root_for_path(rs, dt_parent(deep->path, above, sizeof(above)),
			                           1u << DT_ROOT_EFFECTIVE, 0);
		}
		if (v->root && !prot)
			v->granted = 1;
		if (prot)
			snprintf(v->reason, sizeof(v->reason),
			         "%s is inside %s, which stays read-only (%s)", shown, prot->path,
			         prot->source);
		else
			snprintf(v->reason, sizeof(v->reason),
			         "%s is under %s, a read-only mount inside a writable root", shown,
			         deep->path);
		snprintf(v->subject, sizeof(v->subject), "%s", prot ? prot->path : deep->path);
		snprintf(
		    v->advice, sizeof(v->advice),
		    "Write somewhere else: %s is kept read-only on purpose (Codex protects .git, "
		    ".codex, .agents and .aws inside writable roots).",
		    v->subject);
		return 1;
	}
	return 0;
}

static int dt_rule_symlink_mismatch(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *proc = c->proc;
	const char *abspath = c->abspath;
	const char *real = c->real;
	const struct dt_root *lroot = c->lroot;
	const struct dt_root *rroot = c->rroot;
	char dir[4096];
	if (abspath && real && strcmp(abspath, real) && lroot != rroot &&
	    !(lroot && rroot && !strcmp(lroot->path, rroot->path))) {
		v->cause = DT_CAUSE_SYMLINK_MISMATCH;
		v->root = lroot ? lroot : rroot;
		v->granted = dt_root_granted_to(c->cc, v->root, proc);
		snprintf(
		    v->reason, sizeof(v->reason),
		    "%s resolves to %s: the logical path is under %s but the real one is under %s; "
		    "sandboxes bind real paths",
		    abspath, real, lroot ? lroot->path : "no root",
		    rroot ? rroot->path : "no root");
		snprintf(v->subject, sizeof(v->subject), "%s", dt_parent(real, dir, sizeof(dir)));
		snprintf(v->advice, sizeof(v->advice),
		         "Name the resolved directory %s as the root (or avoid the symlink): a "
		         "root given "
		         "through a symlink does not cover the path it points to.",
		         v->subject);
		return 1;
	}
	return 0;
}

static int dt_rule_sqlite_side_file(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *d = c->d;
	const struct dt_rootset *rs = c->rs;
	const struct dt_classify_ctx *ctx = c->ctx;
	const char *real = c->real;
	const char *shown = c->shown;
	const char *op = c->op;
	char dir[4096];
	const char *sfx = dt_sqlite_suffix(d->sqlite);
	if (sfx && d->writes && !dt_op_is_lock(d->op) && ctx && ctx->db_writable == 1) {
		v->cause = DT_CAUSE_SQLITE_SIDE_FILE;
		/* the directory the side file goes in was refused: not granted */
		if (v->root && v->granted == -1 && dt_sandbox_like(c) &&
		    dt_proc_confined(c->cc, c->proc))
			v->granted = 0;
		dt_parent(real ? real : shown, dir, sizeof(dir));
		snprintf(
		    v->reason, sizeof(v->reason),
		    "SQLite could not %s its %s file %s: the database itself was writable%s%s%s, "
		    "but its directory %s is not, and SQLite creates and deletes %s files there",
		    strstr(op, "unlink") || strstr(op, "rmdir") || strstr(op, "remove") ? "remove"
		    : dt_op_need(d) == DT_NEED_DIR                                      ? "create"
		                                                                        : "write",
		    d->sqlite, shown, ctx->db_writable_why ? " (" : "",
		    ctx->db_writable_why ? ctx->db_writable_why : "",
		    ctx->db_writable_why ? ")" : "", dir, sfx);
		snprintf(v->subject, sizeof(v->subject), "%s", dir);
		dt_advise_grant(c->cc, v->root, dir, rs, c->d, c->proc, v->advice,
		                sizeof(v->advice));
		return 1;
	}
	return 0;
}

static int dt_rule_root_not_granted(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_rootset *rs = c->rs;
	const char *shown = c->shown;
	int sandbox_like = dt_sandbox_like(c);
	if (v->root && (v->granted == 0 || (v->granted == -1 && sandbox_like))) {
		v->cause = DT_CAUSE_ROOT_NOT_GRANTED;
		snprintf(v->reason, sizeof(v->reason), "%s is under %s (%s), which %s", shown,
		         v->root->path, v->root->source,
		         v->root->dropped_by ? "an override dropped from the sandbox's roots"
		         : v->granted == 0   ? "the sandbox did not make writable"
		                             : "was refused like a root the sandbox did not grant");
		snprintf(v->subject, sizeof(v->subject), "%s", v->root->path);
		/* no mount says (Landlock): a confined process refused a
		 * write there is what not granting it means */
		if (dt_proc_confined(c->cc, c->proc))
			v->granted = 0;
		dt_advise_grant(c->cc, v->root, v->root->path, rs, c->d, c->proc, v->advice,
		                sizeof(v->advice));
		return 1;
	}
	return 0;
}

static int dt_rule_outside_roots(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *d = c->d;
	const struct dt_rootset *rs = c->rs;
	const char *real = c->real;
	const char *shown = c->shown;
	int sandbox_like = dt_sandbox_like(c);
	char dir[4096];
	if (!v->root && sandbox_like) {
		v->cause = DT_CAUSE_OUTSIDE_ROOTS;
		dt_need_target(d, real ? real : shown, dir, sizeof(dir));
		snprintf(v->subject, sizeof(v->subject), "%s", dir);
		snprintf(
		    v->reason, sizeof(v->reason),
		    "%s is outside every expected root%s; the sandbox refused it with %s", shown,
		    rs->n ? "" : " (none were derived: pass --root or the Codex/Hermes/hcom facts)",
		    dt_errno_name(d->err));
		size_t n =
		    (size_t)snprintf(v->advice, sizeof(v->advice),
		                     "Either make the worker write under one of its roots, or "
		                     "add %s as a root",
		                     dir);
		char hint[PATH_MAX + 512];
		dt_grant_hint(c->cc, rs, c->proc, d->err, dir, hint, sizeof(hint));
		if (n < sizeof(v->advice))
			snprintf(v->advice + n, sizeof(v->advice) - n, "%s.", hint);
		return 1;
	}
	return 0;
}

static int dt_rule_unknown(const struct dt_cls *c, struct dt_verdict *v)
{
	const struct dt_record *d = c->d;
	const char *shown = c->shown;
	const char *op = c->op;
	v->cause = DT_CAUSE_UNKNOWN;
	if (d->err == EXDEV)
		snprintf(
		    v->reason, sizeof(v->reason),
		    "%s returned EXDEV: the sandbox forbids moving files between these directories "
		    "(Landlock's refer right) or they are different filesystems",
		    op);
	else if (v->root)
		snprintf(
		    v->reason, sizeof(v->reason),
		    "%s is under %s (%s), which the sandbox granted, yet %s refused it with %s",
		    shown, v->root->path, v->root->source, op, dt_errno_name(d->err));
	else
		snprintf(v->reason, sizeof(v->reason),
		         "%s refused %s with %s outside any sandbox facts", op, shown,
		         dt_errno_name(d->err));
	snprintf(v->advice, sizeof(v->advice),
	         "Check the mount (read-only filesystem?), ACLs and security modules for %s.",
	         shown);
	return 1;
}

/* causes.def's rules, in its order. */
static const struct {
	int (*rule)(const struct dt_cls *c, struct dt_verdict *v);
	int by_mounts;
} dt_rules[DT_CAUSE_COUNT] = {
#define DT_CAUSE(id, name, rule, by_mounts, meaning, title, doc) {rule, by_mounts},
#include "causes.def"
#undef DT_CAUSE
};

void dt_classify(const struct dt_record *d, const struct dt_record *proc,
                 const struct dt_rootset *rs, const struct dt_classify_ctx *ctx,
                 struct dt_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->granted = -1;
	struct dt_cls c = {d, proc, rs, ctx};
	c.abspath = d->p[0].abspath ? d->p[0].abspath : d->p[0].realpath;
	c.real = d->p[0].realpath ? d->p[0].realpath : c.abspath;
	c.shown = c.abspath ? c.abspath : d->p[0].path ? d->p[0].path : "(unknown path)";
	c.op = d->op ? d->op : ""; /* a ring is outside input: any field may be absent */
	c.lroot = c.abspath ? dt_root_for_path(rs, c.abspath, DT_EXPECTED_KINDS, 0) : NULL;
	c.rroot = c.real ? dt_root_for_path(rs, c.real, DT_EXPECTED_KINDS, 0) : NULL;
	c.cc = ctx ? ctx->cache : NULL;
	c.sandboxed = dt_cc_sandboxed(c.cc, proc);
	c.no_sandbox = dt_no_sandbox(c.cc, d, proc, c.real);
	v->root = c.lroot ? c.lroot : c.rroot;
	/* Whether the root was granted, as the refusing process's own mounts
	 * say: one run may hold several sandboxes, and a root granted to one
	 * was not granted to another. */
	v->granted = dt_root_granted_to(c.cc, v->root, proc);

	/* before the first rule that judges by mounts, a mount table that
	 * did not fit in its record makes the cause unknown */
	int mounts_checked = 0;
	for (int i = 0; i < DT_CAUSE_COUNT; i++) {
		if (dt_rules[i].by_mounts && !mounts_checked++ && dt_rule_mounts_incomplete(&c, v))
			return;
		if (dt_rules[i].rule(&c, v))
			return;
	}
}
