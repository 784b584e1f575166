// SPDX-License-Identifier: GPL-2.0-only
/*
 * foreign: an executable with an allocator heaptrace knows by name but does not trace by
 * itself: dlmalloc's entry points (dlmalloc, dlcalloc, dlrealloc, dlfree), here a bump arena in
 * a static buffer. heaptrace warns that it is not traced and how to trace it; traced as the
 * warning says (--alloc=dlmalloc:1 --alloc=dlcalloc:2:1 --realloc=dlrealloc:1:2 --free=dlfree:1)
 * its heap, dlmalloc, holds:
 *   leak_dl    dlmalloc(64)                   64
 *   leak_dlc   dlcalloc(4, 10)                40
 *   grow_dl    dlmalloc(8), dlrealloc to 100  100 (1 free)
 *   drop_dl    dlmalloc(32), dlfree           (1 free)
 * No malloc, no stdio: the malloc heap is empty. Record: "heap name=dlmalloc".
 */
#include <string.h>

#include "expect.h"

#define LEAF __attribute__((noipa))

static char arena[4096] __attribute__((aligned(16)));
static size_t used;
static struct expect_sum dl;
static void *volatile kept[8];
static unsigned nkept;

LEAF void *dlmalloc(size_t n)
{
	char *p = arena + used;

	used += (n + 15) & ~(size_t)15;
	return used <= sizeof(arena) ? p : NULL;
}

LEAF void *dlcalloc(size_t count, size_t size)
{
	void *p = dlmalloc(count * size);

	if (p)
		memset(p, 0, count * size);
	return p;
}

LEAF void dlfree(void *p)
{
	keep(p);
}

LEAF void *dlrealloc(void *old, size_t n)
{
	void *p = dlmalloc(n);

	if (p && old) {
		memcpy(p, old, 8);
		dlfree(old);
	}
	return p;
}

LEAF void leak_dl(void)
{
	kept[nkept++] = dlmalloc(64); /* site(leak_dl) */
	expect_alloc_in(&dl, 64);
}

LEAF void leak_dlc(void)
{
	kept[nkept++] = dlcalloc(4, 10); /* site(leak_dlc) */
	expect_alloc_in(&dl, 40);
}

LEAF void grow_dl(void)
{
	void *p = dlmalloc(8);

	expect_alloc_in(&dl, 8);
	kept[nkept++] = dlrealloc(p, 100); /* site(grow_dl) */
	expect_free_in(&dl, 8);
	expect_alloc_in(&dl, 100);
}

LEAF void drop_dl(void)
{
	void *p = dlmalloc(32);

	expect_alloc_in(&dl, 32);
	dlfree(p);
	expect_free_in(&dl, 32);
}

int main(void)
{
	leak_dl(); /* call(leak_dl) */
	leak_dlc(); /* call(leak_dlc) */
	grow_dl(); /* call(grow_dl) */
	drop_dl();
	expect_site("dlmalloc", 1, 64, "leak_dl,main");
	expect_site("dlcalloc", 1, 40, "leak_dlc,main");
	expect_site("dlrealloc", 1, 100, "grow_dl,main");
	expect_summary_of("heap name=dlmalloc", &dl);
	return 0;
}
