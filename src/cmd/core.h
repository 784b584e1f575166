/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_CORE_H
#define HEAPTRACE_CORE_H

/* heaptrace --core=FILE: the heap inventory of an ELF core file (inventory.h). */
#include <stdio.h>

#include "output/report.h"

/* Read the core at path (exe: its program, to find a static glibc; may be NULL) and write the
 * report to out. Return 0, or -errno after printing why. */
int core_report(const char *path, const char *exe, FILE *out, const struct report_opts *ro);

#endif
