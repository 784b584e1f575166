// SPDX-License-Identifier: GPL-2.0-only
/* The aarch64 arch layer: breakpoint encoding, register slots, and displacing the first
 * instructions of glibc's and musl's malloc family. Instruction
 * words are from aarch64-linux-gnu-objdump of Debian 12's arm64 libc6 2.36-9+deb12u14 and
 * musl 1.2.3-1; addresses are their st_values added to a load base. */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "unittest.h"

static const struct arch_ops *a = &arch_aarch64_ops;

#define BASE 0xffff9c000000ULL /* load base of libc (page aligned) */
#define SLOT (BASE - 0x200000 + 0x40) /* slot 1 of a page 2 MiB below libc */
#define BRK0 0xd4200000u

/* user_pt_regs: x0-x30 at 0-30, sp 31, pc 32, pstate 33 */
enum { X0 = 0, X8 = 8, X30 = 30, SP = 31, PC = 32, PSTATE = 33 };

static uint32_t word(const uint8_t *p)
{
	uint32_t w;

	memcpy(&w, p, 4);
	return w;
}

static int displace_at(uint64_t addr, uint32_t insn, uint64_t slot_addr, uint8_t *slot,
		       struct arch_emul *em)
{
	uint8_t buf[ARCH_MAX_INSN];

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &insn, 4);
	memset(slot, 0x5a, ARCH_SLOT_SIZE);
	return a->displace(addr, buf, sizeof(buf), slot_addr, slot, em);
}

/* Target of the b at offset 4 of a slot placed at slot_addr. */
static uint64_t b_target(const uint8_t *slot, uint64_t slot_addr)
{
	uint32_t b = word(slot + 4);
	int64_t off = (int64_t)((uint64_t)(b & 0x3ffffff) << 38) >> 36; /* imm26 * 4 */

	return slot_addr + 4 + off;
}

/* The slot must hold the instruction, then b to addr + 4, then only brk #0. */
static void check_xol_b(uint64_t addr, uint32_t insn, const uint8_t *slot)
{
	CHECK_EQ(word(slot), insn);
	CHECK_EQ(word(slot + 4) & 0xfc000000, 0x14000000); /* b */
	CHECK_EQ(b_target(slot, SLOT), addr + 4);
	for (size_t k = 8; k < ARCH_SLOT_SIZE; k += 4)
		CHECK_EQ(word(slot + k), BRK0);
}

static struct arch_regs snapshot(void)
{
	struct arch_regs r;

	memset(&r, 0, sizeof(r));
	for (unsigned i = 0; i < 31; i++)
		r.w64[i] = 0x1000 + i;
	r.w64[SP] = 0xfffff11d9a30;
	r.w64[PC] = 0xdead0000;
	r.size = 272;
	return r;
}

TEST_CASE(identity)
{
	CHECK_STREQ(a->name, "aarch64");
	CHECK_EQ(a->elf_machine, EM_AARCH64);
	CHECK_EQ(a->elf_class, ELFCLASS64);
	CHECK_EQ(a->word_size, 8);
	CHECK_EQ(a->insn_align, 4);
}

TEST_CASE(breakpoint_encoding)
{
	uint8_t buf[ARCH_MAX_INSN];

	/* brk #0 = 0xd4200000, bytes 00 00 20 d4; the PC at the trap is the brk itself */
	CHECK_EQ(a->bp_encode(BASE + 0x92240, buf), 4);
	CHECK(!memcmp(buf, "\x00\x00\x20\xd4", 4));
	CHECK_EQ(a->bp_addr_from_pc(BASE + 0x92240), BASE + 0x92240);
	CHECK_EQ(a->code_addr(BASE + 0x92240), BASE + 0x92240);
}

TEST_CASE(register_slots)
{
	struct arch_regs r = snapshot();

	for (unsigned n = 0; n < 8; n++)
		CHECK_EQ(a->get_arg(&r, n), 0x1000 + n); /* x0-x7 */
	CHECK_EQ(a->get_arg(&r, 8), 0);
	CHECK_EQ(a->get_retval(&r), 0x1000); /* x0 */
	CHECK_EQ(a->get_pc(&r), 0xdead0000);
	CHECK_EQ(a->get_sp(&r), 0xfffff11d9a30);
	CHECK_EQ(a->get_ret_reg(&r), 0x1000 + 30); /* x30 */
	a->set_pc(&r, 0x402000);
	CHECK_EQ(r.w64[PC], 0x402000);
	a->set_sp(&r, 0xfffff0000000);
	CHECK_EQ(r.w64[SP], 0xfffff0000000);
	a->set_ret_reg(&r, 0x7000);
	CHECK_EQ(r.w64[X30], 0x7000);
	CHECK_EQ(r.w64[29], 0x1000 + 29);
	CHECK(!a->ret_on_stack);
	CHECK_EQ(a->ret_sp_adjust, 0);
}

TEST_CASE(glibc_prologues_run_out_of_line)
{
	/* glibc 2.36 arm64: the first instruction of every hooked function but free (a cbz) */
	static const struct { uint64_t addr; uint32_t insn; } cases[] = {
		{ 0x92240, 0xa9bc7bfd }, /* malloc: stp x29, x30, [sp, #-64]! */
		{ 0x93380, 0xa9bb7bfd }, /* calloc: stp x29, x30, [sp, #-80]! */
		{ 0x92c70, 0xa9b97bfd }, /* realloc: stp x29, x30, [sp, #-112]! */
		{ 0x945d0, 0x9bc27c23 }, /* reallocarray: umulh x3, x1, x2 */
		{ 0x94004, 0xa9bd7bfd }, /* posix_memalign: stp x29, x30, [sp, #-48]! */
		{ 0x93250, 0xa9bd7bfd }, /* memalign = aligned_alloc */
		{ 0x932a0, 0xa9be7bfd }, /* valloc: stp x29, x30, [sp, #-32]! */
		{ 0x93300, 0xa9be7bfd }, /* pvalloc */
		{ 0xe7da0, 0xf2402cbf }, /* mmap = mmap64 (--mmap): tst x5, #0xfff */
	};
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t addr = BASE + cases[i].addr;

		REQUIRE(displace_at(addr, cases[i].insn, SLOT, slot, &em) == STEP_XOL);
		check_xol_b(addr, cases[i].insn, slot);
	}
}

TEST_CASE(musl_and_other_plain_instructions_run_out_of_line)
{
	static const uint32_t insns[] = {
		0xa9bd7bfd, /* musl calloc: stp x29, x30, [sp, #-48]! */
		0xa9be7bfd, /* musl aligned_alloc: stp x29, x30, [sp, #-32]! */
		0xaa0103e3, /* musl posix_memalign: mov x3, x1 (orr) */
		0x910003fd, /* mov x29, sp (add immediate) */
		0xf1001c3f, /* cmp x1, #0x7 */
		0x9b027c21, /* mul x1, x1, x2 */
		0x9b427c23, /* smulh x3, x1, x2 */
		0xa90153f3, /* stp x19, x20, [sp, #16] */
		0xa8c17bfd, /* ldp x29, x30, [sp], #16 */
		0x29bf0be1, /* stp w1, w2, [sp, #-8]! */
		0x69400be1, /* ldpsw x1, x2, [sp] */
		0xd2a00020, /* mov x0, #0x10000 (movz) */
		0x8b020c20, /* add x0, x1, x2, lsl #3 */
		0xd503233f, /* paciasp */
	};
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	for (size_t i = 0; i < sizeof(insns) / sizeof(insns[0]); i++) {
		REQUIRE(displace_at(BASE + 0x27480, insns[i], SLOT, slot, &em) == STEP_XOL);
		check_xol_b(BASE + 0x27480, insns[i], slot);
	}
}

TEST_CASE(far_slot_jumps_back_through_x16)
{
	uint64_t addr = BASE + 0x92240, far = 0x10000040, lit;
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	uint32_t ldr;

	REQUIRE(displace_at(addr, 0xa9bc7bfd, far, slot, &em) == STEP_XOL);
	CHECK_EQ(word(slot), 0xa9bc7bfd);
	ldr = word(slot + 4);
	CHECK_EQ(ldr, 0x58000070); /* ldr x16, .+12 */
	CHECK_EQ(ldr & 0xff00001f, 0x58000010); /* ldr (literal), 64-bit, into x16 */
	CHECK_EQ(4 + ((ldr >> 5) & 0x7ffff) * 4, 16); /* the literal is at slot + 16 */
	CHECK_EQ(word(slot + 8), 0xd61f0200); /* br x16 */
	CHECK_EQ(word(slot + 12), BRK0);
	memcpy(&lit, slot + 16, 8);
	CHECK_EQ(lit, addr + 4);
	CHECK_EQ((far + 16) % 8, 0); /* aligned literal */
	for (size_t k = 24; k < ARCH_SLOT_SIZE; k += 4)
		CHECK_EQ(word(slot + k), BRK0);
}

TEST_CASE(b_reach_limits)
{
	uint64_t addr = BASE + 0x92240, next = addr + 4;
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	uint64_t s;

	/* b reaches [pc - 128 MiB, pc + 128 MiB - 4], pc = slot + 4 */
	s = next - 4 - ((1ULL << 27) - 4);
	REQUIRE(displace_at(addr, 0xa9bc7bfd, s, slot, &em) == STEP_XOL);
	CHECK_EQ(word(slot + 4) & 0xfc000000, 0x14000000);
	CHECK_EQ(b_target(slot, s), next);
	s = next - 4 - (1ULL << 27);
	REQUIRE(displace_at(addr, 0xa9bc7bfd, s, slot, &em) == STEP_XOL);
	CHECK_EQ(word(slot + 4), 0x58000070);
	s = next - 4 + (1ULL << 27);
	REQUIRE(displace_at(addr, 0xa9bc7bfd, s, slot, &em) == STEP_XOL);
	CHECK_EQ(word(slot + 4) & 0xfc000000, 0x14000000);
	CHECK_EQ(b_target(slot, s), next);
	s = next - 4 + (1ULL << 27) + 4;
	REQUIRE(displace_at(addr, 0xa9bc7bfd, s, slot, &em) == STEP_XOL);
	CHECK_EQ(word(slot + 4), 0x58000070);
}

TEST_CASE(glibc_free_cbz_is_emulated)
{
	uint64_t free_ = BASE + 0x929c4;
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	/* cbz x0, free+0x110 (b4000880); free+0x110 is a ret */
	REQUIRE(displace_at(free_, 0xb4000880, SLOT, slot, &em) == STEP_EMULATE);
	CHECK_EQ(em.target, free_ + 0x110);
	r = snapshot();
	r.w64[X0] = 0;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], free_ + 0x110);
	r = snapshot();
	r.w64[X0] = 0xaaaad87822b0;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], free_ + 4);
	r.w64[X0] = 0x100000000; /* 64-bit compare: low half zero is not zero */
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], free_ + 4);
	CHECK_EQ(r.w64[X0], 0x100000000);
	CHECK_EQ(r.w64[X30], 0x1000 + 30);
	CHECK_EQ(r.w64[SP], 0xfffff11d9a30);
}

/* Run a guard slot (at SLOT) from its start on r until the pc leaves it: ldr literal by hand,
 * every other instruction through the arch's own emulation. false: an instruction neither. */
static bool run_guard_slot(const uint8_t *slot, struct arch_regs *r)
{
	r->w64[PC] = SLOT;
	for (int n = 0; n < 4 && r->w64[PC] >= SLOT && r->w64[PC] < SLOT + ARCH_SLOT_SIZE; n++) {
		uint64_t at = r->w64[PC] - SLOT, lit;
		uint32_t w = word(slot + at);
		uint8_t unused[ARCH_SLOT_SIZE];
		struct arch_emul em;

		if ((w & 0xff000000u) == 0x58000000u) { /* ldr xd, literal */
			memcpy(&lit, slot + at + ((w >> 5) & 0x7ffff) * 4, 8);
			r->w64[w & 31] = lit;
			r->w64[PC] += 4;
			continue;
		}
		if (displace_at(r->w64[PC], w, SLOT + 0x1000, unused, &em) != STEP_EMULATE ||
		    a->emulate(&em, r))
			return false;
	}
	return r->w64[PC] < SLOT || r->w64[PC] >= SLOT + ARCH_SLOT_SIZE;
}

/* The guard's slot of an emulated instruction (emul_slot) ends where heaptrace's emulation
 * ends, with the same registers, for branches taken and not. */
TEST_CASE(guard_slots_do_what_emulation_does)
{
	static const struct {
		uint32_t insn;
		unsigned reg; /* the register varied */
	} cases[] = {
		{ 0xb4000880, X0 }, /* cbz x0, +0x110 (glibc's free) */
		{ 0x35000123, 3 }, /* cbnz w3, +0x24 */
		{ 0x37080045, 5 }, /* tbnz w5, #1, +8 */
		{ 0x54fff801, PSTATE }, /* b.ne -0x100 */
		{ 0xb0000d03, 3 }, /* adrp x3, +0x1a1000 */
		{ 0x10000101, 1 }, /* adr x1, +0x20 */
		{ 0x94001000, X30 }, /* bl +0x4000 */
		{ 0xd63f0060, 3 }, /* blr x3 */
		{ 0xd65f03c0, X30 }, /* ret */
	};
	static const uint64_t values[] = { 0, 2, 0x100000000, 0x40000000 /* Z */ };
	uint64_t addr = BASE + 0x929c4;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint8_t slot[ARCH_SLOT_SIZE], buf[ARCH_MAX_INSN] = { 0 };
		struct arch_emul em;

		REQUIRE(displace_at(addr, cases[c].insn, SLOT, slot, &em) == STEP_EMULATE);
		memcpy(buf, &cases[c].insn, 4);
		REQUIRE(a->emul_slot(addr, buf, sizeof(buf), SLOT, slot) == 0);
		for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			struct arch_regs want = snapshot(), got;

			want.w64[cases[c].reg] = cases[c].reg == X30 ? BASE + 0x100 : values[v];
			got = want;
			CHECK_EQ(a->emulate(&em, &want), 0);
			CHECK(run_guard_slot(slot, &got));
			want.w64[PSTATE] = got.w64[PSTATE] = 0;
			for (unsigned k = 0; k <= PC; k++)
				CHECK_EQ(got.w64[k], want.w64[k]);
		}
	}
	/* what only moves the pc needs no slot; blr x30 and out of range are refused */
	uint8_t slot[ARCH_SLOT_SIZE], buf[ARCH_MAX_INSN] = { 0 };
	uint32_t nop = 0xd503201f, blr30 = 0xd63f03c0, cbz = 0xb4000880;

	memcpy(buf, &nop, 4);
	CHECK_EQ(a->emul_slot(addr, buf, sizeof(buf), SLOT, slot), -ENOTSUP);
	memcpy(buf, &blr30, 4);
	CHECK_EQ(a->emul_slot(addr, buf, sizeof(buf), SLOT, slot), -ENOTSUP);
	memcpy(buf, &cbz, 4);
	CHECK_EQ(a->emul_slot(addr, buf, sizeof(buf), SLOT + (1ULL << 28), slot), -ERANGE);
}

TEST_CASE(dl_debug_state_ret_is_emulated)
{
	/* ld-linux-aarch64.so.1 _dl_debug_state at 0x1e10, size 4: d65f03c0 ret; and musl's */
	static const uint64_t at[] = { 0xffffa0000000ULL + 0x1e10, BASE + 0x73620 };
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	for (size_t i = 0; i < 2; i++) {
		REQUIRE(displace_at(at[i], 0xd65f03c0, SLOT, slot, &em) == STEP_EMULATE);
		r = snapshot();
		r.w64[X30] = 0xaaaac6d01424;
		CHECK_EQ(a->emulate(&em, &r), 0);
		CHECK_EQ(r.w64[PC], 0xaaaac6d01424);
		CHECK_EQ(r.w64[X30], 0xaaaac6d01424);
		CHECK_EQ(r.w64[SP], 0xfffff11d9a30);
	}
}

TEST_CASE(musl_stubs_are_emulated)
{
	/* musl 1.2.3 arm64 libc.so */
	static const struct { uint64_t addr; uint32_t insn; uint64_t target; } b[] = {
		{ 0x276a0, 0x1400060c, 0x28ed0 }, /* malloc: b aligned_alloc+0x1820 */
		{ 0x27580, 0x14000290, 0x27fc0 }, /* free: b aligned_alloc+0x910 */
		{ 0x29a80, 0x17fffee8, 0x29620 }, /* realloc: b malloc_usable_size+0x1a0 */
		{ 0x29a10, 0x17ffab1c, 0x14680 }, /* memalign: b aligned_alloc@plt */
	};
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		REQUIRE(displace_at(BASE + b[i].addr, b[i].insn, SLOT, slot, &em) == STEP_EMULATE);
		r = snapshot();
		CHECK_EQ(a->emulate(&em, &r), 0);
		CHECK_EQ(r.w64[PC], BASE + b[i].target);
		CHECK_EQ(r.w64[X30], 0x1000 + 30); /* b, not bl */
	}
	/* reallocarray: cbz x2, reallocarray+0xc */
	REQUIRE(displace_at(BASE + 0x29a90, 0xb4000062, SLOT, slot, &em) == STEP_EMULATE);
	r = snapshot();
	r.w64[2] = 0;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x29a9c);
	r.w64[2] = 8;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x29a94);
	/* valloc: adrp x2, bd000 */
	REQUIRE(displace_at(BASE + 0x1fe60, 0xd00004e2, SLOT, slot, &em) == STEP_EMULATE);
	r = snapshot();
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[2], BASE + 0xbd000);
	CHECK_EQ(r.w64[PC], BASE + 0x1fe64);
	CHECK_EQ(r.w64[1], 0x1001);
}

TEST_CASE(adr_and_adrp)
{
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	/* glibc malloc+0xc: adrp x23, 1a6000 (900008b7); posix_memalign+4: adrp x3 (d0000883) */
	REQUIRE(displace_at(BASE + 0x9224c, 0x900008b7, SLOT, slot, &em) == STEP_EMULATE);
	r = snapshot();
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[23], BASE + 0x1a6000);
	CHECK_EQ(r.w64[PC], BASE + 0x92250);
	REQUIRE(displace_at(BASE + 0x94008, 0xd0000883, SLOT, slot, &em) == STEP_EMULATE);
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[3], BASE + 0x1a6000);
	/* adr x3, .+0x10 (10000083) */
	REQUIRE(displace_at(BASE + 0x60, 0x10000083, SLOT, slot, &em) == STEP_EMULATE);
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[3], BASE + 0x70);
	/* adr xzr, . (1000001f): rd 31 is xzr, sp stays */
	REQUIRE(displace_at(BASE + 0x60, 0x1000001f, SLOT, slot, &em) == STEP_EMULATE);
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[SP], 0xfffff11d9a30);
	CHECK_EQ(r.w64[PC], BASE + 0x64);
}

TEST_CASE(other_branches_are_emulated)
{
	uint8_t slot[ARCH_SLOT_SIZE];
	struct arch_emul em;
	struct arch_regs r;

	/* bl .+8 (94000002) */
	REQUIRE(displace_at(BASE + 0x18, 0x94000002, SLOT, slot, &em) == STEP_EMULATE);
	r = snapshot();
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x20);
	CHECK_EQ(r.w64[X30], BASE + 0x1c);
	/* cbnz w3, .-8 (35ffffc3): 32-bit compare */
	REQUIRE(displace_at(BASE + 0x48, 0x35ffffc3, SLOT, slot, &em) == STEP_EMULATE);
	r.w64[3] = 0x100000000;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x4c);
	r.w64[3] = 1;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x40);
	/* tbz x5, #40, .+16 (b6400085) */
	REQUIRE(displace_at(BASE + 0x4c, 0xb6400085, SLOT, slot, &em) == STEP_EMULATE);
	r.w64[5] = 1ULL << 40;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x50);
	r.w64[5] = ~(1ULL << 40);
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x5c);
	/* tbnz w1, #3, .+8 (37180041) */
	REQUIRE(displace_at(BASE + 0x50, 0x37180041, SLOT, slot, &em) == STEP_EMULATE);
	r.w64[1] = 8;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x58);
	r.w64[1] = 7;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x54);
	/* b.ls .+0x3c (540001e9, musl posix_memalign+8): C clear or Z set */
	REQUIRE(displace_at(BASE + 0x54, 0x540001e9, SLOT, slot, &em) == STEP_EMULATE);
	r.w64[PSTATE] = 0x20000000; /* C: higher */
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x58);
	r.w64[PSTATE] = 0x60000000; /* C and Z: same */
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x90);
	r.w64[PSTATE] = 0; /* lower */
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x90);
	/* b.eq .-4 (54ffffe0); the branch-type bits (BTYPE, 11:10) end cleared, NZCV kept */
	REQUIRE(displace_at(BASE + 0x58, 0x54ffffe0, SLOT, slot, &em) == STEP_EMULATE);
	r.w64[PSTATE] = 0x40000c00;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x54);
	CHECK_EQ(r.w64[PSTATE], 0x40000000);
	/* ret x1 (d65f0020), br x17 (d61f0220), blr x3 (d63f0060) */
	REQUIRE(displace_at(BASE, 0xd65f0020, SLOT, slot, &em) == STEP_EMULATE);
	r.w64[1] = 0x1234560;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], 0x1234560);
	REQUIRE(displace_at(BASE, 0xd61f0220, SLOT, slot, &em) == STEP_EMULATE);
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], 0x1000 + 17);
	REQUIRE(displace_at(BASE + 0x28, 0xd63f0060, SLOT, slot, &em) == STEP_EMULATE);
	r.w64[3] = 0x2000;
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], 0x2000);
	CHECK_EQ(r.w64[X30], BASE + 0x2c);
	/* nop, bti c: skipped */
	REQUIRE(displace_at(BASE + 0x2c, 0xd503201f, SLOT, slot, &em) == STEP_EMULATE);
	CHECK_EQ(a->emulate(&em, &r), 0);
	CHECK_EQ(r.w64[PC], BASE + 0x30);
	REQUIRE(displace_at(BASE + 0x30, 0xd503245f, SLOT, slot, &em) == STEP_EMULATE);
	CHECK_EQ(em.target, BASE + 0x34);
	em.kind = 0;
	CHECK_EQ(a->emulate(&em, &r), -EINVAL);
}

TEST_CASE(unknown_instructions_are_refused)
{
	static const uint32_t insns[] = {
		0x58000040, /* ldr x0, .+8 (literal: reads the PC) */
		0xd4000001, /* svc #0 */
		0xd4200000, /* brk #0 */
		0xd65f0bff, /* retaa */
		0xc8007c41, /* stxr w0, x1, [x2] */
		0x6dbf27e8, /* stp d8, d9, [sp, #-16]! (not decoded) */
		0x54000010, /* bc.eq */
		0xd53bd042, /* mrs x2, tpidr_el0 */
		0xf9000bf3, /* str x19, [sp, #16] (not decoded) */
		0x00000000, /* udf */
	};
	uint8_t buf[ARCH_MAX_INSN] = { 0xfd, 0x7b, 0xbc, 0xa9 }, slot[ARCH_SLOT_SIZE];
	struct arch_emul em;

	for (size_t i = 0; i < sizeof(insns) / sizeof(insns[0]); i++)
		CHECK_EQ(displace_at(BASE, insns[i], SLOT, slot, &em), -ENOTSUP);
	/* fewer than 4 bytes readable, or a misaligned address */
	CHECK_EQ(a->displace(BASE, buf, 3, SLOT, slot, &em), -ENOTSUP);
	CHECK_EQ(a->displace(BASE + 2, buf, sizeof(buf), SLOT, slot, &em), -ENOTSUP);
}

TEST_CASE(trampoline)
{
	uint8_t buf[ARCH_SLOT_SIZE];

	CHECK_EQ(a->tramp_encode(buf), 4);
	CHECK_EQ(word(buf), BRK0);
	/* one trampoline for every caller: x30 = the page start */
	CHECK_EQ(a->tramp_for(SLOT - 0x40, 0xaaaac6d01424), SLOT - 0x40);
	CHECK_EQ(a->tramp_for(SLOT - 0x40, BASE + 0x27a30), SLOT - 0x40);
}

/* Target of adr at pc (word w). */
static uint64_t adr_target(uint64_t pc, uint32_t w)
{
	int64_t off = (int64_t)((w >> 5 & 0x7ffff) << 2 | (w >> 29 & 3));

	if (off & (1 << 20))
		off -= 1 << 21;
	return pc + off;
}

TEST_CASE(logging_trampoline)
{
	const uint64_t at = SLOT + 0x40, ring = SLOT - 0x40 + 0x1000;
	uint8_t buf[ARCH_LOGTRAMP_MAX];
	size_t n = a->logtramp_encode(buf, at, ring, ring + 64, 127);

	/* the words were checked once against aarch64-linux-gnu-as; what varies is checked here */
	REQUIRE(n == 19 * 4 && n <= ARCH_LOGTRAMP_MAX);
	CHECK_EQ(word(buf + 8) & 0x9f00001f, 0x10000010); /* adr x16 */
	CHECK_EQ(adr_target(at + 8, word(buf + 8)), ring);
	CHECK_EQ(word(buf + 28), 0x12001a31); /* and w17, w17, #0x7f */
	CHECK_EQ(adr_target(at + 32, word(buf + 32)), ring + 64);
	CHECK_EQ(word(buf + 52), 0x889ffe0e); /* stlr w14, [x16]: seq last */
	CHECK_EQ(word(buf + 72), 0xd65f03c0); /* ret */
	a->logtramp_encode(buf, at, ring, ring + 64, 63);
	CHECK_EQ(word(buf + 28), 0x12001631); /* and w17, w17, #0x3f */
	CHECK(a->logentry_encode == NULL); /* the cookie goes on the stack */
	CHECK_EQ(a->nr_mprotect, 226);
}

TEST_CASE(syscall_injection)
{
	struct arch_regs r = snapshot();
	const uint64_t args[6] = { 0xffff9be00000, 4096, 5, 0x22, (uint64_t)-1, 0 };

	CHECK(!memcmp(a->syscall_insn, "\x01\x00\x00\xd4", 4)); /* svc #0 */
	CHECK_EQ(a->syscall_insn_len, 4);
	CHECK_EQ(a->nr_mmap, 222); /* asm-generic: __NR3264_mmap */
	CHECK_EQ(a->nr_munmap, 215);
	a->syscall_setup(&r, 0xffff9c0a1234, 222, args);
	CHECK_EQ(r.w64[PC], 0xffff9c0a1234);
	CHECK_EQ(r.w64[X8], 222);
	for (unsigned i = 0; i < 6; i++)
		CHECK_EQ(r.w64[X0 + i], args[i]);
	CHECK_EQ(r.w64[6], 0x1006);
	CHECK_EQ(r.w64[X30], 0x1000 + 30);
	CHECK_EQ(r.w64[SP], 0xfffff11d9a30);
	r.w64[X0] = 0xffff9be00000;
	CHECK_EQ(a->syscall_result(&r), 0xffff9be00000);
	r.w64[X0] = (uint64_t)-ENOMEM;
	CHECK_EQ(a->syscall_result(&r), -ENOMEM);
}

TEST_CASE(syscall_restart_is_left_to_the_kernel)
{
	struct arch_regs r = snapshot(), before;

	/* at a signal-delivery or interrupt stop arm64 has already rewound pc to the svc and
	 * reloaded x0 from orig_x0: the snapshot restarts the call as it is */
	r.w64[PC] = 0xffff9c0a1234;
	r.w64[X8] = 63; /* read */
	r.w64[X0] = 3;
	before = r;
	CHECK(!a->syscall_restart(&r));
	CHECK(!memcmp(&r, &before, sizeof(r)));
	/* at a syscall-exit stop x0 holds the code, but orig_x0 is not in user_pt_regs */
	r.w64[X0] = (uint64_t)-512;
	r.w64[PC] += 4;
	before = r;
	CHECK(!a->syscall_restart(&r));
	CHECK(!memcmp(&r, &before, sizeof(r)));
}
