/* SPDX-License-Identifier: MIT */
/* Opening a file the CLI was told to read (a ring, a config, a module a ring
 * names) without trusting what sits at that path: a FIFO would block open(2)
 * forever, a terminal would become the controlling tty, a device could be
 * anything. Only regular files are read. */
#ifndef DENYTRACE_SAFEOPEN_H
#define DENYTRACE_SAFEOPEN_H

#include <sys/stat.h>
#include <sys/types.h>

enum { DT_OPEN_NOT_REGULAR = -2, DT_OPEN_NOT_OWN = -3, DT_OPEN_TOO_BIG = -4 };

/* Opens path read-only (O_CLOEXEC, blocking again once it is known to be a
 * regular file) and fills *st when st is not NULL. Returns the fd; -1 with
 * errno set when open or fstat failed; DT_OPEN_NOT_REGULAR when it is a
 * FIFO, device, directory or socket (nothing is left open then). */
int dt_open_regular(const char *path, struct stat *st);

/* A file beside a ring or named by one (RING.fix.md, Hermes'
 * kanban/current), which the traced program may have planted: as
 * dt_open_regular, but a symbolic link is not followed (ELOOP), and the
 * file must belong to the caller when own is set (DT_OPEN_NOT_OWN) and
 * hold at most max bytes (DT_OPEN_TOO_BIG). */
int dt_open_planted(const char *path, int own, off_t max, struct stat *st);

/* Reads at most cap - 1 bytes of a file dt_open_planted accepts into buf,
 * NUL-terminated. Returns the length, or -1 (buf empty). */
ssize_t dt_read_planted(const char *path, int own, char *buf, size_t cap);

/* Opens, with flags, the inode pfd (an O_PATH descriptor of path) was
 * opened on and *pinned describes, through /proc/self/fd: not whatever
 * path names by now (by path only where there is no /proc). Returns the
 * fd, or -1 (ESTALE: another inode answered). */
int dt_reopen_pinned(int pfd, const char *path, const struct stat *pinned, int flags);

/* "a FIFO", "a directory", ... for "X is not a regular file (a FIFO)". */
const char *dt_file_kind(mode_t mode);

#endif
