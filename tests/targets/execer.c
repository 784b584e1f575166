// SPDX-License-Identifier: GPL-2.0-only
/*
 * execer: leaks 999 bytes from leak_before_exec <- main, then execs itself with the argument
 * "after"; the new image leaks 2 x 444 bytes from leak_after_exec <- main and exits 0. A
 * successful execve replaces the heap, so the report shows only the second image's blocks. No
 * stdio.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expect.h"

static void *volatile kept[2];

__attribute__((noipa)) void leak_before_exec(void)
{
	kept[0] = malloc(999); /* site(leak_before_exec) */
}

__attribute__((noipa)) void leak_after_exec(unsigned i)
{
	kept[i] = malloc(444); /* site(leak_after_exec) */
	expect_alloc(444);
}

int main(int argc, char **argv)
{
	static char after[] = "after";
	char *args[] = { argv[0], after, NULL };

	if (argc > 1 && strcmp(argv[1], "after") == 0) {
		leak_after_exec(0);
		leak_after_exec(1);
		expect_site("malloc", 2, 888, "leak_after_exec,main");
		expect_summary(&expect_tracked);
		return 0;
	}
	leak_before_exec();
	execv("/proc/self/exe", args);
	return 98;
}
