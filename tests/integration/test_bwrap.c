/* SPDX-License-Identifier: MIT */
/* Refusals recorded from inside a real bubblewrap sandbox (EROFS). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "names.h"
#include "testlib.h"

static char ro[512], rw[512];

static void setup(void)
{
	if (!dtt_have_bwrap())
		cr_skip_test("bubblewrap cannot create a sandbox here");
	snprintf(ro, sizeof(ro), "%s/ro", dtt_tmpdir());
	snprintf(rw, sizeof(rw), "%s/rw", dtt_tmpdir());
	mkdir(ro, 0755);
	mkdir(rw, 0755);
}

static void teardown(void)
{
	dtt_cleanup();
}

TestSuite(bwrap, .init = setup, .fini = teardown, .timeout = 120);

/* sh -c SCRIPT inside bwrap with only rw/ writable */
static void run_in_bwrap(struct dtt_run *r, const char *script)
{
	const char *argv[] = {"bwrap", "--ro-bind", "/",     "/",  "--bind", rw,   rw,     "--dev",
	                      "/dev",  "--proc",    "/proc", "--", "sh",     "-c", script, NULL};
	cr_assert_eq(dtt_run(r, NULL, argv, NULL), 0, "ring unreadable: %s", r->out);
}

Test(bwrap, refused_create_is_recorded_with_paths_errno_and_flags)
{
	struct dtt_run r;
	char script[1024];
	snprintf(script, sizeof(script), "cd %s && echo x > new.txt; exit 0", ro);
	run_in_bwrap(&r, script);
	const struct dt_record *d = dtt_find(&r, DT_REC_DENIAL, NULL, "/ro/new.txt");
	cr_assert_not_null(d, "no denial recorded; output: %s", r.out);
	cr_expect_str_eq(d->p[0].path, "new.txt");
	char want[600];
	snprintf(want, sizeof(want), "%s/new.txt", ro);
	cr_expect_str_eq(d->p[0].abspath, want);
	cr_expect_str_eq(d->p[0].realpath, want);
	cr_expect_str_eq(dt_errno_name(d->err), "EROFS");
	char flags[128];
	dt_flags_name(d, flags, sizeof(flags));
	cr_expect_str_eq(flags, "O_WRONLY|O_CREAT|O_TRUNC");
	cr_expect(d->writes);
	cr_expect(d->has_mode);
	cr_expect(d->p[0].has_st);
	cr_expect_eq(d->p[0].st.valid & DT_SF_EXISTS, 0u, "target should not exist");
	cr_expect(d->p[0].st.valid & DT_SF_MOUNT);
	cr_expect(d->p[0].st.mount_flags & 1 /* ST_RDONLY */, "mount should be read-only");
	cr_expect_gt(d->nframes, 0, "no call stack captured");
	dtt_free(&r);
}

Test(bwrap, process_record_lists_the_granted_root_as_writable)
{
	struct dtt_run r;
	char script[1024];
	snprintf(script, sizeof(script), "mkdir %s/d; true", ro);
	run_in_bwrap(&r, script);
	const struct dt_record *d = dtt_find(&r, DT_REC_DENIAL, "mkdir", "/ro/d");
	cr_assert_not_null(d, "%s", r.out);
	const struct dt_record *p = dtt_process(&r, d->pid);
	cr_assert_not_null(p, "no process record for pid %lld", (long long)d->pid);
	int found = 0;
	for (size_t i = 0; i < p->nmounts; i++)
		if (p->mounts[i].rw && !strcmp(p->mounts[i].path, rw))
			found = 1;
	cr_expect(found, "writable mounts do not include %s", rw);
	for (size_t i = 0; i < p->nmounts; i++)
		if (!strcmp(p->mounts[i].path, "/"))
			cr_expect(!p->mounts[i].rw, "/ should be read-only inside bwrap");
	cr_expect_str_eq(p->argv[0], "mkdir");
	dtt_free(&r);
}

Test(bwrap, successful_writes_leave_no_denial)
{
	struct dtt_run r;
	char script[1024];
	snprintf(script, sizeof(script), "echo x > %s/ok && mkdir %s/dir && mv %s/ok %s/dir/", rw,
	         rw, rw, rw);
	run_in_bwrap(&r, script);
	cr_expect_eq(r.status, 0, "%s", r.out);
	/* bwrap itself probes access("/newroot/proc/sys", W_OK): only the
	 * worker's own paths matter here */
	for (size_t i = 0; i < r.n; i++)
		if (r.recs[i].type == DT_REC_DENIAL && r.recs[i].p[0].abspath)
			cr_expect(strncmp(r.recs[i].p[0].abspath, rw, strlen(rw)),
			          "unexpected denial of %s", r.recs[i].p[0].abspath);
	dtt_free(&r);
}
