// SPDX-License-Identifier: GPL-2.0-only
/*
 * aarch64: pure knowledge. Register indexes follow struct user_pt_regs (<asm/ptrace.h>), which
 * is what PTRACE_GETREGSET(NT_PRSTATUS) returns (272 bytes: x0-x30, sp, pc, pstate); it is
 * spelled out here so this file builds anywhere. Instructions are 32-bit
 * little-endian words. Encodings are from the Arm ARM (DDI 0487) and were checked against
 * aarch64-linux-gnu-as/objdump and Debian 12's arm64 libc6 2.36 and musl 1.2.3.
 */
#include <elf.h>
#include <errno.h>
#include <linux/audit.h>
#include <string.h>

#include "arch/arch.h"

enum { A_X0 = 0, A_X8 = 8, A_X30 = 30, A_SP = 31, A_PC = 32, A_PSTATE = 33,
       A_TLS = 34 /* not in the regset: arch_get_tls_reg (regs.c) */ };

#define A_BRK0 0xd4200000u /* brk #0 */
#define A_B 0x14000000u /* b imm26 */
#define A_LDR_X16_12 0x58000070u /* ldr x16, .+12 */
#define A_BR_X16 0xd61f0200u /* br x16 */
#define A_BR 0xd61f0000u /* br xn: n at bit 5 */

/*
 * Emulated instructions. kind = EMUL_<op> | operand fields; target = the new PC when a branch is
 * taken (or the next PC); imm = the fall-through PC, a return address, or a computed value.
 */
enum {
	EMUL_JUMP = 1, /* b, nop, bti: pc = target */
	EMUL_CALL, /* bl: x30 = imm, pc = target */
	EMUL_CBZ, /* cbz/cbnz: reg, SF, NOT; pc = taken ? target : imm */
	EMUL_TBZ, /* tbz/tbnz: reg, bit, NOT */
	EMUL_BCOND, /* b.cond: cond in the reg field */
	EMUL_BR, /* br/ret: pc = reg */
	EMUL_BLR, /* blr: pc = reg, x30 = imm */
	EMUL_SET, /* adr/adrp: reg = imm, pc = target */
};

#define EM_OP(k) ((k) & 0xff)
#define EM_REG(k) (((k) >> 8) & 31) /* register number, or a condition code */
#define EM_SF (1 << 13) /* cbz/cbnz: 64-bit register */
#define EM_NOT (1 << 14) /* cbnz/tbnz: branch on non-zero */
#define EM_BIT(k) (((k) >> 16) & 63) /* tbz/tbnz: bit number */

static size_t a64_bp_encode(uint64_t addr, uint8_t *buf)
{
	const uint32_t brk = A_BRK0;

	(void)addr;
	memcpy(buf, &brk, 4);
	return 4;
}

static uint64_t a64_code_addr(uint64_t sym)
{
	return sym;
}

/* brk traps with the PC on the brk itself (si_code TRAP_BRKPT, si_addr = pc). */
static uint64_t a64_bp_addr_from_pc(uint64_t pc)
{
	return pc;
}

static uint64_t a64_get_pc(const struct arch_regs *r)
{
	return r->w64[A_PC];
}

static void a64_set_pc(struct arch_regs *r, uint64_t pc)
{
	r->w64[A_PC] = pc;
}

static uint64_t a64_get_sp(const struct arch_regs *r)
{
	return r->w64[A_SP];
}

static void a64_set_sp(struct arch_regs *r, uint64_t sp)
{
	r->w64[A_SP] = sp;
}

/* AAPCS64: integer arguments in x0-x7. */
static uint64_t a64_get_arg(const struct arch_regs *r, unsigned n)
{
	return n < 8 ? r->w64[A_X0 + n] : 0;
}

static uint64_t a64_get_retval(const struct arch_regs *r)
{
	return r->w64[A_X0];
}

static void a64_set_retval(struct arch_regs *r, uint64_t v)
{
	r->w64[A_X0] = v;
}

/* bl leaves the return address in x30 (lr); nothing is on the stack at the first instruction. */
static uint64_t a64_get_ret_reg(const struct arch_regs *r)
{
	return r->w64[A_X30];
}

static void a64_set_ret_reg(struct arch_regs *r, uint64_t v)
{
	r->w64[A_X30] = v;
}

static int64_t sext(uint64_t v, unsigned bits)
{
	uint64_t m = 1ULL << (bits - 1);

	v &= (1ULL << bits) - 1;
	return (int64_t)((v ^ m) - m);
}

/*
 * Instructions that do not read the PC and can run unchanged at another address: the
 * prologue forms of glibc's and musl's malloc family and their close relatives. Register 31
 * is sp or xzr by encoding, never the PC. Anything else is refused.
 */
static bool runs_anywhere(uint32_t i)
{
	unsigned sf = i >> 31;

	/* stp/ldp of general registers (32 or 64-bit, ldpsw), post-/pre-indexed or offset:
	 * opc(2) 101 V=0 0 mode(2) L; stp x29,x30,[sp,#-N]! is a9bx7bfd */
	if ((i & 0x3e000000) == 0x28000000 && (i & 0x01800000)) {
		unsigned opc = i >> 30, load = (i >> 22) & 1;

		return opc == 0 || opc == 2 || (opc == 1 && load);
	}
	/* data-processing, 3 source: madd/msub (mul), [su]maddl/[su]msubl, [su]mulh */
	if ((i & 0x1f000000) == 0x1b000000 && !(i & 0x60000000)) {
		unsigned op31 = (i >> 21) & 7, o0 = (i >> 15) & 1;

		if (op31 == 0)
			return true;
		if (!sf)
			return false;
		return op31 == 1 || op31 == 5 || ((op31 == 2 || op31 == 6) && !o0);
	}
	/* logical, shifted register (and, orr = mov, eor, bic, ...); sf=0 needs imm6 < 32 */
	if ((i & 0x1f000000) == 0x0a000000)
		return sf || !(i & 0x8000);
	/* logical immediate (and, orr, eor, ands; tst x5, #0xfff is glibc's mmap); sf=0 needs
	 * N=0 */
	if ((i & 0x1f800000) == 0x12000000)
		return sf || !(i & 0x400000);
	/* add/sub immediate (mov x29, sp; cmp x1, #7) */
	if ((i & 0x1f800000) == 0x11000000)
		return true;
	/* add/sub shifted register: shift 11 is reserved, sf=0 needs imm6 < 32 */
	if ((i & 0x1f200000) == 0x0b000000)
		return ((i >> 22) & 3) != 3 && (sf || !(i & 0x8000));
	/* movn/movz/movk (opc 01 unallocated; sf=0 needs hw < 2) */
	if ((i & 0x1f800000) == 0x12800000)
		return ((i >> 29) & 3) != 1 && (sf || !(i & 0x400000));
	/* paciasp, pacibsp: sign x30 with sp, no PC involved */
	return i == 0xd503233f || i == 0xd503237f;
}

/* Fill em for an instruction that reads or writes the PC; return STEP_EMULATE or -ENOTSUP. */
static int decode_pc_insn(uint64_t addr, uint32_t i, struct arch_emul *em)
{
	uint64_t next = addr + 4;

	em->imm = next;
	em->target = next;
	if (i == 0xd503201f || (i & 0xffffff3f) == 0xd503241f) { /* nop, bti {c,j,jc} */
		em->kind = EMUL_JUMP;
		return STEP_EMULATE;
	}
	if ((i & 0x7c000000) == 0x14000000) { /* b, bl: imm26 */
		em->kind = i >> 31 ? EMUL_CALL : EMUL_JUMP;
		em->target = addr + sext(i, 26) * 4;
		return STEP_EMULATE;
	}
	if ((i & 0x7e000000) == 0x34000000) { /* cbz, cbnz: sf 011010 op imm19 rt */
		em->kind = EMUL_CBZ | (i & 31) << 8 | (i >> 31 ? EM_SF : 0) |
			   (i & (1u << 24) ? EM_NOT : 0);
		em->target = addr + sext(i >> 5, 19) * 4;
		return STEP_EMULATE;
	}
	if ((i & 0x7e000000) == 0x36000000) { /* tbz, tbnz: b5 011011 op b40 imm14 rt */
		unsigned bit = (i >> 31) << 5 | ((i >> 19) & 31);

		em->kind = EMUL_TBZ | (i & 31) << 8 | bit << 16 | (i & (1u << 24) ? EM_NOT : 0);
		em->target = addr + sext(i >> 5, 14) * 4;
		return STEP_EMULATE;
	}
	if ((i & 0xff000010) == 0x54000000) { /* b.cond (bit 4 set: bc.cond, refused) */
		em->kind = EMUL_BCOND | (i & 15) << 8;
		em->target = addr + sext(i >> 5, 19) * 4;
		return STEP_EMULATE;
	}
	if ((i & 0xfffffc1f) == 0xd61f0000 || (i & 0xfffffc1f) == 0xd65f0000) { /* br, ret */
		em->kind = EMUL_BR | ((i >> 5) & 31) << 8;
		return STEP_EMULATE;
	}
	if ((i & 0xfffffc1f) == 0xd63f0000) { /* blr */
		em->kind = EMUL_BLR | ((i >> 5) & 31) << 8;
		return STEP_EMULATE;
	}
	if ((i & 0x1f000000) == 0x10000000) { /* adr, adrp: op immlo 10000 immhi rd */
		int64_t imm = sext(((i >> 5) & 0x7ffff) << 2 | ((i >> 29) & 3), 21);

		em->kind = EMUL_SET | (i & 31) << 8;
		em->imm = i >> 31 ? (addr & ~0xfffULL) + (uint64_t)(imm * 4096) : addr + imm;
		return STEP_EMULATE;
	}
	return -ENOTSUP; /* ldr literal, exclusives, svc, system registers, pointer auth... */
}

/*
 * Slot: [insn][b next] when next is within the ±128 MiB of a b from the slot; else
 * [insn][ldr x16, .+12][br x16][brk #0][.quad next] (8-aligned literal). x16 (IP0) is free at a
 * function's first instruction: AAPCS64 lets the linker's veneers and PLT stubs clobber it on the
 * way in. The b form is preferred: it clobbers nothing and, being a direct branch, needs no BTI
 * landing pad at next. The rest of the slot is brk #0.
 */
static int a64_displace(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
			uint8_t *slot, struct arch_emul *em)
{
	const uint32_t brk = A_BRK0;
	uint64_t next = addr + 4;
	int64_t off = (int64_t)(next - (slot_addr + 4));
	uint32_t i, w[3];
	int ret;

	if (len < 4 || (addr & 3))
		return -ENOTSUP;
	memcpy(&i, insn, 4);
	ret = decode_pc_insn(addr, i, em);
	if (ret != -ENOTSUP)
		return ret;
	if (!runs_anywhere(i))
		return -ENOTSUP;
	for (size_t k = 0; k < ARCH_SLOT_SIZE; k += 4)
		memcpy(slot + k, &brk, 4);
	memcpy(slot, &i, 4);
	if (off >= -(1LL << 27) && off < (1LL << 27)) {
		w[0] = A_B | ((uint64_t)(off >> 2) & 0x3ffffff);
		memcpy(slot + 4, w, 4);
	} else {
		w[0] = A_LDR_X16_12;
		w[1] = A_BR_X16;
		w[2] = brk;
		memcpy(slot + 4, w, 12);
		memcpy(slot + 16, &next, 8);
	}
	return STEP_XOL;
}

/* b from `from` to `to` into *w: false when out of its +-128 MiB. */
static bool a64_b(uint32_t *w, uint64_t from, uint64_t to)
{
	int64_t off = (int64_t)(to - from);

	if (off < -(1LL << 27) || off >= (1LL << 27))
		return false;
	*w = A_B | ((uint64_t)(off >> 2) & 0x3ffffff);
	return true;
}

#define A_LDR_LIT16(rd) (0x58000080u | (rd)) /* ldr xd, .+16 */
#define A_SLOT_LIT 16 /* a guard slot's 8-byte literal, from the slot's start */

/*
 * The guard's slot for an instruction heaptrace emulates (arch.h: emul_slot), run in the
 * process: [cond branch to +8][b next][b target] for cbz, tbz and b.cond; [ldr xd, lit][b next]
 * for adr, adrp; [ldr x30, lit][b target] for bl; br and ret as they are; [ldr x30, lit][br xn]
 * for blr. The literal (next, or adr's value) is at A_SLOT_LIT; the rest of the slot is brk #0.
 */
static int a64_emul_slot(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
			 uint8_t *slot)
{
	const uint32_t brk = A_BRK0;
	uint32_t i, w[4] = { 0 };
	struct arch_emul em;
	uint64_t lit = addr + 4;
	bool ok;

	if (len < 4 || (addr & 3) || (slot_addr & 7))
		return -ENOTSUP;
	memcpy(&i, insn, 4);
	if (decode_pc_insn(addr, i, &em) != STEP_EMULATE)
		return -ENOTSUP;
	switch (EM_OP(em.kind)) {
	case EMUL_CBZ:
	case EMUL_BCOND:
		w[0] = (i & ~(0x7ffffu << 5)) | 2u << 5; /* imm19 = 2 words */
		ok = a64_b(&w[1], slot_addr + 4, em.imm) && a64_b(&w[2], slot_addr + 8, em.target);
		break;
	case EMUL_TBZ:
		w[0] = (i & ~(0x3fffu << 5)) | 2u << 5; /* imm14 = 2 words */
		ok = a64_b(&w[1], slot_addr + 4, em.imm) && a64_b(&w[2], slot_addr + 8, em.target);
		break;
	case EMUL_SET:
		if (EM_REG(em.kind) == 31)
			return -ENOTSUP;
		w[0] = A_LDR_LIT16(EM_REG(em.kind));
		lit = em.imm;
		ok = a64_b(&w[1], slot_addr + 4, em.target);
		break;
	case EMUL_CALL:
		w[0] = A_LDR_LIT16(30);
		ok = a64_b(&w[1], slot_addr + 4, em.target);
		break;
	case EMUL_BR:
		w[0] = i;
		ok = true;
		break;
	case EMUL_BLR:
		if (EM_REG(em.kind) == 30)
			return -ENOTSUP;
		w[0] = A_LDR_LIT16(30);
		w[1] = A_BR | (uint32_t)EM_REG(em.kind) << 5;
		ok = true;
		break;
	default: /* b, nop, bti: the guard goes straight to the target */
		return -ENOTSUP;
	}
	if (!ok)
		return -ERANGE;
	for (size_t k = 0; k < ARCH_SLOT_SIZE; k += 4)
		memcpy(slot + k, &brk, 4);
	for (size_t k = 0; k < 4 && w[k]; k++)
		memcpy(slot + 4 * k, &w[k], 4);
	memcpy(slot + A_SLOT_LIT, &lit, 8);
	return 0;
}

/* A64 register read where 31 means xzr (cbz, tbz, br and ret operands). */
static uint64_t xreg(const struct arch_regs *r, unsigned n)
{
	return n == 31 ? 0 : r->w64[n];
}

static bool cond_holds(unsigned cond, uint64_t pstate)
{
	bool n = pstate >> 31 & 1, z = pstate >> 30 & 1, c = pstate >> 29 & 1,
	     v = pstate >> 28 & 1, res;

	switch (cond >> 1) {
	case 0: res = z; break; /* eq */
	case 1: res = c; break; /* cs */
	case 2: res = n; break; /* mi */
	case 3: res = v; break; /* vs */
	case 4: res = c && !z; break; /* hi */
	case 5: res = n == v; break; /* ge */
	case 6: res = n == v && !z; break; /* gt */
	default: return true; /* al, nv: always */
	}
	return cond & 1 ? !res : res;
}

/*
 * PSTATE.BTYPE (bits 11:10, FEAT_BTI; RES0 without it) is what the next instruction's branch
 * target check looks at. Every emulated instruction but br/blr leaves it 0 in hardware; for
 * br/blr 0 skips the landing-pad check at the target, which is lenient but never faults.
 */
#define PSR_BTYPE 0xc00ULL

static int a64_emulate(const struct arch_emul *em, struct arch_regs *r)
{
	unsigned reg = EM_REG(em->kind);
	uint64_t v;
	bool taken;

	if (EM_OP(em->kind) < EMUL_JUMP || EM_OP(em->kind) > EMUL_SET)
		return -EINVAL;
	r->w64[A_PSTATE] &= ~PSR_BTYPE;
	switch (EM_OP(em->kind)) {
	case EMUL_JUMP:
		r->w64[A_PC] = em->target;
		return 0;
	case EMUL_CALL:
		r->w64[A_X30] = em->imm;
		r->w64[A_PC] = em->target;
		return 0;
	case EMUL_CBZ:
		v = xreg(r, reg);
		if (!(em->kind & EM_SF))
			v = (uint32_t)v;
		taken = (v == 0) != !!(em->kind & EM_NOT);
		r->w64[A_PC] = taken ? em->target : em->imm;
		return 0;
	case EMUL_TBZ:
		taken = !(xreg(r, reg) >> EM_BIT(em->kind) & 1) != !!(em->kind & EM_NOT);
		r->w64[A_PC] = taken ? em->target : em->imm;
		return 0;
	case EMUL_BCOND:
		r->w64[A_PC] = cond_holds(reg, r->w64[A_PSTATE]) ? em->target : em->imm;
		return 0;
	case EMUL_BR:
		r->w64[A_PC] = xreg(r, reg);
		return 0;
	case EMUL_BLR:
		r->w64[A_PC] = xreg(r, reg); /* read before x30 is written: blr x30 */
		r->w64[A_X30] = em->imm;
		return 0;
	case EMUL_SET:
		if (reg != 31) /* rd 31 is xzr here, not sp */
			r->w64[reg] = em->imm;
		r->w64[A_PC] = em->target;
		return 0;
	}
	return -EINVAL;
}

/* One brk #0: every return (x30 = the page start) comes back through it. */
static size_t a64_tramp_encode(uint8_t *buf)
{
	return a64_bp_encode(0, buf);
}

static uint64_t a64_tramp_for(uint64_t base, uint64_t ret)
{
	(void)ret;
	return base;
}

/* adr xd, target (from pc): the offset must be within +-1 MiB (the same scratch mapping). */
static uint32_t a64_adr(unsigned rd, uint64_t pc, uint64_t target)
{
	uint32_t off = (uint32_t)(target - pc) & 0x1fffff;

	return 0x10000000u | (off & 3) << 29 | (off >> 2) << 5 | rd;
}

/*
 * Logging return trampoline (see arch.h). The reservation is an exclusive-load/store loop
 * (ARMv8.0 has no atomic add); x14-x17 are borrowed and put back, and no instruction sets
 * the flags. The function returned with sp at the two words heaptrace wrote: the cookie and
 * the caller's return address.
 */
static size_t a64_logtramp_encode(uint8_t *buf, uint64_t at, uint64_t head, uint64_t entries,
				  uint32_t mask)
{
	uint32_t code[] = {
		0xa9be3fee, /* stp x14, x15, [sp, #-32]! */
		0xa90147f0, /* stp x16, x17, [sp, #16] */
		a64_adr(16, at + 8, head), /* adr x16, head */
		0x885f7e11, /* 1: ldxr w17, [x16] */
		0x1100062e, /* add w14, w17, #1: seq */
		0x880f7e0e, /* stxr w15, w14, [x16] */
		0x35ffffaf, /* cbnz w15, 1b */
		0x12000231 | (uint32_t)(__builtin_popcount(mask) - 1) << 10, /* and w17, w17, #mask */
		a64_adr(16, at + 32, entries), /* adr x16, entries */
		0x8b111210, /* add x16, x16, x17, lsl #4 */
		0xf9000600, /* str x0, [x16, #8] */
		0xb94023ef, /* ldr w15, [sp, #32]: the cookie */
		0xb900060f, /* str w15, [x16, #4] */
		0x889ffe0e, /* stlr w14, [x16]: seq last, after the other stores */
		0xa94147f0, /* ldp x16, x17, [sp, #16] */
		0xa8c23fee, /* ldp x14, x15, [sp], #32 */
		0xf94007fe, /* ldr x30, [sp, #8]: the caller's return address */
		0x910043ff, /* add sp, sp, #16 */
		0xd65f03c0, /* ret */
	};

	memcpy(buf, code, sizeof(code));
	return sizeof(code);
}

static const uint8_t a64_syscall_insn[] = { 0x01, 0x00, 0x00, 0xd4 }; /* svc #0 */

/*
 * Number in x8, arguments in x0-x5, result in x0. Nothing else in NT_PRSTATUS matters to the
 * kernel's restart logic. That logic depends on pt_regs->syscallno, which this regset does
 * not carry (NT_ARM_SYSTEM_CALL does), and on the restart address that do_signal() noted
 * before the stop. After the stop it looks only at whether the PC still equals that address
 * (see a64_syscall_restart). So the injected call is left alone unless insn_addr happens to
 * be the very svc the stopped thread was interrupted in (the saved PC). Only the caller can
 * avoid that, by choosing another svc. Otherwise, with -ERESTART_RESTARTBLOCK, the kernel
 * would switch x8 to restart_syscall under us.
 */
static void a64_syscall_setup(struct arch_regs *r, uint64_t insn_addr, long nr,
			      const uint64_t a[6])
{
	r->w64[A_PC] = insn_addr;
	r->w64[A_X8] = (uint64_t)nr;
	for (unsigned k = 0; k < 6; k++)
		r->w64[A_X0 + k] = a[k];
}

static int64_t a64_syscall_result(const struct arch_regs *r)
{
	return (int64_t)r->w64[A_X0];
}

/*
 * Nothing to do, and nothing that could be done; always false.
 *
 * arm64's do_signal() prepares the restart *before* get_signal(), where ptrace stops ("so that
 * a debugger will see the already changed PC"): for -ERESTARTSYS/NOINTR/NOHAND/RESTARTBLOCK
 * it has already set x0 = orig_x0 and pc = the svc when the tracer takes its snapshot at a
 * signal-delivery, group or PTRACE_INTERRUPT stop. Restoring that snapshot after the injected
 * call re-executes the interrupted call, as the kernel would. Rewinding it again as x86_64 does
 * would land before the svc.
 *
 * What is lost: -ERESTART_RESTARTBLOCK (nanosleep, clock_nanosleep, poll with a timeout...)
 * would have had x8 switched to __NR_restart_syscall after the stop, but only if the PC was
 * still the restart address, and the injection moved it. The snapshot cannot tell that case
 * apart (x0 already holds orig_x0, and the return code is gone), so the call is re-executed
 * with its original arguments: a relative timeout starts over. A snapshot taken at a
 * syscall-exit stop (x0 = -ERESTART*, pc after the svc) cannot be restarted either, because
 * user_pt_regs has no orig_x0 to reload x0 from. That snapshot is also the only one that
 * is unsafe after an injection: the kernel still holds syscallno = the injected number, so
 * a signal arriving before the thread resumes would take the restored x0 for a restart code.
 */
static bool a64_syscall_restart(struct arch_regs *r)
{
	(void)r;
	return false;
}

/*
 * The restoring syscall stub (arch.h): the injected svc, then an rt_sigreturn through a frame
 * it builds below sp, which puts back every register, sp, pc, pstate, the FP/SIMD registers and
 * the signal mask at once (aarch64 has no jump that leaves every register alone). The frame is
 * the kernel's rt_sigframe: a 128-byte siginfo (not read), then the ucontext: uc_stack at 144,
 * uc_sigmask at 168, uc_mcontext at 304 (regs at 312, sp 560, pc 568, pstate 576) and its
 * __reserved at 592, which rt_sigreturn requires to hold an fpsimd_context, then a record of
 * magic 0. The registers the injection did not change are stored as they are; x0-x5, x8, pc,
 * pstate and the mask come from the data (a64_stub_data). uc_stack's ss_flags is 3, which
 * sigaltstack refuses: rt_sigreturn then leaves the thread's alternate stack as it is.
 */
#define A64_STUB_DATA_OFF 240
#define A64_STUB_FRAME 1136 /* bytes of the frame (the sub and the add encode it) */
#define W(x) (x) & 0xff, ((x) >> 8) & 0xff, ((x) >> 16) & 0xff, (uint8_t)((x) >> 24)
static const uint8_t a64_stub_code[A64_STUB_DATA_OFF] = {
	W(0xd4000001), /* svc #0: the injected call */
	W(0xd111c3ff), /* sub sp, sp, #1136: the frame */
	W(0x9104e3e0), /* add x0, sp, #312: uc_mcontext.regs */
	W(0xa9031c06), /* stp x6, x7, [x0, #48]: the registers as the call left them */
	W(0xa904a809), /* stp x9, x10, [x0, #72] */
	W(0xa905b00b), /* stp x11, x12, [x0, #88] */
	W(0xa906b80d), /* stp x13, x14, [x0, #104] */
	W(0xa907c00f), /* stp x15, x16, [x0, #120] */
	W(0xa908c811), /* stp x17, x18, [x0, #136] */
	W(0xa909d013), /* stp x19, x20, [x0, #152] */
	W(0xa90ad815), /* stp x21, x22, [x0, #168] */
	W(0xa90be017), /* stp x23, x24, [x0, #184] */
	W(0xa90ce819), /* stp x25, x26, [x0, #200] */
	W(0xa90df01b), /* stp x27, x28, [x0, #216] */
	W(0xa90ef81d), /* stp x29, x30, [x0, #232] */
	W(0x100005a4), /* adr x4, data */
	W(0xa9400881), /* ldp x1, x2, [x4]: x0 and x1 from the data */
	W(0xa9000801), /* stp x1, x2, [x0] */
	W(0xa9410881), /* ldp x1, x2, [x4, #16]: x2, x3 */
	W(0xa9010801), /* stp x1, x2, [x0, #16] */
	W(0xa9420881), /* ldp x1, x2, [x4, #32]: x4, x5 */
	W(0xa9020801), /* stp x1, x2, [x0, #32] */
	W(0xf9401881), /* ldr x1, [x4, #48]: x8 */
	W(0xf9002001), /* str x1, [x0, #64] */
	W(0x9111c3e1), /* add x1, sp, #1136: sp as it was */
	W(0xa9438c82), /* ldp x2, x3, [x4, #56]: pc, pstate */
	W(0xa90f8801), /* stp x1, x2, [x0, #248] */
	W(0xf9008403), /* str x3, [x0, #264] */
	W(0xf9402481), /* ldr x1, [x4, #72]: the mask */
	W(0xf90057e1), /* str x1, [sp, #168] */
	W(0x52800061), /* mov w1, #3 */
	W(0xb9009be1), /* str w1, [sp, #152]: ss_flags */
	W(0x910943e0), /* add x0, sp, #592: __reserved */
	W(0xd2900021), /* mov x1, #0x8001 */
	W(0xf2a8ca01), /* movk x1, #0x4650, lsl #16 */
	W(0xf2c04201), /* movk x1, #0x210, lsl #32: FPSIMD_MAGIC, 0x210 bytes */
	W(0xd53b4422), /* mrs x2, fpsr */
	W(0xd53b4403), /* mrs x3, fpcr */
	W(0xf9000001), /* str x1, [x0] */
	W(0x29010c02), /* stp w2, w3, [x0, #8] */
	W(0xad008400), /* stp q0, q1, [x0, #16] */
	W(0xad018c02), /* stp q2, q3, [x0, #48] */
	W(0xad029404), /* stp q4, q5, [x0, #80] */
	W(0xad039c06), /* stp q6, q7, [x0, #112] */
	W(0xad04a408), /* stp q8, q9, [x0, #144] */
	W(0xad05ac0a), /* stp q10, q11, [x0, #176] */
	W(0xad06b40c), /* stp q12, q13, [x0, #208] */
	W(0xad07bc0e), /* stp q14, q15, [x0, #240] */
	W(0xad08c410), /* stp q16, q17, [x0, #272] */
	W(0xad09cc12), /* stp q18, q19, [x0, #304] */
	W(0xad0ad414), /* stp q20, q21, [x0, #336] */
	W(0xad0bdc16), /* stp q22, q23, [x0, #368] */
	W(0xad0ce418), /* stp q24, q25, [x0, #400] */
	W(0xad0dec1a), /* stp q26, q27, [x0, #432] */
	W(0xad0ef41c), /* stp q28, q29, [x0, #464] */
	W(0xad0ffc1e), /* stp q30, q31, [x0, #496] */
	W(0xf901081f), /* str xzr, [x0, #528]: the end record */
	W(0xd2801168), /* mov x8, #139: rt_sigreturn */
	W(0xd4000001), /* svc #0 */
	W(0xd503201f), /* nop: the data 16-aligned */
};
#undef W
_Static_assert(A64_STUB_FRAME >= 592 + 528 + 8 && A64_STUB_FRAME % 16 == 0 &&
		       A64_STUB_DATA_OFF + 10 * 8 <= ARCH_STUB_MAX,
	       "the frame holds the end record; the stub fits");

/* The stub's data: x0-x5, x8, pc, pstate, the mask. */
static void a64_stub_data(uint8_t *data, const struct arch_regs *r, uint64_t mask)
{
	memcpy(data, &r->w64[A_X0], 6 * 8);
	memcpy(data + 48, &r->w64[A_X8], 8);
	memcpy(data + 56, &r->w64[A_PC], 8);
	memcpy(data + 64, &r->w64[A_PSTATE], 8);
	memcpy(data + 72, &mask, 8);
}

/* bl imm26; blr xn. */
static bool a64_after_call(const uint8_t *code, uint64_t ret, uint64_t *target)
{
	uint32_t i;

	memcpy(&i, code + ARCH_CALL_WINDOW - 4, 4);
	if ((i & 0xfc000000u) == 0x94000000u) {
		int64_t off = (int64_t)((uint64_t)(i & 0x03ffffffu) << 38) >> 36;

		*target = ret - 4 + off;
		return true;
	}
	*target = 0;
	return (i & 0xfffffc1fu) == 0xd63f0000u;
}

/* ---- entry stubs (stubs.h) ---- */

#define A_BL 0x94000000u /* bl imm26 */
#define A_ADRP 0x90000000u /* adrp xd, imm21 pages */
#define A_ADD_IMM 0x91000000u /* add xd, xn, #imm12 */
#define A_MOVZ_W16 0x52800010u /* movz w16, #imm16 */

/* b or bl from pc to target, or 0 when out of the ±128 MiB reach. */
static uint32_t a64_b_to(uint32_t op, uint64_t pc, uint64_t target)
{
	int64_t off = (int64_t)(target - pc);

	if ((off & 3) || off < -(1LL << 27) || off >= (1LL << 27))
		return 0;
	return op | ((uint64_t)(off >> 2) & 0x3ffffff);
}

/* adrp xd, target; add xd, xd, #lo12(target): xd = target, from pc (±4 GiB). Return 2. */
static int a64_addr_to(uint32_t *w, unsigned rd, uint64_t pc, uint64_t target)
{
	int64_t pages = (int64_t)((target >> 12) - (pc >> 12));
	uint32_t imm = (uint32_t)pages & 0x1fffff;

	if (pages < -(1LL << 20) || pages >= (1LL << 20))
		return -ERANGE;
	w[0] = A_ADRP | (imm & 3) << 29 | (imm >> 2) << 5 | rd;
	w[1] = A_ADD_IMM | (uint32_t)(target & 0xfff) << 10 | rd << 5 | rd;
	return 2;
}

/*
 * Entry stubs (arch.h): the first instruction, relocated to run at at, then a b back to
 * addr + 4. One instruction is all the patch (a single b) displaces. Instructions that do not
 * read the PC are copied; b and bl are re-aimed (bl also sets x30 to addr + 4); cbz, cbnz, tbz,
 * tbnz and b.cond keep their condition and skip to a b to their target; adr and adrp become
 * adrp + add with the same result. Anything else (ldr literal, br, ret, exclusives...) is
 * refused: that function keeps its breakpoint.
 */
static int a64_entry_relocate(uint64_t addr, const uint8_t *insn, size_t len, size_t need,
			      uint64_t at, uint8_t *buf, size_t *covered)
{
	struct arch_emul em;
	uint32_t i, w[5];
	uint64_t taken = 0; /* a conditional branch's target */
	int n = 0;

	if (len < 4 || need > 4 || (addr & 3) || (at & 3))
		return -ENOTSUP;
	memcpy(&i, insn, 4);
	if (decode_pc_insn(addr, i, &em) == -ENOTSUP) {
		if (!runs_anywhere(i))
			return -ENOTSUP;
		w[n++] = i;
	} else {
		switch (EM_OP(em.kind)) {
		case EMUL_JUMP:
			if (em.target != addr + 4) { /* b: nothing comes back */
				w[0] = a64_b_to(A_B, at, em.target);
				if (!w[0])
					return -ERANGE;
				memcpy(buf, w, 4);
				*covered = 4;
				return 4;
			}
			w[n++] = i; /* nop, bti: no PC read */
			break;
		case EMUL_CALL:
			if (a64_addr_to(w, A_X30, at, addr + 4) < 0)
				return -ERANGE;
			w[2] = a64_b_to(A_B, at + 8, em.target);
			if (!w[2])
				return -ERANGE;
			memcpy(buf, w, 12);
			*covered = 4;
			return 12;
		case EMUL_CBZ:
		case EMUL_BCOND: /* imm19 at bit 5: skip one instruction when taken */
			w[n++] = (i & ~(0x7ffffu << 5)) | 2u << 5;
			taken = em.target;
			break;
		case EMUL_TBZ: /* imm14 at bit 5 */
			w[n++] = (i & ~(0x3fffu << 5)) | 2u << 5;
			taken = em.target;
			break;
		case EMUL_SET:
			if (EM_REG(em.kind) != 31) {
				if (a64_addr_to(w, EM_REG(em.kind), at, em.imm) < 0)
					return -ERANGE;
				n = 2;
			}
			break;
		default: /* br, blr, ret */
			return -ENOTSUP;
		}
	}
	w[n] = a64_b_to(A_B, at + 4 * n, addr + 4);
	if (!w[n])
		return -ERANGE;
	n++;
	if (taken) { /* the b after the b back */
		w[n] = a64_b_to(A_B, at + 4 * n, taken);
		if (!w[n])
			return -ERANGE;
		n++;
	}
	memcpy(buf, w, 4 * n);
	*covered = 4;
	return 4 * n;
}

/* The branch over an entry: b, within ±128 MiB. */
static int a64_entry_branch(uint64_t addr, uint64_t to, uint8_t *buf)
{
	uint32_t w = a64_b_to(A_B, addr, to);

	if (!w)
		return -ERANGE;
	memcpy(buf, &w, 4);
	return 4;
}

/* A function's thunk: movz w16, #word; b common (x16 is free at a function's entry). */
static size_t a64_entry_thunk(uint8_t *buf, uint64_t at, uint32_t word, uint64_t common)
{
	uint32_t w[2] = { A_MOVZ_W16 | (word & 0xffff) << 5, a64_b_to(A_B, at + 4, common) };

	memcpy(buf, w, 8);
	return 8;
}

/* tpidr_el0 is not in NT_PRSTATUS: regs.c reads it (NT_ARM_TLS) into this slot. */
static uint64_t a64_get_tls(const struct arch_regs *r)
{
	return r->w64[A_TLS];
}

static uint64_t a64_core_tp(uint32_t type, const uint8_t *desc, size_t len)
{
	uint64_t tp = 0;

	if (type == NT_ARM_TLS && len >= 8)
		memcpy(&tp, desc, 8);
	return tp;
}

static uint64_t a64_tls_window(uint64_t tp, uint64_t len)
{
	(void)len;
	return tp;
}

const struct arch_ops arch_aarch64_ops = {
	.name = "aarch64",
	.elf_machine = EM_AARCH64,
	.elf_class = ELFCLASS64,
	.audit_arch = AUDIT_ARCH_AARCH64,
	.word_size = 8,
	.reg_args = 8,
	.stack_args_off = 0, /* AAPCS64: the ninth integer argument at [sp] */
	.map_anonymous = 0x20,
	.insn_align = 4,
	.bp_encode = a64_bp_encode,
	.code_addr = a64_code_addr,
	.after_call = a64_after_call,
	.dwarf_regs = 32,
	.dwarf_sp = 31,
	.fp_reg = 29,
	.fp_sp_off = 0,
	.bp_addr_from_pc = a64_bp_addr_from_pc,
	.get_pc = a64_get_pc,
	.set_pc = a64_set_pc,
	.get_sp = a64_get_sp,
	.set_sp = a64_set_sp,
	.get_arg = a64_get_arg,
	.get_retval = a64_get_retval,
	.set_retval = a64_set_retval,
	.ret_on_stack = false,
	.get_ret_reg = a64_get_ret_reg,
	.set_ret_reg = a64_set_ret_reg,
	.ret_sp_adjust = 0,
	/* the kernel's rt_sigframe: a 128-byte siginfo, then the ucontext, whose uc_mcontext
	 * (at 176 in it, 16-aligned) holds fault_address, x0-x30, sp, pc, pstate and, at 288,
	 * __reserved, which starts with the fpsimd_context's head: FPSIMD_MAGIC, 0x210 bytes */
	.sigframe_magic = { 0x21046508001ull },
	.sigframe_sp = 256 - 288,
	.sigframe_pc = 264 - 288,
	.displace = a64_displace,
	.emulate = a64_emulate,
	.tramp_encode = a64_tramp_encode,
	.tramp_for = a64_tramp_for,
	.logtramp_encode = a64_logtramp_encode,
	.emul_slot = a64_emul_slot,
	.nr_mprotect = 226,
	.syscall_insn = a64_syscall_insn,
	.syscall_insn_len = sizeof(a64_syscall_insn),
	.nr_mmap = 222,
	.nr_munmap = 215,
	.syscall_setup = a64_syscall_setup,
	.syscall_result = a64_syscall_result,
	.syscall_restart = a64_syscall_restart,
	.stub_code = a64_stub_code,
	.stub_size = A64_STUB_DATA_OFF + 10 * 8, /* the data: a64_stub_data's 10 words */
	.stub_data_off = A64_STUB_DATA_OFF,
	.stub_data = a64_stub_data,
	.entry_relocate = a64_entry_relocate,
	.entry_branch = a64_entry_branch,
	.entry_thunk = a64_entry_thunk,
	.get_tls = a64_get_tls,
	.core_tp = a64_core_tp,
	.tls_window = a64_tls_window,
};
