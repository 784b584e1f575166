/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_HEAPTRACK_H
#define HEAPTRACE_HEAPTRACK_H

/*
 * report --format=heaptrack: heaptrack's interpreted data file (file format version 3, as
 * heaptrack 1.4 writes and heaptrack_print and heaptrack_gui read), streamed from the events
 * of a replayed log: one text record a line, numbers in lowercase hex; strings (s), frames (i),
 * trace nodes (t) and allocation infos (a, one per size and trace) each written once, before
 * their first use, and every info first used in the order it was written (heaptrack_gui
 * crashes otherwise); + and - name an info; c is the time in ms, written when it changes.
 */
#include <stdint.h>
#include <stdio.h>

#include "output/report.h"

struct htk;

/* Start the file on f (the header and the command line). resolve names the frames. */
struct htk *htk_open(FILE *f, const char *command, report_resolve_fn resolve, void *ctx);

/* An allocation of size bytes from backtrace bt (pcs[0] is the allocation function, which
 * heaptrack leaves out) at ms since the start. */
void htk_alloc(struct htk *h, uint64_t ms, uint64_t size, uint32_t bt, const uint64_t *pcs,
	       uint32_t depth);
/* The release of a block of size bytes from backtrace bt. */
void htk_free(struct htk *h, uint64_t ms, uint64_t size, uint32_t bt);

/* Backtrace indices start again (the process ran execve). */
void htk_forget(struct htk *h);

/* The last time, and the end. Return 0 or -errno from f. */
int htk_close(struct htk *h, uint64_t ms);

#endif
