/* SPDX-License-Identifier: MIT */
/* What soak --merge stands on, alone: the JSON reader (summaries from other
 * machines), SHA-256 (the machine id's hash) and the test that says when
 * failures gather on one host more than chance explains. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostid.h"
#include "jsonread.h"
#include "sha256.h"
#include "soak.h"
#include "soakmerge.h"

TestSuite(soakmerge);

static struct dt_jv *parse(const char *text, char *err, size_t cap)
{
	return dt_jv_parse(text, strlen(text), err, cap);
}

Test(soakmerge, a_summary_is_read_back_with_its_64_bit_seed_exact)
{
	char err[256] = "";
	struct dt_jv *v = parse("{\"seed\": 18446744073709551615, \"runs\": 12, \"path\": "
	                        "\"/x/\\u00e9\\ud83d\\ude00\\n\", \"ok\": true, \"n\": null, "
	                        "\"a\": [1, 2, {\"b\": []}]}",
	                        err, sizeof(err));
	cr_assert(v, "%s", err);
	uint64_t seed = 0;
	cr_expect_eq(dt_jv_u64(v, "seed", &seed), 0);
	cr_expect_eq(seed, UINT64_MAX, "a double would have rounded it");
	cr_expect_str_eq(dt_jv_str(v, "path"), "/x/\xc3\xa9\xf0\x9f\x98\x80\n");
	cr_expect(dt_jv_true(v, "ok"));
	cr_expect_eq(dt_jv_get(v, "n")->type, DT_JV_NULL);
	cr_expect_eq(dt_jv_get(v, "a")->n, 3);
	cr_expect_eq(dt_jv_num(v, "runs"), 12);
	cr_expect_null(dt_jv_str(v, "missing"));
	cr_expect_eq(dt_jv_u64(v, "path", &seed), -1, "a string is not a number");
	dt_jv_free(v);
}

Test(soakmerge, broken_or_hostile_json_is_refused_with_where_and_why)
{
	static const char *const bad[] = {
	    "{\"a\": 1", "{\"a\" 1}", "[1, 2,]", "\"\\u0000\"", "{\"a\": \"x\ny\"}",
	    "nul",       "{} {}",     "\"abc",   "[1e]",        "{\"a\": \"\\q\"}",
	    "",
	};
	char err[256];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		struct dt_jv *v = parse(bad[i], err, sizeof(err));
		cr_expect_null(v, "accepted: %s", bad[i]);
		dt_jv_free(v);
		cr_expect(strstr(err, "at byte "), "no position for %s: %s", bad[i], err);
	}
	/* nesting is bounded: no stack exhaustion from a crafted summary */
	char deep[4096];
	memset(deep, '[', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = 0;
	cr_expect_null(parse(deep, err, sizeof(err)));
	cr_expect(strstr(err, "nested deeper"), "%s", err);
}

Test(soakmerge, sha256_gives_the_standard_digests)
{
	char hex[65];
	dt_sha256_hex("", 0, hex);
	cr_expect_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	dt_sha256_hex("abc", 3, hex);
	cr_expect_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	dt_sha256_hex(two, strlen(two), hex);
	cr_expect_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(soakmerge, the_host_identity_never_holds_the_raw_machine_id)
{
	struct dt_host_id h;
	dt_host_id_get(&h);
	char id[128] = "";
	FILE *f = fopen("/etc/machine-id", "r");
	if (f) {
		if (!fgets(id, sizeof(id), f))
			id[0] = 0;
		fclose(f);
	}
	id[strcspn(id, "\n")] = 0;
	if (!id[0])
		cr_skip_test("no /etc/machine-id here");
	cr_expect_eq(strlen(h.machine), 64);
	cr_expect_null(strstr(h.machine, id));
	char salted[160], want[65];
	snprintf(salted, sizeof(salted), "denytrace:%s", id);
	dt_sha256_hex(salted, strlen(salted), want);
	cr_expect_str_eq(h.machine, want);
	cr_expect_neq(h.hostname[0], 0);
}

static void hosts_of(struct dt_soak *s, struct dt_soak_host *h, const unsigned (*rf)[2], size_t n)
{
	memset(s, 0, sizeof(*s));
	memset(h, 0, n * sizeof(*h));
	for (size_t i = 0; i < n; i++) {
		h[i].runs = rf[i][0];
		h[i].failures = rf[i][1];
		s->done += rf[i][0];
		s->failures += rf[i][1];
	}
	s->hosts = h;
	s->nhosts = n;
}

Test(soakmerge, failures_all_on_one_host_are_noted_and_spread_ones_are_not)
{
	struct dt_soak s;
	struct dt_soak_host h[4];
	double pv = 1;
	static const unsigned gathered[4][2] = {{10, 10}, {10, 0}, {10, 0}, {10, 0}};
	hosts_of(&s, h, gathered, 4);
	cr_expect_eq(dt_soak_concentrated(&s, &pv), 0);
	cr_expect(pv < 0.01 && pv > 0, "p %g", pv);
	static const unsigned spread[4][2] = {{10, 3}, {10, 2}, {10, 3}, {10, 2}};
	hosts_of(&s, h, spread, 4);
	cr_expect_eq(dt_soak_concentrated(&s, &pv), SIZE_MAX);
	/* two of two on one host out of 2 of 40: suggestive, not beyond chance */
	static const unsigned few[4][2] = {{2, 2}, {12, 0}, {13, 0}, {13, 0}};
	hosts_of(&s, h, few, 4);
	cr_expect_eq(dt_soak_concentrated(&s, &pv), SIZE_MAX);
	/* a million runs: no underflow, no NaN */
	static const unsigned big[2][2] = {{500000, 5000}, {500000, 4000}};
	hosts_of(&s, h, big, 2);
	cr_expect_eq(dt_soak_concentrated(&s, &pv), 0);
	cr_expect(pv == pv && pv < 0.01, "p %g", pv);
}

/* A summary from another machine may hold numbers no count or status can
 * take, and surrogates UTF-8 cannot hold: read as bounded numbers and as
 * U+FFFD, never as inf, an out-of-range cast or invalid UTF-8. */
Test(soakmerge, numbers_beyond_range_and_lone_surrogates_are_read_bounded)
{
	char err[256] = "";
	struct dt_jv *v = parse("{\"inf\": 1e999, \"big\": 1e300, \"neg\": -1e300, \"n\": 7, "
	                        "\"hi\": \"a\\ud800b\", \"lo\": \"\\udc00\", "
	                        "\"unpaired\": \"\\ud800\\u0041\"}",
	                        err, sizeof(err));
	cr_assert(v, "%s", err);
	cr_expect_eq(dt_jv_num(v, "inf"), 0, "1e999 read as infinity");
	cr_expect_eq(dt_jv_clamp(v, "big", 0, UINT32_MAX), UINT32_MAX);
	cr_expect_eq(dt_jv_clamp(v, "neg", INT32_MIN, INT32_MAX), INT32_MIN);
	cr_expect_eq(dt_jv_clamp(v, "n", 0, 5), 5);
	cr_expect_eq(dt_jv_clamp(v, "missing", 0, 5), 0);
	cr_expect_str_eq(dt_jv_str(v, "hi"), "a\xef\xbf\xbd"
	                                     "b");
	cr_expect_str_eq(dt_jv_str(v, "lo"), "\xef\xbf\xbd");
	cr_expect_str_eq(dt_jv_str(v, "unpaired"), "\xef\xbf\xbd"
	                                           "A");
	dt_jv_free(v);
}
