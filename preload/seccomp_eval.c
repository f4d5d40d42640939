/* SPDX-License-Identifier: MIT */
#include "seccomp_eval.h"

#include <linux/audit.h>
#include <stddef.h>

uint32_t dt_seccomp_arch(void)
{
#if defined(__x86_64__) && !defined(__ILP32__)
	return AUDIT_ARCH_X86_64;
#elif defined(__aarch64__) && !defined(__ILP32__)
	return AUDIT_ARCH_AARCH64;
#else
	return 0;
#endif
}

/* A 32-bit word of d at offset k, as BPF_LD|BPF_W|BPF_ABS reads it: -1
 * for what the answer must not depend on (the instruction pointer) or
 * what seccomp refuses (unaligned, out of the struct). */
static int dt_seccomp_word(const struct seccomp_data *d, uint32_t k, uint32_t *out)
{
	if (k & 3 || k > sizeof(*d) - 4)
		return -1;
	if (k >= offsetof(struct seccomp_data, instruction_pointer) &&
	    k < offsetof(struct seccomp_data, args))
		return -1;
	*out = ((const uint32_t *)(const void *)d)[k / 4];
	return 0;
}

/* An ALU operation; -1 for a division by zero (the kernel's filter then
 * returns 0: SECCOMP_RET_KILL_THREAD) or an operation seccomp refuses. */
static int dt_seccomp_alu(uint16_t op, uint32_t *a, uint32_t v)
{
	switch (op) {
	case BPF_ADD:
		*a += v;
		return 0;
	case BPF_SUB:
		*a -= v;
		return 0;
	case BPF_MUL:
		*a *= v;
		return 0;
	case BPF_DIV:
		if (!v)
			return -1;
		*a /= v;
		return 0;
	case BPF_MOD:
		if (!v)
			return -1;
		*a %= v;
		return 0;
	case BPF_AND:
		*a &= v;
		return 0;
	case BPF_OR:
		*a |= v;
		return 0;
	case BPF_XOR:
		*a ^= v;
		return 0;
	case BPF_LSH:
		*a = v >= 32 ? 0 : *a << v;
		return 0;
	case BPF_RSH:
		*a = v >= 32 ? 0 : *a >> v;
		return 0;
	default:
		return -1;
	}
}

static int dt_seccomp_allowing(uint32_t ret)
{
	uint32_t action = ret & SECCOMP_RET_ACTION_FULL;
	return action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG;
}

int dt_seccomp_allows(const struct sock_filter *prog, unsigned n, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0}, w;
	if (!prog || n == 0 || n > BPF_MAXINSNS)
		return 0;
	/* jumps only go forward: at most n steps */
	for (unsigned pc = 0; pc < n; pc++) {
		const struct sock_filter *f = &prog[pc];
		uint32_t k = f->k;
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (dt_seccomp_word(d, k, &a) != 0)
				return 0;
			break;
		case BPF_LD | BPF_W | BPF_LEN:
			a = sizeof(*d);
			break;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = sizeof(*d);
			break;
		case BPF_LD | BPF_IMM:
			a = k;
			break;
		case BPF_LDX | BPF_IMM:
			x = k;
			break;
		case BPF_LD | BPF_MEM:
			if (k >= BPF_MEMWORDS)
				return 0;
			a = mem[k];
			break;
		case BPF_LDX | BPF_MEM:
			if (k >= BPF_MEMWORDS)
				return 0;
			x = mem[k];
			break;
		case BPF_ST:
			if (k >= BPF_MEMWORDS)
				return 0;
			mem[k] = a;
			break;
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return 0;
			mem[k] = x;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_ALU | BPF_NEG:
			a = -a;
			break;
		case BPF_RET | BPF_K:
			return dt_seccomp_allowing(k);
		case BPF_RET | BPF_A:
			return dt_seccomp_allowing(a);
		case BPF_JMP | BPF_JA:
			if (k >= n - pc - 1)
				return 0;
			pc += k;
			break;
		default:
			if (BPF_CLASS(f->code) == BPF_ALU &&
			    (BPF_SRC(f->code) == BPF_K || BPF_SRC(f->code) == BPF_X)) {
				if (dt_seccomp_alu(BPF_OP(f->code), &a,
				                   BPF_SRC(f->code) == BPF_X ? x : k))
					return 0;
				break;
			}
			if (BPF_CLASS(f->code) != BPF_JMP)
				return 0;
			w = BPF_SRC(f->code) == BPF_X ? x : k;
			int taken;
			switch (BPF_OP(f->code)) {
			case BPF_JEQ:
				taken = a == w;
				break;
			case BPF_JGT:
				taken = a > w;
				break;
			case BPF_JGE:
				taken = a >= w;
				break;
			case BPF_JSET:
				taken = (a & w) != 0;
				break;
			default:
				return 0;
			}
			unsigned off = taken ? f->jt : f->jf;
			if (off >= n - pc - 1)
				return 0;
			pc += off;
		}
	}
	return 0; /* ran off the end: the kernel refuses such a program */
}
