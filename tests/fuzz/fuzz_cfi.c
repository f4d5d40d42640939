/* SPDX-License-Identifier: MIT */
// fuzz-sources: preload/cfi.c
/*
 * libFuzzer target: the probe's CFI reader (preload/cfi.c) on arbitrary
 * bytes. A module's .eh_frame is whatever its linker, JIT or author wrote,
 * and the reader runs inside the traced program: it must never read
 * outside the segment it is given, nor overflow (UBSan aborts here).
 *
 * Input: int32 pc relative to the table, uint32 offset of .eh_frame_hdr in
 * the segment, then the segment's bytes (copied to a buffer of exactly that
 * size, so that ASan sees a read past either end).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8)
		return 0;
	int32_t pc_rel;
	uint32_t hdr_off;
	memcpy(&pc_rel, data, 4);
	memcpy(&hdr_off, data + 4, 4);
	size -= 8;
	unsigned char *seg = malloc(size ? size : 1);
	if (!seg)
		return 0;
	memcpy(seg, data + 8, size);
	uintptr_t lo = (uintptr_t)seg, hi = lo + size;
	uintptr_t hdr = lo + (size ? hdr_off % size : 0);
	struct dt_cfa_rule rule;
	int found = dt_cfi_rule_at(hdr, lo, hi, (uint64_t)hdr + (uint64_t)(int64_t)pc_rel, &rule);
	if (found == 1 && !rule.ra_undefined &&
	    (rule.cfa_off < 0 || rule.cfa_off >= (int64_t)DT_CFI_MAX_FRAME || rule.rbp_off > 0 ||
	     rule.rbp_off < -32768))
		abort(); /* a rule the unwinder's cache cannot hold */
	free(seg);
	return 0;
}
