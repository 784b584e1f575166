/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A C++ program linked with a replacement allocator: jemalloc_ops.cc, tcmalloc_ops.cc and
 * mimalloc_ops.cc include this file with VENDOR_JEMALLOC, VENDOR_TCMALLOC or VENDOR_MIMALLOC
 * defined (tests/targets/Makefile links each with its library, before libstdc++, so the
 * library's malloc, free, operator new and operator delete are the ones the program uses).
 * Each kept block is made in its own extern "C" leaf (frame 1). Known to leave live:
 *   leak_new         new Obj                        40  (the library's operator new)
 *   leak_new_array   new int[30]                    120
 *   leak_malloc      malloc(101)                    101 (the library's malloc)
 *   leak_calloc      calloc(9, 11)                  99
 *   grow_realloc     malloc(10), realloc to 2000    2000 (1 free)
 * and, per library, its own entry points. Frame 0 is the entry point the program called, or
 * where several names share one address, the first of them in heaptrace's list (src/hooks.c:
 * malloc before mi_malloc and tc_malloc, operator new before operator new[], tc_new and mi_new):
 * tcmalloc's and mimalloc's operator new[] is their operator new, so new[] shows as new.
 *   jemalloc  leak_mallocx     mallocx(300, MALLOCX_ZERO)                 300
 *             grow_rallocx     mallocx(64), rallocx to 4096               4096 (1 free)
 *             shrink_xallocx   mallocx(4096), xallocx to 1000: in place   1000 (1 free, as
 *                              realloc counts it, and the block is xallocx's; jemalloc returns
 *                              at least 1000), then xallocx to 1 GiB: fails, counts nothing
 *   tcmalloc  leak_skip        tc_malloc_skip_new_handler(77)             77
 *             leak_tc_new      tc_new(55) (operator new)                  55
 *   mimalloc  leak_zalloc      mi_zalloc(33)                              33
 *             leak_mallocn     mi_mallocn(5, 12)                          60
 *             grow_reallocn    mi_malloc(8), mi_reallocn(p, 10, 40)       400 (1 free)
 *             leak_aligned     mi_malloc_aligned(200, 256)                200
 *             leak_new_n       mi_new_n(3, 16)                            48
 * and free_each() makes and releases a block with every other entry point: delete, delete[],
 * free; jemalloc's sdallocx and dallocx; tcmalloc's tc_free, tc_free_sized, tc_delete_sized;
 * mimalloc's mi_free, mi_free_size, mi_reallocf that fails (it frees its block), mi_expand.
 * Queries (malloc_usable_size, sallocx, nallocx, tc_malloc_size, mi_usable_size) count nothing.
 * What the library, libstdc++ and the C library do on their own (libstdc++'s emergency exception
 * pool, tcmalloc's setenv at start-up, ...) is not in the records: with the argument "idle" the
 * program does nothing in main, and the tests take that run's figures as the baseline.
 */
#include <malloc.h>
#include <new>
#include <stdint.h>
#include <stdlib.h>

#if defined(VENDOR_JEMALLOC)
#include <jemalloc/jemalloc.h>
#elif defined(VENDOR_TCMALLOC)
#include <gperftools/tcmalloc.h>
#elif defined(VENDOR_MIMALLOC)
#include <mimalloc.h>
#endif

#include "expect.h"

#if defined(VENDOR_TCMALLOC) || defined(VENDOR_MIMALLOC)
#define NEW_ARRAY "new" /* an alias of operator new */
#else
#define NEW_ARRAY "new[]"
#endif

#define LEAF extern "C" __attribute__((noipa))

struct Obj {
	long a[5];
};

static void *volatile kept[32];
static unsigned nkept;
/* more than PTRDIFF_MAX on every arch (cxxops.cc) */
static volatile size_t huge = SIZE_MAX / 4 * 3;

static void hold(void *p)
{
	kept[nkept++] = p;
}

LEAF void leak_new(void)
{
	hold(new Obj()); /* site(leak_new) */
	expect_alloc(sizeof(Obj));
}

LEAF void leak_new_array(void)
{
	hold(new int[30]); /* site(leak_new_array) */
	expect_alloc(30 * sizeof(int));
}

LEAF void leak_malloc(void)
{
	hold(malloc(101)); /* site(leak_malloc) */
	expect_alloc(101);
}

LEAF void leak_calloc(void)
{
	hold(calloc(9, 11)); /* site(leak_calloc) */
	expect_alloc(99);
}

LEAF void grow_realloc(void)
{
	void *p = malloc(10);

	expect_alloc(10);
	p = realloc(p, 2000); /* site(grow_realloc) */
	expect_free(10);
	expect_alloc(2000);
	hold(p);
}

#if defined(VENDOR_JEMALLOC)
LEAF void leak_mallocx(void)
{
	hold(mallocx(300, MALLOCX_ZERO)); /* site(leak_mallocx) */
	expect_alloc(300);
}

LEAF void grow_rallocx(void)
{
	void *p = mallocx(64, 0);

	expect_alloc(64);
	p = rallocx(p, 4096, 0); /* site(grow_rallocx) */
	expect_free(64);
	expect_alloc(4096);
	hold(p);
}

LEAF void shrink_xallocx(void)
{
	void *p = mallocx(4096, 0);

	expect_alloc(4096);
	if (xallocx(p, 1000, 0, 0) < 1000) /* site(shrink_xallocx) */
		_exit(99);
	expect_free(4096);
	expect_alloc(1000);
	if (xallocx(p, 1 << 30, 0, 0) >= 1 << 30) /* cannot grow in place: counts nothing */
		_exit(99);
	hold(p);
}

LEAF void vendor_leaks(void)
{
	leak_mallocx();
	grow_rallocx();
	shrink_xallocx();
	expect_site("mallocx", 1, 300, "leak_mallocx,vendor_leaks,main");
	expect_site("rallocx", 1, 4096, "grow_rallocx,vendor_leaks,main");
	expect_site("xallocx", 1, 1000, "shrink_xallocx,vendor_leaks,main");
}

LEAF void vendor_frees(void)
{
	void *p = mallocx(50, 0);

	keep(p);
	keep(sallocx(p, 0) + nallocx(50, 0) + malloc_usable_size(p));
	sdallocx(p, 50, 0);
	p = mallocx(60, 0);
	keep(p);
	dallocx(p, 0);
	expect_alloc(50);
	expect_free(50);
	expect_alloc(60);
	expect_free(60);
}
#elif defined(VENDOR_TCMALLOC)
LEAF void leak_skip(void)
{
	hold(tc_malloc_skip_new_handler(77)); /* site(leak_skip) */
	expect_alloc(77);
}

LEAF void leak_tc_new(void)
{
	hold(tc_new(55)); /* site(leak_tc_new) */
	expect_alloc(55);
}

LEAF void vendor_leaks(void)
{
	leak_skip();
	leak_tc_new();
	expect_site("tc_malloc_skip_new_handler", 1, 77, "leak_skip,vendor_leaks,main");
	expect_site("new", 1, 55, "leak_tc_new,vendor_leaks,main");
}

LEAF void vendor_frees(void)
{
	void *p = tc_malloc(50);

	keep(p);
	keep(tc_malloc_size(p));
	tc_free(p);
	p = tc_malloc(60);
	keep(p);
	tc_free_sized(p, 60);
	p = tc_newarray(70);
	keep(p);
	tc_deletearray_sized(p, 70);
	expect_alloc(50);
	expect_free(50);
	expect_alloc(60);
	expect_free(60);
	expect_alloc(70);
	expect_free(70);
}
#elif defined(VENDOR_MIMALLOC)
LEAF void leak_zalloc(void)
{
	hold(mi_zalloc(33)); /* site(leak_zalloc) */
	expect_alloc(33);
}

LEAF void leak_mallocn(void)
{
	hold(mi_mallocn(5, 12)); /* site(leak_mallocn) */
	expect_alloc(60);
}

LEAF void grow_reallocn(void)
{
	void *p = mi_malloc(8);

	expect_alloc(8);
	p = mi_reallocn(p, 10, 40); /* site(grow_reallocn) */
	expect_free(8);
	expect_alloc(400);
	hold(p);
}

LEAF void leak_aligned(void)
{
	hold(mi_malloc_aligned(200, 256)); /* site(leak_aligned) */
	expect_alloc(200);
}

LEAF void leak_new_n(void)
{
	hold(mi_new_n(3, 16)); /* site(leak_new_n) */
	expect_alloc(48);
}

LEAF void vendor_leaks(void)
{
	leak_zalloc();
	leak_mallocn();
	grow_reallocn();
	leak_aligned();
	leak_new_n();
	expect_site("mi_zalloc", 1, 33, "leak_zalloc,vendor_leaks,main");
	expect_site("mi_mallocn", 1, 60, "leak_mallocn,vendor_leaks,main");
	expect_site("mi_reallocn", 1, 400, "grow_reallocn,vendor_leaks,main");
	expect_site("mi_malloc_aligned", 1, 200, "leak_aligned,vendor_leaks,main");
	expect_site("mi_new_n", 1, 48, "leak_new_n,vendor_leaks,main");
}

LEAF void vendor_frees(void)
{
	void *p = mi_malloc(50), *q;

	keep(p);
	keep(mi_usable_size(p));
	mi_free(p);
	p = mi_malloc(60);
	keep(p);
	mi_free_size(p, 60);
	p = mi_malloc(70);
	q = mi_expand(p, 64); /* in place, smaller: the same block */
	if (q != p)
		_exit(99);
	q = mi_reallocf(p, huge); /* fails, and frees p */
	if (q)
		_exit(99);
	expect_alloc(50);
	expect_free(50);
	expect_alloc(60);
	expect_free(60);
	expect_alloc(70);
	expect_free(70);
	expect_alloc(64);
	expect_free(64);
}
#endif

LEAF void free_each(void)
{
	Obj *o = new Obj();
	int *a = new int[5];
	void *p = malloc(40);

	keep(o);
	keep(a);
	keep(p);
	delete o;
	delete[] a;
	free(p);
	expect_alloc(sizeof(Obj));
	expect_free(sizeof(Obj));
	expect_alloc(5 * sizeof(int));
	expect_free(5 * sizeof(int));
	expect_alloc(40);
	expect_free(40);
	vendor_frees();
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "idle"))
		return 0; /* what the library and libstdc++ do on their own, for the tests */
	leak_new();
	leak_new_array();
	leak_malloc();
	leak_calloc();
	grow_realloc();
	free_each();
	vendor_leaks();

	expect_site("new", 1, sizeof(Obj), "leak_new,main");
	expect_site(NEW_ARRAY, 1, 30 * sizeof(int), "leak_new_array,main");
	expect_site("malloc", 1, 101, "leak_malloc,main");
	expect_site("calloc", 1, 99, "leak_calloc,main");
	expect_site("realloc", 1, 2000, "grow_realloc,main");
	expect_summary(&expect_tracked);
	return 0;
}
