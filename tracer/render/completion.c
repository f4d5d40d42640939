/* SPDX-License-Identifier: MIT */
#include "completion.h"

#include <string.h>

#include "cli.h"
#include "options.h"

/* What an option's argument is, for the shell: a directory, a file, one
 * of fixed words, or anything. */
enum arg_class { ARG_NONE, ARG_DIR, ARG_FILE, ARG_WORDS, ARG_ANY };

static enum arg_class arg_class(const struct dt_option *o)
{
	if (!o->arg)
		return ARG_NONE;
	if (o->kind == DT_OPT_STRING && o->value)
		return ARG_WORDS;
	if (!strcmp(o->arg, "DIR"))
		return ARG_DIR;
	if (!strcmp(o->arg, "FILE") || !strcmp(o->arg, "RING") || !strcmp(o->arg, "PATH") ||
	    !strcmp(o->arg, "[FILE]"))
		return ARG_FILE;
	return ARG_ANY;
}

/* The rows a user can type: not DOC lines. */
static int typed_option(const struct dt_option *o)
{
	return o->kind != DT_OPT_DOC && o->long_name && o->long_name[0] == '-';
}

/* "a|b|c" with the bars as spaces. */
static void put_words(FILE *f, const char *bars)
{
	for (; *bars; bars++)
		fputc(*bars == '|' ? ' ' : *bars, f);
}

static void bash_prev_cases(FILE *f, const struct dt_cmd_options *c)
{
	for (size_t k = 0; k < c->n; k++) {
		const struct dt_option *o = &c->opts[k];
		enum arg_class ac = typed_option(o) ? arg_class(o) : ARG_NONE;
		if (ac == ARG_NONE)
			continue;
		fprintf(f, "\t\t%s", o->long_name);
		if (o->short_name)
			fprintf(f, "|-%c", o->short_name);
		fputs(")\n\t\t\t", f);
		if (ac == ARG_WORDS) {
			fputs("COMPREPLY=($(compgen -W '", f);
			put_words(f, o->value);
			fputs("' -- \"$cur\"))", f);
		} else if (ac == ARG_DIR) {
			fputs("COMPREPLY=($(compgen -d -- \"$cur\"))", f);
		} else if (ac == ARG_FILE) {
			fputs("COMPREPLY=($(compgen -f -- \"$cur\"))", f);
		} else {
			fputs("COMPREPLY=()", f);
		}
		fputs("\n\t\t\treturn ;;\n", f);
	}
}

static void bash_command(FILE *f, const struct dt_command *cmd)
{
	const struct dt_cmd_options *c = cmd->options;
	fprintf(f, "\t%s)\n\t\tcase $prev in\n", cmd->name);
	bash_prev_cases(f, c);
	fputs("\t\tesac\n\t\tif [[ $cur == -* ]]; then\n\t\t\tCOMPREPLY=($(compgen -W '", f);
	const char *sep = "";
	for (size_t k = 0; k < c->n; k++)
		if (typed_option(&c->opts[k])) {
			fprintf(f, "%s%s", sep, c->opts[k].long_name);
			sep = " ";
		}
	fputs("' -- \"$cur\"))\n", f);
	if (c->command_follows)
		fputs("\t\telse\n\t\t\tCOMPREPLY=($(compgen -c -- \"$cur\"))\n", f);
	else if (!strcmp(cmd->name, "completion"))
		fputs("\t\telse\n\t\t\tCOMPREPLY=($(compgen -W 'bash zsh' -- \"$cur\"))\n", f);
	else
		fputs("\t\telse\n\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n", f);
	fputs("\t\tfi ;;\n", f);
}

void dt_completion_bash(FILE *f)
{
	fputs(
	    "# bash completion for denytrace: `denytrace completion bash`, generated from\n"
	    "# its command and option tables.\n"
	    "_denytrace()\n{\n"
	    "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	    "\tlocal cmd='' i after=0\n"
	    "\t# --opt=VALUE: bash splits at '=' (COMP_WORDBREAKS)\n"
	    "\tif [[ $prev == = && COMP_CWORD -ge 2 ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
	    "\tif [[ $cur == = ]]; then cur=''; fi\n"
	    "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	    "\t\tif [[ -z $cmd ]]; then\n"
	    "\t\t\t[[ ${COMP_WORDS[i]} == -* ]] || cmd=${COMP_WORDS[i]}\n"
	    "\t\telif [[ ${COMP_WORDS[i]} == -- ]]; then\n"
	    "\t\t\tafter=1\n"
	    "\t\tfi\n"
	    "\tdone\n"
	    "\tif [[ -z $cmd || $cmd == help ]]; then\n"
	    "\t\tCOMPREPLY=($(compgen -W '",
	    f);
	for (size_t i = 0; i < dt_ncommands; i++)
		fprintf(f, "%s ", dt_commands[i].name);
	fputs("help --help --version' -- \"$cur\"))\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\t# after '--' (run, codex, soak, fix --verify): the traced command, then\n"
	      "\t# its words\n"
	      "\tif ((after)); then\n"
	      "\t\tif [[ $prev == -- ]]; then\n"
	      "\t\t\tCOMPREPLY=($(compgen -c -- \"$cur\"))\n"
	      "\t\telse\n"
	      "\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	      "\t\tfi\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tcase $cmd in\n",
	      f);
	for (size_t i = 0; i < dt_ncommands; i++)
		bash_command(f, &dt_commands[i]);
	fputs("\tesac\n}\ncomplete -F _denytrace denytrace\n", f);
}

/* text inside a zsh single-quoted _arguments description, on one line and
 * cut at a word near 60 columns: no quote, and the brackets and colons
 * _arguments reads escaped. */
static void zsh_desc(FILE *f, const char *s)
{
	size_t len = strlen(s);
	if (len > 60) {
		len = 60;
		while (len > 30 && s[len] != ' ' && s[len] != '\n')
			len--;
	}
	for (size_t n = 0; n < len; n++) {
		char ch = s[n] == '\n' || s[n] == '\001' ? ' ' : s[n];
		if (ch == '\'')
			fputs("'\\''", f);
		else if (ch == '[' || ch == ']' || ch == ':' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else
			fputc(ch, f);
	}
	if (len < strlen(s))
		fputs("...", f);
}

static void zsh_action(FILE *f, const struct dt_option *o)
{
	switch (arg_class(o)) {
	case ARG_WORDS:
		fprintf(f, ":%s:(", o->arg);
		put_words(f, o->value);
		fputc(')', f);
		break;
	case ARG_DIR:
		fprintf(f, ":%s:_files -/", o->arg);
		break;
	case ARG_FILE:
		fprintf(f, ":%s:_files", o->arg);
		break;
	case ARG_ANY:
		fprintf(f, ":%s: ", o->arg);
		break;
	case ARG_NONE:
		break;
	}
}

/* An alias row (no help of its own) is documented by the row above it. */
static const char *option_help(const struct dt_cmd_options *c, size_t k)
{
	while (k > 0 && (!c->opts[k].help || !*c->opts[k].help))
		k--;
	return c->opts[k].help ? c->opts[k].help : "";
}

static void zsh_option(FILE *f, const struct dt_option *o, const char *name, const char *help)
{
	int repeat = o->kind == DT_OPT_LIST;
	fprintf(f, " \\\n\t\t\t'%s%s%s[", repeat ? "*" : "", name,
	        o->arg && name[1] == '-' ? "=" : "");
	zsh_desc(f, help);
	fputc(']', f);
	zsh_action(f, o);
	fputc('\'', f);
}

static void zsh_command(FILE *f, const struct dt_command *cmd)
{
	const struct dt_cmd_options *c = cmd->options;
	fprintf(f, "\t\t%s)\n\t\t\t_arguments -s", cmd->name);
	for (size_t k = 0; k < c->n; k++) {
		const struct dt_option *o = &c->opts[k];
		if (!typed_option(o))
			continue;
		zsh_option(f, o, o->long_name, option_help(c, k));
		if (o->short_name) {
			char s[3] = {'-', o->short_name, 0};
			zsh_option(f, o, s, option_help(c, k));
		}
	}
	if (c->command_follows)
		fputs(" \\\n\t\t\t'*::command:_normal'", f);
	else if (!strcmp(cmd->name, "completion"))
		fputs(" \\\n\t\t\t'1:shell:(bash zsh)'", f);
	else
		fputs(" \\\n\t\t\t'*:file:_files'", f);
	fputs(" ;;\n", f);
}

void dt_completion_zsh(FILE *f)
{
	fputs("#compdef denytrace\n"
	      "# zsh completion for denytrace: `denytrace completion zsh`, generated from\n"
	      "# its command and option tables.\n"
	      "_denytrace() {\n"
	      "\tlocal -a commands\n"
	      "\tcommands=(\n",
	      f);
	for (size_t i = 0; i < dt_ncommands; i++) {
		fprintf(f, "\t\t'%s:", dt_commands[i].name);
		zsh_desc(f, dt_commands[i].summary);
		fputs("'\n", f);
	}
	fputs("\t)\n"
	      "\tif ((CURRENT == 2)); then\n"
	      "\t\t_describe -t commands 'denytrace command' commands\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tlocal cmd=${words[2]}\n"
	      "\tshift words\n"
	      "\t((CURRENT--))\n"
	      "\tcase $cmd in\n",
	      f);
	for (size_t i = 0; i < dt_ncommands; i++)
		zsh_command(f, &dt_commands[i]);
	fputs("\tesac\n}\n_denytrace \"$@\"\n", f);
}
