/*
 * landlock-run: run a command under a real Landlock sandbox that makes the
 * filesystem read-only except beneath the directories given with --rw.
 *
 * Why this exists: denytrace has to recognise writes that a sandbox refused.
 * Older Codex versions confined their tools with exactly this kind of
 * Landlock ruleset, so the refusals arrive as genuine EACCES / EXDEV from the
 * kernel rather than from anything we could fake with permissions (the
 * tests run as root, and root bypasses DAC but not Landlock).
 *
 * Usage:
 *   landlock-run [--rw PATH]... [--ro-everything] [--no-refer] [--abi N] -- CMD [ARGS...]
 *
 *   --rw PATH        allow writing beneath PATH (repeatable).  PATH is
 *                    normally a directory; a non-directory (e.g. /dev/null)
 *                    gets only the rights that apply to files: WRITE_FILE,
 *                    TRUNCATE and IOCTL_DEV.
 *   --ro-everything  no writable path at all.  Either this or at least one
 *                    --rw is required, so that forgetting --rw in a test is
 *                    a usage error instead of a silently read-only sandbox.
 *   --rule PATH=R[|R...]  allow exactly the rights R beneath PATH (names
 *                    as in LANDLOCK_ACCESS_FS_R: WRITE_FILE, TRUNCATE,
 *                    MAKE_REG, REMOVE_FILE, REFER ...), as a fix that
 *                    names its rights proposes; repeatable.
 *   --no-refer       do not grant REFER under the --rw paths, so renaming or
 *                    linking between two different directories fails with
 *                    EXDEV even when both are writable.
 *   --abi N          build the ruleset as a program written for Landlock ABI N
 *                    would (at most the kernel's): --abi 1 handles only the
 *                    first thirteen rights, so REFER can never be granted.
 *
 * Reading and executing stay allowed everywhere: READ_FILE, READ_DIR and
 * EXECUTE are simply not put in handled_access_fs, and Landlock leaves
 * unhandled rights unrestricted.
 *
 * Refusals outside the --rw paths come back as EACCES: open for writing
 * (O_WRONLY/O_RDWR/O_APPEND/O_CREAT), O_TRUNC or truncate(2), mkdir, rmdir,
 * unlink, symlink, link, mknod/mkfifo, bind() of a UNIX socket, rename.
 * EXDEV only appears when REFER is the sole missing right, i.e. rename or
 * link between two different directories that are otherwise writable (with
 * --no-refer); moving out of a read-only directory is EACCES.
 *
 * What Landlock does NOT restrict (so tests must not expect a refusal):
 * chmod, chown, utimes (so `touch` of an existing file succeeds), setxattr,
 * and writes through file descriptors opened before the sandbox (e.g.
 * inherited stdout).  Rights are checked when a path is opened or modified;
 * an fd keeps what it was opened with.  Opening /dev/null for writing IS
 * refused unless it is covered by a --rw (pass `--rw /dev/null`), and with
 * ABI >= 5 so are most ioctls on devices opened inside the sandbox.
 *
 * Exit status:
 *   125  Landlock is not available (ENOSYS / EOPNOTSUPP); tests should skip.
 *   2    bad usage, or a --rw path that cannot be opened.
 *   1    Landlock is available but setting up the sandbox failed.
 *   127  COMMAND could not be executed.
 *   otherwise the status of COMMAND, which replaces this process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The installed UAPI header may predate the running kernel (Debian 12 ships
 * 6.1 headers, which stop at ABI 2), so define the newer rights ourselves.
 * The values are fixed kernel ABI.
 */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

/* The syscall numbers are the same on every architecture (generic table). */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

#define PROG "landlock-run"

/* Every write-related right of ABI 1. */
#define WRITE_RIGHTS_V1                                                                            \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |                           \
	 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |                           \
	 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |                               \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |                             \
	 LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM)

/*
 * Rights that make sense on a non-directory; the kernel rejects a rule on a
 * file that names any directory-only right (EINVAL).  READ_FILE and EXECUTE
 * are file rights too but we never handle them.
 */
#define FILE_RIGHTS                                                                                \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

static void usage(FILE *out)
{
	fprintf(out, "usage: " PROG " [--rw PATH]... [--rule PATH=RIGHT|...]... [--ro-everything]"
	             " [--no-refer] [--abi N] -- COMMAND [ARGS...]\n");
}

static _Noreturn void usage_error(const char *msg, const char *arg)
{
	if (arg)
		fprintf(stderr, PROG ": %s: %s\n", msg, arg);
	else
		fprintf(stderr, PROG ": %s\n", msg);
	usage(stderr);
	exit(2);
}

static const struct {
	const char *name;
	uint64_t bit;
} right_names[] = {
    {"EXECUTE", LANDLOCK_ACCESS_FS_EXECUTE},       {"WRITE_FILE", LANDLOCK_ACCESS_FS_WRITE_FILE},
    {"READ_FILE", LANDLOCK_ACCESS_FS_READ_FILE},   {"READ_DIR", LANDLOCK_ACCESS_FS_READ_DIR},
    {"REMOVE_DIR", LANDLOCK_ACCESS_FS_REMOVE_DIR}, {"REMOVE_FILE", LANDLOCK_ACCESS_FS_REMOVE_FILE},
    {"MAKE_CHAR", LANDLOCK_ACCESS_FS_MAKE_CHAR},   {"MAKE_DIR", LANDLOCK_ACCESS_FS_MAKE_DIR},
    {"MAKE_REG", LANDLOCK_ACCESS_FS_MAKE_REG},     {"MAKE_SOCK", LANDLOCK_ACCESS_FS_MAKE_SOCK},
    {"MAKE_FIFO", LANDLOCK_ACCESS_FS_MAKE_FIFO},   {"MAKE_BLOCK", LANDLOCK_ACCESS_FS_MAKE_BLOCK},
    {"MAKE_SYM", LANDLOCK_ACCESS_FS_MAKE_SYM},     {"REFER", LANDLOCK_ACCESS_FS_REFER},
    {"TRUNCATE", LANDLOCK_ACCESS_FS_TRUNCATE},
};

/* "WRITE_FILE|TRUNCATE" (an optional LANDLOCK_ACCESS_FS_ prefix on each)
 * as a mask; exits 2 on a name it does not know. */
static uint64_t parse_rights(const char *list)
{
	char buf[1024];
	uint64_t mask = 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *save = NULL, *r = strtok_r(buf, "| ,", &save); r;
	     r = strtok_r(NULL, "| ,", &save)) {
		size_t k;
		if (!strncmp(r, "LANDLOCK_ACCESS_FS_", 19))
			r += 19;
		for (k = 0; k < sizeof(right_names) / sizeof(*right_names); k++)
			if (!strcmp(r, right_names[k].name))
				break;
		if (k == sizeof(right_names) / sizeof(*right_names))
			usage_error("unknown Landlock right", r);
		mask |= right_names[k].bit;
	}
	return mask;
}

/*
 * Write rights this kernel understands.  Asking for an unknown right makes
 * landlock_create_ruleset fail with EINVAL, so we must mask by ABI rather
 * than always requesting the newest set.
 */
static uint64_t write_rights_for_abi(int abi)
{
	uint64_t rights = WRITE_RIGHTS_V1;

	if (abi >= 2)
		rights |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
	/* ABI 4 added network rights and ABI 6/7 scopes and audit flags:
	 * nothing about filesystem writes. */
	if (abi >= 5)
		rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return rights;
}

static void add_rw_rule(int ruleset_fd, const char *path, uint64_t dir_rights)
{
	struct landlock_path_beneath_attr attr;
	struct stat st;
	int fd;

	/* O_PATH so that even a write-only or unreadable path can be named. */
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, PROG ": cannot open --rw path %s: %s\n", path, strerror(errno));
		exit(2);
	}
	if (fstat(fd, &st) < 0) {
		fprintf(stderr, PROG ": cannot stat --rw path %s: %s\n", path, strerror(errno));
		exit(2);
	}

	memset(&attr, 0, sizeof(attr));
	attr.parent_fd = fd;
	attr.allowed_access = S_ISDIR(st.st_mode) ? dir_rights : (dir_rights & FILE_RIGHTS);
	if (syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) < 0) {
		fprintf(stderr, PROG ": landlock_add_rule(%s): %s\n", path, strerror(errno));
		exit(1);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	struct landlock_ruleset_attr ruleset_attr;
	bool ro_everything = false, no_refer = false, saw_sep = false;
	const char **rw_paths, **rule_paths;
	uint64_t *rule_rights;
	size_t n_rw = 0, n_rules = 0;
	uint64_t handled, granted;
	int abi, ruleset_fd, i, want_abi = 0;

	rw_paths = calloc((size_t)argc, sizeof(*rw_paths));
	rule_paths = calloc((size_t)argc, sizeof(*rule_paths));
	rule_rights = calloc((size_t)argc, sizeof(*rule_rights));
	if (!rw_paths || !rule_paths || !rule_rights) {
		perror(PROG ": calloc");
		return 1;
	}

	/*
	 * Hand-rolled parsing: getopt would permute or stop at the first
	 * non-option, and we want the `--` separator to be mandatory so a
	 * command's own options can never be mistaken for ours.
	 */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			saw_sep = true;
			i++;
			break;
		} else if (strcmp(a, "--rw") == 0) {
			if (i + 1 >= argc)
				usage_error("--rw needs an argument", NULL);
			rw_paths[n_rw++] = argv[++i];
		} else if (strncmp(a, "--rw=", 5) == 0) {
			if (a[5] == '\0')
				usage_error("--rw needs an argument", NULL);
			rw_paths[n_rw++] = a + 5;
		} else if (strcmp(a, "--rule") == 0) {
			char *eq;
			if (i + 1 >= argc || !(eq = strrchr(argv[i + 1], '=')))
				usage_error("--rule needs PATH=RIGHTS", NULL);
			*eq = 0;
			rule_paths[n_rules] = argv[++i];
			rule_rights[n_rules++] = parse_rights(eq + 1);
		} else if (strcmp(a, "--ro-everything") == 0) {
			ro_everything = true;
		} else if (strcmp(a, "--no-refer") == 0) {
			no_refer = true;
		} else if (strcmp(a, "--abi") == 0) {
			if (i + 1 >= argc || atoi(argv[i + 1]) < 1)
				usage_error("--abi needs a version from 1", NULL);
			want_abi = atoi(argv[++i]);
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage_error("unknown option or missing '--'", a);
		}
	}
	if (!saw_sep)
		usage_error("missing '--' before COMMAND", NULL);
	if (i >= argc)
		usage_error("missing COMMAND", NULL);
	if (n_rw == 0 && n_rules == 0 && !ro_everything)
		usage_error("need at least one --rw PATH or --rule, or --ro-everything", NULL);
	if (n_rw > 0 && ro_everything)
		usage_error("--ro-everything contradicts --rw", NULL);

	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		/* ENOSYS: not built in; EOPNOTSUPP: built in but disabled at
		 * boot (lsm=).  Both mean "skip", not "fail". */
		if (errno == ENOSYS || errno == EOPNOTSUPP) {
			fprintf(stderr, PROG ": Landlock is not available: %s\n", strerror(errno));
			return 125;
		}
		fprintf(stderr, PROG ": landlock_create_ruleset(VERSION): %s\n", strerror(errno));
		return 1;
	}

	if (want_abi && want_abi < abi)
		abi = want_abi;
	handled = write_rights_for_abi(abi);
	/*
	 * REFER stays handled even with --no-refer (the kernel treats it as
	 * always handled anyway); we just never grant it.  On ABI 1 it cannot
	 * be granted at all, so cross-directory rename/link is always EXDEV.
	 */
	granted = handled;
	if (no_refer)
		granted &= ~LANDLOCK_ACCESS_FS_REFER;

	/*
	 * Only the handled_access_fs member is used: an older, smaller struct
	 * is accepted by newer kernels, and leaving network rights and scopes
	 * unhandled keeps them unrestricted.
	 */
	memset(&ruleset_attr, 0, sizeof(ruleset_attr));
	ruleset_attr.handled_access_fs = handled;
	ruleset_fd =
	    (int)syscall(SYS_landlock_create_ruleset, &ruleset_attr, sizeof(ruleset_attr), 0);
	if (ruleset_fd < 0) {
		fprintf(stderr, PROG ": landlock_create_ruleset: %s\n", strerror(errno));
		return 1;
	}

	for (size_t k = 0; k < n_rw; k++)
		add_rw_rule(ruleset_fd, rw_paths[k], granted);
	/* exactly what was asked, within what this kernel handles */
	for (size_t k = 0; k < n_rules; k++)
		add_rw_rule(ruleset_fd, rule_paths[k], rule_rights[k] & handled);

	/*
	 * landlock_restrict_self requires no_new_privs unless the caller has
	 * CAP_SYS_ADMIN, so set it first; it also keeps setuid programs from
	 * escaping the sandbox through exec.
	 */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror(PROG ": prctl(PR_SET_NO_NEW_PRIVS)");
		return 1;
	}
	if (syscall(SYS_landlock_restrict_self, ruleset_fd, 0) < 0) {
		perror(PROG ": landlock_restrict_self");
		return 1;
	}
	close(ruleset_fd);
	free(rw_paths);
	free(rule_paths);
	free(rule_rights);

	execvp(argv[i], &argv[i]);
	fprintf(stderr, PROG ": %s: %s\n", argv[i], strerror(errno));
	return 127;
}
