/* SPDX-License-Identifier: MIT */
#include "recfmt.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include "names.h"
#include "sqlite_role.h"

/* Length of a valid UTF-8 sequence at p that is not a C1 control, or 0. */
static int dt_safe_utf8(const unsigned char *p)
{
	int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
	if (!n || p[0] > 0xf4)
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return 0; /* U+0080..U+009F: C1 controls (CSI is one) */
	if (n == 3 && p[0] == 0xe2 &&
	    ((p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) ||
	     (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)))
		return 0; /* U+202A..U+202E, U+2066..U+2069: bidi overrides reorder what follows */
	if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
	    (n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] >= 0x90))
		return 0; /* overlong, surrogate, beyond U+10FFFF */
	return n;
}

/* s with every byte dt_safe_len refuses as \xNN; backslashes doubled
 * when doubled is set, so that a reader tells them from those escapes. */
static void put_visible(FILE *f, const char *s, int doubled)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n = dt_safe_len(p);
		if (*p == '\\' && doubled) {
			fputs("\\\\", f);
			p++;
		} else if (n) {
			fwrite(p, 1, (size_t)n, f);
			p += n;
		} else {
			fprintf(f, "\\x%02x", *p++);
		}
	}
}

void dt_put_safe(FILE *f, const char *s)
{
	if (!s)
		fputs("?", f);
	else
		put_visible(f, s, 1);
}

void dt_put_pasteable(FILE *f, const char *s)
{
	put_visible(f, s ? s : "", 0);
}

void dt_put_text(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		int n = *p == '\n' ? 1 : dt_safe_len(p);
		if (n) {
			fwrite(p, 1, (size_t)n, f);
			p += n;
		} else {
			fprintf(f, "\\x%02x", *p++);
		}
	}
}

int dt_safe_len(const unsigned char *p)
{
	if (*p >= 0x20 && *p < 0x7f)
		return 1;
	return *p >= 0x80 ? dt_safe_utf8(p) : 0;
}

void dt_shell_word(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	int plain = *u != 0, printable = 1;
	for (const unsigned char *p = u; *p;) {
		int n = dt_safe_len(p);
		if (n != 1 || (!isalnum(*p) && !strchr("-_./=:,+@%", *p)))
			plain = 0;
		if (!n) {
			printable = 0;
			break;
		}
		p += n;
	}
	if (plain) {
		fputs(s, f);
	} else if (printable) {
		/* inside '...' only the quote itself needs a way out, and it
		 * takes none through a backslash: a renderer that doubles
		 * backslashes (dt_put_safe) or eats them (Markdown) would turn
		 * '\'' into an end of quoting */
		fputc('\'', f);
		for (const unsigned char *p = u; *p; p++)
			if (*p == '\'')
				fputs("'\"'\"'", f);
			else
				fputc(*p, f);
		fputc('\'', f);
	} else {
		/* $'...' (bash, zsh, ksh, POSIX.1-2024 sh) spells any byte; the
		 * quote and the backslash as \xNN too, for the same reason */
		fputs("$'", f);
		for (const unsigned char *p = u; *p;) {
			int n = dt_safe_len(p);
			if (n && *p != '\'' && *p != '\\') {
				fwrite(p, 1, (size_t)n, f);
				p += n;
			} else {
				fprintf(f, "\\x%02x", *p++);
			}
		}
		fputc('\'', f);
	}
}

void dt_shell_word_str(char *out, size_t cap, const char *s)
{
	FILE *f = cap ? fmemopen(out, cap, "w") : NULL;
	if (!f) {
		if (cap)
			out[0] = 0;
		return;
	}
	dt_shell_word(f, s);
	fclose(f);
	out[cap - 1] = 0; /* a word that filled out has no NUL of fmemopen's */
}

void dt_format_time(uint64_t ns, char *out, size_t cap)
{
	time_t sec = (time_t)(ns / 1000000000ULL);
	struct tm tm;
	gmtime_r(&sec, &tm);
	char base[32];
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, cap, "%s.%06lluZ", base, (unsigned long long)(ns % 1000000000ULL) / 1000);
}

static const char *dt_file_type(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "file";
	case S_IFDIR:
		return "directory";
	case S_IFLNK:
		return "symlink";
	case S_IFCHR:
		return "char-device";
	case S_IFBLK:
		return "block-device";
	case S_IFIFO:
		return "fifo";
	case S_IFSOCK:
		return "socket";
	default:
		return "unknown";
	}
}

void dt_stat_text(const struct dt_stat_facts *st, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	if (st->valid & DT_SF_EXISTS)
		n += (size_t)snprintf(out + n, cap - n, "%s %04o owner %u:%u",
		                      dt_file_type(st->mode), st->mode & 07777, st->uid, st->gid);
	else
		n += (size_t)snprintf(out + n, cap - n, "does not exist");
	if (n < cap && (st->valid & DT_SF_SYMLINK))
		n += (size_t)snprintf(out + n, cap - n, " (via symlink)");
	if (n < cap && (st->valid & DT_SF_UNLINKED))
		n += (size_t)snprintf(out + n, cap - n, " (unlinked while open)");
	if (n < cap && (st->valid & DT_SF_PARENT))
		n += (size_t)snprintf(out + n, cap - n, "; parent %04o owner %u:%u",
		                      st->parent_mode & 07777, st->parent_uid, st->parent_gid);
	if (n < cap && (st->valid & DT_SF_MOUNT))
		snprintf(out + n, cap - n, "; mount %s",
		         (st->mount_flags & ST_RDONLY) ? "read-only" : "read-write");
}

static void dt_frame_text(FILE *f, const struct dt_record *r, size_t i, struct dt_symbolizer *sym)
{
	const struct dt_frame *fr = &r->frames[i];
	const char *mod = fr->module != UINT32_MAX ? r->modules[fr->module] : NULL;
	struct dt_symbol s = {0};
	int have = mod && sym && dt_symbolize(sym, mod, fr->offset, &s) == 0 && s.func[0];
	fprintf(f, "      #%-2zu ", i);
	if (have) { /* a program names its own functions and files */
		dt_put_safe(f, s.func);
		fprintf(f, "+0x%llx", (unsigned long long)s.func_off);
	} else {
		fprintf(f, "0x%llx", (unsigned long long)fr->ip);
	}
	if (mod) {
		fputs(" (", f);
		dt_put_safe(f, mod);
		fprintf(f, "+0x%llx)", (unsigned long long)fr->offset);
	}
	if (have && s.file[0]) {
		fputc(' ', f);
		dt_put_safe(f, s.file);
		fprintf(f, ":%d", s.line);
	}
	fputc('\n', f);
}

void dt_pyframes_text(FILE *f, const struct dt_record *r, const char *indent)
{
	for (size_t i = 0; i < r->npyframes; i++) {
		const struct dt_py_frame *p = &r->pyframes[i];
		fputs(indent, f);
		dt_put_safe(f, p->func);
		fputs(" at ", f);
		dt_put_safe(f, p->file);
		if (p->line)
			fprintf(f, ":%u", p->line);
		fputc('\n', f);
	}
	if (r->py_trunc)
		fprintf(f, "%s... (deeper frames not recorded)\n", indent);
}

/* A recorded file, one indented line per line of it (escaped: it is text
 * a user wrote, but may hold anything). */
static void dt_config_lines_text(FILE *f, const char *text, size_t len)
{
	char *line = malloc(len + 1);
	if (!line)
		return;
	for (size_t i = 0; i < len;) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		memcpy(line, text + i, e - i);
		line[e - i] = 0;
		fputs("    | ", f);
		dt_put_safe(f, line);
		fputc('\n', f);
		i = e + 1;
	}
	free(line);
}

/* A refusal, a successful write or a reopen; verbose adds paths, stat and stack. */
static void dt_record_text_file(FILE *f, const struct dt_record *r, int verbose,
                                struct dt_symbolizer *sym)
{
	char flags[256];
	fputs(r->type == DT_REC_DENIAL  ? "REFUSED "
	      : r->type == DT_REC_WRITE ? "wrote "
	                                : "REOPENED read-only ",
	      f);
	dt_put_safe(f, r->op);
	dt_flags_name(r, flags, sizeof(flags));
	fputc('(', f);
	fputs(flags, f);
	if (r->has_mode)
		fprintf(f, "%s0%llo", flags[0] ? ", " : "", (unsigned long long)r->mode);
	fputs(") ", f);
	dt_put_safe(f, r->p[0].abspath ? r->p[0].abspath
	               : r->p[0].path  ? r->p[0].path
	                               : r->p[0].realpath);
	if (r->p[1].path || r->p[1].abspath) {
		fputs(" -> ", f);
		dt_put_safe(f, r->p[1].abspath ? r->p[1].abspath : r->p[1].path);
	}
	if (r->type == DT_REC_DENIAL)
		fprintf(f, ": %s%s%s", dt_errno_name(r->err), r->writes ? "" : " (read)",
		        r->injected ? " (injected)" : "");
	if (r->sqlite) {
		char ev[256];
		fputs(" [sqlite ", f);
		dt_put_safe(f, r->sqlite);
		fputs(" (", f);
		dt_put_safe(f, dt_sqlite_evidence_text(r, ev, sizeof(ev)));
		fputs(")]", f);
	}
	fputc('\n', f);
	if (!verbose)
		return;
	for (int k = 0; k < 2; k++) {
		const struct dt_pathinfo *p = &r->p[k];
		if (!p->path && !p->realpath)
			continue;
		if (p->path && p->abspath && strcmp(p->path, p->abspath)) {
			fputs("    passed   ", f);
			dt_put_safe(f, p->path);
			if (p->dirpath) {
				fputs(" (relative to ", f);
				dt_put_safe(f, p->dirpath);
				fputc(')', f);
			}
			fputc('\n', f);
		}
		fputs("    realpath ", f);
		dt_put_safe(f, p->realpath ? p->realpath : "(unknown)");
		fputc('\n', f);
		if (p->has_st) {
			char st[256];
			dt_stat_text(&p->st, st, sizeof(st));
			fprintf(f, "    stat     %s\n", st);
		}
	}
	if (r->has_iflags || r->has_dir_iflags)
		fprintf(f, "    inode flags %s%#llx, of its directory %s%#llx\n",
		        r->has_iflags ? "" : "(unread) ", (unsigned long long)r->iflags,
		        r->has_dir_iflags ? "" : "(unread) ", (unsigned long long)r->dir_iflags);
	if (r->npyframes) {
		fputs("    python\n", f);
		dt_pyframes_text(f, r, "      ");
	}
	if (r->nframes) {
		fputs("    stack\n", f);
		for (size_t i = 0; i < r->nframes; i++)
			dt_frame_text(f, r, i, sym);
	}
	if (r->stack_trunc)
		fputs(r->nframes ? "      (stack cut: the unwinder stopped here)\n"
		                 : "    stack    (none: the unwinder stopped at once)\n",
		      f);
}

static void dt_record_text_process(FILE *f, const struct dt_record *r, int verbose)
{
	fputs(r->type == DT_REC_PROCESS ? "process " : "launch ", f);
	for (size_t i = 0; i < r->argc; i++) {
		if (i)
			fputc(' ', f);
		dt_put_safe(f, r->argv[i]);
	}
	if (r->argv_trunc)
		fputs(" ...", f);
	fprintf(f, " (ppid %lld, uid %lld)\n", (long long)r->ppid, (long long)r->uid);
	if (!verbose)
		return;
	if (r->exe) {
		fputs("    exe      ", f);
		dt_put_safe(f, r->exe);
		fputc('\n', f);
	}
	fputs("    cwd      ", f);
	dt_put_safe(f, r->cwd);
	fputc('\n', f);
	if (r->hostname) {
		fputs("    host     ", f);
		dt_put_safe(f, r->hostname);
		fputs(", boot ", f);
		dt_put_safe(f, r->boot_id ? r->boot_id : "?");
		fputc('\n', f);
	}
	if (r->has_seccomp)
		fprintf(f,
		        "    sandbox  seccomp %lld (%lld filters), no_new_privs %lld, mnt ns %llu, "
		        "user ns %llu\n",
		        (long long)r->seccomp, (long long)r->seccomp_filters,
		        (long long)r->no_new_privs, (unsigned long long)r->mnt_ns,
		        (unsigned long long)r->user_ns);
	if (r->nmounts) {
		fputs("    writable", f);
		int any = 0;
		for (size_t i = 0; i < r->nmounts; i++)
			if (r->mounts[i].rw && r->mounts[i].path[0] == '/') {
				fputc(' ', f);
				dt_put_safe(f, r->mounts[i].path);
				any = 1;
			}
		fputs(any ? "\n" : " (none)\n", f);
	}
	for (size_t i = 0; i < r->nenv; i++) {
		fputs("    env      ", f);
		dt_put_safe(f, r->env[i]);
		fputc('\n', f);
	}
}

static void dt_record_text_exec(FILE *f, const struct dt_record *r, int verbose)
{
	fputs("exec ", f);
	dt_put_safe(f, r->exe ? r->exe : r->p[0].path);
	fputs(" [", f);
	for (size_t i = 0; i < r->argc; i++) {
		if (i)
			fputc(' ', f);
		dt_put_safe(f, r->argv[i]);
	}
	fprintf(f, "%s] %s%s%s", r->argv_trunc ? " ..." : "",
	        r->exec_static == 1   ? "static"
	        : r->exec_static == 0 ? "dynamic"
	                              : "unknown binary",
	        r->exec_probe ? ", probe preloaded" : ", probe NOT preloaded",
	        r->exec_blind ? "; BLIND: " : "");
	if (r->exec_blind)
		dt_put_safe(f, r->exec_blind);
	fputc('\n', f);
	if (verbose && r->ppid)
		fprintf(f, "    ppid     %lld\n", (long long)r->ppid);
	if (verbose) {
		fputs("    preload  ", f);
		dt_put_safe(f, r->preload ? r->preload : "(LD_PRELOAD unset)");
		fputc('\n', f);
	}
}

static void dt_record_text_config(FILE *f, const struct dt_record *r, int verbose)
{
	fputs("config ", f);
	dt_put_safe(f, r->cfg_path);
	if (r->cfg_profile) {
		fputs(" (profile ", f);
		dt_put_safe(f, r->cfg_profile);
		fputc(')', f);
	}
	if (r->cfg_version) {
		fputs(" (", f);
		dt_put_safe(f, r->cfg_version);
		fputc(')', f);
	}
	if (r->cfg_text)
		fprintf(f, ": %llu bytes as launched", (unsigned long long)r->cfg_size);
	else
		fprintf(f, ": %s at launch (%s)", r->cfg_errno == ENOENT ? "absent" : "unreadable",
		        dt_errno_name(r->cfg_errno));
	if (r->cfg_trunc)
		fprintf(f, ", recorded up to byte %zu (truncated)", r->cfg_len);
	fputc('\n', f);
	if (verbose && r->cfg_text)
		dt_config_lines_text(f, r->cfg_text, r->cfg_len);
}

void dt_record_text(FILE *f, const struct dt_record *r, int verbose, struct dt_symbolizer *sym)
{
	char ts[48];
	dt_format_time(r->time_real, ts, sizeof(ts));
	fprintf(f, "%s pid %lld", ts, (long long)r->pid);
	if (r->tid && r->tid != r->pid)
		fprintf(f, "/%lld", (long long)r->tid);
	fputs(" (", f);
	dt_put_safe(f, r->comm ? r->comm : "?");
	fputs(") ", f);
	switch (r->type) {
	case DT_REC_DENIAL:
	case DT_REC_WRITE:
	case DT_REC_REOPEN:
		dt_record_text_file(f, r, verbose, sym);
		break;
	case DT_REC_PROCESS:
	case DT_REC_LAUNCH:
		dt_record_text_process(f, r, verbose);
		break;
	case DT_REC_EXEC:
		dt_record_text_exec(f, r, verbose);
		break;
	case DT_REC_CONFIG:
		dt_record_text_config(f, r, verbose);
		break;
	case DT_REC_ENTRY:
		fputs("the probe entered\n", f);
		break;
	default:
		fprintf(f, "record of unknown type %d\n", r->type);
	}
}

void dt_pyframes_json(struct dt_json *j, const struct dt_record *r)
{
	dt_json_arr(j);
	for (size_t i = 0; i < r->npyframes; i++) {
		const struct dt_py_frame *p = &r->pyframes[i];
		dt_json_obj(j);
		dt_json_kstr(j, "function", p->func);
		dt_json_kstr(j, "file", p->file);
		dt_json_key(j, "line");
		if (p->line)
			dt_json_int(j, p->line);
		else
			dt_json_null(j);
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

void dt_frames_json(struct dt_json *j, const struct dt_record *r, struct dt_symbolizer *sym)
{
	dt_json_arr(j);
	for (size_t i = 0; i < r->nframes; i++) {
		const struct dt_frame *fr = &r->frames[i];
		const char *mod = fr->module != UINT32_MAX ? r->modules[fr->module] : NULL;
		struct dt_symbol s = {0};
		int have = mod && sym && dt_symbolize(sym, mod, fr->offset, &s) == 0;
		dt_json_obj(j);
		dt_json_key(j, "ip");
		char hex[24];
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)fr->ip);
		dt_json_str(j, hex);
		dt_json_kstr(j, "module", mod);
		dt_json_key(j, "offset");
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)fr->offset);
		dt_json_str(j, mod ? hex : NULL);
		dt_json_kstr(j, "function", have && s.func[0] ? s.func : NULL);
		if (have && s.file[0]) {
			dt_json_kstr(j, "file", s.file);
			dt_json_kint(j, "line", s.line);
		}
		dt_json_end_obj(j);
	}
	dt_json_end_arr(j);
}

static void dt_stat_json(struct dt_json *j, const struct dt_pathinfo *p)
{
	if (!p->has_st) {
		dt_json_null(j);
		return;
	}
	const struct dt_stat_facts *st = &p->st;
	dt_json_obj(j);
	dt_json_kbool(j, "exists", (st->valid & DT_SF_EXISTS) != 0);
	if (st->valid & DT_SF_EXISTS) {
		dt_json_kstr(j, "type", dt_file_type(st->mode));
		dt_json_kuint(j, "mode", st->mode & 07777);
		dt_json_kuint(j, "uid", st->uid);
		dt_json_kuint(j, "gid", st->gid);
	}
	dt_json_kbool(j, "symlink", (st->valid & DT_SF_SYMLINK) != 0);
	dt_json_kbool(j, "unlinked", (st->valid & DT_SF_UNLINKED) != 0);
	if (st->valid & DT_SF_PARENT) {
		dt_json_kuint(j, "parent_mode", st->parent_mode & 07777);
		dt_json_kuint(j, "parent_uid", st->parent_uid);
		dt_json_kuint(j, "parent_gid", st->parent_gid);
	}
	dt_json_key(j, "mount_readonly");
	if (st->valid & DT_SF_MOUNT)
		dt_json_bool(j, (st->mount_flags & ST_RDONLY) != 0);
	else
		dt_json_null(j);
	dt_json_end_obj(j);
}

static void dt_strings_json(struct dt_json *j, const char **v, size_t n)
{
	dt_json_arr(j);
	for (size_t i = 0; i < n; i++)
		dt_json_str(j, v[i]);
	dt_json_end_arr(j);
}

/* A refusal, a successful write or a reopen: the call and its paths. */
/* recfields.def's fields with a JSON key, indexed by tag: the key, how
 * the value prints, and where it is. */
enum dt_json_kind { DT_JK_NONE, DT_JK_U64, DT_JK_I64, DT_JK_INT, DT_JK_BOOL, DT_JK_STR };

static const struct {
	const char *key;
	unsigned char kind;
	unsigned short offset;
} dt_json_fields[256] = {
#define DT_FIELD(tag, kind, member, json)                                                          \
	[tag] = {json, DT_JK_##kind, offsetof(struct dt_record, member)},
#define DT_FIELD_HAS(tag, kind, member, has, json) DT_FIELD(tag, kind, member, json)
#include "recfields.def"
#undef DT_FIELD
#undef DT_FIELD_HAS
};

/* The field with this tag, as its key and value. */
static void dt_json_field(struct dt_json *j, const struct dt_record *r, int tag)
{
	const char *at = (const char *)r + dt_json_fields[tag].offset;
	uint64_t u;
	int64_t i;
	int n;
	const char *str;
	if (!dt_json_fields[tag].key)
		return; /* rendered by its own code, never through here */
	dt_json_key(j, dt_json_fields[tag].key);
	switch (dt_json_fields[tag].kind) {
	case DT_JK_U64:
		memcpy(&u, at, sizeof(u));
		dt_json_uint(j, u);
		break;
	case DT_JK_I64:
		memcpy(&i, at, sizeof(i));
		dt_json_int(j, i);
		break;
	case DT_JK_INT:
	case DT_JK_BOOL:
		memcpy(&n, at, sizeof(n));
		if (dt_json_fields[tag].kind == DT_JK_BOOL)
			dt_json_bool(j, n);
		else
			dt_json_int(j, n);
		break;
	default:
		memcpy(&str, at, sizeof(str));
		dt_json_str(j, str);
		break;
	}
}

static void dt_record_json_file(struct dt_json *j, const struct dt_record *r,
                                struct dt_symbolizer *sym)
{
	char buf[256];
	dt_json_field(j, r, DT_T_OP);
	dt_json_kstr(j, "errno", r->err ? dt_errno_name(r->err) : NULL);
	dt_json_key(j, "flags");
	dt_flags_name(r, buf, sizeof(buf));
	dt_json_str(j, buf[0] ? buf : NULL);
	dt_json_key(j, "mode");
	if (r->has_mode) {
		snprintf(buf, sizeof(buf), "0%llo", (unsigned long long)r->mode);
		dt_json_str(j, buf);
	} else {
		dt_json_null(j);
	}
	if (r->fmode)
		dt_json_field(j, r, DT_T_FMODE);
	if (r->has_fd)
		dt_json_field(j, r, DT_T_FD);
	dt_json_kstr(j, "access", r->writes ? "write" : "read");
	dt_json_field(j, r, DT_T_INJECTED);
	if (r->supervisor) {
		dt_json_kstr(j, "source", "supervisor");
	}
	const char *names[2][5] = {{"path", "dirpath", "abspath", "realpath", "stat"},
	                           {"path2", "dirpath2", "abspath2", "realpath2", "stat2"}};
	for (int k = 0; k < 2; k++) {
		const struct dt_pathinfo *p = &r->p[k];
		if (k == 1 && !p->path && !p->abspath)
			continue;
		dt_json_kstr(j, names[k][0], p->path);
		dt_json_kstr(j, names[k][1], p->dirpath);
		dt_json_kstr(j, names[k][2], p->abspath);
		dt_json_kstr(j, names[k][3], p->realpath);
		dt_json_key(j, names[k][4]);
		dt_stat_json(j, p);
	}
	if (r->has_iflags)
		dt_json_field(j, r, DT_T_IFLAGS);
	if (r->has_dir_iflags)
		dt_json_field(j, r, DT_T_DIR_IFLAGS);
	dt_json_kstr(j, "sqlite", r->sqlite);
	dt_json_kstr(j, "sqlite_evidence", r->sqlite_evidence);
	dt_json_kstr(j, "sqlite_header",
	             r->sqlite ? dt_sqlite_header_name(r->sqlite_header) : NULL);
	dt_json_key(j, "python_stack");
	dt_pyframes_json(j, r);
	dt_json_field(j, r, DT_T_PYTRUNC);
	dt_json_key(j, "backtrace");
	dt_frames_json(j, r, sym);
	dt_json_field(j, r, DT_T_STACK_TRUNC);
}

static void dt_record_json_exec(struct dt_json *j, const struct dt_record *r)
{
	dt_json_field(j, r, DT_T_EXE);
	dt_json_kstr(j, "path", r->p[0].path);
	dt_json_key(j, "argv");
	dt_strings_json(j, r->argv, r->argc);
	dt_json_field(j, r, DT_T_ARGV_TRUNC);
	dt_json_key(j, "static");
	if (r->exec_static < 0)
		dt_json_null(j);
	else
		dt_json_bool(j, r->exec_static);
	dt_json_field(j, r, DT_T_EXEC_PROBE);
	dt_json_field(j, r, DT_T_PRELOAD);
	dt_json_field(j, r, DT_T_EXEC_BLIND);
	dt_json_field(j, r, DT_T_EXEC_ENTRY);
}

static void dt_record_json_config(struct dt_json *j, const struct dt_record *r)
{
	dt_json_field(j, r, DT_T_CONFIG_ROLE);
	dt_json_field(j, r, DT_T_CONFIG_PATH);
	dt_json_field(j, r, DT_T_CONFIG_PROFILE);
	dt_json_field(j, r, DT_T_CONFIG_VERSION);
	dt_json_field(j, r, DT_T_CONFIG_SIZE);
	dt_json_field(j, r, DT_T_CONFIG_TRUNC);
	dt_json_kstr(j, "errno", r->cfg_errno ? dt_errno_name(r->cfg_errno) : NULL);
	dt_json_kstr(j, "text", r->cfg_text);
}

/* A process or launch record: the image, its environment, and (process)
 * the mounts and seccomp state. */
static void dt_record_json_process(struct dt_json *j, const struct dt_record *r)
{
	char buf[256];
	dt_json_field(j, r, DT_T_EXE);
	dt_json_key(j, "argv");
	dt_strings_json(j, r->argv, r->argc);
	dt_json_field(j, r, DT_T_ARGV_TRUNC);
	dt_json_field(j, r, DT_T_CWD);
	dt_json_key(j, "env");
	dt_json_obj(j);
	for (size_t i = 0; i < r->nenv; i++) {
		const char *eq = strchr(r->env[i], '=');
		if (!eq)
			continue;
		snprintf(buf, sizeof(buf), "%.*s", (int)(eq - r->env[i]), r->env[i]);
		dt_json_kstr(j, buf, eq + 1);
	}
	dt_json_end_obj(j);
	if (r->type == DT_REC_PROCESS) {
		dt_json_key(j, "writable_mounts");
		dt_json_arr(j);
		for (size_t i = 0; i < r->nmounts; i++)
			if (r->mounts[i].rw)
				dt_json_str(j, r->mounts[i].path);
		dt_json_end_arr(j);
		dt_json_key(j, "readonly_mounts");
		dt_json_arr(j);
		for (size_t i = 0; i < r->nmounts; i++)
			if (!r->mounts[i].rw)
				dt_json_str(j, r->mounts[i].path);
		dt_json_end_arr(j);
		dt_json_field(j, r, DT_T_MOUNTS_TRUNC);
		dt_json_key(j, "seccomp");
		if (r->has_seccomp) {
			dt_json_obj(j);
			dt_json_kint(j, "mode", r->seccomp);
			dt_json_kint(j, "filters", r->seccomp_filters);
			dt_json_kbool(j, "no_new_privs", r->no_new_privs != 0);
			dt_json_end_obj(j);
		} else {
			dt_json_null(j);
		}
		dt_json_field(j, r, DT_T_MNT_NS);
		dt_json_field(j, r, DT_T_USER_NS);
		dt_json_field(j, r, DT_T_VERSION);
	}
	dt_json_field(j, r, DT_T_HOSTNAME);
	dt_json_field(j, r, DT_T_BOOT_ID);
	if (r->type == DT_REC_LAUNCH)
		dt_json_field(j, r, DT_T_MACHINE_HASH);
}

void dt_record_json(struct dt_json *j, const struct dt_record *r, struct dt_symbolizer *sym)
{
	char buf[256];
	dt_json_obj(j);
	dt_json_kstr(j, "type", dt_rec_type_name(r->type));
	dt_json_key(j, "time");
	dt_format_time(r->time_real, buf, sizeof(buf));
	dt_json_str(j, buf);
	static const int head[] = {DT_T_TIME_REAL, DT_T_TIME_MONO, DT_T_PID, DT_T_TID,
	                           DT_T_PPID,      DT_T_UID,       DT_T_GID, DT_T_COMM};
	for (size_t k = 0; k < sizeof(head) / sizeof(head[0]); k++)
		dt_json_field(j, r, head[k]);
	if (r->type == DT_REC_DENIAL || r->type == DT_REC_WRITE || r->type == DT_REC_REOPEN)
		dt_record_json_file(j, r, sym);
	else if (r->type == DT_REC_EXEC)
		dt_record_json_exec(j, r);
	else if (r->type == DT_REC_CONFIG)
		dt_record_json_config(j, r);
	else if (r->type == DT_REC_PROCESS || r->type == DT_REC_LAUNCH)
		dt_record_json_process(j, r);
	dt_json_end_obj(j);
}
