/* SPDX-License-Identifier: MIT */
/*
 * Differential runs of real programs: every scenario runs four times in
 * the same fresh directory (same absolute path, copied afresh from its
 * setup each time), once plainly and three times under the probe, and
 * every probe run must agree with the plain one byte for byte on exit
 * status, stdout, stderr and the file tree left behind (names, types, mode
 * bits, owners, sizes, content hashes, symlink targets; not timestamps).
 * The probe runs:
 *
 *   run        `denytrace run -q -o RING -- ...`: the ring is an inherited
 *              descriptor, default recording;
 *   run --all  the same, also recording successful writes (the slow path
 *              on every write the program makes);
 *   preload    LD_PRELOAD and DENYTRACE_RING set directly, DENYTRACE_ALL=1:
 *              the probe attaches by the ring's path.
 *
 * Each scenario runs under each sandbox the machine has: none, bubblewrap
 * (ro/ on a read-only mount: EROFS), Landlock (writes only beneath rw/:
 * EACCES) and uid 65534 over a root-owned ro/ (EACCES, EPERM). The ring
 * must then name the scenario's target: refused where the sandbox refuses
 * it (every probe run), written otherwise (the runs recording writes): the
 * probe was at work and still changed nothing the program could see.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

/* ---- scenarios ---------------------------------------------------------- */

enum sandbox { SB_NONE, SB_BWRAP, SB_LANDLOCK, SB_USER };
#define REFUSED_BY(sb) (1u << (sb))
#define REFUSED_BY_ALL (REFUSED_BY(SB_BWRAP) | REFUSED_BY(SB_LANDLOCK) | REFUSED_BY(SB_USER))

struct scenario {
	const char *name;
	const char *setup;   /* sh script run as root in W/rw before every run, or NULL */
	const char *cmd;     /* the workload, `sh -c` in W/rw */
	const char *rw_file; /* a file under W/ro the sandbox leaves writable, or NULL */
	const char *target;  /* path suffix the ring must hold: refused or written */
	unsigned refused_in; /* sandboxes that refuse target (REFUSED_BY bits) */
	/* sh script run plainly after the workload, whose output joins the
	 * compared tree (the git index's entries), or NULL */
	const char *post;
};

/* Files for the coreutils and tar workloads. Timestamps are fixed after
 * every setup, so archives made from them match from run to run. */
#define TREE_SETUP                                                                                 \
	"mkdir -p src/sub ../ro/tree/sub && printf 'alpha\\n' > src/a && "                         \
	"printf 'beta\\n' > src/sub/b && chmod 640 src/a && ln -s a src/link && "                  \
	"printf 'file\\n' > ../ro/file && printf 'x\\n' > ../ro/tree/x && "                        \
	"printf 'y\\n' > ../ro/tree/sub/y"

static const struct scenario sqlite_scenarios[] = {
    {
        .name = "create, insert, update and select in rollback-journal mode",
        .cmd = "sqlite3 -batch t.db \"pragma journal_mode=delete; create table t(a integer "
               "primary key, b text); insert into t(b) values('one'),('two'); update t set "
               "b='TWO' where a=2; select * from t;\"",
        .target = "/rw/t.db",
    },
    {
        .name = "WAL mode across two connections",
        .cmd = "sqlite3 -batch w.db \"pragma journal_mode=wal; create table t(a); insert into t "
               "values(1),(2),(3); select sum(a) from t;\" && sqlite3 -batch w.db \"insert into "
               "t values(4); select count(*) from t; pragma journal_mode;\"",
        .target = "/rw/w.db-wal",
    },
    {
        .name = ".read of a script with a failing statement, then a failing query",
        .setup = "printf 'create table t(a);\\ninsert into t values(1);\\ninsert into missing "
                 "values(2);\\nselect count(*) from t;\\n' > script.sql",
        .cmd = "sqlite3 -batch s.db '.read script.sql'; echo \"exit $?\"; "
               "sqlite3 -batch s.db 'select * from t; select * from nope;'",
        .target = "/rw/s.db",
    },
    {
        .name = "write to a database in a read-only directory",
        .setup = "sqlite3 ../ro/ro.db 'create table t(a); insert into t values(1);'",
        .cmd = "sqlite3 -batch ../ro/ro.db 'select count(*) from t; insert into t values(2);'; "
               "echo \"exit $?\"; sqlite3 -batch ../ro/ro.db 'select count(*) from t;'",
        .target = "/ro/ro.db",
        .refused_in = REFUSED_BY_ALL,
    },
    {
        .name = "create a database in a read-only directory",
        .cmd = "sqlite3 -batch ../ro/new.db 'create table t(a);'",
        .target = "/ro/new.db",
        .refused_in = REFUSED_BY_ALL,
    },
    {
        .name = "rollback journal beside a writable database in a read-only directory",
        .setup = "sqlite3 ../ro/side.db 'create table t(a);'",
        .cmd = "sqlite3 -batch ../ro/side.db 'insert into t values(1);'; echo \"exit $?\"; "
               "sqlite3 -batch ../ro/side.db 'select count(*) from t;'",
        .rw_file = "side.db",
        .target = "/ro/side.db-journal",
        .refused_in = REFUSED_BY_ALL,
    },
    {
        .name = "WAL files beside a writable database in a read-only directory",
        .setup = "sqlite3 ../ro/wal.db 'pragma journal_mode=wal; create table t(a);' >/dev/null",
        .cmd = "sqlite3 -batch ../ro/wal.db 'select count(*) from t; insert into t values(1);'",
        .rw_file = "wal.db",
        .target = "/ro/wal.db-wal",
        .refused_in = REFUSED_BY_ALL,
    },
};

static const struct scenario coreutils_scenarios[] = {
    {
        .name = "cp -a, permitted",
        .setup = TREE_SETUP,
        .cmd = "cp -a src copy; echo \"cp $?\"",
        .target = "/rw/copy",
    },
    {
        .name = "cp -a, refused",
        .setup = TREE_SETUP,
        .cmd = "cp -a src ../ro/copy; echo \"cp $?\"",
        .target = "/ro/copy",
        .refused_in = REFUSED_BY_ALL,
    },
    {
        .name = "mv, permitted",
        .setup = TREE_SETUP,
        .cmd = "mv src/a moved && mv src/sub sub2; echo \"mv $?\"",
        .target = "/rw/src/a",
    },
    {
        .name = "mv, refused",
        .setup = TREE_SETUP,
        .cmd = "mv ../ro/file here; echo \"mv $?\"; mv src/a ../ro/a; echo \"mv $?\"",
        .target = "/ro/file",
        .refused_in = REFUSED_BY_ALL,
    },
    {
        .name = "rm -r, permitted",
        .setup = TREE_SETUP,
        .cmd = "rm -r src; echo \"rm $?\"",
        .target = "/rw/src/sub/b",
    },
    {
        .name = "rm -r, refused",
        .setup = TREE_SETUP,
        .cmd = "rm -r ../ro/tree; echo \"rm $?\"; rm -f ../ro/file; echo \"rm $?\"",
        .target = "/ro/file",
        .refused_in = REFUSED_BY_ALL,
    },
    {
        .name = "mkdir -p, permitted",
        .cmd = "mkdir -p a/b/c && mkdir -m 700 d; echo \"mkdir $?\"",
        .target = "/rw/a/b/c",
    },
    {
        .name = "mkdir -p, refused",
        .cmd = "mkdir -p ../ro/a/b; echo \"mkdir $?\"",
        .target = "/ro/a",
        .refused_in = REFUSED_BY_ALL,
    },
    {
        .name = "ln -s and ln, permitted",
        .setup = TREE_SETUP,
        .cmd = "ln -s src/a link && ln src/sub/b hard; echo \"ln $?\"",
        .target = "/rw/link",
    },
    {
        .name = "ln -s and ln, refused",
        .setup = TREE_SETUP,
        .cmd = "ln -s a ../ro/link; echo \"ln $?\"; ln src/a ../ro/hard; echo \"ln $?\"",
        .target = "/ro/link",
        .refused_in = REFUSED_BY_ALL,
    },
    {
        .name = "chmod, permitted",
        .setup = TREE_SETUP,
        .cmd = "chmod 600 src/a && chmod -R go-rwx src; echo \"chmod $?\"",
        .target = "/rw/src/a",
    },
    {
        .name = "chmod, refused",
        .setup = TREE_SETUP,
        .cmd = "chmod 600 ../ro/file; echo \"chmod $?\"",
        .target = "/ro/file",
        /* Landlock does not restrict chmod */
        .refused_in = REFUSED_BY(SB_BWRAP) | REFUSED_BY(SB_USER),
    },
    {
        .name = "touch, permitted",
        .setup = TREE_SETUP,
        .cmd = "touch new src/a; echo \"touch $?\"",
        .target = "/rw/new",
    },
    {
        .name = "touch, refused",
        .setup = TREE_SETUP,
        .cmd = "touch ../ro/new; echo \"touch $?\"",
        .target = "/ro/new",
        .refused_in = REFUSED_BY_ALL,
    },
    {
        .name = "install -m, permitted",
        .setup = TREE_SETUP,
        .cmd = "install -m 0750 src/a tool && install -D -m 0640 src/sub/b lib/x/b; "
               "echo \"install $?\"",
        .target = "/rw/tool",
    },
    {
        .name = "install -m, refused",
        .setup = TREE_SETUP,
        .cmd = "install -m 0644 src/a ../ro/tool; echo \"install $?\"; "
               "install -d -m 0700 ../ro/dir; echo \"install $?\"",
        .target = "/ro/tool",
        .refused_in = REFUSED_BY_ALL,
    },
};

static const struct scenario tar_scenarios[] = {
    {
        .name = "tar c then tar x, permitted",
        .setup = TREE_SETUP,
        .cmd = "tar --sort=name -cf a.tar src && mkdir out && tar -xvf a.tar -C out && "
               "tar -tvf a.tar; echo \"tar $?\"",
        .target = "/rw/a.tar",
    },
    {
        .name = "tar c into a read-only directory",
        .setup = TREE_SETUP,
        .cmd = "tar --sort=name -cf ../ro/a.tar src",
        .target = "/ro/a.tar",
        .refused_in = REFUSED_BY_ALL,
    },
    {
        .name = "tar x into a read-only directory",
        /* fixed owner and times: the same archive in every run */
        .setup = TREE_SETUP " && tar --sort=name --mtime=@1600000000 --owner=0 --group=0 "
                            "--numeric-owner -cf in.tar src",
        .cmd = "tar -xvf in.tar -C ../ro",
        .target = "/ro/src",
        .refused_in = REFUSED_BY_ALL,
    },
};

/* The git index caches stat data (inodes, ctimes) that differ between any
 * two runs; its entries are compared instead of its bytes. */
#define GIT "git -c safe.directory='*' "
static const struct scenario git_scenarios[] = {
    {
        .name = "git init, add, commit and log",
        .cmd = "git init repo && cd repo && printf 'hello\\n' > README && mkdir src && "
               "printf 'int x;\\n' > src/x.c && git add . && git commit -q -m first && "
               "printf 'more\\n' >> README && git commit -a -m second && "
               "git log --format='%H %an <%ae> %ad %s' && git status --short; echo \"git $?\"",
        .target = "/repo/.git/index.lock",
        .post = GIT "-C repo ls-files -s",
    },
    {
        .name = "git init in a read-only directory",
        .cmd = "git init ../ro/repo2",
        .target = "/ro/repo2",
        .refused_in = REFUSED_BY_ALL,
    },
    {
        .name = "git status, add and commit in a read-only repository",
        .setup = "git init -q ../ro/repo && cd ../ro/repo && printf 'hello\\n' > README && "
                 "git add README && git commit -q -m first",
        .cmd = "cd ../ro/repo && " GIT "status --short; echo \"status $?\"; " GIT "add README; "
               "echo \"add $?\"; " GIT "commit --allow-empty -m second; echo \"commit $?\"; " GIT
               "log --format='%H %s'",
        .target = "/ro/repo/.git/index.lock",
        .refused_in = REFUSED_BY_ALL,
        .post = GIT "-C ../ro/repo ls-files -s",
    },
};

/* ---- the test directory ------------------------------------------------- */

/* base/w is the scenario's directory, rebuilt for every run; the rings,
 * outputs and HOME live beside it, outside the compared tree. */
static char base[PATH_MAX], work[PATH_MAX + 8], rw[PATH_MAX + 16], ro[PATH_MAX + 16];
static char ring[PATH_MAX + 16], home[PATH_MAX + 16], outf[PATH_MAX + 16], errf[PATH_MAX + 16];
static char template[PATH_MAX + 16], pristine_ring[PATH_MAX + 16];

#define NOBODY 65534

static void setup(void)
{
	snprintf(base, sizeof(base), "%s", dtt_tmpdir());
	/* uid 65534 must reach W and the ring through it */
	chmod(base, 0755);
	snprintf(work, sizeof(work), "%s/w", base);
	snprintf(rw, sizeof(rw), "%s/rw", work);
	snprintf(ro, sizeof(ro), "%s/ro", work);
	snprintf(ring, sizeof(ring), "%s/ring", base);
	snprintf(pristine_ring, sizeof(pristine_ring), "%s/ring.pristine", base);
	snprintf(template, sizeof(template), "%s/template", base);
	snprintf(home, sizeof(home), "%s/home", base);
	snprintf(outf, sizeof(outf), "%s/stdout", base);
	snprintf(errf, sizeof(errf), "%s/stderr", base);
	mkdir(home, 0755);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(differential, .init = setup, .fini = teardown, .timeout = 120);

/* The whole environment of every run, probe variables aside: fixed names,
 * dates and locale, so that even git's commit hashes match. */
static void set_fixed_env(void)
{
	static char home_var[PATH_MAX + 32];
	snprintf(home_var, sizeof(home_var), "HOME=%s", home);
	static char *const vars[] = {
	    "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
	    home_var,
	    "LC_ALL=C",
	    "TZ=UTC",
	    "TERM=dumb",
	    "GIT_CONFIG_NOSYSTEM=1",
	    "GIT_CONFIG_GLOBAL=/dev/null",
	    "GIT_CONFIG_COUNT=1",
	    "GIT_CONFIG_KEY_0=init.defaultBranch",
	    "GIT_CONFIG_VALUE_0=main",
	    "GIT_AUTHOR_NAME=Ada Tester",
	    "GIT_AUTHOR_EMAIL=ada@example.org",
	    "GIT_AUTHOR_DATE=2020-01-02T03:04:05Z",
	    "GIT_COMMITTER_NAME=Ada Tester",
	    "GIT_COMMITTER_EMAIL=ada@example.org",
	    "GIT_COMMITTER_DATE=2020-01-02T03:04:05Z",
	};
	clearenv();
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		putenv(vars[i]);
}

/* Runs argv in cwd with the fixed environment plus env, stdin from
 * /dev/null, stdout and stderr into outf and errf, no other descriptor.
 * Returns the exit status (128+N for signal N). */
static int spawn(const char *const *argv, const char *const *env, const char *cwd)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int o = open(outf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		close_range(3, ~0U, 0);
		if (chdir(cwd) < 0)
			_exit(126);
		set_fixed_env();
		for (const char *const *v = env; v && *v; v++)
			putenv((char *)*v);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Whole file, NUL-terminated, length in *len. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (cap - n < 4096)
			buf = realloc(buf, cap = cap * 2 + 8192);
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		if (!got)
			break;
		n += got;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static const struct timespec fixed_times[2] = {{1600000000, 0}, {1600000000, 0}};

static int fix_times(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return utimensat(AT_FDCWD, path, fixed_times, AT_SYMLINK_NOFOLLOW);
}

static int give_to_nobody(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return lchown(path, NOBODY, NOBODY);
}

static void remove_tree(const char *path)
{
	if (access(path, F_OK) == 0)
		cr_assert_eq(nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0,
		             "cannot remove %s: %s", path, strerror(errno));
}

/* Builds W from nothing once per scenario: rw/ and ro/, the scenario's
 * setup (as root, no sandbox, no probe), fixed timestamps and the owners
 * the sandbox wants; then moves it aside as the template of every run. */
static void build_template(const struct scenario *s, enum sandbox sb)
{
	remove_tree(work);
	remove_tree(template);
	cr_assert_eq(mkdir(work, 0755), 0, "%s: %s", work, strerror(errno));
	cr_assert_eq(mkdir(rw, 0755), 0);
	cr_assert_eq(mkdir(ro, 0755), 0);
	if (s->setup) {
		const char *argv[] = {"sh", "-c", s->setup, NULL};
		int st = spawn(argv, NULL, rw);
		size_t n;
		char *err = slurp(errf, &n);
		cr_assert_eq(st, 0, "[%s] setup failed (%d): %s", s->name, st, err);
		free(err);
	}
	if (s->rw_file) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof(p), "%s/%s", ro, s->rw_file);
		cr_assert_eq(chmod(p, 0666), 0, "%s: %s", p, strerror(errno));
	}
	cr_assert_eq(nftw(work, fix_times, 16, FTW_PHYS), 0);
	if (sb == SB_USER)
		cr_assert_eq(nftw(rw, give_to_nobody, 16, FTW_PHYS), 0);
	cr_assert_eq(rename(work, template), 0, "%s: %s", template, strerror(errno));
}

/* A fresh W for one run: the template copied with modes, owners, times
 * and links, at the same absolute path every time. */
static void fresh_work(const struct scenario *s)
{
	remove_tree(work);
	const char *argv[] = {"cp", "-a", template, work, NULL};
	int st = spawn(argv, NULL, base);
	cr_assert_eq(st, 0, "[%s] cannot copy %s to %s", s->name, template, work);
}

/* ---- the tree snapshot -------------------------------------------------- */

static int skip_dots(const struct dirent *d)
{
	return strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* FNV-1a over the content: enough to tell two runs' files apart. */
static uint64_t content_hash(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	unsigned char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 0x100000001b3ull;
	close(fd);
	return h;
}

static int is_stat_cache(const char *rel)
{
	size_t n = strlen(rel);
	return !strcmp(rel, ".git/index") || (n >= 11 && !strcmp(rel + n - 11, "/.git/index"));
}

/* One line per entry, sorted by name at every level: path, type, mode bits,
 * owner, links, size, content hash or symlink target. */
static void snapshot_dir(FILE *out, const char *rel)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s%s%s", work, *rel ? "/" : "", rel);
	struct dirent **names;
	int n = scandir(dir, &names, skip_dots, by_name);
	cr_assert_geq(n, 0, "%s: %s", dir, strerror(errno));
	for (int i = 0; i < n; i++) {
		char sub[PATH_MAX], full[PATH_MAX * 2];
		snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", names[i]->d_name);
		snprintf(full, sizeof(full), "%s/%s", work, sub);
		struct stat st;
		cr_assert_eq(lstat(full, &st), 0, "%s: %s", full, strerror(errno));
		fprintf(out, "%s %04o %u:%u", sub, (unsigned)(st.st_mode & 07777),
		        (unsigned)st.st_uid, (unsigned)st.st_gid);
		if (S_ISDIR(st.st_mode)) {
			fputs(" dir\n", out);
			snapshot_dir(out, sub);
		} else if (S_ISREG(st.st_mode) && is_stat_cache(sub)) {
			fprintf(out, " file links %lu (stat cache, entries below)\n",
			        (unsigned long)st.st_nlink);
		} else if (S_ISREG(st.st_mode)) {
			fprintf(out, " file links %lu size %lld fnv %016llx\n",
			        (unsigned long)st.st_nlink, (long long)st.st_size,
			        (unsigned long long)content_hash(full));
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t len = readlink(full, target, sizeof(target) - 1);
			target[len < 0 ? 0 : len] = 0;
			fprintf(out, " symlink -> %s\n", target);
		} else {
			fprintf(out, " special %o\n", (unsigned)(st.st_mode & S_IFMT));
		}
		free(names[i]);
	}
	free(names);
}

/* ---- runs --------------------------------------------------------------- */

enum variant { PLAIN, PROBE_RUN, PROBE_RUN_ALL, PROBE_PRELOAD };
static const char *const variant_name[] = {"plain", "denytrace run", "denytrace run --all",
                                           "LD_PRELOAD+DENYTRACE_RING"};

struct outcome {
	int status;
	char *out, *err, *tree;
	size_t outlen, errlen;
	struct dtt_run ring; /* the probe's records (probe variants) */
};

struct argv_buf {
	const char *v[64];
	size_t n;
};

static void push(struct argv_buf *a, const char *s)
{
	cr_assert_lt(a->n, 63);
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

/* The sandbox around the workload. The ring's file is writable in every
 * sandbox and every run, so the four runs see one layout. */
static void push_sandbox(struct argv_buf *a, const struct scenario *s, enum sandbox sb)
{
	static char rw_file[PATH_MAX + 64];
	if (s->rw_file)
		snprintf(rw_file, sizeof(rw_file), "%s/%s", ro, s->rw_file);
	switch (sb) {
	case SB_NONE:
		break;
	case SB_BWRAP:
		push(a, "bwrap");
		push(a, "--ro-bind"), push(a, "/"), push(a, "/");
		push(a, "--bind"), push(a, rw), push(a, rw);
		if (s->rw_file)
			push(a, "--bind"), push(a, rw_file), push(a, rw_file);
		push(a, "--bind"), push(a, ring), push(a, ring);
		push(a, "--dev"), push(a, "/dev");
		push(a, "--proc"), push(a, "/proc");
		push(a, "--");
		break;
	case SB_LANDLOCK:
		push(a, dtt_helper("landlock-run"));
		push(a, "--rw"), push(a, rw);
		push(a, "--rw"), push(a, "/dev/null");
		if (s->rw_file)
			push(a, "--rw"), push(a, rw_file);
		push(a, "--rw"), push(a, ring);
		push(a, "--");
		break;
	case SB_USER:
		push(a, "setpriv");
		push(a, "--reuid=65534"), push(a, "--regid=65534"), push(a, "--clear-groups");
		push(a, "--");
		break;
	}
}

/* A ring the probe can open by its path, owned by whoever the workload
 * runs as: a copy of one made by `denytrace run` at the start. */
static void make_ring_for_path(enum sandbox sb)
{
	int in = open(pristine_ring, O_RDONLY | O_CLOEXEC);
	int out = open(ring, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert(in >= 0 && out >= 0, "%s: %s", ring, strerror(errno));
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(out, buf, (size_t)n), n, "%s: %s", ring, strerror(errno));
	cr_assert_eq(n, 0);
	if (sb == SB_USER)
		cr_assert_eq(fchown(out, NOBODY, NOBODY), 0);
	close(in);
	close(out);
}

static void run_once(const struct scenario *s, enum sandbox sb, enum variant v, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	fresh_work(s);

	struct argv_buf a = {.n = 0};
	char cli[PATH_MAX], preload[PATH_MAX + 16], ring_var[PATH_MAX + 32];
	const char *env[4] = {NULL};
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	if (v == PLAIN) {
		int fd = open(ring, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		cr_assert_geq(fd, 0, "%s: %s", ring, strerror(errno));
		close(fd);
	} else if (v == PROBE_RUN || v == PROBE_RUN_ALL) {
		unlink(ring);
		push(&a, cli), push(&a, "run"), push(&a, "-q"), push(&a, "-o"), push(&a, ring);
		if (v == PROBE_RUN_ALL)
			push(&a, "--all");
		push(&a, "--");
	} else {
		make_ring_for_path(sb);
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libdenytrace.so", dtt_build());
		snprintf(ring_var, sizeof(ring_var), "DENYTRACE_RING=%s", ring);
		env[0] = preload;
		env[1] = ring_var;
		env[2] = "DENYTRACE_ALL=1";
	}
	push_sandbox(&a, s, sb);
	push(&a, "sh"), push(&a, "-c"), push(&a, s->cmd);
	o->status = spawn(a.v, env, rw);
	o->out = slurp(outf, &o->outlen);
	o->err = slurp(errf, &o->errlen);

	size_t len;
	FILE *tree = open_memstream(&o->tree, &len);
	snapshot_dir(tree, "");
	if (s->post) {
		const char *argv[] = {"sh", "-c", s->post, NULL};
		int st = spawn(argv, NULL, rw);
		size_t n;
		char *post = slurp(outf, &n), *err = slurp(errf, &n);
		fprintf(tree, "-- %s: status %d\n%s%s", s->post, st, post, err);
		free(post);
		free(err);
	}
	fclose(tree);

	if (v != PLAIN)
		cr_assert_eq(dtt_load(&o->ring, ring), 0,
		             "[%s] %s: the ring is unreadable (status %d)\nstderr: %s", s->name,
		             variant_name[v], o->status, o->err);
}

static void outcome_free(struct outcome *o)
{
	free(o->out);
	free(o->err);
	free(o->tree);
	dtt_free(&o->ring);
}

/* Where two texts first differ: the line in each. */
static const char *first_diff(const char *a, size_t alen, const char *b, size_t blen)
{
	static char msg[2048];
	size_t i = 0, line = 1, la = 0;
	while (i < alen && i < blen && a[i] == b[i]) {
		if (a[i] == '\n')
			line++, la = i + 1;
		i++;
	}
	int na = (int)strcspn(a + la, "\n"), nb = (int)strcspn(b + la, "\n");
	snprintf(msg, sizeof(msg), "first difference on line %zu:\n  plain: %.*s\n  probe: %.*s",
	         line, na, a + la, nb, b + la);
	return msg;
}

static int same_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && !memcmp(a, b, alen);
}

/* The probe really was in the workload: it recorded the scenario's target,
 * refused where the sandbox refuses it, written where it does not (in the
 * runs that record successful writes). */
static void expect_probe_saw_target(const struct scenario *s, enum sandbox sb, enum variant v,
                                    const struct outcome *o)
{
	if (s->refused_in & REFUSED_BY(sb)) {
		cr_expect_not_null(dtt_find(&o->ring, DT_REC_DENIAL, NULL, s->target),
		                   "[%s] %s: no refusal of ...%s recorded (%zu records); was the "
		                   "probe loaded?\nstderr: %s",
		                   s->name, variant_name[v], s->target, o->ring.n, o->err);
	} else if (v == PROBE_RUN_ALL || v == PROBE_PRELOAD) {
		cr_expect_not_null(dtt_find(&o->ring, DT_REC_WRITE, NULL, s->target),
		                   "[%s] %s: no write of ...%s recorded (%zu records); was the "
		                   "probe loaded?",
		                   s->name, variant_name[v], s->target, o->ring.n);
		cr_expect_null(dtt_find(&o->ring, DT_REC_DENIAL, NULL, s->target),
		               "[%s] %s: ...%s refused where nothing refuses it", s->name,
		               variant_name[v], s->target);
	}
}

static void expect_same(const struct scenario *s, enum variant v, const struct outcome *plain,
                        const struct outcome *probe)
{
	cr_expect_eq(probe->status, plain->status,
	             "[%s] %s: exit status %d, plainly %d\nstderr: %s", s->name, variant_name[v],
	             probe->status, plain->status, probe->err);
	cr_expect(same_bytes(plain->out, plain->outlen, probe->out, probe->outlen),
	          "[%s] %s: stdout differs, %s", s->name, variant_name[v],
	          first_diff(plain->out, plain->outlen, probe->out, probe->outlen));
	cr_expect(same_bytes(plain->err, plain->errlen, probe->err, probe->errlen),
	          "[%s] %s: stderr differs, %s", s->name, variant_name[v],
	          first_diff(plain->err, plain->errlen, probe->err, probe->errlen));
	cr_expect_str_eq(
	    probe->tree, plain->tree, "[%s] %s: the resulting files differ, %s", s->name,
	    variant_name[v],
	    first_diff(plain->tree, strlen(plain->tree), probe->tree, strlen(probe->tree)));
}

static void skip_unless_available(enum sandbox sb)
{
	switch (sb) {
	case SB_NONE:
		break;
	case SB_BWRAP:
		if (!dtt_have_bwrap())
			cr_skip_test("bubblewrap cannot create a sandbox here");
		break;
	case SB_LANDLOCK:
		if (!dtt_have_landlock())
			cr_skip_test("Landlock is not available in this kernel");
		break;
	case SB_USER: {
		if (geteuid() != 0)
			cr_skip_test("running as another user needs root");
		char lib[PATH_MAX + 32];
		snprintf(lib, sizeof(lib), "%s/libdenytrace.so", dtt_build());
		const char *argv[] = {"setpriv",
		                      "--reuid=65534",
		                      "--regid=65534",
		                      "--clear-groups",
		                      "--",
		                      "test",
		                      "-r",
		                      lib,
		                      NULL};
		if (spawn(argv, NULL, base) != 0)
			cr_skip_test("uid 65534 cannot run setpriv or read %s", lib);
		break;
	}
	}
}

static void compare_scenarios(const struct scenario *list, size_t n, enum sandbox sb)
{
	skip_unless_available(sb);
	char cli[PATH_MAX];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	const char *mk[] = {cli,  "run",         "-q", "--size", "1M",
	                    "-o", pristine_ring, "--", "true",   NULL};
	cr_assert_eq(spawn(mk, NULL, base), 0, "cannot create the ring %s", pristine_ring);
	for (size_t i = 0; i < n; i++) {
		struct outcome plain, probe;
		build_template(&list[i], sb);
		run_once(&list[i], sb, PLAIN, &plain);
		for (enum variant v = PROBE_RUN; v <= PROBE_PRELOAD; v++) {
			run_once(&list[i], sb, v, &probe);
			expect_same(&list[i], v, &plain, &probe);
			expect_probe_saw_target(&list[i], sb, v, &probe);
			outcome_free(&probe);
		}
		outcome_free(&plain);
	}
}

#define NUM(list) (sizeof(list) / sizeof((list)[0]))

/* ---- sqlite3 ------------------------------------------------------------ */

Test(differential, sqlite3_gives_the_same_results_with_and_without_the_probe)
{
	compare_scenarios(sqlite_scenarios, NUM(sqlite_scenarios), SB_NONE);
}

Test(differential, sqlite3_sees_the_same_read_only_mount_errors_under_bubblewrap)
{
	compare_scenarios(sqlite_scenarios, NUM(sqlite_scenarios), SB_BWRAP);
}

Test(differential, sqlite3_sees_the_same_landlock_refusals_with_the_probe)
{
	compare_scenarios(sqlite_scenarios, NUM(sqlite_scenarios), SB_LANDLOCK);
}

Test(differential, sqlite3_sees_the_same_permission_errors_as_another_user)
{
	compare_scenarios(sqlite_scenarios, NUM(sqlite_scenarios), SB_USER);
}

/* ---- coreutils ---------------------------------------------------------- */

Test(differential, coreutils_give_the_same_results_with_and_without_the_probe)
{
	compare_scenarios(coreutils_scenarios, NUM(coreutils_scenarios), SB_NONE);
}

Test(differential, coreutils_see_the_same_read_only_mount_errors_under_bubblewrap)
{
	compare_scenarios(coreutils_scenarios, NUM(coreutils_scenarios), SB_BWRAP);
}

Test(differential, coreutils_see_the_same_landlock_refusals_with_the_probe)
{
	compare_scenarios(coreutils_scenarios, NUM(coreutils_scenarios), SB_LANDLOCK);
}

Test(differential, coreutils_see_the_same_permission_errors_as_another_user)
{
	compare_scenarios(coreutils_scenarios, NUM(coreutils_scenarios), SB_USER);
}

/* ---- tar ---------------------------------------------------------------- */

Test(differential, tar_gives_the_same_archives_and_trees_with_and_without_the_probe)
{
	compare_scenarios(tar_scenarios, NUM(tar_scenarios), SB_NONE);
}

Test(differential, tar_sees_the_same_read_only_mount_errors_under_bubblewrap)
{
	compare_scenarios(tar_scenarios, NUM(tar_scenarios), SB_BWRAP);
}

Test(differential, tar_sees_the_same_landlock_refusals_with_the_probe)
{
	compare_scenarios(tar_scenarios, NUM(tar_scenarios), SB_LANDLOCK);
}

Test(differential, tar_sees_the_same_permission_errors_as_another_user)
{
	compare_scenarios(tar_scenarios, NUM(tar_scenarios), SB_USER);
}

/* ---- git ---------------------------------------------------------------- */

Test(differential, git_makes_the_same_commits_with_and_without_the_probe)
{
	compare_scenarios(git_scenarios, NUM(git_scenarios), SB_NONE);
}

Test(differential, git_sees_the_same_read_only_mount_errors_under_bubblewrap)
{
	compare_scenarios(git_scenarios, NUM(git_scenarios), SB_BWRAP);
}

Test(differential, git_sees_the_same_landlock_refusals_with_the_probe)
{
	compare_scenarios(git_scenarios, NUM(git_scenarios), SB_LANDLOCK);
}

Test(differential, git_sees_the_same_permission_errors_as_another_user)
{
	compare_scenarios(git_scenarios, NUM(git_scenarios), SB_USER);
}
