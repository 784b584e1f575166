// SPDX-License-Identifier: GPL-2.0-only
/*
 * attach: a process for heaptrace -p. $HEAPTRACE_OUTFILE names heaptrace's --outfile.
 * usage: attach [int|wait]
 * Before the attach it leaks 2 x 64 bytes (before_attach <- main), mallocs a 500-byte block X and
 * starts a second thread; then it allows any tracer (PR_SET_PTRACER_ANY), writes "ready\n" on
 * stdout and polls until heaptrace's breakpoints are in malloc, calloc and free (the first bytes
 * of each entry differ from a copy taken before the attach: any arch, any breakpoint encoding).
 * Then:
 *   - main leaks 3 x 48 (after_attach <- main) and frees X (unknown to heaptrace);
 *   - the second thread leaks 4 x 32 (thread_leak <- thread_main <- glibc);
 *   - "int" (default): SIGINT to heaptrace, which writes its final report, removes its
 *     breakpoints, detaches and exits 0. "wait": heaptrace ends by itself (--duration).
 * After the report and the detach it checks that the entries are restored (exit 3 if not), mallocs
 * and frees untraced, lets the thread end and exits 0. So heaptrace's report is exactly: 7
 * allocations, 0 frees, 1 unknown free, 7 live blocks, 272 live bytes ("int" mode only: with
 * --duration the time limit may fall anywhere). No stdio; the thread ends untraced (its exit frees
 * glibc's per-thread cache, which heaptrace never saw allocated).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>

#include "entries.h"
#include "expect.h"
#include "handshake.h"

static void *volatile kept[16];
static pthread_barrier_t go, done, finish;

__attribute__((noipa)) void before_attach(unsigned i)
{
	kept[i] = malloc(64);
}

__attribute__((noipa)) void after_attach(unsigned i)
{
	kept[2 + i] = malloc(48); /* site(after_attach) */
	expect_alloc(48);
}

__attribute__((noipa)) void thread_leak(unsigned i)
{
	kept[5 + i] = malloc(32); /* site(thread_leak) */
}

__attribute__((noipa)) void *thread_main(void *arg)
{
	unsigned i;

	(void)arg;
	pthread_barrier_wait(&go);
	for (i = 0; i < 4; i++)
		thread_leak(i);
	pthread_barrier_wait(&done);
	pthread_barrier_wait(&finish);
	return NULL;
}


int main(int argc, char **argv)
{
	int by_signal = !(argc > 1 && strcmp(argv[1], "wait") == 0);
	struct timespec start;
	pthread_t tid;
	void *x;
	unsigned i;

	entries_save();
	for (i = 0; i < 2; i++)
		before_attach(i);
	x = malloc(500);
	keep(x);
	pthread_barrier_init(&go, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	pthread_barrier_init(&finish, NULL, 2);
	if (pthread_create(&tid, NULL, thread_main, NULL))
		return 2;
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (write(1, "ready\n", 6) != 6)
		return 2;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!entries_trapped(1)) {
		if (handshake_expired(&start))
			return 99;
		handshake_pause();
	}
	for (i = 0; i < 3; i++)
		after_attach(i);
	free(x);
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&done);
	for (i = 0; i < 4; i++)
		expect_alloc(32);
	expect_tracked.unknown_frees = 1;
	expect_site("malloc", 3, 144, "after_attach,main");
	expect_site("malloc", 4, 128, "thread_leak,thread_main,*");
	if (by_signal)
		expect_summary(&expect_tracked);

	if (by_signal) {
		long tracer = handshake_tracer();

		if (tracer <= 0 || kill((pid_t)tracer, SIGINT) != 0)
			return 98;
	}
	handshake_wait_reports(1);
	handshake_wait_untraced();
	if (!entries_trapped(0))
		return 3;
	for (i = 0; i < 100; i++) {
		void *p = malloc(64);

		keep(p);
		free(p);
	}
	pthread_barrier_wait(&finish);
	pthread_join(tid, NULL);
	return 0;
}
