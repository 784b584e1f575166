/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_REPORTINT_H
#define HEAPTRACE_REPORTINT_H

/* What report.c shares with reportjson.c, its JSON writer: nothing for other modules. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct blockview;
struct bt;
struct report_info;
struct report_opts;
struct table;

/* A backtrace to report. */
struct entry {
	uint32_t bt;
	uint64_t count, size; /* live, after filters */
	uint64_t key; /* ascending sort key */
};

uint64_t report_since(uint64_t now, uint64_t then);
int report_entry_cmp(const void *a, const void *b);
/* Was b cut at --depth (the text report's "[...]" rule)? */
bool report_truncated(const struct table *t, const struct bt *b, const struct report_opts *o,
		      const struct report_info *ri);
uint64_t report_live_bts(const struct table *t);
/* The backtraces live when the heap peaked, largest first; their number in *n (caller
 * frees). */
struct entry *report_peak_bts(const struct table *t, uint32_t *n);
/* When the heap peaked, as time since tracing started. */
uint64_t report_peak_elapsed(const struct table *t, const struct report_info *ri);
/* The name of heap h (hooks.h), NULL if there is none. */
const char *report_heap_name(const struct report_info *ri, unsigned h);

/* The JSON report of the n entries e (bv: --blocks, or NULL). */
void report_write_json(FILE *f, const struct table *t, const struct report_opts *o,
		       const struct report_info *ri, const struct entry *e, uint32_t n,
		       const struct blockview *bv);

#endif
