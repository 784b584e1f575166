/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_TARGETS_CHURN_H
#define HEAPTRACE_TARGETS_CHURN_H

/*
 * One round of a churning worker thread (busy.c, steady.c): churn_malloc a block of 16..271
 * bytes, fill it with a pattern, churn_realloc it 64 bytes larger, check the pattern survived,
 * free it; churn_calloc 1..8 x 24 bytes, check it is zeroed, free it. So a worker holds at most
 * one churn block at any moment. A damaged block sets churn_damaged; a failed allocation
 * exits 2. leak_block is the leak site (LEAK_SIZE bytes).
 */
#include <stdlib.h>
#include <unistd.h>

#define LEAK_SIZE 72

static volatile int churn_damaged;

__attribute__((noipa)) void *churn_malloc(size_t n)
{
	return malloc(n);
}

__attribute__((noipa)) void *churn_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

__attribute__((noipa)) void *churn_calloc(size_t n, size_t size)
{
	return calloc(n, size);
}

__attribute__((noipa)) void *leak_block(void)
{
	return malloc(LEAK_SIZE);
}

static void churn_round(unsigned id, unsigned long i)
{
	size_t n = 16 + (i * 7 + id) % 256, k, m = 1 + i % 8;
	unsigned char *p = churn_malloc(n), *q;

	if (!p)
		_exit(2);
	for (k = 0; k < n; k++)
		p[k] = (unsigned char)(k ^ id ^ i);
	q = churn_realloc(p, n + 64);
	if (!q)
		_exit(2);
	for (k = 0; k < n; k++)
		if (q[k] != (unsigned char)(k ^ id ^ i))
			churn_damaged = 1;
	free(q);
	q = churn_calloc(m, 24);
	if (!q)
		_exit(2);
	for (k = 0; k < m * 24; k++)
		if (q[k])
			churn_damaged = 1;
	free(q);
}

#endif
