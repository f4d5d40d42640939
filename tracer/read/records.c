/* SPDX-License-Identifier: MIT */
#include "records.h"

#include <stdlib.h>
#include <string.h>

const char *dt_rec_type_name(int type)
{
	switch (type) {
	case DT_REC_DENIAL:
		return "denial";
	case DT_REC_PROCESS:
		return "process";
	case DT_REC_WRITE:
		return "write";
	case DT_REC_REOPEN:
		return "reopen";
	case DT_REC_LAUNCH:
		return "launch";
	case DT_REC_EXEC:
		return "exec";
	case DT_REC_CONFIG:
		return "config";
	case DT_REC_ENTRY:
		return "entry";
	default:
		return "unknown";
	}
}

/* Bump allocator over one block sized from the record: every string gets a
 * NUL, every array a slot; the total is bounded by twice the record. */
struct dt_bump {
	char *p;
	size_t used, cap;
};

static void *dt_bump_aligned(struct dt_bump *b, size_t n, size_t align)
{
	size_t a = (b->used + align - 1) & ~(align - 1);
	if (a + n > b->cap)
		return NULL;
	b->used = a + n;
	return b->p + a;
}

static void *dt_bump(struct dt_bump *b, size_t n)
{
	return dt_bump_aligned(b, n, 8);
}

static const char *dt_bump_str(struct dt_bump *b, const unsigned char *v, size_t n)
{
	char *s = dt_bump_aligned(b, n + 1, 1);
	if (!s)
		return ""; /* cannot happen: the block is sized for every field */
	memcpy(s, v, n);
	s[n] = 0;
	return s;
}

/* How many of each repeated field a record holds (to size its arrays). */
struct dt_field_counts {
	size_t nframes, nmods, nenv, nmounts, nargv, npy;
};

/* First pass: checks the fields' framing and counts the repeated ones.
 * 0, or -1 when a field runs past the record. */
static int dt_decode_count(const unsigned char *buf, uint32_t len, struct dt_field_counts *c)
{
	for (uint32_t o = sizeof(struct dt_rec_header); o < len;) {
		if (len - o < 4)
			return -1;
		uint16_t tag, n;
		memcpy(&tag, buf + o, 2);
		memcpy(&n, buf + o + 2, 2);
		if (len - o - 4 < n)
			return -1;
		if (tag == DT_T_FRAME)
			c->nframes++;
		else if (tag == DT_T_MODULE)
			c->nmods++;
		else if (tag == DT_T_PYFRAME)
			c->npy++;
		else if (tag == DT_T_ENV)
			c->nenv++;
		else if (tag == DT_T_MOUNT)
			c->nmounts++;
		else if (tag == DT_T_ARGV)
			for (uint16_t i = 0; i < n; i++)
				c->nargv += buf[o + 4 + i] == 0;
		o += 4u + n;
	}
	return 0;
}

/* recfields.def, indexed by tag: where each simple field goes. */
enum dt_field_kind { DT_FK_NONE, DT_FK_U64, DT_FK_I64, DT_FK_INT, DT_FK_BOOL, DT_FK_STR };

#define DT_FIELD_TAGS 256
static const struct dt_field_row {
	unsigned char kind;
	unsigned short offset, has; /* has: 0 for none (offset 0 is pos, never a flag) */
} dt_fields[DT_FIELD_TAGS] = {
#define DT_FIELD(tag, kind, member, json)                                                          \
	[tag] = {DT_FK_##kind, offsetof(struct dt_record, member), 0},
#define DT_FIELD_HAS(tag, kind, member, has, json)                                                 \
	[tag] = {DT_FK_##kind, offsetof(struct dt_record, member), offsetof(struct dt_record, has)},
#include "recfields.def"
#undef DT_FIELD
#undef DT_FIELD_HAS
};

/* Each row's member has the size its kind writes, and its tag fits. */
#define DT_FK_SIZE_U64 8
#define DT_FK_SIZE_I64 8
#define DT_FK_SIZE_INT sizeof(int)
#define DT_FK_SIZE_BOOL sizeof(int)
#define DT_FK_SIZE_STR sizeof(const char *)
#define DT_FIELD(tag, kind, member, json)                                                          \
	_Static_assert(sizeof(((struct dt_record *)0)->member) == DT_FK_SIZE_##kind &&             \
	                   (tag) < DT_FIELD_TAGS,                                                  \
	               #member ": size of its kind, tag in the table");
#define DT_FIELD_HAS(tag, kind, member, has, json)                                                 \
	DT_FIELD(tag, kind, member, json)                                                          \
	_Static_assert(sizeof(((struct dt_record *)0)->has) == sizeof(int), #has ": an int");
#include "recfields.def"
#undef DT_FIELD
#undef DT_FIELD_HAS
_Static_assert(sizeof(struct dt_record) < 65536, "member offsets fit an unsigned short");

/* A recfields.def field (u: its 8-byte value, or 0) into out. */
static void dt_decode_simple(struct dt_record *out, struct dt_bump *b, const struct dt_field_row *f,
                             const unsigned char *v, uint16_t n, uint64_t u)
{
	char *at = (char *)out + f->offset;
	switch (f->kind) {
	case DT_FK_U64:
		memcpy(at, &u, sizeof(u));
		break;
	case DT_FK_I64: {
		int64_t i = (int64_t)u;
		memcpy(at, &i, sizeof(i));
		break;
	}
	case DT_FK_INT:
	case DT_FK_BOOL: {
		int i = f->kind == DT_FK_BOOL ? u != 0 : (int)u;
		memcpy(at, &i, sizeof(i));
		break;
	}
	case DT_FK_STR: {
		const char *str = dt_bump_str(b, v, n);
		memcpy(at, &str, sizeof(str));
		break;
	}
	default:
		return;
	}
	if (f->has) {
		int one = 1;
		memcpy((char *)out + f->has, &one, sizeof(one));
	}
}

/* One field (tag, n bytes at v) into out; strings go to b. A tag this
 * build does not know is a newer writer's field and is ignored. */
/* struct dt_pyframe, then the file's name, then the function's. */
static void dt_decode_pyframe(struct dt_record *out, struct dt_bump *b, const unsigned char *v,
                              uint16_t n)
{
	struct dt_pyframe f;
	if (n < sizeof(f))
		return;
	memcpy(&f, v, sizeof(f));
	if (f.file_len > n - sizeof(f))
		return;
	struct dt_py_frame *pf = &out->pyframes[out->npyframes++];
	pf->line = f.line;
	pf->file = dt_bump_str(b, v + sizeof(f), f.file_len);
	pf->func = dt_bump_str(b, v + sizeof(f) + f.file_len, n - sizeof(f) - f.file_len);
}

static void dt_decode_field(struct dt_record *out, struct dt_bump *b, uint16_t tag,
                            const unsigned char *v, uint16_t n, size_t nargv)
{
	uint64_t u = 0;
	if (n == 8)
		memcpy(&u, v, 8);
	if (tag < DT_FIELD_TAGS && dt_fields[tag].kind) {
		dt_decode_simple(out, b, &dt_fields[tag], v, n, u);
		return;
	}
	int second = tag >= DT_T_PATH2 && tag <= DT_T_STAT2;
	struct dt_pathinfo *pi = &out->p[second];
	switch (tag) {
	case DT_T_PATH:
	case DT_T_PATH2:
		pi->path = dt_bump_str(b, v, n);
		break;
	case DT_T_DIRPATH:
	case DT_T_DIRPATH2:
		pi->dirpath = dt_bump_str(b, v, n);
		break;
	case DT_T_ABSPATH:
	case DT_T_ABSPATH2:
		pi->abspath = dt_bump_str(b, v, n);
		break;
	case DT_T_REALPATH:
	case DT_T_REALPATH2:
		pi->realpath = dt_bump_str(b, v, n);
		break;
	case DT_T_STAT:
	case DT_T_STAT2:
		if (n == sizeof(pi->st)) {
			memcpy(&pi->st, v, n);
			pi->has_st = 1;
		}
		break;
	case DT_T_GROUPS:
		if (n % 4 == 0 && n / 4 <= 64) {
			memcpy(out->groups, v, n);
			out->ngroups = n / 4;
		}
		break;
	case DT_T_SEARCH:
		if (n > sizeof(struct dt_search_facts)) {
			memcpy(&out->p[0].search, v, sizeof(struct dt_search_facts));
			out->p[0].search_dir = dt_bump_str(b, v + sizeof(struct dt_search_facts),
			                                   n - sizeof(struct dt_search_facts));
		}
		break;
	case DT_T_FRAME:
		if (n == sizeof(struct dt_frame))
			memcpy(&out->frames[out->nframes++], v, n);
		break;
	case DT_T_MODULE:
		out->modules[out->nmodules++] = dt_bump_str(b, v, n);
		break;
	case DT_T_PYFRAME:
		dt_decode_pyframe(out, b, v, n);
		break;
	case DT_T_ENV:
		out->env[out->nenv++] = dt_bump_str(b, v, n);
		break;
	case DT_T_ARGV: {
		size_t start = 0;
		for (size_t i = 0; i <= n; i++)
			if (i == n || v[i] == 0) {
				if (out->argc < nargv + 1)
					out->argv[out->argc++] =
					    dt_bump_str(b, v + start, i - start);
				start = i + 1;
			}
		break;
	}
	case DT_T_MOUNT:
		if (n > 8) {
			struct dt_mount_fact mf;
			memcpy(&mf, v, 8);
			const unsigned char *mp = v + 8;
			size_t ml = strnlen((const char *)mp, n - 8u);
			struct dt_mount *m = &out->mounts[out->nmounts++];
			m->path = dt_bump_str(b, mp, ml);
			m->fstype = ml + 1 < n - 8u ? dt_bump_str(b, mp + ml + 1, n - 8u - ml - 1)
			                            : dt_bump_str(b, (const unsigned char *)"", 0);
			m->rw = (mf.flags & DT_MF_RW) != 0;
		}
		break;
	case DT_T_CONFIG_TEXT:
		out->cfg_text = dt_bump_str(b, v, n);
		out->cfg_len = n;
		break;
	default:
		break; /* a newer writer's field: ignore */
	}
}

int dt_record_decode(const unsigned char *buf, uint32_t len, uint64_t pos, struct dt_record *out)
{
	memset(out, 0, sizeof(*out));
	out->pos = pos;
	out->err = 0;
	out->exec_static = -1;
	out->ngroups = -1;
	if (len < sizeof(struct dt_rec_header))
		return -1;
	const struct dt_rec_header *rh = (const void *)buf;
	out->type = rh->type;

	/* first pass: count repeated fields so arrays can be sized */
	struct dt_field_counts c = {0};
	if (dt_decode_count(buf, len, &c) < 0)
		return -1;
	size_t nframes = c.nframes, nmods = c.nmods, nenv = c.nenv, nmounts = c.nmounts,
	       nargv = c.nargv;
	size_t cap = 2 * (size_t)len + 64 + (nframes + 1) * sizeof(struct dt_frame) +
	             (c.npy + 1) * sizeof(struct dt_py_frame) +
	             (nmods + nenv + nargv + 4) * sizeof(char *) +
	             (nmounts + 1) * sizeof(struct dt_mount) + 256;
	struct dt_bump b = {malloc(cap), 0, cap};
	if (!b.p)
		return -1;
	out->mem = b.p;
	out->frames = dt_bump(&b, (nframes + 1) * sizeof(struct dt_frame));
	out->modules = dt_bump(&b, (nmods + 1) * sizeof(char *));
	out->pyframes = dt_bump(&b, (c.npy + 1) * sizeof(struct dt_py_frame));
	out->env = dt_bump(&b, (nenv + 1) * sizeof(char *));
	out->argv = dt_bump(&b, (nargv + 2) * sizeof(char *));
	out->mounts = dt_bump(&b, (nmounts + 1) * sizeof(struct dt_mount));

	for (uint32_t o = sizeof(*rh); o < len;) {
		uint16_t tag, n;
		memcpy(&tag, buf + o, 2);
		memcpy(&n, buf + o + 2, 2);
		const unsigned char *v = buf + o + 4;
		o += 4u + n;
		dt_decode_field(out, &b, tag, v, n, nargv);
	}
	/* a frame whose module index is out of range loses its module */
	for (size_t i = 0; i < out->nframes; i++)
		if (out->frames[i].module >= out->nmodules)
			out->frames[i].module = UINT32_MAX;
	return 0;
}

void dt_record_free(struct dt_record *r)
{
	free(r->mem);
	r->mem = NULL;
}

const char *dt_record_env(const struct dt_record *r, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < r->nenv; i++)
		if (r->env[i] && !strncmp(r->env[i], name, n) && r->env[i][n] == '=')
			return r->env[i] + n + 1;
	return NULL;
}
