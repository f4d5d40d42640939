/* SPDX-License-Identifier: MIT */
/*
 * What a program's own seccomp filter answers for one system call, worked
 * out by running its classic BPF program the way the kernel does
 * (seccomp_check_filter's instruction set, net/core/filter.c's meaning),
 * without a system call. The probe asks it about the one call it would
 * still like to make under that filter: the ring check.
 */
#ifndef DENYTRACE_SECCOMP_EVAL_H
#define DENYTRACE_SECCOMP_EVAL_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>

/* 1 when the n instructions of prog return SECCOMP_RET_ALLOW (or
 * SECCOMP_RET_LOG, which allows too) for d; 0 for any other action, and
 * for a program it cannot answer for with certainty: an instruction
 * seccomp does not accept, a load of the instruction pointer (which the
 * probe's own call would have to match), a jump out of the program, or no
 * return. */
int dt_seccomp_allows(const struct sock_filter *prog, unsigned n, const struct seccomp_data *d);

/* The AUDIT_ARCH_* of this build's system calls; 0 where the probe does
 * not know it (then nothing is allowed). */
uint32_t dt_seccomp_arch(void);

#endif
