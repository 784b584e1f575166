// SPDX-License-Identifier: GPL-2.0-only
/*
 * fpvar: code built without frame pointers keeps a variable in the frame pointer's register.
 * alloc_one, which keeps none, holds its argument there across its malloc, so the register
 * differs from one call to the next while sp and the stack's words do not; it is called by two
 * callers, left and right, in turns of RUN calls, at the same sp. A backtrace that never used
 * the register is the same whatever it held (unwind/quickmemo.h): remembered within a turn, and
 * told apart by the return address its frame holds at each change of caller. usage: fpvar [N]
 * (default 1000, at most 100000, a multiple of RUN): N blocks of 40 bytes through each, all
 * kept.
 */
#include <stdlib.h>

#include "expect.h"

#define MAX 100000
#define SIZE 40
#define RUN 16

static void *kept[2 * MAX];

#if defined(__x86_64__)
#define FP_REG "rbp"
#elif defined(__aarch64__)
#define FP_REG "x29"
#endif

__attribute__((noinline, noipa, optimize("omit-frame-pointer"))) static void *
alloc_one(unsigned long i)
{
#ifdef FP_REG
	register unsigned long v __asm__(FP_REG) = i; /* live across the call */
#else
	unsigned long v = i;
#endif
	void *p;

	__asm__ volatile("" : "+r"(v));
	p = malloc(SIZE); /* site(alloc_one) */
	__asm__ volatile("" : "+r"(v));
	keep(p);
	*(volatile unsigned char *)p = (unsigned char)v;
	return p;
}

__attribute__((noinline, noipa)) static void *left(unsigned long i)
{
	void *p = alloc_one(i);

	keep(p);
	return p;
}

__attribute__((noinline, noipa)) static void *right(unsigned long i)
{
	void *p = alloc_one(i);

	keep(p);
	return p;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;

	if (n > MAX || n % RUN)
		return 2;
	for (unsigned long i = 0; i < 2 * n; i++) {
		if (i / RUN % 2 == 0)
			kept[i] = left(i); /* call(left) */
		else
			kept[i] = right(i); /* call(right) */
	}
	expect_site("malloc", n, SIZE * n, "alloc_one,left,main");
	expect_site("malloc", n, SIZE * n, "alloc_one,right,main");
	expect_summary(&(struct expect_sum){ .alloc_calls = 2 * n,
					     .live_blocks = 2 * n,
					     .live_bytes = 2 * SIZE * n });
	return 0;
}
