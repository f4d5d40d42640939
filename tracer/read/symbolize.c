/* Symbolization through elfutils' libdwfl: it already knows how to prefer
 * .symtab over .dynsym, read .gnu_debugdata (MiniDebugInfo) and find separate
 * debug files by build-id or .gnu_debuglink under /usr/lib/debug. */
#include "symbolize.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safeopen.h"

/* What identifies the bytes of a file on disk; if any of it changes, the
 * cached Elf describes a different (upgraded, rebuilt) file. */
struct dt_file_identity {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct dt_cached_module {
	char *path; /* NULL when the slot is free */
	struct dt_file_identity identity;
	/* One Dwfl per module: every file is reported at its own link-time
	 * addresses, so modules would overlap inside a shared Dwfl. */
	Dwfl *dwfl; /* NULL for a file known not to be usable ELF */
	Dwfl_Module *module;
	uint64_t last_use; /* symbolizer->use_clock value at the last lookup */
	uint64_t open_id;  /* unique per open, so memo entries of a closed or
	                    * reopened module can never match again */
};

/* dwfl_module_addrinfo scans the whole symbol table on every call (libc's,
 * with libc6-dbg, is large), while traces repeat the same frames over and over:
 * remember recent answers. Direct-mapped, so a collision simply overwrites. */
#define DT_SYMBOL_MEMO_SLOTS 1024

struct dt_symbol_memo_entry {
	uint64_t open_id; /* 0 when empty */
	uint64_t file_offset;
	struct dt_symbol symbol;
};

struct dt_symbolizer {
	struct dt_cached_module modules[DT_SYMBOLIZER_MAX_MODULES];
	uint64_t use_clock;
	uint64_t last_open_id;
	struct dt_symbol_memo_entry memo[DT_SYMBOL_MEMO_SLOTS];
};

/* libdwfl keeps a pointer to the callbacks for the Dwfl's lifetime, hence
 * static storage. find_elf is never called since we hand it an open file;
 * debuginfo lookup uses the standard build-id/debuglink search (which also
 * consults debuginfod when the user has set DEBUGINFOD_URLS). */
static char *debuginfo_path;
static Dwfl_Callbacks offline_callbacks = {
    .debuginfo_path = &debuginfo_path,
};

/* libdw is opened on the first symbolizer, not linked: linking it (with
 * libelf and four compression libraries behind it) would cost every
 * `denytrace run` the loading of them all (make bench measures start-up),
 * and only show and evidence symbolize. The
 * headers still give each function's type. */
#define DT_DW_FUNCS(X)                                                                             \
	X(dwfl_begin)                                                                              \
	X(dwfl_end)                                                                                \
	X(dwfl_report_elf)                                                                         \
	X(dwfl_report_end)                                                                         \
	X(dwfl_module_getelf)                                                                      \
	X(dwfl_module_addrinfo)                                                                    \
	X(dwfl_module_getsrc)                                                                      \
	X(dwfl_lineinfo)                                                                           \
	X(dwfl_build_id_find_elf)                                                                  \
	X(dwfl_standard_find_debuginfo)                                                            \
	X(dwfl_offline_section_address)                                                            \
	X(elf_getphdrnum)                                                                          \
	X(gelf_getphdr)

static struct {
#define DT_DW_PTR(f) __typeof__(f) *f;
	DT_DW_FUNCS(DT_DW_PTR)
#undef DT_DW_PTR
} dw;

/* 1 when libdw is usable; without it frames stay unsymbolized. */
static int dt_dw_load(void)
{
	static int state; /* 0 untried, 1 loaded, -1 not available */
	if (state)
		return state > 0;
	state = -1;
	/* libelf's functions come through libdw's handle: it depends on it */
	void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 0;
#define DT_DW_SYM(f)                                                                               \
	if (!(dw.f = (__typeof__(f) *)dlsym(h, #f)))                                               \
		return 0;
	DT_DW_FUNCS(DT_DW_SYM)
#undef DT_DW_SYM
	offline_callbacks.find_elf = dw.dwfl_build_id_find_elf;
	offline_callbacks.find_debuginfo = dw.dwfl_standard_find_debuginfo;
	offline_callbacks.section_address = dw.dwfl_offline_section_address;
	state = 1;
	return 1;
}

static void copy_string(char *dest, size_t dest_size, const char *src)
{
	size_t len = strlen(src);

	if (len >= dest_size)
		len = dest_size - 1;
	memcpy(dest, src, len);
	dest[len] = '\0';
}

static void identity_from_stat(struct dt_file_identity *identity, const struct stat *st)
{
	identity->dev = st->st_dev;
	identity->ino = st->st_ino;
	identity->size = st->st_size;
	identity->mtime = st->st_mtim;
}

static bool identity_equal(const struct dt_file_identity *a, const struct dt_file_identity *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

static void cached_module_release(struct dt_cached_module *cached)
{
	if (cached->dwfl != NULL)
		dw.dwfl_end(cached->dwfl); /* also closes the module's fd */
	free(cached->path);
	memset(cached, 0, sizeof(*cached));
}

struct dt_symbolizer *dt_symbolizer_new(void)
{
	if (!dt_dw_load())
		return NULL;
	return calloc(1, sizeof(struct dt_symbolizer));
}

void dt_symbolizer_free(struct dt_symbolizer *symbolizer)
{
	if (symbolizer == NULL)
		return;
	for (size_t i = 0; i < DT_SYMBOLIZER_MAX_MODULES; i++)
		if (symbolizer->modules[i].path != NULL)
			cached_module_release(&symbolizer->modules[i]);
	free(symbolizer);
}

/* Opens PATH into CACHED. A file that exists but is not loadable ELF is still
 * cached (with dwfl == NULL) so repeated lookups do not re-parse it. Returns
 * -1 when the path cannot be opened, is not a regular file (a directory or
 * device would never become ELF), or memory runs out; nothing is cached then. */
static int cached_module_open(struct dt_cached_module *cached, const char *path)
{
	/* the path comes from a ring: it may name a FIFO or a device */
	struct stat st;
	int fd = dt_open_regular(path, &st);
	if (fd < 0)
		return -1;

	char *path_copy = strdup(path);
	if (path_copy == NULL) {
		close(fd);
		return -1;
	}

	memset(cached, 0, sizeof(*cached));
	cached->path = path_copy;
	identity_from_stat(&cached->identity, &st);

	Dwfl *dwfl = dw.dwfl_begin(&offline_callbacks);
	if (dwfl == NULL) {
		/* Out of memory says nothing about the file: cache nothing. */
		close(fd);
		cached_module_release(cached);
		return -1;
	}
	/* base 0 with add_p_vaddr keeps module addresses equal to the file's
	 * p_vaddr values (bias 0) for ET_DYN as well as ET_EXEC. On success
	 * libdwfl owns fd; on failure it leaves it to us. */
	Dwfl_Module *module = dw.dwfl_report_elf(dwfl, path, path, fd, 0, true);
	if (module == NULL) {
		close(fd);
		dw.dwfl_end(dwfl);
		return 0;
	}
	dw.dwfl_report_end(dwfl, NULL, NULL);
	cached->dwfl = dwfl;
	cached->module = module;
	return 0;
}

/* Returns the cache slot for PATH, opening (or reopening after a change on
 * disk) as needed, or NULL when the file cannot be opened. */
static struct dt_cached_module *lookup_module(struct dt_symbolizer *symbolizer, const char *path)
{
	/* stat on every lookup is what lets a long-lived symbolizer notice a
	 * library replaced by a package upgrade. */
	struct stat st;
	if (stat(path, &st) != 0)
		return NULL;
	struct dt_file_identity current;
	identity_from_stat(&current, &st);

	struct dt_cached_module *slot = NULL;
	for (size_t i = 0; i < DT_SYMBOLIZER_MAX_MODULES; i++) {
		struct dt_cached_module *cached = &symbolizer->modules[i];
		if (cached->path != NULL && strcmp(cached->path, path) == 0) {
			if (identity_equal(&cached->identity, &current)) {
				cached->last_use = ++symbolizer->use_clock;
				return cached;
			}
			cached_module_release(cached);
			slot = cached;
			break;
		}
	}

	if (slot == NULL) {
		/* Free slot if any, else the least recently used one. */
		for (size_t i = 0; i < DT_SYMBOLIZER_MAX_MODULES; i++) {
			struct dt_cached_module *cached = &symbolizer->modules[i];
			if (cached->path == NULL) {
				slot = cached;
				break;
			}
			if (slot == NULL || cached->last_use < slot->last_use)
				slot = cached;
		}
		if (slot->path != NULL)
			cached_module_release(slot);
	}

	if (cached_module_open(slot, path) != 0)
		return NULL;
	slot->last_use = ++symbolizer->use_clock;
	slot->open_id = ++symbolizer->last_open_id;
	return slot;
}

/* The probe records file offsets; symbols and line tables are keyed by
 * virtual address. The PT_LOAD whose file image contains the offset gives the
 * translation. Returns false when no segment covers the offset (e.g. the file
 * changed since the trace, or a garbage offset). */
static bool file_offset_to_vaddr(Elf *elf, uint64_t file_offset, GElf_Addr *vaddr)
{
	size_t phnum;
	if (dw.elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr phdr_mem;
		GElf_Phdr *phdr = dw.gelf_getphdr(elf, (int)i, &phdr_mem);
		if (phdr == NULL || phdr->p_type != PT_LOAD)
			continue;
		if (file_offset >= phdr->p_offset &&
		    file_offset - phdr->p_offset < phdr->p_filesz) {
			*vaddr = phdr->p_vaddr + (file_offset - phdr->p_offset);
			return true;
		}
	}
	return false;
}

static struct dt_symbol_memo_entry *memo_slot(struct dt_symbolizer *symbolizer, uint64_t open_id,
                                              uint64_t file_offset)
{
	/* Fibonacci hashing spreads nearby offsets and modules across slots. */
	uint64_t hash = (file_offset ^ (open_id << 40)) * 0x9e3779b97f4a7c15ull;
	return &symbolizer->memo[hash >> 54]; /* top 10 bits: 1024 slots */
}

_Static_assert(DT_SYMBOL_MEMO_SLOTS == 1 << 10, "memo_slot takes the top 10 hash bits");

static void symbolize_in_module(struct dt_cached_module *cached, uint64_t file_offset,
                                struct dt_symbol *out)
{
	GElf_Addr bias;
	Elf *elf = dw.dwfl_module_getelf(cached->module, &bias);
	GElf_Addr vaddr;
	/* Either failure means the module is readable but nothing lives at
	 * that offset: the answer stays empty rather than an error. */
	if (elf == NULL || !file_offset_to_vaddr(elf, file_offset, &vaddr))
		return;
	GElf_Addr address = vaddr + bias;

	GElf_Off symbol_offset = 0;
	GElf_Sym symbol;
	const char *func = dw.dwfl_module_addrinfo(cached->module, address, &symbol_offset, &symbol,
	                                           NULL, NULL, NULL);
	if (func != NULL) {
		copy_string(out->func, sizeof(out->func), func);
		out->func_off = symbol_offset;
	}

	/* Loads DWARF lazily (possibly from /usr/lib/debug) on first use; the
	 * result is cached inside the Dwfl_Module. */
	Dwfl_Line *line = dw.dwfl_module_getsrc(cached->module, address);
	if (line != NULL) {
		int line_number = 0;
		const char *source = dw.dwfl_lineinfo(line, NULL, &line_number, NULL, NULL, NULL);
		if (source != NULL) {
			copy_string(out->file, sizeof(out->file), source);
			out->line = line_number;
		}
	}
}

int dt_symbolize(struct dt_symbolizer *symbolizer, const char *module_path, uint64_t file_offset,
                 struct dt_symbol *out)
{
	memset(out, 0, sizeof(*out));
	if (symbolizer == NULL || module_path == NULL)
		return -1;

	struct dt_cached_module *cached = lookup_module(symbolizer, module_path);
	if (cached == NULL || cached->dwfl == NULL)
		return -1;

	struct dt_symbol_memo_entry *memo = memo_slot(symbolizer, cached->open_id, file_offset);
	if (memo->open_id == cached->open_id && memo->file_offset == file_offset) {
		*out = memo->symbol;
		return 0;
	}
	symbolize_in_module(cached, file_offset, out);
	memo->open_id = cached->open_id;
	memo->file_offset = file_offset;
	memo->symbol = *out;
	return 0;
}
