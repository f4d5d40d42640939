/* SPDX-License-Identifier: MIT */
/* Lexical path normalising, compiled into the probe and into the CLI: the
 * probe's abspath, the supervisor's paths and the roots are folded the same
 * way, so they compare equal. No libc beyond memcpy: the probe calls it on
 * the recording path. */
#include "pathnorm.h"

size_t dt_normalize(char *out, size_t cap, const char *base, const char *path)
{
	size_t len = 0;
	if (cap < 2)
		return 0;
	out[0] = 0;
	const char *parts[2] = {path[0] == '/' ? NULL : base, path};
	for (int i = 0; i < 2; i++) {
		const char *p = parts[i];
		if (!p)
			continue;
		while (*p) {
			while (*p == '/')
				p++;
			const char *s = p;
			while (*p && *p != '/')
				p++;
			size_t n = (size_t)(p - s);
			if (n == 0 || (n == 1 && s[0] == '.'))
				continue;
			if (n == 2 && s[0] == '.' && s[1] == '.') {
				while (len > 0 && out[len - 1] != '/')
					len--;
				if (len > 0)
					len--; /* the slash itself */
				out[len] = 0;
				continue;
			}
			if (len + 1 + n + 1 > cap)
				return 0;
			out[len++] = '/';
			__builtin_memcpy(out + len, s, n);
			len += n;
			out[len] = 0;
		}
	}
	if (len == 0) {
		out[0] = '/';
		out[1] = 0;
		len = 1;
	}
	return len;
}
