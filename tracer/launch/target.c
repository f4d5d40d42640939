/* SPDX-License-Identifier: MIT */
/* The process a seccomp notification is about (target.h). */
#include "target.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "envfilter.h"
#include "pathnorm.h"
#include "safeopen.h"
#include "secrets.h"
#include "supervisor.h"

/* Environment variables read from one exec: more than execve takes
 * (its strings and pointers share ARG_MAX, 2 MiB by default). */
#define DT_EXEC_MAX_ENV (1 << 20)

/* Who the target is; read only when a record is written (most notified
 * calls match no rule and need none of it). */
void dt_target_load(struct dt_target *t)
{
	if (t->loaded)
		return;
	t->loaded = 1;
	pid_t tid = t->tid;
	char p[64], line[256];
	snprintf(p, sizeof(p), "/proc/%d/status", (int)tid);
	FILE *f = fopen(p, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		int v;
		long a, b;
		if (sscanf(line, "Tgid: %d", &v) == 1)
			t->pid = v;
		else if (!strncmp(line, "NStgid:", 7)) {
			/* the last one is the pid in the process's own namespace */
			char *last = strrchr(line, '\t'), *sp = strrchr(line, ' ');
			if (sp > last)
				last = sp;
			t->nspid = last ? (pid_t)atoi(last + 1) : 0;
		} else if (sscanf(line, "PPid: %d", &v) == 1)
			t->ppid = v;
		else if (sscanf(line, "Uid: %ld %ld", &a, &b) == 2)
			t->uid = b;
		else if (sscanf(line, "Gid: %ld %ld", &a, &b) == 2)
			t->gid = b;
		else if (!strncmp(line, "Name:\t", 6)) {
			snprintf(t->comm, sizeof(t->comm), "%s", line + 6);
			t->comm[strcspn(t->comm, "\n")] = 0;
		}
	}
	fclose(f);
}

/* Copies a NUL-terminated string from the target; returns its length or -1. */
ssize_t dt_mem_str(int mem, uint64_t addr, char *out, size_t cap)
{
	if (!addr || mem < 0)
		return -1;
	size_t got = 0;
	while (got + 1 < cap) {
		/* never ask across a page boundary: the next page may be unmapped */
		size_t chunk = 4096 - ((addr + got) & 4095);
		if (chunk > cap - 1 - got)
			chunk = cap - 1 - got;
		ssize_t n = pread(mem, out + got, chunk, (off_t)(addr + got));
		if (n <= 0)
			return -1;
		char *z = memchr(out + got, 0, (size_t)n);
		if (z)
			return z - out;
		got += (size_t)n;
	}
	out[cap - 1] = 0;
	return -1; /* too long */
}

/* A window of the target's memory read at once for many strings: an
 * exec's environment strings usually sit side by side, and one read per
 * variable made an exec with thousands of them several times slower. */
struct dt_memwin {
	uint64_t base;
	size_t len;
	char buf[65536];
};

/* dt_mem_str through the window (refilled from addr when the string is
 * not whole in it). */
static ssize_t dt_memwin_str(int mem, struct dt_memwin *w, uint64_t addr, char *out, size_t cap)
{
	int inside = addr >= w->base && addr < w->base + w->len;
	if (!inside || !memchr(w->buf + (addr - w->base), 0, w->len - (addr - w->base))) {
		/* a read into an unmapped page stops there: a short count */
		ssize_t n = mem < 0 ? -1 : pread(mem, w->buf, sizeof(w->buf), (off_t)addr);
		w->base = addr;
		w->len = n > 0 ? (size_t)n : 0;
	}
	size_t at = (size_t)(addr - w->base);
	char *z = w->len > at ? memchr(w->buf + at, 0, w->len - at) : NULL;
	if (!z)
		return dt_mem_str(mem, addr, out, cap); /* longer than the window */
	size_t l = (size_t)(z - (w->buf + at));
	if (l + 1 > cap)
		return -1; /* too long */
	memcpy(out, w->buf + at, l + 1);
	return (ssize_t)l;
}

int dt_mem_u64s(int mem, uint64_t addr, uint64_t *out, size_t n)
{
	ssize_t r = pread(mem, out, n * 8, (off_t)addr);
	return r < 0 ? 0 : (int)(r / 8);
}

/* Directory a relative path of the target is resolved against, for
 * recording ("/proc/TID/cwd" or "/proc/TID/fd/N" read as a link). */
int dt_target_dir(pid_t tid, int dirfd, char *out, size_t cap)
{
	char p[64];
	if (dirfd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%d/cwd", (int)tid);
	else
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)tid, dirfd);
	ssize_t n = readlink(p, out, cap - 1);
	if (n <= 0)
		return -1;
	out[n] = 0;
	return 0;
}

/* The same path as a name this process can open, in the target's view of
 * the filesystem (its root, cwd and descriptors). */
void dt_target_openable(pid_t tid, int dirfd, const char *path, char *out, size_t cap)
{
	/* /proc/self through /proc/TID/root would be denytrace itself: the
	 * target's own entry instead (its /proc is ours: dt_proc_is_ours) */
	const char *rest = NULL;
	if (!strncmp(path, "/proc/self/", 11))
		rest = path + 10;
	else if (!strncmp(path, "/proc/thread-self/", 18))
		rest = path + 17;
	if (rest)
		snprintf(out, cap, "/proc/%d%s", (int)tid, rest);
	else if (path[0] == '/')
		snprintf(out, cap, "/proc/%d/root%s", (int)tid, path);
	else if (dirfd == AT_FDCWD)
		snprintf(out, cap, "/proc/%d/cwd/%s", (int)tid, path);
	else if (!path[0])
		snprintf(out, cap, "/proc/%d/fd/%d", (int)tid, dirfd);
	else
		snprintf(out, cap, "/proc/%d/fd/%d/%s", (int)tid, dirfd, path);
}

/* dir (absolute, normalised, in the target's view) with its symbolic
 * links resolved the way the kernel resolves them for the target: each
 * link read through /proc/TID/root, an absolute target starting again
 * at the target's root. Into out; -1 when a component cannot be read. */
static int dt_target_resolve_dir(int rootfd, const char *dir, char *out, size_t cap)
{
	char rest[PATH_MAX], link[PATH_MAX], cur[PATH_MAX] = "";
	size_t hops = 0;
	snprintf(rest, sizeof(rest), "%s", dir);
	while (rest[0]) {
		char *p = rest + strspn(rest, "/");
		size_t n = strcspn(p, "/");
		char comp[NAME_MAX + 1];
		if (n > NAME_MAX)
			return -1;
		memcpy(comp, p, n);
		comp[n] = 0;
		memmove(rest, p + n, strlen(p + n) + 1);
		if (!n || !strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(cur, '/');
			if (slash)
				*slash = 0;
			continue;
		}
		size_t cl = strlen(cur);
		if (cl + 1 + n + 1 > sizeof(cur))
			return -1;
		snprintf(cur + cl, sizeof(cur) - cl, "/%s", comp);
		/* relative to the target's root: never escapes it */
		ssize_t ln = readlinkat(rootfd, cur + 1, link, sizeof(link) - 1);
		if (ln < 0) {
			if (errno == EINVAL)
				continue; /* not a link */
			return -1;
		}
		if (++hops > 40)
			return -1;
		link[ln] = 0;
		cur[cl] = 0; /* the link's own directory */
		if (link[0] == '/')
			cur[0] = 0;
		char next[PATH_MAX];
		if (snprintf(next, sizeof(next), "%s/%s", link, rest) >= (int)sizeof(next))
			return -1;
		snprintf(rest, sizeof(rest), "%s", next);
	}
	snprintf(out, cap, "%s", cur[0] ? cur : "/");
	return 0;
}

/* The realpath the probe would have recorded for abs (absolute, in the
 * target's view): its directory resolved in the target's root and cwd,
 * plus the leaf. 0, or -1 when it cannot be told. */
int dt_target_realpath(pid_t tid, const char *abs, char *out, size_t cap)
{
	char root[64], dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(abs, '/');
	if (abs[0] != '/' || !slash)
		return -1;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)tid);
	int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -1;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - abs), abs);
	int rc = dt_target_resolve_dir(rootfd, dir[0] ? dir : "/", real, sizeof(real));
	close(rootfd);
	if (rc < 0)
		return -1;
	if (!slash[1])
		snprintf(out, cap, "%s", real);
	else
		snprintf(out, cap, "%s%s%s", real, strcmp(real, "/") ? "/" : "", slash + 1);
	return 0;
}

/* ELF without PT_INTERP is static; a script is judged by its interpreter.
 * Returns 1 static, 0 dynamic, -1 unknown, -2 cannot be opened (the exec
 * will fail: a PATH search trying directories). */
/* Opens openable for reading only when it is a regular file, looked at
 * through an O_PATH descriptor first (safeopen.c: as root, opening a
 * device a less privileged process names could rewind a tape). -2 when it
 * is missing or not a regular file (the exec will fail), -1 unreadable. */
static int dt_open_regular_at(const char *openable)
{
	int fd = dt_open_regular(openable, NULL);
	if (fd >= 0)
		return fd;
	if (fd == DT_OPEN_NOT_REGULAR || errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
		return -2;
	return -1; /* execute-only binaries exist: unknown, not absent */
}

int dt_exec_static(pid_t tid, const char *openable, int depth)
{
	int fd = dt_open_regular_at(openable);
	if (fd < 0)
		return fd;
	unsigned char buf[512];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	int res = -1;
	if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
		buf[n] = 0;
		char *p = (char *)buf + 2;
		while (*p == ' ' || *p == '\t')
			p++;
		p[strcspn(p, " \t\n")] = 0;
		char inner[PATH_MAX + 64];
		if (*p == '/' && depth < 4) {
			snprintf(inner, sizeof(inner), "/proc/%d/root%s", (int)tid, p);
			res = dt_exec_static(tid, inner, depth + 1);
			if (res == -2)
				res = -1;
		}
	} else if (n >= (ssize_t)sizeof(Elf32_Ehdr) && !memcmp(buf, ELFMAG, SELFMAG)) {
		int is64 = buf[EI_CLASS] == ELFCLASS64;
		uint64_t phoff;
		unsigned phnum, phentsize;
		if (is64 && n >= (ssize_t)sizeof(Elf64_Ehdr)) {
			Elf64_Ehdr eh;
			memcpy(&eh, buf, sizeof(eh));
			phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
		} else {
			Elf32_Ehdr eh;
			memcpy(&eh, buf, sizeof(eh));
			phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
		}
		if (phnum && phnum < 512 &&
		    phentsize >= (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) &&
		    phentsize <= 256) {
			res = 1;
			for (unsigned i = 0; i < phnum; i++) {
				unsigned char ph[256];
				if (pread(fd, ph, phentsize,
				          (off_t)(phoff + (uint64_t)i * phentsize)) !=
				    (ssize_t)phentsize) {
					res = -1;
					break;
				}
				uint32_t type;
				memcpy(&type, ph, 4); /* p_type is first in both classes */
				if (type == PT_INTERP) {
					res = 0;
					break;
				}
			}
		}
	}
	close(fd);
	return res;
}

/* Reads "Key:\tA\tB..." from /proc/PID/status: the first n numbers. */
static int dt_status_numbers(const char *status, const char *key, unsigned long *v, int n)
{
	const char *at = strstr(status, key);
	if (!at)
		return -1;
	at += strlen(key);
	for (int i = 0; i < n; i++) {
		char *end;
		v[i] = strtoul(at, &end, 10);
		if (end == at)
			return -1;
		at = end;
	}
	return 0;
}

/* Would pid exec'ing path change its ids (set-id bits on a mount that
 * honours them)? 1 with the effective uid it would get in *euid, and
 * whether no_new_privs keeps it from happening in *nnp; else 0. */
static int dt_exec_setid_ids(pid_t pid, const char *path, unsigned long *euid_out, int *nnp_out)
{
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & (S_ISUID | S_ISGID)))
		return 0;
	struct statvfs vfs;
	if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
		return 0;
	char name[64], status[8192];
	snprintf(name, sizeof(name), "/proc/%d/status", (int)pid);
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, status, sizeof(status) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	status[n] = 0;
	unsigned long uid[2], gid[2], nnp = 0;
	if (dt_status_numbers(status, "\nUid:", uid, 2) < 0 ||
	    dt_status_numbers(status, "\nGid:", gid, 2) < 0)
		return 0;
	dt_status_numbers(status, "\nNoNewPrivs:", &nnp, 1);
	/* the loader's secure mode: effective ids after exec differ from the
	 * real ones (a set-uid-root program run by root is not) */
	unsigned long euid = st.st_mode & S_ISUID ? st.st_uid : uid[1];
	unsigned long egid = st.st_mode & S_ISGID ? st.st_gid : gid[1];
	*euid_out = euid;
	*nnp_out = nnp != 0;
	return euid != uid[0] || egid != gid[0];
}

int dt_exec_setid(pid_t pid, const char *path)
{
	unsigned long euid;
	int nnp;
	/* under no_new_privs the set-id bits are ignored: nothing changes */
	return dt_exec_setid_ids(pid, path, &euid, &nnp) && !nnp;
}

int dt_exec_setid_lost(pid_t pid, const char *path, unsigned long *euid)
{
	int nnp;
	return dt_exec_setid_ids(pid, path, euid, &nnp) && nnp;
}

/* The exec's argv (at argv_p in the target), NUL-separated into argv
 * (cap bytes, *len used). Returns 1 when it was cut short. */
int dt_exec_argv(const struct dt_target *t, uint64_t argv_p, char *argv, size_t cap, size_t *len)
{
	size_t an = 0;
	int cut = 0;
	uint64_t ptrs[64];
	int np = argv_p ? dt_mem_u64s(t->mem, argv_p, ptrs, 64) : 0;
	int ended = 0;
	for (int i = 0; i < np; i++) {
		if (!ptrs[i]) {
			ended = 1;
			break;
		}
		char arg[1024];
		ssize_t l = dt_mem_str(t->mem, ptrs[i], arg, sizeof(arg));
		if (l < 0) {
			cut = 1;
			break;
		}
		if (an + (size_t)l + 1 > cap) {
			cut = 1;
			break;
		}
		memcpy(argv + an, arg, (size_t)l + 1);
		an += (size_t)l + 1;
	}
	if (!ended)
		cut = 1;
	*len = an;
	return cut;
}

/* The exec's new environment (at envp_p): LD_PRELOAD (is the probe in
 * it?) into preload, and the variables that decide roots, NUL-separated
 * into envs, recorded like a process record's (never a secret), so that
 * the report can derive Codex, Hermes and hcom roots from any exec of the
 * tree, even one the probe cannot enter. Returns 1 when LD_PRELOAD is set. */
int dt_exec_env(const struct dt_target *t, uint64_t envp_p, char *preload, size_t preloadcap,
                char *envs, size_t envscap, size_t *envslen, int *entry)
{
	int have_preload = 0;
	*entry = 0;
	size_t envlen = 0;
	uint64_t env[256];
	uint64_t off = 0;
	struct dt_memwin *win = calloc(1, sizeof(*win));
	/* every variable, as many as the kernel takes (ARG_MAX bounds them):
	 * LD_PRELOAD may come after the 4096th */
	for (int round = 0; envp_p && win && round < DT_EXEC_MAX_ENV / 256; round++) {
		int ne = dt_mem_u64s(t->mem, envp_p + off * 8, env, 256);
		int end = ne < 256;
		for (int i = 0; i < ne; i++) {
			if (!env[i]) {
				end = 1;
				break;
			}
			char e[2048];
			ssize_t el = dt_memwin_str(t->mem, win, env[i], e, sizeof(e));
			if (el < 0)
				continue;
			const char *eq = strchr(e, '=');
			if (!eq)
				continue;
			if (!have_preload && !strncmp(e, "LD_PRELOAD=", 11)) {
				snprintf(preload, preloadcap, "%s", e + 11);
				have_preload = 1;
			}
			if (!strcmp(e, "DENYTRACE_ENTRY=1"))
				*entry = 1;
			if (dt_env_name_is_wanted(e, (size_t)(eq - e), NULL) &&
			    envlen + (size_t)el + 1 < envscap) {
				memcpy(envs + envlen, e, (size_t)el + 1);
				envlen += (size_t)el + 1;
			}
		}
		if (end)
			break;
		off += 256;
	}
	free(win);
	*envslen = envlen;
	return have_preload;
}

/* Is the file a create names missing now, in the target's view (its root,
 * cwd, dirfd)? 1 when it is missing and its directory exists, so the call
 * would make a new entry; 0 when it exists; -1 when unknown (op=new then
 * does not match: never refuse on a guess). Decided when the call is
 * notified: a file another process creates in between is not seen. */
int dt_target_path_missing(pid_t tid, int dirfd, const char *path, int nofollow)
{
	char p[PATH_MAX + 64];
	struct stat st;
	if (!path[0])
		return -1;
	dt_target_openable(tid, dirfd, path, p, sizeof(p));
	if (fstatat(AT_FDCWD, p, &st, nofollow ? AT_SYMLINK_NOFOLLOW : 0) == 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	/* a missing directory fails with ENOENT whatever the rules say */
	char *slash = strrchr(p, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode) ? 1 : -1;
}
