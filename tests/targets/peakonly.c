// SPDX-License-Identifier: GPL-2.0-only
/*
 * peakonly: a heap that peaks, then is freed whole, with a known number of temporary
 * allocations as heaptrack counts them (test_reports.py).
 *   1. temporaries: TEMP_N times a block of TEMP_SIZE from temp_block, freed at once: each is
 *      temporary. Then PAIR_N times two blocks of PAIR_SIZE from pair_block (one call site),
 *      freed in order: the first free of each pair is temporary by heaptrack's rule (the last
 *      allocation, the second block, has its size and call chain), the second is not (a free
 *      came in between). Then MIX_N times a block from mix_a then one of the same size from
 *      mix_b, freed in order: neither is temporary (mix_a's chain is not the last one's).
 *   2. the peak: CACHE_N blocks of CACHE_SIZE from grow_cache, then INDEX_N of INDEX_SIZE from
 *      grow_index: the heap peaks at CACHE_N * CACHE_SIZE + INDEX_N * INDEX_SIZE bytes.
 *   3. the cache's blocks, then the index's, are freed (none is temporary: the first free is
 *      of a cache block, the last allocation an index block). Nothing is live at the exit.
 * heaptrack's reader also counts as temporary a free of its file's first allocation site (its
 * allocation info 0) right after another free; here that site is temp_block, whose blocks are
 * all freed right after their allocation, so its count is the rule's.
 * No stdio. Writes "view" records: name=peak (a site's blocks and bytes at the peak),
 * name=peaktotal, name=temporary (the count above).
 */
#include <stdlib.h>

#include "expect.h"

#define TEMP_N 40
#define TEMP_SIZE 48
#define PAIR_N 10
#define PAIR_SIZE 80
#define MIX_N 10
#define MIX_SIZE 96
#define CACHE_N 6
#define CACHE_SIZE (256 * 1024)
#define INDEX_N 4
#define INDEX_SIZE (64 * 1024)

__attribute__((noipa)) void *temp_block(void)
{
	return malloc(TEMP_SIZE); /* site(temp_block) */
}

__attribute__((noipa)) void *pair_block(void)
{
	return malloc(PAIR_SIZE); /* site(pair_block) */
}

__attribute__((noipa)) void *mix_a(void)
{
	return malloc(MIX_SIZE); /* site(mix_a) */
}

__attribute__((noipa)) void *mix_b(void)
{
	return malloc(MIX_SIZE); /* site(mix_b) */
}

__attribute__((noipa)) void *grow_cache(void)
{
	return malloc(CACHE_SIZE); /* site(grow_cache) */
}

__attribute__((noipa)) void *grow_index(void)
{
	return malloc(INDEX_SIZE); /* site(grow_index) */
}

static void view(const char *name, const char *leaf, const char *k1, unsigned long v1,
		 const char *k2, unsigned long v2)
{
	struct expect_buf b;

	b.n = 0;
	expect_str(&b, "view name=");
	expect_str(&b, name);
	if (leaf) {
		expect_str(&b, " leaf=");
		expect_str(&b, leaf);
	}
	expect_kv(&b, k1, v1);
	if (k2)
		expect_kv(&b, k2, v2);
	expect_flush(&b);
}

/* n times a block from first then one from second, both called from one call instruction
 * (so that pair_block's two blocks have one call chain), then freed in order. */
static void pairs(void *(*first)(void), void *(*second)(void), int n, unsigned long size)
{
	void *(*const fn[2])(void) = { first, second };
	volatile int two = 2; /* no unrolling into two calls */

	for (int i = 0; i < n; i++) {
		void *q[2];

		for (int k = 0; k < two; k++) {
			q[k] = fn[k]();
			keep(q[k]);
			expect_alloc(size);
		}
		for (int k = 0; k < two; k++) {
			free(q[k]);
			expect_free(size);
		}
	}
}

int main(void)
{
	void *cache[CACHE_N], *index[INDEX_N];
	int i;

	for (i = 0; i < TEMP_N; i++) {
		void *t = temp_block();

		keep(t);
		expect_alloc(TEMP_SIZE);
		free(t);
		expect_free(TEMP_SIZE);
	}
	pairs(pair_block, pair_block, PAIR_N, PAIR_SIZE);
	pairs(mix_a, mix_b, MIX_N, MIX_SIZE);
	for (i = 0; i < CACHE_N; i++) {
		cache[i] = grow_cache();
		keep(cache[i]);
		expect_alloc(CACHE_SIZE);
	}
	for (i = 0; i < INDEX_N; i++) {
		index[i] = grow_index();
		keep(index[i]);
		expect_alloc(INDEX_SIZE);
	}
	for (i = 0; i < CACHE_N; i++) {
		free(cache[i]);
		expect_free(CACHE_SIZE);
	}
	for (i = 0; i < INDEX_N; i++) {
		free(index[i]);
		expect_free(INDEX_SIZE);
	}
	view("peaktotal", NULL, "bytes", CACHE_N * CACHE_SIZE + INDEX_N * INDEX_SIZE, "blocks",
	     CACHE_N + INDEX_N);
	view("peak", "grow_cache", "count", CACHE_N, "bytes", CACHE_N * CACHE_SIZE);
	view("peak", "grow_index", "count", INDEX_N, "bytes", INDEX_N * INDEX_SIZE);
	view("temporary", NULL, "count", TEMP_N + PAIR_N, NULL, 0);
	expect_summary(&expect_tracked);
	return 0;
}
