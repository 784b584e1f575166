// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark workload: CALLERS x 100 distinct live backtraces (default 1000 x 100 = 100000).
 * Each of 1000 cases of caller()'s switch calls leaf() from its own call site, and each of
 * leaf()'s 100 cases calls malloc from its own call site; every combination is made once
 * and kept live until exit. Build at -O0 so that no two call sites are merged.
 *
 *	many_bt [CALLERS]
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define X10(m) m() m() m() m() m() m() m() m() m() m()
#define X100(m) X10(m) X10(m) X10(m) X10(m) X10(m) X10(m) X10(m) X10(m) X10(m) X10(m)
#define X1000(m) X100(m) X100(m) X100(m) X100(m) X100(m) X100(m) X100(m) X100(m) X100(m) X100(m)
/* __COUNTER__ numbers the cases 0, 1, 2... from the enum's value on. */
#define LEAF_CASE() case __COUNTER__ - LEAF0: return malloc(16);
#define CALLER_CASE() case __COUNTER__ - CALLER0: return leaf(site);

enum { LEAF0 = __COUNTER__ + 1 };
NOINLINE static void *leaf(int site)
{
	switch (site) {
	X100(LEAF_CASE)
	}
	return NULL;
}

enum { CALLER0 = __COUNTER__ + 1 };
NOINLINE static void *caller(int caller, int site)
{
	switch (caller) {
	X1000(CALLER_CASE)
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int callers = argc > 1 ? atoi(argv[1]) : 1000;

	if (callers < 0 || callers > 1000)
		return 2;
	for (int c = 0; c < callers; c++)
		for (int s = 0; s < 100; s++)
			if (!caller(c, s))
				return 1;
	return 0; /* exit with every block live */
}
