/* SPDX-License-Identifier: MIT */
/*
 * The generated parts of man/denytrace.1, from the same tables the CLI is
 * built from. Reads the man page and prints it with every region
 *   .\" BEGIN GENERATED name
 *   ...
 *   .\" END GENERATED name
 * rewritten from the table it names; the rest passes through unchanged.
 * `make man` writes the result back; `make lint` fails when they differ.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exitcodes.h"
#include "options.h"

/* Text as roff: an option's dashes (a word's leading ones) as \-, other
 * hyphens kept, backslashes as \e, wrapped near 72 columns, no line
 * starting with a control character. */
static void roff_text(const char *s)
{
	size_t col = 0;
	while (*s) {
		size_t n = strcspn(s, " \n");
		if (col && col + 1 + n > 72) {
			putchar('\n');
			col = 0;
		} else if (col) {
			putchar(' ');
			col++;
		}
		if (!col && (*s == '.' || *s == '\''))
			fputs("\\&", stdout);
		for (size_t i = 0; i < n; i++) {
			if (s[i] == '-' &&
			    (i == 0 || s[i - 1] == '-' || s[i - 1] == '(' || s[i - 1] == '\''))
				fputs("\\-", stdout);
			else if (s[i] == '\\')
				fputs("\\e", stdout);
			else
				putchar(s[i]);
		}
		col += n;
		s += n;
		s += strspn(s, " \n");
	}
	putchar('\n');
}

/* A tagged paragraph's tag: a name in bold, its hyphens as \-. */
static void tag(const char *s)
{
	fputs(".TP\n.B ", stdout);
	for (; *s; s++) {
		if (*s == '-')
			putchar('\\');
		putchar(*s);
	}
	putchar('\n');
}

static void gen_causes(void)
{
	puts("Each refusal in a report gets one cause, tried in this order (the first\n"
	     "that fits wins):");
#define DT_CAUSE(id, name, rule, by_mounts, meaning, title, doc)                                   \
	tag(name);                                                                                 \
	roff_text(doc);
#include "causes.def"
#undef DT_CAUSE
}

static const struct {
	int status;
	const char *meaning;
} exits[] = {
#define DT_EXIT(id, value, meaning) {value, meaning},
#define DT_EXIT_FOR(command, id, text)
#include "exitcodes.def"
#undef DT_EXIT
#undef DT_EXIT_FOR
};

static const struct {
	const char *command;
	int status;
	const char *text;
} exit_uses[] = {
#define DT_EXIT(id, value, meaning)
#define DT_EXIT_FOR(command, id, text) {command, DT_EXIT_##id, text},
#include "exitcodes.def"
#undef DT_EXIT
#undef DT_EXIT_FOR
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* "For run: ...; codex: ...." from the commands' own lines (the top-level
 * help's lines summarise these and are left out). */
static void exit_by_command(int status, const char *lead)
{
	char buf[4096];
	size_t len = 0;
	for (size_t i = 0; i < COUNT(exit_uses) && len < sizeof(buf); i++)
		if (exit_uses[i].status == status && strcmp(exit_uses[i].command, "denytrace"))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s: %s",
			                        len ? "; " : lead, exit_uses[i].command,
			                        exit_uses[i].text);
	if (len && len + 1 < sizeof(buf)) {
		strcat(buf, ".");
		roff_text(buf);
	}
}

static void gen_exits(void)
{
	for (size_t i = 0; i < COUNT(exits); i++) {
		if (exits[i].status < 0)
			continue;
		printf(".TP\n.B %d\n", exits[i].status);
		roff_text(exits[i].meaning);
		if (exits[i].status != DT_EXIT_OK)
			exit_by_command(exits[i].status, "By command: ");
	}
	puts(".PP");
	exit_by_command(DT_EXIT_PASSTHROUGH, "Otherwise these exit with their command's status: ");
}

/* Dashes as \-, for a name in a macro line. */
static void put_name(const char *s)
{
	for (; *s; s++) {
		if (*s == '-')
			putchar('\\');
		putchar(*s);
	}
}

/* Whether row k of c is also one of run's options (codex takes run's
 * options; its man section lists only its own). */
static int also_run_option(const struct dt_cmd_options *c, size_t k)
{
	if (c == &run_cmd)
		return 0;
	for (size_t j = 0; j < run_cmd.n; j++)
		if (!strcmp(run_cmd.opts[j].long_name, c->opts[k].long_name))
			return 1;
	return 0;
}

/* One .TP per option with help, as --help lists them: the names of the
 * rows after it without help of their own join its tag. */
static void gen_options(const struct dt_cmd_options *c)
{
	int own_only = !strcmp(c->command, "codex");
	for (size_t k = 0; k < c->n; k++) {
		const struct dt_option *o = &c->opts[k];
		if (!o->help || !*o->help || o->kind == DT_OPT_HELP ||
		    (own_only && also_run_option(c, k)))
			continue;
		fputs(".TP\n", stdout);
		fputs(o->arg ? ".BI \"" : ".B \"", stdout);
		if (o->short_name)
			printf("\\-%c, ", o->short_name);
		put_name(o->long_name);
		for (size_t j = k + 1; j < c->n && (!c->opts[j].help || !*c->opts[j].help); j++) {
			fputs(", ", stdout);
			put_name(c->opts[j].long_name);
		}
		if (o->arg)
			printf("\" \" %s\"\n", o->arg);
		else
			fputs("\"\n", stdout);
		roff_text(o->doc ? o->doc : o->help);
	}
}

/* "options-NAME": the options of the command called NAME. */
static int gen_command_options(const char *region)
{
	static const char prefix[] = "options-";
	if (strncmp(region, prefix, sizeof(prefix) - 1))
		return 0;
	for (size_t i = 0; i < dt_ncommands; i++)
		if (!strcmp(dt_commands[i].name, region + sizeof(prefix) - 1)) {
			gen_options(dt_commands[i].options);
			return 1;
		}
	return 0;
}

static const struct {
	const char *name;
	void (*gen)(void);
} regions[] = {
    {"causes", gen_causes},
    {"exit-status", gen_exits},
};

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mangen MANPAGE > OUT\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 3;
	}
	char line[4096];
	const char *skipping = NULL;
	while (fgets(line, sizeof(line), f)) {
		static const char begin[] = ".\\\" BEGIN GENERATED ",
		                  end[] = ".\\\" END GENERATED ";
		if (skipping) {
			if (strncmp(line, end, sizeof(end) - 1))
				continue;
			skipping = NULL;
			fputs(line, stdout);
			continue;
		}
		fputs(line, stdout);
		if (strncmp(line, begin, sizeof(begin) - 1))
			continue;
		char *name = line + sizeof(begin) - 1;
		name[strcspn(name, "\n")] = 0;
		static char region[256];
		snprintf(region, sizeof(region), "%s", name);
		skipping = region;
		if (gen_command_options(region))
			continue;
		size_t i = 0;
		while (i < COUNT(regions) && strcmp(regions[i].name, name))
			i++;
		if (i == COUNT(regions)) {
			fprintf(stderr, "mangen: %s: no table named %s\n", argv[1], name);
			return 1;
		}
		regions[i].gen();
	}
	if (skipping) {
		fprintf(stderr, "mangen: %s: region %s has no END line\n", argv[1], skipping);
		return 1;
	}
	fclose(f);
	return 0;
}
