/* SPDX-License-Identifier: MIT */
/* The facts as JSON and as the "Facts" section of report.md (facts.h). */
#include "facts.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "recfmt.h"
#include "report.h"

static void dt_json_str_or_null(struct dt_json *j, const char *s)
{
	dt_json_str(j, s && *s ? s : NULL);
}

/* Codex on PATH and its config.toml. */
static void dt_facts_json_codex(struct dt_json *j, const struct dt_facts *f)
{
	dt_json_key(j, "codex");
	if (!f->codex_path[0]) {
		dt_json_null(j);
	} else {
		dt_json_obj(j);
		dt_json_kstr(j, "path", f->codex_path);
		dt_json_key(j, "version");
		dt_json_str_or_null(j, f->codex_status == 0 ? f->codex_version : NULL);
		dt_json_kint(j, "version_status", f->codex_status);
		dt_json_end_obj(j);
	}
	dt_json_key(j, "codex_config");
	dt_json_obj(j);
	dt_json_key(j, "path");
	dt_json_str_or_null(j, f->config_path);
	dt_json_kbool(j, "found", f->config_found);
	dt_json_kbool(j, "recorded", f->config_recorded);
	dt_json_key(j, "relevant_lines");
	dt_json_arr(j);
	for (const char *p = f->config_excerpt; p && *p;) {
		size_t n = strcspn(p, "\n");
		char *line = strndup(p, n);
		dt_json_str(j, line);
		free(line);
		p += n + (p[n] ? 1 : 0);
	}
	dt_json_end_arr(j);
	dt_json_end_obj(j);
}

/* This user's HOME and the traced processes'. */
static void dt_facts_json_homes(struct dt_json *j, const struct dt_facts *f)
{
	dt_json_key(j, "home");
	dt_json_obj(j);
	dt_json_key(j, "path");
	dt_json_str_or_null(j, f->home);
	dt_json_key(j, "realpath");
	dt_json_str_or_null(j, f->home_real);
	dt_json_key(j, "recorded");
	dt_json_arr(j);
	for (size_t i = 0; i < f->nrec_homes; i++) {
		dt_json_obj(j);
		dt_json_kstr(j, "path", f->rec_homes[i]);
		dt_json_kstr(j, "realpath", f->rec_homes_real[i]);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
	dt_json_end_obj(j);
}

static void dt_facts_json_launches(struct dt_json *j, const struct dt_facts *f)
{
	dt_json_key(j, "launches");
	dt_json_arr(j);
	for (size_t i = 0; i < f->nlaunches; i++) {
		const struct dt_record *rec = f->launches[i];
		dt_json_obj(j);
		dt_json_kstr(j, "type", dt_rec_type_name(rec->type));
		dt_json_kint(j, "pid", rec->pid);
		dt_json_kstr(j, "cwd", rec->cwd);
		dt_json_key(j, "argv");
		dt_json_arr(j);
		for (size_t k = 0; k < rec->argc; k++)
			dt_json_str(j, rec->argv[k]);
		dt_json_end_arr(j);
		dt_json_kbool(j, "argv_truncated", rec->argv_trunc);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

void dt_facts_json(FILE *out, const struct dt_facts *f)
{
	struct dt_json j;
	dt_json_init(&j, out, 1);
	dt_json_obj(&j);
	dt_json_key(&j, "denytrace_version");
	dt_json_str(&j, f->version);
	dt_json_key(&j, "ring_format");
	dt_json_uint(&j, f->ring_format);
	dt_json_key(&j, "kernel");
	dt_json_str_or_null(&j, f->kernel);
	dt_json_key(&j, "distribution");
	dt_json_str_or_null(&j, f->distro);
	dt_json_key(&j, "wsl");
	dt_json_bool(&j, f->wsl);
	dt_json_key(&j, "sandboxes_seen");
	dt_json_arr(&j);
	if (f->sb_bubblewrap)
		dt_json_str(&j, "bubblewrap");
	if (f->sb_landlock)
		dt_json_str(&j, "landlock-like");
	if (f->sb_seccomp)
		dt_json_str(&j, "seccomp");
	dt_json_end_arr(&j);
	dt_facts_json_codex(&j, f);
	dt_facts_json_homes(&j, f);
	dt_json_key(&j, "roots");
	dt_json_arr(&j);
	for (size_t i = 0; i < f->nroots; i++) {
		dt_json_obj(&j);
		dt_json_key(&j, "path");
		dt_json_str(&j, f->roots[i].path);
		dt_json_key(&j, "realpath");
		dt_json_str(&j, f->roots[i].realpath);
		dt_json_key(&j, "source");
		dt_json_str(&j, f->roots[i].source);
		dt_json_key(&j, "under_protected");
		dt_json_str(&j, f->roots[i].protected_by);
		dt_json_end_obj(&j);
	}
	dt_json_end_arr(&j);
	dt_facts_json_launches(&j, f);
	dt_json_key(&j, "redacted");
	dt_json_bool(&j, f->redacted);
	dt_json_end_obj(&j);
	fputc('\n', out);
}

/* argv as one shell-quoted line */
static void dt_shell_line(FILE *out, const struct dt_record *rec)
{
	for (size_t k = 0; k < rec->argc; k++) {
		if (k)
			fputc(' ', out);
		dt_shell_word(out, rec->argv[k]);
	}
	if (rec->argv_trunc)
		fputs(" ...", out);
}

static void dt_facts_md_config(FILE *out, const struct dt_facts *f)
{
	fputs("\n### Codex config.toml\n\n", out);
	if (!f->config_path[0]) {
		fputs("No config path known (HOME and CODEX_HOME unset).\n", out);
	} else if (!f->config_found) {
		dt_md_code_span(out, f->config_path, 0);
		fputs(" does not exist or is unreadable.\n", out);
	} else {
		fputs("Relevant lines of ", out);
		dt_md_code_span(out, f->config_path, 0);
		fputs(f->config_recorded ? " (as recorded at launch):\n\n" : ":\n\n", out);
		if (f->config_excerpt && *f->config_excerpt)
			dt_md_fence(out, "toml", f->config_excerpt);
		else
			fputs("(none: no sandbox_mode, default_permissions, [permissions] or "
			      "[sandbox_workspace_write])\n",
			      out);
	}
}

static void dt_facts_md_roots(FILE *out, const struct dt_facts *f)
{
	fputs("\n### Roots\n\n", out);
	if (!f->nroots)
		fputs("No roots known.\n", out);
	else
		fputs(
		    "| root | realpath | source | under .git/.codex/.agents |\n|---|---|---|---|\n",
		    out);
	for (size_t i = 0; i < f->nroots; i++) {
		const struct dt_fact_root *fr = &f->roots[i];
		fputs("| ", out);
		dt_md_code_span(out, fr->path, 1);
		fputs(" | ", out);
		if (fr->realpath)
			dt_md_code_span(out, fr->realpath, 1);
		else
			fputs("(does not exist here)", out);
		fputs(" | ", out);
		dt_md_text(out, fr->source);
		fprintf(out, " | %s%s%s |\n", fr->protected_by ? "**yes** (`" : "no",
		        fr->protected_by ? fr->protected_by : "", fr->protected_by ? "`)" : "");
	}
}

static void dt_facts_md_launches(FILE *out, const struct dt_facts *f)
{
	fputs("\n### Launch command lines\n\n", out);
	if (!f->nlaunches)
		fputs("None recorded (no launch record, no codex, hermes or hcom process).\n", out);
	for (size_t i = 0; i < f->nlaunches; i++) {
		const struct dt_record *rec = f->launches[i];
		fprintf(out, "%s (pid %lld):\n\n",
		        rec->type == DT_REC_LAUNCH ? "Launched" : "Process", (long long)rec->pid);
		char *line = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&line, &len);
		if (m) {
			dt_shell_line(m, rec);
			fclose(m);
		}
		dt_md_fence(out, "sh", line ? line : "");
		fputc('\n', out);
		free(line);
	}
}

void dt_facts_markdown(FILE *out, const struct dt_facts *f)
{
	fputs("\n## Facts\n\n", out);
	fprintf(out, "- **denytrace**: %s (ring format %u)\n", f->version, f->ring_format);
	fputs("- **kernel**: ", out);
	dt_md_code_span(out, f->kernel[0] ? f->kernel : "unknown", 0);
	fputs("\n- **distribution**: ", out);
	dt_md_code_span(out, f->distro[0] ? f->distro : "unknown", 0);
	fprintf(out, "\n- **WSL**: %s%s%s%s\n", f->wsl ? "yes" : "no", f->wsl ? " (" : "",
	        f->wsl ? f->wsl_why : "", f->wsl ? ")" : "");
	fputs("- **sandboxes seen**: ", out);
	int any = 0;
	if (f->sb_bubblewrap)
		fprintf(out, "%sbubblewrap", any++ ? ", " : "");
	if (f->sb_landlock)
		fprintf(out, "%sLandlock-like (EACCES on a read-write mount the mode bits allow)",
		        any++ ? ", " : "");
	if (f->sb_seccomp)
		fprintf(out, "%sseccomp filter (mode 2)", any++ ? ", " : "");
	fputs(any ? "\n" : "none recorded\n", out);
	fputs("- **Codex**: ", out);
	if (!f->codex_path[0]) {
		fputs("not found on PATH\n", out);
	} else {
		dt_md_code_span(out,
		                f->codex_status == 0 && f->codex_version[0] ? f->codex_version
		                                                            : "version unknown",
		                0);
		fputs(" at ", out);
		dt_md_code_span(out, f->codex_path, 0);
		if (f->codex_status == -2)
			fputs(" (`codex --version` timed out after 10 s)", out);
		fputc('\n', out);
	}
	for (size_t i = 0; i < f->nrec_homes; i++) {
		fputs(i ? ", " : "- **HOME of the traced processes**: ", out);
		dt_md_code_span(out, f->rec_homes[i], 0);
		fputs(" (realpath ", out);
		dt_md_code_span(
		    out, f->rec_homes_real[i] ? f->rec_homes_real[i] : "does not exist here", 0);
		fputc(')', out);
		if (i + 1 == f->nrec_homes)
			fputc('\n', out);
	}
	fputs("- **HOME of denytrace evidence**: ", out);
	dt_md_code_span(out, f->home[0] ? f->home : "unset", 0);
	if (f->home_real[0]) {
		fputs(" (realpath ", out);
		dt_md_code_span(out, f->home_real, 0);
		fputc(')', out);
	}
	fputc('\n', out);

	dt_facts_md_config(out, f);
	dt_facts_md_roots(out, f);
	dt_facts_md_launches(out, f);
}
