/* SPDX-License-Identifier: MIT */
/*
 * Call stacks for refusals: instruction pointers, each with the module and
 * file offset it falls in. Symbolizing is left to the CLI (looking names up
 * here would open ELF files inside the traced process).
 *
 * The walk is unwind.c's alone (why neither libunwind nor libgcc: see
 * there). It reads the stack only below the top of the mapping that holds
 * the thread's stack pointer, learned from /proc/self/maps once per thread
 * and stack (raw system calls: no lock, no allocation).
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "probe_state.h"
#include "sys.h"

#define DT_MAX_FRAMES 24
#define DT_MAX_MAPS 1024
/* Tables read again because a frame fell in no module (a library loaded
 * since, or JIT code): bounded, then the last table serves. After a
 * dlclose the table is read again at the next refusal, without bound. */
#define DT_MAX_REBUILDS 32
/* Tables kept: the current one, and others that threads or signal
 * handlers may still be reading while a new one is written. */
#define DT_MODMAPS 4

struct dt_modmap {
	_Atomic int users; /* readers holding it; -1 while it is written */
	uint64_t gen;      /* dt_unwind_generation when read */
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

/* Reads /proc/self/maps into m: 0, or -1. */
static int dt_modmap_fill(struct dt_modmap *m)
{
	m->gen = dt_unwind_generation();
	m->n = 0;
	m->names_len = 0;
	int fd = dt_sys_openat(AT_FDCWD, "/proc/self/maps", O_RDONLY);
	if (fd < 0)
		return -1;
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
	return 0;
}

static int dt_modmap_find(const struct dt_modmap *m, uint64_t ip)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (ip >= m->e[i].start && ip < m->e[i].end)
			return (int)i;
	return -1;
}

static _Atomic(struct dt_modmap *) dt_modmaps[DT_MODMAPS]; /* mapped on first use */

/* A reference on the current table, or NULL. A table that stops being
 * current between the load and the reference is let go again: it may be
 * rewritten as soon as nobody holds it. */
static struct dt_modmap *dt_modmap_hold(void)
{
	/* A failed exchange is another reader coming or going, and a table
	 * replaced under the load another thread's refresh: both pass at
	 * once, so the bound only stops a livelock. Four tries were too few
	 * for eight threads refusing around dlclose (a stack went unrecorded). */
	for (int tries = 0; tries < 256; tries++) {
		struct dt_modmap *m = atomic_load_explicit(&dt_modmap_cur, memory_order_acquire);
		if (!m)
			return NULL;
		int u = atomic_load(&m->users);
		if (u < 0 || !atomic_compare_exchange_weak(&m->users, &u, u + 1))
			continue;
		if (atomic_load(&dt_modmap_cur) == m)
			return m;
		atomic_fetch_sub(&m->users, 1);
	}
	return NULL;
}

static void dt_modmap_release(struct dt_modmap *m)
{
	if (m)
		atomic_fetch_sub(&m->users, 1);
}

static struct dt_modmap *dt_modmap_slot(int i)
{
	struct dt_modmap *m = atomic_load(&dt_modmaps[i]), *none = NULL;
	if (m)
		return m;
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	dt_unlock_mapping(m, sizeof(*m));
	if (!atomic_compare_exchange_strong(&dt_modmaps[i], &none, m)) {
		munmap(m, sizeof(*m)); /* another thread mapped this slot */
		return none;
	}
	return m;
}

/* A table read now, made current, with a reference held: written in a
 * kept table that is neither current nor held, or NULL when all are. */
static struct dt_modmap *dt_modmap_refresh(void)
{
	for (int i = 0; i < DT_MODMAPS; i++) {
		struct dt_modmap *m = dt_modmap_slot(i);
		int unused = 0;
		if (!m || m == atomic_load(&dt_modmap_cur) ||
		    !atomic_compare_exchange_strong(&m->users, &unused, -1))
			continue;
		int ok = dt_modmap_fill(m) == 0;
		atomic_store(&m->users, ok ? 1 : 0);
		if (!ok)
			return NULL;
		atomic_store_explicit(&dt_modmap_cur, m, memory_order_release);
		return m;
	}
	return NULL;
}

/* The table for a stack: current (read again after a dlclose), held. */
static struct dt_modmap *dt_modmap_get(void)
{
	struct dt_modmap *m = dt_modmap_hold();
	uint64_t gen = dt_unwind_generation();
	if (m && gen != DT_UNW_UNSETTLED && m->gen == gen)
		return m;
	struct dt_modmap *fresh = dt_modmap_refresh();
	if (!fresh) /* every table busy: a stale one rather than none */
		return m ? m : dt_modmap_hold();
	dt_modmap_release(m);
	return fresh;
}

/* After a miss: a table read again, or m itself past the bound. */
static struct dt_modmap *dt_modmap_reread(struct dt_modmap *m)
{
	if (atomic_fetch_add(&dt_modmap_rebuilds, 1) >= DT_MAX_REBUILDS)
		return m;
	struct dt_modmap *fresh = dt_modmap_refresh();
	if (!fresh)
		return m;
	dt_modmap_release(m);
	return fresh;
}

/* ---- the thread's stack -------------------------------------------------- */

/* The readable mapping this thread last walked a stack in (a thread's own
 * stack, a signal stack, a coroutine's). */
static __thread uint64_t dt_stack_lo __attribute__((tls_model("initial-exec")));
static __thread uint64_t dt_stack_hi __attribute__((tls_model("initial-exec")));

/* The end of the readable mapping that holds sp, from /proc/self/maps, or
 * 0. A line is "start-end perms ...": only the first two fields matter. */
static uint64_t dt_mapping_end(uint64_t sp)
{
	char buf[2048];
	int fd = dt_sys_openat(AT_FDCWD, "/proc/self/maps", O_RDONLY);
	if (fd < 0)
		return 0;
	uint64_t found = 0;
	size_t have = 0;
	long n;
	while (!found && (n = dt_sys_read(fd, buf + have, sizeof(buf) - have)) > 0) {
		have += (size_t)n;
		char *p = buf, *nl;
		while (!found && (nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			const char *q = p;
			uint64_t start = dt_hex(&q), end = 0;
			if (*q++ == '-')
				end = dt_hex(&q);
			if (*q == ' ' && q[1] == 'r' && sp >= start && sp < end) {
				dt_stack_lo = start;
				found = end;
			}
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == sizeof(buf))
			have = 0; /* an absurd line: drop it */
	}
	dt_sys_close(fd);
	return found;
}

static uint64_t dt_stack_top(uint64_t sp)
{
	if (sp >= dt_stack_lo && sp < dt_stack_hi)
		return dt_stack_hi;
	uint64_t hi = dt_mapping_end(sp);
	dt_stack_hi = hi;
	return hi;
}

DT_HIDDEN void dt_put_backtrace(struct dt_buf *b, const struct dt_unw_regs *from)
{
	if (!dt_config.backtrace)
		return;
	void *ips[DT_MAX_FRAMES + 8];
	int truncated;
	uint64_t top = dt_stack_top(from->sp);
	int n = top ? dt_unwind(from, top, ips, DT_MAX_FRAMES + 8, &truncated) : 0;
	if (n <= 0 || !top) {
		dt_put_u64(b, DT_T_STACK_TRUNC, 1);
		return;
	}

	struct dt_modmap *m =
	    atomic_load_explicit(&dt_memory_taken, memory_order_relaxed) ? NULL : dt_modmap_get();
	if (!m) {
		/* no table to name the modules by: the stack is lost, and the
		 * record says so rather than passing for one with no frames */
		dt_put_u64(b, DT_T_STACK_TRUNC, 1);
		return;
	}
	/* a frame in no module: a library loaded since the table was read;
	 * read it again before any frame is written (the record's module list
	 * indexes one table's names) */
	for (int i = 0; i < n; i++) {
		if (dt_modmap_find(m, (uint64_t)(uintptr_t)ips[i]) < 0) {
			m = dt_modmap_reread(m);
			break;
		}
	}
	int self = dt_modmap_find(m, (uint64_t)(uintptr_t)&dt_put_backtrace);
	const char *self_name = self >= 0 ? m->names + m->e[self].name : NULL;

	/* module list of this record: indexes into m->names, deduplicated */
	uint32_t mods[DT_MAX_FRAMES];
	uint32_t nmods = 0;
	int skipping = 1, written = 0;
	for (int i = 0; i < n && written < DT_MAX_FRAMES; i++) {
		uint64_t ip = (uint64_t)(uintptr_t)ips[i];
		int k = dt_modmap_find(m, ip);
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
	dt_modmap_release(m);
	if (truncated && written < DT_MAX_FRAMES)
		dt_put_u64(b, DT_T_STACK_TRUNC, 1);
}
