// SPDX-License-Identifier: GPL-2.0-only
/*
 * The arm arch layer: ARM and Thumb breakpoints, register slots, and displacing the first
 * instructions of glibc 2.36's and musl 1.2.3's malloc family and
 * of ld.so's _dl_debug_state. Instruction words are from objdump of Debian's armhf libc.so.6,
 * ld-linux-armhf.so.3 and musl libc.so; expected slot images from arm-linux-gnueabihf-as.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "unittest.h"

static const struct arch_ops *a = &arch_arm_ops;

/* NT_PRSTATUS words */
enum { R0, R1, R2, R3, R4, R5, R6, R7, SP = 13, LR = 14, PC = 15, CPSR = 16, ORIG_R0 = 17 };
#define T_BIT 0x20u

#define LIBC 0xb6e00000ULL /* load bias of libc.so.6 (or of musl's libc.so) */
#define TRAMP 0xb6c00000ULL /* the scratch page: trampolines, then one slot per breakpoint */
#define SLOT (TRAMP + ARCH_SLOT_SIZE)

/* glibc 2.36-9+deb12u14 armhf st_values (Thumb: bit 0 set) */
#define G_MALLOC 0x69af5
#define G_CALLOC 0x6a579
#define G_REALLOC 0x6a0e5
#define G_REALLOCARRAY 0x6b225
#define G_FREE 0x69f29
#define G_POSIX_MEMALIGN 0x6ae9d
#define G_MEMALIGN 0x6a4cd
#define G_VALLOC 0x6a4f9
#define G_PVALLOC 0x6a529
#define G_SIGACTION 0x2d3a1 /* __sigaction */

static int displace_at(uint64_t sym, const uint8_t *code, size_t n, uint8_t *slot,
		       struct arch_emul *em)
{
	uint8_t buf[ARCH_MAX_INSN] = { 0 };

	memcpy(buf, code, n);
	memset(slot, 0, ARCH_SLOT_SIZE);
	return a->displace(sym, buf, sizeof(buf), SLOT, slot, em);
}

static uint32_t word(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t half(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

/* At slot offset o: ldr.w pc, [pc, #imm], whose word-aligned literal is next | 1. */
static void check_thumb_back(const uint8_t *slot, size_t o, uint64_t next)
{
	uint64_t base = (SLOT + o + 4) & ~3ULL, lit;

	CHECK_EQ(half(slot + o), 0xf8df);
	CHECK_EQ(half(slot + o + 2) & 0xf000, 0xf000); /* Rt = pc */
	lit = base + (half(slot + o + 2) & 0xfff);
	REQUIRE(lit % 4 == 0 && lit >= SLOT + o + 4 && lit + 4 <= SLOT + ARCH_SLOT_SIZE);
	CHECK_EQ(word(slot + (lit - SLOT)), (next & ~1ULL) | 1);
}

/* At slot offset o: ldr pc, [pc, #-4], then next. */
static void check_arm_back(const uint8_t *slot, size_t o, uint64_t next)
{
	CHECK_EQ(word(slot + o), 0xe51ff004);
	CHECK_EQ(word(slot + o + 4), next);
}

/* The immediate of a T32 movw/movt at p. */
static uint32_t t32_imm16(const uint8_t *p)
{
	uint16_t h1 = half(p), h2 = half(p + 2);

	return (h1 & 15) << 12 | (h1 >> 10 & 1) << 11 | (h2 >> 12 & 7) << 8 | (h2 & 0xff);
}

static void regs_init(struct arch_regs *r, bool thumb)
{
	memset(r, 0, sizeof(*r));
	r->w32[CPSR] = 0x10 | (thumb ? T_BIT : 0); /* USR mode */
	r->size = 72;
}

TEST_CASE(identity)
{
	CHECK_STREQ(a->name, "arm");
	CHECK_EQ(a->elf_machine, EM_ARM);
	CHECK_EQ(a->elf_class, ELFCLASS32);
	CHECK_EQ(a->word_size, 4);
	CHECK_EQ(a->insn_align, 2);
	CHECK(!a->ret_on_stack);
	CHECK_EQ(a->ret_sp_adjust, 0);
}

TEST_CASE(breakpoint_encoding)
{
	uint8_t buf[ARCH_MAX_INSN];

	/* Thumb symbol: udf #1 = 0xde01, bytes 01 de, at the even address */
	CHECK_EQ(a->bp_encode(LIBC + G_MALLOC, buf), 2);
	CHECK_EQ(buf[0], 0x01);
	CHECK_EQ(buf[1], 0xde);
	CHECK_EQ(a->code_addr(LIBC + G_MALLOC), LIBC + G_MALLOC - 1);
	/* calloc starts with a 32-bit instruction: still the 2-byte udf over its first half */
	CHECK_EQ(a->bp_encode(LIBC + G_CALLOC, buf), 2);
	/* ARM symbol: udf #16 = 0xe7f001f0, bytes f0 01 f0 e7 */
	CHECK_EQ(a->bp_encode(0x10890, buf), 4);
	CHECK_EQ(word(buf), 0xe7f001f0);
	CHECK_EQ(a->code_addr(0x10890), 0x10890);
	/* the PC at the SIGTRAP is the breakpoint, with or without get_pc's Thumb bit */
	CHECK_EQ(a->bp_addr_from_pc(LIBC + 0x69af4), LIBC + 0x69af4);
	CHECK_EQ(a->bp_addr_from_pc(LIBC + 0x69af5), LIBC + 0x69af4);
}

TEST_CASE(register_slots)
{
	struct arch_regs r;

	regs_init(&r, true);
	r.w32[R0] = 16, r.w32[R1] = 2, r.w32[R2] = 3, r.w32[R3] = 4;
	r.w32[SP] = 0xbebfa858, r.w32[LR] = 0x483dd7, r.w32[PC] = 0x483db0;
	CHECK_EQ(a->get_arg(&r, 0), 16);
	CHECK_EQ(a->get_arg(&r, 1), 2);
	CHECK_EQ(a->get_arg(&r, 2), 3);
	CHECK_EQ(a->get_arg(&r, 3), 4);
	CHECK_EQ(a->get_retval(&r), 16);
	CHECK_EQ(a->get_sp(&r), 0xbebfa858);
	CHECK_EQ(a->get_ret_reg(&r), 0x483dd7); /* lr of a Thumb caller: bit 0 set */
	CHECK_EQ(a->get_pc(&r), 0x483db1); /* Thumb state: the PC as a mode address */
	a->set_sp(&r, 0xbebfa800);
	CHECK_EQ(r.w32[SP], 0xbebfa800);
	a->set_ret_reg(&r, TRAMP + 5);
	CHECK_EQ(r.w32[LR], TRAMP + 5);

	/* an odd value is Thumb code; an even one keeps the state (a slot, an ARM return) */
	a->set_pc(&r, 0x483dd7);
	CHECK_EQ(r.w32[PC], 0x483dd6);
	CHECK(r.w32[CPSR] & T_BIT);
	a->set_pc(&r, SLOT);
	CHECK_EQ(r.w32[PC], SLOT);
	CHECK(r.w32[CPSR] & T_BIT);
	regs_init(&r, false);
	r.w32[PC] = 0x10890;
	CHECK_EQ(a->get_pc(&r), 0x10890);
	a->set_pc(&r, 0x10898);
	CHECK_EQ(r.w32[PC], 0x10898);
	CHECK(!(r.w32[CPSR] & T_BIT));
	/* a pointer above 2 GiB is not sign-extended */
	r.w32[R0] = 0xb6f00010;
	CHECK_EQ(a->get_retval(&r), 0xb6f00010);
}

TEST_CASE(glibc_plain_entries_run_out_of_line)
{
	/* the first instruction of each glibc 2.36 armhf entry but realloc (objdump of libc.so.6) */
	static const struct {
		uint64_t sym;
		uint8_t code[4];
		size_t len;
	} cases[] = {
		{ G_MALLOC, { 0xf8, 0xb5 }, 2 }, /* push {r3-r7, lr} */
		{ G_CALLOC, { 0x2d, 0xe9, 0xf8, 0x43 }, 4 }, /* stmdb sp!, {r3-r9, lr} */
		{ G_REALLOCARRAY, { 0xa1, 0xfb, 0x02, 0x12 }, 4 }, /* umull r1, r2, r1, r2 */
		{ G_FREE, { 0x00, 0x28 }, 2 }, /* cmp r0, #0: the flags come from the CPU */
		{ G_POSIX_MEMALIGN, { 0xf8, 0xb5 }, 2 }, /* push {r3-r7, lr} */
		{ G_MEMALIGN, { 0x38, 0xb5 }, 2 }, /* push {r3, r4, r5, lr} */
		{ G_VALLOC, { 0x38, 0xb5 }, 2 },
		{ G_PVALLOC, { 0x38, 0xb5 }, 2 },
		{ G_SIGACTION, { 0x00, 0xf1, 0xff, 0x3c }, 4 }, /* add.w ip, r0, #-1 */
		{ G_SIGACTION, { 0x4f, 0xea, 0x41, 0x03 }, 4 }, /* mov.w r3, r1, lsl #1 */
	};
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t sym = LIBC + cases[i].sym;

		REQUIRE(displace_at(sym, cases[i].code, cases[i].len, slot, &em) == STEP_XOL);
		CHECK(!memcmp(slot, cases[i].code, cases[i].len));
		check_thumb_back(slot, cases[i].len, sym - 1 + cases[i].len);
	}
}

TEST_CASE(slot_images_match_the_assembler)
{
	/* arm-linux-gnueabihf-as of the same slots, 64-byte aligned like SLOT */
	static const uint8_t malloc_code[] = { 0xf8, 0xb5 },
			     malloc_slot[] = { 0xf8, 0xb5, 0xdf, 0xf8, 0x04, 0xf0, 0x01, 0xde,
					       0xf7, 0x9a, 0xe6, 0xb6 },
			     calloc_code[] = { 0x2d, 0xe9, 0xf8, 0x43 },
			     calloc_slot[] = { 0x2d, 0xe9, 0xf8, 0x43, 0xdf, 0xf8, 0x00, 0xf0,
					       0x7d, 0xa5, 0xe6, 0xb6 };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	REQUIRE(displace_at(LIBC + G_MALLOC, malloc_code, 2, slot, &em) == STEP_XOL);
	CHECK(!memcmp(slot, malloc_slot, sizeof(malloc_slot)));
	REQUIRE(displace_at(LIBC + G_CALLOC, calloc_code, 4, slot, &em) == STEP_XOL);
	CHECK(!memcmp(slot, calloc_slot, sizeof(calloc_slot)));
	/* the unused rest traps: Thumb udf #1 */
	CHECK_EQ(half(slot + ARCH_SLOT_SIZE - 2), 0xde01);
}

TEST_CASE(glibc_realloc_literal_load_is_relocated)
{
	/* 6a0e4: 4be1 ldr r3, [pc, #900] -> literal at Align(6a0e8, 4) + 900 = 6a46c */
	static const uint8_t ldr[] = { 0xe1, 0x4b },
			     want[] = { 0x4a, 0xf2, 0x6c, 0x43, /* movw r3, #0xa46c */
					0xcb, 0xf2, 0xe6, 0x63, /* movt r3, #0xb6e6 */
					0x1b, 0x68, /* ldr r3, [r3, #0] */
					0xdf, 0xf8, 0x04, 0xf0, /* ldr.w pc, [pc, #4] */
					0x01, 0xde, 0xe7, 0xa0, 0xe6, 0xb6 }; /* .word 6a0e6|1 */
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	REQUIRE(displace_at(LIBC + G_REALLOC, ldr, sizeof(ldr), slot, &em) == STEP_XOL);
	CHECK(!memcmp(slot, want, sizeof(want)));
	CHECK_EQ(t32_imm16(slot) | t32_imm16(slot + 4) << 16, LIBC + 0x6a46c);
	check_thumb_back(slot, 10, LIBC + 0x6a0e6);
}

TEST_CASE(literal_load_at_a_halfword_address)
{
	/* glibc valloc+6, 6a4fe: 4d08 ldr r5, [pc, #32] -> Align(6a502, 4) + 32 = 6a520 */
	static const uint8_t ldr[] = { 0x08, 0x4d };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	REQUIRE(displace_at(LIBC + 0x6a4ff, ldr, sizeof(ldr), slot, &em) == STEP_XOL);
	CHECK_EQ(t32_imm16(slot) | t32_imm16(slot + 4) << 16, LIBC + 0x6a520);
	CHECK_EQ((half(slot + 2) >> 8) & 15, 5); /* movw r5 */
	CHECK_EQ((half(slot + 6) >> 8) & 15, 5); /* movt r5 */
	CHECK_EQ(half(slot + 8), 0x682d); /* ldr r5, [r5, #0] */
	check_thumb_back(slot, 10, LIBC + 0x6a500);
}

TEST_CASE(replacement_allocators_run_out_of_line)
{
	/* Debian 12 armhf (objdump): jemalloc's rallocx 14611: 2300 movs r3, #0; mimalloc's
	 * mi_heap_zalloc a79d: f5b1 7f00 cmp.w r1, #512 */
	static const uint8_t movs[] = { 0x00, 0x23 }, cmpw[] = { 0xb1, 0xf5, 0x00, 0x7f };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	REQUIRE(displace_at(LIBC + 0x14611, movs, sizeof(movs), slot, &em) == STEP_XOL);
	CHECK(!memcmp(slot, movs, sizeof(movs)));
	check_thumb_back(slot, 2, LIBC + 0x14612);
	REQUIRE(displace_at(LIBC + 0xa79d, cmpw, sizeof(cmpw), slot, &em) == STEP_XOL);
	CHECK(!memcmp(slot, cmpw, sizeof(cmpw)));
	check_thumb_back(slot, 4, LIBC + 0xa7a0);
}

TEST_CASE(add_sub_imm3_run_out_of_line)
{
	/* Debian 12 armhf mimalloc (objdump): mi_heap_malloc_small a5c8: 1ccb adds r3, r1, #3;
	 * mi_heap_malloc_aligned b684: 1e53 subs r3, r2, #1 */
	static const uint8_t adds[] = { 0xcb, 0x1c }, subs[] = { 0x53, 0x1e };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	REQUIRE(displace_at(LIBC + 0xa5c9, adds, sizeof(adds), slot, &em) == STEP_XOL);
	CHECK(!memcmp(slot, adds, sizeof(adds)));
	check_thumb_back(slot, 2, LIBC + 0xa5ca);
	REQUIRE(displace_at(LIBC + 0xb685, subs, sizeof(subs), slot, &em) == STEP_XOL);
	CHECK(!memcmp(slot, subs, sizeof(subs)));
	check_thumb_back(slot, 2, LIBC + 0xb686);
}

TEST_CASE(wide_literal_load_is_relocated)
{
	/* tcmalloc's memalign 2a4c1: f8df c124 ldr.w ip, [pc, #292] -> Align(2a4c4, 4) + 292 =
	 * 2a5e8; ldr.w ip, [pc, #-292] (U clear) -> 2a3a0 */
	static const uint8_t ldr[] = { 0xdf, 0xf8, 0x24, 0xc1 }, ldrm[] = { 0x5f, 0xf8, 0x24, 0xc1 },
			     pc[] = { 0xdf, 0xf8, 0x24, 0xf1 };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	REQUIRE(displace_at(LIBC + 0x2a4c1, ldr, sizeof(ldr), slot, &em) == STEP_XOL);
	CHECK_EQ(t32_imm16(slot) | t32_imm16(slot + 4) << 16, LIBC + 0x2a5e8);
	CHECK_EQ((half(slot + 6) >> 8) & 15, 12); /* movt ip */
	CHECK_EQ(half(slot + 8), 0xf8dc); /* ldr.w ip, [ip, #0] */
	CHECK_EQ(half(slot + 10), 0xc000);
	check_thumb_back(slot, 12, LIBC + 0x2a4c4);
	REQUIRE(displace_at(LIBC + 0x2a4c1, ldrm, sizeof(ldrm), slot, &em) == STEP_XOL);
	CHECK_EQ(t32_imm16(slot) | t32_imm16(slot + 4) << 16, LIBC + 0x2a3a0);
	/* into the pc: a branch, refused */
	CHECK_EQ(displace_at(LIBC + 0x2a4c1, pc, sizeof(pc), slot, &em), -ENOTSUP);
}

TEST_CASE(dl_debug_state_return_is_emulated)
{
	/* ld-linux-armhf.so.3: _dl_debug_state = 0x1699, 4770 bx lr (musl's: the same) */
	static const uint8_t bx_lr[] = { 0x70, 0x47 };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	REQUIRE(displace_at(0xb6fd1699, bx_lr, sizeof(bx_lr), slot, &em) == STEP_EMULATE);
	regs_init(&r, true);
	r.w32[PC] = 0xb6fd1698, r.w32[LR] = 0xb6fd4a0b; /* a Thumb caller */
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w32[PC], 0xb6fd4a0a);
	CHECK(r.w32[CPSR] & T_BIT);
	/* an ARM caller: bx interworks to ARM state */
	regs_init(&r, true);
	r.w32[LR] = 0x10a2c;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w32[PC], 0x10a2c);
	CHECK(!(r.w32[CPSR] & T_BIT));
}

TEST_CASE(musl_entries)
{
	/* musl 1.2.3 armhf libc.so (objdump) */
	static const struct {
		uint64_t sym, target; /* target: where a b.w goes (0: runs out of line) */
		uint8_t code[4];
		size_t len;
	} cases[] = {
		{ 0x2b63d, 0x2c1f8, { 0x00, 0xf0, 0xdc, 0xbd }, 4 }, /* malloc: b.w */
		{ 0x2b5a5, 0x2bd88, { 0x00, 0xf0, 0xf0, 0xbb }, 4 }, /* free: b.w */
		{ 0x2cb31, 0x2c7f0, { 0xff, 0xf7, 0x5e, 0xbe }, 4 }, /* realloc: b.w back */
		{ 0x2cb05, 0x116c0, { 0xe4, 0xf7, 0xdc, 0xbd }, 4 }, /* memalign: b.w plt */
		{ 0x2b515, 0, { 0x70, 0xb5 }, 2 }, /* calloc: push {r4, r5, r6, lr} */
		{ 0x2b641, 0, { 0xf8, 0xb5 }, 2 }, /* aligned_alloc: push {r3-r7, lr} */
		{ 0x2cb09, 0, { 0x0b, 0x46 }, 2 }, /* posix_memalign: mov r3, r1 */
	};
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t sym = LIBC + cases[i].sym;
		int kind = displace_at(sym, cases[i].code, cases[i].len, slot, &em);

		if (!cases[i].target) {
			REQUIRE(kind == STEP_XOL);
			CHECK(!memcmp(slot, cases[i].code, cases[i].len));
			check_thumb_back(slot, cases[i].len, sym - 1 + cases[i].len);
			continue;
		}
		REQUIRE(kind == STEP_EMULATE);
		regs_init(&r, true);
		r.w32[PC] = sym - 1;
		CHECK_EQ(a->emulate(&em, &r), 0);
		CHECK_EQ(r.w32[PC], LIBC + cases[i].target);
		CHECK(r.w32[CPSR] & T_BIT);
	}
}

TEST_CASE(musl_valloc_literal_load)
{
	/* 259ec: 4b02 ldr r3, [pc, #8] -> 259f8 */
	static const uint8_t ldr[] = { 0x02, 0x4b };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	REQUIRE(displace_at(LIBC + 0x259ed, ldr, sizeof(ldr), slot, &em) == STEP_XOL);
	CHECK_EQ(t32_imm16(slot) | t32_imm16(slot + 4) << 16, LIBC + 0x259f8);
	check_thumb_back(slot, 10, LIBC + 0x259ee);
}

TEST_CASE(cbz_and_cbnz_are_emulated)
{
	/* musl reallocarray, 2cb34: b14a cbz r2, 2cb4a;
	 * musl calloc+8, 2b51c: bbc3 cbnz r3, 2b590 */
	static const uint8_t cbz[] = { 0x4a, 0xb1 }, cbnz[] = { 0xc3, 0xbb };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	REQUIRE(displace_at(LIBC + 0x2cb35, cbz, sizeof(cbz), slot, &em) == STEP_EMULATE);
	regs_init(&r, true);
	r.w32[R2] = 0;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w32[PC], LIBC + 0x2cb4a);
	r.w32[R2] = 8;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w32[PC], LIBC + 0x2cb36);
	CHECK(r.w32[CPSR] & T_BIT);

	REQUIRE(displace_at(LIBC + 0x2b51d, cbnz, sizeof(cbnz), slot, &em) == STEP_EMULATE);
	r.w32[R3] = 1;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w32[PC], LIBC + 0x2b590);
	r.w32[R3] = 0;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w32[PC], LIBC + 0x2b51e);
}

/* Run a guard slot (at SLOT, in the state r is in) until the pc leaves it, every instruction
 * through the arch's own emulation. false: an instruction it does not emulate. */
static bool run_guard_slot(const uint8_t *slot, struct arch_regs *r)
{
	r->w32[PC] = (uint32_t)SLOT;
	for (int n = 0; n < 4 && r->w32[PC] >= SLOT && r->w32[PC] < SLOT + ARCH_SLOT_SIZE; n++) {
		uint8_t buf[ARCH_MAX_INSN] = { 0 }, unused[ARCH_SLOT_SIZE];
		size_t at = r->w32[PC] - SLOT;
		struct arch_emul em;

		memcpy(buf, slot + at, at + 4 <= ARCH_SLOT_SIZE ? 4 : 2);
		if (a->displace(a->get_pc(r), buf, sizeof(buf), SLOT + 0x1000, unused, &em) !=
			    STEP_EMULATE ||
		    a->emulate(&em, r))
			return false;
	}
	return r->w32[PC] < SLOT || r->w32[PC] >= SLOT + ARCH_SLOT_SIZE;
}

/* The guard's slot of an emulated instruction (emul_slot) ends where heaptrace's emulation
 * ends, with the same registers and state, taken or not. */
TEST_CASE(guard_slots_do_what_emulation_does)
{
	static const struct {
		uint64_t sym;
		uint8_t code[4];
		unsigned reg; /* the register varied */
	} cases[] = {
		{ LIBC + 0x2cb35, { 0x4a, 0xb1 }, R2 }, /* cbz r2 (musl reallocarray) */
		{ LIBC + 0x2b51d, { 0xc3, 0xbb }, R3 }, /* cbnz r3 (musl calloc+8) */
		{ LIBC + 0x2cb35, { 0x70, 0x47 }, LR }, /* bx lr (Thumb) */
		{ LIBC + 0x2cb34, { 0x1e, 0xff, 0x2f, 0xe1 }, LR }, /* bx lr (ARM) */
	};
	static const uint32_t values[] = { 0, 8, (uint32_t)LIBC + 0x101, (uint32_t)LIBC + 0x200 };

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint8_t slot[ARCH_SLOT_SIZE], buf[ARCH_MAX_INSN] = { 0 };
		struct arch_emul em;

		REQUIRE(displace_at(cases[c].sym, cases[c].code, 4, slot, &em) == STEP_EMULATE);
		memcpy(buf, cases[c].code, 4);
		REQUIRE(a->emul_slot(cases[c].sym, buf, sizeof(buf), SLOT, slot) == 0);
		for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			struct arch_regs want, got;

			regs_init(&want, cases[c].sym & 1);
			want.w32[cases[c].reg] = values[v];
			got = want;
			CHECK_EQ(a->emulate(&em, &want), 0);
			CHECK(run_guard_slot(slot, &got));
			for (unsigned k = 0; k <= CPSR; k++)
				CHECK_EQ(got.w32[k], want.w32[k]);
		}
	}
}

TEST_CASE(thumb_b_n_is_emulated)
{
	/* as: 42: e7dd b.n 0 */
	static const uint8_t b_n[] = { 0xdd, 0xe7 };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	REQUIRE(displace_at(0x10043, b_n, sizeof(b_n), slot, &em) == STEP_EMULATE);
	regs_init(&r, true);
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w32[PC], 0x10000);
	CHECK_EQ(a->get_pc(&r), 0x10001);
}

TEST_CASE(arm_state_entries)
{
	/* a -marm program's own allocator (as output) */
	static const struct {
		uint32_t insn;
	} xol[] = {
		{ 0xe92d4010 }, /* push {r4, lr} */
		{ 0xe92d4800 }, /* push {fp, lr} */
		{ 0xe52de004 }, /* push {lr} = str lr, [sp, #-4]! */
		{ 0xe1a03000 }, /* mov r3, r0 */
		{ 0xe3500000 }, /* cmp r0, #0 */
		{ 0xe24dd008 }, /* sub sp, sp, #8 */
	};
	/* 1006c: e59f3008 ldr r3, [pc, #8] -> 1007c, relocated as movw r3, #0x7c; movt r3, #1;
	 * ldr r3, [r3]; ldr pc, [pc, #-4]; .word 0x10070 (as output) */
	static const uint8_t ldr[] = { 0x08, 0x30, 0x9f, 0xe5 },
			     want[] = { 0x7c, 0x30, 0x00, 0xe3, 0x01, 0x30, 0x40, 0xe3,
					0x00, 0x30, 0x93, 0xe5, 0x04, 0xf0, 0x1f, 0xe5,
					0x70, 0x00, 0x01, 0x00 },
			     ldr_back[] = { 0x08, 0x30, 0x1f, 0xe5 }, /* ldr r3, [pc, #-8] */
			     bx_lr[] = { 0x1e, 0xff, 0x2f, 0xe1 },
			     b[] = { 0xf5, 0xff, 0xff, 0xea }; /* 68: b 44 */
	uint8_t slot[ARCH_SLOT_SIZE], code[4];
	struct arch_emul em;
	struct arch_regs r;

	for (size_t i = 0; i < sizeof(xol) / sizeof(xol[0]); i++) {
		memcpy(code, &xol[i].insn, 4); /* the host is little-endian too */
		REQUIRE(displace_at(0x10040, code, 4, slot, &em) == STEP_XOL);
		CHECK_EQ(word(slot), xol[i].insn);
		check_arm_back(slot, 4, 0x10044);
		CHECK_EQ(word(slot + 12), 0xe7f001f0); /* the rest traps: ARM udf */
	}
	REQUIRE(displace_at(0x1006c, ldr, 4, slot, &em) == STEP_XOL);
	CHECK(!memcmp(slot, want, sizeof(want)));
	REQUIRE(displace_at(0x10070, ldr_back, 4, slot, &em) == STEP_XOL);
	CHECK_EQ(word(slot), 0xe3003070); /* movw r3, #0x0070: 0x10070 + 8 - 8 */
	CHECK_EQ(word(slot + 4), 0xe3403001); /* movt r3, #1 */
	check_arm_back(slot, 12, 0x10074);

	REQUIRE(displace_at(0x10064, bx_lr, 4, slot, &em) == STEP_EMULATE);
	regs_init(&r, false);
	r.w32[LR] = 0x483dd7; /* back to a Thumb caller */
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w32[PC], 0x483dd6);
	CHECK(r.w32[CPSR] & T_BIT);
	REQUIRE(displace_at(0x10068, b, 4, slot, &em) == STEP_EMULATE);
	regs_init(&r, false);
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w32[PC], 0x10044);
	CHECK(!(r.w32[CPSR] & T_BIT));
}

TEST_CASE(unknown_instructions_are_refused)
{
	static const struct {
		uint64_t sym;
		uint8_t code[4];
		size_t len;
	} cases[] = {
		{ 0x10001, { 0x98, 0x47 }, 2 }, /* blx r3 */
		{ 0x10001, { 0xff, 0xf7, 0xfe, 0xff }, 4 }, /* bl */
		{ 0x10001, { 0x46, 0xd0 }, 2 }, /* beq.n (glibc free+2) */
		{ 0x10001, { 0x00, 0xf0, 0xa8, 0x80 }, 4 }, /* beq.w */
		{ 0x10001, { 0x7b, 0x44 }, 2 }, /* add r3, pc */
		{ 0x10001, { 0xf7, 0x46 }, 2 }, /* mov pc, lr */
		{ 0x10001, { 0x7b, 0x46 }, 2 }, /* mov r3, pc */
		{ 0x10001, { 0x78, 0x47 }, 2 }, /* bx pc */
		{ 0x10001, { 0xdf, 0xf8, 0x80, 0xf3 }, 4 }, /* ldr.w pc, [pc, #896]: a branch */
		{ 0x10001, { 0x18, 0xbf }, 2 }, /* it ne */
		{ 0x10001, { 0x00, 0xdf }, 2 }, /* svc 0 */
		{ 0x10001, { 0x01, 0xde }, 2 }, /* udf #1: our own breakpoint */
		{ 0x10001, { 0x00, 0xb4 }, 2 }, /* push {} */
		{ 0x10001, { 0x2d, 0xe9, 0x10, 0x80 }, 4 }, /* stmdb sp!, {r4, pc} */
		{ 0x10001, { 0x2d, 0xe9, 0x10, 0x20 }, 4 }, /* stmdb sp!, {r4, sp} */
		{ 0x10001, { 0xa0, 0xfb, 0x01, 0x5f }, 4 }, /* umull r5, pc, r0, r1 */
		{ 0x10001, { 0x1d, 0xee, 0x70, 0x5f }, 4 }, /* mrc 15, 0, r5, cr13, cr0, {3} */
		{ 0x10001, { 0x50, 0xf8, 0x04, 0x2c }, 4 }, /* ldr.w r2, [r0, #-4] */
		{ 0x10001, { 0x00, 0xf1, 0x04, 0x0f }, 4 }, /* add.w pc, r0, #4 */
		{ 0x10001, { 0x0f, 0xf2, 0x10, 0x03 }, 4 }, /* adr.w r3, +16 (addw r3, pc, #16) */
		{ 0x10001, { 0x4f, 0xea, 0x0f, 0x03 }, 4 }, /* mov.w r3, pc */
		{ 0x10001, { 0x2d, 0xe9 }, 2 }, /* a 32-bit instruction cut at the mapping end */
		{ 0x10000, { 0x10, 0x40, 0x2d, 0x09 }, 4 }, /* pusheq {r4, lr} */
		{ 0x10000, { 0x10, 0x80, 0x2d, 0xe9 }, 4 }, /* push {r4, pc} */
		{ 0x10000, { 0x04, 0xf0, 0x1f, 0xe5 }, 4 }, /* ldr pc, [pc, #-4] */
		{ 0x10000, { 0x0e, 0xf0, 0xa0, 0xe1 }, 4 }, /* mov pc, lr */
		{ 0x10000, { 0xfe, 0xff, 0xff, 0xeb }, 4 }, /* bl */
		{ 0x10000, { 0x00, 0x00, 0x00, 0xef }, 4 }, /* svc 0 */
		{ 0x10002, { 0x10, 0x40, 0x2d, 0xe9 }, 4 }, /* ARM code at a halfword address */
	};
	uint8_t slot[ARCH_SLOT_SIZE], buf[ARCH_MAX_INSN];
	struct arch_emul em;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 0, sizeof(buf));
		memcpy(buf, cases[i].code, cases[i].len);
		if (a->displace(cases[i].sym, buf, cases[i].len, SLOT, slot, &em) != -ENOTSUP)
			UNITTEST_FAIL("case %zu not refused", i);
	}
}

/* The logging trampoline: the words were checked once against arm-linux-gnueabihf-as; what
 * varies with the ring is checked here. */
TEST_CASE(logging_trampoline)
{
	uint8_t buf[ARCH_LOGTRAMP_MAX];
	size_t n;

	n = a->logtramp_encode(buf, TRAMP + 0x40, TRAMP + 0x1000, TRAMP + 0x1040, 127);
	REQUIRE(n == 21 * 4 + 8 && n <= ARCH_LOGTRAMP_MAX);
	CHECK_EQ(word(buf), 0xe92d00f0); /* push {r4-r7} */
	CHECK_EQ(word(buf + 28), 0xe205507f); /* and r5, r5, #127 */
	CHECK_EQ(word(buf + 60), 0xf57ff05b); /* dmb ish, then seq */
	CHECK_EQ(word(buf + 80), 0xe12fff1e); /* bx lr */
	CHECK_EQ(word(buf + 84), TRAMP + 0x1000); /* the literals the two ldr read */
	CHECK_EQ(word(buf + 88), TRAMP + 0x1040);
	CHECK_EQ(a->nr_mprotect, 125);
}

TEST_CASE(trampolines)
{
	static const uint8_t bx_lr[] = { 0x70, 0x47 }; /* the callee's return */
	uint8_t buf[ARCH_SLOT_SIZE], slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;
	uint64_t tv;

	memset(buf, 0, sizeof(buf));
	CHECK_EQ(a->tramp_encode(buf), 6);
	CHECK_EQ(word(buf), 0xe7f001f0); /* ARM at base */
	CHECK_EQ(half(buf + 4), 0xde01); /* Thumb at base + 4 */
	CHECK_EQ(a->tramp_for(TRAMP, 0x483dd7), TRAMP + 5);
	CHECK_EQ(a->tramp_for(TRAMP, 0x10a2c), TRAMP);
	REQUIRE(displace_at(0x10001, bx_lr, 2, slot, &em) == STEP_EMULATE);

	/* entry from a Thumb caller: lr := the Thumb trampoline; bx lr lands there in Thumb */
	regs_init(&r, true);
	r.w32[LR] = 0x483dd7;
	tv = a->tramp_for(TRAMP, a->get_ret_reg(&r));
	a->set_ret_reg(&r, tv);
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w32[PC], TRAMP + 4);
	CHECK(r.w32[CPSR] & T_BIT);
	CHECK_EQ(a->bp_addr_from_pc(a->get_pc(&r)), TRAMP + 4);
	CHECK_EQ(a->code_addr(tv), TRAMP + 4); /* inside [TRAMP, TRAMP + 6): the tail-call check */
	/* on_return: back to the caller */
	a->set_pc(&r, 0x483dd7);
	CHECK_EQ(r.w32[PC], 0x483dd6);
	CHECK(r.w32[CPSR] & T_BIT);

	/* an ARM caller: lr := base, bx lr arrives in ARM state, the ARM udf traps */
	regs_init(&r, true);
	r.w32[LR] = 0x10a2c;
	a->set_ret_reg(&r, a->tramp_for(TRAMP, a->get_ret_reg(&r)));
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w32[PC], TRAMP);
	CHECK(!(r.w32[CPSR] & T_BIT));
	CHECK_EQ(a->bp_addr_from_pc(a->get_pc(&r)), TRAMP);
	a->set_pc(&r, 0x10a2c);
	CHECK_EQ(r.w32[PC], 0x10a2c);
	CHECK(!(r.w32[CPSR] & T_BIT));
}

TEST_CASE(emulate_rejects_unknown_kinds)
{
	struct arch_emul em = { .kind = 99 };
	struct arch_regs r;

	regs_init(&r, true);
	CHECK_EQ(a->emulate(&em, &r), -EINVAL);
}

TEST_CASE(syscall_injection)
{
	const uint64_t args[6] = { 0xb6c00000, 4096, 5, 0x22, (uint64_t)-1, 0 };
	struct arch_regs r;

	CHECK_EQ(a->syscall_insn_len, 2);
	CHECK_EQ(a->syscall_insn[0], 0x00); /* Thumb svc #0 = 0xdf00 */
	CHECK_EQ(a->syscall_insn[1], 0xdf);
	CHECK_EQ(a->nr_mmap, 192); /* mmap2 */
	CHECK_EQ(a->nr_munmap, 91);

	/* a thread stopped in ARM state, inside an IT block */
	regs_init(&r, false);
	r.w32[CPSR] |= 0x0600fc00 | 0x80000000; /* IT bits, N flag */
	r.w32[PC] = 0x10890, r.w32[R7] = 3, r.w32[ORIG_R0] = 7;
	a->syscall_setup(&r, 0xb6e812a4, a->nr_mmap, args);
	CHECK_EQ(r.w32[PC], 0xb6e812a4);
	CHECK(r.w32[CPSR] & T_BIT);
	CHECK_EQ(r.w32[CPSR] & 0x0600fc00, 0); /* not conditional */
	CHECK(r.w32[CPSR] & 0x80000000); /* the rest untouched */
	CHECK_EQ(r.w32[R7], 192);
	CHECK_EQ(r.w32[R0], 0xb6c00000);
	CHECK_EQ(r.w32[R1], 4096);
	CHECK_EQ(r.w32[R2], 5);
	CHECK_EQ(r.w32[R3], 0x22);
	CHECK_EQ(r.w32[R4], 0xffffffff);
	CHECK_EQ(r.w32[R5], 0);

	/* results: addresses above 2 GiB are values, [-4095, -1] are errors */
	r.w32[R0] = 0xb6c00000;
	CHECK_EQ(a->syscall_result(&r), 0xb6c00000);
	r.w32[R0] = (uint32_t)-12;
	CHECK_EQ(a->syscall_result(&r), (uint64_t)-12);
	r.w32[R0] = 0xfffff001;
	CHECK_EQ(a->syscall_result(&r), (uint64_t)-4095);
	r.w32[R0] = 0xfffff000;
	CHECK_EQ(a->syscall_result(&r), 0xfffff000);
}

TEST_CASE(syscall_restart)
{
	struct arch_regs r;

	/* taken at a syscall exit: read(3, ...) interrupted with -ERESTARTSYS in Thumb code */
	regs_init(&r, true);
	r.w32[R0] = (uint32_t)-512, r.w32[ORIG_R0] = 3, r.w32[R7] = 3, r.w32[PC] = 0x1002;
	CHECK(a->syscall_restart(&r));
	CHECK_EQ(r.w32[R0], 3);
	CHECK_EQ(r.w32[PC], 0x1000);
	CHECK_EQ(r.w32[R7], 3);
	/* ARM state: svc is 4 bytes */
	regs_init(&r, false);
	r.w32[R0] = (uint32_t)-514, r.w32[ORIG_R0] = 3, r.w32[PC] = 0x1004;
	CHECK(a->syscall_restart(&r));
	CHECK_EQ(r.w32[PC], 0x1000);
	/* -ERESTART_RESTARTBLOCK (nanosleep): restart_syscall, number 0 */
	regs_init(&r, true);
	r.w32[R0] = (uint32_t)-516, r.w32[ORIG_R0] = 0xbebfa860, r.w32[R7] = 162;
	r.w32[PC] = 0x1002;
	CHECK(a->syscall_restart(&r));
	CHECK_EQ(r.w32[R7], 0);
	CHECK_EQ(r.w32[R0], 0xbebfa860);
	CHECK_EQ(r.w32[PC], 0x1000);

	/* returned -EINTR, -ENOIOCTLCMD: nothing to restart */
	regs_init(&r, true);
	r.w32[R0] = (uint32_t)-4, r.w32[ORIG_R0] = 3, r.w32[PC] = 0x1002;
	CHECK(!a->syscall_restart(&r));
	r.w32[R0] = (uint32_t)-515;
	CHECK(!a->syscall_restart(&r));
	CHECK_EQ(r.w32[PC], 0x1002);
	/* the kernel already prepared the restart before the stop (r0 = orig_r0, pc = svc) */
	r.w32[R0] = r.w32[ORIG_R0] = (uint32_t)-513;
	CHECK(!a->syscall_restart(&r));
	/* a breakpoint or interrupt stop (orig_r0 = -1) with a user value in r0 */
	r.w32[R0] = (uint32_t)-512, r.w32[ORIG_R0] = 0xffffffff;
	CHECK(!a->syscall_restart(&r));
	CHECK_EQ(r.w32[PC], 0x1002);
	CHECK_EQ(r.w32[R0], (uint32_t)-512);
}
