/* SPDX-License-Identifier: MIT */
/*
 * The writable roots a launch was expected to get, each with where it came
 * from, and the roots the sandbox actually granted (the writable mounts the
 * probe saw from inside). Plain data in, plain data out: classification and
 * output live elsewhere.
 */
#ifndef DENYTRACE_ROOTS_H
#define DENYTRACE_ROOTS_H

#include <stddef.h>

#include "records.h"

enum dt_root_kind {
	DT_ROOT_EXPLICIT,  /* --root DIR */
	DT_ROOT_EFFECTIVE, /* a writable mount seen inside the sandbox */
	DT_ROOT_CODEX,     /* derived from Codex's argv and config.toml */
	DT_ROOT_HERMES,    /* HERMES_KANBAN_DB / _ROOT / HERMES_HOME / _WORKSPACE */
	DT_ROOT_HCOM,      /* HCOM_DIR or ~/.hcom */
};

struct dt_root {
	char *path;       /* absolute, lexically normalised, no trailing slash */
	char *realpath;   /* as resolved on this machine now; NULL if it does not exist */
	char *source;     /* human-readable provenance: "codex --add-dir",
			   * "HERMES_KANBAN_DB=/x/kanban.db", "config.toml
			   * [sandbox_workspace_write] writable_roots", "--root",
			   * "writable mount (pid 123)" ... */
	char *knob;       /* how a user grants it, for advice, e.g.
			   * "codex --add-dir /x" or "writable_roots in
			   * ~/.codex/config.toml"; NULL when not applicable */
	enum dt_root_kind kind;
	int granted;      /* 1 yes, 0 no, -1 unknown (no sandbox facts) */
	char *dropped_by; /* set when an override removed it, e.g.
			   * "-c sandbox_workspace_write.writable_roots=[\"/a\"]" */
	int readonly_sub; /* 1 for a read-only subpath inside a root
			   * (.git, .codex, .agents, .aws; a ro sub-mount) */
};

struct dt_rootset {
	struct dt_root *v;
	size_t n, cap;
	/* Codex facts found while deriving, for the report and advice */
	char *codex_sandbox_mode;   /* "read-only", "workspace-write", ... or NULL */
	char *codex_config_path;    /* the config.toml read, or NULL */
	char *codex_override;       /* the -c writable_roots override text, or NULL */
	char **warnings;            /* messages worth showing (unreadable config...) */
	size_t nwarnings;
};

/* Adds a root (path is normalised and copied; duplicates of the same path
 * and kind are merged, keeping the first source). Returns the root. */
struct dt_root *dt_roots_add(struct dt_rootset *rs, const char *path, enum dt_root_kind kind,
			     const char *source, const char *knob);
void dt_roots_warn(struct dt_rootset *rs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void dt_rootset_free(struct dt_rootset *rs);

/* Codex: the workspace (cwd, or -C/--cd), /tmp and $TMPDIR in
 * workspace-write, --add-dir, [sandbox_workspace_write] writable_roots from
 * config.toml, and -c sandbox_workspace_write.writable_roots=[...] which
 * REPLACES the config's list (the dropped ones are added with dropped_by
 * set and granted 0); -s/--sandbox, -c sandbox_mode=..., --full-auto,
 * profiles (-p); and .git/.codex/.agents/.aws inside each root as
 * readonly_sub roots. argv is Codex's command line (argv[0] may be "codex",
 * a path ending in codex, or node running codex.js). config_path NULL means
 * $CODEX_HOME/config.toml, else $HOME/.codex/config.toml. Returns 0, or -1
 * with a message in err when config_path was given and cannot be parsed. */
struct dt_codex_launch {
	const char *const *argv;
	size_t argc;
	const char *cwd;
	const char *home;       /* HOME of that process */
	const char *codex_home; /* CODEX_HOME or NULL */
	const char *tmpdir;     /* TMPDIR or NULL */
};
int dt_roots_from_codex(struct dt_rootset *rs, const struct dt_codex_launch *l,
			const char *config_path, char *err, size_t errlen);

/* Is this argv a Codex invocation? (codex, codex-*, node .../codex.js) */
int dt_argv_is_codex(const char *const *argv, size_t argc);

/* Hermes and hcom roots from an environment (NAME=VALUE strings):
 * dirname($HERMES_KANBAN_DB), else $HERMES_KANBAN_ROOT, else
 * $HERMES_HOME/kanban; $HERMES_KANBAN_WORKSPACE; $HCOM_DIR, else
 * $HOME/.hcom when hcom is involved (any HCOM_* variable, or force_hcom). */
void dt_roots_from_env(struct dt_rootset *rs, const char *const *env, size_t nenv, int force_hcom);

/* Effective roots: the writable mounts of a process record, except
 * pseudo-filesystems (/proc, /sys, /dev and below, unless a real dir was
 * bound there). */
void dt_roots_from_mounts(struct dt_rootset *rs, const struct dt_record *proc);

/* Fills granted for every non-effective root from the process records:
 * 1 when some sandboxed process saw a writable mount at or above it and no
 * read-only mount between, 0 when a sandboxed process saw it read-only,
 * -1 when no process record says. A process is "sandboxed" when its "/"
 * mount is read-only. */
void dt_roots_mark_granted(struct dt_rootset *rs, const struct dt_record *const *procs, size_t n);

/* Longest root (by path, then by realpath) containing path; with
 * kinds_mask (bit per enum dt_root_kind) limiting which roots count.
 * readonly_sub roots are skipped unless want_readonly. NULL if none. */
const struct dt_root *dt_root_for_path(const struct dt_rootset *rs, const char *path,
				       unsigned kinds_mask, int want_readonly);

/* 1 when path equals root or lies beneath it (component-wise). */
int dt_path_under(const char *path, const char *root);

#define DT_EXPECTED_KINDS                                                                 \
	((1u << DT_ROOT_EXPLICIT) | (1u << DT_ROOT_CODEX) | (1u << DT_ROOT_HERMES) |      \
	 (1u << DT_ROOT_HCOM))

#endif
