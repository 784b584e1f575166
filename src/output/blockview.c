// SPDX-License-Identifier: GPL-2.0-only
/* The live blocks of each backtrace, for --blocks (blockview.h). */
#include <inttypes.h>
#include <stdlib.h>

#include "output/blockview.h"
#include "util/util.h"

static int by_bt_time(const void *a, const void *b)
{
	const struct block *x = *(const struct block *const *)a;
	const struct block *y = *(const struct block *const *)b;

	if (x->bt != y->bt)
		return x->bt < y->bt ? -1 : 1;
	if (x->time_ms != y->time_ms)
		return x->time_ms < y->time_ms ? -1 : 1;
	return x->ptr < y->ptr ? -1 : x->ptr > y->ptr;
}

void blockview_build(struct blockview *bv, const struct table *t, blockview_keep_fn keep,
		     void *ctx)
{
	uint64_t n = 0;

	bv->v = xmalloc((t->live.n ? t->live.n : 1) * sizeof(*bv->v));
	bv->first = xcalloc((size_t)t->nbts + 1, sizeof(*bv->first));
	for (uint64_t s = 0; s < t->live.cap; s++) {
		const struct block *blk = &t->live.slots[s];

		if (blk->ptr && n < t->live.n && keep(ctx, t, blk))
			bv->v[n++] = blk;
	}
	qsort(bv->v, n, sizeof(*bv->v), by_bt_time);
	/* first[bt]: the number of blocks of the backtraces before bt */
	for (uint64_t i = 0; i < n; i++)
		bv->first[bv->v[i]->bt + 1]++;
	for (uint32_t b = 0; b < t->nbts; b++)
		bv->first[b + 1] += bv->first[b];
}

void blockview_free(struct blockview *bv)
{
	free(bv->v);
	free(bv->first);
}

static uint64_t age(const struct table *t, const struct block *blk, uint64_t now_ns)
{
	uint64_t then = table_block_ns(t, blk);

	return now_ns > then ? now_ns - then : 0;
}

void blockview_text(FILE *f, const struct blockview *bv, const struct table *t, uint32_t bt,
		    uint64_t now_ns)
{
	for (uint64_t i = bv->first[bt]; i < bv->first[bt + 1]; i++)
		fprintf(f, "   block 0x%" PRIx64 " %" PRIu64 " bytes, age %.3f ms\n", bv->v[i]->ptr,
			(uint64_t)bv->v[i]->size, age(t, bv->v[i], now_ns) / 1e6);
}

void blockview_json(FILE *f, const struct blockview *bv, const struct table *t, uint32_t bt,
		    uint64_t now_ns)
{
	fputs(",\"blocks\":[", f);
	for (uint64_t i = bv->first[bt]; i < bv->first[bt + 1]; i++)
		fprintf(f, "%s{\"address\":\"0x%" PRIx64 "\",\"size\":%" PRIu64 ",\"age_ns\":%" PRIu64
			   "}", i > bv->first[bt] ? "," : "", bv->v[i]->ptr, (uint64_t)bv->v[i]->size,
			age(t, bv->v[i], now_ns));
	fputc(']', f);
}
