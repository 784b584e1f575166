// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm: decoding and relocating Thumb and ARM instructions, for breakpoints (a first
 * instruction displaced into a slot), the return-address check and the entry stubs (which
 * Thumb-2 entries can be patched and how their first instructions move). Pure, like arch.c;
 * the mode addresses are arch.c's (odd = Thumb).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm/thumb.h"

/* --- displacing a first instruction --- */

/* T32 MOVW/MOVT (T3/T1) of imm16 into rd. */
static void t32_mov16(uint8_t *p, bool top, unsigned rd, uint32_t imm16)
{
	wr16(p, (top ? 0xf2c0 : 0xf240) | (imm16 >> 11 & 1) << 10 | imm16 >> 12);
	wr16(p + 2, (imm16 >> 8 & 7) << 12 | rd << 8 | (imm16 & 0xff));
}

/* A1 MOVW/MOVT (A2/A1) of imm16 into rd. */
static uint32_t a32_mov16(bool top, unsigned rd, uint32_t imm16)
{
	return (top ? 0xe3400000u : 0xe3000000u) | (imm16 >> 12) << 16 | rd << 12 | (imm16 & 0xfff);
}

/*
 * Thumb jump back at slot offset o: ldr.w pc, [pc, #imm] (T2, Rt = 15) and its literal
 * next | 1 in the first word after it. The base is Align(PC, 4) with PC = insn + 4; the load
 * interworks (LoadWritePC), so the literal's bit 0 keeps the thread in Thumb state.
 */
static void thumb_jump_back(uint8_t *slot, uint64_t slot_addr, size_t o, uint32_t next)
{
	uint64_t at = slot_addr + o, base = (at + 4) & ~3ULL, lit = (at + 4 + 3) & ~3ULL;

	wr16(slot + o, 0xf8df);
	wr16(slot + o + 2, 0xf000 | (uint16_t)(lit - base));
	wr32(slot + (lit - slot_addr), next | 1);
}

/* ARM jump back at slot offset o: ldr pc, [pc, #-4] (PC = insn + 8), then the literal. */
static void arm_jump_back(uint8_t *slot, size_t o, uint32_t next)
{
	wr32(slot + o, 0xe51ff004);
	wr32(slot + o + 4, next);
}

/*
 * Thumb-2 (code at the even address code). Out of line: T16 push, cmp #imm, movs #imm,
 * adds/subs #imm3, mov (register); T32 stmdb sp! (push.w), umull, cmp.w #imm; and ldr (literal, T16 and T32),
 * relocated as movw/movt of the literal's address and an ldr through the register. Emulated:
 * bx Rm, cbz/cbnz, b.n, b.w. None of these may sit in an IT block; no glibc 2.36 armhf
 * malloc-family entry does, nor any of jemalloc's, tcmalloc's or mimalloc's in Debian 12 (their
 * disassembly).
 */
static bool t_runs_anywhere(uint16_t hw1, uint16_t hw2);

static int thumb_displace(uint32_t code, const uint8_t *insn, size_t len, uint64_t slot_addr,
			  uint8_t *slot, struct arch_emul *em)
{
	uint32_t pc = code + 4; /* the PC a Thumb instruction reads */
	uint16_t hw1, hw2;
	size_t o;

	if (len < 2)
		return -ENOTSUP;
	hw1 = rd16(insn);
	for (o = 0; o < ARCH_SLOT_SIZE; o += 2)
		wr16(slot + o, THUMB_BKPT);
	if (hw1 >= 0xe800) { /* 32-bit: the first halfword is 0b11101, 0b11110 or 0b11111 */
		if (len < 4)
			return -ENOTSUP;
		hw2 = rd16(insn + 2);
		if (hw1 == 0xe92d && !(hw2 & 0xa000) && popcount16(hw2) >= 2)
			goto xol4; /* stmdb sp!, {...}: no sp, no pc (T2) */
		if ((hw1 & 0xfff0) == 0xfba0 && !(hw2 & 0xf0)) { /* umull RdLo, RdHi, Rn, Rm (T1) */
			unsigned rn = hw1 & 15, lo = hw2 >> 12, hi = hw2 >> 8 & 15, rm = hw2 & 15;

			if (rn == 13 || rn == 15 || lo == 13 || lo == 15 || hi == 13 || hi == 15 ||
			    rm == 13 || rm == 15 || lo == hi)
				return -ENOTSUP;
			goto xol4;
		}
		if ((hw1 & 0xfbf0) == 0xf1b0 && (hw2 & 0x8f00) == 0x0f00 && (hw1 & 15) != 15)
			goto xol4; /* cmp.w Rn, #const (T2): mimalloc's mi_heap_zalloc */
		if ((hw1 & 0xff7f) == 0xf85f) { /* ldr.w Rt, [pc, #+/-imm12] (T2): tcmalloc's memalign */
			unsigned rt = hw2 >> 12;
			uint32_t lit = hw1 & 0x80 ? (pc & ~3u) + (hw2 & 0xfffu) :
						    (pc & ~3u) - (hw2 & 0xfffu);

			if (rt == 13 || rt == 15)
				return -ENOTSUP;
			/* movw Rt, #lo16; movt Rt, #hi16; ldr.w Rt, [Rt, #0] (T3); back */
			t32_mov16(slot, false, rt, lit & 0xffff);
			t32_mov16(slot + 4, true, rt, lit >> 16);
			wr16(slot + 8, 0xf8d0 | rt);
			wr16(slot + 10, rt << 12);
			thumb_jump_back(slot, slot_addr, 12, code + 4);
			return STEP_XOL;
		}
		if ((hw1 & 0xf800) == 0xf000 && (hw2 & 0xd000) == 0x9000) { /* b.w (T4) */
			uint32_t s = hw1 >> 10 & 1, i1 = !((hw2 >> 13 & 1) ^ s),
				 i2 = !((hw2 >> 11 & 1) ^ s);
			uint32_t imm = s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3ffu) << 12 |
				       (hw2 & 0x7ffu) << 1;

			if (s)
				imm |= 0xfe000000u; /* SignExtend(imm25) */
			em->kind = EMUL_JUMP;
			em->target = (pc + imm) | 1;
			em->imm = 0;
			return STEP_EMULATE;
		}
		/* data processing not through the pc, which cannot fault either (loads are left
		 * alone: a fault's pc in the slot would mislead a handler): glibc's __sigaction,
		 * add.w ip, r0, #-1. Not a plain binary immediate with Rn 15: adr (addw/subw). */
		if ((((hw1 & 0xf800) == 0xf000 && !(hw2 & 0x8000) &&
		      ((hw1 & 0x0200) == 0 || (hw1 & 15) != 15)) ||
		     (hw1 & 0xfe00) == 0xea00) &&
		    t_runs_anywhere(hw1, hw2))
			goto xol4;
		return -ENOTSUP;
	}
	if ((hw1 & 0xfe00) == 0xb400 && (hw1 & 0x1ff)) /* push {...[, lr]} (T1) */
		goto xol2;
	if ((hw1 & 0xf800) == 0x2800) /* cmp Rn, #imm8 (T1): the CPU sets the flags */
		goto xol2;
	if ((hw1 & 0xf800) == 0x2000) /* movs Rd, #imm8 (T1): jemalloc's rallocx */
		goto xol2;
	if ((hw1 & 0xfc00) == 0x1c00) /* adds/subs Rd, Rn, #imm3 (T1), low registers only:
				       * mimalloc's mi_heap_malloc_small, mi_heap_malloc_aligned */
		goto xol2;
	if ((hw1 & 0xff00) == 0x4600) { /* mov Rd, Rm (T1), flags untouched */
		unsigned rd = (hw1 >> 4 & 8) | (hw1 & 7), rm = hw1 >> 3 & 15;

		if (rd == 15 || rm == 15)
			return -ENOTSUP; /* a branch, or reads the PC */
		goto xol2;
	}
	if ((hw1 & 0xf800) == 0x4800) { /* ldr Rt, [pc, #imm8 * 4] (T1) */
		unsigned rt = hw1 >> 8 & 7;
		uint32_t lit = (pc & ~3u) + (hw1 & 0xffu) * 4; /* Align(PC, 4) + imm */

		/* movw Rt, #lo16; movt Rt, #hi16; ldr Rt, [Rt, #0] (T1); back */
		t32_mov16(slot, false, rt, lit & 0xffff);
		t32_mov16(slot + 4, true, rt, lit >> 16);
		wr16(slot + 8, 0x6800 | rt << 3 | rt);
		thumb_jump_back(slot, slot_addr, 10, code + 2);
		return STEP_XOL;
	}
	if ((hw1 & 0xff87) == 0x4700) { /* bx Rm (T1) */
		unsigned rm = hw1 >> 3 & 15;

		if (rm == 15)
			return -ENOTSUP;
		em->kind = EMUL_BX;
		em->target = 0;
		em->imm = rm;
		return STEP_EMULATE;
	}
	if ((hw1 & 0xf500) == 0xb100) { /* cbz/cbnz Rn, label (T1) */
		uint32_t imm = (hw1 >> 9 & 1) << 6 | (hw1 >> 3 & 0x1f) << 1;

		em->kind = hw1 & 0x800 ? EMUL_CBNZ : EMUL_CBZ;
		em->target = (pc + imm) | 1;
		em->imm = (uint64_t)((code + 2) | 1) << 32 | (hw1 & 7);
		return STEP_EMULATE;
	}
	if ((hw1 & 0xf800) == 0xe000) { /* b.n label (T2) */
		uint32_t imm = (hw1 & 0x7ffu) << 1;

		if (imm & 0x800)
			imm |= 0xfffff000u;
		em->kind = EMUL_JUMP;
		em->target = (pc + imm) | 1;
		em->imm = 0;
		return STEP_EMULATE;
	}
	return -ENOTSUP;
xol2:
	memcpy(slot, insn, 2);
	thumb_jump_back(slot, slot_addr, 2, code + 2);
	return STEP_XOL;
xol4:
	memcpy(slot, insn, 4);
	thumb_jump_back(slot, slot_addr, 4, code + 4);
	return STEP_XOL;
}

/*
 * ARM state (a program built with -marm; Debian's libraries have no ARM-state entries).
 * Unconditional instructions only. Out of line: push (stmdb sp! or str Rt, [sp, #-4]!), mov
 * (register), cmp #imm, sub sp, sp, #imm; ldr (literal) relocated as in Thumb. Emulated: bx Rm,
 * b.
 */
static int arm_displace(uint32_t code, const uint8_t *insn, size_t len, uint8_t *slot,
			struct arch_emul *em)
{
	uint32_t pc = code + 8, w; /* the PC an ARM instruction reads */

	if (len < 4 || (code & 3))
		return -ENOTSUP;
	w = rd32(insn);
	for (size_t o = 0; o < ARCH_SLOT_SIZE; o += 4)
		wr32(slot + o, ARM_BKPT);
	if ((w & 0xffff0000) == 0xe92d0000 && !(w & 0xa000) && popcount16(w) >= 2)
		goto xol; /* push {...}: no sp, no pc (it would store PC + 8) */
	if ((w & 0xffff0fff) == 0xe52d0004) { /* push {Rt} = str Rt, [sp, #-4]! */
		unsigned rt = w >> 12 & 15;

		if (rt == 13 || rt == 15)
			return -ENOTSUP;
		goto xol;
	}
	if ((w & 0xffff0ff0) == 0xe1a00000) { /* mov Rd, Rm */
		if ((w >> 12 & 15) == 15 || (w & 15) == 15)
			return -ENOTSUP;
		goto xol;
	}
	if ((w & 0xfff0f000) == 0xe3500000) { /* cmp Rn, #imm */
		if ((w >> 16 & 15) == 15)
			return -ENOTSUP;
		goto xol;
	}
	if ((w & 0xfffff000) == 0xe24dd000) /* sub sp, sp, #imm */
		goto xol;
	if ((w & 0xfffffff0) == 0xe12fff10) { /* bx Rm */
		if ((w & 15) == 15)
			return -ENOTSUP;
		em->kind = EMUL_BX;
		em->target = 0;
		em->imm = w & 15;
		return STEP_EMULATE;
	}
	if ((w & 0xff000000) == 0xea000000) { /* b label: PC + SignExtend(imm24:'00') */
		uint32_t imm = (w & 0xffffffu) << 2;

		if (imm & 0x2000000)
			imm |= 0xfc000000u;
		em->kind = EMUL_JUMP;
		em->target = pc + imm;
		em->imm = 0;
		return STEP_EMULATE;
	}
	if ((w & 0xff7f0000) == 0xe51f0000) { /* ldr Rt, [pc, #+/-imm12] */
		unsigned rt = w >> 12 & 15;
		uint32_t lit = w & 0x800000 ? pc + (w & 0xfff) : pc - (w & 0xfff);

		if (rt == 15)
			return -ENOTSUP; /* a branch */
		wr32(slot, a32_mov16(false, rt, lit & 0xffff));
		wr32(slot + 4, a32_mov16(true, rt, lit >> 16));
		wr32(slot + 8, 0xe5900000u | rt << 16 | rt << 12); /* ldr Rt, [Rt] */
		arm_jump_back(slot, 12, code + 4);
		return STEP_XOL;
	}
	return -ENOTSUP;
xol:
	memcpy(slot, insn, 4);
	arm_jump_back(slot, 4, code + 4);
	return STEP_XOL;
}

/* Nothing is PC-relative once relocated (movw/movt carry absolute addresses, the jump back
 * loads one), so no slot is ever out of reach: -ERANGE is never returned. */
int arm_displace_insn(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
		      uint8_t *slot, struct arch_emul *em)
{
	if (slot_addr & 3)
		return -EINVAL; /* slots are word aligned (page + n * ARCH_SLOT_SIZE) */
	if (addr & 1)
		return thumb_displace((uint32_t)addr & ~1u, insn, len, slot_addr, slot, em);
	return arm_displace((uint32_t)addr, insn, len, slot, em);
}

static int t32_b_to(uint8_t *p, uint64_t pc, uint64_t target);

/*
 * The guard's slot for an instruction displace emulates (arch.h: emul_slot), in the
 * instruction's own set: bx Rm as it is (Thumb or ARM); Thumb cbz/cbnz retargeted to +6 in the
 * slot, then b.w next and b.w target. The rest of the slot is the Thumb udf (an ARM slot
 * ends after its bx). b and b.w need none: the guard goes straight to the target.
 */
int arm_emul_slot(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
		  uint8_t *slot)
{
	struct arch_emul em;
	uint8_t unused[ARCH_SLOT_SIZE];
	uint16_t hw1;

	if (arm_displace_insn(addr, insn, len, slot_addr, unused, &em) != STEP_EMULATE)
		return -ENOTSUP;
	for (size_t o = 0; o < ARCH_SLOT_SIZE; o += 2)
		wr16(slot + o, THUMB_BKPT);
	switch (em.kind) {
	case EMUL_BX:
		memcpy(slot, insn, addr & 1 ? 2 : 4);
		return 0;
	case EMUL_CBZ:
	case EMUL_CBNZ:
		hw1 = rd16(insn);
		/* i:imm5:'0' = 2: from slot + 4 (the pc a Thumb instruction reads) to slot + 6 */
		wr16(slot, (uint16_t)((hw1 & ~0x02f8u) | 1u << 3));
		if (t32_b_to(slot + 2, slot_addr + 2, em.imm >> 32) ||
		    t32_b_to(slot + 6, slot_addr + 6, em.target))
			return -ERANGE;
		return 0;
	}
	return -ENOTSUP;
}

/* Thumb (bit 0 of ret): 32-bit bl/blx imm, 16-bit blx rm; ARM: bl, blx imm, blx rm. A direct
 * call's target is a code address (no mode bit). */
bool arm_after_call(const uint8_t *code, uint64_t ret, uint64_t *target)
{
	uint64_t at = ret & ~1ull;
	uint32_t i;

	*target = 0;
	if (ret & 1) {
		uint16_t hw1, hw2;

		memcpy(&hw1, code + ARCH_CALL_WINDOW - 4, 2);
		memcpy(&hw2, code + ARCH_CALL_WINDOW - 2, 2);
		if ((hw1 & 0xf800) == 0xf000 && (hw2 & 0xc000) == 0xc000) {
			uint32_t s = hw1 >> 10 & 1, j1 = hw2 >> 13 & 1, j2 = hw2 >> 11 & 1;
			uint32_t imm = s << 24 | (!(j1 ^ s)) << 23 | (!(j2 ^ s)) << 22 |
				       (hw1 & 0x3ffu) << 12 | (hw2 & 0x7ffu) << 1;
			int64_t off = (int64_t)((uint64_t)imm << 39) >> 39;

			if (hw2 & 0x1000) /* bl */
				*target = (at + off) & 0xffffffffu;
			else if (!(hw2 & 1)) /* blx to ARM */
				*target = ((at & ~3ull) + off) & 0xffffffffu;
			else
				return false;
			return true;
		}
		return (hw2 & 0xff87) == 0x4780; /* blx rm */
	}
	memcpy(&i, code + ARCH_CALL_WINDOW - 4, 4);
	if ((i & 0xfe000000u) == 0xfa000000u) { /* blx imm: to Thumb */
		int64_t off = (int64_t)((uint64_t)(i & 0xffffffu) << 40) >> 38;

		*target = (at + 4 + off + ((i >> 23) & 2)) & 0xffffffffu;
		return true;
	}
	if ((i & 0xf0000000u) == 0xf0000000u)
		return false;
	if ((i & 0x0f000000u) == 0x0b000000u) { /* bl */
		int64_t off = (int64_t)((uint64_t)(i & 0xffffffu) << 40) >> 38;

		*target = (at + 4 + off) & 0xffffffffu;
		return true;
	}
	return (i & 0x0ffffff0u) == 0x012fff30u; /* blx rm */
}

/* ---- entry stubs (stubs.h): Thumb-2 entries only ---- */


/* Halfwords of the Thumb instruction at p: 2 or 4 bytes (its first halfword says). */
static unsigned t_size(uint16_t hw1)
{
	return hw1 >= 0xe800 ? 4 : 2;
}

/* b.w (T4) at pc to target: PC + SignExtend(S:I1:I2:imm10:imm11:'0'), PC = pc + 4, I1 = NOT(J1
 * XOR S). Return 0, or -ERANGE beyond ±16 MiB. */
static int t32_b_to(uint8_t *p, uint64_t pc, uint64_t target)
{
	int64_t off = (int64_t)(target & ~1ull) - (int64_t)(pc + 4);
	uint32_t imm = (uint32_t)off, s = imm >> 24 & 1;
	uint32_t j1 = !(imm >> 23 & 1) ^ s, j2 = !(imm >> 22 & 1) ^ s;

	if ((pc & 1) || off < -(1ll << 24) || off >= (1ll << 24))
		return -ERANGE;
	wr16(p, 0xf000 | s << 10 | (imm >> 12 & 0x3ff));
	wr16(p + 2, 0x9000 | j1 << 13 | j2 << 11 | (imm >> 1 & 0x7ff));
	return 0;
}

/* Where the Thumb branch at pc (hw1, hw2) goes: b<c>, b, cbz/cbnz, b<c>.w, b.w, bl (T1) and blx
 * (T2, to ARM at Align(PC, 4)). Return its kind or 0 for no direct branch. */
enum { TB_NONE, TB_COND, TB_JUMP, TB_CBZ, TB_CALL };

static int t_branch(uint32_t pc, uint16_t hw1, uint16_t hw2, uint32_t *target)
{
	uint32_t base = pc + 4, imm;

	if ((hw1 & 0xf000) == 0xd000 && (hw1 & 0x0e00) != 0x0e00) { /* b<c> (T1) */
		imm = (uint32_t)(int32_t)(int8_t)(hw1 & 0xff) << 1;
		*target = base + imm;
		return TB_COND;
	}
	if ((hw1 & 0xf800) == 0xe000) { /* b (T2) */
		imm = (hw1 & 0x7ffu) << 1;
		if (imm & 0x800)
			imm |= 0xfffff000u;
		*target = base + imm;
		return TB_JUMP;
	}
	if ((hw1 & 0xf500) == 0xb100) { /* cbz/cbnz: forward only */
		*target = base + ((hw1 >> 9 & 1) << 6 | (hw1 >> 3 & 0x1f) << 1);
		return TB_CBZ;
	}
	if ((hw1 & 0xf800) != 0xf000 || !(hw2 & 0x8000))
		return TB_NONE;
	if ((hw2 & 0x5000) == 0) { /* b<c>.w (T3): S:J2:J1:imm6:imm11:'0' */
		uint32_t s = hw1 >> 10 & 1;

		if ((hw1 >> 7 & 7) == 7)
			return TB_NONE; /* cond 111x: msr, mrs, hints... */
		imm = s << 20 | (hw2 >> 11 & 1) << 19 | (hw2 >> 13 & 1) << 18 |
		      (hw1 & 0x3fu) << 12 | (hw2 & 0x7ffu) << 1;
		if (s)
			imm |= 0xfff00000u;
		*target = base + imm;
		return TB_COND;
	}
	{ /* b.w (T4), bl, blx: S:I1:I2:imm10:imm11:'0' */
		uint32_t s = hw1 >> 10 & 1, i1 = !((hw2 >> 13 & 1) ^ s), i2 = !((hw2 >> 11 & 1) ^ s);

		imm = s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3ffu) << 12 | (hw2 & 0x7ffu) << 1;
		if (s)
			imm |= 0xfe000000u;
		if ((hw2 & 0x5000) == 0x1000) {
			*target = base + imm;
			return TB_JUMP;
		}
		*target = (hw2 & 0x1000) ? base + imm : (base & ~3u) + imm;
		return TB_CALL;
	}
}

/* The word a PC-relative load or adr of the Thumb instruction at pc reads or makes (ldr
 * literal T1/T2, ldrd/vldr literal, adr T1/T2/T3); false if it has none. Rt in *rt. */
static bool t_literal(uint32_t pc, uint16_t hw1, uint16_t hw2, uint32_t *lit, unsigned *rt,
		      bool *is_adr)
{
	uint32_t base = (pc + 4) & ~3u;

	*is_adr = false;
	if ((hw1 & 0xf800) == 0x4800 || (hw1 & 0xf800) == 0xa000) { /* ldr Rt, [pc] / adr (T1) */
		*rt = hw1 >> 8 & 7;
		*lit = base + (hw1 & 0xffu) * 4;
		*is_adr = (hw1 & 0xf800) == 0xa000;
		return true;
	}
	if (t_size(hw1) == 2)
		return false;
	*rt = hw2 >> 12;
	if ((hw1 & 0xff7f) == 0xf85f || (hw1 & 0xff7f) == 0xf81f || (hw1 & 0xff7f) == 0xf83f ||
	    (hw1 & 0xff7f) == 0xf91f || (hw1 & 0xff7f) == 0xf93f) { /* ldr{,b,h,sb,sh}.w literal */
		*lit = hw1 & 0x80 ? base + (hw2 & 0xfff) : base - (hw2 & 0xfff);
		return true;
	}
	if ((hw1 & 0xfe5f) == 0xe85f && (hw1 & 0x0120)) { /* ldrd literal: P:U:1:W:1 = bits 8..4
							       * (P = W = 0: tbb, ldrex) */
		*lit = hw1 & 0x80 ? base + (hw2 & 0xff) * 4 : base - (hw2 & 0xff) * 4;
		return true;
	}
	if ((hw1 & 0xff3f) == 0xed1f && (hw2 & 0x0e00) == 0x0a00) { /* vldr literal */
		*lit = hw1 & 0x80 ? base + (hw2 & 0xff) * 4 : base - (hw2 & 0xff) * 4;
		return true;
	}
	if ((hw1 & 0xfbff) == 0xf2af || (hw1 & 0xfbff) == 0xf20f) { /* adr.w (T2 sub, T3 add) */
		uint32_t imm = (hw1 >> 10 & 1) << 11 | (hw2 >> 12 & 7) << 8 | (hw2 & 0xff);

		if (hw2 & 0x8000)
			return false;
		*rt = hw2 >> 8 & 15;
		*lit = hw1 & 0x0080 ? base - imm : base + imm;
		*is_adr = true;
		return true;
	}
	return false;
}

/* Is the Thumb instruction an indirect jump that may stay inside its function (a jump table):
 * tbb/tbh, bx/mov/add to the PC from a register other than lr, ldr pc other than a pop, ldm
 * with the PC other than from sp? Returns (bx lr, pop {..., pc}) are not. */
static bool t_indirect(uint16_t hw1, uint16_t hw2)
{
	if ((hw1 & 0xff87) == 0x4700) /* bx Rm */
		return (hw1 >> 3 & 15) != 14;
	if ((hw1 & 0xff00) == 0x4400 || (hw1 & 0xff00) == 0x4600) /* add/mov Rd, Rm (T2) */
		return (hw1 & 0x87) == 0x87; /* Rd = pc */
	if (t_size(hw1) == 2)
		return false;
	if ((hw1 & 0xfff0) == 0xe8d0 && (hw2 & 0xffe0) == 0xf000) /* tbb, tbh */
		return true;
	if ((hw1 & 0xfe50) == 0xe810 && (hw2 & 0x8000)) /* ldm/ldmdb with pc */
		return (hw1 & 15) != 13;
	if ((hw1 & 0xfff0) == 0xf8d0 && (hw2 >> 12) == 15) /* ldr.w pc, [Rn, #imm12] */
		return true;
	if ((hw1 & 0xfff0) == 0xf850 && (hw2 >> 12) == 15) /* ldr pc, [Rn, ...] */
		return (hw1 & 15) != 13 || (hw2 & 0x0fff) != 0x0b04; /* not pop {pc} */
	return false;
}

/* One decode of a Thumb function for arm_entry_scan: mark in next the halfwords the PC-relative
 * loads read, skipping those pool marks; return -EXDEV if something leads into (c, c + len). */
static int scan_pass(uint32_t c, const uint8_t *code, size_t size, size_t len,
		     const uint8_t *pool, uint8_t *next)
{
	int ret = 0;

	for (size_t o = 0; o + 2 <= size;) {
		uint16_t hw1 = rd16(code + o), hw2 = 0;
		uint32_t pc = c + (uint32_t)o, t;
		unsigned n = t_size(hw1), rt;
		bool adr;

		if (pool[o / 2]) {
			o += 2;
			continue;
		}
		if (n == 4 && o + 4 > size)
			return -EXDEV; /* a 32-bit instruction cut off at the end */
		if (n == 4)
			hw2 = rd16(code + o + 2);
		if (t_literal(pc, hw1, hw2, &t, &rt, &adr)) {
			unsigned halves = (hw1 & 0xfe50) == 0xe850 ? 4 : 2; /* ldrd: two words */

			if (!adr && t >= c && t - c + 2 * halves <= size)
				memset(next + (t - c) / 2, 1, halves);
			/* an address into the patch, or a load of its bytes */
			if (adr ? t > c && t < c + len : t < c + len && t + 2 * halves > c)
				ret = -EXDEV;
		} else if (t_branch(pc, hw1, hw2, &t)) {
			if (t > c && t < c + len)
				ret = -EXDEV;
		} else if (t_indirect(hw1, hw2)) {
			ret = -EXDEV;
		}
		o += n;
	}
	return ret;
}

/*
 * The patch-safety rule for a Thumb function (arch.h): decode the whole function (code: size
 * bytes at symbol value value) and refuse if a direct branch, a PC-relative load or an adr
 * leads into (value, value + len), or if it has an indirect jump that is not a return (a jump
 * table could lead anywhere). The words PC-relative loads read are data (literal pools), not
 * decoded: the decode is repeated with the pools the previous one found until they agree.
 */
int arm_entry_scan(uint64_t value, const uint8_t *code, size_t size, size_t len)
{
	uint32_t c = (uint32_t)value & ~1u;
	uint8_t *pool, *next;
	int ret = -EXDEV;

	if (!(value & 1) || size < len || size > (1u << 20))
		return -EXDEV;
	pool = calloc(size / 2 + 1, 1);
	next = calloc(size / 2 + 1, 1);
	if (!pool || !next) {
		free(pool);
		free(next);
		return -ENOMEM;
	}
	for (int round = 0; round < 4; round++) {
		int r = scan_pass(c, code, size, len, pool, next);

		if (!memcmp(pool, next, size / 2 + 1)) {
			ret = r;
			break;
		}
		memcpy(pool, next, size / 2 + 1);
		memset(next, 0, size / 2 + 1);
	}
	free(pool);
	free(next);
	return ret;
}

/* Thumb instructions that read neither the PC nor the IT state and branch nowhere: they run
 * the same anywhere. (16-bit: shifts, add/sub/mov/cmp immediate, data processing, loads and
 * stores through r0-r7 or sp, add sp, push, extends, rev, nop; 32-bit: stm/push.w without sp
 * or pc, ldm without pc, loads and stores not through the PC, data processing and multiplies
 * not reading or writing it.) */
static bool t_runs_anywhere(uint16_t hw1, uint16_t hw2)
{
	if (t_size(hw1) == 2) {
		if (hw1 < 0x4000 || (hw1 & 0xfc00) == 0x4000) /* shift/add/sub/mov/cmp, ALU */
			return true;
		if ((hw1 & 0xfc00) == 0x4400) /* add/cmp/mov high registers, bx, blx */
			return (hw1 & 0x0300) != 0x0300 && (hw1 & 0x87) != 0x87 &&
			       (hw1 >> 3 & 15) != 15;
		if (hw1 >= 0x5000 && hw1 < 0xa000) /* load/store register, immediate, sp */
			return true;
		if ((hw1 & 0xf800) == 0xa800) /* add Rd, sp, #imm */
			return true;
		if ((hw1 & 0xff00) == 0xb000 || (hw1 & 0xff00) == 0xb200 || /* add/sub sp, extends */
		    (hw1 & 0xfe00) == 0xb400 || /* push */
		    ((hw1 & 0xff00) == 0xba00 && (hw1 & 0xffc0) != 0xba80) || /* rev, not hlt */
		    hw1 == 0xbf00) /* nop */
			return true;
		return (hw1 & 0xf000) == 0xc000; /* stm/ldm r0-r7 */
	}
	if ((hw1 & 0xfe40) == 0xe800 && ((hw1 >> 7 & 3) == 0 || (hw1 >> 7 & 3) == 3))
		return false; /* srs, rfe */
	if ((hw1 & 0xfe50) == 0xe800) /* stm/stmdb: no sp, no pc, Rn not the pc */
		return (hw1 & 15) != 15 && !(hw2 & 0xa000);
	if ((hw1 & 0xfe50) == 0xe810) /* ldm/ldmdb: no pc */
		return (hw1 & 15) != 15 && !(hw2 & 0x8000);
	if ((hw1 & 0xfe00) == 0xf800) /* load/store single: not the pc as base or target */
		return (hw1 & 15) != 15 && (hw2 >> 12) != 15;
	if ((hw1 & 0xfe40) == 0xe840) /* ldrd/strd, exclusives, tbb: not through the pc */
		return (hw1 & 0xfff0) != 0xe8d0 && (hw1 & 15) != 15 && (hw2 >> 12) != 15 &&
		       (hw2 >> 8 & 15) != 15;
	/* multiplies and divides: bits 15..12 are Ra, 15 for none (mul, smulbb...), or RdLo of a
	 * long multiply, or 15 (sdiv, udiv) */
	if ((hw1 & 0xff80) == 0xfb00 || (hw1 & 0xff80) == 0xfb80)
		return (hw1 & 15) != 15 && (hw2 & 15) != 15 && (hw2 >> 8 & 15) != 15 &&
		       ((hw2 >> 12) != 15 || (hw1 & 0xff80) == 0xfb00 || (hw1 & 0xffd0) == 0xfb90);
	/* data processing: Rd = pc only as a compare's (S set); Rn = pc means no Rn (mov, mvn,
	 * movw, bfc) or is unpredictable, except addw/subw (adr), which t_literal takes first */
	if ((hw1 & 0xf800) == 0xf000 && !(hw2 & 0x8000)) /* immediate */
		return (hw2 >> 8 & 15) != 15 || (!(hw1 & 0x0200) && (hw1 & 0x10));
	if ((hw1 & 0xfe00) == 0xea00) /* shifted register */
		return (hw2 & 15) != 15 && ((hw2 >> 8 & 15) != 15 || (hw1 & 0x10));
	return false;
}

/* movw/movt rd, #value (T3/T1). */
static void t32_mov32(uint8_t *p, unsigned rd, uint32_t value)
{
	t32_mov16(p, false, rd, value & 0xffff);
	t32_mov16(p + 4, true, rd, value >> 16);
}

/*
 * Entry stubs (arch.h), for a Thumb entry (addr: its symbol value, bit 0 set): the whole
 * instructions under the 4-byte b.w, relocated to run at at, then a b.w back. Instructions
 * that run anywhere are copied; ldr literal becomes movw/movt of the literal's address and a
 * load through its own register, adr a movw/movt of the address; b<c>, cbz and cbnz keep their
 * condition and go to a b.w to their target placed after the b.w back; b and b.w become a b.w
 * (nothing comes back). Anything else (bl, bx, IT, pop {pc}, ...) is refused: the function
 * keeps its breakpoint. ARM-state entries are refused too.
 */
int arm_entry_relocate(uint64_t addr, const uint8_t *insn, size_t len, size_t need,
		       uint64_t at, uint8_t *buf, size_t *covered)
{
	uint32_t c = (uint32_t)addr & ~1u, far[4];
	size_t o = 0, n = 0, fixup[4];
	unsigned nfar = 0;

	if (!(addr & 1) || (at & 1))
		return -ENOTSUP;
	while (o < need) {
		uint16_t hw1, hw2 = 0;
		uint32_t pc = c + (uint32_t)o, t;
		unsigned sz, rt;
		bool adr;
		int kind;

		if (o + 2 > len)
			return -ENOTSUP;
		hw1 = rd16(insn + o);
		sz = t_size(hw1);
		if (o + sz > len)
			return -ENOTSUP;
		if (sz == 4)
			hw2 = rd16(insn + o + 2);
		if ((hw1 & 0xff00) == 0xbf00 && (hw1 & 0xf)) /* IT */
			return -ENOTSUP;
		kind = t_branch(pc, hw1, hw2, &t);
		if (kind == TB_JUMP) { /* nothing comes back */
			if (t32_b_to(buf + n, at + n, t))
				return -ERANGE;
			*covered = o + sz > need ? o + sz : need; /* the rest is never run */
			return (int)n + 4;
		} else if (kind == TB_COND || kind == TB_CBZ) {
			if (nfar == 4)
				return -ENOTSUP;
			/* the same test, to a b.w placed after the b.w back (fixed up below) */
			if (kind == TB_CBZ)
				wr16(buf + n, hw1 & 0xfd07);
			else if (sz == 2)
				wr16(buf + n, hw1 & 0xff00);
			else
				wr16(buf + n, 0xd000 | (hw1 >> 6 & 15) << 8);
			fixup[nfar] = n;
			far[nfar++] = t;
			n += 2;
		} else if (kind == TB_CALL) {
			return -ENOTSUP;
		} else if (t_literal(pc, hw1, hw2, &t, &rt, &adr)) {
			bool ldr32 = (hw1 & 0xff7f) == 0xf85f;

			if (!adr && (hw1 & 0xf800) != 0x4800 && !ldr32)
				return -ENOTSUP; /* byte, halfword, double, vfp literal */
			if (rt >= 13)
				return -ENOTSUP;
			t32_mov32(buf + n, rt, t);
			n += 8;
			if (!adr && rt < 8) {
				wr16(buf + n, 0x6800 | rt << 3 | rt); /* ldr Rt, [Rt] */
				n += 2;
			} else if (!adr) {
				wr16(buf + n, 0xf8d0 | rt); /* ldr.w Rt, [Rt, #0] */
				wr16(buf + n + 2, rt << 12);
				n += 4;
			}
		} else if (t_runs_anywhere(hw1, hw2)) {
			memcpy(buf + n, insn + o, sz);
			n += sz;
		} else {
			return -ENOTSUP;
		}
		o += sz;
	}
	if (t32_b_to(buf + n, at + n, c + o))
		return -ERANGE;
	n += 4;
	for (unsigned i = 0; i < nfar; i++) {
		uint64_t from = at + fixup[i] + 4; /* the PC the short branch reads */
		uint32_t off = (uint32_t)(at + n - from);
		uint16_t hw = rd16(buf + fixup[i]);

		if ((hw & 0xf500) == 0xb100) { /* cbz: i:imm5:'0', forward up to 126 */
			if (off > 126)
				return -ERANGE;
			wr16(buf + fixup[i], hw | (off >> 6 & 1) << 9 | (off >> 1 & 0x1f) << 3);
		} else { /* b<c>: imm8:'0' */
			if (off > 254)
				return -ERANGE;
			wr16(buf + fixup[i], hw | off >> 1);
		}
		if (t32_b_to(buf + n, at + n, far[i]))
			return -ERANGE;
		n += 4;
	}
	*covered = o;
	return (int)n;
}

/* The branch over a Thumb entry (addr: its symbol value or code address): b.w, within ±16 MiB.
 * (ARM-state entries are never patched: arm_entry_relocate refuses them.) */
int arm_entry_branch(uint64_t addr, uint64_t to, uint8_t *buf)
{
	return t32_b_to(buf, addr & ~1ull, to) ? -ERANGE : 4;
}

/* A function's thunk: movw ip, #word; b.w common (ip is free at a function's entry: AAPCS lets
 * veneers and PLT entries clobber it). */
size_t arm_entry_thunk(uint8_t *buf, uint64_t at, uint32_t word, uint64_t common)
{
	t32_mov16(buf, false, 12, word & 0xffff);
	t32_b_to(buf + 4, at + 4, common);
	return 8;
}
