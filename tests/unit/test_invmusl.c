// SPDX-License-Identifier: GPL-2.0-only
/*
 * The musl mallocng reader on a hand-made memory image (musl 1.2.3, LP64): the context in a data
 * segment, one meta area, a group of three 48-byte slots (one live at the slot's start, one
 * free, one live at a cycled offset), a group of one slot in a mapping of its own; then a broken
 * back-pointer, a broken slot header, and what the live snapshot would still have to read.
 */
#include <errno.h>

#include "inventory/inventory.h"
#include "unittest.h"

#define DATA 0x10000ull
#define CTX (DATA + 0x100)
#define AREA 0x20000ull
#define GROUP 0x30000ull
#define BIG 0x40000ull
#define SECRET 0x5ec2e75ec2e7ull

static uint8_t data[0x1000], area[0x1000], group[0x100], big[0x2000];

static uint8_t *at(uint64_t addr)
{
	return addr >= BIG ? big + (addr - BIG) : addr >= GROUP ? group + (addr - GROUP) :
	       addr >= AREA ? area + (addr - AREA) : data + (addr - DATA);
}

static void put(uint64_t addr, uint64_t v)
{
	memcpy(at(addr), &v, 8);
}

static void put32(uint64_t addr, uint32_t v)
{
	memcpy(at(addr), &v, 4);
}

static void put16(uint64_t addr, uint16_t v)
{
	memcpy(at(addr), &v, 2);
}

/* A meta at slot i of the area. */
static uint64_t meta(unsigned i, uint64_t mem, uint32_t avail, uint32_t freed, unsigned last_idx,
		     unsigned sc, uint64_t maplen)
{
	uint64_t m = AREA + 24 + 40 * i;

	put(m + 16, mem);
	put32(m + 24, avail);
	put32(m + 28, freed);
	put(m + 32, last_idx | 1u << 5 | (uint64_t)sc << 6 | maplen << 12);
	put(mem, m); /* the group's back pointer */
	return m;
}

/* A live block of n bytes at user address p in the slot of idx ending at end (stride - 4 after
 * its start), whose group storage starts at storage. */
static void slot(uint64_t storage, uint64_t p, unsigned idx, uint64_t end, uint32_t n)
{
	uint32_t reserved = end - p - n;

	put16(p - 2, (p - storage) / 16);
	*at(p - 3) = idx | (reserved >= 5 ? 5 : reserved) << 5;
	if (reserved >= 5)
		put32(end - 4, reserved);
}

static void build(void)
{
	uint64_t s = GROUP + 16;

	memset(data, 0, sizeof(data));
	memset(area, 0, sizeof(area));
	memset(group, 0, sizeof(group));
	memset(big, 0, sizeof(big));
	put(CTX, SECRET);
	put32(CTX + 8, 1); /* init_done */
	put(CTX + 56, AREA);
	put(CTX + 64, AREA);
	put(CTX + 80 + 8 * 2, AREA + 24); /* active[2] */
	put(CTX + 464 + 8 * 2, 3); /* usage_by_class[2]: the 3 slots */
	put(AREA, SECRET);
	put32(AREA + 16, 101);
	/* class 2: 48-byte slots; slot 1 freed */
	meta(0, GROUP, 0, 2, 2, 2, 0);
	slot(s, s, 0, s + 44, 30);
	*at(s + 48 - 3) = 255;
	*at(s + 96 - 3) = 7 << 5; /* slot 2 cycled one unit in */
	put16(s + 96 - 2, 1);
	slot(s, s + 96 + 16, 2, s + 96 + 44, 10);
	/* one slot in two pages of its own (class 63), 5000 bytes asked for */
	meta(1, BIG, 0, 0, 0, 63, 2);
	slot(BIG + 16, BIG + 16, 0, BIG + 0x2000 - 4, 5000);
}

static void image(struct inv_image *img, struct inv_region r[4])
{
	r[0] = (struct inv_region){ DATA, sizeof(data), data, INV_DATA };
	r[1] = (struct inv_region){ AREA, sizeof(area), area, INV_HEAP };
	r[2] = (struct inv_region){ GROUP, sizeof(group), group, INV_HEAP };
	r[3] = (struct inv_region){ BIG, sizeof(big), big, INV_HEAP };
	*img = (struct inv_image){ .r = r, .nr = 4, .page_size = 0x1000 };
}

TEST_CASE(musl_exact)
{
	struct inv_region r[4];
	struct inv_image img;
	struct inventory inv = { .complete = true };
	uint64_t unread, ctx;

	build();
	image(&img, r);
	ctx = inv_musl_context(&img, &unread);
	CHECK_EQ(ctx, CTX);
	CHECK_EQ(inv_musl_read(&img, ctx, &inv), 0);
	CHECK(inv.complete);
	CHECK_EQ(inv.nproblems, 0);
	CHECK_EQ(inv.live_blocks, 3);
	CHECK_EQ(inv.live_bytes, 30 + 10 + 5000);
	CHECK_EQ(inv.blocks[0].ptr, GROUP + 16);
	CHECK_EQ(inv.blocks[1].ptr, GROUP + 16 + 96 + 16);
	CHECK_EQ(inv.blocks[2].size, 5000);
	CHECK_EQ(inv.mmapped_blocks, 1);
	CHECK_EQ(inv.mmapped_bytes, 0x2000);
	CHECK_EQ(inv.free_bytes, 48);
	inv_free(&inv);
}

TEST_CASE(musl_broken)
{
	struct inv_region r[4];
	struct inv_image img;
	struct inventory inv = { .complete = true };
	uint64_t unread;

	build();
	*at(GROUP + 16 + 96 + 16 - 3) ^= 1; /* slot 2's index */
	put(BIG, 0); /* the big group's back pointer */
	image(&img, r);
	CHECK_EQ(inv_musl_read(&img, inv_musl_context(&img, &unread), &inv), 0);
	CHECK(!inv.complete);
	CHECK_EQ(inv.nproblems, 2);
	CHECK_EQ(inv.live_blocks, 1);
	CHECK_EQ(inv.unknown_bytes, 48);
	inv_free(&inv);
}

TEST_CASE(musl_missing)
{
	struct inv_region r[4];
	struct inv_image img;
	struct inv_span *miss;
	uint64_t unread;
	size_t n;
	bool again;

	build();
	image(&img, r);
	img.nr = 1; /* the data alone: the context cannot be verified without its area */
	CHECK_EQ(inv_musl_context(&img, &unread), 0);
	CHECK_EQ(unread, AREA);
	img.nr = 2; /* and the area: both groups are wanted (the big one's first page and end) */
	miss = inv_musl_missing(&img, CTX, &n, &again);
	CHECK_EQ(n, 2);
	CHECK(!again); /* the big group is small enough to be read whole */
	CHECK_EQ(miss[0].start, GROUP);
	CHECK_EQ(miss[0].end, GROUP + 16 + 3 * 48);
	CHECK_EQ(miss[1].start, BIG);
	CHECK_EQ(miss[1].end, BIG + 0x2000);
	free(miss);
	img.nr = 4;
	miss = inv_musl_missing(&img, CTX, &n, &again);
	CHECK_EQ(n, 0);
	free(miss);
}

TEST_CASE(musl_full_tail_area)
{
	struct inv_region r[4];
	struct inv_image img;
	uint64_t unread;

	build();
	put(CTX + 24, AREA + 24 + 101 * 40); /* avail_meta one past the last slot, count 0 */
	image(&img, r);
	CHECK_EQ(inv_musl_context(&img, &unread), CTX);
	put(CTX + 24, AREA + 24 + 101 * 40 + 8); /* not a meta */
	CHECK_EQ(inv_musl_context(&img, &unread), 0);
}
