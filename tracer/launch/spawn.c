/* SPDX-License-Identifier: MIT */
/* Starting helper programs and waiting for them with a deadline (spawn.h). */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exitcodes.h"
#include "sandbox.h"

/* In the child: make descriptor target refer to want (-2: /dev/null). The
 * /dev/null descriptor opened here is closed again, so the spawned program
 * starts with exactly 0, 1, 2 and what the caller chose to pass. */
static void dt_child_fd(int want, int target)
{
	int opened = want == -2;
	if (opened)
		want = open("/dev/null", target ? O_WRONLY : O_RDONLY);
	if (want >= 0 && want != target) {
		dup2(want, target);
		if (opened)
			close(want);
	}
}

pid_t dt_spawn(const struct dt_spawn *sp)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	if (sp->new_pgrp)
		setpgid(0, 0);
	if (sp->default_signals) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
	}
	dt_child_fd(sp->in, 0);
	dt_child_fd(sp->out, 1);
	dt_child_fd(sp->err, 2);
	for (const char *const *e = sp->env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq) {
			unsetenv(*e);
			continue;
		}
		char name[128];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
		setenv(name, eq + 1, 1);
	}
	if (sp->cwd && chdir(sp->cwd) < 0) {
		fprintf(stderr, "denytrace: %s: cannot enter %s: %s\n", sp->who ? sp->who : "spawn",
		        sp->cwd, strerror(errno));
		_exit(DT_EXIT_INTERNAL);
	}
	if (sp->landlock && dt_landlock_confine_writes(sp->landlock) < 0) {
		fprintf(stderr, "denytrace: %s: Landlock: %s\n", sp->who ? sp->who : "spawn",
		        strerror(errno));
		_exit(DT_EXIT_INTERNAL);
	}
	execvp(sp->argv[0], sp->argv);
	int e = errno;
	if (sp->exec_err_fd > 0 && write(sp->exec_err_fd, &e, sizeof(e)) < 0)
		_exit(DT_EXIT_INTERNAL);
	_exit(e == ENOENT ? DT_EXIT_NOTFOUND : DT_EXIT_NOEXEC);
}

int dt_wait_timeout(pid_t pid, int timeout)
{
	int st = 0;
	for (int ms = 0;; ms += 10) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (ms == timeout * 1000)
			kill(pid, SIGTERM); /* `denytrace run` forwards it to its command */
		if (ms >= timeout * 1000 + 2000) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		usleep(10 * 1000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* One read from fd into buf (or a sink once buf is full). Returns what
 * read(2) returned. */
static ssize_t dt_drain(int fd, char *buf, size_t cap, size_t *len)
{
	char sink[4096];
	char *dst = buf && *len + 1 < cap ? buf + *len : sink;
	size_t room = buf && *len + 1 < cap ? cap - 1 - *len : sizeof(sink);
	ssize_t n = read(fd, dst, room);
	if (n > 0 && dst != sink)
		*len += (size_t)n;
	return n;
}

int dt_capture(const char *const *argv, const char *const *env, int timeout_ms, char *out,
               size_t outcap, char *errout, size_t errcap)
{
	int po[2], pe[2];
	if (out && outcap)
		out[0] = 0;
	if (errout && errcap)
		errout[0] = 0;
	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	int ex[2]; /* reports an exec failure */
	if (pipe2(ex, O_CLOEXEC) < 0) {
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		return -1;
	}
	struct dt_spawn sp = {
	    (char *const *)argv, NULL, env, -2, po[1], pe[1], NULL, 1, 0, ex[1], NULL};
	pid_t pid = dt_spawn(&sp);
	if (pid < 0) {
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]), close(ex[0]), close(ex[1]);
		return -1;
	}
	setpgid(pid, pid);
	close(po[1]);
	close(pe[1]);
	close(ex[1]);
	int e = 0;
	ssize_t got = read(ex[0], &e, sizeof(e));
	close(ex[0]);
	size_t olen = 0, elen = 0;
	int timed_out = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	int open_fds = 2;
	while (got != (ssize_t)sizeof(e) && open_fds > 0) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		long spent =
		    (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (spent >= timeout_ms) {
			timed_out = 1;
			break;
		}
		int n = poll(fds, 2, (int)(timeout_ms - spent));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			ssize_t r = i ? dt_drain(fds[i].fd, errout, errcap, &elen)
			              : dt_drain(fds[i].fd, out, outcap, &olen);
			if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
				fds[i].fd = -1;
				open_fds--;
			}
		}
	}
	if (timed_out)
		kill(-pid, SIGKILL);
	close(po[0]);
	close(pe[0]);
	if (out && outcap)
		out[olen < outcap ? olen : outcap - 1] = 0;
	if (errout && errcap)
		errout[elen < errcap ? elen : errcap - 1] = 0;
	/* a command that closed its output can still hang: the deadline holds */
	int st = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, timed_out ? 0 : WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (w == 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			long spent = (now.tv_sec - start.tv_sec) * 1000 +
			             (now.tv_nsec - start.tv_nsec) / 1000000;
			if (spent >= timeout_ms) {
				timed_out = 1;
				kill(-pid, SIGKILL);
			} else {
				usleep(10000);
			}
		}
	}
	if (got == (ssize_t)sizeof(e)) {
		errno = e;
		return -1;
	}
	if (timed_out)
		return -2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int dt_which(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		char cand[PATH_MAX];
		if (snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, n ? path : ".", name) <
		    (int)sizeof(cand)) {
			struct stat st;
			if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
			    access(cand, X_OK) == 0) {
				snprintf(out, cap, "%s", cand);
				return 0;
			}
		}
		path += n + (end ? 1 : 0);
	}
	return -1;
}
