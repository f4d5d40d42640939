/* SPDX-License-Identifier: MIT */
/*
 * The process record: written the first time a process has something to
 * record, never at exec (reading /proc at every exec would cost more than
 * the rest of the probe together). It says who the process is, which
 * variables decided its roots, and what the sandbox looks like from inside:
 * inside bubblewrap the writable mounts *are* the granted roots.
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/utsname.h>

#include "envfilter.h"
#include "probe_state.h"
#include "sys.h"
#include "version.h"

extern char **environ;

/* Reads a whole (small) /proc file; returns the length, NUL-terminated. */
static long dt_read_proc(const char *path, char *buf, size_t cap, int *truncated)
{
	int fd = dt_sys_openat(AT_FDCWD, path, O_RDONLY);
	if (fd < 0)
		return -1;
	size_t len = 0;
	for (;;) {
		long n = dt_sys_read(fd, buf + len, cap - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == cap - 1) {
			char c;
			if (truncated && dt_sys_read(fd, &c, 1) > 0)
				*truncated = 1;
			break;
		}
	}
	dt_sys_close(fd);
	buf[len] = 0;
	return (long)len;
}

static void dt_put_env(struct dt_buf *b)
{
	for (char **e = environ; e && *e; e++) {
		const char *eq = *e;
		while (*eq && *eq != '=')
			eq++;
		size_t n = (size_t)(eq - *e);
		if (!*eq || !dt_env_name_is_wanted(*e, n, dt_config.env_names))
			continue;
		dt_put_env_redacted(b, *e, n + 1 + dt_strlen(eq + 1));
	}
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static size_t dt_unescape(char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n + 1 && s[i + 1] >= '0' && s[i + 1] <= '7') {
			s[o++] = (char)(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) |
			                (s[i + 3] - '0'));
			i += 3;
		} else {
			s[o++] = s[i];
		}
	}
	return o;
}

static int dt_opts_have_ro(const char *s, size_t n)
{
	return (n >= 2 && s[0] == 'r' && s[1] == 'o' && (n == 2 || s[2] == ',')) ||
	       memmem(s, n, ",ro,", 4) != NULL || (n >= 3 && !memcmp(s + n - 3, ",ro", 3));
}

/* Returns 1 when not every mount made it into the record. */
static int dt_put_mounts(struct dt_buf *b, struct dt_proc_scratch *s)
{
	int truncated = 0, overflow = b->overflow;
	b->overflow = 0;
	long len = dt_read_proc("/proc/self/mountinfo", s->buf, sizeof(s->buf), &truncated);
	if (len < 0)
		return 0;
	char *p = s->buf;
	char *end = s->buf + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			truncated = 1; /* a partial last line: the buffer was full */
			break;
		}
		/* fields: id parent maj:min root mountpoint options [opt...] - fstype source super
		 */
		char *f[6] = {0};
		size_t fl[6] = {0};
		char *q = p;
		for (int i = 0; i < 6 && q < nl; i++) {
			f[i] = q;
			while (q < nl && *q != ' ')
				q++;
			fl[i] = (size_t)(q - f[i]);
			q++;
		}
		char *dash = memmem(p, (size_t)(nl - p), " - ", 3);
		if (f[5] && dash) {
			char *fstype = dash + 3;
			char *fe = fstype;
			while (fe < nl && *fe != ' ')
				fe++;
			char *super = fe + 1;
			while (super < nl && *super != ' ')
				super++; /* skip source */
			super++;
			int ro = dt_opts_have_ro(f[5], fl[5]) ||
			         (super < nl && dt_opts_have_ro(super, (size_t)(nl - super)));
			unsigned char blob[8 + PATH_MAX + 64];
			struct dt_mount_fact mf = {ro ? 0 : DT_MF_RW, 0};
			memcpy(blob, &mf, 8);
			size_t mpl = dt_unescape(f[4], fl[4]);
			size_t ftl = (size_t)(fe - fstype);
			if (mpl < PATH_MAX && ftl < 64) {
				memcpy(blob + 8, f[4], mpl);
				blob[8 + mpl] = 0;
				memcpy(blob + 9 + mpl, fstype, ftl);
				dt_put(b, DT_T_MOUNT, blob, (uint32_t)(9 + mpl + ftl));
			}
		}
		p = nl + 1;
	}
	truncated |= b->overflow; /* a mount that did not fit was left out */
	b->overflow |= overflow;
	return truncated;
}

static void dt_put_status(struct dt_buf *b, struct dt_proc_scratch *s)
{
	if (dt_read_proc("/proc/self/status", s->buf, 8192, NULL) < 0)
		return;
	static const struct {
		const char *key;
		uint16_t tag;
	} keys[] = {{"\nSeccomp:", DT_T_SECCOMP},
	            {"\nSeccomp_filters:", DT_T_SECCOMP_FILTERS},
	            {"\nNoNewPrivs:", DT_T_NO_NEW_PRIVS}};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char *at = strstr(s->buf, keys[i].key);
		if (!at)
			continue;
		at += dt_strlen(keys[i].key);
		while (*at == ' ' || *at == '\t')
			at++;
		uint64_t v = 0;
		while (*at >= '0' && *at <= '9')
			v = v * 10 + (uint64_t)(*at++ - '0');
		dt_put_u64(b, keys[i].tag, v);
	}
}

/* Which machine (and which boot of it) the process ran on: a report over
 * rings from many hosts tells their processes apart by it. The machine
 * id's hash costs SHA-256 on a small stack; the launch record has it. */
static void dt_put_host(struct dt_buf *b, struct dt_proc_scratch *s)
{
	struct utsname *u = (struct utsname *)(void *)s->buf;
	if (syscall(SYS_uname, u) == 0)
		dt_put_str(b, DT_T_HOSTNAME, u->nodename);
	long n = dt_read_proc("/proc/sys/kernel/random/boot_id", s->buf, 64, NULL);
	while (n > 0 && (s->buf[n - 1] == '\n' || s->buf[n - 1] == ' '))
		s->buf[--n] = 0;
	if (n > 0)
		dt_put_str(b, DT_T_BOOT_ID, s->buf);
}

static _Atomic int dt_proc_recorded_pid;
static _Atomic int dt_proc_recorded_vfork_pid;

DT_HIDDEN void dt_ensure_process_record(struct dt_ring *ring, struct dt_proc_scratch *s, int pid)
{
	/* Per process, not per address space: a fork child sees the parent's
	 * pid here and writes its own record. A vfork child shares the
	 * parent's memory, so it keeps its own marker and leaves the
	 * parent's alone. */
	int vfork_child = pid != atomic_load_explicit(&dt_self_pid, memory_order_relaxed);
	_Atomic int *marker = vfork_child ? &dt_proc_recorded_vfork_pid : &dt_proc_recorded_pid;
	int seen = atomic_load_explicit(marker, memory_order_relaxed);
	if (seen == pid || !atomic_compare_exchange_strong(marker, &seen, pid))
		return;

	struct dt_rec_header *rh = (struct dt_rec_header *)s->rec;
	struct dt_buf b = {s->rec, sizeof(*rh), sizeof(s->rec), 0};
	rh->type = DT_REC_PROCESS;
	dt_put_common(&b, pid, 0);
	dt_put_str(&b, DT_T_VERSION, DT_VERSION_STRING);
	dt_put_host(&b, s);
	dt_put_u64(&b, DT_T_EUID_REAL, (uint64_t)syscall(SYS_getuid));
	if (dt_sys_readlinkat(AT_FDCWD, "/proc/self/exe", s->path, sizeof(s->path)) > 0)
		dt_put_str(&b, DT_T_EXE, s->path);
	if (syscall(SYS_getcwd, s->path, sizeof(s->path)) > 0)
		dt_put_str(&b, DT_T_CWD, s->path);

	dt_put_status(&b, s);
	struct stat st;
	if (dt_sys_fstatat(AT_FDCWD, "/proc/self/ns/mnt", &st, 0) == 0)
		dt_put_u64(&b, DT_T_MNT_NS, st.st_ino);
	if (dt_sys_fstatat(AT_FDCWD, "/proc/self/ns/user", &st, 0) == 0)
		dt_put_u64(&b, DT_T_USER_NS, st.st_ino);

	/* The budget: mounts before argv and environment (a large variable
	 * must not push the sandbox's roots out), and room kept for the two
	 * markers that say something was cut, so that they always fit. */
	b.cap -= 2 * (4 + 8);
	int mounts_cut = dt_put_mounts(&b, s);
	int argv_cut = 0;
	long n = dt_read_proc("/proc/self/cmdline", s->buf, 4096, &argv_cut);
	if (n > 0) /* --password=..., NAME=VALUE, URL passwords: never recorded */
		argv_cut |= dt_put_argv_redacted(&b, s->buf, (size_t)n);
	dt_put_env(&b);
	b.cap += 2 * (4 + 8);
	if (mounts_cut)
		dt_put_u64(&b, DT_T_MOUNTS_TRUNC, 1);
	if (argv_cut)
		dt_put_u64(&b, DT_T_ARGV_TRUNC, 1);

	rh->len = b.len;
	dt_ring_put(ring, rh);
}
