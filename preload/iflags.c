/* SPDX-License-Identifier: MIT */
#include "iflags.h"

#include <limits.h>
#include <linux/fs.h>
#include <sys/ioctl.h>

#include "sys.h"

/* FS_IOC_GETFLAGS wants a real open (an O_PATH descriptor gets EBADF), and
 * opening has effects of its own on anything but a regular file or a
 * directory (a FIFO blocks or wakes its writer, a device runs its driver's
 * open): the type is checked first, without following a symlink, and the
 * open neither follows one nor blocks. A type changed between the two
 * calls is the race every such check has; O_NONBLOCK and O_NOCTTY keep it
 * harmless. */
static int dt_read_inode_flags(const char *path, uint64_t *flags)
{
	struct stat st;
	if (!path[0] || dt_sys_fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
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
