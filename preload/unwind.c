/* SPDX-License-Identifier: MIT */
/*
 * Call stacks without libgcc's per-frame work, on x86_64 (backtrace.c
 * falls back to libgcc wherever this one declines).
 *
 * libgcc's _Unwind_Backtrace interprets each frame's call-frame
 * information (CFI) from the start of its FDE and updates a context of all
 * seventeen registers, at every frame of every refusal: about 14,000
 * instructions for a ten-frame stack, most of a refusal's user-space cost.
 * A return address is always the same place in the same code, so the
 * answer for it can be kept: this unwinder interprets the CFI once per
 * address, keeps the rule it found (where the frame's canonical frame
 * address, CFA, is; where the return address and the caller's rbp were
 * saved) in a small lock-free cache, and then walks rsp, rbp and rip only.
 *
 * It stops where libgcc stops, after reporting the frame: at a return
 * address that CFI marks undefined (_start, a thread's first frame). It
 * declines (returns -1, and the caller asks libgcc for the whole stack)
 * wherever libgcc might see more or otherwise: an address in no module or
 * under no FDE (JIT code registered with __register_frame, a sigreturn
 * trampoline), a signal frame (a CIE with 'S'), a CFA that is an
 * expression or based on another register (DRAP realignment), a return
 * address not at CFA - 8, a saved rbp not at an offset from the CFA, a
 * rule for rsp, an .eh_frame_hdr table other than the sorted one GNU ld,
 * gold and lld write, 64-bit DWARF, malformed CFI, and a CFA that does not
 * move up the stack, or moves more than DT_UNW_MAX_FRAME.
 *
 * Modules are found with glibc's _dl_find_object (2.35+), lock-free and
 * async-signal-safe. The cache key mixes the address with the module's
 * link_map, bounds and .eh_frame_hdr address; a library rebuilt and
 * loaded again at the same place with the same link_map could still be
 * answered from the old build's rules, which is why every read is bounded
 * by the stack pointer (a wrong rule gives a wrong frame, not a fault
 * below the stack). Each slot is two words, the rule (holding 20 bits of
 * its key) and the rule XOR the key: a torn read between threads or a
 * signal handler fails the check and counts as a miss.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>

#include "probe_state.h"

#if defined(__x86_64__) && !defined(__ILP32__) && defined(DLFO_STRUCT_HAS_EH_DBASE)

typedef int (*dt_find_object_fn)(void *, struct dl_find_object *);
static _Atomic(dt_find_object_fn) dt_find_object;

DT_HIDDEN void dt_unwind_fast_init(void *find_object)
{
	atomic_store_explicit(&dt_find_object, (dt_find_object_fn)find_object,
	                      memory_order_release);
}

/* DWARF register numbers on x86_64 (System V psABI, figure 3.36). */
enum { DT_DW_RBP = 6, DT_DW_RSP = 7, DT_DW_RA = 16 };

#define DT_UNW_MAX_FRAME (16u << 20) /* and cfa_off fits its 24 bits */
#define DT_UNW_CACHE 1024            /* slots, a power of two */

/* A row of the CFI table, as far as walking needs it; the return
 * address is at CFA - 8. */
struct dt_cfa_rule {
	int on_rbp;       /* CFA = rbp + cfa_off, else rsp + cfa_off */
	int64_t cfa_off;  /* 0 .. DT_UNW_MAX_FRAME - 1 */
	int ra_undefined; /* the outermost frame */
	int decline;      /* libgcc must do this stack */
	int64_t rbp_off;  /* caller's rbp at CFA + rbp_off; 0: rbp unchanged */
};

/* The answers of a lookup. */
enum { DT_UNW_OK, DT_UNW_DECLINE };

/* Packed into one word for the cache: bit 0 set (never an empty slot),
 * bit 1 on_rbp, bit 2 ra_undefined, bit 3 decline, bits 8..31 cfa_off,
 * 48..63 rbp_off (signed); bits 4..7 and 32..47 hold bits of the key. */
#define DT_RULE_KEYBITS 0x0000ffff000000f0ULL

static uint64_t dt_rule_pack(const struct dt_cfa_rule *r, uint64_t key)
{
	return 1u | (uint64_t)(r->on_rbp != 0) << 1 | (uint64_t)(r->ra_undefined != 0) << 2 |
	       (uint64_t)(r->decline != 0) << 3 | ((uint64_t)r->cfa_off & 0xffffffu) << 8 |
	       ((uint64_t)r->rbp_off & 0xffffu) << 48 | (key & DT_RULE_KEYBITS);
}

static void dt_rule_unpack(uint64_t w, struct dt_cfa_rule *r)
{
	r->on_rbp = (w >> 1) & 1;
	r->ra_undefined = (w >> 2) & 1;
	r->decline = (w >> 3) & 1;
	r->cfa_off = (int64_t)((w >> 8) & 0xffffffu);
	r->rbp_off = (int16_t)(w >> 48);
}

static struct {
	_Atomic uint64_t check; /* key ^ rule */
	_Atomic uint64_t rule;
} dt_unw_cache[DT_UNW_CACHE];

/* ---- reading DWARF ------------------------------------------------------ */

struct dt_cur {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t dt_uleb(struct dt_cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		unsigned char b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}

static int64_t dt_sleb(struct dt_cur *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	unsigned char b = 0x80;
	while (c->p < c->end && (b & 0x80)) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	}
	if (b & 0x80)
		c->bad = 1;
	else if (shift < 64 && (b & 0x40))
		v |= -(int64_t)((uint64_t)1 << shift);
	return v;
}

/* Skips n bytes, or marks the cursor bad when fewer are left. */
static void dt_skip(struct dt_cur *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = 1;
		c->p = c->end;
	} else {
		c->p += n;
	}
}

static uint64_t dt_fixed(struct dt_cur *c, unsigned n)
{
	if (c->end - c->p < (long)n) {
		c->bad = 1;
		c->p = c->end;
		return 0;
	}
	uint64_t v = 0;
	__builtin_memcpy(&v, c->p, n); /* little-endian */
	c->p += n;
	return v;
}

/* A pointer in DW_EH_PE encoding enc: absolute or pc-relative, 2, 4 or 8
 * bytes, signed or not. Anything else (indirect, data-relative, uleb)
 * marks the cursor bad. */
static uint64_t dt_encoded(struct dt_cur *c, unsigned enc)
{
	const unsigned char *at = c->p;
	uint64_t v;
	if (enc & 0x80) { /* indirect */
		c->bad = 1;
		return 0;
	}
	switch (enc & 0x0f) {
	case 0x00: /* absptr */
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		v = dt_fixed(c, 8);
		break;
	case 0x02:
		v = dt_fixed(c, 2);
		break;
	case 0x0a:
		v = (uint64_t)(int64_t)(int16_t)dt_fixed(c, 2);
		break;
	case 0x03:
		v = dt_fixed(c, 4);
		break;
	case 0x0b:
		v = (uint64_t)(int64_t)(int32_t)dt_fixed(c, 4);
		break;
	default:
		c->bad = 1;
		return 0;
	}
	switch (enc & 0x70) {
	case 0x00:
		return v;
	case 0x10: /* pcrel */
		return v + (uint64_t)(uintptr_t)at;
	default:
		c->bad = 1;
		return 0;
	}
}

/* ---- the CFI program ----------------------------------------------------- */

/* A register's rule: none stated (libgcc's REG_UNSAVED: the caller's
 * value for rbp and rsp), the caller's value, undefined, at CFA + off, or
 * something this unwinder does not follow. */
enum { DT_R_UNSPEC, DT_R_SAME, DT_R_UNDEF, DT_R_OFFSET, DT_R_OTHER };
struct dt_regrule {
	int kind;
	int64_t off;
};
struct dt_cfa_state {
	uint64_t cfa_reg;
	int64_t cfa_off;
	int cfa_expr;
	struct dt_regrule rbp, rsp, ra;
};

struct dt_cie {
	uint64_t code_align;
	int64_t data_align;
	unsigned fde_enc;
	int has_z;
	struct dt_cur insns;
};

static struct dt_regrule *dt_rule_of(struct dt_cfa_state *s, uint64_t reg)
{
	return reg == DT_DW_RBP   ? &s->rbp
	       : reg == DT_DW_RSP ? &s->rsp
	       : reg == DT_DW_RA  ? &s->ra
	                          : NULL;
}

static void dt_set_rule(struct dt_cfa_state *s, uint64_t reg, int kind, int64_t off)
{
	struct dt_regrule *r = dt_rule_of(s, reg);
	if (r) {
		r->kind = kind;
		r->off = off;
	}
}

/* DW_CFA_restore: reg's rule as the CIE's program left it. */
static int dt_restore(struct dt_cfa_state *s, const struct dt_cfa_state *init, uint64_t reg)
{
	if (!init)
		return -1; /* in the CIE's own program */
	if (reg == DT_DW_RBP)
		s->rbp = init->rbp;
	else if (reg == DT_DW_RSP)
		s->rsp = init->rsp;
	else if (reg == DT_DW_RA)
		s->ra = init->ra;
	return 0;
}

/* One instruction that sets a rule (the CFA's or a register's), op
 * already read: 0, or -1 on what this unwinder does not know. */
static int dt_cfa_rule_op(struct dt_cur *c, const struct dt_cie *cie, unsigned op,
                          struct dt_cfa_state *s, const struct dt_cfa_state *init)
{
	uint64_t reg;
	switch (op & 0xc0) {
	case 0x80: /* offset */
		dt_set_rule(s, op & 0x3f, DT_R_OFFSET, (int64_t)dt_uleb(c) * cie->data_align);
		return 0;
	case 0xc0: /* restore */
		return dt_restore(s, init, op & 0x3f);
	}
	switch (op) {
	case 0x00: /* nop */
		return 0;
	case 0x2e: /* GNU_args_size */
		dt_uleb(c);
		return 0;
	case 0x05: /* offset_extended */
		reg = dt_uleb(c);
		dt_set_rule(s, reg, DT_R_OFFSET, (int64_t)dt_uleb(c) * cie->data_align);
		return 0;
	case 0x06: /* restore_extended */
		return dt_restore(s, init, dt_uleb(c));
	case 0x07: /* undefined */
		dt_set_rule(s, dt_uleb(c), DT_R_UNDEF, 0);
		return 0;
	case 0x08: /* same_value */
		dt_set_rule(s, dt_uleb(c), DT_R_SAME, 0);
		return 0;
	case 0x09: /* register */
	case 0x14: /* val_offset */
		reg = dt_uleb(c);
		dt_uleb(c);
		dt_set_rule(s, reg, DT_R_OTHER, 0);
		return 0;
	case 0x15: /* val_offset_sf */
		reg = dt_uleb(c);
		dt_sleb(c);
		dt_set_rule(s, reg, DT_R_OTHER, 0);
		return 0;
	case 0x0c: /* def_cfa */
		s->cfa_reg = dt_uleb(c);
		s->cfa_off = (int64_t)dt_uleb(c);
		s->cfa_expr = 0;
		return 0;
	case 0x0d: /* def_cfa_register */
		s->cfa_reg = dt_uleb(c);
		s->cfa_expr = 0;
		return 0;
	case 0x0e: /* def_cfa_offset */
		s->cfa_off = (int64_t)dt_uleb(c);
		return 0;
	case 0x0f: /* def_cfa_expression */
		s->cfa_expr = 1;
		dt_skip(c, dt_uleb(c));
		return 0;
	case 0x10: /* expression */
	case 0x16: /* val_expression */
		reg = dt_uleb(c);
		dt_set_rule(s, reg, DT_R_OTHER, 0);
		dt_skip(c, dt_uleb(c));
		return 0;
	case 0x11: /* offset_extended_sf */
		reg = dt_uleb(c);
		dt_set_rule(s, reg, DT_R_OFFSET, dt_sleb(c) * cie->data_align);
		return 0;
	case 0x12: /* def_cfa_sf */
		s->cfa_reg = dt_uleb(c);
		s->cfa_off = dt_sleb(c) * cie->data_align;
		s->cfa_expr = 0;
		return 0;
	case 0x13: /* def_cfa_offset_sf */
		s->cfa_off = dt_sleb(c) * cie->data_align;
		return 0;
	case 0x2f: /* GNU_negative_offset_extended */
		reg = dt_uleb(c);
		dt_set_rule(s, reg, DT_R_OFFSET, -(int64_t)dt_uleb(c) * cie->data_align);
		return 0;
	default:
		return -1;
	}
}

/* Runs the program in c from location loc until the row that covers
 * target; init is the state after the CIE's program (for restore), or NULL
 * while running that. Returns 0, or -1 on what it does not follow. */
static int dt_cfa_run(struct dt_cur *c, const struct dt_cie *cie, uint64_t loc, uint64_t target,
                      struct dt_cfa_state *s, const struct dt_cfa_state *init)
{
	struct dt_cfa_state saved[8];
	int nsaved = 0;
	while (c->p < c->end && !c->bad) {
		unsigned op = *c->p++;
		uint64_t delta;
		if ((op & 0xc0) == 0x40) /* advance_loc */
			delta = (op & 0x3f) * cie->code_align;
		else if (op >= 0x02 && op <= 0x04) /* advance_loc1, 2, 4 */
			delta = dt_fixed(c, op == 0x04 ? 4 : op - 1) * cie->code_align;
		else if (op == 0x01) { /* set_loc */
			loc = dt_encoded(c, cie->fde_enc);
			if (loc > target)
				return 0;
			continue;
		} else if (op == 0x0a) { /* remember_state */
			if (nsaved == 8)
				return -1;
			saved[nsaved++] = *s;
			continue;
		} else if (op == 0x0b) { /* restore_state */
			if (!nsaved)
				return -1;
			/* with the CFA, as libgcc does (its frame_state_reg_info) */
			*s = saved[--nsaved];
			continue;
		} else if (dt_cfa_rule_op(c, cie, op, s, init) != 0) {
			return -1;
		} else {
			continue;
		}
		if (loc + delta > target)
			return 0;
		loc += delta;
	}
	return c->bad ? -1 : 0;
}

/* ---- finding the FDE ------------------------------------------------------ */

static int dt_parse_cie(const unsigned char *cie, struct dt_cie *out)
{
	uint32_t len;
	__builtin_memcpy(&len, cie, 4);
	if (len == 0 || len == 0xffffffffu)
		return -1;
	struct dt_cur c = {cie + 4, cie + 4 + len, 0};
	if (dt_fixed(&c, 4) != 0) /* CIE id */
		return -1;
	unsigned version = (unsigned)dt_fixed(&c, 1);
	if (version != 1 && version != 3)
		return -1;
	const unsigned char *aug = c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (c.p++ >= c.end)
		return -1;
	out->code_align = dt_uleb(&c);
	out->data_align = dt_sleb(&c);
	uint64_t ra = version == 1 ? dt_fixed(&c, 1) : dt_uleb(&c);
	if (ra != DT_DW_RA)
		return -1;
	out->fde_enc = 0x00;
	out->has_z = aug[0] == 'z';
	if (out->has_z) {
		uint64_t alen = dt_uleb(&c);
		if (alen > (uint64_t)(c.end - c.p))
			return -1;
		const unsigned char *data_end = c.p + alen;
		for (const unsigned char *a = aug + 1; *a && !c.bad; a++) {
			switch (*a) {
			case 'R':
				out->fde_enc = (unsigned)dt_fixed(&c, 1);
				break;
			case 'L':
				dt_fixed(&c, 1);
				break;
			case 'P': {
				unsigned penc = (unsigned)dt_fixed(&c, 1);
				dt_encoded(&c, penc & 0x7f); /* the personality, skipped */
				break;
			}
			default: /* 'S' (a signal frame) and anything newer */
				return -1;
			}
		}
		if (c.bad || data_end > c.end)
			return -1;
		c.p = data_end;
	} else if (aug[0]) {
		return -1;
	}
	if (c.bad)
		return -1;
	out->insns = c;
	return 0;
}

/* The FDE covering pc in the module whose .eh_frame_hdr is hdr: 1 with
 * the rule at pc, 0 when none covers it, -1 to decline. */
static int dt_rule_at(const unsigned char *hdr, uint64_t pc, struct dt_cfa_rule *rule)
{
	/* version 1, a 4-byte eh_frame_ptr, udata4 count, datarel sdata4
	 * table: what the linkers write */
	if (hdr[0] != 1 || (hdr[1] & 0x07) != 0x03 || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return -1;
	uint32_t count;
	__builtin_memcpy(&count, hdr + 8, 4);
	const int32_t *table = (const int32_t *)(hdr + 12);
	uint64_t base = (uint64_t)(uintptr_t)hdr;
	uint32_t lo = 0, hi = count;
	while (lo < hi) { /* the first entry above pc */
		uint32_t mid = lo + (hi - lo) / 2;
		if (base + (uint64_t)(int64_t)table[2 * mid] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	const unsigned char *fde = hdr + table[2 * (lo - 1) + 1];
	uint32_t len;
	__builtin_memcpy(&len, fde, 4);
	if (len == 0 || len == 0xffffffffu)
		return -1;
	int32_t cie_off;
	__builtin_memcpy(&cie_off, fde + 4, 4);
	struct dt_cie cie;
	if (cie_off <= 0 || dt_parse_cie(fde + 4 - cie_off, &cie) != 0)
		return -1;
	struct dt_cur c = {fde + 8, fde + 4 + len, 0};
	uint64_t start = dt_encoded(&c, cie.fde_enc);
	uint64_t range = dt_encoded(&c, cie.fde_enc & 0x0f);
	if (c.bad)
		return -1;
	if (pc < start || pc - start >= range)
		return 0;
	if (cie.has_z)
		dt_skip(&c, dt_uleb(&c));
	if (c.bad)
		return -1;

	struct dt_cfa_state s = {DT_DW_RSP,       8, 0, {DT_R_UNSPEC, 0}, {DT_R_UNSPEC, 0},
	                         {DT_R_UNSPEC, 0}};
	struct dt_cur ci = cie.insns;
	if (dt_cfa_run(&ci, &cie, start, ~0ULL, &s, NULL) != 0)
		return -1;
	struct dt_cfa_state init = s;
	if (dt_cfa_run(&c, &cie, start, pc, &s, &init) != 0)
		return -1;

	*rule = (struct dt_cfa_rule){0};
	if (s.ra.kind == DT_R_UNDEF) {
		rule->ra_undefined = 1; /* the end: nothing else matters */
		return 1;
	}
	if (s.cfa_expr || (s.cfa_reg != DT_DW_RSP && s.cfa_reg != DT_DW_RBP) || s.cfa_off < 0 ||
	    s.cfa_off >= (int64_t)DT_UNW_MAX_FRAME || s.ra.kind != DT_R_OFFSET || s.ra.off != -8 ||
	    (s.rsp.kind != DT_R_UNSPEC && s.rsp.kind != DT_R_SAME))
		return -1;
	rule->on_rbp = s.cfa_reg == DT_DW_RBP;
	rule->cfa_off = s.cfa_off;
	if (s.rbp.kind == DT_R_OFFSET && s.rbp.off < 0 && s.rbp.off >= -32768)
		rule->rbp_off = s.rbp.off;
	else if (s.rbp.kind != DT_R_SAME && s.rbp.kind != DT_R_UNSPEC)
		return -1;
	return 1;
}

/* The rule for pc: from the cache, or found and kept. */
static int dt_rule_for(dt_find_object_fn find, uint64_t pc, struct dt_cfa_rule *rule)
{
	struct dl_find_object fo;
	if (find((void *)(uintptr_t)pc, &fo) != 0 || !fo.dlfo_eh_frame)
		return DT_UNW_DECLINE;
	uint64_t mod = (uint64_t)(uintptr_t)fo.dlfo_link_map ^
	               (uint64_t)(uintptr_t)fo.dlfo_eh_frame << 17 ^
	               (uint64_t)(uintptr_t)fo.dlfo_map_start << 29 ^
	               (uint64_t)(uintptr_t)fo.dlfo_map_end << 41;
	uint64_t key = pc ^ mod * 0x9e3779b97f4a7c15ULL;
	/* the multiply carries the address's low bits into the top ten */
	uint64_t slot = (key * 0xbf58476d1ce4e5b9ULL) >> 54;
	uint64_t check = atomic_load_explicit(&dt_unw_cache[slot].check, memory_order_relaxed);
	uint64_t w = atomic_load_explicit(&dt_unw_cache[slot].rule, memory_order_relaxed);
	if (w && (check ^ w) == key && (w & DT_RULE_KEYBITS) == (key & DT_RULE_KEYBITS)) {
		dt_rule_unpack(w, rule);
		return rule->decline ? DT_UNW_DECLINE : DT_UNW_OK;
	}
	int found = dt_rule_at(fo.dlfo_eh_frame, pc, rule);
	if (found <= 0) {
		/* declined, or no FDE: libgcc may know more (registered frames,
		 * its sigreturn fallback); kept, so as not to parse it again */
		*rule = (struct dt_cfa_rule){0};
		rule->decline = 1;
	}
	w = dt_rule_pack(rule, key);
	atomic_store_explicit(&dt_unw_cache[slot].rule, w, memory_order_relaxed);
	atomic_store_explicit(&dt_unw_cache[slot].check, key ^ w, memory_order_relaxed);
	return rule->decline ? DT_UNW_DECLINE : DT_UNW_OK;
}

/* The return addresses of the stack, from this function's caller's frame
 * outwards, as libgcc's _Unwind_Backtrace reports them: the number kept,
 * or -1 where libgcc should do it. */
DT_HIDDEN __attribute__((noinline)) int dt_unwind_fast(void **ips, int max)
{
	dt_find_object_fn find = atomic_load_explicit(&dt_find_object, memory_order_acquire);
	if (!find)
		return -1;
	uint64_t pc, sp, fp;
	__asm__ volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2"
	                 : "=r"(pc), "=r"(sp), "=r"(fp));
	int n = 0;
	for (int first = 1; n < max; first = 0) {
		struct dt_cfa_rule r;
		/* a return address is past its call: its row is the call's */
		if (dt_rule_for(find, first ? pc : pc - 1, &r) == DT_UNW_DECLINE)
			return -1;
		if (r.ra_undefined)
			break;
		/* the CFA is above this frame's stack pointer, and so are the
		 * saved registers read below it: never a read under the stack */
		uint64_t cfa = (r.on_rbp ? fp : sp) + (uint64_t)r.cfa_off;
		if (cfa < sp + 8 || cfa - sp > DT_UNW_MAX_FRAME || (cfa & 7) ||
		    (r.rbp_off && cfa - sp < (uint64_t)-r.rbp_off))
			return -1;
		uint64_t ra = *(const uint64_t *)(uintptr_t)(cfa - 8);
		if (r.rbp_off)
			fp = *(const uint64_t *)(uintptr_t)(cfa + (uint64_t)r.rbp_off);
		sp = cfa;
		pc = ra;
		if (!pc)
			break;
		ips[n++] = (void *)(uintptr_t)pc;
	}
	return n ? n : -1;
}

#else

DT_HIDDEN void dt_unwind_fast_init(void *find_object)
{
	(void)find_object;
}

DT_HIDDEN int dt_unwind_fast(void **ips, int max)
{
	(void)ips;
	(void)max;
	return -1;
}

#endif
