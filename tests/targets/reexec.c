// SPDX-License-Identifier: GPL-2.0-only
/*
 * reexec: execs itself twice, each time with a cleaned environment; each image has its own
 * heap, so a report must describe only the last one.
 *   reexec          stage 0: leaks 3 x 111 bytes (stage0_leak <- main), mallocs and frees 10
 *                   blocks, then execve("/proc/self/exe", {argv0, "1", EXPECT}, envp = {NULL}),
 *                   where EXPECT is $HEAPTRACE_EXPECT ("" if unset);
 *   reexec 1 EXPECT stage 1: exits 3 if its environment is not empty; leaks 2 x 222 bytes
 *                   (stage1_leak <- main), then execve(self, {argv0, "2", EXPECT},
 *                   envp = {"REEXEC_MARKER=2", NULL});
 *   reexec 2 EXPECT stage 2: exits 4 if its environment is not exactly REEXEC_MARKER=2; leaks
 *                   4 x 333 bytes (stage2_leak <- main) and one calloc(5, 20) (stage2_calloc
 *                   <- main), mallocs and frees 7 blocks of 50 bytes, then points environ at
 *                   a static HEAPTRACE_EXPECT=EXPECT (no heap) to write its records, writes
 *                   "reexec: stage 2\n" on stdout and exits 7.
 * An execve that fails exits 98. So the report shows exactly: 5 + 7 allocations, 7 frees,
 * 5 live blocks, 1432 live bytes. No stdio.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expect.h"

extern char **environ;

static void *volatile kept[8];

__attribute__((noipa)) void stage0_leak(unsigned i)
{
	kept[i] = malloc(111); /* site(stage0_leak) */
}

__attribute__((noipa)) void stage1_leak(unsigned i)
{
	kept[i] = malloc(222); /* site(stage1_leak) */
}

__attribute__((noipa)) void stage2_leak(unsigned i)
{
	kept[i] = malloc(333); /* site(stage2_leak) */
	expect_alloc(333);
}

__attribute__((noipa)) void stage2_calloc(void)
{
	kept[4] = calloc(5, 20); /* site(stage2_calloc) */
	expect_alloc(100);
}

__attribute__((noipa)) void churn(unsigned n, size_t size, int count)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		void *p = malloc(size);

		keep(p);
		free(p);
		if (count) {
			expect_alloc(size);
			expect_free(size);
		}
	}
}

int main(int argc, char **argv)
{
	static char expect_env[4096] = "HEAPTRACE_EXPECT=";
	static char marker[] = "REEXEC_MARKER=2";
	static char one[] = "1", two[] = "2";
	static char *env2[] = { marker, NULL }, *noenv[] = { NULL };
	static char *myenv[] = { expect_env, NULL };
	char *args[4] = { argv[0], NULL, NULL, NULL };
	const char *expect = getenv("HEAPTRACE_EXPECT");
	unsigned i;

	if (argc < 3) {
		for (i = 0; i < 3; i++)
			stage0_leak(i);
		churn(10, 64, 0);
		args[1] = one;
		args[2] = (char *)(expect ? expect : "");
		execve("/proc/self/exe", args, noenv);
		return 98;
	}
	if (strcmp(argv[1], "1") == 0) {
		if (environ && environ[0])
			return 3;
		for (i = 0; i < 2; i++)
			stage1_leak(i);
		args[1] = two;
		args[2] = argv[2];
		execve("/proc/self/exe", args, env2);
		return 98;
	}
	if (!environ || !environ[0] || strcmp(environ[0], marker) != 0 || environ[1])
		return 4;
	for (i = 0; i < 4; i++)
		stage2_leak(i);
	stage2_calloc();
	churn(7, 50, 1);
	if (strlen(argv[2]) + sizeof("HEAPTRACE_EXPECT=") > sizeof(expect_env))
		return 2;
	strcat(expect_env, argv[2]);
	environ = myenv;
	expect_site("malloc", 4, 4 * 333, "stage2_leak,main");
	expect_site("calloc", 1, 100, "stage2_calloc,main");
	expect_summary(&expect_tracked);
	expect_exit(7);
	if (write(1, "reexec: stage 2\n", 16) != 16)
		return 2;
	return 7;
}
