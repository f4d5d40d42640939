/*
 * idchange DIR: refuses a write-open of DIR/missing/STEP after each step
 * that changes who the process or a thread is (run with ENOENT as a
 * refusal, as root). The probe keeps ids and names per thread between
 * records; each record must still say who made the call.
 *
 *   start        nothing changed yet
 *   setgroups    setgroups({4242})
 *   setegid      setegid(65534)
 *   seteuid      seteuid(65534)
 *   back         seteuid(0), setegid(0)
 *   prctl        prctl(PR_SET_NAME, "renamed")
 *   pthread_setname_np  pthread_setname_np(self, "named-np")
 *   raw          syscall(SYS_setresuid, -1, 65533, -1): this thread only
 *   libc         back to root
 *   setresuid    setresuid(-1, 65531, -1)
 *   setreuid     setreuid(-1, 65530)
 *   setresgid    setresgid(-1, 65529, -1)
 *   setregid     setregid(-1, 65528)
 *   setgid       setgid(65527)
 *   initgroups   initgroups("root", 4343)
 *   thread-1     a second thread, before the next step
 *   thread-2     the same thread after the main one's seteuid(65532)
 *   child        a fork child (its parent: this process)
 *   setuid       the child after setuid(65526), which root cannot undo
 *   ns, unshare  a child before and after unshare(CLONE_NEWUSER): unmapped
 *                there, its ids read as the overflow id
 *   ns-join, setns  another child before and after setns() into that
 *                namespace
 * Where no user namespace can be made the last four are left out.
 * A step named as a call of preload/selfids.def follows that call.
 * Exits 0 when every step itself succeeded.
 */
// build-flags: -lpthread
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir;
static sem_t go, done;

static void refuse(const char *step)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/missing/%s", dir, step);
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd >= 0)
		exit(3);
}

static void *second_thread(void *arg)
{
	(void)arg;
	refuse("thread-1");
	sem_post(&done);
	sem_wait(&go);
	refuse("thread-2");
	return NULL;
}

/* One step for each id call of preload/selfids.def the steps above leave
 * out, each back to root after it where root can go back. */
static int libc_steps(void)
{
	refuse("libc"); /* what is kept now: root, whatever came before */
	if (setresuid(-1, 65531, -1) != 0)
		return 1;
	refuse("setresuid");
	if (setresuid(-1, 0, -1) != 0 || setreuid(-1, 65530) != 0)
		return 1;
	refuse("setreuid");
	if (setreuid(-1, 0) != 0 || setresgid(-1, 65529, -1) != 0)
		return 1;
	refuse("setresgid");
	if (setregid(-1, 65528) != 0)
		return 1;
	refuse("setregid");
	if (setgid(65527) != 0)
		return 1;
	refuse("setgid");
	if (setgid(0) != 0 || initgroups("root", 4343) != 0)
		return 1;
	refuse("initgroups");
	return 0;
}

static int steps(void)
{
	gid_t g = 4242;
	refuse("start");
	if (setgroups(1, &g) != 0)
		return 1;
	refuse("setgroups");
	if (setegid(65534) != 0)
		return 1;
	refuse("setegid");
	if (seteuid(65534) != 0)
		return 1;
	refuse("seteuid");
	if (seteuid(0) != 0 || setegid(0) != 0)
		return 1;
	refuse("back");
	if (prctl(PR_SET_NAME, "renamed", 0, 0, 0) != 0)
		return 1;
	refuse("prctl");
	if (pthread_setname_np(pthread_self(), "named-np") != 0)
		return 1;
	refuse("pthread_setname_np");
	if (syscall(SYS_setresuid, -1, 65533, -1) != 0)
		return 1;
	refuse("raw");
	if (syscall(SYS_setresuid, -1, 0, -1) != 0)
		return 1;
	return libc_steps();
}

static int wait_for(pid_t pid)
{
	int st;
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

/* The child that makes the user namespace: says 'u' on ready once it is in
 * it (anything else: none could be made), then waits for done to close. */
static void make_user_ns(int ready, int done)
{
	char c;
	refuse("ns");
	if (unshare(CLONE_NEWUSER) != 0) {
		(void)!write(ready, "x", 1);
		_exit(0);
	}
	refuse("unshare");
	(void)!write(ready, "u", 1);
	(void)!read(done, &c, 1);
	_exit(0);
}

static void join_user_ns(pid_t owner)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)owner);
	int fd = open(path, O_RDONLY);
	refuse("ns-join");
	if (fd < 0 || setns(fd, CLONE_NEWUSER) != 0)
		_exit(1);
	refuse("setns");
	_exit(0);
}

static int user_ns_steps(void)
{
	int ready[2], done[2];
	char c = 0;
	if (pipe(ready) != 0 || pipe(done) != 0)
		return 1;
	pid_t owner = fork();
	if (owner == 0) {
		close(ready[0]);
		close(done[1]);
		make_user_ns(ready[1], done[0]);
	}
	close(ready[1]);
	close(done[0]);
	int failed = read(ready[0], &c, 1) != 1;
	if (c == 'u') {
		pid_t joiner = fork();
		if (joiner == 0)
			join_user_ns(owner);
		wait_for(joiner); /* a setns refused shows as its step missing */
	}
	close(done[1]);
	return failed | wait_for(owner);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	dir = argv[1];
	if (steps() != 0)
		return 1;
	pthread_t t;
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	if (pthread_create(&t, NULL, second_thread, NULL) != 0)
		return 1;
	sem_wait(&done);
	if (seteuid(65532) != 0)
		return 1;
	sem_post(&go);
	pthread_join(t, NULL);
	if (seteuid(0) != 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {
		refuse("child");
		if (setuid(65526) != 0)
			_exit(1);
		refuse("setuid");
		_exit(0);
	}
	if (wait_for(child) != 0)
		return 1;
	return user_ns_steps();
}
