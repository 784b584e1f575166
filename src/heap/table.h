/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_TABLE_H
#define HEAPTRACE_TABLE_H

/*
 * The heap as heaptrace sees it, kept in heaptrace's own memory: live blocks by pointer
 * (open addressing, O(1) expected) and the distinct backtraces they were allocated from.
 * Pure bookkeeping, no ptrace: the counting rules of man/heaptrace.1 ("What is counted") live
 * here.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap/blockset.h"

struct bt {
	uint32_t pcs_off; /* index of the first PC in table.pcs */
	uint32_t depth; /* number of PCs; pcs[0] is the allocation function */
	uint64_t hash;
	uint64_t count, peak_count; /* live blocks now, and their highest value */
	uint64_t size, peak_size; /* live bytes now, and their highest value */
	uint64_t total_count, total_size; /* every allocation ever made from here */
	uint64_t first_ns; /* time of the first allocation */
	uint64_t temporary; /* temporary allocations: heaptrack's rule, see table_note_free */
	uint64_t temporary_size; /* their bytes */
	/* count and size when the whole heap peaked, if changed since (snap_epoch ==
	 * table.peak_epoch); else they are count and size: read them with table_bt_at_peak */
	uint64_t snap_count, snap_size;
	uint32_t snap_epoch;
	uint8_t heap; /* the heap of its blocks (its key's TABLE_HEAP_SHIFT bits) */
	uint8_t weigh; /* TABLE_EXACT, TABLE_SCALED or TABLE_UNSEEN: what a block counts for */
};

/*
 * --sample-bytes=N (table.sample_bytes): an allocation of at least N bytes is always taken,
 * a smaller one of s bytes with probability 1 / ceil(N / s) (about s / N; decided in the entry
 * stub or by the accounting). A backtrace's figures are then estimates: each of its blocks
 * below N bytes counts as ceil(N / s) blocks of s bytes (the inverse of its probability, an
 * integer, so that every figure stays a whole number and a free takes back what its
 * allocation added).
 * The summaries count every call and block exactly: the blocks not taken are live under one
 * backtrace whose blocks count for nothing (TABLE_UNSEEN), so that their frees are known.
 */
#define TABLE_EXACT 0 /* every block counts once (nothing is sampled, or all of its kind is) */
#define TABLE_SCALED 1 /* taken by probability: a block counts as table_weight's blocks */
#define TABLE_UNSEEN 2 /* the blocks not taken: they count in the summaries only */

struct table_summary {
	uint64_t alloc_calls, free_calls, unknown_frees;
	uint64_t live_blocks, live_bytes;
	uint64_t peak_live_blocks, peak_live_bytes;
	uint64_t total_allocated_bytes;
	uint64_t freed_from_before_attach; /* frees (and reallocs) of seeded blocks */
	/* frees of blocks not live that the C library made as a thread ended (acct.h) */
	uint64_t library_frees;
	uint64_t temporary; /* see struct bt */
	uint64_t peak_ns; /* when live_bytes first reached peak_live_bytes */
	uint64_t peak_at_blocks; /* live_blocks then */
};

/* pcs[0] of the backtraces of blocks that were live before the attach (table_seed); pcs[1] is
 * their size class's upper bound. No allocation function has address 0. */
#define TABLE_PC_BEFORE_ATTACH 0
/* pcs[0] of the one backtrace of the blocks --sample-bytes did not take (TABLE_UNSEEN) */
#define TABLE_PC_NOT_SAMPLED 1

/*
 * Heaps other than the first (hooks.h: a custom heap's blocks may sit at the very address of
 * the malloc block they were carved from) are kept in the same table under a key with the
 * heap's number in the top byte, which no user-space address of the four arches uses (they
 * stop at 2^56). Heap 0's keys are the pointers themselves.
 */
#define TABLE_HEAP_SHIFT 56
#define TABLE_HEAPS 8
_Static_assert((uint64_t)(TABLE_HEAPS - 1) << TABLE_HEAP_SHIFT < BLOCKSET_KEY_FREE_BIT,
	       "keys leave the live set's mark bit free");

static inline uint64_t table_key(unsigned heap, uint64_t ptr)
{
	return ptr && heap ? ptr | (uint64_t)heap << TABLE_HEAP_SHIFT : ptr;
}

static inline unsigned table_key_heap(uint64_t key)
{
	return (unsigned)(key >> TABLE_HEAP_SHIFT) % TABLE_HEAPS;
}

/* The address a key stands for, without its heap's number. */
static inline uint64_t table_key_addr(uint64_t key)
{
	return key & (((uint64_t)1 << TABLE_HEAP_SHIFT) - 1);
}

struct table {
	struct bt *bts;
	uint32_t nbts, bts_cap;
	uint32_t *bt_slots; /* hash index into bts, UINT32_MAX = empty */
	uint32_t bt_slots_cap; /* power of two */
	uint64_t *pcs;
	uint32_t npcs, pcs_cap;
	struct blockset live; /* the live blocks */
	struct table_summary sum; /* heap 0's (the only one a table has unless keys say else) */
	struct table_summary heap_sum[TABLE_HEAPS]; /* the other heaps' ([0] unused): calls,
						      * live and peak figures only */
	uint64_t base_ns; /* time of the first allocation: blocks keep their age from it */
	uint32_t epoch; /* table_reset()s so far: a backtrace index is of one epoch only */
	uint32_t peak_epoch; /* new maxima of live_bytes so far */
	/* the last allocation's backtrace and size, for the temporary rule; TABLE_NO_LAST: a
	 * free came since */
	uint32_t last_bt;
	uint64_t last_size;
	uint64_t sample_bytes; /* --sample-bytes (TABLE_SCALED), 0: none; set with the table */
	uint32_t unsampled; /* table_unsampled's backtrace + 1, 0: not made yet */
};

#define TABLE_NO_LAST UINT32_MAX

void table_init(struct table *t);
void table_destroy(struct table *t);
/* dst becomes a deep copy of src (a forked child's heap starts as its parent's). */
void table_copy(struct table *dst, const struct table *src);
/* Forget everything but the epoch, which goes up (the image was replaced by execve). */
void table_reset(struct table *t);

/* Return the index of the backtrace with these PCs, adding it if new. depth >= 1. */
uint32_t table_intern(struct table *t, const uint64_t *pcs, uint32_t depth);

/* The same for an allocation t's --sample-bytes took by probability (TABLE_SCALED). */
uint32_t table_intern_scaled(struct table *t, const uint64_t *pcs, uint32_t depth);

/* The backtrace of the blocks t's --sample-bytes did not take (TABLE_UNSEEN). */
uint32_t table_unsampled(struct table *t);

/* --sample-bytes=n takes an allocation of size bytes with probability 1 / the value (1: always;
 * a size of 0 is taken as 1 byte). The entry stubs spell the same in assembly. */
static inline uint64_t table_sample_odds(uint64_t n, uint64_t size)
{
	uint64_t s = size ? size : 1;

	return s >= n ? 1 : (n + s - 1) / s;
}

/* How many blocks of size bytes one block of b counts for in b's figures (see TABLE_SCALED). */
static inline uint64_t table_weight(const struct table *t, const struct bt *b, uint64_t size)
{
	if (b->weigh == TABLE_UNSEEN)
		return 0;
	return b->weigh == TABLE_EXACT ? 1 : table_sample_odds(t->sample_bytes, size);
}

/* The summary of heap h (t->sum for heap 0). */
static inline struct table_summary *table_heap_sum(struct table *t, unsigned h)
{
	return h ? &t->heap_sum[h % TABLE_HEAPS] : &t->sum;
}

/* Record an allocation of size bytes at ptr (non-zero) from backtrace bt at time now.
 * A ptr already live (its free was missed) is replaced without counting a free. */
void table_alloc(struct table *t, uint64_t ptr, uint64_t size, uint32_t bt, uint64_t now);

/* Make room for n more live blocks at once (seeding many). */
void table_reserve(struct table *t, uint64_t n);

/* Record a block that was live before the attach (no allocation call counted), under bt. */
void table_seed(struct table *t, uint64_t ptr, uint64_t size, uint32_t bt, uint64_t now);

static inline bool table_bt_before_attach(const struct table *t, const struct bt *b)
{
	return b->depth == 2 && t->pcs[b->pcs_off] == TABLE_PC_BEFORE_ATTACH;
}

/* Record the release of ptr. Return true if it was live; false (and unknown_frees++)
 * if heaptrace never saw it allocated. ptr == 0 counts nothing and returns false. */
bool table_free(struct table *t, uint64_t ptr);

/*
 * realloc in two steps, so that no other thread's allocation at the old address can be
 * taken for it while the call runs: table_take removes a live block from the counts at the
 * call's entry (true if it was live; nothing is counted yet); table_put_back undoes that when
 * the call failed; table_count_release counts the release when it succeeded (a free if the
 * block was known, else an unknown free).
 */
bool table_take(struct table *t, uint64_t ptr, struct block *out);
bool table_put_back(struct table *t, const struct block *blk); /* false: address reused */
void table_count_release(struct table *t, bool known);
/* The same for a block of heap (table_key_heap of its key). */
void table_heap_release(struct table *t, unsigned heap, bool known);

/*
 * Release the addresses [lo, hi) of heap's blocks (a block spans its size from its address):
 * a block wholly inside is freed (a free call); one partly inside keeps the rest, in one or
 * two pieces (a hole in its middle), under its backtrace and time, counting no call.
 * Return how many blocks had addresses released. A scan of every live block: for the mmap
 * heap, whose releases are rare.
 */
unsigned table_release_range(struct table *t, unsigned heap, uint64_t lo, uint64_t hi);

/*
 * Temporary allocations, as heaptrack counts them (its accumulatedtracedata.cpp), so that
 * heaptrack_print on heaptrace's heaptrack file gives heaptrace's figure: a free of a block
 * whose size and call chain (pcs[1] on) are those of the last allocation made, in any thread,
 * with no free of a known block in between. table_note_alloc right after ptr's allocation;
 * table_note_free before ptr leaves the table (table_free, table_take).
 */
void table_note_alloc(struct table *t, uint64_t ptr);
void table_note_free(struct table *t, uint64_t ptr);

/* Look up a live block; NULL if none. */
const struct block *table_find(const struct table *t, uint64_t ptr);

/* When a block was allocated, in ns (millisecond precision). */
static inline uint64_t table_block_ns(const struct table *t, const struct block *blk)
{
	return t->base_ns + (uint64_t)blk->time_ms * 1000000;
}

/* b's live blocks and bytes at the moment the whole heap peaked (sum.peak_ns). */
static inline void table_bt_at_peak(const struct table *t, const struct bt *b, uint64_t *count,
				    uint64_t *size)
{
	bool snap = b->snap_epoch == t->peak_epoch;

	*count = snap ? b->snap_count : b->count;
	*size = snap ? b->snap_size : b->size;
}

static inline const uint64_t *table_bt_pcs(const struct table *t, const struct bt *b)
{
	return t->pcs + b->pcs_off;
}

#endif
