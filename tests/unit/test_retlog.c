// SPDX-License-Identifier: GPL-2.0-only
/*
 * Logged returns: the ring's bookkeeping (room, entries completed out of order, laps, the
 * 32-bit wrap), and on an x86_64 host the generated trampolines themselves, run for real on
 * a page of this process.
 */
#include <string.h>
#include <sys/mman.h>

#include "arch/arch.h"
#include "target/retlog.h"
#include "unittest.h"

static uint8_t ring[RETLOG_SIZE];

/* What the trampoline does for reservation index i. */
static void write_entry(uint32_t i, uint32_t cookie, uint64_t retval)
{
	uint8_t *e = ring + RETLOG_ENTRIES_OFF + 16 * (i % RETLOG_SLOTS);
	uint32_t seq = i + 1;

	memcpy(e + 4, &cookie, 4);
	memcpy(e + 8, &retval, 8);
	memcpy(e, &seq, 4);
}

static void set_head(uint32_t head)
{
	memcpy(ring + RETLOG_HEAD_OFF, &head, 4);
}

static uint32_t seen[4 * RETLOG_SLOTS];
static unsigned nseen;

static void collect(uint32_t cookie, uint64_t retval, void *ctx)
{
	CHECK_EQ(ctx, (void *)ring);
	CHECK_EQ(retval, (uint64_t)cookie * 16);
	if (nseen < sizeof(seen) / sizeof(seen[0]))
		seen[nseen++] = cookie;
}

static void reset(struct retlog *r, uint32_t start)
{
	memset(ring, 0, sizeof(ring));
	memset(r, 0, sizeof(*r));
	r->ring = 0x1000;
	r->tail = r->head = start;
	set_head(start);
	nseen = 0;
}

TEST_CASE(room)
{
	struct retlog r;

	reset(&r, 0);
	CHECK(retlog_room(&r));
	r.inflight = RETLOG_SLOTS - 2;
	CHECK(retlog_room(&r));
	r.inflight = RETLOG_SLOTS - 1;
	CHECK(!retlog_room(&r)); /* the next one could overwrite an entry not taken */
	r.inflight = 1;
	r.head = r.tail + RETLOG_SLOTS - 3; /* the tail waits for an old entry */
	CHECK(retlog_room(&r));
	r.head++;
	CHECK(!retlog_room(&r));
	r.ring = 0;
	r.head = r.tail;
	r.inflight = 0;
	CHECK(!retlog_room(&r)); /* no ring: returns stop */
}

TEST_CASE(in_order)
{
	struct retlog r;

	reset(&r, 0);
	for (uint32_t i = 0; i < 5; i++)
		write_entry(i, 100 + i, (100 + i) * 16);
	set_head(5);
	retlog_take(&r, ring, collect, ring);
	REQUIRE(nseen == 5);
	for (unsigned i = 0; i < 5; i++)
		CHECK_EQ(seen[i], 100 + i);
	CHECK_EQ(r.tail, 5);
	nseen = 0;
	retlog_take(&r, ring, collect, ring); /* nothing new */
	CHECK_EQ(nseen, 0);
}

TEST_CASE(completed_out_of_order)
{
	struct retlog r;

	reset(&r, 0);
	/* 0 reserved but not written yet (its thread was preempted), 1 and 2 complete */
	write_entry(1, 201, 201 * 16);
	write_entry(2, 202, 202 * 16);
	set_head(3);
	retlog_take(&r, ring, collect, ring);
	REQUIRE(nseen == 2);
	CHECK_EQ(seen[0], 201);
	CHECK_EQ(seen[1], 202);
	CHECK_EQ(r.tail, 0); /* waits for 0 */
	CHECK_EQ(r.head, 3);
	/* 0 completes, 3 arrives: each is taken once, the tail moves past all of them */
	write_entry(0, 200, 200 * 16);
	write_entry(3, 203, 203 * 16);
	set_head(4);
	nseen = 0;
	retlog_take(&r, ring, collect, ring);
	REQUIRE(nseen == 2);
	CHECK_EQ(seen[0], 200);
	CHECK_EQ(seen[1], 203);
	CHECK_EQ(r.tail, 4);
}

TEST_CASE(laps_and_wrap)
{
	struct retlog r;
	uint32_t start = 0xffffffff - 2 * RETLOG_SLOTS + 7;

	/* many laps over the ring, across the 32-bit wrap of the counter */
	reset(&r, start);
	for (uint32_t lap = 0; lap < 4; lap++) {
		uint32_t base = start + lap * (RETLOG_SLOTS / 2);

		/* an entry left from the lap before must not pass for this one */
		for (uint32_t k = 0; k < RETLOG_SLOTS / 2; k++)
			if (k != 5)
				write_entry(base + k, k, (uint64_t)k * 16);
		set_head(base + RETLOG_SLOTS / 2);
		nseen = 0;
		retlog_take(&r, ring, collect, ring);
		CHECK_EQ(nseen, RETLOG_SLOTS / 2 - 1);
		CHECK_EQ(r.tail, base + 5);
		write_entry(base + 5, 5, 5 * 16);
		nseen = 0;
		retlog_take(&r, ring, collect, ring);
		CHECK_EQ(nseen, 1);
		CHECK_EQ(r.tail, base + RETLOG_SLOTS / 2);
	}
}

#if defined(__x86_64__)
/*
 * Call code at entry with the cookie in rax and sentinels in the registers the trampoline
 * uses; below sp stays clear of the red zone. Return rax; regs get rcx, rdx, r11 and
 * the change of sp.
 */
static uint64_t call_through(uint64_t entry, uint32_t cookie, uint64_t regs[4])
{
	register uint64_t r11 __asm__("r11") = 0x3333;
	uint64_t rax = cookie, rcx = 0x1111, rdx = 0x2222, sp0, sp1;

	__asm__ volatile("mov %%rsp, %[sp0]\n\t"
			 "sub $128, %%rsp\n\t"
			 "call *%[entry]\n\t"
			 "add $128, %%rsp\n\t"
			 "mov %%rsp, %[sp1]"
			 : "+a"(rax), "+c"(rcx), "+d"(rdx), "+r"(r11), [sp0] "=&r"(sp0),
			   [sp1] "=&r"(sp1)
			 : [entry] "r"(entry)
			 : "rsi", "rdi", "r8", "r9", "r10", "cc", "memory");
	regs[0] = rcx;
	regs[1] = rdx;
	regs[2] = r11;
	regs[3] = sp1 - sp0;
	return rax;
}

TEST_CASE(x86_trampolines_run)
{
	const struct arch_ops *x = &arch_x86_64_ops;
	uint8_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uint64_t)page, ring_at = base + 4096, regs[4], v;
	static const uint8_t fake_fn[] = { 0xb8, 0x34, 0x12, 0x00, 0x00, 0xc3 }; /* mov, ret */
	size_t n;

	REQUIRE(page != MAP_FAILED);
	memcpy(page + 512, fake_fn, sizeof(fake_fn));
	n = x->logtramp_encode(page + 64, base + 64, ring_at + RETLOG_HEAD_OFF,
			       ring_at + RETLOG_ENTRIES_OFF, RETLOG_SLOTS - 1);
	CHECK(n > 0 && n <= ARCH_LOGTRAMP_MAX);
	n = x->logentry_encode(page + 256, base + 256, base + 64, base + 512);
	CHECK(n > 0 && n <= ARCH_SLOT_SIZE);
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t cookie = 0x5000 + i, seq;

		v = call_through(base + 256, cookie, regs);
		CHECK_EQ(v, 0x1234); /* the function's own return value reaches the caller */
		CHECK_EQ(regs[0], 0x1111);
		CHECK_EQ(regs[1], 0x2222);
		CHECK_EQ(regs[2], 0x3333);
		CHECK_EQ(regs[3], 0); /* sp as before the call */
		memcpy(&seq, page + 4096 + RETLOG_HEAD_OFF, 4);
		CHECK_EQ(seq, i + 1);
		memcpy(&seq, page + 4096 + RETLOG_ENTRIES_OFF + 16 * i, 4);
		CHECK_EQ(seq, i + 1);
		memcpy(&seq, page + 4096 + RETLOG_ENTRIES_OFF + 16 * i + 4, 4);
		CHECK_EQ(seq, cookie);
		memcpy(&v, page + 4096 + RETLOG_ENTRIES_OFF + 16 * i + 8, 8);
		CHECK_EQ(v, 0x1234);
	}
	munmap(page, 8192);
}
#endif
