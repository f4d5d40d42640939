/* SPDX-License-Identifier: MIT */
/* The Landlock rule a finding needs: every right its refused calls, and
 * SQLite over a connection's life, need beneath the directory (fix_int.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fix_int.h"
#include "mounts.h"
#include "roots_int.h"

/* Landlock's access rights a refused op needs (LANDLOCK_ACCESS_FS_*). A
 * rename or link also needs REFER when it crosses directories (landlock_ref). */
static const struct {
	const char *op; /* prefix of the op's name */
	const char *rights;
} landlock_rights[] = {
    {"open", "WRITE_FILE"},
    {"creat", "MAKE_REG|WRITE_FILE|TRUNCATE"},
    {"fopen", "WRITE_FILE"},
    {"freopen", "WRITE_FILE"},
    {"truncate", "TRUNCATE"},
    {"ftruncate", "TRUNCATE"},
    {"unlink", "REMOVE_FILE"},
    {"remove", "REMOVE_FILE"},
    {"rmdir", "REMOVE_DIR"},
    {"mkdir", "MAKE_DIR"},
    {"symlink", "MAKE_SYM"},
    {"mknod", "MAKE_FIFO"},
    {"rename", "MAKE_REG|REMOVE_FILE"},
    {"link", "MAKE_REG"},
};

/* What SQLite does to a file of each role over a connection's life, not
 * only the call that was refused first: the database is written and
 * truncated; -journal, -wal and -shm are created, written, truncated
 * (ftruncate of -shm, of a reset -wal) and unlinked by the last connection;
 * the unix-dotfile lock is a directory made and removed. Granting only the
 * first refusal's right costs one failed run per right. */
static const char *landlock_sqlite_rights(const char *role)
{
	if (!role)
		return NULL;
	if (!strcmp(role, "lock"))
		return "MAKE_DIR|REMOVE_DIR";
	if (!strcmp(role, "db") || !strcmp(role, "journal") || !strcmp(role, "wal") ||
	    !strcmp(role, "shm"))
		return "WRITE_FILE|TRUNCATE|MAKE_REG|REMOVE_FILE";
	return NULL;
}

static void landlock_add(char *out, size_t cap, const char *rights)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", rights);
	for (char *save = NULL, *r = strtok_r(buf, "|", &save); r; r = strtok_r(NULL, "|", &save)) {
		char word[64];
		snprintf(word, sizeof(word), "LANDLOCK_ACCESS_FS_%s", r);
		if (strstr(out, word))
			continue;
		size_t n = strlen(out);
		snprintf(out + n, cap - n, "%s%s", n ? " | " : "", word);
	}
}

/* The directory of path, into buf. */
static const char *landlock_dir_of(const char *path, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s", path ? path : "");
	char *slash = strrchr(buf, '/');
	if (slash)
		*(slash == buf ? slash + 1 : slash) = 0;
	return buf;
}

/* A rename or link between two directories needs REFER (Landlock answers
 * EXDEV without it, and ABI 1 never grants it). */
static int landlock_crosses_dirs(const struct dt_record *d)
{
	const char *a = d->p[0].realpath ? d->p[0].realpath : d->p[0].abspath;
	const char *b = d->p[1].realpath ? d->p[1].realpath : d->p[1].abspath;
	char da[PATH_MAX], db[PATH_MAX];
	if (!a || !b)
		return d->err == EXDEV;
	return strcmp(landlock_dir_of(a, da, sizeof(da)), landlock_dir_of(b, db, sizeof(db))) != 0;
}

static int landlock_op_is(const char *op, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(op, name, n) || (!strncmp(op, "__", 2) && !strncmp(op + 2, name, n));
}

/* The rights one refusal asks for, added to rights. */
static void landlock_refusal_rights(char *rights, size_t cap, const struct dt_record *d)
{
	const char *op = d->op ? d->op : "";
	int exists = d->p[0].has_st && (d->p[0].st.valid & DT_SF_EXISTS);
	if ((landlock_op_is(op, "open") || landlock_op_is(op, "fopen")) && !exists)
		landlock_add(rights, cap, "MAKE_REG|WRITE_FILE");
	if (landlock_op_is(op, "open") && (d->flags & O_TRUNC))
		landlock_add(rights, cap, "TRUNCATE");
	for (size_t k = 0; k < sizeof(landlock_rights) / sizeof(*landlock_rights); k++)
		if (landlock_op_is(op, landlock_rights[k].op))
			landlock_add(rights, cap, landlock_rights[k].rights);
	if ((landlock_op_is(op, "rename") || landlock_op_is(op, "link")) &&
	    landlock_crosses_dirs(d))
		landlock_add(rights, cap, "REFER");
	const char *sq = landlock_sqlite_rights(d->sqlite);
	if (sq)
		landlock_add(rights, cap, sq);
}

/* "LANDLOCK_ACCESS_FS_A | LANDLOCK_ACCESS_FS_B" as a launcher spells it:
 * "A|B". */
static char *landlock_short(const char *rights)
{
	char buf[1024] = "";
	size_t n = 0;
	for (const char *r = strstr(rights, "LANDLOCK_ACCESS_FS_"); r;
	     r = strstr(r + 1, "LANDLOCK_ACCESS_FS_")) {
		r += strlen("LANDLOCK_ACCESS_FS_");
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%.*s", n ? "|" : "",
		                      (int)strcspn(r, " |"), r);
		if (n >= sizeof(buf))
			break;
	}
	return xstrdup(buf);
}

/* The launcher's words for f's rule: --rule DIR=RIGHTS per directory. */
static void landlock_launcher_lines(struct dt_fix *f)
{
	for (size_t i = 0; i < f->landlock.ndirs; i++) {
		char *rule = xasprintf("%s=%s", f->landlock.dirs[i], f->landlock.rights);
		char *q = fix_sh_word(rule);
		fix_copy(f, "--rule %s", q);
		free(q);
		free(rule);
	}
	if (f->landlock.abi > 1)
		fix_copy(f, "--abi %d", f->landlock.abi);
}

static void landlock_why(struct dt_fix *f, const char *rights, int launcher)
{
	char dirs[2 * PATH_MAX + 8];
	snprintf(dirs, sizeof(dirs), "%s%s%s", f->landlock.dirs[0],
	         f->landlock.ndirs > 1 ? " and " : "",
	         f->landlock.ndirs > 1 ? f->landlock.dirs[1] : "");
	fix_set(&f->why, "the rights the refused calls needed%s, beneath %s only; %s",
	        strstr(rights, "_REMOVE_FILE") && strstr(rights, "_TRUNCATE")
	            ? " and every right SQLite uses on a database, its -journal, -wal and -shm "
	              "(it creates, truncates and deletes them)"
	            : "",
	        dirs,
	        launcher ? "the Landlock launcher on the command line builds the ruleset, so the "
	                   "rule goes there and --verify applies it"
	                 : "Landlock is set up by the program that restricts itself, not on this "
	                   "command line");
}

void fix_landlock(struct dt_fix *f, const struct dt_fix_problem *p, const char *const *dirs,
                  size_t ndirs, int launcher)
{
	char rights[1024] = "";
	for (size_t i = 0; i < p->nrefusals; i++)
		landlock_refusal_rights(rights, sizeof(rights), p->refusals[i]);
	if (!rights[0])
		landlock_add(rights, sizeof(rights), "WRITE_FILE");
	int refer = strstr(rights, "_REFER") != NULL, trunc = strstr(rights, "_TRUNCATE") != NULL;
	f->kind = launcher ? DT_FIX_COMMAND_LINE : DT_FIX_OUTSIDE;
	f->sandbox = DT_SB_LANDLOCK;
	for (size_t i = 0; i < ndirs && i < 2; i++)
		f->landlock.dirs[f->landlock.ndirs++] = xstrdup(dirs[i]);
	f->landlock.rights = landlock_short(rights);
	f->landlock.abi = refer ? 2 : 1;
	fix_set(&f->change, "%s a Landlock path-beneath rule for %s%s%s",
	        launcher ? "give the Landlock launcher" : "add", dirs[0], ndirs > 1 ? " and " : "",
	        ndirs > 1 ? dirs[1] : "");
	if (launcher)
		landlock_launcher_lines(f);
	for (size_t i = 0; i < f->landlock.ndirs; i++) {
		char *lit = fix_c_string(f->landlock.dirs[i]);
		fix_copy(f, "path_beneath: parent_fd = open(%s, O_PATH), allowed_access = %s", lit,
		         rights);
		free(lit);
	}
	if (refer || trunc)
		fix_copy(f, "# the ruleset's handled_access_fs must hold them too%s%s%s",
		         refer
		             ? "; REFER needs Landlock ABI 2 or later: a ruleset written for ABI 1 "
		               "can never grant it"
		             : "",
		         trunc ? "; TRUNCATE needs ABI 3 or later" : "",
		         trunc ? " (on ABI 1 and 2 truncation is not restricted)" : "");
	landlock_why(f, rights, launcher);
	if (!launcher)
		fix_set(
		    &f->no_verify,
		    "the Landlock ruleset is built by the program that restricts itself, which a "
		    "re-run builds again; a layer denytrace added could only take rights away "
		    "(Landlock layers stack, none grants back), and the kernel has no call that "
		    "reads a ruleset's rules, so denytrace cannot rebuild it with this rule; add "
		    "the rule where the ruleset is built and record the worker again (a launch "
		    "through a Landlock launcher on the command line, landlock-run, is verified)");
}

void fix_landlock_refer(struct dt_fix *f, const struct dt_fix_problem *p,
                        const struct dt_fix_launch *l, int launcher)
{
	const struct dt_record *d = p->nrefusals ? p->refusals[0] : NULL;
	const char *from = d ? (d->p[0].realpath ? d->p[0].realpath : d->p[0].abspath) : NULL;
	const char *to = d ? d->p[1].realpath : NULL;
	char a[PATH_MAX], b[PATH_MAX], buf[PATH_MAX + 128];
	const char *dirs[2];
	size_t n = 0;
	f->kind = DT_FIX_NONE;
	/* one rule beneath the root that holds both, else one per directory:
	 * the same rights on both, so the moved file gains no right (Landlock
	 * refuses a move that would) */
	if (p->root)
		dirs[n++] = p->root->path;
	else if (from && to) {
		dirs[n++] = landlock_dir_of(from, a, sizeof(a));
		dirs[n++] = landlock_dir_of(to, b, sizeof(b));
	} else {
		fix_set(&f->why, "the refusal names no two directories to grant REFER beneath");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const char *no = dt_fix_forbidden(dirs[i], l, buf, sizeof(buf));
		if (no) {
			fix_set(&f->why, "no command: it would grant REFER beneath %s, and %s",
			        dirs[i], no);
			return;
		}
	}
	fix_landlock(f, p, dirs, n, launcher);
	/* no root: the two directories are the traced program's choice (a
	 * rename out of ~/.ssh), shown but not handed to the re-run */
	if (!p->root && n)
		f->claimed = f->candidate = 1;
}
