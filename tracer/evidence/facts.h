/* SPDX-License-Identifier: MIT */
/*
 * The facts a maintainer asks for (kernel, distribution, sandboxes seen,
 * Codex and its config, homes, roots, launches), gathered from this machine
 * and a report's rings (facts.c), written as JSON or the "Facts" section of
 * report.md (facts_render.c).
 */
#ifndef DENYTRACE_FACTS_H
#define DENYTRACE_FACTS_H

#include <stddef.h>
#include <stdio.h>

#include "redact.h"
#include "report.h"

struct dt_fact_root {
	char *path, *realpath, *source;
	const char *protected_by; /* ".git", ".codex", ".agents" or NULL */
};

struct dt_facts {
	char version[64];
	unsigned ring_format;
	char kernel[512];
	char distro[256];
	int wsl;
	char wsl_why[128];
	int sb_bubblewrap, sb_landlock, sb_seccomp;
	char codex_path[4096]; /* "" when Codex is not on PATH */
	char codex_version[512];
	int codex_status; /* of `codex --version`: 0, exit status, -1, -2 timeout */
	char config_path[4096];
	int config_found;
	int config_recorded; /* from the ring's snapshot, not the file as it is now */
	char *config_excerpt;
	char home[4096], home_real[4096];
	char **rec_homes, **rec_homes_real; /* HOME of the traced processes; realpath or NULL */
	size_t nrec_homes;
	struct dt_fact_root *roots;
	size_t nroots;
	const struct dt_record **launches; /* launch records, codex/hermes/hcom processes */
	size_t nlaunches;
	int redacted;
};

/* Gathers the facts about this machine and the report's rings. */
void dt_facts_collect(struct dt_facts *f, const struct dt_report *r);
void dt_facts_json(FILE *out, const struct dt_facts *f);
/* The "Facts" section of report.md. */
void dt_facts_markdown(FILE *out, const struct dt_facts *f);
void dt_facts_free(struct dt_facts *f);

#endif
