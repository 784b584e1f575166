// SPDX-License-Identifier: GPL-2.0-only
/* Table bookkeeping: the counting rules of man/heaptrace.1, interning, and the pointer hash. */
#include <unistd.h>

#include "heap/table.h"
#include "util/util.h"
#include "unittest.h"

static const uint64_t PCS_A[] = { 0x1000, 0x2000, 0x3000 };
static const uint64_t PCS_B[] = { 0x1000, 0x2000, 0x4000 };

#define CHECK_SUM(t, ac, fc, uf, lb, ly)                                                           \
	do {                                                                                       \
		CHECK_EQ((t)->sum.alloc_calls, ac);                                                \
		CHECK_EQ((t)->sum.free_calls, fc);                                                 \
		CHECK_EQ((t)->sum.unknown_frees, uf);                                              \
		CHECK_EQ((t)->sum.live_blocks, lb);                                                \
		CHECK_EQ((t)->sum.live_bytes, ly);                                                 \
	} while (0)

TEST_CASE(empty_table)
{
	struct table t;

	table_init(&t);
	CHECK(table_find(&t, 0x1000) == NULL);
	CHECK(!table_free(&t, 0x1000));
	CHECK_SUM(&t, 0, 0, 1, 0, 0);
	CHECK_EQ(sizeof(struct block), 24);
	table_destroy(&t);
	table_destroy(&t); /* destroy leaves an empty table */
}

TEST_CASE(alloc_free_counts)
{
	struct table t;
	uint32_t a;
	const struct block *blk;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	table_alloc(&t, 0x100, 10, a, 5000000);
	table_alloc(&t, 0x200, 20, a, 6000000);
	CHECK_SUM(&t, 2, 0, 0, 2, 30);
	CHECK_EQ(t.sum.total_allocated_bytes, 30);
	blk = table_find(&t, 0x200);
	REQUIRE(blk);
	CHECK_EQ(blk->size, 20);
	CHECK_EQ(blk->bt, a);
	CHECK_EQ(table_block_ns(&t, blk), 6000000); /* ms precision */

	CHECK(table_free(&t, 0x100));
	CHECK(table_find(&t, 0x100) == NULL);
	CHECK_SUM(&t, 2, 1, 0, 1, 20);
	CHECK_EQ(t.bts[a].count, 1);
	CHECK_EQ(t.bts[a].size, 20);
	CHECK_EQ(t.bts[a].total_count, 2);
	CHECK_EQ(t.bts[a].total_size, 30);
	CHECK_EQ(t.bts[a].first_ns, 5000000);
	table_destroy(&t);
}

TEST_CASE(peaks_are_independent_maxima)
{
	struct table t;
	uint32_t a;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	/* Three small blocks (count peak 3, 3 bytes), then one big one (size peak 1000). */
	table_alloc(&t, 0x10, 1, a, 1);
	table_alloc(&t, 0x20, 1, a, 1);
	table_alloc(&t, 0x30, 1, a, 1);
	table_free(&t, 0x10);
	table_free(&t, 0x20);
	table_free(&t, 0x30);
	table_alloc(&t, 0x40, 1000, a, 2);
	CHECK_EQ(t.bts[a].peak_count, 3);
	CHECK_EQ(t.bts[a].peak_size, 1000);
	CHECK_EQ(t.sum.peak_live_blocks, 3);
	CHECK_EQ(t.sum.peak_live_bytes, 1000);
	table_free(&t, 0x40);
	CHECK_EQ(t.bts[a].peak_count, 3);
	CHECK_EQ(t.bts[a].peak_size, 1000);
	CHECK_EQ(t.bts[a].count, 0);
	CHECK_EQ(t.bts[a].size, 0);
	table_destroy(&t);
}

TEST_CASE(first_ns)
{
	struct table t;
	uint32_t a, b;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	b = table_intern(&t, PCS_B, 3);
	CHECK_EQ(t.bts[a].first_ns, 0);
	table_alloc(&t, 0x10, 1, a, 0);
	CHECK_EQ(t.bts[a].first_ns, 1); /* 0 means unset, so time 0 is stored as 1 */
	table_alloc(&t, 0x20, 1, b, 50);
	table_free(&t, 0x20);
	table_alloc(&t, 0x20, 1, b, 90);
	CHECK_EQ(t.bts[b].first_ns, 50); /* the first allocation ever, not the first live one */
	table_destroy(&t);
}

TEST_CASE(realloc_same_pointer)
{
	struct table t;
	uint32_t a, b;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	b = table_intern(&t, PCS_B, 3);
	table_alloc(&t, 0x100, 100, a, 1);
	/* realloc(0x100, 150) == 0x100: the old block goes first, so peaks never count both. */
	CHECK(table_free(&t, 0x100));
	table_alloc(&t, 0x100, 150, b, 2);
	CHECK_SUM(&t, 2, 1, 0, 1, 150);
	CHECK_EQ(t.sum.peak_live_bytes, 150);
	CHECK_EQ(t.sum.peak_live_blocks, 1);
	CHECK_EQ(t.sum.total_allocated_bytes, 250);
	CHECK_EQ(t.bts[a].count, 0);
	CHECK_EQ(t.bts[b].count, 1);
	CHECK_EQ(table_find(&t, 0x100)->size, 150);
	table_destroy(&t);
}

TEST_CASE(realloc_new_pointer)
{
	struct table t;
	uint32_t a;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	table_alloc(&t, 0x100, 100, a, 1);
	CHECK(table_free(&t, 0x100));
	table_alloc(&t, 0x900, 300, a, 2);
	CHECK_SUM(&t, 2, 1, 0, 1, 300);
	CHECK_EQ(t.sum.peak_live_bytes, 300);
	CHECK(table_find(&t, 0x100) == NULL);
	CHECK(table_find(&t, 0x900) != NULL);
	CHECK_EQ(t.bts[a].peak_count, 1);
	table_destroy(&t);
}

TEST_CASE(realloc_to_zero)
{
	struct table t;
	uint32_t a;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	table_alloc(&t, 0x100, 100, a, 1);
	/* realloc(p, 0) returned NULL: a free and no allocation. */
	CHECK(table_free(&t, 0x100));
	CHECK_SUM(&t, 1, 1, 0, 0, 0);
	table_destroy(&t);
}

TEST_CASE(double_and_unknown_free)
{
	struct table t;
	uint32_t a;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	table_alloc(&t, 0x100, 8, a, 1);
	CHECK(table_free(&t, 0x100));
	CHECK(!table_free(&t, 0x100));
	CHECK(!table_free(&t, 0xdead0));
	CHECK_SUM(&t, 1, 1, 2, 0, 0);
	CHECK_EQ(t.bts[a].count, 0);
	CHECK_EQ(t.bts[a].size, 0);
	table_destroy(&t);
}

TEST_CASE(free_null)
{
	struct table t;
	uint32_t a;

	table_init(&t);
	CHECK(!table_free(&t, 0));
	a = table_intern(&t, PCS_A, 3);
	table_alloc(&t, 0x100, 8, a, 1);
	CHECK(!table_free(&t, 0));
	CHECK_SUM(&t, 1, 0, 0, 1, 8);
	table_destroy(&t);
}

TEST_CASE(alloc_over_live_pointer)
{
	struct table t;
	uint32_t a, b;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	b = table_intern(&t, PCS_B, 3);
	table_alloc(&t, 0x100, 100, a, 1);
	table_alloc(&t, 0x100, 40, b, 2); /* the free of the first was missed */
	CHECK_SUM(&t, 2, 0, 0, 1, 40);
	CHECK_EQ(t.sum.peak_live_blocks, 1);
	CHECK_EQ(t.sum.peak_live_bytes, 100);
	CHECK_EQ(t.bts[a].count, 0);
	CHECK_EQ(t.bts[a].size, 0);
	CHECK_EQ(t.bts[b].count, 1);
	CHECK_EQ(t.bts[b].size, 40);
	CHECK_EQ(t.live.n, 1);
	CHECK_EQ(table_find(&t, 0x100)->bt, b);
	CHECK(table_free(&t, 0x100));
	CHECK_SUM(&t, 2, 1, 0, 0, 0);
	table_destroy(&t);
}

TEST_CASE(interning)
{
	struct table t;
	uint64_t copy[3] = { 0x1000, 0x2000, 0x3000 };
	uint32_t a, b, c, d;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	CHECK_EQ(table_intern(&t, copy, 3), a);
	b = table_intern(&t, PCS_B, 3);
	c = table_intern(&t, PCS_A, 2); /* a prefix of A is another backtrace */
	d = table_intern(&t, PCS_B, 2); /* same PCs as c */
	CHECK(a != b);
	CHECK(c != a && c != b);
	CHECK_EQ(d, c);
	CHECK_EQ(t.nbts, 3);
	CHECK_EQ(t.bts[c].depth, 2);
	CHECK_EQ(table_bt_pcs(&t, &t.bts[b])[2], 0x4000);

	/* Many backtraces: the index grows and every one is still found. */
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t pcs[2] = { 0x5000, i };

		CHECK_EQ(table_intern(&t, pcs, 2), 3 + i);
	}
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t pcs[2] = { 0x5000, i };

		if (table_intern(&t, pcs, 2) != 3 + i)
			UNITTEST_FAIL("backtrace %" PRIu64 " lost", i);
	}
	CHECK_EQ(t.nbts, 5003);
	CHECK_EQ(table_intern(&t, PCS_A, 3), a);
	table_destroy(&t);
}

/* Pointers whose home slot in a table of the given capacity is `home`. */
static uint64_t ptr_with_home(uint64_t cap, uint64_t home, uint64_t *next)
{
	for (;; *next += 16)
		if (blockset_home(*next, cap) == home)
			return (*next += 16) - 16;
}

TEST_CASE(backward_shift_with_collisions)
{
	/* Runs that wrap past the end of the array: homes 1022, 1023, 0, 1 in a 1024-slot table. */
	static const uint64_t homes[] = { 1023, 1022, 1023, 0, 1022, 1, 0, 1023, 1, 0 };
	enum { N = ARRAY_SIZE(homes) };
	/* Deletion orders: first, last, middle, and a scramble. */
	static const int orders[][N] = {
		{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 },
		{ 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 },
		{ 4, 5, 3, 6, 2, 7, 1, 8, 0, 9 },
		{ 1, 7, 3, 9, 0, 5, 2, 8, 6, 4 },
	};
	uint64_t ptrs[N], next = 0x10000;

	for (int i = 0; i < N; i++)
		ptrs[i] = ptr_with_home(1024, homes[i], &next);

	for (unsigned o = 0; o < ARRAY_SIZE(orders); o++) {
		struct table t;
		bool live[N];
		uint32_t a;

		table_init(&t);
		a = table_intern(&t, PCS_A, 3);
		for (int i = 0; i < N; i++) {
			table_alloc(&t, ptrs[i], i + 1, a, 1);
			live[i] = true;
		}
		REQUIRE(t.live.cap == 1024);
		for (int k = 0; k < N; k++) {
			CHECK(table_free(&t, ptrs[orders[o][k]]));
			live[orders[o][k]] = false;
			for (int i = 0; i < N; i++) {
				const struct block *blk = table_find(&t, ptrs[i]);

				if (live[i] ? !blk || blk->size != (uint64_t)i + 1 : blk != NULL)
					UNITTEST_FAIL("order %u step %d: block %d wrong", o, k, i);
			}
		}
		CHECK_EQ(t.live.n, 0);
		for (uint64_t s = 0; s < t.live.cap; s++)
			if (t.live.slots[s].ptr)
				UNITTEST_FAIL("slot %" PRIu64 " not empty", s);
		table_destroy(&t);
	}
}

TEST_CASE(million_blocks)
{
	enum { N = 1100000 };
	const uint64_t stride = 7919; /* prime, coprime with N: frees in scrambled order */
	struct table t;
	uint32_t bt[4];

	table_init(&t);
	for (int i = 0; i < 4; i++) {
		uint64_t pcs[2] = { 0x1000, 0x2000 + i };

		bt[i] = table_intern(&t, pcs, 2);
	}
	for (uint64_t i = 0; i < N; i++)
		table_alloc(&t, 0x7f0000000000 + i * 16, i % 100 + 1, bt[i % 4], (i + 1) * 1000000);
	CHECK_EQ(t.live.n, N);
	CHECK_SUM(&t, N, 0, 0, N, 50 * (uint64_t)N + N / 2);
	CHECK_EQ(t.bts[bt[0]].count + t.bts[bt[1]].count + t.bts[bt[2]].count + t.bts[bt[3]].count,
		 N);
	/* At most 9/10 full and at least 6/10 after growing by half: 24-byte slots cost at most 40
	 * bytes per block, and the mapping is the only copy */
	CHECK(t.live.bytes <= 40 * (uint64_t)t.live.n + (uint64_t)sysconf(_SC_PAGESIZE));

	for (uint64_t k = 0; k < N; k++) {
		uint64_t i = k * stride % N;

		if (!table_free(&t, 0x7f0000000000 + i * 16)) {
			UNITTEST_FAIL("free %" PRIu64 " not found", i);
			break;
		}
		/* Spot-check a neighbour freed later, and one already gone. */
		if (k % 1024 == 0 && k + 1 < N) {
			uint64_t j = (k + 1) * stride % N;
			const struct block *blk = table_find(&t, 0x7f0000000000 + j * 16);

			CHECK(blk && blk->size == j % 100 + 1 && table_block_ns(&t, blk) == (j + 1) * 1000000);
			CHECK(table_find(&t, 0x7f0000000000 + i * 16) == NULL);
		}
	}
	CHECK_EQ(t.live.n, 0);
	CHECK_SUM(&t, N, N, 0, 0, 0);
	CHECK_EQ(t.sum.peak_live_blocks, N);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(t.bts[bt[i]].count, 0);
		CHECK_EQ(t.bts[bt[i]].size, 0);
		CHECK_EQ(t.bts[bt[i]].total_count, N / 4);
	}
	table_destroy(&t);
}

TEST_CASE(copy_is_independent)
{
	struct table src, dst;
	uint32_t a, b;

	table_init(&src);
	a = table_intern(&src, PCS_A, 3);
	table_alloc(&src, 0x100, 10, a, 1);
	table_alloc(&src, 0x200, 20, a, 2);
	table_copy(&dst, &src);

	/* The child frees and allocates; the parent must not see it, and back. */
	CHECK(table_free(&dst, 0x100));
	b = table_intern(&dst, PCS_B, 3);
	table_alloc(&dst, 0x300, 30, b, 3);
	table_alloc(&src, 0x400, 40, a, 4);

	CHECK_SUM(&src, 3, 0, 0, 3, 70);
	CHECK_EQ(src.nbts, 1);
	CHECK(table_find(&src, 0x100) != NULL);
	CHECK(table_find(&src, 0x300) == NULL);
	CHECK_EQ(src.bts[a].count, 3);

	CHECK_SUM(&dst, 3, 1, 0, 2, 50);
	CHECK_EQ(dst.nbts, 2);
	CHECK(table_find(&dst, 0x100) == NULL);
	CHECK(table_find(&dst, 0x200) != NULL);
	CHECK(table_find(&dst, 0x400) == NULL);
	CHECK_EQ(dst.bts[a].count, 1);
	CHECK_EQ(table_intern(&dst, PCS_A, 3), a);
	table_destroy(&src);
	table_destroy(&dst);

	/* Copying an empty table works too. */
	table_init(&src);
	table_copy(&dst, &src);
	CHECK(table_find(&dst, 0x100) == NULL);
	table_destroy(&dst);
}

TEST_CASE(reset)
{
	struct table t;
	uint32_t a;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	table_alloc(&t, 0x100, 10, a, 1);
	table_free(&t, 0x999);
	table_reset(&t);
	CHECK_SUM(&t, 0, 0, 0, 0, 0);
	CHECK_EQ(t.sum.peak_live_bytes, 0);
	CHECK_EQ(t.nbts, 0);
	CHECK_EQ(t.live.n, 0);
	CHECK(table_find(&t, 0x100) == NULL);
	/* Usable again, as after an execve. */
	a = table_intern(&t, PCS_B, 3);
	CHECK_EQ(a, 0);
	table_alloc(&t, 0x100, 5, a, 1);
	CHECK_SUM(&t, 1, 0, 0, 1, 5);
	table_destroy(&t);
}

TEST_CASE(peak_snapshot)
{
	struct table t;
	uint32_t a, b;
	uint64_t c, sz;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	b = table_intern(&t, PCS_B, 3);
	table_alloc(&t, 0x100, 100, a, 1000);
	table_alloc(&t, 0x200, 50, b, 2000);
	table_alloc(&t, 0x300, 30, a, 3000); /* peak: 180 bytes, a 130 in 2, b 50 in 1 */
	table_free(&t, 0x100);
	table_free(&t, 0x200);
	table_alloc(&t, 0x400, 20, b, 4000); /* 50 bytes now */
	CHECK_EQ(t.sum.peak_live_bytes, 180);
	CHECK_EQ(t.sum.peak_ns, 3000);
	CHECK_EQ(t.sum.peak_at_blocks, 3);
	table_bt_at_peak(&t, &t.bts[a], &c, &sz);
	CHECK_EQ(c, 2);
	CHECK_EQ(sz, 130);
	table_bt_at_peak(&t, &t.bts[b], &c, &sz);
	CHECK_EQ(c, 1);
	CHECK_EQ(sz, 50);
	/* a new peak: every backtrace as it is now */
	table_alloc(&t, 0x500, 1000, b, 5000);
	CHECK_EQ(t.sum.peak_live_bytes, 1050);
	table_bt_at_peak(&t, &t.bts[a], &c, &sz);
	CHECK_EQ(sz, 30);
	table_bt_at_peak(&t, &t.bts[b], &c, &sz);
	CHECK_EQ(sz, 1020);
	/* the same level again is not a new peak: the first time counts */
	table_free(&t, 0x300);
	table_alloc(&t, 0x600, 30, b, 6000);
	CHECK_EQ(t.sum.peak_ns, 5000);
	table_bt_at_peak(&t, &t.bts[a], &c, &sz);
	CHECK_EQ(c, 1);
	CHECK_EQ(sz, 30);
	table_destroy(&t);
}

TEST_CASE(temporary_rule)
{
	struct table t;
	uint32_t a, b;

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	b = table_intern(&t, PCS_B, 3);
	/* freed right after its allocation: temporary */
	table_alloc(&t, 0x100, 8, a, 1);
	table_note_alloc(&t, 0x100);
	table_note_free(&t, 0x100);
	table_free(&t, 0x100);
	/* heaptrack's rule: another block of the same size and chain as the last allocation
	 * counts too, whichever thread made them */
	table_alloc(&t, 0x200, 8, a, 2);
	table_note_alloc(&t, 0x200);
	table_alloc(&t, 0x300, 8, a, 3);
	table_note_alloc(&t, 0x300);
	table_note_free(&t, 0x200);
	table_free(&t, 0x200);
	/* a free came since the last allocation: not temporary */
	table_note_free(&t, 0x300);
	table_free(&t, 0x300);
	/* another size, or another chain: not temporary */
	table_alloc(&t, 0x400, 8, a, 4);
	table_note_alloc(&t, 0x400);
	table_alloc(&t, 0x500, 16, a, 5);
	table_note_alloc(&t, 0x500);
	table_note_free(&t, 0x400);
	table_free(&t, 0x400);
	table_alloc(&t, 0x600, 8, a, 6);
	table_note_alloc(&t, 0x600);
	table_alloc(&t, 0x700, 8, b, 7);
	table_note_alloc(&t, 0x700);
	table_note_free(&t, 0x600);
	table_free(&t, 0x600);
	/* an unknown free changes nothing: the next free still follows the allocation */
	table_alloc(&t, 0x800, 8, b, 8);
	table_note_alloc(&t, 0x800);
	table_note_free(&t, 0x999);
	table_free(&t, 0x999);
	table_note_free(&t, 0x800);
	table_free(&t, 0x800);
	CHECK_EQ(t.sum.temporary, 3);
	CHECK_EQ(t.bts[a].temporary, 2);
	CHECK_EQ(t.bts[b].temporary, 1);
	table_destroy(&t);
}

TEST_CASE(heaps_kept_apart)
{
	struct table t;
	uint32_t a, b;
	uint64_t pool = table_key(2, 0x100);

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	b = table_intern(&t, PCS_B, 3);
	/* a pool block at the very address of the malloc block it was carved from */
	table_alloc(&t, 0x100, 4096, a, 1);
	table_alloc(&t, pool, 100, b, 2);
	CHECK_EQ(table_key_heap(pool), 2);
	CHECK_EQ(table_key(0, 0x100), 0x100);
	CHECK_EQ(table_key(2, 0), 0);
	CHECK_EQ(t.bts[b].heap, 2);
	CHECK_EQ(t.bts[a].heap, 0);
	CHECK_SUM(&t, 1, 0, 0, 1, 4096);
	CHECK_EQ(t.heap_sum[2].live_bytes, 100);
	CHECK(table_free(&t, pool));
	CHECK(!table_free(&t, pool)); /* an unknown free of heap 2 only */
	CHECK_SUM(&t, 1, 0, 0, 1, 4096);
	CHECK_EQ(t.heap_sum[2].alloc_calls, 1);
	CHECK_EQ(t.heap_sum[2].free_calls, 1);
	CHECK_EQ(t.heap_sum[2].unknown_frees, 1);
	CHECK_EQ(t.heap_sum[2].live_blocks, 0);
	CHECK_EQ(t.heap_sum[2].peak_live_bytes, 100);
	table_heap_release(&t, 2, false);
	CHECK_EQ(t.heap_sum[2].unknown_frees, 2);
	CHECK_EQ(t.peak_epoch, 1); /* only heap 0's peaks snapshot the backtraces */
	table_destroy(&t);
}

TEST_CASE(release_range_splits)
{
	struct table t;
	uint32_t a;
	const unsigned m = 1; /* the mmap heap */

	table_init(&t);
	a = table_intern(&t, PCS_A, 3);
	table_alloc(&t, table_key(m, 0x10000), 0x5000, a, 1);
	table_alloc(&t, 0x10000, 64, a, 1); /* heap 0 at the same address: untouched */
	/* a hole in the middle: two pieces, no call counted */
	CHECK_EQ(table_release_range(&t, m, 0x12000, 0x13000), 1);
	CHECK_EQ(t.heap_sum[m].live_blocks, 2);
	CHECK_EQ(t.heap_sum[m].live_bytes, 0x4000);
	CHECK_EQ(t.heap_sum[m].free_calls, 0);
	REQUIRE(table_find(&t, table_key(m, 0x13000)));
	CHECK_EQ(table_find(&t, table_key(m, 0x13000))->size, 0x2000);
	CHECK_EQ(table_find(&t, table_key(m, 0x10000))->size, 0x2000);
	/* the head of the first piece, then all of the second: a free */
	CHECK_EQ(table_release_range(&t, m, 0x10000, 0x11000), 1);
	CHECK(table_find(&t, table_key(m, 0x10000)) == NULL);
	CHECK_EQ(table_find(&t, table_key(m, 0x11000))->size, 0x1000);
	CHECK_EQ(table_release_range(&t, m, 0x13000, 0x20000), 1);
	CHECK_EQ(t.heap_sum[m].free_calls, 1);
	CHECK_EQ(t.heap_sum[m].live_blocks, 1);
	CHECK_EQ(t.heap_sum[m].live_bytes, 0x1000);
	CHECK_EQ(table_release_range(&t, m, 0x30000, 0x40000), 0);
	CHECK_EQ(t.bts[a].count, 2); /* the piece and heap 0's block */
	CHECK_SUM(&t, 1, 0, 0, 1, 64);
	table_destroy(&t);
}

/* --sample-bytes (TABLE_SCALED): a scaled block counts as ceil(N / size) blocks in its
 * backtrace, the summary counts it once, a free or a take takes back what was added, and the
 * blocks not taken count in the summary only. */
TEST_CASE(sampled_weights)
{
	struct table t;
	struct block old;
	uint32_t a, b, none;

	table_init(&t);
	CHECK_EQ(table_sample_odds(1000, 0), 1000);
	CHECK_EQ(table_sample_odds(1000, 300), 4);
	CHECK_EQ(table_sample_odds(1000, 250), 4);
	CHECK_EQ(table_sample_odds(1000, 1000), 1);
	CHECK_EQ(table_sample_odds(1000, 5000), 1);
	t.sample_bytes = 1000;
	a = table_intern_scaled(&t, PCS_A, 3);
	b = table_intern(&t, PCS_B, 3); /* exact: all of its kind are taken */
	none = table_unsampled(&t);
	table_alloc(&t, 0x100, 300, a, 1); /* 4 blocks of 300 */
	table_alloc(&t, 0x200, 2000, a, 1); /* 1 block */
	table_alloc(&t, 0x300, 300, b, 1);
	table_alloc(&t, 0x400, 10, none, 1);
	CHECK_SUM(&t, 4, 0, 0, 4, 2610);
	CHECK_EQ(t.bts[a].count, 5);
	CHECK_EQ(t.bts[a].size, 3200);
	CHECK_EQ(t.bts[a].total_count, 5);
	CHECK_EQ(t.bts[a].peak_size, 3200);
	CHECK_EQ(t.bts[b].count, 1);
	CHECK_EQ(t.bts[none].count, 0);
	CHECK_EQ(t.bts[none].size, 0);
	CHECK(table_take(&t, 0x100, &old)); /* a realloc's entry */
	CHECK_EQ(t.bts[a].count, 1);
	CHECK(table_put_back(&t, &old)); /* it failed */
	CHECK_EQ(t.bts[a].count, 5);
	CHECK_EQ(t.bts[a].size, 3200);
	CHECK(table_free(&t, 0x100));
	CHECK(table_free(&t, 0x400)); /* a block not taken is known */
	CHECK_SUM(&t, 4, 2, 0, 2, 2300);
	CHECK_EQ(t.bts[a].count, 1);
	CHECK_EQ(t.bts[a].size, 2000);
	CHECK_EQ(t.bts[a].peak_size, 3200);
	table_reset(&t);
	CHECK_EQ(t.sample_bytes, 1000); /* an exec keeps the option */
	table_destroy(&t);
}
