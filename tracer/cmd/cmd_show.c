/* SPDX-License-Identifier: MIT */
/* denytrace show: the raw records of a ring, for people or as JSON lines. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "options.h"
#include "recfmt.h"
#include "records.h"
#include "ringfile.h"
#include "sqlite_role.h"
#include "xalloc.h"

static const char show_usage[] =
    "usage: denytrace show [options] [RING]\n"
    "\n"
    "Prints the records of RING (default ./denytrace.ring), oldest first: refusals,\n"
    "process records, read-only reopens and successful writes.\n"
    "\n";

static volatile sig_atomic_t show_stop;

static void show_on_signal(int sig)
{
	(void)sig;
	show_stop = 1;
}

/* What the command line asked for. */
struct show_opts {
	int jsonl, verbose, follow, symbols, only;
	const char *path;
};

static int show_type(void *args, const char *val)
{
	struct show_opts *o = args;
	o->only = 0;
	for (int t = DT_REC_DENIAL; t <= DT_REC_ENTRY; t++)
		if (!strcmp(val, dt_rec_type_name(t)))
			o->only = t;
	if (!o->only)
		return dt_fail(DT_EXIT_USAGE, "show: --type takes denial, process, write, "
		                              "reopen, launch, exec, config or entry");
	return 0;
}

static const struct dt_option show_options[] = {
#define DT_OPTION(...) DT_OPT_ROW(struct show_opts, __VA_ARGS__)
#include "opts_show.def"
#undef DT_OPTION
};

const struct dt_cmd_options show_cmd = {
    "show",        show_usage, NULL, show_options, sizeof(show_options) / sizeof(show_options[0]),
    DT_EXIT_USAGE, NULL};

/* Parses the options into o. Returns -1 to go on, else the exit status
 * (with the message printed, or the help). */
static int show_parse(int argc, char **argv, struct show_opts *o)
{
	const char **rings = calloc((size_t)argc + 1, sizeof(*rings));
	size_t nrings = 0;
	int rc = dt_parse_options(&show_cmd, argc, argv, o, rings, &nrings);
	if (rc < 0 && nrings > 1)
		rc = dt_fail(DT_EXIT_USAGE, "show: one ring at a time ('%s' and '%s')", rings[0],
		             rings[1]);
	o->path = nrings ? rings[0] : NULL;
	free(rings);
	if (rc >= 0)
		return rc;
	if (!o->path && (rc = dt_default_ring_check("show")))
		return rc;
	if (!o->path)
		o->path = DT_DEFAULT_RING;
	return -1;
}

/* SQLite roles are judged on the whole run (a reopen or a -wal comes
 * after the refusal it explains): feeds what the ring holds now, from pos
 * on, to judge. Returns the position after it. */
static uint64_t show_prescan(struct dt_sqlite_judge *judge, struct dt_ring *ring,
                             unsigned char *buf, int follow, uint64_t pos)
{
	uint64_t seen = pos;
	struct dt_read_stats scan = {0};
	uint32_t slen;
	while (judge && dt_ring_next(ring, &seen, buf, &slen, &scan, follow) == DT_NEXT_RECORD) {
		struct dt_record r;
		if (dt_record_decode(buf, slen, seen, &r) == 0) {
			dt_sqlite_judge_add(judge, &r);
			dt_record_free(&r);
		}
	}
	return seen;
}

static void show_record(const struct show_opts *o, const struct dt_record *r,
                        struct dt_symbolizer *sym)
{
	if (o->only && r->type != o->only)
		return;
	if (o->jsonl) {
		struct dt_json j;
		dt_json_init(&j, stdout, 0);
		dt_record_json(&j, r, sym);
		fputc('\n', stdout);
	} else {
		dt_record_text(stdout, r, o->verbose, sym);
	}
}

/* --follow at a record still being written: a writer killed mid-record
 * never publishes it, so after a grace period it is skipped. Returns 1
 * when *pos moved past it. */
static int show_skip_stuck(uint64_t *pos, uint64_t *busy_pos, struct timespec *busy_since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (*busy_pos != *pos) {
		*busy_pos = *pos;
		*busy_since = now;
	} else if (now.tv_sec - busy_since->tv_sec >= 2) {
		(*pos)++;
		return 1;
	}
	return 0;
}

int cmd_show(int argc, char **argv)
{
	struct show_opts o = {.symbols = 1};
	int rc = show_parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	const char *path = o.path;
	int follow = o.follow;

	struct dt_ringfile rf;
	char err[512];
	rc = dt_ringfile_open(path, &rf, err, sizeof(err));
	if (rc)
		return dt_fail(rc, "%s", err);

	struct dt_symbolizer *sym = o.symbols ? dt_symbolizer_new() : NULL;
	unsigned char *buf = xmalloc(DT_REC_MAX);
	if (follow) {
		struct sigaction sa = {0};
		sa.sa_handler = show_on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	/* With --follow, later records add to what is known as they arrive. */
	struct dt_sqlite_judge *judge = dt_sqlite_judge_new();
	uint64_t pos = dt_ring_tail(&rf.ring);
	uint64_t seen = show_prescan(judge, &rf.ring, buf, follow, pos);

	struct dt_read_stats st = {0};
	uint64_t busy_pos = UINT64_MAX;
	struct timespec busy_since = {0};
	while (!show_stop) {
		uint32_t len;
		int got = dt_ring_next(&rf.ring, &pos, buf, &len, &st, follow);
		if (got == DT_NEXT_RECORD) {
			struct dt_record r;
			if (dt_record_decode(buf, len, pos, &r) < 0) {
				st.corrupt++;
				continue;
			}
			if (pos > seen)
				dt_sqlite_judge_add(judge, &r);
			dt_sqlite_judge_record(judge, &r);
			show_record(&o, &r, sym);
			dt_record_free(&r);
			continue;
		}
		if (!follow || got == DT_NEXT_GONE)
			break;
		fflush(stdout);
		if (got == DT_NEXT_BUSY && show_skip_stuck(&pos, &busy_pos, &busy_since)) {
			st.skipped++;
			continue;
		}
		usleep(50 * 1000);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		free(buf);
		dt_symbolizer_free(sym);
		dt_ringfile_close(&rf);
		return dt_fail(DT_EXIT_IO, "show: writing the output failed");
	}
	uint64_t lost, dropped, unseen;
	if (dt_ring_counters(&rf.ring, &lost, &dropped, &unseen) < 0)
		st.truncated = 1;
	if (lost && !o.jsonl)
		fprintf(stderr,
		        "denytrace: %llu older records were overwritten (ring too small; "
		        "use run --size)\n",
		        (unsigned long long)lost);
	if (unseen && !o.jsonl)
		fprintf(stderr,
		        "denytrace: %llu refusal%s not recorded: made after a process installed "
		        "a seccomp filter of its own\n",
		        (unsigned long long)unseen, unseen == 1 ? "" : "s");
	free(buf);
	dt_sqlite_judge_free(judge);
	dt_symbolizer_free(sym);
	dt_ringfile_close(&rf);
	if (st.truncated)
		return dt_fail(DT_EXIT_BADINPUT,
		               "%s shrank while it was read (truncated by whoever can write it); "
		               "the records above were read before that",
		               path);
	if (st.corrupt)
		return dt_fail(DT_EXIT_BADINPUT, "%s: %llu corrupt record%s skipped", path,
		               (unsigned long long)st.corrupt, st.corrupt == 1 ? "" : "s");
	return DT_EXIT_OK;
}
