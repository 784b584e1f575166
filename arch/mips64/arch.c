// SPDX-License-Identifier: GPL-2.0-only
/*
 * mips64el, n64 ABI: pure knowledge. Register indexes follow the kernel's 64-bit register
 * dump (arch/mips/include/uapi/asm/reg.h, MIPS64_EF_*): [0..31] GPRs, 32 lo, 33 hi, 34 epc,
 * 35 badvaddr, 36 status, 37 cause. PTRACE_GETREGSET(NT_PRSTATUS) returns 45 such words and
 * PTRACE_GETREGS the first 38 in the same order (ptrace_getregs in arch/mips/kernel/ptrace.c);
 * regs.c uses the latter because only it carries slots 0 and 26, which syscall restarting
 * needs (see mips_syscall_restart). Instructions are little-endian words: mips64el only.
 */
#include <elf.h>
#include <errno.h>
#include <linux/audit.h>
#include <string.h>

#include "arch/arch.h"

enum {
	M_ZERO = 0, /* reads as 0; its slot in the dump is the kernel's restart flag */
	M_AT = 1, M_V0 = 2, M_A0 = 4, M_A3 = 7,
	M_K0 = 26, /* the kernel saves a3 here at syscall entry, to restart with */
	M_SP = 29, M_RA = 31, M_LO = 32, M_HI = 33, M_EPC = 34,
};

/* The $0 slot of the dump: nonzero (the syscall number) after a syscall returned an error. */
#define M_RESTART_NR M_ZERO

/* struct arch_emul.kind: the operation, with its registers in bits 8-12 (rs) and 16-20 (rt). */
enum {
	EMUL_JUMP = 1, /* pc = target */
	EMUL_JR, /* pc = rs */
	EMUL_BEQ, EMUL_BNE, EMUL_BLEZ, EMUL_BGTZ, EMUL_BLTZ, EMUL_BGEZ, /* target or imm */
};
#define EMUL_OP(kind) ((kind) & 0xff)
#define EMUL_RS(kind) (((kind) >> 8) & 31)
#define EMUL_RT(kind) (((kind) >> 16) & 31)

#define INSN_BREAK 0x0000000du /* break 0 */
#define INSN_NOP 0x00000000u /* sll zero,zero,0 */

#define NR_N64(n) (5000 + (n)) /* __NR_Linux for n64 (asm/unistd_n64.h) */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

static uint32_t rd_insn(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr_insn(uint8_t *p, uint32_t w)
{
	p[0] = w, p[1] = w >> 8, p[2] = w >> 16, p[3] = w >> 24;
}

static size_t mips_bp_encode(uint64_t addr, uint8_t *buf)
{
	(void)addr;
	wr_insn(buf, INSN_BREAK);
	return 4;
}

static uint64_t mips_code_addr(uint64_t sym)
{
	return sym;
}

/* break traps with EPC on it (never in a delay slot: no glibc 2.36 mips64el entry is one). */
static uint64_t mips_bp_addr_from_pc(uint64_t pc)
{
	return pc;
}

static uint64_t mips_get_pc(const struct arch_regs *r)
{
	return r->w64[M_EPC];
}

static void mips_set_pc(struct arch_regs *r, uint64_t pc)
{
	r->w64[M_EPC] = pc;
}

static uint64_t mips_get_sp(const struct arch_regs *r)
{
	return r->w64[M_SP];
}

static void mips_set_sp(struct arch_regs *r, uint64_t sp)
{
	r->w64[M_SP] = sp;
}

/* n64 passes eight integer arguments in a0-a7 ($4-$11). */
static uint64_t mips_get_arg(const struct arch_regs *r, unsigned n)
{
	return n < 8 ? r->w64[M_A0 + n] : 0;
}

static uint64_t mips_get_retval(const struct arch_regs *r)
{
	return r->w64[M_V0];
}

static void mips_set_retval(struct arch_regs *r, uint64_t v)
{
	r->w64[M_V0] = v;
}

static uint64_t mips_get_ret_reg(const struct arch_regs *r)
{
	return r->w64[M_RA];
}

static void mips_set_ret_reg(struct arch_regs *r, uint64_t v)
{
	r->w64[M_RA] = v;
}

/* A general register as the CPU sees it: $0 is zero whatever the dump's slot 0 holds. */
static uint64_t gpr(const struct arch_regs *r, unsigned n)
{
	return n ? r->w64[n & 31] : 0;
}

/*
 * Plain integer instructions that read no PC, cannot trap and write one general register
 * (or HI/LO), so they run out of line unchanged. Return the register they write, 0 for HI/LO,
 * or -1 for anything else. This covers glibc 2.36's daddiu sp / dmultu and musl's lui, daddu,
 * sltiu first instructions (from their mips64el disassembly).
 */
static int plain_dest(uint32_t w)
{
	unsigned op = w >> 26, rs = (w >> 21) & 31, rt = (w >> 16) & 31, rd = (w >> 11) & 31;
	unsigned sa = (w >> 6) & 31, funct = w & 63;

	switch (op) {
	case 0x09: /* addiu */
	case 0x0a: /* slti */
	case 0x0b: /* sltiu */
	case 0x0c: /* andi */
	case 0x0d: /* ori */
	case 0x0e: /* xori */
	case 0x19: /* daddiu */
		return rt;
	case 0x0f: /* lui (rs != 0 is R6's aui) */
		return rs ? -1 : (int)rt;
	case 0x00: /* SPECIAL */
		if (sa)
			return -1;
		switch (funct) {
		case 0x21: case 0x23: /* addu, subu */
		case 0x24: case 0x25: case 0x26: case 0x27: /* and, or, xor, nor */
		case 0x2a: case 0x2b: /* slt, sltu */
		case 0x2d: case 0x2f: /* daddu, dsubu */
			return rd;
		case 0x18: case 0x19: case 0x1c: case 0x1d: /* mult, multu, dmult, dmultu */
			return rd ? -1 : 0; /* rd/sa != 0: R6's mul/muh, which write rd */
		}
		return -1;
	}
	return -1;
}

/*
 * A branch or jump whose delay slot is a nop. Fill *em and return 0, or return -ENOTSUP.
 * Likely, linking (jal, bal, bgezal, jalr with rd != 0) and compact branches are refused.
 */
static int decode_branch(uint64_t addr, uint32_t w, uint32_t slot_insn, struct arch_emul *em)
{
	unsigned op = w >> 26, rs = (w >> 21) & 31, rt = (w >> 16) & 31;
	uint64_t next = addr + 8; /* past the delay slot */
	uint64_t rel = addr + 4 + (uint64_t)((int64_t)(int16_t)(w & 0xffff) * 4);
	int kind;

	if (slot_insn != INSN_NOP)
		return -ENOTSUP; /* the delay-slot instruction would have to run too */
	switch (op) {
	case 0x00: /* jr rs, and jalr zero,rs (R6's jr): hint and sa must be 0 */
		if ((w & 0x001fffff) == 0x08 || (w & 0x001fffff) == 0x09) {
			em->kind = EMUL_JR | rs << 8;
			em->target = 0;
			em->imm = 0;
			return 0;
		}
		return -ENOTSUP;
	case 0x02: /* j: the 256 MiB region of the delay slot */
		em->kind = EMUL_JUMP;
		em->target = ((addr + 4) & ~(uint64_t)0x0fffffff) | (uint64_t)(w & 0x03ffffff) << 2;
		em->imm = 0;
		return 0;
	case 0x04: kind = EMUL_BEQ; break; /* beq, beqz, b */
	case 0x05: kind = EMUL_BNE; break;
	case 0x06: /* blez (rt != 0: R6 compact branches) */
		if (rt)
			return -ENOTSUP;
		kind = EMUL_BLEZ;
		break;
	case 0x07: /* bgtz */
		if (rt)
			return -ENOTSUP;
		kind = EMUL_BGTZ;
		break;
	case 0x01: /* REGIMM: bltz, bgez only */
		if (rt > 1)
			return -ENOTSUP;
		kind = rt ? EMUL_BGEZ : EMUL_BLTZ;
		rt = 0;
		break;
	default:
		return -ENOTSUP;
	}
	em->kind = kind | rs << 8 | rt << 16;
	em->target = rel;
	em->imm = next;
	return 0;
}

/*
 * Slot: the instruction, then the address of the next one built in $at and `jr $at` + nop.
 * $at is dead at a function's first instruction (the assembler's temporary: no argument, not
 * preserved across calls), so nothing else changes and there is no second stop:
 *	lui at,A; ori at,at,B; dsll at,at,16; ori at,at,C; dsll at,at,16; ori at,at,D
 * leaves A:B:C:D in at (lui's sign extension is shifted out), then `jalr zero,at` (the
 * encoding of `jr at` valid on both R2 and R6) and a nop in its delay slot. 36 bytes.
 */
static size_t encode_jump_back(uint8_t *p, uint64_t to)
{
	static const uint32_t lui_at = 0x3c010000, ori_at = 0x34210000, dsll_at_16 = 0x00010c38;
	const uint32_t seq[] = {
		lui_at | (uint32_t)(to >> 48 & 0xffff),
		ori_at | (uint32_t)(to >> 32 & 0xffff),
		dsll_at_16,
		ori_at | (uint32_t)(to >> 16 & 0xffff),
		dsll_at_16,
		ori_at | (uint32_t)(to & 0xffff),
		0x00200009, /* jalr zero,at */
		INSN_NOP,
	};

	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		wr_insn(p + 4 * i, seq[i]);
	return sizeof(seq);
}

static int mips_displace(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
			 uint8_t *slot, struct arch_emul *em)
{
	uint32_t w;
	int dest;

	(void)slot_addr; /* nothing is PC-relative in what runs out of line */
	if (len < 4 || (addr & 3))
		return -ENOTSUP; /* odd addresses are MIPS16/microMIPS code */
	w = rd_insn(insn);
	if (w == INSN_NOP) {
		em->kind = EMUL_JUMP;
		em->target = addr + 4;
		em->imm = 0;
		return STEP_EMULATE;
	}
	dest = plain_dest(w);
	if (dest >= 0) {
		if (dest == M_AT)
			return -ENOTSUP; /* the jump back would clobber its result */
		for (size_t i = 0; i < ARCH_SLOT_SIZE; i += 4)
			wr_insn(slot + i, INSN_BREAK);
		wr_insn(slot, w);
		encode_jump_back(slot + 4, addr + 4);
		return STEP_XOL;
	}
	if (len < 8)
		return -ENOTSUP; /* a branch needs its delay slot */
	if (decode_branch(addr, w, rd_insn(insn + 4), em) < 0)
		return -ENOTSUP;
	return STEP_EMULATE;
}

/* j to `to` from a j whose delay slot is at `delay` (the same 256 MiB region), or 0. */
static uint32_t j_to(uint64_t delay, uint64_t to)
{
	if ((delay & ~(uint64_t)0x0fffffff) != (to & ~(uint64_t)0x0fffffff) || (to & 3))
		return 0;
	return 0x08000000u | (uint32_t)((to >> 2) & 0x03ffffff);
}

/*
 * The guard's slot for an emulated branch (arch.h: emul_slot), run in the process: the
 * branch retargeted to +16 with its nop delay slot, then `j next; nop` and `j target; nop`;
 * jr as it is. What is emulated has a nop in its delay slot (decode_branch), so only the
 * branch moves. The rest of the slot is break.
 */
static int mips_emul_slot(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
			  uint8_t *slot)
{
	struct arch_emul em;
	uint32_t w, jn, jt;

	if (len < 8 || (addr & 3) || decode_branch(addr, w = rd_insn(insn), rd_insn(insn + 4), &em))
		return -ENOTSUP;
	for (size_t i = 0; i < ARCH_SLOT_SIZE; i += 4)
		wr_insn(slot + i, INSN_BREAK);
	switch (EMUL_OP(em.kind)) {
	case EMUL_JUMP: /* j: the guard goes straight to the target */
		return -ENOTSUP;
	case EMUL_JR:
		wr_insn(slot, w);
		wr_insn(slot + 4, INSN_NOP);
		return 0;
	}
	jn = j_to(slot_addr + 12, em.imm);
	jt = j_to(slot_addr + 20, em.target);
	if (!jn || !jt)
		return -ERANGE;
	wr_insn(slot, (w & ~0xffffu) | 3); /* to slot + 4 + 3 * 4 */
	wr_insn(slot + 4, INSN_NOP);
	wr_insn(slot + 8, jn);
	wr_insn(slot + 12, INSN_NOP);
	wr_insn(slot + 16, jt);
	wr_insn(slot + 20, INSN_NOP);
	return 0;
}

static int mips_emulate(const struct arch_emul *em, struct arch_regs *r)
{
	int64_t s = (int64_t)gpr(r, EMUL_RS(em->kind));
	bool taken;

	switch (EMUL_OP(em->kind)) {
	case EMUL_JUMP:
		r->w64[M_EPC] = em->target;
		return 0;
	case EMUL_JR:
		r->w64[M_EPC] = (uint64_t)s;
		return 0;
	case EMUL_BEQ: taken = (uint64_t)s == gpr(r, EMUL_RT(em->kind)); break;
	case EMUL_BNE: taken = (uint64_t)s != gpr(r, EMUL_RT(em->kind)); break;
	case EMUL_BLEZ: taken = s <= 0; break;
	case EMUL_BGTZ: taken = s > 0; break;
	case EMUL_BLTZ: taken = s < 0; break;
	case EMUL_BGEZ: taken = s >= 0; break;
	default:
		return -EINVAL;
	}
	/* the delay slot held a nop: nothing else to do */
	r->w64[M_EPC] = taken ? em->target : em->imm;
	return 0;
}

/* One break: calls return to it with `jr ra`, never through a delay slot of ours. */
static size_t mips_tramp_encode(uint8_t *buf)
{
	wr_insn(buf, INSN_BREAK);
	return 4;
}

static uint64_t mips_tramp_for(uint64_t base, uint64_t ret)
{
	(void)ret;
	return base;
}

/*
 * Logging return trampoline (see arch.h). The reservation is an ll/sc loop (with the sync
 * before ll that gas puts there for Loongson 3); t0-t3 are borrowed and put back; bal
 * reads the PC into ra to reach the two address literals after the code, and ra is then
 * reloaded with the caller's address from the two words heaptrace wrote below sp.
 */
static size_t mips_logtramp_encode(uint8_t *buf, uint64_t at, uint64_t head, uint64_t entries,
				   uint32_t mask)
{
	static const uint32_t code[] = {
		0x67bdffe0, /* daddiu sp, sp, -32 */
		0xffac0000, /* sd t0, 0(sp) */
		0xffad0008, /* sd t1, 8(sp) */
		0xffae0010, /* sd t2, 16(sp) */
		0xffaf0018, /* sd t3, 24(sp) */
		0x04110001, /* bal 1f */
		0x00000000, /* nop */
		0xdfec0064, /* 1: ld t0, 100(ra): head */
		0x0000000f, /* 2: sync */
		0xc18d0000, /* ll t1, 0(t0) */
		0x25ae0001, /* addiu t2, t1, 1: seq */
		0x01c07825, /* move t3, t2 */
		0xe18f0000, /* sc t3, 0(t0) */
		0x11e0fffa, /* beqz t3, 2b */
		0x00000000, /* nop */
		0x31ad0000, /* andi t1, t1, mask (set below) */
		0x000d6938, /* dsll t1, t1, 4 */
		0xdfec006c, /* ld t0, 108(ra): entries */
		0x018d602d, /* daddu t0, t0, t1 */
		0xfd820008, /* sd v0, 8(t0) */
		0x9faf0020, /* lwu t3, 32(sp): the cookie */
		0xad8f0004, /* sw t3, 4(t0) */
		0x0000000f, /* sync: the entry before its seq */
		0xad8e0000, /* sw t2, 0(t0) */
		0xdfac0000, /* ld t0, 0(sp) */
		0xdfad0008, /* ld t1, 8(sp) */
		0xdfae0010, /* ld t2, 16(sp) */
		0xdfaf0018, /* ld t3, 24(sp) */
		0xdfbf0028, /* ld ra, 40(sp): the caller's address */
		0x03e00008, /* jr ra */
		0x67bd0030, /* daddiu sp, sp, 48 (delay slot) */
		0x00000000, /* nop: the literals are 8-byte aligned */
	};
	size_t n = sizeof(code);

	(void)at;
	for (size_t i = 0; i < sizeof(code) / 4; i++)
		wr_insn(buf + 4 * i, code[i]);
	wr_insn(buf + 60, code[15] | (mask & 0xffff));
	wr_insn(buf + n, (uint32_t)head); /* little-endian doublewords */
	wr_insn(buf + n + 4, (uint32_t)(head >> 32));
	wr_insn(buf + n + 8, (uint32_t)entries);
	wr_insn(buf + n + 12, (uint32_t)(entries >> 32));
	return n + 16;
}

static const uint8_t mips_syscall_insn[] = { 0x0c, 0x00, 0x00, 0x00 }; /* syscall */

/*
 * n64: number in v0, arguments in a0-a5 ($4-$9). The kernel restarts an interrupted call
 * when a signal stop is left with the dump's slot 0 nonzero and v0 = -ERESTART* (do_signal in
 * arch/mips/kernel/signal.c); clearing slot 0 keeps that logic off the injected call, as
 * orig_rax = -1 does on x86_64. (With NT_PRSTATUS the slot is not writable; the kernel then
 * leaves the call alone all the same, since v0 holds a syscall number, not -ERESTART*.)
 */
static void mips_syscall_setup(struct arch_regs *r, uint64_t insn_addr, long nr,
			       const uint64_t a[6])
{
	r->w64[M_EPC] = insn_addr;
	r->w64[M_V0] = (uint64_t)nr;
	r->w64[M_RESTART_NR] = 0;
	for (unsigned i = 0; i < 6; i++)
		r->w64[M_A0 + i] = a[i];
}

/* v0 holds the value, or the positive errno when a3 is nonzero. */
static int64_t mips_syscall_result(const struct arch_regs *r)
{
	return r->w64[M_A3] ? -(int64_t)r->w64[M_V0] : (int64_t)r->w64[M_V0];
}

/*
 * After an error return the kernel leaves v0 = errno (positive), a3 = 1, the syscall number
 * in slot 0 and the caller's a3 in slot 26 (k0's), and EPC past the syscall instruction
 * (scall64-n64.S). Without a handler, do_signal restarts -ERESTARTSYS/-ERESTARTNOINTR/
 * -ERESTARTNOHAND by v0 = slot 0, a3 = slot 26, EPC -= 4, and -ERESTART_RESTARTBLOCK the same
 * way with v0 = __NR_restart_syscall; then it clears slot 0. Done here from the snapshot.
 * Limitation: NT_PRSTATUS reads slots 0 and 26 as zero (mips_dump_regs64), so a snapshot taken
 * with PTRACE_GETREGSET never shows an interrupted call and nothing is restarted; regs.c uses
 * PTRACE_GETREGS, which copies all 32 slots, for this reason.
 */
static bool mips_syscall_restart(struct arch_regs *r)
{
	uint64_t nr = r->w64[M_RESTART_NR];

	if (!nr)
		return false;
	switch (r->w64[M_V0]) {
	case ERESTARTSYS:
	case ERESTARTNOINTR:
	case ERESTARTNOHAND:
		break;
	case ERESTART_RESTARTBLOCK:
		nr = NR_N64(213); /* restart_syscall */
		break;
	default:
		return false;
	}
	r->w64[M_V0] = nr;
	r->w64[M_A3] = r->w64[M_K0];
	r->w64[M_EPC] -= 4;
	r->w64[M_RESTART_NR] = 0;
	return true;
}

/* The call is two instructions before its return address (the delay slot between): jal,
 * bal/bgezal (regimm rt 0x11), jalr (special funct 9, any hint). */
static bool mips_after_call(const uint8_t *code, uint64_t ret, uint64_t *target)
{
	uint32_t i;

	memcpy(&i, code, 4);
	*target = 0;
	if (i >> 26 == 3) {
		*target = ((ret - 4) & ~0x0fffffffull) | (uint64_t)(i & 0x03ffffffu) << 2;
		return true;
	}
	if ((i & 0xfc1f0000u) == 0x04110000u) {
		/* the offset in words, signed: multiplied, as a negative one may not be shifted */
		*target = ret - 4 + (uint64_t)((int64_t)(int16_t)(i & 0xffff) * 4);
		return true;
	}
	return (i & 0xfc1f003fu) == 0x00000009u;
}

/* ---- entry stubs (stubs.h) ---- */

#define M_TLS 48 /* the thread pointer's slot in a snapshot: not in the dump (regs.c) */
#define INSN_J 0x08000000u /* j target: the 256 MiB region of its delay slot */
#define INSN_ORI_AT 0x34010000u /* ori at, zero, imm16 */

/* j from pc to target, or 0 when target lies outside the 256 MiB region of pc + 4. */
static uint32_t mips_j_to(uint64_t pc, uint64_t target)
{
	if ((target & 3) || (((pc + 4) ^ target) & ~(uint64_t)0x0fffffff))
		return 0;
	return INSN_J | (uint32_t)(target >> 2 & 0x03ffffff);
}

/*
 * An instruction that reads no PC and transfers no control, so it runs the same anywhere:
 * plain_dest's integer operations, the loads and stores (base register + offset: glibc's
 * `sd gp, 48(sp)`), and nop. Traps are allowed here, unlike out of line: nothing is single-
 * stepped, and a fault shows the relocated address as any code's would.
 */
static bool mips_moves(uint32_t w)
{
	switch (w >> 26) {
	case 0x20: case 0x21: case 0x23: case 0x24: case 0x25: case 0x27: /* lb lh lw lbu lhu lwu */
	case 0x37: /* ld */
	case 0x28: case 0x29: case 0x2b: case 0x3f: /* sb sh sw sd */
		return true;
	}
	return w == INSN_NOP || plain_dest(w) >= 0;
}

/* A conditional branch with a 16-bit offset and an ordinary delay slot (not likely, not
 * linking): beq, bne, blez, bgtz, bltz, bgez. */
static bool mips_cond_branch(uint32_t w)
{
	unsigned op = w >> 26, rt = (w >> 16) & 31;

	return op == 0x04 || op == 0x05 || ((op == 0x06 || op == 0x07) && !rt) ||
	       (op == 0x01 && rt <= 1);
}

static void put_insns(uint8_t *buf, const uint32_t *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		wr_insn(buf + 4 * i, w[i]);
}

/*
 * Entry stubs (arch.h): the patch is `j` and its delay slot, so the first two instructions
 * move, relocated to run at at, then `j addr + 8` (the stub page lies in the function's
 * 256 MiB region: stubs.c maps it there, or entry_branch refuses). Two instructions that read
 * no PC are copied (glibc's `daddiu sp, sp, -64; sd gp, 48(sp)`). A conditional branch moves
 * with its delay slot, its offset pointed past the `j` back at a `j` to its own target
 * (glibc's free: `beqz a0, ...; nop`); a `j` moves re-aimed. $t9 and $gp are never touched:
 * an n64 function derives $gp from $t9 = its own address, and the stub keeps $t9. Anything
 * else (jal, bal, likely branches, a branch second...) is refused: that function keeps its
 * breakpoint.
 */
static int mips_entry_relocate(uint64_t addr, const uint8_t *insn, size_t len, size_t need,
			       uint64_t at, uint8_t *buf, size_t *covered)
{
	uint32_t w0, w1, out[6];
	unsigned n;

	if (len < 8 || need > 8 || (addr & 3) || (at & 3))
		return -ENOTSUP;
	w0 = rd_insn(insn);
	w1 = rd_insn(insn + 4);
	if (!mips_moves(w1))
		return -ENOTSUP;
	if (mips_moves(w0)) {
		out[0] = w0, out[1] = w1;
		out[2] = mips_j_to(at + 8, addr + 8), out[3] = INSN_NOP;
		n = 4;
	} else if (w0 >> 26 == 0x02) { /* j: the same target from the stub's region */
		out[0] = mips_j_to(at, ((addr + 4) & ~(uint64_t)0x0fffffff) |
					       (uint64_t)(w0 & 0x03ffffff) << 2);
		out[1] = w1;
		n = 2;
	} else if (mips_cond_branch(w0)) {
		uint64_t target = addr + 4 + (uint64_t)((int64_t)(int16_t)(w0 & 0xffff) * 4);

		out[0] = (w0 & 0xffff0000u) | 3; /* taken: to out[4] */
		out[1] = w1;
		out[2] = mips_j_to(at + 8, addr + 8), out[3] = INSN_NOP;
		out[4] = mips_j_to(at + 16, target), out[5] = INSN_NOP;
		if (!out[4])
			return -ERANGE;
		n = 6;
	} else {
		return -ENOTSUP;
	}
	if (!out[n == 2 ? 0 : 2])
		return -ERANGE;
	put_insns(buf, out, n);
	*covered = 8;
	return (int)(4 * n);
}

/* The branch over an entry: `j to` and a nop in its delay slot, within addr's 256 MiB region. */
static int mips_entry_branch(uint64_t addr, uint64_t to, uint8_t *buf)
{
	uint32_t w[2] = { mips_j_to(addr, to), INSN_NOP };

	if (!w[0])
		return -ERANGE;
	put_insns(buf, w, 2);
	return 8;
}

/* A function's thunk: `j common` with `ori at, zero, word` in its delay slot ($at, the
 * assembler's temporary, is free at a function's first instruction). */
static size_t mips_entry_thunk(uint8_t *buf, uint64_t at, uint32_t word, uint64_t common)
{
	uint32_t w[2] = { mips_j_to(at, common), INSN_ORI_AT | (word & 0xffff) };

	put_insns(buf, w, 2);
	return 8;
}

/* The thread pointer is not in the dump: regs.c reads it (PTRACE_GET_THREAD_AREA) here. */
static uint64_t mips_get_tls(const struct arch_regs *r)
{
	return r->w64[M_TLS];
}

/* Where an instruction at pc may go, other than on: its branch or jump target (1), an
 * indirect jump (2: only `jr ra`, a return, and `jr t9`/`jalr t9`, calls and tail calls by
 * the n64 convention, are known to leave the function), or nothing (0). */
static int mips_goes(uint64_t pc, uint32_t w, uint64_t *target)
{
	unsigned op = w >> 26, rs = (w >> 21) & 31, rt = (w >> 16) & 31;
	uint64_t rel = pc + 4 + (uint64_t)((int64_t)(int16_t)(w & 0xffff) * 4);

	switch (op) {
	case 0x00: /* jr, jalr */
		if ((w & 0x3f) != 0x08 && (w & 0x3f) != 0x09)
			return 0;
		return rs == 31 || rs == 25 ? 0 : 2;
	case 0x01: /* REGIMM: bltz bgez bltzl bgezl, the linking forms */
		if (rt & 0x0c)
			return 0;
		*target = rel;
		return 1;
	case 0x02: case 0x03: /* j, jal */
		*target = ((pc + 4) & ~(uint64_t)0x0fffffff) | (uint64_t)(w & 0x03ffffff) << 2;
		return 1;
	case 0x04: case 0x05: case 0x06: case 0x07: /* beq bne blez bgtz */
	case 0x14: case 0x15: case 0x16: case 0x17: /* their likely forms */
		*target = rel;
		return 1;
	case 0x11: case 0x12: /* bc1*, bc2* */
		if (rs != 8)
			return 0;
		*target = rel;
		return 1;
	}
	return 0;
}

/* The whole-function check (arch.h): no branch of the function into (value, value + len),
 * and no indirect jump but returns and calls. */
static int mips_entry_scan(uint64_t value, const uint8_t *code, size_t size, size_t len)
{
	for (size_t i = 0; i + 4 <= size; i += 4) {
		uint64_t target = 0;
		int g = mips_goes(value + i, rd_insn(code + i), &target);

		if (g == 2 || (g == 1 && target > value && target < value + len))
			return -EXDEV;
	}
	return 0;
}

/* The kernel dumps no UserLocal register in a core. */
static uint64_t mips_core_tp(uint32_t type, const uint8_t *desc, size_t len)
{
	(void)type, (void)desc, (void)len;
	return 0;
}

/* glibc sets the thread pointer TLS_TCB_OFFSET (0x7000) past the thread control block, which
 * the static TLS blocks follow (TLS variant I). */
static uint64_t mips_tls_window(uint64_t tp, uint64_t len)
{
	(void)len;
	return tp - 0x7000;
}

const struct arch_ops arch_mips64_ops = {
	.name = "mips64",
	.elf_machine = EM_MIPS,
	.elf_class = ELFCLASS64,
	.audit_arch = AUDIT_ARCH_MIPSEL64, /* n64 */
	.word_size = 8,
	.reg_args = 8,
	.stack_args_off = 0, /* n64 keeps no home area for a0-a7: the ninth at [sp] */
	.map_anonymous = 0x800,
	.insn_align = 4,
	.bp_encode = mips_bp_encode,
	.code_addr = mips_code_addr,
	.after_call = mips_after_call,
	.dwarf_regs = 32,
	.dwarf_sp = 29,
	.fp_reg = -1,
	.fp_sp_off = 0,
	.bp_addr_from_pc = mips_bp_addr_from_pc,
	.get_pc = mips_get_pc,
	.set_pc = mips_set_pc,
	.get_sp = mips_get_sp,
	.set_sp = mips_set_sp,
	.get_arg = mips_get_arg,
	.get_retval = mips_get_retval,
	.set_retval = mips_set_retval,
	.ret_on_stack = false,
	.get_ret_reg = mips_get_ret_reg,
	.set_ret_reg = mips_set_ret_reg,
	.ret_sp_adjust = 0,
	.displace = mips_displace,
	.emulate = mips_emulate,
	.tramp_encode = mips_tramp_encode,
	.tramp_for = mips_tramp_for,
	.logtramp_encode = mips_logtramp_encode,
	.emul_slot = mips_emul_slot,
	.nr_mprotect = NR_N64(10),
	.syscall_insn = mips_syscall_insn,
	.syscall_insn_len = sizeof(mips_syscall_insn),
	.nr_mmap = NR_N64(9),
	.nr_munmap = NR_N64(11),
	.syscall_setup = mips_syscall_setup,
	.syscall_result = mips_syscall_result,
	.syscall_restart = mips_syscall_restart,
	.entry_relocate = mips_entry_relocate,
	.entry_branch = mips_entry_branch,
	.entry_thunk = mips_entry_thunk,
	.get_tls = mips_get_tls,
	.entry_scan = mips_entry_scan,
	.core_tp = mips_core_tp,
	.tls_window = mips_tls_window,
};
