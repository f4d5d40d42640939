/* SPDX-License-Identifier: MIT */
/*
 * A ring's open(2) flags (DT_T_FLAGS of an open or fopen record) are
 * numbered as on x86_64 (asm-generic/fcntl.h) whichever architecture wrote
 * them, since a ring is read on any: aarch64 numbers four of them
 * differently (arch/arm64/include/uapi/asm/fcntl.h). What writes flags
 * converts them to the ring's numbering; what names them, back.
 */
#ifndef DENYTRACE_OPENFLAGS_H
#define DENYTRACE_OPENFLAGS_H

#include <stdint.h>

#if defined(__aarch64__)
/* O_DIRECTORY, O_NOFOLLOW, O_DIRECT and O_LARGEFILE, here and in a ring */
static inline uint64_t dt_open_flags_move(uint64_t f, int to_ring)
{
	static const uint64_t here[4] = {040000, 0100000, 0200000, 0400000};
	static const uint64_t ring[4] = {0200000, 0400000, 040000, 0100000};
	const uint64_t *from = to_ring ? here : ring, *to = to_ring ? ring : here;
	uint64_t out = f & ~(from[0] | from[1] | from[2] | from[3]);
	for (int i = 0; i < 4; i++)
		if (f & from[i])
			out |= to[i];
	return out;
}
#define dt_open_flags_to_ring(f) dt_open_flags_move((f), 1)
#define dt_open_flags_from_ring(f) dt_open_flags_move((f), 0)
#else
#define dt_open_flags_to_ring(f) ((uint64_t)(f))
#define dt_open_flags_from_ring(f) ((uint64_t)(f))
#endif

#endif
