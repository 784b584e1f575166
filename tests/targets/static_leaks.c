// SPDX-License-Identifier: GPL-2.0-only
/*
 * static_leaks: linked -static (the name's prefix says so); the malloc family is inside the
 * executable. Known to leave live 3 x 300 bytes (malloc) from leak_static_a <- main and one
 * calloc(2, 1000) from leak_static_b <- main, and to malloc and free 20 blocks of 50 bytes. No
 * stdio. A static glibc also allocates before main (glibc 2.36: _dl_non_dynamic_init makes 5
 * blocks, none freed), which heaptrace must see: they are live backtraces that do not reach
 * main. Also the source of static_stripped (strip --strip-all: no symbols left to find malloc).
 */
#include <stdlib.h>

#include "expect.h"

static void *volatile kept[4];

__attribute__((noipa)) void leak_static_a(unsigned i)
{
	kept[i] = malloc(300); /* site(leak_static_a) */
	expect_alloc(300);
}

__attribute__((noipa)) void leak_static_b(void)
{
	kept[3] = calloc(2, 1000); /* site(leak_static_b) */
	expect_alloc(2000);
}

__attribute__((noipa)) void churn_static(void)
{
	unsigned i;

	for (i = 0; i < 20; i++) {
		void *p = malloc(50);

		keep(p);
		free(p);
		expect_alloc(50);
		expect_free(50);
	}
}

int main(void)
{
	unsigned i;

	for (i = 0; i < 3; i++)
		leak_static_a(i);
	churn_static();
	leak_static_b();
	expect_site("malloc", 3, 900, "leak_static_a,main");
	expect_site("calloc", 1, 2000, "leak_static_b,main");
	expect_summary(&expect_tracked);
	return 0;
}
