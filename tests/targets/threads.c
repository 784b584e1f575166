// SPDX-License-Identifier: GPL-2.0-only
/*
 * threads: a stress test. usage: threads [THREADS [ITERATIONS [KEEP]]] (default 8 100000 10).
 * Each thread waits at a barrier (so all run at once and glibc's thread start-up is the same in
 * every run), then mallocs and frees ITERATIONS blocks of 32 bytes in churn, and keeps KEEP blocks
 * of 48 bytes from keep_block <- worker (never freed). main joins them all. No stdio.
 * The program's own calls are THREADS * (ITERATIONS + KEEP) allocations, THREADS * ITERATIONS
 * frees, THREADS * KEEP live blocks of 48 bytes. pthread_create and thread exit allocate and free
 * in glibc itself (the DTV of each thread); that part does not depend on ITERATIONS or KEEP, so
 * the tests measure it with a run of the same THREADS and 0 0, and add it.
 * Thread backtraces do not reach main: keep_block's chain is keep_block <- worker <- (glibc).
 */
#include <pthread.h>
#include <stdlib.h>

#include "expect.h"

#define CHURN_SIZE 32
#define KEEP_SIZE 48

static pthread_barrier_t start;
static unsigned long iterations, keep_count;

__attribute__((noipa)) void churn(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		void *p = malloc(CHURN_SIZE);

		keep(p);
		free(p);
	}
}

__attribute__((noipa)) void *keep_block(void)
{
	void *p = malloc(KEEP_SIZE); /* site(keep_block) */

	return p;
}

__attribute__((noipa)) void *worker(void *arg)
{
	void **kept = arg;
	unsigned long i;

	pthread_barrier_wait(&start);
	churn(iterations);
	for (i = 0; i < keep_count; i++)
		kept[i] = keep_block();
	return NULL;
}

int main(int argc, char **argv)
{
	static void *kept[64][1024];
	unsigned long nthreads = argc > 1 ? strtoul(argv[1], NULL, 0) : 8;
	pthread_t tid[64];
	struct expect_sum sum = { 0 };
	unsigned long i;

	iterations = argc > 2 ? strtoul(argv[2], NULL, 0) : 100000;
	keep_count = argc > 3 ? strtoul(argv[3], NULL, 0) : 10;
	if (nthreads < 1 || nthreads > 64 || keep_count > 1024)
		return 2;
	pthread_barrier_init(&start, NULL, (unsigned)nthreads);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&tid[i], NULL, worker, kept[i]))
			return 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&start);

	if (keep_count)
		expect_site("malloc", nthreads * keep_count, nthreads * keep_count * KEEP_SIZE,
			    "keep_block,worker,*");
	sum.alloc_calls = nthreads * (iterations + keep_count);
	sum.free_calls = nthreads * iterations;
	sum.live_blocks = nthreads * keep_count;
	sum.live_bytes = nthreads * keep_count * KEEP_SIZE;
	expect_summary(&sum);
	return 0;
}
