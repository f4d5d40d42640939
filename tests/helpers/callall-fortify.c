// build-flags: -D_FILE_OFFSET_BITS=64 -D_FORTIFY_SOURCE=2 -O2 -Itests/helpers
/*
 * callall built the way a distribution builds programs: large-file
 * interfaces and _FORTIFY_SOURCE. glibc's headers then bind open() to
 * open64 (with a mode) or __open64_2 (without one, flags not constant),
 * truncate to truncate64, fopen to fopen64, and so on; the probe must see
 * those names. Same program, same arguments: see callall.c.
 */
#include "callall.c"
