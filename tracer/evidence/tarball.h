/* SPDX-License-Identifier: MIT */
/* The bundle's .tar.gz, packed from the bytes evidence writes, not read
 * back from the bundle's directory: the directory sits where a same-uid
 * traced program may reach it, and could rename it, or a file in it,
 * between evidence writing it and a packer reading it. The archive is
 * ustar (GNU long names for paths over 100 bytes), compressed by gzip. */
#ifndef DENYTRACE_TARBALL_H
#define DENYTRACE_TARBALL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct dt_tarball {
	int pipe; /* gzip's standard input; -1 once ended or failed */
	pid_t gzip;
	int failed;
	char top[256];             /* the directory every entry is under */
	uint64_t size, left;       /* the open entry's size, and the bytes it still expects */
	struct sigaction old_pipe; /* a gzip that dies makes writes fail, not kill us */
};

/* Starts gzip writing to out (a descriptor of the caller's) and adds the
 * directory entry top/. Returns 0, or -1 with a reason in err. */
int dt_tarball_begin(struct dt_tarball *t, int out, const char *top, char *err, size_t cap);

/* One file top/name of len bytes, all of them in data. */
void dt_tarball_file(struct dt_tarball *t, const char *name, const void *data, size_t len);

/* One file top/name of size bytes, given in pieces by dt_tarball_data
 * (short data is padded with zero bytes at dt_tarball_entry_end, extra
 * data dropped). */
void dt_tarball_entry(struct dt_tarball *t, const char *name, uint64_t size);
void dt_tarball_data(struct dt_tarball *t, const void *data, size_t len);
void dt_tarball_entry_end(struct dt_tarball *t);

/* Ends the archive and waits for gzip. Returns 0 when every byte got to
 * gzip and gzip succeeded, else -1. */
int dt_tarball_end(struct dt_tarball *t);

#endif
