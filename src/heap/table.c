// SPDX-License-Identifier: GPL-2.0-only
/*
 * Heap bookkeeping. Live blocks sit in a set keyed by pointer (blockset.h). Backtraces are
 * interned once by their PCs and never removed: their counters outlive their blocks (peaks,
 * totals, age).
 */
#include <stdlib.h>
#include <string.h>

#include "heap/table.h"
#include "util/util.h"

#define BT_SLOTS_MIN_CAP 256u
#define BT_EMPTY UINT32_MAX

void table_init(struct table *t)
{
	memset(t, 0, sizeof(*t));
	t->last_bt = TABLE_NO_LAST;
}

void table_destroy(struct table *t)
{
	free(t->bts);
	free(t->bt_slots);
	free(t->pcs);
	blockset_destroy(&t->live);
	table_init(t);
}

/* dst is overwritten as if uninitialised: it must own no memory (fresh, or table_destroy()ed). */
void table_copy(struct table *dst, const struct table *src)
{
	*dst = *src;
	dst->bts = NULL;
	dst->bt_slots = NULL;
	dst->pcs = NULL;
	if (src->bts_cap) {
		dst->bts = xmalloc(src->bts_cap * sizeof(*src->bts));
		memcpy(dst->bts, src->bts, src->nbts * sizeof(*src->bts));
	}
	if (src->bt_slots_cap) {
		dst->bt_slots = xmalloc(src->bt_slots_cap * sizeof(*src->bt_slots));
		memcpy(dst->bt_slots, src->bt_slots, src->bt_slots_cap * sizeof(*src->bt_slots));
	}
	if (src->pcs_cap) {
		dst->pcs = xmalloc(src->pcs_cap * sizeof(*src->pcs));
		memcpy(dst->pcs, src->pcs, src->npcs * sizeof(*src->pcs));
	}
	blockset_copy(&dst->live, &src->live);
}

void table_reset(struct table *t)
{
	uint32_t epoch = t->epoch + 1;
	uint64_t sample_bytes = t->sample_bytes;

	/* Release the memory too: the new image's heap may be far smaller. */
	table_destroy(t);
	t->epoch = epoch;
	t->sample_bytes = sample_bytes;
}

/* One multiply per frame and one mix at the end: a mix per frame was most of the time
 * table_intern took per record. */
static uint64_t bt_hash(const uint64_t *pcs, uint32_t depth)
{
	uint64_t h = depth;

	for (uint32_t i = 0; i < depth; i++)
		h = (h ^ pcs[i]) * 0x9e3779b97f4a7c15ULL;
	return hash64(h);
}

static void bt_slots_grow(struct table *t)
{
	uint32_t cap = t->bt_slots_cap ? t->bt_slots_cap * 2 : BT_SLOTS_MIN_CAP;
	uint32_t mask = cap - 1;

	free(t->bt_slots);
	t->bt_slots = xmalloc(cap * sizeof(*t->bt_slots));
	memset(t->bt_slots, 0xff, cap * sizeof(*t->bt_slots));
	t->bt_slots_cap = cap;
	for (uint32_t i = 0; i < t->nbts; i++) {
		uint32_t s = t->bts[i].hash & mask;

		while (t->bt_slots[s] != BT_EMPTY)
			s = (s + 1) & mask;
		t->bt_slots[s] = i;
	}
}

uint32_t table_intern(struct table *t, const uint64_t *pcs, uint32_t depth)
{
	uint64_t h = bt_hash(pcs, depth);
	uint32_t mask, s;
	struct bt *b;

	if ((uint64_t)(t->nbts + 1) * 4 > (uint64_t)t->bt_slots_cap * 3)
		bt_slots_grow(t);
	mask = t->bt_slots_cap - 1;
	for (s = h & mask; t->bt_slots[s] != BT_EMPTY; s = (s + 1) & mask) {
		b = &t->bts[t->bt_slots[s]];
		if (b->hash == h && b->depth == depth &&
		    !memcmp(table_bt_pcs(t, b), pcs, depth * sizeof(*pcs)))
			return t->bt_slots[s];
	}

	if (t->nbts == t->bts_cap) {
		t->bts_cap = t->bts_cap ? t->bts_cap * 2 : 64;
		t->bts = xrealloc(t->bts, t->bts_cap * sizeof(*t->bts));
	}
	while (t->npcs + depth > t->pcs_cap) {
		t->pcs_cap = t->pcs_cap ? t->pcs_cap * 2 : 512;
		t->pcs = xrealloc(t->pcs, t->pcs_cap * sizeof(*t->pcs));
	}
	b = &t->bts[t->nbts];
	memset(b, 0, sizeof(*b));
	b->pcs_off = t->npcs;
	b->depth = depth;
	b->hash = h;
	memcpy(t->pcs + t->npcs, pcs, depth * sizeof(*pcs));
	t->npcs += depth;
	t->bt_slots[s] = t->nbts;
	return t->nbts++;
}

uint32_t table_intern_scaled(struct table *t, const uint64_t *pcs, uint32_t depth)
{
	uint32_t bt = table_intern(t, pcs, depth);

	t->bts[bt].weigh = TABLE_SCALED;
	return bt;
}

uint32_t table_unsampled(struct table *t)
{
	uint64_t pc = TABLE_PC_NOT_SAMPLED;
	uint32_t bt;

	if (t->unsampled) /* one backtrace, asked for by every call not taken */
		return t->unsampled - 1;
	bt = table_intern(t, &pc, 1);
	t->bts[bt].weigh = TABLE_UNSEEN;
	t->unsampled = bt + 1;
	return bt;
}

void table_reserve(struct table *t, uint64_t n)
{
	blockset_reserve(&t->live, n);
}

/*
 * The heap at its peak, copied lazily: a new peak only bumps peak_epoch (every backtrace is
 * then as at the peak); a backtrace keeps its peak figures aside before its first change after.
 */
static inline void keep_peak(const struct table *t, struct bt *b)
{
	if (b->snap_epoch != t->peak_epoch) {
		b->snap_count = b->count;
		b->snap_size = b->size;
		b->snap_epoch = t->peak_epoch;
	}
}

/* Take a live block out of the counts (not of the table). */
static void block_unaccount(struct table *t, const struct block *blk)
{
	struct bt *b = &t->bts[blk->bt];
	struct table_summary *sum = table_heap_sum(t, table_key_heap(blk->ptr));
	uint64_t w = table_weight(t, b, blk->size);

	keep_peak(t, b);
	b->count -= w;
	b->size -= w * blk->size;
	sum->live_blocks--;
	sum->live_bytes -= blk->size;
}

static inline void raise_to(uint64_t *peak, uint64_t v)
{
	if (v > *peak)
		*peak = v;
}

/* A new peak of a heap's live bytes (now: its time, 0 if unknown); heap 0's makes every
 * backtrace as at the peak (keep_peak). */
static void raise_live_peak(struct table *t, struct table_summary *sum, uint64_t now)
{
	raise_to(&sum->peak_live_blocks, sum->live_blocks);
	if (sum->live_bytes > sum->peak_live_bytes) {
		sum->peak_live_bytes = sum->live_bytes;
		if (now)
			sum->peak_ns = now;
		sum->peak_at_blocks = sum->live_blocks;
		if (sum == &t->sum)
			t->peak_epoch++;
	}
}

static void block_add(struct table *t, uint64_t ptr, uint64_t size, uint32_t bt, uint64_t now,
		      bool call)
{
	struct table_summary *sum = table_heap_sum(t, table_key_heap(ptr));
	struct block *blk;
	struct bt *b;
	uint64_t w;
	bool added;

	if (!ptr)
		return; /* 0 marks an empty slot; a NULL return is no allocation anyway */
	blk = blockset_claim(&t->live, ptr, &added);
	if (!added) /* its free went unseen: drop it first so the peaks never count both */
		block_unaccount(t, blk);
	blk->size = size;
	if (!t->base_ns)
		t->base_ns = now ? now : 1;
	blk->time_ms = now <= t->base_ns ? 0 :
		       (now - t->base_ns) / 1000000 > UINT32_MAX ? UINT32_MAX :
								   (now - t->base_ns) / 1000000;
	blk->bt = bt;

	b = &t->bts[bt];
	b->heap = (uint8_t)table_key_heap(ptr);
	w = table_weight(t, b, size);
	keep_peak(t, b);
	b->count += w;
	b->size += w * size;
	if (call) {
		b->total_count += w;
		b->total_size += w * size;
	}
	raise_to(&b->peak_count, b->count);
	raise_to(&b->peak_size, b->size);
	if (!b->first_ns)
		b->first_ns = now ? now : 1;

	if (call) {
		sum->alloc_calls++;
		sum->total_allocated_bytes += size;
	}
	sum->live_blocks++;
	sum->live_bytes += size;
	raise_live_peak(t, sum, now);
}

void table_alloc(struct table *t, uint64_t ptr, uint64_t size, uint32_t bt, uint64_t now)
{
	block_add(t, ptr, size, bt, now, true);
}

void table_seed(struct table *t, uint64_t ptr, uint64_t size, uint32_t bt, uint64_t now)
{
	block_add(t, ptr, size, bt, now, false);
}

/* Count a seeded block's release (delta -1: put back after a failed realloc). */
static void count_before_attach(struct table *t, const struct block *blk, int delta)
{
	if (table_bt_before_attach(t, &t->bts[blk->bt]))
		t->sum.freed_from_before_attach += delta;
}

bool table_free(struct table *t, uint64_t ptr)
{
	struct block *blk;

	if (!ptr)
		return false;
	blk = blockset_find(&t->live, ptr);
	if (!blk) {
		table_heap_sum(t, table_key_heap(ptr))->unknown_frees++;
		return false;
	}
	count_before_attach(t, blk, 1);
	block_unaccount(t, blk);
	blockset_remove(&t->live, blk);
	table_heap_sum(t, table_key_heap(ptr))->free_calls++;
	return true;
}

const struct block *table_find(const struct table *t, uint64_t ptr)
{
	return blockset_find(&t->live, ptr);
}

bool table_take(struct table *t, uint64_t ptr, struct block *out)
{
	struct block *blk = blockset_find(&t->live, ptr);

	if (!blk)
		return false;
	*out = *blk;
	count_before_attach(t, out, 1);
	block_unaccount(t, blk);
	blockset_remove(&t->live, blk);
	return true;
}

bool table_put_back(struct table *t, const struct block *blk)
{
	struct bt *b = &t->bts[blk->bt];
	struct table_summary *sum = table_heap_sum(t, table_key_heap(blk->ptr));
	uint64_t w = table_weight(t, b, blk->size);

	if (blockset_find(&t->live, blk->ptr))
		return false; /* the address was handed out again meanwhile: the old block is gone */
	blockset_insert(&t->live, blk);
	count_before_attach(t, blk, -1);
	keep_peak(t, b);
	b->count += w;
	b->size += w * blk->size;
	sum->live_blocks++;
	sum->live_bytes += blk->size;
	/* by the counting rules the block was live all along: what was allocated while it was
	 * out (by other threads, or while the realloc was in flight) was live beside it */
	raise_to(&b->peak_count, b->count);
	raise_to(&b->peak_size, b->size);
	/* a new peak here is one too: the backtraces' figures at it must follow (the HTML page's
	 * flame graph at the peak summed 91 bytes less than the peak) */
	raise_live_peak(t, sum, 0);
	return true;
}

void table_heap_release(struct table *t, unsigned heap, bool known)
{
	if (known)
		table_heap_sum(t, heap)->free_calls++;
	else
		table_heap_sum(t, heap)->unknown_frees++;
}

void table_count_release(struct table *t, bool known)
{
	table_heap_release(t, 0, known);
}

unsigned table_release_range(struct table *t, unsigned heap, uint64_t lo, uint64_t hi)
{
	unsigned n = 0;

	if (lo >= hi || !table_heap_sum(t, heap)->live_blocks)
		return 0;
	for (uint64_t i = 0; i < t->live.cap; i++) {
		struct block blk = t->live.slots[i], piece;
		uint64_t start = table_key_addr(blk.ptr), end = start + blk.size;

		if (!blk.ptr || table_key_heap(blk.ptr) != heap || end <= lo || start >= hi ||
		    (!blk.size && (start < lo || start >= hi)))
			continue;
		n++;
		if (start >= lo && end <= hi) {
			table_free(t, blk.ptr);
		} else {
			table_take(t, blk.ptr, &piece);
			if (start < lo) {
				piece.ptr = table_key(heap, start);
				piece.size = lo - start;
				table_put_back(t, &piece);
			}
			if (end > hi) {
				piece.ptr = table_key(heap, hi);
				piece.size = end - hi;
				table_put_back(t, &piece);
			}
		}
		i = (uint64_t)-1; /* the table moved blocks around: from the start again */
	}
	return n;
}

/* Do a and b end in the same call chain? heaptrack names an allocation by its size and the
 * chain above the allocation function (pcs[1] on), so two backtraces that differ only in
 * frame 0 are one to it. */
static bool same_chain(const struct table *t, uint32_t a, uint32_t b)
{
	const struct bt *x = &t->bts[a], *y = &t->bts[b];

	return a == b || (x->depth == y->depth &&
			  !memcmp(table_bt_pcs(t, x) + 1, table_bt_pcs(t, y) + 1,
				  (x->depth - 1) * sizeof(uint64_t)));
}

void table_note_alloc(struct table *t, uint64_t ptr)
{
	const struct block *blk = table_find(t, ptr);

	t->last_bt = blk ? blk->bt : TABLE_NO_LAST;
	t->last_size = blk ? blk->size : 0;
}

void table_note_free(struct table *t, uint64_t ptr)
{
	const struct block *blk = ptr ? table_find(t, ptr) : NULL;

	if (!blk)
		return; /* heaptrack's file has no record of an unknown free */
	if (t->last_bt != TABLE_NO_LAST && blk->size == t->last_size &&
	    same_chain(t, blk->bt, t->last_bt)) {
		struct bt *b = &t->bts[blk->bt];
		uint64_t w = table_weight(t, b, blk->size);

		b->temporary += w;
		b->temporary_size += w * blk->size;
		table_heap_sum(t, table_key_heap(ptr))->temporary++;
	}
	t->last_bt = TABLE_NO_LAST;
}
