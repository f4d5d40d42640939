/* SPDX-License-Identifier: MIT */
/*
 * The Codex launch shapes (codex_shapes.def) and the two answers for each:
 * what denytrace's model says the command may write, and what a real
 * `codex sandbox` let it write. `doctor --codex-shapes` compares them on
 * the installed Codex; the tests compare both with the recorded table.
 */
#ifndef DENYTRACE_CODEX_SHAPES_H
#define DENYTRACE_CODEX_SHAPES_H

#include <stddef.h>

struct dt_rootset;

struct dt_codex_shape {
	const char *id, *config, *layer, *tmpdir, *args, *writable, *dropped, *says;
};
extern const struct dt_codex_shape dt_codex_shapes[];
extern const size_t dt_ncodex_shapes;
/* The directories a shape's command tries to write, relative to the
 * shape's directory unless absolute. */
extern const char *const dt_codex_probes[];
extern const size_t dt_ncodex_probes;

/* s with every "$X" replaced by top; malloc'ed, or NULL. */
char *dt_codex_shape_expand(const char *s, const char *top);
/* A probe's path under top, into buf. */
const char *dt_codex_probe_path(const char *probe, const char *top, char *buf, size_t cap);

/* Creates the shape's world in the fresh directory top: the probe
 * directories, home (CODEX_HOME) and hh (HOME), L -> A, config.toml and
 * the -p layer. Returns 0, or -1 with errno set. */
int dt_codex_shape_setup(const struct dt_codex_shape *s, const char *top);

/* The model's answer for s set up at top, as Codex `version` (NULL: the
 * newest checked): "refused" or the probes it makes writable, into got;
 * rs keeps the model's roots for further checks (free it). 0, or -1 with
 * a message in err. */
int dt_codex_shape_model(const struct dt_codex_shape *s, const char *version, const char *top,
                         struct dt_rootset *rs, char *got, size_t cap, char *err, size_t errcap);

/* Runs the real `codex sandbox` (the binary at codex) on s set up at top,
 * its command trying to create a file in every probe directory: "refused"
 * (Codex did not run the command) or the probes it could write, into
 * seen; Codex's output into out. Returns Codex's exit status, or -1 when
 * it could not be started, -2 when it ran over timeout_ms. */
int dt_codex_shape_run(const struct dt_codex_shape *s, const char *codex, const char *top,
                       int timeout_ms, char *seen, size_t cap, char *out, size_t outcap);

/* One shape run on an installed Codex and asked of the model. */
struct dt_codex_shape_result {
	const struct dt_codex_shape *shape;
	enum { DT_SHAPE_AGREE, DT_SHAPE_DIFFER, DT_SHAPE_NOT_RUN } status;
	char codex[512]; /* what Codex let the command write, or "refused" */
	char model[512]; /* what the model says it may write, or "refused" */
	char why[256];   /* DT_SHAPE_NOT_RUN: why */
};

/* Runs every shape on the Codex binary at codex, whose `--version` line
 * is version, each in its own world under a private directory in /var/tmp
 * (a CODEX_HOME under /tmp makes Codex refuse to start), removed after;
 * compares each with the model of that version. progress, when given, is
 * called after each shape. Returns how many differ, or -1 with err set
 * (the directory cannot be made). res has dt_ncodex_shapes entries. */
int dt_codex_shapes_check(const char *codex, const char *version, struct dt_codex_shape_result *res,
                          void (*progress)(size_t done, size_t n, void *arg), void *arg, char *err,
                          size_t errcap);

#endif
