// SPDX-License-Identifier: GPL-2.0-only
/*
 * leaks: several leaking call sites, each function in its own file. Known to leave live at exit,
 * in the order of their first allocation (what --sort=age must show, oldest first):
 *   alloc_row <- load_table <- load_all <- main : 10 x 100 bytes   = 1000
 *   alloc_row <- load_index <- load_all <- main :  4 x 300 bytes   = 1200
 *   leak_small <- main                          : 50 x 16 bytes    = 800 (60 made, 10 freed)
 *   leak_big <- main                            :  1 x 65536 bytes = 65536
 *   leak_calloc <- main (calloc 4 x 250)        :  2 x 1000 bytes  = 2000
 * and churn <- main mallocs and frees 100 x 64 bytes. Sizes and counts sort differently:
 * by size big, calloc, index, table, small; by count small, table, index, calloc, big.
 * In all 177 allocations, 110 frees, 67 live blocks, 70536 live bytes. No stdio.
 */
#include <stdlib.h>

#include "expect.h"
#include "leaks.h"

int main(void)
{
	struct expect_sum sum = { 0 };
	void *small[SMALL_MADE];
	unsigned i;

	load_all(); /* call(load_all) */
	for (i = 0; i < SMALL_MADE; i++)
		small[i] = leak_small(); /* call(leak_small) */
	for (i = 0; i < SMALL_FREED; i++)
		free(small[i]);
	leak_big(); /* call(leak_big) */
	for (i = 0; i < CALLOC_CALLS; i++)
		leak_calloc(); /* call(leak_calloc) */
	churn(CHURN_CALLS);

	expect_site_peak("malloc", TABLE_ROWS, TABLE_ROWS * TABLE_ROW_SIZE, TABLE_ROWS,
			 TABLE_ROWS * TABLE_ROW_SIZE, TABLE_ROWS,
			 "alloc_row,load_table,load_all,main");
	expect_site_peak("malloc", INDEX_ROWS, INDEX_ROWS * INDEX_ROW_SIZE, INDEX_ROWS,
			 INDEX_ROWS * INDEX_ROW_SIZE, INDEX_ROWS,
			 "alloc_row,load_index,load_all,main");
	expect_site_peak("malloc", SMALL_MADE - SMALL_FREED,
			 (SMALL_MADE - SMALL_FREED) * SMALL_SIZE, SMALL_MADE,
			 SMALL_MADE * SMALL_SIZE, SMALL_MADE, "leak_small,main");
	expect_site_peak("malloc", 1, BIG_SIZE, 1, BIG_SIZE, 1, "leak_big,main");
	expect_site_peak("calloc", CALLOC_CALLS, CALLOC_CALLS * CALLOC_NMEMB * CALLOC_SIZE,
			 CALLOC_CALLS, CALLOC_CALLS * CALLOC_NMEMB * CALLOC_SIZE, CALLOC_CALLS,
			 "leak_calloc,main");
	sum.alloc_calls = TABLE_ROWS + INDEX_ROWS + SMALL_MADE + 1 + CALLOC_CALLS + CHURN_CALLS;
	sum.free_calls = SMALL_FREED + CHURN_CALLS;
	sum.live_blocks = TABLE_ROWS + INDEX_ROWS + SMALL_MADE - SMALL_FREED + 1 + CALLOC_CALLS;
	sum.live_bytes = TABLE_ROWS * TABLE_ROW_SIZE + INDEX_ROWS * INDEX_ROW_SIZE +
			 (SMALL_MADE - SMALL_FREED) * SMALL_SIZE + BIG_SIZE +
			 CALLOC_CALLS * CALLOC_NMEMB * CALLOC_SIZE;
	expect_summary(&sum);
	return 0;
}
