// SPDX-License-Identifier: GPL-2.0-only
/*
 * wrapped: every allocation goes through an xmalloc-style wrapper (xmalloc, and xstrdup on top
 * of it), as in git or GNU tools; the blocks stay live. A report's labels must name the callers,
 * load_names and load_table, not the wrappers (test_reports.py). With --depth=2 the backtraces
 * of load_names end inside the wrappers (malloc, xmalloc): the --depth hint applies.
 * Writes a "view" record per caller: name=label leaf=CALLER count bytes. With an argument it
 * waits for a byte (or the end) on standard input before it exits, for --live to show it.
 */
#include <stdlib.h>
#include <string.h>

#include "expect.h"

#define NAMES_N 5
#define TABLE_N 3
#define TABLE_SIZE 4096

__attribute__((noipa)) void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	return p;
}

__attribute__((noipa)) char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

__attribute__((noipa)) void *load_names(void)
{
	return xstrdup("a name of 24 characters"); /* site(load_names) */
}

__attribute__((noipa)) void *load_table(void)
{
	return xmalloc(TABLE_SIZE); /* site(load_table) */
}

static void view(const char *leaf, unsigned long count, unsigned long bytes)
{
	struct expect_buf b;

	b.n = 0;
	expect_str(&b, "view name=label leaf=");
	expect_str(&b, leaf);
	expect_kv(&b, "count", count);
	expect_kv(&b, "bytes", bytes);
	expect_flush(&b);
}

int main(int argc, char **argv)
{
	char c;
	int i;

	for (i = 0; i < NAMES_N; i++) {
		keep(load_names());
		expect_alloc(24);
	}
	for (i = 0; i < TABLE_N; i++) {
		keep(load_table());
		expect_alloc(TABLE_SIZE);
	}
	view("load_names", NAMES_N, NAMES_N * 24);
	view("load_table", TABLE_N, TABLE_N * TABLE_SIZE);
	expect_summary(&expect_tracked);
	if (argc > 1 && read(0, &c, 1) < 0)
		return 1;
	(void)argv;
	return 0;
}
