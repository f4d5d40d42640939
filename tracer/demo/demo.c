/* SPDX-License-Identifier: MIT */
/* The demo's scenario (demo.h): a Hermes-shaped board database, a
 * dispatcher and a worker, each phase a `denytrace run` of this binary and
 * a `denytrace report`. */
#include "demo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "privdir.h"
#include "report.h"
#include "sandbox.h"
#include "spawn.h"

extern char **environ;

/* The dispatcher and the worker: tracer/demo/dispatcher.py and worker.py,
 * embedded at build time as demo_dispatcher_py and demo_worker_py (the
 * demo needs nothing but this binary, its probe and python3). The
 * dispatcher is the board database's view of Hermes: WAL side files exist
 * only while some connection is open, and the last one to close deletes
 * them. */
#include "demo_py.h"

/* Timing of phase 1. The dispatcher holds the board half of the time, and
 * the worker's interval is not a multiple of the dispatcher's cycle, so its
 * writes land at shifting points of the cycle: about half of them find no
 * side files. */
#define DEMO_HOLD "0.1"
#define DEMO_GAP "0.1"
#define DEMO_INTERVAL "0.13"
/* Bounds that keep a stuck child from holding the demo forever. */
#define DEMO_RUN_TIMEOUT 45
#define DEMO_STEP_TIMEOUT 20

struct demo {
	char python[PATH_MAX];
	char out[PATH_MAX];
	char dispatcher[PATH_MAX], worker[PATH_MAX];
	int writes, emulate, json, phases;
	FILE *say; /* the narrative, or NULL with --json */
	uid_t nobody_uid;
	gid_t nobody_gid;
};

struct demo_phase {
	int n;
	const char *title;
	char dir[PATH_MAX], home[PATH_MAX], board[PATH_MAX], db[PATH_MAX], work[PATH_MAX];
	char ring[PATH_MAX];
	const char *mode; /* uid-switch, deny-emulation, bubblewrap, landlock, deny-sandbox */
	char how[1024];   /* how the refusal is produced, for the reader */
	char rule[PATH_MAX * 2 + 64];
	int as_nobody; /* the worker switches to nobody */
	int landlock;  /* the run is confined by Landlock */
	int bwrap;
	int status;        /* of denytrace run (the worker's) */
	int failed, total; /* the worker's own count; -1 unknown */
	char error[256];
	/* from the report */
	uint64_t by_cause[DT_CAUSE_COUNT];
	uint64_t denials;
	char root[PATH_MAX], root_source[PATH_MAX + 64];
	int intermittent;
};

static void demo_say(const struct demo *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void demo_say(const struct demo *d, const char *fmt, ...)
{
	if (!d->say)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(d->say, fmt, ap);
	va_end(ap);
}

/* "   label  text", the text wrapped at 79 columns under itself. */
static void demo_say_wrapped(const struct demo *d, const char *label, const char *text)
{
	if (!d->say)
		return;
	int indent = fprintf(d->say, "   %-18s", label), col = indent;
	while (*text) {
		size_t w = strcspn(text, " ");
		if (col > indent && col + 1 + (int)w > 79) {
			fprintf(d->say, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', d->say);
			col++;
		}
		col += fprintf(d->say, "%.*s", (int)w, text);
		text += w;
		text += strspn(text, " ");
	}
	fputc('\n', d->say);
}

static double demo_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int demo_write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	return close(fd);
}

/* python3 from Debian first: a pyenv or venv shim on PATH may live in a home
 * directory that the worker, once it is nobody, cannot read. */
static int demo_find_python(char *out, size_t cap)
{
	const char *env = getenv("DENYTRACE_PYTHON");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return env[0] == '/' && access(env, X_OK) == 0 ? 0 : -1;
	}
	if (access("/usr/bin/python3", X_OK) == 0) {
		snprintf(out, cap, "/usr/bin/python3");
		return 0;
	}
	const char *path = getenv("PATH");
	char *copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	int found = -1;
	for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && found < 0;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, cap, "%s/python3", dir);
		if (dir[0] == '/' && access(out, X_OK) == 0)
			found = 0;
	}
	free(copy);
	return found;
}

/* ---- children ---- */

static int demo_system(char *const *argv, const char *cwd, int out, int timeout)
{
	struct dt_spawn sp = {
	    .argv = argv, .cwd = cwd, .in = -2, .out = out, .err = -1, .who = "demo"};
	pid_t pid = dt_spawn(&sp);
	return pid < 0 ? -1 : dt_wait_timeout(pid, timeout);
}

/* ---- what the reader sees ---- */

/* A word as sh would need it. */
static void demo_put_word(FILE *f, const char *w)
{
	if (*w && !w[strcspn(w, " \t\n'\"\\$`*?[]#&;|<>(){}!")]) {
		fputs(w, f);
		return;
	}
	fputc('\'', f);
	for (; *w; w++)
		if (*w == '\'')
			fputs("'\\''", f);
		else
			fputc(*w, f);
	fputc('\'', f);
}

/* A command line, with "$OUT" for the output directory (set at the top):
 * the environment it needs (NAME=VALUE entries of env), then argv. */
static void demo_put_command(const struct demo *d, const char *const *env, char *const *argv)
{
	if (!d->say)
		return;
	size_t ol = strlen(d->out);
	fputs("   $", d->say);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; pass ? argv[i] != NULL : env[i] != NULL; i++) {
			const char *a = pass ? argv[i] : env[i];
			/* the roots come from HERMES_*: the rest is hygiene */
			if (!pass && (!strchr(a, '=') || strncmp(a, "HERMES_", 7)))
				continue;
			if (pass && i == 0 && !strcmp(a, "/proc/self/exe"))
				a = "denytrace";
			fputs(pass && i == 0 ? " \\\n     " : " ", d->say);
			const char *at = strstr(a, d->out);
			if (at && (at[ol] == '/' || !at[ol])) {
				/* "$OUT" inside the word, the rest quoted as needed */
				char pre[PATH_MAX];
				snprintf(pre, sizeof(pre), "%.*s", (int)(at - a), a);
				if (pre[0])
					demo_put_word(d->say, pre);
				fputs("\"$OUT\"", d->say);
				if (at[ol])
					demo_put_word(d->say, at + ol);
			} else {
				demo_put_word(d->say, a);
			}
		}
	fputc('\n', d->say);
}

/* ---- one phase ---- */

/* The board: HERMES_HOME/kanban/kanban.db in WAL mode, the directory 0755
 * and the database 0666 (SQLite gives -wal and -shm the database's mode, so
 * side files the dispatcher creates are writable by the worker too). */
static int demo_board(const struct demo *d, struct demo_phase *p)
{
	/* each from d->out: GCC's -Wrestrict cannot tell the fields apart */
	const char *o = d->out;
	snprintf(p->dir, sizeof(p->dir), "%s/phase%d", o, p->n);
	snprintf(p->home, sizeof(p->home), "%s/phase%d/hermes", o, p->n);
	snprintf(p->board, sizeof(p->board), "%s/phase%d/hermes/kanban", o, p->n);
	snprintf(p->db, sizeof(p->db), "%s/phase%d/hermes/kanban/kanban.db", o, p->n);
	snprintf(p->work, sizeof(p->work), "%s/phase%d/workspace", o, p->n);
	snprintf(p->ring, sizeof(p->ring), "%s/phase%d/workspace/denytrace.ring", o, p->n);
	const char *dirs[] = {p->dir, p->home, p->board, p->work};
	for (size_t i = 0; i < 4; i++)
		if (mkdir(dirs[i], 0755) < 0 || chmod(dirs[i], 0755) < 0) {
			dt_fail(DT_EXIT_IO, "demo: cannot create %s: %s", dirs[i], strerror(errno));
			return -1;
		}
	char *argv[] = {(char *)d->python, (char *)d->dispatcher, "--init", p->db, NULL};
	int st = demo_system(argv, p->dir, -1, DEMO_STEP_TIMEOUT);
	if (st != 0 || chmod(p->db, 0666) < 0) {
		dt_fail(DT_EXIT_INTERNAL,
		        "demo: could not create the board database %s (python3 exit %d)", p->db,
		        st);
		return -1;
	}
	return 0;
}

/* Can nobody open the database for writing and run the worker from its
 * workspace? Not when a parent of the output directory is closed to it
 * (an --out under /root); then phase 1 falls back to the emulation. */
static int demo_nobody_can_reach(const struct demo *d, const struct demo_phase *p)
{
	pid_t pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setgid(d->nobody_gid) < 0 ||
		    setuid(d->nobody_uid) < 0)
			_exit(1);
		_exit(access(p->db, R_OK | W_OK) == 0 && access(d->worker, R_OK) == 0 &&
		              access(p->work, X_OK) == 0 && access(p->board, W_OK) != 0
		          ? 0
		          : 1);
	}
	return dt_wait_timeout(pid, DEMO_STEP_TIMEOUT) == 0;
}

/* The glob of a --deny rule matching exactly the files in dir. */
static void demo_rule(char *out, size_t cap, const char *dir, const char *settings)
{
	size_t n = 0;
	for (const char *s = dir; *s && n + 3 < cap; s++) {
		if (strchr("*?[]\\,", *s))
			out[n++] = '\\';
		out[n++] = *s;
	}
	snprintf(out + n, cap - n, "/*,%s", settings);
}

static int demo_bwrap_works(const struct demo_phase *p)
{
	return dt_bwrap_try("bwrap", p->work, DEMO_STEP_TIMEOUT * 1000, NULL, 0) == 0;
}

/* Phase 1: how the worker comes to be refused the side files only. */
static void demo_choose_phase1(const struct demo *d, struct demo_phase *p)
{
	const char *why = NULL;
	if (d->emulate)
		why = "--emulate";
	else if (geteuid() != 0)
		why = "not root, so the worker cannot run as another user";
	else if (!demo_nobody_can_reach(d, p))
		why = "nobody (uid 65534) cannot reach the output directory: a parent of it is "
		      "closed to other users";
	if (!why) {
		p->mode = "uid-switch";
		p->as_nobody = 1;
		snprintf(p->how, sizeof(p->how),
		         "the worker runs as nobody (uid %u); the board directory is root's, mode "
		         "0755, and kanban.db is mode 0666",
		         (unsigned)d->nobody_uid);
		return;
	}
	p->mode = "deny-emulation";
	demo_rule(p->rule, sizeof(p->rule), p->board, "op=new+unlink");
	snprintf(p->how, sizeof(p->how),
	         "emulated (%s): a --deny rule refuses creating or removing a file in the board "
	         "directory with EACCES, as a directory the worker may not write would; kanban.db "
	         "and side files that already exist stay writable",
	         why);
}

/* Phase 2: the strongest sandbox this machine can make. */
static void demo_choose_phase2(const struct demo *d, struct demo_phase *p)
{
	if (!d->emulate && demo_bwrap_works(p)) {
		p->mode = "bubblewrap";
		p->bwrap = 1;
		snprintf(p->how, sizeof(p->how),
		         "bubblewrap: --ro-bind / /, --bind for the workspace only");
		return;
	}
	if (!d->emulate && dt_landlock_abi() >= 1) {
		p->mode = "landlock";
		p->landlock = 1;
		snprintf(p->how, sizeof(p->how),
		         "Landlock (ABI %d): writes allowed beneath the workspace only%s",
		         (int)dt_landlock_abi(), " (bubblewrap cannot create a sandbox here)");
		return;
	}
	p->mode = "deny-sandbox";
	demo_rule(p->rule, sizeof(p->rule), p->board, "errno=EROFS");
	snprintf(p->how, sizeof(p->how),
	         "%s: a --deny rule refuses every write under the board directory with EROFS, "
	         "as a read-only bind would",
	         d->emulate ? "emulated (--emulate)"
	                    : "emulated (neither bubblewrap nor Landlock works here)");
}

/* Starts the dispatcher; *stop is the descriptor whose closing stops it. */
static pid_t demo_start_dispatcher(const struct demo *d, const struct demo_phase *p, int *stop)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	char *argv[] = {
	    (char *)d->python, (char *)d->dispatcher, (char *)p->db, DEMO_HOLD, DEMO_GAP, NULL};
	struct dt_spawn sp = {
	    .argv = argv, .cwd = p->dir, .in = fds[0], .out = -2, .err = -1, .who = "demo"};
	pid_t pid = dt_spawn(&sp);
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		return -1;
	}
	*stop = fds[1];
	return pid;
}

static void demo_worker_line(const struct demo *d, struct demo_phase *p, const char *line)
{
	demo_say(d, "   %s\n", line);
	int failed, total, off = 0;
	if (sscanf(line, "worker: %d of %d writes failed%n", &failed, &total, &off) == 2) {
		p->failed = failed;
		p->total = total;
		if (!strncmp(line + off, ": ", 2))
			snprintf(p->error, sizeof(p->error), "%s", line + off + 2);
	}
}

/* Copies the worker's output to the narrative and reads its count, until
 * the run ends or the deadline passes (then the run is told to stop: it
 * forwards SIGTERM to the worker). */
static void demo_read_worker(const struct demo *d, struct demo_phase *p, int fd, pid_t run)
{
	char buf[4096];
	size_t len = 0;
	double deadline = demo_now() + DEMO_RUN_TIMEOUT;
	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		int left = (int)((deadline - demo_now()) * 1000);
		int n = left > 0 ? poll(&pfd, 1, left) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr,
			        "denytrace: demo: the worker is still running after %d s; "
			        "stopping it\n",
			        DEMO_RUN_TIMEOUT);
			kill(run, SIGTERM);
			break;
		}
		ssize_t got = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
		buf[len] = 0;
		char *nl;
		while ((nl = strchr(buf, '\n')) || len == sizeof(buf) - 1) {
			if (nl)
				*nl = 0;
			demo_worker_line(d, p, buf);
			size_t used = nl ? (size_t)(nl + 1 - buf) : len;
			memmove(buf, buf + used, len - used + 1);
			len -= used;
		}
	}
	if (len)
		demo_worker_line(d, p, buf);
	close(fd);
}

/* Reads the phase's report back as data, for the summary. */
static void demo_digest(struct demo_phase *p)
{
	struct dt_report r;
	const char *rings[] = {p->ring};
	struct dt_report_opts o = {0};
	char err[512];
	if (dt_report_load(&r, rings, 1, err, sizeof(err)) != 0 ||
	    dt_report_build(&r, &o, err, sizeof(err)) != 0) {
		dt_report_free(&r);
		return;
	}
	memcpy(p->by_cause, r.by_cause, sizeof(p->by_cause));
	p->denials = r.denials;
	for (size_t i = 0; i < r.ngroups; i++) {
		const struct dt_report_group *g = &r.groups[i];
		if (g->hidden)
			continue;
		p->intermittent |= g->intermittent;
		if (g->v.root && !p->root[0]) {
			snprintf(p->root, sizeof(p->root), "%s", g->v.root->path);
			snprintf(p->root_source, sizeof(p->root_source), "%s",
			         g->v.root->source ? g->v.root->source : "");
		}
	}
	dt_report_free(&r);
}

static int demo_report_to_file(const struct demo_phase *p, const char *format, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", p->dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	char *argv[] = {"/proc/self/exe", "report",        "--format",
	                (char *)format,   (char *)p->ring, NULL};
	int st = demo_system(argv, p->work, fd, DEMO_STEP_TIMEOUT);
	close(fd);
	return st == 0 ? 0 : -1;
}

static void demo_causes(const struct demo_phase *p, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	for (int c = 0; c < DT_CAUSE_COUNT; c++)
		if (p->by_cause[c] && n < cap)
			n += (size_t)snprintf(out + n, cap - n, "%s%s %llu", n ? ", " : "",
			                      dt_cause_name((enum dt_cause)c),
			                      (unsigned long long)p->by_cause[c]);
	if (!n)
		snprintf(out, cap, "none");
}

/* What the phase is about, for the reader. */
static void demo_phase_intro(const struct demo *d, const struct demo_phase *p)
{
	demo_say(d, "\n== phase %d: %s\n", p->n, p->title);
	if (p->n == 1)
		demo_say(
		    d,
		    "   A dispatcher opens and closes the board database in WAL mode: -wal and\n"
		    "   -shm exist only while it holds it open. The worker writes now and then;\n"
		    "   it may write kanban.db but may not create files in its directory.\n");
	else
		demo_say(
		    d, "   The same worker and dispatcher, but the worker runs in a sandbox that\n"
		       "   was not granted the board directory: only its workspace is writable.\n");
	demo_say_wrapped(d, "how:", p->how);
	demo_say_wrapped(d, "HERMES_KANBAN_DB:", p->db);
}

/* `denytrace run` of the worker (under bwrap in the bubblewrap mode), into
 * argv (40 entries); writes and user are its arguments. */
static void demo_worker_argv(struct demo *d, struct demo_phase *p, char **argv, char *writes,
                             char *user)
{
	int k = 0;
	argv[k++] = "/proc/self/exe";
	argv[k++] = "run";
	argv[k++] = "-q";
	argv[k++] = "--all";
	argv[k++] = "-o";
	argv[k++] = p->ring;
	if (p->rule[0]) {
		argv[k++] = "--deny";
		argv[k++] = p->rule;
	}
	argv[k++] = "--";
	if (p->bwrap) {
		char *bw[] = {"bwrap", "--ro-bind", "/",      "/",     "--bind",  p->work, p->work,
		              "--dev", "/dev",      "--proc", "/proc", "--chdir", p->work, "--"};
		for (size_t i = 0; i < sizeof(bw) / sizeof(bw[0]); i++)
			argv[k++] = bw[i];
	}
	argv[k++] = d->python;
	argv[k++] = d->worker;
	argv[k++] = writes;
	argv[k++] = DEMO_INTERVAL;
	if (p->as_nobody)
		argv[k++] = user;
	argv[k] = NULL;
}

/* Runs the dispatcher and the traced worker until the worker is done. */
static int demo_run_worker(const struct demo *d, struct demo_phase *p, char **argv,
                           const char *const *env)
{
	int stop = -1;
	pid_t disp = demo_start_dispatcher(d, p, &stop);
	if (disp < 0)
		return dt_fail(DT_EXIT_INTERNAL, "demo: cannot start the dispatcher: %s",
		               strerror(errno));
	int out[2];
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(stop);
		dt_wait_timeout(disp, DEMO_STEP_TIMEOUT);
		return dt_fail(DT_EXIT_INTERNAL, "demo: pipe: %s", strerror(errno));
	}
	p->failed = p->total = -1;
	struct dt_spawn sp = {.argv = argv,
	                      .cwd = p->work,
	                      .env = env,
	                      .in = -2,
	                      .out = out[1],
	                      .err = -1,
	                      .landlock = p->landlock ? p->work : NULL,
	                      .who = "demo"};
	pid_t run = dt_spawn(&sp);
	close(out[1]);
	if (run > 0)
		demo_read_worker(d, p, out[0], run);
	else
		close(out[0]);
	p->status = run > 0 ? dt_wait_timeout(run, DEMO_STEP_TIMEOUT) : -1;
	/* EOF on its stdin: the dispatcher closes the board (deleting the
	 * side files, even ones the worker could not delete) and exits */
	close(stop);
	dt_wait_timeout(disp, DEMO_STEP_TIMEOUT);
	if (p->total < 0 || (p->status != 0 && p->status != 3))
		return dt_fail(
		    DT_EXIT_INTERNAL,
		    "demo: phase %d: the worker did not run to the end (denytrace run exit "
		    "status %d); the ring, if any, is %s",
		    p->n, p->status, p->ring);
	return 0;
}

/* Step 3, after phase 2: the change, and the worker run again with it (in
 * the phase's environment; the dispatcher has stopped, so the worker opens
 * the board alone). The text goes to the narrative; --json: fix.json. */
static int demo_fix(const struct demo *d, const struct demo_phase *p, const char *const *env)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/fix.json", p->dir);
	int fd = -1;
	if (!d->say && (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
		return dt_fail(DT_EXIT_IO, "demo: cannot create %s: %s", path, strerror(errno));
	demo_say(d, "\n== step 3: fix, and verify the fix\n");
	demo_say(d, "   $ denytrace fix --verify --yes \"$OUT\"/phase%d/workspace/denytrace.ring\n",
	         p->n);
	char *argv[] = {"/proc/self/exe",         "fix",           "--verify", "--yes", "--format",
	                d->say ? "text" : "json", (char *)p->ring, NULL};
	struct dt_spawn sp = {.argv = argv,
	                      .cwd = p->work,
	                      .env = env,
	                      .in = -2,
	                      .out = d->say ? -1 : fd,
	                      .err = d->say ? -1 : -2,
	                      .who = "demo"};
	fflush(stdout);
	pid_t pid = dt_spawn(&sp);
	int st = pid < 0 ? -1 : dt_wait_timeout(pid, DEMO_RUN_TIMEOUT);
	if (fd >= 0)
		close(fd);
	/* a finding not fixed or not verifiable (Landlock's rule is the
	 * worker's to add): the output says which, and why */
	if (st != DT_EXIT_OK && st != DT_EXIT_FOUND && st != DT_EXIT_UNVERIFIED)
		return dt_fail(DT_EXIT_INTERNAL, "demo: denytrace fix --verify failed (exit %d)",
		               st);
	return 0;
}

static int demo_phase(struct demo *d, struct demo_phase *p)
{
	if (demo_board(d, p) < 0)
		return DT_EXIT_INTERNAL;
	if (p->n == 1)
		demo_choose_phase1(d, p);
	else
		demo_choose_phase2(d, p);
	if (p->as_nobody && chown(p->work, d->nobody_uid, d->nobody_gid) < 0)
		return dt_fail(DT_EXIT_INTERNAL, "demo: cannot hand the workspace to nobody: %s",
		               strerror(errno));

	demo_phase_intro(d, p);

	char writes[16], user[32];
	snprintf(writes, sizeof(writes), "%d", d->writes);
	snprintf(user, sizeof(user), "%u:%u", (unsigned)d->nobody_uid, (unsigned)d->nobody_gid);
	char *argv[40];
	demo_worker_argv(d, p, argv, writes, user);

	char e_home[PATH_MAX + 16], e_db[PATH_MAX + 32], e_work[PATH_MAX + 32];
	snprintf(e_home, sizeof(e_home), "HERMES_HOME=%s", p->home);
	snprintf(e_db, sizeof(e_db), "HERMES_KANBAN_DB=%s", p->db);
	snprintf(e_work, sizeof(e_work), "HERMES_KANBAN_WORKSPACE=%s", p->work);
	/* only the demo's own facts decide the roots */
	const char *env[] = {e_home,
	                     e_db,
	                     e_work,
	                     "HERMES_KANBAN_ROOT",
	                     "HERMES_KANBAN_TASK",
	                     "PYTHONDONTWRITEBYTECODE=1",
	                     NULL};
	demo_say(d, "   $ cd \"$OUT\"/phase%d/workspace%s\n", p->n,
	         p->landlock ? "   # then Landlock, for denytrace and all it starts" : "");
	demo_put_command(d, env, argv);

	int rc = demo_run_worker(d, p, argv, env);
	if (rc)
		return rc;
	if (d->say) {
		demo_say(d, "\n   $ denytrace report \"$OUT\"/phase%d/workspace/denytrace.ring\n",
		         p->n);
		char *rep[] = {"/proc/self/exe", "report", p->ring, NULL};
		demo_system(rep, p->work, -1, DEMO_STEP_TIMEOUT);
	}
	if (demo_report_to_file(p, "json", "report.json") < 0 ||
	    demo_report_to_file(p, "markdown", "report.md") < 0)
		return dt_fail(DT_EXIT_IO, "demo: could not write the reports into %s", p->dir);
	demo_digest(p);
	demo_say(d, "   saved: \"$OUT\"/phase%d/report.json, report.md\n", p->n);
	return p->n == 2 ? demo_fix(d, p, env) : 0;
}

/* ---- the whole demo ---- */

static void demo_summary_text(const struct demo *d, struct demo_phase *ph, int n, double secs)
{
	demo_say(d, "\n== summary\n");
	for (int i = 0; i < n; i++) {
		struct demo_phase *p = &ph[i];
		char causes[512];
		demo_causes(p, causes, sizeof(causes));
		demo_say(d, "   phase %d, %s (%s): worker: %d of %d writes failed\n", p->n,
		         p->title, p->mode, p->failed, p->total);
		demo_say(d, "      refusals by cause: %s\n", causes);
		demo_say(d, "      expected root:     %s (%s)\n",
		         p->root[0] ? p->root : "none found", p->root_source);
		demo_say(d, "      intermittent:      %s\n",
		         p->intermittent ? "yes: the same files were also written successfully"
		                         : "no: every write to the board was refused");
		if (p->n == 1 && (p->failed == 0 || p->failed == p->total))
			demo_say(
			    d, "      (this time the timing did not interleave the writes with the "
			       "dispatcher: run it again)\n");
	}
	demo_say(d, "\ndemo output: %s (%.1f s)\n", d->out, secs);
}

static void demo_summary_json(const struct demo *d, struct demo_phase *ph, int n, double secs)
{
	struct dt_json j;
	dt_json_init(&j, stdout, 1);
	dt_json_obj(&j);
	dt_json_key(&j, "out");
	dt_json_str(&j, d->out);
	dt_json_key(&j, "python");
	dt_json_str(&j, d->python);
	dt_json_key(&j, "seconds");
	dt_json_double(&j, secs);
	dt_json_key(&j, "phases");
	dt_json_arr(&j);
	for (int i = 0; i < n; i++) {
		const struct demo_phase *p = &ph[i];
		char path[PATH_MAX + 16];
		dt_json_obj(&j);
		dt_json_key(&j, "phase");
		dt_json_int(&j, p->n);
		dt_json_key(&j, "title");
		dt_json_str(&j, p->title);
		dt_json_key(&j, "mode");
		dt_json_str(&j, p->mode);
		dt_json_key(&j, "how");
		dt_json_str(&j, p->how);
		dt_json_key(&j, "deny_rule");
		dt_json_str(&j, p->rule[0] ? p->rule : NULL);
		dt_json_key(&j, "hermes_kanban_db");
		dt_json_str(&j, p->db);
		dt_json_key(&j, "writes");
		dt_json_int(&j, p->total);
		dt_json_key(&j, "failed");
		dt_json_int(&j, p->failed);
		dt_json_key(&j, "error");
		dt_json_str(&j, p->error[0] ? p->error : NULL);
		dt_json_key(&j, "refusals");
		dt_json_uint(&j, p->denials);
		dt_json_key(&j, "by_cause");
		dt_json_obj(&j);
		for (int c = 0; c < DT_CAUSE_COUNT; c++)
			if (p->by_cause[c]) {
				dt_json_key(&j, dt_cause_name((enum dt_cause)c));
				dt_json_uint(&j, p->by_cause[c]);
			}
		dt_json_end_obj(&j);
		dt_json_key(&j, "expected_root");
		dt_json_str(&j, p->root[0] ? p->root : NULL);
		dt_json_key(&j, "intermittent");
		dt_json_bool(&j, p->intermittent);
		dt_json_key(&j, "ring");
		dt_json_str(&j, p->ring);
		snprintf(path, sizeof(path), "%s/report.json", p->dir);
		dt_json_key(&j, "report_json");
		dt_json_str(&j, path);
		snprintf(path, sizeof(path), "%s/report.md", p->dir);
		dt_json_key(&j, "report_md");
		dt_json_str(&j, path);
		snprintf(path, sizeof(path), "%s/fix.json", p->dir);
		dt_json_key(&j, "fix_json");
		dt_json_str(&j, p->n == 2 ? path : NULL);
		dt_json_end_obj(&j);
	}
	dt_json_end_arr(&j);
	dt_json_end_obj(&j);
	fputc('\n', stdout);
}

/* Is the directory empty? 1, 0, or -1 (message printed). */
static int demo_dir_empty(const char *path)
{
	DIR *dir = opendir(path);
	if (!dir) {
		dt_fail(0, "demo: cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	struct dirent *e;
	int empty = 1;
	while ((e = readdir(dir)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = 0;
	closedir(dir);
	return empty;
}

/* The output directory: made here (mode 0755, so that nobody can reach the
 * board in phase 1), or given and empty. The demo runs python scripts from
 * it, as root too: only a directory no other user can change will do
 * (privdir.h). */
static int demo_outdir(struct demo *d, const char *given)
{
	char why[PATH_MAX + 256];
	if (!given) {
		const char *tmp = getenv("TMPDIR");
		snprintf(d->out, sizeof(d->out), "%s/denytrace-demo.XXXXXX",
		         tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(d->out))
			return dt_fail(DT_EXIT_IO,
			               "demo: cannot create %s: %s (set TMPDIR or --out)", d->out,
			               strerror(errno));
		char real[PATH_MAX];
		snprintf(why, sizeof(why), "%s", strerror(errno));
		if (!realpath(d->out, real) || dt_private_parents(real, why, sizeof(why)) < 0) {
			rmdir(d->out);
			return dt_fail(DT_EXIT_IO,
			               "demo: not running from %s: %s (set TMPDIR or --out)",
			               d->out, why);
		}
	} else {
		int made = dt_private_dir(given, 0755, why, sizeof(why));
		if (made < 0)
			return dt_fail(DT_EXIT_IO, "demo: --out: %s", why);
		int empty = made ? 1 : demo_dir_empty(given);
		if (empty < 0)
			return DT_EXIT_IO;
		if (!empty)
			return dt_fail(
			    DT_EXIT_IO,
			    "demo: %s already holds files; give a new or empty directory", given);
	}
	/* the real path: the report compares realpaths with HERMES_KANBAN_DB,
	 * and a symlinked TMPDIR would read as a symlink mismatch */
	char real[PATH_MAX];
	if (!realpath(given ? given : d->out, real))
		return dt_fail(DT_EXIT_IO, "demo: %s: %s", given ? given : d->out, strerror(errno));
	snprintf(d->out, sizeof(d->out), "%s", real);
	if (!given)
		chmod(d->out, 0755);
	snprintf(d->dispatcher, sizeof(d->dispatcher), "%s/dispatcher.py", d->out);
	snprintf(d->worker, sizeof(d->worker), "%s/worker.py", d->out);
	if (demo_write_file(d->dispatcher, demo_dispatcher_py, 0644) < 0 ||
	    demo_write_file(d->worker, demo_worker_py, 0644) < 0)
		return dt_fail(DT_EXIT_IO, "demo: cannot write the scripts into %s: %s", d->out,
		               strerror(errno));
	return 0;
}

int dt_demo_run(const struct dt_demo_opts *o)
{
	struct demo d = {0};
	const char *out = o->out;
	d.writes = o->writes;
	d.phases = o->phases;
	d.emulate = o->emulate;
	d.json = o->json;
	d.say = d.json ? NULL : stdout;

	if (demo_find_python(d.python, sizeof(d.python)) < 0)
		return dt_fail(
		    DT_EXIT_NODEP,
		    "demo: needs python3 (the worker is Python's sqlite3), and %s; install "
		    "it (Debian: apt-get install python3)",
		    getenv("DENYTRACE_PYTHON") && *getenv("DENYTRACE_PYTHON")
		        ? "$DENYTRACE_PYTHON is not an absolute path to an executable"
		        : "none is in /usr/bin or on PATH");
	char *check[] = {d.python, "-c", "import sqlite3", NULL};
	if (demo_system(check, NULL, -2, DEMO_STEP_TIMEOUT) != 0)
		return dt_fail(DT_EXIT_NODEP,
		               "demo: %s cannot import sqlite3; install a python3 with it (Debian: "
		               "apt-get install python3)",
		               d.python);
	char probe[PATH_MAX];
	if (dt_find_probe(probe, sizeof(probe)) < 0)
		return dt_fail(DT_EXIT_INTERNAL, "%s", DT_PROBE_NOT_FOUND);
	if (dt_probe_path_problem(probe))
		return dt_fail(
		    DT_EXIT_INTERNAL,
		    "the probe's path '%s' contains %s: the loader splits LD_PRELOAD there; "
		    "install denytrace under a path without spaces or colons",
		    probe, dt_probe_path_problem(probe));
	struct passwd *pw = getpwnam("nobody");
	d.nobody_uid = pw ? pw->pw_uid : 65534;
	d.nobody_gid = pw ? pw->pw_gid : 65534;

	double t0 = demo_now();
	int rc = demo_outdir(&d, out);
	if (rc)
		return rc;
	demo_say(&d,
	         "== denytrace demo: a Hermes kanban worker that cannot always write its board\n");
	demo_say(&d, "   output: OUT=%s\n", d.out);

	struct demo_phase ph[2] = {{.n = 1, .title = "intermittent"},
	                           {.n = 2, .title = "root not granted"}};
	int first = d.phases & 1 ? 0 : 1, n = d.phases == 3 ? 2 : 1;
	for (int i = first; i < first + n; i++) {
		rc = demo_phase(&d, &ph[i]);
		if (rc) {
			fprintf(stderr, "denytrace: demo: output so far in %s\n", d.out);
			return rc;
		}
	}
	double secs = demo_now() - t0;
	if (d.json)
		demo_summary_json(&d, ph + first, n, secs);
	else
		demo_summary_text(&d, ph + first, n, secs);
	return DT_EXIT_OK;
}
