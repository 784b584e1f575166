/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_OFFLINE_H
#define HEAPTRACE_OFFLINE_H

/*
 * The commands that read a --record log (record.h): `heaptrace report FILE` (cmd/report.c)
 * and `heaptrace diff A B` (cmd/diff.c). Both replay its events into a table as the live
 * tracer did (cmd/replay.c: the same table.c rules, so the same figures), symbolise by
 * build-id (cmd/side.c) and write the report.
 */
#include <stdbool.h>
#include <stdio.h>

#include "output/report.h"

struct html_series;

/* Which moment of the run the report shows. */
enum offline_at {
	AT_END, /* the end: the live final report */
	AT_PEAK, /* right after the allocation that first took the heap to its maximum */
	AT_TIME, /* at_ms milliseconds after tracing started (the end if later) */
};

struct offline_opts {
	const char *path; /* "-": standard input */
	const char *sysroot; /* the recorded machine's root, or NULL */
	const char *debuginfo_path; /* more directories of debug files (colon-separated), or NULL */
	enum offline_at at; /* not AT_END: path may not be "-" (the log is read twice) */
	uint64_t at_ms;
	bool timeline; /* add the heap over time (timeline.h) */
	bool heaptrack; /* write heaptrack's data file instead (heaptrack.h); needs a file */
	bool pprof; /* write a pprof profile instead (pprof.h), of the moment of at */
	bool massif; /* write valgrind massif's file instead (massif.h), of the whole run */
	bool calls; /* print every call up to the moment first (calltrace.h) */
	int pid; /* --pid: only this process of the log (-f logs hold several); 0: every one,
		  * but heaptrack, pprof, massif and diff take one and refuse a log of several */
	struct report_opts report;
	FILE *out;
	struct html_series *series; /* inside cmd/: follows the replay (html.h) */
};

/* Write the report. Return 0, -EINVAL for a log that is not one this heaptrace reads (said in
 * one line), or -errno (said too). */
int offline_report(const struct offline_opts *o);

/* Per backtrace (matched by function, file and line, or module and offset, so two runs at
 * other addresses compare), the growth of the live heap from a to b, largest first; written
 * to b->out in b->report.format (text or json). Return 0 or -errno (said). */
int offline_diff(const struct offline_opts *a, const struct offline_opts *b);

#endif
