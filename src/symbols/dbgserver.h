/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_DBGSERVER_H
#define HEAPTRACE_DBGSERVER_H

/*
 * report --debuginfod: debug files by build-id from the debuginfod servers of DEBUGINFOD_URLS,
 * for the modules that have no debug information here (libdebuginfod; built in when the
 * Makefile finds it). libdwfl itself never asks: report clears DEBUGINFOD_URLS, since libdwfl
 * would wait for a silent server up to 90 s per module with no way to stop it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Seconds a query may go without receiving a byte of a file before it is given up
 * (DEBUGINFOD_TIMEOUT, when set, instead). */
#define DBGSERVER_STALL_SECS 10

/* Take DEBUGINFOD_URLS out of the environment; with wanted, keep it for dbgserver_find.
 * Return 0, -ENOSYS (built without libdebuginfod) or -ENOENT (no server named) when wanted. */
int dbgserver_setup(bool wanted);

/* Were servers given (dbgserver_setup(true) succeeded)? */
bool dbgserver_enabled(void);

/* Does the ELF file at path carry DWARF (.debug_info)? */
bool dbgserver_has_dwarf(const char *path);

/*
 * The debug file of build-id id, downloaded into libdebuginfod's cache: its path (malloc'd),
 * or NULL when not enabled, not found, or given up. After a server went silent once, no more
 * queries (a report waits at most DBGSERVER_STALL_SECS for a server that never answers).
 */
char *dbgserver_find(const uint8_t *id, size_t idlen);

#endif
