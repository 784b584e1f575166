/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_TRACER_H
#define HEAPTRACE_TRACER_H

/* Launch or attach, the ptrace event loop, and detaching. */
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "output/report.h"

struct tracer_opts {
	char *const *argv; /* program to launch (argv[0] resolved to a path in path) */
	const char *path;
	pid_t pid; /* attach to this process instead */
	unsigned depth; /* frames kept per backtrace */
	unsigned sample; /* unwind every sample-th allocation; the others keep frames 0 and 1 */
	bool follow_fork;
	/* run a launched program on heaptrace's CPU while it has one thread (see tracer.c) */
	bool pin;
	int mode; /* MODE_STUBS: entry stubs where safe (stubs.h); MODE_BREAKPOINT: a stop per call */
	unsigned stack_copy; /* bytes of stack an entry stub copies per allocation */
	bool inventory; /* --pid: read the heap that was there before the attach (inventory.h) */
	double duration; /* seconds; 0 = until the end */
	double interval; /* seconds between periodic reports; 0 = none */
	unsigned count; /* periodic reports at most; 0 = unlimited */
	bool live; /* --live: the terminal view (live.h) instead of periodic reports */
	struct report_opts report;
	FILE *out;
};

enum { MODE_STUBS, MODE_BREAKPOINT };

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

struct proc;
struct symbolizer;
struct sym_frame;

/* Read what p's entry stubs and return log hold, so that its table is up to date. */
void tracer_drain(struct proc *p);

/* A report_resolve_fn (report.h) for a live process: ctx is a struct tracer_resolver whose sym
 * was opened on p's modules. Frame 0 gets the hook's public name. */
struct tracer_resolver {
	struct proc *p;
	struct symbolizer *sym;
};
void tracer_resolve_frame(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out);

/* Write the report of p now (sort: a SORT_* key, or -1 for the one of the options). */
void tracer_report(struct proc *p, int sort);

#endif
