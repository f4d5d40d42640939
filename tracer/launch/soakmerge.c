/* SPDX-License-Identifier: MIT */
/* soak --merge (soakmerge.h). */
#include "soakmerge.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "classify.h"
#include "cli.h"
#include "jsonread.h"
#include "names.h"
#include "safeopen.h"
#include "soak_render.h"
#include "soakfacts.h"

/* A summary holds one entry per run and refusal: a million runs is tens of
 * megabytes, not more. */
#define SUMMARY_MAX (256L << 20)

/* ---- the probability that failures gather on a host by chance ---------- */

/* P(X >= k) for X ~ Binomial(n, p), summing the terms outwards from the
 * mode (scaled to 1 there) so that nothing underflows and no libm is
 * needed. */
static double binom_tail(unsigned k, unsigned n, double p)
{
	if (!k || p >= 1)
		return 1;
	if (p <= 0)
		return 0;
	unsigned mode = (unsigned)((n + 1) * p);
	mode = mode > n ? n : mode;
	double r = p / (1 - p), total = 1, tail = mode >= k, t = 1;
	for (unsigned j = mode; j < n && t > 1e-300; j++) {
		t *= (double)(n - j) / (j + 1) * r;
		total += t;
		tail += j + 1 >= k ? t : 0;
	}
	t = 1;
	for (unsigned j = mode; j > 0 && t > 1e-300; j--) {
		t *= (double)j / (n - j + 1) / r;
		total += t;
		tail += j - 1 >= k ? t : 0;
	}
	return tail / total;
}

size_t dt_soak_concentrated(const struct dt_soak *s, double *pvalue)
{
	if (s->nhosts < 2 || !s->failures || s->failures == s->done)
		return SIZE_MAX;
	double p = (double)s->failures / s->done, best = 1;
	size_t at = SIZE_MAX;
	for (size_t h = 0; h < s->nhosts; h++) {
		const struct dt_soak_host *ho = &s->hosts[h];
		double pv = binom_tail(ho->failures, ho->runs, p) * (double)s->nhosts;
		if (ho->runs && pv < best) {
			best = pv;
			at = h;
		}
	}
	if (best >= 0.01)
		return SIZE_MAX;
	*pvalue = best;
	return at;
}

/* ---- reading one summary ---------------------------------------------- */

static struct dt_jv *merge_read(const char *file, int *rc)
{
	struct stat st;
	int fd = dt_open_regular(file, &st);
	if (fd < 0) {
		*rc = dt_fail(DT_EXIT_NOINPUT, "soak: --merge: cannot read %s: %s", file,
		              fd == DT_OPEN_NOT_REGULAR ? "not a regular file" : strerror(errno));
		return NULL;
	}
	if (st.st_size > SUMMARY_MAX) {
		close(fd);
		*rc = dt_fail(DT_EXIT_BADINPUT, "soak: --merge: %s is too big for a soak summary",
		              file);
		return NULL;
	}
	char *text = malloc((size_t)st.st_size + 1);
	size_t len = 0;
	ssize_t got = 1;
	while (text && got > 0 && len < (size_t)st.st_size)
		if ((got = read(fd, text + len, (size_t)st.st_size - len)) > 0)
			len += (size_t)got;
	close(fd);
	char err[256] = "out of memory";
	struct dt_jv *v = text ? dt_jv_parse(text, len, err, sizeof(err)) : NULL;
	free(text);
	const char *fmt = dt_jv_str(v, "format");
	uint64_t ver = 0;
	if (v && (!fmt || strcmp(fmt, DT_SOAK_FORMAT) || dt_jv_u64(v, "format_version", &ver) < 0 ||
	          ver > DT_SOAK_FORMAT_VERSION)) {
		snprintf(err, sizeof(err), "%s",
		         fmt && !strcmp(fmt, DT_SOAK_FORMAT)
		             ? "a newer summary format than this denytrace reads"
		             : "JSON, but not of `denytrace soak --json=FILE`");
		dt_jv_free(v);
		v = NULL;
	}
	if (!v)
		*rc = dt_fail(DT_EXIT_BADINPUT, "soak: --merge: %s is not a soak summary (%s)",
		              file, err);
	return v;
}

/* A summary's shard count and index (0 and 0: not sharded). */
static void merge_shard_of(const struct dt_jv *v, uint64_t *k, uint64_t *n)
{
	const struct dt_jv *sh = dt_jv_get(v, "shard");
	*k = *n = 0;
	if (dt_jv_u64(sh, "index", k) < 0 || dt_jv_u64(sh, "count", n) < 0 || !*n || !*k || *k > *n)
		*k = *n = 0;
}

/* The words of a summary's array key as one string, for comparing. */
static void merge_words(const struct dt_jv *v, const char *key, char *out, size_t cap)
{
	const struct dt_jv *a = dt_jv_get(v, key);
	size_t at = 0;
	out[0] = 0;
	for (size_t i = 0; a && a->type == DT_JV_ARR && i < a->n && at < cap; i++)
		if (a->v[i].type == DT_JV_STR)
			at += (size_t)snprintf(out + at, cap - at, "%s%s", i ? " " : "",
			                       a->v[i].text);
}

/* Why summary b is not of the same soak as a: into why, or "". */
static void merge_differs(const struct dt_jv *a, const struct dt_jv *b, char *why, size_t cap)
{
	uint64_t x = 0, y = 0, ka, na, kb, nb;
	static char wa[8192], wb[8192];
	why[0] = 0;
	merge_shard_of(a, &ka, &na);
	merge_shard_of(b, &kb, &nb);
	if (dt_jv_u64(a, "seed", &x) < 0 || dt_jv_u64(b, "seed", &y) < 0 || x != y)
		snprintf(why, cap, "its --seed is %llu, not %llu", (unsigned long long)y,
		         (unsigned long long)x);
	else if (dt_jv_u64(a, "runs_planned", &x) < 0 || dt_jv_u64(b, "runs_planned", &y) < 0 ||
	         x != y)
		snprintf(why, cap, "its --runs is %llu, not %llu", (unsigned long long)y,
		         (unsigned long long)x);
	else if (na != nb)
		snprintf(why, cap, "it is one of %llu shards, not of %llu", (unsigned long long)nb,
		         (unsigned long long)na);
	merge_words(a, "command", wa, sizeof(wa));
	merge_words(b, "command", wb, sizeof(wb));
	if (!why[0] && strcmp(wa, wb))
		snprintf(why, cap, "its command is '%s', not '%s'", wb, wa);
	merge_words(a, "deny", wa, sizeof(wa));
	merge_words(b, "deny", wb, sizeof(wb));
	if (!why[0] && strcmp(wa, wb))
		snprintf(why, cap, "its --deny rules are '%s', not '%s'", wb, wa);
}

/* ---- adding one summary up -------------------------------------------- */

static size_t merge_problem(struct dt_soak *s, const struct dt_jv *p)
{
	const char *id = dt_jv_str(p, "id"), *cause = dt_jv_str(p, "cause");
	if (!id)
		return SIZE_MAX;
	size_t i = 0;
	while (i < s->nproblems && strcmp(s->problems[i].key, id))
		i++;
	if (i == s->nproblems) {
		struct dt_soak_problem *np = realloc(s->problems, (i + 1) * sizeof(*np));
		if (!np)
			return SIZE_MAX;
		s->problems = np;
		const char *title = dt_jv_str(p, "title"), *advice = dt_jv_str(p, "advice");
		int c = DT_CAUSE_UNKNOWN;
		for (int k = 0; cause && k < DT_CAUSE_COUNT; k++)
			if (!strcmp(cause, dt_cause_name((enum dt_cause)k)))
				c = k;
		np[i] = (struct dt_soak_problem){
		    strdup(id), strdup(title ? title : ""), strdup(advice ? advice : ""), c, 0, 0};
		s->nproblems++;
	}
	s->problems[i].nfail += (unsigned)dt_jv_clamp(p, "failing_runs", 0, UINT_MAX);
	s->problems[i].npass += (unsigned)dt_jv_clamp(p, "passing_runs", 0, UINT_MAX);
	return i;
}

static int merge_same_key(const struct dt_soak_key *k, const char *path, const char *op, int err,
                          const char *py)
{
	return !strcmp(k->path, path) && !strcmp(k->op, op) && k->err == err &&
	       !strcmp(k->py_line ? k->py_line : "", py ? py : "");
}

static size_t merge_key(struct dt_soak *s, const struct dt_jv *r, const size_t *pmap, size_t np)
{
	const char *path = dt_jv_str(r, "path"), *op = dt_jv_str(r, "op");
	const char *py = dt_jv_str(r, "python_line"), *en = dt_jv_str(r, "errno");
	int err = en ? dt_errno_parse(en) : -1;
	if (!path || !op)
		return SIZE_MAX;
	size_t i = 0;
	while (i < s->nkeys && !merge_same_key(&s->keys[i], path, op, err, py))
		i++;
	if (i == s->nkeys) {
		struct dt_soak_key *nk = realloc(s->keys, (i + 1) * sizeof(*nk));
		if (!nk)
			return SIZE_MAX;
		s->keys = nk;
		uint64_t p = SIZE_MAX;
		if (dt_jv_u64(r, "problem", &p) < 0 || p >= np)
			p = SIZE_MAX;
		nk[i] = (struct dt_soak_key){strdup(path),
		                             strdup(op),
		                             py ? strdup(py) : NULL,
		                             err,
		                             0,
		                             0,
		                             0,
		                             p == SIZE_MAX ? SIZE_MAX : pmap[p]};
		s->nkeys++;
	}
	s->keys[i].injected |= dt_jv_true(r, "injected");
	s->keys[i].nfail += (unsigned)dt_jv_clamp(r, "failing_runs", 0, UINT_MAX);
	s->keys[i].npass += (unsigned)dt_jv_clamp(r, "passing_runs", 0, UINT_MAX);
	return i;
}

static int merge_is_file(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void merge_facts(struct dt_soak *s, const struct dt_jv *v)
{
	const struct dt_jv *a = dt_jv_get(v, "all_facts");
	for (size_t i = 0; a && a->type == DT_JV_ARR && i < a->n; i++) {
		const struct dt_jv *f = &a->v[i];
		const char *id = dt_jv_str(f, "fact"), *what = dt_jv_str(f, "what"),
		           *subject = dt_jv_str(f, "subject"), *value = dt_jv_str(f, "value");
		if (!id || !what || !value)
			continue;
		size_t k = dt_soak_fact_index(s, id, what, subject ? subject : "", value);
		if (k == SIZE_MAX)
			continue;
		s->facts[k].nfail += (unsigned)dt_jv_clamp(f, "failing_runs", 0, UINT_MAX);
		s->facts[k].npass += (unsigned)dt_jv_clamp(f, "passing_runs", 0, UINT_MAX);
	}
}

/* Where a failing run's ring is: as written; else, as CI artifacts move
 * files, beside the summary (a relative path from there, or its name). */
static void merge_ring(const char *summary, const char *ring, char *out, size_t cap)
{
	out[0] = 0;
	if (!ring || !ring[0])
		return;
	if (merge_is_file(ring)) {
		snprintf(out, cap, "%s", ring);
		return;
	}
	const char *slash = strrchr(summary, '/'), *base = strrchr(ring, '/');
	int dir = slash ? (int)(slash - summary + 1) : 0;
	if (ring[0] != '/') {
		snprintf(out, cap, "%.*s%s", dir, summary, ring);
		if (merge_is_file(out))
			return;
	}
	snprintf(out, cap, "%.*s%s", dir, summary, base ? base + 1 : ring);
	if (!merge_is_file(out))
		out[0] = 0;
}

/* Is run index one of shard k of n's, in a soak of runs runs? */
static int merge_index_ok(uint64_t index, uint64_t k, uint64_t n, uint64_t runs)
{
	return index >= 1 && index <= runs && (!n || (index - 1) % n == k - 1);
}

struct merge_file {
	const char *name;
	const struct dt_jv *v;
	size_t host;
	uint64_t k, n, runs, seed;
	size_t *kmap, nk; /* its refusals' indices in s->keys */
};

/* A duration from another machine, in seconds: within [0, 1e9], so that
 * the renderers' millisecond rounding stays in range. */
static double merge_secs(const struct dt_jv *o, const char *key)
{
	double d = dt_jv_num(o, key);
	return d < 0 ? 0 : d > 1e9 ? 1e9 : d;
}

static int merge_results(struct dt_soak *s, const struct merge_file *mf)
{
	const struct dt_jv *a = dt_jv_get(mf->v, "results");
	for (size_t i = 0; a && a->type == DT_JV_ARR && i < a->n; i++) {
		const struct dt_jv *r = &a->v[i], *ks = dt_jv_get(r, "refusals");
		uint64_t index = 0;
		if (dt_jv_u64(r, "index", &index) < 0 ||
		    !merge_index_ok(index, mf->k, mf->n, mf->runs))
			return dt_fail(
			    DT_EXIT_BADINPUT,
			    "soak: --merge: %s holds run %llu, not one of shard %llu/%llu's",
			    mf->name, (unsigned long long)index, (unsigned long long)mf->k,
			    (unsigned long long)mf->n);
		struct dt_soak_result res = {(int)index,
		                             (int)dt_jv_clamp(r, "exit_status", INT_MIN, INT_MAX),
		                             dt_jv_true(r, "timed_out"),
		                             dt_jv_true(r, "failed"),
		                             merge_secs(r, "secs"),
		                             calloc(ks ? ks->n + 1 : 1, sizeof(size_t)),
		                             0,
		                             mf->host};
		for (size_t k = 0; ks && res.keys && k < ks->n; k++) {
			uint64_t ki;
			if (ks->v[k].type == DT_JV_NUM &&
			    (ki = strtoull(ks->v[k].text, NULL, 10)) < mf->nk &&
			    mf->kmap[ki] != SIZE_MAX)
				res.keys[res.nkeys++] = mf->kmap[ki];
		}
		struct dt_soak_result *nr = realloc(s->results, (s->nresults + 1) * sizeof(*nr));
		if (!nr) {
			free(res.keys);
			return dt_fail(DT_EXIT_INTERNAL, "soak: --merge: out of memory");
		}
		s->results = nr;
		s->results[s->nresults++] = res;
	}
	return -1;
}

static int merge_failed(struct dt_soak *s, const struct merge_file *mf)
{
	const struct dt_jv *a = dt_jv_get(mf->v, "failed_runs");
	for (size_t i = 0; a && a->type == DT_JV_ARR && i < a->n; i++) {
		const struct dt_jv *r = &a->v[i];
		uint64_t index = 0;
		if (dt_jv_u64(r, "index", &index) < 0 ||
		    !merge_index_ok(index, mf->k, mf->n, mf->runs))
			continue;
		struct dt_soak_failed *nf = realloc(s->failed, (s->nfailed + 1) * sizeof(*nf));
		if (!nf)
			return dt_fail(DT_EXIT_INTERNAL, "soak: --merge: out of memory");
		s->failed = nf;
		struct dt_soak_failed *fr = &s->failed[s->nfailed++];
		memset(fr, 0, sizeof(*fr));
		fr->index = (int)index;
		fr->status = (int)dt_jv_clamp(r, "exit_status", INT_MIN, INT_MAX);
		fr->timed_out = dt_jv_true(r, "timed_out");
		fr->host = mf->host;
		fr->seed = mf->seed + index - 1;
		merge_ring(mf->name, dt_jv_str(r, "ring"), fr->ring, sizeof(fr->ring));
		if (s->first_fail < 0 || fr->index < s->first_fail) {
			s->first_fail = fr->index;
			snprintf(s->first_ring, sizeof(s->first_ring), "%s", fr->ring);
		}
	}
	return -1;
}

static int merge_host(struct dt_soak *s, struct merge_file *mf, double elapsed)
{
	struct dt_soak_host *nh = realloc(s->hosts, (s->nhosts + 1) * sizeof(*nh));
	if (!nh)
		return dt_fail(DT_EXIT_INTERNAL, "soak: --merge: out of memory");
	s->hosts = nh;
	struct dt_soak_host *h = &s->hosts[s->nhosts];
	memset(h, 0, sizeof(*h));
	const struct dt_jv *id = dt_jv_get(mf->v, "host");
	const char *name = dt_jv_str(id, "hostname"), *boot = dt_jv_str(id, "boot_id"),
	           *mach = dt_jv_str(id, "machine_id_hash");
	snprintf(h->id.hostname, sizeof(h->id.hostname), "%s", name ? name : "");
	snprintf(h->id.boot_id, sizeof(h->id.boot_id), "%s", boot ? boot : "");
	snprintf(h->id.machine, sizeof(h->id.machine), "%s", mach ? mach : "");
	h->shard = (unsigned)mf->k;
	h->nshards = (unsigned)mf->n;
	h->runs = (unsigned)dt_jv_clamp(mf->v, "runs", 0, UINT_MAX);
	h->failures = (unsigned)dt_jv_clamp(mf->v, "failures", 0, UINT_MAX);
	h->elapsed = elapsed;
	h->file = strdup(mf->name);
	mf->host = s->nhosts++;
	s->done += h->runs;
	s->failures += h->failures;
	s->refusals += (uint64_t)dt_jv_clamp(mf->v, "refusals", 0, LLONG_MAX);
	return -1;
}

/* Adds summary mf up into s: its host, problems, refusals, runs. */
static int merge_one(struct dt_soak *s, struct merge_file *mf)
{
	int rc = merge_host(s, mf, merge_secs(mf->v, "elapsed_s"));
	const struct dt_jv *ps = dt_jv_get(mf->v, "problems");
	const struct dt_jv *ks = dt_jv_get(mf->v, "all_refusals");
	size_t np = ps && ps->type == DT_JV_ARR ? ps->n : 0;
	size_t *pmap = calloc(np + 1, sizeof(*pmap));
	mf->nk = ks && ks->type == DT_JV_ARR ? ks->n : 0;
	mf->kmap = calloc(mf->nk + 1, sizeof(*mf->kmap));
	if (rc < 0 && (!pmap || !mf->kmap))
		rc = dt_fail(DT_EXIT_INTERNAL, "soak: --merge: out of memory");
	for (size_t i = 0; rc < 0 && i < np; i++)
		pmap[i] = merge_problem(s, &ps->v[i]);
	for (size_t i = 0; rc < 0 && i < mf->nk; i++)
		mf->kmap[i] = merge_key(s, &ks->v[i], pmap, np);
	if (rc < 0) {
		merge_facts(s, mf->v);
		rc = merge_results(s, mf);
	}
	if (rc < 0)
		rc = merge_failed(s, mf);
	free(pmap);
	free(mf->kmap);
	mf->kmap = NULL;
	return rc;
}

static int merge_failed_order(const void *a, const void *b)
{
	const struct dt_soak_failed *x = a, *y = b;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* ---- the whole merge --------------------------------------------------- */

/* "shard 3/4 (runs 3, 7, 11)" for every shard no summary was of. */
static void merge_missing(const struct dt_soak *s, uint64_t n, uint64_t runs, char *out, size_t cap)
{
	size_t at = 0;
	out[0] = 0;
	for (uint64_t k = 1; k <= n && at < cap; k++) {
		int seen = 0;
		for (size_t h = 0; h < s->nhosts; h++)
			seen |= s->hosts[h].shard == k;
		if (seen)
			continue;
		at +=
		    (size_t)snprintf(out + at, cap - at, "%sshard %llu/%llu (runs", at ? "; " : "",
		                     (unsigned long long)k, (unsigned long long)n);
		int shown = 0;
		for (uint64_t i = k; i <= runs && at < cap && shown < 8; i += n, shown++)
			at += (size_t)snprintf(out + at, cap - at, "%s %llu", shown ? "," : "",
			                       (unsigned long long)i);
		if (at < cap)
			at += (size_t)snprintf(out + at, cap - at, "%s)",
			                       k + 8 * n <= runs ? ", ..."
			                       : shown           ? ""
			                                         : " none");
	}
}

/* The merged soak's seed, --runs, command and --deny, from the first. */
static int merge_identity(struct dt_soak_opts *o, struct dt_soak_merged *m, uint64_t n)
{
	const struct dt_jv *cmd = dt_jv_get(m->first, "command"),
	                   *deny = dt_jv_get(m->first, "deny");
	uint64_t runs = 0;
	dt_jv_u64(m->first, "seed", &o->seed);
	dt_jv_u64(m->first, "runs_planned", &runs);
	o->runs = (unsigned)runs;
	o->nshards = (unsigned)n;
	o->have_seed = 1;
	size_t nc = cmd && cmd->type == DT_JV_ARR ? cmd->n : 0;
	size_t nd = deny && deny->type == DT_JV_ARR ? deny->n : 0;
	m->cmd = calloc(nc + 1, sizeof(*m->cmd));
	m->deny = calloc(nd + 1, sizeof(*m->deny));
	if (!m->cmd || !m->deny)
		return dt_fail(DT_EXIT_INTERNAL, "soak: --merge: out of memory");
	for (size_t i = 0; i < nc; i++)
		m->cmd[i] = cmd->v[i].type == DT_JV_STR ? cmd->v[i].text : "?";
	for (size_t i = 0; i < nd; i++)
		if (deny->v[i].type == DT_JV_STR)
			m->deny[o->ndeny++] = deny->v[i].text;
	o->cmd = m->cmd;
	o->deny = m->deny;
	return -1;
}

/* Checks summary mf against the first (first_name) and the shards seen. */
static int merge_check(const struct dt_soak *s, const struct dt_soak_merged *m,
                       const char *first_name, const struct merge_file *mf, size_t nth)
{
	char why[8192];
	merge_differs(m->first, mf->v, why, sizeof(why));
	if (why[0])
		return dt_fail(DT_EXIT_MISMATCH,
		               "soak: --merge: %s is not a shard of the soak %s is of: %s; nothing "
		               "was merged",
		               mf->name, first_name, why);
	if (!mf->n && nth)
		return dt_fail(
		    DT_EXIT_MISMATCH,
		    "soak: --merge: %s and %s are summaries of whole soaks (not --shard), "
		    "of the same runs: nothing was merged",
		    first_name, mf->name);
	for (size_t h = 0; h < s->nhosts; h++)
		if (mf->n && s->hosts[h].shard == mf->k)
			return dt_fail(DT_EXIT_MISMATCH,
			               "soak: --merge: shard %llu/%llu is given twice (%s and %s): "
			               "nothing was merged",
			               (unsigned long long)mf->k, (unsigned long long)mf->n,
			               s->hosts[h].file, mf->name);
	return -1;
}

int dt_soak_merge(struct dt_soak *s, struct dt_soak_opts *o, struct dt_soak_merged *m,
                  char *const *files, size_t n)
{
	int rc = -1;
	if (!n)
		return dt_fail(DT_EXIT_INTERNAL, "soak: --merge needs the shards' summaries "
		                                 "(soak --shard K/N --json=FILE writes one)");
	for (size_t i = 0; rc < 0 && i < n; i++) {
		struct merge_file mf = {.name = files[i]};
		struct dt_jv *v = merge_read(files[i], &rc);
		if (!v)
			break;
		mf.v = v;
		merge_shard_of(v, &mf.k, &mf.n);
		dt_jv_u64(v, "runs_planned", &mf.runs);
		dt_jv_u64(v, "seed", &mf.seed);
		if (!i)
			m->first = v;
		rc = merge_check(s, m, files[0], &mf, i);
		if (rc < 0)
			rc = merge_one(s, &mf);
		m->interrupted |= dt_jv_true(v, "interrupted");
		double el = merge_secs(v, "elapsed_s");
		m->elapsed = el > m->elapsed ? el : m->elapsed;
		if (i)
			dt_jv_free(v);
	}
	if (rc >= 0)
		return rc;
	qsort(s->failed, s->nfailed, sizeof(*s->failed), merge_failed_order);
	uint64_t k0, n0;
	merge_shard_of(m->first, &k0, &n0);
	rc = merge_identity(o, m, n0);
	if (rc < 0)
		merge_missing(s, n0, o->runs, m->missing, sizeof(m->missing));
	return rc;
}

void dt_soak_merged_free(struct dt_soak_merged *m)
{
	dt_jv_free(m->first);
	free(m->cmd);
	free(m->deny);
}
