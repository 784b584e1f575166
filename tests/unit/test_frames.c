// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stack words through a read callback: whole words only, the 64 KiB bound, and no word past
 * what a short or failed read returned (calls.c restores return addresses at detach with it;
 * on 32-bit arm a failed read once ran the loop past its buffer).
 */
#include <errno.h>

#include "frames.h"
#include "unittest.h"

#define BASE 0x10000ull

/* A fake stack: [BASE, BASE + size) readable, filled with word index + 1, unreadable from
 * fail_at on (a -EFAULT there, a short read when a read starts below it). */
struct mem {
	uint8_t bytes[96 << 10];
	uint64_t fail_at;
	unsigned reads;
};

static ssize_t fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem *m = ctx;

	m->reads++;
	if (addr < BASE || addr >= m->fail_at)
		return -EFAULT;
	if (addr + len > m->fail_at)
		len = m->fail_at - addr;
	memcpy(buf, m->bytes + (addr - BASE), len);
	return len;
}

struct seen {
	unsigned n;
	uint64_t last_addr, last_val;
	bool in_order;
};

static void collect(void *ctx, uint64_t addr, uint64_t val)
{
	struct seen *s = ctx;

	s->in_order = s->in_order && (!s->n || addr > s->last_addr);
	s->last_addr = addr;
	s->last_val = val;
	s->n++;
}

static struct mem mem;

static void fill(unsigned w, uint64_t readable)
{
	for (size_t i = 0; i + w <= sizeof(mem.bytes); i += w) {
		uint64_t v = i / w + 1;

		memcpy(mem.bytes + i, &v, w);
	}
	mem.fail_at = BASE + readable;
	mem.reads = 0;
}

TEST_CASE(whole_range)
{
	for (unsigned w = 4; w <= 8; w += 4) {
		struct seen s = { .in_order = true };

		fill(w, sizeof(mem.bytes));
		/* lo not aligned: starts at the word holding it */
		CHECK_EQ(frames_each_word(BASE + 1, BASE + 10000, w, fake_read, &mem, collect, &s),
			 (size_t)(10000 / w));
		CHECK_EQ(s.n, 10000 / w);
		CHECK(s.in_order);
		CHECK_EQ(s.last_addr, BASE + (10000 / w - 1) * w);
		CHECK_EQ(s.last_val, (uint64_t)(10000 / w));
	}
}

TEST_CASE(failed_read_reads_nothing)
{
	for (unsigned w = 4; w <= 8; w += 4) {
		struct seen s = { .in_order = true };

		fill(w, 0); /* the first read fails with -EFAULT */
		CHECK_EQ(frames_each_word(BASE, BASE + 8192, w, fake_read, &mem, collect, &s), 0u);
		CHECK_EQ(s.n, 0u);
		CHECK_EQ(mem.reads, 1u);
	}
}

TEST_CASE(failure_in_a_later_block_stops_there)
{
	for (unsigned w = 4; w <= 8; w += 4) {
		struct seen s = { .in_order = true };

		fill(w, 4096); /* the second 4096-byte read fails */
		CHECK_EQ(frames_each_word(BASE, BASE + 20000, w, fake_read, &mem, collect, &s),
			 (size_t)(4096 / w));
		CHECK_EQ(s.last_addr, BASE + 4096 - w);
		CHECK_EQ(mem.reads, 2u);
	}
}

TEST_CASE(short_read_keeps_whole_words)
{
	struct seen s = { .in_order = true };

	fill(8, 4100); /* a short second read of 4 bytes: half a word */
	CHECK_EQ(frames_each_word(BASE, BASE + 20000, 8, fake_read, &mem, collect, &s),
		 (size_t)(4096 / 8));
	CHECK_EQ(s.last_addr, BASE + 4096 - 8);
}

TEST_CASE(bounded)
{
	struct seen s = { .in_order = true };

	fill(8, sizeof(mem.bytes));
	CHECK_EQ(frames_each_word(BASE, BASE + sizeof(mem.bytes), 8, fake_read, &mem, collect, &s),
		 (size_t)(FRAMES_WALK_MAX / 8));
	CHECK_EQ(s.last_addr, BASE + FRAMES_WALK_MAX - 8);
}
