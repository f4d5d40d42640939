// build-flags: -ldl -lpthread
/*
 * reload: refusals from inside a plugin that is loaded, unloaded and
 * loaded again, for tests/integration/test_stacks.c. The plugins are
 * build/helpers/plugin-small.so and plugin-big.so (tests/helpers/plugins/
 * frame.S): the same code at the same offsets with other frame sizes.
 *
 *   reload seq WORK DIR SO...  for each SO in turn: copy it to WORK/plugin.so,
 *                              dlopen that path, refuse DIR/N (N = 0, 1, ...)
 *                              from inside it, dlclose; prints "base N ADDR"
 *                              (where it was loaded)
 *   reload race WORK DIR SMALL BIG
 *                              8 threads, each 30 times: dlopen its build
 *                              (even threads the small one, odd the big one,
 *                              from WORK/small.so and WORK/big.so), refuse
 *                              DIR/small or DIR/big from inside, dlclose
 *
 * Exits 0 when every open was refused (EACCES or EROFS), else 1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static const char *dir;
static int failed;

static int copy(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n = 0;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			n = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return in >= 0 && out >= 0 && n == 0 ? 0 : -1;
}

/* One refusal of DIR/name from inside the plugin at so; the plugin's load
 * address, or NULL. */
static NOINLINE void *load_and_refuse(const char *so, const char *name)
{
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "reload: %s\n", dlerror());
		failed = 1;
		return NULL;
	}
	int (*refuse)(const char *) = (int (*)(const char *))dlsym(h, "plugin_refuse");
	Dl_info info = {0};
	dladdr((void *)refuse, &info);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = refuse ? refuse(path) : 0;
	if (fd >= 0 || (errno != EACCES && errno != EROFS))
		__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
	if (fd >= 0)
		close(fd);
	dlclose(h);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return info.dli_fbase;
}

static const char *race_so[2];

static void *racer(void *arg)
{
	long i = (long)arg;
	for (int k = 0; k < 30; k++)
		load_and_refuse(race_so[i & 1], i & 1 ? "big" : "small");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 5 || (strcmp(argv[1], "seq") && strcmp(argv[1], "race"))) {
		fprintf(stderr,
		        "usage: reload seq WORK DIR SO... | reload race WORK DIR SMALL BIG\n");
		return 2;
	}
	dir = argv[3];
	char so[4096];
	if (!strcmp(argv[1], "race")) {
		static char small[4096], big[4096];
		snprintf(small, sizeof(small), "%s/small.so", argv[2]);
		snprintf(big, sizeof(big), "%s/big.so", argv[2]);
		if (argc != 6 || copy(argv[4], small) || copy(argv[5], big))
			return 2;
		race_so[0] = small;
		race_so[1] = big;
		pthread_t t[8];
		for (long i = 0; i < 8; i++)
			if (pthread_create(&t[i], NULL, racer, (void *)i) != 0)
				return 1;
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
		return failed;
	}
	snprintf(so, sizeof(so), "%s/plugin.so", argv[2]);
	for (int i = 4; i < argc; i++) {
		char name[16];
		snprintf(name, sizeof(name), "%d", i - 4);
		if (copy(argv[i], so) != 0) {
			perror("reload: copy");
			return 2;
		}
		printf("base %d %p\n", i - 4, load_and_refuse(so, name));
	}
	return failed;
}
