// SPDX-License-Identifier: GPL-2.0-only
/* What each malloc-family call amounts to (man/heaptrace.1, "What is counted"). */
#include <stdint.h>

#include "heap/hooks.h"
#include "unittest.h"

static struct hook_effect run(enum hook_id id, uint64_t a0, uint64_t a1, uint64_t a2,
			      uint64_t ret, uint64_t memptr)
{
	struct hook_call c = { id, { a0, a1, a2 } };
	struct hook_effect e;

	hook_effect(&c, ret, memptr, &e);
	return e;
}

#define CHECK_EFFECT(e, fr, al, sz)                                                                \
	do {                                                                                       \
		CHECK_EQ((e).freed, fr);                                                           \
		CHECK_EQ((e).allocated, al);                                                       \
		CHECK_EQ((e).size, sz);                                                            \
	} while (0)

TEST_CASE(lookup_names)
{
	CHECK_EQ(hook_lookup("malloc"), HOOK_MALLOC);
	CHECK_EQ(hook_lookup("pvalloc"), HOOK_PVALLOC);
	CHECK_EQ(hook_lookup("aligned_alloc"), HOOK_ALIGNED_ALLOC);
	CHECK_EQ(hook_lookup("__libc_malloc"), -1);
	CHECK(hook_at_entry_only(&hook_table[HOOK_FREE]));
	CHECK(!hook_at_entry_only(&hook_table[HOOK_MALLOC]));
	CHECK_EQ(hook_nargs(&hook_table[HOOK_MALLOC]), 1);
	CHECK_EQ(hook_nargs(&hook_table[HOOK_POSIX_MEMALIGN]), 3);
	CHECK_EQ(hook_nargs(&hook_table[HOOK_REALLOCARRAY]), 3);
}

/* C++ operators: size_t is m on LP64, j on ILP32 (32-bit arm); both name the same hook. */
TEST_CASE(cxx_names)
{
	char buf[64];

	CHECK_EQ(hook_lookup("_Znwm"), HOOK_NEW);
	CHECK_EQ(hook_lookup("_Znwj"), HOOK_NEW);
	CHECK_EQ(hook_lookup("_ZnajRKSt9nothrow_t"), HOOK_NEW_ARRAY_NOTHROW);
	CHECK_EQ(hook_lookup("_ZnwjSt11align_val_t"), HOOK_NEW_ALIGNED);
	CHECK_EQ(hook_lookup("_ZdlPv"), HOOK_DELETE);
	CHECK_EQ(hook_lookup("_ZdlPvj"), HOOK_DELETE_SIZED);
	CHECK_EQ(hook_lookup("_ZdaPvjSt11align_val_t"), HOOK_DELETE_ARRAY_SIZED_ALIGNED);
	CHECK_EQ(hook_lookup("_Znwx"), -1);
	CHECK_EQ(hook_lookup("_ZdlPvjj"), -1);
	CHECK_STREQ(hook_symbol(HOOK_NEW, 4, buf, sizeof(buf)), "_Znwj");
	CHECK_STREQ(hook_symbol(HOOK_NEW, 8, buf, sizeof(buf)), "_Znwm");
	CHECK_STREQ(hook_symbol(HOOK_DELETE_SIZED, 4, buf, sizeof(buf)), "_ZdlPvj");
	CHECK_STREQ(hook_symbol(HOOK_DELETE, 4, buf, sizeof(buf)), "_ZdlPv");
	CHECK_STREQ(hook_symbol(HOOK_MALLOC, 4, buf, sizeof(buf)), "malloc");
	/* operator new may throw: never through the logging trampoline; its nothrow form may */
	CHECK(hook_table[HOOK_NEW].flags & HF_THROWS);
	CHECK(!(hook_table[HOOK_NEW_NOTHROW].flags & HF_THROWS));
	/* operator delete calls free: its return is caught, so free inside is nested */
	CHECK(!hook_at_entry_only(&hook_table[HOOK_DELETE]));
	CHECK(hook_at_entry_only(&hook_table[HOOK_UNWIND]));
}

TEST_CASE(cxx_effects)
{
	CHECK_EFFECT(run(HOOK_NEW, 40, 0, 0, 0x1000, 0), 0, 0x1000, 40);
	CHECK_EFFECT(run(HOOK_NEW_ARRAY_ALIGNED_NOTHROW, 100, 64, 0x7ff0, 0, 0), 0, 0, 0);
	CHECK_EFFECT(run(HOOK_NEW_ALIGNED, 100, 64, 0, 0x2000, 0), 0, 0x2000, 100);
	/* the release was counted at the entry: nothing at the return */
	CHECK_EFFECT(run(HOOK_DELETE_SIZED, 0x1000, 40, 0, 0, 0), 0, 0, 0);
}

TEST_CASE(plain_allocations)
{
	CHECK_EFFECT(run(HOOK_MALLOC, 100, 0, 0, 0x1000, 0), 0, 0x1000, 100);
	CHECK_EFFECT(run(HOOK_MALLOC, 100, 0, 0, 0, 0), 0, 0, 0); /* failed */
	CHECK_EFFECT(run(HOOK_CALLOC, 10, 12, 0, 0x2000, 0), 0, 0x2000, 120);
	CHECK_EFFECT(run(HOOK_ALIGNED_ALLOC, 64, 200, 0, 0x3000, 0), 0, 0x3000, 200);
	CHECK_EFFECT(run(HOOK_MEMALIGN, 4096, 10, 0, 0x4000, 0), 0, 0x4000, 10);
	CHECK_EFFECT(run(HOOK_VALLOC, 5000, 0, 0, 0x5000, 0), 0, 0x5000, 5000);
	CHECK_EFFECT(run(HOOK_PVALLOC, 5000, 0, 0, 0x6000, 0), 0, 0x6000, 5000);
}

TEST_CASE(calloc_overflow_is_no_allocation)
{
	CHECK_EFFECT(run(HOOK_CALLOC, UINT64_MAX / 2, 4, 0, 0, 0), 0, 0, 0);
}

TEST_CASE(posix_memalign_reads_memptr)
{
	struct hook_call c = { HOOK_POSIX_MEMALIGN, { 0x7ffd00, 64, 128 } };

	CHECK(hook_needs_memptr(&c, 0));
	CHECK(!hook_needs_memptr(&c, 12)); /* ENOMEM */
	CHECK_EFFECT(run(HOOK_POSIX_MEMALIGN, 0x7ffd00, 64, 128, 0, 0x9000), 0, 0x9000, 128);
	CHECK_EFFECT(run(HOOK_POSIX_MEMALIGN, 0x7ffd00, 64, 128, 22, 0x9000), 0, 0, 0);
}

TEST_CASE(realloc_cases)
{
	/* realloc(NULL, n): an allocation only */
	CHECK_EFFECT(run(HOOK_REALLOC, 0, 50, 0, 0x1000, 0), 0, 0x1000, 50);
	/* moved or grown in place: one free and one allocation, same pointer or not */
	CHECK_EFFECT(run(HOOK_REALLOC, 0x1000, 500, 0, 0x2000, 0), 0x1000, 0x2000, 500);
	CHECK_EFFECT(run(HOOK_REALLOC, 0x1000, 500, 0, 0x1000, 0), 0x1000, 0x1000, 500);
	/* realloc(p, 0) that freed p and returned NULL */
	CHECK_EFFECT(run(HOOK_REALLOC, 0x1000, 0, 0, 0, 0), 0x1000, 0, 0);
	/* failure: p stays live */
	CHECK_EFFECT(run(HOOK_REALLOC, 0x1000, 1 << 30, 0, 0, 0), 0, 0, 0);
}

TEST_CASE(reallocarray_cases)
{
	CHECK_EFFECT(run(HOOK_REALLOCARRAY, 0, 4, 8, 0x1000, 0), 0, 0x1000, 32);
	CHECK_EFFECT(run(HOOK_REALLOCARRAY, 0x1000, 10, 8, 0x2000, 0), 0x1000, 0x2000, 80);
	CHECK_EFFECT(run(HOOK_REALLOCARRAY, 0x1000, 0, 8, 0, 0), 0x1000, 0, 0);
	/* overflow: ENOMEM, nothing released */
	CHECK_EFFECT(run(HOOK_REALLOCARRAY, 0x1000, UINT64_MAX, 2, 0, 0), 0, 0, 0);
}

TEST_CASE(free_cases)
{
	CHECK_EFFECT(run(HOOK_FREE, 0x1000, 0, 0, 0, 0), 0x1000, 0, 0);
	CHECK_EFFECT(run(HOOK_FREE, 0, 0, 0, 0, 0), 0, 0, 0);
}

TEST_CASE(map_effects)
{
	struct hook_call c = { .id = HOOK_MMAP, .args = { 0, 8192, 3, 0x22 } };
	struct hook_map_effect e;

	/* anonymous private (x86 flags): a block; the range is released first (MAP_FIXED) */
	hook_map_effect(&c, 0x7000000, 8, 0x20, &e);
	CHECK_EQ(e.allocated, 0x7000000);
	CHECK_EQ(e.size, 8192);
	CHECK_EQ(e.release_lo, 0x7000000);
	CHECK_EQ(e.release_hi, 0x7002000);
	/* shared anonymous, or a file: no block; MAP_FAILED: nothing */
	c.args[3] = 0x21;
	hook_map_effect(&c, 0x7000000, 8, 0x20, &e);
	CHECK_EQ(e.allocated, 0);
	c.args[3] = 0x802; /* mips' MAP_ANONYMOUS */
	hook_map_effect(&c, 0x7000000, 8, 0x800, &e);
	CHECK_EQ(e.allocated, 0x7000000);
	hook_map_effect(&c, UINT64_MAX, 8, 0x800, &e);
	CHECK_EQ(e.release_hi, 0);
	hook_map_effect(&c, UINT32_MAX, 4, 0x800, &e);
	CHECK_EQ(e.allocated, 0);
	/* munmap that failed releases nothing */
	c = (struct hook_call){ .id = HOOK_MUNMAP, .args = { 0x7000000, 4096 } };
	hook_map_effect(&c, (uint64_t)-22, 8, 0x20, &e);
	CHECK_EQ(e.release_hi, 0);
	hook_map_effect(&c, 0, 8, 0x20, &e);
	CHECK_EQ(e.release_hi, 0x7001000);
	/* mremap(old, old_size, new_size): only of a counted block */
	c = (struct hook_call){ .id = HOOK_MREMAP, .args = { 0x7000000, 4096, 16384 } };
	hook_map_effect(&c, 0x8000000, 8, 0x20, &e);
	CHECK(e.only_if_released);
	CHECK_EQ(e.release_hi, 0x7001000);
	CHECK_EQ(e.allocated, 0x8000000);
	CHECK_EQ(e.size, 16384);
	/* sbrk: the old break; a negative increment releases below it (32-bit: sign of a word) */
	c = (struct hook_call){ .id = HOOK_SBRK, .args = { 8192 } };
	hook_map_effect(&c, 0x500000, 8, 0x20, &e);
	CHECK_EQ(e.allocated, 0x500000);
	CHECK_EQ(e.size, 8192);
	c.args[0] = 0xfffff000u;
	hook_map_effect(&c, 0x502000, 4, 0x20, &e);
	CHECK_EQ(e.allocated, 0);
	CHECK_EQ(e.release_lo, 0x501000);
	CHECK_EQ(e.release_hi, 0x502000);
	CHECK(hook_needs_stop(&hook_table[HOOK_MMAP]));
	CHECK(!hook_needs_stop(&hook_table[HOOK_MUNMAP]));
	CHECK(hook_table[HOOK_MMAP].name == NULL); /* traced with --mmap only */
	hook_enable_mmap();
	CHECK_STREQ(hook_table[HOOK_MMAP].name, "mmap");
	CHECK_STREQ(hook_heap_name(HEAP_MMAP), "mmap");
}

TEST_CASE(arguments_in_registers)
{
	/* returns logged without a stop move sp: only functions whose arguments are all in
	 * registers may take that path (arm passes 4 words in registers, x86_64 6) */
	struct hook_desc pool = { "pool_alloc", HK_ALLOC, 1, -1, -1, 0, HEAP_MMAP + 1, 0 };

	hook_enable_mmap();
	CHECK(hook_args_in_regs(&hook_table[HOOK_MALLOC], 4));
	CHECK(hook_args_in_regs(&hook_table[HOOK_JE_XALLOCX], 4));
	CHECK(hook_args_in_regs(&hook_table[HOOK_MUNMAP], 4));
	CHECK(!hook_args_in_regs(&hook_table[HOOK_MMAP], 4));
	CHECK(hook_args_in_regs(&hook_table[HOOK_MMAP], 6));
	CHECK(!hook_args_in_regs(&hook_table[HOOK_MREMAP], 4));
	CHECK(hook_args_in_regs(&hook_table[HOOK_MREMAP], 8));
	/* a custom function: those it names (whether it takes more is its debug information's
	 * to say, image.c) */
	CHECK(hook_args_in_regs(&pool, 4));
	pool.size = 5;
	CHECK(!hook_args_in_regs(&pool, 4));
	CHECK(hook_args_in_regs(&pool, 6));
	/* mimalloc's heap _at forms: 5 or 6 words, the last on arm's stack */
	CHECK(hook_args_in_regs(&hook_table[HOOK_MI_HEAP_REZALLOC_ALIGNED], 4));
	CHECK(!hook_args_in_regs(&hook_table[HOOK_MI_HEAP_REZALLOC_ALIGNED_AT], 4));
	CHECK(hook_args_in_regs(&hook_table[HOOK_MI_HEAP_REZALLOC_ALIGNED_AT], 6));
	CHECK(!hook_args_in_regs(&hook_table[HOOK_MI_HEAP_RECALLOC_ALIGNED_AT], 5));
	CHECK(!hook_args_in_regs(&hook_table[HOOK_MI_ALIGNED_OFFSET_RECALLOC], 4));
	CHECK(hook_args_in_regs(&hook_table[HOOK_MI_REALLOC_ALIGNED_AT], 4));
}

/* mimalloc's string copies: the block's size is the string's, read at the return. */
TEST_CASE(mimalloc_strings)
{
	struct hook_call c = { HOOK_MI_STRNDUP, { 0x5000, 3 } };
	struct hook_effect e;

	CHECK(hook_needs_stop(&hook_table[HOOK_MI_STRDUP]));
	CHECK(hook_reads_result(&hook_table[HOOK_MI_HEAP_STRDUP]));
	hook_effect(&c, 0x9000, 0, &e);
	CHECK_EFFECT(e, 0, 0x9000, 0); /* the size is the caller's to read */
	CHECK_EQ(hook_string_unit(&c, &e), 1);
	c.id = HOOK_MI_WCSDUP;
	CHECK_EQ(hook_string_unit(&c, &e), 2);
	hook_effect(&c, 0, 0, &e); /* failed */
	CHECK_EQ(hook_string_unit(&c, &e), 0);
	/* mi_realpath(name, NULL) makes a block; with a buffer it returns that buffer */
	c = (struct hook_call){ HOOK_MI_REALPATH, { 0x5000, 0 } };
	hook_effect(&c, 0x9000, 0, &e);
	CHECK_EFFECT(e, 0, 0x9000, 0);
	CHECK_EQ(hook_string_unit(&c, &e), 1);
	c.args[1] = 0x7000;
	hook_effect(&c, 0x7000, 0, &e);
	CHECK_EFFECT(e, 0, 0, 0);
	c = (struct hook_call){ HOOK_MI_HEAP_REALPATH, { 0x100, 0x5000, 0x7000 } };
	hook_effect(&c, 0x7000, 0, &e);
	CHECK_EFFECT(e, 0, 0, 0);
	/* mi_dupenv_s(&buf, &size, name): 0 and the block in buf, or NULL if unset */
	c = (struct hook_call){ HOOK_MI_DUPENV_S, { 0x7ff0, 0x7fe8, 0x5000 } };
	CHECK(hook_needs_memptr(&c, 0));
	hook_effect(&c, 0, 0x9000, &e);
	CHECK_EFFECT(e, 0, 0x9000, 0);
	CHECK_EQ(hook_string_unit(&c, &e), 1);
	hook_effect(&c, 0, 0, &e);
	CHECK_EQ(hook_string_unit(&c, &e), 0);
	CHECK(!hook_needs_memptr(&c, 22));
}

/* mimalloc's other shapes: the heap first, the _at forms' offset not kept. */
TEST_CASE(mimalloc_shapes)
{
	struct hook_call c = { HOOK_MI_HEAP_RECALLOC_ALIGNED_AT, { 0x100, 0x1000, 10, 12 } };
	struct hook_effect e;

	CHECK_EQ(hook_lookup("mi_heap_recalloc_aligned_at"), HOOK_MI_HEAP_RECALLOC_ALIGNED_AT);
	CHECK_EQ(hook_nargs(&hook_table[HOOK_MI_HEAP_RECALLOC_ALIGNED_AT]), 4);
	CHECK(hook_needs_stop(&hook_table[HOOK_MI_HEAP_RECALLOC]));
	CHECK(!hook_needs_stop(&hook_table[HOOK_MI_HEAP_REZALLOC_ALIGNED_AT]));
	hook_effect(&c, 0x2000, 0, &e);
	CHECK_EFFECT(e, 0x1000, 0x2000, 120);
	CHECK_EFFECT(run(HOOK_MI_HEAP_CALLOC_ALIGNED_AT, 0x100, 3, 40, 0x3000, 0), 0, 0x3000, 120);
	CHECK_EFFECT(run(HOOK_MI_HEAP_MALLOCN, 0x100, 3, 40, 0x3000, 0), 0, 0x3000, 120);
	CHECK_EFFECT(run(HOOK_MI_MALLOC_ALIGNED_AT, 70, 64, 8, 0x3000, 0), 0, 0x3000, 70);
	CHECK_EFFECT(run(HOOK_MI_CALLOC_ALIGNED_AT, 3, 40, 64, 0x3000, 0), 0, 0x3000, 120);
	CHECK_EFFECT(run(HOOK_MI_REZALLOC_ALIGNED_AT, 0x1000, 90, 64, 0x3000, 0), 0x1000, 0x3000,
		     90);
	CHECK_EFFECT(run(HOOK_MI_HEAP_REALLOC_ALIGNED, 0x100, 0x1000, 90, 0x3000, 0), 0x1000,
		     0x3000, 90);
	CHECK_EFFECT(run(HOOK_MI_ALIGNED_RECALLOC, 0x1000, 4, 25, 0x3000, 0), 0x1000, 0x3000, 100);
}
