// SPDX-License-Identifier: GPL-2.0-only
/*
 * cxx: C++ allocations. Frame 0 is the operator (new, new[]; the malloc libstdc++'s operator new
 * calls is not counted again); containers reach it through allocator templates, so those chains
 * start "*" (the vector's is 10 frames deep at -O0, so the tests use a large --depth); delete and
 * delete[] are counted as frees (not again by the free they call). Known to leave live, from
 * these extern "C" functions
 * (plain names in any symboliser):
 *   leak_objects       3 x new Obj (40 bytes)                        120
 *   leak_array         new int[25]                                    100
 *   leak_res_array     new Res[4]: 4 x 24 plus the 8-byte array cookie of a type with a destructor
 *                      (32-bit arm: 4 x 12 plus 8)
 *   make_vector        2 x new std::vector<int> (24 bytes)            48
 *   push_one <- push_ints <- grow_vector: push_back of 100 ints, the last capacity x 4 (libstdc++
 *                      doubles: 128 x 4 = 512; 8 blocks made, 7 freed)
 *   reserve_vector     reserve(1000), then 1000 push_back: one block  4000
 *   make_string        new std::string (32 bytes, short: no buffer)   32
 *   fill_string        assign(100, 'x'): capacity + 1                 101
 * and churn() news and deletes objects, arrays and strings. No iostream, no stdio: the only other
 * block is libstdc++'s emergency exception pool (eh_alloc.cc, about 72 KiB), made by malloc from a
 * constructor before main and live at exit; its frames do not reach main. The totals it prints
 * leave that block out; the tests add it.
 */
#include <new>
#include <string>
#include <vector>

#include "expect.h"

#define LEAF extern "C" __attribute__((noipa))

struct Obj {
	long a[5];
};

struct Res {
	long a[3];
	~Res();
};

Res::~Res()
{
	keep(this);
}

static void *volatile kept[64];
static unsigned nkept;

static void hold(void *p)
{
	kept[nkept++] = p;
}

LEAF void leak_objects(void)
{
	for (int i = 0; i < 3; i++) {
		Obj *o = new Obj(); /* site(leak_objects) */

		expect_alloc(sizeof(Obj));
		hold(o);
	}
}

LEAF void leak_array(void)
{
	int *a = new int[25]; /* site(leak_array) */

	expect_alloc(25 * sizeof(int));
	hold(a);
}

/*
 * The Itanium C++ ABI stores the element count before an array of a type with a destructor, in
 * max(sizeof(size_t), alignof(T)) bytes; the ARM C++ ABI (32-bit arm) stores the element size and
 * the count, 8 bytes.
 */
#if defined(__arm__)
#define ARRAY_COOKIE 8UL
#else
#define ARRAY_COOKIE (sizeof(size_t) > alignof(Res) ? sizeof(size_t) : alignof(Res))
#endif

LEAF void leak_res_array(void)
{
	Res *r = new Res[4]; /* site(leak_res_array) */

	expect_alloc(4 * sizeof(Res) + ARRAY_COOKIE);
	hold(r);
}

LEAF std::vector<int> *make_vector(void)
{
	std::vector<int> *v = new std::vector<int>(); /* site(make_vector) */

	expect_alloc(sizeof(*v));
	hold(v);
	return v;
}

LEAF void push_one(std::vector<int> *v, int i);

/* Push n ints; each change of capacity is a new block and the old one freed (after the copy). */
LEAF void push_ints(std::vector<int> *v, int n, void (*push)(std::vector<int> *, int))
{
	for (int i = 0; i < n; i++) {
		size_t old = v->capacity();

		push(v, i);
		if (v->capacity() != old) {
			expect_alloc(v->capacity() * sizeof(int));
			if (old)
				expect_free(old * sizeof(int));
		}
	}
}

LEAF void push_one(std::vector<int> *v, int i)
{
	v->push_back(i); /* site(push_one) */
}

LEAF void grow_vector(std::vector<int> *v)
{
	push_ints(v, 100, push_one);
}

LEAF void reserve_vector(std::vector<int> *v)
{
	v->reserve(1000); /* site(reserve_vector) */
	expect_alloc(1000 * sizeof(int));
	push_ints(v, 1000, push_one);
}

LEAF std::string *make_string(void)
{
	std::string *s = new std::string(); /* site(make_string) */

	expect_alloc(sizeof(*s));
	hold(s);
	return s;
}

LEAF void fill_string(std::string *s)
{
	s->assign(100, 'x'); /* site(fill_string) */
	expect_alloc(s->capacity() + 1);
}

/* Everything here is freed again. */
LEAF void churn(void)
{
	for (int i = 0; i < 50; i++) {
		Obj *o = new Obj();
		int *a = new int[10];

		keep(o);
		keep(a);
		delete o;
		delete[] a;
		expect_alloc(sizeof(Obj));
		expect_alloc(10 * sizeof(int));
		expect_free(sizeof(Obj));
		expect_free(10 * sizeof(int));
	}
	{
		std::string t(200, 'y');
		size_t cap = t.capacity();

		expect_alloc(cap + 1);
		keep(t.data());
		expect_free(cap + 1);
	}
}

int main(void)
{
	std::vector<int> *grown, *reserved;
	std::string *s;

	leak_objects();
	leak_array();
	leak_res_array();
	grown = make_vector();
	grow_vector(grown);
	reserved = make_vector();
	reserve_vector(reserved);
	s = make_string();
	fill_string(s);
	churn();

	expect_site("new", 3, 3 * sizeof(Obj), "leak_objects,main");
	expect_site("new[]", 1, 25 * sizeof(int), "leak_array,main");
	expect_site("new[]", 1, 4 * sizeof(Res) + ARRAY_COOKIE, "leak_res_array,main");
	expect_site("new", 2, 2 * sizeof(std::vector<int>), "make_vector,main");
	expect_site("new", 1, grown->capacity() * sizeof(int),
		    "*,push_one,push_ints,grow_vector,main");
	/* reserve_vector's block comes from reserve(); push_one never grows it */
	expect_site("new", 1, reserved->capacity() * sizeof(int), "*,reserve_vector,main");
	expect_site("new", 1, sizeof(std::string), "make_string,main");
	expect_site("new", 1, s->capacity() + 1, "*,fill_string,main");
	expect_summary(&expect_tracked);
	return 0;
}
