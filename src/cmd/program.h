/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_PROGRAM_H
#define HEAPTRACE_PROGRAM_H

/*
 * PROGRAM checked before it is launched, as exec would see it (found along PATH, an ELF file
 * of this architecture or a #! script whose interpreter runs), and the --symbols files that
 * name it. Each check says why not in one line and returns the exit status (tracer.h).
 */

/* Find PROGRAM like a shell does: the path (caller frees), or NULL with *err an errno. */
char *prog_find(const char *name, int *err);

/* Check what exec would run. Return 0 or the exit status after printing why not. */
int prog_check(const char *name, const char *path);

/* Keep --symbols=path. Return 0 or the usage error's exit status. */
int prog_add_symbols(const char *path);

/* The --symbols files named as the program must match its build-id. Return 0 or the exit
 * status after printing why not. */
int prog_check_symbols(const char *name, const char *path);

#endif
