// SPDX-License-Identifier: GPL-2.0-only
/*
 * clean: mallocs, callocs and reallocs 10 blocks and frees them all; nothing is live at exit, so
 * the text report prints nothing and the JSON report has no backtraces. No stdio.
 */
#include <stdlib.h>

#include "expect.h"

int main(void)
{
	void *p[10];
	unsigned i;

	for (i = 0; i < 10; i++) {
		p[i] = i % 2 ? malloc(10 + i) : calloc(2, 10 + i);
		keep(p[i]);
		expect_alloc(i % 2 ? 10 + i : 2 * (10 + i));
	}
	p[0] = realloc(p[0], 1000);
	keep(p[0]);
	expect_free(2 * 10);
	expect_alloc(1000);
	free(p[0]);
	expect_free(1000);
	for (i = 1; i < 10; i++) {
		free(p[i]);
		expect_free(i % 2 ? 10 + i : 2 * (10 + i));
	}
	expect_summary(&expect_tracked);
	return 0;
}
