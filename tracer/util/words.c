/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "words.h"

int dt_word_in(const char *list, const char *word)
{
	size_t wl = strlen(word);
	if (!wl)
		return 0;
	for (const char *p = list; (p = strstr(p, word)); p += wl)
		if ((p == list || p[-1] == ' ') && (p[wl] == 0 || p[wl] == ' '))
			return 1;
	return 0;
}

static size_t dt_words_count(const char *s)
{
	size_t n = 0;
	for (const char *p = s; *p;) {
		p += strspn(p, " ");
		if (*p)
			n++;
		p += strcspn(p, " ");
	}
	return n;
}

int dt_same_words(const char *a, const char *b)
{
	if (dt_words_count(a) != dt_words_count(b))
		return 0;
	for (const char *p = a; *p;) {
		p += strspn(p, " ");
		size_t len = strcspn(p, " ");
		if (!len)
			break;
		char w[256];
		if (len >= sizeof(w))
			return 0;
		memcpy(w, p, len);
		w[len] = 0;
		if (!dt_word_in(b, w))
			return 0;
		p += len;
	}
	return 1;
}

void dt_word_add(char *buf, size_t cap, const char *word)
{
	size_t n = strlen(buf);
	if (n < cap)
		snprintf(buf + n, cap - n, "%s%s", n ? " " : "", word);
}

char **dt_split_words(const char *s, size_t *n)
{
	size_t cap = 8, cnt = 0;
	char **w = malloc(cap * sizeof(*w));
	char *cur = malloc(strlen(s) + 1);
	while (*s) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		size_t len = 0;
		while (*s && *s != ' ' && *s != '\t' && *s != '\n') {
			if (*s == '\'' || *s == '"') {
				char q = *s++;
				while (*s && *s != q) {
					if (q == '"' && *s == '\\' && s[1])
						s++;
					cur[len++] = *s++;
				}
				if (!*s) {
					free(cur);
					w[cnt] = NULL;
					dt_words_free(w);
					return NULL;
				}
				s++;
			} else if (*s == '\\' && s[1]) {
				cur[len++] = s[1];
				s += 2;
			} else {
				cur[len++] = *s++;
			}
		}
		if (cnt + 2 > cap) {
			char **bigger = realloc(w, (cap *= 2) * sizeof(*w));
			if (!bigger) {
				free(cur);
				w[cnt] = NULL;
				dt_words_free(w);
				return NULL;
			}
			w = bigger;
		}
		w[cnt++] = strndup(cur, len);
	}
	free(cur);
	w[cnt] = NULL;
	if (n)
		*n = cnt;
	return w;
}

void dt_words_free(char **w)
{
	for (size_t i = 0; w && w[i]; i++)
		free(w[i]);
	free(w);
}
