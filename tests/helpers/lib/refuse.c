#include "refuse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *refuse_dir = ".";

int refuse_with(const char *name, int flags)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", refuse_dir, name);
	errno = 0;
	int fd = open(path, O_WRONLY | O_CREAT | flags, 0644);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

int reap(pid_t pid)
{
	int st = 0;
	if (pid < 0)
		return -1;
	pid_t got;
	while ((got = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (got != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int run_mode(const struct helper_mode *modes, const char *name)
{
	for (const struct helper_mode *m = modes; m->name; m++)
		if (!strcmp(m->name, name)) {
			m->run();
			return 0;
		}
	return 2;
}
