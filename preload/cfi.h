/* SPDX-License-Identifier: MIT */
/*
 * Reading x86_64 call-frame information (.eh_frame_hdr, .eh_frame) for the
 * probe's unwinder, as far as walking rsp, rbp and rip needs it. Pure
 * functions over memory the caller says is readable: every length, offset
 * and count is checked against [lo, hi) before it is followed, and no
 * input makes the arithmetic overflow (tests/fuzz/fuzz_cfi.c).
 */
#ifndef DENYTRACE_CFI_H
#define DENYTRACE_CFI_H

#include <stdint.h>

/* DWARF register numbers on x86_64 (System V psABI, figure 3.36). */
enum { DT_DW_RBP = 6, DT_DW_RSP = 7, DT_DW_RA = 16 };

#define DT_CFI_MAX_FRAME (16u << 20) /* cfa_off fits the cache's 24 bits */

/* A row of the CFI table; the return address is at CFA - 8. */
struct dt_cfa_rule {
	int on_rbp;       /* CFA = rbp + cfa_off, else rsp + cfa_off */
	int64_t cfa_off;  /* 0 .. DT_CFI_MAX_FRAME - 1 */
	int ra_undefined; /* the outermost frame */
	int64_t rbp_off;  /* caller's rbp at CFA + rbp_off (-32768..-1); 0: unchanged */
};

/* The rule at pc from the .eh_frame_hdr at hdr, all of whose CFI must lie
 * in the readable span [lo, hi): 1 found, 0 when no FDE covers pc, -1 for
 * what this reader declines (a signal frame, a CFA expression or on another
 * register, a return address not at CFA - 8, a table other than the sorted
 * one the linkers write, 64-bit DWARF, anything malformed or out of bounds). */
int dt_cfi_rule_at(uintptr_t hdr, uintptr_t lo, uintptr_t hi, uint64_t pc,
                   struct dt_cfa_rule *rule);

#endif
