/* SPDX-License-Identifier: MIT */
/*
 * The probe's announcement that it entered a process image: under
 * --watch-exec the supervisor sees every exec, and an exec whose
 * LD_PRELOAD names the probe may still run without it (the sandbox hides
 * the file: ld.so warns and goes on). One small record at load, common
 * fields only, tells the two apart; a full process record here would read
 * /proc before the program had set up its sandbox, and describe the wrong
 * one.
 */
#include <errno.h>

#include "probe.h"
#include "probe_state.h"
#include "ring.h"

DT_HIDDEN void dt_record_entry(void)
{
	if (!dt_seccomp_enter())
		return;
	int saved = errno;
	dt_in_probe++;
	struct dt_ring *ring = dt_ring_get();
	if (ring) {
		/* common fields: times, ids, up to 64 groups and comm fit */
		unsigned char rec[1024] __attribute__((aligned(8)));
		struct dt_rec_header *rh = (struct dt_rec_header *)rec;
		struct dt_buf b = {rec, sizeof(*rh), sizeof(rec), 0};
		rh->type = DT_REC_ENTRY;
		dt_put_common(&b, (int)syscall(SYS_getpid), 0);
		if (!b.overflow) {
			rh->len = b.len;
			dt_ring_put(ring, rh);
		}
	}
	dt_in_probe--;
	dt_seccomp_leave();
	errno = saved;
}
