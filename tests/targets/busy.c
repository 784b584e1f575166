// SPDX-License-Identifier: GPL-2.0-only
/*
 * busy: a multi-threaded process to attach to while it churns. usage: busy [THREADS] (default 4,
 * at most 32). Each worker thread loops until told to stop: it mallocs a block of 16..271 bytes
 * (churn_malloc), fills it with a pattern, reallocs it larger (churn_realloc), checks the
 * pattern survived, frees it, then callocs 1..8 x 24 bytes (churn_calloc), checks it is zeroed
 * and frees it; every LEAK_EVERY rounds it leaks LEAK_SIZE = 72 bytes (leak_block <- worker),
 * at most MAX_LEAKS per thread. So at any moment a worker holds at most one churn block, and
 * the leaked blocks are all 72 bytes: whatever stretch of time a tracer sees, its report must
 * show at most THREADS live churn blocks and leak_block blocks of exactly 72 bytes each.
 * When every worker has made a round, main allows any tracer (PR_SET_PTRACER_ANY) and writes
 * "ready PID\n" on stdout; then it reads standard input until a line "stop" or end of file,
 * stops the workers, joins them, and writes "busy: THREADS threads stopped\n" and exits 0; it
 * exits 3 if a worker found its data damaged, 2 on a setup failure. No stdio.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "churn.h"
#include "expect.h"

#define MAX_THREADS 32
#define LEAK_EVERY 100
#define MAX_LEAKS 4096

static volatile int stop;
static pthread_barrier_t started;
static void *leaks[MAX_THREADS][MAX_LEAKS];

static void *worker(void *arg)
{
	unsigned id = (unsigned)(unsigned long)arg;
	unsigned long i = 0, nleaks = 0;

	churn_round(id, i++);
	pthread_barrier_wait(&started);
	while (!stop) {
		churn_round(id, i);
		if (i % LEAK_EVERY == 0 && nleaks < MAX_LEAKS)
			leaks[id][nleaks++] = leak_block();
		i++;
	}
	return NULL;
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) != (ssize_t)strlen(s))
		_exit(2);
}

int main(int argc, char **argv)
{
	unsigned long nthreads = argc > 1 ? strtoul(argv[1], NULL, 0) : 4, i;
	pthread_t tid[MAX_THREADS];
	struct expect_buf b = { .n = 0 };
	char line[64];
	size_t have = 0;

	if (nthreads < 1 || nthreads > MAX_THREADS)
		return 2;
	pthread_barrier_init(&started, NULL, (unsigned)nthreads + 1);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&tid[i], NULL, worker, (void *)i))
			return 2;
	pthread_barrier_wait(&started);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	expect_str(&b, "ready ");
	expect_num(&b, (unsigned long)getpid());
	expect_str(&b, "\n");
	if (write(1, b.s, b.n) != (ssize_t)b.n)
		return 2;

	for (;;) {
		ssize_t n = read(0, line + have, sizeof(line) - 1 - have);

		if (n <= 0)
			break;
		have += (size_t)n;
		line[have] = '\0';
		if (strstr(line, "stop\n"))
			break;
		if (have == sizeof(line) - 1)
			have = 0;
	}
	stop = 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	if (churn_damaged)
		return 3;
	b.n = 0;
	expect_str(&b, "busy: ");
	expect_num(&b, nthreads);
	expect_str(&b, " threads stopped\n");
	b.s[b.n] = '\0';
	say(b.s);
	return 0;
}
