/* SPDX-License-Identifier: MIT */
/*
 * spawnloop N PRELOAD -- CMD...: runs CMD N times (fork + exec + wait) with
 * LD_PRELOAD=PRELOAD in the child only ("-" for none) and prints the mean
 * microseconds per run. The benchmark alternates variants with it so that
 * the cost of loading the probe at exec is measured without the probe
 * loaded into the measuring process itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: spawnloop N PRELOAD|- -- CMD...\n");
		return 2;
	}
	long n = atol(argv[1]);
	const char *preload = argv[2];
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			if (strcmp(preload, "-"))
				setenv("LD_PRELOAD", preload, 1);
			execvp(argv[4], argv + 4);
			_exit(127);
		}
		int st;
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) == 127) {
			fprintf(stderr, "spawnloop: %s failed\n", argv[4]);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3;
	printf("%.1f\n", us / (double)n);
	return 0;
}
