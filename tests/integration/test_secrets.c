/* SPDX-License-Identifier: MIT */
/*
 * Secrets never reach a ring, and evidence --redact removes them from rings
 * that hold them. Twenty kinds are planted, every one a value containing
 * MARK: ten in the environment (names that say "secret" in ways a word
 * filter misses, and passwords inside URLs), ten in argv (options, NAME=VALUE
 * words, URLs, an Authorization header, a token). A real shell under
 * bubblewrap is refused a write, so its process record (argv, environment)
 * is written, and so are `run`'s launch record and bubblewrap's own; then
 * every output is searched for MARK: the ring's raw bytes, show, report,
 * roots, evidence. A ring written field by field with the secrets in clear
 * (as an older probe would have) checks evidence --redact on every file.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "secrets.h"
#include "testlib.h"

#define MARK "Zq7s3cr3t"

static const char *const env_secrets[] = {"HERMES_DB_PASS=" MARK "01",
                                          "CODEX_PASSPHRASE=" MARK "02",
                                          "HCOM_PAT=" MARK "03",
                                          "HERMES_DB_URL=postgres://app:" MARK "04@db:5432/board",
                                          "CODEX_AUTH_HEADER=" MARK "05",
                                          "HCOM_SESSION_COOKIE=" MARK "06",
                                          "HERMES_PRIVATE=" MARK "07",
                                          "CODEX_CREDENTIALS=" MARK "08",
                                          "HCOM_TOKEN=" MARK "09",
                                          "HERMES_REDIS=redis://:" MARK "10@cache:6379/0",
                                          NULL};

static const char *const argv_secrets[] = {"--password=" MARK "11",
                                           "--token",
                                           MARK "12",
                                           "--api-key=" MARK "13",
                                           "OPENAI_API_KEY=" MARK "14",
                                           "DB_PASSWORD=" MARK "15",
                                           "https://user:" MARK "16@example.com/repo.git",
                                           "Authorization: Bearer " MARK "17",
                                           "ghp_" MARK "18abcdefghijklmnop",
                                           "--client-secret",
                                           MARK "19",
                                           "--passphrase=" MARK "20",
                                           NULL};

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(secrets, .fini = teardown, .timeout = 120);

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	do {
		if (n + 4096 > cap)
			buf = realloc(buf, cap = (n + 4096) * 2);
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got);
	fclose(f);
	*len = n;
	return buf;
}

static void expect_no_mark(const char *what, const char *buf, size_t len)
{
	const char *at = memmem(buf, len, MARK, strlen(MARK));
	if (!at)
		return;
	size_t from = (size_t)(at - buf) > 80 ? (size_t)(at - buf) - 80 : 0;
	cr_expect_fail("%s holds a secret: ...%.*s", what, (int)(at - buf - (long)from + 12),
	               buf + from);
}

static void expect_cli_no_mark(const char *const *args)
{
	struct dtt_cli c;
	dtt_cli(&c, args);
	char what[256];
	snprintf(what, sizeof(what), "denytrace %s %s (status %d)", args[0], args[1], c.status);
	cr_expect(c.status >= 0 && c.status < 100, "%s: killed or hung", what);
	expect_no_mark(what, c.out, strlen(c.out));
	expect_no_mark(what, c.err, strlen(c.err));
}

/* Every file of an evidence bundle (the tarball is checked for its mode:
 * its contents are these files). */
static void expect_bundle_no_mark(const char *ring, int redact, const char *tag)
{
	char dir[600], tarball[700];
	snprintf(dir, sizeof(dir), "%s/bundle-%s", dtt_tmpdir(), tag);
	const char *args[] = {"evidence",           "--out", dir, redact ? "--redact" : ring,
	                      redact ? ring : NULL, NULL};
	expect_cli_no_mark(args);
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "no bundle in %s", dir);
	size_t files = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char path[1200];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		size_t len;
		char *buf = slurp(path, &len);
		cr_assert_not_null(buf, "%s", path);
		expect_no_mark(path, buf, len);
		free(buf);
		files++;
	}
	closedir(d);
	cr_expect_geq(files, 4);
	snprintf(tarball, sizeof(tarball), "%s.tar.gz", dir);
	struct stat st;
	cr_assert_eq(stat(tarball, &st), 0, "%s", tarball);
	cr_expect_eq(st.st_mode & 0777, 0600, "the tarball is %04o, not 0600", st.st_mode & 0777);
}

static void expect_outputs_no_mark(const char *ring, const char *tag)
{
	const char *cases[][5] = {
	    {"show", ring, NULL},
	    {"show", "-v", ring, NULL},
	    {"show", "--jsonl", ring, NULL},
	    {"report", ring, NULL},
	    {"report", "--format", "json", ring, NULL},
	    {"report", "--format", "markdown", ring, NULL},
	    {"roots", "--json", ring, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_cli_no_mark(cases[i]);
	char t[64];
	snprintf(t, sizeof(t), "%s-plain", tag);
	expect_bundle_no_mark(ring, 0, t);
	snprintf(t, sizeof(t), "%s-redacted", tag);
	expect_bundle_no_mark(ring, 1, t);
}

Test(secrets, twenty_planted_secrets_reach_no_ring_and_no_output)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *t = dtt_tmpdir();
	char ro[600], script[800], ring[600], exe[600];
	snprintf(ro, sizeof(ro), "%s/ro", t);
	cr_assert_eq(mkdir(ro, 0755), 0);
	/* the shell itself opens the file (a redirection): its own process
	 * record carries the argv below */
	snprintf(script, sizeof(script), "echo x > '%s/board.db'; true", ro);
	snprintf(ring, sizeof(ring), "%s/secrets.ring", t);
	snprintf(exe, sizeof(exe), "%s/denytrace", dtt_build());
	const char *argv[64] = {exe,         "run", "-o",      ring,    "--",   "bwrap",
	                        "--ro-bind", "/",   "/",       "--dev", "/dev", "--proc",
	                        "/proc",     "--",  "/bin/sh", "-c",    script, "sh"};
	size_t n = 18;
	for (const char *const *a = argv_secrets; *a; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	static char out[65536];
	int status = dtt_system(out, sizeof(out), argv, env_secrets);
	cr_assert_eq(status, 0, "%s", out);
	expect_no_mark("denytrace run's output", out, strlen(out));

	struct dtt_run r;
	cr_assert_eq(dtt_load(&r, ring), 0);
	const struct dt_record *sh = NULL;
	for (size_t i = 0; i < r.n; i++)
		if (r.recs[i].type == DT_REC_PROCESS && r.recs[i].argc > 3 &&
		    !strcmp(r.recs[i].argv[0], "/bin/sh"))
			sh = &r.recs[i];
	cr_assert_not_null(sh, "the shell's process record is missing: %s", out);
	/* what is not secret stays: the option names, the URL's user and host */
	cr_expect_str_eq(sh->argv[4], "--password=" DT_REDACTED);
	cr_expect_str_eq(sh->argv[5], "--token");
	cr_expect_str_eq(sh->argv[6], DT_REDACTED);
	cr_expect_str_eq(sh->argv[10], "https://user:" DT_REDACTED "@example.com/repo.git");
	cr_expect_not_null(dt_record_env(sh, "HERMES_DB_URL"), "HERMES_DB_URL was dropped");
	dtt_free(&r);

	size_t len;
	char *raw = slurp(ring, &len);
	cr_assert_not_null(raw);
	expect_no_mark("the ring file", raw, len);
	free(raw);
	expect_outputs_no_mark(ring, "probe");
}

/* The forms a word filter misses: a password program's -p, curl's -u,
 * headers and colon pairs, npm tokens, a webhook's secret path, a secret
 * query parameter, a bare JSON Web Token (MARK in its claims and its
 * signature). */
static const char *const argv_forms[] = {"sshpass",
                                         "-p",
                                         MARK "21",
                                         "-p" MARK "22",
                                         "-u",
                                         "alice:" MARK "23",
                                         "X-Api-Key: " MARK "24",
                                         "Cookie: session=" MARK "25",
                                         "password:" MARK "26",
                                         "npm_" MARK "27abcdefghijklmnopqrstuvwxyz",
                                         "https://hooks.slack.com/services/T0/B0/" MARK "28",
                                         "https://api.example.org/v1?api_key=" MARK "29&x=1",
                                         "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi" MARK "30In0.c2ln" MARK
                                         "31",
                                         NULL};

Test(secrets, the_forms_a_word_filter_misses_reach_no_ring_and_no_output)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	const char *t = dtt_tmpdir();
	char ro[600], script[800], ring[600], exe[600];
	snprintf(ro, sizeof(ro), "%s/ro", t);
	cr_assert_eq(mkdir(ro, 0755), 0);
	snprintf(script, sizeof(script), "echo x > '%s/board.db'; true", ro);
	snprintf(ring, sizeof(ring), "%s/forms.ring", t);
	snprintf(exe, sizeof(exe), "%s/denytrace", dtt_build());
	const char *argv[64] = {exe,         "run", "-o",      ring,    "--",   "bwrap",
	                        "--ro-bind", "/",   "/",       "--dev", "/dev", "--proc",
	                        "/proc",     "--",  "/bin/sh", "-c",    script, "sh"};
	size_t n = 18;
	for (const char *const *a = argv_forms; *a; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	static char out[65536];
	cr_assert_eq(dtt_system(out, sizeof(out), argv, NULL), 0, "%s", out);
	expect_no_mark("denytrace run's output", out, strlen(out));
	size_t len;
	char *raw = slurp(ring, &len);
	cr_assert_not_null(raw);
	expect_no_mark("the ring file", raw, len);
	free(raw);
	expect_outputs_no_mark(ring, "probe");
}

/* A ring holding the secrets in clear, as a probe before the redaction
 * module wrote it, plus a Codex config snapshot with secrets of its own:
 * evidence --redact still leaves none in any file. */
Test(secrets, evidence_redact_removes_secrets_a_ring_holds_in_clear)
{
	char ring[600];
	snprintf(ring, sizeof(ring), "%s/clear.ring", dtt_tmpdir());
	struct dtt_ring w;
	cr_assert_eq(dtt_ring_create(&w, ring, 1 << 20), 0);
	for (int type = DT_REC_PROCESS; type; type = type == DT_REC_PROCESS ? DT_REC_LAUNCH : 0) {
		dtt_ring_begin(&w, type, 4242, "worker");
		char words[4096];
		size_t wn = 0;
		const char *lead[] = {"worker", "--db", "/srv/board/kanban.db"};
		for (size_t i = 0; i < 3; i++) {
			memcpy(words + wn, lead[i], strlen(lead[i]) + 1);
			wn += strlen(lead[i]) + 1;
		}
		for (const char *const *a = argv_secrets; *a; a++) {
			memcpy(words + wn, *a, strlen(*a) + 1);
			wn += strlen(*a) + 1;
		}
		dt_put(&w.b, DT_T_ARGV, words, (uint32_t)(wn - 1));
		dt_put_str(&w.b, DT_T_CWD, "/srv/work");
		for (const char *const *e = env_secrets; *e; e++)
			dt_put_str(&w.b, DT_T_ENV, *e);
		cr_assert_eq(dtt_ring_commit(&w), 0);
	}
	/* Codex's config as `denytrace codex` records it: MCP server secrets,
	 * provider headers */
	dtt_ring_begin(&w, DT_REC_CONFIG, 4242, "denytrace");
	const char *cfg = "sandbox_mode = \"workspace-write\"\n"
	                  "[mcp_servers.board.env]\nBOARD_API_KEY = \"" MARK "21\"\n"
	                  "[model_providers.corp]\n"
	                  "http_headers = { Authorization = \"Bearer " MARK "22\" }\n"
	                  "base_url = \"https://svc:" MARK "23@llm.example.com/v1\"\n";
	dt_put_str(&w.b, DT_T_CONFIG_PATH, "/home/u/.codex/config.toml");
	dt_put_str(&w.b, DT_T_CONFIG_ROLE, "codex");
	dt_put_str(&w.b, DT_T_CONFIG_TEXT, cfg);
	dt_put_u64(&w.b, DT_T_CONFIG_SIZE, strlen(cfg));
	cr_assert_eq(dtt_ring_commit(&w), 0);
	dtt_ring_begin(&w, DT_REC_DENIAL, 4242, "worker");
	dt_put_str(&w.b, DT_T_OP, "openat");
	dt_put_u64(&w.b, DT_T_ERRNO, 30);
	dt_put_u64(&w.b, DT_T_ACCESS, 1);
	dt_put_str(&w.b, DT_T_PATH, "/srv/board/kanban.db");
	dt_put_str(&w.b, DT_T_ABSPATH, "/srv/board/kanban.db");
	cr_assert_eq(dtt_ring_commit(&w), 0);
	dtt_ring_close(&w);
	expect_bundle_no_mark(ring, 1, "clear");
}

/* denytrace codex keeps Codex's config.toml in the ring (reports read it
 * as it was at launch): its secrets stay out, its sandbox settings stay. */
Test(secrets, codex_config_snapshot_keeps_the_sandbox_settings_and_no_secret)
{
	const char *t = dtt_tmpdir();
	char home[600], config[700], ring[700], env_ch[700], exe[600];
	snprintf(home, sizeof(home), "%s/codex-home", t);
	cr_assert_eq(mkdir(home, 0755), 0);
	snprintf(config, sizeof(config), "%s/config.toml", home);
	FILE *f = fopen(config, "w");
	cr_assert_not_null(f);
	fputs("sandbox_mode = \"workspace-write\"\n"
	      "[sandbox_workspace_write]\nwritable_roots = [\"/srv/board\"]\n"
	      /* a server with no command nor url stops Codex ("invalid transport") */
	      "[mcp_servers.board]\ncommand = \"board-mcp\"\n"
	      "[mcp_servers.board.env]\nBOARD_TOKEN = \"" MARK "31\"\n"
	      "[model_providers.corp]\nbase_url = \"https://svc:" MARK "32@llm.example.com\"\n"
	      "http_headers = { Authorization = \"Bearer " MARK "33\" }\n"
	      "query_params = { key = \"" MARK "34\" }\n"
	      "wire_url = \"https://llm.example.com/v1?key=" MARK "35\"\n"
	      "notes = \'\'\'\n" MARK "36\n\'\'\'\n"
	      "[mcp_servers.docs]\ncommand = \"npx\"\n"
	      "args = [\"--token\", \"" MARK "37\"]\n"
	      "env = { \"API_KEY\" = \"" MARK "38\" }\n",
	      f);
	fclose(f);
	snprintf(ring, sizeof(ring), "%s/codex.ring", t);
	snprintf(env_ch, sizeof(env_ch), "CODEX_HOME=%s", home);
	snprintf(exe, sizeof(exe), "%s/denytrace", dtt_build());
	const char *run[] = {exe, "codex", "-q", "--codex", "/bin/true", "-o", ring, "--", NULL};
	const char *env[] = {env_ch, NULL};
	static char out[65536];
	cr_assert_eq(dtt_system(out, sizeof(out), run, env), 0, "%s", out);
	size_t len;
	char *raw = slurp(ring, &len);
	cr_assert_not_null(raw);
	expect_no_mark("the ring file", raw, len);
	free(raw);
	const char *roots[] = {"roots", ring, NULL};
	struct dtt_cli c;
	dtt_cli(&c, roots);
	cr_expect_not_null(strstr(c.out, "/srv/board"), "the snapshot's roots are gone: %s", c.out);
}
