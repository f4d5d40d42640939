/* SPDX-License-Identifier: MIT */
/* --deny rules: which calls the seccomp supervisor refuses, with which
 * errno, and when. Parsing and deciding only; no seccomp here, so the
 * grammar can be unit-tested and fuzzed alone.
 *
 *   RULE  = GLOB [ "," KEY "=" VALUE ]...
 *   GLOB  = fnmatch(3) pattern (no FNM_PATHNAME: "*" crosses "/") matched
 *           against the resolved absolute path; a comma in it must sit in
 *           a bracket expression ("[,]")
 *   op    = create | new | write | unlink | rename | mkdir | chmod | any,
 *           joined with "+" (default any)
 *   errno = a symbolic errno such as EROFS (default EACCES)
 *   p     = probability in [0,1]: each match fires with it (see --seed)
 *   nth   = N: only the Nth match fires
 *   first = N: the first N matches fire
 *   errno=EAGAIN or EINTR only with nth, or first up to DT_DENY_RETRY_MAX
 *   (none of p, nth, first: every match fires)
 */
#ifndef DENYTRACE_DENYRULE_H
#define DENYTRACE_DENYRULE_H

#include <stddef.h>
#include <stdint.h>

/* The most first= may refuse with a "try again" errno (EAGAIN, EINTR). */
#define DT_DENY_RETRY_MAX 1000000

/* Operation classes a call belongs to; a call may be in several (an
 * open with O_CREAT|O_WRONLY is create and write). */
enum dt_deny_op {
	DT_DENY_CREATE = 1u << 0, /* open/creat with O_CREAT, link, symlink, mknod */
	DT_DENY_WRITE = 1u << 1,  /* open for writing or O_TRUNC, truncate */
	DT_DENY_UNLINK = 1u << 2, /* unlink, unlinkat, rmdir */
	DT_DENY_RENAME = 1u << 3, /* rename, renameat, renameat2 (either path) */
	DT_DENY_MKDIR = 1u << 4,  /* mkdir, mkdirat */
	DT_DENY_CHMOD = 1u << 5,  /* chmod, fchmod, fchmodat */
	/* a create whose path did not exist when the call was made: what a
	 * directory the caller may not write refuses, while an existing file
	 * in it stays writable. The supervisor decides it with a stat. */
	DT_DENY_NEW = 1u << 6,
	DT_DENY_ANY = (1u << 7) - 1,
};

enum dt_deny_when {
	DT_DENY_ALWAYS = 0,
	DT_DENY_PROB,  /* p= */
	DT_DENY_NTH,   /* nth= */
	DT_DENY_FIRST, /* first= */
};

struct dt_deny_rule {
	char *text; /* the rule as given */
	char *glob;
	unsigned ops; /* enum dt_deny_op bits */
	int err;      /* errno to return */
	enum dt_deny_when when;
	double p;
	uint64_t n;
	uint64_t matches; /* calls matched so far (decider state) */
	uint64_t fired;
};

struct dt_deny_set {
	struct dt_deny_rule *v;
	size_t n;
	uint64_t seed;
};

/* Parses one rule. Returns 0, or -1 with a message in err that names the
 * bad part and shows where it is (two lines: the message, then the rule
 * with a caret under the bad part). */
int dt_deny_parse(const char *text, struct dt_deny_rule *out, char *err, size_t errlen);
void dt_deny_rule_free(struct dt_deny_rule *r);

/* Adds a parsed rule to the set (taking its storage). Returns 0 or -1. */
int dt_deny_add(struct dt_deny_set *s, struct dt_deny_rule *r);
void dt_deny_set_free(struct dt_deny_set *s);
/* Union of the op classes of every rule. */
unsigned dt_deny_ops(const struct dt_deny_set *s);

/* A call of op classes `ops` on `abspath`: the first rule whose glob and
 * ops match counts the match and decides by its schedule. Returns the
 * errno to inject, or 0 to let the call through; *rule (may be NULL) is
 * the index of the matching rule, or -1. Probabilities are a pure function
 * of (seed, rule index, match number): the same calls in the same order
 * give the same refusals. */
int dt_deny_decide(struct dt_deny_set *s, const char *abspath, unsigned ops, int *rule);

/* "create+write" for a bit set, into out. */
void dt_deny_ops_name(unsigned ops, char *out, size_t cap);

#endif
