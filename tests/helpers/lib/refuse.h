/*
 * What several helper programs do the same way: open a file for writing
 * in a directory the test made unwritable, and wait for a child.
 * Linked into a helper by its "// build-flags:" line (tests/helpers/lib/
 * is not built as programs of its own).
 */
#ifndef DT_HELPER_REFUSE_H
#define DT_HELPER_REFUSE_H
#include <sys/types.h>

/* The directory refuse() opens in; the helper sets it from its argv. */
extern const char *refuse_dir;

/* open(refuse_dir/name, O_WRONLY|O_CREAT|flags, 0644): the errno it
 * failed with, or 0 if it opened (the file is closed again). */
int refuse_with(const char *name, int flags);
static inline int refuse(const char *name)
{
	return refuse_with(name, 0);
}

/* Waits for pid: its exit status, 128 + the signal that ended it, or -1
 * (no such child, or pid < 0). Retries on EINTR. */
int reap(pid_t pid);

/* A helper's modes, by name; the table ends with a NULL name. */
struct helper_mode {
	const char *name;
	void (*run)(void);
};
/* Runs the mode called name: 0, or 2 (the usage status) when there is none. */
int run_mode(const struct helper_mode *modes, const char *name);
#endif
