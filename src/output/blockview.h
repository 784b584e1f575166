/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_BLOCKVIEW_H
#define HEAPTRACE_BLOCKVIEW_H

/*
 * --blocks: each live block (address, size, age) under its backtrace, as memleak -a lists
 * them. The blocks that pass the report's filters, grouped by backtrace, oldest first.
 */
#include <stdbool.h>
#include <stdio.h>

#include "heap/table.h"

struct blockview {
	const struct block **v; /* sorted by backtrace, time, address */
	uint64_t *first; /* v[first[bt] .. first[bt + 1]) are backtrace bt's */
};

/* Which blocks to list (report.c passes its filters, so this file needs none of report.h). */
typedef bool (*blockview_keep_fn)(void *ctx, const struct table *t, const struct block *blk);

void blockview_build(struct blockview *bv, const struct table *t, blockview_keep_fn keep,
		     void *ctx);
void blockview_free(struct blockview *bv);

/* Backtrace bt's blocks, one line each ("   block 0x55d0c1e2a2a0 100 bytes, age 1.234 ms"). */
void blockview_text(FILE *f, const struct blockview *bv, const struct table *t, uint32_t bt,
		    uint64_t now_ns);

/* ,"blocks":[{"address":"0x..","size":N,"age_ns":N},...] */
void blockview_json(FILE *f, const struct blockview *bv, const struct table *t, uint32_t bt,
		    uint64_t now_ns);

#endif
