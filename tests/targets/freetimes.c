// SPDX-License-Identifier: GPL-2.0-only
/*
 * freetimes: frees made at a moment the program knows, then a quiet phase, for the times of
 * frees (test_stubs.py: a free is dated when the program made it, however late heaptrace reads
 * its record).
 *   1. FREED_N blocks of FREED_SIZE bytes (early_block), all freed at once; right after the
 *      last free the program writes "stamp name=freed ns=T", T its CLOCK_MONOTONIC time in ns;
 *   2. it sleeps QUIET_MS, making no call;
 *   3. it writes "stamp name=woke ns=T", then allocates one block of MARK_SIZE (mark_block)
 *      and frees it.
 * So every early_block free came at least woke - freed ns before mark_block's malloc. No stdio.
 */
#include <stdlib.h>
#include <time.h>

#include "expect.h"

#define FREED_N 4
#define FREED_SIZE 65536
#define MARK_SIZE 1234
#define QUIET_MS 300

__attribute__((noipa)) void *early_block(void)
{
	return malloc(FREED_SIZE); /* site(early_block) */
}

__attribute__((noipa)) void *mark_block(void)
{
	return malloc(MARK_SIZE); /* site(mark_block) */
}

static void stamp(const char *name)
{
	struct expect_buf b;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	b.n = 0;
	expect_str(&b, "stamp name=");
	expect_str(&b, name);
	expect_kv(&b, "ns", (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec);
	expect_flush(&b);
}

int main(void)
{
	struct timespec quiet = { QUIET_MS / 1000, QUIET_MS % 1000 * 1000000L };
	void *b[FREED_N], *m;
	int i;

	for (i = 0; i < FREED_N; i++) {
		b[i] = early_block();
		keep(b[i]);
		expect_alloc(FREED_SIZE);
	}
	for (i = 0; i < FREED_N; i++) {
		free(b[i]);
		expect_free(FREED_SIZE);
	}
	stamp("freed");
	while (nanosleep(&quiet, &quiet))
		;
	stamp("woke");
	m = mark_block();
	keep(m);
	expect_alloc(MARK_SIZE);
	free(m);
	expect_free(MARK_SIZE);
	expect_summary(&expect_tracked);
	return 0;
}
