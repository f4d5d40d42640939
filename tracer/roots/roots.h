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

#include "codex_mcp.h"
#include "records.h"
#include "toml.h"

enum dt_root_kind {
	DT_ROOT_EXPLICIT,  /* --root DIR */
	DT_ROOT_EFFECTIVE, /* a writable mount seen inside the sandbox */
	DT_ROOT_CODEX,     /* derived from Codex's argv and config.toml */
	DT_ROOT_HERMES,    /* HERMES_KANBAN_DB / _ROOT / HERMES_HOME / _WORKSPACE */
	DT_ROOT_HCOM,      /* HCOM_DIR or ~/.hcom */
};

struct dt_root {
	char *path;     /* absolute, lexically normalised, no trailing slash */
	char *realpath; /* as resolved on this machine now; NULL if it does not exist */
	char *source;   /* human-readable provenance: "codex --add-dir",
	                 * "HERMES_KANBAN_DB=/x/kanban.db", "config.toml
	                 * [sandbox_workspace_write] writable_roots", "--root",
	                 * "writable mount (pid 123)" ... */
	char *knob;     /* how a user grants it, for advice, e.g.
	                 * "codex --add-dir /x" or "writable_roots in
	                 * ~/.codex/config.toml"; NULL when not applicable */
	enum dt_root_kind kind;
	int granted;      /* 1 yes, 0 no, -1 unknown (no sandbox facts) */
	char *dropped_by; /* set when an override removed it, e.g.
	                   * "-c sandbox_workspace_write.writable_roots=[\"/a\"]" */
	int readonly_sub; /* 1 for a read-only subpath inside a root
	                   * (.git, .codex, .agents, .aws; a ro sub-mount) */
	char **also;      /* further sources that named the same path and kind */
	size_t nalso;
};

struct dt_rootset {
	struct dt_root *v;
	size_t n, cap;
	/* Codex facts found while deriving, for the report and advice */
	char *codex_sandbox_mode;  /* "read-only", "workspace-write", ... or NULL */
	char *codex_config_path;   /* the config.toml read, or NULL */
	int codex_config_recorded; /* it was read from the ring's snapshot (denytrace
	                            * codex), not from the file as it is now */
	char *codex_override;      /* the -c writable_roots override text, or NULL */
	char **codex_list;         /* the writable_roots list in effect (from the -c, the
	                            * -p layer or config.toml), resolved, in order; what a
	                            * new -c list must repeat (fix.c) */
	size_t ncodex_list;
	char *codex_profile_path;       /* the -p NAME layer ($CODEX_HOME/NAME.config.toml)
	                                 * read, or NULL */
	int codex_profile_recorded;     /* it was read from the ring's snapshot */
	char *codex_refused;            /* "Codex would refuse this command line: ..."
	                                 * (it starts nothing, so no Codex roots), or NULL */
	char *codex_permission_profile; /* -P NAME or default_permissions in effect */
	int codex_add_dir_ok;           /* the launch's subcommand takes --add-dir */
	const void *codex_record;       /* the ring's record (struct dt_record) the Codex
	                                 * roots were read from; NULL: --codex-args */
	const char *codex_version;      /* the Codex version modelled (a static
	                                 * string of dt_codex_versions), or NULL */
	/* what Codex itself said was writable (codex_binary.h,
	 * dt_codex_readback), beside the model's list */
	int codex_readback;       /* 1 asked and answered, 0 not asked, -1 failed */
	char *codex_readback_why; /* not asked or failed: why; else NULL */
	char **codex_says;        /* the paths codex doctor --json lists as (write) */
	size_t ncodex_says;
	char **codex_disagree; /* each disagreement with the model, in words */
	size_t ncodex_disagree;
	char **warnings; /* messages worth showing (unreadable config...) */
	size_t nwarnings;
	/* each MCP server of the Codex launch with the environment Codex
	 * gives it (codex_mcp.h), in config order */
	struct dt_mcp_server *mcp;
	size_t nmcp;
};

/* Adds a root (path is normalised and copied; duplicates of the same path
 * and kind are merged: the first source stays `source`, the others go to
 * `also`). Returns the root. */
struct dt_root *dt_roots_add(struct dt_rootset *rs, const char *path, enum dt_root_kind kind,
                             const char *source, const char *knob);
void dt_roots_warn(struct dt_rootset *rs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void dt_rootset_free(struct dt_rootset *rs);

/* A listing shows each path once: 1 when v[i] is the first root with its
 * path (and read-only-ness), the row that speaks for the others. */
int dt_root_is_row(const struct dt_rootset *rs, size_t i);
/* The sources of the row of v[i]: its own, those merged into it, those of
 * later roots with the same path, without repeats. Fills out (at most
 * max) and returns how many. */
size_t dt_root_sources(const struct dt_rootset *rs, size_t i, const char **out, size_t max);
/* The row's grant: of the first root of that path that is not an
 * effective one (1 when only writable mounts name it). */
int dt_root_row_granted(const struct dt_rootset *rs, size_t i);

/* The Codex versions the model was checked against (codex_versions.def),
 * oldest first. */
struct dt_codex_version {
	const char *name;      /* "0.171.0" */
	const char *published; /* "2026-11-20" */
};
extern const struct dt_codex_version dt_codex_versions[];
extern const size_t dt_ncodex_versions;
/* The version to model for what `codex --version` printed ("codex-cli
 * 0.171.0"): that one when known, else the newest known one older than
 * it (the oldest when it is older than all), with a sentence saying so in
 * note; NULL reported: the newest, no note. */
const struct dt_codex_version *dt_codex_version_pick(const char *reported, char *note, size_t cap);

/* 1 when CODEX_HOME (codex_home, relative ones against cwd) lies in the
 * temporary directory Codex sees ($TMPDIR when set, else /tmp), both
 * resolved through symlinks as Codex resolves them: Codex then refuses to
 * create its helper binaries ("Refusing to create helper binaries under
 * temporary dir", seen with 0.169 and 0.171) and `codex sandbox` cannot
 * start its sandbox helper. The temporary directory goes to tempdir. */
int dt_codex_home_in_tempdir(const char *codex_home, const char *tmpdir, const char *cwd,
                             char *tempdir, size_t cap);

/* Codex: the workspace (cwd, or -C/--cd), /tmp and $TMPDIR in
 * workspace-write, --add-dir, [sandbox_workspace_write] writable_roots from
 * config.toml, merged under the -p/--profile NAME layer
 * $CODEX_HOME/NAME.config.toml, merged under the -c overrides; a list set
 * in a higher layer (-c sandbox_workspace_write.writable_roots=[...], or the
 * layer's writable_roots) REPLACES the lower one's (the dropped ones are
 * added with dropped_by set and granted 0); -s/--sandbox, -c
 * sandbox_mode=..., --full-auto; and .git/.codex/.agents/.aws inside each
 * root as readonly_sub roots. argv is Codex's command line (argv[0] may be "codex",
 * a path ending in codex, or node running codex.js). config_path NULL means
 * the launch's config_snapshot when it has one, else $CODEX_HOME/config.toml,
 * else $HOME/.codex/config.toml. Returns 0; with a message in err, -1 when
 * config_path was given and is not a valid config (not TOML, not a regular
 * file), -2 when it is missing or unreadable. */
struct dt_codex_launch {
	const char *const *argv;
	size_t argc;
	const char *cwd;
	const char *home;       /* HOME of that process */
	const char *codex_home; /* CODEX_HOME or NULL */
	const char *tmpdir;     /* TMPDIR or NULL */
	/* what the Codex binary said its version was (`codex --version`, as
	 * `denytrace codex` recorded it or --codex PATH ran it), or NULL: the
	 * newest version of dt_codex_versions is modelled then */
	const char *codex_version;
	/* config.toml as `denytrace codex` recorded it at launch, preferred
	 * to reading the file now (it may have changed since); unused when
	 * config_path is given. */
	const struct dt_record *config_snapshot; /* a DT_REC_CONFIG, or NULL */
	/* the -p NAME layer as recorded at launch (a DT_REC_CONFIG whose
	 * cfg_profile is NAME), or NULL. `denytrace codex` records a layer
	 * only when it could read one, so with a config_snapshot and no
	 * profile_snapshot there was none at launch; with neither, the
	 * layer is read from disk. */
	const struct dt_record *profile_snapshot;
	/* the trusted project's layers as recorded at launch (DT_REC_CONFIG
	 * records with cfg_role "codex-project"), outermost first: with a
	 * config_snapshot these are the project layers, and none is read from
	 * disk */
	const struct dt_record *const *project_snapshots;
	size_t nproject_snapshots;
	/* the environment Codex starts with (NAME=VALUE; a record's, so only
	 * the variables that decide roots), for its MCP servers' */
	const char *const *env;
	size_t nenv;
};
int dt_roots_from_codex(struct dt_rootset *rs, const struct dt_codex_launch *l,
                        const char *config_path, char *err, size_t errlen);

/* One Codex -c KEY=VALUE as Codex 0.169 reads it: KEY is split at every
 * '.' (quotes are not special there, so no key segment can hold a '.'),
 * VALUE is parsed as TOML and, when that fails, taken as a string with
 * surrounding quotes stripped. */
struct dt_codex_override {
	char *text; /* "-c KEY=VALUE", for reports */
	char **keys;
	size_t nkeys;
	struct toml_value *parsed;
	struct toml_value literal; /* the string fallback, when parsed is NULL */
	size_t argi, argn;         /* its words in argv: argv[argi], argn of them (1 or 2) */
};
const struct toml_value *dt_codex_override_value(const struct dt_codex_override *o);

/* Codex's own options in its argv (up to "--" or, under `codex sandbox`,
 * the sandboxed command), as codex_options.def says each command line
 * takes them. */
struct dt_codex_cli {
	const char *cd;        /* -C/--cd */
	const char *cd_text;   /* as written, for the source */
	const char **add_dirs; /* --add-dir, in order */
	size_t nadd;
	const char *mode;             /* from -s or --dangerously-... (the bypass wins) */
	const char *sflag;            /* -s/--sandbox */
	int bypass;                   /* --dangerously-bypass-approvals-and-sandbox, --yolo */
	const char *profile;          /* -p/--profile */
	const char *perm_profile;     /* -P/--permission-profile (codex sandbox) */
	const char *perm_text;        /* "-P" or "--permission-profile", as written */
	struct dt_codex_override *ov; /* -c/--config, in order */
	size_t nov;
	size_t args_start;      /* index of Codex's first own argument */
	size_t config_end;      /* index just past the last -c and its value; 0: none */
	const char *subcommand; /* "sandbox", "exec", ... as written, or NULL */
	int sandbox_cmd;        /* `codex sandbox`: takes sandbox_mode from -c only */
	int add_dir_ok;         /* the command line may take --add-dir (not sandbox,
	                         * not app-server) */
	char *refused;          /* why Codex would not start with this command
	                         * line (an option its subcommand rejects, -c without
	                         * '=', ...), or NULL */
	const struct dt_codex_version *version; /* set before parsing: the version
	                                         * whose options count; NULL: the newest */
};
/* Fills c from argv; rs (may be NULL) receives warnings. Free with
 * dt_codex_cli_free (which keeps c->version). */
void dt_codex_cli_parse(struct dt_rootset *rs, struct dt_codex_cli *c, const char *const *argv,
                        size_t argc);
void dt_codex_cli_free(struct dt_codex_cli *c);

/* The value Codex sees at keys: the -c overrides (cli) form one layer in
 * argv order, where an override replaces whatever earlier ones set at its
 * key (a table value wipes their leaves below it); that layer is merged key
 * by key over the files, files[nfiles - 1] over the one before it and so
 * on (config.toml first, then the -p layer, then the project layers; NULL
 * entries are files not read). *from is the override that decided, *file
 * the index of the file that did, else -1 (either may be NULL). Meant for
 * leaves; NULL when nothing sets keys. */
const struct toml_value *dt_codex_lookup(const struct dt_codex_cli *cli,
                                         const struct toml_value *const *files, size_t nfiles,
                                         const char *const *keys, size_t nkeys,
                                         const struct dt_codex_override **from, int *file);

/* The project layers Codex 0.169 and 0.171 read for a launch whose
 * workspace is workspace: DIR/.codex/config.toml for every DIR from the
 * project root (the top of the git repository around the workspace, else
 * the workspace) down to the workspace, where DIR is trusted: its own
 * [projects."DIR"] trust_level, else the repository top's, is "trusted"
 * (in config.toml, the -p layer or a -c: files, nfiles, cli as for
 * dt_codex_lookup; a project layer cannot trust itself). Fills paths
 * (malloc'ed, outermost first, at most max) with those that exist; returns
 * how many. */
size_t dt_codex_project_layers(const struct dt_codex_cli *cli,
                               const struct toml_value *const *files, size_t nfiles,
                               const char *workspace, char **paths, size_t max);

/* How the launch in rs can make dir writable, in words for advice: never
 * a flag its subcommand rejects (codex sandbox takes no --add-dir). */
void dt_codex_grant_hint(const struct dt_rootset *rs, const char *dir, char *out, size_t cap);

/* Is this argv a Codex invocation? (codex, codex-*, node .../codex.js) */
int dt_argv_is_codex(const char *const *argv, size_t argc);

/* Hermes and hcom roots from an environment (NAME=VALUE strings):
 * dirname($HERMES_KANBAN_DB), else $HERMES_KANBAN_ROOT, else
 * $HERMES_HOME/kanban; $HERMES_KANBAN_WORKSPACE; $HCOM_DIR, else
 * $HOME/.hcom when hcom is involved (any HCOM_* variable, or force_hcom). */
void dt_roots_from_env(struct dt_rootset *rs, const char *const *env, size_t nenv, int force_hcom);

/* The board database Hermes opens in environment env (the rules above
 * dt_roots_from_env), with the rule that gave it in *why (malloc'ed);
 * NULL when it needs HOME and env has none. */
char *dt_hermes_board(const char *const *env, size_t nenv, char **why);
/* The database hcom opens in env: $HCOM_DIR/hcom.db, else
 * $HOME/.hcom/hcom.db, with the rule in *why (malloc'ed); NULL when it
 * cannot tell (no HOME, a relative HCOM_DIR without PWD). */
char *dt_hcom_db(const char *const *env, size_t nenv, char **why);

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

#define DT_EXPECTED_KINDS                                                                          \
	((1u << DT_ROOT_EXPLICIT) | (1u << DT_ROOT_CODEX) | (1u << DT_ROOT_HERMES) |               \
	 (1u << DT_ROOT_HCOM))

#endif
