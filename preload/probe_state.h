/* SPDX-License-Identifier: MIT */
/* Process-wide state of the probe: configuration read at load time, the
 * ring mapping, the process record, backtraces. */
#ifndef DENYTRACE_PROBE_STATE_H
#define DENYTRACE_PROBE_STATE_H

#include <limits.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rawsys.h"

#include "probe.h"
#include "ring.h"

/* Scratch space for the process record (lives in the arena). */
struct dt_proc_scratch {
	unsigned char rec[DT_REC_MAX];
	char buf[65536]; /* /proc files */
	char path[PATH_MAX];
};

/* The mapped ring, attached on the first record; NULL when unreachable
 * (the probe then stays quiet for the life of the process image). */
DT_HIDDEN struct dt_ring *dt_ring_get(void);
/* The ring if it is already attached, else NULL; never attaches. */
DT_HIDDEN struct dt_ring *dt_ring_peek(void);
/* Set once the program was found to have unmapped, protected or not
 * inherited some of the probe's own memory (an arena, the ring): the rest
 * of it (the module tables backtrace.c keeps) is then not trusted either,
 * and stacks are given up rather than read from it. */
DT_HIDDEN extern _Atomic int dt_memory_taken;
DT_HIDDEN void dt_note_memory_taken(void);
/* dt_ring_peek for a caller that may make system calls: NULL also when a
 * store to the mapping would fault (dt_ring_put's check). */
DT_HIDDEN struct dt_ring *dt_ring_peek_storable(void);
/* Writes rec, and goes quiet for good when the file was truncated under
 * the mapping, or the mapping unmapped or protected by the program (the
 * mapping stays: another thread may be using it). */
DT_HIDDEN void dt_ring_put(struct dt_ring *ring, void *rec);
/* A level of the probe that a siglongjmp abandoned (see record.c): if it
 * was attaching the ring, the attach is given up so another can try. */
DT_HIDDEN void dt_ring_abandon_attach(int level);

/* Writes this process's record once per process (not per exec). */
/* pid: this process's getpid(), which the caller already has. */
DT_HIDDEN void dt_ensure_process_record(struct dt_ring *ring, struct dt_proc_scratch *s, int pid);

/* Where a stack walk starts: the registers of a return point. */
struct dt_unw_regs {
	uint64_t pc, sp, fp;
};
/* The caller's registers at the point this call returns to (unwind.c). */
DT_HIDDEN void dt_unwind_start(struct dt_unw_regs *r);
/* The return addresses from `from` outwards, reading the stack only in
 * [from->sp, stack_hi): how many (at most max); *truncated is set when the
 * walk stopped before the outermost frame. */
DT_HIDDEN int dt_unwind(const struct dt_unw_regs *from, uint64_t stack_hi, void **ips, int max,
                        int *truncated);
/* Changes at every dlclose: what was cached about modules is stale.
 * DT_UNW_UNSETTLED while a dlclose runs: cache nothing, trust no cache. */
DT_HIDDEN uint64_t dt_unwind_generation(void);
#define DT_UNW_UNSETTLED (~0ULL)

/* Appends DT_T_FRAME and DT_T_MODULE fields for the call stack from
 * `from`, skipping the probe's own frames, and DT_T_STACK_TRUNC when the
 * walk stopped short. */
DT_HIDDEN void dt_put_backtrace(struct dt_buf *b, const struct dt_unw_regs *from);
/* DENYTRACE_BACKTRACE: 0 none, anything else the cached unwinder. */
enum { DT_BT_OFF, DT_BT_ON };

/* Times, ids and name (selfids.h). tid: the kernel's thread id, or 0 to
 * ask it and the ids afresh (the process and entry records) */
DT_HIDDEN void dt_put_common(struct dt_buf *b, int pid, int tid);
DT_HIDDEN const char *dt_sqlite_role(const char *path, enum dt_kind kind);

/* Set while this thread records: stops recursion. */
DT_HIDDEN extern __thread int dt_in_probe __attribute__((tls_model("initial-exec")));

/* This process's pid as fork handlers keep it. A vfork child (or a raw
 * clone) sees a different getpid() and shares its parent's memory, so it
 * must not touch per-process markers or load libraries. */
DT_HIDDEN extern _Atomic int dt_self_pid;
static inline int dt_in_vfork_child(void)
{
	return (int)syscall(SYS_getpid) != __atomic_load_n((int *)&dt_self_pid, __ATOMIC_RELAXED);
}

/* Fork handler of the ring module: a fork taken while another thread was
 * attaching leaves the child, which has only the forking thread, to try
 * again. */
DT_HIDDEN void dt_ring_after_fork(void);
/* Fork handler of the recording path (record.c). */
DT_HIDDEN void dt_record_after_fork(void);
/* Writes DT_REC_ENTRY: this image runs with the probe (entry.c). */
DT_HIDDEN void dt_record_entry(void);

/* Configuration, read once by the constructor. */
struct dt_config {
	int ring_fd;                           /* DENYTRACE_FD, -1 if none */
	unsigned long long ring_dev, ring_ino; /* DENYTRACE_RING_ID */
	int has_ring_id;
	unsigned long long ring_created; /* its third field: the header's created_ns */
	int has_ring_created;
	char ring_path[PATH_MAX]; /* DENYTRACE_RING */
	int backtrace;            /* DENYTRACE_BACKTRACE: DT_BT_* */
	char env_names[1024];     /* DENYTRACE_ENV: extra variables, comma list */
	int entry;                /* DENYTRACE_ENTRY: write DT_REC_ENTRY at load */
};
DT_HIDDEN extern struct dt_config dt_config;

/* Whether the launcher named a ring at all; without one the probe never
 * records, for the life of the process image. */
static inline int dt_ring_named(void)
{
	return dt_config.ring_fd >= 0 || dt_config.ring_path[0];
}

#endif
