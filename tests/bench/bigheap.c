// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark workload for the inventory of the heap at attach: allocate COUNT blocks (default
 * 1000000) of 16..184 bytes and free every 5th, so the heap holds COUNT chunks (a fifth of them
 * free, in the tcache and the fastbins), write "ready" and wait until standard input closes.
 *
 *	bigheap [COUNT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 1000000;
	void **keep = malloc(count * sizeof(*keep));
	char c;

	if (!keep)
		return 1;
	for (long i = 0; i < count; i++)
		if (!(keep[i] = malloc(16 + (i * 8) % 176)))
			return 1;
	for (long i = 0; i < count; i += 5)
		free(keep[i]);
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
