/*
 * callall: perform ONE of the libc calls libdenytrace.so interposes and
 * print what the program saw, so that tests can compare the probe's record
 * (and a run without the probe) with the real result.
 *
 * Usage: callall [-C DIR] OP ARGS...
 *
 * OP is the exact libc entry point (one per line of preload/calls.def); the
 * helper calls that very symbol (open64 calls open64, __open_2 calls
 * __open_2). It prints one line
 *
 *   ret=<value> errno=<NAME>
 *
 * (errno=0 when errno was left at 0; ret=NULL/FILE for the stdio openers)
 * and exits 0 whatever the call returned; 2 on a usage or set-up error.
 *
 * Arguments:
 *   FLAGS, MODE  numbers (strtol base 0, so 0644 is octal) or symbolic names
 *                joined with '|': O_WRONLY|O_CREAT, AT_REMOVEDIR,
 *                RENAME_NOREPLACE, S_IFIFO|0644, LOCK_EX|LOCK_NB, W_OK, ...
 *   DIR          a directory opened O_RDONLY|O_DIRECTORY as the real dirfd
 *                of *at calls, or AT_FDCWD
 *   FD           a descriptor for the f* calls: PATH (opened O_RDONLY),
 *                rw:PATH (O_RDWR), wo:PATH (O_WRONLY), or memfd:sealed (a
 *                memfd with F_SEAL_SHRINK|F_SEAL_GROW: resizing it is EPERM)
 *   held         (fcntl, fcntl64, flock) before the call, another open file
 *                description of the same file takes a conflicting lock
 *                (OFD write lock / flock LOCK_EX), so the call is refused
 *
 *   open PATH FLAGS [MODE]          open64 PATH FLAGS [MODE]
 *   openat DIR PATH FLAGS [MODE]    openat64 DIR PATH FLAGS [MODE]
 *   __open_2 PATH FLAGS             __open64_2 PATH FLAGS
 *   __openat_2 DIR PATH FLAGS       __openat64_2 DIR PATH FLAGS
 *   creat PATH MODE                 creat64 PATH MODE
 *   fopen PATH MODE                 fopen64 PATH MODE
 *   freopen PATH MODE               freopen64 PATH MODE   (reopens stdin)
 *   rename OLD NEW                  renameat DIR OLD DIR NEW
 *   renameat2 DIR OLD DIR NEW FLAGS
 *   link OLD NEW                    linkat DIR OLD DIR NEW FLAGS
 *   symlink TARGET PATH             symlinkat TARGET DIR PATH
 *   unlink PATH                     unlinkat DIR PATH FLAGS
 *   remove PATH                     rmdir PATH
 *   mkdir PATH MODE                 mkdirat DIR PATH MODE
 *   mknod PATH MODE DEV             mknodat DIR PATH MODE DEV
 *   truncate PATH LEN               truncate64 PATH LEN
 *   ftruncate FD LEN                ftruncate64 FD LEN
 *   chmod PATH MODE                 fchmod FD MODE
 *   fchmodat DIR PATH MODE FLAGS
 *   chown PATH UID GID              lchown PATH UID GID
 *   fchown FD UID GID               fchownat DIR PATH UID GID FLAGS
 *   utime PATH                      utimes PATH
 *   utimensat DIR PATH FLAGS        futimens FD
 *   fcntl FD CMD TYPE [held]        fcntl64 FD CMD TYPE [held]
 *   flock FD OP [held]
 *   access PATH MODE                faccessat DIR PATH MODE FLAGS
 *   mkstemp TMPL                    mkstemp64 TMPL
 *   mkstemps TMPL SFX               mkstemps64 TMPL SFX
 *   mkostemp TMPL FLAGS             mkostemp64 TMPL FLAGS
 *   mkostemps TMPL SFX FLAGS        mkostemps64 TMPL SFX FLAGS
 *   mkdtemp TMPL                    tmpfile              tmpfile64
 *   mkfifo PATH MODE                mkfifoat DIR PATH MODE
 *   lutimes PATH                    euidaccess PATH MODE eaccess PATH MODE
 *
 * Set-up (opening DIR and FD, taking the conflicting lock) uses raw system
 * calls, so that only the call under test can ever reach the probe.
 *
 * Built twice: as is (build/helpers/callall) and, through callall-fortify.c,
 * with -D_FILE_OFFSET_BITS=64 -D_FORTIFY_SOURCE=2, where glibc's headers
 * rebind open to open64 or __open64_2, truncate to truncate64, and so on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>
#include <utime.h>

/* The _2 forms are declared by <bits/fcntl2.h> only when fortifying (and
 * then, with _FILE_OFFSET_BITS=64, __open_2 is bound to __open64_2). */
#if !defined(__USE_FORTIFY_LEVEL) || __USE_FORTIFY_LEVEL == 0
extern int __open_2(const char *path, int flags);
extern int __open64_2(const char *path, int flags);
extern int __openat_2(int dirfd, const char *path, int flags);
extern int __openat64_2(int dirfd, const char *path, int flags);
#endif

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif

static const char *prog = "callall";

static _Noreturn void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static const struct {
	const char *name;
	long value;
} symbols[] = {
#define S(x)                                                                                       \
	{                                                                                          \
#x, (long)(x)                                                                      \
	}
    S(O_RDONLY),
    S(O_WRONLY),
    S(O_RDWR),
    S(O_CREAT),
    S(O_EXCL),
    S(O_NOCTTY),
    S(O_TRUNC),
    S(O_APPEND),
    S(O_NONBLOCK),
    S(O_DSYNC),
    S(O_SYNC),
    S(O_DIRECTORY),
    S(O_NOFOLLOW),
    S(O_CLOEXEC),
    S(O_PATH),
    S(O_TMPFILE),
    S(O_NOATIME),
    S(O_LARGEFILE),
    S(AT_FDCWD),
    S(AT_REMOVEDIR),
    S(AT_SYMLINK_NOFOLLOW),
    S(AT_SYMLINK_FOLLOW),
    S(AT_EMPTY_PATH),
    S(AT_EACCESS),
    S(RENAME_NOREPLACE),
    S(RENAME_EXCHANGE),
    S(RENAME_WHITEOUT),
    S(S_IFIFO),
    S(S_IFREG),
    S(S_IFCHR),
    S(S_IFBLK),
    S(S_IFSOCK),
    S(F_OK),
    S(R_OK),
    S(W_OK),
    S(X_OK),
    S(LOCK_SH),
    S(LOCK_EX),
    S(LOCK_UN),
    S(LOCK_NB),
    S(F_SETLK),
    S(F_SETLKW),
    S(F_OFD_SETLK),
    S(F_OFD_SETLKW),
    S(F_GETLK),
    S(F_RDLCK),
    S(F_WRLCK),
    S(F_UNLCK),
#undef S
};

/* "O_WRONLY|O_CREAT", "0644", "S_IFIFO|0600", "-1" */
static long num(const char *s)
{
	char buf[256];
	if (!*s || strlen(s) >= sizeof(buf))
		die("bad number or flags: '%s'", s);
	strcpy(buf, s);
	long v = 0;
	for (char *save = NULL, *tok = strtok_r(buf, "|", &save); tok;
	     tok = strtok_r(NULL, "|", &save)) {
		size_t i;
		for (i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++)
			if (!strcmp(tok, symbols[i].name))
				break;
		if (i < sizeof(symbols) / sizeof(symbols[0])) {
			v |= symbols[i].value;
			continue;
		}
		char *end;
		errno = 0;
		long n = strtol(tok, &end, 0);
		if (errno || *end || end == tok)
			die("bad number or flags: '%s'", s);
		v |= n;
	}
	return v;
}

static int raw_open(const char *path, int flags)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, 0);
}

/* The real directory fd of an *at call. */
static int dir_fd(const char *dir)
{
	if (!strcmp(dir, "AT_FDCWD"))
		return AT_FDCWD;
	int fd = raw_open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		die("cannot open directory %s", dir);
	return fd;
}

/* The descriptor of an f* call; *path_out gets the file's path (or NULL). */
static int file_fd(const char *spec, const char **path_out)
{
	*path_out = NULL;
	if (!strcmp(spec, "memfd:sealed")) {
		int fd = (int)syscall(SYS_memfd_create, "sealed", MFD_ALLOW_SEALING | MFD_CLOEXEC);
		if (fd < 0)
			die("memfd_create: %s", strerror(errno));
		if (syscall(SYS_fcntl, fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
			die("F_ADD_SEALS: %s", strerror(errno));
		return fd;
	}
	int flags = O_RDONLY;
	if (!strncmp(spec, "rw:", 3)) {
		flags = O_RDWR;
		spec += 3;
	} else if (!strncmp(spec, "wo:", 3)) {
		flags = O_WRONLY;
		spec += 3;
	}
	int fd = raw_open(spec, flags);
	if (fd < 0)
		die("cannot open %s", spec);
	*path_out = spec;
	return fd;
}

/* Another open file description of path takes a lock the call under test
 * conflicts with: an OFD write lock (fcntl) or flock(LOCK_EX). */
static void hold_lock(const char *path, int use_flock)
{
	if (!path)
		die("%s", "'held' needs a file path, not a memfd");
	int fd = raw_open(path, use_flock ? O_RDONLY : O_RDWR);
	if (fd < 0)
		die("cannot open %s to hold a lock", path);
	int r;
	if (use_flock) {
		r = (int)syscall(SYS_flock, fd, LOCK_EX | LOCK_NB);
	} else {
		struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
		r = (int)syscall(SYS_fcntl, fd, F_OFD_SETLK, &fl);
	}
	if (r < 0)
		die("cannot take the conflicting lock on %s", path);
	/* fd stays open (and locked) until exit */
}

static void usage(void)
{
	fprintf(stderr, "usage: %s [-C DIR] OP ARGS... (see tests/helpers/callall.c)\n", prog);
	exit(2);
}

static void need(int argc, int n, const char *op)
{
	if (argc != n)
		die("wrong number of arguments for %s", op);
}

static void print_result(long ret, int is_ptr, int err)
{
	const char *name = err ? strerrorname_np(err) : "0";
	if (is_ptr)
		printf("ret=%s errno=%s\n", ret ? "FILE" : "NULL", name ? name : "?");
	else
		printf("ret=%ld errno=%s\n", ret, name ? name : "?");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc > 0)
		prog = argv[0];
	argv++;
	argc--;
	if (argc >= 2 && !strcmp(argv[0], "-C")) {
		if (chdir(argv[1]) < 0)
			die("cannot chdir to %s", argv[1]);
		argv += 2;
		argc -= 2;
	}
	if (argc < 1)
		usage();
	const char *op = argv[0];
	char **a = argv + 1;
	int n = argc - 1;
	long ret = 0;
	int is_ptr = 0, err;
	FILE *f = NULL;
	const char *fpath;

	/* Everything that may touch errno (parsing, set-up) happens before
	 * errno is cleared; the call is the last thing before saving it. */
#define CALL(expr)                                                                                 \
	do {                                                                                       \
		errno = 0;                                                                         \
		ret = (long)(expr);                                                                \
		err = errno;                                                                       \
		goto done;                                                                         \
	} while (0)
#define CALLP(expr)                                                                                \
	do {                                                                                       \
		errno = 0;                                                                         \
		f = (expr);                                                                        \
		err = errno;                                                                       \
		ret = f != NULL;                                                                   \
		is_ptr = 1;                                                                        \
		goto done;                                                                         \
	} while (0)

	if (!strcmp(op, "open") || !strcmp(op, "open64")) {
		if (n != 2 && n != 3)
			die("wrong number of arguments for %s", op);
		int fl = (int)num(a[1]);
		int is64 = op[4] == '6';
		if (n == 3) {
			mode_t m = (mode_t)num(a[2]);
			if (is64)
				CALL(open64(a[0], fl, m));
			CALL(open(a[0], fl, m));
		}
		if (is64)
			CALL(open64(a[0], fl));
		CALL(open(a[0], fl));
	}
	if (!strcmp(op, "openat") || !strcmp(op, "openat64")) {
		if (n != 3 && n != 4)
			die("wrong number of arguments for %s", op);
		int d = dir_fd(a[0]);
		int fl = (int)num(a[2]);
		int is64 = op[6] == '6';
		if (n == 4) {
			mode_t m = (mode_t)num(a[3]);
			if (is64)
				CALL(openat64(d, a[1], fl, m));
			CALL(openat(d, a[1], fl, m));
		}
		if (is64)
			CALL(openat64(d, a[1], fl));
		CALL(openat(d, a[1], fl));
	}
	if (!strcmp(op, "__open_2")) {
		need(n, 2, op);
		int fl = (int)num(a[1]);
		CALL(__open_2(a[0], fl));
	}
	if (!strcmp(op, "__open64_2")) {
		need(n, 2, op);
		int fl = (int)num(a[1]);
		CALL(__open64_2(a[0], fl));
	}
	if (!strcmp(op, "__openat_2")) {
		need(n, 3, op);
		int d = dir_fd(a[0]);
		int fl = (int)num(a[2]);
		CALL(__openat_2(d, a[1], fl));
	}
	if (!strcmp(op, "__openat64_2")) {
		need(n, 3, op);
		int d = dir_fd(a[0]);
		int fl = (int)num(a[2]);
		CALL(__openat64_2(d, a[1], fl));
	}
	if (!strcmp(op, "creat")) {
		need(n, 2, op);
		mode_t m = (mode_t)num(a[1]);
		CALL(creat(a[0], m));
	}
	if (!strcmp(op, "creat64")) {
		need(n, 2, op);
		mode_t m = (mode_t)num(a[1]);
		CALL(creat64(a[0], m));
	}
	if (!strcmp(op, "fopen")) {
		need(n, 2, op);
		CALLP(fopen(a[0], a[1]));
	}
	if (!strcmp(op, "fopen64")) {
		need(n, 2, op);
		CALLP(fopen64(a[0], a[1]));
	}
	if (!strcmp(op, "freopen")) {
		need(n, 2, op);
		CALLP(freopen(a[0], a[1], stdin));
	}
	if (!strcmp(op, "freopen64")) {
		need(n, 2, op);
		CALLP(freopen64(a[0], a[1], stdin));
	}
	if (!strcmp(op, "rename")) {
		need(n, 2, op);
		CALL(rename(a[0], a[1]));
	}
	if (!strcmp(op, "renameat")) {
		need(n, 4, op);
		int d1 = dir_fd(a[0]), d2 = dir_fd(a[2]);
		CALL(renameat(d1, a[1], d2, a[3]));
	}
	if (!strcmp(op, "renameat2")) {
		need(n, 5, op);
		int d1 = dir_fd(a[0]), d2 = dir_fd(a[2]);
		unsigned fl = (unsigned)num(a[4]);
		CALL(renameat2(d1, a[1], d2, a[3], fl));
	}
	if (!strcmp(op, "link")) {
		need(n, 2, op);
		CALL(link(a[0], a[1]));
	}
	if (!strcmp(op, "linkat")) {
		need(n, 5, op);
		int d1 = dir_fd(a[0]), d2 = dir_fd(a[2]);
		int fl = (int)num(a[4]);
		CALL(linkat(d1, a[1], d2, a[3], fl));
	}
	if (!strcmp(op, "symlink")) {
		need(n, 2, op);
		CALL(symlink(a[0], a[1]));
	}
	if (!strcmp(op, "symlinkat")) {
		need(n, 3, op);
		int d = dir_fd(a[1]);
		CALL(symlinkat(a[0], d, a[2]));
	}
	if (!strcmp(op, "unlink")) {
		need(n, 1, op);
		CALL(unlink(a[0]));
	}
	if (!strcmp(op, "unlinkat")) {
		need(n, 3, op);
		int d = dir_fd(a[0]);
		int fl = (int)num(a[2]);
		CALL(unlinkat(d, a[1], fl));
	}
	if (!strcmp(op, "remove")) {
		need(n, 1, op);
		CALL(remove(a[0]));
	}
	if (!strcmp(op, "rmdir")) {
		need(n, 1, op);
		CALL(rmdir(a[0]));
	}
	if (!strcmp(op, "mkdir")) {
		need(n, 2, op);
		mode_t m = (mode_t)num(a[1]);
		CALL(mkdir(a[0], m));
	}
	if (!strcmp(op, "mkdirat")) {
		need(n, 3, op);
		int d = dir_fd(a[0]);
		mode_t m = (mode_t)num(a[2]);
		CALL(mkdirat(d, a[1], m));
	}
	if (!strcmp(op, "mknod")) {
		need(n, 3, op);
		mode_t m = (mode_t)num(a[1]);
		dev_t dev = (dev_t)num(a[2]);
		CALL(mknod(a[0], m, dev));
	}
	if (!strcmp(op, "mknodat")) {
		need(n, 4, op);
		int d = dir_fd(a[0]);
		mode_t m = (mode_t)num(a[2]);
		dev_t dev = (dev_t)num(a[3]);
		CALL(mknodat(d, a[1], m, dev));
	}
	if (!strcmp(op, "truncate")) {
		need(n, 2, op);
		off_t len = (off_t)num(a[1]);
		CALL(truncate(a[0], len));
	}
	if (!strcmp(op, "truncate64")) {
		need(n, 2, op);
		off64_t len = (off64_t)num(a[1]);
		CALL(truncate64(a[0], len));
	}
	if (!strcmp(op, "ftruncate")) {
		need(n, 2, op);
		int fd = file_fd(a[0], &fpath);
		off_t len = (off_t)num(a[1]);
		CALL(ftruncate(fd, len));
	}
	if (!strcmp(op, "ftruncate64")) {
		need(n, 2, op);
		int fd = file_fd(a[0], &fpath);
		off64_t len = (off64_t)num(a[1]);
		CALL(ftruncate64(fd, len));
	}
	if (!strcmp(op, "chmod")) {
		need(n, 2, op);
		mode_t m = (mode_t)num(a[1]);
		CALL(chmod(a[0], m));
	}
	if (!strcmp(op, "fchmod")) {
		need(n, 2, op);
		int fd = file_fd(a[0], &fpath);
		mode_t m = (mode_t)num(a[1]);
		CALL(fchmod(fd, m));
	}
	if (!strcmp(op, "fchmodat")) {
		need(n, 4, op);
		int d = dir_fd(a[0]);
		mode_t m = (mode_t)num(a[2]);
		int fl = (int)num(a[3]);
		CALL(fchmodat(d, a[1], m, fl));
	}
	if (!strcmp(op, "chown") || !strcmp(op, "lchown")) {
		need(n, 3, op);
		uid_t u = (uid_t)num(a[1]);
		gid_t g = (gid_t)num(a[2]);
		if (op[0] == 'l')
			CALL(lchown(a[0], u, g));
		CALL(chown(a[0], u, g));
	}
	if (!strcmp(op, "fchown")) {
		need(n, 3, op);
		int fd = file_fd(a[0], &fpath);
		uid_t u = (uid_t)num(a[1]);
		gid_t g = (gid_t)num(a[2]);
		CALL(fchown(fd, u, g));
	}
	if (!strcmp(op, "fchownat")) {
		need(n, 5, op);
		int d = dir_fd(a[0]);
		uid_t u = (uid_t)num(a[2]);
		gid_t g = (gid_t)num(a[3]);
		int fl = (int)num(a[4]);
		CALL(fchownat(d, a[1], u, g, fl));
	}
	if (!strcmp(op, "utime")) {
		need(n, 1, op);
		CALL(utime(a[0], NULL));
	}
	if (!strcmp(op, "utimes")) {
		need(n, 1, op);
		CALL(utimes(a[0], NULL));
	}
	if (!strcmp(op, "utimensat")) {
		need(n, 3, op);
		int d = dir_fd(a[0]);
		int fl = (int)num(a[2]);
		CALL(utimensat(d, a[1], NULL, fl));
	}
	if (!strcmp(op, "futimens")) {
		need(n, 1, op);
		int fd = file_fd(a[0], &fpath);
		CALL(futimens(fd, NULL));
	}
	if (!strcmp(op, "fcntl") || !strcmp(op, "fcntl64")) {
		if (n != 3 && n != 4)
			die("wrong number of arguments for %s", op);
		int fd = file_fd(a[0], &fpath);
		int cmd = (int)num(a[1]);
		struct flock fl = {.l_type = (short)num(a[2]), .l_whence = SEEK_SET};
		if (n == 4) {
			if (strcmp(a[3], "held"))
				die("unknown fcntl option '%s'", a[3]);
			hold_lock(fpath, 0);
		}
		if (op[5] == '6')
			CALL(fcntl64(fd, cmd, &fl));
		CALL(fcntl(fd, cmd, &fl));
	}
	if (!strcmp(op, "flock")) {
		if (n != 2 && n != 3)
			die("wrong number of arguments for %s", op);
		int fd = file_fd(a[0], &fpath);
		int how = (int)num(a[1]);
		if (n == 3) {
			if (strcmp(a[2], "held"))
				die("unknown flock option '%s'", a[2]);
			hold_lock(fpath, 1);
		}
		CALL(flock(fd, how));
	}
	if (!strcmp(op, "access")) {
		need(n, 2, op);
		int m = (int)num(a[1]);
		CALL(access(a[0], m));
	}
	if (!strcmp(op, "faccessat")) {
		need(n, 4, op);
		int d = dir_fd(a[0]);
		int m = (int)num(a[2]);
		int fl = (int)num(a[3]);
		CALL(faccessat(d, a[1], m, fl));
	}
	/* glibc's temporary files: TMPL ends in XXXXXX (before SFX bytes) */
	if (!strcmp(op, "mkstemp"))
		CALL((need(n, 1, op), mkstemp(a[0])));
	if (!strcmp(op, "mkstemp64"))
		CALL((need(n, 1, op), mkstemp64(a[0])));
	if (!strcmp(op, "mkstemps"))
		CALL((need(n, 2, op), mkstemps(a[0], (int)num(a[1]))));
	if (!strcmp(op, "mkstemps64"))
		CALL((need(n, 2, op), mkstemps64(a[0], (int)num(a[1]))));
	if (!strcmp(op, "mkostemp"))
		CALL((need(n, 2, op), mkostemp(a[0], (int)num(a[1]))));
	if (!strcmp(op, "mkostemp64"))
		CALL((need(n, 2, op), mkostemp64(a[0], (int)num(a[1]))));
	if (!strcmp(op, "mkostemps"))
		CALL((need(n, 3, op), mkostemps(a[0], (int)num(a[1]), (int)num(a[2]))));
	if (!strcmp(op, "mkostemps64"))
		CALL((need(n, 3, op), mkostemps64(a[0], (int)num(a[1]), (int)num(a[2]))));
	if (!strcmp(op, "mkdtemp"))
		CALLP((need(n, 1, op), (FILE *)(void *)mkdtemp(a[0])));
	if (!strcmp(op, "tmpfile"))
		CALLP((need(n, 0, op), tmpfile()));
	if (!strcmp(op, "tmpfile64"))
		CALLP((need(n, 0, op), tmpfile64()));
	if (!strcmp(op, "mkfifo"))
		CALL((need(n, 2, op), mkfifo(a[0], (mode_t)num(a[1]))));
	if (!strcmp(op, "mkfifoat"))
		CALL((need(n, 3, op), mkfifoat(dir_fd(a[0]), a[1], (mode_t)num(a[2]))));
	if (!strcmp(op, "lutimes"))
		CALL((need(n, 1, op), lutimes(a[0], NULL)));
	if (!strcmp(op, "euidaccess"))
		CALL((need(n, 2, op), euidaccess(a[0], (int)num(a[1]))));
	if (!strcmp(op, "eaccess"))
		CALL((need(n, 2, op), eaccess(a[0], (int)num(a[1]))));
	die("unknown operation '%s'", op);

done:
	print_result(ret, is_ptr, err);
	(void)f;
	return 0;
#undef CALL
#undef CALLP
}
