/* SPDX-License-Identifier: MIT */
/*
 * Raw system calls and string helpers for the recording path. Everything
 * here is async-signal-safe: no malloc, no stdio, no locks, and no call that
 * goes back through the interposed symbols (syscall() bypasses them).
 */
#ifndef DENYTRACE_SYS_H
#define DENYTRACE_SYS_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rawsys.h"

static inline int dt_sys_openat(int dirfd, const char *path, int flags)
{
	return (int)syscall(SYS_openat, dirfd, path, flags | O_CLOEXEC, 0);
}

static inline void dt_sys_close(int fd)
{
	syscall(SYS_close, fd);
}

static inline long dt_sys_read(int fd, void *buf, size_t n)
{
	return syscall(SYS_read, fd, buf, n);
}

static inline int dt_sys_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return (int)syscall(SYS_newfstatat, dirfd, path, st, flags);
}

/* readlinkat into buf, NUL-terminated; returns the length or -1. */
static inline long dt_sys_readlinkat(int dirfd, const char *path, char *buf, size_t cap)
{
	long n = syscall(SYS_readlinkat, dirfd, path, buf, cap - 1);
	if (n < 0 || (size_t)n >= cap - 1)
		return -1;
	buf[n] = 0;
	return n;
}

static inline size_t dt_strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

/* Appends s to dst (capacity cap, currently len bytes); keeps NUL and
 * returns the new length, or cap when it did not fit. */
static inline size_t dt_strcat(char *dst, size_t len, size_t cap, const char *s)
{
	if (len >= cap)
		return cap;
	size_t n = dt_strlen(s);
	if (len + n + 1 > cap)
		return cap;
	__builtin_memcpy(dst + len, s, n + 1);
	return len + n;
}

static inline char *dt_utoa(uint64_t v, char buf[24])
{
	char *p = buf + 23;
	*p = 0;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

/* "/proc/self/fd/N" */
static inline void dt_fd_link(int fd, char out[40])
{
	char num[24];
	size_t n = dt_strcat(out, 0, 40, "/proc/self/fd/");
	dt_strcat(out, n, 40, dt_utoa((uint64_t)fd, num));
}

static inline int dt_has_prefix(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return 0;
	return 1;
}

/* strchr's answer without strchr, which the loader would bind on the
 * host's stack at its first call */
static inline int dt_has_char(const char *s, char ch)
{
	for (; *s; s++)
		if (*s == ch)
			return 1;
	return 0;
}

static inline int dt_streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static inline int dt_has_suffix(const char *s, size_t len, const char *suffix)
{
	size_t n = dt_strlen(suffix);
	return len >= n && __builtin_memcmp(s + len - n, suffix, n) == 0;
}

#endif
