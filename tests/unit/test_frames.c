// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stack words through a read callback: whole words only, the 64 KiB bound, and no word past
 * what a short or failed read returned (calls.c restores return addresses at detach with it;
 * on 32-bit arm a failed read once ran the loop past its buffer).
 */
#include <errno.h>

#include "arch/arch.h"
#include "unwind/frames.h"
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

static bool collect(void *ctx, uint64_t addr, uint64_t val)
{
	struct seen *s = ctx;

	s->in_order = s->in_order && (!s->n || addr > s->last_addr);
	s->last_addr = addr;
	s->last_val = val;
	s->n++;
	return true;
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

/* Does ret follow a call? code: the window that ends at the call's end, bytes as given
 * (hand-checked with each architecture's GNU assembler and objdump). */
static bool after(const struct arch_ops *a, const uint8_t *bytes, size_t len, uint64_t ret,
		  uint64_t *target)
{
	uint8_t code[ARCH_CALL_WINDOW] = { 0 };

	memcpy(code + sizeof(code) - len, bytes, len);
	*target = 0xdead;
	return a->after_call(code, ret, target);
}

TEST_CASE(after_call_aarch64)
{
	static const uint8_t bl[] = { 0xc0, 0xff, 0xff, 0x97 }; /* 0x200: bl 0x100 */
	static const uint8_t blr[] = { 0x60, 0x00, 0x3f, 0xd6 }; /* blr x3 */
	static const uint8_t ret[] = { 0xc0, 0x03, 0x5f, 0xd6 }; /* ret */
	uint64_t t;

	CHECK(after(&arch_aarch64_ops, bl, 4, 0x204, &t));
	CHECK_EQ(t, 0x100ull);
	CHECK(after(&arch_aarch64_ops, blr, 4, 0x208, &t));
	CHECK_EQ(t, 0ull);
	CHECK(!after(&arch_aarch64_ops, ret, 4, 0x208, &t));
}

TEST_CASE(after_call_arm)
{
	static const uint8_t t_bl[] = { 0xff, 0xf7, 0x7e, 0xff }; /* 0x200: bl 0x100 (Thumb) */
	static const uint8_t t_blx_r3[] = { 0x98, 0x47 }; /* blx r3 */
	static const uint8_t t_blx[] = { 0xff, 0xf7, 0x7e, 0xef }; /* 0x400: blx 0x300 (ARM) */
	static const uint8_t a_bl[] = { 0x7e, 0xff, 0xff, 0xeb }; /* 0x500: bl 0x300 */
	static const uint8_t a_blx[] = { 0xfd, 0xfe, 0xff, 0xfa }; /* 0x504: blx 0x100 (Thumb) */
	static const uint8_t a_blx_r2[] = { 0x32, 0xff, 0x2f, 0xe1 }; /* blx r2 */
	static const uint8_t push[] = { 0x2d, 0xe9, 0xf0, 0x41 }; /* push.w {r4-r8, lr} */
	uint64_t t;

	CHECK(after(&arch_arm_ops, t_bl, 4, 0x204 | 1, &t));
	CHECK_EQ(t, 0x100ull);
	CHECK(after(&arch_arm_ops, t_blx_r3, 2, 0x206 | 1, &t));
	CHECK_EQ(t, 0ull);
	CHECK(after(&arch_arm_ops, t_blx, 4, 0x404 | 1, &t));
	CHECK_EQ(t, 0x300ull);
	CHECK(after(&arch_arm_ops, a_bl, 4, 0x504, &t));
	CHECK_EQ(t, 0x300ull);
	CHECK(after(&arch_arm_ops, a_blx, 4, 0x508, &t));
	CHECK_EQ(t, 0x100ull);
	CHECK(after(&arch_arm_ops, a_blx_r2, 4, 0x50c, &t));
	CHECK_EQ(t, 0ull);
	CHECK(!after(&arch_arm_ops, push, 4, 0x604 | 1, &t));
	/* a Thumb bl read as ARM code is no call */
	CHECK(!after(&arch_arm_ops, t_bl, 4, 0x204, &t));
}

TEST_CASE(after_call_mips64)
{
	/* the call, then its delay slot (nop) */
	static const uint8_t jal[] = { 0x40, 0x00, 0x00, 0x0c, 0, 0, 0, 0 }; /* 0x200: jal 0x100 */
	static const uint8_t jalr[] = { 0x09, 0xf8, 0x20, 0x03, 0, 0, 0, 0 }; /* jalr t9 */
	static const uint8_t bal[] = { 0xbb, 0xff, 0x11, 0x04, 0, 0, 0, 0 }; /* 0x210: bal 0x100 */
	static const uint8_t addiu[] = { 0xf0, 0xff, 0xbd, 0x67, 0, 0, 0, 0 }; /* daddiu sp, -16 */
	uint64_t t;

	CHECK(after(&arch_mips64_ops, jal, 8, 0x208, &t));
	CHECK_EQ(t, 0x100ull);
	CHECK(after(&arch_mips64_ops, jalr, 8, 0x210, &t));
	CHECK_EQ(t, 0ull);
	CHECK(after(&arch_mips64_ops, bal, 8, 0x218, &t));
	CHECK_EQ(t, 0x100ull);
	CHECK(!after(&arch_mips64_ops, addiu, 8, 0x218, &t));
}

TEST_CASE(after_call_x86_64)
{
	static const uint8_t call[] = { 0xe8, 0xfb, 0xfe, 0xff, 0xff }; /* 0x200: call 0x100 */
	static const uint8_t rax[] = { 0xff, 0xd0 }; /* call *%rax */
	static const uint8_t r11[] = { 0x41, 0xff, 0xd3 }; /* call *%r11 */
	static const uint8_t disp8[] = { 0xff, 0x50, 0x08 }; /* call *0x8(%rax) */
	static const uint8_t rip[] = { 0xff, 0x15, 0x10, 0, 0, 0 }; /* call *0x10(%rip) */
	static const uint8_t disp32[] = { 0xff, 0x93, 0, 1, 0, 0 }; /* call *0x100(%rbx) */
	static const uint8_t sib[] = { 0xff, 0x14, 0x24 }; /* call *(%rsp) */
	static const uint8_t jmp[] = { 0xff, 0xe0 }; /* jmp *%rax */
	uint64_t t;

	CHECK(after(&arch_x86_64_ops, call, 5, 0x205, &t));
	CHECK_EQ(t, 0x100ull);
	CHECK(after(&arch_x86_64_ops, rax, 2, 0x300, &t));
	CHECK_EQ(t, 0ull);
	CHECK(after(&arch_x86_64_ops, r11, 3, 0x300, &t));
	CHECK(after(&arch_x86_64_ops, disp8, 3, 0x300, &t));
	CHECK(after(&arch_x86_64_ops, rip, 6, 0x300, &t));
	CHECK(after(&arch_x86_64_ops, disp32, 6, 0x300, &t));
	CHECK(after(&arch_x86_64_ops, sib, 3, 0x300, &t));
	CHECK(!after(&arch_x86_64_ops, jmp, 2, 0x300, &t));
}

/*
 * A stack scan on a made-up program: main (0x1000) calls init (0x4000), then a (0x2000),
 * which calls the leaf b (0x3000); the words main's call of init left (0x1008) and an
 * indirect call of the dynamic linker's (0x5010) lie stale in the live frames.
 */
static const struct { uint64_t ret, target; } calls[] = {
	{ 0x1008, 0x4000 }, /* main: call init */
	{ 0x1010, 0x2000 }, /* main: call a */
	{ 0x2010, 0x3000 }, /* a: call b */
	{ 0x5010, 0 }, /* ld.so: call *reg */
};

static bool fake_after_call(void *ctx, uint64_t ret, uint64_t *target)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (calls[i].ret == ret) {
			*target = calls[i].target;
			return true;
		}
	return false;
}

static uint64_t fake_func_start(void *ctx, uint64_t pc, bool is_return)
{
	(void)ctx;
	pc -= is_return;
	return pc >= 0x1000 && pc < 0x6000 ? pc & ~0xfffull : 0;
}

static void put_words(const uint64_t *w, size_t n)
{
	memset(mem.bytes, 0, sizeof(mem.bytes));
	memcpy(mem.bytes, w, n * 8);
	mem.fail_at = BASE + sizeof(mem.bytes);
}

TEST_CASE(scan_skips_stale_return_addresses)
{
	/* b's frame: junk, the stale 0x1008, its return 0x2010; a's frame: the stale indirect
	 * 0x5010, its return 0x1010; main's frame: nothing that calls main */
	static const uint64_t stack[] = { 0x3004, 0x1008, 0x2010, 0x5010, 7, 0x1010, 0, 0 };
	struct frames_env e = { 8, fake_read, &mem, fake_after_call, fake_func_start, NULL };
	uint64_t pcs[8];
	unsigned n;

	put_words(stack, sizeof(stack) / 8);
	n = frames_scan(&e, 0x3004, false, BASE, pcs, 8);
	REQUIRE(n >= 2);
	CHECK_EQ(frames_addr(pcs[0]), 0x2010ull);
	CHECK_EQ(frames_addr(pcs[1]), 0x1010ull);
	CHECK_EQ(frames_how_of(pcs[0]), FRAMES_SCAN);
	CHECK_EQ(n, 2u);
}

TEST_CASE(scan_bounded_by_max_and_unreadable_stack)
{
	static const uint64_t stack[] = { 0x2010, 0x1010 };
	struct frames_env e = { 8, fake_read, &mem, fake_after_call, fake_func_start, NULL };
	uint64_t pcs[8];

	put_words(stack, sizeof(stack) / 8);
	CHECK_EQ(frames_scan(&e, 0x3004, false, BASE, pcs, 1), 1u);
	mem.fail_at = BASE;
	CHECK_EQ(frames_scan(&e, 0x3004, false, BASE, pcs, 8), 0u);
	CHECK_EQ(frames_how_name(FRAMES_SCAN)[0], 's');
}

static bool fake_is_main(void *ctx, uint64_t pc)
{
	(void)ctx;
	return pc - 1 >= 0x1000 && pc - 1 < 0x2000;
}

TEST_CASE(scan_ends_at_main)
{
	/* above main's return address, a stale indirect call of the startup code */
	static const uint64_t stack[] = { 0x2010, 0x1010, 0x5010, 0 };
	struct frames_env e = { 8, fake_read, &mem, fake_after_call, fake_func_start, NULL };
	uint64_t pcs[8];

	put_words(stack, sizeof(stack) / 8);
	CHECK_EQ(frames_scan(&e, 0x3004, false, BASE, pcs, 8), 3u);
	e.last = fake_is_main;
	CHECK_EQ(frames_scan(&e, 0x3004, false, BASE, pcs, 8), 2u);
	CHECK_EQ(frames_addr(pcs[1]), 0x1010ull);
}
