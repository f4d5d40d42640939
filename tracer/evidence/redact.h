/* SPDX-License-Identifier: MIT */
/*
 * What may leave the machine in an evidence bundle: secrets recognised in
 * environment entries and text, the user's home and name replaced, and
 * Codex's config.toml reduced to what decides the sandbox.
 */
#ifndef DENYTRACE_REDACT_H
#define DENYTRACE_REDACT_H

#include <stddef.h>

#include "secrets.h"

/* Secrets (the rules: preload/secrets.h, shared with the probe). A
 * variable is a secret when its name says so (dt_secret_env_name) or its
 * value holds a token-shaped word (dt_secret_span). entry is "NAME=VALUE". */
int dt_env_is_secret(const char *entry);

/* Replacements applied to the final text of every file of a bundle. */
struct dt_redact_rule {
	char *from;
	const char *to;
	int word; /* user name: only where not inside a longer word */
};
struct dt_redaction {
	struct dt_redact_rule *v;
	size_t n, cap;
	char kept[512]; /* names not redacted (system accounts), for the note */
};
/* The home directory (and its realpath) becomes "~"; "/" is ignored. */
void dt_redact_home(struct dt_redaction *rd, const char *home);
/* The user name becomes "<user>" wherever it stands as a word. System
 * accounts (root, uid below 1000, nobody) name nobody and are kept. */
void dt_redact_user(struct dt_redaction *rd, const char *name);
/* Home rules (longest first), then user names, then token-shaped words
 * ("<redacted>"). Returns a malloc'ed NUL-terminated copy, length in
 * *outlen. */
char *dt_redact_apply(const struct dt_redaction *rd, const char *in, size_t len, size_t *outlen);
void dt_redaction_free(struct dt_redaction *rd);

/* Codex's config.toml reduced to what decides the sandbox: sandbox_mode and
 * default_permissions lines (with the header of the table they sit in),
 * [permissions...] and [sandbox_workspace_write] tables with their keys
 * (multi-line arrays kept whole), dotted keys under those names. Comments
 * and everything else dropped. Returns malloc'ed text ("" when none). */
char *dt_codex_config_excerpt(const char *text);

struct dt_report;
/* Strings the redacted records point to, freed with the report. */
struct dt_strpool {
	char **v;
	size_t n, cap;
};
void dt_strpool_free(struct dt_strpool *p);
/* The home directories and user names of this user and of every process
 * in the report's rings, into rd. */
void dt_redact_collect(struct dt_redaction *rd, const struct dt_report *r);
/* The argv, environment and recorded config files of every record through
 * the probe's rules, the new strings kept in p. */
void dt_redact_records(struct dt_report *r, struct dt_strpool *p);

#endif
