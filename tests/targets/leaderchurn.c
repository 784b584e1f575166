// SPDX-License-Identifier: GPL-2.0-only
/*
 * leaderchurn: threads come and go in a process whose main thread has exited, for heaptrace -p.
 * $HEAPTRACE_OUTFILE names heaptrace's --outfile.
 * usage: leaderchurn [N]   (default 200)
 * main starts a boss thread, allows any tracer (PR_SET_PTRACER_ANY) and calls pthread_exit: the
 * main thread stays a zombie, whose /proc/PID shows no memory. The boss waits for that, writes
 * "ready\n" on stdout and polls until heaptrace's stubs or breakpoints are in malloc, calloc and
 * free. Then it starts and joins N workers one after another, each on a stack of its own
 * (mmap'd, never reused: each has a thread pointer of its own, so N distinct keys for the
 * stubs' thread table, which holds 128: a gone worker's slot must be freed for the next). Each
 * worker leaks one block of 24 bytes through leaf <- level2 <- level1 <- worker_main, whose
 * frames take 2 KB of stack each: 6 KB, more than the page of the leaf's sp (where a stack copy
 * ends for a thread missing from the table) and less than the default copy of 8 KiB. The boss
 * records the site (N blocks, N x 24 bytes, each with the whole chain) and exits 0 while traced.
 * No stdio.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "entries.h"
#include "expect.h"
#include "handshake.h"

#define STACK (256 * 1024)

static void *volatile kept;

__attribute__((noipa)) void leaf(void)
{
	volatile char pad[2000];

	pad[0] = 1;
	kept = malloc(24); /* site(leaf) */
	keep(pad);
}

__attribute__((noipa)) void level2(void)
{
	volatile char pad[2000];

	pad[0] = 1;
	leaf(); /* call(leaf) */
	keep(pad);
}

__attribute__((noipa)) void level1(void)
{
	volatile char pad[2000];

	pad[0] = 1;
	level2(); /* call(level2) */
	keep(pad);
}

__attribute__((noipa)) void *worker_main(void *arg)
{
	(void)arg;
	level1(); /* call(level1) */
	return NULL;
}

/* A worker on a fresh stack, a guard page below it (a mapping of its own). 0 or -1. */
static int run_worker(void)
{
	pthread_attr_t a;
	pthread_t th;
	char *m = mmap(NULL, STACK + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);

	if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE) || pthread_attr_init(&a) ||
	    pthread_attr_setstack(&a, m + 4096, STACK) ||
	    pthread_create(&th, &a, worker_main, NULL))
		return -1;
	pthread_attr_destroy(&a);
	return pthread_join(th, NULL) ? -1 : 0;
}

/* Whether the process's state (its main thread's) is Z: that thread has exited. */
static int leader_zombie(void)
{
	char buf[4096], *p;
	ssize_t got;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return 0;
	buf[got] = '\0';
	p = strstr(buf, "\nState:");
	return p && p[strspn(p + 7, " \t") + 7] == 'Z';
}

static void *boss(void *arg)
{
	long n = (long)arg;
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!leader_zombie()) {
		if (handshake_expired(&start))
			_exit(99);
		handshake_pause();
	}
	if (write(1, "ready\n", 6) != 6)
		_exit(2);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!entries_trapped(1)) {
		if (handshake_expired(&start))
			_exit(99);
		handshake_pause();
	}
	for (long i = 0; i < n; i++)
		if (run_worker())
			_exit(2);
	expect_site("malloc", (unsigned long)n, 24 * (unsigned long)n,
		    "leaf,level2,level1,worker_main,*");
	exit(0);
}

int main(int argc, char **argv)
{
	pthread_t th;
	long n = argc > 1 ? atol(argv[1]) : 200;

	entries_save();
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (pthread_create(&th, NULL, boss, (void *)n))
		return 2;
	pthread_exit(NULL);
}
