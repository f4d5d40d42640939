// build-flags: -shared -fPIC -ldl
/*
 * swap-before-open: an LD_PRELOAD shim for the denytrace CLI that plays
 * the traced program's side of a race at its worst moment. When the CLI
 * opens DTT_SWAP_PATH by path, for anything but an O_PATH look, the
 * directory DTT_SWAP_DIR is first moved aside and replaced by a symbolic
 * link to DTT_SWAP_TO, once: what the CLI looked at before that open is
 * then not what the open reaches. A CLI that looks through an O_PATH
 * descriptor and reopens that inode is not moved by it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*open_fn)(const char *, int, ...);

static void swap_once(const char *path, int flags)
{
	static int done;
	const char *want = getenv("DTT_SWAP_PATH"), *dir = getenv("DTT_SWAP_DIR"),
	           *to = getenv("DTT_SWAP_TO");
	if (done || (flags & O_PATH) || !want || !dir || !to || strcmp(path, want))
		return;
	char aside[4096];
	snprintf(aside, sizeof(aside), "%s.aside", dir);
	done = rename(dir, aside) == 0 && symlink(to, dir) == 0;
}

static int open_via(const char *name, const char *path, int flags, mode_t mode)
{
	swap_once(path, flags);
	open_fn real = (open_fn)dlsym(RTLD_NEXT, name);
	return real(path, flags, mode);
}

/* the mode is there only with O_CREAT or O_TMPFILE */
#define OPEN_MODE(flags, mode)                                                                     \
	do {                                                                                       \
		va_list ap;                                                                        \
		va_start(ap, flags);                                                               \
		if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)                         \
			mode = (mode_t)va_arg(ap, int);                                            \
		va_end(ap);                                                                        \
	} while (0)

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	OPEN_MODE(flags, mode);
	return open_via("open", path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	OPEN_MODE(flags, mode);
	return open_via("open64", path, flags, mode);
}
