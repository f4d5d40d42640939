/* SPDX-License-Identifier: MIT */
/* The process a seccomp notification is about, seen from the supervisor:
 * who it is (/proc), its memory, its paths as it sees them (its root, cwd
 * and descriptors), and what an exec it asks for would run. Internal to
 * supervisor.c and target.c. */
#ifndef DENYTRACE_TARGET_H
#define DENYTRACE_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The target as /proc shows it (tid's thread group). */
struct dt_target {
	pid_t tid, pid, ppid, nspid;
	long uid, gid;
	char comm[32];
	int mem;    /* /proc/TID/mem, or -1 */
	int loaded; /* the fields above were read from /proc/TID/status */
};

/* Who the target is; read only when a record is written (most notified
 * calls match no rule and need none of it). */
void dt_target_load(struct dt_target *t);

/* Copies a NUL-terminated string from the target; returns its length or -1. */
ssize_t dt_mem_str(int mem, uint64_t addr, char *out, size_t cap);

/* Reads n words from the target at addr. 0 or -1. */
int dt_mem_u64s(int mem, uint64_t addr, uint64_t *out, size_t n);

/* Directory a relative path of the target is resolved against, for
 * recording ("/proc/TID/cwd" or "/proc/TID/fd/N" read as a link). */
int dt_target_dir(pid_t tid, int dirfd, char *out, size_t cap);

/* The same path as a name this process can open, in the target's view of
 * the filesystem (its root, cwd and descriptors). */
void dt_target_openable(pid_t tid, int dirfd, const char *path, char *out, size_t cap);

/* The realpath the probe would have recorded for abs (absolute, in the
 * target's view): its directory resolved in the target's root and cwd,
 * plus the leaf. 0, or -1 when it cannot be told. */
int dt_target_realpath(pid_t tid, const char *abs, char *out, size_t cap);

/* ELF without PT_INTERP is static; a script is judged by its interpreter.
 * Returns 1 static, 0 dynamic, -1 unknown, -2 cannot be opened (the exec
 * will fail: a PATH search trying directories). */
int dt_exec_static(pid_t tid, const char *openable, int depth);

/* The exec's argv (at argv_p in the target), NUL-separated into argv
 * (cap bytes, *len used). Returns 1 when it was cut short. */
int dt_exec_argv(const struct dt_target *t, uint64_t argv_p, char *argv, size_t cap, size_t *len);

/* The exec's new environment (at envp_p): LD_PRELOAD (is the probe in
 * it?) into preload, and the variables that decide roots, NUL-separated
 * into envs, recorded like a process record's (never a secret), so that
 * the report can derive Codex, Hermes and hcom roots from any exec of the
 * tree, even one the probe cannot enter. Returns 1 when LD_PRELOAD is set. */
int dt_exec_env(const struct dt_target *t, uint64_t envp_p, char *preload, size_t preloadcap,
                char *envs, size_t envscap, size_t *envslen, int *entry);

/* Is the file a create names missing now, in the target's view (its root,
 * cwd, dirfd)? 1 when it is missing and its directory exists, so the call
 * would make a new entry; 0 when it exists; -1 when unknown (op=new then
 * does not match: never refuse on a guess). Decided when the call is
 * notified: a file another process creates in between is not seen. */
int dt_target_path_missing(pid_t tid, int dirfd, const char *path, int nofollow);

#endif
