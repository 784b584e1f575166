// SPDX-License-Identifier: GPL-2.0-only
/*
 * mixedstops: threads whose calls go both through entry stubs and through breakpoint stops.
 * usage: mixedstops [THREADS [ITERATIONS [KEEP]]] (default 8 5000 4). Each thread waits at a
 * barrier, then ITERATIONS times mallocs MIX_SIZE bytes and frees them, and gets MIX_SIZE
 * bytes aligned to MIX_ALIGN from posix_memalign and frees them; then it keeps KEEP blocks of
 * KEEP_SIZE bytes from posix_memalign (keep_aligned <- worker). With --mode=stubs, glibc's
 * malloc and free go through stubs, posix_memalign keeps a breakpoint (its result is read at
 * its return: a stop at its entry and one at its return). With more threads than CPUs, a
 * thread is often preempted while its stub writes a record; the stops of the other threads
 * must still come after the calls they made before them, or a malloc's return recorded before
 * a stop is taken after it (the call dropped as if left by longjmp, its block never counted,
 * its free unknown).
 * The program's own calls: THREADS * (2 * ITERATIONS + KEEP) allocations, THREADS * 2 *
 * ITERATIONS frees, THREADS * KEEP live blocks of KEEP_SIZE bytes; glibc's own for the threads
 * are measured by the tests with a run of ITERATIONS 1 and KEEP 0 (as for threads.c).
 * No stdio.
 */
#include <pthread.h>
#include <stdlib.h>

#include "expect.h"

#define MIX_SIZE 24
#define MIX_ALIGN 64
#define KEEP_SIZE 56

static pthread_barrier_t start;
static unsigned long iterations, keep_count;

__attribute__((noipa)) static void mix(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		void *p = malloc(MIX_SIZE), *q = NULL;

		keep(p);
		free(p);
		if (posix_memalign(&q, MIX_ALIGN, MIX_SIZE))
			exit(2);
		keep(q);
		free(q);
	}
}

__attribute__((noipa)) void *keep_aligned(void)
{
	void *p = NULL;

	if (posix_memalign(&p, MIX_ALIGN, KEEP_SIZE)) /* site(keep_aligned) */
		exit(2);
	return p;
}

__attribute__((noipa)) void *worker(void *arg)
{
	void **kept = arg;

	pthread_barrier_wait(&start);
	mix(iterations);
	for (unsigned long i = 0; i < keep_count; i++)
		kept[i] = keep_aligned();
	return NULL;
}

int main(int argc, char **argv)
{
	static void *kept[64][64];
	unsigned long nthreads = argc > 1 ? strtoul(argv[1], NULL, 0) : 8;
	pthread_t tid[64];
	struct expect_sum sum = { 0 };

	iterations = argc > 2 ? strtoul(argv[2], NULL, 0) : 5000;
	keep_count = argc > 3 ? strtoul(argv[3], NULL, 0) : 4;
	if (nthreads < 1 || nthreads > 64 || keep_count > 64)
		return 2;
	pthread_barrier_init(&start, NULL, (unsigned)nthreads);
	for (unsigned long i = 0; i < nthreads; i++)
		if (pthread_create(&tid[i], NULL, worker, kept[i]))
			return 1;
	for (unsigned long i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&start);

	if (keep_count)
		expect_site("posix_memalign", nthreads * keep_count,
			    nthreads * keep_count * KEEP_SIZE, "keep_aligned,worker,*");
	sum.alloc_calls = nthreads * (2 * iterations + keep_count);
	sum.free_calls = nthreads * 2 * iterations;
	sum.live_blocks = nthreads * keep_count;
	sum.live_bytes = nthreads * keep_count * KEEP_SIZE;
	expect_summary(&sum);
	return 0;
}
