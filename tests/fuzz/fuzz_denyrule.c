// SPDX-License-Identifier: MIT
// fuzz-sources: tracer/launch/denyrule.c tracer/render/names.c
/*
 * libFuzzer harness for tracer/launch/denyrule.c (the --deny grammar).
 *
 *   make build-fuzz/fuzz_denyrule   (links what the fuzz-sources line names)
 *   build-fuzz/fuzz_denyrule -max_total_time=60 tests/fuzz/corpus/denyrule/
 *
 * Besides parsing, it checks what the supervisor relies on: a parsed rule
 * has a glob, an errno, op bits within DT_DENY_ANY and a schedule in range;
 * a refused rule leaves a bounded, terminated message; deciding never
 * fires more than the schedule allows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "denyrule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct dt_deny_rule r;
	char err[256];
	memset(err, 'Z', sizeof(err));
	if (dt_deny_parse(text, &r, err, sizeof(err)) < 0) {
		if (!memchr(err, 0, sizeof(err)) || !err[0])
			abort(); /* message missing or unterminated */
		free(text);
		return 0;
	}
	if (!r.glob || !r.glob[0] || !r.text || strcmp(r.text, text))
		abort();
	if (r.err <= 0 || r.err > 4095 || !r.ops || (r.ops & ~(unsigned)DT_DENY_ANY))
		abort();
	if (r.when == DT_DENY_PROB && !(r.p >= 0.0 && r.p <= 1.0))
		abort();
	if ((r.when == DT_DENY_NTH || r.when == DT_DENY_FIRST) && r.n == 0)
		abort();
	struct dt_deny_set s = {0};
	s.seed = size;
	uint64_t n = r.n;
	int when = r.when;
	if (dt_deny_add(&s, &r) < 0)
		abort();
	unsigned fired = 0;
	for (int i = 0; i < 8; i++)
		fired += dt_deny_decide(&s, s.v[0].glob, DT_DENY_ANY, NULL) != 0;
	if (when == DT_DENY_NTH && fired > 1)
		abort();
	if (when == DT_DENY_FIRST && fired > n)
		abort();
	dt_deny_set_free(&s);
	free(text);
	return 0;
}
