/* SPDX-License-Identifier: MIT */
/*
 * The aarch64 build (make cross-aarch64: $DT_AARCH64_BUILD) run under
 * qemu-user by the native CLI: `denytrace run` with DENYTRACE_PROBE set to
 * the aarch64 probe launches qemu-aarch64-static, which hands LD_PRELOAD
 * and the ring's variables to the aarch64 program it runs. What the probe
 * records there (paths, realpaths, stacks from frame records), and rings
 * read across the two architectures: the same report either way.
 *
 * Without binfmt_misc an aarch64 process cannot exec another aarch64
 * program, so every aarch64 program here is one qemu started from a native
 * process.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

static char ro[600], via[600], scratch[600], xbuild[4096], probe[4200];

static const char *qemu_libc(void)
{
	const char *l = getenv("DT_QEMU_LIBC");
	return l && *l ? l : "/usr/aarch64-linux-gnu";
}

/* qemu's -E for the libc beside qemu_libc()'s ld.so, then extra (may be
 * empty): the loader's own search path, /lib/aarch64-linux-gnu, is not
 * under that prefix, so without it qemu finds the machine's libc6:arm64,
 * another glibc build than the ld.so (threads then hang in pthread_create). */
static const char *qemu_library_path(const char *extra)
{
	static char env[8400];
	snprintf(env, sizeof(env), "LD_LIBRARY_PATH=%s/lib%s%s", qemu_libc(), *extra ? ":" : "",
	         extra);
	return env;
}

static void setup(void)
{
	const char *b = getenv("DT_AARCH64_BUILD");
	if (!realpath(b && *b ? b : "build-aarch64", xbuild))
		xbuild[0] = 0;
	snprintf(probe, sizeof(probe), "%s/libdenytrace.so", xbuild);
	/* root is refused nothing by mode bits: the programs run as nobody */
	chmod(dtt_tmpdir(), 0755);
	snprintf(ro, sizeof(ro), "%s/ro", dtt_tmpdir());
	snprintf(via, sizeof(via), "%s/via", dtt_tmpdir());
	snprintf(scratch, sizeof(scratch), "%s/scratch", dtt_tmpdir());
	mkdir(scratch, 0777);
	chmod(scratch, 0777); /* nobody writes what its stack used there */
	mkdir(ro, 0755);
	char p[700];
	snprintf(p, sizeof(p), "%s/existing", ro);
	close(open(p, O_WRONLY | O_CREAT, 0644));
	chmod(ro, 0555);
	/* the programs name paths through a link: the realpath differs */
	if (symlink(ro, via) != 0)
		via[0] = 0;
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(aarch64, .init = setup, .fini = teardown, .timeout = 300);

static void need_aarch64_build(void)
{
	if (access(probe, R_OK) != 0)
		cr_skip_test("no aarch64 build (make cross-aarch64 builds one): %s", probe);
}

/* argv: as nobody when root, then qemu running the aarch64 program
 * xbuild/prog with args (NULL-terminated). */
static void aarch64_argv(const char **argv, const char *prog, const char *const *args)
{
	static char path[4300];
	size_t k = 0;
	if (geteuid() == 0) {
		static const char *const drop[] = {"setpriv", "--reuid=65534", "--regid=65534",
		                                   "--clear-groups"};
		for (size_t i = 0; i < 4; i++)
			argv[k++] = drop[i];
	}
	snprintf(path, sizeof(path), "%s/%s", xbuild, prog);
	argv[k++] = "qemu-aarch64-static";
	argv[k++] = "-L";
	argv[k++] = qemu_libc();
	argv[k++] = "-E";
	argv[k++] = qemu_library_path("");
	argv[k++] = path;
	for (size_t i = 0; args[i] && k < 31; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
}

/* The aarch64 program under the native `denytrace run` and the aarch64
 * probe; r holds the ring's records. */
static void run_aarch64(struct dtt_run *r, const char *prog, const char *const *args)
{
	const char *argv[32];
	aarch64_argv(argv, prog, args);
	char env_probe[4300];
	snprintf(env_probe, sizeof(env_probe), "DENYTRACE_PROBE=%s", probe);
	const char *env[] = {env_probe, NULL};
	cr_assert_eq(dtt_run(r, NULL, argv, env), 0, "%s: ring unreadable: %s", prog, r->out);
}

/* The refusal of op whose first path is via/leaf: recorded with the path
 * as given and the realpath through the link, errno EACCES. */
static void expect_refusal(const struct dtt_run *r, const char *op, const char *leaf)
{
	char abs[700], real[700];
	snprintf(abs, sizeof(abs), "%s/%s", via, leaf);
	snprintf(real, sizeof(real), "%s/%s", ro, leaf);
	const struct dt_record *d = dtt_find(r, DT_REC_DENIAL, op, real);
	cr_assert_not_null(d, "no %s refusal of %s recorded on aarch64: %s", op, real, r->out);
	cr_expect_str_eq(d->p[0].abspath, abs);
	cr_expect_str_eq(d->p[0].realpath, real);
	cr_expect_eq(d->err, EACCES, "%s: errno %d", op, d->err);
}

static void refuse_on_aarch64(struct dtt_run *r, const char *const *callall_args, const char *op,
                              const char *leaf)
{
	run_aarch64(r, "helpers/callall", callall_args);
	cr_assert(strstr(r->out, "errno=EACCES"), "%s was not refused: %s", op, r->out);
	expect_refusal(r, op, leaf);
}

Test(aarch64, refused_open_rename_unlink_and_mkdir_are_recorded_with_path_and_realpath)
{
	need_aarch64_build();
	char created[700], existing[700], renamed[700], dir[700];
	snprintf(created, sizeof(created), "%s/created", via);
	snprintf(existing, sizeof(existing), "%s/existing", via);
	snprintf(renamed, sizeof(renamed), "%s/renamed", via);
	snprintf(dir, sizeof(dir), "%s/dir", via);
	struct dtt_run r;
	const char *open_args[] = {"open", created, "O_WRONLY|O_CREAT", "0644", NULL};
	refuse_on_aarch64(&r, open_args, "open", "created");
	dtt_free(&r);
	const char *rename_args[] = {"rename", existing, renamed, NULL};
	refuse_on_aarch64(&r, rename_args, "rename", "existing");
	const struct dt_record *d = dtt_find(&r, DT_REC_DENIAL, "rename", NULL);
	char real2[700];
	snprintf(real2, sizeof(real2), "%s/renamed", ro);
	cr_expect_str_eq(d->p[1].realpath, real2, "rename's second path");
	dtt_free(&r);
	const char *unlink_args[] = {"unlink", existing, NULL};
	refuse_on_aarch64(&r, unlink_args, "unlink", "existing");
	dtt_free(&r);
	const char *mkdir_args[] = {"mkdir", dir, "0755", NULL};
	refuse_on_aarch64(&r, mkdir_args, "mkdir", "dir");
	dtt_free(&r);
}

/* "module+offset" words of the first refusal under ro, its op first. */
static int probe_stack(const struct dtt_run *r, char *s, size_t cap, int *truncated)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *d = &r->recs[i];
		if (d->type != DT_REC_DENIAL || !d->p[0].abspath ||
		    strncmp(d->p[0].abspath, ro, strlen(ro)))
			continue;
		size_t len = (size_t)snprintf(s, cap, "%s:", d->op);
		for (size_t f = 0; f < d->nframes && len < cap; f++) {
			const char *mod = d->frames[f].module < d->nmodules
			                      ? d->modules[d->frames[f].module]
			                      : "?";
			const char *base = strrchr(mod, '/');
			len +=
			    (size_t)snprintf(s + len, cap - len, " %s+%llx", base ? base + 1 : mod,
			                     (unsigned long long)d->frames[f].offset);
		}
		*truncated = d->stack_trunc;
		return 0;
	}
	return -1;
}

/* Words first+1 .. first+n of a space-separated list (word 0 the label). */
static void words_from(const char *s, size_t first, size_t n, char *out, size_t cap)
{
	out[0] = 0;
	const char *p = s;
	for (size_t i = 0; i < first && p; i++)
		p = strchr(p + 1, ' ');
	for (size_t i = 0; i < n && p; i++) {
		const char *e = strchr(p + 1, ' ');
		size_t len = e ? (size_t)(e - p) : strcspn(p, "\n");
		size_t have = strlen(out);
		snprintf(out + have, cap - have, "%.*s", (int)len, p);
		p = e;
	}
}

/* stackshapes plain: main -> a -> b -> refuse -> open. Past refuse (whose
 * own return address differs: the probe's is after open, libgcc's after
 * the call that asked it), b, a and main are where libgcc, asked in the
 * program, found them. */
Test(aarch64, a_three_deep_stack_is_the_one_libgcc_sees)
{
	need_aarch64_build();
	struct dtt_run r;
	const char *args[] = {"plain", ro, NULL};
	run_aarch64(&r, "helpers/stackshapes", args);
	static char got[4096], gcc[4096], want[4096], line[4096];
	int truncated = 0;
	cr_assert_eq(probe_stack(&r, got, sizeof(got), &truncated), 0, "no refusal: %s", r.out);
	const char *l = strstr(r.out, "libgcc plain:");
	cr_assert_not_null(l, "the program printed no libgcc stack: %s", r.out);
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(l, "\n"), l);
	/* the probe's words: op, refuse, b, a, main; libgcc's: "libgcc",
	 * "plain:", refuse, b, a, main */
	words_from(got, 2, 3, want, sizeof(want));
	words_from(line, 3, 3, gcc, sizeof(gcc));
	cr_expect_str_eq(want, gcc, "the probe's stack %s differs from libgcc's %s", got, line);
	cr_expect_not(truncated, "the stack was cut: %s", got);
	dtt_free(&r);
}

/* cmd's stdout (stderr dropped) into out; its exit status. */
static int stdout_of(const char *const *cmd, char *out, size_t cap)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 2);
		close(p[0]);
		execvp(cmd[0], (char *const *)cmd);
		_exit(127);
	}
	close(p[1]);
	size_t len = 0;
	ssize_t n;
	while ((n = read(p[0], out + len, cap - 1 - len)) > 0 && len < cap - 1)
		len += (size_t)n;
	out[len] = 0;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `denytrace WHAT ARG ring` from the native CLI and from the aarch64 CLI
 * under qemu (with the libraries of $DT_AARCH64_LIBS, libdw's among them:
 * it names a stack's functions): the same output. */
static void expect_same_output(const char *what, const char *arg, const char *ring)
{
	static char native[262144], arm[262144], cli[4300];
	char native_cli[4200];
	snprintf(native_cli, sizeof(native_cli), "%s/denytrace", dtt_build());
	snprintf(cli, sizeof(cli), "%s/denytrace", xbuild);
	const char *l = getenv("DT_AARCH64_LIBS");
	const char *libs = qemu_library_path(l ? l : "");
	const char *n_argv[] = {native_cli, what, arg, ring, NULL};
	const char *a_argv[] = {
	    "qemu-aarch64-static", "-L", qemu_libc(), "-E", libs, cli, what, arg, ring, NULL};
	int ns = stdout_of(n_argv, native, sizeof(native));
	int as = stdout_of(a_argv, arm, sizeof(arm));
	cr_assert_eq(ns, 0, "native %s failed (%d): %s", what, ns, native);
	cr_assert_eq(as, 0, "aarch64 %s failed (%d): %s", what, as, arm);
	cr_expect_str_eq(arm, native, "the two architectures' %s %s of %s differ", what, arg, ring);
}

/* The findings (report --json) and every record's fields (show --jsonl,
 * the stack's function names included): the same from either CLI. */
static void expect_same_report(const char *ring)
{
	expect_same_output("report", "--json", ring);
	expect_same_output("show", "--jsonl", ring);
}

/* Open flags aarch64 numbers differently from x86_64 (O_NOFOLLOW,
 * O_DIRECTORY...) among them: the report names them the same. */
static const char *const portable_open[] = {"open", NULL, "O_WRONLY|O_CREAT|O_NOFOLLOW", "0644",
                                            NULL};

Test(aarch64, a_ring_written_on_aarch64_reads_the_same_on_x86_64)
{
	need_aarch64_build();
	char created[700];
	snprintf(created, sizeof(created), "%s/created", via);
	const char *args[5];
	memcpy(args, portable_open, sizeof(args));
	args[1] = created;
	struct dtt_run r;
	refuse_on_aarch64(&r, args, "open", "created");
	const struct dt_record *d = dtt_find(&r, DT_REC_DENIAL, "open", "/ro/created");
	cr_expect(d->has_flags && (d->flags & O_NOFOLLOW) && !(d->flags & O_DIRECTORY),
	          "flags %#llx are not O_WRONLY|O_CREAT|O_NOFOLLOW as x86_64 numbers them",
	          (unsigned long long)d->flags);
	expect_same_report(r.ring);
	dtt_free(&r);
}

Test(aarch64, a_ring_written_on_x86_64_reads_the_same_on_aarch64)
{
	need_aarch64_build();
	char created[700];
	snprintf(created, sizeof(created), "%s/created", via);
	const char *cmd[8], *argv[12];
	size_t k = 0;
	cmd[k++] = dtt_helper("callall");
	for (size_t i = 0; portable_open[i] || i == 1; i++)
		cmd[k++] = i == 1 ? created : portable_open[i];
	cmd[k] = NULL;
	dtt_as_nobody(argv, 12, cmd);
	struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, NULL), 0, "ring unreadable: %s", r.out);
	cr_assert_not_null(dtt_find(&r, DT_REC_DENIAL, "open", "/ro/created"), "%s", r.out);
	expect_same_report(r.ring);
	dtt_free(&r);
}

/* stackshapes badfp: a frame record names a caller's record at the top of
 * the address space. The walk stops there, the stack marked cut, and the
 * program runs as it does without the probe. */
Test(aarch64, a_frame_record_chain_that_leaves_the_stack_cuts_the_stack_and_nothing_else)
{
	need_aarch64_build();
	struct dtt_run r;
	const char *args[] = {"badfp", ro, NULL};
	run_aarch64(&r, "helpers/stackshapes", args);
	cr_assert_eq(r.status, 0, "the program did not run as it does without the probe: %s",
	             r.out);
	const struct dt_record *d = dtt_find(&r, DT_REC_DENIAL, NULL, "/ro/badfp");
	cr_assert_not_null(d, "no refusal of badfp recorded: %s", r.out);
	cr_expect(d->stack_trunc, "a stack through a bogus frame record is not marked cut");
	/* refuse and refuse_badfp, at least, before the bogus record */
	cr_expect_geq(d->nframes, 2, "%zu frames", (size_t)d->nframes);
	dtt_free(&r);
}

/* The bytes of the host's stack the probe may take on a refusal, as on
 * x86_64 (tests/integration/test_smallstack.c). */
#define PROBE_STACK_MAX 2048

/* smallstack args on aarch64, without the probe and with it: the same
 * status and output, the refusal of leaf recorded, and the bytes of the
 * host's stack the probe added returned. */
static long aarch64_probe_stack(const char *const *args, const char *leaf)
{
	char measure[700], env_used[760], env_probe[4300];
	snprintf(measure, sizeof(measure), "%s/used", scratch);
	snprintf(env_used, sizeof(env_used), "SMALLSTACK_USED=%s", measure);
	snprintf(env_probe, sizeof(env_probe), "DENYTRACE_PROBE=%s", probe);
	const char *argv[32];
	aarch64_argv(argv, "helpers/smallstack", args);

	const char *plain_env[] = {env_used, NULL};
	static char plain[65536];
	int status = dtt_system(plain, sizeof(plain), argv, plain_env);
	long without = dtt_take_number(measure);
	cr_assert_eq(status, 0, "smallstack %s fails without the probe: %s", args[0], plain);
	cr_assert_gt(without, 0, "smallstack %s: no measure", args[0]);

	const char *env[] = {env_used, env_probe, NULL};
	static struct dtt_run r;
	cr_assert_eq(dtt_run(&r, NULL, argv, env), 0, "ring unreadable: %s", r.out);
	long with = dtt_take_number(measure);
	cr_assert_eq(r.status, status, "smallstack %s: exit %d under the probe: %s", args[0],
	             r.status, r.out);
	cr_expect(strstr(r.out, plain) != NULL, "smallstack %s: the output differs: %s", args[0],
	          r.out);
	cr_expect_eq(dtt_count(&r, DT_REC_DENIAL, "open", leaf), 1, "smallstack %s: not recorded",
	             args[0]);
	dtt_free(&r);
	cr_assert_gt(with, 0);
	cr_log_info("aarch64 smallstack %s: %ld bytes of stack without the probe, %ld with",
	            args[0], without, with);
	return with - without;
}

/* The process's first refusal, in a SIGTERM handler on an 8 KiB signal
 * stack: the probe builds the record on a stack of its own, as on x86_64
 * (it took some 6 KiB of the handler's before: a malloc'ed signal stack
 * then overflows into the heap below it, silently). */
Test(aarch64, a_first_refusal_in_a_handler_on_an_8_kib_signal_stack_takes_little_of_it)
{
	need_aarch64_build();
	const char *args[] = {"altstack", "8192", ro, NULL};
	long added = aarch64_probe_stack(args, "/altstack");
	cr_expect_leq(added, PROBE_STACK_MAX, "the probe took %ld bytes of the handler's stack",
	              added);
}

Test(aarch64, a_refusal_on_a_pthread_stack_min_thread_takes_little_of_its_stack)
{
	need_aarch64_build();
	const char *args[] = {"min", ro, NULL};
	long added = aarch64_probe_stack(args, "/min");
	cr_expect_leq(added, PROBE_STACK_MAX, "the probe took %ld bytes of the thread's stack",
	              added);
}
