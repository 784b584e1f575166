// SPDX-License-Identifier: GPL-2.0-only
/*
 * quiet: allocates 1 x 77 bytes from born_early <- main, then makes no call heaptrace stops
 * at for 600 ms before it exits. The block's age in the final report must cover those 600 ms
 * (a tracer that learns of the return late must still date the block from the call).
 */
#include <time.h>

#include "expect.h"

static void *volatile kept;

__attribute__((noipa)) void born_early(void)
{
	kept = malloc(77); /* site(born_early) */
	expect_alloc(77);
}

int main(void)
{
	struct timespec ts = { 0, 600 * 1000 * 1000 };

	born_early();
	expect_site("malloc", 1, 77, "born_early,main");
	expect_summary(&expect_tracked);
	expect_exit(0);
	while (nanosleep(&ts, &ts))
		;
	return 0;
}
