/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_TRACER_H
#define HEAPTRACE_TRACER_H

/* Launch or attach, the ptrace event loop, and detaching. */
#include "trace/session.h"

/* Exit statuses (also in main.c and the man page). */
#define EXIT_USAGE 1
#define EXIT_START 2

/*
 * Trace until the program ends, --duration passes, or a signal ends tracing (every one that
 * would end heaptrace: the program is let go first, then the final report is written). Return
 * the status heaptrace exits with: the launched program's (128+signal if killed), 0 after
 * --pid, or EXIT_START when tracing could not start or a report could not be written (the
 * reason was printed).
 */
int tracer_run(const struct tracer_opts *o);

#endif
