/* SPDX-License-Identifier: MIT */
/* Space-separated word lists ("A B W/rel"), as the Codex shape table and
 * its checks write the directories a launch may write; and shell-like
 * command lines split into words. */
#ifndef DENYTRACE_WORDS_H
#define DENYTRACE_WORDS_H

#include <stddef.h>

/* 1 when the list holds word. */
int dt_word_in(const char *list, const char *word);
/* 1 when a and b hold the same words, in any order. */
int dt_same_words(const char *a, const char *b);
/* Appends word to the list in buf (cap bytes), a space before it. */
void dt_word_add(char *buf, size_t cap, const char *word);

/* Splits a shell-like string into words ('...', "...", backslash); returns
 * a NULL-terminated malloc'ed array (free with dt_words_free), NULL on an
 * unterminated quote. */
char **dt_split_words(const char *s, size_t *n);
void dt_words_free(char **w);

#endif
