/* SPDX-License-Identifier: MIT */
/* SHA-256 (FIPS 180-4), for binding what a launcher read to its launch
 * file (a digest the traced program cannot match with other bytes), and
 * for identifiers that must not reveal what they were computed from (the
 * machine id in a host's identity). */
#ifndef DENYTRACE_SHA256_H
#define DENYTRACE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define DT_SHA256_LEN 32

struct dt_sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	unsigned char block[64];
	size_t used; /* bytes waiting in block */
};

void dt_sha256_init(struct dt_sha256 *s);
void dt_sha256_update(struct dt_sha256 *s, const void *data, size_t len);
void dt_sha256_final(struct dt_sha256 *s, uint8_t out[DT_SHA256_LEN]);

/* The digest of data[0..n) as 64 lower-case hex digits and a NUL. */
void dt_sha256_hex(const void *data, size_t n, char hex[65]);

#endif
