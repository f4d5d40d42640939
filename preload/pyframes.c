/* SPDX-License-Identifier: MIT */
/*
 * Python frames for refusal records (pyframes.h).
 *
 * CPython 3.11 (Debian 12's) and 3.13 (Debian 13's): the frame chain is
 * read directly, from the thread state down, with the layout of that
 * minor version's headers (fixed within a minor version), and each line
 * computed by CPython's own code, which only reads the code object's
 * location table (3.11: PyCode_Addr2Line; 3.13:
 * PyUnstable_InterpreterFrame_GetLine, which calls it). Nothing
 * allocates, locks, takes the GIL, changes a reference count or makes a
 * system call: a thread's frames change only on that thread, which is
 * here, inside a call one of them made. Debian 13's python3.13 does not
 * export the dumper below, so without its reader it recorded nothing.
 *
 * Other versions from 3.12 on (3.12, 3.14, ...: the layout changes
 * between minor versions): CPython's faulthandler dumper,
 * _Py_DumpTraceback(fd, tstate), when the interpreter exports it, which
 * walks the frames without allocating, locking or the GIL and hides the
 * layout. It writes text to a descriptor: a pipe opened for the one dump
 * and closed after it (no descriptor outlives the record; a kept one could
 * be closed or reused by the program under the probe), read back into the
 * caller's scratch and parsed. It makes about seven small writes a frame,
 * so it costs far more than the direct readers (make bench measures the
 * Python on the machine).
 *
 * The symbols are looked up in the main program's own dynamic symbol table
 * (Debian's python3 links libpython statically and exports them), else in
 * a loaded libpython3.X.so's, by hand:
 * dlsym allocates when a name is missing and takes the loader's lock, and
 * the first refusal may come from a signal handler or a vfork child.
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
/* 3.11, the oldest version read (Py_Version exists from 3.11 on, so an
 * older Python is declined by its absence too). 3.11 and 3.13 were checked
 * against real interpreters (Debian 12's and 13's); the dumper's path for
 * other versions was checked against its text format
 * (tests/helpers/fakepython.c). */
#define DT_PY_MIN_VERSION 0x030b0000UL
#define DT_PY_311 0x030b
#define DT_PY_313 0x030d

typedef void (*dt_py_dump_fn)(int fd, void *tstate);
typedef void *(*dt_py_tstate_fn)(void);
typedef int (*dt_py_finalizing_fn)(void);
typedef int (*dt_py_addr2line_fn)(void *code, int byte_offset);
typedef int (*dt_py_frame_line_fn)(void *frame);

/* Where one minor version keeps what the direct reader reads (LP64). */
struct dt_py_layout {
	/* PyThreadState's current frame: at ts_frame in the struct that
	 * ts_cframe points to (3.11's _PyCFrame), or in the thread state
	 * itself when ts_cframe is DT_PY_NONE */
	uint16_t ts_cframe, ts_frame;
	/* _PyInterpreterFrame: the code object, the caller's frame, the
	 * instruction pointer (3.11: the last one run; 3.13: the one running)
	 * and the owner, with the owners to tell apart */
	uint16_t frame_code, frame_previous, frame_instr, frame_owner;
	uint8_t owned_by_generator, owned_by_cstack;
	/* PyCodeObject: co_filename, co_name, _co_firsttraceable (an int),
	 * co_code_adaptive (the bytecode) */
	uint16_t code_filename, code_name, code_firsttraceable, code_bytecode;
	/* PyCodeObject: co_linetable (a bytes object) and co_firstlineno (an
	 * int), all a line depends on besides the offset (the line cache) */
	uint16_t code_linetable, code_firstlineno;
	/* str: where an ASCII and a non-ASCII compact string's characters
	 * start, and a state bit every readable str has (3.11's ready; 0 when
	 * the version has none) */
	uint16_t str_ascii_data, str_compact_data;
	uint32_t str_ready_bit;
};
#define DT_PY_NONE 0xffff

/* CPython 3.11 on LP64, from its headers (offsetof, checked against
 * Debian 12's python3.11-dev): PyThreadState.cframe,
 * _PyCFrame.current_frame, _PyInterpreterFrame's f_code, previous,
 * prev_instr and owner (no C-stack owner in 3.11), PyCodeObject's
 * co_filename, co_name, _co_firsttraceable, co_code_adaptive,
 * co_linetable and co_firstlineno, and the str data after PyASCIIObject
 * (48) and PyCompactUnicodeObject (72). */
static const struct dt_py_layout dt_py311 = {
    .ts_cframe = 56,
    .ts_frame = 8,
    .frame_code = 32,
    .frame_previous = 48,
    .frame_instr = 56,
    .frame_owner = 69,
    .owned_by_generator = 1,
    .owned_by_cstack = 0xff,
    .code_filename = 112,
    .code_name = 120,
    .code_firsttraceable = 168,
    .code_bytecode = 184,
    .code_linetable = 136,
    .code_firstlineno = 72,
    .str_ascii_data = 48,
    .str_compact_data = 72,
    .str_ready_bit = 1u << 7,
};

/* CPython 3.13 (default build, not the free-threaded one) on LP64, from
 * Debian 13's python3.13-dev 3.13.5 (offsetof on Include/internal's
 * pycore_frame.h and cpython/code.h, compiled in the Debian 13 tree):
 * PyThreadState.current_frame 72; _PyInterpreterFrame's f_executable 0
 * (code object, or None in a C-stack frame), previous 8, instr_ptr 56,
 * owner 70 (FRAME_OWNED_BY_GENERATOR 1, FRAME_OWNED_BY_CSTACK 3);
 * PyCodeObject's co_filename 112, co_name 120, _co_firsttraceable 184,
 * co_code_adaptive 200, co_linetable 136 and co_firstlineno 68 (by the
 * order of _PyCode_DEF in v3.13.5's Include/cpython/code.h, between the
 * members above; the line cache checks co_firstlineno against
 * PyCode_Addr2Line's answer for a negative offset before it is used, and
 * co_linetable's type); PyASCIIObject 40 bytes, PyCompactUnicodeObject
 * 56, state bits as in 3.11 but with no ready bit (bit 7 is
 * statically_allocated). The machine code of Debian 13's
 * PyUnstable_InterpreterFrame_GetLine reads instr_ptr at 0x38 and the
 * bytecode at code + 0xc8: the same figures. */
static const struct dt_py_layout dt_py313 = {
    .ts_cframe = DT_PY_NONE,
    .ts_frame = 72,
    .frame_code = 0,
    .frame_previous = 8,
    .frame_instr = 56,
    .frame_owner = 70,
    .owned_by_generator = 1,
    .owned_by_cstack = 3,
    .code_filename = 112,
    .code_name = 120,
    .code_firsttraceable = 184,
    .code_bytecode = 200,
    .code_linetable = 136,
    .code_firstlineno = 68,
    .str_ascii_data = 40,
    .str_compact_data = 56,
    .str_ready_bit = 0,
};

/* Every object's ob_type, and a str's length and state bits (kind,
 * compact, ascii), the same in 3.11 and 3.13's default builds. */
#define DT_PY_OB_TYPE 8
#define DT_PY_STR_LENGTH 16
#define DT_PY_STR_STATE 32
/* a name longer than this is cut, as CPython's dumper cuts at 500 */
#define DT_PY_NAME_MAX 500

struct dt_py_api {
	dt_py_dump_fn dump;
	dt_py_tstate_fn this_tstate;
	dt_py_finalizing_fn finalizing;
	/* the direct reader's layout: NULL on other versions (the dumper) */
	const struct dt_py_layout *layout;
	/* the line of a frame: 3.11 from the code object and offset, 3.13
	 * from the frame */
	dt_py_addr2line_fn addr2line;
	dt_py_frame_line_fn frame_line;
	const void *unicode_type; /* &PyUnicode_Type */
	const void *code_type;    /* &PyCode_Type */
	const void *bytes_type;   /* &PyBytes_Type; NULL: no line cache */
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

/* The symbol tables a dynamic section names. add: what to add to its
 * addresses (0 when the loader relocated them in place). Also returns, in
 * *debug, the r_debug a main program's DT_DEBUG holds (else NULL). */
static int dt_dynsyms_at(struct dt_dynsyms *d, const ElfW(Dyn) * dyn, uintptr_t add,
                         const struct r_debug **debug)
{
	d->gnu_hash = NULL;
	d->symtab = NULL;
	d->strtab = NULL;
	*debug = NULL;
	for (const ElfW(Dyn) *e = dyn; e->d_tag != DT_NULL; e++) {
		if (e->d_tag == DT_GNU_HASH)
			d->gnu_hash = (const uint32_t *)(e->d_un.d_ptr + add);
		else if (e->d_tag == DT_SYMTAB)
			d->symtab = (const ElfW(Sym) *)(e->d_un.d_ptr + add);
		else if (e->d_tag == DT_STRTAB)
			d->strtab = (const char *)(e->d_un.d_ptr + add);
		else if (e->d_tag == DT_DEBUG)
			*debug = (const struct r_debug *)e->d_un.d_ptr;
	}
	return d->gnu_hash && d->symtab && d->strtab ? 0 : -1;
}

static int dt_main_dynsyms(struct dt_dynsyms *d, const struct r_debug **debug)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);
	const ElfW(Phdr) *dyn = NULL;
	int has_phdr = 0;
	*debug = NULL;
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
	return dt_dynsyms_at(d, (const ElfW(Dyn) *)(d->bias + dyn->p_vaddr), add, debug);
}

static int dt_names_libpython(const char *path)
{
	for (; *path; path++)
		if (dt_has_prefix(path, "/libpython3"))
			return 1;
	return 0;
}

/* A Python that loads its API from libpython3.X.so (pyenv's and
 * python.org's default builds, programs embedding Python): that library
 * among the loaded objects, as debuggers find them (r_debug's list, which
 * the loader only appends to while the program runs; libpython, a
 * dependency of the program, is never unloaded). */
static int dt_libpython_dynsyms(struct dt_dynsyms *d, const struct r_debug *debug)
{
	if (!debug || debug->r_version < 1)
		return -1;
	for (const struct link_map *l = debug->r_map; l; l = l->l_next) {
		if (!l->l_name || !l->l_ld || !dt_names_libpython(l->l_name))
			continue;
		const struct r_debug *unused;
		d->bias = l->l_addr;
		/* a shared object's unrelocated addresses are offsets, below
		 * its load address; relocated ones are above it */
		const ElfW(Dyn) *e = l->l_ld;
		while (e->d_tag != DT_NULL && e->d_tag != DT_SYMTAB)
			e++;
		uintptr_t add = e->d_tag == DT_SYMTAB && e->d_un.d_ptr < l->l_addr ? l->l_addr : 0;
		return dt_dynsyms_at(d, l->l_ld, add, &unused);
	}
	return -1;
}

static uint32_t dt_gnu_hash(const char *s)
{
	uint32_t h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* A symbol the object defines and exports, by the GNU hash table's
 * rules (bloom filter, bucket, chain); NULL when it has none. */
static void *dt_dynsym(const struct dt_dynsyms *d, const char *name)
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

/* The direct reader of an exact minor version (major.minor from
 * Py_Version, so that 3.12 and 3.14 are never read with another's
 * layout): 0 when it is one and the interpreter has what the reader
 * needs. py->layout is left set for a version read directly. */
static int dt_py_reader_lookup(struct dt_py_api *py, const struct dt_dynsyms *d,
                               unsigned long minor)
{
	py->layout = NULL;
	py->addr2line = NULL;
	py->frame_line = NULL;
	if (sizeof(void *) != 8)
		return -1;
	if (minor == DT_PY_311) {
		py->layout = &dt_py311;
		py->addr2line = (dt_py_addr2line_fn)dt_dynsym(d, "PyCode_Addr2Line");
	} else if (minor == DT_PY_313 && !dt_dynsym(d, "_Py_DecRefShared")) {
		/* only the free-threaded build exports that: another object
		 * header (ob_tid first), another layout, the dumper if any */
		py->layout = &dt_py313;
		py->frame_line =
		    (dt_py_frame_line_fn)dt_dynsym(d, "PyUnstable_InterpreterFrame_GetLine");
		if (!py->frame_line)
			return -1; /* 3.13's line is that function's */
		/* not for the line itself: the line cache's check */
		py->addr2line = (dt_py_addr2line_fn)dt_dynsym(d, "PyCode_Addr2Line");
	} else {
		return -1;
	}
	py->unicode_type = dt_dynsym(d, "PyUnicode_Type");
	py->code_type = dt_dynsym(d, "PyCode_Type");
	py->bytes_type = py->addr2line ? dt_dynsym(d, "PyBytes_Type") : NULL;
	if (!py->unicode_type || !py->code_type || (!py->addr2line && !py->frame_line))
		return -1;
	return 0;
}

static int dt_py_lookup(struct dt_py_api *py)
{
	struct dt_dynsyms d;
	const struct r_debug *debug = NULL;
	const unsigned long *version = NULL;
	if (dt_main_dynsyms(&d, &debug) == 0)
		version = dt_dynsym(&d, "Py_Version");
	if (!version && dt_libpython_dynsyms(&d, debug) == 0)
		version = dt_dynsym(&d, "Py_Version");
	if (!version || *version < DT_PY_MIN_VERSION)
		return -1;
	py->dump = (dt_py_dump_fn)dt_dynsym(&d, "_Py_DumpTraceback");
	py->this_tstate = (dt_py_tstate_fn)dt_dynsym(&d, "PyGILState_GetThisThreadState");
	/* public from 3.13 on, private before */
	py->finalizing = (dt_py_finalizing_fn)dt_dynsym(&d, "Py_IsFinalizing");
	if (!py->finalizing)
		py->finalizing = (dt_py_finalizing_fn)dt_dynsym(&d, "_Py_IsFinalizing");
	if (!py->this_tstate || !py->finalizing)
		return -1;
	if (dt_py_reader_lookup(py, &d, *version >> 16) == 0)
		return 0;
	/* a version read directly but missing what its reader needs is
	 * declined too: a Python built that way is not the one checked */
	return !py->layout && py->dump ? 0 : -1;
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

static const void *dt_ptr_at(const void *base, size_t off)
{
	const void *p;
	__builtin_memcpy(&p, (const char *)base + off, sizeof(p));
	return p;
}

static size_t dt_utf8(uint32_t c, char *out)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (c >> 18 & 0x07));
	out[1] = (char)(0x80 | (c >> 12 & 0x3f));
	out[2] = (char)(0x80 | (c >> 6 & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* A str object as UTF-8 into out (room for DT_PY_NAME_MAX + 4 bytes);
 * "???" for anything but a compact (and in 3.11 ready) str, as the
 * dumper. */
static size_t dt_py_str(const struct dt_py_api *py, const void *obj, char *out)
{
	const struct dt_py_layout *l = py->layout;
	uint32_t state;
	int64_t len;
	if (!obj || dt_ptr_at(obj, DT_PY_OB_TYPE) != py->unicode_type)
		goto unknown;
	__builtin_memcpy(&state, (const char *)obj + DT_PY_STR_STATE, 4);
	__builtin_memcpy(&len, (const char *)obj + DT_PY_STR_LENGTH, 8);
	unsigned kind = state >> 2 & 7, compact = state >> 5 & 1, ascii = state >> 6 & 1;
	if (!compact || (state & l->str_ready_bit) != l->str_ready_bit || len < 0 ||
	    (kind != 1 && kind != 2 && kind != 4))
		goto unknown;
	const unsigned char *data =
	    (const unsigned char *)obj + (ascii ? l->str_ascii_data : l->str_compact_data);
	if (ascii) { /* already UTF-8: what the loop below would write */
		size_t n = len < DT_PY_NAME_MAX ? (size_t)len : DT_PY_NAME_MAX;
		__builtin_memcpy(out, data, n);
		return n;
	}
	size_t n = 0;
	for (int64_t i = 0; i < len && n < DT_PY_NAME_MAX; i++) {
		uint32_t c = kind == 1   ? data[i]
		             : kind == 2 ? ((const uint16_t *)data)[i]
		                         : ((const uint32_t *)data)[i];
		n += dt_utf8(c, out + n);
	}
	return n;
unknown:
	__builtin_memcpy(out, "???", 3);
	return 3;
}

/* The line a frame is at, by CPython's own code: 3.13's
 * PyUnstable_InterpreterFrame_GetLine (Python/frame.c, v3.13.5) is
 * PyCode_Addr2Line(code, (instr_ptr - bytecode)), and PyCode_Addr2Line
 * (Objects/codeobject.c) reads co_linetable, or the instrumented line
 * table when monitoring is on: neither allocates nor touches a reference
 * count (Debian 13's machine code of both calls nothing but two leaf
 * helpers of the table walk). */
static int dt_py_line(const struct dt_py_api *py, const void *frame, const void *code,
                      const void *instr)
{
	if (py->frame_line)
		return py->frame_line((void *)frame);
	const char *bytecode = (const char *)code + py->layout->code_bytecode;
	return py->addr2line((void *)code, (int)((const char *)instr - bytecode));
}

/* Lines already computed, for every thread of the process: a refusal
 * repeated from the same code costs PyCode_Addr2Line's walk of the
 * location table (some 4,700 instructions a frame here, most of a Python
 * record's price) once. A line depends on the table's bytes, the code's
 * first line and the offset alone, so an entry holds all three (the
 * bytes by their length and a 64-bit hash, taken at each lookup) with
 * the code object's address: a code object freed and another made at its
 * address (a module reloaded after an edit: pymalloc hands the same
 * blocks back) matches only with the same first line and a table of the
 * same bytes, which give the same line. The table object's address is no
 * part of the key: a new table at the old one's address would prove
 * nothing, and an old table elsewhere nothing either. Tables longer than
 * DT_PY_LINE_TABLE_MAX are not cached (their hash would cost what it
 * saves).
 *
 * Each entry is a sequence lock: a writer claims it by moving its
 * sequence from even to odd (and gives up if another holds it), a reader
 * takes the line only if the sequence is even and unchanged around its
 * reads. No thread waits for another; a signal handler's walk that meets
 * its own thread's claim simply misses. */
#define DT_PY_LINE_SLOTS 256
#define DT_PY_LINE_TABLE_MAX 4096
/* PyBytesObject: ob_size and ob_sval, the same in 3.11 and 3.13 */
#define DT_PY_BYTES_SIZE 16
#define DT_PY_BYTES_DATA 32

struct dt_py_line_slot {
	uint32_t seq;
	int32_t line, offset, firstlineno;
	const void *code;
	uint64_t table_len, table_hash;
};
static struct dt_py_line_slot dt_py_lines[DT_PY_LINE_SLOTS];

/* -1: the layout's co_firstlineno did not check out (no cache) */
static _Atomic int dt_py_lines_usable;

static uint64_t dt_py_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* Not a cryptographic hash: what it tells apart are tables the program's
 * own compiler made for code at the same address. */
static uint64_t dt_py_table_hash(const unsigned char *p, uint64_t n)
{
	uint64_t h = n * 0x9e3779b97f4a7c15ULL, w;
	for (; n >= 8; p += 8, n -= 8) {
		__builtin_memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	w = 0;
	__builtin_memcpy(&w, p, n);
	return dt_py_mix(h ^ w);
}

static int dt_py_line_cached(const struct dt_py_api *py, const void *frame, const void *code,
                             const void *instr)
{
	const struct dt_py_layout *l = py->layout;
	int usable = atomic_load_explicit(&dt_py_lines_usable, memory_order_relaxed);
	const void *table = dt_ptr_at(code, l->code_linetable);
	if (usable < 0 || !py->bytes_type || !table ||
	    dt_ptr_at(table, DT_PY_OB_TYPE) != py->bytes_type)
		return dt_py_line(py, frame, code, instr);
	int32_t first;
	uint64_t len;
	__builtin_memcpy(&first, (const char *)code + l->code_firstlineno, 4);
	__builtin_memcpy(&len, (const char *)table + DT_PY_BYTES_SIZE, 8);
	if (len > DT_PY_LINE_TABLE_MAX)
		return dt_py_line(py, frame, code, instr);
	int32_t off = (int32_t)((const char *)instr - ((const char *)code + l->code_bytecode));
	uint64_t hash = dt_py_table_hash((const unsigned char *)table + DT_PY_BYTES_DATA, len);
	uint64_t k = dt_py_mix((uint64_t)(uintptr_t)code ^ ((uint64_t)(uint32_t)off << 40));
	struct dt_py_line_slot *e = &dt_py_lines[k % DT_PY_LINE_SLOTS];
	uint32_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	if (!(seq & 1) && __atomic_load_n(&e->code, __ATOMIC_RELAXED) == code &&
	    __atomic_load_n(&e->offset, __ATOMIC_RELAXED) == off &&
	    __atomic_load_n(&e->firstlineno, __ATOMIC_RELAXED) == first &&
	    __atomic_load_n(&e->table_len, __ATOMIC_RELAXED) == len &&
	    __atomic_load_n(&e->table_hash, __ATOMIC_RELAXED) == hash) {
		int32_t line = __atomic_load_n(&e->line, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq)
			return line;
	}
	int line = dt_py_line(py, frame, code, instr);
	/* every slot filled is checked first: the layout's co_firstlineno
	 * against CPython's own answer for this code object (a negative
	 * offset returns it); one that differs turns the cache off */
	if (py->addr2line((void *)code, -1) != first) {
		atomic_store_explicit(&dt_py_lines_usable, -1, memory_order_relaxed);
		return line;
	}
	if (!(seq & 1) && __atomic_compare_exchange_n(&e->seq, &seq, seq + 1, 0, __ATOMIC_ACQUIRE,
	                                              __ATOMIC_RELAXED)) {
		/* the odd sequence visible before any field changes */
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__atomic_store_n(&e->code, code, __ATOMIC_RELAXED);
		__atomic_store_n(&e->offset, off, __ATOMIC_RELAXED);
		__atomic_store_n(&e->firstlineno, first, __ATOMIC_RELAXED);
		__atomic_store_n(&e->table_len, len, __ATOMIC_RELAXED);
		__atomic_store_n(&e->table_hash, hash, __ATOMIC_RELAXED);
		__atomic_store_n(&e->line, line, __ATOMIC_RELAXED);
		__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
	}
	return line;
}

/* What the walk's previous frame wrote: a frame of the same file, or at
 * the same instruction of the same code (recursion), reuses its name or
 * line rather than converting or looking it up again. Valid for one walk
 * only: the frames cannot change under it, the objects may after it. */
struct dt_py_prev {
	const void *filename, *code, *instr;
	const char *file; /* its bytes in the record */
	uint32_t file_len;
	int line;
};

/* Appends one frame's field straight into the record (no copy of the
 * names on the stack). 0, or -1 when the record is full. */
static int dt_py_put_frame(const struct dt_py_api *py, struct dt_buf *b, const void *frame,
                           const void *code, const void *instr, struct dt_py_prev *prev)
{
	const uint32_t room = 4 + sizeof(struct dt_pyframe) + 2 * (DT_PY_NAME_MAX + 4);
	if (b->len > b->cap || b->cap - b->len < room) {
		b->overflow = 1;
		return -1;
	}
	unsigned char *d = b->p + b->len;
	char *names = (char *)d + 4 + sizeof(struct dt_pyframe);
	struct dt_pyframe f;
	const void *filename = dt_ptr_at(code, py->layout->code_filename);
	if (prev->file && filename == prev->filename) {
		f.file_len = prev->file_len;
		__builtin_memcpy(names, prev->file, f.file_len);
	} else {
		f.file_len = (uint32_t)dt_py_str(py, filename, names);
	}
	size_t fl = dt_py_str(py, dt_ptr_at(code, py->layout->code_name), names + f.file_len);
	int line = prev->file && code == prev->code && instr == prev->instr
	               ? prev->line
	               : dt_py_line_cached(py, frame, code, instr);
	*prev = (struct dt_py_prev){filename, code, instr, names, f.file_len, line};
	f.line = line > 0 ? (uint32_t)line : 0;
	uint16_t tag = DT_T_PYFRAME;
	uint16_t n = (uint16_t)(sizeof(f) + f.file_len + fl);
	__builtin_memcpy(d, &tag, 2);
	__builtin_memcpy(d + 2, &n, 2);
	__builtin_memcpy(d + 4, &f, sizeof(f));
	b->len += 4u + n;
	return 0;
}

/* A frame tracebacks leave out (_PyFrame_IsIncomplete of 3.11 and
 * 3.13): a C-stack frame (3.13's entry frames, no code object), or one
 * whose first instructions have not run yet. */
static int dt_py_skipped(const struct dt_py_api *py, const void *frame, const void *code,
                         const void *instr)
{
	const struct dt_py_layout *l = py->layout;
	unsigned char owner = *((const unsigned char *)frame + l->frame_owner);
	if (owner == l->owned_by_cstack || !code || dt_ptr_at(code, DT_PY_OB_TYPE) != py->code_type)
		return 1;
	int first;
	__builtin_memcpy(&first, (const char *)code + l->code_firsttraceable, sizeof(first));
	return owner != l->owned_by_generator &&
	       (const char *)instr < (const char *)code + l->code_bytecode + 2 * first;
}

static const void *dt_py_current_frame(const struct dt_py_layout *l, const void *tstate)
{
	if (l->ts_cframe == DT_PY_NONE)
		return dt_ptr_at(tstate, l->ts_frame);
	const void *cframe = dt_ptr_at(tstate, l->ts_cframe);
	return cframe ? dt_ptr_at(cframe, l->ts_frame) : NULL;
}

/* 3.11 and 3.13: the thread's frames, innermost first, read in place. */
static void dt_py_read_frames(const struct dt_py_api *py, struct dt_buf *b, const void *tstate)
{
	const struct dt_py_layout *l = py->layout;
	const void *frame = dt_py_current_frame(l, tstate);
	uint32_t start = b->len;
	int frames = 0;
	struct dt_py_prev prev = {0};
	for (; frame; frame = dt_ptr_at(frame, l->frame_previous)) {
		const void *code = dt_ptr_at(frame, l->frame_code);
		const void *instr = dt_ptr_at(frame, l->frame_instr);
		if (dt_py_skipped(py, frame, code, instr))
			continue;
		if (frames == DT_PY_MAX_FRAMES || b->len - start > DT_PY_MAX_BYTES ||
		    dt_py_put_frame(py, b, frame, code, instr, &prev) < 0)
			break;
		frames++;
	}
	if (frame && frames)
		dt_put_u64(b, DT_T_PYTRUNC, 1);
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
	if (!py || py->finalizing())
		return;
	void *tstate = py->this_tstate();
	if (!tstate)
		return;
	if (py->layout) {
		dt_py_read_frames(py, b, tstate);
		return;
	}
	int saved = errno; /* the dumper's writes may set it */
	size_t n = dt_py_dump(py, tstate, scratch, cap);
	errno = saved;
	dt_py_parse(b, scratch, n);
}
