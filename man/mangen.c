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

#include "exitcodes.h"

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

struct option_row {
	const char *long_name;
	char short_name;
	const char *arg, *kind, *help, *doc;
};

#define DT_OPTION(long, short, arg, kind, field, value, help, doc)                                 \
	{long, short, arg, #kind, help, doc},
static const struct option_row report_options[] = {
#include "opts_report.def"
};
static const struct option_row show_options[] = {
#include "opts_show.def"
};
static const struct option_row roots_options[] = {
#include "opts_roots.def"
};
static const struct option_row evidence_options[] = {
#include "opts_evidence.def"
};
static const struct option_row doctor_options[] = {
#include "opts_doctor.def"
};
static const struct option_row demo_options[] = {
#include "opts_demo.def"
};
static const struct option_row run_options[] = {
#include "opts_run.def"
};
static const struct option_row codex_options[] = {
#include "opts_codex.def"
};
static const struct option_row soak_options[] = {
#include "opts_soak.def"
};
static const struct option_row fix_options[] = {
#include "opts_fix.def"
};
#undef DT_OPTION

/* Dashes as \-, for a name in a macro line. */
static void put_name(const char *s)
{
	for (; *s; s++) {
		if (*s == '-')
			putchar('\\');
		putchar(*s);
	}
}

/* One .TP per option with help, as --help lists them: the names of the
 * rows after it without help of their own join its tag. */
static void gen_options(const struct option_row *o, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (!o[k].help || !*o[k].help || !strcmp(o[k].kind, "HELP"))
			continue;
		fputs(".TP\n", stdout);
		fputs(o[k].arg ? ".BI \"" : ".B \"", stdout);
		if (o[k].short_name)
			printf("\\-%c, ", o[k].short_name);
		put_name(o[k].long_name);
		for (size_t j = k + 1; j < n && (!o[j].help || !*o[j].help); j++) {
			fputs(", ", stdout);
			put_name(o[j].long_name);
		}
		if (o[k].arg)
			printf("\" \" %s\"\n", o[k].arg);
		else
			fputs("\"\n", stdout);
		roff_text(o[k].doc ? o[k].doc : o[k].help);
	}
}

static void gen_report_options(void)
{
	gen_options(report_options, COUNT(report_options));
}

static void gen_show_options(void)
{
	gen_options(show_options, COUNT(show_options));
}

static void gen_roots_options(void)
{
	gen_options(roots_options, COUNT(roots_options));
}

static void gen_evidence_options(void)
{
	gen_options(evidence_options, COUNT(evidence_options));
}

static void gen_doctor_options(void)
{
	gen_options(doctor_options, COUNT(doctor_options));
}

static void gen_demo_options(void)
{
	gen_options(demo_options, COUNT(demo_options));
}

static void gen_run_options(void)
{
	gen_options(run_options, COUNT(run_options));
}

/* codex's own options: the man page says it takes run's as well */
static void gen_codex_options(void)
{
	struct option_row own[COUNT(codex_options)];
	size_t n = 0;
	for (size_t k = 0; k < COUNT(codex_options); k++) {
		size_t j = 0;
		while (j < COUNT(run_options) &&
		       strcmp(run_options[j].long_name, codex_options[k].long_name))
			j++;
		if (j == COUNT(run_options))
			own[n++] = codex_options[k];
	}
	gen_options(own, n);
}

static void gen_soak_options(void)
{
	gen_options(soak_options, COUNT(soak_options));
}

static void gen_fix_options(void)
{
	gen_options(fix_options, COUNT(fix_options));
}

static const struct {
	const char *name;
	void (*gen)(void);
} regions[] = {
    {"options-report", gen_report_options},
    {"options-show", gen_show_options},
    {"options-roots", gen_roots_options},
    {"options-evidence", gen_evidence_options},
    {"options-doctor", gen_doctor_options},
    {"options-demo", gen_demo_options},
    {"options-run", gen_run_options},
    {"options-codex", gen_codex_options},
    {"options-soak", gen_soak_options},
    {"options-fix", gen_fix_options},
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
		size_t i = 0;
		while (i < COUNT(regions) && strcmp(regions[i].name, name))
			i++;
		if (i == COUNT(regions)) {
			fprintf(stderr, "mangen: %s: no table named %s\n", argv[1], name);
			return 1;
		}
		regions[i].gen();
		skipping = regions[i].name;
	}
	if (skipping) {
		fprintf(stderr, "mangen: %s: region %s has no END line\n", argv[1], skipping);
		return 1;
	}
	fclose(f);
	return 0;
}
