/* SPDX-License-Identifier: MIT */
/*
 * Python frames for refusal records (pyframes.h).
 *
 * CPython's faulthandler dumper, _Py_DumpTraceback(fd, tstate), walks a
 * thread's frames without allocating, locking or the GIL (it is made for
 * signal handlers), and hides the frame layout, which changed between 3.11
 * and 3.13. It writes text to a descriptor: here a pipe opened for the one
 * dump and closed after it (no descriptor outlives the record; a kept pipe
 * would be one more descriptor the program could close or reuse under the
 * probe). The text is read back into the caller's scratch and parsed.
 *
 * The symbols are looked up in the main program's own dynamic symbol table
 * (Debian's python3 links libpython statically and exports them), by hand:
 * dlsym allocates when a name is missing and takes the loader's lock, and
 * the first refusal may come from a signal handler or a vfork child. A
 * Python embedded through libpython3.X.so is not looked for.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>

#include "probe_state.h"
#include "pyframes.h"
#include "sys.h"

/* The frames a record keeps, and the bytes of their names: a deeper stack
 * keeps its innermost frames and is marked DT_T_PYTRUNC. */
#define DT_PY_MAX_FRAMES 32
#define DT_PY_MAX_BYTES 8192
/* 3.11: the first version whose dumper was checked (Py_Version exists
 * from 3.11 on, so an older Python is declined by its absence too). */
#define DT_PY_MIN_VERSION 0x030b0000UL

typedef void (*dt_py_dump_fn)(int fd, void *tstate);
typedef void *(*dt_py_tstate_fn)(void);
typedef int (*dt_py_finalizing_fn)(void);

struct dt_py_api {
	dt_py_dump_fn dump;
	dt_py_tstate_fn this_tstate;
	dt_py_finalizing_fn finalizing;
};

enum { DT_PY_UNTRIED, DT_PY_READY, DT_PY_ABSENT };
static _Atomic int dt_py_state;
static struct dt_py_api dt_py;

/* The main program's dynamic symbol table, from its program headers. */
struct dt_dynsyms {
	const uint32_t *gnu_hash;
	const ElfW(Sym) * symtab;
	const char *strtab;
	uintptr_t bias;
};

static int dt_main_dynsyms(struct dt_dynsyms *d)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);
	const ElfW(Phdr) *dyn = NULL;
	int has_phdr = 0;
	for (unsigned long i = 0; ph && i < n; i++) {
		if (ph[i].p_type == PT_PHDR) {
			d->bias = (uintptr_t)ph - ph[i].p_vaddr;
			has_phdr = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = &ph[i];
		}
	}
	if (!has_phdr || !dyn)
		return -1;
	/* glibc relocates a writable dynamic section in place, a read-only
	 * one not (dl_relocate_ld) */
	uintptr_t add = (dyn->p_flags & PF_W) ? 0 : d->bias;
	d->gnu_hash = NULL;
	d->symtab = NULL;
	d->strtab = NULL;
	for (const ElfW(Dyn) *e = (const ElfW(Dyn) *)(d->bias + dyn->p_vaddr); e->d_tag != DT_NULL;
	     e++) {
		if (e->d_tag == DT_GNU_HASH)
			d->gnu_hash = (const uint32_t *)(e->d_un.d_ptr + add);
		else if (e->d_tag == DT_SYMTAB)
			d->symtab = (const ElfW(Sym) *)(e->d_un.d_ptr + add);
		else if (e->d_tag == DT_STRTAB)
			d->strtab = (const char *)(e->d_un.d_ptr + add);
	}
	return d->gnu_hash && d->symtab && d->strtab ? 0 : -1;
}

static uint32_t dt_gnu_hash(const char *s)
{
	uint32_t h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* A symbol the main program defines and exports, by the GNU hash table's
 * rules (bloom filter, bucket, chain); NULL when it has none. */
static void *dt_main_symbol(const struct dt_dynsyms *d, const char *name)
{
	const uint32_t *h = d->gnu_hash;
	uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2], bloom_shift = h[3];
	if (!nbuckets || !bloom_size)
		return NULL;
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(h + 4);
	const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
	const uint32_t *chain = buckets + nbuckets;
	const unsigned bits = sizeof(ElfW(Addr)) * 8;
	uint32_t hash = dt_gnu_hash(name);
	ElfW(Addr) word = bloom[(hash / bits) % bloom_size];
	ElfW(Addr) mask = (ElfW(Addr))1 << (hash % bits) | (ElfW(Addr))1
	                                                       << ((hash >> bloom_shift) % bits);
	if ((word & mask) != mask)
		return NULL;
	for (uint32_t i = buckets[hash % nbuckets]; i >= symoffset; i++) {
		uint32_t ch = chain[i - symoffset];
		const ElfW(Sym) *s = &d->symtab[i];
		if ((ch | 1) == (hash | 1) && s->st_shndx != SHN_UNDEF && s->st_value &&
		    dt_streq(d->strtab + s->st_name, name))
			return (void *)(d->bias + s->st_value);
		if (ch & 1)
			break;
	}
	return NULL;
}

static int dt_py_lookup(struct dt_py_api *py)
{
	struct dt_dynsyms d;
	if (dt_main_dynsyms(&d) < 0)
		return -1;
	const unsigned long *version = dt_main_symbol(&d, "Py_Version");
	if (!version || *version < DT_PY_MIN_VERSION)
		return -1;
	py->dump = (dt_py_dump_fn)dt_main_symbol(&d, "_Py_DumpTraceback");
	py->this_tstate = (dt_py_tstate_fn)dt_main_symbol(&d, "PyGILState_GetThisThreadState");
	/* public from 3.13 on, private before */
	py->finalizing = (dt_py_finalizing_fn)dt_main_symbol(&d, "Py_IsFinalizing");
	if (!py->finalizing)
		py->finalizing = (dt_py_finalizing_fn)dt_main_symbol(&d, "_Py_IsFinalizing");
	return py->dump && py->this_tstate && py->finalizing ? 0 : -1;
}

/* The interpreter's entry points, looked up at the first refusal. Threads
 * racing it each look up and store the same values before publishing. */
static const struct dt_py_api *dt_py_api(void)
{
	int s = atomic_load_explicit(&dt_py_state, memory_order_acquire);
	if (s == DT_PY_UNTRIED) {
		struct dt_py_api found;
		s = dt_py_lookup(&found) == 0 ? DT_PY_READY : DT_PY_ABSENT;
		if (s == DT_PY_READY)
			dt_py = found;
		atomic_store_explicit(&dt_py_state, s, memory_order_release);
	}
	return s == DT_PY_READY ? &dt_py : NULL;
}

/* Dumps this thread's stack into scratch; returns the bytes read. The pipe
 * is non-blocking: a stack larger than it loses its outer frames, never
 * blocks the program. */
static size_t dt_py_dump(const struct dt_py_api *py, void *tstate, char *scratch, size_t cap)
{
	int p[2];
	if (syscall(SYS_pipe2, p, O_CLOEXEC | O_NONBLOCK) != 0)
		return 0;
	py->dump(p[1], tstate);
	dt_sys_close(p[1]);
	size_t got = 0;
	while (got < cap) {
		long n = dt_sys_read(p[0], scratch + got, cap - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	dt_sys_close(p[0]);
	return got;
}

/* One line of the dump, `  File "F", line N in FUNC`, into a field:
 * struct dt_pyframe, then F, then FUNC. 0, or -1 for any other line. */
static int dt_py_frame(struct dt_buf *b, const char *s, const char *end)
{
	static const char head[] = "  File \"";
	static const char mid[] = "\", line ";
	size_t hl = sizeof(head) - 1, ml = sizeof(mid) - 1;
	if ((size_t)(end - s) < hl || __builtin_memcmp(s, head, hl) != 0)
		return -1;
	const char *file = s + hl, *q = NULL;
	/* the last `", line ` ends the name: a name may hold a quote */
	for (const char *t = file; t + ml <= end; t++)
		if (__builtin_memcmp(t, mid, ml) == 0)
			q = t;
	if (!q)
		return -1;
	struct dt_pyframe f = {0, (uint32_t)(q - file)};
	const char *t = q + ml;
	while (t < end && *t >= '0' && *t <= '9')
		f.line = f.line * 10 + (uint32_t)(*t++ - '0'); /* "???": unknown, 0 */
	while (t < end && *t != ' ')
		t++;
	if (end - t < 4 || __builtin_memcmp(t, " in ", 4) != 0)
		return -1;
	const char *func = t + 4;
	uint32_t n = (uint32_t)(sizeof(f) + f.file_len + (size_t)(end - func));
	/* straight into the record: no copy of a ~1 KiB line on the stack */
	if (n > 0xffff || b->len > b->cap || b->cap - b->len < 4 + n) {
		b->overflow = 1;
		return -1;
	}
	unsigned char *d = b->p + b->len;
	uint16_t tag = DT_T_PYFRAME, n16 = (uint16_t)n;
	__builtin_memcpy(d, &tag, 2);
	__builtin_memcpy(d + 2, &n16, 2);
	__builtin_memcpy(d + 4, &f, sizeof(f));
	__builtin_memcpy(d + 4 + sizeof(f), file, f.file_len);
	__builtin_memcpy(d + 4 + sizeof(f) + f.file_len, func, (size_t)(end - func));
	b->len += 4 + n;
	return 0;
}

/* The dump's frame lines, innermost first, within the bounds. */
static void dt_py_parse(struct dt_buf *b, const char *text, size_t len)
{
	const char *s = text, *end = text + len;
	int frames = 0, cut = 0;
	uint32_t start = b->len;
	while (s < end) {
		const char *nl = s;
		while (nl < end && *nl != '\n')
			nl++;
		if (nl == end) {
			cut = 1; /* the pipe or the scratch was full */
			break;
		}
		if (nl - s == 5 && __builtin_memcmp(s, "  ...", 5) == 0)
			cut = 1; /* the dumper's own bound */
		else if (frames == DT_PY_MAX_FRAMES || b->len - start > DT_PY_MAX_BYTES)
			cut = 1;
		else if (dt_py_frame(b, s, nl) == 0)
			frames++;
		if (cut)
			break;
		s = nl + 1;
	}
	if (cut && frames)
		dt_put_u64(b, DT_T_PYTRUNC, 1);
}

DT_HIDDEN void dt_put_pyframes(struct dt_buf *b, char *scratch, size_t cap)
{
	const struct dt_py_api *py = dt_py_api();
	if (!py || dt_in_vfork_child() || py->finalizing())
		return;
	void *tstate = py->this_tstate();
	if (!tstate)
		return;
	int saved = errno; /* the dumper's writes may set it */
	size_t n = dt_py_dump(py, tstate, scratch, cap);
	errno = saved;
	dt_py_parse(b, scratch, n);
}
