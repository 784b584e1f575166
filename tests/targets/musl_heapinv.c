// SPDX-License-Identifier: GPL-2.0-only
/*
 * musl_heapinv: a process with a known heap for heaptrace -p's inventory of the heap found at
 * the attach, with musl's malloc (mallocng); musl_static_heapinv is the same program linked
 * -static. usage: musl_heapinv [plain|corrupt]
 *
 * Before the attach: a thread builds part of the heap and exits, two worker threads and main
 * build the rest: 4 x 2000 allocations, 60 % of 1-120 bytes, 30 % 121-1520, 9.5 % 1.5-31.5 KB,
 * 0.5 % 200 KB-1 MB (each in a mapping of its own); 1 in 20 each calloc and aligned_alloc(64),
 * 1 in 100 aligned_alloc(4096), 1 in 10 then realloc'd to another size; about 35 % of the
 * blocks freed again. The workers stay alive. mallocng stores the size each block was asked
 * for, so the program's truth is the requested sizes it keeps itself (checked against musl's
 * malloc_usable_size, which returns them); it writes
 *   inventory live_blocks=N live_bytes=B mmap_min=A mmap_max=Z
 *   class max_size=S blocks=N bytes=B        (per size class: blocks of 16 << i bytes at most)
 * where mmap_min counts the blocks of at least MMAP_THRESHOLD (131052) bytes, which mallocng
 * always maps on their own, and mmap_max those of at least 2000 bytes, the smallest that a
 * group of one slot in its own mapping can hold (a slot of more than 2032 bytes). The C library
 * allocates nothing of its own here (no stdio). All of it without stdio or heap use.
 * "corrupt" overwrites the in-band header byte (slot index) of one live block before the
 * attach (and puts it back after, before any free).
 * Then it allows any tracer, writes "ready\n" and polls until the breakpoints are in malloc,
 * calloc and free; frees every block it made (1 in 10 after a realloc to a larger size), writes
 *   freed count=N
 * and sends SIGINT to heaptrace; after the report and the detach the workers end and it exits 0.
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "entries.h"
#include "expect.h"
#include "handshake.h"

#define PER_THREAD 2000
#define NSLOTS (4 * PER_THREAD)
#define NCLASSES 40
#define MMAP_THRESHOLD 131052

static void *slots[NSLOTS];
static size_t sizes[NSLOTS];
static pthread_barrier_t built, finish;

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t pick_size(uint64_t *s)
{
	unsigned r = next_rand(s) % 1000;
	uint64_t v = next_rand(s);

	if (r < 600)
		return 1 + v % 120;
	if (r < 900)
		return 121 + v % 1400;
	if (r < 995)
		return 1536 + v % 30720;
	return 200 * 1024 + v % (824 * 1024);
}

/* Slots [first, first + PER_THREAD): allocate them, then free about 35 %. */
static void build(unsigned first, uint64_t seed)
{
	uint64_t s = seed;

	for (unsigned i = first; i < first + PER_THREAD; i++) {
		size_t size = pick_size(&s);
		unsigned how = next_rand(&s) % 100;
		void *p;

		if (how < 5) {
			p = calloc(1, size);
		} else if (how < 10) {
			size = (size + 63) & ~(size_t)63;
			p = aligned_alloc(64, size);
		} else if (how == 10) {
			size = (size + 4095) & ~(size_t)4095;
			p = aligned_alloc(4096, size);
		} else {
			p = malloc(size);
		}
		if (p && next_rand(&s) % 10 == 0) {
			size_t n = size + next_rand(&s) % 200;
			void *q = realloc(p, n);

			if (q) {
				p = q;
				size = n;
			}
		}
		slots[i] = p;
		sizes[i] = size;
	}
	for (unsigned i = first; i < first + PER_THREAD; i++)
		if (slots[i] && next_rand(&s) % 100 < 35) {
			free(slots[i]);
			slots[i] = NULL;
		}
}

static void *exiting_main(void *arg)
{
	(void)arg;
	build(0, 0x9e3779b97f4a7c15ull);
	return NULL;
}

static void *worker_main(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;

	build(PER_THREAD * (1 + k), 0x2545f4914f6cdd1dull + k);
	pthread_barrier_wait(&built);
	pthread_barrier_wait(&finish);
	return NULL;
}

static unsigned long class_blocks[NCLASSES], class_bytes[NCLASSES];

static void count_class(size_t size)
{
	unsigned c = 0;

	while (c + 1 < NCLASSES && size > ((size_t)16 << c))
		c++;
	class_blocks[c]++;
	class_bytes[c] += size;
}

/* Return 0, or 2 if musl's own view of a block's size is not what the program asked for. */
static int write_truth(void)
{
	unsigned long n = 0, bytes = 0, mmin = 0, mmax = 0;
	struct expect_buf b;

	for (unsigned i = 0; i < NSLOTS; i++) {
		if (!slots[i])
			continue;
		if (malloc_usable_size(slots[i]) != sizes[i])
			return 2;
		n++;
		bytes += sizes[i];
		mmin += sizes[i] >= MMAP_THRESHOLD;
		mmax += sizes[i] >= 2000;
		count_class(sizes[i]);
	}
	b.n = 0;
	expect_str(&b, "inventory");
	expect_kv(&b, "live_blocks", n);
	expect_kv(&b, "live_bytes", bytes);
	expect_kv(&b, "mmap_min", mmin);
	expect_kv(&b, "mmap_max", mmax);
	expect_flush(&b);
	for (unsigned c = 0; c < NCLASSES; c++) {
		if (!class_blocks[c])
			continue;
		b.n = 0;
		expect_str(&b, "class");
		expect_kv(&b, "max_size", (unsigned long)16 << c);
		expect_kv(&b, "blocks", class_blocks[c]);
		expect_kv(&b, "bytes", class_bytes[c]);
		expect_flush(&b);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int corrupt = argc > 1 && strcmp(argv[1], "corrupt") == 0;
	unsigned char *victim = NULL, saved = 0;
	unsigned long freed = 0;
	struct timespec start;
	struct expect_buf b;
	pthread_t t0, w[2];
	long tracer;

	entries_save();
	if (pthread_create(&t0, NULL, exiting_main, NULL) || pthread_join(t0, NULL))
		return 2;
	pthread_barrier_init(&built, NULL, 3);
	pthread_barrier_init(&finish, NULL, 3);
	for (unsigned k = 0; k < 2; k++)
		if (pthread_create(&w[k], NULL, worker_main, (void *)(uintptr_t)k))
			return 2;
	build(3 * PER_THREAD, 0xd1b54a32d192ed03ull);
	pthread_barrier_wait(&built);
	if (write_truth())
		return 2;
	if (corrupt) {
		for (unsigned i = 3 * PER_THREAD + 100; i < NSLOTS && !victim; i++)
			if (slots[i] && sizes[i] < 120)
				victim = (unsigned char *)slots[i] - 3;
		if (!victim)
			return 2;
		saved = *victim;
		*victim = saved ^ 0x1f; /* another slot's index */
	}

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (write(1, "ready\n", 6) != 6)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!entries_trapped(1)) {
		if (handshake_expired(&start))
			return 99;
		handshake_pause();
	}
	if (victim)
		*victim = saved;
	for (unsigned i = 0; i < NSLOTS; i++) {
		void *p = slots[i];

		if (!p)
			continue;
		if (i % 10 == 0)
			p = realloc(p, sizes[i] + 1000);
		free(p);
		freed++;
	}
	b.n = 0;
	expect_str(&b, "freed");
	expect_kv(&b, "count", freed);
	expect_flush(&b);

	tracer = handshake_tracer();
	if (tracer <= 0 || kill((pid_t)tracer, SIGINT) != 0)
		return 98;
	handshake_wait_reports(1);
	handshake_wait_untraced();
	pthread_barrier_wait(&finish);
	for (unsigned k = 0; k < 2; k++)
		pthread_join(w[k], NULL);
	return 0;
}
