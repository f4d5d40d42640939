/* SPDX-License-Identifier: MIT */
/* What `denytrace codex` settles before Codex starts: which Codex, the
 * configuration layers it will read (snapshotted into the ring), and its
 * command line with the overrides that carry the probe. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "codex_launch.h"
#include "recfmt.h"
#include "safeopen.h"
#include "secrets.h"
#include "xalloc.h"

/* The Codex CLI to run, as an absolute path (not resolved through symlinks:
 * npm's bin/codex must keep its name for the report to know it). */
int dt_codex_find(const char *given, char *out, size_t cap)
{
	const char *name = given && *given ? given : getenv("DENYTRACE_CODEX");
	if (!name || !*name)
		name = "codex";
	if (strchr(name, '/')) {
		char cwd[PATH_MAX];
		if (name[0] == '/' || !getcwd(cwd, sizeof(cwd)))
			snprintf(out, cap, "%s", name);
		else
			snprintf(out, cap, "%s/%s", cwd, name);
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	const char *path = getenv("PATH");
	int err = -ENOENT;
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n) {
			snprintf(out, cap, "%.*s/%s", (int)n, p, name);
			struct stat st;
			if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
				if (access(out, X_OK) == 0)
					return 0;
				err = -EACCES;
			}
		}
		p += n + (e != NULL);
	}
	snprintf(out, cap, "%s", name);
	return err;
}

/* A configuration file as it is now: its bytes, or NULL and *err. */
static char *codex_slurp(const char *path, size_t *len, int *err)
{
	*len = 0;
	*err = 0;
	/* CODEX_HOME may be the traced program's to write: a FIFO there
	 * must not hang the launch */
	struct stat st;
	int fd = dt_open_regular(path, &st);
	if (fd < 0) {
		*err = fd == DT_OPEN_NOT_REGULAR ? (S_ISDIR(st.st_mode) ? EISDIR : EINVAL) : errno;
		return NULL;
	}
	if (st.st_size > TOML_MAX_INPUT) {
		*err = EFBIG;
		close(fd);
		return NULL;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t n = 0;
	while (buf && n < (size_t)st.st_size) {
		ssize_t got = read(fd, buf + n, (size_t)st.st_size - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (!buf) {
		*err = ENOMEM;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

static void codex_config_load(struct dt_codex_layer *c, int quiet)
{
	c->text = codex_slurp(c->path, &c->len, &c->err);
	if (!c->text && c->err == EINVAL && !quiet)
		fprintf(
		    stderr,
		    "denytrace: %s is not a regular file (a FIFO or a device): not read, so its "
		    "MCP servers get no probe\n",
		    c->path);
	if (!c->text)
		return;
	char terr[512];
	c->parsed = toml_parse(c->text, c->len, terr, sizeof(terr));
	if (!c->parsed && !quiet)
		fprintf(stderr,
		        "denytrace: %s: %s; its MCP servers are not known, and get no probe\n",
		        c->path, terr);
}

/* The snapshot's digest, for the launch file: the ring's copy is where the
 * traced program can hide it and append its own. */
static void codex_config_bind(struct dt_run_ring *rr, const unsigned char *rec, uint32_t len)
{
	struct dt_record d;
	if (rr->nconfigs >= DT_LAUNCH_CONFIGS_MAX || dt_record_decode(rec, len, 0, &d) != 0)
		return;
	dt_launch_config_digest(&d, rr->configs[rr->nconfigs++]);
	dt_record_free(&d);
}

/* The snapshot: as much of the file as one record holds, cut at a line
 * end when it does not fit, and marked so. */
void dt_codex_layer_record(struct dt_run_ring *rr, const struct dt_codex_layer *c,
                           const char *version)
{
	uint32_t cap = DT_REC_MAX;
	/* the ring refuses a record over a quarter of its slots */
	if ((uint64_t)(rr->ring.nslots / 4) * DT_SLOT_DATA < cap)
		cap = (uint32_t)(rr->ring.nslots / 4) * DT_SLOT_DATA;
	unsigned char *rec = calloc(1, DT_REC_MAX);
	if (!rec)
		return;
	struct dt_buf b;
	dt_run_record_begin(&b, rec, cap, DT_REC_CONFIG);
	/* "codex-project": reports that read only "codex" records keep
	 * reading what they did */
	dt_put_str(&b, DT_T_CONFIG_ROLE, c->project ? "codex-project" : "codex");
	dt_put_str(&b, DT_T_CONFIG_PATH, c->path);
	if (c->profile)
		dt_put_str(&b, DT_T_CONFIG_PROFILE, c->profile);
	else if (version)
		dt_put_str(&b, DT_T_CONFIG_VERSION, version);
	/* MCP servers' env keys, provider headers, passwords in URLs: never
	 * into the ring (the sandbox settings the report reads stay) */
	size_t rlen = c->text ? dt_redact_config_text(c->text, c->len, NULL, 0) : 0;
	char *red = c->text ? malloc(rlen + 1) : NULL;
	if (red) {
		dt_redact_config_text(c->text, c->len, red, rlen);
		red[rlen] = 0;
	}
	if (red) {
		dt_put_u64(&b, DT_T_CONFIG_SIZE, c->len);
		/* room for the text field's own header and the TRUNC field */
		size_t room = b.len + 4 + 12 < cap ? cap - b.len - 4 - 12 : 0;
		if (room > 0xffff)
			room = 0xffff;
		size_t n = rlen;
		if (n > room) {
			n = room;
			while (n > 0 && red[n - 1] != '\n')
				n--;
		}
		dt_put(&b, DT_T_CONFIG_TEXT, red, (uint32_t)n);
		if (n < rlen)
			dt_put_u64(&b, DT_T_CONFIG_TRUNC, 1);
	} else {
		dt_put_u64(&b, DT_T_CONFIG_ERRNO, (uint64_t)(c->text ? ENOMEM : c->err));
	}
	free(red);
	((struct dt_rec_header *)rec)->len = b.len;
	if (dt_ring_write(&rr->ring, rec) < 0)
		fprintf(stderr, "denytrace: the snapshot of %s did not fit in the ring\n", c->path);
	else
		codex_config_bind(rr, rec, b.len);
	free(rec);
}

/* The workspace Codex takes its project from: -C against the cwd, else
 * the cwd. */
static void codex_workspace(const struct dt_codex_cli *cli, char *out, size_t cap)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	if (cli->cd && cli->cd[0] == '/')
		snprintf(out, cap, "%s", cli->cd);
	else if (cli->cd && *cli->cd && cwd[0])
		snprintf(out, cap, "%s/%s", cwd, cli->cd);
	else
		snprintf(out, cap, "%s", cwd);
}

/* The trusted project's layers after config.toml and the -p layer. */
static size_t codex_project_configs(const struct dt_codex_cli *cli, struct dt_codex_layer *cfg,
                                    int quiet)
{
	char ws[PATH_MAX], *paths[DT_CODEX_CFG_MAX - DT_CODEX_CFG_PROJECT];
	const struct toml_value *files[] = {cfg[DT_CODEX_CFG_CONFIG].parsed,
	                                    cfg[DT_CODEX_CFG_PROFILE].parsed};
	codex_workspace(cli, ws, sizeof(ws));
	size_t n = ws[0] ? dt_codex_project_layers(cli, files, 2, ws, paths,
	                                           sizeof(paths) / sizeof(*paths))
	                 : 0;
	for (size_t k = 0; k < n; k++) {
		struct dt_codex_layer *c = &cfg[DT_CODEX_CFG_PROJECT + k];
		snprintf(c->path, sizeof(c->path), "%s", paths[k]);
		c->project = 1;
		codex_config_load(c, quiet);
		free(paths[k]);
	}
	return DT_CODEX_CFG_PROJECT + n;
}

/* The configuration Codex will read, as it is now: $CODEX_HOME (or
 * ~/.codex)/config.toml, the -p layer and the trusted project's layers, at
 * their places in cfg (CODEX_CFG_*). Returns how many places are used. */
size_t dt_codex_layers(const struct dt_codex_cli *cli, struct dt_codex_layer *cfg, int quiet)
{
	char home[PATH_MAX] = "";
	const char *ch = getenv("CODEX_HOME"), *h = getenv("HOME");
	char cwd[PATH_MAX];
	memset(cfg, 0, DT_CODEX_CFG_MAX * sizeof(*cfg));
	if (ch && *ch)
		snprintf(home, sizeof(home), "%s%s%s",
		         ch[0] == '/' || !getcwd(cwd, sizeof(cwd)) ? "" : cwd,
		         ch[0] == '/' ? "" : "/", ch);
	else if (h && *h)
		snprintf(home, sizeof(home), "%s/.codex", strcmp(h, "/") ? h : "");
	if (home[0]) {
		snprintf(cfg[DT_CODEX_CFG_CONFIG].path, sizeof(cfg[0].path), "%s/config.toml",
		         home);
		codex_config_load(&cfg[DT_CODEX_CFG_CONFIG], quiet);
		if (cli->profile && *cli->profile) {
			cfg[DT_CODEX_CFG_PROFILE].profile = cli->profile;
			snprintf(cfg[DT_CODEX_CFG_PROFILE].path, sizeof(cfg[0].path),
			         "%s/%s.config.toml", home, cli->profile);
			codex_config_load(&cfg[DT_CODEX_CFG_PROFILE], quiet);
		}
	}
	return codex_project_configs(cli, cfg, quiet);
}

/* The argv Codex runs with: cargv (nargs + 1 entries) with the plan's
 * overrides after the user's last -c. NULL when out of memory. */
char **dt_codex_run_argv(const char **cargv, size_t nargs, const struct dt_codex_mcp_plan *plan)
{
	char **run_argv = xcalloc(nargs + plan->nargs + 2, sizeof(*run_argv));
	size_t n = 0;
	for (size_t k = 0; k <= nargs; k++) {
		if (k == plan->insert_at)
			for (size_t p = 0; p < plan->nargs; p++)
				run_argv[n++] = plan->args[p];
		run_argv[n++] = (char *)cargv[k];
	}
	if (plan->insert_at > nargs)
		for (size_t p = 0; p < plan->nargs; p++)
			run_argv[n++] = plan->args[p];
	run_argv[n] = NULL;
	return run_argv;
}

/* Linux refuses an exec whose arguments and environment outgrow the
 * argument space ("Argument list too long"): thousands of MCP servers get
 * there with our overrides. Returns 0 when run_argv fits, else the exit
 * status with the message printed. */
int dt_codex_argv_fits(char *const *run_argv, const struct dt_codex_mcp_plan *plan)
{
	extern char **environ;
	long limit = sysconf(_SC_ARG_MAX);
	size_t bytes = 4096; /* room for the probe's own variables */
	int one_too_long = 0;
	for (char *const *a = run_argv; *a; a++) {
		size_t l = strlen(*a) + 1;
		one_too_long |= l > 32 * (size_t)getpagesize(); /* MAX_ARG_STRLEN */
		bytes += l + sizeof(*a);
	}
	for (char **e = environ; e && *e; e++)
		bytes += strlen(*e) + 1 + sizeof(*e);
	if (!one_too_long && (limit <= 0 || bytes < (size_t)limit))
		return 0;
	if (plan->nargs)
		return dt_fail(DT_EXIT_INTERNAL,
		               "codex: with the -c overrides that carry the probe into %zu MCP "
		               "servers, Codex's command line and environment take %zu bytes, more "
		               "than the %ld this system allows: Codex would fail with \"Argument "
		               "list too long\"; pass --no-mcp, or configure fewer servers",
		               plan->ntraced, bytes, limit);
	return dt_fail(DT_EXIT_INTERNAL,
	               "codex: Codex's command line and environment take %zu bytes, more than the "
	               "%ld this system allows (\"Argument list too long\")",
	               bytes, limit);
}
