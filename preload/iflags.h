/* SPDX-License-Identifier: MIT */
/*
 * The inode flags (chattr's immutable, append-only...) of a path an EPERM
 * refused, and of its directory: the one refusal no mode bit, mount or
 * sandbox explains. DT_T_IFLAGS for the path itself, DT_T_DIR_IFLAGS for
 * the directory it is in; each only when it could be read.
 */
#ifndef DENYTRACE_IFLAGS_H
#define DENYTRACE_IFLAGS_H

#include "probe.h"
#include "resolve.h"
#include "ring.h"

DT_HIDDEN void dt_put_inode_flags(struct dt_buf *b, const struct dt_resolved *r);

#endif
