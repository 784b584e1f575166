/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_HOOKS_H
#define HEAPTRACE_HOOKS_H

/*
 * The traced functions and what each call means for the heap: which arguments to keep at
 * entry, and the allocation and/or release a call amounts to once its result is known.
 * The one list of the entry points heaptrace hooks (the C library's malloc family, the C++
 * operators, jemalloc's, tcmalloc's and mimalloc's own), with the argument slot of each
 * operand and the kind of each call. Pure: no ptrace (posix_memalign's *memptr is read by the
 * caller).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hook_id {
	/* the C library's (glibc, musl), and their replacements' of the same names */
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
	/* C++ operators (named here as on LP64; ILP32 spells size_t j instead of m) */
	HOOK_NEW,
	HOOK_NEW_ARRAY,
	HOOK_NEW_NOTHROW,
	HOOK_NEW_ARRAY_NOTHROW,
	HOOK_NEW_ALIGNED,
	HOOK_NEW_ARRAY_ALIGNED,
	HOOK_NEW_ALIGNED_NOTHROW,
	HOOK_NEW_ARRAY_ALIGNED_NOTHROW,
	HOOK_DELETE,
	HOOK_DELETE_ARRAY,
	HOOK_DELETE_SIZED,
	HOOK_DELETE_ARRAY_SIZED,
	HOOK_DELETE_NOTHROW,
	HOOK_DELETE_ARRAY_NOTHROW,
	HOOK_DELETE_ALIGNED,
	HOOK_DELETE_ARRAY_ALIGNED,
	HOOK_DELETE_SIZED_ALIGNED,
	HOOK_DELETE_ARRAY_SIZED_ALIGNED,
	HOOK_DELETE_ALIGNED_NOTHROW,
	HOOK_DELETE_ARRAY_ALIGNED_NOTHROW,
	/* replacement allocators' own entry points (their malloc, free, operator new, ... are
	 * the ones above); queries (malloc_usable_size, nallocx, mi_usable_size) are not traced */
	HOOK_CFREE,
	HOOK_JE_MALLOCX,
	HOOK_JE_RALLOCX,
	HOOK_JE_XALLOCX,
	HOOK_JE_SDALLOCX,
	HOOK_JE_DALLOCX,
	HOOK_TC_MALLOC,
	HOOK_TC_MALLOC_SKIP_NEW_HANDLER,
	HOOK_TC_CALLOC,
	HOOK_TC_REALLOC,
	HOOK_TC_FREE,
	HOOK_TC_CFREE,
	HOOK_TC_FREE_SIZED,
	HOOK_TC_MEMALIGN,
	HOOK_TC_POSIX_MEMALIGN,
	HOOK_TC_VALLOC,
	HOOK_TC_PVALLOC,
	HOOK_TC_NEW,
	HOOK_TC_NEWARRAY,
	HOOK_TC_NEW_NOTHROW,
	HOOK_TC_NEWARRAY_NOTHROW,
	HOOK_TC_DELETE,
	HOOK_TC_DELETEARRAY,
	HOOK_TC_DELETE_SIZED,
	HOOK_TC_DELETEARRAY_SIZED,
	HOOK_TC_DELETE_NOTHROW,
	HOOK_TC_DELETEARRAY_NOTHROW,
	HOOK_MI_MALLOC,
	HOOK_MI_ZALLOC,
	HOOK_MI_CALLOC,
	HOOK_MI_MALLOCN,
	HOOK_MI_REALLOC,
	HOOK_MI_REALLOCN,
	HOOK_MI_REALLOCF,
	HOOK_MI_REZALLOC,
	HOOK_MI_RECALLOC,
	HOOK_MI_EXPAND,
	HOOK_MI_MALLOC_ALIGNED,
	HOOK_MI_ZALLOC_ALIGNED,
	HOOK_MI_CALLOC_ALIGNED,
	HOOK_MI_REALLOC_ALIGNED,
	HOOK_MI_HEAP_MALLOC,
	HOOK_MI_HEAP_ZALLOC,
	HOOK_MI_HEAP_CALLOC,
	HOOK_MI_HEAP_REALLOC,
	HOOK_MI_FREE,
	HOOK_MI_FREE_SIZE,
	HOOK_MI_FREE_ALIGNED,
	HOOK_MI_NEW,
	HOOK_MI_NEW_NOTHROW,
	HOOK_MI_NEW_ALIGNED,
	HOOK_MI_NEW_ALIGNED_NOTHROW,
	HOOK_MI_NEW_N,
	HOOK_MI_NEW_REALLOC,
	/* a jemalloc built with --with-jemalloc-prefix=je_ (its malloc is then je_malloc):
	 * after the others, so that the indices a --record log keeps name the same hooks */
	HOOK_JEP_MALLOC,
	HOOK_JEP_CALLOC,
	HOOK_JEP_REALLOC,
	HOOK_JEP_FREE,
	HOOK_JEP_POSIX_MEMALIGN,
	HOOK_JEP_ALIGNED_ALLOC,
	HOOK_JEP_MEMALIGN,
	HOOK_JEP_VALLOC,
	HOOK_JEP_MALLOCX,
	HOOK_JEP_RALLOCX,
	HOOK_JEP_XALLOCX,
	HOOK_JEP_SDALLOCX,
	HOOK_JEP_DALLOCX,
	/* libgcc's start of a C++ exception's unwinding */
	HOOK_UNWIND,
	/* the C library's wrappers of the mapping calls, with --mmap only (named NULL until
	 * hook_enable_mmap) */
	HOOK_MMAP,
	HOOK_MMAP64,
	HOOK_MUNMAP,
	HOOK_MREMAP,
	HOOK_SBRK,
	/* mimalloc's other entry points (after the others, as the je_ ones) */
	HOOK_MI_MALLOC_SMALL,
	HOOK_MI_ZALLOC_SMALL,
	HOOK_MI_STRDUP,
	HOOK_MI_STRNDUP,
	HOOK_MI_REALPATH,
	HOOK_MI_MBSDUP,
	HOOK_MI_WCSDUP,
	HOOK_MI_DUPENV_S,
	HOOK_MI_WDUPENV_S,
	HOOK_MI_MALLOC_ALIGNED_AT,
	HOOK_MI_ZALLOC_ALIGNED_AT,
	HOOK_MI_CALLOC_ALIGNED_AT,
	HOOK_MI_REALLOC_ALIGNED_AT,
	HOOK_MI_REZALLOC_ALIGNED,
	HOOK_MI_REZALLOC_ALIGNED_AT,
	HOOK_MI_RECALLOC_ALIGNED,
	HOOK_MI_RECALLOC_ALIGNED_AT,
	HOOK_MI_ALIGNED_RECALLOC,
	HOOK_MI_ALIGNED_OFFSET_RECALLOC,
	HOOK_MI_HEAP_MALLOCN,
	HOOK_MI_HEAP_MALLOC_SMALL,
	HOOK_MI_HEAP_STRDUP,
	HOOK_MI_HEAP_STRNDUP,
	HOOK_MI_HEAP_REALPATH,
	HOOK_MI_HEAP_MALLOC_ALIGNED,
	HOOK_MI_HEAP_MALLOC_ALIGNED_AT,
	HOOK_MI_HEAP_ZALLOC_ALIGNED,
	HOOK_MI_HEAP_ZALLOC_ALIGNED_AT,
	HOOK_MI_HEAP_CALLOC_ALIGNED,
	HOOK_MI_HEAP_CALLOC_ALIGNED_AT,
	HOOK_MI_HEAP_REALLOC_ALIGNED,
	HOOK_MI_HEAP_REALLOC_ALIGNED_AT,
	HOOK_MI_HEAP_REZALLOC,
	HOOK_MI_HEAP_RECALLOC,
	HOOK_MI_HEAP_REZALLOC_ALIGNED,
	HOOK_MI_HEAP_REZALLOC_ALIGNED_AT,
	HOOK_MI_HEAP_RECALLOC_ALIGNED,
	HOOK_MI_HEAP_RECALLOC_ALIGNED_AT,
	HOOK_MI_CFREE,
	HOOK_MI_FREE_SIZE_ALIGNED,
	/* CPython's allocator domains (pymalloc.h): its object allocator (PyObject_*) and its
	 * memory one (PyMem_*), which the default build sends to pymalloc too; their raw domain
	 * (PyMem_Raw*) is malloc's, traced as malloc */
	HOOK_PY_OBJECT_MALLOC,
	HOOK_PY_OBJECT_CALLOC,
	HOOK_PY_OBJECT_REALLOC,
	HOOK_PY_OBJECT_FREE,
	HOOK_PY_MEM_MALLOC,
	HOOK_PY_MEM_CALLOC,
	HOOK_PY_MEM_REALLOC,
	HOOK_PY_MEM_FREE,
	/* the program's own allocator functions named by --alloc, --realloc and --free
	 * (custom.h): slots filled before tracing starts, named NULL while unused */
	HOOK_CUSTOM0,
	HOOK_COUNT = HOOK_CUSTOM0 + 8
};

#define HOOK_CUSTOM_MAX (HOOK_COUNT - HOOK_CUSTOM0)

/* hook_desc.heap: the heap a hook's blocks belong to. The C library's malloc family, the C++
 * operators and the replacement allocators share HEAP_MALLOC; each custom heap (custom.h) has
 * its own, so that blocks a pool carves from malloc are not counted twice. */
#define HEAP_MALLOC 0
#define HEAP_MMAP 1 /* --mmap: anonymous private mappings and sbrk's ranges */
/* CPython's object and memory domains (HOOK_PY_*): named once a process has them traced
 * (hook_enable_pymalloc). A front end of malloc's: a malloc call made inside one of its calls
 * is part of it (pymalloc hands requests over 512 bytes to malloc), so each Python block
 * counts once, as Python asked for it. */
#define HEAP_PYMALLOC 2
#define HEAP_MAX 8 /* heaps, HEAP_MALLOC included (table.h keeps a summary for each) */

enum hook_kind {
	HK_ALLOC, /* returns a block of args[size] (times args[count]) bytes, or NULL */
	HK_ALLOC_MEMPTR, /* posix_memalign: returns 0 and the block in *args[ptr] */
	HK_REALLOC, /* resizes args[ptr] to args[size] (times args[count]): the block or NULL */
	HK_FREE, /* releases args[ptr]: all known at entry */
	HK_RESIZE, /* resizes args[ptr] in place to args[size]; returns its real size, below
		    * args[size] if it could not (jemalloc's xallocx) */
	HK_UNWIND, /* a C++ exception starts unwinding: calls in flight may never return */
	/* HEAP_MMAP's, whose effects are ranges (hook_map_effect) */
	HK_MMAP, /* mmap(addr, len, prot, args[count] = flags, fd, off) */
	HK_UNMAP, /* munmap(args[ptr], args[size]) */
	HK_MREMAP, /* mremap(args[ptr], args[count] = old size, args[size] = new size, ...) */
	HK_SBRK, /* sbrk(args[size] = increment, signed) */
};

/* hook_desc.flags */
#define HF_NESTS 1u /* an HK_FREE that calls another traced function (operator delete calls
		     * free): its return is caught too, so the inner call is not counted again */
#define HF_THROWS 2u /* may end by throwing (operator new): its return is never sent through the
		      * logging trampoline, whose return address no unwinder can get past */
#define HF_FREES_ON_FAIL 4u /* an HK_REALLOC that releases args[ptr] when it returns NULL
			     * (mi_reallocf) */
#define HF_STRING 8u /* an HK_ALLOC or HK_ALLOC_MEMPTR whose block is a copy of a string, as
		      * long as it (mi_strdup): its size is read at the return, the string's
		      * length and its terminator (hook_string_unit) */
#define HF_WIDE 16u /* with HF_STRING: a string of 16-bit units (mi_wcsdup) */
#define HF_CALLER_BUF 32u /* an HK_ALLOC that returns the caller's buffer args[ptr] when it is
			   * not NULL, a block only when it is (mi_realpath) */

struct hook_desc {
	const char *name; /* public symbol */
	enum hook_kind kind;
	int8_t size, count, ptr; /* argument index of each operand, -1: none */
	uint8_t flags;
	uint8_t heap; /* HEAP_MALLOC, or a custom heap */
	uint8_t words; /* argument words the function takes, where above 4 (else 0) */
};

/* Constant but for the HOOK_CUSTOM0.. slots, which custom.c fills before tracing starts. */
extern struct hook_desc hook_table[HOOK_COUNT];

/* The name of heap h ("malloc", or the custom heap's name), NULL if no such heap. */
const char *hook_heap_name(unsigned h);

/*
 * Add hook d (d->name kept, not copied) in the first free custom slot, its heap named
 * heap_name (a new heap if no hook has that name yet). Return the hook's index, -ENOSPC when
 * the slots or heaps are all taken, -EEXIST when a hook of that name is already traced.
 */
int hook_add_custom(const struct hook_desc *d, const char *heap_name);

#define HOOK_STUB_ARGS 3 /* the most an entry stub records */
/* the most kept at an entry: mmap's flags are the fourth (a stop), a custom function's
 * (custom.h) up to the sixteenth, those past the registers read on the stack (calls.c) */
#define HOOK_MAX_ARGS 16

/* A call in flight: the function and its arguments at entry. */
struct hook_call {
	enum hook_id id;
	uint64_t args[HOOK_MAX_ARGS];
};

/* What a completed call did to the heap. */
struct hook_effect {
	uint64_t freed; /* block released, 0 if none */
	uint64_t allocated; /* block returned, 0 if none */
	uint64_t size; /* its requested size */
};

/* Return the hook with this public name (either spelling of size_t in a C++ name), or -1. */
int hook_lookup(const char *name);

/* Write hook h's symbol as a program of word_size bytes spells it (C++ names spell size_t
 * as j on ILP32) into buf. Return buf. */
const char *hook_symbol(int h, unsigned word_size, char *buf, size_t len);

/* Arguments a call of d needs kept at its entry. */
unsigned hook_nargs(const struct hook_desc *d);

/* True if --sample-bytes takes d's calls by chance (heap/table.h: TABLE_SCALED): they
 * allocate a block of a size known at the entry, in a heap of blocks (not a mapping; not a
 * string's copy, whose size is read at the return). The others are all taken. */
bool hook_sampled(const struct hook_desc *d);

/* The size call c of a hook_sampled hook asks for: args[size] times args[count] (UINT64_MAX
 * when that overflows). */
uint64_t hook_asked_size(const struct hook_call *c);

/* True if every argument of d's function is in a register on an arch that passes reg_args
 * argument words in registers. A custom function's are not known: true if those it names are
 * (whether it takes more is for its debug information to say: params.h). */
bool hook_args_in_regs(const struct hook_desc *d, unsigned reg_args);

/* True if everything a call of d does is known at its entry (free): no return is caught. */
static inline bool hook_at_entry_only(const struct hook_desc *d)
{
	return d->kind == HK_UNWIND || (d->kind == HK_FREE && !(d->flags & HF_NESTS));
}

/* True if d's block, or its size, is read in the process's memory at the return, which
 * must then stop: posix_memalign's *memptr, the length of mi_strdup's string. */
static inline bool hook_reads_result(const struct hook_desc *d)
{
	return d->kind == HK_ALLOC_MEMPTR || (d->flags & HF_STRING);
}

/* True if a call of d must stop at a breakpoint (never go through an entry stub, stubs.h):
 * its result is read in memory at its return; operator new's frame must get its caller's
 * return address back when it throws, and _Unwind_RaiseException is where. */
static inline bool hook_needs_stop(const struct hook_desc *d)
{
	return hook_reads_result(d) || d->kind == HK_UNWIND || (d->flags & HF_THROWS) ||
	       hook_nargs(d) > HOOK_STUB_ARGS;
}

/*
 * Allocators heaptrace does not trace by itself, known by an entry point's symbol: a module
 * that defines one is warned of (the blocks they carve from their own memory are not seen),
 * unless the function is named with --alloc. spec: the options that would trace it.
 */
struct hook_foreign {
	const char *symbol, *what, *spec;
};

/* The index of name in the list (below 32), or -1. */
int hook_foreign_lookup(const char *name);
const struct hook_foreign *hook_foreign_at(int i);

/* Name the mapping hooks (HOOK_MMAP..HOOK_SBRK) and their heap, so that they are traced. */
void hook_enable_mmap(void);

/* Name HEAP_PYMALLOC: a process has CPython's allocator traced. */
void hook_enable_pymalloc(void);

/* True if h is one of CPython's allocator entries (HOOK_PY_*). */
static inline bool hook_is_python(int h)
{
	return h >= HOOK_PY_OBJECT_MALLOC && h <= HOOK_PY_MEM_FREE;
}

/* What a completed mapping call did: the range [release_lo, release_hi) of HEAP_MMAP blocks
 * released (none if equal), then a block added at allocated (0: none) of size bytes; with
 * only_if_released, only if the range held a block (mremap of a block heaptrace counts, not
 * of a file mapping). */
struct hook_map_effect {
	uint64_t release_lo, release_hi;
	uint64_t allocated, size;
	bool only_if_released;
};

/* The effect of mapping call c (kind HK_MMAP..HK_SBRK) that returned retval, in a process
 * of word_size-byte words whose MAP_ANONYMOUS is map_anonymous. */
void hook_map_effect(const struct hook_call *c, uint64_t retval, unsigned word_size,
		     uint32_t map_anonymous, struct hook_map_effect *e);

/*
 * Effect of call c that returned retval. For posix_memalign, memptr_value is *memptr read
 * after a successful return (retval == 0); it is ignored otherwise. An HK_FREE call has none
 * at its return (its release was counted at its entry). An HF_STRING call's size is 0 here:
 * the caller reads it (hook_string_unit).
 */
void hook_effect(const struct hook_call *c, uint64_t retval, uint64_t memptr_value,
		 struct hook_effect *e);

/* True if c needs *memptr read after it returns (posix_memalign that returned 0). */
bool hook_needs_memptr(const struct hook_call *c, uint64_t retval);

/* The bytes of a unit of the string whose length makes the size of block e->allocated that
 * call c made (HF_STRING: 1, or 2 with HF_WIDE), 0 if c's size is not a string's. */
unsigned hook_string_unit(const struct hook_call *c, const struct hook_effect *e);

#endif
