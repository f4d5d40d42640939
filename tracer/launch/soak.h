/* SPDX-License-Identifier: MIT */
/* Running a command many times, each run a `denytrace run` of its own with
 * its own ring, J at a time, and counting the failures and the refusals of
 * failing and passing runs: the runner of `denytrace soak`, which `denytrace
 * fix --verify --runs N` also uses for its before and after. */
#ifndef DENYTRACE_SOAK_H
#define DENYTRACE_SOAK_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hostid.h"

/* A distinct refusal (path, op, errno) and in how many runs it appeared. */
struct dt_soak_key {
	char *path, *op;
	char *py_line; /* "save_task at worker.py:3" (report.h's dt_py_site), or NULL */
	int err, injected;
	unsigned nfail, npass;
	size_t problem; /* its problem, in dt_soak.problems, or SIZE_MAX */
};

/* A problem (a finding, findings.h) across runs: the same cause, root,
 * grant and subject in two runs is the same problem. */
struct dt_soak_problem {
	char *key, *title, *advice;
	int cause; /* enum dt_cause */
	unsigned nfail, npass;
};

/* A recorded fact's value (difference.h: a directory's mode, a mount, the
 * uid...) and in how many failing and passing runs a refusal or successful
 * write carried it: what separates failing runs from passing ones. */
struct dt_soak_fact {
	char *id, *what, *subject, *value;
	unsigned nfail, npass;
};

/* One finished run (soak --junit). */
struct dt_soak_result {
	int index, status, timed_out, failed;
	double secs;
	size_t *keys; /* its distinct refusals, in dt_soak.keys */
	size_t nkeys;
	size_t host; /* where it ran, in dt_soak.hosts */
};

/* A machine the runs ran on, and its share of them: one for a soak, one
 * per shard for soak --merge. */
struct dt_soak_host {
	struct dt_host_id id;
	unsigned shard, nshards; /* 0 of 0: the soak was not sharded */
	unsigned runs, failures;
	double elapsed; /* soak --merge: the shard's own */
	char *file;     /* soak --merge: the summary it came from */
};

struct dt_soak_run {
	pid_t pid;
	int index;
	double start;
	int timed_out;
};

struct dt_soak_failed {
	int index, status, timed_out;
	size_t host; /* in dt_soak.hosts */
	uint64_t seed;
	char ring[PATH_MAX];
};

struct dt_soak {
	struct dt_soak_key *keys;
	size_t nkeys;
	struct dt_soak_problem *problems;
	size_t nproblems;
	struct dt_soak_result *results; /* in the order they finished */
	size_t nresults;
	struct dt_soak_failed *failed;
	size_t nfailed;
	struct dt_soak_host *hosts;
	size_t nhosts;
	struct dt_soak_fact *facts;
	size_t nfacts;
	unsigned done, failures;
	uint64_t refusals;
	int first_fail;
	char first_ring[PATH_MAX];
};

/* What to run and how (soak's command line; fix --verify --runs fills it
 * too). */
struct dt_soak_opts {
	unsigned runs, jobs;
	unsigned shard, nshards; /* --shard K/N (1-based K); 0 of 0: all runs */
	unsigned shards;         /* --shards N: K from $JOB_COMPLETION_INDEX */
	int until_fail, quiet, have_seed;
	int merge, markdown; /* --merge: the words after the options are summaries */
	double timeout;
	int json;                             /* --json: the summary as JSON */
	const char *keep, *json_file, *junit; /* --json=FILE: JSON there too */
	const char *out;                      /* -o FILE: the summary there */
	uint64_t seed;
	const char **deny; /* --deny rules as given, ndeny of them */
	size_t ndeny;
	char **cmd;
	const char *cwd; /* where each run starts; NULL: here */
	/* called with each finished run's ring before it is removed (may be
	 * NULL): index, the ring, and whether the run failed */
	void (*on_run)(void *ctx, int index, const char *ring, int failed);
	void *ctx;
};

/* Set (by a signal handler) to stop starting runs and kill those in flight. */
extern volatile sig_atomic_t dt_soak_stop;

double dt_soak_now(void);
/* The seed run number index (1-based) was given: o->seed for the first,
 * sharded or not. */
uint64_t dt_soak_seed(const struct dt_soak_opts *o, int index);
/* How many runs this shard runs, and the run index of its nth (from 0):
 * shard K of N takes every Nth index from K, so that the shards of one
 * --runs R together run 1..R once each, with the seeds one machine would
 * have given them. */
unsigned dt_soak_planned(const struct dt_soak_opts *o);
int dt_soak_index(const struct dt_soak_opts *o, unsigned nth);
/* s's first host: this machine, as shard o->shard of o->nshards. 0 or -1
 * when out of memory. */
int dt_soak_add_this_host(struct dt_soak *s, const struct dt_soak_opts *o);
/* 95% Wilson score interval for k failures out of n. */
void dt_soak_wilson(unsigned k, unsigned n, double *lo, double *hi);
/* The --keep directory (privdir.h: the caller's alone, or created), the
 * seed, this binary (self) and the temporary directory (dir, a mkdtemp
 * template on entry). Returns -1 to go on, else the exit status with the
 * message printed. */
int dt_soak_prepare(struct dt_soak_opts *o, char *self, size_t selfcap, char *dir);
/* Runs the command until o->runs are done (or --until-fail, a signal, or a
 * run denytrace could not start: then returns 1 with msg set). s starts
 * zeroed with first_fail -1. */
int dt_soak_loop(struct dt_soak *s, const struct dt_soak_opts *o, const char *self, const char *dir,
                 double t0, char *msg, size_t msgcap);
void dt_soak_unlink_run(const char *dir, int index);
/* Removes the temporary directory and whatever is left in it. */
void dt_soak_remove_dir(const char *dir);
void dt_soak_free(struct dt_soak *s);

#endif
