/* SPDX-License-Identifier: MIT */
/*
 * From a finding to the change that fixes it, in the user's own terms
 * (denytrace fix), and the launch's command line with that change applied
 * (denytrace fix --verify runs it).
 *
 * Never wider than the findings:
 *  - a sandbox fix makes writable exactly the expected roots of the
 *    findings it fixes (a Codex -c list also repeats the list it replaces:
 *    the launch had those already);
 *  - a mode fix adds exactly the bits the refused call needed, for the uid
 *    that was refused (never chmod 777, never o+w);
 *  - a finding without an expected root (outside-roots) gets, as a
 *    candidate and labelled so, the narrowest grant its refusals need: the
 *    directory the refused calls needed to write (the verdict's subject),
 *    never a mode change; nobody planned it, so the user decides;
 *  - an immutable or append-only inode gets chattr -i or -a on exactly
 *    the path whose flag refused the call;
 *  - nothing in dt_fix_forbidden's list is ever granted, chowned,
 *    chmodded or chattred, and no fix says "run it as root".
 *
 * Pure: plain data in, strings out. Nothing is run, nothing on disk is
 * changed: chmod, config.toml and Landlock changes are only printed.
 */
#ifndef DENYTRACE_FIX_H
#define DENYTRACE_FIX_H

#include <stddef.h>
#include <stdint.h>

#include "classify.h"
#include "difference.h"
#include "records.h"
#include "roots.h"

enum dt_fix_kind {
	DT_FIX_COMMAND_LINE, /* a change to the launch's command line: --verify applies it */
	DT_FIX_OUTSIDE,      /* chmod/chown/chattr, config.toml, a Landlock rule: printed only */
	DT_FIX_PROGRAM,      /* not the sandbox's doing: the program must change */
	DT_FIX_NONE,         /* no fix can be stated; why says why */
};

/* The sandbox the recorded command line starts (or that refused). */
enum dt_fix_sandbox {
	DT_SB_NONE,     /* nothing on the command line makes one */
	DT_SB_CODEX,    /* the Codex CLI (bubblewrap + seccomp inside) */
	DT_SB_BWRAP,    /* bubblewrap, on the command line */
	DT_SB_LANDLOCK, /* refusals look like Landlock's (EACCES on a rw mount, or EXDEV), or
	                 * a Landlock launcher is on the command line */
};

const char *dt_fix_kind_name(enum dt_fix_kind k);
const char *dt_fix_sandbox_name(enum dt_fix_sandbox s);

/* One finding, as far as its fix depends on it. */
struct dt_fix_problem {
	enum dt_cause cause;
	const struct dt_root *root;              /* the expected root, or NULL */
	int granted;                             /* of that root: 1, 0, -1 unknown */
	const char *subject;                     /* the path the fix names, or "" */
	const struct dt_record *const *refusals; /* one per group: op, errno, uid, stat facts */
	size_t nrefusals;
	const struct dt_record *proc; /* the first refusing process's record, or NULL */
	int claimed;                  /* the root is named only by the environment of a traced
	                               * process, not by the launch's: the program's choice */
	/* an intermittent finding: what separated its successes from its
	 * refusals (difference.h), or NULL; and how the path that fact is
	 * about is now (the caller stats it: this module stays pure) */
	const struct dt_difference *diff;
	struct {
		int known;
		uint32_t mode, uid, gid;
	} now;
	/* an immutable-file finding: the inode flags its subject carries now
	 * (the caller reads them), so that no chattr is proposed for a flag
	 * only the ring claims */
	struct {
		int known;
		uint32_t flags;
	} iflags_now;
};

/* The launch, from the ring's launch record. */
struct dt_fix_launch {
	const char *const *argv;
	size_t argc;
	int argv_trunc;
	const char *cwd;
	const struct dt_rootset *rs; /* the roots as the report derived them */
	int rs_claimed;              /* rs read Codex's list from a launch record that is not
	                              * this launch (the traced program's): no Codex -c is
	                              * built from it */
};

struct dt_fix {
	enum dt_fix_kind kind;
	enum dt_fix_sandbox sandbox;
	char *change; /* one line: what to change */
	char **copy;  /* lines to copy: flags, config.toml lines, commands */
	size_t ncopy;
	char *why;      /* why this is enough and no wider, or why there is none */
	char *launcher; /* which setting of a launcher (Hermes, hcom) produces the
	                 * flags, or NULL */
	char **grants;  /* the directories the change makes writable */
	size_t ngrants;
	int claimed;     /* its root is the traced program's claim: shown, never applied
	                  * to the command line --verify runs */
	int candidate;   /* no expected root: the grant is the narrowest directory the
	                  * refusals needed, offered for the user to confirm */
	char *no_verify; /* why --verify cannot prove this fix, or NULL when it can */
	/* a mode, owner or inode flag change on disk, as data: --verify carries
	 * it out on an overlay of the directory in a private mount namespace
	 * (fixrun.h) */
	struct {
		char *path;            /* the file or directory to change, or NULL: none */
		long mode;             /* its new permission bits, or -1 */
		long uid;              /* its new owner, or -1 */
		unsigned clear_iflags; /* inode flags (FS_*_FL) to clear, or 0 */
	} disk;
	/* a Landlock rule as data, for a launcher's --rule on the command
	 * line (argv.c): beneath each of dirs, the rights ("MAKE_REG|REFER") */
	struct {
		char *dirs[2];
		size_t ndirs;
		char *rights;
		int abi; /* the Landlock ABI those rights need */
	} landlock;
};

struct dt_fix_plan {
	struct dt_fix *fixes; /* one per problem, in their order */
	size_t n;
	enum dt_fix_sandbox sandbox; /* the launch's */
	char **argv;                 /* the launch's argv with every command-line fix applied,
	                              * NULL-terminated; NULL when no fix is a command-line one */
	size_t argc;
	char *no_rewrite;  /* why the command line could not be rewritten, or NULL */
	int argv_for_disk; /* argv is the launch unchanged, there only for the mode or
	                    * owner changes --verify makes on an overlay */
};

/* Works out every problem's fix, and the one command line that applies
 * all the command-line fixes together (one Codex -c holds every root).
 * Returns 0. */
int dt_fix_plan_build(const struct dt_fix_problem *p, size_t n, const struct dt_fix_launch *l,
                      struct dt_fix_plan *out);
void dt_fix_plan_free(struct dt_fix_plan *plan);

/* Why no fix may make dir writable or hand it to another owner, in a
 * sentence, or NULL when it may: /, a system directory (and what is in
 * /etc, /usr, /bin, /sbin, /lib*, /boot, /dev, /proc, /sys, /root), a home
 * directory itself, a directory holding the launch's directory or its
 * workspace, another user's home, a file with more than one hard link.
 * Checked on the path and on what it resolves to. buf (cap bytes) holds
 * the sentence. */
const char *dt_fix_forbidden(const char *dir, const struct dt_fix_launch *l, char *buf, size_t cap);

/* ---- rewriting command lines (exported for the unit tests) ---- */

/* A command line being rewritten: malloc'ed words, v[n] == NULL. */
struct dt_argv {
	char **v;
	size_t n;
};
void dt_argv_copy(struct dt_argv *a, const char *const *argv, size_t argc);
void dt_argv_free(struct dt_argv *a);

/* Index of the bwrap (basename "bwrap"), Codex or Landlock launcher
 * (basename "landlock-run": --rule PATH=RIGHTS, --abi N) program in argv,
 * after any wrapper words (timeout, env, nice ...); -1 when there is none. */
long dt_argv_find_bwrap(const char *const *argv, size_t argc);
long dt_argv_find_codex(const char *const *argv, size_t argc);
long dt_argv_find_landlock(const char *const *argv, size_t argc);

/* Adds --rule DIR=RIGHTS for each of dirs to the Landlock launcher's
 * command line whose program is a->v[at], and raises its --abi to abi
 * when lower (a ruleset for ABI 1 can never grant REFER). */
void dt_landlock_add_rules(struct dt_argv *a, size_t at, char *const *dirs, size_t ndirs,
                           const char *rights, int abi);

/* The host directory the bwrap command line whose program is a->v[at]
 * shows at dir (through the mount that decides about it), malloc'ed, or
 * NULL when the command line cannot be read. */
char *dt_bwrap_host_path(const struct dt_argv *a, size_t at, const char *dir);

/* The host paths the bwrap command line argv makes writable (the sources
 * of its writable binds), into out (cap of them, borrowed). Returns their
 * number, or -1 when argv[0] is not bwrap or the command line writes host
 * places it does not name (--bind-fd, --overlay) or cannot be read. */
int dt_bwrap_writable_sources(const char *const *argv, size_t argc, const char **out, size_t cap);

/* Makes dir writable in the bwrap command line whose program is
 * a->v[at]: a --ro-bind (or -try) whose destination is dir becomes a
 * --bind; otherwise --bind SRC dir goes right after the last mount whose
 * destination contains dir (so sub-mounts bound later stay on top), SRC
 * being dir as that mount maps it from the host. what (cap bytes) says
 * the change. Returns 0, 1 when dir is writable already (nothing to
 * change), -1 when the command line cannot be read (what says why). */
int dt_bwrap_grant(struct dt_argv *a, size_t at, const char *dir, char *what, size_t cap);

/* Sets Codex's writable_roots in the Codex command line whose program is
 * a->v[at]: every -c sandbox_workspace_write.writable_roots=... is removed
 * and one holding roots goes after the last -c left (else right after the
 * program), so that it applies last; with workspace_write, a -c
 * sandbox_mode="workspace-write" goes with it. Returns 0, -1 when Codex
 * would refuse the command line (what says why). */
int dt_codex_set_roots(struct dt_argv *a, size_t at, const char *const *roots, size_t nroots,
                       int workspace_write, char *what, size_t cap);

/* The value of the -c that sets roots: writable_roots=["/a","/b"]. */
char *dt_codex_roots_value(const char *const *roots, size_t nroots);

#endif
