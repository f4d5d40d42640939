// SPDX-License-Identifier: MIT
// fuzz-sources: tracer/read/toml.c tracer/read/safeopen.c
/*
 * libFuzzer harness for tracer/read/toml.c.
 *
 *   make build-fuzz/fuzz_toml   (links what the fuzz-sources line names)
 *   build-fuzz/fuzz_toml -max_total_time=60 tests/fuzz/corpus/toml/
 *
 * Besides parsing, it walks every result so that a tree with dangling or
 * uninitialised parts shows up under ASan/MSan, and checks invariants the
 * rest of denytrace relies on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"

static size_t walk(const struct toml_value *v, int depth)
{
	size_t sum = 0, k;

	/* Deeper trees than the documented limit would mean unbounded
	 * recursion for every caller that walks the tree. */
	if (depth > TOML_MAX_DEPTH + 1)
		abort();
	switch (v->type) {
	case TOML_STRING:
		sum += strlen(v->str);
		break;
	case TOML_INT:
		sum += (size_t)v->i;
		break;
	case TOML_BOOL:
		if (v->b != 0 && v->b != 1)
			abort();
		break;
	case TOML_ARRAY:
		for (k = 0; k < v->n; k++)
			sum += walk(&v->items[k], depth + 1);
		break;
	case TOML_TABLE:
		for (k = 0; k < v->n; k++) {
			/* Every key must be findable, i.e. no duplicates
			 * shadow it and toml_table_get agrees with the tree. */
			if (toml_table_get(v, v->keys[k]) != &v->vals[k])
				abort();
			sum += walk(&v->vals[k], depth + 1);
		}
		break;
	case TOML_FLOAT:
		sum += (size_t)(v->f == v->f); /* touch it; NaN is legal */
		break;
	default:
		abort();
	}
	if (v->line < 1)
		abort();
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	volatile size_t sink;
	struct toml_value *v;
	char err[128];
	char *text;

	/* Not NUL-terminated on purpose: the parser must honour len. */
	v = toml_parse((const char *)data, size, err, sizeof(err));
	if (v) {
		if (v->type != TOML_TABLE)
			abort();
		sink = walk(v, 0);
		toml_free(v);
	} else if (!memchr(err, '\0', sizeof(err)) || !err[0]) {
		abort();
	}

	/* The -c override path takes a C string. */
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	v = toml_parse_value(text, err, sizeof(err));
	if (v) {
		sink = walk(v, 1);
		toml_free(v);
	} else if (!err[0]) {
		abort();
	}
	free(text);
	(void)sink;
	return 0;
}
