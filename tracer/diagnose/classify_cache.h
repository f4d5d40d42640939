/* SPDX-License-Identifier: MIT */
/* What the classifier works out from a process record and a path, kept for
 * the refusals that follow (a worker refused 25,000 times looks up the same
 * mounts 25,000 times otherwise). A cache belongs to one report: its keys
 * are the report's process records by address, and the grant hints it keeps
 * were worded for that report's roots. Every function accepts a NULL cache
 * and then computes, so that a caller without one gets the same answers. */
#ifndef DENYTRACE_CLASSIFY_CACHE_H
#define DENYTRACE_CLASSIFY_CACHE_H

#include "mounts.h"
#include "records.h"

struct dt_classify_cache;

struct dt_classify_cache *dt_classify_cache_new(void);
void dt_classify_cache_free(struct dt_classify_cache *cc);

/* dt_proc_sandboxed and dt_proc_has_writable_mount, once per process. */
int dt_cc_sandboxed(struct dt_classify_cache *cc, const struct dt_record *proc);
int dt_cc_has_writable_mount(struct dt_classify_cache *cc, const struct dt_record *proc);

/* dt_mount_for_path, once per process and path. */
const struct dt_mount *dt_cc_mount_for_path(struct dt_classify_cache *cc,
                                            const struct dt_record *proc, const char *path);

/* A grant hint worded once for (process, errno, directory): the text kept,
 * or NULL; dt_cc_hint_keep stores one (a copy). */
const char *dt_cc_hint(struct dt_classify_cache *cc, const struct dt_record *proc, int err,
                       const char *dir);
void dt_cc_hint_keep(struct dt_classify_cache *cc, const struct dt_record *proc, int err,
                     const char *dir, const char *hint);

#endif
