/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SESSION_H
#define HEAPTRACE_SESSION_H

/*
 * One run of heaptrace: its options (filled by the command line) and what the tracer's
 * modules (launch, attach, dispatch, detach, the reports, the loop) share of it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "output/report.h"

#include <sys/ptrace.h>

/* Every tracee is seized with these. */
#define SESSION_PTRACE_OPTS                                                                        \
	(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |  \
	 PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXIT)

struct acct;
struct tracer_opts;

/*
 * A view the tracer's loop drives while it traces (--live: ui/live.c's live_view; --serve:
 * serve/server.c's serve_view). The trace layer calls it and knows nothing else of it.
 */
struct tracer_view {
	/* Before launching or attaching. Return 0 or -errno (said). */
	int (*prepare)(const struct tracer_opts *o);
	/* In the launched child before exec. Async-signal-safe. */
	void (*child_setup)(void);
	/* Tracing has started (pid: the launched or attached process). */
	void (*begin)(int pid);
	/* At every turn of the loop: lower *until (0: none) to when it must run again. Return
	 * true when the user asked to detach. */
	bool (*step)(uint64_t now, uint64_t *until);
	/* Close the view: the terminal back before anything else is said. */
	void (*end)(void);
	/* The run is over: release everything. */
	void (*finish)(void);
};

struct tracer_opts {
	char *const *argv; /* program to launch (argv[0] resolved to a path in path) */
	const char *path;
	pid_t pid; /* attach to this process instead (pids[0]) */
	const pid_t *pids; /* with -p PID,PID...: every process to attach to, pid first */
	unsigned npids;
	unsigned depth; /* frames kept per backtrace */
	unsigned sample; /* unwind every sample-th allocation; the others keep frames 0 and 1 */
	uint64_t sample_bytes; /* --sample-bytes (heap/table.h: TABLE_SCALED), 0: none */
#define TRACER_SAMPLE_BYTES_MAX (1ull << 40) /* a weight times a size stays far below 2^64 */
	bool follow_fork;
	/* run a launched program on heaptrace's CPU while it has one thread (cpu.h) */
	bool pin;
	/* MODE_STUBS: entry stubs where safe (stubs.h); MODE_BREAKPOINT: a stop per call */
	int mode;
	unsigned stack_copy; /* bytes of stack an entry stub copies per allocation, 0: learned */
	unsigned max_stall_ms; /* longest wait of a stub for room in its ring (--max-stall) */
	bool inventory; /* --pid: read the heap that was there before the attach (inventory.h) */
	double duration; /* seconds; 0 = until the end */
	double interval; /* seconds between periodic reports; 0 = none */
	unsigned count; /* periodic reports at most; 0 = unlimited */
	/* --live: the terminal view (ui/live.h) instead of periodic reports; NULL: none */
	const struct tracer_view *live;
	/* --serve: the HTTP endpoint (serve/server.h); NULL: none */
	const struct tracer_view *serve;
	struct report_opts report;
	FILE *out;
};

enum { MODE_STUBS, MODE_BREAKPOINT };

struct session {
	const struct tracer_opts *opts;
	bool detaching; /* stopping every thread to let go: threads stay stopped */
	pid_t probing; /* stopping this process's threads for a look (probe.c): they stay so */
	bool start_failed; /* the launched program could not be traced */
	bool report_failed; /* a report could not be written (said once) */
	pid_t launched_pid;
	int launched_status; /* its exit status once it ended, else -1 */
	struct acct *acct; /* the one reader's accounting state, every process's (calls.h) */
};

extern struct session session; /* session.c */

#endif
