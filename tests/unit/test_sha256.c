/* SPDX-License-Identifier: MIT */
/* SHA-256 against the digests FIPS 180-4's examples give. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sha256.h"

static void hex_of(const void *data, size_t len, size_t pieces, char *out)
{
	struct dt_sha256 s;
	uint8_t d[DT_SHA256_LEN];
	dt_sha256_init(&s);
	/* fed in pieces of odd sizes: the block boundary must not matter */
	for (size_t at = 0, step = len / (pieces ? pieces : 1) + 1; at < len; at += step)
		dt_sha256_update(&s, (const char *)data + at, at + step < len ? step : len - at);
	dt_sha256_final(&s, d);
	for (size_t i = 0; i < DT_SHA256_LEN; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

Test(sha256, the_empty_message_and_abc_give_the_standards_digests)
{
	char h[65];
	hex_of("", 0, 1, h);
	cr_expect_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hex_of("abc", 3, 1, h);
	cr_expect_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

Test(sha256, a_message_padded_into_a_second_block_gives_the_standards_digest)
{
	const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char h[65];
	hex_of(m, strlen(m), 7, h);
	cr_expect_str_eq(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(sha256, a_million_a_fed_in_pieces_gives_the_standards_digest)
{
	static char m[1000000];
	memset(m, 'a', sizeof(m));
	char h[65];
	hex_of(m, sizeof(m), 997, h);
	cr_expect_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
