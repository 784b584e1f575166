/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_ARCH_H
#define HEAPTRACE_ARCH_H

/*
 * The per-architecture seam. Each arch/<arch>/arch.c fills one struct arch_ops with pure
 * knowledge (no ptrace), so that every architecture's encodings can be unit tested on any
 * host; arch/<arch>/regs.c (host only) moves a register snapshot in and out of a thread and
 * sets `arch`, the ops of the architecture heaptrace was built for.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A thread's general registers exactly as PTRACE_GETREGSET(NT_PRSTATUS) lays them out. */
struct arch_regs {
	union {
		uint64_t w64[64];
		uint32_t w32[128];
	};
	size_t size; /* bytes valid, as returned by the kernel */
};

/* How a hit breakpoint is stepped over without removing it (remove-and-step loses other threads'
 * calls, and arm and mips64 have no PTRACE_SINGLESTEP). */
enum arch_step {
	STEP_XOL = 1, /* run the copied instruction in a scratch slot that jumps back */
	STEP_EMULATE, /* the tracer computes the effect (arch_ops.emulate) */
};

/* What emulation needs to know about the displaced instruction. */
struct arch_emul {
	int kind; /* arch specific */
	uint64_t target; /* new PC for branches, next PC for skipped instructions; with
			  * trap_pc_after, also set for STEP_XOL: where the slot jumps back to */
	uint64_t imm; /* arch specific operand */
};

#define ARCH_MAX_INSN 16 /* bytes read at a breakpoint address to decode */
#define ARCH_CALL_WINDOW 8 /* bytes before a return address that hold its call */
#define ARCH_SLOT_SIZE 64 /* bytes of scratch page per displaced instruction */
#define ARCH_LOGTRAMP_MAX 192 /* bytes of the logging trampoline, at most */
#define ARCH_STUB_MAX 320 /* bytes of a restoring syscall stub, at most (arch_ops.stub_size) */

struct arch_ops {
	const char *name;
	int elf_machine; /* EM_X86_64, EM_AARCH64, EM_ARM, EM_MIPS */
	int elf_class; /* ELFCLASS64 or ELFCLASS32 */
	/* AUDIT_ARCH_* (<linux/audit.h>) of the traced process's system calls: what the kernel
	 * puts in seccomp_data.arch for a call made through syscall_insn. */
	uint32_t audit_arch;
	unsigned word_size; /* bytes in a pointer of the traced process */
	unsigned reg_args; /* argument words passed in registers (arm 4, x86_64 6, else 8) */
	/* Bytes from sp at a function's entry to its first argument word on the stack (x86_64 8:
	 * the return address is below it); argument n >= reg_args is word_size bytes each from
	 * there, as every supported ABI passes a pointer or size_t (arm's 64-bit arguments take
	 * two words, 8-byte aligned: not read). */
	unsigned stack_args_off;
	uint32_t map_anonymous; /* mmap(2)'s MAP_ANONYMOUS flag: 0x800 on mips, 0x20 elsewhere */
	unsigned insn_align; /* instructions start at multiples of this (x86_64: 1) */

	/* Write the breakpoint instruction for code address addr into buf; return its length.
	 * addr is a symbol value (arm: bit 0 set = Thumb). */
	size_t (*bp_encode)(uint64_t addr, uint8_t *buf);
	/* Code address of a symbol value (arm clears the Thumb bit). */
	uint64_t (*code_addr)(uint64_t sym);
	/* Breakpoint address from the PC reported at its SIGTRAP (x86_64: pc - 1). */
	uint64_t (*bp_addr_from_pc)(uint64_t pc);
	/* The PC at a breakpoint's trap is past the breakpoint (x86_64), where no code runs
	 * unless a stepped-over instruction continues there: any other SIGTRAP stop with that
	 * PC was sent. Without it, a sent SIGTRAP can show the breakpoint's own address. */
	bool trap_pc_after;

	uint64_t (*get_pc)(const struct arch_regs *r);
	void (*set_pc)(struct arch_regs *r, uint64_t pc);
	uint64_t (*get_sp)(const struct arch_regs *r);
	void (*set_sp)(struct arch_regs *r, uint64_t sp);
	/* Integer argument n (0-based) at a function's entry. */
	uint64_t (*get_arg)(const struct arch_regs *r, unsigned n);
	uint64_t (*get_retval)(const struct arch_regs *r);
	void (*set_retval)(struct arch_regs *r, uint64_t v);

	/* Where the return address lives at a function's first instruction: on the stack at sp
	 * (ret_on_stack, x86_64) or in a register (get_ret_reg/set_ret_reg). */
	bool ret_on_stack;
	uint64_t (*get_ret_reg)(const struct arch_regs *r);
	void (*set_ret_reg)(struct arch_regs *r, uint64_t v);
	/* sp after the callee returned, minus sp at its entry (x86_64: 8, the popped address). */
	unsigned ret_sp_adjust;
	/*
	 * A signal frame on the stack is known by its anchor: a word that holds the restorer's
	 * address (where a handler returns; x86_64's frame starts with it, and a handler starts
	 * with sp there), or, where the restorer is in a register at a handler's start
	 * (sigframe_magic[0] not 0), the 64 bits that open the frame's area of coprocessor
	 * state: a record's magic and its size, one of sigframe_magic's. sigframe_sp and
	 * sigframe_pc: from the anchor to the interrupted sp and pc the kernel saved. 0: no
	 * frame is looked for.
	 */
	uint64_t sigframe_magic[3];
	int sigframe_sp;
	int sigframe_pc;
	/*
	 * Is ret (a return address as the stack holds it; arm: bit 0 set = Thumb caller) just
	 * after a call instruction? code holds the ARCH_CALL_WINDOW bytes that end at
	 * code_addr(ret). For a direct call set *target to its destination's code address, for
	 * one through a register or memory to 0. Stack scans accept a word as a return address
	 * only if this is true.
	 */
	bool (*after_call)(const uint8_t *code, uint64_t ret, uint64_t *target);
	/*
	 * Registers as DWARF call frame information numbers them, which on every supported arch
	 * is libunwind's numbering too: the general registers are 0..dwarf_regs-1, the stack
	 * pointer dwarf_sp.
	 */
	unsigned dwarf_regs, dwarf_sp;
	/*
	 * Frame records, where the ABI fixes their layout: in code that keeps frame pointers,
	 * register fp_reg (DWARF number) points at { the caller's fp_reg, the return address };
	 * -1 where there is no fixed layout (arm: gcc's ARM code puts lr at [fp] and the old fp
	 * at [fp - 4], its Thumb-2 code points r7 at the locals; mips64: s8 is sp after the
	 * frame is allocated, with ra saved at an offset that depends on the frame size).
	 * fp_sp_off: the caller's sp is fp_reg + fp_sp_off (x86_64: 16, the record is where the
	 * call and the push put it), 0 if the record does not say (aarch64: stp x29, x30 can be
	 * anywhere in the frame).
	 */
	int fp_reg;
	unsigned fp_sp_off;
	/* libunwind also reads .ARM.exidx unwind tables, which libdw's CFI does not (arm): it
	 * gets the first try at every frame. */
	bool exidx;

	/*
	 * Decide how to step over a breakpoint placed on the instruction at addr, whose bytes
	 * (at least ARCH_MAX_INSN, fewer at the end of a mapping) are in insn. For STEP_XOL fill
	 * slot (ARCH_SLOT_SIZE bytes, to be placed at slot_addr) with the relocated instruction
	 * followed by a jump back to the next one; for STEP_EMULATE fill *em. Return the step
	 * kind, or -ENOTSUP for an instruction this arch cannot yet displace safely, or -ERANGE
	 * when the slot is too far away for a PC-relative operand.
	 */
	int (*displace)(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
			uint8_t *slot, struct arch_emul *em);
	/* For the guard (src/patch/guard.h), which runs in the process where heaptrace cannot
	 * emulate: fill slot (ARCH_SLOT_SIZE bytes, to be placed at slot_addr) with code that does
	 * what the instruction at addr, which displace chose to emulate, does and goes on where it
	 * would. Return 0, -ENOTSUP or -ERANGE. NULL: no such slots. */
	int (*emul_slot)(uint64_t addr, const uint8_t *insn, size_t len, uint64_t slot_addr,
			 uint8_t *slot);
	/* Apply an emulated instruction to the registers. Return 0 or -errno. */
	int (*emulate)(const struct arch_emul *em, struct arch_regs *r);
	/* Bytes of the return trampoline placed at the start of the scratch page (up to
	 * ARCH_SLOT_SIZE); return their length. arm needs one per instruction set. */
	size_t (*tramp_encode)(uint8_t *buf);
	/* The return address that sends a call returning to ret into the trampoline at base
	 * (arm: the Thumb or the ARM one, with the caller's mode bit). */
	uint64_t (*tramp_for)(uint64_t base, uint64_t ret);
	/*
	 * The logging trampoline (NULL where the arch has none): returns through it cost no stop.
	 * A call is sent through it at its entry by logentry_encode's code (x86_64), or, where
	 * the return address is in a register, by a frame of two words the tracer writes below
	 * sp (the cookie, then the caller's return address), sp moved down to it and the
	 * register pointed at the trampoline. Either way the function returns into it with the
	 * 32-bit cookie at [sp].
	 * The code reserves entry i = atomic post-increment of the 32-bit counter at head, writes
	 * { u32 seq = i + 1 (last), u32 cookie, u64 return value } at entries + 16 * (i & mask),
	 * restores every register the function left (but sp and the return address register)
	 * and returns to the caller as the function would have. Encode it for address at into
	 * buf (ARCH_LOGTRAMP_MAX bytes); return its length.
	 */
	size_t (*logtramp_encode)(uint8_t *buf, uint64_t at, uint64_t head, uint64_t entries,
				  uint32_t mask);
	/*
	 * x86_64: the entry path of a call sent through the logging trampoline, in a slot of its
	 * own: code at address at that pushes the cookie (put by set_cookie in a register the
	 * entry leaves dead), then logtramp as the return address above the caller's, and jumps
	 * to cont, where the hooked function goes on.
	 */
	size_t (*logentry_encode)(uint8_t *buf, uint64_t at, uint64_t logtramp, uint64_t cont);
	void (*set_cookie)(struct arch_regs *r, uint32_t cookie);
	long nr_mprotect; /* to make the ring writable, where logtramp_encode is set */

	/* Syscall injection: the instruction, and how to set up a call and read its result. */
	const uint8_t *syscall_insn;
	size_t syscall_insn_len;
	long nr_mmap, nr_munmap;
	void (*syscall_setup)(struct arch_regs *r, uint64_t insn_addr, long nr,
			      const uint64_t args[6]);
	/*
	 * A restoring syscall stub (NULL where the arch has none): stub_size bytes of code and
	 * data, position independent. Its first instruction is the system call instruction;
	 * after it, the code puts back the signal mask and every register the injection changed
	 * from the data at stub_data_off, and jumps to where the thread was. A thread left there
	 * by a tracer that died mid-injection so goes on as if nothing had happened. stub_data
	 * fills that data from the registers to go back to and the mask.
	 */
	const uint8_t *stub_code;
	unsigned stub_size, stub_data_off;
	void (*stub_data)(uint8_t *data, const struct arch_regs *back, uint64_t mask);
	/* Result of the injected call: a value, or -errno. */
	int64_t (*syscall_result)(const struct arch_regs *r);
	/* If r was saved while a system call was interrupted with a restart code (-ERESTART*),
	 * make r restart it as the kernel would for a signal without a handler: the injected
	 * call in between makes the kernel forget. Return true if r was changed. */
	bool (*syscall_restart)(struct arch_regs *r);

	/*
	 * Entry stubs (stubs.h; NULL where the arch has none). entry_relocate: the whole
	 * instructions at code address addr (insn: len bytes of them) covering at least need
	 * bytes, relocated to run at address at in buf, then a jump back after them. Return the
	 * bytes written with *covered set to the bytes displaced, -ENOTSUP for an instruction
	 * that cannot move, -ERANGE for a target out of reach. entry_branch: the branch written
	 * over the entry at addr to go to to; return its length or -ERANGE. entry_thunk: code at
	 * at that hands word to the common stub code at common; return its length. get_tls: the
	 * thread pointer, which the stub code reads as its thread's key.
	 */
	int (*entry_relocate)(uint64_t addr, const uint8_t *insn, size_t len, size_t need,
			      uint64_t at, uint8_t *buf, size_t *covered);
	int (*entry_branch)(uint64_t addr, uint64_t to, uint8_t *buf);
	size_t (*entry_thunk)(uint8_t *buf, uint64_t at, uint32_t word, uint64_t common);
	uint64_t (*get_tls)(const struct arch_regs *r);
	/*
	 * The patch-safety rule with the arch's own decoder (NULL: every patch longer than
	 * insn_align is refused; x86_64: arch/x86_64/decoder.c):
	 * code holds the size bytes of the function at symbol value value; return 0 if nothing in
	 * it leads into (code address, + len) (arch/arm: a direct branch, a PC-relative load or
	 * adr, or an indirect jump other than a return), -EXDEV if something may, or -errno.
	 */
	int (*entry_scan)(uint64_t value, const uint8_t *code, size_t size, size_t len);
	/*
	 * The data addresses the first instructions of a function read PC-relative, in order:
	 * code holds size bytes at pc; at most max into out; return how many (NULL: not known;
	 * x86_64: its RIP-relative operands). stub_ctx_args: the stub code honours STUB_HOOK_CTX.
	 */
	unsigned (*pc_data_refs)(uint64_t pc, const uint8_t *code, size_t size, uint64_t *out,
				 unsigned max);
	bool stub_ctx_args;
	/* mmap's offset argument counts units of 1 << mmap_off_shift bytes (arm's mmap2: 12). */
	unsigned mmap_off_shift;

	/*
	 * The thread pointer as a core file keeps it: from the note of type type (desc: its len
	 * bytes), 0 if that note does not hold it (x86_64: fs_base in NT_PRSTATUS; aarch64 and arm:
	 * NT_ARM_TLS; mips64 cores have none).
	 */
	uint64_t (*core_tp)(uint32_t type, const uint8_t *desc, size_t len);
	/*
	 * Where the len bytes of static TLS next to thread pointer tp start, in which the C
	 * library keeps its own thread variables (glibc's tcache pointer): below tp with TLS
	 * variant II (x86_64), above it with variant I (aarch64, arm; mips64's tp points 0x7000
	 * past the start of the thread control block).
	 */
	uint64_t (*tls_window)(uint64_t tp, uint64_t len);
};

/* Every architecture's ops, for the unit tests; only one is linked into the tool. */
extern const struct arch_ops arch_x86_64_ops;
extern const struct arch_ops arch_aarch64_ops;
extern const struct arch_ops arch_arm_ops;
extern const struct arch_ops arch_mips64_ops;

/* The architecture heaptrace runs on (set by arch/<arch>/regs.c). */
extern const struct arch_ops *const arch;

/* Host only (regs.c). Return 0 or -errno. */
int arch_get_regs(pid_t tid, struct arch_regs *r);
int arch_set_regs(pid_t tid, const struct arch_regs *r);
/* Put the thread pointer into r where NT_PRSTATUS lacks it (aarch64: NT_ARM_TLS), for
 * arch->get_tls; where the arch has entry stubs. Return 0 or -errno. */
int arch_get_tls_reg(pid_t tid, struct arch_regs *r);
/* The thread pointer of a stopped thread (tls.c: x86_64 fs_base, aarch64 NT_ARM_TLS, arm and
 * mips64 PTRACE_GET_THREAD_AREA). Return 0 or -errno. */
int arch_thread_pointer(pid_t tid, uint64_t *tp);
/* Map a libunwind register number to its value in a snapshot; return 0 or -EINVAL. */
int arch_unwind_reg(const struct arch_regs *r, int unw_regnum, uint64_t *val);

#endif
