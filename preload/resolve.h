/* SPDX-License-Identifier: MIT */
#ifndef DENYTRACE_RESOLVE_H
#define DENYTRACE_RESOLVE_H

#include <limits.h>
#include <stddef.h>

#include "pathnorm.h"
#include "ring_format.h"

/* Large: lives in the recording arena, never on a small signal stack. */
struct dt_resolved {
	char dirpath[PATH_MAX];  /* the *at directory fd's path, "" if none */
	char abspath[PATH_MAX];  /* cwd or dirfd joined, lexically normalised */
	char realpath[PATH_MAX]; /* as the kernel resolves it, "" if unknown */
	struct dt_stat_facts st;
	int has_real;
	/* the directory that stopped the walk to the parent (EACCES), facts
	 * first so that both go to the ring as one field */
	struct {
		struct dt_search_facts f;
		char path[PATH_MAX];
	} search;
	int has_search;
	char scratch[PATH_MAX];
	char scratch2[PATH_MAX];
};

/* The kernel's name for an open descriptor, via /proc/self/fd. */
long dt_fd_path(int fd, char *buf, size_t cap);

void dt_resolve(const char *cwd, int has_dirfd, int dirfd, const char *path, int nofollow,
                struct dt_resolved *out);
void dt_resolve_path(int dirfd, const char *path, int nofollow, struct dt_resolved *out);
void dt_resolve_fd(int fd, struct dt_resolved *out);

#endif
