/* SPDX-License-Identifier: MIT */
/* Which environment variables a record may carry: those that decide where a
 * worker may write, and never one whose name suggests a secret. Shared by
 * the probe (process records) and the CLI (launch records). Signal-safe. */
#ifndef DENYTRACE_ENVFILTER_H
#define DENYTRACE_ENVFILTER_H

#include <stddef.h>
#include <string.h>

static inline int dt_env_name_is_secret(const char *name, size_t n)
{
	static const char *const words[] = {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD",
					    "CREDENTIAL", "AUTH"};
	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		size_t wl = strlen(words[w]);
		for (size_t i = 0; i + wl <= n; i++) {
			size_t k = 0;
			while (k < wl && (name[i + k] & ~0x20) == words[w][k])
				k++;
			if (k == wl)
				return 1;
		}
	}
	return 0;
}

/* extra: DENYTRACE_ENV, a comma-separated list of further names. */
static inline int dt_env_name_is_wanted(const char *name, size_t n, const char *extra)
{
	static const char *const exact[] = {"HOME", "PWD", "TMPDIR", "SQLITE_TMPDIR", "USER",
					    "LD_PRELOAD", "XDG_DATA_HOME", "XDG_STATE_HOME",
					    "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"};
	static const char *const prefixes[] = {"CODEX_", "HERMES_", "HCOM_"};
	if (dt_env_name_is_secret(name, n))
		return 0;
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

#endif
