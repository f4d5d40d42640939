/* SPDX-License-Identifier: MIT */
/* fix --verify: the findings as problems, and re-running the launch with
 * the fix (fixrun.h). */
#include "fixrun.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cli.h"
#include "launchfile.h"
#include "roots_int.h"
#include "safeopen.h"
#include "soak.h"
#include "spawn.h"

/* ---- inputs ---- */

/* Codex launched by `denytrace codex` carries -c mcp_servers.S.env.K=...
 * overrides that lead its MCP servers' probe to the old ring: not the
 * user's, and wrong for a new run. */
static int probe_override(const char *a)
{
	const char *env = strstr(a, ".env.");
	return !strncmp(a, "mcp_servers.", 12) && env &&
	       (!strncmp(env + 5, "LD_PRELOAD=", 11) || !strncmp(env + 5, "DENYTRACE_", 10));
}

/* argv without those overrides (words borrowed), NULL-terminated. */
static char **rerun_argv(char *const *argv, size_t argc)
{
	char **out = calloc(argc + 1, sizeof(*out));
	size_t n = 0;
	int opts = 1;
	for (size_t i = 0; out && i < argc; i++) {
		opts &= strcmp(argv[i], "--") != 0;
		if (opts && !strcmp(argv[i], "-c") && i + 1 < argc && probe_override(argv[i + 1])) {
			i++;
			continue;
		}
		out[n++] = argv[i];
	}
	return out;
}

/* Was the launch `denytrace codex` (a Codex config snapshot beside it)? */
static int launch_is_denytrace_codex(const struct dt_report *r, const struct dt_record *launch)
{
	for (size_t i = 0; launch && i < r->n; i++)
		if (r->recs[i].type == DT_REC_CONFIG && r->recs[i].pid == launch->pid &&
		    r->recs[i].ring == launch->ring)
			return dt_argv_find_codex(launch->argv, launch->argc) == 0;
	return 0;
}

static const struct dt_record *report_launch(const struct dt_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == DT_REC_LAUNCH)
			return &r->recs[i];
	return NULL;
}

/* Is root named only by what a traced process recorded? Hermes and hcom
 * roots come from environment variables; the launch's environment is the
 * user's, a process's later one may be the program's own choice
 * (HERMES_KANBAN_DB=/kanban.db). Codex's come from the first record with
 * Codex's words: the launch's is checked against the launch file, any
 * other (a process or exec record) is the program's to write. */
static int root_claimed(const struct dt_root *root, const struct dt_record *launch,
                        const struct dt_rootset *rs)
{
	if (root && root->kind == DT_ROOT_CODEX)
		return rs->codex_record && rs->codex_record != (const void *)launch;
	if (!root || (root->kind != DT_ROOT_HERMES && root->kind != DT_ROOT_HCOM))
		return 0;
	if (!launch)
		return 1;
	struct dt_rootset own = {0};
	dt_roots_from_env(&own, launch->env, launch->nenv, 1);
	int named = 0;
	for (size_t i = 0; i < own.n; i++)
		named |= own.v[i].kind == root->kind && !strcmp(own.v[i].path, root->path);
	dt_rootset_free(&own);
	return !named;
}

/* How the path an intermittent finding's separating fact is about is
 * now: a fix must not re-apply the value it already has. */
static void fix_stat_now(struct dt_fix_problem *p)
{
	struct stat st;
	if (!p->diff || !p->diff->fact || !p->diff->subject[0] || stat(p->diff->subject, &st) != 0)
		return;
	p->now.known = 1;
	p->now.mode = st.st_mode;
	p->now.uid = st.st_uid;
	p->now.gid = st.st_gid;
}

/* The inode flags an immutable-file finding's subject carries now. The
 * path is the ring's: only a regular file or directory is opened, without
 * following a link or blocking, and only if it is still what lstat saw. */
static void fix_iflags_now(struct dt_fix_problem *p)
{
	struct stat before, st;
	int flags = 0;
	if (p->cause != DT_CAUSE_IMMUTABLE_FILE || !p->subject || p->subject[0] != '/' ||
	    lstat(p->subject, &before) != 0 ||
	    !(S_ISREG(before.st_mode) || S_ISDIR(before.st_mode)))
		return;
	/* looked at through O_PATH, opened through /proc/self/fd: a directory
	 * of the path swapped for a link into /dev between lstat and open
	 * cannot get a device opened (as root, a watchdog would start) */
	int pfd = open(p->subject, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return;
	int fd = -1;
	if (fstat(pfd, &st) == 0 && st.st_dev == before.st_dev && st.st_ino == before.st_ino &&
	    (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		fd = dt_reopen_pinned(pfd, p->subject, &st, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
	close(pfd);
	if (fd < 0)
		return;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
		p->iflags_now.known = 1;
		p->iflags_now.flags = (uint32_t)flags;
	}
	close(fd);
}

/* One problem per finding (findings.h): one fix each. */
static size_t fix_finding_problems(const struct dt_report *r, struct dt_fix_inputs *in)
{
	const struct dt_record *launch = report_launch(r);
	for (size_t k = 0; k < r->findings.n; k++) {
		const struct dt_finding *f = &r->findings.v[k];
		struct dt_fix_problem *p = &in->p[k];
		p->cause = f->cause;
		p->root = f->root;
		p->granted = f->granted;
		p->subject = f->subject;
		p->proc = dt_report_proc(r, r->groups[f->groups[0]].rep,
		                         (long)r->groups[f->groups[0]].rep->pid);
		p->claimed = root_claimed(f->root, launch, &r->roots);
		p->diff = f->intermittent ? f->diff : NULL;
		fix_stat_now(p);
		fix_iflags_now(p);
		in->titles[k] = f->title;
		in->groups[k] = f->groups;
		in->ngroups[k] = f->ngroups;
		in->counts[k] = f->count;
	}
	return r->findings.n;
}

int dt_fix_inputs(const struct dt_report *r, struct dt_fix_inputs *in)
{
	memset(in, 0, sizeof(*in));
	size_t cap = r->ngroups + 1;
	in->p = calloc(cap, sizeof(*in->p));
	in->titles = calloc(cap, sizeof(*in->titles));
	in->counts = calloc(cap, sizeof(*in->counts));
	in->groups = calloc(cap, sizeof(*in->groups));
	in->ngroups = calloc(cap, sizeof(*in->ngroups));
	in->refs = calloc(cap, sizeof(*in->refs));
	if (!in->p || !in->titles || !in->counts || !in->groups || !in->ngroups || !in->refs) {
		dt_fix_inputs_free(in);
		return -1;
	}
	in->n = fix_finding_problems(r, in);
	/* the refusals of each problem: one per group, side by side */
	size_t used = 0;
	for (size_t k = 0; k < in->n; k++) {
		in->p[k].refusals = in->refs + used;
		for (size_t j = 0; j < in->ngroups[k]; j++)
			in->refs[used++] = r->groups[in->groups[k][j]].rep;
		in->p[k].nrefusals = in->ngroups[k];
	}
	in->launch = report_launch(r);
	in->l.rs = &r->roots;
	if (in->launch) {
		/* denytrace's own overrides are not the user's command line */
		in->argv = rerun_argv((char *const *)in->launch->argv, in->launch->argc);
		if (!in->argv) {
			dt_fix_inputs_free(in);
			return -1;
		}
		in->l.argv = (const char *const *)in->argv;
		while (in->argv[in->l.argc])
			in->l.argc++;
		in->l.argv_trunc = in->launch->argv_trunc;
		in->l.cwd = in->launch->cwd;
		in->source = "the ring's launch record: the traced program's claim";
		in->via_codex = launch_is_denytrace_codex(r, in->launch);
	}
	return 0;
}

/* Are the NULL-terminated a and b the same words? */
static int same_words(const char *const *a, const char *const *b)
{
	size_t n = 0;
	for (; a[n] && b[n]; n++)
		if (strcmp(a[n], b[n]))
			return 0;
	return !a[n] && !b[n];
}

/* Does every entry NAME=VALUE of the launch record hold in this
 * process's environment (which the command after -- runs with)? */
static int record_env_is_ours(const struct dt_record *launch)
{
	for (size_t i = 0; i < launch->nenv; i++) {
		const char *eq = strchr(launch->env[i], '=');
		char *name = eq ? strndup(launch->env[i], (size_t)(eq - launch->env[i])) : NULL;
		const char *now = name ? getenv(name) : NULL;
		free(name);
		if (!now || strcmp(now, eq + 1))
			return 0;
	}
	return 1;
}

/* Does the ring's launch record say what the trusted launch says: its
 * words, its directory, and the environment it records (env, or, for the
 * command after -- (env NULL), this process's own)? Roots come from all
 * three: Codex's workspace from the directory, Hermes' from variables. */
static int record_is_launch(const struct dt_fix_inputs *in, char *const *words,
                            const char *const *env, const char *cwd)
{
	if (!in->argv || !same_words((const char *const *)words, (const char *const *)in->argv))
		return 0;
	if (in->launch->cwd && (!cwd || strcmp(in->launch->cwd, cwd)))
		return 0;
	if (!env)
		return record_env_is_ours(in->launch);
	const char **rec = calloc(in->launch->nenv + 1, sizeof(*rec));
	for (size_t i = 0; rec && i < in->launch->nenv; i++)
		rec[i] = in->launch->env[i];
	int same = rec && same_words(env, rec);
	free(rec);
	return same;
}

/* Codex's roots are read from the ring's launch record, Hermes' and
 * hcom's from the environments it and the processes record; when the
 * record is not the launch the user made, the traced program wrote them. */
static void distrust_record_roots(struct dt_fix_inputs *in)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct dt_root *r = in->p[i].root;
		if (r && (r->kind == DT_ROOT_CODEX || r->kind == DT_ROOT_HERMES ||
		          r->kind == DT_ROOT_HCOM))
			in->p[i].claimed = 1;
	}
}

int dt_fix_inputs_trust(struct dt_fix_inputs *in, char *const *argv, const char *const *env,
                        const char *cwd, int via_codex, const char *source)
{
	size_t argc = 0;
	while (argv[argc])
		argc++;
	char **words = rerun_argv(argv, argc);
	if (!words)
		return -1;
	if (!record_is_launch(in, words, env, cwd)) {
		distrust_record_roots(in);
		in->l.rs_claimed = 1;
	}
	free(in->argv);
	in->argv = words;
	in->l.argv = (const char *const *)words;
	for (in->l.argc = 0; words[in->l.argc];)
		in->l.argc++;
	in->l.argv_trunc = 0;
	in->l.cwd = cwd;
	in->trusted = 1;
	in->source = source;
	in->via_codex = via_codex;
	return 0;
}

/* Is rec's digest the hex string want? */
static int config_is(const struct dt_record *rec, const char *want)
{
	uint8_t d[DT_SHA256_LEN];
	char hex[2 * DT_SHA256_LEN + 1];
	dt_launch_config_digest(rec, d);
	for (size_t k = 0; k < DT_SHA256_LEN; k++)
		snprintf(hex + 2 * k, 3, "%02x", d[k]);
	return !strcmp(hex, want);
}

int dt_fix_inputs_bind_configs(struct dt_fix_inputs *in, const struct dt_report *r,
                               const char *const *digests, size_t n)
{
	if (!in->launch)
		return 0; /* no launch record: its snapshots are read by nobody */
	size_t seen = 0;
	int differ = 0;
	/* the report takes the launch's snapshots by writer pid, in ring order */
	for (size_t i = 0; i < r->n && !differ; i++) {
		const struct dt_record *c = &r->recs[i];
		if (c->type != DT_REC_CONFIG || c->pid != in->launch->pid)
			continue;
		differ = seen >= n || !config_is(c, digests[seen]);
		seen++;
	}
	if (!differ && seen == n)
		return 0;
	distrust_record_roots(in);
	in->l.rs_claimed = 1;
	return 1;
}

const char *dt_fix_exposed(const char *path, const struct dt_rootset *rs)
{
	for (size_t i = 0; rs && i < rs->n; i++) {
		const struct dt_root *root = &rs->v[i];
		/* what the sandbox made writable: a root the traced program only
		 * names (HERMES_KANBAN_DB=/kanban.db) must not disown the file */
		if (root->readonly_sub || (root->kind != DT_ROOT_EFFECTIVE && root->granted != 1))
			continue;
		if (dt_path_under(path, root->path) ||
		    (root->realpath && dt_path_under(path, root->realpath)))
			return root->path;
	}
	return NULL;
}

void dt_fix_inputs_free(struct dt_fix_inputs *in)
{
	free(in->argv);
	free(in->p);
	free(in->titles);
	free(in->counts);
	free(in->groups);
	free(in->ngroups);
	free(in->refs);
	memset(in, 0, sizeof(*in));
}

/* Is g (of a later run) a refusal of problem i: one of its paths, or its
 * expected root with its cause? */
static int group_of_problem(const struct dt_report *before, const struct dt_fix_inputs *in,
                            size_t i, const struct dt_report_group *g)
{
	const struct dt_fix_problem *p = &in->p[i];
	if (g->hidden)
		return 0;
	if (p->root && g->v.root && g->v.cause == p->cause &&
	    !strcmp(g->v.root->path, p->root->path))
		return 1;
	for (size_t j = 0; j < in->ngroups[i]; j++)
		if (!strcmp(before->groups[in->groups[i][j]].path, g->path))
			return 1;
	return 0;
}

uint64_t dt_fix_still_refused(const struct dt_report *before, const struct dt_fix_inputs *in,
                              size_t i, const struct dt_report *after)
{
	uint64_t n = 0;
	for (size_t a = 0; a < after->ngroups; a++)
		if (group_of_problem(before, in, i, &after->groups[a]))
			n += after->groups[a].count;
	return n;
}

/* Is g a refusal the recorded run did not have: no problem's, and on no
 * path the recorded run was refused? */
static int group_is_new(const struct dt_report *before, const struct dt_fix_inputs *in,
                        const struct dt_report_group *g)
{
	if (g->hidden)
		return 0;
	for (size_t i = 0; i < in->n; i++)
		if (group_of_problem(before, in, i, g))
			return 0;
	for (size_t b = 0; b < before->ngroups; b++)
		if (!strcmp(before->groups[b].path, g->path))
			return 0;
	return 1;
}

uint64_t dt_fix_new_refusals(const struct dt_report *before, const struct dt_fix_inputs *in,
                             const struct dt_report *after, struct dt_verify *out)
{
	uint64_t n = 0;
	for (size_t a = 0; a < after->ngroups; a++) {
		const struct dt_report_group *g = &after->groups[a];
		if (!group_is_new(before, in, g))
			continue;
		n += g->count;
		if (out && out->nnew_paths < DT_VERIFY_NEW_PATHS) {
			struct dt_verify_new *nw = &out->new_paths[out->nnew_paths++];
			snprintf(nw->path, sizeof(nw->path), "%s", g->path);
			snprintf(nw->op, sizeof(nw->op), "%s", g->rep->op ? g->rep->op : "?");
			nw->err = g->rep->err;
			nw->count = g->count;
		}
	}
	return n;
}

const char *dt_verify_state_name(enum dt_verify_state s)
{
	return s == DT_VERIFY_FIXED       ? "fixed"
	       : s == DT_VERIFY_NOT_FIXED ? "not fixed"
	                                  : "cannot verify";
}

/* ---- mode and owner changes, on an overlay ---- */

/* The directory an overlay for fix f covers: its path when a directory,
 * else the path's directory; into buf. */
static const char *disk_dir(const struct dt_fix *f, char *buf, size_t cap)
{
	struct stat st;
	snprintf(buf, cap, "%s", f->disk.path);
	if (lstat(buf, &st) == 0 && S_ISDIR(st.st_mode))
		return buf;
	char *slash = strrchr(buf, '/');
	if (slash)
		*(slash == buf ? slash + 1 : slash) = 0;
	return buf;
}

static int disk_verifiable(const struct dt_fix *f)
{
	return f->kind == DT_FIX_OUTSIDE && f->disk.path && !f->no_verify;
}

/* Why f's change cannot be tried on an overlay here, or NULL. */
static const char *disk_unverifiable(const struct dt_fix *f, const char *ring)
{
	char dir[PATH_MAX], real[PATH_MAX];
	if (geteuid() != 0)
		return "trying a change of mode, owner or inode flags without changing the disk "
		       "needs a private "
		       "mount namespace with an overlay of the directory, which needs root "
		       "(CAP_SYS_ADMIN); make the change, then record the worker again with "
		       "denytrace run: no refusal there is the proof";
	disk_dir(f, dir, sizeof(dir));
	if (strpbrk(dir, ",:\\"))
		return "the directory's path holds a comma, colon or backslash, which an overlay's "
		       "options cannot name";
	if (!realpath(dir, real) || strcmp(real, dir))
		return "the directory's path goes through a symbolic link, and the overlay is "
		       "only ever put on the directory the path names itself (a ring's path could "
		       "otherwise be turned to another directory)";
	if (ring && realpath(ring, real) && dt_path_under(real, dir))
		return "the ring lies in the directory the overlay would cover, so the re-run's "
		       "ring and the proof would vanish with it";
	return NULL;
}

void dt_verify_disk_check(struct dt_fix_plan *plan, const char *ring)
{
	int left = 0;
	for (size_t i = 0; i < plan->n; i++) {
		struct dt_fix *f = &plan->fixes[i];
		const char *why = disk_verifiable(f) ? disk_unverifiable(f, ring) : NULL;
		if (why)
			f->no_verify = xstrdup(why);
		left |= disk_verifiable(f);
	}
	if (left || !plan->argv_for_disk)
		return;
	/* nothing left that the unchanged launch would prove */
	for (size_t i = 0; i < plan->argc; i++)
		free(plan->argv[i]);
	free(plan->argv);
	plan->argv = NULL;
	plan->argc = 0;
	plan->argv_for_disk = 0;
}

static char disk_scratch[PATH_MAX];
static int disk_scratch_fd = -1; /* the scratch tmpfs, pinned */

/* The overlay of pinned (a /proc/self/fd path of dir) whose upper layer
 * starts as dir itself looks (an overlay's root takes the upper
 * directory's mode and owner), its layers under the scratch tmpfs's
 * descriptor: no name the traced program can rename is looked up. Returns
 * the new mount's descriptor (not yet attached), or -1 with errno. */
static int disk_overlay_new(const char *pinned, const struct stat *st, size_t n)
{
	char upper[64], work[64], at[96], wat[96];
	snprintf(upper, sizeof(upper), "u%zu", n);
	snprintf(work, sizeof(work), "w%zu", n);
	snprintf(at, sizeof(at), "/proc/self/fd/%d/%s", disk_scratch_fd, upper);
	snprintf(wat, sizeof(wat), "/proc/self/fd/%d/%s", disk_scratch_fd, work);
	if (mkdirat(disk_scratch_fd, upper, 0700) < 0 || mkdirat(disk_scratch_fd, work, 0700) < 0 ||
	    fchownat(disk_scratch_fd, upper, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(disk_scratch_fd, upper, st->st_mode & 07777, 0) < 0)
		return -1;
	int fs = fsopen("overlay", FSOPEN_CLOEXEC), mnt = -1;
	if (fs < 0)
		return -1;
	if (fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", pinned, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", at, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "workdir", wat, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mnt = fsmount(fs, FSMOUNT_CLOEXEC, 0);
	int e = errno;
	close(fs);
	errno = e;
	return mnt;
}

/* Mounts an overlay on dir (disk_overlay_new) and returns a descriptor of
 * the overlay's root, or -1 with errno. dir is pinned first and must
 * resolve to itself: the path came from a ring, and a symbolic link
 * swapped in, before or after the check, must not move the overlay nor
 * the change made in it. */
static int disk_overlay(const char *dir, size_t n)
{
	char pinned[64], real[PATH_MAX];
	struct stat st;
	int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), mnt = -1;
	if (fd < 0)
		return -1;
	snprintf(pinned, sizeof(pinned), "/proc/self/fd/%d", fd);
	ssize_t len = readlink(pinned, real, sizeof(real) - 1);
	if (len > 0)
		real[len] = 0;
	if (len <= 0 || strcmp(real, dir))
		errno = ELOOP;
	else if (fstat(fd, &st) == 0 && (mnt = disk_overlay_new(pinned, &st, n)) >= 0 &&
	         move_mount(mnt, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) <
	             0) {
		close(mnt);
		mnt = -1;
	}
	int e = errno;
	close(fd);
	errno = e;
	return mnt;
}

/* Clears flags on the overlay's copy of fd's inode. The overlay keeps a
 * lower file's immutable and append-only flags on its copy-up (in an
 * xattr of the upper layer), so the copy refuses as the disk does until
 * they are cleared there; the flags go to the upper layer, a tmpfs, which
 * takes no others than these (an ext4 file's extents flag it refuses). */
static int disk_clear_iflags(int fd, unsigned clear)
{
	const unsigned kept = FS_NODUMP_FL | FS_NOATIME_FL;
	int flags = 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		return -1;
	if (!((unsigned)flags & clear))
		return 0; /* the overlay's own root: a fresh upper directory has none */
	int want = (int)((unsigned)flags & ~clear & kept);
	return ioctl(fd, FS_IOC_SETFLAGS, &want);
}

/* Makes f's change in the overlay whose root mnt is: through descriptors
 * of the overlay itself (never a path that could lead off it onto the
 * disk). */
static int disk_change(const struct dt_fix *f, const char *dir, int mnt)
{
	struct statfs sf;
	int root = openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = root;
	if (root < 0)
		return -1;
	if (fstatfs(root, &sf) < 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC) {
		close(root);
		errno = EXDEV;
		return -1;
	}
	if (strcmp(f->disk.path, dir)) {
		const char *leaf = strrchr(f->disk.path, '/');
		fd = openat(root, leaf ? leaf + 1 : f->disk.path,
		            O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	}
	struct stat st;
	int rc = fd < 0 ? -1 : 0;
	if (!rc && f->disk.clear_iflags)
		rc = disk_clear_iflags(fd, f->disk.clear_iflags);
	if (!rc && f->disk.uid >= 0)
		rc = fchown(fd, (uid_t)f->disk.uid, (gid_t)-1);
	if (!rc)
		rc = fstat(fd, &st); /* as the chown left it: set-id bits cleared */
	/* the mode was computed from the ring's record of it, the traced
	 * program's to forge: only the owner's and group's bits the fix
	 * grants are added to the file as it is, never set-id, sticky or
	 * others' bits (a set-uid root copy would be root for the re-run) */
	if (!rc && f->disk.mode >= 0)
		rc = fchmod(fd, (st.st_mode & 07777) | ((mode_t)f->disk.mode & 0770));
	int e = errno;
	if (fd >= 0 && fd != root)
		close(fd);
	close(root);
	errno = e;
	return rc;
}

/* The scratch tmpfs the overlays' layers live in, pinned by descriptor:
 * its directory lies in /tmp, where a traced program may rename it. */
static int disk_scratch_make(void)
{
	struct statfs sf;
	snprintf(disk_scratch, sizeof(disk_scratch), "/tmp/denytrace-overlay.XXXXXX");
	if (!mkdtemp(disk_scratch))
		return -1;
	int fd = open(disk_scratch, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char pinned[64];
	snprintf(pinned, sizeof(pinned), "/proc/self/fd/%d", fd);
	if (fd < 0 || mount("tmpfs", pinned, "tmpfs", 0, "mode=0700") < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	/* the tmpfs now on that directory (a magic link resolves to the
	 * directory under it, so open it by its name and check) */
	disk_scratch_fd = open(disk_scratch, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (disk_scratch_fd >= 0 &&
	    (fstatfs(disk_scratch_fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC)) {
		close(disk_scratch_fd);
		disk_scratch_fd = -1;
		errno = EXDEV;
	}
	return disk_scratch_fd < 0 ? -1 : 0;
}

/* Makes every verifiable mode and owner change on an overlay of its
 * directory, in a mount namespace of this process's own: the runs started
 * from here on see the changed directory, the disk never does. Returns 0,
 * or an exit status with the message printed. */
static int verify_disk_apply(const struct dt_fix_plan *plan)
{
	size_t n = 0;
	for (size_t i = 0; i < plan->n; i++)
		n += disk_verifiable(&plan->fixes[i]);
	if (!n)
		return 0;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return dt_fail(DT_EXIT_INTERNAL,
		               "fix: no private mount namespace for the overlay: %s",
		               strerror(errno));
	if (disk_scratch_make() < 0)
		return dt_fail(DT_EXIT_INTERNAL, "fix: no scratch directory for the overlay: %s",
		               strerror(errno));
	for (size_t i = 0, k = 0; i < plan->n; i++) {
		const struct dt_fix *f = &plan->fixes[i];
		char dir[PATH_MAX];
		if (!disk_verifiable(f))
			continue;
		int mnt = disk_overlay(disk_dir(f, dir, sizeof(dir)), k++);
		int rc = mnt < 0 ? -1 : disk_change(f, dir, mnt);
		int e = errno;
		if (mnt >= 0)
			close(mnt);
		if (rc < 0)
			return dt_fail(DT_EXIT_INTERNAL,
			               "fix: could not make the change on an overlay of %s: %s",
			               dir, strerror(e));
	}
	return 0;
}

/* Leaves no scratch directory behind on the disk. */
static void verify_disk_undo(const struct dt_fix_plan *plan)
{
	if (!disk_scratch[0])
		return;
	for (size_t i = 0; i < plan->n; i++) {
		char dir[PATH_MAX];
		if (disk_verifiable(&plan->fixes[i]))
			umount2(disk_dir(&plan->fixes[i], dir, sizeof(dir)), MNT_DETACH);
	}
	if (disk_scratch_fd >= 0)
		close(disk_scratch_fd);
	disk_scratch_fd = -1;
	umount2(disk_scratch, MNT_DETACH | UMOUNT_NOFOLLOW);
	rmdir(disk_scratch);
	disk_scratch[0] = 0;
}

/* ---- the command to run ---- */

char **dt_verify_command(const char *self, const char *ring, char *const *argv, size_t argc,
                         int codex)
{
	char *const *words = argv;
	char **cmd = calloc(argc + 10, sizeof(*cmd));
	size_t n = 0;
	if (!cmd)
		return NULL;
	cmd[n++] = (char *)self;
	cmd[n++] = codex ? "codex" : "run";
	cmd[n++] = "-q";
	cmd[n++] = "-o";
	cmd[n++] = (char *)ring;
	if (codex) {
		cmd[n++] = "--codex";
		cmd[n++] = words[0];
	}
	cmd[n++] = "--";
	for (char *const *w = words + (codex ? 1 : 0); *w; w++)
		cmd[n++] = *w;
	cmd[n] = NULL;
	return cmd;
}

int dt_verify_check(const struct dt_fix_inputs *in, const struct dt_fix_plan *plan)
{
	if (!in->launch && !in->trusted)
		return dt_fail(
		    DT_EXIT_NOINPUT,
		    "fix: the ring has no launch record, so there is no command to run "
		    "again; record the worker with `denytrace run` or `denytrace codex`, or give "
		    "the command after --");
	if (!in->trusted)
		return dt_fail(DT_EXIT_UNTRUSTED,
		               "fix: nothing was run: %s; the command above is what the ring "
		               "claims, and a ring is written by the traced program. To run it, "
		               "give the command yourself: denytrace fix --verify RING -- "
		               "COMMAND...",
		               in->source);
	if (!plan->argv)
		return dt_fail(DT_EXIT_BADINPUT, "fix: %s; nothing was run",
		               plan->no_rewrite ? plan->no_rewrite : "no command line to run");
	struct stat st;
	if (!in->l.cwd || stat(in->l.cwd, &st) < 0 || !S_ISDIR(st.st_mode))
		return dt_fail(DT_EXIT_NOINPUT,
		               "fix: the launch ran in %s, which is not a directory here (%s); "
		               "nothing was run",
		               in->l.cwd ? in->l.cwd : "an unknown directory",
		               in->l.cwd ? strerror(errno ? errno : ENOTDIR) : "not recorded");
	char path[PATH_MAX];
	const char *prog = plan->argv[0];
	int found =
	    strchr(prog, '/') ? access(prog, X_OK) == 0 : dt_which(prog, path, sizeof(path)) == 0;
	if (!found)
		return dt_fail(DT_EXIT_NOTFOUND,
		               "fix: the launch's command '%s' is not found here; nothing was run",
		               prog);
	return 0;
}

int dt_verify_self(char *self, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", self, cap - 1);
	if (n <= 0)
		return dt_fail(DT_EXIT_INTERNAL, "fix: cannot find the denytrace binary");
	self[n] = 0;
	return 0;
}

/* Did the program refused (refused: a refusal of the recorded run) run
 * in after? No refusal from a re-run that never got to it (the sandbox
 * failed to start: bwrap exit 1) proves nothing. Judged by the name the
 * kernel gives the process (comm), which an exec in place changes, as a
 * process record, written once per pid, does not. A refusal without one
 * is taken as run. */
static int refused_program_ran(const struct dt_record *refused, const struct dt_report *after)
{
	if (!refused || !refused->comm || !refused->comm[0])
		return 1;
	for (size_t k = 0; k < after->n; k++)
		if (after->recs[k].comm && !strcmp(after->recs[k].comm, refused->comm))
			return 1;
	return 0;
}

static const struct dt_record *first_refusal(const struct dt_fix_inputs *in, size_t i)
{
	return in->p[i].nrefusals ? in->p[i].refusals[0] : NULL;
}

/* The verdict of finding i when its program did not run again (in runs,
 * of how many: 0 when run once), with why in out->rerun_why. */
static enum dt_verify_state not_run_again(const struct dt_fix_inputs *in, size_t i,
                                          struct dt_verify *out, unsigned runs, unsigned of)
{
	char when[64];
	if (of)
		snprintf(when, sizeof(when), "in %u of %u fixed runs", runs, of);
	else
		snprintf(when, sizeof(when), "(the re-run exited %d before it)", out->status);
	snprintf(out->rerun_why, sizeof(out->rerun_why),
	         "%s, which was refused, did not run again %s: no refusal of a program that "
	         "never ran proves a fix",
	         first_refusal(in, i)->comm, when);
	return DT_VERIFY_CANNOT;
}

int dt_verify_once(const struct dt_report *before, const struct dt_fix_inputs *in,
                   const struct dt_fix_plan *plan, const char *after_ring, struct dt_verify *out)
{
	static char self[PATH_MAX]; /* out->cmd borrows it, and outlives this call */
	int rc = dt_verify_self(self, sizeof(self));
	if (rc)
		return rc;
	memset(out, 0, sizeof(*out));
	out->cwd = in->l.cwd;
	snprintf(out->ring, sizeof(out->ring), "%s", after_ring);
	out->cmd = dt_verify_command(self, out->ring, plan->argv, plan->argc, in->via_codex);
	out->v = calloc(in->n + 1, sizeof(*out->v));
	out->n = in->n;
	if (!out->cmd || !out->v)
		return dt_fail(DT_EXIT_INTERNAL, "out of memory");
	unlink(out->ring);
	if ((rc = verify_disk_apply(plan))) {
		verify_disk_undo(plan);
		return rc;
	}
	/* the command's output goes to stderr: stdout is fix's report */
	struct dt_spawn sp = {
	    .argv = out->cmd, .cwd = out->cwd, .in = -2, .out = 2, .err = -1, .who = "fix"};
	pid_t pid = dt_spawn(&sp);
	out->status = pid < 0 ? -1 : dt_wait_timeout(pid, 24 * 3600);
	verify_disk_undo(plan);
	struct dt_report after;
	char err[512];
	const char *rings[] = {out->ring};
	struct dt_report_opts o = {0};
	if (dt_report_load(&after, rings, 1, err, sizeof(err)) != 0 ||
	    dt_report_build(&after, &o, err, sizeof(err)) != 0) {
		dt_report_free(&after);
		return dt_fail(DT_EXIT_INTERNAL,
		               "fix: the re-run left no readable ring (%s; exit %d)", err,
		               out->status);
	}
	out->new_refusals = dt_fix_new_refusals(before, in, &after, out);
	for (size_t i = 0; i < in->n; i++) {
		struct dt_verify_result *v = &out->v[i];
		v->before = in->counts[i];
		v->after = dt_fix_still_refused(before, in, i, &after);
		v->state = plan->fixes[i].no_verify        ? DT_VERIFY_CANNOT
		           : v->after || out->new_refusals ? DT_VERIFY_NOT_FIXED
		           : !refused_program_ran(first_refusal(in, i), &after)
		               ? not_run_again(in, i, out, 0, 0)
		               : DT_VERIFY_FIXED;
	}
	dt_report_free(&after);
	return 0;
}

/* ---- soaking ---- */

struct verify_soak_ctx {
	const struct dt_report *before;
	const struct dt_fix_inputs *in;
	unsigned *refused;           /* per problem: runs in which it was refused */
	struct dt_verify *count_new; /* the fixed runs: count their new refusals here */
	unsigned *absent;            /* the fixed runs, per problem: runs without its program */
};

static void verify_on_run(void *ctx, int index, const char *ring, int failed)
{
	struct verify_soak_ctx *c = ctx;
	struct dt_report r;
	char err[512];
	const char *rings[] = {ring};
	struct dt_report_opts o = {0};
	(void)index;
	(void)failed;
	if (dt_report_load(&r, rings, 1, err, sizeof(err)) != 0 ||
	    dt_report_build(&r, &o, err, sizeof(err)) != 0) {
		dt_report_free(&r);
		return;
	}
	for (size_t i = 0; i < c->in->n; i++) {
		c->refused[i] += dt_fix_still_refused(c->before, c->in, i, &r) > 0;
		if (c->absent)
			c->absent[i] += !refused_program_ran(first_refusal(c->in, i), &r);
	}
	uint64_t fresh = c->count_new ? dt_fix_new_refusals(c->before, c->in, &r, c->count_new) : 0;
	if (fresh) {
		c->count_new->new_refusals += fresh;
		c->count_new->runs_new++;
	}
	dt_report_free(&r);
}

static void verify_on_signal(int sig)
{
	(void)sig;
	dt_soak_stop = 1;
}

/* One soak of argv; *done and *failed out. Returns 0 or an exit status. */
static int verify_soak_one(struct verify_soak_ctx *c, char **argv, const char *cwd, unsigned runs,
                           unsigned *done, unsigned *failed)
{
	struct dt_soak_opts o = {.runs = runs, .jobs = 1, .quiet = !isatty(2)};
	char self[PATH_MAX], dir[] = "/tmp/denytrace-fix.XXXXXX", msg[1024] = "";
	o.cmd = argv;
	o.cwd = cwd;
	o.on_run = verify_on_run;
	o.ctx = c;
	int rc = dt_soak_prepare(&o, self, sizeof(self), dir);
	if (rc >= 0)
		return rc;
	struct dt_soak s = {0};
	s.first_fail = -1;
	int infra = dt_soak_loop(&s, &o, self, dir, dt_soak_now(), msg, sizeof(msg));
	if (s.first_fail >= 0)
		dt_soak_unlink_run(dir, s.first_fail);
	rmdir(dir);
	*done = s.done;
	*failed = s.failures;
	dt_soak_free(&s);
	if (infra && !*done)
		return dt_fail(DT_EXIT_INTERNAL, "fix: %s", msg);
	return 0;
}

int dt_verify_soak(const struct dt_report *before, const struct dt_fix_inputs *in,
                   const struct dt_fix_plan *plan, unsigned runs, struct dt_verify *out)
{
	memset(out, 0, sizeof(*out));
	out->runs = runs;
	out->cwd = in->l.cwd;
	out->v = calloc(in->n + 1, sizeof(*out->v));
	out->n = in->n;
	unsigned *refused = calloc(3 * (in->n + 1), sizeof(*refused));
	char **orig = in->argv;
	out->cmd = calloc(plan->argc + 1, sizeof(*out->cmd));
	if (!out->v || !refused || !out->cmd) {
		free(refused);
		return dt_fail(DT_EXIT_INTERNAL, "out of memory");
	}
	memcpy(out->cmd, plan->argv, plan->argc * sizeof(*out->cmd));
	struct sigaction sa = {0}, old_int, old_term;
	sa.sa_handler = verify_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	struct verify_soak_ctx c = {before, in, refused, NULL, NULL};
	int rc = verify_soak_one(&c, orig, out->cwd, runs, &out->done_before, &out->failed_before);
	c.refused = refused + in->n + 1;
	c.count_new = out;
	c.absent = refused + 2 * (in->n + 1);
	if (!rc && !dt_soak_stop)
		rc = verify_disk_apply(plan);
	if (!rc && !dt_soak_stop)
		rc = verify_soak_one(&c, out->cmd, out->cwd, runs, &out->done_after,
		                     &out->failed_after);
	verify_disk_undo(plan);
	out->interrupted = dt_soak_stop != 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	for (size_t i = 0; i < in->n; i++) {
		struct dt_verify_result *v = &out->v[i];
		v->before = in->counts[i];
		v->runs_before = refused[i];
		v->runs_after = refused[in->n + 1 + i];
		unsigned absent = c.absent[i];
		v->state = plan->fixes[i].no_verify ? DT_VERIFY_CANNOT
		           : v->runs_after || !out->done_after || out->runs_new
		               ? DT_VERIFY_NOT_FIXED
		           : absent ? not_run_again(in, i, out, absent, out->done_after)
		                    : DT_VERIFY_FIXED;
	}
	free(refused);
	return rc;
}

int dt_verify_none(const struct dt_fix_inputs *in, struct dt_verify *out)
{
	memset(out, 0, sizeof(*out));
	out->v = calloc(in->n + 1, sizeof(*out->v));
	out->n = in->n;
	if (!out->v)
		return dt_fail(DT_EXIT_INTERNAL, "out of memory");
	for (size_t i = 0; i < in->n; i++) {
		out->v[i].state = DT_VERIFY_CANNOT;
		out->v[i].before = in->counts[i];
	}
	return 0;
}

void dt_verify_free(struct dt_verify *v)
{
	free(v->v);
	free(v->cmd);
	memset(v, 0, sizeof(*v));
}
