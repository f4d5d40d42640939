/* Offline symbolization of (module path, file offset) pairs recorded by the
 * preload probe.  The probe only knows file offsets because load addresses die
 * with the traced process; this module maps them back to ELF virtual
 * addresses and asks elfutils for the function and, when debug info exists,
 * the source line.
 *
 * Not thread-safe: one symbolizer per thread.
 * Link with: -ldw -lelf
 */
#ifndef DENYTRACE_SYMBOLIZE_H
#define DENYTRACE_SYMBOLIZE_H

#include <stdint.h>

/* Number of modules kept open at once; older ones are closed (LRU) so that a
 * trace touching hundreds of libraries cannot exhaust file descriptors. */
#define DT_SYMBOLIZER_MAX_MODULES 64

struct dt_symbolizer;

struct dt_symbol {
	char func[256];    /* "" when unknown */
	uint64_t func_off; /* offset of the address from the function start */
	char file[512];    /* source file, "" when no debug info */
	int line;          /* 0 when unknown */
};

/* Returns NULL when libdw.so.1 cannot be loaded (frames then stay
 * unsymbolized) or memory runs out. */
struct dt_symbolizer *dt_symbolizer_new(void);

/* Accepts NULL. */
void dt_symbolizer_free(struct dt_symbolizer *symbolizer);

/* Symbolizes FILE_OFFSET (as computed from /proc/<pid>/maps: ip - mapping
 * start + mapping file offset) inside the ELF file MODULE_PATH.
 *
 * Returns 0 and fills *OUT (fields possibly empty when nothing matches, e.g.
 * an offset outside every PT_LOAD segment), or -1 with *OUT cleared when the
 * module cannot be read (missing file, not ELF, no memory).
 *
 * Opened modules are cached per path; a cached module is reopened when the
 * file on disk changes (device, inode, size or mtime differ). */
int dt_symbolize(struct dt_symbolizer *symbolizer, const char *module_path, uint64_t file_offset,
                 struct dt_symbol *out);

#endif
