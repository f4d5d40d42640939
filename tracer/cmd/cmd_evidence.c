/* SPDX-License-Identifier: MIT */
/* denytrace evidence: a bundle a maintainer can act on, and a .tar.gz of it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bundle.h"
#include "cli.h"
#include "facts.h"
#include "options.h"
#include "recfmt.h"
#include "report.h"
#include "sidecar.h"

static const char evidence_usage[] =
    "usage: denytrace evidence [options] [RING...]\n"
    "\n"
    "Writes a bundle for a maintainer: a directory and a .tar.gz of it beside it,\n"
    "holding report.md (the Markdown report, ready to paste into an issue, then\n"
    "the facts), report.json, timeline.svg (the run as a picture), facts.json,\n"
    "records.jsonl, and copies of the rings (default ./denytrace.ring). The\n"
    "facts: denytrace version, kernel,\n"
    "distribution, WSL or not, the sandboxes seen, `codex --version`, the lines\n"
    "of Codex's config.toml that decide the sandbox, the realpath of HOME and of\n"
    "each root, whether a root sits under .git, .codex or .agents, and the launch\n"
    "command lines recorded.\n"
    "\n";

/* What the command line asked for. */
struct evidence_opts {
	struct dt_report_opts o;
	const char **roots, **rings; /* argc + 1 each */
	size_t nrings;
	const char *out;
	int redact;
};

static int evidence_out(void *args, const char *val)
{
	if (!*val)
		return dt_fail(DT_EXIT_USAGE, "evidence: --out needs a directory");
	((struct evidence_opts *)args)->out = val;
	return 0;
}

static const struct dt_option evidence_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct evidence_opts, __VA_ARGS__)
#include "opts_evidence.def"
#undef DT_OPTION
};

const struct dt_cmd_options evidence_cmd = {"evidence",
                                            evidence_usage,
                                            NULL,
                                            evidence_options,
                                            sizeof(evidence_options) / sizeof(evidence_options[0]),
                                            DT_EXIT_USAGE,
                                            NULL};

/* Parses the options into e. Returns -1 to go on, else the exit status
 * (with the message printed, or the help). */
static int evidence_parse(int argc, char **argv, struct evidence_opts *e)
{
	int rc = dt_parse_options(&evidence_cmd, argc, argv, e, e->rings, &e->nrings);
	if (rc >= 0)
		return rc;
	rc = 0;
	if (rc)
		return rc;
	if (!e->nrings && (rc = dt_default_ring_check("evidence")))
		return rc;
	if (!e->nrings)
		e->rings[e->nrings++] = DT_DEFAULT_RING;
	e->o.roots = e->roots;
	return -1;
}

/* The bundle's directory (--out, or denytrace-evidence-DATE-TIME) and its
 * tarball, neither of which may hold anything yet. Returns -1 to go on,
 * else the exit status with the message printed. */
static int evidence_choose_dir(struct dt_bundle *b, const char *out, char *tarball, size_t cap)
{
	if (out) {
		snprintf(b->dir, sizeof(b->dir), "%s", out);
	} else {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(b->dir, sizeof(b->dir), "denytrace-evidence-%Y%m%d-%H%M%S", &tm);
	}
	size_t dl = strlen(b->dir);
	while (dl > 1 && b->dir[dl - 1] == '/')
		b->dir[--dl] = 0;
	snprintf(tarball, cap, "%s.tar.gz", b->dir);
	int not_dir;
	if (dt_dir_in_use(b->dir, &not_dir))
		return dt_fail(
		    DT_EXIT_IO,
		    not_dir ? "evidence: %s exists and is not a directory; choose another --out"
		            : "evidence: %s already holds files; refusing to overwrite them "
		              "(remove it or choose another --out)",
		    b->dir);
	struct stat st;
	if (lstat(tarball, &st) == 0)
		return dt_fail(
		    DT_EXIT_IO,
		    "evidence: %s already exists; refusing to overwrite it (remove it or "
		    "choose another --out)",
		    tarball);
	return -1;
}

/* report.md: the report, the facts, and what the bundle holds. */
/* "Suggested fix" and "Verified", as `denytrace fix --verify` left them
 * beside the first ring that has them (RING.fix.md). The traced program
 * can write beside its ring: only a regular file of the caller's that
 * names this very ring is taken (sidecar.h). */
static void evidence_fix_proof(FILE *f, const struct evidence_opts *e)
{
	for (size_t i = 0; i < e->nrings; i++) {
		char *text = dt_sidecar_read(e->rings[i], ".fix.md");
		if (!text)
			continue;
		fputs(text, f);
		free(text);
		return;
	}
}

static void evidence_report_md(FILE *f, const struct dt_report *r, const struct dt_facts *facts,
                               const struct dt_redaction *rd, const struct evidence_opts *e)
{
	int redact = e->redact;
	dt_report_markdown(f, r);
	dt_facts_markdown(f, facts);
	fputs("\n### This bundle\n\n", f);
	fputs("`report.md` (this file), `report.json` (the report as JSON), "
	      "[`timeline.svg`](timeline.svg) (the run as a picture: a lane per process, refusals "
	      "coloured by problem), `facts.json` (the facts "
	      "above), `records.jsonl` (every record, as `denytrace show --jsonl` prints it)",
	      f);
	if (redact) {
		fputs(".\n\nRedacted: the home directory is shown as `~` and the user name as "
		      "`<user>` "
		      "in every file; environment entries that look like secrets were dropped, and "
		      "secret option values, URL passwords and token-shaped words replaced with "
		      "`<redacted>`. The raw ring files are **not** "
		      "included (they cannot be redacted in place); `records.jsonl` holds their "
		      "records, redacted.",
		      f);
		if (rd->kept[0])
			fprintf(f, " System account names were kept: %s.", rd->kept);
		fputc('\n', f);
	} else {
		fputs(", and the ring files (read them with `denytrace show` or `denytrace "
		      "report`).\n",
		      f);
	}
}

/* Writes the bundle's files and its tarball. Returns 1 when one failed. */
static int evidence_write(struct dt_bundle *b, const struct evidence_opts *e,
                          const struct dt_report *r, const struct dt_facts *facts,
                          const struct dt_redaction *rd, const char *tarball)
{
	struct dt_mem mem;
	struct dt_outfile tgz;
	if (dt_bundle_tarball_begin(b, &tgz, tarball) < 0)
		return 1;
	int failed = 0;
	FILE *md = dt_mem_open(&mem);
	evidence_report_md(md, r, facts, rd, e);
	evidence_fix_proof(md, e);
	failed = dt_mem_commit(b, &mem, "report.md", failed) < 0;

	dt_report_json(dt_mem_open(&mem), r);
	failed = dt_mem_commit(b, &mem, "report.json", failed) < 0;

	dt_report_svg(dt_mem_open(&mem), r);
	failed = dt_mem_commit(b, &mem, "timeline.svg", failed) < 0;

	dt_facts_json(dt_mem_open(&mem), facts);
	failed = dt_mem_commit(b, &mem, "facts.json", failed) < 0;

	dt_bundle_records_jsonl(dt_mem_open(&mem), r, e->redact);
	failed = dt_mem_commit(b, &mem, "records.jsonl", failed) < 0;

	for (size_t i = 0; i < e->nrings && !e->redact && !failed; i++)
		failed |= dt_bundle_copy_ring(b, e->rings[i], i);

	return dt_bundle_tarball_end(b, &tgz, tarball, failed);
}

int cmd_evidence(int argc, char **argv)
{
	struct evidence_opts e = {0};
	e.roots = calloc((size_t)argc + 1, sizeof(*e.roots));
	e.rings = calloc((size_t)argc + 1, sizeof(*e.rings));
	struct dt_bundle b = {0};
	char tarball[PATH_MAX + 8];
	int rc = evidence_parse(argc, argv, &e);
	if (rc < 0)
		rc = evidence_choose_dir(&b, e.out, tarball, sizeof(tarball));
	if (rc >= 0) {
		free(e.roots);
		free(e.rings);
		return rc;
	}

	struct dt_report r;
	char err[1024];
	rc = dt_report_load(&r, e.rings, e.nrings, err, sizeof(err));
	if (!rc)
		rc = dt_report_build(&r, &e.o, err, sizeof(err));
	if (rc) {
		dt_report_free(&r);
		free(e.roots);
		free(e.rings);
		return dt_fail(rc, "evidence: %s", err);
	}

	if (dt_bundle_open_dir(&b, err, sizeof(err)) < 0) {
		dt_report_free(&r);
		free(e.roots);
		free(e.rings);
		return dt_fail(DT_EXIT_IO, "evidence: %s", err);
	}

	struct dt_redaction rd = {0};
	struct dt_strpool pool = {0};
	if (e.redact) {
		dt_redact_collect(&rd, &r);
		dt_redact_records(&r, &pool);
		b.rd = &rd;
	}
	struct dt_facts facts;
	dt_facts_collect(&facts, &r);
	facts.redacted = e.redact;
	b.files = calloc(e.nrings + 8, sizeof(*b.files));
	int failed = evidence_write(&b, &e, &r, &facts, &rd, tarball);
	if (!failed) {
		printf("evidence written to %s/ and %s\n", b.dir, tarball);
		for (size_t i = 0; i < b.nfiles; i++)
			printf("  %s\n", b.files[i]);
		if (e.redact)
			printf(
			    "redacted: home shown as ~, user name as <user>, secrets dropped; raw "
			    "rings left out\n");
		printf("attach %s to the issue, or paste report.md\n", tarball);
	}
	for (size_t i = 0; i < b.nfiles; i++)
		free(b.files[i]);
	free(b.files);
	close(b.dfd);
	dt_facts_free(&facts);
	dt_redaction_free(&rd);
	dt_report_free(&r);
	dt_strpool_free(&pool);
	free(e.roots);
	free(e.rings);
	if (failed)
		return DT_EXIT_IO;
	if (fflush(stdout) != 0 || ferror(stdout))
		return dt_fail(DT_EXIT_IO, "evidence: writing the output failed");
	return DT_EXIT_OK;
}
