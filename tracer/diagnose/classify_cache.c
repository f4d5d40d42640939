/* SPDX-License-Identifier: MIT */
/* The classifier's cache (classify_cache.h): one chained hash table of
 * entries keyed by kind, process record, errno and a path. Out of memory,
 * an answer is computed and not kept: the cache only ever saves work. */
#include "classify_cache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum cc_kind { CC_PROC, CC_MOUNT, CC_HINT };

struct cc_entry {
	struct cc_entry *next;
	uint64_t hash;
	enum cc_kind kind;
	const struct dt_record *proc;
	int err;
	char *path; /* NULL for CC_PROC */
	int sandboxed, writable;
	const struct dt_mount *mount;
	char *hint;
};

struct dt_classify_cache {
	struct cc_entry **buckets;
	size_t nbuckets; /* a power of two */
	size_t n;
};

struct cc_key {
	enum cc_kind kind;
	const struct dt_record *proc;
	int err;
	const char *path;
};

struct dt_classify_cache *dt_classify_cache_new(void)
{
	struct dt_classify_cache *cc = calloc(1, sizeof(*cc));
	if (!cc)
		return NULL;
	cc->nbuckets = 1024;
	cc->buckets = calloc(cc->nbuckets, sizeof(*cc->buckets));
	if (!cc->buckets) {
		free(cc);
		return NULL;
	}
	return cc;
}

void dt_classify_cache_free(struct dt_classify_cache *cc)
{
	if (!cc)
		return;
	for (size_t i = 0; i < cc->nbuckets; i++)
		for (struct cc_entry *e = cc->buckets[i], *next; e; e = next) {
			next = e->next;
			free(e->path);
			free(e->hint);
			free(e);
		}
	free(cc->buckets);
	free(cc);
}

static uint64_t cc_hash(const struct cc_key *k)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (const unsigned char *s = (const unsigned char *)(k->path ? k->path : ""); *s; s++)
		h = (h ^ *s) * 1099511628211ull;
	h ^= (uint64_t)(uintptr_t)k->proc * 0x9e3779b97f4a7c15ull;
	return h ^ ((uint64_t)k->kind << 56) ^ ((uint64_t)(unsigned)k->err << 24);
}

static int cc_same(const struct cc_entry *e, uint64_t h, const struct cc_key *k)
{
	return e->hash == h && e->kind == k->kind && e->proc == k->proc && e->err == k->err &&
	       (e->path == k->path || (e->path && k->path && !strcmp(e->path, k->path)));
}

static struct cc_entry *cc_find(const struct dt_classify_cache *cc, const struct cc_key *k,
                                uint64_t h)
{
	for (struct cc_entry *e = cc->buckets[h & (cc->nbuckets - 1)]; e; e = e->next)
		if (cc_same(e, h, k))
			return e;
	return NULL;
}

/* Twice the buckets when there are more entries than buckets; a failed
 * allocation keeps the table as it is (longer chains, same answers). */
static void cc_grow(struct dt_classify_cache *cc)
{
	size_t nb = cc->nbuckets * 2;
	struct cc_entry **b = calloc(nb, sizeof(*b));
	if (!b)
		return;
	for (size_t i = 0; i < cc->nbuckets; i++)
		for (struct cc_entry *e = cc->buckets[i], *next; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (nb - 1)];
			b[e->hash & (nb - 1)] = e;
		}
	free(cc->buckets);
	cc->buckets = b;
	cc->nbuckets = nb;
}

/* A new entry for k, or NULL out of memory. */
static struct cc_entry *cc_add(struct dt_classify_cache *cc, const struct cc_key *k, uint64_t h)
{
	struct cc_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	if (k->path && !(e->path = strdup(k->path))) {
		free(e);
		return NULL;
	}
	e->hash = h;
	e->kind = k->kind;
	e->proc = k->proc;
	e->err = k->err;
	if (cc->n >= cc->nbuckets)
		cc_grow(cc);
	e->next = cc->buckets[h & (cc->nbuckets - 1)];
	cc->buckets[h & (cc->nbuckets - 1)] = e;
	cc->n++;
	return e;
}

/* The process's entry, its facts worked out when it is made. */
static const struct cc_entry *cc_proc(struct dt_classify_cache *cc, const struct dt_record *proc)
{
	struct cc_key k = {CC_PROC, proc, 0, NULL};
	uint64_t h = cc_hash(&k);
	struct cc_entry *e = cc_find(cc, &k, h);
	if (e || !(e = cc_add(cc, &k, h)))
		return e;
	e->sandboxed = dt_proc_sandboxed(proc);
	e->writable = dt_proc_has_writable_mount(proc);
	return e;
}

int dt_cc_sandboxed(struct dt_classify_cache *cc, const struct dt_record *proc)
{
	const struct cc_entry *e = cc ? cc_proc(cc, proc) : NULL;
	return e ? e->sandboxed : dt_proc_sandboxed(proc);
}

int dt_cc_has_writable_mount(struct dt_classify_cache *cc, const struct dt_record *proc)
{
	const struct cc_entry *e = cc ? cc_proc(cc, proc) : NULL;
	return e ? e->writable : dt_proc_has_writable_mount(proc);
}

const struct dt_mount *dt_cc_mount_for_path(struct dt_classify_cache *cc,
                                            const struct dt_record *proc, const char *path)
{
	if (!cc || !path)
		return dt_mount_for_path(proc, path);
	struct cc_key k = {CC_MOUNT, proc, 0, path};
	uint64_t h = cc_hash(&k);
	struct cc_entry *e = cc_find(cc, &k, h);
	if (e)
		return e->mount;
	const struct dt_mount *m = dt_mount_for_path(proc, path);
	if ((e = cc_add(cc, &k, h)))
		e->mount = m;
	return m;
}

const char *dt_cc_hint(struct dt_classify_cache *cc, const struct dt_record *proc, int err,
                       const char *dir)
{
	if (!cc || !dir)
		return NULL;
	struct cc_key k = {CC_HINT, proc, err, dir};
	const struct cc_entry *e = cc_find(cc, &k, cc_hash(&k));
	return e ? e->hint : NULL;
}

void dt_cc_hint_keep(struct dt_classify_cache *cc, const struct dt_record *proc, int err,
                     const char *dir, const char *hint)
{
	if (!cc || !dir)
		return;
	struct cc_key k = {CC_HINT, proc, err, dir};
	uint64_t h = cc_hash(&k);
	if (cc_find(cc, &k, h))
		return;
	char *copy = strdup(hint);
	struct cc_entry *e = copy ? cc_add(cc, &k, h) : NULL;
	if (e)
		e->hint = copy;
	else
		free(copy);
}
