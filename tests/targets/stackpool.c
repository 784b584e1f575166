// SPDX-License-Identifier: GPL-2.0-only
/*
 * stackpool: a program whose own allocator takes its operands on the stack, traced with
 *   --alloc=wide_alloc:10 --alloc=wide_calloc:11:9 --realloc=wide_realloc:10:11
 *   --free=wide_free:9 --alloc=mid_alloc:5 --free=narrow_free:7 --alloc=reg_alloc:1
 * (one heap, named wide_alloc after the first --alloc). Every argument is a size_t or a
 * pointer, one word on every ABI, passed in registers up to the ABI's count (x86_64 6, arm 4,
 * aarch64 and mips64 n64 8) and on the stack after: the wide_* operands (9th to 11th) are on
 * the stack everywhere, mid_alloc's 5th on arm only, narrow_free's 7th on x86_64 and arm,
 * and reg_alloc's size is its first argument while it takes ten. Each function checks every
 * argument it is given against the value main passes (lead(), tail words): a stack that a
 * tracer moved would make it exit 70-79 instead of 0.
 * Blocks are carved from a static arena (no malloc at all), rounded to 16 bytes inside it; a
 * block's size is the size asked for. Known to leave live, in the wide_alloc heap:
 *   leak_wide    wide_alloc(100)                          100
 *   leak_calloc  wide_calloc(5, 24)                       120
 *   grow         wide_alloc(16), wide_realloc to 200      200 (1 free)
 *   leak_mid     mid_alloc(48)                            48
 *   leak_reg     reg_alloc(72)                            72
 *   churn        wide_alloc(8 * i + 1) for i < 40, every odd one freed: 20 blocks live
 * and it frees through wide_free (drop: wide_alloc(300)), narrow_free (a mid_alloc(64)) and
 * wide_free(NULL) (nothing). No stdio. The figures are counted as the program goes (expect.h):
 * heap name=wide_alloc for the pool's, and a summary of no malloc of its own.
 */
#include <stddef.h>
#include <string.h>

#include "expect.h"

#define LEAF __attribute__((noipa))
#define ARENA 65536
#define MAX_BLOCKS 128
/* the value main passes as argument i of every function, checked inside */
#define W(i) ((size_t)0x5a50 + (i))

#define LEAD size_t a2, size_t a3, size_t a4, size_t a5, size_t a6, size_t a7, size_t a8
#define LEAD_V W(2), W(3), W(4), W(5), W(6), W(7), W(8)

struct pool {
	size_t used;
	struct {
		char *p;
		size_t size;
	} blocks[MAX_BLOCKS];
	unsigned nblocks;
};

static char arena[ARENA] __attribute__((aligned(16)));
static struct expect_sum pool_sum;
static void *volatile kept[64];
static unsigned nkept;

static void hold(void *p)
{
	kept[nkept++] = p;
}

/* exit with code if v is not what main passes as argument i */
static void want(size_t v, unsigned i, int code)
{
	if (v != W(i))
		_exit(code);
}

static void lead(LEAD)
{
	want(a2, 2, 70);
	want(a3, 3, 70);
	want(a4, 4, 70);
	want(a5, 5, 70);
	want(a6, 6, 70);
	want(a7, 7, 70);
	want(a8, 8, 70);
}

static void *carve(struct pool *pool, size_t n)
{
	size_t rounded = (n + 15) & ~(size_t)15;
	char *p;

	if (pool->used + rounded > ARENA || pool->nblocks == MAX_BLOCKS)
		return NULL;
	p = arena + pool->used;
	pool->used += rounded;
	pool->blocks[pool->nblocks].p = p;
	pool->blocks[pool->nblocks++].size = n;
	return p;
}

LEAF void *wide_alloc(struct pool *pool, LEAD, size_t x9, size_t n)
{
	lead(a2, a3, a4, a5, a6, a7, a8);
	want(x9, 9, 71);
	return carve(pool, n);
}

LEAF void *wide_calloc(struct pool *pool, LEAD, size_t count, size_t x10, size_t size)
{
	void *p;

	lead(a2, a3, a4, a5, a6, a7, a8);
	want(x10, 10, 72);
	p = carve(pool, count * size);
	if (p)
		memset(p, 0, count * size);
	return p;
}

/* A bump pool reuses nothing: a release only forgets the block. */
LEAF void wide_free(struct pool *pool, LEAD, void *ptr, size_t x10)
{
	lead(a2, a3, a4, a5, a6, a7, a8);
	want(x10, 10, 73);
	for (unsigned i = 0; ptr && i < pool->nblocks; i++)
		if (pool->blocks[i].p == ptr)
			pool->blocks[i].p = NULL;
}

LEAF void *wide_realloc(struct pool *pool, LEAD, size_t x9, void *old, size_t n)
{
	size_t old_size = 0;
	void *p;

	lead(a2, a3, a4, a5, a6, a7, a8);
	want(x9, 9, 74);
	for (unsigned i = 0; old && i < pool->nblocks; i++)
		if (pool->blocks[i].p == old)
			old_size = pool->blocks[i].size;
	p = wide_alloc(pool, LEAD_V, W(9), n); /* inside a traced call: counted once */
	if (p && old) {
		memcpy(p, old, old_size < n ? old_size : n);
		wide_free(pool, LEAD_V, old, W(10));
	}
	return p;
}

LEAF void *mid_alloc(struct pool *pool, size_t a2, size_t a3, size_t a4, size_t n)
{
	want(a2, 2, 75);
	want(a3, 3, 75);
	want(a4, 4, 75);
	return carve(pool, n);
}

LEAF void narrow_free(struct pool *pool, size_t a2, size_t a3, size_t a4, size_t a5, size_t a6,
		      void *ptr)
{
	want(a2, 2, 76);
	want(a3, 3, 76);
	want(a4, 4, 76);
	want(a5, 5, 76);
	want(a6, 6, 76);
	for (unsigned i = 0; ptr && i < pool->nblocks; i++)
		if (pool->blocks[i].p == ptr)
			pool->blocks[i].p = NULL;
}

/* The size first, and nine more words: whether the function reads the stack is not in the
 * option naming it (--alloc=reg_alloc:1). */
LEAF void *reg_alloc(size_t n, struct pool *pool, size_t a3, size_t a4, size_t a5, size_t a6,
		     size_t a7, size_t a8, size_t x9, size_t x10)
{
	lead(W(2), a3, a4, a5, a6, a7, a8);
	want(x9, 9, 77);
	want(x10, 10, 77);
	return carve(pool, n);
}

LEAF void leak_wide(struct pool *pool)
{
	hold(wide_alloc(pool, LEAD_V, W(9), 100)); /* site(leak_wide) */
	expect_alloc_in(&pool_sum, 100);
}

LEAF void leak_calloc(struct pool *pool)
{
	hold(wide_calloc(pool, LEAD_V, 5, W(10), 24)); /* site(leak_calloc) */
	expect_alloc_in(&pool_sum, 120);
}

LEAF void grow(struct pool *pool)
{
	void *p = wide_alloc(pool, LEAD_V, W(9), 16);

	expect_alloc_in(&pool_sum, 16);
	p = wide_realloc(pool, LEAD_V, W(9), p, 200); /* site(grow) */
	expect_free_in(&pool_sum, 16);
	expect_alloc_in(&pool_sum, 200);
	hold(p);
}

LEAF void drop(struct pool *pool)
{
	void *p = wide_alloc(pool, LEAD_V, W(9), 300);

	expect_alloc_in(&pool_sum, 300);
	wide_free(pool, LEAD_V, p, W(10));
	expect_free_in(&pool_sum, 300);
	wide_free(pool, LEAD_V, NULL, W(10));
	p = mid_alloc(pool, W(2), W(3), W(4), 64);
	expect_alloc_in(&pool_sum, 64);
	narrow_free(pool, W(2), W(3), W(4), W(5), W(6), p);
	expect_free_in(&pool_sum, 64);
}

LEAF void leak_mid(struct pool *pool)
{
	hold(mid_alloc(pool, W(2), W(3), W(4), 48)); /* site(leak_mid) */
	expect_alloc_in(&pool_sum, 48);
}

LEAF void leak_reg(struct pool *pool)
{
	void *p = reg_alloc(72, pool, W(3), W(4), W(5), W(6), W(7), W(8), W(9), W(10)); /* site(leak_reg) */

	hold(p);
	expect_alloc_in(&pool_sum, 72);
}

LEAF void churn(struct pool *pool)
{
	unsigned long live = 0;

	for (size_t i = 0; i < 40; i++) {
		void *p = wide_alloc(pool, LEAD_V, W(9), 8 * i + 1); /* site(churn) */

		expect_alloc_in(&pool_sum, 8 * i + 1);
		if (i & 1) {
			wide_free(pool, LEAD_V, p, W(10));
			expect_free_in(&pool_sum, 8 * i + 1);
		} else {
			hold(p);
			live += 8 * i + 1;
		}
	}
	expect_site("wide_alloc", 20, live, "churn,main");
}

int main(void)
{
	static struct pool pool;

	leak_wide(&pool); /* call(leak_wide) */
	leak_calloc(&pool); /* call(leak_calloc) */
	grow(&pool); /* call(grow) */
	drop(&pool); /* call(drop) */
	leak_mid(&pool); /* call(leak_mid) */
	leak_reg(&pool); /* call(leak_reg) */
	churn(&pool); /* call(churn) */

	expect_site("wide_alloc", 1, 100, "leak_wide,main");
	expect_site("wide_calloc", 1, 120, "leak_calloc,main");
	expect_site("wide_realloc", 1, 200, "grow,main");
	expect_site("mid_alloc", 1, 48, "leak_mid,main");
	expect_site("reg_alloc", 1, 72, "leak_reg,main");
	expect_summary(&expect_tracked);
	expect_summary_of("heap name=wide_alloc", &pool_sum);
	return 0;
}
