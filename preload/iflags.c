/* SPDX-License-Identifier: MIT */
#include "iflags.h"

#include <errno.h>
#include <limits.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "sys.h"

#ifndef STATX_ATTR_VERITY
#define STATX_ATTR_VERITY 0x00100000
#endif
#ifndef FS_VERITY_FL
#define FS_VERITY_FL 0x00100000
#endif

/* statx's attributes that are inode flags, as FS_IOC_GETFLAGS names them. */
static const struct {
	uint64_t attr;
	uint32_t fl;
} dt_attr_flags[] = {
    {STATX_ATTR_IMMUTABLE, FS_IMMUTABLE_FL}, {STATX_ATTR_APPEND, FS_APPEND_FL},
    {STATX_ATTR_NODUMP, FS_NODUMP_FL},       {STATX_ATTR_COMPRESSED, FS_COMPR_FL},
    {STATX_ATTR_ENCRYPTED, FS_ENCRYPT_FL},   {STATX_ATTR_VERITY, FS_VERITY_FL},
};

/* The flags from statx's attributes, when the filesystem reports the two
 * that decide a refusal (immutable, append-only) there: ext4, xfs, btrfs,
 * tmpfs and more do. One system call and no descriptor, where the ioctl
 * below takes four. */
static int dt_flags_from_attributes(const struct statx *sx, uint64_t *flags)
{
	uint64_t need = STATX_ATTR_IMMUTABLE | STATX_ATTR_APPEND;
	if ((sx->stx_attributes_mask & need) != need)
		return 0;
	*flags = 0;
	for (size_t i = 0; i < sizeof(dt_attr_flags) / sizeof(dt_attr_flags[0]); i++)
		if (sx->stx_attributes & sx->stx_attributes_mask & dt_attr_flags[i].attr)
			*flags |= dt_attr_flags[i].fl;
	return 1;
}

/* Only a regular file's or a directory's flags: those are what a refusal
 * concerns, and the only types the fallback may open. FS_IOC_GETFLAGS
 * wants a real open (an O_PATH descriptor gets EBADF), and opening has
 * effects of its own on anything else (a FIFO blocks or wakes its writer,
 * a device runs its driver's open): the type is checked first, without
 * following a symlink, and the open neither follows one nor blocks. A
 * type changed between the two calls is the race every such check has;
 * O_NONBLOCK and O_NOCTTY keep it harmless. */
static int dt_read_inode_flags(const char *path, uint64_t *flags)
{
	struct statx sx;
	unsigned mode;
	if (!path[0])
		return 0;
	if (syscall(SYS_statx, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE,
	            &sx) == 0) {
		mode = sx.stx_mode;
		if ((S_ISREG(mode) || S_ISDIR(mode)) && dt_flags_from_attributes(&sx, flags))
			return 1;
	} else {
		/* no statx (Linux < 4.11, or a seccomp profile older than it) */
		struct stat st;
		if ((errno != ENOSYS && errno != EPERM) ||
		    dt_sys_fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) != 0)
			return 0;
		mode = st.st_mode;
	}
	if (!(S_ISREG(mode) || S_ISDIR(mode)))
		return 0;
	int fd = dt_sys_openat(AT_FDCWD, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	int v = 0;
	long ok = syscall(SYS_ioctl, fd, FS_IOC_GETFLAGS, &v);
	dt_sys_close(fd);
	*flags = (uint32_t)v;
	return ok == 0;
}

DT_HIDDEN void dt_put_inode_flags(struct dt_buf *b, const struct dt_resolved *r)
{
	uint64_t flags;
	if (!r->has_real)
		return;
	if (dt_read_inode_flags(r->realpath, &flags))
		dt_put_u64(b, DT_T_IFLAGS, flags);
	/* the directory decides for a create, unlink or rename in it; the
	 * record is made on the probe's own stack, which has room for this */
	char dir[PATH_MAX];
	size_t n = dt_strcat(dir, 0, sizeof(dir), r->realpath);
	while (n > 1 && dir[n - 1] != '/')
		n--;
	if (n == 0 || n >= sizeof(dir))
		return;
	dir[n > 1 ? n - 1 : n] = 0;
	if (dt_read_inode_flags(dir, &flags))
		dt_put_u64(b, DT_T_DIR_IFLAGS, flags);
}
