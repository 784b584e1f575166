// SPDX-License-Identifier: GPL-2.0-only
/*
 * exitcode: leaks 2 x 77 bytes from leak_before_exit <- main and frees one 40-byte block, then
 * calls exit(3) (or exit(N) for an argument N): heaptrace must exit with the same status and say
 * so in the report's exit_status. No stdio.
 */
#include <stdlib.h>

#include "expect.h"

static void *volatile kept[2];

__attribute__((noipa)) void leak_before_exit(unsigned i)
{
	kept[i] = malloc(77); /* site(leak_before_exit) */
	expect_alloc(77);
}

int main(int argc, char **argv)
{
	int status = argc > 1 ? atoi(argv[1]) : 3;
	void *p = malloc(40);

	expect_alloc(40);
	keep(p);
	free(p);
	expect_free(40);
	leak_before_exit(0);
	leak_before_exit(1);
	expect_site("malloc", 2, 154, "leak_before_exit,main");
	expect_summary(&expect_tracked);
	expect_exit(status);
	exit(status);
}
