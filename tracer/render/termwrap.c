/* SPDX-License-Identifier: MIT */
#include "termwrap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int dt_term_width(int fd)
{
	if (!isatty(fd))
		return 0;
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *cols = getenv("COLUMNS");
	int n = cols ? atoi(cols) : 0;
	return n > 0 ? n : 0;
}

struct wrap {
	FILE *out;
	int width;
	char *line; /* the line being gathered, without its newline */
	size_t len, cap;
};

/* Columns the bytes s[0..n) take: escapes none, UTF-8 one a character. */
static int columns(const char *s, size_t n)
{
	int col = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\033') {
			while (i + 1 < n && !((s[i + 1] >= 'A' && s[i + 1] <= 'Z') ||
			                      (s[i + 1] >= 'a' && s[i + 1] <= 'z')))
				i++;
			i++; /* the final letter */
			continue;
		}
		col += ((unsigned char)s[i] & 0xC0) != 0x80;
	}
	return col;
}

/* Where continuation lines start: under the text after a line's label
 * ("  cause    text": the column of "text"), else two past its indent. */
static size_t hang_indent(const char *s, size_t n, int width)
{
	size_t lead = strspn(s, " ");
	size_t i = lead;
	while (i < n && s[i] != ' ')
		i++;
	size_t gap = strspn(s + i, " ");
	if (i < n && gap >= 2 && columns(s, i + gap) <= width / 3)
		return (size_t)columns(s, i + gap);
	return lead + 2 < (size_t)width / 3 ? lead + 2 : lead;
}

static void put_line(struct wrap *w, const char *s, size_t n)
{
	if (w->width < 20 || columns(s, n) <= w->width) {
		fwrite(s, 1, n, w->out);
		fputc('\n', w->out);
		return;
	}
	size_t indent = hang_indent(s, n, w->width);
	size_t start = 0;
	int first = 1;
	while (start < n) {
		int avail = w->width - (first ? 0 : (int)indent);
		size_t end = start, cut = 0;
		while (end < n && columns(s + start, end - start + 1) <= avail) {
			if (s[end] == ' ')
				cut = end;
			end++;
		}
		if (end < n && cut > start)
			end = cut; /* at a space; a word longer than the line is cut */
		if (!first)
			fprintf(w->out, "%*s", (int)indent, "");
		fwrite(s + start, 1, end - start, w->out);
		fputc('\n', w->out);
		/* end > start: a line holds at least one character */
		start = end < n ? end + strspn(s + end, " ") : n;
		first = 0;
	}
}

static ssize_t wrap_write(void *cookie, const char *buf, size_t size)
{
	struct wrap *w = cookie;
	for (size_t i = 0; i < size; i++) {
		if (buf[i] == '\n') {
			put_line(w, w->line, w->len);
			w->len = 0;
			continue;
		}
		if (w->len == w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 256;
			char *l = realloc(w->line, cap);
			if (!l)
				return -1;
			w->line = l;
			w->cap = cap;
		}
		w->line[w->len++] = buf[i];
	}
	return (ssize_t)size;
}

static int wrap_close(void *cookie)
{
	struct wrap *w = cookie;
	if (w->len)
		fwrite(w->line, 1, w->len, w->out);
	int rc = fflush(w->out);
	free(w->line);
	free(w);
	return rc;
}

FILE *dt_term_wrap_open(FILE *out, int width)
{
	struct wrap *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->out = out;
	w->width = width;
	cookie_io_functions_t io = {NULL, wrap_write, NULL, wrap_close};
	FILE *f = fopencookie(w, "w", io);
	if (!f)
		free(w);
	return f;
}
