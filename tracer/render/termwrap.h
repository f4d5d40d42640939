/* SPDX-License-Identifier: MIT */
/* Text for a terminal, wrapped at its width: a stream that passes whole
 * lines to another, each line longer than the width cut at spaces, its
 * continuation lines indented under the line's text ("  cause    ..." goes
 * on under "..."). Colour escapes take no column; UTF-8 counts a column a
 * character. A pipe or a file gets whole lines: use it only on a terminal. */
#ifndef DENYTRACE_TERMWRAP_H
#define DENYTRACE_TERMWRAP_H

#include <stdio.h>

/* The terminal's width on fd (TIOCGWINSZ, else $COLUMNS); 0 when fd is not
 * a terminal or the width is not known. */
int dt_term_width(int fd);

/* A stream that writes to out wrapped at width columns (width < 20: not
 * wrapped). Closing it flushes the last line; out stays open. NULL when
 * the stream cannot be made (write to out itself then). */
FILE *dt_term_wrap_open(FILE *out, int width);

#endif
