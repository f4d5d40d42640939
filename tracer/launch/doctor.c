/* SPDX-License-Identifier: MIT */
/* denytrace doctor's checks: what a launch under the probe needs from this
 * machine (the probe, a ring, bubblewrap, Landlock, seccomp user
 * notification) and the Codex it would run. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "doctor.h"
#include "json.h"
#include "ringfile.h"
#include "roots.h"
#include "sandbox.h"
#include "spawn.h"

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif

static void check_set(struct dt_check *c, enum dt_check_status st, const char *fix, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));

static void check_set(struct dt_check *c, enum dt_check_status st, const char *fix, const char *fmt,
                      ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	c->status = st;
	snprintf(c->fix, sizeof(c->fix), "%s", fix ? fix : "");
}

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r'))
		s[--n] = 0;
	char *nl = strchr(s, '\n');
	if (nl)
		*nl = 0; /* first line is enough for a one-line report */
}

static void check_probe(struct dt_check *found, struct dt_check *loads)
{
	char probe[PATH_MAX];
	found->name = "probe_found";
	loads->name = "probe_loadable";
	if (dt_find_probe(probe, sizeof(probe)) < 0) {
		const char *env = getenv("DENYTRACE_PROBE");
		if (env && *env)
			check_set(found, DT_CHECK_FAIL,
			          "point DENYTRACE_PROBE at libdenytrace.so, or unset it",
			          "DENYTRACE_PROBE=%s is not a readable file", env);
		else
			check_set(
			    found, DT_CHECK_FAIL,
			    "run `make` (build/libdenytrace.so) or `make install`, or set "
			    "DENYTRACE_PROBE",
			    "libdenytrace.so is neither beside denytrace nor in ../lib/denytrace/");
		check_set(loads, DT_CHECK_FAIL, "find the probe first", "not tried: no probe");
		return;
	}
	check_set(found, DT_CHECK_OK, NULL, "%s", probe);
	const char *bad = dt_probe_path_problem(probe);
	if (bad) {
		check_set(
		    loads, DT_CHECK_FAIL,
		    "install denytrace under a path without spaces or colons, or set "
		    "DENYTRACE_PROBE to a copy of libdenytrace.so there",
		    "the probe's path '%s' contains %s: the loader splits LD_PRELOAD there and "
		    "would load nothing",
		    probe, bad);
		return;
	}
	char env[PATH_MAX + 16];
	snprintf(env, sizeof(env), "LD_PRELOAD=%s", probe);
	const char *envs[] = {env, "DENYTRACE_FD", "DENYTRACE_RING", "DENYTRACE_RING_ID", NULL};
	const char *argv[] = {"/bin/true", NULL};
	char err[2048];
	int st = dt_capture(argv, envs, 10000, NULL, 0, err, sizeof(err));
	trim(err);
	if (st == 0 && !err[0])
		check_set(loads, DT_CHECK_OK, NULL, "/bin/true ran with it in LD_PRELOAD");
	else
		check_set(
		    loads, DT_CHECK_FAIL,
		    "rebuild it for this machine (`make clean all`); it needs glibc and the same "
		    "architecture",
		    "/bin/true with LD_PRELOAD=%s: %s%s", probe,
		    st == 0    ? ""
		    : st == -2 ? "timed out; "
		               : "failed; ",
		    err[0] ? err : "no message");
}

static void check_ring(struct dt_check *c)
{
	c->name = "ring_writable";
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX], err[512];
	snprintf(path, sizeof(path), "%s/denytrace-doctor-%d.ring", tmp && *tmp ? tmp : "/tmp",
	         (int)getpid());
	int fd = dt_ringfile_create(path, 1u << 20, 0, err, sizeof(err));
	if (fd < 0) {
		check_set(c, DT_CHECK_FAIL,
		          "point TMPDIR at a writable directory; with `run`, use -o", "%s", err);
		return;
	}
	close(fd);
	unlink(path);
	if (access(".", W_OK) == 0)
		check_set(c, DT_CHECK_OK, NULL, "created and removed %s", path);
	else
		check_set(
		    c, DT_CHECK_WARN, "use `denytrace run -o DIR/denytrace.ring` elsewhere",
		    "a ring works in %s, but this directory is not writable for ./denytrace.ring",
		    tmp && *tmp ? tmp : "/tmp");
}

static void check_bwrap(struct dt_check *c)
{
	c->name = "bubblewrap";
	char path[PATH_MAX];
	if (dt_which("bwrap", path, sizeof(path)) < 0) {
		check_set(c, DT_CHECK_WARN,
		          "apt-get install bubblewrap (Codex sandboxes commands with it)",
		          "bwrap is not on PATH");
		return;
	}
	char err[1024];
	int st = dt_bwrap_try(path, NULL, 10000, err, sizeof(err));
	trim(err);
	if (st == 0)
		check_set(c, DT_CHECK_OK, NULL, "%s created a sandbox", path);
	else
		check_set(
		    c, DT_CHECK_WARN,
		    "allow unprivileged user namespaces (sysctl "
		    "kernel.unprivileged_userns_clone=1; "
		    "on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0), or run in a "
		    "container started with --privileged",
		    "%s cannot create a sandbox: %s", path,
		    err[0]     ? err
		    : st == -2 ? "timed out"
		               : "failed");
}

static void check_landlock(struct dt_check *c)
{
	c->name = "landlock";
	long abi = dt_landlock_abi();
	if (abi >= 1)
		check_set(c, DT_CHECK_OK, NULL, "ABI version %ld", abi);
	else if (errno == ENOSYS)
		check_set(c, DT_CHECK_WARN, "Landlock needs Linux 5.13 or later",
		          "this kernel has no Landlock system calls");
	else if (errno == EOPNOTSUPP)
		check_set(c, DT_CHECK_WARN, "add landlock to the lsm= kernel command line",
		          "Landlock is built in but disabled at boot");
	else
		check_set(c, DT_CHECK_WARN, "a seccomp filter (a sandbox?) may hide it",
		          "landlock_create_ruleset: %s", strerror(errno));
}

/* A child installs an allow-everything filter asking for a listener: the
 * kernel hands back a notification fd only where user notification works. */
static void check_seccomp_notify(struct dt_check *c)
{
	c->name = "seccomp_notify";
	pid_t pid = fork();
	if (pid < 0) {
		check_set(c, DT_CHECK_WARN, NULL, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		struct sock_filter insns[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
		struct sock_fprog prog = {1, insns};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(100 + (errno & 127));
		long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		                  SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		_exit(fd >= 0 ? 0 : errno & 127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (code == 0)
		check_set(c, DT_CHECK_OK, NULL,
		          "a filter with SECCOMP_FILTER_FLAG_NEW_LISTENER returned a listener");
	else if (code < 0)
		check_set(c, DT_CHECK_WARN, NULL, "the test child died (signal %d)", WTERMSIG(st));
	else
		check_set(c, DT_CHECK_WARN,
		          "needs Linux 5.0 or later and a parent sandbox that allows seccomp(2); "
		          "only `run --deny` and exec coverage need it",
		          "%s: %s", code >= 100 ? "PR_SET_NO_NEW_PRIVS" : "seccomp NEW_LISTENER",
		          strerror(code >= 100 ? code - 100 : code));
}

/* The installed Codex against the versions the model was checked
 * against: a newer one may lay out its sandbox differently. */
static void codex_version_verdict(struct dt_check *c, const char *out, const char *path)
{
	char note[512], checked[128] = "";

	dt_codex_version_pick(out, note, sizeof(note));
	for (size_t i = 0; i < dt_ncodex_versions; i++) {
		size_t n = strlen(checked);
		snprintf(checked + n, sizeof(checked) - n, "%s%s", i ? ", " : "",
		         dt_codex_versions[i].name);
	}
	if (!note[0])
		check_set(c, DT_CHECK_OK, NULL,
		          "%s (%s); denytrace's Codex model was checked against Codex %s", out,
		          path, checked);
	else
		check_set(c, DT_CHECK_WARN,
		          "run denytrace doctor --codex-shapes (it compares this Codex with the "
		          "model on every checked launch shape), or install a checked version",
		          "%s (%s): %s; reports may be wrong where Codex %s changed", out, path,
		          note, out);
}

static void check_codex_home(struct dt_check *c)
{
	char tmp[PATH_MAX];
	const char *home = getenv("CODEX_HOME");

	c->name = "codex_home";
	if (dt_codex_home_in_tempdir(home, getenv("TMPDIR"), NULL, tmp, sizeof(tmp)))
		check_set(c, DT_CHECK_WARN, "set CODEX_HOME to a directory outside it",
		          "CODEX_HOME=%s is inside the temporary directory %s: Codex refuses to "
		          "create its helper binaries there and `codex sandbox` fails",
		          home, tmp);
	else
		check_set(c, DT_CHECK_OK, NULL, "%s%s", home && *home ? "CODEX_HOME=" : "",
		          home && *home ? home : "CODEX_HOME unset (~/.codex)");
}

/* The Codex `make codex` installed beside this denytrace (build/codex),
 * for a checkout's denytrace when none is on PATH. Returns 0 or -1. */
static int codex_beside_self(char *out, size_t cap)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	int w = snprintf(out, cap, "%s/codex/node_modules/.bin/codex", self);
	return w > 0 && (size_t)w < cap && access(out, X_OK) == 0 ? 0 : -1;
}

/* Fills path and version (its --version line) when Codex runs. */
static void check_codex(struct dt_check *c, char *path, size_t pathcap, char *version, size_t vcap)
{
	c->name = "codex";
	version[0] = 0;
	if (dt_which("codex", path, pathcap) < 0 && codex_beside_self(path, pathcap) < 0) {
		/* npm -g writes under /usr: an ordinary user cannot */
		check_set(c, DT_CHECK_WARN,
		          "npm install --prefix ~/.local @openai/codex (no root; ~/.local/bin on "
		          "PATH), or make codex in denytrace's checkout; only needed for Codex "
		          "workers",
		          "codex is not on PATH");
		return;
	}
	const char *argv[] = {path, "--version", NULL};
	char out[512], err[512];
	int st = dt_capture(argv, NULL, 10000, out, sizeof(out), err, sizeof(err));
	trim(out);
	trim(err);
	if (st == 0 && out[0]) {
		codex_version_verdict(c, out, path);
		snprintf(version, vcap, "%s", out);
	} else
		check_set(c, DT_CHECK_WARN, "check that node and the codex package are installed",
		          "%s --version %s%s%s", path, st == -2 ? "timed out" : "failed",
		          err[0] ? ": " : "", err);
}

static void shapes_progress(size_t done, size_t n, void *arg)
{
	(void)arg;
	fprintf(stderr, "\rdoctor: Codex launch shapes %zu/%zu", done, n);
	if (done == n)
		fputc('\n', stderr);
}

/* Every checked launch shape on the Codex that check_codex found: 1 when
 * they ran (res filled), 0 when they could not. */
static int check_codex_shapes(struct dt_check *c, const char *codex, const char *version,
                              struct dt_codex_shape_result *res)
{
	char err[512];
	c->name = "codex_shapes";
	if (!version[0]) {
		check_set(c, DT_CHECK_FAIL, "install Codex (see the codex check)",
		          "no Codex that runs: nothing to compare the model with");
		return 0;
	}
	int differ = dt_codex_shapes_check(codex, version, res, isatty(2) ? shapes_progress : NULL,
	                                   NULL, err, sizeof(err));
	if (differ < 0) {
		check_set(c, DT_CHECK_FAIL, NULL, "%s", err);
		return 0;
	}
	size_t not_run = 0;
	for (size_t i = 0; i < dt_ncodex_shapes; i++)
		not_run += res[i].status == DT_SHAPE_NOT_RUN;
	if (differ)
		check_set(
		    c, DT_CHECK_FAIL,
		    "trust Codex's own list (denytrace roots and report show `codex doctor`'s "
		    "read-back beside the model's) and report the shapes to denytrace",
		    "%d of %zu launch shapes differ between %s and denytrace's model "
		    "(listed below)",
		    differ, dt_ncodex_shapes, version);
	else if (not_run)
		check_set(c, DT_CHECK_WARN, NULL,
		          "%zu of %zu launch shapes could not be run (listed below); %s and the "
		          "model agree on the rest",
		          not_run, dt_ncodex_shapes, version);
	else
		check_set(c, DT_CHECK_OK, NULL,
		          "%s and denytrace's model agree on all %zu launch shapes", version,
		          dt_ncodex_shapes);
	return 1;
}

static const char *shape_status(const struct dt_codex_shape_result *r)
{
	return r->status == DT_SHAPE_AGREE    ? "agree"
	       : r->status == DT_SHAPE_DIFFER ? "differ"
	                                      : "not-run";
}

void dt_doctor_shapes_json(struct dt_json *j, const struct dt_codex_shape_result *res)
{
	dt_json_key(j, "codex_shapes");
	dt_json_arr(j);
	for (size_t i = 0; i < dt_ncodex_shapes; i++) {
		dt_json_obj(j);
		dt_json_kstr(j, "id", res[i].shape ? res[i].shape->id : NULL);
		dt_json_kstr(j, "status", shape_status(&res[i]));
		dt_json_kstr(j, "codex", res[i].status == DT_SHAPE_NOT_RUN ? NULL : res[i].codex);
		dt_json_kstr(j, "model", res[i].status == DT_SHAPE_NOT_RUN ? NULL : res[i].model);
		dt_json_kstr(j, "why", res[i].why[0] ? res[i].why : NULL);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

void dt_doctor_shapes_text(const struct dt_codex_shape_result *res)
{
	for (size_t i = 0; i < dt_ncodex_shapes; i++) {
		const struct dt_codex_shape_result *r = &res[i];
		if (r->status == DT_SHAPE_DIFFER)
			printf(
			    "      differ  %s: Codex let it write \"%s\"; the model says \"%s\"\n",
			    r->shape->id, r->codex, r->model);
		else if (r->status == DT_SHAPE_NOT_RUN)
			printf("      not run %s: %s\n", r->shape->id, r->why);
	}
}

/* The checks in order: each fills its place in checks. */
size_t dt_doctor_run(struct dt_check *checks, struct dt_codex_shape_result *shapes, int *shapes_ran)
{
	memset(checks, 0, DT_DOCTOR_NCHECKS * sizeof(*checks));
	check_probe(&checks[0], &checks[1]);
	check_ring(&checks[2]);
	check_bwrap(&checks[3]);
	check_landlock(&checks[4]);
	check_seccomp_notify(&checks[5]);
	char codex[PATH_MAX], codex_version[512];
	check_codex(&checks[6], codex, sizeof(codex), codex_version, sizeof(codex_version));
	check_codex_home(&checks[7]);
	size_t nchecks = DT_DOCTOR_NCHECKS - 1;
	*shapes_ran = 0;
	if (shapes)
		*shapes_ran = check_codex_shapes(&checks[nchecks++], codex, codex_version, shapes);
	return nchecks;
}
