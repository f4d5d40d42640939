/* SPDX-License-Identifier: MIT */
/* Probing and making sandboxes (sandbox.h). */
#include "sandbox.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "spawn.h"

/* Landlock rights that make writes; asking for one this kernel does not
 * know is EINVAL, so the set depends on the ABI version. Debian 12's UAPI
 * header stops at ABI 2: the newer bits are fixed kernel ABI. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

long dt_landlock_abi(void)
{
	return syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
}

int dt_landlock_confine_writes(const char *dir)
{
	long abi = dt_landlock_abi();
	if (abi < 1)
		return -1;
	uint64_t rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
	                  LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
	                  LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
	                  LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
	                  LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
	if (abi >= 2)
		rights |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
	struct landlock_ruleset_attr attr = {.handled_access_fs = rights};
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0)
		return -1;
	struct landlock_path_beneath_attr pb = {.allowed_access = rights};
	pb.parent_fd = open(dir, O_PATH | O_CLOEXEC);
	if (pb.parent_fd < 0 ||
	    syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		return -1;
	close(pb.parent_fd);
	/* unprivileged, restrict_self needs no_new_privs */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		return -1;
	close(rs);
	return 0;
}

int dt_bwrap_try(const char *bwrap, const char *workdir, int timeout_ms, char *err, size_t errcap)
{
	const char *plain[] = {bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "true", NULL};
	const char *work[] = {bwrap,   "--ro-bind", "/",    "/",      "--bind", workdir,
	                      workdir, "--dev",     "/dev", "--proc", "/proc",  "--chdir",
	                      workdir, "--",        "true", NULL};
	return dt_capture(workdir ? work : plain, NULL, timeout_ms, NULL, 0, err, errcap);
}
