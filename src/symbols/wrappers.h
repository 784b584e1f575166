/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_WRAPPERS_H
#define HEAPTRACE_WRAPPERS_H

/*
 * The allocators and allocator wrappers a backtrace's label looks past (man/heaptrace.1,
 * "Labels"): a backtrace is known by its innermost frame that is named and none of these, so
 * that a report names the code that wanted the memory, not g_malloc or operator new.
 */
#include <stdbool.h>

#include "symbols/symframe.h"

/* Is function (mangled or demangled) an allocator or a wrapper of one? */
bool wrap_is_allocator(const char *function);

/*
 * The innermost name in frame sf that is not an allocator: its inlined functions first, then
 * the function they are in; NULL if there is none. *file and *line (NULL / -1 when unknown)
 * say where in that function.
 */
const char *wrap_frame_name(const struct sym_frame *sf, const char **file, int *line);

#endif
