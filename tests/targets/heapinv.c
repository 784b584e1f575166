// SPDX-License-Identifier: GPL-2.0-only
/*
 * heapinv: a process with a known heap for heaptrace -p's inventory of the heap found at the
 * attach (glibc). usage: heapinv [plain|corrupt]
 *
 * Before the attach: a thread builds part of the heap and exits (its arena goes back to the
 * free list), then two worker threads (one reuses that arena) and main build the rest: 4 x 3000
 * allocations, 60 % of 1-120 bytes, 30 % 121-1520, 9.5 % 1.5-31.5 KB and 0.5 % 200 KB-1 MB
 * (mmapped); 1 in 20 each calloc and aligned_alloc(64), 1 in 10 then realloc'd; about 35 % of
 * the blocks below the mmap threshold freed again, which fills the tcaches, the fastbins and the
 * bins. The workers stay alive. The program then counts its own live blocks with
 * malloc_usable_size (an mmapped one by the IS_MMAPPED bit of its header) and writes:
 *   inventory live_blocks=N live_bytes=B mmapped_blocks=M mmapped_bytes=X glibc_blocks=G
 *             glibc_bytes=GB
 *   class max_size=S blocks=N bytes=B        (per size class: blocks of 16 << i bytes at most)
 * where mmapped_bytes are chunk sizes (usable + 16) and glibc_* are the C library's own blocks
 * that are live too: the DTV that pthread_create allocated for each live worker (tcbhead_t.dtv,
 * at the thread pointer + 8 on x86_64 and at it on aarch64, points 16 bytes into the calloc'd
 * block). Class records include
 * them. All of it without stdio or heap use.
 * "corrupt" overwrites the size word of one live block of main's with 0x4141414141414141 before
 * the attach (and puts it back after, before any free).
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

#define PER_THREAD 3000
#define NSLOTS (4 * PER_THREAD)
#define NCLASSES 40

static void *slots[NSLOTS];
static void *dtv_block[2];
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

static int mmapped(void *p)
{
	return (((size_t *)p)[-1] & 2) != 0;
}

/* Slots [first, first + PER_THREAD): allocate them, then free about 35 % below mmap size. */
static void build(unsigned first, uint64_t seed)
{
	uint64_t s = seed;

	for (unsigned i = first; i < first + PER_THREAD; i++) {
		size_t size = pick_size(&s);
		unsigned how = next_rand(&s) % 20;
		void *p;

		if (how == 0)
			p = calloc(1, size);
		else if (how == 1)
			p = aligned_alloc(64, (size + 63) & ~(size_t)63);
		else
			p = malloc(size);
		if (p && next_rand(&s) % 10 == 0)
			p = realloc(p, size + next_rand(&s) % 200);
		slots[i] = p;
	}
	for (unsigned i = first; i < first + PER_THREAD; i++)
		if (slots[i] && !mmapped(slots[i]) && next_rand(&s) % 100 < 35) {
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

/* glibc's tcbhead_t.dtv: at tp + 8 with TLS variant II (x86_64), at tp with variant I, where
 * mips puts tp 0x7000 past the end of the 16-byte thread control block (THREAD_DTV). */
static char *dtv_of_thread(void)
{
	char **tp = __builtin_thread_pointer();

#if defined(__x86_64__)
	return tp[1];
#elif defined(__mips__)
	return ((char **)((char *)tp - 0x7000 - 16))[0];
#else
	return tp[0];
#endif
}

static void *worker_main(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	char *dtv = dtv_of_thread();

	build(PER_THREAD * (1 + k), 0x2545f4914f6cdd1dull + k);
	dtv_block[k] = dtv - 16;
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

static void write_truth(void)
{
	unsigned long n = 0, bytes = 0, mn = 0, mbytes = 0, gn = 0, gbytes = 0;
	struct expect_buf b;

	for (unsigned i = 0; i < NSLOTS; i++) {
		size_t u;

		if (!slots[i])
			continue;
		u = malloc_usable_size(slots[i]);
		n++;
		bytes += u;
		if (mmapped(slots[i])) {
			mn++;
			mbytes += u + 16;
		}
		count_class(u);
	}
	for (unsigned k = 0; k < 2; k++) {
		gn++;
		gbytes += malloc_usable_size(dtv_block[k]);
		count_class(malloc_usable_size(dtv_block[k]));
	}
	b.n = 0;
	expect_str(&b, "inventory");
	expect_kv(&b, "live_blocks", n);
	expect_kv(&b, "live_bytes", bytes);
	expect_kv(&b, "mmapped_blocks", mn);
	expect_kv(&b, "mmapped_bytes", mbytes);
	expect_kv(&b, "glibc_blocks", gn);
	expect_kv(&b, "glibc_bytes", gbytes);
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
}

int main(int argc, char **argv)
{
	int corrupt = argc > 1 && strcmp(argv[1], "corrupt") == 0;
	size_t *victim = NULL, saved = 0;
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
	write_truth();
	if (corrupt) {
		for (unsigned i = 3 * PER_THREAD + 100; i < NSLOTS && !victim; i++)
			if (slots[i] && !mmapped(slots[i]) && malloc_usable_size(slots[i]) < 120)
				victim = (size_t *)slots[i] - 1;
		if (!victim)
			return 2;
		saved = *victim;
		*victim = 0x4141414141414141ull;
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
			p = realloc(p, malloc_usable_size(p) + 1000);
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
