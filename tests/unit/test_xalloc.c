/* SPDX-License-Identifier: MIT */
/* The CLI's one out-of-memory policy (xalloc.h): a message and the exit
 * status of "denytrace itself failed", never an abort. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exitcodes.h"
#include "xalloc.h"

/* glibc refuses any size over PTRDIFF_MAX at once: a failure that needs
 * no memory pressure. volatile: the compiler must not see it coming. */
static volatile size_t too_big = (size_t)PTRDIFF_MAX + 1;

/* Runs alloc in a child with its stderr in err; returns its wait status. */
static int in_child(void (*alloc)(void), char *err, size_t cap)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		alloc();
		_exit(0);
	}
	close(fds[1]);
	ssize_t n, got = 0;
	while ((n = read(fds[0], err + got, cap - 1 - (size_t)got)) > 0)
		got += n;
	err[got] = 0;
	close(fds[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return st;
}

static void realloc_too_much(void)
{
	xrealloc(NULL, too_big);
}

static void malloc_too_much(void)
{
	xmalloc(too_big);
}

Test(xalloc, running_out_of_memory_says_so_and_exits_with_the_internal_failure_status)
{
#ifdef __SANITIZE_ADDRESS__
	cr_skip_test("ASan reports the oversized request itself");
#endif
	void (*const calls[])(void) = {realloc_too_much, malloc_too_much};
	for (size_t i = 0; i < sizeof(calls) / sizeof(*calls); i++) {
		char err[256];
		int st = in_child(calls[i], err, sizeof(err));
		cr_assert(WIFEXITED(st), "the child died of signal %d", WTERMSIG(st));
		cr_expect_eq(WEXITSTATUS(st), DT_EXIT_INTERNAL);
		cr_expect_str_eq(err, "denytrace: out of memory\n");
	}
}

Test(xalloc, a_null_string_duplicates_to_null)
{
	cr_expect_null(xstrdup(NULL));
}
