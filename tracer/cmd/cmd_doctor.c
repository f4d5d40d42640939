/* SPDX-License-Identifier: MIT */
/* denytrace doctor: can denytrace work on this machine (launch/doctor.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "doctor.h"
#include "json.h"
#include "options.h"
#include "ring_format.h"
#include "version.h"
#include "xalloc.h"

static const char doctor_usage[] =
    "usage: denytrace doctor [--json] [--codex-shapes]\n"
    "\n"
    "Checks that denytrace can work on this machine and prints one line per\n"
    "check (ok, warn or FAIL) with a fix: the probe is found and loads, a ring\n"
    "can be created, bubblewrap can create a sandbox, Landlock and seccomp user\n"
    "notification are available, Codex is on PATH (its version, and the Codex\n"
    "versions denytrace's model of Codex was checked against: a warning when it\n"
    "is none of them), and CODEX_HOME is outside the temporary directory.\n"
    "With --codex-shapes it also runs that Codex on every launch shape the\n"
    "model was checked on and names each shape where Codex and the model differ.\n"
    "\n";

struct doctor_args {
	int json;
	int codex_shapes;
};

static const struct dt_option doctor_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct doctor_args, __VA_ARGS__)
#include "opts_doctor.def"
#undef DT_OPTION
};

const struct dt_cmd_options doctor_cmd = {"doctor",
                                          doctor_usage,
                                          NULL,
                                          doctor_options,
                                          sizeof(doctor_options) / sizeof(doctor_options[0]),
                                          DT_EXIT_USAGE,
                                          NULL};

int cmd_doctor(int argc, char **argv)
{
	struct doctor_args da = {0};
	const char **words = calloc((size_t)argc + 1, sizeof(*words));
	size_t nwords = 0;
	int rc = dt_parse_options(&doctor_cmd, argc, argv, &da, words, &nwords);
	if (rc < 0 && nwords)
		rc = dt_fail(DT_EXIT_USAGE,
		             "doctor: unknown argument '%s'; see 'denytrace doctor --help'",
		             words[0]);
	free(words);
	if (rc >= 0)
		return rc;
	int json = da.json;
	struct dt_check checks[DT_DOCTOR_NCHECKS];
	struct dt_codex_shape_result *shapes = NULL;
	int shapes_ran = 0;
	if (da.codex_shapes)
		shapes = xcalloc(dt_ncodex_shapes, sizeof(*shapes));
	size_t nchecks = dt_doctor_run(checks, shapes, &shapes_ran);
	static const char *const names[] = {"ok", "warn", "FAIL"};
	int failed = 0;
	for (size_t i = 0; i < nchecks; i++)
		failed |= checks[i].status == DT_CHECK_FAIL;
	if (json) {
		struct dt_json j;
		dt_json_init(&j, stdout, 1);
		dt_json_obj(&j);
		dt_json_key(&j, "version");
		dt_json_str(&j, DT_VERSION_STRING);
		dt_json_key(&j, "ok");
		dt_json_bool(&j, !failed);
		dt_json_key(&j, "checks");
		dt_json_arr(&j);
		for (size_t i = 0; i < nchecks; i++) {
			dt_json_obj(&j);
			dt_json_key(&j, "name");
			dt_json_str(&j, checks[i].name);
			dt_json_key(&j, "status");
			dt_json_str(&j, checks[i].status == DT_CHECK_FAIL
			                    ? "fail"
			                    : names[checks[i].status]);
			dt_json_key(&j, "detail");
			dt_json_str(&j, checks[i].detail);
			dt_json_key(&j, "fix");
			dt_json_str(&j, checks[i].fix[0] ? checks[i].fix : NULL);
			dt_json_end_obj(&j);
		}
		dt_json_end_arr(&j);
		if (shapes_ran)
			dt_doctor_shapes_json(&j, shapes);
		dt_json_end_obj(&j);
		fputc('\n', stdout);
	} else {
		printf("denytrace %s (ring format %u)\n", DT_VERSION_STRING, DT_RING_VERSION);
		for (size_t i = 0; i < nchecks; i++) {
			printf("%-4s  %-15s %s", names[checks[i].status], checks[i].name,
			       checks[i].detail);
			if (checks[i].status != DT_CHECK_OK && checks[i].fix[0])
				printf(" (fix: %s)", checks[i].fix);
			putchar('\n');
		}
		if (shapes_ran)
			dt_doctor_shapes_text(shapes);
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		return dt_fail(DT_EXIT_IO, "doctor: writing the output failed");
	free(shapes);
	return failed ? DT_EXIT_FOUND : DT_EXIT_OK;
}
