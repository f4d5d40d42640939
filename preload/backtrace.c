/* SPDX-License-Identifier: MIT */
/*
 * Call stacks for refusals: instruction pointers, each with the module and
 * file offset it falls in. Symbolizing is left to the CLI (looking names up
 * here would open ELF files inside the traced process).
 *
 * The unwinder is unwind.c's, which keeps the rule of each return address
 * it has seen, and where it declines libgcc's _Unwind_Backtrace, the one
 * C++ exceptions use. Both open nothing and allocate nothing, and with
 * glibc 2.35+ find modules through the lock-free _dl_find_object (unwind.c
 * is used only after libgcc_s loaded, and looks that up beside it).
 * libunwind 1.6 (Debian 12)
 * was tried first and rejected: on its first unwind it opens a pipe it
 * keeps for the life of the process, then reads and writes those
 * descriptor numbers to test memory, even after the program has closed and
 * reused them (tests/integration/test_behaviour.c caught it writing bytes
 * of memory into the program's files); without the pipe it cannot step
 * past the first frame.
 *
 * libgcc_s is loaded with dlopen on the first refusal, not linked: loading
 * libraries at every exec costs more than a /bin/true exec itself. dlopen
 * takes the loader lock and mallocs, so it is attempted only where that
 * cannot deadlock: not in a vfork child, and not while a signal that has a
 * handler is blocked (the mark of running inside that handler). Otherwise
 * the record goes without a stack this time.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

#include "probe_state.h"
#include "sys.h"

#define DT_MAX_FRAMES 24
#define DT_MAX_MAPS 1024
#define DT_MAX_REBUILDS 8

struct dt_modmap {
	uint32_t n;
	uint32_t names_len;
	struct {
		uint64_t start, end, offset;
		uint32_t name; /* offset into names */
	} e[DT_MAX_MAPS];
	char names[65536];
	char buf[65536]; /* reading /proc/self/maps */
};

static _Atomic(struct dt_modmap *) dt_modmap_cur;
static _Atomic int dt_modmap_rebuilds;

static uint64_t dt_hex(const char **p)
{
	uint64_t v = 0;
	for (;;) {
		char c = **p;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return v;
		v = v * 16 + (uint64_t)d;
		(*p)++;
	}
}

static void dt_modmap_add_line(struct dt_modmap *m, const char *line, const char *end)
{
	/* start-end perms offset dev inode path */
	const char *p = line;
	uint64_t start = dt_hex(&p);
	if (*p++ != '-')
		return;
	uint64_t stop = dt_hex(&p);
	if (*p++ != ' ' || end - p < 5 || p[2] != 'x')
		return; /* only executable mappings hold code */
	p += 5;
	uint64_t off = dt_hex(&p);
	const char *path = memchr(p, '/', (size_t)(end - p));
	if (!path)
		path = memchr(p, '[', (size_t)(end - p)); /* [vdso] */
	if (!path || m->n >= DT_MAX_MAPS)
		return;
	size_t len = (size_t)(end - path);
	uint32_t name = m->names_len;
	if (m->n > 0 && !strncmp(m->names + m->e[m->n - 1].name, path, len) &&
	    m->names[m->e[m->n - 1].name + len] == 0) {
		name = m->e[m->n - 1].name;
	} else {
		if (m->names_len + len + 1 > sizeof(m->names))
			return;
		memcpy(m->names + m->names_len, path, len);
		m->names[m->names_len + len] = 0;
		m->names_len += (uint32_t)len + 1;
	}
	m->e[m->n].start = start;
	m->e[m->n].end = stop;
	m->e[m->n].offset = off;
	m->e[m->n].name = name;
	m->n++;
}

static struct dt_modmap *dt_modmap_build(void)
{
	struct dt_modmap *m =
	    mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	int fd = dt_sys_openat(AT_FDCWD, "/proc/self/maps", O_RDONLY);
	if (fd < 0) {
		munmap(m, sizeof(*m));
		return NULL;
	}
	size_t have = 0;
	for (;;) {
		long n = dt_sys_read(fd, m->buf + have, sizeof(m->buf) - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		char *p = m->buf;
		char *nl;
		while ((nl = memchr(p, '\n', have - (size_t)(p - m->buf)))) {
			dt_modmap_add_line(m, p, nl);
			p = nl + 1;
		}
		have -= (size_t)(p - m->buf);
		memmove(m->buf, p, have);
		if (have == sizeof(m->buf))
			have = 0; /* an absurd line: drop it */
	}
	dt_sys_close(fd);
	return m;
}

static int dt_modmap_find(const struct dt_modmap *m, uint64_t ip)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (ip >= m->e[i].start && ip < m->e[i].end)
			return (int)i;
	return -1;
}

static struct dt_modmap *dt_modmap_get(int rebuild)
{
	struct dt_modmap *m = atomic_load_explicit(&dt_modmap_cur, memory_order_acquire);
	if (m && !rebuild)
		return m;
	if (m && atomic_fetch_add(&dt_modmap_rebuilds, 1) >= DT_MAX_REBUILDS)
		return m;
	struct dt_modmap *fresh = dt_modmap_build();
	if (!fresh)
		return m;
	if (!atomic_compare_exchange_strong(&dt_modmap_cur, &m, fresh)) {
		munmap(fresh, sizeof(*fresh)); /* another thread won; use its table */
		return m;
	}
	return fresh;
}

/* ---- loading the unwinder ----------------------------------------------- */

typedef _Unwind_Reason_Code (*dt_unwind_fn)(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr (*dt_getip_fn)(struct _Unwind_Context *);
static _Atomic(dt_unwind_fn) dt_unw_backtrace;
static dt_getip_fn dt_unw_getip;
enum { DT_UNW_UNTRIED, DT_UNW_LOADING, DT_UNW_READY, DT_UNW_FAILED };
static _Atomic int dt_unw_state;

DT_HIDDEN void dt_backtrace_after_fork(void)
{
	int s = DT_UNW_LOADING;
	atomic_compare_exchange_strong(&dt_unw_state, &s, DT_UNW_UNTRIED);
}

struct dt_ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static int dt_safe_to_dlopen(void)
{
	if (dt_in_vfork_child())
		return 0;
	uint64_t blocked = 0;
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &blocked, 8) != 0)
		return 0;
	for (int sig = 1; blocked && sig <= 64; sig++) {
		if (!(blocked & (1ULL << (sig - 1))))
			continue;
		struct dt_ksigaction ka;
		if (syscall(SYS_rt_sigaction, sig, NULL, &ka, 8) != 0)
			return 0;
		if (ka.handler != (void *)SIG_DFL && ka.handler != (void *)SIG_IGN)
			return 0;
	}
	return 1;
}

static dt_unwind_fn dt_unwinder(void)
{
	dt_unwind_fn fn = atomic_load_explicit(&dt_unw_backtrace, memory_order_acquire);
	if (fn)
		return fn;
	int st = DT_UNW_UNTRIED;
	if (!dt_safe_to_dlopen() ||
	    !atomic_compare_exchange_strong(&dt_unw_state, &st, DT_UNW_LOADING))
		return NULL; /* not now, or another thread is loading it */
	/* by version: a program's own symbol of that name is not glibc's;
	 * first, so that threads refusing while libgcc_s loads have stacks */
	dt_unwind_fast_init(dlvsym(RTLD_DEFAULT, "_dl_find_object", "GLIBC_2.35"));
	void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
	dt_unw_getip = h ? (dt_getip_fn)dlsym(h, "_Unwind_GetIP") : NULL;
	fn = h && dt_unw_getip ? (dt_unwind_fn)dlsym(h, "_Unwind_Backtrace") : NULL;
	atomic_store_explicit(&dt_unw_backtrace, fn, memory_order_release);
	atomic_store(&dt_unw_state, fn ? DT_UNW_READY : DT_UNW_FAILED);
	return fn;
}

struct dt_trace {
	void **ips;
	int n, max;
};

static _Unwind_Reason_Code dt_trace_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct dt_trace *t = arg;
	if (t->n >= t->max)
		return _URC_END_OF_STACK;
	_Unwind_Ptr ip = dt_unw_getip(ctx);
	if (!ip)
		return _URC_END_OF_STACK;
	t->ips[t->n++] = (void *)ip;
	return _URC_NO_REASON;
}

DT_HIDDEN void dt_put_backtrace(struct dt_buf *b)
{
	if (!dt_config.backtrace)
		return;
	/* NULL while another thread loads it, or where loading could
	 * deadlock; the cached unwinder works as soon as it has
	 * _dl_find_object (dt_unwinder looks that up first) */
	dt_unwind_fn unwind = dt_unwinder();
	void *ips[DT_MAX_FRAMES + 8];
	/* the cached unwinder (unwind.c), or libgcc where it declines */
	int n = dt_config.backtrace != DT_BT_LIBGCC ? dt_unwind_fast(ips, DT_MAX_FRAMES + 8) : -1;
	if (n < 0 && unwind && dt_config.backtrace != DT_BT_FAST) {
		struct dt_trace t = {ips, 0, DT_MAX_FRAMES + 8};
		unwind(dt_trace_frame, &t);
		n = t.n;
	}
	if (n <= 0)
		return;

	struct dt_modmap *m = dt_modmap_get(0);
	if (!m)
		return;
	int self = dt_modmap_find(m, (uint64_t)(uintptr_t)&dt_put_backtrace);
	const char *self_name = self >= 0 ? m->names + m->e[self].name : NULL;

	/* module list of this record: indexes into m->names, deduplicated */
	uint32_t mods[DT_MAX_FRAMES];
	uint32_t nmods = 0;
	int skipping = 1, written = 0, rebuilt = 0;
	for (int i = 0; i < n && written < DT_MAX_FRAMES; i++) {
		uint64_t ip = (uint64_t)(uintptr_t)ips[i];
		int k = dt_modmap_find(m, ip);
		if (k < 0 && !rebuilt) {
			rebuilt = 1;
			m = dt_modmap_get(1);
			k = dt_modmap_find(m, ip);
			self = dt_modmap_find(m, (uint64_t)(uintptr_t)&dt_put_backtrace);
			self_name = self >= 0 ? m->names + m->e[self].name : NULL;
		}
		const char *name = k >= 0 ? m->names + m->e[k].name : NULL;
		/* the probe's own frames (this function, the slow path, the
		 * wrapper) come first; the caller starts at the first other */
		if (skipping && name && self_name && !strcmp(name, self_name))
			continue;
		skipping = 0;
		struct dt_frame f = {ip, 0, UINT32_MAX, 0};
		if (k >= 0) {
			/* past the probe every frame is a return address, which
			 * points after the call: look up ip - 1 */
			uint64_t look = ip - 1;
			f.offset = look - m->e[k].start + m->e[k].offset;
			uint32_t j = 0;
			while (j < nmods && mods[j] != m->e[k].name)
				j++;
			if (j == nmods)
				mods[nmods++] = m->e[k].name;
			f.module = j;
		}
		dt_put(b, DT_T_FRAME, &f, sizeof(f));
		written++;
	}
	for (uint32_t j = 0; j < nmods; j++)
		dt_put_str(b, DT_T_MODULE, m->names + mods[j]);
}
