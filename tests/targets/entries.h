/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_TARGETS_ENTRIES_H
#define HEAPTRACE_TARGETS_ENTRIES_H

/*
 * Whether a tracer's breakpoints are in the code of malloc, calloc and free: their first bytes,
 * copied while nothing traces the program, compared with what is there now. The functions are
 * reached through volatile pointers, so the compiler cannot replace the calls or the reads.
 */
#include <stdint.h>
#include <stdlib.h>

static void *(*volatile entry_malloc)(size_t) = malloc;
static void *(*volatile entry_calloc)(size_t, size_t) = calloc;
static void (*volatile entry_free)(void *) = free;

#define ENTRY_BYTES 16 /* a breakpoint at an entry, or just after a landing pad, lies within */

static unsigned char entry_code[3][ENTRY_BYTES];

static const volatile unsigned char *entry_bytes(unsigned i)
{
	uintptr_t a = i == 0 ? (uintptr_t)entry_malloc :
		      i == 1 ? (uintptr_t)entry_calloc : (uintptr_t)entry_free;

#if defined(__arm__)
	a &= ~(uintptr_t)1; /* bit 0 of a Thumb function's address is the mode, not code */
#endif
	return (const volatile unsigned char *)a;
}

/* Copy the entries' first bytes while nothing traces us. */
static __attribute__((unused)) void entries_save(void)
{
	for (unsigned i = 0; i < 3; i++)
		for (unsigned j = 0; j < ENTRY_BYTES; j++)
			entry_code[i][j] = entry_bytes(i)[j];
}

/* Whether every entry differs from its copy (want = 1) or none does (want = 0). */
static __attribute__((unused)) int entries_trapped(int want)
{
	for (unsigned i = 0; i < 3; i++) {
		int changed = 0;

		for (unsigned j = 0; j < ENTRY_BYTES; j++)
			changed |= entry_bytes(i)[j] != entry_code[i][j];
		if (changed != want)
			return 0;
	}
	return 1;
}

#endif
