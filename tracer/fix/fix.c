/* SPDX-License-Identifier: MIT */
/* The change that fixes a finding, and the command line with it (fix.h). */
#include "fix.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "codexargs.h"
#include "fix_int.h"
#include "mounts.h"
#include "names.h"
#include "recfmt.h"
#include "roots_int.h"

const char *dt_fix_kind_name(enum dt_fix_kind k)
{
	static const char *const names[] = {"command-line", "outside-command-line", "program",
	                                    "none"};
	return k <= DT_FIX_NONE ? names[k] : "none";
}

const char *dt_fix_sandbox_name(enum dt_fix_sandbox s)
{
	static const char *const names[] = {"none", "codex", "bubblewrap", "landlock"};
	return s <= DT_SB_LANDLOCK ? names[s] : "none";
}

/* ---- argv vectors ---- */

void fix_copy(struct dt_fix *f, const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		dt_out_of_memory();
	va_end(ap);
	f->copy = xrealloc(f->copy, (f->ncopy + 1) * sizeof(*f->copy));
	f->copy[f->ncopy++] = s;
}

static void fix_grant(struct dt_fix *f, const char *dir)
{
	f->grants = xrealloc(f->grants, (f->ngrants + 1) * sizeof(*f->grants));
	f->grants[f->ngrants++] = xstrdup(dir);
}

void fix_set(char **field, const char *fmt, ...)
{
	va_list ap;
	free(*field);
	va_start(ap, fmt);
	if (vasprintf(field, fmt, ap) < 0)
		dt_out_of_memory();
	va_end(ap);
}

/* A finding whose change would touch what dt_fix_forbidden names. */
static void fix_refused(struct dt_fix *f, const char *what, const char *dir, const char *reason)
{
	for (size_t i = 0; i < f->ngrants; i++)
		free(f->grants[i]);
	for (size_t i = 0; i < f->ncopy; i++)
		free(f->copy[i]);
	f->ngrants = f->ncopy = 0;
	free(f->change);
	f->change = NULL;
	free(f->disk.path);
	f->disk.path = NULL;
	f->kind = DT_FIX_NONE;
	fix_set(&f->why, "no command: it would %s %s, and %s", what, dir, reason);
}

/* Did a sandbox refuse (not the mode bits of a writable mount)? */
static int refused_by_sandbox(const struct dt_fix_problem *p)
{
	const struct dt_record *d = p->nrefusals ? p->refusals[0] : NULL;
	if (!d)
		return 1;
	if (d->err == EROFS || dt_proc_sandboxed(p->proc))
		return 1;
	return d->p[0].has_st && (d->p[0].st.valid & DT_SF_MOUNT) &&
	       (d->p[0].st.mount_flags & ST_RDONLY);
}

/* The directory a grant problem needs writable, or NULL when the problem
 * is not one a root grant fixes. */
static const char *grant_dir(const struct dt_fix_problem *p)
{
	/* nobody's root: the directory the refused calls needed (a candidate) */
	if (p->cause == DT_CAUSE_OUTSIDE_ROOTS && !p->root)
		return p->subject && p->subject[0] == '/' ? p->subject : NULL;
	if (!p->root)
		return NULL;
	switch (p->cause) {
	case DT_CAUSE_ROOT_NOT_GRANTED:
	case DT_CAUSE_READ_ONLY_SANDBOX:
		return p->root->path;
	case DT_CAUSE_SYMLINK_MISMATCH:
		/* sandboxes bind real paths: the same directory, named resolved */
		return p->root->realpath ? p->root->realpath : p->root->path;
	case DT_CAUSE_SQLITE_SIDE_FILE:
		return refused_by_sandbox(p) ? p->root->path : NULL;
	default:
		return NULL;
	}
}

/* The permission bits as chmod spells a class's missing ones: "u+wx". */
static void mode_bits(char *out, size_t cap, char cls, unsigned missing)
{
	snprintf(out, cap, "%c+%s%s%s", cls, missing & 4 ? "r" : "", missing & 2 ? "w" : "",
	         missing & 1 ? "x" : "");
}

/* The change f makes on disk: path's new mode and owner (-1: kept). */
static void fix_disk(struct dt_fix *f, const char *path, long mode, long uid)
{
	free(f->disk.path);
	f->disk.path = xstrdup(path);
	f->disk.mode = mode;
	f->disk.uid = uid;
}

/* chmod/chown that gives uid exactly the rights want (2 w, 3 wx) on
 * target (mode, owner, group as recorded). */
static void fix_mode_bits(struct dt_fix *f, const char *target, uint32_t mode, uint32_t owner,
                          uint32_t group, const struct dt_record *d, unsigned want)
{
	unsigned owner_bits = (mode >> 6) & 7, group_bits = (mode >> 3) & 7;
	char bits[16], *q = fix_sh_word(target);
	const char *what = want == 3 ? "create and remove files in" : "write";
	fix_disk(f, target, -1, -1);
	if (owner == (uint32_t)d->uid) {
		f->disk.mode = (long)((mode & 07777) | ((want & ~owner_bits) << 6));
		mode_bits(bits, sizeof(bits), 'u', want & ~owner_bits);
		fix_copy(f, "chmod %s %s", bits, q);
		fix_set(&f->why,
		        "the process (uid %lld) owns %s, mode %04o: the owner bits alone "
		        "let it %s it",
		        (long long)d->uid, target, mode & 07777, what);
	} else if (group == (uint32_t)d->gid) {
		f->disk.mode = (long)((mode & 07777) | ((want & ~group_bits) << 3));
		mode_bits(bits, sizeof(bits), 'g', want & ~group_bits);
		fix_copy(f, "chmod %s %s", bits, q);
		fix_set(&f->why,
		        "the process's group %lld owns %s, mode %04o: the group bits let "
		        "it %s it; others gain nothing",
		        (long long)d->gid, target, mode & 07777, what);
	} else {
		fix_copy(f, "chown %lld %s", (long long)d->uid, q);
		f->disk.uid = (long)d->uid;
		if ((owner_bits & want) != want) {
			f->disk.mode = (long)((mode & 07777) | ((want & ~owner_bits) << 6));
			mode_bits(bits, sizeof(bits), 'u', want & ~owner_bits);
			fix_copy(f, "chmod %s %s", bits, q);
		}
		fix_copy(f, "# or keep the owner: setfacl -m u:%lld:%s %s", (long long)d->uid,
		         want == 3 ? "wx" : "w", q);
		if (owner != 0) /* never "run it as root" */
			fix_copy(f, "# or run the worker as uid %u, the owner", owner);
		fix_set(&f->why,
		        "%s is owned by %u:%u, mode %04o, and the process runs as uid "
		        "%lld outside its group: only that uid gains the right to %s it "
		        "(never o+w)",
		        target, owner, group, mode & 07777, (long long)d->uid, what);
	}
	free(q);
}

/* Whether a mode or owner change of target may be proposed: under the
 * problem's expected root and nothing dt_fix_forbidden names. Says why
 * not in f. */
static int mode_target_ok(struct dt_fix *f, const struct dt_fix_problem *p,
                          const struct dt_fix_launch *l, const char *target)
{
	char buf[PATH_MAX + 128];
	const char *no = dt_fix_forbidden(target, l, buf, sizeof(buf));
	if (no) {
		fix_refused(f, "change the owner or mode of", target, no);
		return 0;
	}
	return fix_target_in_root(f, p, target, "changing its owner or mode");
}

int fix_target_in_root(struct dt_fix *f, const struct dt_fix_problem *p, const char *target,
                       const char *change)
{
	if (!p->root) {
		f->kind = DT_FIX_NONE;
		fix_set(&f->why,
		        "no command: no expected root contains %s, so %s is nobody's plan; name "
		        "the directory with --root if it is one",
		        target, change);
		return 0;
	}
	if (!dt_path_under(target, p->root->path) &&
	    !(p->root->realpath && dt_path_under(target, p->root->realpath))) {
		f->kind = DT_FIX_NONE;
		fix_set(&f->why,
		        "no command: the change would be to %s, outside the expected root %s",
		        target, p->root->path);
		return 0;
	}
	return 1;
}

static void fix_file_permissions(struct dt_fix *f, const struct dt_fix_problem *p,
                                 const struct dt_fix_launch *l)
{
	const struct dt_record *d = p->nrefusals ? p->refusals[0] : NULL;
	const struct dt_stat_facts *st = d && d->p[0].has_st ? &d->p[0].st : NULL;
	const char *path = d ? (d->p[0].abspath ? d->p[0].abspath : d->p[0].path) : NULL;
	f->kind = DT_FIX_OUTSIDE;
	if (!st || !path) {
		f->kind = DT_FIX_NONE;
		fix_set(&f->why,
		        "the refusal carries no owner and mode facts to compute a change from");
		return;
	}
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	if (!mode_target_ok(f, p, l, dt_op_need(d) == DT_NEED_DIR ? dir : path))
		return;
	switch (dt_op_need(d)) {
	case DT_NEED_DIR:
		if ((st->parent_mode & S_ISVTX) && (st->valid & DT_SF_EXISTS) &&
		    st->uid != (uint32_t)d->uid) {
			char *q = fix_sh_word(path);
			fix_set(&f->change,
			        "let uid %lld own %s: the sticky directory %s lets only "
			        "a file's owner remove or rename it",
			        (long long)d->uid, path, dir);
			fix_copy(f, "chown %lld %s", (long long)d->uid, q);
			fix_disk(f, path, -1, (long)d->uid);
			if (st->uid != 0)
				fix_copy(f, "# or run the worker as uid %u, the file's owner",
				         st->uid);
			fix_set(&f->why, "ownership of that one file, nothing else");
			free(q);
			return;
		}
		fix_set(&f->change, "let uid %lld create and remove files in %s", (long long)d->uid,
		        dir);
		fix_mode_bits(f, dir, st->parent_mode, st->parent_uid, st->parent_gid, d, 3);
		return;
	case DT_NEED_FILE:
		fix_set(&f->change, "let uid %lld write %s", (long long)d->uid, path);
		fix_mode_bits(f, path, st->mode, st->uid, st->gid, d, 2);
		return;
	case DT_NEED_READ:
	case DT_NEED_RW: {
		int rw = dt_op_need(d) == DT_NEED_RW;
		fix_set(&f->change, "let uid %lld %s %s", (long long)d->uid,
		        rw ? "read and write" : "read", path);
		fix_mode_bits(f, path, st->mode, st->uid, st->gid, d, rw ? 6 : 4);
		return;
	}
	case DT_NEED_OWNER: {
		char *q = fix_sh_word(path);
		fix_set(&f->change,
		        "let uid %lld own %s: only a file's owner may change its mode, "
		        "owner or times",
		        (long long)d->uid, path);
		fix_copy(f, "chown %lld %s", (long long)d->uid, q);
		fix_disk(f, path, -1, (long)d->uid);
		if (st->uid != 0)
			fix_copy(f, "# or run the worker as uid %u, the owner", st->uid);
		fix_set(&f->why, "ownership of that one file, nothing else");
		free(q);
		return;
	}
	default:
		f->kind = DT_FIX_NONE;
		fix_set(&f->why, "%s needs no write permission: the refusal is not the mode bits'",
		        d->op ? d->op : "the call");
	}
}

/* Do mode bits (owner, group as now) give uid/gid of refusal d the rights
 * want? Root always has them. */
static int fix_mode_gives(uint32_t mode, uint32_t owner, uint32_t group, const struct dt_record *d,
                          unsigned want)
{
	if (d->uid == 0)
		return 1;
	int in_group = group == (uint32_t)d->gid;
	for (int i = 0; i < d->ngroups && !in_group; i++)
		in_group = d->groups[i] == group;
	unsigned bits = owner == (uint32_t)d->uid ? (mode >> 6) & 7
	                : in_group                ? (mode >> 3) & 7
	                                          : mode & 7;
	return (bits & want) == want;
}

/* The separating fact is the path's mode or owner, which flips. */
static int fix_flips(const struct dt_fix_problem *p)
{
	return p->diff && p->diff->fact && p->diff->subject[0] &&
	       (strstr(p->diff->fact, "-mode") || strstr(p->diff->fact, "-owner"));
}

/* The path already has what the chmod would give: say what flips it and
 * what to keep stable, not a change that changes nothing. */
static int fix_flipping(struct dt_fix *f, const struct dt_fix_problem *p)
{
	const struct dt_record *d = p->nrefusals ? p->refusals[0] : NULL;
	const struct dt_difference *x = p->diff;
	if (!d || !fix_flips(p) || !p->now.known)
		return 0;
	unsigned want = strstr(x->fact, "directory") ? 3 : 2;
	if (!fix_mode_gives(p->now.mode, p->now.uid, p->now.gid, d, want))
		return 0;
	f->kind = DT_FIX_OUTSIDE;
	fix_set(&f->no_verify, "the fix is to keep the mode as it is now and stop what flips "
	                       "it, which a re-run cannot apply");
	fix_set(&f->change,
	        "nothing to chmod: %s is %04o owned by %u:%u now, which lets uid %lld %s it; keep "
	        "it that way",
	        x->subject, p->now.mode & 07777, p->now.uid, p->now.gid, (long long)d->uid,
	        want == 3 ? "create and remove files in" : "write");
	if (x->changer)
		fix_copy(f, "# stop pid %lld (%s) from running %s on %s, or have it leave %s",
		         (long long)x->changer->pid, x->changer->comm ? x->changer->comm : "?",
		         x->changer->op, x->subject, x->ok.values[0]);
	else
		fix_copy(f, "# find what %s outside the traced processes", x->changed);
	fix_set(&f->why, "the refusals came while it flipped: %s; %s", x->line, x->changed);
	return 1;
}

/* The chmod stands, but lasts only until the path flips again. */
static void fix_flipping_note(struct dt_fix *f, const struct dt_fix_problem *p)
{
	if (!fix_flips(p) || !p->diff->changed[0])
		return;
	fix_copy(f, "# it flips: %s; make that stable, or the change is undone", p->diff->changed);
}

/* The launcher whose settings produce Codex's flags, for the root. */
static void fix_launcher(struct dt_fix *f, const struct dt_root *root)
{
	if (root->kind == DT_ROOT_HERMES)
		fix_set(&f->launcher,
		        "Hermes' Codex transport builds this -c from dirname($HERMES_KANBAN_DB), "
		        "else $HERMES_KANBAN_ROOT, else $HERMES_HOME/kanban, one root only: set "
		        "HERMES_KANBAN_DB to the board under %s (or HERMES_KANBAN_ROOT=%s) for the "
		        "worker",
		        root->path, root->path);
	else if (root->kind == DT_ROOT_HCOM)
		fix_set(&f->launcher,
		        "hcom codex builds this -c from $HCOM_DIR (default ~/.hcom): set "
		        "HCOM_DIR=%s",
		        root->path);
}

/* A grant fix for a problem, the sandbox being the launch's. roots: the
 * whole Codex list (every root), nroots of them. */
static void fix_grant_problem(struct dt_fix *f, const struct dt_fix_problem *p,
                              const struct dt_fix_launch *l, enum dt_fix_sandbox sb,
                              const char *dir, const struct dt_fix_plan *plan, int add_dir,
                              const char *const *roots, size_t nroots)
{
	const struct dt_rootset *rs = l->rs;
	fix_grant(f, dir);
	if (sb == DT_SB_CODEX && rs->codex_permission_profile) {
		char hint[PATH_MAX + 256];
		dt_codex_grant_hint(rs, dir, hint, sizeof(hint));
		f->kind = DT_FIX_OUTSIDE;
		fix_set(&f->change, "make %s writable: %s", dir, hint);
		fix_set(&f->why, "a permission profile ignores [sandbox_workspace_write], so no -c "
		                 "list can grant it");
		return;
	}
	/* Codex seen in the run (a process or exec record) but started by a
	 * wrapper: the same change, made where that wrapper builds the flags */
	int wrapped = sb == DT_SB_NONE && rs->codex_sandbox_mode;
	if (sb == DT_SB_CODEX || wrapped) {
		char *val = dt_codex_roots_value(roots, nroots);
		int ro =
		    rs->codex_sandbox_mode && strcmp(rs->codex_sandbox_mode, "workspace-write");
		f->kind = wrapped ? DT_FIX_OUTSIDE : DT_FIX_COMMAND_LINE;
		f->sandbox = DT_SB_CODEX;
		add_dir &= !wrapped;
		char *w = fix_sh_word(add_dir ? dir : val);
		if (add_dir) {
			fix_set(&f->change, "add --add-dir %s to Codex's command line", dir);
			fix_copy(f, "--add-dir %s", w);
		} else {
			fix_set(&f->change,
			        "give Codex one -c writable_roots list holding every root%s%s",
			        rs->codex_override ? ", in place of the one it had" : "",
			        wrapped
			            ? " (Codex is started by the launched program, not on the "
			              "recorded command line: change it where its flags are built)"
			            : "");
			fix_copy(f, "-c %s%s", w,
			         ro ? " -c 'sandbox_mode=\"workspace-write\"'" : "");
		}
		free(w);
		fix_copy(f, "# or in %s (and no -c writable_roots on the command line):",
		         rs->codex_config_path ? rs->codex_config_path
		                               : "$CODEX_HOME/config.toml (default ~/.codex)");
		if (ro)
			fix_copy(f, "sandbox_mode = \"workspace-write\"");
		fix_copy(f, "[sandbox_workspace_write]");
		fix_copy(f, "writable_roots = %s", strchr(val, '[')); /* the list of the -c */
		fix_set(&f->why, "%s",
		        add_dir ? "--add-dir adds only the expected root of the finding"
		                : "a -c list replaces the configured one rather than adding to it, "
		                  "so one list holds the launch's roots and the findings' expected "
		                  "roots, nothing else");
		if (p->root)
			fix_launcher(f, p->root);
		free(val);
		return;
	}
	if (sb == DT_SB_BWRAP) {
		f->kind = DT_FIX_COMMAND_LINE;
		/* plan_rewrite replaces both with the exact change (the host path) */
		char *m = fix_mount_words("--bind", dir, dir);
		fix_set(&f->change, "add %s to bwrap's command line", m);
		if (plan->no_rewrite)
			fix_copy(f, "%s", m);
		free(m);
		fix_set(&f->why, "binds %s writable, nothing above it", dir);
		return;
	}
	if (sb == DT_SB_LANDLOCK ||
	    (p->nrefusals && p->refusals[0]->err == EACCES && !dt_proc_sandboxed(p->proc))) {
		fix_landlock(f, p, &dir, 1, sb == DT_SB_LANDLOCK);
		return;
	}
	f->kind = DT_FIX_OUTSIDE;
	fix_set(&f->change, "make %s writable in the sandbox that runs the worker", dir);
	char *m = fix_mount_words("--bind", dir, dir);
	fix_copy(f, "bubblewrap: %s", m);
	free(m);
	fix_set(&f->why, "the recorded command line does not start that sandbox, so it cannot be "
	                 "changed there");
}

static void fix_program(struct dt_fix *f, const struct dt_fix_problem *p)
{
	const char *s = p->subject && *p->subject ? p->subject : NULL;
	f->kind = DT_FIX_PROGRAM;
	switch (p->cause) {
	case DT_CAUSE_PROTECTED_PATH:
		fix_set(&f->change, "write somewhere else than %s",
		        s ? s : "the read-only subpath");
		fix_set(&f->why,
		        "no sandbox fix: %s is kept read-only on purpose inside a writable "
		        "root (Codex protects .git, .codex, .agents, .aws)",
		        s ? s : "it");
		break;
	case DT_CAUSE_CROSS_MOUNT:
		fix_set(&f->change,
		        "fall back to copy and delete when rename or link returns EXDEV");
		fix_set(&f->why,
		        "no sandbox fix: a rename or link cannot cross mounts; that is the "
		        "kernel's rule");
		break;
	case DT_CAUSE_LOCK_CONTENTION:
		fix_set(&f->change,
		        "wait for the lock (SQLite: a busy timeout) or shorten the holder's "
		        "transaction");
		fix_set(&f->why, "no sandbox fix: another process held the lock");
		break;
	default: /* injected */
		fix_set(&f->change, "handle the refusal in the worker");
		fix_set(&f->why, "no sandbox fix: a --deny rule produced it on purpose");
	}
}

static void fix_none(struct dt_fix *f, const struct dt_fix_problem *p)
{
	f->kind = DT_FIX_NONE;
	if (p->cause == DT_CAUSE_SETID_LOST)
		fix_set(&f->why, "denytrace caused these refusals: its seccomp supervisor set "
		                 "no_new_privs, so a set-id program ran without its privilege; "
		                 "nothing on disk needs to change");
	else if (p->cause == DT_CAUSE_OUTSIDE_ROOTS)
		fix_set(&f->why,
		        "no expected root contains %s: granting it would widen the sandbox beyond "
		        "what anyone planned; make the worker write under its roots, or name the "
		        "directory with --root and run fix again",
		        p->subject && *p->subject ? p->subject : "the path");
	else if (!p->root && grant_dir(p) == NULL && p->cause != DT_CAUSE_UNKNOWN)
		fix_set(&f->why, "the expected root of these refusals is not known");
	else
		fix_set(&f->why, "the cause is not known, so no change can be said to fix it (the "
		                 "report says what is known)");
}

/* ---- the plan ---- */

/* A grant whose root only the traced program named (its environment
 * changed inside the sandbox): the program may be choosing what to have
 * made writable, so the user decides, and --verify does not apply it. */
/* A bwrap grant the re-run does not get has no line from the rewritten
 * command line: its own --bind, to paste once checked. */
static void fix_unapplied_bind(struct dt_fix *f)
{
	if (f->sandbox == DT_SB_BWRAP && !f->ncopy && f->ngrants) {
		char *m = fix_mount_words("--bind", f->grants[0], f->grants[0]);
		fix_copy(f, "%s", m);
		free(m);
	}
}

static void fix_claimed(struct dt_fix *f)
{
	char *why = f->why;
	f->claimed = 1;
	f->why = NULL;
	fix_set(&f->why,
	        "named by the traced program: this root comes from what a traced process "
	        "recorded (an environment variable it set for itself, or a Codex command line "
	        "that is not the launch's), so check it before making the change; --verify "
	        "does not apply it%s%s",
	        why ? "; " : "", why ? why : "");
	free(why);
	fix_unapplied_bind(f);
}

/* A candidate grant --verify must not apply: no expected root names its
 * directory, so the traced program chose it by failing to write there.
 * Not even under /tmp: /tmp/tmux-UID and /tmp/ssh-* are the user's own,
 * and a worker given one could drive the user's terminal or agent. The
 * user names it with --root, and then it is a root. */
static int candidate_held_back(const struct dt_fix_problem *p)
{
	return !p->root && !p->claimed;
}

/* A grant for a finding no expected root contains: offered, labelled, for
 * the user to confirm (the report's advice names the same directory). */
static void fix_candidate(struct dt_fix *f)
{
	char *change = f->change, *why = f->why;
	f->candidate = 1;
	f->change = f->why = NULL;
	fix_set(&f->change, "candidate (no expected root contains it): %s", change ? change : "");
	fix_set(&f->why,
	        "a candidate, not anyone's plan: no expected root contains the refused path, so "
	        "this grants only the directory the refused calls needed, %s; grant it if the "
	        "worker should write there, else make the worker write under its roots (or name "
	        "its root with --root)%s%s",
	        f->grants[0], why ? "; " : "", why ? why : "");
	free(change);
	free(why);
}

/* Why --verify cannot prove f, in its no_verify, or none when it can:
 * only a change on the command line it re-runs can be applied without
 * changing anything on disk. */
static void fix_verifiability(struct dt_fix *f, const struct dt_fix_plan *plan)
{
	if (f->claimed && f->candidate)
		fix_set(&f->no_verify,
		        "only the traced program's refusals name %s: a candidate is not applied "
		        "automatically; if the worker should write there, name it with --root and "
		        "verify again",
		        f->ngrants          ? f->grants[0]
		        : f->landlock.ndirs ? f->landlock.dirs[0]
		                            : "the directory");
	else if (f->claimed)
		fix_set(&f->no_verify, "its root is named by the traced program: not applied "
		                       "automatically");
	else if (f->kind == DT_FIX_NONE)
		fix_set(&f->no_verify, "no fix was stated, so there is nothing to apply");
	else if (f->kind == DT_FIX_PROGRAM)
		fix_set(&f->no_verify,
		        "the change is to the program itself, which denytrace does not make");
	else if (f->kind == DT_FIX_COMMAND_LINE && !plan->argv)
		fix_set(&f->no_verify, "the launch's command line could not be rewritten: %s",
		        plan->no_rewrite ? plan->no_rewrite : "no launch to rewrite");
	else if (f->kind == DT_FIX_OUTSIDE && f->disk.path && !f->no_verify)
		; /* --verify makes the change on an overlay (fixrun.h) */
	else if (f->kind == DT_FIX_OUTSIDE && !f->no_verify)
		fix_set(&f->no_verify,
		        "the change is not on the command line denytrace re-runs (%s)",
		        f->sandbox == DT_SB_CODEX
		            ? "Codex is configured where its launcher builds the flags or in its "
		              "permission profile"
		            : "the recorded command line does not start the sandbox that refused");
}

static int argv_rerunnable(const struct dt_fix_launch *l, char **why)
{
	if (!l->argv || !l->argc) {
		*why = xstrdup("the ring has no launch record (it was not made by denytrace run or "
		               "denytrace codex)");
		return 0;
	}
	if (l->argv_trunc) {
		*why = xstrdup("the recorded command line was cut short (too long for the record)");
		return 0;
	}
	for (size_t i = 0; i < l->argc; i++)
		if (strstr(l->argv[i], "<redacted>")) {
			*why =
			    xasprintf("word %zu of the recorded command line was redacted (it held "
			              "a secret), so it cannot be run again",
			              i);
			return 0;
		}
	return 1;
}

/* The Codex list: what the launch's list held, then every grant. */
static void codex_list(const struct dt_rootset *rs, const struct strlist *grants,
                       struct strlist *out)
{
	for (size_t i = 0; i < rs->ncodex_list; i++)
		if (!strlist_has(out, rs->codex_list[i]))
			strlist_push(out, rs->codex_list[i]);
	for (size_t i = 0; i < grants->n; i++)
		if (!strlist_has(out, grants->v[i]))
			strlist_push(out, grants->v[i]);
}

/* Applies the grants to the plan's command line; bwrap's copy lines come
 * from there (the host path a bind maps). */
/* A bind makes the host's directory writable, which bwrap may map from
 * anywhere (--ro-bind /etc /data): the rules hold for that one too. The
 * fixes granting dir say why they have no command. Returns 1 then. */
static int bwrap_host_forbidden(struct dt_fix_plan *plan, const struct dt_fix_launch *l,
                                const struct dt_argv *a, size_t at, const char *dir)
{
	char buf[PATH_MAX + 128];
	char *host = dt_bwrap_host_path(a, at, dir);
	const char *no =
	    host && strcmp(host, dir) ? dt_fix_forbidden(host, l, buf, sizeof(buf)) : NULL;
	for (size_t k = 0; no && k < plan->n; k++)
		if (plan->fixes[k].ngrants && !strcmp(plan->fixes[k].grants[0], dir)) {
			char *what = xasprintf("make writable (bwrap maps %s from it)", dir);
			fix_refused(&plan->fixes[k], what, host, no);
			free(what);
		}
	free(host);
	return no != NULL;
}

static void plan_rewrite(struct dt_fix_plan *plan, const struct dt_fix_launch *l, long at,
                         const struct strlist *grants, const struct strlist *list, int add_dir)
{
	struct dt_argv a = {0};
	char what[PATH_MAX * 2 + 64];
	int ok = 1;
	dt_argv_copy(&a, l->argv, l->argc);
	if (plan->sandbox == DT_SB_CODEX && add_dir)
		ok = fix_codex_add_dirs(&a, (size_t)at, (const char *const *)grants->v,
		                        grants->n) == 0;
	else if (plan->sandbox == DT_SB_CODEX) {
		int ro = l->rs->codex_sandbox_mode &&
		         strcmp(l->rs->codex_sandbox_mode, "workspace-write");
		ok = dt_codex_set_roots(&a, (size_t)at, (const char *const *)list->v, list->n, ro,
		                        what, sizeof(what)) == 0;
		if (!ok)
			plan->no_rewrite = xstrdup(what);
	} else {
		for (size_t g = 0; ok && g < grants->n; g++) {
			if (bwrap_host_forbidden(plan, l, &a, (size_t)at, grants->v[g]))
				continue;
			int rc = dt_bwrap_grant(&a, (size_t)at, grants->v[g], what, sizeof(what));
			for (size_t k = 0; k < plan->n; k++)
				if (plan->fixes[k].ngrants &&
				    !strcmp(plan->fixes[k].grants[0], grants->v[g]) &&
				    plan->fixes[k].sandbox == DT_SB_BWRAP) {
					fix_set(
					    &plan->fixes[k].change, "%s",
					    rc == 0
					        ? "add to bwrap's command line, after the mount "
					          "that holds the root:"
					        : what);
					if (rc == 0)
						fix_copy(&plan->fixes[k], "%s", what);
				}
			if (rc < 0) {
				plan->no_rewrite = xstrdup(what);
				ok = 0;
			}
		}
	}
	if (!ok && !plan->no_rewrite)
		plan->no_rewrite = xstrdup("Codex's command line does not take --add-dir here");
	if (!ok) {
		dt_argv_free(&a);
		return;
	}
	plan->argv = a.v;
	plan->argc = a.n;
}

/* The Landlock launcher's command line with every rule a fix gives it
 * (the traced program's claims left out, as for a bind). */
static void plan_rewrite_landlock(struct dt_fix_plan *plan, const struct dt_fix_launch *l, long at)
{
	struct dt_argv a = {0};
	int added = 0;
	dt_argv_copy(&a, l->argv, l->argc);
	for (size_t i = 0; i < plan->n; i++) {
		const struct dt_fix *f = &plan->fixes[i];
		if (f->kind != DT_FIX_COMMAND_LINE || !f->landlock.rights || f->claimed)
			continue;
		dt_landlock_add_rules(&a, (size_t)at, f->landlock.dirs, f->landlock.ndirs,
		                      f->landlock.rights, f->landlock.abi);
		added = 1;
	}
	if (!added) {
		dt_argv_free(&a);
		return;
	}
	plan->argv = a.v;
	plan->argc = a.n;
}

/* A mode or owner change is verified on the launch as it was (with any
 * command-line fix): it needs a command line even when none changed. */
static void plan_disk_rerun(struct dt_fix_plan *plan, const struct dt_fix_launch *l, int rerun)
{
	int disk = 0;
	for (size_t i = 0; i < plan->n; i++)
		disk |= plan->fixes[i].disk.path && !plan->fixes[i].no_verify;
	if (!disk || plan->argv || !rerun)
		return;
	struct dt_argv a = {0};
	dt_argv_copy(&a, l->argv, l->argc);
	plan->argv = a.v;
	plan->argc = a.n;
	plan->argv_for_disk = 1;
}

/* fix_grant_problem with the -c list every fix shares, plus dir when the
 * list lacks it (a root only the traced program named): a user who pastes
 * another finding's line must not grant that one unawares. */
static void fix_grant_with_list(struct dt_fix *f, const struct dt_fix_problem *p,
                                const struct dt_fix_launch *l, const struct dt_fix_plan *plan,
                                const char *dir, int add_dir, const struct strlist *list)
{
	struct strlist own = {0};
	const struct strlist *roots = list;
	if (!strlist_has(list, dir)) {
		for (size_t k = 0; k < list->n; k++)
			strlist_push(&own, list->v[k]);
		strlist_push(&own, dir);
		roots = &own;
	}
	fix_grant_problem(f, p, l, plan->sandbox, dir, plan, add_dir, (const char *const *)roots->v,
	                  roots->n);
	strlist_free(&own);
}

int dt_fix_plan_build(const struct dt_fix_problem *p, size_t n, const struct dt_fix_launch *l,
                      struct dt_fix_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->fixes = xrealloc(NULL, (n + 1) * sizeof(*plan->fixes));
	memset(plan->fixes, 0, (n + 1) * sizeof(*plan->fixes));
	plan->n = n;
	long cx = dt_argv_find_codex(l->argv, l->argc), bw = dt_argv_find_bwrap(l->argv, l->argc);
	long at = cx >= 0 && (bw < 0 || cx < bw) ? cx : bw;
	plan->sandbox = at < 0 ? DT_SB_NONE : at == cx ? DT_SB_CODEX : DT_SB_BWRAP;
	if (at < 0 && (at = dt_argv_find_landlock(l->argv, l->argc)) >= 0)
		plan->sandbox = DT_SB_LANDLOCK;
	int rerun = argv_rerunnable(l, &plan->no_rewrite);
	if (rerun && l->rs_claimed && plan->sandbox == DT_SB_CODEX) {
		/* a -c list replaces the launch's: it would hold the program's roots */
		plan->no_rewrite = xstrdup("Codex's writable_roots list was read from a launch "
		                           "record that is not this launch (written by the traced "
		                           "program), so no -c list is built from it");
		rerun = 0;
	}

	/* applied (and run by --verify, and in every fix's -c list): the
	 * grants whose root the launch named, not the traced program; a
	 * claimed or held-back one is in its own fix's list only */
	struct strlist grants = {0}, list = {0};
	char buf[PATH_MAX + 128];
	for (size_t i = 0; i < n; i++) {
		const char *dir = grant_dir(&p[i]);
		if (!dir || dt_fix_forbidden(dir, l, buf, sizeof(buf)))
			continue;
		if (!p[i].claimed && !candidate_held_back(&p[i]) && !strlist_has(&grants, dir))
			strlist_push(&grants, dir);
	}
	const struct dt_rootset *rs = l->rs;
	/* --add-dir is the narrower change only where no -c list is there to fix */
	int add_dir =
	    plan->sandbox == DT_SB_CODEX && rs->codex_add_dir_ok && !rs->codex_override &&
	    (!rs->codex_sandbox_mode || !strcmp(rs->codex_sandbox_mode, "workspace-write"));
	codex_list(rs, &grants, &list);
	for (size_t i = 0; i < n; i++) {
		struct dt_fix *f = &plan->fixes[i];
		const char *dir = grant_dir(&p[i]);
		const char *no = dir ? dt_fix_forbidden(dir, l, buf, sizeof(buf)) : NULL;
		f->sandbox = plan->sandbox;
		if (no)
			fix_refused(f, "make writable", dir, no);
		else if (dir)
			fix_grant_with_list(f, &p[i], l, plan, dir, add_dir, &list);
		else if (p[i].cause == DT_CAUSE_FILE_PERMISSIONS ||
		         (p[i].cause == DT_CAUSE_SQLITE_SIDE_FILE && !refused_by_sandbox(&p[i]))) {
			if (!fix_flipping(f, &p[i])) {
				fix_file_permissions(f, &p[i], l);
				fix_flipping_note(f, &p[i]);
			}
		} else if (p[i].cause == DT_CAUSE_PROTECTED_PATH ||
		           p[i].cause == DT_CAUSE_CROSS_MOUNT ||
		           p[i].cause == DT_CAUSE_LOCK_CONTENTION ||
		           p[i].cause == DT_CAUSE_INJECTED)
			fix_program(f, &p[i]);
		else if (p[i].cause == DT_CAUSE_IMMUTABLE_FILE)
			fix_chattr(f, &p[i], l);
		else if (p[i].cause == DT_CAUSE_LANDLOCK_REFER)
			fix_landlock_refer(f, &p[i], l, plan->sandbox == DT_SB_LANDLOCK);
		else
			fix_none(f, &p[i]);
	}
	for (size_t i = 0; i < n; i++)
		if (p[i].claimed && (plan->fixes[i].ngrants || plan->fixes[i].landlock.ndirs))
			fix_claimed(&plan->fixes[i]); /* a Landlock rule grants too */
	struct strlist applied = {0};
	codex_list(rs, &grants, &applied);
	if (grants.n && rerun && (plan->sandbox == DT_SB_CODEX || plan->sandbox == DT_SB_BWRAP))
		plan_rewrite(plan, l, at, &grants, &applied, add_dir);
	if (rerun && plan->sandbox == DT_SB_LANDLOCK)
		plan_rewrite_landlock(plan, l, at);
	for (size_t i = 0; i < n; i++) {
		if (!p[i].root && plan->fixes[i].ngrants)
			fix_candidate(&plan->fixes[i]);
		if (plan->fixes[i].ngrants && candidate_held_back(&p[i])) {
			plan->fixes[i].claimed = 1;
			fix_unapplied_bind(&plan->fixes[i]);
		}
		fix_verifiability(&plan->fixes[i], plan);
		/* the header names the sandbox that refused, not only the one the
		 * command line starts: Landlock is set up by the program itself */
		if (plan->sandbox == DT_SB_NONE && plan->fixes[i].sandbox == DT_SB_LANDLOCK)
			plan->sandbox = DT_SB_LANDLOCK;
	}
	strlist_free(&applied);
	plan_disk_rerun(plan, l, rerun);
	strlist_free(&grants);
	strlist_free(&list);
	return 0;
}

static void fix_free(struct dt_fix *f)
{
	for (size_t i = 0; i < f->ncopy; i++)
		free(f->copy[i]);
	for (size_t i = 0; i < f->ngrants; i++)
		free(f->grants[i]);
	free(f->copy);
	free(f->grants);
	free(f->change);
	free(f->why);
	free(f->launcher);
	free(f->no_verify);
	free(f->disk.path);
	for (size_t i = 0; i < f->landlock.ndirs; i++)
		free(f->landlock.dirs[i]);
	free(f->landlock.rights);
}

void dt_fix_plan_free(struct dt_fix_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		fix_free(&plan->fixes[i]);
	free(plan->fixes);
	for (size_t i = 0; plan->argv && i < plan->argc; i++)
		free(plan->argv[i]);
	free(plan->argv);
	free(plan->no_rewrite);
	memset(plan, 0, sizeof(*plan));
}
