// SPDX-License-Identifier: GPL-2.0-only
/*
 * crash: leaks 2 x 123 bytes from leak_before_crash <- main, then dies: with no argument or
 * "segv" by writing through a NULL pointer (SIGSEGV: heaptrace must write the report and exit
 * 128 + 11 = 139), with "abort" by abort() (SIGABRT: 134). No stdio; nothing else is allocated.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"

static void *volatile kept[2];
static int *volatile nowhere;

__attribute__((noipa)) void leak_before_crash(unsigned i)
{
	kept[i] = malloc(123); /* site(leak_before_crash) */
	expect_alloc(123);
}

__attribute__((noipa)) void crash_segv(void)
{
	*nowhere = 1;
}

int main(int argc, char **argv)
{
	int aborting = argc > 1 && strcmp(argv[1], "abort") == 0;

	leak_before_crash(0);
	leak_before_crash(1);
	expect_site("malloc", 2, 246, "leak_before_crash,main");
	expect_summary(&expect_tracked);
	expect_exit(128 + (aborting ? SIGABRT : SIGSEGV));
	if (aborting)
		abort();
	crash_segv();
	return 0;
}
