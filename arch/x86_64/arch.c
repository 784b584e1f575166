// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86_64: pure knowledge. Register indexes follow struct user_regs_struct, which is what
 * PTRACE_GETREGSET(NT_PRSTATUS) returns; it is spelled out here so this file builds anywhere.
 */
#include <elf.h>
#include <errno.h>
#include <linux/audit.h>
#include <string.h>

#include "arch/arch.h"
#include "decoder.h"

enum {
	X_R15, X_R14, X_R13, X_R12, X_RBP, X_RBX, X_R11, X_R10, X_R9, X_R8, X_RAX, X_RCX,
	X_RDX, X_RSI, X_RDI, X_ORIG_RAX, X_RIP, X_CS, X_EFLAGS, X_RSP, X_SS, X_FS_BASE,
};

enum { EMUL_JUMP = 1 };

static size_t x86_bp_encode(uint64_t addr, uint8_t *buf)
{
	(void)addr;
	buf[0] = 0xcc; /* int3 */
	return 1;
}

static uint64_t x86_code_addr(uint64_t sym)
{
	return sym;
}

/* int3 traps with rip after it. */
static uint64_t x86_bp_addr_from_pc(uint64_t pc)
{
	return pc - 1;
}

static uint64_t x86_get_pc(const struct arch_regs *r)
{
	return r->w64[X_RIP];
}

static void x86_set_pc(struct arch_regs *r, uint64_t pc)
{
	r->w64[X_RIP] = pc;
}

static uint64_t x86_get_sp(const struct arch_regs *r)
{
	return r->w64[X_RSP];
}

static void x86_set_sp(struct arch_regs *r, uint64_t sp)
{
	r->w64[X_RSP] = sp;
}

static uint64_t x86_get_arg(const struct arch_regs *r, unsigned n)
{
	static const int slot[] = { X_RDI, X_RSI, X_RDX, X_RCX, X_R8, X_R9 };

	return n < 6 ? r->w64[slot[n]] : 0;
}

static uint64_t x86_get_retval(const struct arch_regs *r)
{
	return r->w64[X_RAX];
}

static void x86_set_retval(struct arch_regs *r, uint64_t v)
{
	r->w64[X_RAX] = v;
}

static uint64_t x86_get_ret_reg(const struct arch_regs *r)
{
	(void)r;
	return 0; /* the return address is on the stack */
}

static void x86_set_ret_reg(struct arch_regs *r, uint64_t v)
{
	(void)r;
	(void)v;
}

/*
 * A small length decoder for the instructions that start functions: legacy prefixes, REX,
 * one- and two-byte opcodes with ModRM, SIB, displacement and immediate. Anything it does not
 * know is refused rather than guessed, and never falls back to removing the breakpoint to step
 * (which loses other threads' calls).
 */
struct x86_insn {
	size_t len;
	size_t disp_off; /* offset of a RIP-relative disp32, 0 if none */
	int opcode; /* 0x0fXX for two-byte opcodes */
	int rel_size; /* bytes of a relative branch target (jmp rel8/rel32) */
};

enum { M = 1, I8 = 2, I32 = 4, IV = 8, BAD = 16, REL8 = 32, REL32 = 64, I16 = 128 };

static int op1_flags(uint8_t op, uint8_t reg)
{
	if (op < 0x40) {
		unsigned lo = op & 7;

		if ((op & 0xf0) <= 0x30 && lo <= 3)
			return M; /* ALU r/m forms */
		if (lo == 4)
			return I8;
		if (lo == 5)
			return IV;
		return BAD; /* segment pushes, prefixes, BCD: not in 64-bit function prologues */
	}
	if (op >= 0x50 && op <= 0x5f)
		return 0; /* push/pop r64 */
	if (op >= 0x91 && op <= 0x97)
		return 0; /* xchg */
	if (op >= 0xb0 && op <= 0xb7)
		return I8;
	if (op >= 0xb8 && op <= 0xbf)
		return IV; /* imm64 with REX.W, handled by the caller */
	switch (op) {
	case 0x63: case 0x84: case 0x85: case 0x86: case 0x87:
	case 0x88: case 0x89: case 0x8a: case 0x8b: case 0x8d:
		return M;
	case 0x68: return IV;
	case 0x6a: return I8;
	case 0x69: return M | IV;
	case 0x6b: case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6:
		return M | I8;
	case 0x81: case 0xc7: return M | IV;
	case 0x90: case 0x98: case 0x99: case 0xc3: case 0xc9:
		return 0;
	case 0xd1: case 0xd3: return M;
	case 0xe9: return REL32;
	case 0xeb: return REL8;
	case 0xf6: return reg == 0 ? M | I8 : M;
	case 0xf7: return reg == 0 ? M | IV : M;
	case 0xfe: return M;
	case 0xff: return (reg == 0 || reg == 1 || reg == 4 || reg == 6) ? M : BAD;
	}
	return BAD; /* jcc, call, loop, int, string ops... */
}

static int op2_flags(uint8_t op)
{
	if (op >= 0x40 && op <= 0x4f)
		return M; /* cmovcc */
	if (op >= 0x90 && op <= 0x9f)
		return M; /* setcc */
	switch (op) {
	case 0x10: case 0x11: case 0x1e: case 0x1f: case 0x28: case 0x29: case 0x6f: case 0x7f:
	case 0xaf: case 0xb6: case 0xb7: case 0xbe: case 0xbf: case 0xd6: case 0xef:
		return M;
	}
	return BAD;
}

/* Return 0 and fill *d, or -ENOTSUP. */
static int x86_decode(const uint8_t *p, size_t n, struct x86_insn *d)
{
	size_t i = 0;
	bool opsize16 = false, rexw = false;
	int flags;
	uint8_t op;

	memset(d, 0, sizeof(*d));
	while (i < n && i < 4) {
		uint8_t b = p[i];

		if (b == 0x66)
			opsize16 = true;
		else if (!(b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x3e || b == 0x26 ||
			   b == 0x36 || b == 0x64 || b == 0x65))
			break;
		i++;
	}
	if (i < n && (p[i] & 0xf0) == 0x40) {
		rexw = p[i] & 8;
		i++;
	}
	if (i >= n)
		return -ENOTSUP;
	op = p[i++];
	if (op == 0x0f) {
		if (i >= n)
			return -ENOTSUP;
		op = p[i++];
		d->opcode = 0x0f00 | op;
		flags = op2_flags(op);
	} else {
		d->opcode = op;
		flags = op1_flags(op, i < n ? (p[i] >> 3) & 7 : 0);
	}
	if (flags & BAD)
		return -ENOTSUP;
	if (flags & M) {
		uint8_t modrm, mod, rm;

		if (i >= n)
			return -ENOTSUP;
		modrm = p[i++];
		mod = modrm >> 6;
		rm = modrm & 7;
		if (mod != 3 && rm == 4) {
			if (i >= n)
				return -ENOTSUP;
			if (mod == 0 && (p[i] & 7) == 5)
				mod = 2; /* SIB with no base: disp32 */
			i++;
		} else if (mod == 0 && rm == 5) {
			d->disp_off = i; /* RIP-relative */
			mod = 2;
		}
		i += mod == 1 ? 1 : mod == 2 ? 4 : 0;
		/* re-read the reg field for opcodes whose immediate depends on it */
		if (d->opcode == 0xf6 || d->opcode == 0xf7)
			flags = op1_flags(d->opcode, (modrm >> 3) & 7);
	}
	if (flags & I8)
		i += 1;
	if (flags & IV)
		i += (op >= 0xb8 && op <= 0xbf && d->opcode < 0x100 && rexw) ? 8 : opsize16 ? 2 : 4;
	if (flags & REL8) {
		d->rel_size = 1;
		i += 1;
	}
	if (flags & REL32) {
		d->rel_size = 4;
		i += 4;
	}
	if (i > n || i > 15)
		return -ENOTSUP;
	d->len = i;
	return 0;
}

static int32_t rd32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * A RIP-relative operand the slot cannot reach with a disp32 (the scratch page lies near the
 * libraries; an executable's code may be terabytes away): the copy addresses disp32(%rbx)
 * instead, %rbx being pushed and set to the address after the original instruction for it,
 * and popped after. Every breakpoint is at a function's first instruction (breakpoint.h's
 * kinds), where the stack below rsp is free. %rcx is the base when the reg field names rbx or
 * bh. Refused (-ERANGE): what moves rsp or reads the base itself (push, pop, call and jmp
 * through memory, cmpxchg8b/16b, a shift by cl) and rsp in the reg field. Fill slot with the
 * code before the jump back and return its length.
 */
static int x86_displace_far(uint64_t next, const uint8_t *insn, const struct x86_insn *d,
			    uint8_t *slot)
{
	size_t modrm = d->disp_off - 1, op = modrm - (d->opcode >= 0x100 ? 2 : 1), n = 0;
	uint8_t reg = (insn[modrm] >> 3) & 7, base = 3; /* rbx */

	if ((d->opcode == 0xff && reg >= 2) || d->opcode == 0x8f || d->opcode == 0x0fc7 ||
	    reg == 4)
		return -ERANGE;
	if (reg == 3 || reg == 7) {
		if (d->opcode == 0xd2 || d->opcode == 0xd3 || d->opcode == 0x0fa5 ||
		    d->opcode == 0x0fad)
			return -ERANGE;
		base = 1; /* rcx */
	}
	slot[n++] = 0x50 + base; /* push */
	slot[n++] = 0x48; /* movabs $next, base */
	slot[n++] = 0xb8 + base;
	memcpy(slot + n, &next, 8);
	n += 8;
	memcpy(slot + n, insn, d->len);
	if (op > 0 && (insn[op - 1] & 0xf0) == 0x40)
		slot[n + op - 1] &= ~1; /* REX.B clear: the base is a low register */
	slot[n + modrm] = 0x80 | (reg << 3) | base; /* mod 10: disp32(base) */
	n += d->len;
	slot[n++] = 0x58 + base; /* pop */
	return n;
}

static int x86_displace(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
			uint8_t *slot, struct arch_emul *em)
{
	struct x86_insn d;
	uint64_t next;
	size_t code;
	int ret = x86_decode(insn, len, &d);

	if (ret < 0)
		return ret;
	next = addr + d.len;
	if (d.rel_size) { /* jmp rel8/rel32: the new PC is known now */
		int64_t rel = d.rel_size == 1 ? (int8_t)insn[d.len - 1] : rd32(insn + d.len - 4);

		em->kind = EMUL_JUMP;
		em->target = next + rel;
		return STEP_EMULATE;
	}
	if (d.opcode == 0x0f1e && len >= 4 && insn[0] == 0xf3 && insn[3] == 0xfa) {
		em->kind = EMUL_JUMP; /* endbr64: nothing to do but move on */
		em->target = next;
		return STEP_EMULATE;
	}
	em->target = next;
	memset(slot, 0xcc, ARCH_SLOT_SIZE);
	memcpy(slot, insn, d.len);
	code = d.len;
	if (d.disp_off) {
		int64_t target = (int64_t)next + rd32(insn + d.disp_off);
		int64_t ndisp = target - (int64_t)(slot_addr + d.len);
		int32_t n32 = (int32_t)ndisp;

		if (ndisp != n32) {
			ret = x86_displace_far(next, insn, &d, slot);
			if (ret < 0)
				return ret;
			code = ret;
		} else {
			memcpy(slot + d.disp_off, &n32, 4);
		}
	}
	/* jmp *0(%rip); .quad next */
	slot[code] = 0xff;
	slot[code + 1] = 0x25;
	memset(slot + code + 2, 0, 4);
	memcpy(slot + code + 6, &next, 8);
	return STEP_XOL;
}

static int x86_emulate(const struct arch_emul *em, struct arch_regs *r)
{
	if (em->kind != EMUL_JUMP)
		return -EINVAL;
	r->w64[X_RIP] = em->target;
	return 0;
}

static size_t x86_tramp_encode(uint8_t *buf)
{
	buf[0] = 0xcc;
	return 1;
}

static uint64_t x86_tramp_for(uint64_t base, uint64_t ret)
{
	(void)ret;
	return base;
}

/* rel32 of a RIP-relative operand: target minus the end of the instruction. */
static void put_rel32(uint8_t *at, uint64_t insn_end, uint64_t target)
{
	int32_t rel = (int32_t)(target - insn_end);

	memcpy(at, &rel, 4);
}

/*
 * Logging return trampoline (see arch.h). rcx, rdx and r11 are saved although the ABI lets
 * a callee clobber them: a program's own allocator may be called by code built with
 * interprocedural register allocation, which relies on the registers that allocator does
 * not touch. Flags are clobbered, as by any call. The pushes land below the caller's sp,
 * where the call itself already wrote.
 */
static size_t x86_logtramp_encode(uint8_t *buf, uint64_t at, uint64_t head, uint64_t entries,
				  uint32_t mask)
{
	static const uint8_t code[] = {
		0x51, /* push %rcx */
		0x52, /* push %rdx */
		0x41, 0x53, /* push %r11 */
		0x41, 0xbb, 0x01, 0x00, 0x00, 0x00, /* mov $1,%r11d */
		0xf0, 0x44, 0x0f, 0xc1, 0x1d, 0, 0, 0, 0, /* lock xadd %r11d,head(%rip) */
		0x41, 0x8d, 0x4b, 0x01, /* lea 1(%r11),%ecx: seq */
		0x41, 0x81, 0xe3, 0, 0, 0, 0, /* and $mask,%r11d */
		0x41, 0xc1, 0xe3, 0x04, /* shl $4,%r11d */
		0x48, 0x8d, 0x15, 0, 0, 0, 0, /* lea entries(%rip),%rdx */
		0x4c, 0x01, 0xda, /* add %r11,%rdx */
		0x48, 0x89, 0x42, 0x08, /* mov %rax,8(%rdx) */
		0x44, 0x8b, 0x5c, 0x24, 0x18, /* mov 24(%rsp),%r11d: the cookie */
		0x44, 0x89, 0x5a, 0x04, /* mov %r11d,4(%rdx) */
		0x89, 0x0a, /* mov %ecx,(%rdx): seq last, the entry is complete */
		0x41, 0x5b, /* pop %r11 */
		0x5a, /* pop %rdx */
		0x59, /* pop %rcx */
		/* past the cookie and the caller's return address, then to that address through
		 * the red zone: a ret would return once more than there were calls, and the return
		 * predictor would miss every return above */
		0x48, 0x8d, 0x64, 0x24, 0x10, /* lea 16(%rsp),%rsp */
		0xff, 0x64, 0x24, 0xf8, /* jmp *-8(%rsp) */
	};

	memcpy(buf, code, sizeof(code));
	put_rel32(buf + 15, at + 19, head);
	memcpy(buf + 26, &mask, 4);
	put_rel32(buf + 37, at + 41, entries);
	return sizeof(code);
}

/*
 * rax carries the cookie: at the entry of a function that is not variadic it holds nothing
 * (it counts vector registers for variadic calls only), and it is the return value after.
 */
static size_t x86_logentry_encode(uint8_t *buf, uint64_t at, uint64_t logtramp, uint64_t cont)
{
	static const uint8_t code[] = {
		0x50, /* push %rax: the cookie */
		0x48, 0x8d, 0x05, 0, 0, 0, 0, /* lea logtramp(%rip),%rax */
		0x50, /* push %rax: the return address the function will see */
		0xe9, 0, 0, 0, 0, /* jmp cont */
	};

	memcpy(buf, code, sizeof(code));
	put_rel32(buf + 4, at + 8, logtramp);
	put_rel32(buf + 10, at + 14, cont);
	return sizeof(code);
}

static void x86_set_cookie(struct arch_regs *r, uint32_t cookie)
{
	r->w64[X_RAX] = cookie;
}

/*
 * Entry stubs (arch.h): the first instructions of a function, whole, covering at least need
 * bytes, relocated to run at address at: RIP-relative operands re-aimed, a jcc or jmp
 * re-encoded with a 32-bit displacement to its target; then a jump back to the first byte
 * after them. A call, a return or an instruction the decoder does not know is refused, and so
 * is an unconditional jump before need bytes (the bytes after it would be overwritten while
 * still reachable as a branch target).
 */
static int x86_entry_relocate(uint64_t addr, const uint8_t *insn, size_t len, size_t need,
			      uint64_t at, uint8_t *buf, size_t *covered)
{
	size_t off = 0, out = 0;

	while (off < need) {
		const uint8_t *p = insn + off;
		uint64_t pc = addr + off, target;
		size_t n;
		bool cond = false;

		if (off >= len)
			return -ENOTSUP;
		if (p[0] >= 0x70 && p[0] <= 0x7f && off + 2 <= len) { /* jcc rel8 */
			n = 2;
			target = pc + n + (int8_t)p[1];
			cond = true;
		} else if (p[0] == 0x0f && off + 6 <= len && p[1] >= 0x80 && p[1] <= 0x8f) {
			n = 6; /* jcc rel32 */
			target = pc + n + rd32(p + 2);
			cond = true;
		} else {
			struct x86_insn d;

			if (x86_decode(p, len - off, &d) || d.opcode == 0xc3)
				return -ENOTSUP;
			n = d.len;
			if (d.rel_size) { /* jmp: only as the last instruction displaced */
				if (off + n < need)
					return -ENOTSUP;
				target = pc + n + (d.rel_size == 1 ? (int8_t)p[n - 1] :
								     rd32(p + n - 4));
				buf[out] = 0xe9;
				put_rel32(buf + out + 1, at + out + 5, target);
				if ((int64_t)(target - (at + out + 5)) != rd32(buf + out + 1))
					return -ERANGE;
				*covered = off + n;
				return out + 5;
			}
			memcpy(buf + out, p, n);
			if (d.disp_off) {
				uint64_t t = pc + n + rd32(p + d.disp_off);
				int64_t nd = (int64_t)(t - (at + out + n));

				if (nd != (int32_t)nd)
					return -ERANGE;
				put_rel32(buf + out + d.disp_off, at + out + n, t);
			}
			out += n;
			off += n;
			continue;
		}
		if (cond) {
			int64_t nd;

			buf[out] = 0x0f;
			buf[out + 1] = 0x80 | (p[0] == 0x0f ? p[1] & 0xf : p[0] & 0xf);
			nd = (int64_t)(target - (at + out + 6));
			if (nd != (int32_t)nd)
				return -ERANGE;
			put_rel32(buf + out + 2, at + out + 6, target);
			out += 6;
			off += n;
		}
	}
	/* jmp back */
	buf[out] = 0xe9;
	put_rel32(buf + out + 1, at + out + 5, addr + off);
	if ((int64_t)(addr + off - (at + out + 5)) != rd32(buf + out + 1))
		return -ERANGE;
	*covered = off;
	return out + 5;
}

/* The branch over an entry: jmp rel32. Return its length, or -ERANGE. */
static int x86_entry_branch(uint64_t addr, uint64_t to, uint8_t *buf)
{
	int64_t rel = (int64_t)(to - (addr + 5));

	if (rel != (int32_t)rel)
		return -ERANGE;
	buf[0] = 0xe9;
	put_rel32(buf + 1, addr + 5, to);
	return 5;
}

/* A function's thunk: push $word; jmp common. */
static size_t x86_entry_thunk(uint8_t *buf, uint64_t at, uint32_t word, uint64_t common)
{
	buf[0] = 0x68;
	memcpy(buf + 1, &word, 4);
	buf[5] = 0xe9;
	put_rel32(buf + 6, at + 10, common);
	return 10;
}

static uint64_t x86_get_tls(const struct arch_regs *r)
{
	return r->w64[X_FS_BASE];
}

static const uint8_t x86_syscall_insn[] = { 0x0f, 0x05 };

static void x86_syscall_setup(struct arch_regs *r, uint64_t insn_addr, long nr,
			      const uint64_t a[6])
{
	r->w64[X_RIP] = insn_addr;
	r->w64[X_RAX] = nr;
	/* -1: no syscall-restart logic may rewrite rip/rax of the injected call */
	r->w64[X_ORIG_RAX] = (uint64_t)-1;
	r->w64[X_RDI] = a[0];
	r->w64[X_RSI] = a[1];
	r->w64[X_RDX] = a[2];
	r->w64[X_R10] = a[3];
	r->w64[X_R8] = a[4];
	r->w64[X_R9] = a[5];
}

/*
 * The restoring syscall stub: syscall; rt_sigprocmask(SIG_SETMASK, &mask, NULL, 8); the flags
 * through the stack below the red zone; rax, rcx, rdx, rsi, rdi, r8-r11 from the data; jmp to
 * the saved rip. The data follows at X86_STUB_DATA_OFF (every displacement is relative).
 */
#define X86_STUB_DATA_OFF 120
static const uint8_t x86_stub_code[X86_STUB_DATA_OFF] = {
	0x0f, 0x05, /* syscall: the injected call */
	0xb8, 0x0e, 0x00, 0x00, 0x00, /* mov $14,%eax: rt_sigprocmask */
	0xbf, 0x02, 0x00, 0x00, 0x00, /* mov $2,%edi: SIG_SETMASK */
	0x48, 0x8d, 0x35, 0xbd, 0x00, 0x00, 0x00, /* lea mask(%rip),%rsi */
	0x31, 0xd2, /* xor %edx,%edx */
	0x41, 0xba, 0x08, 0x00, 0x00, 0x00, /* mov $8,%r10d */
	0x0f, 0x05, /* syscall */
	0x48, 0x8d, 0x64, 0x24, 0x80, /* lea -128(%rsp),%rsp: past the red zone */
	0xff, 0x35, 0x98, 0x00, 0x00, 0x00, /* push flags(%rip) */
	0x9d, /* popf */
	0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00, /* lea 128(%rsp),%rsp */
	0x48, 0x8b, 0x05, 0x40, 0x00, 0x00, 0x00, /* mov rax(%rip),%rax */
	0x48, 0x8b, 0x0d, 0x41, 0x00, 0x00, 0x00, /* mov rcx(%rip),%rcx */
	0x48, 0x8b, 0x15, 0x42, 0x00, 0x00, 0x00, /* mov rdx(%rip),%rdx */
	0x48, 0x8b, 0x35, 0x43, 0x00, 0x00, 0x00, /* mov rsi(%rip),%rsi */
	0x48, 0x8b, 0x3d, 0x44, 0x00, 0x00, 0x00, /* mov rdi(%rip),%rdi */
	0x4c, 0x8b, 0x05, 0x45, 0x00, 0x00, 0x00, /* mov r8(%rip),%r8 */
	0x4c, 0x8b, 0x0d, 0x46, 0x00, 0x00, 0x00, /* mov r9(%rip),%r9 */
	0x4c, 0x8b, 0x15, 0x47, 0x00, 0x00, 0x00, /* mov r10(%rip),%r10 */
	0x4c, 0x8b, 0x1d, 0x48, 0x00, 0x00, 0x00, /* mov r11(%rip),%r11 */
	0xff, 0x25, 0x52, 0x00, 0x00, 0x00, /* jmp *rip(%rip) */
	0x66, 0x90, /* nop */
};

/* The stub's data: rax, rcx, rdx, rsi, rdi, r8, r9, r10, r11, rflags, rip, mask. */
static void x86_stub_data(uint8_t *data, const struct arch_regs *r, uint64_t mask)
{
	static const int order[] = { X_RAX, X_RCX, X_RDX, X_RSI, X_RDI, X_R8, X_R9, X_R10, X_R11,
				     X_EFLAGS, X_RIP };
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		memcpy(data + 8 * i, &r->w64[order[i]], 8);
	memcpy(data + 8 * i, &mask, 8);
}

static int64_t x86_syscall_result(const struct arch_regs *r)
{
	return (int64_t)r->w64[X_RAX];
}

static bool x86_syscall_restart(struct arch_regs *r)
{
	int64_t ret = (int64_t)r->w64[X_RAX];

	if ((int64_t)r->w64[X_ORIG_RAX] < 0 || ret < -516 || ret > -512 || ret == -515)
		return false;
	/* ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND: again; ERESTART_RESTARTBLOCK: restart_syscall */
	r->w64[X_RAX] = ret == -516 ? 219 : r->w64[X_ORIG_RAX];
	r->w64[X_RIP] -= 2;
	return true;
}

/* call rel32 (e8, 5 bytes); call through a register (ff /2, mod 3: 2 bytes, 3 with REX) or
 * memory (ff /2: [rip+disp32] 6 bytes, [reg+disp8] 3, [reg+disp32] 6, plus REX or SIB). */
static bool x86_after_call(const uint8_t *code, uint64_t ret, uint64_t *target)
{
	const uint8_t *end = code + ARCH_CALL_WINDOW;
	int32_t rel;

	if (end[-5] == 0xe8) {
		memcpy(&rel, end - 4, 4);
		*target = ret + (int64_t)rel;
		return true;
	}
	*target = 0;
	for (unsigned len = 2; len <= 7; len++) {
		const uint8_t *op = end - len;
		uint8_t modrm = op[1], mod = modrm >> 6, rm = modrm & 7;
		unsigned want;

		if (op[0] != 0xff || ((modrm >> 3) & 7) != 2)
			continue;
		if (mod == 3)
			want = 2;
		else if (mod == 0 && rm == 5)
			want = 6;
		else
			want = 2 + (rm == 4) + (mod == 1 ? 1 : mod == 2 ? 4 : 0) +
			       (mod == 0 && rm == 4 && (op[2] & 7) == 5 ? 4 : 0);
		if (want == len)
			return true;
	}
	return false;
}

/* elf_prstatus: pr_reg (user_regs_struct) at 112, fs_base its 22nd word */
static uint64_t x86_core_tp(uint32_t type, const uint8_t *desc, size_t len)
{
	uint64_t tp = 0;

	if (type == NT_PRSTATUS && len >= 112 + 22 * 8)
		memcpy(&tp, desc + 112 + 21 * 8, 8);
	return tp;
}

static uint64_t x86_tls_window(uint64_t tp, uint64_t len)
{
	return tp - len;
}

const struct arch_ops arch_x86_64_ops = {
	.name = "x86_64",
	.elf_machine = EM_X86_64,
	.elf_class = ELFCLASS64,
	.audit_arch = AUDIT_ARCH_X86_64,
	.word_size = 8,
	.reg_args = 6,
	.stack_args_off = 8, /* the seventh above the return address */
	.map_anonymous = 0x20,
	.insn_align = 1,
	.bp_encode = x86_bp_encode,
	.code_addr = x86_code_addr,
	.after_call = x86_after_call,
	.dwarf_regs = 16,
	.dwarf_sp = 7,
	.fp_reg = 6,
	.fp_sp_off = 16,
	.bp_addr_from_pc = x86_bp_addr_from_pc,
	.trap_pc_after = true,
	.get_pc = x86_get_pc,
	.set_pc = x86_set_pc,
	.get_sp = x86_get_sp,
	.set_sp = x86_set_sp,
	.get_arg = x86_get_arg,
	.get_retval = x86_get_retval,
	.set_retval = x86_set_retval,
	.ret_on_stack = true,
	.get_ret_reg = x86_get_ret_reg,
	.set_ret_reg = x86_set_ret_reg,
	.ret_sp_adjust = 8,
	/* the kernel's rt_sigframe: the restorer's address, then the ucontext (uc_flags,
	 * uc_link, a 24-byte uc_stack), whose uc_mcontext holds r8-r15, rdi, rsi, rbp, rbx, rdx,
	 * rax, rcx, then rsp: 8 + 40 + 15 * 8 */
	.sigframe_sp = 168,
	.sigframe_pc = 176, /* rip, after rsp */
	.displace = x86_displace,
	.emulate = x86_emulate,
	.tramp_encode = x86_tramp_encode,
	.tramp_for = x86_tramp_for,
	.logtramp_encode = x86_logtramp_encode,
	.logentry_encode = x86_logentry_encode,
	.set_cookie = x86_set_cookie,
	.nr_mprotect = 10,
	.syscall_insn = x86_syscall_insn,
	.syscall_insn_len = sizeof(x86_syscall_insn),
	.nr_mmap = 9,
	.nr_munmap = 11,
	.syscall_setup = x86_syscall_setup,
	.syscall_result = x86_syscall_result,
	.stub_code = x86_stub_code,
	.stub_size = X86_STUB_DATA_OFF + 12 * 8, /* the data: stub_data's 12 words */
	.stub_data_off = X86_STUB_DATA_OFF,
	.stub_data = x86_stub_data,
	.syscall_restart = x86_syscall_restart,
	.entry_relocate = x86_entry_relocate,
	.entry_branch = x86_entry_branch,
	.entry_thunk = x86_entry_thunk,
	.entry_scan = x86_entry_scan, /* decoder.c */
	.pc_data_refs = x86_pc_data_refs, /* decoder.c */
	.stub_ctx_args = true,
	.get_tls = x86_get_tls,
	.core_tp = x86_core_tp,
	.tls_window = x86_tls_window,
};
