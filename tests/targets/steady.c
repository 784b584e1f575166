// SPDX-License-Identifier: GPL-2.0-only
/*
 * steady: busy (busy.c) that can be asked how far it got, for the tests that kill or signal
 * heaptrace and then check that the program runs on (tests/e2e/test_survive.py).
 * usage: steady [-x STATUS] [-H] [-l PATHS] THREADS (1 to 32)
 *
 * Each worker thread churns as busy's do: churn_malloc, fill, churn_realloc, check, free,
 * churn_calloc, check zeroed, free; every LEAK_EVERY rounds it leaks LEAK_SIZE = 72 bytes
 * (leak_block), at most MAX_LEAKS per thread. It counts its rounds.
 * -l PATHS (a power of two, 2 to 4096) adds one thread that keeps PATHS blocks of PATH_SIZE
 * bytes live, slot i made under a call chain of its own: path_a and path_b nested LEVELS =
 * log2(PATHS) deep, the bits of i choosing which calls which; it replaces them one after
 * another (free the old block, make a new one) for ever, counting each as a round. So a
 * report of a stretch of it lists up to PATHS backtraces of LEVELS + 2 frames (malloc, the
 * LEVELS + 1 path_* frames): --depth=LEVELS+2 tells them all apart.
 * -H ignores SIGHUP (as under nohup).
 * When every thread has made a round, main allows any tracer (PR_SET_PTRACER_ANY) and writes
 * "ready PID\n" on stdout. Then it reads lines on standard input:
 *   "ping"  malloc and free one block (ping_block), answer "pong N M\n", N the fewest rounds any
 *           thread has made so far (N grows only when every thread makes progress), M the
 *           most;
 *   "stop"  (or end of file) stop the threads, join them, write "steady: THREADS threads
 *           stopped\n" and exit STATUS (default 0).
 * Status 3: a thread found its data damaged; 2: a setup failure. No stdio.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "churn.h"
#include "expect.h"

#define MAX_THREADS 32
#define LEAK_EVERY 100
#define MAX_LEAKS 4096
#define MAX_PATHS 4096
#define PATH_SIZE 40
#define PING_SIZE 32

static volatile int stop;
static pthread_barrier_t started;
static void *leaks[MAX_THREADS][MAX_LEAKS];
static void *slots[MAX_PATHS];
static unsigned npaths, levels;
/* rounds made by each thread (the workers, then the path thread), one cache line each */
static struct {
	unsigned long n;
	char pad[64 - sizeof(unsigned long)];
} rounds[MAX_THREADS + 1];

__attribute__((noipa)) void *ping_block(void)
{
	return malloc(PING_SIZE);
}

__attribute__((noipa)) void *path_b(unsigned bits, unsigned level);

/* One step of a path: the low bit of bits picks the next step (a distinct return address). */
__attribute__((noipa)) void *path_a(unsigned bits, unsigned level)
{
	if (!level)
		return malloc(PATH_SIZE);
	if (bits & 1)
		return path_b(bits >> 1, level - 1);
	return path_a(bits >> 1, level - 1);
}

__attribute__((noipa)) void *path_b(unsigned bits, unsigned level)
{
	if (!level)
		return malloc(PATH_SIZE);
	if (bits & 1)
		return path_b(bits >> 1, level - 1);
	return path_a(bits >> 1, level - 1);
}

static void count_round(unsigned id)
{
	__atomic_store_n(&rounds[id].n, rounds[id].n + 1, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	unsigned id = (unsigned)(unsigned long)arg;
	unsigned long i = 0, nleaks = 0;

	churn_round(id, i++);
	count_round(id);
	pthread_barrier_wait(&started);
	while (!stop) {
		churn_round(id, i);
		if (i % LEAK_EVERY == 0 && nleaks < MAX_LEAKS)
			leaks[id][nleaks++] = leak_block();
		i++;
		count_round(id);
	}
	return NULL;
}

/* A block of slot i: its first word says which slot, checked when it is replaced. */
static void make_slot(unsigned i)
{
	unsigned *p = path_a(i, levels);

	if (!p)
		_exit(2);
	p[0] = i;
	slots[i] = p;
}

static void *path_thread(void *arg)
{
	unsigned id = (unsigned)(unsigned long)arg, i;

	for (i = 0; i < npaths; i++)
		make_slot(i);
	count_round(id);
	pthread_barrier_wait(&started);
	for (i = 0; !stop; i = (i + 1) % npaths) {
		if (*(unsigned *)slots[i] != i)
			churn_damaged = 1;
		free(slots[i]);
		make_slot(i);
		count_round(id);
	}
	return NULL;
}

static void say(struct expect_buf *b)
{
	if (write(1, b->s, b->n) != (ssize_t)b->n)
		_exit(2);
}

static void pong(unsigned nthreads)
{
	struct expect_buf b = { .n = 0 };
	unsigned long least = (unsigned long)-1, most = 0, r;
	void *p = ping_block();
	unsigned i;

	if (!p)
		_exit(2);
	keep(p);
	free(p);
	for (i = 0; i < nthreads; i++) {
		r = __atomic_load_n(&rounds[i].n, __ATOMIC_RELAXED);
		if (r < least)
			least = r;
		if (r > most)
			most = r;
	}
	expect_str(&b, "pong ");
	expect_num(&b, least);
	expect_str(&b, " ");
	expect_num(&b, most);
	expect_str(&b, "\n");
	say(&b);
}

static void usage(void)
{
	static const char msg[] = "usage: steady [-x STATUS] [-H] [-l PATHS] THREADS\n";

	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(2);
}

int main(int argc, char **argv)
{
	unsigned long nthreads, i, status = 0;
	unsigned nall;
	pthread_t tid[MAX_THREADS + 1];
	struct expect_buf b = { .n = 0 };
	char line[256];
	size_t have = 0;
	int c;

	while ((c = getopt(argc, argv, "x:Hl:")) != -1) {
		switch (c) {
		case 'x':
			status = strtoul(optarg, NULL, 0);
			break;
		case 'H':
			signal(SIGHUP, SIG_IGN);
			break;
		case 'l':
			npaths = (unsigned)strtoul(optarg, NULL, 0);
			if (npaths < 2 || npaths > MAX_PATHS || (npaths & (npaths - 1)))
				usage();
			while ((1u << levels) < npaths)
				levels++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	nthreads = strtoul(argv[optind], NULL, 0);
	if (nthreads < 1 || nthreads > MAX_THREADS)
		usage();
	nall = (unsigned)nthreads + (npaths ? 1 : 0);
	pthread_barrier_init(&started, NULL, nall + 1);
	for (i = 0; i < nall; i++)
		if (pthread_create(&tid[i], NULL, i < nthreads ? worker : path_thread, (void *)i))
			return 2;
	pthread_barrier_wait(&started);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	expect_str(&b, "ready ");
	expect_num(&b, (unsigned long)getpid());
	expect_str(&b, "\n");
	say(&b);

	for (;;) {
		ssize_t n = read(0, line + have, sizeof(line) - have);
		char *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		while ((nl = memchr(line, '\n', have))) {
			size_t len = (size_t)(nl - line);

			if (len == 4 && !memcmp(line, "stop", 4))
				goto done;
			if (len == 4 && !memcmp(line, "ping", 4))
				pong(nall);
			memmove(line, nl + 1, have - len - 1);
			have -= len + 1;
		}
		if (have == sizeof(line))
			have = 0;
	}
done:
	stop = 1;
	for (i = 0; i < nall; i++)
		pthread_join(tid[i], NULL);
	if (churn_damaged)
		return 3;
	b.n = 0;
	expect_str(&b, "steady: ");
	expect_num(&b, nthreads);
	expect_str(&b, " threads stopped\n");
	say(&b);
	return (int)status;
}
