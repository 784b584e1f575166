/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_HTML_H
#define HEAPTRACE_HTML_H

/*
 * --format=html: one self-contained page (html/: its markup, style and script, and the
 * vendored d3 and d3-flame-graph, all inlined at build time) with the report's figures
 * embedded as JSON. heaptrace aggregates; the browser only draws. The flame graph is merged
 * here from every backtrace (by frame names, the smallest frames left to their callers); the
 * table and the timeline get HTML_TOP backtraces per measure. So the page stays small and
 * opens at once whatever the size of the run.
 */
#include <stdint.h>
#include <stdio.h>

#include "output/report.h"
#include "heap/table.h"
#include "heap/timeline.h"

#define HTML_TOP 200 /* backtraces embedded per measure (live bytes, blocks, calls, ...) */
#define HTML_SERIES_BTS 8 /* backtraces stacked in the timeline */

/*
 * The top backtraces' live bytes over a timeline's intervals, from a second replay of the
 * same log: per interval, at the moment the heap was largest in it (so that the stack sits
 * under the interval's max_live_bytes), and in intervals without events the state before, as
 * timeline.h has it. Events need not come in time order (a log's frees may be stamped when
 * heaptrace drained them): each interval keeps its own maximum and last state.
 */
struct html_series {
	uint64_t interval_ns;
	uint32_t n; /* points, as in the timeline */
	uint32_t k; /* backtraces followed */
	uint32_t bts[HTML_SERIES_BTS]; /* their indices in the table (of epoch) */
	uint32_t epoch;
	uint64_t *max; /* n: 1 + the most live bytes noted in each interval; 0: none noted */
	uint64_t *at_max; /* n * HTML_SERIES_BTS: their bytes then */
	uint64_t *last; /* n * HTML_SERIES_BTS: their bytes after its last note */
};

/* Follow the HTML_SERIES_BTS backtraces of t (the whole log replayed) that held the most
 * bytes at any time, over the intervals of tl. */
void html_series_init(struct html_series *s, const struct table *t, const struct timeline *tl);

/* The heap changed at elapsed_ns (t is the replay in progress). */
void html_series_note(struct html_series *s, const struct table *t, uint64_t elapsed_ns);

void html_series_free(struct html_series *s);

/* The page of a report: ri as for report_write (its extra_json, the timeline, is embedded
 * too), series NULL when there is none. Return 0 or -errno from the stream. */
int html_write(FILE *f, const struct table *t, const struct report_info *ri,
	       const struct html_series *series);

/* The page of a diff, from heaptrace diff's JSON (len bytes). Return 0 or -errno. */
int html_write_diff(FILE *f, const char *json, size_t len);

#endif
