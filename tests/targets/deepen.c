// SPDX-License-Identifier: GPL-2.0-only
/*
 * deepen: a program whose stack deepens after a while, for the entry stubs' learned stack copy
 * (src/patch/copysize.h). usage: deepen [SHALLOW [DEEP [thread]]] (default 40000 2000), run()
 * called by main or, with "thread", as a second thread's start (whose stack the stubs find in
 * their table of threads, not by the main thread's range). In run(): first SHALLOW malloc/free
 * pairs of 24 bytes from shallow(), a frame or two above run: the stubs learn to copy a few
 * hundred bytes. Then DEEP blocks of 48 bytes from deep_leaf(),
 * called by big_frame(), whose frame holds BIG bytes of its own: the learned copy ends inside
 * it, and the unwind of the first of these runs off the copy's end. All DEEP blocks are kept.
 * No stdio.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"

#define BIG 4096

static void *volatile kept;

__attribute__((noipa)) void *deep_leaf(void)
{
	return malloc(48); /* site(deep_leaf) */
}

__attribute__((noipa)) void *big_frame(unsigned i)
{
	volatile char buf[BIG];
	void *p;

	buf[i % BIG] = (char)i;
	p = deep_leaf(); /* call(deep_leaf) */
	buf[(i + 1) % BIG] = buf[i % BIG];
	return p;
}

__attribute__((noipa)) void shallow(void)
{
	void *p = malloc(24);

	keep(p);
	free(p);
}

static unsigned long nshallow = 40000, ndeep = 2000;

__attribute__((noipa)) void *run(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < nshallow; i++)
		shallow();
	for (unsigned long i = 0; i < ndeep; i++) {
		kept = big_frame((unsigned)i); /* call(big_frame) */
		keep(kept);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct expect_sum sum = { 0 };
	pthread_t t;

	if (argc > 1)
		nshallow = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		ndeep = strtoul(argv[2], NULL, 0);
	if (argc > 3 && !strcmp(argv[3], "thread")) {
		if (pthread_create(&t, NULL, run, NULL) || pthread_join(t, NULL))
			return 1;
	} else {
		run(NULL);
	}
	expect_site("malloc", ndeep, 48 * ndeep, "deep_leaf,big_frame,run");
	sum.alloc_calls = nshallow + ndeep;
	sum.free_calls = nshallow;
	sum.live_blocks = ndeep;
	sum.live_bytes = 48 * ndeep;
	expect_summary(&sum);
	return 0;
}
