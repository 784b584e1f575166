/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_LABELS_H
#define HEAPTRACE_LABELS_H

/*
 * What a backtrace is called where one line must name it (the text report's headers, the HTML
 * page's legend and table, the live view): its innermost frame that is named and no allocator
 * or allocator wrapper (symbols/wrappers.h). And the figures of the frame hints: how many
 * frames have names, and how many backtraces --depth cut before they left the wrappers.
 */
#include <stdbool.h>
#include <stddef.h>

#include "heap/table.h"
#include "output/reportinfo.h"

/* Frame idx of backtrace b, symbolised through ri (the blocks found at the attach: their group
 * and size class). */
void report_frame(const struct report_info *ri, const struct table *t, const struct bt *b,
		  unsigned idx, struct sym_frame *sf);

/* Was frame idx (>= 1) of b found by scanning the stack, a guess? */
bool report_frame_guessed(const struct table *t, const struct bt *b, unsigned idx);

/*
 * b's label in buf: "function (file:line)" of its innermost named frame after frame 0 that
 * is no allocator; else "module +0xOFFSET" of the first unnamed frame past the named
 * allocators (or after frame 0, if none is named); else the allocation function. A frame
 * found by scanning the stack is prefixed "?". Return the frame's index.
 */
unsigned report_label(const struct report_info *ri, const struct table *t, const struct bt *b,
		      char *buf, size_t len);

struct report_frame_stats {
	unsigned frames, unnamed; /* frames after frame 0 of the backtraces looked at */
	/* of which cut by --depth before a label frame, past a named allocator wrapper */
	unsigned backtraces, in_wrappers;
};

/* The figures of the hints over the backtraces that allocated the most (at most max of them;
 * depth_limit: --depth, 0 for none). */
void report_frame_stats(const struct report_info *ri, const struct table *t,
			unsigned depth_limit, unsigned max, struct report_frame_stats *st);

#endif
