/* Unit tests for tracer/read/symbolize.c. Offsets are derived at runtime the same
 * way the preload probe derives them (address -> /proc/self/maps line ->
 * file offset), so the tests exercise the real contract rather than
 * hard-coded offsets of one particular libc build.
 *
 * Build: gcc -std=gnu11 -g -Itracer/read tracer/read/symbolize.c tests/unit/test_symbolize.c \
 *        -ldw -lelf -lcriterion -ldl
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize.h"

/* Line markers bracket the target so the test can check the reported line
 * really belongs to it, not merely that it is nonzero. */
static const int target_first_line = __LINE__;
__attribute__((noinline)) int dt_test_symbolize_target(int value)
{
	/* The asm keeps the body from being folded into a caller or merged with
	 * another identical function. */
	__asm__ volatile("" : "+r"(value));
	return value * 3 + 1;
}
static const int target_last_line = __LINE__;

/* Lives in the RW segment, whose p_offset and p_vaddr differ (by a page on
 * typical x86-64 links), so resolving it proves the file offset really is
 * translated through the program headers rather than used as an address. */
int dt_test_symbolize_data_object[64] = {1};

/* Finds the file-backed mapping containing ADDRESS and converts the address
 * to a file offset, exactly like the probe does. */
static void address_to_module_offset(const void *address, char *path, size_t path_size,
                                     uint64_t *file_offset)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	cr_assert_not_null(maps, "cannot open /proc/self/maps");

	uintptr_t target = (uintptr_t)address;
	char line[PATH_MAX + 256];
	bool found = false;
	while (!found && fgets(line, sizeof(line), maps) != NULL) {
		uintptr_t start, end;
		unsigned long long offset;
		int path_start = 0;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %llx %*s %*s %n", &start, &end,
		           &offset, &path_start) != 3 ||
		    path_start == 0)
			continue;
		if (target < start || target >= end)
			continue;
		char *mapped_path = line + path_start;
		mapped_path[strcspn(mapped_path, "\n")] = '\0';
		cr_assert(mapped_path[0] == '/', "address %p is not file-backed: %s", address,
		          line);
		snprintf(path, path_size, "%s", mapped_path);
		*file_offset = target - start + offset;
		found = true;
	}
	fclose(maps);
	cr_assert(found, "address %p not found in /proc/self/maps", address);
}

static void *libc_handle(void)
{
	void *handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	cr_assert_not_null(handle, "libc.so.6 not loaded: %s", dlerror());
	return handle;
}

/* glibc exports several names for one address (getpid/__getpid); any name
 * that resolves back to the same address, or the one dladdr picks, is
 * correct. */
static bool name_denotes_address(void *libc, const char *name, void *address)
{
	if (name[0] == '\0')
		return false;
	if (dlsym(libc, name) == address)
		return true;
	Dl_info info;
	if (dladdr(address, &info) != 0 && info.dli_sname != NULL &&
	    strcmp(info.dli_sname, name) == 0)
		return true;
	/* With libc6-dbg installed, .symtab may yield internal aliases such
	 * as __GI___getpid. */
	return strstr(name, "getpid") != NULL;
}

static void get_libc_getpid(void **address, char *path, size_t path_size, uint64_t *file_offset)
{
	void *libc = libc_handle();
	*address = dlsym(libc, "getpid");
	cr_assert_not_null(*address);
	address_to_module_offset(*address, path, path_size, file_offset);
	dlclose(libc);
}

Test(symbolize, libc_exported_function_by_file_offset_gives_its_name)
{
	void *address;
	char path[PATH_MAX];
	uint64_t file_offset;
	get_libc_getpid(&address, path, sizeof(path), &file_offset);

	struct dt_symbolizer *symbolizer = dt_symbolizer_new();
	cr_assert_not_null(symbolizer);
	struct dt_symbol symbol;
	cr_assert_eq(dt_symbolize(symbolizer, path, file_offset, &symbol), 0,
	             "cannot symbolize %s+0x%" PRIx64, path, file_offset);

	void *libc = libc_handle();
	cr_expect(name_denotes_address(libc, symbol.func, address),
	          "%s+0x%" PRIx64 " gave '%s', not getpid or an alias", path, file_offset,
	          symbol.func);
	cr_expect_eq(symbol.func_off, 0, "func_off %" PRIu64, symbol.func_off);

	/* An address inside the function reports the distance from its start. */
	cr_assert_eq(dt_symbolize(symbolizer, path, file_offset + 1, &symbol), 0);
	cr_expect(name_denotes_address(libc, symbol.func, address), "+1 gave '%s'", symbol.func);
	cr_expect_eq(symbol.func_off, 1, "func_off %" PRIu64, symbol.func_off);

	dlclose(libc);
	dt_symbolizer_free(symbolizer);
}

Test(symbolize, own_function_gives_name_source_file_and_line)
{
	char path[PATH_MAX];
	uint64_t file_offset;
	address_to_module_offset((const void *)&dt_test_symbolize_target, path, sizeof(path),
	                         &file_offset);

	struct dt_symbolizer *symbolizer = dt_symbolizer_new();
	struct dt_symbol symbol;
	cr_assert_eq(dt_symbolize(symbolizer, path, file_offset, &symbol), 0,
	             "cannot symbolize %s+0x%" PRIx64, path, file_offset);
	cr_expect_str_eq(symbol.func, "dt_test_symbolize_target");
	cr_expect_eq(symbol.func_off, 0);

	const char *suffix = "test_symbolize.c";
	size_t file_len = strlen(symbol.file);
	cr_expect(file_len >= strlen(suffix) &&
	              strcmp(symbol.file + file_len - strlen(suffix), suffix) == 0,
	          "source file '%s' is not %s (built without -g?)", symbol.file, suffix);
	cr_expect(symbol.line >= target_first_line && symbol.line <= target_last_line,
	          "line %d outside the target's lines %d..%d", symbol.line, target_first_line,
	          target_last_line);
	dt_symbolizer_free(symbolizer);
	/* Keeps the target referenced as a real call, not only by address. */
	cr_expect_eq(dt_test_symbolize_target(2), 7);
}

Test(symbolize, file_offset_is_translated_through_program_headers)
{
	char path[PATH_MAX];
	uint64_t file_offset;
	address_to_module_offset((const void *)&dt_test_symbolize_data_object[5], path,
	                         sizeof(path), &file_offset);

	struct dt_symbolizer *symbolizer = dt_symbolizer_new();
	struct dt_symbol symbol;
	cr_assert_eq(dt_symbolize(symbolizer, path, file_offset, &symbol), 0);
	cr_expect_str_eq(symbol.func, "dt_test_symbolize_data_object", "offset 0x%" PRIx64 " in %s",
	                 file_offset, path);
	cr_expect_eq(symbol.func_off, 5 * sizeof(int));
	dt_symbolizer_free(symbolizer);
}

Test(symbolize, missing_module_returns_error)
{
	struct dt_symbolizer *symbolizer = dt_symbolizer_new();
	struct dt_symbol symbol;
	memset(&symbol, 'x', sizeof(symbol));
	cr_expect_eq(
	    dt_symbolize(symbolizer, "/nonexistent/denytrace/libnothing.so", 0x1000, &symbol), -1);
	cr_expect_str_empty(symbol.func, "output must be cleared on failure");
	dt_symbolizer_free(symbolizer);
}

Test(symbolize, non_elf_file_returns_error)
{
	struct dt_symbolizer *symbolizer = dt_symbolizer_new();
	struct dt_symbol symbol;
	cr_expect_eq(dt_symbolize(symbolizer, "/etc/passwd", 0, &symbol), -1);
	cr_expect_eq(dt_symbolize(symbolizer, "/etc/passwd", 16, &symbol), -1,
	             "cached negative result must still fail");
	cr_expect_eq(dt_symbolize(symbolizer, "/etc", 0, &symbol), -1, "directory");
	cr_expect_eq(dt_symbolize(symbolizer, "/dev/null", 0, &symbol), -1, "empty device");
	dt_symbolizer_free(symbolizer);
}

Test(symbolize, offset_beyond_file_gives_error_or_empty_func)
{
	void *address;
	char path[PATH_MAX];
	uint64_t file_offset;
	get_libc_getpid(&address, path, sizeof(path), &file_offset);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);

	struct dt_symbolizer *symbolizer = dt_symbolizer_new();
	const uint64_t bad_offsets[] = {(uint64_t)st.st_size + 0x100000, UINT64_MAX,
	                                UINT64_MAX - 0x1000};
	for (size_t i = 0; i < sizeof(bad_offsets) / sizeof(bad_offsets[0]); i++) {
		struct dt_symbol symbol;
		int rc = dt_symbolize(symbolizer, path, bad_offsets[i], &symbol);
		cr_expect(rc == -1 || symbol.func[0] == '\0',
		          "offset 0x%" PRIx64 " gave rc %d func '%s'", bad_offsets[i], rc,
		          symbol.func);
	}
	dt_symbolizer_free(symbolizer);
}

Test(symbolize, many_lookups_in_one_module_use_the_cache)
{
	void *address;
	char path[PATH_MAX];
	uint64_t file_offset;
	get_libc_getpid(&address, path, sizeof(path), &file_offset);

	struct dt_symbolizer *symbolizer = dt_symbolizer_new();
	struct dt_symbol first;
	cr_assert_eq(dt_symbolize(symbolizer, path, file_offset, &first), 0);
	for (int i = 0; i < 10000; i++) {
		struct dt_symbol symbol;
		/* Spread over nearby code so lookups are not all identical. */
		uint64_t offset = file_offset + (uint64_t)(i % 4096);
		cr_assert_eq(dt_symbolize(symbolizer, path, offset, &symbol), 0, "lookup %d failed",
		             i);
		if (i % 4096 == 0)
			cr_assert_str_eq(symbol.func, first.func, "lookup %d", i);
	}
	dt_symbolizer_free(symbolizer);
}

/* More distinct module paths than cache slots forces evictions; evicted and
 * reopened modules must keep giving the same answers. The test binary is the
 * module because it is small: reopening a libc with libc6-dbg installed costs
 * tens of milliseconds each time. */
Test(symbolize, more_modules_than_cache_slots_still_resolve)
{
	char own_path[PATH_MAX];
	uint64_t file_offset;
	address_to_module_offset((const void *)&dt_test_symbolize_target, own_path,
	                         sizeof(own_path), &file_offset);

	char dir[] = "/tmp/dt_symbolize_test.XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	enum { link_count = DT_SYMBOLIZER_MAX_MODULES + 6 };
	char link_paths[link_count][PATH_MAX];
	for (int i = 0; i < link_count; i++) {
		snprintf(link_paths[i], sizeof(link_paths[i]), "%s/module%d", dir, i);
		cr_assert_eq(symlink(own_path, link_paths[i]), 0);
	}

	struct dt_symbolizer *symbolizer = dt_symbolizer_new();
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < link_count; i++) {
			struct dt_symbol symbol;
			cr_assert_eq(dt_symbolize(symbolizer, link_paths[i], file_offset, &symbol),
			             0, "round %d module %d", round, i);
			cr_assert_str_eq(symbol.func, "dt_test_symbolize_target",
			                 "round %d module %d", round, i);
		}
	}
	dt_symbolizer_free(symbolizer);

	for (int i = 0; i < link_count; i++)
		unlink(link_paths[i]);
	rmdir(dir);
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb");
	cr_assert_not_null(in, "open %s", from);
	FILE *out = fopen(to, "wb");
	cr_assert_not_null(out, "create %s", to);
	char buffer[65536];
	size_t n;
	while ((n = fread(buffer, 1, sizeof(buffer), in)) > 0)
		cr_assert_eq(fwrite(buffer, 1, n, out), n);
	fclose(in);
	cr_assert_eq(fclose(out), 0);
}

/* A cached module replaced on disk (as by a package upgrade) is reread
 * instead of being answered from the stale cache. */
Test(symbolize, module_replaced_on_disk_is_reopened)
{
	void *address;
	char libc_path[PATH_MAX];
	uint64_t file_offset;
	get_libc_getpid(&address, libc_path, sizeof(libc_path), &file_offset);

	char dir[] = "/tmp/dt_symbolize_test.XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char module_path[PATH_MAX], staging_path[PATH_MAX];
	snprintf(module_path, sizeof(module_path), "%s/libreplaced.so", dir);
	snprintf(staging_path, sizeof(staging_path), "%s/staging", dir);
	copy_file(libc_path, module_path);

	struct dt_symbolizer *symbolizer = dt_symbolizer_new();
	struct dt_symbol symbol;
	cr_expect_eq(dt_symbolize(symbolizer, module_path, file_offset, &symbol), 0);
	cr_expect_str_not_empty(symbol.func);

	copy_file("/etc/passwd", staging_path);
	cr_assert_eq(rename(staging_path, module_path), 0);
	cr_expect_eq(dt_symbolize(symbolizer, module_path, file_offset, &symbol), -1,
	             "stale cache entry used after the file was replaced");

	copy_file(libc_path, staging_path);
	cr_assert_eq(rename(staging_path, module_path), 0);
	cr_expect_eq(dt_symbolize(symbolizer, module_path, file_offset, &symbol), 0);
	cr_expect_str_not_empty(symbol.func);

	dt_symbolizer_free(symbolizer);
	unlink(module_path);
	rmdir(dir);
}

Test(symbolize, free_accepts_null)
{
	dt_symbolizer_free(NULL);
}
