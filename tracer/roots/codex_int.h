/* SPDX-License-Identifier: MIT */
/* Internal to roots_codex.c and codex_config.c: Codex's configuration as
 * Codex 0.169 merges it (codex_config.c), which the Codex roots read. */
#ifndef DENYTRACE_CODEX_INT_H
#define DENYTRACE_CODEX_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "roots_int.h"

/*
 * Codex 0.169 and 0.171 read config.toml, then the -p/--profile NAME layer
 * $CODEX_HOME/NAME.config.toml merged over it key by key, then the project
 * layers DIR/.codex/config.toml of a trusted project (codex_project_layers),
 * outermost first, then one layer built from every -c in argv order, each
 * merged over the ones below key by key. Within that -c layer a dotted key
 * sets one leaf, and a value (a table included) replaces whatever earlier
 * -c flags put at its key: `-c sandbox_workspace_write={network_access=true}`
 * after a -c writable_roots list wipes the list, and config.toml's list
 * applies again. Seen with the binaries (tracer/roots/codex_shapes.def):
 * relative paths in a file are taken against the file's directory
 * ($CODEX_HOME, DIR/.codex), those of -c against the cwd; -p with no such
 * file runs without a layer.
 */
enum {
	CODEX_FILE_CONFIG,  /* config.toml */
	CODEX_FILE_PROFILE, /* the -p layer */
	CODEX_FILE_PROJECT, /* the first project layer, the others after it */
	CODEX_MAX_FILES = CODEX_FILE_PROJECT + 16,
	CODEX_RANK_C = CODEX_MAX_FILES + 1, /* codex_cfg_rank of a -c */
};
struct codex_cfg {
	struct toml_value *v[CODEX_MAX_FILES]; /* lowest first; NULL where none was read */
	char *path[CODEX_MAX_FILES];
	size_t n; /* CODEX_FILE_PROJECT + the project layers */
	const struct dt_codex_cli *cli;
};

const struct toml_value *codex_walk(const struct toml_value *v, const char *const *keys,
                                    size_t nkeys);
const struct toml_value *codex_override_at(const struct dt_codex_override *o,
                                           const char *const *keys, size_t nkeys);
const struct dt_codex_override *codex_replaced_by(const struct dt_codex_cli *cli, size_t i,
                                                  const char *const *keys, size_t nkeys);
const struct toml_value *codex_cfg_get(const struct codex_cfg *c, const char *const *keys,
                                       size_t nkeys, const struct dt_codex_override **from,
                                       int *file);
int codex_cfg_rank(const struct codex_cfg *c, const char *const *keys, size_t nkeys,
                   const struct toml_value **v, const char **where);
void codex_refuse(struct dt_rootset *rs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void codex_warn_tempdir_home(struct dt_rootset *rs, const struct dt_codex_launch *l);
bool codex_cfg_bool(const struct codex_cfg *c, const char *key);
bool codex_known_mode(const char *m);
void codex_validate_cfg(struct dt_rootset *rs, const struct codex_cfg *c);
bool codex_project_has_trust(const struct codex_cfg *c, const char *workspace);
void codex_profile(struct dt_rootset *rs, struct codex_cfg *cfg, const struct dt_codex_launch *l,
                   bool ring_launch);
void codex_project_layers(struct dt_rootset *rs, struct codex_cfg *cfg,
                          const struct dt_codex_launch *l, bool ring_launch, const char *workspace);
void codex_cfg_free(struct codex_cfg *cfg);
/* rs->mcp from the merged configuration and l->env (codex_mcp.c); a
 * server no layer gives a command or url is Codex's refusal */
void codex_mcp_model(struct dt_rootset *rs, const struct codex_cfg *c,
                     const struct dt_codex_launch *l);
struct toml_value *codex_load_config(struct dt_rootset *rs, const struct dt_codex_launch *l,
                                     const char *config_path, char **path, bool *from_ring,
                                     char *err, size_t errlen, int *rc);

#endif
