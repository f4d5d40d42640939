// build-flags: -D_FORTIFY_SOURCE=2 -lpthread
/*
 * behave: a program whose behaviour must not change under the probe, for
 * tests/integration/test_behaviour.c. Run inside bubblewrap with RO
 * read-only and RW writable; RO must hold a file "existing" and a
 * directory "dir" (the test creates them).
 *
 *   behave same RO RW        a fixed list of calls, successes and failures
 *                            of every kind; prints "label ret errno" lines
 *   behave fds RO RW         open descriptors before and after refusals
 *   behave closefrom RO RW   close_range(3, ~0U), reuse the numbers, refuse
 *   behave closefrom-late RO RW
 *                            refuse first, then close_range(3, ~0U), reuse
 *                            the numbers for the program's own files, refuse
 *                            again (from a new thread too): files untouched
 *   behave locks F ALIAS RO  POSIX lock on F survives refusals on its path;
 *                            ALIAS is a read-only bind of the same file
 *   behave locks-control F   the check itself: closing a second descriptor
 *                            of F drops the lock, and the check sees it
 *   behave refuse RO         one refused open, exit 0
 *   behave signal RO         refusals from a SIGALRM handler and main loop
 *   behave signal-alt RO     the same in a thread whose signal stack (with
 *                            SS_AUTODISARM) lies above its stack
 *   behave longjmp RO        a timer handler leaves refusals by siglongjmp
 *                            200 times; then 1000 refusals, all recorded;
 *                            prints how much the address space grew
 *
 * Built with _FORTIFY_SOURCE so that open() with flags unknown at compile
 * time goes to __open_2. Everything is printed on stdout; nothing else.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *ro, *rw;
static int fd_base; /* lowest free descriptor at start: fds print relative */

static const char *P(const char *dir, const char *name)
{
	static char buf[8][4096];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";
	return n ? n : "E?";
}

/* label, return value, errno as the call left it */
static void show(const char *label, long ret, int err)
{
	printf("%-28s ret=%ld errno=%s\n", label, ret, ename(err));
}

static void show_fd(const char *label, int fd, int err)
{
	if (fd >= 0)
		printf("%-28s fd=base+%d errno=%s\n", label, fd - fd_base, ename(err));
	else
		show(label, fd, err);
}

#define CALL(label, expr)                                                                          \
	do {                                                                                       \
		errno = 0;                                                                         \
		long r_ = (long)(expr);                                                            \
		show(label, r_, errno);                                                            \
	} while (0)
#define CALL_FD(label, expr, var)                                                                  \
	do {                                                                                       \
		errno = 0;                                                                         \
		var = (expr);                                                                      \
		show_fd(label, var, errno);                                                        \
	} while (0)
#define CALL_FILE(label, expr, var)                                                                \
	do {                                                                                       \
		errno = 0;                                                                         \
		var = (expr);                                                                      \
		printf("%-28s %s errno=%s\n", label, var ? "FILE" : "NULL", ename(errno));         \
	} while (0)

static int lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY);
	close(fd);
	return fd;
}

static struct flock lk(short type)
{
	struct flock f = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	return f;
}

static volatile int open_flags_rdwr = O_RDWR; /* not a constant: __open_2 */

/* mkstemp and its kin, which glibc makes with its internal open, mkdir
 * and mknod, and the probe's syscall and prctl: the same results, errno
 * and template contents (whether the call changed it: the name is random). */
static void tmpl_show(const char *label, long ret, int err, const char *tmpl, const char *orig)
{
	printf("%-28s ret=%s errno=%s template %s len=%zu\n", label, ret >= 0 ? ">=0" : "-1",
	       ename(err), strcmp(tmpl, orig) ? "changed" : "kept", strlen(tmpl));
}

#define CALL_TMPL(label, fmt, dir, expr)                                                           \
	do {                                                                                       \
		snprintf(orig, sizeof(orig), fmt, dir);                                            \
		strcpy(t, orig);                                                                   \
		errno = EDOM;                                                                      \
		long r_ = (long)(expr);                                                            \
		tmpl_show(label, r_, errno, t, orig);                                              \
		if (r_ >= 0 && r_ < 1024)                                                          \
			close((int)r_);                                                            \
	} while (0)

static void same_temp_files(void)
{
	char t[4096], orig[4096], name[32];
	CALL_TMPL("mkstemp rw", "%s/tXXXXXX", rw, mkstemp(t));
	CALL_TMPL("mkstemp ro", "%s/tXXXXXX", ro, mkstemp(t));
	CALL_TMPL("mkstemp bad template", "%s/tXXXX", ro, mkstemp(t));
	CALL_TMPL("mkstemps ro", "%s/tXXXXXX.db", ro, mkstemps(t, 3));
	CALL_TMPL("mkostemp ro", "%s/tXXXXXX", ro, mkostemp(t, O_CLOEXEC));
	CALL_TMPL("mkostemps rw", "%s/tXXXXXX.db", rw, mkostemps(t, 3, O_CLOEXEC));
	CALL_TMPL("mkdtemp rw", "%s/dXXXXXX", rw, mkdtemp(t) ? 0 : -1);
	CALL_TMPL("mkdtemp ro", "%s/dXXXXXX", ro, mkdtemp(t) ? 0 : -1);
	FILE *f;
	CALL_FILE("tmpfile", tmpfile(), f);
	if (f)
		fclose(f);
	CALL("mkfifo rw", mkfifo(P(rw, "fifo"), 0600));
	CALL("mkfifo ro", mkfifo(P(ro, "fifo"), 0600));
	CALL("mkfifoat ro", mkfifoat(AT_FDCWD, P(ro, "fifo"), 0600));
	CALL("lutimes ro", lutimes(P(ro, "existing"), NULL));
	CALL("euidaccess ro W_OK", euidaccess(P(ro, "existing"), W_OK));
	CALL("eaccess ro W_OK", eaccess(P(ro, "existing"), W_OK));
	CALL("syscall openat ro",
	     syscall(SYS_openat, AT_FDCWD, P(ro, "new"), O_WRONLY | O_CREAT, 0644));
	CALL("syscall bad number", syscall(-1L));
	errno = EDOM;
	long pid = syscall(SYS_getpid);
	show("syscall getpid keeps errno", pid == getpid(), errno);
	errno = EDOM;
	long r = prctl(PR_GET_NAME, name, 0, 0, 0);
	show("prctl get name keeps errno", r, errno);
	CALL("prctl bad seccomp mode", prctl(PR_SET_SECCOMP, 99, 0, 0, 0));
	CALL("prctl bad option", prctl(-1, 0, 0, 0, 0));
	static char alt[1 << 16];
	stack_t small = {.ss_sp = alt, .ss_size = 64}, big = {.ss_sp = alt, .ss_size = sizeof(alt)};
	stack_t now;
	CALL("sigaltstack too small", sigaltstack(&small, NULL));
	CALL("sigaltstack bad flags", syscall(SYS_sigaltstack, &(stack_t){.ss_flags = 7}, NULL));
	CALL("sigaltstack set", sigaltstack(&big, NULL));
	CALL("sigaltstack query", sigaltstack(NULL, &now));
	show("sigaltstack query says it", now.ss_sp == alt && now.ss_size == sizeof(alt), 0);
	CALL("syscall sigaltstack off",
	     syscall(SYS_sigaltstack, &(stack_t){.ss_flags = SS_DISABLE}, NULL));
}

static int mode_same(void)
{
	int fd, fd2, fd3, dfd;
	FILE *f;
	struct flock fl;

	/* failures that are not refusals */
	CALL_FD("open missing", open(P(rw, "missing/x"), O_RDONLY), fd);
	CALL_FD("open dir for write", open(rw, O_WRONLY), fd);
	CALL("mkdir existing", mkdir(rw, 0755));
	CALL("unlink missing", unlink(P(rw, "missing")));
	CALL("rmdir missing", rmdir(P(rw, "missing")));
	CALL("rename missing", rename(P(rw, "missing"), P(rw, "other")));
	CALL("chmod missing", chmod(P(rw, "missing"), 0600));
	CALL("access missing F_OK", access(P(rw, "missing"), F_OK));
	CALL_FILE("fopen missing r", fopen(P(rw, "missing"), "r"), f);

	/* successes */
	CALL_FD("open create rw", open(P(rw, "a"), O_RDWR | O_CREAT | O_TRUNC, 0644), fd);
	CALL("write", write(fd, "hello\n", 6));
	CALL("mkdir rw/d", mkdir(P(rw, "d"), 0755));
	CALL("rename in rw", rename(P(rw, "a"), P(rw, "b")));
	CALL("link in rw", link(P(rw, "b"), P(rw, "c")));
	CALL("symlink in rw", symlink("b", P(rw, "s")));
	CALL("unlink in rw", unlink(P(rw, "c")));
	CALL("chmod in rw", chmod(P(rw, "b"), 0600));
	CALL("truncate in rw", truncate(P(rw, "b"), 3));
	CALL("access rw W_OK", access(rw, W_OK));
	CALL("access ro R_OK", access(P(ro, "existing"), R_OK));
	CALL_FILE("fopen rw r", fopen(P(rw, "b"), "r"), f);
	if (f)
		fclose(f);

	/* refusals: EROFS, and EXDEV across mounts */
	CALL_FD("open ro create", open(P(ro, "new"), O_WRONLY | O_CREAT | O_TRUNC, 0644), fd2);
	CALL_FD("open ro rdwr (__open_2)", open(P(ro, "existing"), open_flags_rdwr), fd2);
	CALL_FD("open ro dir", open(ro, O_RDONLY | O_DIRECTORY), dfd);
	CALL_FD("openat ro create", openat(dfd, "new", O_WRONLY | O_CREAT, 0644), fd2);
	CALL_FD("creat ro", creat(P(ro, "c"), 0644), fd2);
	CALL_FILE("fopen ro w", fopen(P(ro, "f"), "w"), f);
	CALL_FILE("fopen ro a+", fopen(P(ro, "existing"), "a+"), f);
	CALL("rename rw to ro (EXDEV)", rename(P(rw, "b"), P(ro, "b")));
	CALL("rename within ro", rename(P(ro, "existing"), P(ro, "renamed")));
	CALL("renameat2 within ro", renameat2(dfd, "existing", dfd, "r2", RENAME_NOREPLACE));
	CALL("link within ro", link(P(ro, "existing"), P(ro, "l")));
	CALL("symlink in ro", symlink("x", P(ro, "s")));
	CALL("mkdir in ro", mkdir(P(ro, "d"), 0755));
	CALL("mkdirat in ro", mkdirat(dfd, "d", 0755));
	CALL("rmdir in ro", rmdir(P(ro, "dir")));
	CALL("unlink in ro", unlink(P(ro, "existing")));
	CALL("unlinkat in ro", unlinkat(dfd, "existing", 0));
	CALL("remove in ro", remove(P(ro, "existing")));
	CALL("mknod in ro", mknod(P(ro, "fifo"), S_IFIFO | 0644, 0));
	CALL("chmod in ro", chmod(P(ro, "existing"), 0600));
	CALL("fchmodat in ro", fchmodat(dfd, "existing", 0600, 0));
	CALL("chown in ro", chown(P(ro, "existing"), 0, 0));
	CALL("lchown in ro", lchown(P(ro, "existing"), 0, 0));
	CALL("truncate in ro", truncate(P(ro, "existing"), 0));
	CALL("utimensat in ro", utimensat(AT_FDCWD, P(ro, "existing"), NULL, 0));
	CALL("utimes in ro", utimes(P(ro, "existing"), NULL));
	CALL("access ro W_OK", access(P(ro, "existing"), W_OK));
	CALL("faccessat ro W_OK", faccessat(AT_FDCWD, ro, W_OK, AT_EACCESS));
	CALL_FD("open ro rdonly", open(P(ro, "existing"), O_RDONLY), fd3);
	CALL("fchmod ro fd", fchmod(fd3, 0600));
	CALL("fchown ro fd", fchown(fd3, 0, 0));
	CALL("ftruncate ro fd", ftruncate(fd3, 0));
	CALL("futimens ro fd", futimens(fd3, NULL));
	CALL("close ro fd", close(fd3));

	/* SQLite's fallback: refused for writing, reopened read-only. errno
	 * after a success must be what it was before (C leaves it alone). */
	CALL_FD("open ro rdwr again", open(P(ro, "existing"), O_RDWR | O_CREAT, 0644), fd3);
	errno = EDOM;
	fd3 = open(P(ro, "existing"), O_RDONLY);
	show_fd("reopen rdonly keeps errno", fd3, errno);
	CALL("close reopened", close(fd3));
	CALL("close ro dir", close(dfd));
	same_temp_files();

	/* POSIX record locks, OFD locks, flock */
	fl = lk(F_WRLCK);
	CALL("fcntl F_SETLK wr", fcntl(fd, F_SETLK, &fl));
	fl = lk(F_WRLCK);
	CALL("fcntl F_GETLK own", fcntl(fd, F_GETLK, &fl));
	printf("%-28s type=%d\n", "  own lock seen as", fl.l_type);
	CALL("fcntl F_GETFL", fcntl(fd, F_GETFL) & O_ACCMODE);
	CALL("fcntl F_SETLK bad fd", fcntl(-1, F_SETLK, &fl));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int cfd = open(P(rw, "b"), O_RDWR);
		struct flock c = lk(F_WRLCK);
		CALL("child F_SETLK conflict", fcntl(cfd, F_SETLK, &c));
		c = lk(F_RDLCK);
		CALL("child F_GETLK", fcntl(cfd, F_GETLK, &c));
		printf("%-28s type=%d by_parent=%d\n", "  child sees", c.l_type,
		       c.l_pid == getppid());
		c = lk(F_WRLCK);
		CALL("child F_OFD_SETLK conflict", fcntl(cfd, F_OFD_SETLK, &c));
		fflush(stdout);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	CALL("child exit", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	fl = lk(F_UNLCK);
	CALL("fcntl F_SETLK unlock", fcntl(fd, F_SETLK, &fl));
	fl = lk(F_RDLCK);
	CALL("fcntl F_OFD_SETLK rd", fcntl(fd, F_OFD_SETLK, &fl));
	fd3 = open(P(rw, "b"), O_RDONLY);
	fl = lk(F_WRLCK);
	fl.l_pid = 0;
	CALL("fcntl F_SETLK rdonly fd", fcntl(fd3, F_SETLK, &fl));
	CALL("flock ex", flock(fd, LOCK_EX));
	CALL("flock second ofd nb", flock(fd3, LOCK_EX | LOCK_NB));
	CALL("flock bad fd", flock(-1, LOCK_SH));
	CALL("flock unlock", flock(fd, LOCK_UN));
	CALL("close", close(fd3));
	CALL("close", close(fd));
	/* nothing in the program changed behind its back */
	struct stat sb;
	CALL("stat rw/b", stat(P(rw, "b"), &sb));
	printf("%-28s size=%lld mode=%o\n", "  rw/b", (long long)sb.st_size, sb.st_mode & 07777);
	CALL("lowest free fd", lowest_free_fd() - fd_base);
	return 0;
}

/* ---- descriptors ---------------------------------------------------- */

struct fdset {
	int n;
	int fd[256];
	char target[256][128];
};

static void list_fds(struct fdset *s)
{
	s->n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		exit(3);
	int own = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d)) && s->n < 256) {
		if (e->d_name[0] == '.')
			continue;
		int fd = atoi(e->d_name);
		if (fd == own)
			continue;
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, s->target[s->n], sizeof(s->target[0]) - 1);
		s->target[s->n][n > 0 ? n : 0] = 0;
		s->fd[s->n++] = fd;
	}
	closedir(d);
}

static void *refuse_thread(void *arg)
{
	(void)arg;
	int fd = open(P(ro, "from-thread"), O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Refusals of several kinds, the last one from a new thread (unless
 * no_thread); returns how many did not fail as expected. */
static int refusals_opt(int no_thread)
{
	int bad = 0;
	int fd = open(P(ro, "new"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	bad += fd >= 0;
	FILE *f = fopen(P(ro, "f"), "w");
	bad += f != NULL;
	bad += mkdir(P(ro, "d"), 0755) == 0;
	bad += rename(P(ro, "existing"), P(ro, "x")) == 0;
	bad += unlink(P(ro, "existing")) == 0;
	bad += chmod(P(ro, "existing"), 0600) == 0;
	bad += truncate(P(ro, "existing"), 0) == 0;
	bad += access(P(ro, "existing"), W_OK) == 0;
	bad += symlink("x", P(ro, "s")) == 0;
	int rfd = open(P(ro, "existing"), O_RDONLY);
	bad += fchmod(rfd, 0600) == 0;
	close(rfd);
	/* refused for writing, reopened read-only */
	bad += open(P(ro, "existing"), O_RDWR) >= 0;
	rfd = open(P(ro, "existing"), O_RDONLY);
	bad += rfd < 0;
	close(rfd);
	if (no_thread)
		return bad;
	pthread_t t;
	pthread_create(&t, NULL, refuse_thread, NULL);
	pthread_join(t, NULL);
	return bad;
}

static int refusals(void)
{
	return refusals_opt(0);
}

static int mode_fds(void)
{
	struct fdset *before = calloc(1, sizeof(*before)), *after = calloc(1, sizeof(*after));
	list_fds(before);
	int bad = refusals();
	bad += refusals(); /* the second round: everything attached already */
	list_fds(after);
	int same = before->n == after->n;
	for (int i = 0; same && i < before->n; i++)
		same =
		    before->fd[i] == after->fd[i] && !strcmp(before->target[i], after->target[i]);
	for (int i = 0; i < before->n; i++)
		printf("before %d %s\n", before->fd[i], before->target[i]);
	for (int i = 0; i < after->n; i++)
		printf("after %d %s\n", after->fd[i], after->target[i]);
	printf("refusals %s\n", bad ? "UNEXPECTED" : "as expected");
	printf("descriptors %s (%d before, %d after)\n", same ? "unchanged" : "CHANGED", before->n,
	       after->n);
	return same && !bad ? 0 : 1;
}

/* ---- closefrom ------------------------------------------------------ */

static int mode_closefrom(void)
{
	fflush(stdout);
	if (close_range(3, ~0U, 0) != 0) {
		printf("close_range failed: %s\n", strerror(errno));
		return 2;
	}
	/* the freed numbers are reused at once: the inherited ring
	 * descriptor's number now names one of our files */
	static const char content[] = "the program's own data\n";
	int own = open(P(rw, "own"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (own < 0 || write(own, content, sizeof(content) - 1) != (ssize_t)sizeof(content) - 1)
		return 2;
	/* denytrace keeps the ring's descriptor high, out of the way: put
	 * our file on that very number, as a program handing out every
	 * number could */
	const char *ringfd = getenv("DENYTRACE_FD");
	int want = ringfd ? atoi(ringfd) : -1;
	const char *reused = "no";
	if (want > 2 && want != own) {
		/* with a soft limit of 1024 or less (an ordinary user's default)
		 * the ring sits just above it, a number no program can take */
		if (dup2(own, want) == want) {
			close(own);
			own = want;
			reused = "yes";
		} else if (errno == EBADF) {
			reused = "out of reach";
		} else {
			return 2;
		}
	}
	printf("own file on the ring's number: %s\n", reused);
	int bad = refusals();
	/* successful work goes on */
	int fd = open(P(rw, "work"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	bad += fd < 0 || write(fd, "work\n", 5) != 5;
	close(fd);
	bad += rename(P(rw, "work"), P(rw, "done")) != 0;
	char buf[256] = {0};
	bad += pread(own, buf, sizeof(buf) - 1, 0) != (ssize_t)sizeof(content) - 1;
	bad += strcmp(buf, content) != 0;
	struct stat st;
	bad += fstat(own, &st) != 0 || st.st_size != (off_t)sizeof(content) - 1;
	close(own);
	printf("closefrom %s\n", bad ? "BROKEN" : "ok");
	return bad ? 1 : 0;
}

/* Whatever the first refusal left open in the program (it should be
 * nothing) is closed by a program that closes every descriptor it does not
 * know, as daemons do; the numbers then name the program's own files, and
 * later refusals must not read or write them. */
static int mode_closefrom_late(void)
{
	/* the probe attaches and records; no thread yet, so that the later
	 * one runs on stack pages no refusal has been seen on */
	int bad = refusals_opt(1);
	fflush(stdout);
	if (close_range(3, ~0U, 0) != 0)
		return 2;
	enum { NFILES = 6 };
	static const char content[] = "0123456789";
	int fds[NFILES];
	for (int i = 0; i < NFILES; i++) {
		char name[16];
		snprintf(name, sizeof(name), "late-%d", i);
		fds[i] = open(P(rw, name), O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fds[i] < 0 || write(fds[i], content, 10) != 10 ||
		    lseek(fds[i], 0, SEEK_SET) != 0)
			return 2;
	}
	bad += refusals(); /* includes a new thread: stack pages never seen */
	int changed = 0;
	for (int i = 0; i < NFILES; i++) {
		char buf[64] = {0};
		off_t off = lseek(fds[i], 0, SEEK_CUR);
		ssize_t n = pread(fds[i], buf, sizeof(buf) - 1, 0);
		int data_same = n == 10 && !memcmp(buf, content, 10);
		changed += off != 0 || !data_same;
		printf("fd %d: offset %lld%s, content %s (first byte 0x%02x)\n", fds[i],
		       (long long)off, off ? " MOVED" : "", data_same ? "intact" : "CHANGED",
		       (unsigned char)buf[0]);
		close(fds[i]);
	}
	printf("refusals %s\n", bad ? "UNEXPECTED" : "as expected");
	printf("files %s\n", changed ? "CHANGED" : "intact");
	return bad || changed ? 1 : 0;
}

/* ---- locks ---------------------------------------------------------- */

/* From another process: is a write lock on path held, by pid owner? */
static int lock_held_by(const char *path, pid_t owner)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(path, O_RDONLY);
		struct flock fl = lk(F_WRLCK);
		if (fd < 0 || fcntl(fd, F_GETLK, &fl) != 0)
			_exit(2);
		_exit(fl.l_type == F_WRLCK && fl.l_pid == owner ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int take_lock(const char *path)
{
	int fd = open(path, O_RDWR);
	struct flock fl = lk(F_WRLCK);
	if (fd < 0 || fcntl(fd, F_SETLK, &fl) != 0) {
		printf("cannot lock %s: %s\n", path, strerror(errno));
		exit(2);
	}
	return fd;
}

static int mode_locks(const char *file, const char *alias)
{
	int fd = take_lock(file);
	printf("locked before: %s\n", lock_held_by(file, getpid()) ? "held" : "FREE");
	int refused = 0;
	/* refusals on the locked file's own path (its directory is read-only,
	 * the file itself is a writable bind mount) */
	refused += unlink(file) != 0 && errno == EROFS;
	refused += rename(file, P(ro, "moved")) != 0 && errno == EROFS;
	refused += link(file, P(ro, "linked")) != 0 && errno == EROFS;
	/* and on the same file through its read-only alias */
	refused += open(alias, O_RDWR) < 0 && errno == EROFS;
	refused += fopen(alias, "r+") == NULL && errno == EROFS;
	refused += truncate(alias, 0) != 0 && errno == EROFS;
	refused += chmod(alias, 0600) != 0 && errno == EROFS;
	refused += access(alias, W_OK) != 0 && errno == EROFS;
	/* the read-only reopen: the program keeps this descriptor open, as
	 * SQLite does (closing it would drop the lock, by POSIX) */
	int keep = open(alias, O_RDONLY);
	refused += keep >= 0;
	refused += fchmod(keep, 0600) != 0 && errno == EROFS;
	printf("refusals %d of 10\n", refused);
	int held = lock_held_by(file, getpid());
	printf("locked after: %s\n", held ? "held" : "FREE");
	close(keep);
	close(fd);
	return held && refused == 10 ? 0 : 1;
}

/* What a probe that opened and closed the file would do: the check must
 * see the lock go. */
static int mode_locks_control(const char *file)
{
	int fd = take_lock(file);
	printf("locked before: %s\n", lock_held_by(file, getpid()) ? "held" : "FREE");
	close(open(file, O_RDONLY));
	printf("locked after: %s\n", lock_held_by(file, getpid()) ? "held" : "FREE");
	close(fd);
	return 0;
}

/* ---- signals -------------------------------------------------------- */

static volatile sig_atomic_t handled, handler_bad;
static char handler_path[4096];

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	int fd = open(handler_path, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0 || errno != EROFS)
		handler_bad++;
	handled++;
	errno = saved;
}

static int mode_signal(void)
{
	snprintf(handler_path, sizeof(handler_path), "%s/from-handler", ro);
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 5000}, {0, 5000}};
	setitimer(ITIMER_REAL, &it, NULL);
	char path[4096];
	snprintf(path, sizeof(path), "%s/from-main", ro);
	long iterations = 0, bad = 0;
	while ((iterations < 500 || handled < 20) && iterations < 200000) {
		errno = 0;
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0 || errno != EROFS)
			bad++;
		iterations++;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("main %ld refusals, %ld unexpected; handler %d refusals, %d unexpected\n",
	       iterations, bad, (int)handled, (int)handler_bad);
	return bad || handler_bad || handled < 20 ? 1 : 0;
}

/* The same from a thread whose stack lies below its signal stack (a static
 * array; the signal stack is mapped, higher up), with SS_AUTODISARM: while
 * the handler runs, sigaltstack() says there is no signal stack at all.
 * Prints the exact counts: every refusal must be recorded once, whole. */
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31) /* Linux 4.7; glibc does not name it */
#endif
static char alt_thread_stack[1 << 20] __attribute__((aligned(64)));
static long alt_iterations, alt_bad;

static void *alt_loop(void *arg)
{
	(void)arg;
	stack_t ss = {.ss_sp = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
	                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
	              .ss_size = 1 << 16,
	              .ss_flags = SS_AUTODISARM};
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	if (ss.ss_sp == MAP_FAILED || sigaltstack(&ss, NULL) != 0 ||
	    (uintptr_t)ss.ss_sp < (uintptr_t)alt_thread_stack) {
		alt_bad = -1;
		return NULL;
	}
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	char path[4096];
	snprintf(path, sizeof(path), "%s/from-main", ro);
	while ((alt_iterations < 500 || handled < 50) && alt_iterations < 20000) {
		errno = 0;
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0 || errno != EROFS)
			alt_bad++;
		alt_iterations++;
	}
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	return NULL;
}

static int mode_signal_alt(void)
{
	snprintf(handler_path, sizeof(handler_path), "%s/from-handler", ro);
	char first[4096];
	snprintf(first, sizeof(first), "%s/first", ro);
	if (open(first, O_WRONLY | O_CREAT, 0644) >= 0) /* attach before the timer */
		return 1;
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL); /* the thread takes every tick */
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, alt_thread_stack, sizeof(alt_thread_stack));
	struct itimerval it = {{0, 2000}, {0, 2000}};
	setitimer(ITIMER_REAL, &it, NULL);
	pthread_t t;
	if (pthread_create(&t, &attr, alt_loop, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("main %ld refusals, %ld unexpected; handler %d refusals, %d unexpected\n",
	       alt_iterations, alt_bad, (int)handled, (int)handler_bad);
	return alt_bad || handler_bad || handled < 50 ? 1 : 0;
}

/* A timer whose handler leaves by siglongjmp, so that it often abandons
 * the probe in the middle of recording a refusal (nothing but refused
 * opens run meanwhile), 200 times; then 1000 refusals with the timer off,
 * each of which must be recorded. */
static sigjmp_buf jump_back;
static volatile sig_atomic_t jumps;

static void on_tick(int sig)
{
	(void)sig;
	/* a tick between the loop's end and the timer's stop must not jump
	 * again: the count is exact, on a loaded machine too */
	if (jumps >= 200)
		return;
	jumps++;
	siglongjmp(jump_back, 1);
}

static long vm_size_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static int mode_longjmp(void)
{
	char during[4096], after[4096];
	snprintf(during, sizeof(during), "%s/during-jumps", ro);
	snprintf(after, sizeof(after), "%s/after-jumps", ro);
	/* attached and the unwinder loaded before any jump */
	if (open(during, O_WRONLY | O_CREAT, 0644) >= 0)
		return 1;
	static volatile long vm_before;
	vm_before = vm_size_kib();
	struct sigaction sa = {0};
	sa.sa_handler = on_tick;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 50}, {0, 50}};
	static volatile long bad;
	/* armed only once jump_back is whole: a tick before sigsetjmp jumped
	 * to an empty jmp_buf (SIGSEGV, without the probe too), and one inside
	 * it, after the registers but before the signal mask were saved,
	 * jumped back without unblocking SIGALRM, so the loop below never
	 * ended (seen on Debian 13) */
	if (sigsetjmp(jump_back, 1) == 0)
		setitimer(ITIMER_REAL, &it, NULL);
	while (jumps < 200)
		if (open(during, O_WRONLY | O_CREAT, 0644) >= 0 || errno != EROFS)
			bad++;
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);
	long refused = 0;
	for (int i = 0; i < 1000; i++)
		refused += open(after, O_WRONLY | O_CREAT, 0644) < 0 && errno == EROFS;
	printf("jumps %d, then %ld refusals, %ld unexpected; memory grew %ld KiB\n", (int)jumps,
	       refused, bad, vm_size_kib() - vm_before);
	return refused == 1000 && !bad ? 0 : 1;
}

int main(int argc, char **argv)
{
	fd_base = lowest_free_fd();
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "same") && argc == 4) {
		ro = argv[2], rw = argv[3];
		return mode_same();
	}
	if (!strcmp(mode, "fds") && argc == 4) {
		ro = argv[2], rw = argv[3];
		return mode_fds();
	}
	if (!strcmp(mode, "closefrom") && argc == 4) {
		ro = argv[2], rw = argv[3];
		return mode_closefrom();
	}
	if (!strcmp(mode, "closefrom-late") && argc == 4) {
		ro = argv[2], rw = argv[3];
		return mode_closefrom_late();
	}
	if (!strcmp(mode, "locks") && argc == 5) {
		ro = argv[4];
		return mode_locks(argv[2], argv[3]);
	}
	if (!strcmp(mode, "locks-control") && argc == 3)
		return mode_locks_control(argv[2]);
	if (!strcmp(mode, "refuse") && argc == 3) {
		ro = argv[2];
		int fd = open(P(ro, "refused"), O_WRONLY | O_CREAT, 0644);
		printf("refuse %s\n", fd < 0 ? ename(errno) : "NOT REFUSED");
		return 0;
	}
	if (!strcmp(mode, "signal") && argc == 3) {
		ro = argv[2];
		return mode_signal();
	}
	if (!strcmp(mode, "signal-alt") && argc == 3) {
		ro = argv[2];
		return mode_signal_alt();
	}
	if (!strcmp(mode, "longjmp") && argc == 3) {
		ro = argv[2];
		return mode_longjmp();
	}
	fprintf(stderr, "usage: behave same|fds|closefrom RO RW | locks F ALIAS RO | "
	                "locks-control F | refuse RO | signal RO | signal-alt RO | longjmp RO\n");
	return 2;
}
