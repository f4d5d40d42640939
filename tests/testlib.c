/* SPDX-License-Identifier: MIT */
#include "testlib.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dtt_tmp[PATH_MAX], dtt_codex_tmp[PATH_MAX];

const char *dtt_build(void)
{
	static char dir[PATH_MAX];
	if (!dir[0]) {
		const char *b = getenv("DT_BUILD");
		if (!realpath(b && *b ? b : "build", dir))
			snprintf(dir, sizeof(dir), "%s", b && *b ? b : "build");
	}
	return dir;
}

const char *dtt_denytrace(void)
{
	static char p[PATH_MAX + 16];
	if (!p[0])
		snprintf(p, sizeof(p), "%s/denytrace", dtt_build());
	return p;
}

const char *dtt_helper(const char *name)
{
	static __thread char path[8][PATH_MAX];
	static __thread int k;
	k = (k + 1) % 8;
	snprintf(path[k], sizeof(path[k]), "%s/helpers/%s", dtt_build(), name);
	return path[k];
}

const char *dtt_repo_file(const char *rel)
{
	static __thread char path[8][PATH_MAX];
	static __thread int k;
	char guess[PATH_MAX + 64];
	k = (k + 1) % 8;
	if (realpath(rel, path[k]))
		return path[k];
	snprintf(guess, sizeof(guess), "%s/../%s", dtt_build(), rel);
	return realpath(guess, path[k]) ? path[k] : NULL;
}

const char *dtt_helper_script(const char *name)
{
	char rel[PATH_MAX];
	snprintf(rel, sizeof(rel), "tests/helpers/%s", name);
	return dtt_repo_file(rel);
}

/* dir, made from template the first time, and removed at exit */
static const char *dtt_fresh_dir(char *dir, size_t cap, const char *template)
{
	static pid_t registered;
	if (!dir[0]) {
		snprintf(dir, cap, "%s", template);
		if (!mkdtemp(dir))
			abort();
		/* cr_skip_test() calls exit() without running the suite's fini */
		if (registered != getpid()) {
			registered = getpid();
			atexit(dtt_cleanup);
		}
	}
	return dir;
}

const char *dtt_tmpdir(void)
{
	return dtt_fresh_dir(dtt_tmp, sizeof(dtt_tmp), "/tmp/dtt.XXXXXX");
}

const char *dtt_codex_tmpdir(void)
{
	return dtt_fresh_dir(dtt_codex_tmp, sizeof(dtt_codex_tmp), "/var/tmp/dtt-codex.XXXXXX");
}

static void dtt_remove(char *dir)
{
	if (!dir[0])
		return;
	char cmd[2 * PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
	if (system(cmd) != 0)
		fprintf(stderr, "testlib: could not remove %s\n", dir);
	dir[0] = 0;
}

void dtt_cleanup(void)
{
	dtt_remove(dtt_tmp);
	dtt_remove(dtt_codex_tmp);
}

static int dtt_spawn(char *out, size_t cap, const char *const *argv, const char *const *env)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		for (const char *const *e = env; e && *e; e++)
			putenv((char *)*e);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "testlib: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	size_t len = 0;
	char sink[4096];
	for (;;) {
		char *dst = out && len + 1 < cap ? out + len : sink;
		size_t room = out && len + 1 < cap ? cap - 1 - len : sizeof(sink);
		ssize_t n = read(p[0], dst, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (dst != sink)
			len += (size_t)n;
	}
	if (out && cap)
		out[len] = 0;
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

long dtt_take_number(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = -1;
	if (f && fscanf(f, "%ld", &n) != 1)
		n = -1;
	if (f)
		fclose(f);
	unlink(path);
	return n;
}

size_t dtt_as_nobody(const char **argv, size_t cap, const char *const *cmd)
{
	static const char *const drop[] = {"setpriv", "--reuid=65534", "--regid=65534",
	                                   "--clear-groups"};
	size_t k = 0;
	if (geteuid() == 0)
		for (size_t i = 0; i < 4 && k + 1 < cap; i++)
			argv[k++] = drop[i];
	for (size_t i = 0; cmd[i] && k + 1 < cap; i++)
		argv[k++] = cmd[i];
	argv[k] = NULL;
	return k;
}

const char *dtt_ro_for_nobody(void)
{
	static char ro[PATH_MAX];
	chmod(dtt_tmpdir(), 0755);
	snprintf(ro, sizeof(ro), "%s/ro", dtt_tmpdir());
	mkdir(ro, 0555);
	chmod(ro, 0555); /* whatever the umask */
	return ro;
}

int dtt_system(char *out, size_t cap, const char *const *argv, const char *const *env)
{
	return dtt_spawn(out, cap, argv, env);
}

int dtt_load(struct dtt_run *r, const char *ring)
{
	struct dt_ringfile rf;
	char err[512];
	r->recs = NULL;
	r->n = 0;
	memset(&r->stats, 0, sizeof(r->stats));
	if (dt_ringfile_open(ring, &rf, err, sizeof(err)) != 0) {
		fprintf(stderr, "testlib: %s\n", err);
		return -1;
	}
	unsigned char *buf = malloc(DT_REC_MAX);
	size_t cap = 0;
	uint64_t pos = dt_ring_tail(&rf.ring);
	uint32_t len;
	while (dt_ring_next(&rf.ring, &pos, buf, &len, &r->stats, 0) == DT_NEXT_RECORD) {
		if (r->n == cap) {
			cap = cap ? cap * 2 : 64;
			r->recs = realloc(r->recs, cap * sizeof(*r->recs));
		}
		if (dt_record_decode(buf, len, pos, &r->recs[r->n]) == 0)
			r->n++;
	}
	free(buf);
	dt_ringfile_close(&rf);
	return 0;
}

int dtt_run(struct dtt_run *r, const char *const *opts, const char *const *argv,
            const char *const *env)
{
	static int seq;
	memset(r, 0, sizeof(*r));
	snprintf(r->ring, sizeof(r->ring), "%s/run%d-%d.ring", dtt_tmpdir(), (int)getpid(), seq++);
	const char *args[256];
	size_t n = 0;
	char cli[PATH_MAX];
	snprintf(cli, sizeof(cli), "%s/denytrace", dtt_build());
	args[n++] = cli;
	args[n++] = "run";
	args[n++] = "-q";
	args[n++] = "-o";
	args[n++] = r->ring;
	for (const char *const *o = opts; o && *o && n < 120; o++)
		args[n++] = *o;
	args[n++] = "--";
	for (const char *const *a = argv; *a && n < 250; a++)
		args[n++] = *a;
	args[n] = NULL;
	r->status = dtt_spawn(r->out, sizeof(r->out), args, env);
	return dtt_load(r, r->ring);
}

void dtt_free(struct dtt_run *r)
{
	for (size_t i = 0; i < r->n; i++)
		dt_record_free(&r->recs[i]);
	free(r->recs);
	r->recs = NULL;
	r->n = 0;
}

static int dtt_ends_with(const char *s, const char *suffix)
{
	if (!s)
		return 0;
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

static int dtt_match(const struct dt_record *rec, int type, const char *op, const char *suffix)
{
	if (rec->type != type)
		return 0;
	if (op && (!rec->op || strcmp(rec->op, op)))
		return 0;
	if (suffix && !dtt_ends_with(rec->p[0].abspath, suffix) &&
	    !dtt_ends_with(rec->p[0].realpath, suffix) && !dtt_ends_with(rec->p[0].path, suffix))
		return 0;
	return 1;
}

const struct dt_record *dtt_find(const struct dtt_run *r, int type, const char *op,
                                 const char *suffix)
{
	for (size_t i = 0; i < r->n; i++)
		if (dtt_match(&r->recs[i], type, op, suffix))
			return &r->recs[i];
	return NULL;
}

size_t dtt_count(const struct dtt_run *r, int type, const char *op, const char *suffix)
{
	size_t c = 0;
	for (size_t i = 0; i < r->n; i++)
		c += (size_t)dtt_match(&r->recs[i], type, op, suffix);
	return c;
}

const struct dt_record *dtt_process(const struct dtt_run *r, long pid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->recs[i].type == DT_REC_PROCESS && r->recs[i].pid == pid)
			return &r->recs[i];
	return NULL;
}

const char *dtt_codex(char *why, size_t cap)
{
	static char bin[PATH_MAX];
	char status[PATH_MAX + 16], line[PATH_MAX + 512] = "";
	snprintf(status, sizeof(status), "%s/codex.status", dtt_build());
	FILE *f = fopen(status, "r");
	if (!f) {
		snprintf(bin, sizeof(bin), "%s/codex/node_modules/.bin/codex", dtt_build());
		if (access(bin, X_OK) == 0)
			return bin;
		snprintf(why, cap,
		         "no Codex CLI: %s is missing; `make codex` installs Codex "
		         "(make test runs it)",
		         status);
		return NULL;
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	if (!strncmp(line, "codex ", 6) && access(line + 6, X_OK) == 0) {
		snprintf(bin, sizeof(bin), "%s", line + 6);
		return bin;
	}
	snprintf(why, cap, "no Codex CLI (%s): %s", status,
	         !strncmp(line, "none ", 5) ? line + 5 : line);
	return NULL;
}

/* The port the stub prints, up to its newline: the digits alone may be
 * only part of it. 0 when it printed none within 10 s. */
static int dtt_stub_port(int fd)
{
	char buf[32] = "";
	size_t n = 0;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	while (n < sizeof(buf) - 1 && !memchr(buf, '\n', n) && poll(&pfd, 1, 10000) > 0) {
		ssize_t k = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		buf[n] = 0;
	}
	return memchr(buf, '\n', n) ? atoi(buf) : 0;
}

static void dtt_stub_exec(const char *stub, int out, const char *marker, const char *log,
                          const char *errlog, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* the test dies, so does the stub */
	if (getppid() != parent)
		_exit(1);
	dup2(out, 1);
	int null = open("/dev/null", O_RDONLY);
	if (null >= 0)
		dup2(null, 0);
	int err = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (err >= 0)
		dup2(err, 2);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	execl("/usr/bin/python3", "python3", stub, marker, log, (char *)NULL);
	_exit(127);
}

void dtt_stub_start(struct dtt_stub *s, const char *marker, const char *log)
{
	const char *stub = dtt_helper_script("responses_stub.py");
	cr_assert_not_null(stub, "tests/helpers/responses_stub.py not found");
	char errlog[PATH_MAX + 16];
	snprintf(errlog, sizeof(errlog), "%s.err", log);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t parent = getpid();
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		dtt_stub_exec(stub, p[1], marker, log, errlog, parent);
	s->pid = pid;
	close(p[1]);
	s->port = dtt_stub_port(p[0]);
	close(p[0]);
	cr_assert_gt(s->port, 0, "the stub model server did not start (see %s)", errlog);
}

void dtt_stub_stop(struct dtt_stub *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
			;
		s->pid = 0;
	}
}

void dtt_stub_provider(const struct dtt_stub *s, char *buf, size_t cap)
{
	snprintf(buf, cap,
	         "model_providers.dtstub={ name = \"dtstub\", base_url = "
	         "\"http://127.0.0.1:%d/v1\", wire_api = \"responses\", "
	         "request_max_retries = 0, stream_max_retries = 0 }",
	         s->port);
}

int dtt_have_bwrap(void)
{
	const char *argv[] = {"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "true", NULL};
	return dtt_spawn(NULL, 0, argv, NULL) == 0;
}

size_t dtt_bwrap_rw(const char **argv, const char *rw)
{
	const char *const pre[DTT_BWRAP_RW_WORDS] = {"bwrap",  "--ro-bind", "/",     "/",
	                                             "--bind", rw,          rw,      "--dev",
	                                             "/dev",   "--proc",    "/proc", "--"};
	size_t n = 0;
	for (size_t i = 0; i < DTT_BWRAP_RW_WORDS; i++)
		if (rw || i < 4 || i > 6)
			argv[n++] = pre[i];
	return n;
}

int dtt_have_landlock(void)
{
	const char *argv[] = {dtt_helper("landlock-run"), "--ro-everything", "--", "true", NULL};
	return dtt_spawn(NULL, 0, argv, NULL) == 0;
}

static int dtt_tmpfd(void)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/cli-out.XXXXXX", dtt_tmpdir());
	int fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
}

static void dtt_slurp(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;
	lseek(fd, 0, SEEK_SET);
	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = 0;
	close(fd);
}

void dtt_cli_as(struct dtt_cli *c, long uid, const char *const *args)
{
	char exe[PATH_MAX];
	snprintf(exe, sizeof(exe), "%s/denytrace", dtt_build());
	const char *argv[64];
	size_t n = 0;
	argv[n++] = exe;
	for (const char *const *a = args; *a && n < 63; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	int out = dtt_tmpfd(), err = dtt_tmpfd();
	pid_t pid = out < 0 || err < 0 ? -1 : fork();
	if (pid < 0) {
		c->status = -1;
		c->out[0] = c->err[0] = 0;
		return;
	}
	if (pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		if (uid >= 0 && (setgroups(0, NULL) < 0 || setgid((gid_t)uid) < 0 ||
		                 setuid((uid_t)uid) < 0 || geteuid() != (uid_t)uid))
			_exit(200);
		alarm(20);
		execv(exe, (char *const *)argv);
		_exit(199);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	dtt_slurp(out, c->out, sizeof(c->out));
	dtt_slurp(err, c->err, sizeof(c->err));
}

void dtt_cli(struct dtt_cli *c, const char *const *args)
{
	dtt_cli_as(c, -1, args);
}

/* Maps the ring open on fd (closed here) for writing. */
static int dtt_ring_map(struct dtt_ring *w, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	w->len = (size_t)st.st_size;
	w->map = mmap(NULL, w->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (w->map == MAP_FAILED || dt_ring_attach(&w->r, w->map, w->len) != 0)
		return -1;
	return 0;
}

int dtt_ring_create(struct dtt_ring *w, const char *path, uint64_t size)
{
	char err[512];
	memset(w, 0, sizeof(*w));
	int fd = dt_ringfile_create(path, size ? size : DT_RING_MIN_SIZE, 0, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "testlib: %s\n", err);
		return -1;
	}
	return dtt_ring_map(w, fd);
}

int dtt_ring_open(struct dtt_ring *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	int fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -1 : dtt_ring_map(w, fd);
}

void dtt_ring_begin(struct dtt_ring *w, int type, long pid, const char *comm)
{
	struct dt_rec_header *rh = (struct dt_rec_header *)w->rec;
	memset(rh, 0, sizeof(*rh));
	rh->type = (uint16_t)type;
	w->b = (struct dt_buf){w->rec, sizeof(*rh), sizeof(w->rec), 0};
	dt_put_times(&w->b);
	dt_put_u64(&w->b, DT_T_PID, (uint64_t)pid);
	dt_put_u64(&w->b, DT_T_TID, (uint64_t)pid);
	dt_put_str(&w->b, DT_T_COMM, comm);
}

int dtt_ring_commit(struct dtt_ring *w)
{
	((struct dt_rec_header *)w->rec)->len = w->b.len;
	return w->b.overflow ? -1 : dt_ring_write(&w->r, w->rec);
}

void dtt_ring_close(struct dtt_ring *w)
{
	if (w->map && w->map != MAP_FAILED)
		munmap(w->map, w->len);
	w->map = NULL;
}

const char *dtt_fake_codex(const char *dir, const char *version)
{
	static char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/codex", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return NULL;
	fprintf(f, "#!/bin/sh\n[ \"$1\" = --version ] && echo 'codex-cli %s'\nexit 0\n", version);
	if (fclose(f) != 0 || chmod(path, 0755) != 0)
		return NULL;
	return path;
}

struct dt_jv *dtt_json(const char *text)
{
	char err[256];
	struct dt_jv *v = dt_jv_parse(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(v, "not JSON (%s): %s", err, text);
	return v;
}

/* One step of a path: a member of an object, an index into an array. */
static const struct dt_jv *dtt_jstep(const struct dt_jv *v, const char *step, size_t len)
{
	char name[256];
	if (!v || len >= sizeof(name))
		return NULL;
	memcpy(name, step, len);
	name[len] = 0;
	if (v->type == DT_JV_OBJ)
		return dt_jv_get(v, name);
	char *end;
	unsigned long i = strtoul(name, &end, 10);
	if (v->type != DT_JV_ARR || !len || *end || i >= v->n)
		return NULL;
	return &v->v[i];
}

const struct dt_jv *dtt_jget(const struct dt_jv *root, const char *path)
{
	const struct dt_jv *v = root;
	while (v && path && *path) {
		size_t len = strcspn(path, ".");
		v = dtt_jstep(v, path, len);
		path += len + (path[len] == '.');
	}
	return v;
}

const char *dtt_jstr(const struct dt_jv *root, const char *path)
{
	const struct dt_jv *v = dtt_jget(root, path);
	return v && v->type == DT_JV_STR ? v->text : NULL;
}

/* How many objects of the array at path have key equal to value; the
 * first of them in *first. */
static size_t dtt_jmatch(const struct dt_jv *root, const char *path, const char *key,
                         const char *value, const struct dt_jv **first)
{
	const struct dt_jv *a = dtt_jget(root, path);
	size_t n = 0;
	for (size_t i = 0; a && a->type == DT_JV_ARR && i < a->n; i++) {
		const char *s = dt_jv_str(&a->v[i], key);
		if (s && !strcmp(s, value) && n++ == 0 && first)
			*first = &a->v[i];
	}
	return n;
}

const struct dt_jv *dtt_jfind(const struct dt_jv *root, const char *path, const char *key,
                              const char *value)
{
	const struct dt_jv *first = NULL;
	dtt_jmatch(root, path, key, value, &first);
	return first;
}

size_t dtt_jcount(const struct dt_jv *root, const char *path, const char *key, const char *value)
{
	return dtt_jmatch(root, path, key, value, NULL);
}
