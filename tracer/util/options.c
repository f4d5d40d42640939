/* SPDX-License-Identifier: MIT */
#include "options.h"

#include <string.h>

#include "cli.h"

/* The row argv word a names, with *inline_val set for "--name=value";
 * NULL when none does. */
static const struct dt_option *dt_option_find(const struct dt_cmd_options *c, const char *a,
                                              const char **inline_val)
{
	*inline_val = NULL;
	for (size_t k = 0; k < c->n; k++) {
		const struct dt_option *o = &c->opts[k];
		size_t n = strlen(o->long_name);
		int takes_inline = o->arg || o->kind == DT_OPT_CALL;
		if (o->kind == DT_OPT_DOC)
			continue;
		if (!strncmp(a, o->long_name, n) && (!a[n] || (a[n] == '=' && takes_inline))) {
			*inline_val = a[n] ? a + n + 1 : NULL;
			return o;
		}
		if (o->short_name && a[0] == '-' && a[1] == o->short_name && !a[2])
			return o;
	}
	return NULL;
}

/* "a|b|c" as "a, b or c". */
static void dt_choices_words(const char *choices, char *out, size_t cap)
{
	size_t len = 0;
	while (*choices && len < cap) {
		size_t n = strcspn(choices, "|");
		const char *sep = !len ? "" : choices[n] ? ", " : " or ";
		len += (size_t)snprintf(out + len, cap - len, "%s%.*s", sep, (int)n, choices);
		choices += n + (choices[n] == '|');
	}
}

static int dt_choice_ok(const char *choices, const char *val)
{
	size_t n = strlen(val);
	for (const char *p = choices; *p;) {
		size_t k = strcspn(p, "|");
		if (k == n && !strncmp(p, val, n))
			return 1;
		p += k + (p[k] == '|');
	}
	return 0;
}

/* What a missing argument should have been, in words. */
static const char *dt_arg_words(const char *arg)
{
	if (!strcmp(arg, "DIR"))
		return "a directory";
	if (!strcmp(arg, "FILE"))
		return "a file";
	if (!strcmp(arg, "'ARGS'"))
		return "the arguments as one string";
	if (!strcmp(arg, "RULE"))
		return "a rule";
	if (!strcmp(arg, "LIST"))
		return "a list";
	if (!strcmp(arg, "NAMES"))
		return "a list of names";
	if (!strcmp(arg, "PATH"))
		return "a path";
	return "a value";
}

/* Stores the row's value into args; returns 0 or the error status. */
static int dt_option_store(const struct dt_cmd_options *c, const struct dt_option *o, void *args,
                           const char *val)
{
	char *base = args;
	char words[256];
	switch (o->kind) {
	case DT_OPT_FLAG:
	case DT_OPT_CLEAR:
		*(int *)(base + o->offset) = o->kind == DT_OPT_FLAG;
		return 0;
	case DT_OPT_SET:
		*(const char **)(base + o->offset) = o->value;
		return 0;
	case DT_OPT_STRING:
		if (o->value && (!val || !dt_choice_ok(o->value, val))) {
			dt_choices_words(o->value, words, sizeof(words));
			return dt_fail(c->usage_status, "%s: %s takes %s", c->command, o->long_name,
			               words);
		}
		break;
	default:
		break;
	}
	if (!val && o->arg)
		return dt_fail(c->usage_status, "%s: %s needs %s", c->command, o->long_name,
		               dt_arg_words(o->arg));
	if (o->kind == DT_OPT_STRING) {
		*(const char **)(base + o->offset) = val;
	} else if (o->kind == DT_OPT_LIST) {
		size_t *count = (size_t *)(base + o->count_offset);
		(*(const char ***)(base + o->offset))[(*count)++] = val;
	} else if (o->kind == DT_OPT_CALL) {
		return ((dt_opt_fn)o->value)(args, val);
	}
	return 0;
}

/* "unknown option", with the option the user most likely meant. */
static int dt_unknown_option(const struct dt_cmd_options *c, const char *a)
{
	const char *names[256];
	size_t n = 0;
	for (size_t k = 0; k < c->n && n < 256; k++)
		if (c->opts[k].kind != DT_OPT_DOC && c->opts[k].help && *c->opts[k].help)
			names[n++] = c->opts[k].long_name;
	char typed[64];
	snprintf(typed, sizeof(typed), "%.*s", (int)strcspn(a, "="), a);
	const char *near = strncmp(typed, "--", 2) ? NULL : dt_nearest_word(typed, names, n);
	if (near)
		return dt_fail(c->usage_status,
		               "%s: unknown option '%s'%s; did you mean '%s'? See 'denytrace %s "
		               "--help'",
		               c->command, a, c->unknown_hint ? c->unknown_hint : "", near,
		               c->command);
	return dt_fail(c->usage_status, "%s: unknown option '%s'%s; see 'denytrace %s --help'",
	               c->command, a, c->unknown_hint ? c->unknown_hint : "", c->command);
}

/* The loop of both parsers; end is NULL for operands. */
static int dt_parse(const struct dt_cmd_options *c, int argc, char **argv, void *args,
                    const char **operands, size_t *noperands, struct dt_parse_end *end)
{
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i], *val;
		if (end && !strcmp(a, "--")) {
			end->dashdash = 1;
			i++;
			break;
		}
		if (end ? a[0] != '-' : a[0] != '-' || !a[1]) {
			if (end)
				break; /* the command starts here */
			operands[(*noperands)++] = a;
			continue;
		}
		const struct dt_option *o = dt_option_find(c, a, &val);
		if (!o)
			return dt_unknown_option(c, a);
		if (o->kind == DT_OPT_HELP) {
			dt_options_help(stdout, c);
			return DT_EXIT_OK;
		}
		if (o->arg && !val && i + 1 < argc)
			val = argv[++i];
		int rc = dt_option_store(c, o, args, val);
		if (rc)
			return rc;
	}
	if (end)
		end->index = i;
	return -1;
}

int dt_parse_options(const struct dt_cmd_options *c, int argc, char **argv, void *args,
                     const char **operands, size_t *noperands)
{
	return dt_parse(c, argc, argv, args, operands, noperands, NULL);
}

int dt_parse_command(const struct dt_cmd_options *c, int argc, char **argv, void *args,
                     struct dt_parse_end *end)
{
	end->index = argc;
	end->dashdash = 0;
	return dt_parse(c, argc, argv, args, NULL, NULL, end);
}

void dt_wrap(FILE *f, const char *s, size_t col, size_t indent)
{
	size_t start = col;
	while (*s) {
		size_t n = strcspn(s, " \n");
		if (col > start && col + 1 + n > 80) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = start = indent;
		} else if (col > start) {
			fputc(' ', f);
			col++;
		}
		for (size_t k = 0; k < n; k++)
			fputc(s[k] == '\001' ? ' ' : s[k], f);
		col += n;
		s += n;
		s += strspn(s, " \n");
	}
	fputc('\n', f);
}

/* "  -v, --verbose", "  --format FMT", with the names of the rows after it
 * that have no help of their own ("--json, --markdown"). */
static size_t dt_option_label(const struct dt_cmd_options *c, size_t k, char *out, size_t cap)
{
	const struct dt_option *o = &c->opts[k];
	size_t len = (size_t)snprintf(out, cap, "  ");
	if (o->short_name)
		len += (size_t)snprintf(out + len, cap - len, "-%c, ", o->short_name);
	len += (size_t)snprintf(out + len, cap - len, "%s", o->long_name);
	for (size_t j = k + 1; j < c->n && !c->opts[j].help && len < cap; j++)
		len += (size_t)snprintf(out + len, cap - len, ", %s", c->opts[j].long_name);
	if (o->arg && len < cap)
		len += (size_t)snprintf(out + len, cap - len, " %s", o->arg);
	return len < cap ? len : cap - 1;
}

void dt_options_help(FILE *f, const struct dt_cmd_options *c)
{
	char label[128];
	size_t width = 0;
	for (size_t k = 0; k < c->n; k++)
		if (c->opts[k].help && *c->opts[k].help) {
			size_t n = dt_option_label(c, k, label, sizeof(label));
			width = n > width ? n : width;
		}
	fputs(c->usage, f);
	fputs("options:\n", f);
	for (size_t k = 0; k < c->n; k++) {
		if (!c->opts[k].help || !*c->opts[k].help)
			continue;
		size_t n = dt_option_label(c, k, label, sizeof(label));
		fprintf(f, "%s%*s", label, (int)(width + 3 - n), "");
		dt_wrap(f, c->opts[k].help, width + 3, width + 3);
	}
	fputc('\n', f);
	if (c->after)
		fputs(c->after, f);
	if (c->help_extra)
		c->help_extra(f);
	dt_exit_help(f, c->command);
}
