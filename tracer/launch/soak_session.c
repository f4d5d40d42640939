/* SPDX-License-Identifier: MIT */
/* A soak from its parsed options to its summary in place: the outputs
 * begun before the first run, the runs (or the shards' summaries merged),
 * the summary written everywhere asked. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "soak_render.h"
#include "soak_session.h"
#include "soakmerge.h"

static void soak_on_signal(int sig)
{
	(void)sig;
	dt_soak_stop = 1;
}

void dt_soak_outputs_abort(struct dt_soak_outputs *f)
{
	if (f->out.f)
		dt_outfile_abort(&f->out);
	if (f->json.f)
		dt_outfile_abort(&f->json);
	if (f->junit.f)
		dt_outfile_abort(&f->junit);
}

/* Begins -o (then made stdout), --json=FILE and --junit. Returns -1 to go
 * on, else the exit status with the message printed. */
int dt_soak_outputs_open(const struct dt_soak_opts *o, struct dt_soak_outputs *f)
{
	char err[1024];
	const char *bad = NULL;
	if (o->out && dt_outfile_begin(&f->out, o->out, DT_OUT_NEW_OR_OWN, err, sizeof(err)) < 0)
		bad = o->out;
	else if (o->json_file &&
	         dt_outfile_begin(&f->json, o->json_file, DT_OUT_NEW_OR_OWN, err, sizeof(err)) < 0)
		bad = o->json_file;
	else if (o->junit && strcmp(o->junit, "-") &&
	         dt_outfile_begin(&f->junit, o->junit, DT_OUT_NEW_OR_OWN, err, sizeof(err)) < 0)
		bad = o->junit;
	else if (o->out && (fflush(stdout) != 0 || dup2(fileno(f->out.f), 1) < 0)) {
		snprintf(err, sizeof(err), "%s", strerror(errno));
		bad = o->out;
	}
	if (bad) {
		dt_soak_outputs_abort(f);
		return dt_fail(DT_EXIT_INTERNAL, "soak: cannot write %s (%s); nothing was run", bad,
		               err);
	}
	f->junit_f = !o->junit ? NULL : strcmp(o->junit, "-") ? f->junit.f : stdout;
	return -1;
}

/* Puts each finished output in its place; 0, or an exit status when one
 * could not be written. */
static int soak_commit_outputs(const struct dt_soak_opts *o, struct dt_soak_outputs *f)
{
	int rc = 0;
	if (f->out.f && (fflush(stdout) != 0 || dt_outfile_commit(&f->out) != 0))
		rc =
		    dt_fail(DT_EXIT_INTERNAL, "soak: cannot write %s: %s", o->out, strerror(errno));
	if (f->json.f && dt_outfile_commit(&f->json) != 0)
		rc = dt_fail(DT_EXIT_INTERNAL, "soak: cannot write %s: %s", o->json_file,
		             strerror(errno));
	if (f->junit.f && dt_outfile_commit(&f->junit) != 0)
		rc = dt_fail(DT_EXIT_INTERNAL, "soak: cannot write %s: %s", o->junit,
		             strerror(errno));
	dt_soak_outputs_abort(f);
	return rc;
}

/* The summary on stdout (-o FILE already put there): text, --json or
 * --markdown; and --json=FILE, --junit. Returns 0 or an exit status. */
static int soak_summary(const struct dt_soak_summary *m, const struct dt_soak_outputs *f)
{
	const struct dt_soak_opts *o = m->o;
	if (o->json)
		dt_soak_json(stdout, m);
	else if (o->markdown)
		dt_soak_markdown(stdout, m);
	else
		dt_soak_text(stdout, m);
	if (fflush(stdout) != 0 || ferror(stdout))
		return dt_fail(DT_EXIT_INTERNAL, "soak: writing the summary failed");
	if (f->json.f)
		dt_soak_json(f->json.f, m);
	if (f->junit_f)
		dt_soak_junit(f->junit_f, m);
	return 0;
}

/* Writes the summary m everywhere asked; returns 0 or an exit status. */
static int soak_write(const struct dt_soak_summary *m, struct dt_soak_outputs *f)
{
	int rc = soak_summary(m, f);
	if (rc)
		dt_soak_outputs_abort(f);
	else
		rc = soak_commit_outputs(m->o, f);
	return rc;
}

/* soak --merge FILE...: the shards' summaries added up. */
int dt_soak_session_merge(struct dt_soak_opts *o, struct dt_soak_outputs *files)
{
	size_t n = 0;
	while (o->cmd[n])
		n++;
	struct dt_soak s = {0};
	struct dt_soak_merged merged = {0};
	s.first_fail = -1;
	int rc = dt_soak_merge(&s, o, &merged, o->cmd, n);
	if (rc < 0) {
		struct dt_soak_summary m = {
		    &s, o, NULL, merged.elapsed, merged.interrupted, time(NULL), merged.missing};
		rc = soak_write(&m, files);
	} else {
		dt_soak_outputs_abort(files);
	}
	if (!rc)
		rc = merged.missing[0] ? DT_EXIT_INCOMPLETE
		     : s.failures      ? DT_EXIT_FOUND
		                       : DT_EXIT_OK;
	dt_soak_free(&s);
	dt_soak_merged_free(&merged);
	return rc;
}

/* Runs the soak (o parsed, outputs begun, dir made) and writes its
 * summary. */
int dt_soak_session_run(struct dt_soak_opts *o, struct dt_soak_outputs *files, const char *self,
                        const char *dir)
{
	struct sigaction sa = {0};
	sa.sa_handler = soak_on_signal;
	sigemptyset(&sa.sa_mask);
	static const int stops[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction old[3];
	for (int k = 0; k < 3; k++)
		sigaction(stops[k], &sa, &old[k]);
	struct dt_soak s = {0};
	s.first_fail = -1;
	char infra_msg[1024] = "";
	double t0 = dt_soak_now();
	time_t started = time(NULL);
	int infra = dt_soak_add_this_host(&s, o) < 0;
	if (infra)
		snprintf(infra_msg, sizeof(infra_msg), "out of memory");
	else
		infra = dt_soak_loop(&s, o, self, dir, t0, infra_msg, sizeof(infra_msg));
	int interrupted = dt_soak_stop != 0;
	for (int k = 0; k < 3; k++)
		sigaction(stops[k], &old[k], NULL);

	int rc;
	if (infra && !s.done) {
		dt_soak_outputs_abort(files);
		rc = dt_fail(DT_EXIT_INTERNAL, "soak: %s", infra_msg);
	} else {
		struct dt_soak_summary m = {&s,          o,       dir, dt_soak_now() - t0,
		                            interrupted, started, NULL};
		rc = soak_write(&m, files);
	}
	dt_soak_remove_dir(dir); /* the first failing run's files, unless kept */
	if (!rc)
		rc = s.failures ? DT_EXIT_FOUND : interrupted ? DT_EXIT_INTERRUPTED : DT_EXIT_OK;
	dt_soak_free(&s);
	return rc;
}
