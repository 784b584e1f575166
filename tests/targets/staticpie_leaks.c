// SPDX-License-Identifier: GPL-2.0-only
/*
 * staticpie_leaks: linked -static-pie (the name's prefix says so): a static executable that is
 * position independent, loaded at a random address with no dynamic linker; the malloc family
 * is inside it. Known to leave live 4 x 260 bytes (malloc) from spie_leak_a <- main, one
 * calloc(3, 500) from spie_leak_b <- main and one block grown by realloc to 700 bytes from
 * spie_grow <- main (a malloc of 100 made by it first, then the realloc: one more allocation
 * and one free), and to malloc and free 15 blocks of 40 bytes. No stdio. Like any static glibc
 * program it also allocates before main (glibc 2.36: 5 blocks in _dl_non_dynamic_init, never
 * freed): live backtraces that do not reach main, which heaptrace must see.
 */
#include <stdlib.h>

#include "expect.h"

static void *volatile kept[6];

__attribute__((noipa)) void spie_leak_a(unsigned i)
{
	kept[i] = malloc(260); /* site(spie_leak_a) */
	expect_alloc(260);
}

__attribute__((noipa)) void spie_leak_b(void)
{
	kept[4] = calloc(3, 500); /* site(spie_leak_b) */
	expect_alloc(1500);
}

__attribute__((noipa)) void spie_grow(void)
{
	void *p = malloc(100);

	expect_alloc(100);
	keep(p);
	kept[5] = realloc(p, 700); /* site(spie_grow) */
	expect_free(100);
	expect_alloc(700);
}

__attribute__((noipa)) void spie_churn(void)
{
	unsigned i;

	for (i = 0; i < 15; i++) {
		void *p = malloc(40);

		keep(p);
		free(p);
		expect_alloc(40);
		expect_free(40);
	}
}

int main(void)
{
	unsigned i;

	for (i = 0; i < 4; i++)
		spie_leak_a(i);
	spie_churn();
	spie_leak_b();
	spie_grow();
	expect_site("malloc", 4, 1040, "spie_leak_a,main");
	expect_site("calloc", 1, 1500, "spie_leak_b,main");
	expect_site("realloc", 1, 700, "spie_grow,main");
	expect_summary(&expect_tracked);
	return 0;
}
