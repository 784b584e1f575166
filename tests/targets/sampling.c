// SPDX-License-Identifier: GPL-2.0-only
/*
 * sampling: live blocks of known sizes at known sites, for --sample-bytes (heap/table.h:
 * TABLE_SCALED). usage: sampling [PERCENT] (default 100). Each site's count is PERCENT % of
 * its base: small_site() keeps 40000 blocks of 64 bytes, mid_site() 20000 of 1000, of which
 * grow_site() reallocs every other one to 1200 bytes, calloc_site() 10000 of 10 x 30 bytes,
 * big_site() 500 of 8192; churn() makes 100000 malloc/free pairs of 48 bytes in between.
 * The site records say the exact figures; the summary is exact. No stdio.
 */
#include <stdlib.h>

#include "expect.h"

#define NSMALL 40000
#define NMID 20000
#define NCAL 10000
#define NBIG 500
#define NCHURN 100000

__attribute__((noipa)) void *small_site(void)
{
	return malloc(64); /* site(small_site) */
}

__attribute__((noipa)) void *mid_site(void)
{
	return malloc(1000); /* site(mid_site) */
}

__attribute__((noipa)) void *grow_site(void *p)
{
	return realloc(p, 1200); /* site(grow_site) */
}

__attribute__((noipa)) void *calloc_site(void)
{
	return calloc(10, 30); /* site(calloc_site) */
}

__attribute__((noipa)) void *big_site(void)
{
	return malloc(8192); /* site(big_site) */
}

__attribute__((noipa)) void churn(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		void *p = malloc(48);

		keep(p);
		free(p);
	}
}

/* n blocks from site, kept in a new array (itself a live block of main's) */
static void **fill(void *(*site)(void), unsigned long n)
{
	void **v = malloc(n * sizeof(*v));

	if (!v)
		exit(1);
	for (unsigned long i = 0; i < n; i++)
		v[i] = site();
	return v;
}

int main(int argc, char **argv)
{
	unsigned long pc = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;
	unsigned long ns = NSMALL * pc / 100, nm = NMID * pc / 100, nc = NCAL * pc / 100;
	unsigned long nb = NBIG * pc / 100, nchurn = NCHURN * pc / 100, ngrow = nm / 2;
	struct expect_sum sum = { 0 };
	void **small, **mid, **cal, **big;

	small = fill(small_site, ns);
	churn(nchurn);
	mid = fill(mid_site, nm);
	for (unsigned long i = 0; i < nm; i += 2)
		mid[i] = grow_site(mid[i]);
	cal = fill(calloc_site, nc);
	churn(nchurn);
	big = fill(big_site, nb);
	keep(small);
	keep(mid);
	keep(cal);
	keep(big);
	expect_site("malloc", ns, 64 * ns, "small_site,fill,main");
	expect_site("malloc", nm - ngrow, 1000 * (nm - ngrow), "mid_site,fill,main");
	expect_site("realloc", ngrow, 1200 * ngrow, "grow_site,main");
	expect_site("calloc", nc, 300 * nc, "calloc_site,fill,main");
	expect_site("malloc", nb, 8192 * nb, "big_site,fill,main");
	sum.alloc_calls = 4 + ns + nm + ngrow + nc + nb + 2 * nchurn;
	sum.free_calls = 2 * nchurn + ngrow;
	sum.live_blocks = 4 + ns + nm + nc + nb;
	sum.live_bytes = (ns + nm + nc + nb) * sizeof(void *) + 64 * ns +
			 1000 * (nm - ngrow) + 1200 * ngrow + 300 * nc + 8192 * nb;
	expect_summary(&sum);
	return 0;
}
