// SPDX-License-Identifier: MIT
/* Asking a Codex binary about itself (codex_binary.h). */

#include "codex_binary.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exitcodes.h"
#include "spawn.h"

/* node starts the npm package's shim, which starts the native binary */
enum { CODEX_ASK_TIMEOUT_MS = 30000 };

static int find_binary(const char *bin, char *path, size_t cap, char *err, size_t errlen)
{
	if (!strchr(bin, '/')) {
		if (dt_which(bin, path, cap) == 0)
			return 0;
		snprintf(err, errlen, "--codex %s: no such program on PATH", bin);
		return DT_EXIT_NOTFOUND;
	}
	snprintf(path, cap, "%s", bin);
	if (access(path, X_OK) == 0)
		return 0;
	snprintf(err, errlen, "--codex %s: %s", bin, strerror(errno));
	return errno == ENOENT ? DT_EXIT_NOTFOUND : DT_EXIT_NOEXEC;
}

int dt_codex_binary_version(const char *bin, char *out, size_t cap, char *err, size_t errlen)
{
	char path[PATH_MAX], errout[512] = "";
	int rc = find_binary(bin, path, sizeof(path), err, errlen);
	const char *argv[] = {path, "--version", NULL};

	if (rc)
		return rc;
	rc = dt_capture(argv, NULL, CODEX_ASK_TIMEOUT_MS, out, cap, errout, sizeof(errout));
	out[strcspn(out, "\r\n")] = 0;
	errout[strcspn(errout, "\r\n")] = 0;
	if (rc == 0 && out[0])
		return 0;
	snprintf(err, errlen, "--codex %s: `%s --version` %s%s%s", bin, path,
	         rc == -2   ? "timed out"
	         : rc == -1 ? "could not be started"
	                    : "failed",
	         errout[0] ? ": " : "", errout);
	return DT_EXIT_NOEXEC;
}
