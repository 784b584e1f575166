// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark workload: THREADS threads (default 4) each making COUNT malloc/free pairs
 * (default 50000) through a small call chain and a per-thread ring of live blocks.
 *
 *	threads [THREADS [COUNT]]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define RING 64
#define MAX_THREADS 64
#define NOIPA __attribute__((noipa))

static long count = 50000;

NOIPA static int leaf(void **ring, long i)
{
	void **slot = &ring[i % RING];

	free(*slot);
	*slot = malloc(24 + (i % 32) * 16);
	if (!*slot)
		return -1;
	*(volatile char *)*slot = (char)i;
	return 0;
}

NOIPA static int middle(void **ring, long i) { return leaf(ring, i) + 0; }
NOIPA static int outer(void **ring, long i) { return middle(ring, i) | 0; }

static void *worker(void *arg)
{
	void *ring[RING] = { 0 };

	(void)arg;
	for (long n = 0; n < count; n++)
		if (outer(ring, n))
			return (void *)1;
	for (int s = 0; s < RING; s++)
		free(ring[s]);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tid[MAX_THREADS];
	int nthreads = argc > 1 ? atoi(argv[1]) : 4;
	int failed = 0;

	if (argc > 2)
		count = atol(argv[2]);
	if (nthreads < 1 || nthreads > MAX_THREADS)
		return 2;
	for (int t = 0; t < nthreads; t++)
		if (pthread_create(&tid[t], NULL, worker, NULL))
			return 1;
	for (int t = 0; t < nthreads; t++) {
		void *ret;

		pthread_join(tid[t], &ret);
		failed |= ret != NULL;
	}
	return failed;
}
