/* SPDX-License-Identifier: MIT */
/*
 * Call stacks on x86_64 from the probe's own cached CFI unwinder, the only
 * one on the refusal path. It must not lock, allocate or fault wherever a
 * refusal can happen: a signal handler that interrupted malloc, the
 * loader or a JIT registering frames, a vfork child, a small alternate
 * stack. Hence neither of the usual unwinders:
 *  - libunwind 1.6 validates addresses by writing them through a pipe it
 *    opens once and keeps; a program that closes and reuses those
 *    descriptor numbers receives bytes of memory in its own files;
 *  - libgcc's _Unwind_Backtrace takes its object_mutex once any frame was
 *    registered (__register_frame, as JITs do), so a handler refusing while
 *    the interrupted code holds it waits for ever; it may malloc; and where
 *    CFI is missing it follows whatever return address the stack holds.
 *
 * A return address is always the same place in the same code, so its rule
 * (where the frame's canonical frame address, CFA, is; where the return
 * address and the caller's rbp were saved) is interpreted once (cfi.c),
 * kept in a small lock-free cache, and the walk then moves rsp, rbp and rip
 * only. It stops after reporting the frame whose return address CFI marks
 * undefined (_start, a thread's first frame): a whole stack. Anywhere else
 * it stops it says so (the record's "truncated" mark): an address in no
 * module or under no FDE (JIT code, a bogus return address), a signal
 * frame, a CFA it does not follow (an expression, DRAP realignment), a
 * read that would leave the thread's stack or the module's segment, a CFA
 * that does not move up the stack.
 *
 * Modules are found with glibc's _dl_find_object (2.35+), lock-free and
 * async-signal-safe, looked up in libc's own symbol table (no dlsym: it
 * locks and may allocate). The CFI is read only within the
 * loaded segment that holds .eh_frame_hdr, found from the module's program
 * headers. The cache key mixes the address with the module's link_map,
 * bounds, .eh_frame_hdr address and a generation that every dlclose bumps:
 * glibc reloads a rebuilt library at the same address with the same
 * link_map, and its frames must get its own rules. Each slot is two words,
 * the rule (holding bits of its key) and the rule XOR the key: a torn read
 * between threads or a signal handler fails the check and is a miss.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/auxv.h>

#include "cfi.h"
#include "probe_state.h"
#include "sys.h"

/* Bumped by every dlclose once it returned: rules cached before it are not
 * used again. While one runs, nothing is cached or taken from the cache: a
 * library it unmapped may already be replaced (another thread's dlopen)
 * before the bump. */
static _Atomic uint64_t dt_unw_generation;
static _Atomic int dt_dlclose_running;

#if defined(__x86_64__) && !defined(__ILP32__) && defined(DLFO_STRUCT_HAS_EH_DBASE)

typedef int (*dt_find_object_fn)(void *, struct dl_find_object *);

/* ---- _dl_find_object, from the loader's symbol table ------------------- */

/* d_ptr as the loader left it: relocated in place on x86_64, but not
 * where the dynamic section is read-only. */
static uintptr_t dt_dyn_ptr(uintptr_t base, uint64_t p)
{
	return p < base ? base + p : (uintptr_t)p;
}

/* The dynamic section of the object whose ELF header is at base. */
static const ElfW(Dyn) * dt_elf_dynamic(uintptr_t base)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
	if (__builtin_memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr)) > 4096)
		return NULL;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			return (const ElfW(Dyn) *)(base + ph[i].p_vaddr);
	return NULL;
}

static uint32_t dt_gnu_hash(const char *s)
{
	uint32_t h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* name's address in the object loaded at base with dynamic section d,
 * through its GNU hash table. */
static void *dt_elf_symbol(uintptr_t base, const ElfW(Dyn) * d, const char *name)
{
	const uint32_t *gh = NULL;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	for (; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_GNU_HASH)
			gh = (const uint32_t *)dt_dyn_ptr(base, d->d_un.d_ptr);
		else if (d->d_tag == DT_SYMTAB)
			sym = (const ElfW(Sym) *)dt_dyn_ptr(base, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			str = (const char *)dt_dyn_ptr(base, d->d_un.d_ptr);
	}
	if (!gh || !sym || !str || !gh[0])
		return NULL;
	uint32_t h = dt_gnu_hash(name), nbuckets = gh[0], symoffset = gh[1];
	const uint32_t *buckets = gh + 4 + gh[2] * (sizeof(ElfW(Addr)) / 4);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return NULL;
	for (;; i++) {
		uint32_t h2 = chain[i - symoffset];
		if ((h | 1) == (h2 | 1) && sym[i].st_shndx != SHN_UNDEF &&
		    dt_streq(str + sym[i].st_name, name))
			return (void *)(base + sym[i].st_value);
		if (h2 & 1)
			return NULL;
	}
}

/* libc.so.6's link_map: the loader's list (_r_debug) from its head, which
 * holds the objects loaded at start-up before any dlopen'ed one; those are
 * never unloaded, so the walk needs none of the loader's locks. */
static const struct link_map *dt_libc_map(void)
{
	uintptr_t ldso = (uintptr_t)getauxval(AT_BASE);
	const struct r_debug *rd =
	    ldso ? dt_elf_symbol(ldso, dt_elf_dynamic(ldso), "_r_debug") : NULL;
	for (const struct link_map *l = rd ? rd->r_map : NULL; l; l = l->l_next) {
		const char *base = l->l_name;
		for (const char *p = l->l_name; p && *p; p++)
			if (*p == '/')
				base = p + 1;
		if (base && dt_streq(base, "libc.so.6"))
			return l;
	}
	return NULL;
}

/* glibc's _dl_find_object (exported by libc.so.6 since 2.35), or NULL
 * (older glibc, or the loader run as the program). Looked up once without
 * dlsym, which locks and may allocate; NULL is kept too. */
static dt_find_object_fn dt_find_object(void)
{
	static _Atomic uintptr_t found; /* 1: looked up, none */
	uintptr_t f = atomic_load_explicit(&found, memory_order_acquire);
	if (!f) {
		const struct link_map *libc = dt_libc_map();
		void *p = libc ? dt_elf_symbol(libc->l_addr, libc->l_ld, "_dl_find_object") : NULL;
		f = p ? (uintptr_t)p : 1;
		atomic_store_explicit(&found, f, memory_order_release);
	}
	return f == 1 ? NULL : (dt_find_object_fn)f;
}

/* ---- the module's segment ---------------------------------------------- */

/* The loaded segment of the module fo holding its .eh_frame_hdr, from its
 * program headers (in its first page, at dlfo_map_start): 0, or -1. */
static int dt_eh_segment(const struct dl_find_object *fo, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t start = (uintptr_t)fo->dlfo_map_start, end = (uintptr_t)fo->dlfo_map_end;
	uintptr_t hdr = (uintptr_t)fo->dlfo_eh_frame;
	if (end - start < 4096 || !fo->dlfo_link_map)
		return -1;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)start;
	if (__builtin_memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr)) > 4096)
		return -1;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(start + eh->e_phoff);
	uintptr_t l_addr = fo->dlfo_link_map->l_addr;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		uintptr_t s = l_addr + ph[i].p_vaddr;
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_R) || hdr < s ||
		    hdr - s >= ph[i].p_filesz)
			continue;
		*lo = s < start ? start : s;
		*hi = s + ph[i].p_filesz > end ? end : s + ph[i].p_filesz;
		return 0;
	}
	return -1;
}

/* ---- the cache ------------------------------------------------------------ */

#define DT_UNW_CACHE 1024 /* slots, a power of two */

/* A rule as the walk uses it, with what the cache adds: decline. */
struct dt_walk_rule {
	struct dt_cfa_rule r;
	int decline;
};

/* Packed into one word for the cache: bit 0 set (never an empty slot),
 * bit 1 on_rbp, bit 2 ra_undefined, bit 3 decline, bits 8..31 cfa_off,
 * 48..63 rbp_off (signed); bits 4..7 and 32..47 hold bits of the key. */
#define DT_RULE_KEYBITS 0x0000ffff000000f0ULL

static uint64_t dt_rule_pack(const struct dt_walk_rule *w, uint64_t key)
{
	const struct dt_cfa_rule *r = &w->r;
	return 1u | (uint64_t)(r->on_rbp != 0) << 1 | (uint64_t)(r->ra_undefined != 0) << 2 |
	       (uint64_t)(w->decline != 0) << 3 | ((uint64_t)r->cfa_off & 0xffffffu) << 8 |
	       ((uint64_t)r->rbp_off & 0xffffu) << 48 | (key & DT_RULE_KEYBITS);
}

static void dt_rule_unpack(uint64_t v, struct dt_walk_rule *w)
{
	w->r.on_rbp = (v >> 1) & 1;
	w->r.ra_undefined = (v >> 2) & 1;
	w->decline = (v >> 3) & 1;
	w->r.cfa_off = (int64_t)((v >> 8) & 0xffffffu);
	w->r.rbp_off = (int16_t)(v >> 48);
}

static struct {
	_Atomic uint64_t check; /* key ^ rule */
	_Atomic uint64_t rule;
} dt_unw_cache[DT_UNW_CACHE];

static uint64_t dt_rule_key(const struct dl_find_object *fo, uint64_t pc, uint64_t gen)
{
	uint64_t mod = (uint64_t)(uintptr_t)fo->dlfo_link_map ^
	               (uint64_t)(uintptr_t)fo->dlfo_eh_frame << 17 ^
	               (uint64_t)(uintptr_t)fo->dlfo_map_start << 29 ^
	               (uint64_t)(uintptr_t)fo->dlfo_map_end << 41 ^ gen * 0xd6e8feb86659fd93ULL;
	return pc ^ mod * 0x9e3779b97f4a7c15ULL;
}

/* The rule for pc, from the cache or found and kept: 0, or -1 to stop. */
static int dt_rule_for(dt_find_object_fn find, uint64_t pc, struct dt_walk_rule *w)
{
	uint64_t gen = dt_unwind_generation();
	struct dl_find_object fo;
	if (find((void *)(uintptr_t)pc, &fo) != 0 || !fo.dlfo_eh_frame)
		return -1;
	int cached = gen != DT_UNW_UNSETTLED;
	uint64_t key = dt_rule_key(&fo, pc, gen);
	/* the multiply carries the address's low bits into the top ten */
	uint64_t slot = (key * 0xbf58476d1ce4e5b9ULL) >> 54;
	uint64_t check = atomic_load_explicit(&dt_unw_cache[slot].check, memory_order_relaxed);
	uint64_t v = atomic_load_explicit(&dt_unw_cache[slot].rule, memory_order_relaxed);
	if (cached && v && (check ^ v) == key && (v & DT_RULE_KEYBITS) == (key & DT_RULE_KEYBITS)) {
		dt_rule_unpack(v, w);
		return w->decline ? -1 : 0;
	}
	uintptr_t lo, hi;
	int found = dt_eh_segment(&fo, &lo, &hi) == 0
	                ? dt_cfi_rule_at((uintptr_t)fo.dlfo_eh_frame, lo, hi, pc, &w->r)
	                : -1;
	if (found <= 0) /* kept, so as not to parse it again */
		*w = (struct dt_walk_rule){.decline = 1};
	else
		w->decline = 0;
	if (cached) {
		v = dt_rule_pack(w, key);
		atomic_store_explicit(&dt_unw_cache[slot].rule, v, memory_order_relaxed);
		atomic_store_explicit(&dt_unw_cache[slot].check, key ^ v, memory_order_relaxed);
	}
	return w->decline ? -1 : 0;
}

/* ---- the walk ------------------------------------------------------------- */

DT_HIDDEN __attribute__((noinline)) void dt_unwind_start(struct dt_unw_regs *r)
{
	/* this function keeps a frame pointer (it asks for it): its caller's
	 * return point, stack pointer and rbp are at fixed places */
	const uint64_t *fp = __builtin_frame_address(0);
	r->pc = fp[1];
	r->sp = (uint64_t)(uintptr_t)(fp + 2);
	r->fp = fp[0];
}

/* The 8 bytes at at, when [at, at + 8) lies in [lo, hi). */
static int dt_stack_word(uint64_t at, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (at < lo || at > hi || hi - at < 8 || (at & 7))
		return -1;
	*out = *(const uint64_t *)(uintptr_t)at;
	return 0;
}

/* One frame up from the frame of return address pc: 1 moved, 0 at the
 * outermost frame, -1 to stop. */
static int dt_step(dt_find_object_fn find, struct dt_unw_regs *u, uint64_t hi)
{
	struct dt_walk_rule w;
	/* a return address is past its call: its row is the call's */
	if (dt_rule_for(find, u->pc - 1, &w) != 0)
		return -1;
	if (w.r.ra_undefined)
		return 0;
	/* the CFA is above this frame's stack pointer, and so are the saved
	 * registers read below it: never a read under the stack, nor above
	 * the thread's stack */
	uint64_t cfa = (w.r.on_rbp ? u->fp : u->sp) + (uint64_t)w.r.cfa_off;
	uint64_t ra, fp = u->fp;
	if (cfa < u->sp + 8 || cfa > hi || dt_stack_word(cfa - 8, u->sp, hi, &ra) != 0 ||
	    (w.r.rbp_off && dt_stack_word(cfa + (uint64_t)w.r.rbp_off, u->sp, hi, &fp) != 0))
		return -1;
	u->sp = cfa;
	u->fp = fp;
	u->pc = ra;
	return 1;
}

DT_HIDDEN int dt_unwind(const struct dt_unw_regs *from, uint64_t stack_hi, void **ips, int max,
                        int *truncated)
{
	dt_find_object_fn find = dt_find_object();
	struct dt_unw_regs u = *from;
	int n = 0, moved = 1;
	*truncated = 1;
	if (!find)
		return 0;
	ips[n++] = (void *)(uintptr_t)u.pc;
	while (n < max && (moved = dt_step(find, &u, stack_hi)) == 1 && u.pc)
		ips[n++] = (void *)(uintptr_t)u.pc;
	*truncated = moved < 0;
	return n;
}

#elif defined(__aarch64__)

/*
 * aarch64 has no CFI reader here: the walk follows frame records (AAPCS64:
 * x29 points at {caller's x29, return address}), which GCC keeps in every
 * function that makes a call, at -O2 too. A function that keeps none (a
 * leaf, or code built without them) is missing from the stack, never
 * followed into: every record read lies in [sp, top of the thread's stack)
 * and each one is above the last. x29 = 0 is the outermost frame (glibc's
 * _start and thread start clear it): a whole stack. Anything else that
 * stops the walk (a record off the stack, as from an alternate signal
 * stack, or one that does not move up) marks the stack truncated.
 */

DT_HIDDEN __attribute__((noinline)) void dt_unwind_start(struct dt_unw_regs *r)
{
	/* asking for it gives this function a frame record: the caller's
	 * x29 and return address */
	const uint64_t *fp = __builtin_frame_address(0);
	r->pc = fp[1];
	r->sp = (uint64_t)(uintptr_t)fp;
	r->fp = fp[0];
}

/* A return address with its pointer-authentication code removed (code
 * built with -mbranch-protection signs it before saving it). XPACLRI is
 * in the hint space: a no-op on a CPU without PAuth. */
static uint64_t dt_strip_pac(uint64_t ra)
{
	register uint64_t lr __asm__("x30") = ra;
	__asm__("hint 7" : "+r"(lr));
	return lr;
}

/* The frame record at *fp: the return address it holds, and *fp moved to
 * the caller's record. -1 when it does not lie in [lo, hi) or the caller's
 * record is not above it. */
static int dt_frame_record(uint64_t *fp, uint64_t lo, uint64_t hi, uint64_t *ra)
{
	uint64_t at = *fp;
	if (at < lo || at > hi || hi - at < 16 || (at & 7))
		return -1;
	const uint64_t *rec = (const uint64_t *)(uintptr_t)at;
	uint64_t next = rec[0];
	if (next != 0 && next <= at)
		return -1;
	*ra = dt_strip_pac(rec[1]);
	*fp = next;
	return 0;
}

DT_HIDDEN int dt_unwind(const struct dt_unw_regs *from, uint64_t stack_hi, void **ips, int max,
                        int *truncated)
{
	uint64_t fp = from->fp, ra;
	int n = 0;
	*truncated = 1;
	ips[n++] = (void *)(uintptr_t)from->pc;
	while (n < max && fp != 0) {
		if (dt_frame_record(&fp, from->sp, stack_hi, &ra) != 0)
			return n;
		if (ra == 0)
			break;
		ips[n++] = (void *)(uintptr_t)ra;
	}
	*truncated = 0;
	return n;
}

#else

DT_HIDDEN void dt_unwind_start(struct dt_unw_regs *r)
{
	*r = (struct dt_unw_regs){0};
}

DT_HIDDEN int dt_unwind(const struct dt_unw_regs *from, uint64_t stack_hi, void **ips, int max,
                        int *truncated)
{
	(void)from;
	(void)stack_hi;
	(void)ips;
	(void)max;
	*truncated = 1;
	return 0;
}

#endif

DT_HIDDEN uint64_t dt_unwind_generation(void)
{
	/* running first: a dlclose that unmapped what this thread now sees
	 * at its place has either bumped the generation or is still running */
	if (atomic_load(&dt_dlclose_running))
		return DT_UNW_UNSETTLED;
	return atomic_load(&dt_unw_generation);
}

/* Interposed so that the cached rules (and module table) of an unloaded
 * library are not used for whatever is loaded at its place next. Not
 * dlopen: it resolves names relative to its caller's object. */
__attribute__((visibility("default"))) int dlclose(void *handle)
{
	static void *real;
	int (*fn)(void *) = __atomic_load_n(&real, __ATOMIC_RELAXED);
	if (!fn)
		fn = (int (*)(void *))dt_resolve_real(&real, "dlclose");
	if (!fn)
		return -1;
	atomic_fetch_add(&dt_dlclose_running, 1);
	int r = fn(handle);
	atomic_fetch_add(&dt_unw_generation, 1);
	atomic_fetch_sub(&dt_dlclose_running, 1);
	return r;
}
