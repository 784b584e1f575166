// SPDX-License-Identifier: GPL-2.0-only
/*
 * family: every function of the malloc family, each kept result made in its own leaf function
 * (so each is its own backtrace, frame 1 = the leaf, frame 2 = main). Known to leave live:
 *   leak_malloc          malloc(101)                      101
 *   leak_malloc0         malloc(0)                        0 (a block all the same)
 *   leak_calloc          calloc(7, 13)                    91 = nmemb * size
 *   grow_realloc         malloc(10), then realloc to 100, 1000, 3000, 5000 on one line: 5000 live
 *                        from realloc; 4 frees; peak of that backtrace 1 block, 5000 bytes
 *   leak_realloc_null    realloc(NULL, 202), through a volatile pointer so gcc cannot make it a
 *                        malloc; glibc tail-jumps into malloc, heaptrace counts it once, as realloc
 *   leak_reallocarray_null reallocarray(NULL, 3, 50)      150, counted once, as reallocarray
 *   grow_reallocarray    malloc(8), then reallocarray(p, 4, 100): 400
 *   leak_posix_memalign16 posix_memalign(&p, 16, 48)      48 (glibc calls malloc inside)
 *   leak_posix_memalign4k posix_memalign(&p, 4096, 505)   505
 *   leak_aligned_alloc   aligned_alloc(64, 512)           512 (memalign or aligned_alloc)
 *   leak_aligned_alloc16 aligned_alloc(16, 96)            96 (glibc tail-jumps into malloc)
 *   leak_memalign        memalign(128, 606)               606 (memalign or aligned_alloc)
 *   leak_valloc          valloc(707)                      707 = the argument
 *   leak_pvalloc         pvalloc(808)                     808 = the argument (glibc only: musl has
 *                        no pvalloc)
 * and it frees one block of each kind again, calls free(NULL) (counts nothing), realloc(p, 0)
 * (frees p; glibc returns NULL), and makes calls that fail (malloc and calloc too big, realloc too
 * big, posix_memalign with a bad alignment), which count nothing. No stdio; the totals it prints
 * are exact. The live sites are printed with HEAPTRACE_EXPECT (see expect.h).
 * musl_family.c builds this file with musl (musl's memalign, posix_memalign and valloc call its
 * aligned_alloc, calloc calls malloc, reallocarray calls realloc: each counted once, as the outer
 * call).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

#include "expect.h"

#define LEAF __attribute__((noipa))

/* Calls gcc cannot fold: realloc(NULL, n) would become malloc(n) at the call site. */
static void *(*volatile realloc_fn)(void *, size_t) = realloc;
static volatile size_t huge = SIZE_MAX / 2;

static void *volatile kept[32];
static unsigned nkept;

static void hold(void *p)
{
	kept[nkept++] = p;
}

LEAF void leak_malloc(void)
{
	hold(malloc(101)); /* site(leak_malloc) */
	expect_alloc(101);
}

LEAF void leak_malloc0(void)
{
	void *p = malloc(0); /* site(leak_malloc0) */

	if (p) /* glibc returns a unique block */
		expect_alloc(0);
	hold(p);
}

LEAF void leak_calloc(void)
{
	hold(calloc(7, 13)); /* site(leak_calloc) */
	expect_alloc(7 * 13);
}

LEAF void grow_realloc(void)
{
	static const size_t sizes[] = { 100, 1000, 3000, 5000 };
	size_t old = 10, i;
	char *p = malloc(old);

	expect_alloc(old);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		p = realloc(p, sizes[i]); /* site(grow_realloc) */
		expect_free(old);
		expect_alloc(sizes[i]);
		old = sizes[i];
	}
	hold(p);
}

LEAF void leak_realloc_null(void)
{
	hold(realloc_fn(NULL, 202)); /* site(leak_realloc_null) */
	expect_alloc(202);
}

LEAF void leak_reallocarray_null(void)
{
	hold(reallocarray(NULL, 3, 50)); /* site(leak_reallocarray_null) */
	expect_alloc(150);
}

LEAF void grow_reallocarray(void)
{
	void *p = malloc(8);

	expect_alloc(8);
	p = reallocarray(p, 4, 100); /* site(grow_reallocarray) */
	expect_free(8);
	expect_alloc(400);
	hold(p);
}

LEAF void leak_posix_memalign16(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 16, 48) == 0) /* site(leak_posix_memalign16) */
		expect_alloc(48);
	hold(p);
}

LEAF void leak_posix_memalign4k(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, 505) == 0) /* site(leak_posix_memalign4k) */
		expect_alloc(505);
	hold(p);
}

LEAF void leak_aligned_alloc(void)
{
	hold(aligned_alloc(64, 512)); /* site(leak_aligned_alloc) */
	expect_alloc(512);
}

LEAF void leak_aligned_alloc16(void)
{
	hold(aligned_alloc(16, 96)); /* site(leak_aligned_alloc16) */
	expect_alloc(96);
}

LEAF void leak_memalign(void)
{
	hold(memalign(128, 606)); /* site(leak_memalign) */
	expect_alloc(606);
}

LEAF void leak_valloc(void)
{
	hold(valloc(707)); /* site(leak_valloc) */
	expect_alloc(707);
}

#ifdef __GLIBC__
LEAF void leak_pvalloc(void)
{
	hold(pvalloc(808)); /* site(leak_pvalloc) */
	expect_alloc(808);
}
#endif

/* One block of each kind, freed again. */
LEAF void free_each(void)
{
	void *p;

	p = malloc(11);
	keep(p);
	free(p);
	p = calloc(3, 5);
	keep(p);
	free(p);
	p = realloc_fn(NULL, 12);
	p = realloc(p, 1200);
	keep(p);
	free(p);
	p = reallocarray(NULL, 2, 7);
	keep(p);
	free(p);
	if (posix_memalign(&p, 32, 13) == 0)
		free(p);
	p = aligned_alloc(256, 256);
	keep(p);
	free(p);
	p = memalign(64, 14);
	keep(p);
	free(p);
	p = valloc(15);
	keep(p);
	free(p);
#ifdef __GLIBC__
	p = pvalloc(16);
	keep(p);
	free(p);
	expect_alloc(16);
	expect_free(16);
#endif
	/* 9 allocations and 9 frees (the moving realloc is one of each), in this order */
	expect_alloc(11);
	expect_free(11);
	expect_alloc(15);
	expect_free(15);
	expect_alloc(12);
	expect_free(12);
	expect_alloc(1200);
	expect_free(1200);
	expect_alloc(14);
	expect_free(14);
	expect_alloc(13);
	expect_free(13);
	expect_alloc(256);
	expect_free(256);
	expect_alloc(14);
	expect_free(14);
	expect_alloc(15);
	expect_free(15);
}

/* realloc(p, 0): glibc frees p and returns NULL (one allocation, one free). */
LEAF void free_by_realloc0(void)
{
	void *p = malloc(303), *r;

	expect_alloc(303);
	keep(p);
	r = realloc_fn(p, 0);
	expect_free(303);
	if (r) { /* a C library that returns a block instead */
		expect_alloc(0);
		free(r);
		expect_free(0);
	}
}

LEAF void free_null(void)
{
	free(NULL);
}

/* Calls that return no block count nothing. */
LEAF void failing_calls(void)
{
	void *p, *q;

	p = malloc(huge);
	keep(p);
	p = calloc(huge, 4); /* nmemb * size overflows */
	keep(p);
	p = NULL;
	if (posix_memalign(&p, 3, 10) != EINVAL)
		_exit(99);
	p = malloc(32);
	expect_alloc(32);
	q = realloc(p, huge); /* fails: p stays as it was */
	if (q)
		_exit(99);
	free(p);
	expect_free(32);
}

int main(void)
{
	leak_malloc();
	leak_malloc0();
	leak_calloc();
	grow_realloc();
	leak_realloc_null();
	leak_reallocarray_null();
	grow_reallocarray();
	leak_posix_memalign16();
	leak_posix_memalign4k();
	leak_aligned_alloc();
	leak_aligned_alloc16();
	leak_memalign();
	leak_valloc();
#ifdef __GLIBC__
	leak_pvalloc();
#endif
	free_each();
	free_by_realloc0();
	free_null();
	failing_calls();

	expect_site("malloc", 1, 101, "leak_malloc,main");
	expect_site("malloc", 1, 0, "leak_malloc0,main");
	expect_site("calloc", 1, 91, "leak_calloc,main");
	expect_site_peak("realloc", 1, 5000, 1, 5000, 4, "grow_realloc,main");
	expect_site_peak("realloc", 1, 202, 1, 202, 1, "leak_realloc_null,main");
	expect_site_peak("reallocarray", 1, 150, 1, 150, 1, "leak_reallocarray_null,main");
	expect_site("reallocarray", 1, 400, "grow_reallocarray,main");
	expect_site_peak("posix_memalign", 1, 48, 1, 48, 1, "leak_posix_memalign16,main");
	expect_site("posix_memalign", 1, 505, "leak_posix_memalign4k,main");
	expect_site("aligned_alloc", 1, 512, "leak_aligned_alloc,main");
	expect_site_peak("aligned_alloc", 1, 96, 1, 96, 1, "leak_aligned_alloc16,main");
	expect_site("memalign", 1, 606, "leak_memalign,main");
	expect_site("valloc", 1, 707, "leak_valloc,main");
#ifdef __GLIBC__
	expect_site("pvalloc", 1, 808, "leak_pvalloc,main");
#endif
	expect_summary(&expect_tracked);
	return 0;
}
