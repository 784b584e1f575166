// SPDX-License-Identifier: GPL-2.0-only
/*
 * history: a heap with a known history, for the views of a whole run (test_record.py).
 *   1. peak_block: 8 blocks of 256 KiB;
 *   2. keep_block: 3 blocks of 100 bytes, never freed: the heap peaks here, at 8 * 262144 + 300
 *      = 2097452 bytes in 11 blocks;
 *   3. the 8 peak blocks are freed (none is temporary: the thread's last allocation is a
 *      keep_block);
 *   4. temp_block: 50 times a block of 64 bytes, freed at once (50 temporary allocations).
 * At exit 3 blocks (300 bytes) are live, far below the peak. No stdio. Besides the summary and
 * the live sites it writes "view" records: name=peak (a backtrace's blocks and bytes at the
 * peak), name=peaktotal, and name=calls (a backtrace's allocation calls, temporary allocations
 * and bytes allocated in all).
 */
#include <stdlib.h>

#include "expect.h"

#define PEAK_N 8
#define PEAK_SIZE (256 * 1024)
#define KEEP_N 3
#define KEEP_SIZE 100
#define TEMP_N 50
#define TEMP_SIZE 64

__attribute__((noipa)) void *peak_block(void)
{
	return malloc(PEAK_SIZE); /* site(peak_block) */
}

__attribute__((noipa)) void *keep_block(void)
{
	return malloc(KEEP_SIZE); /* site(keep_block) */
}

__attribute__((noipa)) void *temp_block(void)
{
	return malloc(TEMP_SIZE); /* site(temp_block) */
}

static void view(const char *name, const char *leaf, const char *k1, unsigned long v1,
		 const char *k2, unsigned long v2, const char *k3, unsigned long v3)
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
	expect_kv(&b, k2, v2);
	if (k3)
		expect_kv(&b, k3, v3);
	expect_flush(&b);
}

int main(void)
{
	void *peak[PEAK_N], *kept[KEEP_N];
	int i;

	for (i = 0; i < PEAK_N; i++) {
		peak[i] = peak_block();
		keep(peak[i]);
		expect_alloc(PEAK_SIZE);
	}
	for (i = 0; i < KEEP_N; i++) {
		kept[i] = keep_block();
		keep(kept[i]);
		expect_alloc(KEEP_SIZE);
	}
	for (i = 0; i < PEAK_N; i++) {
		free(peak[i]);
		expect_free(PEAK_SIZE);
	}
	for (i = 0; i < TEMP_N; i++) {
		void *t = temp_block();

		keep(t);
		expect_alloc(TEMP_SIZE);
		free(t);
		expect_free(TEMP_SIZE);
	}
	expect_site("malloc", KEEP_N, KEEP_N * KEEP_SIZE, "keep_block,main");
	view("peaktotal", NULL, "bytes", PEAK_N * PEAK_SIZE + KEEP_N * KEEP_SIZE, "blocks",
	     PEAK_N + KEEP_N, NULL, 0);
	view("peak", "peak_block", "count", PEAK_N, "bytes", PEAK_N * PEAK_SIZE, NULL, 0);
	view("peak", "keep_block", "count", KEEP_N, "bytes", KEEP_N * KEEP_SIZE, NULL, 0);
	view("calls", "peak_block", "alloc_calls", PEAK_N, "temporary", 0, "total_size",
	     PEAK_N * PEAK_SIZE);
	view("calls", "keep_block", "alloc_calls", KEEP_N, "temporary", 0, "total_size",
	     KEEP_N * KEEP_SIZE);
	view("calls", "temp_block", "alloc_calls", TEMP_N, "temporary", TEMP_N, "total_size",
	     TEMP_N * TEMP_SIZE);
	expect_summary(&expect_tracked);
	(void)kept;
	return 0;
}
