// SPDX-License-Identifier: MIT
/* Asking a Codex binary about itself (codex_binary.h). */

#include "codex_binary.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitcodes.h"
#include "roots_int.h"
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

/* ---- codex doctor --json: what Codex itself says is writable ------------- */

/* The JSON string at s (just past its opening quote), decoded enough for
 * paths; *end past its closing quote. */
static char *json_string(const char *s, const char **end)
{
	char *out = xrealloc(NULL, strlen(s) + 1), *o = out;

	for (; *s && *s != '"'; s++) {
		if (*s != '\\' || !s[1]) {
			*o++ = *s;
			continue;
		}
		s++;
		*o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
	}
	*o = 0;
	*end = *s ? s + 1 : s;
	return out;
}

char **dt_codex_doctor_write_paths(const char *json, size_t *n)
{
	const char *at = strstr(json, "\"sandbox.filesystem_paths\"");
	const char *stop = at ? strstr(at, "\"remediation\"") : NULL;
	struct strlist out = {0};

	*n = 0;
	/* "path 1": "DIR (write); path resolved ..." ("path 1 source" is not one) */
	while (at && (at = strstr(at, "\"path ")) && (!stop || at < stop)) {
		const char *p = at + 6, *end;
		char *val, *mark;

		while (*p >= '0' && *p <= '9')
			p++;
		at = p;
		if (strncmp(p, "\": \"", 4))
			continue;
		val = json_string(p + 4, &end);
		at = end;
		mark = strstr(val, " (write)");
		if (mark) {
			*mark = 0;
			if (!strlist_has(&out, val))
				strlist_push(&out, val);
		}
		free(val);
	}
	*n = out.n;
	return out.v;
}

/* Why Codex's answer would not be comparable with the model's list, or
 * NULL. */
static const char *readback_pointless(const struct dt_rootset *rs)
{
	if (rs->codex_refused)
		return "Codex would refuse this launch";
	if (rs->codex_permission_profile)
		return "a permission profile decides what is writable, and codex doctor lists only "
		       "writable_roots";
	if (!rs->codex_sandbox_mode || strcmp(rs->codex_sandbox_mode, "workspace-write"))
		return "the launch is not workspace-write: no writable_roots to compare";
	if (rs->codex_profile_path)
		return "codex doctor takes no --profile, so it cannot read this launch's -p layer";
	return NULL;
}

/* Only the -c flags that shape the writable paths reach Codex: what a
 * ring holds was written by the traced program. */
static bool readback_key(const struct dt_codex_override *o)
{
	return o->nkeys &&
	       (!strcmp(o->keys[0], "sandbox_workspace_write") || !strcmp(o->keys[0], "projects"));
}

/* `env -C CWD BIN doctor --json -c ... -c sandbox_mode="workspace-write"`:
 * malloc'ed, NULL-terminated; the strings are the launch's or static. */
static const char **readback_argv(const char *bin, const struct dt_codex_cli *cli, const char *cwd)
{
	const char **argv = xrealloc(NULL, (2 * cli->nov + 10) * sizeof(*argv));
	size_t n = 0;

	argv[n++] = "env";
	argv[n++] = "-C";
	argv[n++] = cwd;
	argv[n++] = bin;
	argv[n++] = "doctor";
	argv[n++] = "--json";
	for (size_t i = 0; i < cli->nov; i++)
		if (readback_key(&cli->ov[i])) {
			argv[n++] = "-c";
			argv[n++] = cli->ov[i].text + 3; /* past "-c " */
		}
	/* the mode the model found, whichever layer set it */
	argv[n++] = "-c";
	argv[n++] = "sandbox_mode=\"workspace-write\"";
	argv[n] = NULL;
	return argv;
}

static bool same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	return !strcmp(a, b) || (realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb));
}

static bool listed(char *const *v, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (same_dir(v[i], path))
			return true;
	return false;
}

/* Where the model's list came from: the source of its roots. */
static const char *model_layer(const struct dt_rootset *rs)
{
	for (size_t i = 0; rs->ncodex_list && i < rs->n; i++)
		if (rs->v[i].kind == DT_ROOT_CODEX && !strcmp(rs->v[i].path, rs->codex_list[0]))
			return rs->v[i].source;
	return "no writable_roots list";
}

static void disagree(struct dt_rootset *rs, char *line)
{
	rs->codex_disagree =
	    xrealloc(rs->codex_disagree, (rs->ncodex_disagree + 1) * sizeof(*rs->codex_disagree));
	rs->codex_disagree[rs->ncodex_disagree++] = line;
}

static void compare_readback(struct dt_rootset *rs)
{
	for (size_t i = 0; i < rs->ncodex_says; i++)
		if (!listed(rs->codex_list, rs->ncodex_list, rs->codex_says[i]))
			disagree(rs, xasprintf("Codex says %s is writable; the model's list (%s) "
			                       "does not have it",
			                       rs->codex_says[i], model_layer(rs)));
	for (size_t i = 0; i < rs->ncodex_list; i++)
		if (!listed(rs->codex_says, rs->ncodex_says, rs->codex_list[i]))
			disagree(rs,
			         xasprintf("the model lists %s as writable (%s); Codex does not",
			                   rs->codex_list[i], model_layer(rs)));
}

void dt_codex_readback(struct dt_rootset *rs, const char *bin, const struct dt_codex_launch *l)
{
	const char *why = readback_pointless(rs);
	struct dt_codex_cli cli = {0};
	char env_ch[PATH_MAX + 16], env_home[PATH_MAX + 16], err[1024] = "";
	size_t cap = 1 << 20;
	char *out;

	if (why || !nonempty(l->cwd)) {
		rs->codex_readback_why = xstrdup(why ? why : "the launch's cwd is not known");
		return;
	}
	dt_codex_cli_parse(NULL, &cli, l->argv, l->argc);
	const char **argv = readback_argv(bin, &cli, l->cwd);
	snprintf(env_ch, sizeof(env_ch), "%s%s",
	         nonempty(l->codex_home) ? "CODEX_HOME=" : "CODEX_HOME",
	         nonempty(l->codex_home) ? l->codex_home : "");
	snprintf(env_home, sizeof(env_home), "%s%s", nonempty(l->home) ? "HOME=" : "HOME",
	         nonempty(l->home) ? l->home : "");
	const char *env[] = {env_ch, env_home, NULL};
	out = xrealloc(NULL, cap);
	int st = dt_capture(argv, env, CODEX_ASK_TIMEOUT_MS, out, cap, err, sizeof(err));
	/* codex doctor exits 1 when some check (the network, say) fails */
	if ((st == 0 || st == 1) && strstr(out, "\"sandbox.filesystem_paths\"")) {
		rs->codex_readback = 1;
		rs->codex_says = dt_codex_doctor_write_paths(out, &rs->ncodex_says);
		compare_readback(rs);
	} else {
		err[strcspn(err, "\n")] = 0;
		rs->codex_readback = -1;
		rs->codex_readback_why = xasprintf("`%s doctor --json` %s%s%s", bin,
		                                   st == -2   ? "timed out"
		                                   : st == -1 ? "could not be started"
		                                              : "gave no sandbox check",
		                                   err[0] ? ": " : "", err);
	}
	free(out);
	free(argv);
	dt_codex_cli_free(&cli);
}
