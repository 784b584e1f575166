// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctor: allocations outside main. Known to leave live, 1 block each:
 *   ctor_leak    555 bytes, from a constructor, before main (chain ctor_leak <- glibc start-up)
 *   main_leak    666 bytes, in main
 *   atexit_leak  777 bytes, from an atexit handler, after main returned
 *   dtor_leak    888 bytes, from a destructor, the last code of the program
 * heaptrace counts everything from the first instruction to the exit. No stdio. The destructor
 * runs last, so it writes the records.
 */
#include <stdlib.h>

#include "expect.h"

static void *volatile kept[4];

__attribute__((noipa)) void ctor_leak(void)
{
	kept[0] = malloc(555); /* site(ctor_leak) */
	expect_alloc(555);
}

__attribute__((noipa)) void main_leak(void)
{
	kept[1] = malloc(666); /* site(main_leak) */
	expect_alloc(666);
}

__attribute__((noipa)) void atexit_leak(void)
{
	kept[2] = malloc(777); /* site(atexit_leak) */
	expect_alloc(777);
}

__attribute__((noipa)) void dtor_leak(void)
{
	kept[3] = malloc(888); /* site(dtor_leak) */
	expect_alloc(888);
}

__attribute__((constructor)) static void init(void)
{
	ctor_leak();
}

__attribute__((destructor)) static void fini(void)
{
	dtor_leak();
	expect_site("malloc", 1, 555, "ctor_leak,*");
	expect_site("malloc", 1, 666, "main_leak,main");
	expect_site("malloc", 1, 777, "atexit_leak,*");
	expect_site("malloc", 1, 888, "dtor_leak,*");
	expect_summary(&expect_tracked);
}

int main(void)
{
	atexit(atexit_leak);
	main_leak();
	return 0;
}
