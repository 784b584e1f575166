/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_MASSIF_H
#define HEAPTRACE_MASSIF_H

/*
 * report --format=massif: valgrind massif's output file (massif.out), which ms_print and
 * massif-visualizer read: the heap over time as snapshots, one per timeline interval (the live
 * bytes at its end), a detailed one at the peak (heap_tree=peak: the call tree of the blocks
 * live then) and a detailed one at the end. Times are in ms since the start.
 */
#include <stdint.h>
#include <stdio.h>

#include "output/report.h"
#include "heap/table.h"
#include "heap/timeline.h"

struct massif_info {
	const char *command;
	uint64_t peak_ns; /* when the heap peaked, since the start */
	uint64_t end_ns; /* the end, since the start */
	report_resolve_fn resolve; /* names each frame, as for report_write */
	void *resolve_ctx;
};

/* Write the run (t at its end, with its peak figures; tl over the whole run) to f.
 * Return 0 or -errno from f. */
int massif_write(FILE *f, const struct table *t, const struct timeline *tl,
		 const struct massif_info *mi);

#endif
