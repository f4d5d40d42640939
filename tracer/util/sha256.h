/* SPDX-License-Identifier: MIT */
/* SHA-256 (FIPS 180-4), for identifiers that must not reveal what they
 * were computed from (the machine id in a host's identity). */
#ifndef DENYTRACE_SHA256_H
#define DENYTRACE_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* The digest of data[0..n) as 64 lower-case hex digits and a NUL. */
void dt_sha256_hex(const void *data, size_t n, char hex[65]);

#endif
