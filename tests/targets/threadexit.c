// SPDX-License-Identifier: GPL-2.0-only
/*
 * threadexit: usage: threadexit [THREADS [FOREIGN [attach]]] (default 100 none). THREADS threads
 * each malloc BLOCKS blocks of different sizes (24 to 520 bytes: each of its own tcache bin), free
 * them all (glibc keeps them in the thread's cache, its tcache) and end by returning from their
 * start routine: glibc frees what each cache holds, and the cache itself, as the thread ends, so
 * at least BLOCKS + 1 frees per thread are the C library's, not the program's: 0 unknown frees.
 * FOREIGN = main or thread: one free() of a block no allocator returned, in main after every
 * thread was joined, or in a thread of its own as the last thing before it ends: 1 unknown free.
 * The block is a chunk glibc's free() takes for one of its own mmapped chunks (the chunk header,
 * with IS_MMAPPED set, at the start of a mapping) and gives back with munmap: valid for glibc,
 * never seen by heaptrace. FOREIGN = none: no such free.
 * attach: the threads make and free their blocks first, then the process allows any tracer,
 * says "ready" on stdout and waits until heaptrace's entries are in place (entries.h) before it
 * lets them end; it records no summary (its allocations came before the attach).
 * The program's own calls (without attach): 1 + THREADS * BLOCKS allocations and as many frees
 * (with FOREIGN = thread, one thread more). pthread_create also callocs each thread's DTV, which
 * glibc frees when the thread's stack leaves its cache of stacks: the tests account for those.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "entries.h"
#include "expect.h"
#include "handshake.h"

#define BLOCKS 6
#define FAKE_MAP 8192 /* two pages: glibc checks only alignment and a power-of-two offset */
#define IS_MMAPPED 2 /* glibc's malloc.c: the chunk size's bit for an mmapped chunk */

static const size_t sizes[BLOCKS] = { 24, 40, 72, 136, 264, 520 };

/* A block glibc's free() gives back with munmap, which no allocator returned: the chunk
 * header (prev_size 0, size | IS_MMAPPED: two size_t) at the start of a mapping, the block
 * after it. */
static void *foreign_block(void)
{
	size_t *m = mmap(NULL, FAKE_MAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);

	if (m == MAP_FAILED)
		abort();
	m[0] = 0;
	m[1] = FAKE_MAP | IS_MMAPPED;
	return m + 2;
}

__attribute__((noipa)) void churn(void)
{
	void *p[BLOCKS];

	for (unsigned i = 0; i < BLOCKS; i++) {
		p[i] = malloc(sizes[i]);
		keep(p[i]);
		memset(p[i], 1, sizes[i]);
	}
	for (unsigned i = 0; i < BLOCKS; i++)
		free(p[i]);
}

static pthread_barrier_t end_barrier; /* attach: the threads end once heaptrace is there */
static int attaching;

static void *worker(void *arg)
{
	churn();
	if (attaching)
		pthread_barrier_wait(&end_barrier);
	return arg;
}

/* Its last call before it ends is a free of a foreign block (its cache was made by a free
 * before: glibc's free sets it up too). */
static void *foreign_worker(void *arg)
{
	void *f = foreign_block(); /* mmap: no allocation heaptrace counts */

	churn();
	free(f);
	return arg;
}

/* attach: let the threads end once heaptrace's entries are in place. Return 0 or 99. */
static int wait_for_tracer(void)
{
	struct timespec start;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (write(1, "ready\n", 6) != 6)
		return 99;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!entries_trapped(1)) {
		if (handshake_expired(&start))
			return 99;
		handshake_pause();
	}
	pthread_barrier_wait(&end_barrier);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;
	const char *foreign = argc > 2 ? argv[2] : "none";
	struct expect_sum s = { 0 };
	pthread_t *t = calloc(n + 1, sizeof(*t));
	unsigned long nt = n;

	attaching = argc > 3 && !strcmp(argv[3], "attach");
	if (!t)
		return 1;
	entries_save();
	pthread_barrier_init(&end_barrier, NULL, (unsigned)n + 1);
	s.alloc_calls = 1; /* t */
	s.free_calls = 1;
	for (unsigned long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	if (!strcmp(foreign, "thread") && !pthread_create(&t[nt], NULL, foreign_worker, NULL))
		nt++;
	if (attaching && wait_for_tracer())
		return 99;
	for (unsigned long i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	free(t);
	s.alloc_calls += nt * BLOCKS;
	s.free_calls += nt * BLOCKS;
	if (!strcmp(foreign, "main"))
		free(foreign_block());
	s.unknown_frees = strcmp(foreign, "none") != 0;
	if (!attaching)
		expect_summary(&s);
	return 0;
}
