/* SPDX-License-Identifier: MIT */
/*
 * No silent blind spot on a new glibc: every file-changing function the
 * installed libc exports (its dynamic symbol table, read from the file the
 * test itself runs with) is wrapped by preload/calls.def or left out on
 * purpose, with a reason, in libc_calls.def beside this file. A glibc that
 * adds an entry point (an openat2, a fchmodat2) fails here until someone
 * decides which. The check is shown to fail on a library exporting one
 * function more than calls.def knows.
 */
#include <criterion/criterion.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(libc_exports, .fini = teardown, .timeout = 120);

#define DT_OPEN(name, ...) #name,
#define DT_INT(name, ...) #name,
#define DT_PTR(name, ...) #name,
#define DT_PTR0(name, ...) #name,
#define DT_FCNTL(name) #name,
static const char *const wrapped[] = {
#include "calls.def"
};

#define DT_FAMILY(stem) #stem,
#define DT_LEFT_OUT(name, reason)
static const char *const families[] = {
#include "libc_calls.def"
};
#undef DT_FAMILY
#undef DT_LEFT_OUT

struct left_out {
	const char *name, *reason;
};
#define DT_FAMILY(stem)
#define DT_LEFT_OUT(name, reason) {#name, reason},
static const struct left_out left_out[] = {
#include "libc_calls.def"
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int listed(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

static int is_left_out(const char *name)
{
	for (size_t i = 0; i < COUNT(left_out); i++)
		if (!strcmp(name, left_out[i].name))
			return 1;
	return 0;
}

/* A stem, then nothing but an "at", digits and underscores: the suffixes
 * glibc gives an entry point's variants (64, _2, at, 2). */
static int is_file_changing(const char *name)
{
	while (*name == '_')
		name++;
	for (size_t i = 0; i < COUNT(families); i++) {
		size_t k = strlen(families[i]);
		if (strncmp(name, families[i], k))
			continue;
		const char *rest = name + k;
		if (!strncmp(rest, "at", 2))
			rest += 2;
		if (strspn(rest, "0123456789_") == strlen(rest))
			return 1;
	}
	return 0;
}

/* The file's contents, malloc'ed; its size in *len. */
static unsigned char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "cannot open %s", path);
	struct stat st;
	cr_assert_eq(fstat(fd, &st), 0);
	unsigned char *buf = malloc((size_t)st.st_size);
	cr_assert_not_null(buf);
	cr_assert_eq(pread(fd, buf, (size_t)st.st_size, 0), st.st_size, "short read of %s", path);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* Calls fn(name, ctx) for every function the ELF shared object at path
 * defines and exports (a name under two versions comes twice). */
static void for_each_export(const char *path, void (*fn)(const char *, void *), void *ctx)
{
	size_t len;
	unsigned char *elf = slurp(path, &len);
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)elf;
	cr_assert(len >= sizeof(*eh) && !memcmp(eh->e_ident, ELFMAG, SELFMAG), "%s: not ELF", path);
	cr_assert(eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) <= len, "%s: bad sections",
	          path);
	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(elf + eh->e_shoff);
	for (size_t s = 0; s < eh->e_shnum; s++) {
		if (sh[s].sh_type != SHT_DYNSYM || sh[s].sh_link >= eh->e_shnum)
			continue;
		const ElfW(Shdr) *strs = &sh[sh[s].sh_link];
		cr_assert(sh[s].sh_offset + sh[s].sh_size <= len &&
		          strs->sh_offset + strs->sh_size <= len);
		const ElfW(Sym) *sym = (const ElfW(Sym) *)(elf + sh[s].sh_offset);
		const char *names = (const char *)elf + strs->sh_offset;
		for (size_t i = 0; i < sh[s].sh_size / sizeof(*sym); i++) {
			int type = ELF64_ST_TYPE(sym[i].st_info),
			    bind = ELF64_ST_BIND(sym[i].st_info);
			if (sym[i].st_shndx == SHN_UNDEF || sym[i].st_name >= strs->sh_size ||
			    (type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    (bind != STB_GLOBAL && bind != STB_WEAK))
				continue;
			fn(names + sym[i].st_name, ctx);
		}
	}
	free(elf);
}

struct tally {
	size_t seen;
	char *out;
	size_t cap;
};

static void tally_unaccounted(const char *name, void *ctx)
{
	struct tally *t = ctx;
	if (!is_file_changing(name))
		return;
	t->seen++;
	if (listed(name, wrapped, COUNT(wrapped)) || is_left_out(name))
		return;
	/* a name exported under two versions is named once */
	char word[256];
	snprintf(word, sizeof(word), " %s ", name);
	size_t used = strlen(t->out);
	char padded[8192];
	snprintf(padded, sizeof(padded), " %s ", t->out);
	if (!strstr(padded, word) && used + strlen(name) + 2 < t->cap)
		snprintf(t->out + used, t->cap - used, "%s%s", used ? " " : "", name);
}

/* Appends to out (space-separated) every function the ELF shared object
 * at path defines and exports that is file-changing and neither wrapped
 * nor left out. Returns how many file-changing functions it exports. */
static size_t unaccounted(const char *path, char *out, size_t cap)
{
	struct tally t = {0, out, cap};
	out[0] = 0;
	for_each_export(path, tally_unaccounted, &t);
	return t.seen;
}

struct wanted {
	const char *name;
	int found;
};

static void find_export(const char *name, void *ctx)
{
	struct wanted *w = ctx;
	w->found |= !strcmp(name, w->name);
}

/* Whether the ELF shared object at path exports a function called name. */
static int exports(const char *path, const char *name)
{
	struct wanted w = {name, 0};
	for_each_export(path, find_export, &w);
	return w.found;
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *base = strrchr(info->dlpi_name, '/');
	if (base && !strncmp(base, "/libc.so", 8)) {
		snprintf(data, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

Test(libc_exports,
     every_file_changing_function_of_the_installed_libc_is_wrapped_or_left_out_with_a_reason)
{
	char libc[PATH_MAX] = "";
	dl_iterate_phdr(find_libc, libc);
	cr_assert(libc[0], "the test process has no libc.so loaded");
	char missing[4096];
	size_t seen = unaccounted(libc, missing, sizeof(missing));
	cr_log_info("%s exports %zu file-changing functions", libc, seen);
	/* the families must match something, or the check checks nothing */
	cr_expect_geq(seen, COUNT(wrapped), "only %zu file-changing functions found in %s", seen,
	              libc);
	cr_expect_eq(missing[0], 0,
	             "%s exports file-changing functions the probe does not wrap: %s; add each to "
	             "preload/calls.def, or to tests/integration/libc_calls.def with the reason",
	             libc, missing);
}

Test(libc_exports, every_left_out_function_has_a_reason_and_is_not_also_wrapped)
{
	for (size_t i = 0; i < COUNT(left_out); i++) {
		cr_expect(strlen(left_out[i].reason) > 10, "%s: no reason given", left_out[i].name);
		cr_expect_not(listed(left_out[i].name, wrapped, COUNT(wrapped)),
		              "%s is both wrapped and left out", left_out[i].name);
		cr_expect(is_file_changing(left_out[i].name), "%s is in no family",
		          left_out[i].name);
	}
}

Test(libc_exports, every_wrapped_function_belongs_to_a_file_changing_family)
{
	for (size_t i = 0; i < COUNT(wrapped); i++)
		cr_expect(is_file_changing(wrapped[i]),
		          "%s: calls.def wraps it but no family covers it", wrapped[i]);
}

/* A stand-in for a newer glibc: a real shared object exporting open (known)
 * and fchmodat2 and openat2 (not in calls.def). */
Test(libc_exports, a_libc_exporting_one_more_file_changing_function_fails_the_check)
{
	const char *dir = dtt_tmpdir();
	char src[PATH_MAX], so[PATH_MAX], cmd[3 * PATH_MAX];
	snprintf(src, sizeof(src), "%s/newlibc.c", dir);
	snprintf(so, sizeof(so), "%s/libc.so.6", dir);
	FILE *f = fopen(src, "w");
	cr_assert_not_null(f);
	fputs("int open(const char *p, int f) { return -1; }\n"
	      "int fchmodat2(int d, const char *p, int m, int f) { return -1; }\n"
	      "int openat2(int d, const char *p, void *h, unsigned long n) { return -1; }\n"
	      "int open_memstream(void) { return 0; }\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -w -o '%s' '%s'", so, src);
	const char *sh[] = {"sh", "-c", cmd, NULL};
	char out[4096];
	cr_assert_eq(dtt_system(out, sizeof(out), sh, NULL), 0, "%s", out);
	char missing[4096];
	size_t seen = unaccounted(so, missing, sizeof(missing));
	cr_expect_eq(seen, 3, "open, fchmodat2 and openat2 are file-changing, %zu found", seen);
	cr_expect(dt_same_words(missing, "fchmodat2 openat2"), "unaccounted: %s", missing);
}

/* A wrapper finds the real function by dlsym(RTLD_NEXT) at its first call,
 * which may be in a signal handler; dlsym allocates (its error message)
 * only when the name is missing. Every name the probe wraps is in the
 * installed libc, so on it that path is never taken. */
Test(libc_exports, every_wrapped_function_is_in_the_installed_libc_so_its_lookup_never_fails)
{
	char libc[PATH_MAX] = "";
	dl_iterate_phdr(find_libc, libc);
	cr_assert(libc[0], "the test process has no libc.so loaded");
	cr_assert_not(exports(libc, "denytrace_no_such_function"), "the check finds anything");
	for (size_t i = 0; i < COUNT(wrapped); i++)
		cr_expect(exports(libc, wrapped[i]),
		          "%s: the probe wraps it but %s does not export it: its first call would "
		          "take dlsym's failing, allocating path",
		          wrapped[i], libc);
}
