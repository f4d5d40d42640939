/* SPDX-License-Identifier: MIT */
/* The release, shared by the probe (its process records carry it) and the
 * CLI (--version, doctor, evidence). */
#ifndef DENYTRACE_VERSION_H
#define DENYTRACE_VERSION_H

#define DT_VERSION_STRING "0.1.0"

#endif
