/* SPDX-License-Identifier: MIT */
/* Process-wide state of the probe: configuration read at load time, the
 * ring mapping, the process record, backtraces. */
#ifndef DENYTRACE_PROBE_STATE_H
#define DENYTRACE_PROBE_STATE_H

#include <limits.h>

#include "probe.h"
#include "ring.h"

#define DT_VERSION_STRING "0.1.0"

/* Scratch space for the process record (lives in the arena). */
struct dt_proc_scratch {
	unsigned char rec[DT_REC_MAX];
	char buf[65536]; /* /proc files */
	char path[PATH_MAX];
	char comm[32];
};

/* The mapped ring, attached on the first record; NULL when unreachable
 * (the probe then stays quiet for the life of the process image). */
DT_HIDDEN struct dt_ring *dt_ring_get(void);

/* Writes this process's record once per process (not per exec). */
DT_HIDDEN void dt_ensure_process_record(struct dt_ring *ring, struct dt_proc_scratch *s);

/* Appends DT_T_FRAME and DT_T_MODULE fields for the current call stack,
 * skipping the probe's own frames. */
DT_HIDDEN void dt_put_backtrace(struct dt_buf *b);

DT_HIDDEN void dt_put_common(struct dt_buf *b, char comm[32]);
DT_HIDDEN const char *dt_sqlite_role(const char *path, enum dt_kind kind);

/* Configuration, read once by the constructor. */
struct dt_config {
	int ring_fd;          /* DENYTRACE_FD, -1 if none */
	unsigned long long ring_dev, ring_ino; /* DENYTRACE_RING_ID */
	int has_ring_id;
	char ring_path[PATH_MAX]; /* DENYTRACE_RING */
	int backtrace;            /* DENYTRACE_BACKTRACE != 0 */
	char env_names[1024];     /* DENYTRACE_ENV: extra variables, comma list */
};
DT_HIDDEN extern struct dt_config dt_config;

#endif
