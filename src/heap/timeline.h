/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_TIMELINE_H
#define HEAPTRACE_TIMELINE_H

/*
 * The heap over time, from a replayed log: at most TIMELINE_POINTS intervals of equal length
 * (1 ms at first, doubled, with neighbours merged, whenever the run outgrows them). Each keeps
 * the live bytes and blocks after its last event and the most bytes live at any moment in it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TIMELINE_POINTS 256

struct timeline_point {
	bool seen; /* an event fell in it */
	uint64_t live_bytes, live_blocks, max_bytes;
};

struct timeline {
	uint64_t interval_ns;
	uint32_t n; /* points up to the last one with an event */
	struct timeline_point p[TIMELINE_POINTS];
};

void timeline_init(struct timeline *tl);

/* The heap held live_bytes in live_blocks right after an event at elapsed_ns. */
void timeline_note(struct timeline *tl, uint64_t elapsed_ns, uint64_t live_bytes,
		   uint64_t live_blocks);

/* ,"timeline":{"interval_ns":N,"points":[{"elapsed_ns":..,"live_bytes":..,"live_blocks":..,
 * "max_live_bytes":..},...]}: elapsed_ns is each interval's end; intervals without events
 * carry the figures before them. */
void timeline_json(FILE *f, const struct timeline *tl);

/* The same as a table. */
void timeline_text(FILE *f, const struct timeline *tl);

#endif
