/* SPDX-License-Identifier: MIT */
/*
 * The CFI reader of preload/unwind.c (contract in cfi.h). Its input is
 * data: a module's .eh_frame is whatever its linker, JIT or author wrote,
 * and a wrong byte must give a declined frame, never a read outside the
 * module's segment or undefined arithmetic.
 */
#include "cfi.h"

#include <stddef.h>

struct dt_cur {
	const unsigned char *p, *end;
	int bad;
};

/* [at, at + n) inside [lo, hi), without overflow. */
static int dt_span_ok(uintptr_t at, uint64_t n, uintptr_t lo, uintptr_t hi)
{
	return at >= lo && at <= hi && n <= (uint64_t)(hi - at);
}

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

/* Computed in uint64_t: the sign extension of a 64-bit value is a shift
 * of an unsigned word, never a negation that can overflow. */
static int64_t dt_sleb(struct dt_cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char b = 0x80;
	while (c->p < c->end && (b & 0x80)) {
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	}
	if (b & 0x80)
		c->bad = 1;
	else if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return (int64_t)v;
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
	if ((size_t)(c->end - c->p) < n) {
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
	uintptr_t at = (uintptr_t)c->p;
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
		return v + (uint64_t)at;
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

/* factor * data_align, or the cursor marked bad where it overflows (no
 * real frame saves a register an exabyte from its CFA). */
static int64_t dt_scaled(struct dt_cur *c, int64_t factor, int64_t data_align)
{
	int64_t v;
	if (__builtin_mul_overflow(factor, data_align, &v)) {
		c->bad = 1;
		return 0;
	}
	return v;
}

/* A uleb read as a non-negative int64_t (larger is malformed here). */
static int64_t dt_uleb_s(struct dt_cur *c)
{
	uint64_t v = dt_uleb(c);
	if (v > (uint64_t)INT64_MAX) {
		c->bad = 1;
		return 0;
	}
	return (int64_t)v;
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

/* The instructions that set where the CFA is, op already read: 0, 1 when
 * op is none of them. */
static int dt_cfa_def_op(struct dt_cur *c, const struct dt_cie *cie, unsigned op,
                         struct dt_cfa_state *s)
{
	switch (op) {
	case 0x0c: /* def_cfa */
		s->cfa_reg = dt_uleb(c);
		s->cfa_off = dt_uleb_s(c);
		s->cfa_expr = 0;
		return 0;
	case 0x0d: /* def_cfa_register */
		s->cfa_reg = dt_uleb(c);
		s->cfa_expr = 0;
		return 0;
	case 0x0e: /* def_cfa_offset */
		s->cfa_off = dt_uleb_s(c);
		return 0;
	case 0x0f: /* def_cfa_expression */
		s->cfa_expr = 1;
		dt_skip(c, dt_uleb(c));
		return 0;
	case 0x12: /* def_cfa_sf */
		s->cfa_reg = dt_uleb(c);
		s->cfa_off = dt_scaled(c, dt_sleb(c), cie->data_align);
		s->cfa_expr = 0;
		return 0;
	case 0x13: /* def_cfa_offset_sf */
		s->cfa_off = dt_scaled(c, dt_sleb(c), cie->data_align);
		return 0;
	default:
		return 1;
	}
}

/* One instruction that sets a rule (the CFA's or a register's), op
 * already read: 0, or -1 on what this unwinder does not know. */
static int dt_cfa_rule_op(struct dt_cur *c, const struct dt_cie *cie, unsigned op,
                          struct dt_cfa_state *s, const struct dt_cfa_state *init)
{
	uint64_t reg;
	switch (op & 0xc0) {
	case 0x80: /* offset */
		dt_set_rule(s, op & 0x3f, DT_R_OFFSET, dt_scaled(c, dt_uleb_s(c), cie->data_align));
		return 0;
	case 0xc0: /* restore */
		return dt_restore(s, init, op & 0x3f);
	}
	if (dt_cfa_def_op(c, cie, op, s) == 0)
		return 0;
	switch (op) {
	case 0x00: /* nop */
		return 0;
	case 0x2e: /* GNU_args_size */
		dt_uleb(c);
		return 0;
	case 0x05: /* offset_extended */
		reg = dt_uleb(c);
		dt_set_rule(s, reg, DT_R_OFFSET, dt_scaled(c, dt_uleb_s(c), cie->data_align));
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
	case 0x10: /* expression */
	case 0x16: /* val_expression */
		reg = dt_uleb(c);
		dt_set_rule(s, reg, DT_R_OTHER, 0);
		dt_skip(c, dt_uleb(c));
		return 0;
	case 0x11: /* offset_extended_sf */
		reg = dt_uleb(c);
		dt_set_rule(s, reg, DT_R_OFFSET, dt_scaled(c, dt_sleb(c), cie->data_align));
		return 0;
	case 0x2f: /* GNU_negative_offset_extended */
		reg = dt_uleb(c);
		dt_set_rule(s, reg, DT_R_OFFSET, dt_scaled(c, -dt_uleb_s(c), cie->data_align));
		return 0;
	default:
		return -1;
	}
}

/* How far an advance instruction op moves the location: 0 and *is_adv
 * clear when op is no advance. */
static uint64_t dt_advance(struct dt_cur *c, const struct dt_cie *cie, unsigned op, int *is_adv)
{
	uint64_t n;
	*is_adv = 1;
	if ((op & 0xc0) == 0x40) /* advance_loc */
		n = op & 0x3f;
	else if (op >= 0x02 && op <= 0x04) /* advance_loc1, 2, 4 */
		n = dt_fixed(c, op == 0x04 ? 4 : op - 1);
	else
		return *is_adv = 0;
	uint64_t delta;
	if (__builtin_mul_overflow(n, cie->code_align, &delta))
		delta = ~0ULL; /* past any target */
	return delta;
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
		int is_adv;
		uint64_t delta = dt_advance(c, cie, op, &is_adv);
		if (is_adv) {
			if (delta > target - loc || loc > target)
				return c->bad ? -1 : 0;
			loc += delta;
		} else if (op == 0x01) { /* set_loc */
			loc = dt_encoded(c, cie->fde_enc);
			if (loc > target)
				return c->bad ? -1 : 0;
		} else if (op == 0x0a) { /* remember_state */
			if (nsaved == 8)
				return -1;
			saved[nsaved++] = *s;
		} else if (op == 0x0b) { /* restore_state */
			if (!nsaved)
				return -1;
			/* with the CFA, as libgcc does (its frame_state_reg_info) */
			*s = saved[--nsaved];
		} else if (dt_cfa_rule_op(c, cie, op, s, init) != 0) {
			return -1;
		}
	}
	return c->bad ? -1 : 0;
}

/* ---- finding the FDE ------------------------------------------------------ */

/* The CIE's augmentation data ('z'), after its augmentation string aug. */
static int dt_parse_aug(struct dt_cur *c, const unsigned char *aug, struct dt_cie *out)
{
	uint64_t alen = dt_uleb(c);
	if (c->bad || alen > (uint64_t)(c->end - c->p))
		return -1;
	const unsigned char *data_end = c->p + alen;
	for (const unsigned char *a = aug + 1; *a && !c->bad; a++) {
		switch (*a) {
		case 'R':
			out->fde_enc = (unsigned)dt_fixed(c, 1);
			break;
		case 'L':
			dt_fixed(c, 1);
			break;
		case 'P': {
			unsigned penc = (unsigned)dt_fixed(c, 1);
			dt_encoded(c, penc & 0x7f); /* the personality, skipped */
			break;
		}
		default: /* 'S' (a signal frame) and anything newer */
			return -1;
		}
	}
	if (c->bad || c->p > data_end)
		return -1;
	c->p = data_end;
	return 0;
}

static int dt_parse_cie(uintptr_t cie, uintptr_t lo, uintptr_t hi, struct dt_cie *out)
{
	uint32_t len;
	if (!dt_span_ok(cie, 4, lo, hi))
		return -1;
	__builtin_memcpy(&len, (const void *)cie, 4);
	if (len == 0 || len == 0xffffffffu || !dt_span_ok(cie + 4, len, lo, hi))
		return -1;
	struct dt_cur c = {(const unsigned char *)cie + 4, (const unsigned char *)cie + 4 + len, 0};
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
	if (c.bad || ra != DT_DW_RA)
		return -1;
	out->fde_enc = 0x00;
	out->has_z = aug[0] == 'z';
	if (out->has_z ? dt_parse_aug(&c, aug, out) != 0 : aug[0] != 0)
		return -1;
	if (c.bad)
		return -1;
	out->insns = c;
	return 0;
}

/* The FDE the sorted table at hdr names for pc (the last entry at or
 * below it), or 0 when none. */
static uintptr_t dt_fde_for(uintptr_t hdr, uintptr_t lo, uintptr_t hi, uint64_t pc)
{
	uint32_t count;
	__builtin_memcpy(&count, (const void *)(hdr + 8), 4);
	if (!dt_span_ok(hdr + 12, (uint64_t)count * 8, lo, hi))
		return 0;
	const unsigned char *table = (const unsigned char *)hdr + 12;
	uint32_t lo_i = 0, hi_i = count;
	while (lo_i < hi_i) { /* the first entry above pc */
		uint32_t mid = lo_i + (hi_i - lo_i) / 2;
		int32_t start;
		__builtin_memcpy(&start, table + 8 * (size_t)mid, 4);
		if ((uint64_t)hdr + (uint64_t)(int64_t)start <= pc)
			lo_i = mid + 1;
		else
			hi_i = mid;
	}
	if (lo_i == 0)
		return 0;
	int32_t off;
	__builtin_memcpy(&off, table + 8 * (size_t)(lo_i - 1) + 4, 4);
	return (uintptr_t)((uint64_t)hdr + (uint64_t)(int64_t)off);
}

/* The state at pc from the FDE at fde: 1, 0 when it does not cover pc, -1. */
static int dt_fde_state(uintptr_t fde, uintptr_t lo, uintptr_t hi, uint64_t pc,
                        struct dt_cfa_state *s)
{
	uint32_t len;
	int32_t cie_off;
	if (!dt_span_ok(fde, 8, lo, hi))
		return -1;
	__builtin_memcpy(&len, (const void *)fde, 4);
	__builtin_memcpy(&cie_off, (const void *)(fde + 4), 4);
	if (len < 4 || len == 0xffffffffu || !dt_span_ok(fde + 4, len, lo, hi) || cie_off <= 0 ||
	    (uintptr_t)cie_off > fde + 4)
		return -1;
	struct dt_cie cie;
	if (dt_parse_cie(fde + 4 - (uintptr_t)cie_off, lo, hi, &cie) != 0)
		return -1;
	struct dt_cur c = {(const unsigned char *)fde + 8, (const unsigned char *)fde + 4 + len, 0};
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
	*s = (struct dt_cfa_state){DT_DW_RSP,       8, 0, {DT_R_UNSPEC, 0}, {DT_R_UNSPEC, 0},
	                           {DT_R_UNSPEC, 0}};
	struct dt_cur ci = cie.insns;
	if (dt_cfa_run(&ci, &cie, start, ~0ULL, s, NULL) != 0)
		return -1;
	struct dt_cfa_state init = *s;
	return dt_cfa_run(&c, &cie, start, pc, s, &init) != 0 ? -1 : 1;
}

/* What the walk needs of the state, or -1 where it does not follow it. */
static int dt_rule_from(const struct dt_cfa_state *s, struct dt_cfa_rule *rule)
{
	*rule = (struct dt_cfa_rule){0};
	if (s->ra.kind == DT_R_UNDEF) {
		rule->ra_undefined = 1; /* the end: nothing else matters */
		return 1;
	}
	if (s->cfa_expr || (s->cfa_reg != DT_DW_RSP && s->cfa_reg != DT_DW_RBP) || s->cfa_off < 0 ||
	    s->cfa_off >= (int64_t)DT_CFI_MAX_FRAME || s->ra.kind != DT_R_OFFSET ||
	    s->ra.off != -8 || (s->rsp.kind != DT_R_UNSPEC && s->rsp.kind != DT_R_SAME))
		return -1;
	rule->on_rbp = s->cfa_reg == DT_DW_RBP;
	rule->cfa_off = s->cfa_off;
	if (s->rbp.kind == DT_R_OFFSET && s->rbp.off < 0 && s->rbp.off >= -32768)
		rule->rbp_off = s->rbp.off;
	else if (s->rbp.kind != DT_R_SAME && s->rbp.kind != DT_R_UNSPEC)
		return -1;
	return 1;
}

int dt_cfi_rule_at(uintptr_t hdr, uintptr_t lo, uintptr_t hi, uint64_t pc, struct dt_cfa_rule *rule)
{
	/* version 1, a 4-byte eh_frame_ptr, udata4 count, datarel sdata4
	 * table: what the linkers write */
	if (!dt_span_ok(hdr, 12, lo, hi))
		return -1;
	const unsigned char *h = (const unsigned char *)hdr;
	if (h[0] != 1 || (h[1] & 0x07) != 0x03 || h[2] != 0x03 || h[3] != 0x3b)
		return -1;
	uintptr_t fde = dt_fde_for(hdr, lo, hi, pc);
	if (!fde)
		return 0;
	struct dt_cfa_state s;
	int found = dt_fde_state(fde, lo, hi, pc, &s);
	return found <= 0 ? found : dt_rule_from(&s, rule);
}
