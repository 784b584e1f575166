/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_REPORT_H
#define HEAPTRACE_REPORT_H

/* Sorting, filtering and printing the table: text, JSON and folded stacks. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "heap/table.h"
#include "output/reportinfo.h"

enum report_format { FMT_TEXT, FMT_JSON, FMT_FOLDED, FMT_HTML /* html.h writes it */ };
enum report_sort { SORT_SIZE, SORT_COUNT, SORT_PEAK_SIZE, SORT_PEAK_COUNT, SORT_AGE };

struct report_opts {
	enum report_format format;
	enum report_sort sort;
	unsigned top; /* text report only; 0 = all */
	uint64_t older_ns; /* only blocks at least this old; 0 = all */
	uint64_t min_size; /* only blocks with min_size <= size <= max_size */
	uint64_t max_size; /* UINT64_MAX = no limit */
	bool show_how; /* text: how each frame was found (-v) */
	/* --depth: a backtrace of this many frames may have been cut there, and is marked so
	 * ("[...]" in text and folded, "truncated" in JSON); 0: unknown, nothing is marked */
	unsigned depth_limit;
	bool label_process; /* folded: each stack under a root frame naming its process (-f) */
	/* lifetime filters: only the blocks never freed by the end of tracing (before the end a
	 * live run cannot know them: see report_info.keep for a log); or, instead of the live
	 * blocks, the temporary allocations of each backtrace (count and bytes) */
	bool only_leaked, temporary;
	bool blocks; /* list each live block (address, size, age) under its backtrace */
};

/* Does blk pass the filters of o and ri (sizes, age, keep)? */
bool report_keeps_block(const struct table *t, const struct block *blk,
			const struct report_opts *o, const struct report_info *ri);

/* Parse a --sort key; return 0 or -EINVAL. */
int report_parse_sort(const char *s, enum report_sort *out);

/* s as a JSON string, escaped, or null for NULL. */
void report_json_str(FILE *f, const char *s);
/* A frame's JSON fields after its function: ,"module":...,"file":...,"line":... */
void report_json_place(FILE *f, const struct sym_frame *sf);

/* Write one report. JSON is one line (JSON Lines) ending with '\n'.
 * Return 0 or -errno from the stream. */
int report_write(FILE *f, const struct table *t, const struct report_opts *o,
		 const struct report_info *ri);

#endif
