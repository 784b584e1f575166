// SPDX-License-Identifier: GPL-2.0-only
/*
 * forkstress: fork while other threads allocate. usage: forkstress [CHILDREN [THREADS]] (default
 * 200 and 4, at most 16 threads). main leaks 2 x 500 bytes (main_leak <- main) and starts
 * THREADS workers; each leaks 56 bytes once (thread_leak <- worker <- ...), then mallocs and
 * frees blocks of 16..143 bytes (churn) until main tells it to stop, counting what it does, at
 * least MIN_ROUNDS = 128 rounds (each size once, so what the thread's cache holds when the
 * thread exits, and frees then, is the same in every run). Once every worker runs (a barrier),
 * main forks CHILDREN children one after the other while the workers churn; each child mallocs
 * and frees 20 blocks and _exits 0, and main reaps it. A child that a breakpoint left in its
 * copy of the code would kill with SIGTRAP is caught: main then writes "child N: killed by
 * signal S" (or "exited S") on stdout and exits 3 once all are done. Then main stops and joins
 * the workers and writes "forkstress: CHILDREN children, THREADS threads\n". No stdio.
 * Known to exit 0; its own calls (records: two sites and the summary) are 2 + THREADS + the
 * workers' rounds allocations, the workers' rounds frees. The C library's own work for the
 * threads (their DTVs, and at thread exit the frees of their per-thread caches) does not depend
 * on CHILDREN, so the tests measure it with a run of 0 children and add it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect.h"

#define MAX_THREADS 16
#define MAIN_LEAK 500
#define THREAD_LEAK 56
#define MIN_ROUNDS 128 /* every size of churn once, whatever CHILDREN is */

struct worker_count {
	unsigned long rounds;
	void *leak;
};

static volatile int stop;
static pthread_barrier_t started;
static struct worker_count counts[MAX_THREADS];
static void *volatile kept[2];

__attribute__((noipa)) void main_leak(unsigned i)
{
	kept[i] = malloc(MAIN_LEAK); /* site(main_leak) */
}

__attribute__((noipa)) void *thread_leak(void)
{
	return malloc(THREAD_LEAK); /* site(thread_leak) */
}

__attribute__((noipa)) void churn(struct worker_count *c)
{
	size_t n = 16 + c->rounds % 128;
	void *p = malloc(n);

	keep(p);
	free(p);
	c->rounds++;
}

__attribute__((noipa)) void child_work(void)
{
	unsigned i;

	for (i = 0; i < 20; i++) {
		void *p = malloc(32 + i);

		keep(p);
		free(p);
	}
}

static void *worker(void *arg)
{
	struct worker_count *c = arg;

	c->leak = thread_leak();
	while (c->rounds < MIN_ROUNDS)
		churn(c);
	pthread_barrier_wait(&started);
	while (!stop)
		churn(c);
	return NULL;
}

static void say(struct expect_buf *b)
{
	if (write(1, b->s, b->n) != (ssize_t)b->n)
		_exit(2);
	b->n = 0;
}

int main(int argc, char **argv)
{
	unsigned long nchildren = argc > 1 ? strtoul(argv[1], NULL, 0) : 200;
	unsigned long nthreads = argc > 2 ? strtoul(argv[2], NULL, 0) : 4, i;
	struct expect_buf b = { .n = 0 };
	struct expect_sum sum = { 0 };
	pthread_t tid[MAX_THREADS];
	int rc = 0;

	if (nthreads < 1 || nthreads > MAX_THREADS)
		return 2;
	main_leak(0);
	main_leak(1);
	pthread_barrier_init(&started, NULL, (unsigned)nthreads + 1);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&tid[i], NULL, worker, &counts[i]))
			return 2;
	pthread_barrier_wait(&started);

	for (i = 0; i < nchildren; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		if (pid == 0) {
			child_work();
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid)
			return 2;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			continue;
		expect_str(&b, "child ");
		expect_num(&b, i);
		if (WIFSIGNALED(status)) {
			expect_str(&b, ": killed by signal ");
			expect_num(&b, (unsigned long)WTERMSIG(status));
		} else {
			expect_str(&b, ": exited ");
			expect_num(&b, (unsigned long)WEXITSTATUS(status));
		}
		expect_str(&b, "\n");
		say(&b);
		rc = 3;
	}
	stop = 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);

	sum.alloc_calls = 2 + nthreads;
	sum.live_blocks = 2 + nthreads;
	sum.live_bytes = 2 * MAIN_LEAK + nthreads * THREAD_LEAK;
	for (i = 0; i < nthreads; i++) {
		sum.alloc_calls += counts[i].rounds;
		sum.free_calls += counts[i].rounds;
	}
	expect_site("malloc", 2, 2 * MAIN_LEAK, "main_leak,main");
	expect_site("malloc", nthreads, nthreads * THREAD_LEAK, "thread_leak,worker,*");
	expect_summary(&sum);
	expect_exit(rc);
	expect_str(&b, "forkstress: ");
	expect_num(&b, nchildren);
	expect_str(&b, " children, ");
	expect_num(&b, nthreads);
	expect_str(&b, " threads\n");
	say(&b);
	return rc;
}
