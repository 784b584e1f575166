// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark workload: malloc/free pairs from a call chain 8 deep, each level its own
 * function (noipa: never inlined, cloned or turned into a tail call, even at -O2).
 *
 *	churn [--stop] [COUNT]
 *
 * COUNT pairs (default 200000) through a ring of RING slots: each call frees the block
 * made RING calls ago and allocates a new one of 16..520 bytes. --stop raises SIGSTOP
 * once libc is loaded and before the loop, the handshake floor.c waits for.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define RING 256
#define NOIPA __attribute__((noipa))

static void *ring[RING];

NOIPA static int level8(long i)
{
	void **slot = &ring[i % RING];
	size_t size = 16 + (i % 64) * 8;

	free(*slot);
	*slot = malloc(size);
	if (!*slot)
		return -1;
	*(volatile char *)*slot = (char)i; /* keep the pair from being optimised away */
	return 0;
}

NOIPA static int level7(long i) { return level8(i) + 0; }
NOIPA static int level6(long i) { return level7(i) | 0; }
NOIPA static int level5(long i) { return level6(i) + 0; }
NOIPA static int level4(long i) { return level5(i) | 0; }
NOIPA static int level3(long i) { return level4(i) + 0; }
NOIPA static int level2(long i) { return level3(i) | 0; }
NOIPA static int level1(long i) { return level2(i) + 0; }

int main(int argc, char **argv)
{
	long count = 200000;
	int i = 1;

	if (i < argc && !strcmp(argv[i], "--stop")) {
		raise(SIGSTOP);
		i++;
	}
	if (i < argc)
		count = atol(argv[i]);
	for (long n = 0; n < count; n++)
		if (level1(n))
			return 1;
	for (int s = 0; s < RING; s++)
		free(ring[s]);
	return 0;
}
