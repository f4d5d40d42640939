/* SPDX-License-Identifier: MIT */
/*
 * The denytrace ring file, format version 3 (version 2 had the same
 * layout but writers that take no lock: see DT_RING_F_LOCKED; version 1
 * also differed in the record checksum, dt_checksum_v1; readers still
 * read both).
 *
 * This header is the specification of the file. The probe (writer) and the
 * CLI (reader) both include it; nothing else defines the layout.
 *
 * All integers are little-endian (the probe only runs on the machine that
 * reads the file, but the reader still refuses a foreign magic).
 *
 *   offset 0      struct dt_ring_header, padded to DT_RING_HEADER_SIZE
 *   offset 4096   nslots slots of DT_SLOT_SIZE bytes each
 *
 * Slots
 * -----
 * Every slot starts with an 8-byte atomic sequence word followed by
 * DT_SLOT_DATA bytes of payload. Slots are addressed by an absolute position
 * `pos` (0, 1, 2, ... for the life of the file); slot index = pos % nslots.
 *
 *   seq == 0                         never written
 *   seq == (pos + 1) | DT_SEQ_BUSY   a writer owns it and is filling it
 *   seq == (pos + 1) | DT_SEQ_START  first slot of a published record
 *   seq == (pos + 1)                 published continuation slot
 *
 * A record occupies n consecutive positions (wrapping at the end of the slot
 * array). Its payload is the concatenation of the n slot payloads.
 *
 * Writing (lock-free, any number of processes and threads at once):
 *   1. pos = atomic_fetch_add(&head, n)          (relaxed)
 *   2. claim each of the n slots with a compare-and-swap to
 *      (pos + k + 1) | DT_SEQ_BUSY, but only from a seq of an OLDER
 *      position: a slot already holding a newer position means a writer a
 *      full lap ahead took it, and this record is abandoned (dropped += 1).
 *      If the replaced seq had DT_SEQ_START and no DT_SEQ_BUSY, a published
 *      record is being overwritten: lost += 1.
 *   3. release fence, then copy the payload in slot by slot, checking
 *      before each slot that the claim still holds (else abandon)
 *   4. publish continuation slots, then the first slot, each with a
 *      compare-and-swap from its BUSY value (release). A failed CAS means a
 *      writer a full lap ahead owns the slot; the record is abandoned.
 * A writer that dies between 1 and 4 leaves BUSY slots; readers skip them.
 * A writer stalled for a whole lap between the check in 3 and its copy can
 * still scribble over a newer record; the record header carries its own
 * position, so the reader discards such a record instead of returning it.
 *
 * Reading (never blocks writers, works on a live file):
 *   load seq (acquire); if it is not (pos + 1) | DT_SEQ_START, skip the
 *   position. Otherwise copy the n slots, checking that each continuation
 *   reads (pos + k + 1); acquire fence; reload every seq and discard the
 *   record if any changed (overwritten while copying). Finally check the
 *   record header (length, slot count) and the checksum; a record that fails
 *   is counted as corrupt and skipped, never returned.
 * Records older than head - nslots are gone; `lost` counts them.
 *
 * Records
 * -------
 * A record is a struct dt_rec_header followed by fields. A field is
 *   uint16_t tag; uint16_t len; uint8_t value[len];      (no padding)
 * Integers are stored as 8-byte values. Strings are stored without a NUL.
 * A reader ignores tags it does not know, so fields can be added without a
 * version bump; changing the meaning of a field or the slot protocol bumps
 * DT_RING_VERSION.
 */
#ifndef DENYTRACE_RING_FORMAT_H
#define DENYTRACE_RING_FORMAT_H

#include <stdint.h>

#define DT_RING_MAGIC 0x314752544e594e44ULL /* "DNYNTRG1" read as bytes */
/* 3: rings are reused (DT_RING_F_LOCKED): a writer must hold a flock and
 * check created_ns, which a version 2 probe does not; same records and
 * checksum as 2, so dt_checksum_for is unchanged. */
#define DT_RING_VERSION 3u
/* The oldest version a reader still reads (writers write only the current). */
#define DT_RING_VERSION_OLDEST 1u
#define DT_RING_HEADER_SIZE 4096u
#define DT_SLOT_SIZE 256u
#define DT_SLOT_DATA (DT_SLOT_SIZE - 8u)
#define DT_SEQ_START (1ULL << 63)
#define DT_SEQ_BUSY (1ULL << 62)
#define DT_SEQ_POS_MASK (DT_SEQ_BUSY - 1)

/* Ring sizes the CLI accepts: the record area (the file is 4 KiB more);
 * nslots is always a power of two. */
#define DT_RING_MIN_SIZE (32u * 1024u)
#define DT_RING_MAX_SIZE (1024ULL * 1024u * 1024u)
/* The default is small because the whole ring is allocated before the
 * command starts (a full disk must not kill the traced program), and
 * clearing its pages is most of `denytrace run`'s start-up (make bench);
 * 1 MiB holds about a thousand refusals. --all, which records
 * every successful write, and `denytrace codex` (long sessions) keep 8 MiB. */
#define DT_RING_DEFAULT_SIZE (1u * 1024u * 1024u)
#define DT_RING_LARGE_SIZE (8u * 1024u * 1024u)

/* A record larger than this is not written (it would evict too much). */
#define DT_REC_MAX (64u * 1024u)

/* Header flags (informational, set by the launcher). */
#define DT_RING_F_ALL 1u /* created for --all: successful writes recorded */
/* Every writer holds flock(LOCK_SH) on the ring while it maps it: the
 * launcher's lock on the descriptor it hands down (a mapping keeps that
 * open file, and so the lock), or the probe's own when it opens the ring
 * by path. A ring with this flag that nobody locks is nobody's, and the
 * next run may reuse its blocks (tracer/read/ringfile.c). */
#define DT_RING_F_LOCKED 2u

struct dt_ring_header {
	uint64_t magic;       /* DT_RING_MAGIC */
	uint32_t version;     /* DT_RING_VERSION */
	uint32_t header_size; /* DT_RING_HEADER_SIZE */
	uint32_t slot_size;   /* DT_SLOT_SIZE */
	uint32_t flags;       /* DT_RING_F_* */
	uint64_t nslots;      /* number of slots, a power of two */
	uint64_t created_ns;  /* CLOCK_REALTIME when created */
	uint64_t creator_pid; /* the launcher */
	/* Random, chosen by the launcher for this run: names its launch file
	 * (tracer/launch/launchfile.h), the record of what it launched that
	 * fix --verify may run again. Added within version 3 in what was
	 * padding, so every earlier ring reads as all zero, "no launch file",
	 * which is the truth for them: no reader needs a new version to read
	 * it right, and older readers lose nothing by ignoring it. */
	uint8_t run_id[16];
	uint8_t pad0[64 - 56];
	/* Own cache line: every writer touches it. */
	uint64_t head; /* atomic: next absolute position to reserve */
	uint8_t pad1[56];
	uint64_t lost;    /* atomic: published records overwritten */
	uint64_t dropped; /* atomic: records a writer gave up on */
	uint64_t unseen;  /* atomic: refusals not recorded because their
	                   * process had installed a seccomp filter of its
	                   * own (the probe's calls could be killed by it) */
	uint8_t pad2[40];
};

/* Record types. */
enum dt_rec_type {
	DT_REC_DENIAL = 1,  /* a call failed with a watched errno */
	DT_REC_PROCESS = 2, /* first record of a process: who and where */
	DT_REC_WRITE = 3,   /* a write operation that succeeded: by default when
	                     * its facts are news (preload/successes.c), every one
	                     * with --all */
	DT_REC_REOPEN = 4,  /* a path refused for writing reopened read-only */
	DT_REC_LAUNCH = 5,  /* written by `denytrace run`: what it launched */
	DT_REC_EXEC = 6,    /* written by the seccomp supervisor: an execve seen */
	DT_REC_CONFIG = 7,  /* written by `denytrace codex`: a config file as it
	                     * was at launch (Codex's config.toml, a --profile
	                     * layer), which later reports read instead of the
	                     * file, since the file may change afterwards */
	DT_REC_ENTRY = 8,   /* the probe's first act in a process image whose
	                     * environment has DENYTRACE_ENTRY=1 (--watch-exec):
	                     * the common fields only, so that an exec the
	                     * supervisor saw and no entry followed is known to
	                     * have run without the probe */
};

struct dt_rec_header {
	uint32_t len;      /* bytes, this header included */
	uint16_t type;     /* enum dt_rec_type */
	uint16_t nslots;   /* slots the record occupies */
	uint32_t checksum; /* dt_checksum of the bytes after this header */
	uint32_t pos32;    /* low 32 bits of the record's first position */
};

/*
 * Field tags. (u) = 8-byte unsigned integer, (s) = string, (b) = blob.
 * Which records carry which fields is listed in README.md ("Ring format").
 */
enum dt_tag {
	/* every probe record */
	DT_T_TIME_REAL = 1, /* (u) CLOCK_REALTIME, ns */
	DT_T_TIME_MONO,     /* (u) CLOCK_MONOTONIC, ns */
	DT_T_PID,           /* (u) */
	DT_T_TID,           /* (u) */
	/* The next five (and DT_T_GROUPS) are asked once per thread and kept
	 * until the probe sees a call that changes them (preload/selfids.h):
	 * the parent is the one the thread had at its first record. */
	DT_T_PPID, /* (u) */
	DT_T_UID,  /* (u) effective uid */
	DT_T_GID,  /* (u) effective gid */
	DT_T_COMM, /* (s) the thread's name (PR_GET_NAME) */
	/* denial, write, reopen */
	DT_T_OP = 16,  /* (s) libc entry point: "openat", "rename", ... */
	DT_T_ERRNO,    /* (u) errno the call returned (0 for write/reopen) */
	DT_T_FLAGS,    /* (u) open(2) flags as x86_64 numbers them (openflags.h),
	                * or fopen mode as open flags */
	DT_T_MODE,     /* (u) mode argument (create, chmod, mkdir, mknod) */
	DT_T_FMODE,    /* (s) fopen mode string as passed */
	DT_T_CMD,      /* (u) fcntl command, flock operation, access mode */
	DT_T_ACCESS,   /* (u) 1 = the call wanted to write, 0 = read only */
	DT_T_FD,       /* (u) descriptor argument (fd calls) or result */
	DT_T_SQLITE,   /* (s) SQLite role its name suggests: a hint the reader re-judges */
	DT_T_INJECTED, /* (u) 1 when a --deny rule produced the errno */
	DT_T_GROUPS,   /* (b) supplementary groups (getgroups), u32 each; empty
	                * when there are none, absent when not known */
	/* first path; for rename/link the second uses the *2 tags */
	DT_T_PATH = 32,  /* (s) path as the program passed it */
	DT_T_DIRPATH,    /* (s) the directory fd's path, for *at calls */
	DT_T_ABSPATH,    /* (s) joined with cwd or dirfd, lexically normalised */
	DT_T_REALPATH,   /* (s) as the kernel resolves it */
	DT_T_STAT,       /* (b) struct dt_stat_facts */
	DT_T_SEARCH,     /* (b) struct dt_search_facts + the directory's path (no
	                  * NUL): the deepest directory of the path the process
	                  * could not search, when its parent could not be
	                  * reached (first path only) */
	DT_T_IFLAGS,     /* (u) denials with EPERM: the path's inode flags
	                  * (FS_IOC_GETFLAGS: FS_IMMUTABLE_FL, FS_APPEND_FL...),
	                  * when it is a regular file or directory (first path
	                  * only). From statx's attributes where the filesystem
	                  * reports immutable and append-only there (then only
	                  * the bits statx knows), else from the ioctl, when the
	                  * probe could open the path */
	DT_T_DIR_IFLAGS, /* (u) the same of the directory the path is in */
	DT_T_PATH2 = 40,
	DT_T_DIRPATH2,
	DT_T_ABSPATH2,
	DT_T_REALPATH2,
	DT_T_STAT2,
	/* call stack */
	DT_T_FRAME = 48,  /* (b) struct dt_frame, innermost first */
	DT_T_MODULE,      /* (s) module path; dt_frame.module indexes these */
	DT_T_STACK_TRUNC, /* (u) 1 when the stack ends before its outermost frame:
	                   * the unwinder declined the next one (no CFI, a signal
	                   * frame, a read outside the stack or the module) */
	/* process and launch records */
	DT_T_EXE = 64,        /* (s) /proc/self/exe */
	DT_T_ARGV,            /* (s) arguments separated by NUL, bounded */
	DT_T_CWD,             /* (s) */
	DT_T_ENV,             /* (s) NAME=VALUE, one field each; never secrets */
	DT_T_MOUNT,           /* (b) struct dt_mount_fact + mount point */
	DT_T_SECCOMP,         /* (u) seccomp mode from /proc/self/status */
	DT_T_SECCOMP_FILTERS, /* (u) */
	DT_T_NO_NEW_PRIVS,    /* (u) */
	DT_T_MNT_NS,          /* (u) inode of /proc/self/ns/mnt (on successful
	                       * writes too: their process may have no record) */
	DT_T_USER_NS,         /* (u) inode of /proc/self/ns/user */
	DT_T_ARGV_TRUNC,      /* (u) 1 when ARGV was cut short */
	DT_T_MOUNTS_TRUNC,    /* (u) 1 when not every mount fitted */
	DT_T_PRELOAD,         /* (s) LD_PRELOAD as this process sees it */
	DT_T_EUID_REAL,       /* (u) real uid */
	DT_T_VERSION,         /* (s) denytrace version that wrote it */
	/* exec records (and DT_T_SUPERVISOR on the supervisor's denials) */
	DT_T_EXEC_STATIC,     /* (u) 1 static binary, 0 dynamic; absent if unknown */
	DT_T_EXEC_PROBE,      /* (u) 1 when the new image's LD_PRELOAD holds the probe */
	DT_T_EXEC_BLIND,      /* (s) why the probe cannot enter: static, no-preload */
	DT_T_SUPERVISOR,      /* (u) 1: written by the seccomp supervisor, not the probe */
	DT_T_NSPID,           /* (u) supervisor: the pid as the process's own pid namespace
	                       * sees it (what its probe records), when it differs */
	DT_T_EXEC_SETID_LOST, /* (u) supervisor: the exec'd program is set-id and would
	                       * have run with this effective uid, but no_new_privs (which
	                       * the supervisor sets unprivileged) kept its own ids */
	DT_T_EXEC_ENTRY,      /* (u) supervisor: 1 when the new image's environment has
	                       * DENYTRACE_ENTRY=1, so a probe that loads in it writes
	                       * a DT_REC_ENTRY at once */
	/* config records (and the common header fields of every record) */
	DT_T_CONFIG_PATH = 96, /* (s) the file's absolute path */
	DT_T_CONFIG_TEXT,      /* (s) its bytes as read (absent when unreadable); at
	                        * most what fits the record, see CONFIG_TRUNC */
	DT_T_CONFIG_SIZE,      /* (u) the file's full size in bytes */
	DT_T_CONFIG_TRUNC,     /* (u) 1 when TEXT holds only the first part: the
	                        * file did not fit in DT_REC_MAX (cut at a line end) */
	DT_T_CONFIG_ERRNO,     /* (u) errno when the file could not be read;
	                        * ENOENT: there was none at launch */
	DT_T_CONFIG_PROFILE,   /* (s) the profile whose layer this file is
	                        * (codex --profile NAME); absent for config.toml */
	DT_T_CONFIG_ROLE,      /* (s) "codex": whose configuration it is */
	DT_T_CONFIG_VERSION,   /* (s) what that program said its version was
	                        * (`codex --version`), when it said */
	/* denial records of a CPython process (preload/pyframes.c) */
	DT_T_PYFRAME = 112, /* (b) struct dt_pyframe + file name + function name (no
	                     * NULs): the calling thread's Python frames, innermost
	                     * first, before the native ones in every output */
	DT_T_PYTRUNC,       /* (u) 1 when the Python stack was deeper than the
	                     * record keeps: the outermost frames are missing */
	/* the host, so that rings from many machines merge: process records
	 * (as the process sees it: its UTS namespace's name) and launch
	 * records (denytrace run's own) */
	DT_T_HOSTNAME = 128, /* (s) uname's nodename */
	DT_T_BOOT_ID,        /* (s) /proc/sys/kernel/random/boot_id */
	DT_T_MACHINE_HASH,   /* (s) launch records: hex SHA-256 of "denytrace:" and
	                      * /etc/machine-id, never the id itself */
};

/* What stat said about the target (or, when it is missing, its parent). */
struct dt_stat_facts {
	uint32_t valid;       /* DT_SF_* bits below */
	uint32_t mode;        /* st_mode of the target, when it exists */
	uint32_t uid, gid;    /* owner of the target */
	uint32_t parent_mode; /* st_mode of the parent directory */
	uint32_t parent_uid, parent_gid;
	uint32_t reserved;
	uint64_t mount_flags; /* statvfs f_flag of the parent (ST_RDONLY...) */
};
/* A directory on the path that stat could reach but not look into. */
struct dt_search_facts {
	uint32_t mode, uid, gid;
	uint32_t reserved;
};

#define DT_SF_EXISTS 1u  /* target exists; mode/uid/gid valid */
#define DT_SF_PARENT 2u  /* parent_* valid */
#define DT_SF_MOUNT 4u   /* mount_flags valid */
#define DT_SF_SYMLINK 8u /* the path itself is a symbolic link */
#define DT_SF_UNLINKED                                                                             \
	16u /* a descriptor's file had no name left: its path is                                   \
	     * the one it had, without the kernel's " (deleted)" */

struct dt_frame {
	uint64_t ip;     /* instruction pointer */
	uint64_t offset; /* file offset in the module (for symbolizing) */
	uint32_t module; /* index into the record's DT_T_MODULE list, or ~0 */
	uint32_t reserved;
};

/* A Python frame as CPython's faulthandler names it: the file name
 * (file_len bytes) and then the function's name follow. Names are ASCII:
 * CPython writes other characters as \xNN, \uNNNN or \UNNNNNNNN and cuts a
 * name longer than 500 characters, ending it with "...". */
struct dt_pyframe {
	uint32_t line;     /* 0 when CPython could not tell */
	uint32_t file_len; /* bytes of the file name */
};

/* A mount as /proc/self/mountinfo shows it; the mount point follows. */
struct dt_mount_fact {
	uint32_t flags; /* DT_MF_* */
	uint32_t reserved;
};
#define DT_MF_RW 1u /* mounted read-write for this process */

/* Version 2's record checksum: eight bytes per step of one multiply and
 * one shift, seeded with the length (the last word is zero-padded). It
 * catches a record torn by a lapping writer as FNV-1a did, at an eighth of
 * its cost: FNV-1a's one multiply per byte is a dependent chain as long as
 * the record. */
static inline uint32_t dt_checksum(const void *data, uint32_t len)
{
	const uint8_t *p = (const uint8_t *)data;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;
	for (; len >= 8; p += 8, len -= 8) {
		__builtin_memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w); /* the words are read little-endian */
#endif
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	if (len) {
		w = 0;
		for (uint32_t i = 0; i < len; i++)
			w |= (uint64_t)p[i] << (8 * i);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	return (uint32_t)(h ^ (h >> 32));
}

/* Version 1's record checksum: FNV-1a 32. */
static inline uint32_t dt_checksum_v1(const void *data, uint32_t len)
{
	const uint8_t *p = (const uint8_t *)data;
	uint32_t h = 2166136261u;
	for (uint32_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

/* The checksum records of a ring of this format version carry. */
static inline uint32_t dt_checksum_for(uint32_t version, const void *data, uint32_t len)
{
	return version == 1 ? dt_checksum_v1(data, len) : dt_checksum(data, len);
}

#endif
