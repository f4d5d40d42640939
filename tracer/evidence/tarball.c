/* SPDX-License-Identifier: MIT */
/* The bundle's .tar.gz from evidence's own bytes (tarball.h). */
#include "tarball.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spawn.h"

#define TAR_BLOCK 512

static void tar_write(struct dt_tarball *t, const void *data, size_t len)
{
	const char *p = data;
	while (!t->failed && len) {
		ssize_t n = write(t->pipe, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			t->failed = 1;
			return;
		}
		p += n;
		len -= (size_t)n;
	}
}

static void tar_zeros(struct dt_tarball *t, size_t len)
{
	static const char zeros[TAR_BLOCK];
	while (len) {
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);
		tar_write(t, zeros, n);
		len -= n;
	}
}

/* An octal field of width w, NUL-terminated, as ustar wants it; 0 for a
 * value it cannot hold (a uid above 2097151: tar extracts as its user). */
static void tar_octal(char *field, size_t w, uint64_t v)
{
	if (v >> (3 * (w - 1)))
		v = 0;
	snprintf(field, w, "%0*llo", (int)(w - 1), (unsigned long long)v);
}

/* One 512-byte header: name (at most 100 bytes), type, size. */
static void tar_header(struct dt_tarball *t, const char *name, char type, uint64_t size,
                       unsigned mode)
{
	unsigned char h[TAR_BLOCK] = {0};
	memcpy(h, name, strnlen(name, 100));
	tar_octal((char *)h + 100, 8, mode);
	tar_octal((char *)h + 108, 8, geteuid());
	tar_octal((char *)h + 116, 8, getegid());
	tar_octal((char *)h + 124, 12, size);
	tar_octal((char *)h + 136, 12, (uint64_t)time(NULL));
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8); /* the checksum counts its own field as blanks */
	unsigned sum = 0;
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	tar_write(t, h, sizeof(h));
}

static void tar_pad(struct dt_tarball *t, uint64_t size)
{
	tar_zeros(t, (size_t)((TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK));
}

/* A header for path, preceded by GNU's long-name entry when the path does
 * not fit ustar's 100 bytes. */
static void tar_named(struct dt_tarball *t, const char *path, char type, uint64_t size,
                      unsigned mode)
{
	size_t n = strlen(path);
	if (n > 100) {
		tar_header(t, "././@LongLink", 'L', n + 1, 0644);
		tar_write(t, path, n + 1);
		tar_pad(t, n + 1);
	}
	tar_header(t, path, type, size, mode);
}

int dt_tarball_begin(struct dt_tarball *t, int out, const char *top, char *err, size_t cap)
{
	memset(t, 0, sizeof(*t));
	t->pipe = -1;
	snprintf(t->top, sizeof(t->top), "%s", top);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, cap, "pipe: %s", strerror(errno));
		return -1;
	}
	char *argv[] = {"gzip", "-c", "-n", NULL};
	struct dt_spawn sp = {.argv = argv, .in = p[0], .out = out, .err = -1, .who = "evidence"};
	t->gzip = dt_spawn(&sp);
	close(p[0]);
	if (t->gzip < 0) {
		close(p[1]);
		snprintf(err, cap, "cannot start gzip");
		return -1;
	}
	t->pipe = p[1];
	struct sigaction ign = {0};
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &t->old_pipe);
	char dir[sizeof(t->top) + 1];
	snprintf(dir, sizeof(dir), "%s/", top);
	tar_named(t, dir, '5', 0, 0700);
	return 0;
}

void dt_tarball_entry(struct dt_tarball *t, const char *name, uint64_t size)
{
	char path[sizeof(t->top) + 256 + 2];
	snprintf(path, sizeof(path), "%s/%s", t->top, name);
	tar_named(t, path, '0', size, 0600);
	t->size = t->left = size;
}

void dt_tarball_data(struct dt_tarball *t, const void *data, size_t len)
{
	if (len > t->left)
		len = (size_t)t->left;
	tar_write(t, data, len);
	t->left -= len;
}

void dt_tarball_entry_end(struct dt_tarball *t)
{
	tar_zeros(t, (size_t)t->left);
	tar_pad(t, t->size);
	t->size = t->left = 0;
}

void dt_tarball_file(struct dt_tarball *t, const char *name, const void *data, size_t len)
{
	dt_tarball_entry(t, name, len);
	dt_tarball_data(t, data, len);
	t->left = 0;
	tar_pad(t, len);
}

int dt_tarball_end(struct dt_tarball *t)
{
	if (t->pipe < 0)
		return -1;
	tar_zeros(t, 2 * TAR_BLOCK);
	close(t->pipe);
	t->pipe = -1;
	int st = dt_wait_timeout(t->gzip, 120);
	sigaction(SIGPIPE, &t->old_pipe, NULL);
	return t->failed || st != 0 ? -1 : 0;
}
