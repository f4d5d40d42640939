/* SPDX-License-Identifier: MIT */
/* The seccomp filter (supervisor.h): built with libseccomp from the table
 * of notified calls, installed in the child between fork and exec, and its
 * listener passed to the parent over a socket. */
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "denyrule.h"
#include "seccomp_int.h"

const struct dt_sc dt_syscalls[DT_NSYSCALLS] = {
#define DT_SC(...) {__VA_ARGS__},
#include "syscalls.def"
#undef DT_SC
};

struct dt_seccomp_filter {
	scmp_filter_ctx ctx;
};

int dt_seccomp_privileged(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return geteuid() == 0;
	char line[256];
	unsigned long long cap = 0;
	int found = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &cap) == 1)
			found = 1;
	fclose(f);
	return found ? (cap >> 21) & 1 : geteuid() == 0; /* CAP_SYS_ADMIN */
}

int dt_proc_is_ours(char *err, size_t errlen)
{
	char self[32] = "";
	ssize_t n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n > 0)
		self[n] = 0;
	if (n > 0 && atol(self) == (long)getpid())
		return 1;
	snprintf(err, errlen,
	         "/proc here is not this pid namespace's (it shows this process as %s, its pid "
	         "is %ld): the pids the filter reports would name other processes there; "
	         "mount a /proc of its own (unshare --pid --fork --mount-proc)",
	         n > 0 ? self : "nobody", (long)getpid());
	return 0;
}

struct dt_seccomp_filter *dt_seccomp_build(int exec, unsigned deny_ops, int nnp, char *err,
                                           size_t errlen)
{
	if (!dt_proc_is_ours(err, errlen))
		return NULL;
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		snprintf(err, errlen, "libseccomp could not create a filter");
		return NULL;
	}
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, nnp ? 1 : 0);
	/* Other ABIs (i386, x32) pass unfiltered rather than die: a limit of
	 * injection, documented in README.md. */
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	for (size_t i = 0; i < DT_NSYSCALLS && !rc; i++) {
		const struct dt_sc *sc = &dt_syscalls[i];
		if (sc->kind == SC_EXEC || sc->kind == SC_URING ? !exec : !(sc->ops & deny_ops))
			continue;
		int nr = seccomp_syscall_resolve_name(sc->name);
		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue; /* not on this architecture (open, creat... on arm64) */
		if (sc->kind == SC_OPEN) {
			/* notify writes, creates and truncations; never a plain read */
			unsigned a = (unsigned)sc->flags;
			rc = seccomp_rule_add(
			    ctx, SCMP_ACT_NOTIFY, nr, 1,
			    SCMP_CMP32(a, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_WRONLY));
			if (!rc)
				rc = seccomp_rule_add(
				    ctx, SCMP_ACT_NOTIFY, nr, 1,
				    SCMP_CMP32(a, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_RDWR));
			if (!rc)
				rc = seccomp_rule_add(
				    ctx, SCMP_ACT_NOTIFY, nr, 1,
				    SCMP_CMP32(a, SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT));
			if (!rc)
				rc = seccomp_rule_add(
				    ctx, SCMP_ACT_NOTIFY, nr, 1,
				    SCMP_CMP32(a, SCMP_CMP_MASKED_EQ, O_TRUNC, O_TRUNC));
		} else {
			rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
		}
		if (rc)
			snprintf(err, errlen, "libseccomp refused a rule for %s: %s", sc->name,
			         strerror(-rc));
	}
	if (rc) {
		if (!err[0])
			snprintf(err, errlen, "libseccomp: %s", strerror(-rc));
		seccomp_release(ctx);
		return NULL;
	}
	struct dt_seccomp_filter *f = calloc(1, sizeof(*f));
	if (!f) {
		seccomp_release(ctx);
		return NULL;
	}
	f->ctx = ctx;
	return f;
}

void dt_seccomp_free(struct dt_seccomp_filter *f)
{
	if (!f)
		return;
	seccomp_release(f->ctx);
	free(f);
}

int dt_seccomp_install(struct dt_seccomp_filter *f)
{
	int rc = seccomp_load(f->ctx);
	if (rc < 0)
		return rc;
	int fd = seccomp_notify_fd(f->ctx);
	return fd >= 0 ? fd : -ENOSYS;
}

/* One int and room for one descriptor (SCM_RIGHTS): what goes over the
 * socket from child to parent. */
struct dt_fdmsg {
	int32_t val;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg;
};

static void dt_fdmsg_init(struct dt_fdmsg *m, int32_t val, int with_fd)
{
	memset(m, 0, sizeof(*m));
	m->val = val;
	m->iov = (struct iovec){&m->val, sizeof(m->val)};
	m->msg.msg_iov = &m->iov;
	m->msg.msg_iovlen = 1;
	if (with_fd) {
		m->msg.msg_control = m->u.buf;
		m->msg.msg_controllen = sizeof(m->u.buf);
	}
}

int dt_seccomp_send(int sock, int fd_or_err)
{
	struct dt_fdmsg m;
	dt_fdmsg_init(&m, fd_or_err < 0 ? fd_or_err : 0, fd_or_err >= 0);
	if (fd_or_err >= 0) {
		struct cmsghdr *c = CMSG_FIRSTHDR(&m.msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd_or_err, sizeof(int));
	}
	ssize_t n;
	do
		n = sendmsg(sock, &m.msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(m.val) ? 0 : -1;
}

int dt_seccomp_recv(int sock)
{
	struct dt_fdmsg m;
	dt_fdmsg_init(&m, 0, 1);
	ssize_t n;
	do
		n = recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(m.val))
		return -EPIPE;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m.msg); c; c = CMSG_NXTHDR(&m.msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int fd;
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
			return fd;
		}
	return m.val < 0 ? m.val : -EPIPE;
}
