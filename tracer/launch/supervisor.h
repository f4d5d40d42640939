/* SPDX-License-Identifier: MIT */
/* The seccomp supervisor (tracer/launch/seccomp.c, the filter, and supervisor.c,
 * the thread; this header is not named seccomp.h, which
 * would hide libseccomp's <seccomp.h> behind -Itracer): a user-notification filter installed in the
 * launched command (between fork and exec) and a thread of denytrace that
 * answers its notifications. It sees every execve/execveat of the tree
 * (exec coverage: DT_REC_EXEC records) and the write-capable file calls
 * --deny rules name (injected refusals: DT_REC_DENIAL with DT_T_INJECTED).
 * Every notification gets an answer; a target that died meanwhile makes
 * the answer fail with ENOENT, which is expected. */
#ifndef DENYTRACE_SUPERVISOR_H
#define DENYTRACE_SUPERVISOR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct dt_ring;
struct dt_deny_set;
struct dt_seccomp_filter;
struct dt_supervisor;

/* 1 when this process may install a filter without no_new_privs
 * (CAP_SYS_ADMIN in its effective set). */
int dt_seccomp_privileged(void);

/* 1 when process pid exec'ing path would run it set-user-ID or
 * set-group-ID with other effective ids than its real ones (not under
 * no_new_privs, not on a nosuid mount): the loader's secure mode, which
 * drops LD_PRELOAD, so the probe cannot enter. */
int dt_exec_setid(pid_t pid, const char *path);
/* 1 when the same exec would change ids but the no_new_privs of pid keeps
 * it from happening (the program runs without its privilege, as under
 * the supervisor's own filter); *euid: the effective uid it would get. */
int dt_exec_setid_lost(pid_t pid, const char *path, unsigned long *euid);

/* 1 when /proc is the one of this process's pid namespace (the
 * notifications' pids are read there); 0 with why in err. */
int dt_proc_is_ours(char *err, size_t errlen);

/* Builds the filter before fork (none when dt_proc_is_ours says no): execve/execveat when exec is
 * set, and the file calls of the op classes in deny_ops (plain read-only opens are not notified).
 * nnp: set no_new_privs when loading (needed unprivileged). Returns NULL with a reason in err. */
struct dt_seccomp_filter *dt_seccomp_build(int exec, unsigned deny_ops, int nnp, char *err,
                                           size_t errlen);
void dt_seccomp_free(struct dt_seccomp_filter *f);

/* In the child, between fork and exec: loads the filter. Returns the
 * listener fd, or a negative errno (EINVAL/ENOSYS: no user notification in
 * this kernel; EBUSY: already under a listener, e.g. denytrace in
 * denytrace; EPERM/EACCES: a sandbox forbids seccomp). */
int dt_seccomp_install(struct dt_seccomp_filter *f);

/* The listener travels to the parent over a unix socket (SCM_RIGHTS);
 * a negative value sends that errno instead. recv returns the fd or a
 * negative errno (-EPIPE when the child sent nothing). */
int dt_seccomp_send(int sock, int fd_or_err);
int dt_seccomp_recv(int sock);

struct dt_supervisor_stats {
	uint64_t notifications; /* answered */
	uint64_t execs;         /* exec records written */
	uint64_t blind;         /* of which the probe could not enter */
	uint64_t setid_lost;    /* set-id programs run without their privilege */
	uint64_t injected;      /* refusals injected */
};

/* Starts the supervising thread on listener (taken over: closed at the
 * end). Records go to ring; deny may be NULL (exec coverage only) and is
 * used only by the thread until dt_supervisor_wait returns. */
struct dt_supervisor *dt_supervisor_start(int listener, struct dt_ring *ring,
                                          struct dt_deny_set *deny, char *err, size_t errlen);
/* 1 while some process of the filtered tree is alive. */
int dt_supervisor_busy(struct dt_supervisor *s);
/* Waits until every process of the filtered tree is gone (the listener
 * hangs up), then frees s. st may be NULL. */
void dt_supervisor_wait(struct dt_supervisor *s, struct dt_supervisor_stats *st);
/* Stops supervising now (a signal while waiting for processes the
 * command left behind): sig (0: none) goes to each process of the tree
 * still alive that the supervisor has seen (at an exec or a notified
 * call), and they go on unsupervised, their calls let through by the
 * heir, a process dt_supervisor_start forked that holds the listener
 * until the last of them exits (also when denytrace is killed). Frees s. */
void dt_supervisor_abandon(struct dt_supervisor *s, int sig, struct dt_supervisor_stats *st);

#endif
