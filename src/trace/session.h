/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SESSION_H
#define HEAPTRACE_SESSION_H

/* What the tracer's modules (launch, attach, dispatch, detach, the loop) share of one run. */
#include <stdbool.h>
#include <sys/types.h>

#include "trace/tracer.h"

#include <sys/ptrace.h>

/* Every tracee is seized with these. */
#define SESSION_PTRACE_OPTS                                                                        \
	(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |  \
	 PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXIT)

struct session {
	const struct tracer_opts *opts;
	bool detaching; /* stopping every thread to let go: threads stay stopped */
	bool start_failed; /* the launched program could not be traced */
	pid_t launched_pid;
	int launched_status; /* its exit status once it ended, else -1 */
};

extern struct session session; /* session.c */

#endif
