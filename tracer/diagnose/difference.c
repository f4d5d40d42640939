/* SPDX-License-Identifier: MIT */
/* What separated the writes that worked from the refused ones (difference.h). */
#include "difference.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "classify.h"
#include "recfmt.h"
#include "report.h"

/* What a fact is about: the refused path's directory, the file, the
 * process. The subject of a path fact is where a chmod would act. */
enum dt_fact_scope { DT_FS_DIR, DT_FS_FILE, DT_FS_PROC };

/* A fact's value in record d (1), or unknown (0); shown is how it reads. */
typedef int (*dt_fact_fn)(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                          char *shown, size_t cap);

struct dt_fact {
	const char *id;   /* JSON */
	const char *what; /* words */
	enum dt_fact_scope scope;
	dt_fact_fn get;
	const char *changed_by; /* op a traced changer of it makes ("chmod"), NULL: none */
};

static const struct dt_stat_facts *dt_st(const struct dt_record *d, uint32_t need)
{
	return d->p[0].has_st && (d->p[0].st.valid & need) == need ? &d->p[0].st : NULL;
}

/* A mode's permission bits, and an owner, as a comparable value and as
 * shown ("0755", "1000:1000"). */
static int fact_mode(uint32_t mode, uint64_t *v, char *shown, size_t cap)
{
	*v = mode & 07777;
	snprintf(shown, cap, "%04o", (unsigned)*v);
	return 1;
}

static int fact_owner(uint32_t uid, uint32_t gid, uint64_t *v, char *shown, size_t cap)
{
	*v = (uint64_t)uid << 32 | gid;
	snprintf(shown, cap, "%u:%u", uid, gid);
	return 1;
}

static int dt_fact_dir_mode(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                            char *shown, size_t cap)
{
	(void)r;
	const struct dt_stat_facts *st = dt_st(d, DT_SF_PARENT);
	if (!st)
		return 0;
	return fact_mode(st->parent_mode, v, shown, cap);
}

static int dt_fact_dir_owner(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                             char *shown, size_t cap)
{
	(void)r;
	const struct dt_stat_facts *st = dt_st(d, DT_SF_PARENT);
	if (!st)
		return 0;
	return fact_owner(st->parent_uid, st->parent_gid, v, shown, cap);
}

static int dt_fact_file_mode(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                             char *shown, size_t cap)
{
	(void)r;
	const struct dt_stat_facts *st = dt_st(d, DT_SF_EXISTS);
	if (!st)
		return 0;
	return fact_mode(st->mode, v, shown, cap);
}

static int dt_fact_file_owner(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                              char *shown, size_t cap)
{
	(void)r;
	const struct dt_stat_facts *st = dt_st(d, DT_SF_EXISTS);
	if (!st)
		return 0;
	return fact_owner(st->uid, st->gid, v, shown, cap);
}

static int dt_fact_mount(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                         char *shown, size_t cap)
{
	(void)r;
	const struct dt_stat_facts *st = dt_st(d, DT_SF_MOUNT);
	if (!st)
		return 0;
	*v = (st->mount_flags & ST_RDONLY) != 0;
	snprintf(shown, cap, "%s", *v ? "read-only" : "read-write");
	return 1;
}

static int dt_fact_uid(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                       char *shown, size_t cap)
{
	(void)r;
	*v = (uint64_t)d->uid;
	snprintf(shown, cap, "%lld", (long long)d->uid);
	return 1;
}

static int dt_fact_gid(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                       char *shown, size_t cap)
{
	(void)r;
	*v = (uint64_t)d->gid;
	snprintf(shown, cap, "%lld", (long long)d->gid);
	return 1;
}

static int dt_fact_groups(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                          char *shown, size_t cap)
{
	(void)r;
	if (d->ngroups < 0)
		return 0;
	uint64_t h = 1469598103934665603ULL;
	size_t n = 0;
	shown[0] = 0;
	for (int i = 0; i < d->ngroups; i++) {
		h = (h ^ d->groups[i]) * 1099511628211ULL; /* as getgroups listed them */
		if (n < cap)
			n += (size_t)snprintf(shown + n, cap - n, "%s%u", i ? "," : "",
			                      d->groups[i]);
	}
	if (!d->ngroups)
		snprintf(shown, cap, "none");
	*v = h;
	return 1;
}

static int dt_fact_mnt_ns(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                          char *shown, size_t cap)
{
	/* a successful write carries its own: its process may have no record */
	const struct dt_record *p = d->mnt_ns ? d : dt_report_proc_for(r, d);
	if (!p || !p->mnt_ns)
		return 0;
	*v = p->mnt_ns;
	snprintf(shown, cap, "mnt:[%llu]", (unsigned long long)p->mnt_ns);
	return 1;
}

static int dt_fact_seccomp(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                           char *shown, size_t cap)
{
	const struct dt_record *p = dt_report_proc_for(r, d);
	if (!p || !p->has_seccomp)
		return 0;
	*v = (uint64_t)p->seccomp << 40 | (uint64_t)p->seccomp_filters << 8 |
	     (uint64_t)(p->no_new_privs != 0);
	snprintf(shown, cap, "seccomp %lld (%lld filters), no_new_privs %lld",
	         (long long)p->seccomp, (long long)p->seccomp_filters, (long long)p->no_new_privs);
	return 1;
}

/* The program that started the process: how it was launched. */
static int dt_fact_parent(const struct dt_report *r, const struct dt_record *d, uint64_t *v,
                          char *shown, size_t cap)
{
	const struct dt_record *p = dt_report_proc(r, d, (long)d->ppid);
	if (!p || !p->exe)
		return 0;
	uint64_t h = 1469598103934665603ULL;
	for (const char *s = p->exe; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	*v = h;
	snprintf(shown, cap, "%s", p->exe);
	return 1;
}

#define DT_FACT_DIR_MODE                                                                           \
	{                                                                                          \
		"directory-mode", "mode", DT_FS_DIR, dt_fact_dir_mode, "chmod"                     \
	}
#define DT_FACT_DIR_OWNER                                                                          \
	{                                                                                          \
		"directory-owner", "owner", DT_FS_DIR, dt_fact_dir_owner, "chown"                  \
	}
#define DT_FACT_FILE_MODE                                                                          \
	{                                                                                          \
		"file-mode", "mode", DT_FS_FILE, dt_fact_file_mode, "chmod"                        \
	}
#define DT_FACT_FILE_OWNER                                                                         \
	{                                                                                          \
		"file-owner", "owner", DT_FS_FILE, dt_fact_file_owner, "chown"                     \
	}
#define DT_FACT_PROCESS                                                                            \
	{"read-only-mount", "mount", DT_FS_DIR, dt_fact_mount, NULL},                              \
	    {"uid", "uid", DT_FS_PROC, dt_fact_uid, NULL},                                         \
	    {"gid", "gid", DT_FS_PROC, dt_fact_gid, NULL},                                         \
	    {"groups", "groups", DT_FS_PROC, dt_fact_groups, NULL},                                \
	    {"mount-namespace", "mount namespace", DT_FS_PROC, dt_fact_mnt_ns, NULL},              \
	    {"seccomp", "seccomp", DT_FS_PROC, dt_fact_seccomp, NULL},                             \
	{                                                                                          \
		"parent-program", "parent program", DT_FS_PROC, dt_fact_parent, NULL               \
	}

/* In the order a call needs them: a create or unlink needs the directory,
 * a write to an existing file the file. ACLs and inode flags (immutable,
 * append-only) are not recorded, so they are never compared. */
static const struct dt_fact dt_facts_dir[] = {DT_FACT_DIR_MODE, DT_FACT_DIR_OWNER, DT_FACT_PROCESS};
static const struct dt_fact dt_facts_file[] = {DT_FACT_FILE_MODE, DT_FACT_FILE_OWNER,
                                               DT_FACT_PROCESS};

/* Adds shown to side's distinct values (by v, kept in seen). */
static void dt_side_add(struct dt_diff_side *s, uint64_t *seen, size_t *nseen, uint64_t v,
                        const char *shown)
{
	s->count++;
	for (size_t i = 0; i < *nseen; i++)
		if (seen[i] == v)
			return;
	if (*nseen == DT_DIFF_VALUES) {
		s->more = 1;
		return;
	}
	seen[(*nseen)++] = v;
	snprintf(s->values[s->nvalues++], sizeof(s->values[0]), "%s", shown);
}

/* The values of fact f on each side; 1 when both sides have some and no
 * value is on both. */
static int dt_fact_separates(const struct dt_report *r, const struct dt_fact *f,
                             const struct dt_record *const *ref, size_t nref,
                             const struct dt_record *const *ok, size_t nok,
                             struct dt_difference *out, int *compared)
{
	uint64_t vok[DT_DIFF_VALUES], vref[DT_DIFF_VALUES], v;
	size_t nvok = 0, nvref = 0;
	char shown[96];
	memset(&out->ok, 0, sizeof(out->ok));
	memset(&out->refused, 0, sizeof(out->refused));
	for (size_t i = 0; i < nok; i++)
		if (f->get(r, ok[i], &v, shown, sizeof(shown)))
			dt_side_add(&out->ok, vok, &nvok, v, shown);
	for (size_t i = 0; i < nref; i++)
		if (f->get(r, ref[i], &v, shown, sizeof(shown)))
			dt_side_add(&out->refused, vref, &nvref, v, shown);
	*compared = out->ok.count && out->refused.count;
	if (!*compared || out->ok.more || out->refused.more)
		return 0;
	for (size_t i = 0; i < nvok; i++)
		for (size_t j = 0; j < nvref; j++)
			if (vok[i] == vref[j])
				return 0;
	return 1;
}

/* "0755", "0755 or 0775" */
static size_t dt_side_words(char *buf, size_t cap, const struct dt_diff_side *s)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < s->nvalues && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? " or " : "", s->values[i]);
	return n;
}

static const char *dt_all_of(uint64_t n)
{
	return n == 1 ? "the" : "all";
}

/* The successes left out, said after the line. */
static void dt_found_existing_note(struct dt_difference *d)
{
	size_t n = strlen(d->line);
	if (d->found_existing && n < sizeof(d->line))
		snprintf(d->line + n, sizeof(d->line) - n,
		         "; %llu more opened it without creating it: it was already there",
		         (unsigned long long)d->found_existing);
}

static void dt_difference_line(struct dt_difference *d, const struct dt_fact *f)
{
	char good[400], bad[400], who[4200];
	dt_side_words(good, sizeof(good), &d->ok);
	dt_side_words(bad, sizeof(bad), &d->refused);
	if (f->scope == DT_FS_PROC)
		snprintf(who, sizeof(who), "the %s %s", f->what,
		         strcmp(f->id, "groups") ? "was" : "were");
	else if (!strcmp(f->id, "read-only-mount"))
		snprintf(who, sizeof(who), "the mount of %s was", d->subject);
	else
		snprintf(who, sizeof(who), "%s%s was%s", d->subject,
		         f->scope == DT_FS_DIR ? "/" : "",
		         strstr(f->id, "owner") ? " owned by" : "");
	snprintf(d->line, sizeof(d->line),
	         "%s %s on %s %llu recorded successful write%s and %s on %s %llu refused one%s",
	         who, good, dt_all_of(d->ok.count), (unsigned long long)d->ok.count,
	         d->ok.count == 1 ? "" : "s", bad, dt_all_of(d->refused.count),
	         (unsigned long long)d->refused.count, d->refused.count == 1 ? "" : "s");
	dt_found_existing_note(d);
}

/* The directory of path, or path itself for a file fact. */
static void dt_fact_subject(const struct dt_fact *f, const struct dt_record *d, char *out,
                            size_t cap)
{
	out[0] = 0;
	if (f->scope == DT_FS_PROC)
		return;
	snprintf(out, cap, "%s", dt_report_path(d));
	char *slash = strrchr(out, '/');
	if (f->scope == DT_FS_DIR && slash)
		*(slash == out ? slash + 1 : slash) = 0;
}

/* The value a traced chmod, chown or rename w gave the subject, in the
 * fact's terms (the target's own mode or owner), or 0 when w did not. */
static int dt_changer_value(const struct dt_fact *f, const struct dt_record *w, const char *subject,
                            uint64_t *v, char *shown, size_t cap)
{
	if (w->type != DT_REC_WRITE || !w->op || !f->changed_by)
		return 0;
	int k = -1;
	if (strstr(w->op, f->changed_by) && !strcmp(dt_report_path(w), subject))
		k = 0;
	else if (strstr(w->op, "rename") && w->p[1].realpath && !strcmp(w->p[1].realpath, subject))
		k = 1;
	if (k < 0 || !w->p[k].has_st || !(w->p[k].st.valid & DT_SF_EXISTS))
		return 0;
	const struct dt_stat_facts *st = &w->p[k].st;
	if (strstr(f->id, "mode")) {
		*v = st->mode & 07777;
		snprintf(shown, cap, "%04o", (unsigned)*v);
	} else {
		*v = (uint64_t)st->uid << 32 | st->gid;
		snprintf(shown, cap, "%u:%u", st->uid, st->gid);
	}
	return 1;
}

static uint64_t dt_first_time(const struct dt_record *const *v, size_t n)
{
	uint64_t t = 0;
	for (size_t i = 0; i < n; i++)
		if (!t || v[i]->time_real < t)
			t = v[i]->time_real;
	return t;
}

/* The traced call that set a value the refusals saw: the last before the
 * first refusal, else the first at all. */
static void dt_find_changer(const struct dt_report *r, const struct dt_fact *f,
                            const struct dt_record *const *ref, size_t nref,
                            struct dt_difference *out)
{
	uint64_t first_ref = dt_first_time(ref, nref), v, rv;
	char shown[96], rshown[96];
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *w = &r->recs[i];
		if (!dt_changer_value(f, w, out->subject, &v, shown, sizeof(shown)))
			continue;
		int bad = 0;
		for (size_t j = 0; j < nref && !bad; j++)
			bad = f->get(r, ref[j], &rv, rshown, sizeof(rshown)) && rv == v;
		if (!bad)
			continue;
		out->changers++;
		if (!out->changer || w->time_real <= first_ref) {
			out->changer = w;
			snprintf(out->changer_value, sizeof(out->changer_value), "%s", shown);
		}
	}
}

/* No traced call did it: between the last success before the first
 * refusal and that refusal. */
static void dt_outside_window(const struct dt_record *const *ref, size_t nref,
                              const struct dt_record *const *ok, size_t nok,
                              struct dt_difference *out)
{
	out->outside = 1;
	out->outside_before_ns = dt_first_time(ref, nref);
	for (size_t i = 0; i < nok; i++)
		if (ok[i]->time_real < out->outside_before_ns &&
		    ok[i]->time_real > out->outside_after_ns)
			out->outside_after_ns = ok[i]->time_real;
}

struct dt_diff_event {
	uint64_t t;
	int bad;
};

static int dt_event_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct dt_diff_event *)a)->t, y = ((const struct dt_diff_event *)b)->t;
	return (x > y) - (x < y);
}

/* The spans of the fact's two sides over time: successes and the traced
 * changers that set a success's value start good spans, refusals and the
 * changers that set a refusal's value bad ones. */
static void dt_difference_spans(const struct dt_report *r, const struct dt_fact *f,
                                const struct dt_record *const *ref, size_t nref,
                                const struct dt_record *const *ok, size_t nok,
                                struct dt_difference *out)
{
	size_t n = 0, cap = nref + nok + 1;
	for (size_t i = 0; i < r->n; i++)
		cap += r->recs[i].type == DT_REC_WRITE;
	struct dt_diff_event *ev = malloc(cap * sizeof(*ev));
	if (!ev)
		return;
	for (size_t i = 0; i < nok; i++)
		ev[n++] = (struct dt_diff_event){ok[i]->time_real, 0};
	for (size_t i = 0; i < nref; i++)
		ev[n++] = (struct dt_diff_event){ref[i]->time_real, 1};
	uint64_t v, rv;
	char shown[96], rshown[96];
	for (size_t i = 0; i < r->n && f->scope != DT_FS_PROC; i++) {
		const struct dt_record *w = &r->recs[i];
		if (!dt_changer_value(f, w, out->subject, &v, shown, sizeof(shown)))
			continue;
		int bad = 0;
		for (size_t j = 0; j < nref && !bad; j++)
			bad = f->get(r, ref[j], &rv, rshown, sizeof(rshown)) && rv == v;
		ev[n++] = (struct dt_diff_event){w->time_real, bad};
	}
	qsort(ev, n, sizeof(*ev), dt_event_cmp);
	for (size_t i = 0; i < n; i++) {
		if (out->nspans && out->spans[out->nspans - 1].bad == ev[i].bad)
			continue;
		if (out->nspans == DT_DIFF_SPANS) {
			out->more_spans = 1;
			break;
		}
		out->spans[out->nspans].from_ns = ev[i].t;
		out->spans[out->nspans++].bad = ev[i].bad;
	}
	free(ev);
}

static void dt_changed_line(struct dt_difference *d, const struct dt_fact *f)
{
	char t1[48], t2[48];
	if (d->changer) {
		const struct dt_record *w = d->changer;
		dt_format_time(w->time_real, t1, sizeof(t1));
		size_t n = (size_t)snprintf(
		    d->changed, sizeof(d->changed), "set to %s by pid %lld (%s), %s at %s",
		    d->changer_value, (long long)w->pid, w->comm ? w->comm : "?", w->op, t1);
		if (d->changers > 1 && n < sizeof(d->changed))
			snprintf(d->changed + n, sizeof(d->changed) - n,
			         " (%llu such calls traced)", (unsigned long long)d->changers);
		return;
	}
	if (f->scope == DT_FS_PROC)
		return;
	dt_format_time(d->outside_before_ns, t2, sizeof(t2));
	if (d->outside_after_ns) {
		dt_format_time(d->outside_after_ns, t1, sizeof(t1));
		snprintf(d->changed, sizeof(d->changed),
		         "changed from outside the traced processes, between %s (last successful "
		         "write) and %s (first refusal)",
		         t1, t2);
	} else {
		snprintf(d->changed, sizeof(d->changed),
		         "changed from outside the traced processes, before %s (first refusal; no "
		         "successful write was recorded before it)",
		         t2);
	}
}

static void dt_no_difference(struct dt_difference *out, size_t nok, size_t nref)
{
	out->fact = NULL;
	out->what = NULL;
	out->subject[0] = 0;
	snprintf(out->line, sizeof(out->line),
	         "no recorded fact separates the %zu recorded successful write%s from the %zu "
	         "refused one%s (compared: %s; ACLs and inode flags such as immutable are not "
	         "recorded)",
	         nok, nok == 1 ? "" : "s", nref, nref == 1 ? "" : "s",
	         out->compared[0] ? out->compared : "nothing: no fact was known on both sides");
	dt_found_existing_note(out);
}

/* A mount read-only for the refused processes and writable for the others
 * is no change over time when they saw it through different mount
 * namespaces (a sandbox's read-only bind): says so in changed. */
static int dt_seen_through_other_mounts(const struct dt_report *r, const struct dt_fact *f,
                                        const struct dt_record *const *ref, size_t nref,
                                        const struct dt_record *const *ok, size_t nok,
                                        struct dt_difference *out)
{
	static const struct dt_fact ns = {"mount-namespace", "mount namespace", DT_FS_PROC,
	                                  dt_fact_mnt_ns, NULL};
	if (strcmp(f->id, "read-only-mount"))
		return 0;
	struct dt_difference tmp;
	memset(&tmp, 0, sizeof(tmp));
	int compared = 0;
	if (!dt_fact_separates(r, &ns, ref, nref, ok, nok, &tmp, &compared))
		return 0;
	snprintf(out->changed, sizeof(out->changed),
	         "no change over time: the refused processes saw it through another mount "
	         "namespace (%s) than the successful ones (%s), a sandbox's read-only mount",
	         tmp.refused.values[0], tmp.ok.values[0]);
	return 1;
}

/* The first fact, in the order of facts, that separates the two sides. */
static void dt_difference_facts(const struct dt_report *r, int dir,
                                const struct dt_record *const *refusals, size_t nref,
                                const struct dt_record *const *successes, size_t nok,
                                struct dt_difference *out)
{
	const struct dt_fact *facts = dir ? dt_facts_dir : dt_facts_file;
	size_t nfacts = dir ? sizeof(dt_facts_dir) / sizeof(dt_facts_dir[0])
	                    : sizeof(dt_facts_file) / sizeof(dt_facts_file[0]);
	size_t clen = 0;
	for (size_t i = 0; i < nfacts; i++) {
		int compared = 0;
		int sep =
		    dt_fact_separates(r, &facts[i], refusals, nref, successes, nok, out, &compared);
		if (compared && clen < sizeof(out->compared))
			clen += (size_t)snprintf(out->compared + clen, sizeof(out->compared) - clen,
			                         "%s%s", clen ? ", " : "", facts[i].id);
		if (!sep)
			continue;
		out->fact = facts[i].id;
		out->what = facts[i].what;
		dt_fact_subject(&facts[i], refusals[0], out->subject, sizeof(out->subject));
		dt_difference_line(out, &facts[i]);
		if (dt_seen_through_other_mounts(r, &facts[i], refusals, nref, successes, nok, out))
			; /* said: not a change over time */
		else if (facts[i].scope != DT_FS_PROC) {
			dt_find_changer(r, &facts[i], refusals, nref, out);
			if (!out->changer)
				dt_outside_window(refusals, nref, successes, nok, out);
		}
		if (!out->changed[0])
			dt_changed_line(out, &facts[i]);
		dt_difference_spans(r, &facts[i], refusals, nref, successes, nok, out);
		return;
	}
	memset(&out->ok, 0, sizeof(out->ok));
	memset(&out->refused, 0, sizeof(out->refused));
	out->ok.count = nok;
	out->refused.count = nref;
	dt_no_difference(out, nok, nref);
}

/* Could d's process create an entry in its directory, by the mode bits
 * recorded (root may; groups as recorded)? -1 when not known. */
static int dt_dir_lets_create(const struct dt_record *d)
{
	const struct dt_stat_facts *st = dt_st(d, DT_SF_PARENT);
	if (!st)
		return -1;
	if (d->uid == 0)
		return 1;
	int in_group = (int64_t)st->parent_gid == d->gid;
	for (int i = 0; i < d->ngroups && !in_group; i++)
		in_group = d->groups[i] == st->parent_gid;
	unsigned bits = (int64_t)st->parent_uid == d->uid ? (st->parent_mode >> 6) & 7
	                : in_group                        ? (st->parent_mode >> 3) & 7
	                                                  : st->parent_mode & 7;
	return (bits & 3) == 3;
}

/* A successful open that created nothing: without O_CREAT, or with it in
 * a directory that did not let it create (it found the file there).
 * Compared with refused creates, its directory's mode says nothing. */
static int dt_found_existing(const struct dt_record *w)
{
	if (!w->op || !w->has_flags || (!strstr(w->op, "open") && strncmp(w->op, "creat", 5)))
		return 0;
	return !(w->flags & O_CREAT) || dt_dir_lets_create(w) == 0;
}

void dt_difference_each_fact(const struct dt_report *r, const struct dt_record *d,
                             dt_fact_visit_fn fn, void *ctx)
{
	int dir = dt_op_need(d) == DT_NEED_DIR;
	const struct dt_fact *facts = dir ? dt_facts_dir : dt_facts_file;
	size_t nfacts = dir ? sizeof(dt_facts_dir) / sizeof(dt_facts_dir[0])
	                    : sizeof(dt_facts_file) / sizeof(dt_facts_file[0]);
	/* a create that found its file there needed nothing of the directory */
	int skip_dir = dir && d->type == DT_REC_WRITE && dt_found_existing(d);
	char shown[96], subject[4096];
	uint64_t v;
	for (size_t i = 0; i < nfacts; i++) {
		if ((skip_dir && facts[i].scope == DT_FS_DIR) ||
		    !facts[i].get(r, d, &v, shown, sizeof(shown)))
			continue;
		dt_fact_subject(&facts[i], d, subject, sizeof(subject));
		fn(ctx, facts[i].id, facts[i].what, subject, shown);
	}
}

void dt_difference_compute(const struct dt_report *r, const struct dt_record *const *refusals,
                           size_t nref, const struct dt_record *const *successes, size_t nok,
                           struct dt_difference *out)
{
	memset(out, 0, sizeof(*out));
	if (!nref || !nok)
		return;
	out->computed = 1;
	int dir = dt_op_need(refusals[0]) == DT_NEED_DIR;
	const struct dt_record **kept = NULL;
	if (dir) {
		kept = malloc(nok * sizeof(*kept));
		size_t n = 0;
		for (size_t i = 0; kept && i < nok; i++) {
			if (dt_found_existing(successes[i]))
				out->found_existing++;
			else
				kept[n++] = successes[i];
		}
		if (kept && n) {
			successes = kept;
			nok = n;
		} else {
			out->found_existing = 0;
		}
	}
	dt_difference_facts(r, dir, refusals, nref, successes, nok, out);
	free(kept);
}
