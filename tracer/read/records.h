/* SPDX-License-Identifier: MIT */
/* Records decoded into plain structs. Reading is separate from judging:
 * nothing here interprets a record beyond its fields. */
#ifndef DENYTRACE_RECORDS_H
#define DENYTRACE_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "ring_format.h"

struct dt_pathinfo {
	const char *path;     /* as passed, NULL if none */
	const char *dirpath;  /* *at directory, NULL if none */
	const char *abspath;  /* NULL if unknown */
	const char *realpath; /* NULL if unknown */
	struct dt_stat_facts st;
	int has_st;
	/* the directory the process could not search on the way, if the
	 * probe found one (first path only) */
	const char *search_dir;
	struct dt_search_facts search;
};

/* A Python frame (DT_T_PYFRAME), as CPython's dumper named it. */
struct dt_py_frame {
	const char *file, *func;
	unsigned line; /* 0: unknown */
};

struct dt_mount {
	const char *path;
	const char *fstype;
	int rw;
};

struct dt_record {
	uint64_t pos; /* ring position, for ordering */
	int type;     /* enum dt_rec_type */
	uint64_t time_real, time_mono;
	int64_t pid, tid, ppid, uid, gid, ruid;
	/* which of a report's rings it came from: pids are a process's only
	 * within one ring (another ring may be another host's, or another
	 * launch's after pid reuse) */
	size_t ring;
	uint32_t groups[64]; /* supplementary groups */
	int ngroups;         /* -1: not recorded */
	const char *comm;
	/* denial / write / reopen */
	const char *op;
	int err;
	int has_flags, has_mode, has_cmd, has_fd;
	uint64_t flags, mode;
	int64_t cmd, fd;
	const char *fmode;
	int writes; /* the call wanted to change the filesystem */
	int injected;
	const char *sqlite_hint;     /* the probe's name-based SQLite tag, as recorded */
	const char *sqlite;          /* SQLite role as sqlite_role.c judged it; NULL until then */
	const char *sqlite_evidence; /* header, reopen, companion or name */
	int sqlite_header;           /* enum dt_sqlite_header of its database */
	struct dt_pathinfo p[2];
	/* EPERM: inode flags (FS_IOC_GETFLAGS) of the first path and of its
	 * directory, when the probe could read them */
	int has_iflags, has_dir_iflags;
	uint64_t iflags, dir_iflags;
	struct dt_frame *frames;
	size_t nframes;
	const char **modules;
	size_t nmodules;
	struct dt_py_frame *pyframes; /* innermost first, before the native frames */
	size_t npyframes;
	int py_trunc; /* the Python stack had more frames than recorded */
	/* process / launch */
	const char *exe, *cwd, *version;
	const char *hostname, *boot_id, *machine_hash; /* process, launch records */
	const char **argv;
	size_t argc;
	int argv_trunc;
	const char **env;
	size_t nenv;
	struct dt_mount *mounts;
	size_t nmounts;
	int mounts_trunc;
	int stack_trunc; /* the stack ends before its outermost frame */
	int has_seccomp;
	int64_t seccomp, seccomp_filters, no_new_privs;
	uint64_t mnt_ns, user_ns;
	/* exec (seccomp supervisor) */
	int exec_static;        /* 1 static, 0 dynamic, -1 unknown */
	int exec_probe;         /* the new image's LD_PRELOAD holds the probe */
	const char *exec_blind; /* "static", "no-preload", NULL when covered; the report
	                         * sets "hidden" (no entry record followed) */
	int exec_entry;         /* a probe that loads writes DT_REC_ENTRY at once */
	const char *preload;    /* LD_PRELOAD as passed, NULL if unset */
	int supervisor;         /* written by the seccomp supervisor */
	int64_t nspid;          /* supervisor: pid inside the target's pid namespace, 0 if same */
	int setid_lost;         /* exec: a set-id program ran without its privilege */
	int64_t setid_euid;     /* the effective uid it would have had */
	/* config (denytrace codex): a configuration file as it was at launch */
	const char *cfg_path;
	const char *cfg_role;    /* "codex" */
	const char *cfg_version; /* `codex --version` at launch, or NULL */
	const char *cfg_profile; /* the --profile layer's name; NULL for config.toml */
	const char *cfg_text;    /* NUL-terminated copy; NULL when it was not read */
	size_t cfg_len;          /* bytes in cfg_text */
	uint64_t cfg_size;       /* the file's full size */
	int cfg_trunc;           /* cfg_text is only the first part of the file */
	int cfg_errno;           /* why it was not read (ENOENT: no file), else 0 */
	/* storage for everything the pointers above point into */
	void *mem;
};

/* Decodes one record (as dt_ring_next returned it). Returns 0, or -1 if
 * its fields are malformed. Free with dt_record_free. */
int dt_record_decode(const unsigned char *buf, uint32_t len, uint64_t pos, struct dt_record *out);
void dt_record_free(struct dt_record *r);

const char *dt_rec_type_name(int type);

/* Value of NAME in a process record's environment, or NULL. */
const char *dt_record_env(const struct dt_record *r, const char *name);

#endif
