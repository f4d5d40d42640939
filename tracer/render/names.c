/* SPDX-License-Identifier: MIT */
#include "names.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "openflags.h"
#include "probe.h"

/* The kind of every call the probe interposes, straight from its table:
 * mkstemp is an open, euidaccess an access. -1 for a name not there (the
 * supervisor records system calls by their own names). */
int dt_op_kind(const char *op)
{
	static const struct {
		const char *op;
		int kind;
	} ops[] = {
#define DT_INT(fn, params, args, kind, ...) {#fn, kind},
#define DT_PTR(fn, type, params, args, kind, ...) {#fn, kind},
#define DT_PTR0(fn, type, kind, ...) {#fn, kind},
#define DT_OPEN(fn, ...) {#fn, DT_K_OPEN},
#define DT_FCNTL(fn) {#fn, DT_K_LOCK},
#include "calls.def"
#undef DT_INT
#undef DT_PTR
#undef DT_PTR0
#undef DT_OPEN
#undef DT_FCNTL
	};
	for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i].op))
			return ops[i].kind;
	return -1;
}

const char *dt_errno_name(int e)
{
	static __thread char buf[16];
	const char *n = e > 0 ? strerrorname_np(e) : NULL;
	if (n)
		return n;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

int dt_errno_parse(const char *name)
{
	if (name[0] >= '0' && name[0] <= '9') {
		char *end;
		long v = strtol(name, &end, 10);
		return (*end || v <= 0 || v > 4095) ? -1 : (int)v;
	}
	for (int e = 1; e < 200; e++) {
		const char *n = strerrorname_np(e);
		if (n && !strcmp(n, name))
			return e;
	}
	return -1;
}

static void dt_append(char *out, size_t cap, size_t *len, const char *s)
{
	int n = snprintf(out + *len, cap - *len, "%s%s", *len ? "|" : "", s);
	if (n > 0 && (size_t)n < cap - *len)
		*len += (size_t)n;
}

void dt_open_flags_name(uint64_t flags, char *out, size_t cap)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} bits[] = {
	    {O_CREAT, "O_CREAT"},       {O_EXCL, "O_EXCL"},       {O_NOCTTY, "O_NOCTTY"},
	    {O_TRUNC, "O_TRUNC"},       {O_APPEND, "O_APPEND"},   {O_NONBLOCK, "O_NONBLOCK"},
	    {O_DSYNC, "O_DSYNC"},       {O_DIRECT, "O_DIRECT"},   {O_LARGEFILE, "O_LARGEFILE"},
	    {O_NOFOLLOW, "O_NOFOLLOW"}, {O_NOATIME, "O_NOATIME"}, {O_CLOEXEC, "O_CLOEXEC"},
	    {O_PATH, "O_PATH"},
	};
	size_t len = 0;
	out[0] = 0;
	flags = dt_open_flags_from_ring(flags);
	uint64_t rest = flags;
	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		dt_append(out, cap, &len, "O_RDONLY");
		break;
	case O_WRONLY:
		dt_append(out, cap, &len, "O_WRONLY");
		break;
	case O_RDWR:
		dt_append(out, cap, &len, "O_RDWR");
		break;
	default:
		dt_append(out, cap, &len, "O_ACCMODE");
		break;
	}
	rest &= ~(uint64_t)O_ACCMODE;
	if ((rest & (uint64_t)__O_TMPFILE) == (uint64_t)__O_TMPFILE) {
		dt_append(out, cap, &len, "O_TMPFILE");
		rest &= ~(uint64_t)__O_TMPFILE;
	} else if (rest & O_DIRECTORY) {
		dt_append(out, cap, &len, "O_DIRECTORY");
		rest &= ~(uint64_t)O_DIRECTORY;
	}
	if ((rest & O_SYNC) == O_SYNC) {
		dt_append(out, cap, &len, "O_SYNC");
		rest &= ~(uint64_t)O_SYNC;
	}
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (rest & bits[i].bit) {
			dt_append(out, cap, &len, bits[i].name);
			rest &= ~bits[i].bit;
		}
	if (rest) {
		char hex[24];
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)rest);
		dt_append(out, cap, &len, hex);
	}
}

void dt_flags_name(const struct dt_record *r, char *out, size_t cap)
{
	size_t len = 0;
	out[0] = 0;
	const char *op = r->op ? r->op : "";
	if (!strcmp(op, "fcntl") || !strcmp(op, "fcntl64")) {
		const char *c = r->cmd == F_SETLK        ? "F_SETLK"
		                : r->cmd == F_SETLKW     ? "F_SETLKW"
		                : r->cmd == F_OFD_SETLK  ? "F_OFD_SETLK"
		                : r->cmd == F_OFD_SETLKW ? "F_OFD_SETLKW"
		                                         : "F_?";
		dt_append(out, cap, &len, c);
		if (r->has_flags)
			dt_append(out, cap, &len,
			          r->flags == F_RDLCK   ? "F_RDLCK"
			          : r->flags == F_WRLCK ? "F_WRLCK"
			          : r->flags == F_UNLCK ? "F_UNLCK"
			                                : "F_?LCK");
		return;
	}
	if (!strcmp(op, "flock")) {
		int c = (int)r->cmd;
		dt_append(out, cap, &len,
		          (c & ~LOCK_NB) == LOCK_EX   ? "LOCK_EX"
		          : (c & ~LOCK_NB) == LOCK_SH ? "LOCK_SH"
		          : (c & ~LOCK_NB) == LOCK_UN ? "LOCK_UN"
		                                      : "LOCK_?");
		if (c & LOCK_NB)
			dt_append(out, cap, &len, "LOCK_NB");
		return;
	}
	int kind = dt_op_kind(op);
	if (kind == DT_K_ACCESS || !strcmp(op, "faccessat")) {
		int c = (int)r->cmd;
		if (c == F_OK)
			dt_append(out, cap, &len, "F_OK");
		if (c & R_OK)
			dt_append(out, cap, &len, "R_OK");
		if (c & W_OK)
			dt_append(out, cap, &len, "W_OK");
		if (c & X_OK)
			dt_append(out, cap, &len, "X_OK");
		return;
	}
	if (!r->has_flags)
		return;
	if (kind == DT_K_OPEN || kind == DT_K_FOPEN || strstr(op, "open") ||
	    !strncmp(op, "creat", 5)) {
		dt_open_flags_name(r->flags, out, cap);
		return;
	}
	uint64_t f = r->flags;
	if (f & AT_REMOVEDIR)
		dt_append(out, cap, &len, "AT_REMOVEDIR");
	if (f & AT_SYMLINK_NOFOLLOW)
		dt_append(out, cap, &len, "AT_SYMLINK_NOFOLLOW");
	if (f & AT_SYMLINK_FOLLOW)
		dt_append(out, cap, &len, "AT_SYMLINK_FOLLOW");
	if (f & AT_EMPTY_PATH)
		dt_append(out, cap, &len, "AT_EMPTY_PATH");
	if (!strncmp(op, "renameat2", 9)) {
		len = 0;
		out[0] = 0;
		if (f & 1)
			dt_append(out, cap, &len, "RENAME_NOREPLACE");
		if (f & 2)
			dt_append(out, cap, &len, "RENAME_EXCHANGE");
		if (f & 4)
			dt_append(out, cap, &len, "RENAME_WHITEOUT");
	}
}

const char *dt_blind_why(const struct dt_record *e, int brief)
{
	static const struct {
		const char *reason, *brief, *full;
	} why[] = {
	    {"static", "(static binary)",
	     "a static binary: LD_PRELOAD cannot enter it; its refusals are not recorded (a "
	     "--deny rule still reaches it)"},
	    {"setid", "(set-id: the loader drops LD_PRELOAD; its refusals are not recorded)",
	     "a set-user-ID or set-group-ID program: the loader drops LD_PRELOAD; its refusals "
	     "are not recorded"},
	    {"non-dumpable",
	     "(non-dumpable: denytrace may not read its memory, so its execs and the calls "
	     "--deny names went unjudged)",
	     "it made itself non-dumpable: denytrace (without CAP_SYS_PTRACE) may not read its "
	     "memory, so what it ran and the paths of its calls are unknown; --deny let them "
	     "through"},
	    {"hidden",
	     "(hidden: it left no record from the probe its LD_PRELOAD names; the sandbox hid "
	     "the probe, or its ring, from it)",
	     "the probe its LD_PRELOAD names never recorded entering it: ld.so could not open "
	     "the file (a sandbox that hides the directory holding it, bwrap --tmpfs over it, "
	     "runs the program without it) or the probe could not reach the ring; its refusals "
	     "are not recorded"},
	    {"io_uring",
	     "(io_uring: what it submits there bypasses libc; those refusals are not recorded)",
	     "partly blind: it set up io_uring, and the file operations it submits there "
	     "(openat, unlinkat, renameat, mkdirat...) bypass libc, so the probe cannot see "
	     "their refusals; its libc calls are still recorded"},
	};
	for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++)
		if (e->exec_blind && !strcmp(e->exec_blind, why[i].reason))
			return brief ? why[i].brief : why[i].full;
	if (e->preload)
		return brief ? "(no-preload: LD_PRELOAD rewritten without the probe)"
		             : "LD_PRELOAD was rewritten without the probe";
	return brief ? "(no-preload: environment cleared or LD_PRELOAD unset)"
	             : "the environment was cleared (LD_PRELOAD unset), as Codex does for MCP "
	               "servers";
}
