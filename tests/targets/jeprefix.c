// SPDX-License-Identifier: GPL-2.0-only
/*
 * jeprefix: the entry points of a jemalloc built with --with-jemalloc-prefix=je_ (je_malloc,
 * je_calloc, je_realloc, je_free, je_posix_memalign, je_mallocx, je_rallocx, je_dallocx,
 * je_sdallocx), here defined by the executable over a bump arena (Debian's jemalloc has no
 * prefix): heaptrace finds them by name and counts them by jemalloc's rules, in the malloc heap.
 * je_calloc and je_realloc call je_malloc: counted once, as the outer call. Known to leave live:
 *   leak_je     je_malloc(50)                          50
 *   leak_jec    je_calloc(3, 7)                        21
 *   grow_je     je_malloc(10), je_realloc to 300       300 (1 free)
 *   leak_jex    je_mallocx(70, 0)                      70
 *   grow_jerx   je_mallocx(8, 0), je_rallocx to 90     90 (1 free)
 *   leak_pm     je_posix_memalign(&p, 64, 40)          40
 * and drop_each makes and releases a block with je_free, je_dallocx and je_sdallocx. No glibc
 * malloc, no stdio: the summary is the program's own.
 */
#include <stdint.h>
#include <string.h>

#include "expect.h"

#define LEAF __attribute__((noipa))

static char arena[8192] __attribute__((aligned(64)));
static size_t used;
static void *volatile kept[8];
static unsigned nkept;

LEAF void *je_malloc(size_t n)
{
	char *p = arena + used;

	used += (n + 63) & ~(size_t)63;
	return used <= sizeof(arena) ? p : NULL;
}

LEAF void *je_calloc(size_t count, size_t size)
{
	void *p = je_malloc(count * size);

	if (p)
		memset(p, 0, count * size);
	return p;
}

LEAF void je_free(void *p)
{
	keep(p);
}

LEAF void *je_realloc(void *old, size_t n)
{
	void *p = je_malloc(n);

	if (p && old) {
		memcpy(p, old, 8);
		je_free(old);
	}
	return p;
}

LEAF int je_posix_memalign(void **out, size_t align, size_t n)
{
	(void)align; /* the arena's blocks are 64-byte aligned */
	*out = je_malloc(n);
	return *out ? 0 : 12;
}

LEAF void *je_mallocx(size_t n, int flags)
{
	(void)flags;
	return je_malloc(n);
}

LEAF void *je_rallocx(void *p, size_t n, int flags)
{
	(void)flags;
	return je_realloc(p, n);
}

LEAF void je_dallocx(void *p, int flags)
{
	(void)flags;
	keep(p);
}

LEAF void je_sdallocx(void *p, size_t n, int flags)
{
	(void)flags;
	(void)n;
	keep(p);
}

LEAF void leak_je(void)
{
	kept[nkept++] = je_malloc(50); /* site(leak_je) */
	expect_alloc(50);
}

LEAF void leak_jec(void)
{
	kept[nkept++] = je_calloc(3, 7); /* site(leak_jec) */
	expect_alloc(21);
}

LEAF void grow_je(void)
{
	void *p = je_malloc(10);

	expect_alloc(10);
	kept[nkept++] = je_realloc(p, 300); /* site(grow_je) */
	expect_free(10);
	expect_alloc(300);
}

LEAF void leak_jex(void)
{
	kept[nkept++] = je_mallocx(70, 0); /* site(leak_jex) */
	expect_alloc(70);
}

LEAF void grow_jerx(void)
{
	void *p = je_mallocx(8, 0);

	expect_alloc(8);
	kept[nkept++] = je_rallocx(p, 90, 0); /* site(grow_jerx) */
	expect_free(8);
	expect_alloc(90);
}

LEAF void leak_pm(void)
{
	void *p;

	if (je_posix_memalign(&p, 64, 40)) /* site(leak_pm) */
		_exit(99);
	kept[nkept++] = p;
	expect_alloc(40);
}

LEAF void drop_each(void)
{
	void *p = je_malloc(5);

	expect_alloc(5);
	je_free(p);
	expect_free(5);
	p = je_mallocx(6, 0);
	expect_alloc(6);
	je_dallocx(p, 0);
	expect_free(6);
	p = je_mallocx(7, 0);
	expect_alloc(7);
	je_sdallocx(p, 7, 0);
	expect_free(7);
}

int main(void)
{
	leak_je(); /* call(leak_je) */
	leak_jec(); /* call(leak_jec) */
	grow_je(); /* call(grow_je) */
	leak_jex(); /* call(leak_jex) */
	grow_jerx(); /* call(grow_jerx) */
	leak_pm(); /* call(leak_pm) */
	drop_each();
	expect_site("je_malloc", 1, 50, "leak_je,main");
	expect_site("je_calloc", 1, 21, "leak_jec,main");
	expect_site("je_realloc", 1, 300, "grow_je,main");
	expect_site("je_mallocx", 1, 70, "leak_jex,main");
	expect_site("je_rallocx", 1, 90, "grow_jerx,main");
	expect_site("je_posix_memalign", 1, 40, "leak_pm,main");
	expect_summary(&expect_tracked);
	return 0;
}
