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
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/arm/thumb.h"

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

/* AAPCS: r0-r3, then the stack (calls.c reads it). */
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


static uint64_t arm_get_tls(const struct arch_regs *r)
{
	return r->w32[A_TLS];
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
	.stack_args_off = 0, /* AAPCS: the fifth word at [sp] */
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
	/* the kernel's rt_sigframe: a 128-byte siginfo, then the ucontext: uc_flags, uc_link,
	 * a 12-byte uc_stack, uc_mcontext (trap_no, error_code, oldmask, r0-r10, fp, ip, sp,
	 * lr, pc, ...: sp at 84 in the ucontext), 128 bytes of signal mask and, at 232,
	 * uc_regspace. That starts with the vfp_sigframe (VFP_MAGIC, 0x120 bytes), or in a
	 * kernel built with CONFIG_IWMMXT (Debian's armmp) with the iwmmxt_sigframe (0xa0
	 * bytes): IWMMXT_MAGIC where the thread uses iWMMXt, else DUMMY_MAGIC */
	.sigframe_magic = { 0x12056465001ull, 0xa0b0d9ed01ull, 0xa012ef842aull },
	.sigframe_sp = 84 - 232,
	.sigframe_pc = 92 - 232,
	.displace = arm_displace_insn,
	.emulate = arm_emulate,
	.tramp_encode = arm_tramp_encode,
	.tramp_for = arm_tramp_for,
	.logtramp_encode = arm_logtramp_encode,
	.emul_slot = arm_emul_slot,
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
	.entry_relocate = arm_entry_relocate,
	.entry_branch = arm_entry_branch,
	.entry_thunk = arm_entry_thunk,
	.entry_scan = arm_entry_scan,
	.get_tls = arm_get_tls,
	.mmap_off_shift = 12, /* mmap2: the offset in 4096-byte units */
};
