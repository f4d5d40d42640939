/* SPDX-License-Identifier: MIT */
/* Internal to fix/: the words a fix's lines are made of (argv.c), shared
 * by the fixes (fix.c) and the command-line rewrite (argv.c). */
#ifndef DENYTRACE_FIX_INT_H
#define DENYTRACE_FIX_INT_H

#include <stddef.h>

#include "fix.h"

/* s as one shell word (recfmt's quoting), malloc'ed. */
char *fix_sh_word(const char *s);
/* "OPT SRC DIR" with SRC and DIR as shell words, malloc'ed. */
char *fix_mount_words(const char *opt, const char *src, const char *dir);
/* s as a C string literal, malloc'ed. */
char *fix_c_string(const char *s);
/* Adds --add-dir ROOT to a Codex command line at at, for each root it
 * lacks. Returns how many it added. */
int fix_codex_add_dirs(struct dt_argv *a, size_t at, const char *const *roots, size_t nroots);

/* Adds a line to copy to f, or sets *field (freeing what it held). */
void fix_copy(struct dt_fix *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fix_set(char **field, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A Landlock path-beneath rule beneath each of dirs (1 or 2) holding
 * every right p's refusals need (landlock.c); launcher: a Landlock
 * launcher on the launch's command line takes it (--rule), so the fix is a
 * command-line one. */
void fix_landlock(struct dt_fix *f, const struct dt_fix_problem *p, const char *const *dirs,
                  size_t ndirs, int launcher);
/* landlock-refer: REFER (ABI 2) with the move's rights beneath the root
 * that holds both directories, else beneath each. */
void fix_landlock_refer(struct dt_fix *f, const struct dt_fix_problem *p,
                        const struct dt_fix_launch *l, int launcher);

/* Is target under p's expected root? Else f gets no command (kind none)
 * and a why naming change ("changing its owner or mode"): what no root
 * holds is the traced program's choice, never a change to paste. */
int fix_target_in_root(struct dt_fix *f, const struct dt_fix_problem *p, const char *target,
                       const char *change);

/* chattr -i or -a for an immutable-file problem (chattr.c). */
void fix_chattr(struct dt_fix *f, const struct dt_fix_problem *p, const struct dt_fix_launch *l);

#endif
