// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm (32-bit EABI, Debian armhf): pure knowledge. Register indexes follow what
 * PTRACE_GETREGSET(NT_PRSTATUS) returns, 18 x u32 (struct user_regs / pt_regs): r0-r15,
 * cpsr (ARM_cpsr = uregs[16]) and orig_r0 (ARM_ORIG_r0 = uregs[17]); spelled out here so
 * this file builds anywhere.
 *
 * Debian's armhf code is Thumb-2: a symbol value with bit 0 set is Thumb code at value & ~1
 * and the CPSR T bit says which set the thread executes. Throughout this file a "mode
 * address" carries that bit the same way: odd = Thumb, even = ARM (or: unchanged, see
 * arm_set_pc). Encodings were checked against arm-linux-gnueabihf-as 2.40 and the
 * disassembly of glibc 2.36 and musl 1.2.3, whose malloc-family entries start with push,
 * stmdb, umull, cmp, mov, ldr (literal), b.w or cbz.
 */
#include <elf.h>
#include <errno.h>
#include <linux/audit.h>
#include <string.h>

#include "arch.h"

enum {
	A_R0, A_R1, A_R2, A_R3, A_R4, A_R5, A_R6, A_R7, A_R8, A_R9, A_R10, A_R11, A_R12,
	A_SP, A_LR, A_PC, A_CPSR, A_ORIG_R0,
};

#define CPSR_T 0x20u /* Thumb state */
#define CPSR_IT 0x0600fc00u /* IT[1:0] = bits 26:25, IT[7:2] = bits 15:10 */

#define ARM_BKPT 0xe7f001f0u /* udf #16: arm_break_hook, ARM state only */
#define THUMB_BKPT 0xde01u /* udf #1: thumb_break_hook, Thumb state only */

enum {
	EMUL_JUMP = 1, /* PC := target (a mode address) */
	EMUL_BX, /* PC := R[imm], interworking (bx Rm) */
	EMUL_CBZ, /* PC := R[imm & 15] == 0 ? target : imm >> 32 */
	EMUL_CBNZ, /* PC := R[imm & 15] != 0 ? target : imm >> 32 */
};

static uint16_t rd16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void wr32(uint8_t *p, uint32_t v)
{
	wr16(p, v);
	wr16(p + 2, v >> 16);
}

static unsigned popcount16(uint32_t v)
{
	unsigned n = 0;

	for (v &= 0xffff; v; v &= v - 1)
		n++;
	return n;
}

/* Udf in the instruction set of addr: 2 bytes over a 16- or 32-bit Thumb instruction (it is
 * never executed in place: XOL and emulation run the whole instruction elsewhere). */
static size_t arm_bp_encode(uint64_t addr, uint8_t *buf)
{
	if (addr & 1) {
		wr16(buf, THUMB_BKPT);
		return 2;
	}
	wr32(buf, ARM_BKPT);
	return 4;
}

static uint64_t arm_code_addr(uint64_t sym)
{
	return sym & ~1ULL;
}

/* Both udfs trap with the PC on the breakpoint itself; arm_get_pc may add the Thumb bit. */
static uint64_t arm_bp_addr_from_pc(uint64_t pc)
{
	return pc & ~1ULL;
}

/* The PC as a mode address: bit 0 set when the thread is in Thumb state. */
static uint64_t arm_get_pc(const struct arch_regs *r)
{
	return r->w32[A_PC] | !!(r->w32[A_CPSR] & CPSR_T);
}

/*
 * An odd value is Thumb code at pc & ~1 (a return address from lr, a symbol value). An even
 * value keeps the instruction set the thread is in: generic code moves a thread stopped on a
 * breakpoint to that breakpoint's slot (even, and written in the breakpoint's own set), and a
 * thread on a trampoline back to an ARM caller, after tramp_for chose the ARM trampoline.
 */
static void arm_set_pc(struct arch_regs *r, uint64_t pc)
{
	r->w32[A_PC] = (uint32_t)pc & ~1u;
	if (pc & 1)
		r->w32[A_CPSR] |= CPSR_T;
}

/* Interworking branch (bx, ldr pc): bit 0 selects the instruction set either way. */
static void write_pc(struct arch_regs *r, uint32_t v)
{
	r->w32[A_PC] = v & ~1u;
	if (v & 1)
		r->w32[A_CPSR] |= CPSR_T;
	else
		r->w32[A_CPSR] &= ~CPSR_T;
}

static uint64_t arm_get_sp(const struct arch_regs *r)
{
	return r->w32[A_SP];
}

static void arm_set_sp(struct arch_regs *r, uint64_t sp)
{
	r->w32[A_SP] = (uint32_t)sp;
}

/* AAPCS: r0-r3, then the stack (not needed: the family takes at most 3 arguments). */
static uint64_t arm_get_arg(const struct arch_regs *r, unsigned n)
{
	return n < 4 ? r->w32[A_R0 + n] : 0;
}

static uint64_t arm_get_retval(const struct arch_regs *r)
{
	return r->w32[A_R0];
}

static void arm_set_retval(struct arch_regs *r, uint64_t v)
{
	r->w32[A_R0] = (uint32_t)v;
}

/* lr, with bit 0 set for a Thumb caller (bl/blx from Thumb code). */
static uint64_t arm_get_ret_reg(const struct arch_regs *r)
{
	return r->w32[A_LR];
}

static void arm_set_ret_reg(struct arch_regs *r, uint64_t v)
{
	r->w32[A_LR] = (uint32_t)v;
}

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
 * Thumb-2 (code at the even address code). Out of line: T16 push, cmp #imm, movs #imm, mov
 * (register); T32 stmdb sp! (push.w), umull, cmp.w #imm; and ldr (literal, T16 and T32),
 * relocated as movw/movt of the literal's address and an ldr through the register. Emulated:
 * bx Rm, cbz/cbnz, b.n, b.w. None of these may sit in an IT block; no glibc 2.36 armhf
 * malloc-family entry does, nor any of jemalloc's, tcmalloc's or mimalloc's in Debian 12 (their
 * disassembly).
 */
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
		return -ENOTSUP;
	}
	if ((hw1 & 0xfe00) == 0xb400 && (hw1 & 0x1ff)) /* push {...[, lr]} (T1) */
		goto xol2;
	if ((hw1 & 0xf800) == 0x2800) /* cmp Rn, #imm8 (T1): the CPU sets the flags */
		goto xol2;
	if ((hw1 & 0xf800) == 0x2000) /* movs Rd, #imm8 (T1): jemalloc's rallocx */
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
static int arm_displace_insn(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
			     uint8_t *slot, struct arch_emul *em)
{
	if (slot_addr & 3)
		return -EINVAL; /* slots are word aligned (page + n * ARCH_SLOT_SIZE) */
	if (addr & 1)
		return thumb_displace((uint32_t)addr & ~1u, insn, len, slot_addr, slot, em);
	return arm_displace((uint32_t)addr, insn, len, slot, em);
}

static int arm_emulate(const struct arch_emul *em, struct arch_regs *r)
{
	switch (em->kind) {
	case EMUL_JUMP:
		write_pc(r, (uint32_t)em->target);
		return 0;
	case EMUL_BX:
		if (em->imm >= 15)
			return -EINVAL;
		write_pc(r, r->w32[em->imm]);
		return 0;
	case EMUL_CBZ:
	case EMUL_CBNZ: {
		bool zero = r->w32[em->imm & 15] == 0;

		write_pc(r, zero == (em->kind == EMUL_CBZ) ? (uint32_t)em->target :
							     (uint32_t)(em->imm >> 32));
		return 0;
	}
	}
	return -EINVAL;
}

/*
 * Two trampolines, since each udf traps only in its own instruction set: ARM at base (word
 * aligned), Thumb at base + 4. A Thumb caller's lr (bit 0 set) is replaced by (base + 4) | 1,
 * an ARM caller's by base, so bx lr / pop {pc} arrive in the caller's own state and on_return
 * can set the PC to the saved lr without changing it.
 */
static size_t arm_tramp_encode(uint8_t *buf)
{
	wr32(buf, ARM_BKPT);
	wr16(buf + 4, THUMB_BKPT);
	return 6;
}

static uint64_t arm_tramp_for(uint64_t base, uint64_t ret)
{
	return ret & 1 ? (base + 4) | 1 : base;
}

/*
 * Logging return trampoline (see arch.h), in ARM state: a Thumb function's bx lr or
 * pop {pc} switches to it by lr's bit 0 (clear), and its bx lr returns to the caller in the
 * caller's own state. Like the trapping trampolines, it relies on functions returning with
 * an interworking instruction, as compilers emit them. The reservation is an ldrex/strex loop; r4-r7 are borrowed and put
 * back (the flags are not kept across a call anyway); the function returned with sp at the
 * two words heaptrace wrote: the cookie and the caller's lr. The 64-bit return value of
 * an entry gets r0 and a zero high word (little endian). The two addresses are literals after
 * the code.
 */
static size_t arm_logtramp_encode(uint8_t *buf, uint64_t at, uint64_t head, uint64_t entries,
				  uint32_t mask)
{
	static const uint32_t code[] = {
		0xe92d00f0, /* push {r4, r5, r6, r7} */
		0xe59f4048, /* ldr r4, [pc, #72]: head */
		0xe1945f9f, /* 1: ldrex r5, [r4] */
		0xe2856001, /* add r6, r5, #1: seq */
		0xe1847f96, /* strex r7, r6, [r4] */
		0xe3570000, /* cmp r7, #0 */
		0x1afffffa, /* bne 1b */
		0xe2055000, /* and r5, r5, #mask (set below) */
		0xe59f4030, /* ldr r4, [pc, #48]: entries */
		0xe0844205, /* add r4, r4, r5, lsl #4 */
		0xe5840008, /* str r0, [r4, #8] */
		0xe3a05000, /* mov r5, #0 */
		0xe584500c, /* str r5, [r4, #12] */
		0xe59d5010, /* ldr r5, [sp, #16]: the cookie */
		0xe5845004, /* str r5, [r4, #4] */
		0xf57ff05b, /* dmb ish: the entry before its seq */
		0xe5846000, /* str r6, [r4] */
		0xe8bd00f0, /* pop {r4, r5, r6, r7} */
		0xe59de004, /* ldr lr, [sp, #4]: the caller's lr */
		0xe28dd008, /* add sp, sp, #8 */
		0xe12fff1e, /* bx lr */
	};
	size_t n = sizeof(code);

	(void)at;
	for (size_t i = 0; i < sizeof(code) / 4; i++)
		wr32(buf + 4 * i, code[i]);
	wr32(buf + 28, code[7] | (mask & 0xff)); /* masks up to 255 fit the immediate */
	wr32(buf + n, (uint32_t)head);
	wr32(buf + n + 4, (uint32_t)entries);
	return n + 8;
}

/* --- system call injection --- */

/* Thumb svc #0 (0xdf00). Any 00 df at an even address of an executable mapping is that
 * instruction in Thumb state, whatever surrounds it: only it runs before the exit stop. */
static const uint8_t arm_syscall_insn[] = { 0x00, 0xdf };

/* EABI: number in r7, arguments in r0-r5 (mmap2 takes its offset in pages). */
static void arm_syscall_setup(struct arch_regs *r, uint64_t insn_addr, long nr,
			      const uint64_t a[6])
{
	r->w32[A_PC] = (uint32_t)insn_addr & ~1u;
	/* Thumb state, outside any IT block the thread may have stopped in (else the svc
	 * would be conditional) */
	r->w32[A_CPSR] = (r->w32[A_CPSR] | CPSR_T) & ~CPSR_IT;
	r->w32[A_R7] = (uint32_t)nr;
	for (int i = 0; i < 6; i++)
		r->w32[A_R0 + i] = (uint32_t)a[i];
	/*
	 * Nothing here can stop a restart: arm's do_signal() decides it before the ptrace stop
	 * (r0 = orig_r0, pc = the svc, already visible in the saved registers) and carries it
	 * out after the stop only if the PC still equals that svc's address. The injected call
	 * therefore runs as itself unless insn_addr is the very svc the thread was interrupted
	 * in; the kernel then restarts the interrupted call in place, with these arguments.
	 */
}

/* r0: a value, or -errno in [-4095, -1] (the kernel's IS_ERR_VALUE range). */
static int64_t arm_syscall_result(const struct arch_regs *r)
{
	uint32_t v = r->w32[A_R0];

	return v > (uint32_t)-4096 ? (int64_t)(int32_t)v : (int64_t)v;
}

/*
 * arm differs from x86_64: do_signal() rewrites the registers for a restart *before* the
 * signal-delivery, group or PTRACE_EVENT_STOP stop a tracer sees (r0 = orig_r0, pc -= 2 in
 * Thumb, 4 in ARM; "so that a debugger will see the already changed PSW"), and restores
 * continue_addr afterwards only if the PC is still that svc. The injected call changes the PC,
 * so the kernel drops its decision and the saved registers, put back, run the svc again: the
 * call restarts with its original arguments, which is right for -ERESTARTSYS, -NOINTR and
 * -NOHAND. -ERESTART_RESTARTBLOCK (nanosleep, clock_nanosleep, poll...) cannot be told apart
 * any more at that point, since r0 holds orig_r0 and the regset has no syscall number: such a
 * call starts over with its full relative timeout instead of restart_syscall's remaining time.
 *
 * Only registers taken before that rewrite (a syscall-exit stop) still hold the -ERESTART*
 * code in r0: restart them here like the kernel would, with r7 = 0 (__NR_restart_syscall) for
 * -ERESTART_RESTARTBLOCK. Unlike the kernel's own restart, which changes the number only
 * inside the kernel, r7 then stays 0 once restart_syscall returns. Skipped: r0 == orig_r0
 * (already rewritten, or indistinguishable from it) and orig_r0 == -1, which exception entries
 * (breakpoints, interrupts) store, so a user value in r0 is never taken for a restart code; a
 * real syscall whose first argument is -1 is therefore not restarted either.
 */
static bool arm_syscall_restart(struct arch_regs *r)
{
	int32_t ret = (int32_t)r->w32[A_R0];

	if (ret < -516 || ret > -512 || ret == -515) /* -ENOIOCTLCMD is not a restart */
		return false;
	if (r->w32[A_ORIG_R0] == r->w32[A_R0] || r->w32[A_ORIG_R0] == (uint32_t)-1)
		return false;
	r->w32[A_R0] = r->w32[A_ORIG_R0];
	r->w32[A_PC] -= r->w32[A_CPSR] & CPSR_T ? 2 : 4;
	if (ret == -516)
		r->w32[A_R7] = 0; /* restart_syscall */
	return true;
}

/* Thumb (bit 0 of ret): 32-bit bl/blx imm, 16-bit blx rm; ARM: bl, blx imm, blx rm. A direct
 * call's target is a code address (no mode bit). */
static bool arm_after_call(const uint8_t *code, uint64_t ret, uint64_t *target)
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

static uint64_t arm_core_tp(uint32_t type, const uint8_t *desc, size_t len)
{
	uint32_t tp = 0;

	if (type == NT_ARM_TLS && len >= 4)
		memcpy(&tp, desc, 4);
	return tp;
}

static uint64_t arm_tls_window(uint64_t tp, uint64_t len)
{
	(void)len;
	return tp;
}

const struct arch_ops arch_arm_ops = {
	.name = "arm",
	.elf_machine = EM_ARM,
	.elf_class = ELFCLASS32,
	.audit_arch = AUDIT_ARCH_ARM, /* EABI, little-endian */
	.word_size = 4,
	.reg_args = 4,
	.map_anonymous = 0x20,
	.insn_align = 2,
	.bp_encode = arm_bp_encode,
	.code_addr = arm_code_addr,
	.after_call = arm_after_call,
	.dwarf_regs = 16,
	.dwarf_sp = 13,
	.fp_reg = -1,
	.fp_sp_off = 0,
	.exidx = true,
	.bp_addr_from_pc = arm_bp_addr_from_pc,
	.get_pc = arm_get_pc,
	.set_pc = arm_set_pc,
	.get_sp = arm_get_sp,
	.set_sp = arm_set_sp,
	.get_arg = arm_get_arg,
	.get_retval = arm_get_retval,
	.set_retval = arm_set_retval,
	.ret_on_stack = false,
	.get_ret_reg = arm_get_ret_reg,
	.set_ret_reg = arm_set_ret_reg,
	.ret_sp_adjust = 0,
	.displace = arm_displace_insn,
	.emulate = arm_emulate,
	.tramp_encode = arm_tramp_encode,
	.tramp_for = arm_tramp_for,
	.logtramp_encode = arm_logtramp_encode,
	.nr_mprotect = 125,
	.syscall_insn = arm_syscall_insn,
	.syscall_insn_len = sizeof(arm_syscall_insn),
	.nr_mmap = 192, /* mmap2 */
	.nr_munmap = 91,
	.syscall_setup = arm_syscall_setup,
	.syscall_result = arm_syscall_result,
	.syscall_restart = arm_syscall_restart,
	.core_tp = arm_core_tp,
	.tls_window = arm_tls_window,
};
