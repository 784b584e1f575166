// SPDX-License-Identifier: GPL-2.0-only
/*
 * twins: one function, alloc_one, called by two callers, left and right, whose frames are the
 * same: alloc_one runs at the same sp, with the same frame pointer, under either, and only the
 * return address its frame holds tells the two apart (a backtrace remembered for one must not
 * be given to the other: unwind/quickmemo.h). usage: twins [N]  (default 1000, at most
 * 100000): N blocks of 24 bytes through each, alternately, all kept.
 */
#include <stdlib.h>

#include "expect.h"

#define MAX 100000
#define SIZE 24

static void *kept[2 * MAX];

__attribute__((noinline, noipa)) static void *alloc_one(void)
{
	void *p = malloc(SIZE); /* site(alloc_one) */

	keep(p);
	return p;
}

__attribute__((noinline, noipa)) static void *left(void)
{
	void *p = alloc_one();

	keep(p);
	return p;
}

__attribute__((noinline, noipa)) static void *right(void)
{
	void *p = alloc_one();

	keep(p);
	return p;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;

	if (n > MAX)
		return 2;
	for (unsigned long i = 0; i < n; i++) {
		kept[2 * i] = left(); /* call(left) */
		kept[2 * i + 1] = right(); /* call(right) */
	}
	expect_site("malloc", n, SIZE * n, "alloc_one,left,main");
	expect_site("malloc", n, SIZE * n, "alloc_one,right,main");
	expect_summary(&(struct expect_sum){ .alloc_calls = 2 * n, .live_blocks = 2 * n,
					     .live_bytes = 2 * SIZE * n });
	return 0;
}
