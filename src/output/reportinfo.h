/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_REPORTINFO_H
#define HEAPTRACE_REPORTINFO_H

/* What a report says besides its table: the process, its figures, how to name frames. Apart
 * from report.h so that labels.h, which report.c uses, needs nothing else of it. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "heap/table.h"
#include "inventory/inventory.h"
#include "symbols/symbols.h"

/* Symbolise pcs[index] of a backtrace (index 0 is the allocation function's entry;
 * the others are return addresses). */
typedef void (*report_resolve_fn)(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out);

struct report_info {
	int pid;
	const char *command; /* argv joined by spaces */
	bool exited; /* exit_status is known */
	int exit_status; /* exit code, or 128+signal */
	bool has_statm;
	uint64_t statm_vss, statm_rss, statm_shared; /* bytes */
	uint64_t now_ns; /* time of the report, for ages */
	uint64_t elapsed_ns; /* since tracing started */
	/* calls the entry stubs left unrecorded, as heaptrace fell behind for longer than
	 * --max-stall, or whose return a jump took (0: none, or not known); stubs_stuck: and every
	 * call since the stubs were turned off for a record a thread never finished. Either: the
	 * counts are not exact. */
	uint64_t calls_not_seen;
	bool stubs_stuck;
	const char *kind; /* which report: "final", "periodic #3", "SIGUSR1"; text: in its header
			   * line, NULL: none */
	const struct inventory *inv; /* the heap at the attach, NULL if none */
	const char *const *allocators; /* the allocators traced (summary.allocators), or NULL */
	unsigned nallocators;
	report_resolve_fn resolve;
	void *resolve_ctx;
	/* more of the report, or NULL: JSON members (each starting with ','), at the end of the
	 * object; text, after the rest */
	void (*extra_json)(FILE *f, void *ctx);
	void (*extra_text)(FILE *f, void *ctx);
	void *extra_ctx;
	/* the heaps' names by number (HEAP_MAX of them: a log's), NULL: hooks.h's, this run's */
	const char *const *heap_names;
	/* a filter of blocks besides the options' (report --only-leaked at a moment), or NULL */
	bool (*keep)(void *ctx, const struct block *blk);
	void *keep_ctx;
};

#endif
