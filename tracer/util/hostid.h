/* SPDX-License-Identifier: MIT */
/* Which machine a soak ran on, so that summaries and rings from many hosts
 * (a CI matrix, a Kubernetes Indexed Job) can be told apart: the hostname,
 * the boot id (a reboot is a new one) and a hash of the machine id. The
 * machine id itself is never written: systemd's machine-id(5) asks that it
 * not be exposed, so only a hash salted with denytrace's own name leaves
 * the machine. */
#ifndef DENYTRACE_HOSTID_H
#define DENYTRACE_HOSTID_H

struct dt_host_id {
	char hostname[256];
	char boot_id[64]; /* /proc/sys/kernel/random/boot_id; "" when unreadable */
	char machine[65]; /* hex SHA-256 of "denytrace:" and /etc/machine-id; "" */
};

/* This host's identity; fields that cannot be read are left empty. */
void dt_host_id_get(struct dt_host_id *h);

#endif
