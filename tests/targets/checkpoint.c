// SPDX-License-Identifier: GPL-2.0-only
/*
 * checkpoint: talks to the heaptrace tracing it, for the tests of on-demand, periodic and final
 * reports. $HEAPTRACE_OUTFILE names heaptrace's --outfile (JSON Lines, one line per report).
 * usage: checkpoint MODE
 *   usr    leak 1 x 100 (first_leak <- main); SIGUSR1 to heaptrace; wait for report 1;
 *          leak 3 x 20 (second_leak <- main); SIGUSR2 to heaptrace; wait for report 2; exit 0.
 *          So report 1 has first_leak only; report 2 (by count) second_leak then first_leak;
 *          the final report (3, by size) first_leak then second_leak.
 *   int    leak 1 x 100; SIGINT to heaptrace; wait for the report and for heaptrace to detach;
 *          then malloc and free untraced (a breakpoint left behind would kill us with SIGTRAP)
 *          and exit 5: heaptrace, which launched us, waits and exits 5.
 *   term   the same with SIGTERM.
 *   wait N leak 1 x 100; wait until heaptrace has written N reports (--interval/--count,
 *          --duration); if heaptrace detached (--duration), malloc and free untraced; exit 0.
 * Status 99 means a checkpoint never came (60 s). No stdio.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "handshake.h"

static void *volatile kept[4];

__attribute__((noipa)) void first_leak(void)
{
	kept[0] = malloc(100); /* site(first_leak) */
}

__attribute__((noipa)) void second_leak(unsigned i)
{
	kept[1 + i] = malloc(20); /* site(second_leak) */
}

static void signal_tracer(int sig)
{
	long tracer = handshake_tracer();

	if (tracer <= 0 || kill((pid_t)tracer, sig) != 0)
		_exit(98);
}

static void untraced_work(void)
{
	unsigned i;

	handshake_wait_untraced();
	for (i = 0; i < 100; i++) {
		void *p = malloc(64);

		keep(p);
		free(p);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned i;

	first_leak();
	if (strcmp(mode, "usr") == 0) {
		signal_tracer(SIGUSR1);
		handshake_wait_reports(1);
		for (i = 0; i < 3; i++)
			second_leak(i);
		signal_tracer(SIGUSR2);
		handshake_wait_reports(2);
		expect_site("malloc", 1, 100, "first_leak,main");
		expect_site("malloc", 3, 60, "second_leak,main");
		return 0;
	}
	if (strcmp(mode, "int") == 0 || strcmp(mode, "term") == 0) {
		signal_tracer(mode[0] == 'i' ? SIGINT : SIGTERM);
		handshake_wait_reports(1);
		untraced_work();
		return 5;
	}
	if (strcmp(mode, "wait") == 0 && argc > 2) {
		handshake_wait_reports(strtoul(argv[2], NULL, 0));
		if (handshake_tracer() == 0)
			untraced_work();
		return 0;
	}
	return 97;
}
