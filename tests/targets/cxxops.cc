// SPDX-License-Identifier: GPL-2.0-only
/*
 * cxxops: every form of C++'s operator new and operator delete, and operator new throwing.
 * Frame 0 is the operator ("new" or "new[]" in the records, whatever its form); each form is
 * made in its own extern "C" leaf, frame 1. Known to leave live:
 *   leak_nothrow           new (std::nothrow) Obj                      40
 *   leak_array_nothrow     new (std::nothrow) int[10]                  40
 *   leak_aligned           new Big (alignas(64): the aligned form)     128
 *   leak_array_aligned     new Big[2] (aligned, no cookie)             256
 *   leak_aligned_nothrow   new (std::nothrow) Big                      128
 *   leak_array_aligned_nothrow operator new[](80, align_val_t(64), nothrow)  80
 *   leak_explicit          operator new(50)                            50
 * and free_each() makes and releases a block with each form of operator delete: plain, array,
 * sized (what g++ calls for delete of a complete type), nothrow, aligned, sized and aligned;
 * every form of new in it is counted once, not again by the malloc, aligned_alloc or
 * posix_memalign libstdc++ calls inside, and every delete once, not again by the free it calls.
 * libstdc++'s emergency exception pool (72 KiB, a malloc from a constructor before main) is live
 * at exit as in cxx.cc: the tests add it.
 *
 * With the argument "throw" it runs throw_some() instead, which makes operator new fail:
 * new char[huge] throws std::bad_alloc three times and Big's operator new[] (the aligned form)
 * asked for 15/16 of the address space once (more than any process can map: a new-expression
 * cannot ask above PTRDIFF_MAX, and 32-bit arm's jemalloc grants the 1 GiB below it that
 * new Big[] could ask), each caught by the caller (heaptrace must give the unwinder the real
 * return address back: without it the program ends in std::terminate); new (std::nothrow)
 * char[huge] returns NULL (libstdc++'s catches what the plain operator new it calls throws); a
 * constructor that throws after its operator new returned makes the compiler call operator
 * delete. Failed calls count nothing.
 * Every throw mallocs its exception object (__cxa_allocate_exception) and the catch frees it:
 *   - throw 42 in Thrower(): 1 allocation and 1 free, with the Thrower's own: 2 and 2;
 *   - the four bad_alloc thrown out of operator new: made inside operator new, a traced call,
 *     so not counted; their frees after the catch are counted in unknown_frees: 4;
 *   - the bad_alloc the nothrow form catches inside itself: made and freed inside it: nothing.
 * jemalloc_cxxops.cc and tcmalloc_cxxops.cc build this file with those libraries, whose operator
 * new throws from its own code; with the argument "idle" it does nothing in main (a baseline for
 * what the library does on its own).
 */
#include <cstdint>
#include <new>

#include "expect.h"

#define LEAF extern "C" __attribute__((noipa))

struct Obj {
	long a[5];
};

struct alignas(64) Big {
	char c[100];
};

struct Thrower {
	long a[3];
	Thrower();
};

__attribute__((noipa)) Thrower::Thrower()
{
	throw 42;
}

static void *volatile kept[32];
static unsigned nkept;
static volatile size_t huge = SIZE_MAX / 2;
static volatile size_t huger = SIZE_MAX / 16 * 15;

static void hold(void *p)
{
	kept[nkept++] = p;
}

LEAF void leak_nothrow(void)
{
	hold(new (std::nothrow) Obj()); /* site(leak_nothrow) */
	expect_alloc(sizeof(Obj));
}

LEAF void leak_array_nothrow(void)
{
	hold(new (std::nothrow) int[10]); /* site(leak_array_nothrow) */
	expect_alloc(10 * sizeof(int));
}

LEAF void leak_aligned(void)
{
	hold(new Big()); /* site(leak_aligned) */
	expect_alloc(sizeof(Big));
}

LEAF void leak_array_aligned(void)
{
	hold(new Big[2]); /* site(leak_array_aligned) */
	expect_alloc(2 * sizeof(Big));
}

LEAF void leak_aligned_nothrow(void)
{
	hold(new (std::nothrow) Big()); /* site(leak_aligned_nothrow) */
	expect_alloc(sizeof(Big));
}

LEAF void leak_array_aligned_nothrow(void)
{
	hold(::operator new[](80, std::align_val_t(64), std::nothrow)); /* site(leak_array_aligned_nothrow) */
	expect_alloc(80);
}

LEAF void leak_explicit(void)
{
	hold(::operator new(50)); /* site(leak_explicit) */
	expect_alloc(50);
}

/* One block per form of operator delete, each released again. */
LEAF void free_each(void)
{
	void *p;
	Obj *o;
	int *a;
	Big *b;

	o = new Obj();
	keep(o);
	delete o; /* sized: operator delete(void *, size_t) */
	a = new int[7];
	keep(a);
	delete[] a; /* operator delete[](void *) (int has no cookie: unsized) */
	b = new Big();
	keep(b);
	delete b; /* operator delete(void *, size_t, align_val_t) */
	b = new Big[3];
	keep(b);
	delete[] b; /* operator delete[](void *, align_val_t) */
	p = ::operator new(33);
	::operator delete(p);
	p = ::operator new[](34, std::nothrow);
	::operator delete[](p, std::nothrow);
	p = ::operator new(35, std::nothrow);
	::operator delete(p, std::nothrow);
	p = ::operator new(36, std::align_val_t(128));
	::operator delete(p, std::align_val_t(128));
	p = ::operator new[](37, std::align_val_t(32));
	::operator delete[](p, 37, std::align_val_t(32));
	p = ::operator new(38, std::align_val_t(32), std::nothrow);
	::operator delete(p, std::align_val_t(32), std::nothrow);
	p = ::operator new[](39);
	::operator delete[](p, 39);
	static const unsigned long sizes[] = { sizeof(Obj), 7 * sizeof(int), sizeof(Big),
					       3 * sizeof(Big), 33, 34, 35, 36, 37, 38, 39 };
	for (unsigned long size : sizes) {
		expect_alloc(size);
		expect_free(size);
	}
}

/* operator new that fails: nothing is counted, and the program catches what it throws. */
LEAF void throw_some(void)
{
	for (int i = 0; i < 3; i++) {
		try {
			char *c = new char[huge];

			keep(c);
			_exit(99);
		} catch (const std::bad_alloc &) {
		}
	}
	try {
		void *b = ::operator new[](huger, std::align_val_t(alignof(Big)));

		keep(b);
		_exit(99);
	} catch (const std::bad_alloc &) {
	}
	if (new (std::nothrow) char[huge])
		_exit(99);
	try {
		Thrower *t = new Thrower(); /* operator new, then operator delete */

		keep(t);
		_exit(99);
	} catch (int) {
		expect_alloc(sizeof(Thrower));
		expect_free(sizeof(Thrower));
	}
}

/* What throw_some() leaves in the summary (see the top of this file). */
static const struct expect_sum throw_sum = { 2, 2, 4, 0, 0, 0, 0, 0, 0 };

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "idle"))
		return 0; /* what libstdc++ and the allocator do on their own, for the tests */
	if (argc > 1 && !strcmp(argv[1], "throw")) {
		throw_some();
		expect_summary(&throw_sum);
		return 0;
	}
	leak_nothrow();
	leak_array_nothrow();
	leak_aligned();
	leak_array_aligned();
	leak_aligned_nothrow();
	leak_array_aligned_nothrow();
	leak_explicit();
	free_each();

	expect_site("new", 1, sizeof(Obj), "leak_nothrow,main");
	expect_site("new[]", 1, 10 * sizeof(int), "leak_array_nothrow,main");
	expect_site("new", 1, sizeof(Big), "leak_aligned,main");
	expect_site("new[]", 1, 2 * sizeof(Big), "leak_array_aligned,main");
	expect_site("new", 1, sizeof(Big), "leak_aligned_nothrow,main");
	expect_site("new[]", 1, 80, "leak_array_aligned_nothrow,main");
	expect_site("new", 1, 50, "leak_explicit,main");
	expect_summary(&expect_tracked);
	return 0;
}
