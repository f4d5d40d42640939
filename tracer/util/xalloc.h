/* SPDX-License-Identifier: MIT */
/* Allocation that cannot fail: out of memory, denytrace says so and exits
 * with DT_EXIT_INTERNAL (exitcodes.def), the status of "denytrace itself
 * failed", never a core dump a user would take for a crash. The CLI's one
 * policy for memory; not for the probe (preload/), which never exits its
 * host, nor for the supervising thread, which must keep answering. */
#ifndef DENYTRACE_XALLOC_H
#define DENYTRACE_XALLOC_H

#include <stddef.h>

/* "denytrace: out of memory" on stderr, then exit(DT_EXIT_INTERNAL). */
void dt_out_of_memory(void) __attribute__((noreturn));

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* NULL stays NULL. */
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
