/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SNAPSHOT_H
#define HEAPTRACE_SNAPSHOT_H

/*
 * The heap of a traced process as it is now: its table brought up to date, its frames
 * symbolised, its report written. Called from the loop, at an exit (dispatch.c) and by the
 * live view; it never waits for a tracee event.
 */
#include <stdint.h>

struct proc;
struct symbolizer;
struct sym_frame;

/* Read what p's entry stubs and return log hold, so that its table is up to date. */
void snapshot_drain(struct proc *p);

/* A report_resolve_fn (report.h) for a live process: ctx is a struct snapshot_resolver whose
 * sym was opened on p's modules. Frame 0 gets the hook's public name. */
struct snapshot_resolver {
	struct proc *p;
	struct symbolizer *sym;
};
void snapshot_resolve_frame(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out);

/* Write the report of p now (sort: a SORT_* key, or -1 for the one of the options; kind: which
 * report this is, as report_info.kind, NULL for the final one). A failure is said once and
 * noted in session.report_failed. */
void snapshot_report(struct proc *p, int sort, const char *kind);

#endif
