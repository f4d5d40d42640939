/* SPDX-License-Identifier: MIT */
/* denytrace codex: run the real Codex CLI under the probe, with its
 * configuration recorded and the probe carried into its MCP servers. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "codex_binary.h"
#include "codex_launch.h"
#include "codexargs.h"
#include "options.h"
#include "recfmt.h"
#include "roots.h"
#include "run.h"
#include "toml.h"
#include "xalloc.h"

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

/* The message when the Codex CLI cannot be found or run (dt_codex_find's
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
	int ferr = dt_codex_find(given, codex, sizeof(codex));
	if (ferr) {
		dt_run_opts_free(&o);
		return codex_not_found(given, codex, ferr);
	}

	/* Codex's argv as given, to read its options */
	size_t nargs = (size_t)(argc - i);
	const char **cargv = xcalloc(nargs + 2, sizeof(*cargv));
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
	struct dt_codex_layer cfg[DT_CODEX_CFG_MAX];
	size_t ncfg = dt_codex_layers(&cli, cfg, o.quiet);
	const struct toml_value *files[DT_CODEX_CFG_MAX];
	for (size_t k = 0; k < ncfg; k++)
		files[k] = cfg[k].parsed;

	struct dt_run_ring rr;
	struct dt_codex_mcp_plan plan = {0};
	if ((rc = dt_run_ring_create(&o, &rr)))
		goto out;
	for (size_t k = 0; k < ncfg; k++)
		/* no profile file is Codex's normal case: nothing to record */
		if (cfg[k].path[0] && (k == DT_CODEX_CFG_CONFIG || cfg[k].text))
			dt_codex_layer_record(&rr, &cfg[k], version[0] ? version : NULL);

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
	char **run_argv = dt_codex_run_argv(cargv, nargs, &plan);
	if ((rc = dt_codex_argv_fits(run_argv, &plan))) {
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
