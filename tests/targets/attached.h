/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The two ways a harm target runs (tests/e2e/test_harm.py): launched by heaptrace, or started
 * by the test for heaptrace -p. attached_begin: in "attach" mode, allow any tracer, say
 * "ready\n" on stdout and wait until a tracer's patches are in malloc, calloc and free
 * (entries.h). attached_end: in "attach" mode, SIGINT to the tracer and wait until it has
 * detached (its report written). No stdio, no heap.
 */
#ifndef HEAPTRACE_TARGET_ATTACHED_H
#define HEAPTRACE_TARGET_ATTACHED_H

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "entries.h"
#include "handshake.h"

static int attached_mode;

static __attribute__((unused)) void attached_begin(int argc, char **argv)
{
	struct timespec start;

	attached_mode = argc > 1 && !strcmp(argv[1], "attach");
	if (!attached_mode)
		return;
	entries_save();
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (write(1, "ready\n", 6) != 6)
		_exit(99);
	handshake_now(&start);
	while (!entries_trapped(1)) {
		if (handshake_expired(&start))
			_exit(99);
		handshake_pause();
	}
}

static __attribute__((unused)) void attached_end(void)
{
	long tracer;

	if (!attached_mode)
		return;
	tracer = handshake_tracer();
	if (tracer <= 0 || kill((pid_t)tracer, SIGINT))
		_exit(98);
	handshake_wait_untraced();
}

/* Say s on stdout: the program's own output, which the test compares. */
static __attribute__((unused)) void attached_say(const char *s)
{
	if (write(1, s, strlen(s)) != (ssize_t)strlen(s))
		_exit(99);
}

#endif
