/* SPDX-License-Identifier: MIT */
/* The supervising thread (supervisor.h): answers the seccomp filter's
 * notifications, records execs and injects --deny refusals. */
#include "supervisor.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "denyrule.h"
#include "envfilter.h"
#include "openflags.h"
#include "pathnorm.h"
#include "ring.h"
#include "seccomp_int.h"
#include "secrets.h"
#include "target.h"

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

/* Processes of the tree held by pidfd, for dt_supervisor_signal. */
#define DT_SUP_MAX_KNOWN 256

/* Processes named partly blind (non-dumpable, io_uring), once per reason. */
#define DT_SUP_MAX_UNREADABLE 256

struct dt_supervisor {
	int fd;
	int wake[2]; /* written to stop the thread early (dt_supervisor_abandon) */
	int heir_fd; /* closing it hands the listener to the heir */
	pid_t heir;  /* answers the filter once denytrace is gone; -1: none */
	pthread_t thread;
	pid_t unreadable[DT_SUP_MAX_UNREADABLE];
	size_t nunreadable;
	pid_t uring[DT_SUP_MAX_UNREADABLE];
	size_t nuring;
	pid_t known[DT_SUP_MAX_KNOWN]; /* with a pidfd each: no reused pid is signalled */
	int known_fd[DT_SUP_MAX_KNOWN];
	size_t nknown;
	struct dt_ring *ring;
	struct dt_deny_set *deny;
	int nr[DT_NSYSCALLS];
	volatile int done;
	struct dt_supervisor_stats st;
	unsigned char rec[DT_REC_MAX];
};

static void dt_rec_begin(struct dt_buf *b, struct dt_supervisor *s, int type, struct dt_target *t)
{
	struct dt_rec_header *rh = (struct dt_rec_header *)s->rec;
	dt_target_load(t);
	memset(rh, 0, sizeof(*rh));
	rh->type = (uint16_t)type;
	*b = (struct dt_buf){s->rec, sizeof(*rh), DT_REC_MAX, 0};
	dt_put_times(b);
	dt_put_u64(b, DT_T_PID, (uint64_t)t->pid);
	dt_put_u64(b, DT_T_TID, (uint64_t)t->tid);
	if (t->ppid)
		dt_put_u64(b, DT_T_PPID, (uint64_t)t->ppid);
	if (t->nspid > 0 && t->nspid != t->pid)
		dt_put_u64(b, DT_T_NSPID, (uint64_t)t->nspid);
	if (t->uid >= 0)
		dt_put_u64(b, DT_T_UID, (uint64_t)t->uid);
	if (t->gid >= 0)
		dt_put_u64(b, DT_T_GID, (uint64_t)t->gid);
	if (t->comm[0])
		dt_put_str(b, DT_T_COMM, t->comm);
	dt_put_u64(b, DT_T_SUPERVISOR, 1);
}

static void dt_rec_end(struct dt_buf *b, struct dt_supervisor *s)
{
	struct dt_rec_header *rh = (struct dt_rec_header *)s->rec;
	rh->len = b->len;
	if (s->ring)
		dt_ring_write(s->ring, rh);
}

static void dt_handle_exec(struct dt_supervisor *s, const struct dt_sc *sc,
                           const struct seccomp_notif *req, struct dt_target *t)
{
	const __u64 *a = req->data.args;
	int is_at = sc->dfd >= 0;
	int dirfd = is_at ? (int)a[sc->dfd] : AT_FDCWD;
	uint64_t argv_p = a[is_at ? 2 : 1], envp_p = a[is_at ? 3 : 2];
	char path[PATH_MAX];
	if (dt_mem_str(t->mem, a[sc->path], path, sizeof(path)) < 0)
		return;
	if (!path[0] && !(is_at && (a[4] & AT_EMPTY_PATH)))
		return; /* fails with ENOENT */
	if (seccomp_notify_id_valid(s->fd, req->id) != 0)
		return;
	char openable[PATH_MAX + 64];
	dt_target_openable(t->tid, dirfd, path, openable, sizeof(openable));
	int stat_ = dt_exec_static(t->tid, openable, 0);
	if (stat_ == -2)
		return;

	char argv[8192];
	size_t an = 0;
	int cut = dt_exec_argv(t, argv_p, argv, sizeof(argv), &an);

	char preload[4096], envs[16384];
	size_t envlen = 0;
	int entry;
	int have_preload =
	    dt_exec_env(t, envp_p, preload, sizeof(preload), envs, sizeof(envs), &envlen, &entry);
	int probe = have_preload && strstr(preload, "libdenytrace.so") != NULL;
	const char *blind = stat_ == 1                        ? "static"
	                    : dt_exec_setid(t->tid, openable) ? "setid"
	                    : !probe                          ? "no-preload"
	                                                      : NULL;
	unsigned long lost_euid = 0;
	int lost = dt_exec_setid_lost(t->tid, openable, &lost_euid);

	char dir[PATH_MAX], abs[PATH_MAX];
	if (path[0] != '/' && dt_target_dir(t->tid, dirfd, dir, sizeof(dir)) == 0)
		dt_normalize(abs, sizeof(abs), dir, path);
	else
		dt_normalize(abs, sizeof(abs), NULL, path);

	struct dt_buf b;
	dt_rec_begin(&b, s, DT_REC_EXEC, t);
	dt_put_str(&b, DT_T_OP, sc->name);
	dt_put_str(&b, DT_T_PATH, path);
	if (abs[0])
		dt_put_str(&b, DT_T_ABSPATH, abs);
	dt_put_str(&b, DT_T_EXE, abs[0] ? abs : path);
	cut |= dt_put_argv_redacted(&b, argv, an ? an - 1 : 0);
	if (cut)
		dt_put_u64(&b, DT_T_ARGV_TRUNC, 1);
	if (stat_ >= 0)
		dt_put_u64(&b, DT_T_EXEC_STATIC, (uint64_t)stat_);
	dt_put_u64(&b, DT_T_EXEC_PROBE, (uint64_t)probe);
	if (have_preload)
		dt_put_str(&b, DT_T_PRELOAD, preload);
	if (blind)
		dt_put_str(&b, DT_T_EXEC_BLIND, blind);
	if (lost)
		dt_put_u64(&b, DT_T_EXEC_SETID_LOST, lost_euid);
	/* an exec bound to fail (no x bit at all) leaves no new image to
	 * announce anything */
	struct stat xst;
	if (probe && entry && stat(openable, &xst) == 0 && (xst.st_mode & 0111))
		dt_put_u64(&b, DT_T_EXEC_ENTRY, 1);
	char cwd[PATH_MAX];
	if (dt_target_dir(t->tid, AT_FDCWD, cwd, sizeof(cwd)) == 0)
		dt_put_str(&b, DT_T_CWD, cwd);
	for (size_t k = 0; k < envlen; k += strlen(envs + k) + 1)
		dt_put_env_redacted(&b, envs + k, strlen(envs + k));
	dt_rec_end(&b, s);
	s->st.execs++;
	s->st.blind += blind != NULL;
	s->st.setid_lost += lost;
}

static unsigned dt_open_ops(uint64_t flags)
{
	unsigned ops = 0;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		ops |= DT_DENY_WRITE;
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		ops |= DT_DENY_CREATE;
	return ops;
}

struct dt_callpath {
	char path[PATH_MAX];
	char dir[PATH_MAX];
	char abs[PATH_MAX];
	int have, has_dir;
};

static int dt_read_callpath(struct dt_supervisor *s, struct dt_target *t,
                            const struct seccomp_notif *req, int dfd_i, int path_i,
                            struct dt_callpath *cp)
{
	const __u64 *a = req->data.args;
	int dirfd = dfd_i >= 0 ? (int)a[dfd_i] : AT_FDCWD;
	cp->have = 0;
	cp->has_dir = 0;
	if (dt_mem_str(t->mem, a[path_i], cp->path, sizeof(cp->path)) < 0)
		return -1;
	(void)s;
	const char *base = NULL;
	if (cp->path[0] != '/' && dt_target_dir(t->tid, dirfd, cp->dir, sizeof(cp->dir)) == 0) {
		base = cp->dir;
		cp->has_dir = dirfd != AT_FDCWD;
	}
	if (cp->path[0] != '/' && !base)
		return -1;
	if (!dt_normalize(cp->abs, sizeof(cp->abs), base, cp->path))
		return -1;
	cp->have = 1;
	return 0;
}

/* A write-capable file call: refuse it if a rule says so. Returns the errno
 * to inject, or 0. */
static int dt_handle_file(struct dt_supervisor *s, const struct dt_sc *sc,
                          const struct seccomp_notif *req, struct dt_target *t)
{
	const __u64 *a = req->data.args;
	unsigned ops = sc->ops;
	uint64_t flags = 0;
	int has_flags = 0;
	if (sc->kind == SC_OPEN) {
		flags = (uint32_t)a[sc->flags];
		has_flags = 1;
		ops = dt_open_ops(flags);
	} else if (sc->kind == SC_OPENAT2) {
		uint64_t how[1];
		if (t->mem < 0 || dt_mem_u64s(t->mem, a[2], how, 1) != 1)
			return 0;
		flags = how[0];
		has_flags = 1;
		ops = dt_open_ops(flags);
	}
	if (!ops || !s->deny || !s->deny->n)
		return 0;
	struct dt_callpath *cp = malloc(2 * sizeof(*cp));
	if (!cp)
		return 0;
	cp[0].have = cp[1].have = 0;
	if (sc->kind == SC_FD) {
		char dir[64];
		snprintf(dir, sizeof(dir), "%d", (int)a[sc->dfd]);
		snprintf(cp[0].path, sizeof(cp[0].path), "%s", dir);
		cp[0].has_dir = 0;
		if (dt_target_dir(t->tid, (int)a[sc->dfd], cp[0].abs, sizeof(cp[0].abs)) == 0)
			cp[0].have = 1;
	} else {
		dt_read_callpath(s, t, req, sc->dfd, sc->path, &cp[0]);
		if (sc->path2 >= 0)
			dt_read_callpath(s, t, req, sc->dfd2, sc->path2, &cp[1]);
	}
	int err = 0, rule = -1;
	if (seccomp_notify_id_valid(s->fd, req->id) == 0) {
		/* op=new: one stat, and only when a rule asks. O_TMPFILE always
		 * makes a new file; creat follows a symlink like open does, while
		 * link, symlink and mknod name the new entry itself. */
		ops &= ~(unsigned)DT_DENY_NEW;
		if ((ops & DT_DENY_CREATE) && (dt_deny_ops(s->deny) & DT_DENY_NEW) && cp[0].have) {
			int nofollow =
			    has_flags ? (flags & O_NOFOLLOW) != 0 : strcmp(sc->name, "creat") != 0;
			int missing = has_flags && (flags & O_TMPFILE) == O_TMPFILE
			                  ? 1
			                  : dt_target_path_missing(
			                        t->tid, sc->dfd >= 0 ? (int)a[sc->dfd] : AT_FDCWD,
			                        cp[0].path, nofollow);
			if (missing == 1)
				ops |= DT_DENY_NEW;
		}
		for (int k = 0; k < 2 && !err; k++)
			if (cp[k].have)
				err = dt_deny_decide(s->deny, cp[k].abs, ops, &rule);
	}
	if (err) {
		struct dt_buf b;
		dt_rec_begin(&b, s, DT_REC_DENIAL, t);
		dt_put_str(&b, DT_T_OP, sc->name);
		dt_put_u64(&b, DT_T_ERRNO, (uint64_t)err);
		if (has_flags)
			dt_put_u64(&b, DT_T_FLAGS, dt_open_flags_to_ring(flags));
		if (sc->mode >= 0 && (sc->kind != SC_OPEN || (flags & O_CREAT)))
			dt_put_u64(&b, DT_T_MODE, a[sc->mode] & 07777);
		if (sc->kind == SC_FD)
			dt_put_u64(&b, DT_T_FD, a[sc->dfd]);
		dt_put_u64(&b, DT_T_ACCESS, 1);
		dt_put_u64(&b, DT_T_INJECTED, 1);
		static const uint16_t tags[2][4] = {
		    {DT_T_PATH, DT_T_DIRPATH, DT_T_ABSPATH, DT_T_REALPATH},
		    {DT_T_PATH2, DT_T_DIRPATH2, DT_T_ABSPATH2, DT_T_REALPATH2}};
		for (int k = 0; k < 2; k++) {
			if (!cp[k].have)
				continue;
			if (sc->kind != SC_FD)
				dt_put_str(&b, tags[k][0], cp[k].path);
			if (cp[k].has_dir)
				dt_put_str(&b, tags[k][1], cp[k].dir);
			dt_put_str(&b, tags[k][2], cp[k].abs);
			char real[PATH_MAX];
			if (dt_target_realpath(t->tid, cp[k].abs, real, sizeof(real)) == 0)
				dt_put_str(&b, tags[k][3], real);
		}
		dt_rec_end(&b, s);
		s->st.injected++;
	}
	free(cp);
	return err;
}

/* Drops the processes that have exited (their pidfd reads ready). */
static void dt_known_prune(struct dt_supervisor *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->nknown; i++) {
		struct pollfd p = {s->known_fd[i], POLLIN, 0};
		if (poll(&p, 1, 0) == 1) {
			close(s->known_fd[i]);
			continue;
		}
		s->known[k] = s->known[i];
		s->known_fd[k++] = s->known_fd[i];
	}
	s->nknown = k;
}

/* Remembers the process behind a notification (a thread-group leader;
 * the caller checks that the notification is still valid, so the pidfd
 * is the caller's, not a process that reused its pid). */
static void dt_known_add(struct dt_supervisor *s, pid_t pid)
{
	for (size_t i = 0; i < s->nknown; i++)
		if (s->known[i] == pid)
			return;
	if (s->nknown == DT_SUP_MAX_KNOWN)
		dt_known_prune(s);
	if (s->nknown == DT_SUP_MAX_KNOWN)
		return;
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return; /* a thread, not a leader; or gone */
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	s->known[s->nknown] = pid;
	s->known_fd[s->nknown++] = fd;
}

/* Names pid once (in seen[]) as a blind exec record with reason: so that
 * "0 blind" never hides what the probe could not see. */
static void dt_note_blind(struct dt_supervisor *s, const struct dt_sc *sc, struct dt_target *t,
                          pid_t *seen, size_t *nseen, const char *reason)
{
	dt_target_load(t); /* the thread's process */
	for (size_t i = 0; i < *nseen; i++)
		if (seen[i] == t->pid)
			return;
	if (*nseen < DT_SUP_MAX_UNREADABLE)
		seen[(*nseen)++] = t->pid;
	struct dt_buf b;
	dt_rec_begin(&b, s, DT_REC_EXEC, t);
	dt_put_str(&b, DT_T_OP, sc->name);
	dt_put_str(&b, DT_T_EXE, t->comm[0] ? t->comm : "?");
	dt_put_u64(&b, DT_T_EXEC_PROBE, 0);
	dt_put_str(&b, DT_T_EXEC_BLIND, reason);
	dt_rec_end(&b, s);
	s->st.execs++;
	s->st.blind++;
}

/* A process whose memory denytrace may not read (it made itself
 * non-dumpable, and denytrace lacks CAP_SYS_PTRACE): its exec paths and
 * the paths of its calls are unknown, so --deny cannot judge them and
 * exec coverage cannot see what it runs. */
static void dt_note_unreadable(struct dt_supervisor *s, const struct dt_sc *sc, struct dt_target *t)
{
	dt_note_blind(s, sc, t, s->unreadable, &s->nunreadable, "non-dumpable");
}

static void dt_handle(struct dt_supervisor *s, const struct seccomp_notif *req,
                      struct seccomp_notif_resp *resp)
{
	resp->id = req->id;
	resp->val = 0;
	resp->error = 0;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	const struct dt_sc *sc = NULL;
	for (size_t i = 0; i < DT_NSYSCALLS && !sc; i++)
		if (s->nr[i] == req->data.nr)
			sc = &dt_syscalls[i];
	if (!sc)
		return;
	struct dt_target t = {0};
	t.tid = t.pid = (pid_t)req->pid;
	t.uid = t.gid = -1;
	if (sc->kind == SC_URING) {
		/* the file operations it submits to the ring bypass libc: the
		 * probe sees none of their refusals (its libc calls still count) */
		t.mem = -1;
		if (seccomp_notify_id_valid(s->fd, req->id) == 0)
			dt_note_blind(s, sc, &t, s->uring, &s->nuring, "io_uring");
		return;
	}
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/mem", (int)req->pid);
	t.mem = open(p, O_RDONLY | O_CLOEXEC);
	int refused = t.mem < 0 && (errno == EACCES || errno == EPERM);
	/* the id is still valid: the mem fd belongs to the caller, not to a
	 * process that reused its pid */
	if (t.mem < 0 || seccomp_notify_id_valid(s->fd, req->id) != 0) {
		if (t.mem >= 0)
			close(t.mem);
		else if (refused && seccomp_notify_id_valid(s->fd, req->id) == 0)
			dt_note_unreadable(s, sc, &t);
		return;
	}
	dt_known_add(s, t.pid);
	if (sc->kind == SC_EXEC) {
		dt_handle_exec(s, sc, req, &t);
	} else {
		int err = dt_handle_file(s, sc, req, &t);
		if (err) {
			resp->flags = 0;
			resp->error = -err;
		}
	}
	close(t.mem);
}

static void *dt_supervise(void *arg)
{
	struct dt_supervisor *s = arg;
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	if (seccomp_notify_alloc(&req, &resp) != 0) {
		/* cannot answer: closing the listener makes pending calls fail
		 * (ENOSYS) rather than hang */
		s->done = 1;
		return NULL;
	}
	struct pollfd pfds[2] = {{s->fd, POLLIN, 0}, {s->wake[0], POLLIN, 0}};
	struct pollfd *pfd = &pfds[0];
	unsigned errors = 0;
	for (;;) {
		pfds[0].revents = pfds[1].revents = 0;
		int n = poll(pfds, 2, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfds[1].revents)
			break; /* dt_supervisor_abandon: the heir answers from now on */
		if (pfd->revents & POLLIN) {
			memset(req, 0, sizeof(*req));
			int rc = seccomp_notify_receive(s->fd, req);
			if (rc != 0) {
				/* ENOENT: the caller died before we read it */
				if (++errors > 100000)
					break;
				continue;
			}
			errors = 0;
			memset(resp, 0, sizeof(*resp));
			dt_handle(s, req, resp);
			/* fails with ENOENT when the target died or was
			 * interrupted meanwhile: nothing waits for the answer */
			seccomp_notify_respond(s->fd, resp);
			s->st.notifications++;
			continue;
		}
		if (pfd->revents & (POLLHUP | POLLERR | POLLNVAL))
			break;
	}
	seccomp_notify_free(req, resp);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void dt_supervisor_release(struct dt_supervisor *s, int tree_gone);

/* The heir: lets every call of the filtered tree through once denytrace
 * is gone, until the last process under the filter exits. A filter whose
 * listener is closed fails each notified call with ENOSYS (the kernel has
 * no fallback action), so processes left behind by an interrupted or
 * killed denytrace could no longer exec or create files. */
__attribute__((noreturn)) static void dt_heir(int listener, int until)
{
	static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2};
	for (size_t k = 0; k < sizeof(ignored) / sizeof(ignored[0]); k++)
		signal(ignored[k], SIG_IGN);
	/* nothing of denytrace's stays open here but the two descriptors it
	 * needs: a caller waiting for EOF on a pipe must not wait for us */
	int u = fcntl(until, F_DUPFD_CLOEXEC, 5), lfd = fcntl(listener, F_DUPFD_CLOEXEC, 5);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	if (u < 0 || lfd < 0 || dup2(lfd, 3) < 0 || dup2(u, 4) < 0)
		_exit(1);
	close_range(5, ~0U, 0);
	listener = 3;
	until = 4;
	struct pollfd p = {until, POLLIN, 0};
	char c;
	/* denytrace's end closes it: normally, interrupted or killed alike */
	while (poll(&p, 1, -1) < 0 || read(until, &c, 1) > 0)
		;
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	if (seccomp_notify_alloc(&req, &resp) != 0)
		_exit(1);
	struct pollfd l = {listener, POLLIN, 0};
	for (;;) {
		l.revents = 0;
		if (poll(&l, 1, -1) < 0)
			continue;
		if (!(l.revents & POLLIN))
			break; /* hung up: nobody is under the filter any more */
		memset(req, 0, sizeof(*req));
		if (seccomp_notify_receive(listener, req) != 0)
			continue;
		memset(resp, 0, sizeof(*resp));
		resp->id = req->id;
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		seccomp_notify_respond(listener, resp);
	}
	_exit(0);
}

/* Forks the heir before the supervising thread exists (fork copies only
 * the calling thread). */
static void dt_heir_start(struct dt_supervisor *s)
{
	int p[2];
	s->heir = -1;
	s->heir_fd = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		dt_heir(s->fd, p[0]);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return;
	}
	s->heir = pid;
	s->heir_fd = p[1];
}

struct dt_supervisor *dt_supervisor_start(int listener, struct dt_ring *ring,
                                          struct dt_deny_set *deny, char *err, size_t errlen)
{
	struct dt_supervisor *s = calloc(1, sizeof(*s));
	if (!s || pipe2(s->wake, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "%s", s ? strerror(errno) : "out of memory");
		free(s);
		close(listener);
		return NULL;
	}
	s->fd = listener;
	dt_heir_start(s);
	s->ring = ring;
	s->deny = deny;
	for (size_t i = 0; i < DT_NSYSCALLS; i++)
		s->nr[i] = seccomp_syscall_resolve_name(dt_syscalls[i].name);
	/* signals are for the main thread (forwarding to the command) */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&s->thread, NULL, dt_supervise, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		snprintf(err, errlen, "cannot start the seccomp supervisor: %s", strerror(rc));
		dt_supervisor_release(s, 0);
		return NULL;
	}
	return s;
}

int dt_supervisor_busy(struct dt_supervisor *s)
{
	return s && !__atomic_load_n(&s->done, __ATOMIC_ACQUIRE);
}

/* Closes what s holds; the heir, handed the listener by the close of
 * heir_fd, is waited for only when the tree is gone (it then exits at
 * once); otherwise it stays behind, answering. */
static void dt_supervisor_release(struct dt_supervisor *s, int tree_gone)
{
	for (size_t i = 0; i < s->nknown; i++)
		close(s->known_fd[i]);
	close(s->fd);
	close(s->wake[0]);
	close(s->wake[1]);
	if (s->heir_fd >= 0)
		close(s->heir_fd);
	if (s->heir > 0 && tree_gone)
		while (waitpid(s->heir, NULL, 0) < 0 && errno == EINTR)
			;
	free(s);
}

void dt_supervisor_wait(struct dt_supervisor *s, struct dt_supervisor_stats *st)
{
	if (!s)
		return;
	pthread_join(s->thread, NULL);
	if (st)
		*st = s->st;
	dt_supervisor_release(s, 1);
}

void dt_supervisor_abandon(struct dt_supervisor *s, int sig, struct dt_supervisor_stats *st)
{
	if (!s)
		return;
	char c = 0;
	if (write(s->wake[1], &c, 1) < 0)
		return; /* cannot stop the thread: the process's exit will */
	pthread_join(s->thread, NULL);
	for (size_t i = 0; i < s->nknown; i++) {
		if (sig)
			syscall(SYS_pidfd_send_signal, s->known_fd[i], sig, NULL, 0);
		close(s->known_fd[i]);
	}
	s->nknown = 0;
	if (st)
		*st = s->st;
	dt_supervisor_release(s, 0);
}
