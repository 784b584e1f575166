// SPDX-License-Identifier: GPL-2.0-only
/*
 * cxxunwind: backtraces through C++ functions that have a personality routine (a try block, or
 * a local with a destructor to run when an exception passes). Such a function's CIE names the
 * routine through a pointer in the executable's .data (DW.ref.__gxx_personality_v0); an
 * unwinder that cannot read it cannot step past the function. Each chain also passes through a
 * function built without a frame pointer (no_fp): the stack scan that takes over from the
 * unwinder finds it and main, but no frame after main (the C library's start code), which the
 * test requires. Known to leave live, from these extern "C" functions:
 *   in_try <- no_fp_try <- main        2 x new Obj (40 bytes), inside a try block    80
 *   leaf_new <- with_dtor <- no_fp_dtor <- main
 *                                      3 x new Obj, called with a Guard alive       120
 * and it deletes one more Obj made in in_try. No stdio; the only other block is libstdc++'s
 * emergency exception pool (see cxx.cc), which the tests add.
 */
#include <new>

#include "expect.h"

#define LEAF extern "C" __attribute__((noipa))
#define NO_FP extern "C" __attribute__((noipa, optimize("omit-frame-pointer")))

struct Obj {
	long a[5];
};

struct Guard {
	int n;
	~Guard();
};

__attribute__((noipa)) Guard::~Guard()
{
	keep(this);
}

LEAF Obj *in_try(void)
{
	Obj *o = nullptr;

	try {
		o = new Obj(); /* site(in_try) */
		expect_alloc(sizeof(Obj));
	} catch (...) {
		_exit(99);
	}
	return o;
}

NO_FP void no_fp_try(Obj **out, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = in_try();
}

LEAF Obj *leaf_new(void)
{
	Obj *o = new Obj(); /* site(leaf_new) */

	expect_alloc(sizeof(Obj));
	return o;
}

LEAF Obj *with_dtor(void)
{
	Guard g = { 1 };

	keep(&g);
	return leaf_new(); /* call(leaf_new) */
}

NO_FP void no_fp_dtor(Obj **out, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = with_dtor();
}

int main(void)
{
	static Obj *kept[8];

	no_fp_try(kept, 3);
	delete kept[2];
	expect_free(sizeof(Obj));
	no_fp_dtor(kept + 2, 3);
	for (int i = 0; i < 5; i++)
		keep(kept[i]);

	expect_site("new", 2, 2 * sizeof(Obj), "in_try,no_fp_try,main");
	expect_site("new", 3, 3 * sizeof(Obj), "leaf_new,with_dtor,no_fp_dtor,main");
	expect_summary(&expect_tracked);
	return 0;
}
