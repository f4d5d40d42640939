// build-flags: -O1 -g
/*
 * evilnames: a program that chooses hostile names for everything the probe
 * records about it, for tests/integration/test_escape.c.
 *
 * Usage: evilnames COMM PATH [ARGS...]
 *
 * Sets its comm to COMM (PR_SET_NAME), then opens PATH for writing from a
 * function whose symbol is DTEVILSYM_MARKER_0123456789 in a source file
 * named DTEVILFILE_MARKER_0123456789.c (the test rewrites both markers in a
 * copy of this binary into terminal escape sequences of the same length, so
 * that a symbolizer reading the copy gets hostile names). Exits 0 whatever
 * the open returned.
 */
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#line 1 "DTEVILFILE_MARKER_0123456789.c"
__attribute__((noinline)) int DTEVILSYM_MARKER_0123456789(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	return fd;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	prctl(PR_SET_NAME, argv[1]);
	DTEVILSYM_MARKER_0123456789(argv[2]);
	return 0;
}
