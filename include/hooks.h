/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_HOOKS_H
#define HEAPTRACE_HOOKS_H

/*
 * The traced functions and what each call means for the heap: which arguments to keep at
 * entry, and the allocation and/or release a call amounts to once its result is known.
 * Pure: no ptrace (posix_memalign's *memptr is read by the caller).
 */
#include <stdbool.h>
#include <stdint.h>

enum hook_id {
	HOOK_MALLOC,
	HOOK_CALLOC,
	HOOK_REALLOC,
	HOOK_REALLOCARRAY,
	HOOK_FREE,
	HOOK_POSIX_MEMALIGN,
	HOOK_ALIGNED_ALLOC,
	HOOK_MEMALIGN,
	HOOK_VALLOC,
	HOOK_PVALLOC,
	HOOK_COUNT
};

struct hook_desc {
	const char *name; /* public symbol */
	unsigned nargs; /* arguments kept at entry */
	bool at_entry_only; /* free: everything is known at entry, no return capture */
	bool result_in_memory; /* posix_memalign: the block is in *memptr, read at the return */
};

extern const struct hook_desc hook_table[HOOK_COUNT];

/* A call in flight: the function and its arguments at entry. */
struct hook_call {
	enum hook_id id;
	uint64_t args[3];
};

/* What a completed call did to the heap. */
struct hook_effect {
	uint64_t freed; /* block released, 0 if none */
	uint64_t allocated; /* block returned, 0 if none */
	uint64_t size; /* its requested size */
};

/* Return the hook with this public name, or -1. */
int hook_lookup(const char *name);

/*
 * Effect of call c that returned retval. For posix_memalign, memptr_value is *memptr read
 * after a successful return (retval == 0); it is ignored otherwise.
 */
void hook_effect(const struct hook_call *c, uint64_t retval, uint64_t memptr_value,
		 struct hook_effect *e);

/* True if c needs *memptr read after it returns (posix_memalign that returned 0). */
bool hook_needs_memptr(const struct hook_call *c, uint64_t retval);

#endif
