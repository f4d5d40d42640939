/* SPDX-License-Identifier: MIT */
/* denytrace codex: run the real Codex CLI under the probe, with its
 * configuration recorded and the probe carried into its MCP servers. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "codex_binary.h"
#include "codexargs.h"
#include "options.h"
#include "recfmt.h"
#include "roots.h"
#include "run.h"
#include "safeopen.h"
#include "secrets.h"
#include "toml.h"

static const char codex_usage[] =
    "usage: denytrace codex [options] -- [CODEX ARGS...]\n"
    "\n"
    "Runs the real Codex CLI as `denytrace run` runs a command: with\n"
    "libdenytrace.so in LD_PRELOAD (Codex passes it into its sandbox), recording\n"
    "every file operation refused with EPERM, EACCES, EROFS or EXDEV. It also\n"
    "  - records Codex's command line as launched, its version, and a snapshot\n"
    "    of its config.toml ($CODEX_HOME/config.toml, else ~/.codex/config.toml,\n"
    "    and the --profile layer $CODEX_HOME/NAME.config.toml), which `denytrace\n"
    "    report` reads instead of the file, since the file may change later;\n"
    "  - carries the probe into the MCP servers Codex starts (with a cleared\n"
    "    environment) by adding, for each stdio server S of that configuration,\n"
    "    of a trusted project's DIR/.codex/config.toml and of the -c overrides, -c "
    "mcp_servers.S.env.LD_PRELOAD=\"PROBE[:theirs]\"\n"
    "    and the DENYTRACE_* variables that lead the probe to the ring by its\n"
    "    path. Each sets one key: the server's own env is kept, never replaced.\n"
    "    They go after the last -c of the command line, so that they apply last.\n"
    "    A server whose name holds '.' or '=' cannot be named in a -c key (Codex\n"
    "    splits keys at every '.'), and an HTTP server has no process: both are\n"
    "    left alone, and said so; so is every server when the ring's path is not\n"
    "    valid UTF-8 (a -c value cannot carry it). When the overrides would make\n"
    "    Codex's command line too long to exec, it says so and starts nothing:\n"
    "    use --no-mcp.\n"
    "Before Codex starts it says what Codex itself finds writable (codex doctor\n"
    "--json) beside denytrace's model of it, and each disagreement.\n"
    "Then it prints the summary and exits with Codex's status.\n"
    "\n";

static const char codex_after[] =
    "example:\n"
    "  cd ~/work/project && denytrace codex -- sandbox -c 'sandbox_mode=\"workspace-write\"' \\\n"
    "      -- python3 worker.py\n"
    "  denytrace report\n"
    "\n";

/* The Codex CLI to run, as an absolute path (not resolved through symlinks:
 * npm's bin/codex must keep its name for the report to know it). */
static int codex_find(const char *given, char *out, size_t cap)
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

/* The files Codex reads, lowest first, at fixed places (an empty path: none). */
enum {
	CODEX_CFG_CONFIG,
	CODEX_CFG_PROFILE,
	CODEX_CFG_PROJECT, /* the trusted project layers, outermost first */
	CODEX_CFG_MAX = CODEX_CFG_PROJECT + 16,
};

struct codex_config {
	char path[PATH_MAX];
	const char *profile; /* the --profile layer's name, NULL for config.toml */
	int project;         /* a project layer DIR/.codex/config.toml */
	char *text;
	size_t len;
	int err;
	struct toml_value *parsed;
};

static void codex_config_load(struct codex_config *c, int quiet)
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
static void codex_config_record(struct dt_run_ring *rr, const struct codex_config *c,
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

static void codex_say_servers(const struct dt_codex_mcp_plan *plan)
{
	if (!plan->ntraced && !plan->nskipped) {
		fputs("denytrace: no MCP servers configured: no probe to carry into them.\n",
		      stderr);
		return;
	}
	if (plan->ntraced) {
		fprintf(
		    stderr,
		    "denytrace: probe carried into %zu MCP server%s (-c mcp_servers.NAME.env.*):",
		    plan->ntraced, plan->ntraced == 1 ? "" : "s");
		for (size_t i = 0; i < plan->ntraced; i++) {
			fputc(' ', stderr);
			dt_put_safe(stderr, plan->traced[i]);
		}
		fputc('\n', stderr);
	}
	for (size_t i = 0; i < plan->nskipped; i++) {
		fputs("denytrace: MCP server ", stderr);
		dt_put_safe(stderr, plan->skipped[i]);
		fputc('\n', stderr);
	}
}

/* What the command line asked for; run's options first (see
 * opts_codex.def). */
struct codex_args {
	struct dt_run_opts run;
	const char *given; /* --codex */
	int no_mcp;
};

static int codex_opt_codex(void *args, const char *val)
{
	if (!*val)
		return dt_fail(DT_EXIT_INTERNAL, "codex: --codex needs the path of the Codex CLI");
	((struct codex_args *)args)->given = val;
	return 0;
}

static const struct dt_option codex_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct codex_args, __VA_ARGS__)
#include "opts_codex.def"
#undef DT_OPTION
};

const struct dt_cmd_options codex_cmd = {"codex",
                                         codex_usage,
                                         codex_after,
                                         codex_options,
                                         sizeof(codex_options) / sizeof(codex_options[0]),
                                         DT_EXIT_INTERNAL,
                                         NULL,
                                         1,
                                         "; Codex's own options go after '--'"};

/* Parses denytrace's options (up to the "--" before Codex's arguments,
 * whose index goes to *first). Returns -1 to go on, else the exit status
 * (with the message printed, or the help). */
static int codex_parse(int argc, char **argv, struct codex_args *a, int *first)
{
	struct dt_parse_end end;
	int rc = dt_parse_command(&codex_cmd, argc, argv, a, &end);
	if (rc >= 0)
		return rc;
	if (end.dashdash) {
		*first = end.index;
		return -1;
	}
	if (end.index < argc)
		return dt_fail(DT_EXIT_INTERNAL,
		               "codex: Codex's arguments go after '--': denytrace codex "
		               "[options] -- %s ...",
		               argv[end.index]);
	return dt_fail(DT_EXIT_INTERNAL, "codex: no '--'; usage: denytrace codex [options] -- "
	                                 "[CODEX ARGS...]");
}

/* The message when the Codex CLI cannot be found or run (codex_find's
 * error ferr); returns the exit status. */
static int codex_not_found(const char *given, const char *codex, int ferr)
{
	int st = ferr == -ENOENT ? DT_EXIT_NOTFOUND : DT_EXIT_NOEXEC;
	if (given || getenv("DENYTRACE_CODEX"))
		return dt_fail(st, "codex: cannot run the Codex CLI %s (%s, from %s): %s", codex,
		               strerror(-ferr), given ? "--codex" : "DENYTRACE_CODEX",
		               "give the path of an installed codex");
	return dt_fail(st,
	               "codex: no codex on PATH (%s); install the Codex CLI, or pass --codex "
	               "PATH or set DENYTRACE_CODEX",
	               strerror(-ferr));
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
static size_t codex_project_configs(const struct dt_codex_cli *cli, struct codex_config *cfg,
                                    int quiet)
{
	char ws[PATH_MAX], *paths[CODEX_CFG_MAX - CODEX_CFG_PROJECT];
	const struct toml_value *files[] = {cfg[CODEX_CFG_CONFIG].parsed,
	                                    cfg[CODEX_CFG_PROFILE].parsed};
	codex_workspace(cli, ws, sizeof(ws));
	size_t n = ws[0] ? dt_codex_project_layers(cli, files, 2, ws, paths,
	                                           sizeof(paths) / sizeof(*paths))
	                 : 0;
	for (size_t k = 0; k < n; k++) {
		struct codex_config *c = &cfg[CODEX_CFG_PROJECT + k];
		snprintf(c->path, sizeof(c->path), "%s", paths[k]);
		c->project = 1;
		codex_config_load(c, quiet);
		free(paths[k]);
	}
	return CODEX_CFG_PROJECT + n;
}

/* The configuration Codex will read, as it is now: $CODEX_HOME (or
 * ~/.codex)/config.toml, the -p layer and the trusted project's layers, at
 * their places in cfg (CODEX_CFG_*). Returns how many places are used. */
static size_t codex_configs(const struct dt_codex_cli *cli, struct codex_config *cfg, int quiet)
{
	char home[PATH_MAX] = "";
	const char *ch = getenv("CODEX_HOME"), *h = getenv("HOME");
	char cwd[PATH_MAX];
	memset(cfg, 0, CODEX_CFG_MAX * sizeof(*cfg));
	if (ch && *ch)
		snprintf(home, sizeof(home), "%s%s%s",
		         ch[0] == '/' || !getcwd(cwd, sizeof(cwd)) ? "" : cwd,
		         ch[0] == '/' ? "" : "/", ch);
	else if (h && *h)
		snprintf(home, sizeof(home), "%s/.codex", strcmp(h, "/") ? h : "");
	if (home[0]) {
		snprintf(cfg[CODEX_CFG_CONFIG].path, sizeof(cfg[0].path), "%s/config.toml", home);
		codex_config_load(&cfg[CODEX_CFG_CONFIG], quiet);
		if (cli->profile && *cli->profile) {
			cfg[CODEX_CFG_PROFILE].profile = cli->profile;
			snprintf(cfg[CODEX_CFG_PROFILE].path, sizeof(cfg[0].path),
			         "%s/%s.config.toml", home, cli->profile);
			codex_config_load(&cfg[CODEX_CFG_PROFILE], quiet);
		}
	}
	return codex_project_configs(cli, cfg, quiet);
}

/* The argv Codex runs with: cargv (nargs + 1 entries) with the plan's
 * overrides after the user's last -c. NULL when out of memory. */
static char **codex_run_argv(const char **cargv, size_t nargs, const struct dt_codex_mcp_plan *plan)
{
	char **run_argv = calloc(nargs + plan->nargs + 2, sizeof(*run_argv));
	if (!run_argv)
		return NULL;
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

/* Before Codex starts: what Codex itself says is writable for this
 * command line (codex doctor --json) beside the model's writable_roots,
 * and every disagreement, a model error. Said only where they compare. */
static void codex_say_readback(const char *codex, const char **cargv, size_t argc,
                               const char *version)
{
	char cwd[PATH_MAX];
	struct dt_rootset rs = {0};
	struct dt_codex_launch l = {.argv = cargv,
	                            .argc = argc,
	                            .cwd = getcwd(cwd, sizeof(cwd)),
	                            .home = getenv("HOME"),
	                            .codex_home = getenv("CODEX_HOME"),
	                            .tmpdir = getenv("TMPDIR"),
	                            .codex_version = version[0] ? version : NULL};
	char err[512];
	if (dt_roots_from_codex(&rs, &l, NULL, err, sizeof(err)) == 0)
		dt_codex_readback(&rs, codex, &l);
	if (rs.codex_refused) {
		/* said before Codex says it, as the reason to read */
		fputs("denytrace: ", stderr);
		dt_put_safe(stderr, rs.codex_refused);
		fputc('\n', stderr);
	}
	if (rs.codex_readback == 1) {
		fputs("denytrace: Codex itself says writable:", stderr);
		for (size_t i = 0; i < rs.ncodex_says; i++) {
			fputs(i ? ", " : " ", stderr);
			dt_put_safe(stderr, rs.codex_says[i]);
		}
		fputs(rs.ncodex_says ? "\n" : " no writable_roots\n", stderr);
	}
	for (size_t i = 0; i < rs.ncodex_disagree; i++) {
		fputs("denytrace: model error: ", stderr);
		dt_put_safe(stderr, rs.codex_disagree[i]);
		fputc('\n', stderr);
	}
	dt_rootset_free(&rs);
}

/* Linux refuses an exec whose arguments and environment outgrow the
 * argument space ("Argument list too long"): thousands of MCP servers get
 * there with our overrides. Returns 0 when run_argv fits, else the exit
 * status with the message printed. */
static int codex_argv_fits(char *const *run_argv, const struct dt_codex_mcp_plan *plan)
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

int cmd_codex(int argc, char **argv)
{
	struct codex_args ca = {0};
	int rc, i = 0;
	dt_run_opts_init(&ca.run);
	ca.run.cmd = "codex";
	ca.run.size = DT_RING_LARGE_SIZE; /* a session runs many commands */
	if ((rc = codex_parse(argc, argv, &ca, &i)) >= 0) {
		dt_run_opts_free(&ca.run);
		return rc;
	}
	/* the rest of this function predates codex_args */
	struct dt_run_opts o = ca.run;
	const char *given = ca.given;
	int no_mcp = ca.no_mcp;
	char codex[PATH_MAX];
	int ferr = codex_find(given, codex, sizeof(codex));
	if (ferr) {
		dt_run_opts_free(&o);
		return codex_not_found(given, codex, ferr);
	}

	/* Codex's argv as given, to read its options */
	size_t nargs = (size_t)(argc - i);
	const char **cargv = calloc(nargs + 2, sizeof(*cargv));
	if (!cargv) {
		dt_run_opts_free(&o);
		return dt_fail(DT_EXIT_INTERNAL, "out of memory");
	}
	cargv[0] = codex;
	for (size_t k = 0; k < nargs; k++)
		cargv[k + 1] = argv[i + (int)k];
	/* the report models this version's command lines; without it, the
	 * newest checked one */
	char version[256] = "", verr[512];
	if (dt_codex_binary_version(codex, version, sizeof(version), verr, sizeof(verr)) &&
	    !o.quiet)
		fprintf(stderr, "denytrace: %s; the report will assume Codex %s\n", verr,
		        dt_codex_versions[dt_ncodex_versions - 1].name);
	struct dt_codex_cli cli = {0};
	dt_codex_cli_parse(NULL, &cli, cargv, nargs + 1);
	struct codex_config cfg[CODEX_CFG_MAX];
	size_t ncfg = codex_configs(&cli, cfg, o.quiet);
	const struct toml_value *files[CODEX_CFG_MAX];
	for (size_t k = 0; k < ncfg; k++)
		files[k] = cfg[k].parsed;

	struct dt_run_ring rr;
	struct dt_codex_mcp_plan plan = {0};
	if ((rc = dt_run_ring_create(&o, &rr)))
		goto out;
	for (size_t k = 0; k < ncfg; k++)
		/* no profile file is Codex's normal case: nothing to record */
		if (cfg[k].path[0] && (k == CODEX_CFG_CONFIG || cfg[k].text))
			codex_config_record(&rr, &cfg[k], version[0] ? version : NULL);

	if (!no_mcp) {
		/* an MCP server's process record (its environment) even when it
		 * only writes: the handoff it makes depends on it (handoff.h) */
		const char *vars[10] = {"LD_PRELOAD", "DENYTRACE_PROCESS"},
		           *values[10] = {rr.probe, "1"};
		size_t nv = 2 + dt_run_probe_env(&o, &rr, vars + 2, values + 2, 8);
		if (dt_codex_mcp_plan(cargv, nargs + 1, files, ncfg, vars, values, nv, &plan) < 0) {
			rc = dt_fail(DT_EXIT_INTERNAL, "out of memory");
			goto out;
		}
	}
	char **run_argv = codex_run_argv(cargv, nargs, &plan);
	if (!run_argv) {
		rc = dt_fail(DT_EXIT_INTERNAL, "out of memory");
		goto out;
	}
	if ((rc = codex_argv_fits(run_argv, &plan))) {
		free(run_argv);
		goto out;
	}
	if (!no_mcp && !o.quiet)
		codex_say_servers(&plan);
	if (!o.quiet)
		codex_say_readback(codex, cargv, nargs + 1, version);
	rc = dt_run_launch(&o, &rr, run_argv);
	free(run_argv);
out:
	dt_codex_mcp_plan_free(&plan);
	for (size_t k = 0; k < ncfg; k++) {
		free(cfg[k].text);
		toml_free(cfg[k].parsed);
	}
	dt_codex_cli_free(&cli);
	free(cargv);
	dt_run_opts_free(&o);
	return rc;
}
