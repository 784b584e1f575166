// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm's entry-stub encodings (arch/arm/arch.c), on any host: the b.w patch and the thunk, the
 * relocation of the first instructions of Debian 12's armhf glibc 2.36 malloc family (their
 * words from objdump of libc.so.6, st_values with the Thumb bit) and of the other shapes the
 * relocator takes, and the whole-function scan of the patch-safety rule. The expected
 * halfwords were checked by disassembling the relocator's output with
 * arm-linux-gnueabihf-objdump (-M force-thumb at the same address): each branch goes where
 * the comment says.
 */
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "unittest.h"

static const struct arch_ops *a = &arch_arm_ops;

static uint16_t half(const uint8_t *buf, unsigned i)
{
	return buf[2 * i] | buf[2 * i + 1] << 8;
}

/* Check n halfwords of buf against want. */
static void check_halves(const uint8_t *buf, const uint16_t *want, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		CHECK_EQ(half(buf, i), want[i]);
}

/* Relocate the instructions hw (the rest of 16 bytes zero) at symbol value sym to at. */
static int reloc(uint64_t sym, const uint16_t *hw, unsigned n, uint64_t at, uint8_t *buf,
		 size_t *covered)
{
	uint8_t in[ARCH_MAX_INSN] = { 0 };

	memcpy(in, hw, 2 * n);
	*covered = 0;
	return a->entry_relocate(sym, in, sizeof(in), 4, at, buf, covered);
}

TEST_CASE(arm_entry_branch_and_thunk)
{
	uint8_t buf[16];

	CHECK_EQ(a->entry_branch(0x400001, 0x401000, buf), 4);
	check_halves(buf, (const uint16_t[]){ 0xf000, 0xbffe }, 2); /* b.w 0x401000 */
	/* the reach: PC (the patch + 4) - 16 MiB up to PC + 16 MiB - 2 */
	CHECK_EQ(a->entry_branch(0x10000001, 0x10000004 + (1u << 24) - 2, buf), 4);
	CHECK_EQ(a->entry_branch(0x10000001, 0x10000004 + (1u << 24), buf), -ERANGE);
	CHECK_EQ(a->entry_branch(0x10000001, 0x10000004 - (1u << 24), buf), 4);
	CHECK_EQ(a->entry_branch(0x10000001, 0x10000004 - (1u << 24) - 2, buf), -ERANGE);
	CHECK_EQ(a->entry_thunk(buf, 0x10000, 0x105, 0x10000 - 0x800), 8);
	/* movw ip, #0x105; b.w 0xf800 */
	check_halves(buf, (const uint16_t[]){ 0xf240, 0x1c05, 0xf7ff, 0xbbfc }, 4);
}

TEST_CASE(arm_entry_relocate_glibc)
{
	uint8_t buf[64];
	size_t cov;

	/* malloc: push {r3-r7, lr}; mov r6, r0: both copied, b.w 0x69af8 */
	CHECK_EQ(reloc(0x69af5, (const uint16_t[]){ 0xb5f8, 0x4606, 0x4b88 }, 3, 0x100000, buf,
		       &cov),
		 8);
	CHECK_EQ(cov, 4);
	check_halves(buf, (const uint16_t[]){ 0xb5f8, 0x4606, 0xf769, 0xbd78 }, 4);
	/* free: cmp r0, #0; beq.n 0x69fba: cmp; beq.n .+8; b.w 0x69f2c; b.w 0x69fba */
	CHECK_EQ(reloc(0x69f29, (const uint16_t[]){ 0x2800, 0xd046, 0xb570 }, 3, 0x100000, buf,
		       &cov),
		 12);
	CHECK_EQ(cov, 4);
	check_halves(buf, (const uint16_t[]){ 0x2800, 0xd001, 0xf769, 0xbf92, 0xf769, 0xbfd7 }, 6);
	/* realloc: ldr r3, [pc, #900] (the literal at 0x6a46c); stmdb sp!, {r4-r11, lr}: movw r3,
	 * #0xa46c; movt r3, #6; ldr r3, [r3]; the stmdb; b.w 0x6a0ea (6 bytes displaced) */
	CHECK_EQ(reloc(0x6a0e5, (const uint16_t[]){ 0x4be1, 0xe92d, 0x4ff0, 0x4604 }, 4, 0x100000,
		       buf, &cov),
		 18);
	CHECK_EQ(cov, 6);
	check_halves(buf,
		     (const uint16_t[]){ 0xf24a, 0x436c, 0xf2c0, 0x0306, 0x681b, 0xe92d, 0x4ff0,
					 0xf76a, 0xb86c },
		     9);
	/* calloc: stmdb sp!, {r3-r9, lr}; b.w 0x6a57c */
	CHECK_EQ(reloc(0x6a579, (const uint16_t[]){ 0xe92d, 0x43f8, 0xfba0, 0x5001 }, 4, 0x100000,
		       buf, &cov),
		 8);
	check_halves(buf, (const uint16_t[]){ 0xe92d, 0x43f8, 0xf76a, 0xbaba }, 4);
	/* reallocarray: umull r1, r2, r1, r2; b.w 0x6b228 */
	CHECK_EQ(reloc(0x6b225, (const uint16_t[]){ 0xfba1, 0x1202, 0xb90a }, 3, 0x100000, buf,
		       &cov),
		 8);
	check_halves(buf, (const uint16_t[]){ 0xfba1, 0x1202, 0xf76b, 0xb910 }, 4);
}

TEST_CASE(arm_entry_relocate_shapes)
{
	uint8_t buf[64];
	size_t cov;

	/* cbz r0, 0x1010; nop at 0x1000: cbz r0, .+8; nop; b.w 0x1004; b.w 0x1010 */
	CHECK_EQ(reloc(0x1001, (const uint16_t[]){ 0xb130, 0xbf00 }, 2, 0x3000, buf, &cov), 12);
	check_halves(buf, (const uint16_t[]){ 0xb110, 0xbf00, 0xf7fd, 0xbffe, 0xf7fe, 0xb802 }, 6);
	/* b.n 0x1100: one b.w 0x1100, nothing comes back */
	CHECK_EQ(reloc(0x1001, (const uint16_t[]){ 0xe07e, 0xbf00 }, 2, 0x3000, buf, &cov), 4);
	CHECK_EQ(cov, 4);
	check_halves(buf, (const uint16_t[]){ 0xf7fe, 0xb87e }, 2);
	/* ldr.w r9, [pc, #16] (the literal at 0x1014): movw/movt r9; ldr.w r9, [r9]; b.w 0x1004 */
	CHECK_EQ(reloc(0x1001, (const uint16_t[]){ 0xf8df, 0x9010 }, 2, 0x3000, buf, &cov), 16);
	check_halves(buf,
		     (const uint16_t[]){ 0xf241, 0x0914, 0xf2c0, 0x0900, 0xf8d9, 0x9000, 0xf7fd,
					 0xbffa },
		     8);
	/* pool.c's pool_calloc at -O2: push {r4, r5, r7, lr}; mul.w r5, r2, r1 (Ra 15: no
	 * accumulate, no PC); both copied, b.w 0x1006 */
	CHECK_EQ(reloc(0x1001, (const uint16_t[]){ 0xb5b0, 0xfb02, 0xf501, 0xaf00 }, 4, 0x3000, buf,
		       &cov),
		 10);
	CHECK_EQ(cov, 6);
	check_halves(buf, (const uint16_t[]){ 0xb5b0, 0xfb02, 0xf501, 0xf7fd, 0xbffe }, 5);
	/* udiv r0, r0, r1 (bits 15..12 are 15 in a divide); b.w 0x1004 */
	CHECK_EQ(reloc(0x1001, (const uint16_t[]){ 0xfbb0, 0xf0f1, 0xbf00 }, 3, 0x3000, buf, &cov),
		 8);
	/* refused: umull pc, r2, r1, r2 (RdLo the PC), bl, bx lr, an IT block, pop {r4, pc}, an
	 * ARM-state entry, out of reach */
	CHECK_EQ(reloc(0x1001, (const uint16_t[]){ 0xfba1, 0xf202 }, 2, 0x3000, buf, &cov),
		 -ENOTSUP);
	CHECK_EQ(reloc(0x1001, (const uint16_t[]){ 0xf000, 0xf800 }, 2, 0x3000, buf, &cov),
		 -ENOTSUP);
	CHECK_EQ(reloc(0x1001, (const uint16_t[]){ 0x4770, 0xbf00 }, 2, 0x3000, buf, &cov),
		 -ENOTSUP);
	CHECK_EQ(reloc(0x1001, (const uint16_t[]){ 0xbf08, 0x2001 }, 2, 0x3000, buf, &cov),
		 -ENOTSUP);
	CHECK_EQ(reloc(0x1001, (const uint16_t[]){ 0xbd10, 0xbf00 }, 2, 0x3000, buf, &cov),
		 -ENOTSUP);
	CHECK_EQ(reloc(0x1000, (const uint16_t[]){ 0xb5f8, 0x4606 }, 2, 0x3000, buf, &cov),
		 -ENOTSUP);
	CHECK_EQ(reloc(0x1001, (const uint16_t[]){ 0xb5f8, 0x4606 }, 2, 0x1000 + (1u << 25), buf,
		       &cov),
		 -ERANGE);
}

/* The scan of a function of n halfwords at 0x2001 (Thumb), the patch 4 bytes long. */
static int scan(const uint16_t *hw, unsigned n)
{
	uint8_t code[64];

	memcpy(code, hw, 2 * n);
	return a->entry_scan(0x2001, code, 2 * n, 4);
}

TEST_CASE(arm_entry_scan)
{
	/* free's shape: cmp r0, #0; beq.n 0x200a; adds r0, #1; bx lr; nop; movs r0, #0x99;
	 * pop {r4, pc} */
	CHECK_EQ(scan((const uint16_t[]){ 0x2800, 0xd002, 0x3001, 0x4770, 0xbf00, 0x2099, 0xbd10 },
		      7),
		 0);
	/* a loop back to the second instruction: b.n 0x2002 at 0x2006 */
	CHECK_EQ(scan((const uint16_t[]){ 0x2800, 0xd002, 0x3001, 0xe7fc, 0x4770 }, 5), -EXDEV);
	/* to the entry itself it is a call's way in: b.n 0x2000 at 0x2006 */
	CHECK_EQ(scan((const uint16_t[]){ 0x2800, 0xd002, 0x3001, 0xe7fb, 0x4770 }, 5), 0);
	/* b<c>.w and cbz into the patch: bne.w 0x2002 at 0x2004; cbz r0 cannot go back */
	CHECK_EQ(scan((const uint16_t[]){ 0x2800, 0xbf00, 0xf47f, 0xaffd, 0x4770 }, 5), -EXDEV);
	/* an address of the patch's inside: adr r1, 0x2008 is outside; adr.w r1, 0x2002 is in */
	CHECK_EQ(scan((const uint16_t[]){ 0xbf00, 0xbf00, 0xa100, 0x4770 }, 4), 0);
	CHECK_EQ(scan((const uint16_t[]){ 0xbf00, 0xbf00, 0xf2af, 0x0106, 0x4770 }, 5), -EXDEV);
	/* jump tables: tbb [pc, r0]; mov pc, r3; bx r3 */
	CHECK_EQ(scan((const uint16_t[]){ 0xbf00, 0xbf00, 0xe8df, 0xf000, 0x4770 }, 5), -EXDEV);
	CHECK_EQ(scan((const uint16_t[]){ 0xbf00, 0xbf00, 0x469f, 0x4770 }, 4), -EXDEV);
	CHECK_EQ(scan((const uint16_t[]){ 0xbf00, 0xbf00, 0x4718, 0x4770 }, 4), -EXDEV);
	/* returns are not: pop.w {r4, pc}; ldr pc, [sp], #4 */
	CHECK_EQ(scan((const uint16_t[]){ 0xbf00, 0xbf00, 0xe8bd, 0x8010, 0xf85d, 0xfb04 }, 6), 0);
	/* a literal pool is data: ldr r3, [pc, #4] reads 0x2008, whose halfword would decode as
	 * b.n 0x2002 */
	CHECK_EQ(scan((const uint16_t[]){ 0x4b01, 0x4770, 0xbf00, 0xbf00, 0xe7fb, 0x0000 }, 6), 0);
	/* but a load of the patched bytes is not safe: ldr r3, [pc, #-8] (ldr.w) of 0x2000 */
	CHECK_EQ(scan((const uint16_t[]){ 0xbf00, 0xbf00, 0xf85f, 0x3008, 0x4770 }, 5), -EXDEV);
	/* refused outright: an ARM-state function, a function shorter than the patch */
	CHECK_EQ(a->entry_scan(0x2000, (const uint8_t *)"\0\0\0\0\0\0\0\0", 8, 4), -EXDEV);
	CHECK_EQ(a->entry_scan(0x2001, (const uint8_t *)"\x70\x47", 2, 4), -EXDEV);
}
