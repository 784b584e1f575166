// SPDX-License-Identifier: GPL-2.0-only
/*
 * notsc: a program that turns its time-stamp counter off (prctl PR_SET_TSC, PR_TSC_SIGSEGV, as
 * record/replay tools and sandboxes do: rdtsc then raises SIGSEGV), then allocates.
 * usage: notsc [launch|attach] [before]
 * "before" (with attach): the counter is turned off before heaptrace attaches; else after.
 * The main thread turns it off; a thread started after inherits the setting. Each of the two
 * threads then makes ROUNDS mallocs of 40 bytes in tsc_leak and frees all but KEEP of them, and
 * one calloc(3, 16) in tsc_calloc that it keeps. Exits 0 with "notsc: done\n"; 77 when the
 * kernel has no PR_SET_TSC (the test is skipped); 4 if PR_GET_TSC does not read back SIGSEGV.
 * First a forked child turns the counter off and runs rdtsc: the record "tsc faults=1" says it
 * died of SIGSEGV (the setting is enforced here; some hypervisors do not), "tsc faults=0" not.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "attached.h"
#include "expect.h"

#define ROUNDS 2000
#define KEEP 7

static void *volatile kept[2][KEEP + 1];

__attribute__((noipa)) void *tsc_leak(void)
{
	return malloc(40); /* site(tsc_leak) */
}

__attribute__((noipa)) void *tsc_calloc(void)
{
	return calloc(3, 16); /* site(tsc_calloc) */
}

static void *work(void *arg)
{
	unsigned w = (unsigned)(unsigned long)arg;
	int mode = -1;

	if (prctl(PR_GET_TSC, &mode, 0, 0, 0) || mode != PR_TSC_SIGSEGV)
		_exit(4);
	for (unsigned i = 0; i < ROUNDS; i++) {
		void *p = tsc_leak();

		if (!p)
			_exit(5);
		if (i < KEEP)
			kept[w][i] = p;
		else
			free(p);
	}
	kept[w][KEEP] = tsc_calloc();
	return NULL;
}

/* Whether rdtsc faults in a process that turned the counter off. */
static int tsc_faults(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		unsigned lo, hi;

		if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0))
			_exit(77);
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		_exit(99);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		_exit(77);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

static void tsc_off(void)
{
	if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0))
		_exit(77);
}

int main(int argc, char **argv)
{
	int before = argc > 2 && !strcmp(argv[2], "before");
	struct expect_buf b = { .n = 0 };
	pthread_t t;

	expect_str(&b, "tsc");
	expect_kv(&b, "faults", (unsigned long)tsc_faults());
	expect_flush(&b);
	if (before)
		tsc_off();
	attached_begin(argc, argv);
	if (!before)
		tsc_off();
	if (pthread_create(&t, NULL, work, (void *)1ul))
		_exit(6);
	work((void *)0ul);
	pthread_join(t, NULL);
	expect_site("malloc", 2 * KEEP, 2 * KEEP * 40, "tsc_leak,*");
	expect_site("calloc", 2, 2 * 48, "tsc_calloc,*");
	attached_end();
	attached_say("notsc: done\n");
	return 0;
}
