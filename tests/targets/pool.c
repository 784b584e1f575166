// SPDX-License-Identifier: GPL-2.0-only
/*
 * pool: a program with its own allocator, a bump pool that carves blocks from 4096-byte chunks
 * it takes from malloc, traced with
 *   --alloc=pool_alloc:2 --alloc=pool_calloc:3:2 --realloc=pool_realloc:2:3 --free=pool_free:2
 * (one heap, named pool_alloc after the first --alloc). pool_calloc calls pool_alloc, and
 * pool_realloc calls pool_alloc and pool_free: calls inside a traced call of the same heap, each
 * counted once, as the outer call. The chunks' mallocs, made inside pool_alloc, are malloc's.
 * The first block sits at the very address of the first chunk (both live at the end: the heaps
 * are kept apart). Blocks are rounded up to 16 bytes inside the pool, but a block's size is the
 * size asked for. Known to leave live, in the pool_alloc heap:
 *   leak_a      pool_alloc(pool, 100)                    100 (at the first chunk's address)
 *   leak_b      pool_calloc(pool, 5, 8)                  40
 *   grow        pool_alloc(pool, 16), pool_realloc to 200 200 (1 free)
 *   leak_big    pool_alloc(pool, 3500)                   3500 (needs a second chunk)
 * and it frees one block (drop: pool_alloc(300), pool_free), calls pool_free(pool, NULL)
 * (nothing) and pool_free of an address inside a block that was never a block's (an unknown
 * free of the pool heap only). In the malloc heap:
 *   new_chunk   malloc(4096) <- pool_alloc <- leak_a     4096
 *   new_chunk   malloc(4096) <- pool_alloc <- leak_big   4096 (688 + 3504 > 4096)
 *   leak_plain  malloc(77)                               77
 * No stdio. The figures are counted as the program goes (expect.h): summary for malloc's
 * heap, heap name=pool_alloc for the pool's.
 */
#include <stdlib.h>
#include <string.h>

#include "expect.h"

#define LEAF __attribute__((noipa))
#define CHUNK 4096
#define MAX_BLOCKS 64

struct pool {
	char *chunk;
	size_t used;
	struct {
		char *p;
		size_t size;
	} blocks[MAX_BLOCKS]; /* every block's size, for pool_realloc's copy */
	unsigned nblocks;
};

static struct expect_sum pool_sum;
static void *volatile kept[16];
static unsigned nkept;

static void hold(void *p)
{
	kept[nkept++] = p;
}

LEAF char *new_chunk(void)
{
	char *c = malloc(CHUNK); /* site(new_chunk) */

	expect_alloc(CHUNK);
	return c;
}

LEAF void *pool_alloc(struct pool *pool, size_t n)
{
	size_t rounded = (n + 15) & ~(size_t)15;
	char *p;

	if (!pool->chunk || pool->used + rounded > CHUNK) {
		pool->chunk = new_chunk(); /* call(new_chunk) */
		pool->used = 0;
		if (!pool->chunk)
			return NULL;
	}
	p = pool->chunk + pool->used;
	pool->used += rounded;
	pool->blocks[pool->nblocks].p = p;
	pool->blocks[pool->nblocks++].size = n;
	return p;
}

LEAF void *pool_calloc(struct pool *pool, size_t count, size_t size)
{
	void *p = pool_alloc(pool, count * size);

	if (p)
		memset(p, 0, count * size);
	return p;
}

/* A bump pool reuses nothing: a release only forgets the block's size. */
LEAF void pool_free(struct pool *pool, void *ptr)
{
	for (unsigned i = 0; ptr && i < pool->nblocks; i++)
		if (pool->blocks[i].p == ptr)
			pool->blocks[i].p = NULL;
}

LEAF void *pool_realloc(struct pool *pool, void *old, size_t n)
{
	size_t old_size = 0;
	void *p;

	for (unsigned i = 0; old && i < pool->nblocks; i++)
		if (pool->blocks[i].p == old)
			old_size = pool->blocks[i].size;
	p = pool_alloc(pool, n);
	if (p && old) {
		memcpy(p, old, old_size < n ? old_size : n);
		pool_free(pool, old);
	}
	return p;
}

LEAF void leak_a(struct pool *pool)
{
	void *p = pool_alloc(pool, 100); /* site(leak_a) */

	expect_alloc_in(&pool_sum, 100);
	if (p != pool->chunk)
		_exit(99); /* the first block must share its chunk's address */
	hold(p);
}

LEAF void leak_b(struct pool *pool)
{
	hold(pool_calloc(pool, 5, 8)); /* site(leak_b) */
	expect_alloc_in(&pool_sum, 40);
}

LEAF void grow(struct pool *pool)
{
	void *p = pool_alloc(pool, 16);

	expect_alloc_in(&pool_sum, 16);
	p = pool_realloc(pool, p, 200); /* site(grow) */
	expect_free_in(&pool_sum, 16);
	expect_alloc_in(&pool_sum, 200);
	hold(p);
}

LEAF void drop(struct pool *pool)
{
	void *p = pool_alloc(pool, 300);

	expect_alloc_in(&pool_sum, 300);
	pool_free(pool, p);
	expect_free_in(&pool_sum, 300);
	pool_free(pool, NULL);
	pool_free(pool, (char *)p + 8); /* never a block: an unknown free of the pool heap */
	pool_sum.unknown_frees++;
}

LEAF void leak_big(struct pool *pool)
{
	hold(pool_alloc(pool, 3500)); /* site(leak_big) */
	expect_alloc_in(&pool_sum, 3500);
}

LEAF void leak_plain(void)
{
	hold(malloc(77)); /* site(leak_plain) */
	expect_alloc(77);
}

int main(void)
{
	static struct pool pool;

	leak_a(&pool); /* call(leak_a) */
	leak_b(&pool); /* call(leak_b) */
	grow(&pool); /* call(grow) */
	drop(&pool); /* call(drop) */
	leak_big(&pool); /* call(leak_big) */
	leak_plain(); /* call(leak_plain) */

	expect_site("pool_alloc", 1, 100, "leak_a,main");
	expect_site("pool_calloc", 1, 40, "leak_b,main");
	expect_site("pool_realloc", 1, 200, "grow,main");
	expect_site("pool_alloc", 1, 3500, "leak_big,main");
	expect_site("malloc", 1, CHUNK, "new_chunk,pool_alloc,leak_a,main");
	expect_site("malloc", 1, CHUNK, "new_chunk,pool_alloc,leak_big,main");
	expect_site("malloc", 1, 77, "leak_plain,main");
	expect_summary(&expect_tracked);
	expect_summary_of("heap name=pool_alloc", &pool_sum);
	return 0;
}
