/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_CUSTOM_H
#define HEAPTRACE_CUSTOM_H

/*
 * The program's own allocator functions, named on the command line: --alloc=FUNC:SIZE_ARG,
 * --alloc=FUNC:SIZE_ARG:COUNT_ARG (calloc's shape), --realloc=FUNC:PTR_ARG:SIZE_ARG and
 * --free=FUNC:PTR_ARG, each optionally ending @HEAP. They become hooks (hooks.h) of their own
 * heap, found by symbol like the malloc family. Pure: no ptrace.
 */
#include <stddef.h>

enum custom_shape { CUSTOM_ALLOC, CUSTOM_REALLOC, CUSTOM_FREE };

/* Keep spec, the value of the option of shape. Return 0, or -EINVAL / -ENOSPC with why (len
 * bytes) saying what is wrong in one line. */
int custom_add(enum custom_shape shape, const char *spec, char *why, size_t len);

/*
 * Add the kept specs to the hook table once every option is read: a spec without @HEAP is
 * of the heap named after the first --alloc's FUNC (else the first --realloc's). Return 0, or
 * -EINVAL / -EEXIST / -ENOSPC with why set.
 */
int custom_commit(char *why, size_t len);

/* Custom hook h was found and traced in some process. */
void custom_found(int h);

/* At the end of tracing: say which custom functions no traced process defined (a misspelt
 * name, a static function without a symbol, a library never loaded). */
void custom_warn_unfound(void);

#endif
