/* SPDX-License-Identifier: MIT */
/* Which environment variables a record may carry: those that decide where a
 * worker may write, and never one whose name suggests a secret (secrets.h).
 * Shared by the probe (process records) and the CLI (launch and exec
 * records). Signal-safe. */
#ifndef DENYTRACE_ENVFILTER_H
#define DENYTRACE_ENVFILTER_H

#include <stddef.h>
#include <string.h>

#include "secrets.h"

/* Whether the name is one of those, secrets aside. */
static inline int dt_env_name_is_listed(const char *name, size_t n, const char *extra)
{
	static const char *const exact[] = {
	    "HOME",       "PWD",           "TMPDIR",         "SQLITE_TMPDIR",   "USER",
	    "LD_PRELOAD", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"};
	static const char *const prefixes[] = {"CODEX_", "HERMES_", "HCOM_"};
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strlen(exact[i]) == n && !memcmp(exact[i], name, n))
			return 1;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (n >= strlen(prefixes[i]) && !memcmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	for (const char *s = extra ? extra : ""; *s;) {
		const char *e = s;
		while (*e && *e != ',')
			e++;
		if ((size_t)(e - s) == n && !memcmp(s, name, n))
			return 1;
		s = *e ? e + 1 : e;
	}
	return 0;
}

/* extra: DENYTRACE_ENV, a comma-separated list of further names. The
 * secret check last: it is the dear one (most of `denytrace run`'s own
 * instructions), and most names are not listed anyway. */
static inline int dt_env_name_is_wanted(const char *name, size_t n, const char *extra)
{
	return dt_env_name_is_listed(name, n, extra) && !dt_secret_env_name(name, n);
}

#endif
