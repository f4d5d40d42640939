/* SPDX-License-Identifier: MIT */
/*
 * Every interposed entry point, refused for real inside bubblewrap (a
 * read-only bind of / makes writes EROFS), checked field by field against
 * what the program itself saw. The helper build/helpers/callall performs one
 * named libc call and prints "ret=... errno=...".
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "names.h"
#include "testlib.h"

static char tmp[PATH_MAX], ro[PATH_MAX], rw[PATH_MAX];

static void touch(const char *dir, const char *name, mode_t mode)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f, "cannot create %s", p);
	fputs("data\n", f);
	fclose(f);
	chmod(p, mode);
}

/* tmp/ro (read-only inside the sandbox) holds f (a file) and d (a
 * directory); tmp/rw (writable) holds lock (a file to lock). */
static void make_tree(void)
{
	if (!realpath(dtt_tmpdir(), tmp))
		cr_assert_fail("no temporary directory");
	snprintf(ro, sizeof(ro), "%s/ro", tmp);
	snprintf(rw, sizeof(rw), "%s/rw", tmp);
	cr_assert_eq(mkdir(ro, 0755), 0);
	cr_assert_eq(mkdir(rw, 0755), 0);
	char d[PATH_MAX + 8];
	snprintf(d, sizeof(d), "%s/d", ro);
	cr_assert_eq(mkdir(d, 0755), 0);
	touch(ro, "f", 0644);
	touch(rw, "lock", 0644);
}

static void setup(void)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	make_tree();
}

static void setup_plain(void)
{
	make_tree();
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(calls_bwrap, .init = setup, .fini = teardown, .timeout = 120);
TestSuite(calls_fortify, .init = setup, .fini = teardown, .timeout = 120);
TestSuite(calls_unprivileged, .init = setup_plain, .fini = teardown, .timeout = 120);
TestSuite(calls_locks, .init = setup_plain, .fini = teardown, .timeout = 120);

/* ---- helpers ----------------------------------------------------------- */

/* "{ro}/f" -> "/tmp/dtt.X/ro/f"; "{rw}", "{tmp}" likewise. The result lives
 * in a small rotating pool (the tests are single-threaded processes). */
static const char *expand(const char *t)
{
	static char pool[48][PATH_MAX + 64];
	static int k;
	if (!t)
		return NULL;
	char *out = pool[k];
	k = (k + 1) % 48;
	size_t n = 0;
	out[0] = 0;
	while (*t && n + 1 < sizeof(pool[0])) {
		const char *val = NULL;
		size_t skip = 0;
		if (!strncmp(t, "{ro}", 4))
			val = ro, skip = 4;
		else if (!strncmp(t, "{rw}", 4))
			val = rw, skip = 4;
		else if (!strncmp(t, "{tmp}", 5))
			val = tmp, skip = 5;
		if (val) {
			n += (size_t)snprintf(out + n, sizeof(pool[0]) - n, "%s", val);
			t += skip;
		} else {
			out[n++] = *t++;
			out[n] = 0;
		}
	}
	return out;
}

enum { MAXARGV = 40 };

/* argv of `bwrap ... -- HELPER OP ARGS...` (sandbox = 1) or of the helper
 * alone; args are templates for expand(). */
static void build_argv(const char **argv, int sandbox, const char *helper, const char *op,
                       const char *const *args)
{
	size_t n = sandbox ? dtt_bwrap_rw(argv, rw) : 0;
	argv[n++] = dtt_helper(helper);
	argv[n++] = op;
	for (size_t i = 0; args[i] && n < MAXARGV - 1; i++)
		argv[n++] = expand(args[i]);
	argv[n] = NULL;
}

/* "ret=-1 errno=EROFS" -> "EROFS" (into out). 0 if no such line. */
static int seen_errno(const char *out, char *name, size_t cap)
{
	const char *p = strstr(out, "errno=");
	if (!p)
		return 0;
	p += 6;
	size_t n = strcspn(p, " \n");
	if (n >= cap)
		n = cap - 1;
	memcpy(name, p, n);
	name[n] = 0;
	return 1;
}

static int is_helper(const struct dt_record *rec)
{
	return rec->comm && !strncmp(rec->comm, "callall", 7);
}

/* The helper's only record of type (the sandbox's own records, such as
 * bwrap's access("/newroot/proc/sys", W_OK), are not the helper's). */
static const struct dt_record *helper_record(const struct dtt_run *r, int type, size_t *count)
{
	const struct dt_record *found = NULL;
	*count = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == type && is_helper(&r->recs[i])) {
			if (!found)
				found = &r->recs[i];
			(*count)++;
		}
	return found;
}

/* The helper's process record: bwrap execs it under its own pid, and has
 * already written a process record of its own for that pid. */
static const struct dt_record *helper_process(const struct dtt_run *r, int64_t pid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == DT_REC_PROCESS && r->recs[i].pid == pid &&
		    is_helper(&r->recs[i]))
			return &r->recs[i];
	return NULL;
}

static void expect_field(const char *op, const char *what, const char *got, const char *want_tmpl)
{
	const char *want = expand(want_tmpl);
	if (!want)
		cr_expect_null(got, "%s: %s should be absent, is \"%s\"", op, what, got);
	else
		cr_expect(got && (strchr(want, '?') ? !fnmatch(want, got, FNM_PATHNAME)
		                                    : !strcmp(got, want)),
		          "%s: %s is \"%s\", expected \"%s\"", op, what, got ? got : "(absent)",
		          want);
}

static const char *flags_of(const struct dt_record *d)
{
	static char buf[256];
	dt_flags_name(d, buf, sizeof(buf));
	return buf;
}

/* ---- every entry point ------------------------------------------------- */

struct call_case {
	const char *op;      /* entry point = callall subcommand */
	const char *args[8]; /* its arguments, templates */
	const char *err;     /* errno the call fails with */
	/* p[0] and p[1]; NULL = the field must be absent */
	const char *path, *dirpath, *abspath, *realpath;
	const char *path2, *dirpath2, *abspath2, *realpath2;
	const char *flags; /* dt_flags_name(), "" when none */
	long mode;         /* -1 = no mode field */
	const char *fmode; /* fopen mode string, NULL = absent */
	int exists;        /* the target exists (stat facts) */
	int rdonly;        /* the target's mount is read-only */
	int fdcall;        /* descriptor call: fd field, no path */
	int lock;          /* contention: needs EAGAIN in the errno set */
};

#define RO_F "{ro}/f"
#define TMPL "{ro}/tmp??????"
#define TMPLS "{ro}/tmp??????.txt"
#define MEMFD "/memfd:sealed (deleted)"

/* Paths only under {ro} (read-only inside bwrap) unless noted: the locks
 * need a writable descriptor and so a file under {rw}; ftruncate cannot
 * reach EROFS (a descriptor open for writing on a read-only mount cannot
 * exist), so it is refused by a sealed memfd (EPERM). */
/* One row per entry point, as calls.def has one line per entry point:
 * the formatter would spread each row over twenty lines. */
// clang-format off
static struct call_case cases[] = {
	{"open", {"{ro}/new", "O_WRONLY|O_CREAT|O_TRUNC", "0644"}, "EROFS",
	 "{ro}/new", NULL, "{ro}/new", "{ro}/new", NULL, NULL, NULL, NULL,
	 "O_WRONLY|O_CREAT|O_TRUNC", 0644, NULL, 0, 1, 0, 0},
	{"open64", {RO_F, "O_RDWR"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "O_RDWR", -1, NULL, 1, 1, 0, 0},
	{"openat", {"{ro}", "new", "O_WRONLY|O_CREAT|O_EXCL", "0600"}, "EROFS",
	 "new", "{ro}", "{ro}/new", "{ro}/new", NULL, NULL, NULL, NULL,
	 "O_WRONLY|O_CREAT|O_EXCL", 0600, NULL, 0, 1, 0, 0},
	{"openat64", {"{ro}", "f", "O_WRONLY|O_APPEND"}, "EROFS",
	 "f", "{ro}", RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "O_WRONLY|O_APPEND", -1, NULL, 1, 1, 0, 0},
	{"__open_2", {RO_F, "O_WRONLY"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "O_WRONLY", -1, NULL, 1, 1, 0, 0},
	{"__open64_2", {RO_F, "O_RDWR|O_TRUNC"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "O_RDWR|O_TRUNC", -1, NULL, 1, 1, 0, 0},
	{"__openat_2", {"{ro}", "f", "O_WRONLY"}, "EROFS",
	 "f", "{ro}", RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "O_WRONLY", -1, NULL, 1, 1, 0, 0},
	{"__openat64_2", {"{ro}", "f", "O_RDWR"}, "EROFS",
	 "f", "{ro}", RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "O_RDWR", -1, NULL, 1, 1, 0, 0},
	{"creat", {"{ro}/new", "0644"}, "EROFS",
	 "{ro}/new", NULL, "{ro}/new", "{ro}/new", NULL, NULL, NULL, NULL,
	 "O_WRONLY|O_CREAT|O_TRUNC", 0644, NULL, 0, 1, 0, 0},
	{"creat64", {RO_F, "0600"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "O_WRONLY|O_CREAT|O_TRUNC", 0600, NULL, 1, 1, 0, 0},
	{"fopen", {"{ro}/new", "w"}, "EROFS",
	 "{ro}/new", NULL, "{ro}/new", "{ro}/new", NULL, NULL, NULL, NULL,
	 "O_WRONLY|O_CREAT|O_TRUNC", -1, "w", 0, 1, 0, 0},
	{"fopen64", {RO_F, "r+"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "O_RDWR", -1, "r+", 1, 1, 0, 0},
	{"freopen", {RO_F, "a"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "O_WRONLY|O_CREAT|O_APPEND", -1, "a", 1, 1, 0, 0},
	{"freopen64", {"{ro}/new", "w+"}, "EROFS",
	 "{ro}/new", NULL, "{ro}/new", "{ro}/new", NULL, NULL, NULL, NULL,
	 "O_RDWR|O_CREAT|O_TRUNC", -1, "w+", 0, 1, 0, 0},
	{"rename", {RO_F, "{ro}/g"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, "{ro}/g", NULL, "{ro}/g", "{ro}/g",
	 "", -1, NULL, 1, 1, 0, 0},
	{"renameat", {"{ro}", "f", "{ro}", "g"}, "EROFS",
	 "f", "{ro}", RO_F, RO_F, "g", "{ro}", "{ro}/g", "{ro}/g",
	 "", -1, NULL, 1, 1, 0, 0},
	{"renameat2", {"{ro}", "f", "{ro}", "g", "RENAME_NOREPLACE"}, "EROFS",
	 "f", "{ro}", RO_F, RO_F, "g", "{ro}", "{ro}/g", "{ro}/g",
	 "RENAME_NOREPLACE", -1, NULL, 1, 1, 0, 0},
	{"link", {RO_F, "{ro}/h"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, "{ro}/h", NULL, "{ro}/h", "{ro}/h",
	 "", -1, NULL, 1, 1, 0, 0},
	{"linkat", {"{ro}", "f", "{ro}", "h", "AT_SYMLINK_FOLLOW"}, "EROFS",
	 "f", "{ro}", RO_F, RO_F, "h", "{ro}", "{ro}/h", "{ro}/h",
	 "AT_SYMLINK_FOLLOW", -1, NULL, 1, 1, 0, 0},
	/* symlink: the second path field carries the link's contents */
	{"symlink", {"f", "{ro}/s"}, "EROFS",
	 "{ro}/s", NULL, "{ro}/s", "{ro}/s", "f", NULL, NULL, NULL,
	 "", -1, NULL, 0, 1, 0, 0},
	{"symlinkat", {"f", "{ro}", "s"}, "EROFS",
	 "s", "{ro}", "{ro}/s", "{ro}/s", "f", NULL, NULL, NULL,
	 "", -1, NULL, 0, 1, 0, 0},
	{"unlink", {RO_F}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 0, 0},
	{"unlinkat", {"{ro}", "d", "AT_REMOVEDIR"}, "EROFS",
	 "d", "{ro}", "{ro}/d", "{ro}/d", NULL, NULL, NULL, NULL,
	 "AT_REMOVEDIR", -1, NULL, 1, 1, 0, 0},
	{"remove", {RO_F}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 0, 0},
	{"rmdir", {"{ro}/d"}, "EROFS",
	 "{ro}/d", NULL, "{ro}/d", "{ro}/d", NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 0, 0},
	{"mkdir", {"{ro}/newdir", "0755"}, "EROFS",
	 "{ro}/newdir", NULL, "{ro}/newdir", "{ro}/newdir", NULL, NULL, NULL, NULL,
	 "", 0755, NULL, 0, 1, 0, 0},
	{"mkdirat", {"{ro}", "newdir", "0700"}, "EROFS",
	 "newdir", "{ro}", "{ro}/newdir", "{ro}/newdir", NULL, NULL, NULL, NULL,
	 "", 0700, NULL, 0, 1, 0, 0},
	{"mknod", {"{ro}/fifo", "S_IFIFO|0644", "0"}, "EROFS",
	 "{ro}/fifo", NULL, "{ro}/fifo", "{ro}/fifo", NULL, NULL, NULL, NULL,
	 "", S_IFIFO | 0644, NULL, 0, 1, 0, 0},
	{"mknodat", {"{ro}", "fifo", "S_IFIFO|0600", "0"}, "EROFS",
	 "fifo", "{ro}", "{ro}/fifo", "{ro}/fifo", NULL, NULL, NULL, NULL,
	 "", S_IFIFO | 0600, NULL, 0, 1, 0, 0},
	{"truncate", {RO_F, "0"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 0, 0},
	{"truncate64", {RO_F, "0"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 0, 0},
	{"ftruncate", {"memfd:sealed", "4096"}, "EPERM",
	 NULL, NULL, MEMFD, MEMFD, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 0, 1, 0},
	{"ftruncate64", {"memfd:sealed", "4096"}, "EPERM",
	 NULL, NULL, MEMFD, MEMFD, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 0, 1, 0},
	{"chmod", {RO_F, "0600"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", 0600, NULL, 1, 1, 0, 0},
	{"fchmod", {RO_F, "0600"}, "EROFS",
	 NULL, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", 0600, NULL, 1, 1, 1, 0},
	{"fchmodat", {"{ro}", "f", "0600", "0"}, "EROFS",
	 "f", "{ro}", RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", 0600, NULL, 1, 1, 0, 0},
	{"chown", {RO_F, "0", "0"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 0, 0},
	{"lchown", {RO_F, "0", "0"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 0, 0},
	{"fchown", {RO_F, "0", "0"}, "EROFS",
	 NULL, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 1, 0},
	{"fchownat", {"{ro}", "f", "0", "0", "AT_SYMLINK_NOFOLLOW"}, "EROFS",
	 "f", "{ro}", RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "AT_SYMLINK_NOFOLLOW", -1, NULL, 1, 1, 0, 0},
	{"utime", {RO_F}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 0, 0},
	{"utimes", {RO_F}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 0, 0},
	{"utimensat", {"{ro}", "f", "AT_SYMLINK_NOFOLLOW"}, "EROFS",
	 "f", "{ro}", RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "AT_SYMLINK_NOFOLLOW", -1, NULL, 1, 1, 0, 0},
	{"futimens", {RO_F}, "EROFS",
	 NULL, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 1, 0},
	{"fcntl", {"rw:{rw}/lock", "F_SETLK", "F_WRLCK", "held"}, "EAGAIN",
	 NULL, NULL, "{rw}/lock", "{rw}/lock", NULL, NULL, NULL, NULL,
	 "F_SETLK|F_WRLCK", -1, NULL, 1, 0, 1, 1},
	{"fcntl64", {"rw:{rw}/lock", "F_OFD_SETLK", "F_WRLCK", "held"}, "EAGAIN",
	 NULL, NULL, "{rw}/lock", "{rw}/lock", NULL, NULL, NULL, NULL,
	 "F_OFD_SETLK|F_WRLCK", -1, NULL, 1, 0, 1, 1},
	{"flock", {"{rw}/lock", "LOCK_EX|LOCK_NB", "held"}, "EAGAIN",
	 NULL, NULL, "{rw}/lock", "{rw}/lock", NULL, NULL, NULL, NULL,
	 "LOCK_EX|LOCK_NB", -1, NULL, 1, 0, 1, 1},
	{"access", {RO_F, "W_OK"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "W_OK", -1, NULL, 1, 1, 0, 0},
	{"faccessat", {"{ro}", "f", "W_OK", "0"}, "EROFS",
	 "f", "{ro}", RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "W_OK", -1, NULL, 1, 1, 0, 0},
	/* glibc's temporary files: the template holds the name tried (the
	 * expected paths are fnmatch patterns) */
	{"mkstemp", {"{ro}/tmpXXXXXX"}, "EROFS",
	 TMPL, NULL, TMPL, TMPL, NULL, NULL, NULL, NULL,
	 "O_RDWR|O_CREAT|O_EXCL", 0600, NULL, 0, 1, 0, 0},
	{"mkstemp64", {"{ro}/tmpXXXXXX"}, "EROFS",
	 TMPL, NULL, TMPL, TMPL, NULL, NULL, NULL, NULL,
	 "O_RDWR|O_CREAT|O_EXCL", 0600, NULL, 0, 1, 0, 0},
	{"mkstemps", {"{ro}/tmpXXXXXX.txt", "4"}, "EROFS",
	 TMPLS, NULL, TMPLS, TMPLS, NULL, NULL, NULL, NULL,
	 "O_RDWR|O_CREAT|O_EXCL", 0600, NULL, 0, 1, 0, 0},
	{"mkstemps64", {"{ro}/tmpXXXXXX.txt", "4"}, "EROFS",
	 TMPLS, NULL, TMPLS, TMPLS, NULL, NULL, NULL, NULL,
	 "O_RDWR|O_CREAT|O_EXCL", 0600, NULL, 0, 1, 0, 0},
	{"mkostemp", {"{ro}/tmpXXXXXX", "O_CLOEXEC"}, "EROFS",
	 TMPL, NULL, TMPL, TMPL, NULL, NULL, NULL, NULL,
	 "O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC", 0600, NULL, 0, 1, 0, 0},
	{"mkostemp64", {"{ro}/tmpXXXXXX", "O_APPEND"}, "EROFS",
	 TMPL, NULL, TMPL, TMPL, NULL, NULL, NULL, NULL,
	 "O_RDWR|O_CREAT|O_EXCL|O_APPEND", 0600, NULL, 0, 1, 0, 0},
	{"mkostemps", {"{ro}/tmpXXXXXX.txt", "4", "O_CLOEXEC"}, "EROFS",
	 TMPLS, NULL, TMPLS, TMPLS, NULL, NULL, NULL, NULL,
	 "O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC", 0600, NULL, 0, 1, 0, 0},
	{"mkostemps64", {"{ro}/tmpXXXXXX.txt", "4", "0"}, "EROFS",
	 TMPLS, NULL, TMPLS, TMPLS, NULL, NULL, NULL, NULL,
	 "O_RDWR|O_CREAT|O_EXCL", 0600, NULL, 0, 1, 0, 0},
	{"mkdtemp", {"{ro}/tmpXXXXXX"}, "EROFS",
	 TMPL, NULL, TMPL, TMPL, NULL, NULL, NULL, NULL,
	 "", 0700, NULL, 0, 1, 0, 0},
	/* tmpfile ignores TMPDIR: an unnamed file in /tmp, read-only here */
	{"tmpfile", {NULL}, "EROFS",
	 "/tmp", NULL, "/tmp", "/tmp", NULL, NULL, NULL, NULL,
	 "O_RDWR|O_TMPFILE", 0600, NULL, 1, 1, 0, 0},
	{"tmpfile64", {NULL}, "EROFS",
	 "/tmp", NULL, "/tmp", "/tmp", NULL, NULL, NULL, NULL,
	 "O_RDWR|O_TMPFILE", 0600, NULL, 1, 1, 0, 0},
	{"mkfifo", {"{ro}/fifo", "0644"}, "EROFS",
	 "{ro}/fifo", NULL, "{ro}/fifo", "{ro}/fifo", NULL, NULL, NULL, NULL,
	 "", S_IFIFO | 0644, NULL, 0, 1, 0, 0},
	{"mkfifoat", {"{ro}", "fifo", "0600"}, "EROFS",
	 "fifo", "{ro}", "{ro}/fifo", "{ro}/fifo", NULL, NULL, NULL, NULL,
	 "", S_IFIFO | 0600, NULL, 0, 1, 0, 0},
	{"lutimes", {RO_F}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "", -1, NULL, 1, 1, 0, 0},
	{"euidaccess", {RO_F, "W_OK"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "W_OK", -1, NULL, 1, 1, 0, 0},
	{"eaccess", {RO_F, "W_OK|R_OK"}, "EROFS",
	 RO_F, NULL, RO_F, RO_F, NULL, NULL, NULL, NULL,
	 "R_OK|W_OK", -1, NULL, 1, 1, 0, 0},
};
// clang-format on

#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* With the default errno set plus EAGAIN, a contended lock is a refusal. */
static const char *const lock_opts[] = {"--errnos", "EPERM,EACCES,EROFS,EXDEV,EAGAIN", NULL};

static void check_case(const struct call_case *c)
{
	const char *op = c->op;
	const char *argv[MAXARGV];
	build_argv(argv, 1, "callall", op, c->args);

	/* without the probe: what the program sees on its own */
	char direct[4096];
	int st = dtt_system(direct, sizeof(direct), argv, NULL);
	cr_assert_eq(st, 0, "%s: callall failed without the probe: %s", op, direct);

	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, c->lock ? lock_opts : NULL, argv, NULL), 0,
	             "%s: ring unreadable: %s", op, r.out);
	cr_expect_eq(r.status, 0, "%s: exit status %d: %s", op, r.status, r.out);
	cr_expect_str_eq(r.out, direct,
	                 "%s: the program saw \"%s\" under the probe, \"%s\" without", op, r.out,
	                 direct);

	char seen[64];
	cr_assert(seen_errno(r.out, seen, sizeof(seen)), "%s: no result line: %s", op, r.out);
	cr_expect(strstr(r.out, "ret=-1 ") || strstr(r.out, "ret=NULL "),
	          "%s: the call should have failed: %s", op, r.out);
	cr_expect_str_eq(seen, c->err, "%s: failed with %s, expected %s", op, seen, c->err);

	size_t count;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &count);
	cr_assert_not_null(d, "%s: no denial recorded; output: %s", op, r.out);
	cr_expect_eq(count, 1, "%s: %zu denials recorded, expected exactly one", op, count);
	cr_expect_str_eq(d->op, op, "%s: op recorded as %s", op, d->op);
	cr_expect_str_eq(dt_errno_name(d->err), seen, "%s: recorded errno %s, the program saw %s",
	                 op, dt_errno_name(d->err), seen);
	cr_expect(d->writes, "%s: writes should be 1", op);

	expect_field(op, "path", d->p[0].path, c->path);
	expect_field(op, "dirpath", d->p[0].dirpath, c->dirpath);
	expect_field(op, "abspath", d->p[0].abspath, c->abspath);
	expect_field(op, "realpath", d->p[0].realpath, c->realpath);
	expect_field(op, "second path", d->p[1].path, c->path2);
	expect_field(op, "second dirpath", d->p[1].dirpath, c->dirpath2);
	expect_field(op, "second abspath", d->p[1].abspath, c->abspath2);
	expect_field(op, "second realpath", d->p[1].realpath, c->realpath2);

	cr_expect_str_eq(flags_of(d), c->flags, "%s: flags \"%s\", expected \"%s\"", op,
	                 flags_of(d), c->flags);
	if (c->mode < 0) {
		cr_expect(!d->has_mode, "%s: unexpected mode field %#llo", op,
		          (unsigned long long)d->mode);
	} else {
		cr_expect(d->has_mode, "%s: no mode field", op);
		cr_expect_eq(d->mode, (uint64_t)c->mode, "%s: mode %#llo, expected %#lo", op,
		             (unsigned long long)d->mode, c->mode);
	}
	expect_field(op, "fopen mode", d->fmode, c->fmode);
	if (c->fdcall) {
		cr_expect(d->has_fd && d->fd > 2, "%s: descriptor call without its fd", op);
	} else {
		cr_expect(!d->has_fd, "%s: path call with an fd field", op);
	}

	cr_expect(d->p[0].has_st, "%s: no stat facts", op);
	cr_expect_eq(!!(d->p[0].st.valid & DT_SF_EXISTS), c->exists, "%s: exists %d, expected %d",
	             op, !!(d->p[0].st.valid & DT_SF_EXISTS), c->exists);
	cr_expect(d->p[0].st.valid & DT_SF_MOUNT, "%s: no mount flags", op);
	cr_expect_eq(!!(d->p[0].st.mount_flags & ST_RDONLY), c->rdonly,
	             "%s: mount read-only %d, expected %d", op,
	             !!(d->p[0].st.mount_flags & ST_RDONLY), c->rdonly);
	if (c->realpath2)
		cr_expect(d->p[1].has_st && (d->p[1].st.mount_flags & ST_RDONLY),
		          "%s: second path's stat facts should show the read-only mount", op);

	cr_expect_gt(d->nframes, 0, "%s: no call stack", op);
	cr_expect_not_null(helper_process(&r, d->pid), "%s: no process record", op);
	dtt_free(&r);
}

/* Criterion hands parameters to a re-executed worker, where pointers into
 * the parent's image mean nothing: pass indices into cases[]. */
static void free_indices(struct criterion_test_params *p)
{
	cr_free(p->params);
}

ParameterizedTestParameters(calls_bwrap, each_entry_point_is_recorded_field_by_field)
{
	size_t *idx = cr_malloc(NCASES * sizeof(*idx));
	for (size_t i = 0; i < NCASES; i++)
		idx[i] = i;
	return cr_make_param_array(size_t, idx, NCASES, free_indices);
}

ParameterizedTest(size_t *i, calls_bwrap, each_entry_point_is_recorded_field_by_field)
{
	cr_assert_lt(*i, NCASES);
	check_case(&cases[*i]);
}

/* The table above covers calls.def exactly: a line added there without a
 * case here fails. */
Test(calls_bwrap, every_entry_point_in_calls_def_has_a_case)
{
	const char *path = dtt_repo_file("preload/calls.def");
	cr_assert_not_null(path, "cannot find preload/calls.def");
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	char line[1024];
	int entries = 0;
	while (fgets(line, sizeof(line), f)) {
		const char *shapes[] = {"DT_OPEN(", "DT_INT(", "DT_PTR(", "DT_PTR0(", "DT_FCNTL("};
		for (size_t s = 0; s < 5; s++) {
			size_t k = strlen(shapes[s]);
			if (strncmp(line, shapes[s], k))
				continue;
			char name[64];
			size_t n = strcspn(line + k, ",)");
			cr_assert_lt(n, sizeof(name));
			memcpy(name, line + k, n);
			name[n] = 0;
			entries++;
			int found = 0;
			for (size_t i = 0; i < NCASES; i++)
				found |= !strcmp(cases[i].op, name);
			cr_expect(found, "calls.def entry %s has no test case", name);
		}
	}
	fclose(f);
	cr_expect_eq(entries, 65, "calls.def lists %d entry points", entries);
	cr_expect_eq(NCASES, (size_t)entries, "%zu cases for %d entry points", NCASES, entries);
}

/* ---- paths ------------------------------------------------------------- */

static void run_helper(struct dtt_run *r, const char *const *opts, int sandbox, const char *helper,
                       const char *op, const char *const *args)
{
	const char *argv[MAXARGV];
	build_argv(argv, sandbox, helper, op, args);
	cr_assert_eq(dtt_run(r, opts, argv, NULL), 0, "%s: ring unreadable: %s", op, r->out);
}

Test(calls_bwrap, write_through_a_symlinked_directory_shows_the_link_then_the_target)
{
	char link[PATH_MAX + 8];
	snprintf(link, sizeof(link), "%s/link", rw);
	cr_assert_eq(symlink(ro, link), 0);
	struct dtt_run r;
	const char *args[] = {"{rw}/link/new.txt", "O_WRONLY|O_CREAT|O_TRUNC", "0644", NULL};
	run_helper(&r, NULL, 1, "callall", "open", args);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	expect_field("open", "path", d->p[0].path, "{rw}/link/new.txt");
	expect_field("open", "abspath", d->p[0].abspath, "{rw}/link/new.txt");
	expect_field("open", "realpath", d->p[0].realpath, "{ro}/new.txt");
	cr_expect_str_eq(dt_errno_name(d->err), "EROFS");
	cr_expect(d->p[0].st.mount_flags & ST_RDONLY, "the target's mount is the read-only one");
	cr_expect_eq(d->p[0].st.valid & DT_SF_SYMLINK, 0u, "the leaf itself is no symlink");
	dtt_free(&r);
}

Test(calls_bwrap, write_through_a_symlinked_file_flags_the_symlink_and_resolves_it)
{
	char link[PATH_MAX + 8], target[PATH_MAX + 8];
	snprintf(link, sizeof(link), "%s/flink", ro);
	snprintf(target, sizeof(target), "%s/f", ro);
	cr_assert_eq(symlink("f", link), 0);
	struct dtt_run r;
	const char *args[] = {"{ro}/flink", "O_WRONLY", NULL};
	run_helper(&r, NULL, 1, "callall", "open", args);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	expect_field("open", "path", d->p[0].path, "{ro}/flink");
	expect_field("open", "abspath", d->p[0].abspath, "{ro}/flink");
	expect_field("open", "realpath", d->p[0].realpath, "{ro}/f");
	cr_expect(d->p[0].st.valid & DT_SF_SYMLINK, "the path is a symbolic link");
	cr_expect(d->p[0].st.valid & DT_SF_EXISTS);
	cr_expect(S_ISREG(d->p[0].st.mode), "stat facts are the target's");
	dtt_free(&r);
}

Test(calls_bwrap, unlink_of_a_symlink_resolves_the_link_itself_not_its_target)
{
	char link[PATH_MAX + 8];
	snprintf(link, sizeof(link), "%s/flink", ro);
	cr_assert_eq(symlink("f", link), 0);
	struct dtt_run r;
	const char *args[] = {"{ro}/flink", NULL};
	run_helper(&r, NULL, 1, "callall", "unlink", args);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	expect_field("unlink", "realpath", d->p[0].realpath, "{ro}/flink");
	cr_expect(d->p[0].st.valid & DT_SF_SYMLINK);
	cr_expect(S_ISLNK(d->p[0].st.mode), "stat facts are the link's");
	dtt_free(&r);
}

/* link(2), and linkat(2) without AT_SYMLINK_FOLLOW, link a symbolic link
 * itself: Linux never dereferences oldpath there. With AT_SYMLINK_FOLLOW,
 * linkat links the target. */
Test(calls_bwrap, link_resolves_a_symlink_oldpath_the_way_the_kernel_does)
{
	char link[PATH_MAX + 8];
	snprintf(link, sizeof(link), "%s/flink", ro);
	cr_assert_eq(symlink("f", link), 0);
	static const struct {
		const char *op, *args[6], *realpath;
		int is_link;
	} cases_[] = {
	    {"link", {"{ro}/flink", "{ro}/h"}, "{ro}/flink", 1},
	    {"linkat", {"{ro}", "flink", "{ro}", "h", "0"}, "{ro}/flink", 1},
	    {"linkat", {"{ro}", "flink", "{ro}", "h", "AT_SYMLINK_FOLLOW"}, "{ro}/f", 0},
	};
	for (size_t i = 0; i < 3; i++) {
		struct dtt_run r;
		run_helper(&r, NULL, 1, "callall", cases_[i].op, cases_[i].args);
		size_t n;
		const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
		cr_assert_not_null(d, "%s", r.out);
		char what[64];
		snprintf(what, sizeof(what), "%s %s", cases_[i].op,
		         cases_[i].args[4] ? cases_[i].args[4] : "");
		expect_field(what, "realpath", d->p[0].realpath, cases_[i].realpath);
		cr_expect_eq(!!S_ISLNK(d->p[0].st.mode), cases_[i].is_link,
		             "%s: stat facts should be the %s's, mode is %o", what,
		             cases_[i].is_link ? "link" : "target", d->p[0].st.mode);
		dtt_free(&r);
	}
}

Test(calls_bwrap, relative_path_is_joined_with_the_cwd_and_normalised)
{
	struct dtt_run r;
	const char *argv[MAXARGV];
	size_t k = dtt_bwrap_rw(argv, rw);
	const char *rest[] = {dtt_helper("callall"), "-C",   rw,  "mkdir",
	                      "../ro/./d/../new",    "0755", NULL};
	for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++)
		argv[k++] = rest[i];
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	expect_field("mkdir", "path", d->p[0].path, "../ro/./d/../new");
	expect_field("mkdir", "abspath", d->p[0].abspath, "{ro}/new");
	expect_field("mkdir", "realpath", d->p[0].realpath, "{ro}/new");
	cr_expect_str_eq(dt_errno_name(d->err), "EROFS");
	const struct dt_record *p = helper_process(&r, d->pid);
	cr_assert_not_null(p, "no process record for the helper");
	cr_expect_str_eq(p->cwd, rw);
	dtt_free(&r);
}

Test(calls_bwrap, at_call_with_a_real_dirfd_records_the_directory_and_joins_it)
{
	struct dtt_run r;
	const char *args[] = {"{ro}", "d/../new", "0700", NULL};
	run_helper(&r, NULL, 1, "callall", "mkdirat", args);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	expect_field("mkdirat", "path", d->p[0].path, "d/../new");
	expect_field("mkdirat", "dirpath", d->p[0].dirpath, "{ro}");
	expect_field("mkdirat", "abspath", d->p[0].abspath, "{ro}/new");
	expect_field("mkdirat", "realpath", d->p[0].realpath, "{ro}/new");
	dtt_free(&r);
}

/* The dirfd's path is what the kernel says the descriptor is: a directory
 * opened through a symlink is the target. */
Test(calls_bwrap, dirfd_opened_through_a_symlink_is_recorded_as_its_target)
{
	char link[PATH_MAX + 8];
	snprintf(link, sizeof(link), "%s/link", rw);
	cr_assert_eq(symlink(ro, link), 0);
	struct dtt_run r;
	const char *args[] = {"{rw}/link", "new", "O_WRONLY|O_CREAT", "0644", NULL};
	run_helper(&r, NULL, 1, "callall", "openat", args);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	expect_field("openat", "dirpath", d->p[0].dirpath, "{ro}");
	expect_field("openat", "abspath", d->p[0].abspath, "{ro}/new");
	expect_field("openat", "realpath", d->p[0].realpath, "{ro}/new");
	dtt_free(&r);
}

/* abspath is lexical, realpath is the kernel's: ".." after a symlinked
 * directory climbs out of the link's target, not out of the link. */
Test(calls_bwrap, dotdot_after_a_symlinked_directory_differs_between_abspath_and_realpath)
{
	char link[PATH_MAX + 8];
	snprintf(link, sizeof(link), "%s/link", rw);
	cr_assert_eq(symlink(ro, link), 0);
	struct dtt_run r;
	const char *args[] = {"{rw}/link/../x", "O_WRONLY|O_CREAT", "0644", NULL};
	run_helper(&r, NULL, 1, "callall", "open", args);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect_str_eq(dt_errno_name(d->err), "EROFS");
	expect_field("open", "abspath", d->p[0].abspath, "{rw}/x");
	expect_field("open", "realpath", d->p[0].realpath, "{tmp}/x");
	dtt_free(&r);
}

/* A refused create under directories that do not exist yet (ENOENT made
 * a refusal for the occasion): realpath climbs to the nearest existing
 * ancestor and keeps the missing components. */
Test(calls_bwrap, missing_ancestors_are_kept_in_realpath)
{
	struct dtt_run r;
	const char *opts[] = {"--errnos", "ENOENT,EROFS", NULL};
	const char *args[] = {"{ro}/nodir/sub/new", "O_WRONLY|O_CREAT", "0644", NULL};
	run_helper(&r, opts, 1, "callall", "open", args);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect(strstr(r.out, "errno=ENOENT"), "%s", r.out);
	cr_expect_str_eq(dt_errno_name(d->err), "ENOENT");
	expect_field("open", "realpath", d->p[0].realpath, "{ro}/nodir/sub/new");
	cr_expect_eq(d->p[0].st.valid & DT_SF_EXISTS, 0u);
	cr_expect(d->p[0].st.valid & DT_SF_PARENT, "the nearest existing ancestor's facts");
	cr_expect(d->p[0].st.mount_flags & ST_RDONLY);
	dtt_free(&r);
}

/* AT_FDCWD is no directory descriptor: no dirpath, joined with the cwd. */
Test(calls_bwrap, at_call_with_at_fdcwd_is_joined_with_the_cwd)
{
	struct dtt_run r;
	const char *argv[MAXARGV];
	size_t k = dtt_bwrap_rw(argv, rw);
	const char *rest[] = {
	    dtt_helper("callall"), "-C", ro, "openat", "AT_FDCWD", "f", "O_WRONLY", NULL};
	for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++)
		argv[k++] = rest[i];
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "%s", r.out);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	expect_field("openat", "path", d->p[0].path, "f");
	expect_field("openat", "dirpath", d->p[0].dirpath, NULL);
	expect_field("openat", "abspath", d->p[0].abspath, "{ro}/f");
	expect_field("openat", "realpath", d->p[0].realpath, "{ro}/f");
	dtt_free(&r);
}

/* With AT_EMPTY_PATH and "" the call acts on the descriptor itself: the
 * facts (exists, read-only mount) are the descriptor's. */
Test(calls_bwrap, at_empty_path_call_resolves_the_descriptor_itself)
{
	struct dtt_run r;
	const char *args[] = {"{ro}/d", "", "0", "0", "AT_EMPTY_PATH", NULL};
	run_helper(&r, NULL, 1, "callall", "fchownat", args);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect(strstr(r.out, "errno=EROFS"), "%s", r.out);
	cr_expect_str_eq(flags_of(d), "AT_EMPTY_PATH");
	expect_field("fchownat", "dirpath", d->p[0].dirpath, "{ro}/d");
	expect_field("fchownat", "abspath", d->p[0].abspath, "{ro}/d");
	expect_field("fchownat", "realpath", d->p[0].realpath, "{ro}/d");
	cr_expect(d->p[0].st.valid & DT_SF_EXISTS, "the directory exists");
	cr_expect(d->p[0].st.valid & DT_SF_MOUNT, "no mount facts");
	cr_expect(d->p[0].st.mount_flags & ST_RDONLY, "mount should be read-only");
	dtt_free(&r);
}

/* O_TMPFILE names the directory; the mode comes with it. */
Test(calls_bwrap, o_tmpfile_open_records_the_directory_and_the_mode)
{
	struct dtt_run r;
	const char *args[] = {"{ro}", ".", "O_TMPFILE|O_WRONLY", "0600", NULL};
	run_helper(&r, NULL, 1, "callall", "openat", args);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect_str_eq(dt_errno_name(d->err), "EROFS");
	expect_field("openat", "abspath", d->p[0].abspath, "{ro}");
	expect_field("openat", "realpath", d->p[0].realpath, "{ro}");
	cr_expect_str_eq(flags_of(d), "O_WRONLY|O_TMPFILE");
	cr_expect(d->has_mode);
	cr_expect_eq(d->mode, 0600);
	cr_expect(d->writes);
	cr_expect(S_ISDIR(d->p[0].st.mode), "stat facts are the directory's");
	dtt_free(&r);
}

Test(calls_bwrap, renameat_across_mounts_records_both_paths_and_both_dirfds)
{
	struct dtt_run r;
	const char *args[] = {"{ro}", "f", "{rw}", "g", NULL};
	run_helper(&r, NULL, 1, "callall", "renameat", args);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect(strstr(r.out, "errno=EXDEV"), "%s", r.out);
	cr_expect_str_eq(dt_errno_name(d->err), "EXDEV");
	expect_field("renameat", "path", d->p[0].path, "f");
	expect_field("renameat", "dirpath", d->p[0].dirpath, "{ro}");
	expect_field("renameat", "abspath", d->p[0].abspath, "{ro}/f");
	expect_field("renameat", "realpath", d->p[0].realpath, "{ro}/f");
	expect_field("renameat", "second path", d->p[1].path, "g");
	expect_field("renameat", "second dirpath", d->p[1].dirpath, "{rw}");
	expect_field("renameat", "second abspath", d->p[1].abspath, "{rw}/g");
	expect_field("renameat", "second realpath", d->p[1].realpath, "{rw}/g");
	cr_expect(d->p[0].st.mount_flags & ST_RDONLY, "source on the read-only mount");
	cr_expect(d->p[1].has_st && !(d->p[1].st.mount_flags & ST_RDONLY),
	          "destination on the writable mount");
	dtt_free(&r);
}

struct fopen_mode {
	const char *mode, *path, *flags;
};

static void check_fopen_modes(const struct fopen_mode *modes, size_t nmodes);

/* fopen's mode string and the open(2) flags glibc turns it into. */
Test(calls_bwrap, fopen_and_freopen_record_the_mode_and_equivalent_open_flags)
{
	/* "r+" needs the file to exist, "wx" needs it not to */
	static const struct fopen_mode modes[] = {
	    {"r+", "{ro}/f", "O_RDWR"},
	    {"rb+", "{ro}/f", "O_RDWR"},
	    {"w", "{ro}/f", "O_WRONLY|O_CREAT|O_TRUNC"},
	    {"w+", "{ro}/new", "O_RDWR|O_CREAT|O_TRUNC"},
	    {"a", "{ro}/new", "O_WRONLY|O_CREAT|O_APPEND"},
	    {"a+", "{ro}/f", "O_RDWR|O_CREAT|O_APPEND"},
	};
	check_fopen_modes(modes, sizeof(modes) / sizeof(modes[0]));
}

/* glibc's fopen turns "x" into O_EXCL and "e" into O_CLOEXEC. */
Test(calls_bwrap, fopen_x_and_e_modifiers_are_recorded_as_o_excl_and_o_cloexec)
{
	static const struct fopen_mode modes[] = {
	    {"wx", "{ro}/new", "O_WRONLY|O_CREAT|O_EXCL|O_TRUNC"},
	    {"we", "{ro}/new", "O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC"},
	    {"r+e", "{ro}/f", "O_RDWR|O_CLOEXEC"},
	};
	check_fopen_modes(modes, sizeof(modes) / sizeof(modes[0]));
}

static void check_fopen_modes(const struct fopen_mode *modes, size_t nmodes)
{
	const char *ops[] = {"fopen", "freopen"};
	for (size_t o = 0; o < 2; o++)
		for (size_t i = 0; i < nmodes; i++) {
			struct dtt_run r;
			const char *args[] = {modes[i].path, modes[i].mode, NULL};
			run_helper(&r, NULL, 1, "callall", ops[o], args);
			size_t n;
			const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
			cr_assert_not_null(d, "%s(\"%s\"): %s", ops[o], modes[i].mode, r.out);
			cr_expect_str_eq(d->op, ops[o]);
			cr_expect_str_eq(d->fmode, modes[i].mode);
			cr_expect_str_eq(flags_of(d), modes[i].flags,
			                 "%s(\"%s\") recorded as %s, expected %s", ops[o],
			                 modes[i].mode, flags_of(d), modes[i].flags);
			cr_expect(d->writes, "%s(\"%s\")", ops[o], modes[i].mode);
			dtt_free(&r);
		}
}

/* ---- what glibc binds ------------------------------------------------------ */

/* The same source built with -D_FILE_OFFSET_BITS=64 -D_FORTIFY_SOURCE=2
 * calls other symbols; each is interposed and named as glibc bound it. */
Test(calls_fortify, fortified_large_file_build_is_recorded_under_the_names_glibc_binds)
{
	static const struct {
		const char *sub, *args[6], *bound;
	} binds[] = {
	    {"open", {"{ro}/f", "O_WRONLY"}, "__open64_2"},
	    {"open", {"{ro}/new", "O_WRONLY|O_CREAT", "0644"}, "open64"},
	    {"openat", {"{ro}", "f", "O_WRONLY"}, "__openat64_2"},
	    {"openat", {"{ro}", "new", "O_WRONLY|O_CREAT", "0644"}, "openat64"},
	    {"creat", {"{ro}/new", "0644"}, "creat64"},
	    {"fopen", {"{ro}/new", "w"}, "fopen64"},
	    {"freopen", {"{ro}/new", "w"}, "freopen64"},
	    {"truncate", {"{ro}/f", "0"}, "truncate64"},
	    {"ftruncate", {"memfd:sealed", "4096"}, "ftruncate64"},
	    {"fcntl", {"rw:{rw}/lock", "F_SETLK", "F_WRLCK", "held"}, "fcntl64"},
	};
	for (size_t i = 0; i < sizeof(binds) / sizeof(binds[0]); i++) {
		struct dtt_run r;
		run_helper(&r, lock_opts, 1, "callall-fortify", binds[i].sub, binds[i].args);
		size_t n;
		const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
		cr_expect_not_null(d, "%s %s: nothing recorded: %s", binds[i].sub, binds[i].args[1],
		                   r.out);
		if (d) {
			cr_expect_str_eq(d->op, binds[i].bound,
			                 "%s %s: recorded as %s, glibc binds %s", binds[i].sub,
			                 binds[i].args[1], d->op, binds[i].bound);
			cr_expect_eq(n, 1, "%s: %zu records", binds[i].bound, n);
			cr_expect_str_eq(d->comm, "callall-fortify");
		}
		dtt_free(&r);
	}
}

Test(calls_fortify, fortified_open_records_the_same_fields_as_plain_open)
{
	struct dtt_run r;
	const char *args[] = {"{ro}/f", "O_RDWR|O_TRUNC", NULL};
	run_helper(&r, NULL, 1, "callall-fortify", "open", args);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect_str_eq(d->op, "__open64_2");
	cr_expect_str_eq(dt_errno_name(d->err), "EROFS");
	expect_field("__open64_2", "path", d->p[0].path, "{ro}/f");
	expect_field("__open64_2", "abspath", d->p[0].abspath, "{ro}/f");
	expect_field("__open64_2", "realpath", d->p[0].realpath, "{ro}/f");
	cr_expect_str_eq(flags_of(d), "O_RDWR|O_TRUNC");
	cr_expect(!d->has_mode);
	cr_expect(d->writes);
	dtt_free(&r);
}

/* ---- successes --------------------------------------------------------- */

static size_t helper_records(const struct dtt_run *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += is_helper(&r->recs[i]) && r->recs[i].type != DT_REC_PROCESS;
	return n;
}

Test(calls_bwrap, with_refusals_only_a_successful_write_records_nothing)
{
	struct dtt_run r;
	const char *args[] = {"{rw}/made", "0755", NULL};
	const char *opts[] = {"--refusals-only", NULL};
	run_helper(&r, opts, 1, "callall", "mkdir", args);
	cr_expect(strstr(r.out, "ret=0 errno=0"), "mkdir in the writable dir: %s", r.out);
	cr_expect_eq(helper_records(&r), 0, "a successful call left records");
	for (size_t i = 0; i < r.n; i++)
		cr_expect(!is_helper(&r.recs[i]), "the helper wrote a %s record",
		          dt_rec_type_name(r.recs[i].type));
	dtt_free(&r);
}

Test(calls_bwrap, by_default_a_successful_write_is_recorded_with_its_facts)
{
	struct dtt_run r;
	const char *args[] = {"{rw}/made", "0755", NULL};
	run_helper(&r, NULL, 1, "callall", "mkdir", args);
	cr_expect(strstr(r.out, "ret=0 errno=0"), "mkdir in the writable dir: %s", r.out);
	size_t n = 0;
	const struct dt_record *w = helper_record(&r, DT_REC_WRITE, &n);
	cr_assert_eq(n, 1, "%zu write records", n);
	cr_expect_str_eq(w->op, "mkdir");
	cr_expect(w->p[0].has_st && (w->p[0].st.valid & DT_SF_PARENT), "no directory facts");
	cr_expect_eq(helper_records(&r), 1, "only the write");
	dtt_free(&r);
}

Test(calls_bwrap, with_all_a_successful_mkdir_is_recorded_as_a_write)
{
	struct dtt_run r;
	const char *opts[] = {"--all", NULL};
	const char *args[] = {"{rw}/made", "0750", NULL};
	run_helper(&r, opts, 1, "callall", "mkdir", args);
	cr_expect(strstr(r.out, "ret=0 errno=0"), "%s", r.out);
	size_t n, nd;
	const struct dt_record *w = helper_record(&r, DT_REC_WRITE, &n);
	cr_assert_not_null(w, "no write record: %s", r.out);
	cr_expect_eq(n, 1, "%zu write records", n);
	cr_expect_null(helper_record(&r, DT_REC_DENIAL, &nd), "a success is no denial");
	cr_expect_str_eq(w->op, "mkdir");
	cr_expect_eq(w->err, 0);
	cr_expect(w->writes);
	expect_field("mkdir", "path", w->p[0].path, "{rw}/made");
	expect_field("mkdir", "abspath", w->p[0].abspath, "{rw}/made");
	expect_field("mkdir", "realpath", w->p[0].realpath, "{rw}/made");
	cr_expect(w->has_mode);
	cr_expect_eq(w->mode, 0750);
	cr_expect_eq(w->nframes, 0, "writes carry no call stack");
	cr_expect(!(w->p[0].st.mount_flags & ST_RDONLY));
	dtt_free(&r);
}

Test(calls_bwrap, with_all_a_successful_write_open_records_the_returned_fd)
{
	struct dtt_run r;
	const char *opts[] = {"--all", NULL};
	const char *args[] = {"{rw}/out", "O_WRONLY|O_CREAT|O_TRUNC", "0600", NULL};
	run_helper(&r, opts, 1, "callall", "open", args);
	long fd = -1;
	const char *p = strstr(r.out, "ret=");
	cr_assert_not_null(p, "%s", r.out);
	fd = strtol(p + 4, NULL, 10);
	cr_assert_geq(fd, 0, "%s", r.out);
	size_t n;
	const struct dt_record *w = helper_record(&r, DT_REC_WRITE, &n);
	cr_assert_not_null(w, "%s", r.out);
	cr_expect_str_eq(w->op, "open");
	cr_expect(w->has_fd);
	cr_expect_eq(w->fd, fd, "recorded fd %lld, the call returned %ld", (long long)w->fd, fd);
	cr_expect_str_eq(flags_of(w), "O_WRONLY|O_CREAT|O_TRUNC");
	dtt_free(&r);
}

Test(calls_bwrap, with_all_read_only_opens_and_access_checks_are_not_writes)
{
	struct dtt_run r;
	const char *opts[] = {"--all", NULL};
	const char *args[] = {"{rw}/lock", "O_RDONLY", NULL};
	run_helper(&r, opts, 1, "callall", "open", args);
	cr_expect(strstr(r.out, "errno=0"), "%s", r.out);
	cr_expect_eq(helper_records(&r), 0, "read-only open recorded");
	dtt_free(&r);
	const char *args2[] = {"{rw}/lock", "W_OK", NULL};
	run_helper(&r, opts, 1, "callall", "access", args2);
	cr_expect(strstr(r.out, "ret=0 errno=0"), "%s", r.out);
	cr_expect_eq(helper_records(&r), 0, "successful access(W_OK) recorded");
	dtt_free(&r);
}

/* The result as the program sees it does not depend on the probe, for
 * successes too (descriptors aside: the ring's is inherited). */
Test(calls_bwrap, successful_calls_return_the_same_with_and_without_the_probe)
{
	static const struct {
		const char *op, *args[6];
	} ok[] = {
	    {"mkdir", {"{rw}/a", "0755"}},
	    {"rename", {"{rw}/a", "{rw}/b"}},
	    {"rmdir", {"{rw}/b"}},
	    {"access", {"{ro}/f", "R_OK"}},
	    {"chmod", {"{rw}/lock", "0640"}},
	    {"truncate", {"{rw}/lock", "2"}},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		const char *argv[MAXARGV];
		build_argv(argv, 1, "callall", ok[i].op, ok[i].args);
		char direct[4096];
		cr_assert_eq(dtt_system(direct, sizeof(direct), argv, NULL), 0, "%s", direct);
		/* undo, so that the probed run repeats the same change */
		if (!strcmp(ok[i].op, "mkdir"))
			rmdir(expand("{rw}/a"));
		if (!strcmp(ok[i].op, "rename"))
			rename(expand("{rw}/b"), expand("{rw}/a"));
		if (!strcmp(ok[i].op, "rmdir"))
			mkdir(expand("{rw}/b"), 0755);
		struct dtt_run r;
		const char *opts[] = {"--all", NULL};
		cr_assert_eq(dtt_run(&r, opts, argv, NULL), 0);
		cr_expect_str_eq(r.out, direct, "%s: \"%s\" under the probe, \"%s\" without",
		                 ok[i].op, r.out, direct);
		cr_expect(strstr(direct, "ret=0 errno=0"), "%s: %s", ok[i].op, direct);
		dtt_free(&r);
	}
}

/* ---- refusals that are reads ------------------------------------------ */

/* EROFS never refuses a read; DAC does, once root is gone. The helper runs
 * as nobody on a 0600 file owned by root. */
static void as_nobody(struct dtt_run *r, const char *const *opts, const char *op,
                      const char *const *args)
{
	const char *argv[MAXARGV] = {"setpriv",        "--reuid=65534",       "--regid=65534",
	                             "--clear-groups", dtt_helper("callall"), op};
	size_t n = 6;
	for (size_t i = 0; args[i]; i++)
		argv[n++] = expand(args[i]);
	argv[n] = NULL;
	cr_assert_eq(dtt_run(r, opts, argv, NULL), 0, "%s: ring unreadable: %s", op, r->out);
	cr_assert(strstr(r->out, "ret="), "%s: the helper did not run as nobody: %s", op, r->out);
}

static void nobody_setup(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to switch to uid 65534");
	cr_assert_eq(chmod(tmp, 0755), 0);
	touch(tmp, "secret", 0600);
}

Test(calls_unprivileged, refused_read_only_open_is_recorded_with_writes_0)
{
	nobody_setup();
	struct dtt_run r;
	const char *args[] = {"{tmp}/secret", "O_RDONLY", NULL};
	as_nobody(&r, NULL, "open", args);
	cr_expect(strstr(r.out, "ret=-1 errno=EACCES"), "%s", r.out);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect_eq(n, 1);
	cr_expect_str_eq(d->op, "open");
	cr_expect_str_eq(dt_errno_name(d->err), "EACCES");
	cr_expect_eq(d->writes, 0, "a read-only open is not a write");
	cr_expect_str_eq(flags_of(d), "O_RDONLY");
	cr_expect_eq(d->uid, 65534);
	expect_field("open", "realpath", d->p[0].realpath, "{tmp}/secret");
	cr_expect(d->p[0].st.valid & DT_SF_EXISTS);
	cr_expect_eq(d->p[0].st.mode & 07777, 0600);
	cr_expect_eq(d->p[0].st.uid, 0);
	dtt_free(&r);
}

Test(calls_unprivileged, refused_fopen_for_reading_is_recorded_with_writes_0)
{
	nobody_setup();
	struct dtt_run r;
	const char *args[] = {"{tmp}/secret", "r", NULL};
	as_nobody(&r, NULL, "fopen", args);
	cr_expect(strstr(r.out, "ret=NULL errno=EACCES"), "%s", r.out);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect_str_eq(d->op, "fopen");
	cr_expect_eq(d->writes, 0);
	cr_expect_str_eq(d->fmode, "r");
	cr_expect_str_eq(flags_of(d), "O_RDONLY");
	dtt_free(&r);
}

Test(calls_unprivileged, refused_access_w_ok_is_recorded)
{
	nobody_setup();
	struct dtt_run r;
	const char *args[] = {"{tmp}/secret", "W_OK", NULL};
	as_nobody(&r, NULL, "access", args);
	cr_expect(strstr(r.out, "ret=-1 errno=EACCES"), "%s", r.out);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect_str_eq(d->op, "access");
	cr_expect(d->writes);
	cr_expect(d->has_cmd);
	cr_expect_str_eq(flags_of(d), "W_OK");
	dtt_free(&r);
}

Test(calls_unprivileged, refused_access_r_ok_is_not_recorded)
{
	nobody_setup();
	struct dtt_run r;
	const char *args[] = {"{tmp}/secret", "R_OK", NULL};
	as_nobody(&r, NULL, "access", args);
	cr_expect(strstr(r.out, "ret=-1 errno=EACCES"), "the check must really fail: %s", r.out);
	cr_expect_eq(helper_records(&r), 0, "access(R_OK) recorded");
	dtt_free(&r);
	const char *args2[] = {"{tmp}", "secret", "R_OK", "0", NULL};
	as_nobody(&r, NULL, "faccessat", args2);
	cr_expect(strstr(r.out, "ret=-1 errno=EACCES"), "%s", r.out);
	cr_expect_eq(helper_records(&r), 0, "faccessat(R_OK) recorded");
	dtt_free(&r);
}

/* ---- locks ------------------------------------------------------------- */

Test(calls_locks, contended_lock_is_not_a_refusal_by_default)
{
	static const struct {
		const char *op, *args[5];
	} locks[] = {
	    {"fcntl", {"rw:{rw}/lock", "F_SETLK", "F_WRLCK", "held"}},
	    {"fcntl64", {"rw:{rw}/lock", "F_SETLK", "F_WRLCK", "held"}},
	    {"flock", {"{rw}/lock", "LOCK_EX|LOCK_NB", "held"}},
	};
	for (size_t i = 0; i < 3; i++) {
		struct dtt_run r;
		run_helper(&r, NULL, 0, "callall", locks[i].op, locks[i].args);
		cr_expect(strstr(r.out, "ret=-1 errno=EAGAIN"), "%s: %s", locks[i].op, r.out);
		cr_expect_eq(helper_records(&r), 0, "%s: contention recorded by default",
		             locks[i].op);
		dtt_free(&r);
	}
}

Test(calls_locks, with_all_contended_lock_is_recorded_with_eagain)
{
	struct dtt_run r;
	const char *opts[] = {"--all", NULL};
	const char *args[] = {"rw:{rw}/lock", "F_SETLKW", "F_UNLCK", NULL};
	/* a lock call that succeeds is never recorded, even with --all */
	run_helper(&r, opts, 0, "callall", "fcntl", args);
	cr_expect(strstr(r.out, "ret=0 errno=0"), "%s", r.out);
	cr_expect_eq(helper_records(&r), 0);
	dtt_free(&r);
	const char *args2[] = {"rw:{rw}/lock", "F_SETLK", "F_WRLCK", "held", NULL};
	run_helper(&r, opts, 0, "callall", "fcntl", args2);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect_str_eq(dt_errno_name(d->err), "EAGAIN");
	cr_expect_str_eq(flags_of(d), "F_SETLK|F_WRLCK");
	expect_field("fcntl", "realpath", d->p[0].realpath, "{rw}/lock");
	dtt_free(&r);
}

/* F_RDLCK is 0: the lock type must still be recorded. */
Test(calls_locks, refused_read_lock_records_its_lock_type)
{
	struct dtt_run r;
	const char *args[] = {"{rw}/lock", "F_SETLK", "F_RDLCK", "held", NULL};
	run_helper(&r, lock_opts, 0, "callall", "fcntl", args);
	cr_expect(strstr(r.out, "ret=-1 errno=EAGAIN"), "%s", r.out);
	size_t n;
	const struct dt_record *d = helper_record(&r, DT_REC_DENIAL, &n);
	cr_assert_not_null(d, "%s", r.out);
	cr_expect_str_eq(flags_of(d), "F_SETLK|F_RDLCK");
	dtt_free(&r);
}

Test(calls_locks, write_lock_on_a_read_only_descriptor_is_ebadf_and_not_recorded)
{
	struct dtt_run r;
	const char *args[] = {"{rw}/lock", "F_SETLK", "F_WRLCK", NULL};
	run_helper(&r, lock_opts, 0, "callall", "fcntl", args);
	cr_expect(strstr(r.out, "ret=-1 errno=EBADF"), "%s", r.out);
	cr_expect_eq(helper_records(&r), 0);
	dtt_free(&r);
}
