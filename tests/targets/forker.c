// SPDX-License-Identifier: GPL-2.0-only
/*
 * forker: processes made while traced. The parent leaks 1111 bytes (parent_leak_before <- main),
 * then:
 *   - fork(): the child mallocs and frees 100 blocks, leaks 2222 bytes (child_leak <- child_work
 *     <- main) and exits 0;
 *   - vfork() + execl("/bin/true"); system("true"); popen("echo hi") read and pclose'd
 *     (system and popen use posix_spawn: clone with CLONE_VM | CLONE_VFORK);
 * and leaks 3333 bytes (parent_leak_after <- main). Known to exit 0 only if no child was killed
 * by a signal (a breakpoint left in a child kills it with SIGTRAP) and each child exited 0:
 * fork child 10, vfork child 11, system 12, popen 13, plus 20 if it was killed by a signal.
 * Five processes in all: the parent, the fork child, and the three children that run a shell or
 * /bin/true (the shell runs "true" and "echo" as builtins). No stdio on stdout.
 * Records: the parent's live sites; the fork child's (scope=child), which include the parent's
 * first block (its heap is a copy) but not the second.
 * "forker crashchild": only the fork; the child leaks its 2222 bytes and dies of SIGSEGV (its
 * report's exit_status is 139), the parent exits 0 if the child died of exactly that, else 14.
 * Two processes.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect.h"

static void *volatile kept[3];

__attribute__((noipa)) void parent_leak_before(void)
{
	kept[0] = malloc(1111); /* site(parent_leak_before) */
}

__attribute__((noipa)) void parent_leak_after(void)
{
	kept[1] = malloc(3333); /* site(parent_leak_after) */
}

__attribute__((noipa)) void child_leak(void)
{
	kept[2] = malloc(2222); /* site(child_leak) */
}

__attribute__((noipa)) void child_work(void)
{
	unsigned i;

	for (i = 0; i < 100; i++) {
		void *p = malloc(16 + i);

		keep(p);
		free(p);
	}
	child_leak();
}

static int *volatile nowhere;

static int check(int status, int code)
{
	if (WIFSIGNALED(status))
		return code + 20;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return code;
	return 0;
}

int main(int argc, char **argv)
{
	int crash = argc > 1 && strcmp(argv[1], "crashchild") == 0;
	char buf[16] = "";
	pid_t pid;
	FILE *f;
	int status, rc;

	parent_leak_before();

	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		expect_scope("child");
		child_work();
		expect_site("malloc", 1, 2222, "child_leak,child_work,main");
		expect_site("malloc", 1, 1111, "parent_leak_before,main");
		expect_exit(crash ? 128 + SIGSEGV : 0);
		if (crash)
			*nowhere = 1;
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 3;
	if (crash) {
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
			return 14;
		parent_leak_after();
		expect_site("malloc", 1, 1111, "parent_leak_before,main");
		expect_site("malloc", 1, 3333, "parent_leak_after,main");
		expect_exit(0);
		return 0;
	}
	if ((rc = check(status, 10)) != 0)
		return rc;

	pid = vfork();
	if (pid < 0)
		return 4;
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 5;
	if ((rc = check(status, 11)) != 0)
		return rc;

	if ((rc = check(system("true"), 12)) != 0)
		return rc;

	f = popen("echo hi", "r");
	if (!f)
		return 6;
	if (!fgets(buf, sizeof(buf), f) || strcmp(buf, "hi\n") != 0)
		return 7;
	if ((rc = check(pclose(f), 13)) != 0)
		return rc;

	parent_leak_after();
	expect_site("malloc", 1, 1111, "parent_leak_before,main");
	expect_site("malloc", 1, 3333, "parent_leak_after,main");
	expect_exit(0);
	return 0;
}
