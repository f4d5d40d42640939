/* SPDX-License-Identifier: MIT */
/* Mount tables of process records (mounts.h), and what they say about the
 * root set: the effective roots and whether each expected root was granted
 * (roots.h). */
#include "mounts.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "roots.h"

const struct dt_mount *dt_mount_for_path(const struct dt_record *proc, const char *path)
{
	const struct dt_mount *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; proc && path && i < proc->nmounts; i++) {
		const struct dt_mount *m = &proc->mounts[i];
		size_t len;

		if (!m->path || !dt_path_under(path, m->path))
			continue;
		len = strlen(m->path);
		if (!best || len >= best_len) {
			best = m;
			best_len = len;
		}
	}
	return best;
}

int dt_proc_sandboxed(const struct dt_record *proc)
{
	const struct dt_mount *root = dt_mount_for_path(proc, "/");
	return root && !strcmp(root->path, "/") && !root->rw;
}

int dt_proc_path_writable(const struct dt_record *proc, const char *path)
{
	const struct dt_mount *m = dt_mount_for_path(proc, path);
	return m ? m->rw : -1;
}

/* Kernel interfaces, not places a worker keeps data. */
static bool pseudo_fstype(const char *t)
{
	static const char *const names[] = {
	    "proc",    "sysfs",       "devpts", "mqueue",    "securityfs", "debugfs",
	    "tracefs", "bpf",         "pstore", "hugetlbfs", "fusectl",    "configfs",
	    "autofs",  "binfmt_misc", "nsfs",   "efivarfs",  "selinuxfs",  "rpc_pipefs",
	};

	if (!strncmp(t, "cgroup", 6))
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(t, names[i]))
			return true;
	return false;
}

/* Under /proc, /sys and /dev only a real filesystem bound there counts; the
 * device nodes and shared-memory tmpfs every sandbox provides do not. */
static bool kernel_tree_fstype(const char *t)
{
	return !*t || !strcmp(t, "tmpfs") || !strcmp(t, "devtmpfs") || !strcmp(t, "ramfs") ||
	       pseudo_fstype(t);
}

int dt_mount_is_pseudo(const struct dt_mount *m)
{
	const char *t = m->fstype ? m->fstype : "";

	if (pseudo_fstype(t))
		return true;
	if (dt_path_under(m->path, "/proc") || dt_path_under(m->path, "/sys") ||
	    dt_path_under(m->path, "/dev"))
		return kernel_tree_fstype(t);
	return false;
}

int dt_proc_has_writable_mount(const struct dt_record *proc)
{
	for (size_t i = 0; proc && i < proc->nmounts; i++)
		if (proc->mounts[i].rw && !dt_mount_is_pseudo(&proc->mounts[i]))
			return 1;
	return 0;
}

/* ---- what the sandbox granted ----------------------------------------------- */

void dt_roots_from_mounts(struct dt_rootset *rs, const struct dt_record *proc)
{
	char src[64];

	if (!rs || !proc)
		return;
	snprintf(src, sizeof(src), "writable mount (pid %lld)", (long long)proc->pid);
	for (size_t i = 0; i < proc->nmounts; i++) {
		const struct dt_mount *m = &proc->mounts[i];
		struct dt_root *r;

		if (!m->rw || !m->path || m->path[0] != '/' || dt_mount_is_pseudo(m))
			continue;
		r = dt_roots_add(rs, m->path, DT_ROOT_EFFECTIVE, src, NULL);
		if (r)
			r->granted = 1;
	}
}

void dt_roots_mark_granted(struct dt_rootset *rs, const struct dt_record *const *procs, size_t n)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++) {
		struct dt_root *r = &rs->v[i];
		/* Inside the sandbox Codex binds the canonical path. */
		const char *where = r->realpath ? r->realpath : r->path;
		bool any_sandbox = false, any_rw = false;

		if (r->kind == DT_ROOT_EFFECTIVE)
			continue;
		for (size_t p = 0; procs && p < n; p++) {
			const struct dt_mount *m;

			if (!procs[p] || !dt_proc_sandboxed(procs[p]))
				continue;
			any_sandbox = true;
			m = dt_mount_for_path(procs[p], where);
			if (m && m->rw)
				any_rw = true;
		}
		if (r->dropped_by)
			r->granted = any_rw ? 1 : 0;
		else
			r->granted = any_rw ? 1 : any_sandbox ? 0 : -1;
	}
}
