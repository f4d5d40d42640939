/* SPDX-License-Identifier: MIT */
/* What no fix may grant, bind, chown or chmod (dt_fix_forbidden, fix.h):
 * /, system directories, homes, what holds the launch. */
#include "fix.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codexargs.h"
#include "fix_int.h"
#include "mounts.h"
#include "names.h"
#include "recfmt.h"
#include "roots_int.h"

/* ---- what no fix touches ---- */

/* Nothing in these is ever the user's to hand out. */
static const char *const system_trees[] = {"/etc",   "/usr",    "/bin",  "/sbin", "/lib",  "/lib32",
                                           "/lib64", "/libx32", "/boot", "/dev",  "/proc", "/sys"};
/* These themselves: what lies in them may be someone's own directory. */
static const char *const system_dirs[] = {"/var",       "/var/lib", "/var/cache", "/var/log",
                                          "/var/spool", "/run",     "/home",      "/opt",
                                          "/srv",       "/mnt",     "/media",     "/snap"};

/* The caller's home directories: $HOME and the password database's. */
static int is_own_home(const char *dir)
{
	const char *home = getenv("HOME");
	struct passwd *pw = getpwuid(geteuid());
	return (home && *home && !strcmp(dir, home)) || (pw && !strcmp(dir, pw->pw_dir));
}

static int under_own_home(const char *dir)
{
	const char *home = getenv("HOME");
	struct passwd *pw = getpwuid(geteuid());
	return (home && *home && strcmp(home, "/") && dt_path_under(dir, home)) ||
	       (pw && strcmp(pw->pw_dir, "/") && dt_path_under(dir, pw->pw_dir));
}

/* Another user's home (one under /home, or /root for anyone but root's
 * own), holding dir: its owner's name into buf. */
static int in_other_home(const char *dir, char *who, size_t cap)
{
	if (dt_path_under(dir, "/root") && !(geteuid() == 0 && under_own_home(dir))) {
		snprintf(who, cap, "root's home /root");
		return 1;
	}
	int found = 0;
	setpwent();
	for (struct passwd *pw; !found && (pw = getpwent());)
		if (pw->pw_uid != geteuid() && !strncmp(pw->pw_dir, "/home/", 6) &&
		    dt_path_under(dir, pw->pw_dir)) {
			snprintf(who, cap, "%s's home %s", pw->pw_name, pw->pw_dir);
			found = 1;
		}
	endpwent();
	return found;
}

/* A directory the launch works in: its own directory, a workspace. */
static const char *holds_launch(const char *dir, const struct dt_fix_launch *l)
{
	if (l->cwd && strcmp(dir, l->cwd) && dt_path_under(l->cwd, dir))
		return l->cwd;
	for (size_t i = 0; l->rs && i < l->rs->n; i++) {
		const struct dt_root *r = &l->rs->v[i];
		if (r->source && strcasestr(r->source, "workspace") && strcmp(dir, r->path) &&
		    dt_path_under(r->path, dir))
			return r->path;
	}
	return NULL;
}

static const char *forbidden_path(const char *dir, const struct dt_fix_launch *l, char *buf,
                                  size_t cap)
{
	char who[PATH_MAX + 64];
	const char *held;
	if (!strcmp(dir, "/"))
		return "it is /, the whole file system";
	for (size_t i = 0; i < sizeof(system_trees) / sizeof(*system_trees); i++)
		if (dt_path_under(dir, system_trees[i])) {
			snprintf(buf, cap, "%s is a system directory", system_trees[i]);
			return buf;
		}
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(*system_dirs); i++)
		if (!strcmp(dir, system_dirs[i])) {
			snprintf(buf, cap, "it is the system directory %s itself", dir);
			return buf;
		}
	if (is_own_home(dir))
		return "it is the home directory itself, with every file of the user";
	if ((held = holds_launch(dir, l))) {
		snprintf(buf, cap, "it holds the launch's directory %s, not only the root", held);
		return buf;
	}
	if (in_other_home(dir, who, sizeof(who))) {
		snprintf(buf, cap, "it is in %s, another user's", who);
		return buf;
	}
	return NULL;
}

/* A file with more than one name: a chown, chmod or bind of one name
 * reaches the inode under every other, wherever the program linked it
 * from. */
static const char *hard_linked(const char *path, char *buf, size_t cap)
{
	struct stat st;
	if (stat(path, &st) != 0 || S_ISDIR(st.st_mode) || st.st_nlink < 2)
		return NULL;
	snprintf(buf, cap,
	         "it has %ju hard links: the change would reach the file under every other "
	         "name, wherever those are",
	         (uintmax_t)st.st_nlink);
	return buf;
}

const char *dt_fix_forbidden(const char *dir, const struct dt_fix_launch *l, char *buf, size_t cap)
{
	const char *why = forbidden_path(dir, l, buf, cap);
	char real[PATH_MAX];
	/* a symbolic link does not make /etc anyone's */
	if (!why && realpath(dir, real) && strcmp(real, dir))
		why = forbidden_path(real, l, buf, cap);
	return why ? why : hard_linked(dir, buf, cap);
}
