/* SPDX-License-Identifier: MIT */
/* The launch file fix --verify trusts (launchfile.h). */
#include "launchfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fix.h"
#include "ringfile.h"
#include "roots.h"
#include "secrets.h"

#define LAUNCH_MAGIC "denytrace-launch"
#define LAUNCH_FORMAT "2"
/* far above any argv the ring keeps (8 KiB) */
#define LAUNCH_MAX_BYTES (1u << 20)

#define LAUNCH_BASES 3

/* The places a launch file may go, best first: $XDG_STATE_HOME,
 * ~/.local/state (the XDG default), $XDG_RUNTIME_DIR; each once. Returns
 * how many. */
static size_t launch_bases(char bases[LAUNCH_BASES][PATH_MAX])
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	const char *run = getenv("XDG_RUNTIME_DIR");
	char cand[LAUNCH_BASES][PATH_MAX] = {""};
	if (xdg && xdg[0] == '/')
		snprintf(cand[0], PATH_MAX, "%s", xdg);
	if (home && home[0] == '/')
		snprintf(cand[1], PATH_MAX, "%s/.local/state", home);
	if (run && run[0] == '/')
		snprintf(cand[2], PATH_MAX, "%s", run);
	size_t n = 0;
	for (size_t i = 0; i < LAUNCH_BASES; i++) {
		int seen = !cand[i][0];
		for (size_t k = 0; k < n && !seen; k++)
			seen = !strcmp(bases[k], cand[i]);
		if (!seen)
			memcpy(bases[n++], cand[i], PATH_MAX);
	}
	return n;
}

int dt_launchfile_dir(char *out, size_t cap)
{
	char bases[LAUNCH_BASES][PATH_MAX];
	if (!launch_bases(bases))
		return -1;
	return snprintf(out, cap, "%s/denytrace/launches", bases[0]) < (int)cap ? 0 : -1;
}

/* The workspace Codex's argv (from its program word) names with -C DIR,
 * --cd DIR or --cd=DIR, else NULL. */
static const char *codex_cd(const char *const *argv)
{
	for (size_t i = 1; argv[i] && strcmp(argv[i], "--"); i++) {
		if ((!strcmp(argv[i], "-C") || !strcmp(argv[i], "--cd")) && argv[i + 1])
			return argv[i + 1];
		if (!strncmp(argv[i], "--cd=", 5))
			return argv[i] + 5;
	}
	return NULL;
}

/* Programs that start a sandbox of their own whose writable places this
 * launcher does not read from their command line (bwrap and Codex it
 * reads): the traced program may write anywhere the user can, its launch
 * file included. Hermes and hcom start Codex themselves. */
static const char *const unread_sandboxes[] = {
    "bwrap",        "firejail", "nsjail", "minijail0", "landrun", "systemd-run", "flatpak-spawn",
    "sandbox-exec", "docker",   "podman", "hermes",    "hcom",    NULL};

static int names_unread_sandbox(const char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
		for (size_t k = 0; unread_sandboxes[k]; k++)
			if (!strcmp(base, unread_sandboxes[k]))
				return 1;
	}
	return 0;
}

static int asks_full_access(const char *const *argv)
{
	for (size_t i = 0; argv[i]; i++)
		if (strstr(argv[i], "danger-full-access") ||
		    strstr(argv[i], "dangerously-bypass") || strstr(argv[i], "permissions"))
			return 1;
	return 0;
}

/* What the Codex command line argv (its program word first) grants as the
 * model reads it with the config files as they are now, before Codex
 * starts: the workspace-write lower bound plus every writable root its
 * layers keep, or "/" when its sandbox mode is not one the model bounds.
 * The paths live in a rootset of this module's own, kept until the next
 * call (one launch per process). */
static int codex_writable(const char *const *argv, size_t argc, const char *cwd, const char **out,
                          size_t cap)
{
	static struct dt_rootset rs;
	const char *cd = codex_cd(argv), *tmpdir = getenv("TMPDIR");
	struct dt_codex_launch l = {.argv = argv,
	                            .argc = argc,
	                            .cwd = cwd,
	                            .home = getenv("HOME"),
	                            .codex_home = getenv("CODEX_HOME"),
	                            .tmpdir = tmpdir};
	char err[512];
	size_t n = 0;
	dt_rootset_free(&rs);
	int read = dt_roots_from_codex(&rs, &l, NULL, err, sizeof(err)) == 0;
	const char *mode = rs.codex_sandbox_mode;
	/* A command line the model says Codex refuses (checked against both
	 * binaries: exit 1 before it starts anything) has no mode; nothing of
	 * it runs to write, so the lower bound will do, unless a word asks
	 * for full access should the model be wrong. */
	if (!mode && rs.codex_refused && !asks_full_access(argv))
		mode = "read-only";
	if (!read || !mode || (strcmp(mode, "read-only") && strcmp(mode, "workspace-write")) ||
	    rs.codex_permission_profile) {
		out[n++] = "/";
		return (int)n;
	}
	out[n++] = cwd; /* with -C too: caution only moves the launch file further */
	if (cd)
		out[n++] = cd;
	out[n++] = "/tmp";
	if (tmpdir && *tmpdir)
		out[n++] = tmpdir;
	for (size_t i = 0; i < rs.n && n < cap; i++) {
		const struct dt_root *r = &rs.v[i];
		if (r->kind == DT_ROOT_CODEX && !r->readonly_sub && !r->dropped_by &&
		    r->granted != 0)
			out[n++] = r->path;
	}
	return n < cap ? (int)n : -1;
}

/* PATH of a landlock-run --rule PATH=RIGHTS, kept until the next call
 * of landlock_run_writable (the launcher's out array borrows it). */
static const char *rule_path(const char *rule, size_t k)
{
	static char *kept[64];
	if (k >= sizeof(kept) / sizeof(kept[0]))
		return "/"; /* more rules than kept: fail closed */
	free(kept[k]);
	const char *eq = strrchr(rule, '=');
	kept[k] = strndup(rule, eq ? (size_t)(eq - rule) : strlen(rule));
	return kept[k] ? kept[k] : "/";
}

/* The paths landlock-run (the Landlock launcher fix writes rules for) as
 * the command itself lets its command write: each --rw and --rule PATH;
 * -1 for another command or an option it does not read. */
static int landlock_run_writable(const char *const *argv, const char **out, size_t cap)
{
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	if (strcmp(prog, "landlock-run"))
		return -1;
	size_t n = 0, i = 1, nrules = 0;
	for (; argv[i] && strcmp(argv[i], "--") && n < cap; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--ro-everything") || !strcmp(a, "--no-refer"))
			continue;
		if (!strncmp(a, "--rw=", 5))
			out[n++] = a + 5;
		else if ((!strcmp(a, "--rw") || !strcmp(a, "--rule") || !strcmp(a, "--abi")) &&
		         argv[i + 1])
			i++; /* its value, below */
		else
			return -1;
		if (!strcmp(a, "--rw"))
			out[n++] = argv[i];
		if (!strcmp(a, "--rule")) /* PATH=RIGHTS: any right counts as writing */
			out[n++] = rule_path(argv[i], nrules++);
	}
	return argv[i] && n < cap ? (int)n : -1;
}

int dt_launch_writable(const char *const *argv, const char *cwd, const char **out, size_t cap)
{
	size_t argc = 0;
	while (argv[argc])
		argc++;
	int n = dt_bwrap_writable_sources(argv, argc, out, cap);
	if (n < 0 && argc)
		n = landlock_run_writable(argv, out, cap);
	if (n >= 0 || cap < 6)
		return n;
	long at = dt_argv_find_codex(argv, argc);
	if (at >= 0 && !names_unread_sandbox(argv + at + 1))
		n = codex_writable(argv + at, argc - (size_t)at, cwd, out, cap);
	if (n < 0 && names_unread_sandbox(argv)) {
		out[0] = "/"; /* fail closed: no place is out of its reach */
		n = 1;
	}
	return n;
}

/* Could a command that writes the host paths writable write the
 * directory base/denytrace/name, or anything in it? */
static int denytrace_dir_exposed(const char *base, const char *name, const char *const *writable)
{
	char dir[PATH_MAX + 32], real[PATH_MAX], realdir[PATH_MAX + 32] = "";
	snprintf(dir, sizeof(dir), "%s/denytrace/%s", base, name);
	if (realpath(base, real))
		snprintf(realdir, sizeof(realdir), "%s/denytrace/%s", real, name);
	for (size_t i = 0; writable[i]; i++) {
		char w[PATH_MAX];
		const char *rw = realpath(writable[i], w) ? w : writable[i];
		const char *paths[] = {writable[i], rw};
		for (size_t k = 0; k < 2; k++)
			if (dt_path_under(dir, paths[k]) || dt_path_under(paths[k], dir) ||
			    (realdir[0] && (dt_path_under(realdir, paths[k]) ||
			                    dt_path_under(paths[k], realdir))))
				return 1;
	}
	return 0;
}

/* ... the launches directory under base. */
static int launch_dir_exposed(const char *base, const char *const *writable)
{
	return denytrace_dir_exposed(base, "launches", writable);
}

/* mkdir -p, 0700 for what it creates (the XDG base directory's mode). */
static void mkdir_parents(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0700);
			*s = '/';
		}
	mkdir(p, 0700);
}

/* Opens name under dirfd as a directory of the caller's that nobody else
 * can write, without following a symbolic link. Returns the fd or -1. */
static int open_private(int dirfd, const char *name, int create, char *why, size_t cap)
{
	if (create && mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST) {
		snprintf(why, cap, "cannot create %s: %s", name, strerror(errno));
		return -1;
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(why, cap, "%s: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(why, cap, "%s is not a private directory of uid %u (owner %u, mode %04o)",
		         name, (unsigned)geteuid(), (unsigned)st.st_uid,
		         (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	return fd;
}

/* The launches directory, opened step by step below base. Returns an fd,
 * or -1 with why set. */
static int open_launches(const char *base, int create, char *why, size_t cap)
{
	if (create)
		mkdir_parents(base);
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, cap, "%s: %s", base, strerror(errno));
		return -1;
	}
	static const char *const steps[] = {"denytrace", "launches"};
	for (size_t i = 0; fd >= 0 && i < 2; i++) {
		int next = open_private(fd, steps[i], create, why, cap);
		close(fd);
		fd = next;
	}
	return fd;
}

static void hex(char *out, const uint8_t *id)
{
	for (size_t i = 0; i < DT_RUN_ID_LEN; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
}

static void file_name(char *out, size_t cap, const uint8_t *id)
{
	char h[2 * DT_RUN_ID_LEN + 1];
	hex(h, id);
	snprintf(out, cap, "%s.launch", h);
}

/* One argv word with its secrets redacted, as the ring keeps it. */
static void put_word_redacted(FILE *f, const char *w, int *expect)
{
	size_t n = strlen(w), cap = 2 * n + 64;
	char *out = malloc(cap);
	size_t len = out ? dt_redact_arg(w, n, out, cap, expect) : 0;
	if (out && len <= cap)
		fwrite(out, 1, len, f);
	else
		fputs("<redacted>", f); /* never the word itself */
	fputc(0, f);
	free(out);
}

/* The count, then each entry as the ring's launch record keeps it (a
 * secret-named one dropped). */
static void put_env_redacted(FILE *f, char *const *env)
{
	char *kept = NULL;
	size_t len = 0, n = 0;
	FILE *m = open_memstream(&kept, &len);
	for (size_t i = 0; m && env && env[i]; i++) {
		size_t el = strlen(env[i]), cap = 2 * el + 64;
		char *buf = malloc(cap);
		size_t need = buf ? dt_redact_env(env[i], el, buf, cap) : 0;
		if (need && need <= cap) {
			fwrite(buf, 1, need, m);
			fputc(0, m);
			n++;
		}
		free(buf);
	}
	if (m && fclose(m) == 0) {
		fprintf(f, "%zu%c", n, 0);
		fwrite(kept, 1, len, f);
	} else {
		fprintf(f, "0%c", 0);
	}
	free(kept);
}

static void digest_str(struct dt_sha256 *s, const char *v, size_t len)
{
	uint64_t n = v ? (uint64_t)len + 1 : 0; /* 0: absent, told from "" */
	dt_sha256_update(s, &n, sizeof(n));
	if (v)
		dt_sha256_update(s, v, len);
}

void dt_launch_config_digest(const struct dt_record *c, uint8_t out[DT_SHA256_LEN])
{
	struct dt_sha256 s;
	dt_sha256_init(&s);
	const char *strs[] = {c->cfg_role, c->cfg_path, c->cfg_profile, c->cfg_version};
	for (size_t i = 0; i < sizeof(strs) / sizeof(*strs); i++)
		digest_str(&s, strs[i], strs[i] ? strlen(strs[i]) : 0);
	digest_str(&s, c->cfg_text, c->cfg_len);
	uint64_t nums[] = {c->cfg_size, (uint64_t)c->cfg_trunc, (uint64_t)c->cfg_errno};
	dt_sha256_update(&s, nums, sizeof(nums));
	dt_sha256_final(&s, out);
}

static void put_config_digests(FILE *f, const struct dt_launch_info *li)
{
	fprintf(f, "%zu%c", li->nconfigs, 0);
	for (size_t i = 0; i < li->nconfigs; i++) {
		for (size_t k = 0; k < DT_SHA256_LEN; k++)
			fprintf(f, "%02x", li->configs[i][k]);
		fputc(0, f);
	}
}

static char *launch_bytes(const struct dt_launch_info *li, size_t *len)
{
	char *buf = NULL, h[2 * DT_RUN_ID_LEN + 1];
	FILE *f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	size_t argc = 0;
	while (li->argv[argc])
		argc++;
	hex(h, li->run_id);
	fprintf(f, "%s%c%s%c%s%c%llu%c%llu%c%s%c%s%c%zu%c", LAUNCH_MAGIC, 0, LAUNCH_FORMAT, 0, h, 0,
	        (unsigned long long)li->dev, 0, (unsigned long long)li->ino, 0, li->via, 0, li->cwd,
	        0, argc, 0);
	int expect = 0;
	for (size_t i = 0; i < argc; i++)
		put_word_redacted(f, li->argv[i], &expect);
	put_env_redacted(f, li->env);
	put_config_digests(f, li);
	if (li->ring)
		fprintf(f, "%s%c", li->ring, 0);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The launches directory the launch file goes to: in the first place the
 * command cannot write (launchfile.h). Returns an fd, or -1 with why set. */
static int open_launches_sealed(const struct dt_launch_info *li, char *why, size_t cap)
{
	char bases[LAUNCH_BASES][PATH_MAX];
	size_t n = launch_bases(bases);
	snprintf(why, cap, "neither XDG_STATE_HOME, HOME nor XDG_RUNTIME_DIR is an absolute path");
	for (size_t i = 0; i < n; i++) {
		if (launch_dir_exposed(bases[i], li->writable)) {
			snprintf(why, cap, "the command's sandbox can write %s", bases[i]);
			continue;
		}
		/* made once: the three mkdir of its parents cost every run a
		 * few system calls for nothing */
		int dfd = open_launches(bases[i], 0, why, cap);
		if (dfd < 0)
			dfd = open_launches(bases[i], 1, why, cap);
		if (dfd >= 0)
			return dfd;
	}
	return -1;
}

int dt_launchfile_write(const struct dt_launch_info *li, char *why, size_t whycap)
{
	char name[64];
	file_name(name, sizeof(name), li->run_id);
	if (!li->writable) {
		/* it could write any place of ours, and so any launch file: one
		 * there would prove nothing, and readers take one for such a
		 * launch as planted (launch_claim_fits) */
		snprintf(why, whycap, "the command has no sandbox denytrace reads");
		return -1;
	}
	int dfd = open_launches_sealed(li, why, whycap);
	if (dfd < 0)
		return -1;
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int e = errno;
	close(dfd);
	if (fd < 0) {
		snprintf(why, whycap, "%s: %s", name, strerror(e));
		return -1;
	}
	size_t len = 0;
	char *buf = launch_bytes(li, &len);
	int ok = buf && write(fd, buf, len) == (ssize_t)len;
	free(buf);
	if (close(fd) != 0 || !ok) {
		snprintf(why, whycap, "%s: cannot write it", name);
		return -1;
	}
	return 0;
}

/* n more strings of lf->buf from *at into v (*nv of them). Returns 0, or
 * -1 when the file ends first. */
static int launch_strings(const struct dt_launchfile *lf, size_t len, size_t *at, const char **v,
                          size_t n, size_t *nv)
{
	for (size_t i = 0; i < n; i++) {
		if (*at >= len)
			return -1;
		v[(*nv)++] = lf->buf + *at;
		*at += strnlen(lf->buf + *at, len - *at) + 1;
	}
	return 0;
}

/* The count of config digests and the digests, from *at. 0 or -1. */
static int launch_parse_configs(struct dt_launchfile *lf, size_t len, size_t *at)
{
	if (*at >= len)
		return -1;
	unsigned long long n = strtoull(lf->buf + *at, NULL, 10);
	*at += strnlen(lf->buf + *at, len - *at) + 1;
	lf->configs = n <= DT_LAUNCH_CONFIGS_MAX ? calloc(n + 1, sizeof(*lf->configs)) : NULL;
	if (!lf->configs)
		return -1;
	return launch_strings(lf, len, at, lf->configs, n, &lf->nconfigs);
}

/* The file's NUL-terminated strings, in order, into lf. Returns 0, or -1
 * when it is not a launch file of this format. */
static int launch_parse(struct dt_launchfile *lf, size_t len, const char *idhex, uint64_t dev,
                        uint64_t ino, char *why, size_t cap)
{
	const char *f[8];
	size_t at = 0, nf = 0;
	while (nf < 8 && at < len) {
		f[nf++] = lf->buf + at;
		at += strnlen(lf->buf + at, len - at) + 1;
	}
	char *end;
	unsigned long long argc = nf == 8 ? strtoull(f[7], &end, 10) : 0;
	if (nf < 8 || at > len || strcmp(f[0], LAUNCH_MAGIC) || strcmp(f[1], LAUNCH_FORMAT) ||
	    argc == 0 || argc > len) {
		snprintf(why, cap, "%s is not a launch file this denytrace reads", lf->path);
		return -1;
	}
	if (strcmp(f[2], idhex) || strtoull(f[3], NULL, 10) != dev ||
	    strtoull(f[4], NULL, 10) != ino) {
		snprintf(why, cap, "%s was written for another ring", lf->path);
		return -1;
	}
	lf->via = f[5];
	lf->cwd = f[6];
	lf->argv = calloc(argc + 1, sizeof(*lf->argv));
	if (!lf->argv || launch_strings(lf, len, &at, lf->argv, argc, &lf->argc) < 0) {
		snprintf(why, cap, "%s is cut short", lf->path);
		return -1;
	}
	unsigned long long nenv = at < len ? strtoull(lf->buf + at, &end, 10) : len;
	at += at < len ? strnlen(lf->buf + at, len - at) + 1 : 0;
	lf->env = nenv < len ? calloc(nenv + 1, sizeof(*lf->env)) : NULL;
	if (!lf->env || launch_strings(lf, len, &at, lf->env, nenv, &lf->nenv) < 0 ||
	    launch_parse_configs(lf, len, &at) < 0) {
		snprintf(why, cap, "%s is cut short", lf->path);
		return -1;
	}
	return 0;
}

/* Reads the launch file name under dfd into lf->buf: a regular file of
 * the caller's, 0600 or narrower, bounded. Returns its length or -1. */
static long launch_read(int dfd, const char *name, struct dt_launchfile *lf, char *why, size_t cap)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(why, cap, "no launch file %s (%s)", lf->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) ||
	    st.st_size <= 0 || st.st_size > LAUNCH_MAX_BYTES) {
		snprintf(why, cap, "%s is not a private regular file of uid %u of at most %u bytes",
		         lf->path, (unsigned)geteuid(), LAUNCH_MAX_BYTES);
		close(fd);
		return -1;
	}
	lf->buf = malloc((size_t)st.st_size + 1);
	ssize_t got = lf->buf ? read(fd, lf->buf, (size_t)st.st_size) : -1;
	close(fd);
	if (got != st.st_size) {
		snprintf(why, cap, "cannot read %s", lf->path);
		return -1;
	}
	lf->buf[got] = 0;
	return (long)got;
}

/* The ring's run id, device and inode. Returns 0, 1 when it has no run
 * id, -1 when it cannot be read (why set). */
static int ring_identity(const char *ring_path, uint8_t *id, uint64_t *dev, uint64_t *ino,
                         char *why, size_t cap)
{
	struct dt_ringfile rf;
	struct stat st;
	if (dt_ringfile_open(ring_path, &rf, why, cap) != 0)
		return -1;
	memcpy(id, rf.ring.hdr->run_id, DT_RUN_ID_LEN);
	int ok = fstat(rf.fd, &st) == 0;
	dt_ringfile_close(&rf);
	if (!ok) {
		snprintf(why, cap, "%s: %s", ring_path, strerror(errno));
		return -1;
	}
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	static const uint8_t none[DT_RUN_ID_LEN];
	return memcmp(id, none, DT_RUN_ID_LEN) == 0;
}

/* The launches directory holding name, when exactly one of the places a
 * launch file may go holds one (launchfile.h); lf->path set to it. Returns
 * an fd, or -1 with why set. */
static int open_launches_holding(const char *name, struct dt_launchfile *lf, char *why, size_t cap)
{
	char bases[LAUNCH_BASES][PATH_MAX], first[PATH_MAX + 128] = "";
	size_t n = launch_bases(bases), found = 0;
	int dfd = -1;
	for (size_t i = 0; i < n; i++) {
		char skip[256];
		struct stat st;
		int fd = open_launches(bases[i], 0, skip, sizeof(skip));
		if (fd < 0 || fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (found++) {
			snprintf(why, cap,
			         "%s and %s/denytrace/launches/%s are both launch files of this "
			         "ring: the launcher wrote one where the command could not write, "
			         "the traced program the other",
			         first, bases[i], name);
			close(fd);
			close(dfd);
			return -1;
		}
		snprintf(first, sizeof(first), "%s/denytrace/launches/%s", bases[i], name);
		dfd = fd;
	}
	if (dfd < 0)
		snprintf(why, cap, "no launch file %s (%s)", lf->path, strerror(ENOENT));
	else
		snprintf(lf->path, sizeof(lf->path), "%s", first);
	return dfd;
}

/* Would the launch lf claims have had its file put where it lies? Not
 * for a command without a sandbox denytrace reads, nor where its own
 * sandbox can write (a launcher never puts one there), nor for a sandbox
 * it cannot read, which could write anywhere: such a file was written by
 * a traced program, for a ring whose launcher found no place out of its
 * reach. Judged from the argv the file holds, by the launcher's own
 * model, never from anything else the file says. */
static int launch_claim_fits(const struct dt_launchfile *lf, char *why, size_t cap)
{
	char base[PATH_MAX];
	const char *tail = strstr(lf->path, "/denytrace/launches/");
	const char *writable[65];
	snprintf(base, sizeof(base), "%.*s", tail ? (int)(tail - lf->path) : 0, lf->path);
	int n = dt_launch_writable(lf->argv, lf->cwd, writable, 64);
	if (n < 0) {
		snprintf(why, cap,
		         "%s names a command without a sandbox denytrace reads, which could "
		         "write any launch file: denytrace writes none for such a launch, so "
		         "the traced program planted it (or an older denytrace left it)",
		         lf->path);
		return 0;
	}
	writable[n] = NULL;
	if (!launch_dir_exposed(base, writable))
		return 1;
	snprintf(why, cap,
	         "%s names a command whose sandbox can write %s itself: denytrace never puts "
	         "a launch file there, the traced program did",
	         lf->path, base);
	return 0;
}

int dt_launchfile_find(const char *ring_path, struct dt_launchfile *lf, char *why, size_t cap)
{
	uint8_t id[DT_RUN_ID_LEN];
	uint64_t dev, ino;
	char name[64], dir[PATH_MAX], idhex[2 * DT_RUN_ID_LEN + 1];
	memset(lf, 0, sizeof(*lf));
	int rc = ring_identity(ring_path, id, &dev, &ino, why, cap);
	if (rc == 1)
		snprintf(why, cap,
		         "the ring names no launch file (not made by this denytrace's run, "
		         "codex or soak)");
	if (rc != 0)
		return -1;
	file_name(name, sizeof(name), id);
	hex(idhex, id);
	if (dt_launchfile_dir(dir, sizeof(dir)) == 0)
		snprintf(lf->path, sizeof(lf->path), "%s/%s", dir, name);
	int dfd = open_launches_holding(name, lf, why, cap);
	if (dfd < 0)
		return -1;
	long len = launch_read(dfd, name, lf, why, cap);
	close(dfd);
	rc = len < 0 || launch_parse(lf, (size_t)len, idhex, dev, ino, why, cap) < 0 ? -1
	     : !launch_claim_fits(lf, why, cap)                                      ? -2
	                                                                             : 0;
	if (rc) {
		char keep[PATH_MAX];
		memcpy(keep, lf->path, sizeof(keep));
		dt_launchfile_free(lf);
		memcpy(lf->path, keep, sizeof(keep));
	}
	return rc;
}

int dt_launchfile_sealed_dir(const struct dt_launchfile *lf, const char *name, char *dir,
                             size_t cap)
{
	const char *tail = strstr(lf->path, "/denytrace/launches/");
	const char *writable[65];
	char base[PATH_MAX];
	if (!tail || !lf->argv)
		return -1;
	snprintf(base, sizeof(base), "%.*s", (int)(tail - lf->path), lf->path);
	int n = dt_launch_writable(lf->argv, lf->cwd, writable, 64);
	if (n < 0)
		return -1;
	writable[n] = NULL;
	if (denytrace_dir_exposed(base, name, writable))
		return -1;
	return snprintf(dir, cap, "%s/denytrace/%s", base, name) < (int)cap ? 0 : -1;
}

void dt_launchfile_free(struct dt_launchfile *lf)
{
	free(lf->buf);
	free(lf->argv);
	free(lf->env);
	free(lf->configs);
	memset(lf, 0, sizeof(*lf));
}

void dt_launchfile_remove(const char *ring_path)
{
	struct dt_launchfile lf;
	char why[512];
	/* only the file that matches the ring in every part: a rewritten run
	 * id must not lead to deleting another run's launch file */
	if (dt_launchfile_find(ring_path, &lf, why, sizeof(why)) == 0)
		unlink(lf.path);
	dt_launchfile_free(&lf);
}

/* ---- pruning ------------------------------------------------------------- */

/* A launch file is needed as long as its ring is: fix --verify finds it
 * from the ring's run id. One whose ring is still where the run put it
 * (or at RING.old, where the next run moved it) is kept whatever its age;
 * one younger than PRUNE_GRACE_S is kept too (a run starting, or a ring
 * moved since). The others are removed once older than PRUNE_MAX_AGE_S,
 * or when more than PRUNE_KEEP of them remain (oldest first): `make demo`
 * left one per run, for good. */
#define PRUNE_GRACE_S 3600
#define PRUNE_MAX_AGE_S (7 * 24 * 3600)
#define PRUNE_KEEP 64
/* A pass reads every launch file: at most one an hour, marked by the
 * stamp's modification time. */
#define PRUNE_EVERY_S 3600
#define PRUNE_STAMP ".pruned"

/* Whether the ring at path is the one the launch file describes: same
 * device, inode and run id. The ring is data: it may say anything, and
 * lying keeps only its own launch file. */
static int ring_names_launch(const char *path, const uint8_t *id, uint64_t dev, uint64_t ino)
{
	struct dt_ringfile rf;
	char why[512];
	struct stat st;
	if (dt_ringfile_open(path, &rf, why, sizeof(why)) != 0)
		return 0;
	int same = fstat(rf.fd, &st) == 0 && (uint64_t)st.st_dev == dev &&
	           (uint64_t)st.st_ino == ino &&
	           memcmp(rf.ring.hdr->run_id, id, DT_RUN_ID_LEN) == 0;
	dt_ringfile_close(&rf);
	return same;
}

static int unhex(const char *h, uint8_t *id)
{
	for (size_t i = 0; i < DT_RUN_ID_LEN; i++) {
		unsigned v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return -1;
		id[i] = (uint8_t)v;
	}
	return h[2 * DT_RUN_ID_LEN] == 0 ? 0 : -1;
}

/* Whether the ring of the launch file in lf->buf (len bytes), its last
 * field (absent from files written before it was kept), still names it. */
static int launch_is_live(struct dt_launchfile *lf, size_t len)
{
	const char *f[8];
	size_t at = 0, nf = 0;
	while (nf < 8 && at < len) {
		f[nf++] = lf->buf + at;
		at += strnlen(lf->buf + at, len - at) + 1;
	}
	uint8_t id[DT_RUN_ID_LEN];
	if (nf < 8 || strcmp(f[0], LAUNCH_MAGIC) || unhex(f[2], id) < 0)
		return 0;
	unsigned long long argc = strtoull(f[7], NULL, 10), nenv;
	for (unsigned long long i = 0; i < argc && at < len; i++)
		at += strnlen(lf->buf + at, len - at) + 1;
	if (at >= len)
		return 0;
	nenv = strtoull(lf->buf + at, NULL, 10);
	at += strnlen(lf->buf + at, len - at) + 1;
	for (unsigned long long i = 0; i < nenv && at < len; i++)
		at += strnlen(lf->buf + at, len - at) + 1;
	if (!strcmp(f[1], LAUNCH_FORMAT) && at < len) { /* the config digests */
		unsigned long long nconf = strtoull(lf->buf + at, NULL, 10);
		at += strnlen(lf->buf + at, len - at) + 1;
		for (unsigned long long i = 0; i < nconf && at < len; i++)
			at += strnlen(lf->buf + at, len - at) + 1;
	}
	if (at >= len || lf->buf[at] != '/')
		return 0;
	const char *ring = lf->buf + at;
	uint64_t dev = strtoull(f[3], NULL, 10), ino = strtoull(f[4], NULL, 10);
	char old[PATH_MAX];
	return ring_names_launch(ring, id, dev, ino) ||
	       (snprintf(old, sizeof(old), "%s.old", ring) < (int)sizeof(old) &&
	        ring_names_launch(old, id, dev, ino));
}

struct prune_candidate {
	char name[64];
	time_t mtime;
};

static int older_first(const void *a, const void *b)
{
	time_t x = ((const struct prune_candidate *)a)->mtime;
	time_t y = ((const struct prune_candidate *)b)->mtime;
	return x < y ? -1 : x > y;
}

/* Whether name under dfd may go: a launch file of ours, past the grace,
 * whose ring no longer names it. *mtime is set. */
static int launch_is_prunable(int dfd, const char *name, time_t now, time_t *mtime)
{
	size_t n = strlen(name);
	struct stat st;
	if (n != 2 * DT_RUN_ID_LEN + 7 || strcmp(name + n - 7, ".launch") ||
	    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid())
		return 0;
	*mtime = st.st_mtime;
	if (now - st.st_mtime < PRUNE_GRACE_S)
		return 0;
	struct dt_launchfile lf = {0};
	char why[512];
	snprintf(lf.path, sizeof(lf.path), "%s", name);
	long len = launch_read(dfd, name, &lf, why, sizeof(why));
	int live = len > 0 && launch_is_live(&lf, (size_t)len);
	dt_launchfile_free(&lf);
	return !live;
}

/* Stamps the directory; returns 0 when a pass is due (it was not made
 * within the last PRUNE_EVERY_S). */
static int prune_due(int dfd, time_t now)
{
	struct stat st;
	if (fstatat(dfd, PRUNE_STAMP, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    now - st.st_mtime < PRUNE_EVERY_S && st.st_mtime <= now)
		return -1;
	int fd = openat(dfd, PRUNE_STAMP, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	futimens(fd, NULL);
	close(fd);
	return 0;
}

/* One pass over the launch directory under base, when one is due. */
static void prune_dir(const char *base, time_t now)
{
	char why[512], stamp[PATH_MAX];
	struct stat st;
	/* most runs stop here: one stat by path, not the private walk (a
	 * stamp that lies only moves the next pass) */
	if (snprintf(stamp, sizeof(stamp), "%s/denytrace/launches/%s", base, PRUNE_STAMP) <
	        (int)sizeof(stamp) &&
	    stat(stamp, &st) == 0 && now - st.st_mtime < PRUNE_EVERY_S && st.st_mtime <= now)
		return;
	int dfd = open_launches(base, 0, why, sizeof(why));
	if (dfd < 0 || prune_due(dfd, now) < 0) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	DIR *d = fdopendir(dup(dfd));
	struct prune_candidate *c = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		time_t mtime;
		if (!launch_is_prunable(dfd, e->d_name, now, &mtime))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			struct prune_candidate *more = realloc(c, cap * sizeof(*c));
			if (!more)
				break;
			c = more;
		}
		snprintf(c[n].name, sizeof(c[n].name), "%s", e->d_name);
		c[n++].mtime = mtime;
	}
	if (d)
		closedir(d);
	qsort(c, n, sizeof(*c), older_first);
	for (size_t i = 0; i < n; i++)
		if (n - i > PRUNE_KEEP || now - c[i].mtime >= PRUNE_MAX_AGE_S)
			unlinkat(dfd, c[i].name, 0);
	free(c);
	close(dfd);
}

void dt_launchfile_prune(void)
{
	char bases[LAUNCH_BASES][PATH_MAX];
	size_t n = launch_bases(bases);
	time_t now = time(NULL);
	for (size_t i = 0; i < n; i++)
		prune_dir(bases[i], now);
}
