/* SPDX-License-Identifier: MIT */
/* This host's identity (hostid.h). */
#include "hostid.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sha256.h"

/* The first line of a small system file, trimmed; "" when unreadable. */
static void hostid_first_line(const char *path, char *out, size_t cap)
{
	out[0] = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(out, (int)cap, f))
		out[0] = 0;
	fclose(f);
	size_t n = strlen(out);
	while (n && isspace((unsigned char)out[n - 1]))
		out[--n] = 0;
}

void dt_host_id_get(struct dt_host_id *h)
{
	memset(h, 0, sizeof(*h));
	if (gethostname(h->hostname, sizeof(h->hostname) - 1) != 0)
		h->hostname[0] = 0;
	hostid_first_line("/proc/sys/kernel/random/boot_id", h->boot_id, sizeof(h->boot_id));
	char id[128], salted[160];
	hostid_first_line("/etc/machine-id", id, sizeof(id));
	if (!id[0])
		hostid_first_line("/var/lib/dbus/machine-id", id, sizeof(id));
	if (!id[0])
		return;
	int n = snprintf(salted, sizeof(salted), "denytrace:%s", id);
	dt_sha256_hex(salted, (size_t)n, h->machine);
}
