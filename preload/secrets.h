/* SPDX-License-Identifier: MIT */
/*
 * Secrets: which names and values must never reach a ring or a bundle.
 * One module for every writer of argv and environment (the probe's process
 * records, `run`'s launch records, the seccomp supervisor's exec records)
 * and for `evidence --redact`. Safe in the probe: no allocation, no stdio,
 * no locale, no locks; it runs only when a process record is written, never
 * on the hot path.
 *
 * What counts as a secret:
 *  - a variable whose name holds KEY, TOKEN, SECRET, PASS (PASSWORD, PASSWD,
 *    PASSPHRASE), CREDENTIAL, AUTH, COOKIE or PRIVATE anywhere, or PAT or PW
 *    as a word between '_', '-' or '.' (HCOM_PAT; not PATH): dropped whole;
 *  - an argv word NAME=VALUE with such a NAME (`env OPENAI_API_KEY=...`);
 *  - the value of an option whose name has such a word (`--password=x`,
 *    `--token x`, `--api-key=x`; words, so that `--bypass-...` is not one);
 *  - the password in a URL's userinfo (`postgres://user:pw@host`);
 *  - the word after `Bearer ` or `Basic ` (an Authorization header);
 *  - a token-shaped word anywhere (sk-..., ghp_..., github_pat_...,
 *    xox?-..., AKIA..., glpat-..., npm_..., hf_..., sk_live_...), and a
 *    JSON Web Token (eyJ....eyJ....SIG);
 *  - the value of a header or colon pair whose name says secret
 *    (`X-Api-Key: ...`, `Cookie: ...`, `password:PW`);
 *  - the password of USER:PASSWORD after -u/--user (curl);
 *  - -p's value (`-p PW`, `-pPW`) once argv has named a program whose -p
 *    is a password (mysql and its tools, mariadb, sshpass), not mkdir's;
 *  - a webhook URL's path (hooks.HOST, /hooks/, /webhooks/) and the value
 *    of a query parameter whose name says secret (?key=, &sig=).
 * Each is replaced by DT_REDACTED. evidence --redact also replaces runs of
 * 32+ letters and digits mixed (dt_secret_span), which may be a hash or a
 * path segment: too blunt for the records reports derive roots from.
 */
#ifndef DENYTRACE_SECRETS_H
#define DENYTRACE_SECRETS_H

#include <stddef.h>

#include "ring.h"

#define DT_REDACTED "<redacted>"

/* An environment variable's name (n bytes) that says it holds a secret. */
int dt_secret_env_name(const char *name, size_t n);

/* Length of the token-shaped word starting at s[0] (a known prefix, or 32+
 * letters and digits mixed), else 0. prev is the character before s (0 at
 * the start): a token starts a word. */
size_t dt_secret_span(const char *s, size_t avail, int prev);

/* in (n bytes) into out (cap bytes) with the secrets inside a value
 * replaced: URL passwords, Bearer/Basic credentials, prefixed tokens.
 * Returns the length of the whole result; when it exceeds cap, out holds
 * only its first cap bytes. Never NUL-terminates. */
size_t dt_redact_value(const char *in, size_t n, char *out, size_t cap);

/* One argv word, as dt_redact_value plus the NAME=VALUE and option rules.
 * *expect carries "the previous word was a secret option awaiting its
 * value" from one word to the next; start it at 0. */
size_t dt_redact_arg(const char *in, size_t n, char *out, size_t cap, int *expect);

/* An environment entry "NAME=VALUE" (n bytes): 0 when it must be dropped
 * (a secret name), else writes NAME=redacted value like dt_redact_value. */
size_t dt_redact_env(const char *entry, size_t n, char *out, size_t cap);

/* A TOML file (Codex's config.toml as `denytrace codex` recorded it):
 * the values of the keys denytrace reads (sandbox mode, writable roots,
 * permission profiles, project trust, MCP servers' commands and the
 * probe's variables in their env) are kept, through dt_redact_value;
 * every other value becomes "<redacted>" (a multi-line one whole; inline
 * tables entry by entry); table headers and key names stay; comments go.
 * The result is TOML again. Returns and bounds as dt_redact_value. */
size_t dt_redact_config_text(const char *in, size_t n, char *out, size_t cap);

/* Record fields: DT_T_ARGV from NUL-separated words (n bytes, each word
 * redacted; cut at a word when the record is full: returns 1 then, else
 * 0), and one DT_T_ENV entry (nothing when its name is a secret). */
int dt_put_argv_redacted(struct dt_buf *b, const char *words, size_t n);
void dt_put_env_redacted(struct dt_buf *b, const char *entry, size_t n);

#endif
