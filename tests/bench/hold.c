// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark workload: allocate COUNT blocks (default 1000000) of 16..64 bytes from four
 * call sites and keep them all live until exit, for heaptrace's memory per live block.
 *
 *	hold [COUNT]
 */
#include <stdlib.h>

/* Touching the block keeps malloc from being a tail call: each site is its own frame. */
#define SITE(n, size)                                                    \
	__attribute__((noipa)) static void *site##n(void)               \
	{                                                                \
		char *p = malloc(size);                                  \
		if (p)                                                   \
			*(volatile char *)p = 1;                         \
		return p;                                                \
	}
SITE(0, 16)
SITE(1, 24)
SITE(2, 40)
SITE(3, 64)

int main(int argc, char **argv)
{
	static void *(*const site[])(void) = { site0, site1, site2, site3 };
	long count = argc > 1 ? atol(argv[1]) : 1000000;
	void **keep = malloc(count * sizeof(*keep));

	if (!keep)
		return 1;
	for (long i = 0; i < count; i++)
		if (!(keep[i] = site[i % 4]()))
			return 1;
	return 0; /* exit with every block live */
}
