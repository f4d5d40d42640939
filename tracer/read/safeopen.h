/* SPDX-License-Identifier: MIT */
/* Opening a file the CLI was told to read (a ring, a config, a module a ring
 * names) without trusting what sits at that path: a FIFO would block open(2)
 * forever, a terminal would become the controlling tty, a device could be
 * anything. Only regular files are read. */
#ifndef DENYTRACE_SAFEOPEN_H
#define DENYTRACE_SAFEOPEN_H

#include <sys/stat.h>

enum { DT_OPEN_NOT_REGULAR = -2 };

/* Opens path read-only (O_CLOEXEC, blocking again once it is known to be a
 * regular file) and fills *st when st is not NULL. Returns the fd; -1 with
 * errno set when open or fstat failed; DT_OPEN_NOT_REGULAR when it is a
 * FIFO, device, directory or socket (nothing is left open then). */
int dt_open_regular(const char *path, struct stat *st);

/* "a FIFO", "a directory", ... for "X is not a regular file (a FIFO)". */
const char *dt_file_kind(mode_t mode);

#endif
