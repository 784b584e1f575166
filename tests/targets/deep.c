// SPDX-License-Identifier: GPL-2.0-only
/*
 * deep: usage: deep LEVELS ITERATIONS (default 8 1000). main calls descend(LEVELS), which calls
 * itself until LEVELS frames of descend are on the stack; the innermost mallocs and frees
 * ITERATIONS blocks of 32 bytes. For make bench-cross (tests/xarch/xarch.py --bench): with
 * LEVELS above heaptrace's --depth every frame it unwinds is in the program; with few LEVELS the
 * backtrace goes on below main into the C library (__libc_start_main) and back (_start), so
 * the unwinder changes module within each backtrace. No stdio.
 * The program's own calls: ITERATIONS allocations, ITERATIONS frees, nothing live at exit.
 */
#include <stdlib.h>

#include "expect.h"

#define BLOCK_SIZE 32

__attribute__((noipa)) void descend(unsigned long levels, unsigned long n)
{
	unsigned long i;

	if (levels > 1) {
		descend(levels - 1, n);
		return;
	}
	for (i = 0; i < n; i++) {
		void *p = malloc(BLOCK_SIZE);

		keep(p);
		free(p);
	}
}

int main(int argc, char **argv)
{
	unsigned long levels = argc > 1 ? strtoul(argv[1], NULL, 0) : 8;
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 1000;
	struct expect_sum sum = { 0 };

	if (levels < 1 || levels > 1000)
		return 2;
	descend(levels, n);
	sum.alloc_calls = n;
	sum.free_calls = n;
	expect_summary(&sum);
	return 0;
}
