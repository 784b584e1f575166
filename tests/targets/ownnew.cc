// SPDX-License-Identifier: GPL-2.0-only
/*
 * ownnew: the executable defines its own operator new and delete (on malloc and free), as a
 * program with a pool or a counting allocator does. heaptrace traces the executable's operators
 * (frame 0 "new"; the malloc inside is not counted again) and names them in summary.allocators
 * as "operators of ownnew", next to "glibc". Known to leave live, from these extern "C"
 * functions:
 *   make_objs          3 x new Obj (40 bytes), of 5 made (2 deleted)              120
 * No stdio; the only other block is libstdc++'s emergency exception pool (see cxx.cc), which
 * the tests add.
 */
#include <cstdlib>
#include <new>

#include "expect.h"

#define LEAF extern "C" __attribute__((noipa))

struct Obj {
	long a[5];
};

__attribute__((noipa)) void *operator new(std::size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		throw std::bad_alloc();
	return p;
}

__attribute__((noipa)) void operator delete(void *p) noexcept
{
	free(p);
}

__attribute__((noipa)) void operator delete(void *p, std::size_t) noexcept
{
	free(p);
}

LEAF void make_objs(Obj **out)
{
	for (int i = 0; i < 5; i++) {
		out[i] = new Obj(); /* site(make_objs) */
		expect_alloc(sizeof(Obj));
	}
}

int main(void)
{
	static Obj *kept[5];

	make_objs(kept);
	delete kept[0];
	expect_free(sizeof(Obj));
	delete kept[1];
	expect_free(sizeof(Obj));
	for (int i = 2; i < 5; i++)
		keep(kept[i]);
	expect_site("new", 3, 3 * sizeof(Obj), "make_objs,main");
	expect_summary(&expect_tracked);
	return 0;
}
