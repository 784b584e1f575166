/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_INLINES_H
#define HEAPTRACE_INLINES_H

/*
 * Inlined calls at an address, from the DWARF scopes that hold it (libdw's dwarf_getscopes):
 * the innermost inlined function first, each with the line in it, then the functions it was
 * inlined into, out to the real function's call site, as valgrind prints them.
 */
#include <elfutils/libdwfl.h>

#include "symbols/symframe.h"

/* Keep str (heap memory) as long as the caller's symbols; return it. */
typedef char *(*inlines_keep_fn)(void *ctx, char *str);

/*
 * The calls inlined at at (an address of mod, as dwfl sees it). *file and *line come in as
 * the line table's for at and go out as the outermost inlined call's site in the real
 * function (unchanged when nothing is inlined there). Return how many, with the array in
 * *out (kept through keep, with the names it allocates); 0 and *out NULL when none.
 */
unsigned inlines_at(Dwfl_Module *mod, Dwarf_Addr at, const char **file, int *line,
		    const struct sym_inline **out, inlines_keep_fn keep, void *ctx);

#endif
