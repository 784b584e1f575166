// SPDX-License-Identifier: GPL-2.0-only
/* The heap over time (timeline.h): fixed intervals that double when the run outgrows them. */
#include <inttypes.h>
#include <string.h>

#include "heap/timeline.h"

void timeline_init(struct timeline *tl)
{
	memset(tl, 0, sizeof(*tl));
	tl->interval_ns = 1000000;
}

/* Two neighbours as one: the later one's state, the larger maximum. */
static struct timeline_point merge(const struct timeline_point *a, const struct timeline_point *b)
{
	struct timeline_point m = b->seen ? *b : *a;

	m.seen = a->seen || b->seen;
	m.max_bytes = a->max_bytes > b->max_bytes ? a->max_bytes : b->max_bytes;
	return m;
}

void timeline_note(struct timeline *tl, uint64_t elapsed_ns, uint64_t live_bytes,
		   uint64_t live_blocks)
{
	uint64_t k = elapsed_ns / tl->interval_ns;
	struct timeline_point *p;

	while (k >= TIMELINE_POINTS) {
		for (uint32_t i = 0; i < TIMELINE_POINTS / 2; i++)
			tl->p[i] = merge(&tl->p[2 * i], &tl->p[2 * i + 1]);
		memset(&tl->p[TIMELINE_POINTS / 2], 0, sizeof(tl->p) / 2);
		tl->interval_ns *= 2;
		tl->n = (tl->n + 1) / 2;
		k = elapsed_ns / tl->interval_ns;
	}
	p = &tl->p[k];
	if (!p->seen)
		p->max_bytes = 0;
	p->seen = true;
	p->live_bytes = live_bytes;
	p->live_blocks = live_blocks;
	if (live_bytes > p->max_bytes)
		p->max_bytes = live_bytes;
	if (k + 1 > tl->n)
		tl->n = (uint32_t)k + 1;
}

/* Point i as reported: an interval without events carries the state before it. */
static struct timeline_point point(const struct timeline *tl, uint32_t i,
				   struct timeline_point *carry)
{
	if (tl->p[i].seen)
		*carry = tl->p[i];
	else
		carry->max_bytes = carry->live_bytes;
	return *carry;
}

void timeline_json(FILE *f, const struct timeline *tl)
{
	struct timeline_point carry = { 0 };

	fprintf(f, ",\"timeline\":{\"interval_ns\":%" PRIu64 ",\"points\":[", tl->interval_ns);
	for (uint32_t i = 0; i < tl->n; i++) {
		struct timeline_point p = point(tl, i, &carry);

		fprintf(f, "%s{\"elapsed_ns\":%" PRIu64 ",\"live_bytes\":%" PRIu64
			   ",\"live_blocks\":%" PRIu64 ",\"max_live_bytes\":%" PRIu64 "}",
			i ? "," : "", (i + 1) * tl->interval_ns, p.live_bytes, p.live_blocks,
			p.max_bytes);
	}
	fputs("]}", f);
}

void timeline_text(FILE *f, const struct timeline *tl)
{
	struct timeline_point carry = { 0 };

	fputs("\n=== timeline ===\n        until (ms)   live bytes  live blocks   most bytes\n", f);
	for (uint32_t i = 0; i < tl->n; i++) {
		struct timeline_point p = point(tl, i, &carry);

		fprintf(f, "%18.3f %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n",
			(i + 1) * tl->interval_ns / 1e6, p.live_bytes, p.live_blocks, p.max_bytes);
	}
}
