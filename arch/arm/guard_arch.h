/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_GUARD_ARCH_H
#define HEAPTRACE_GUARD_ARCH_H

/* arm (EABI) facts for the guard (guard.h): the handler's side and heaptrace's. The action
 * flags and the 64-signal sigset_t are the generic ones; SA_RESTORER is the C library's (the
 * guard's own restorer: the kernel's). */
#include <stdint.h>
#include <ucontext.h>

#include "arch/guard_sigaction.h"

#define GUARD_SUPPORTED 1
#define GUARD_TRAP_LEN 0 /* both udfs trap with the pc on the udf itself */

#define GUARD_NR_RT_SIGACTION 174
#define GUARD_NR_GETPID 20
#define GUARD_NR_GETTID 224
#define GUARD_NR_TGKILL 268

/* The kernel's struct sigaction for rt_sigaction: three 32-bit words, then the mask at
 * offset 12 (word aligned: hence packed). */
struct __attribute__((packed, aligned(4))) guard_ksigaction {
	uint32_t handler, flags, restorer;
	uint64_t mask;
};

/* The C library's struct sigaction (glibc and musl): handler, 128-byte mask, int flags,
 * restorer, each pointer 4 bytes. */
#define GUARD_USA_HANDLER 0
#define GUARD_USA_PTR 4
#define GUARD_USA_MASK 4
#define GUARD_USA_FLAGS 132
#define GUARD_USA_SIZE 140

#define GUARD_UC_PC(uc) ((ucontext_t *)(uc))->uc_mcontext.arm_pc
#define GUARD_UC_SP(uc) ((ucontext_t *)(uc))->uc_mcontext.arm_sp

/* A breakpoint's resume address keeps the trap's instruction set: a slot is written in the
 * breakpoint's own set, and a Thumb jump's target (pc only) carries bit 0, which the pc must
 * not. */
#define GUARD_BP_PC(a) ((uint32_t)(a) & ~1u)

/* The return trampolines (arch/arm/arch.c): ARM at tramp, Thumb at tramp + 4. */
#define GUARD_AT_TRAMP(pc, tramp) ((pc) == (tramp) || (pc) == (tramp) + 4)

/* Go on at a mode address: bit 0 set is Thumb code (CPSR's T bit, 0x20). */
#define GUARD_GO(uc, a)                                                                           \
	do {                                                                                      \
		ucontext_t *u_ = (ucontext_t *)(uc);                                              \
		u_->uc_mcontext.arm_pc = (uint32_t)(a) & ~1u;                                     \
		u_->uc_mcontext.arm_cpsr = ((a) & 1) ? u_->uc_mcontext.arm_cpsr | 0x20u           \
						     : u_->uc_mcontext.arm_cpsr & ~0x20u;         \
	} while (0)

/* An address inside the running code (the pc reads ahead, in either instruction set). */
static inline __attribute__((always_inline)) uint64_t guard_here(void)
{
	uint32_t pc;

	__asm__ volatile("mov %0, pc" : "=r"(pc));
	return pc;
}

/* r7 carries the number; it is saved around the call, since it is Thumb's frame pointer. */
static inline __attribute__((always_inline)) long guard_syscall4(long nr, long a, long b, long c,
								  long d)
{
	register long r0 __asm__("r0") = a;
	register long r1 __asm__("r1") = b;
	register long r2 __asm__("r2") = c;
	register long r3 __asm__("r3") = d;

	__asm__ volatile("push {r7}\n\tmov r7, %[nr]\n\tsvc #0\n\tpop {r7}"
			 : "+r"(r0)
			 : [nr] "r"(nr), "r"(r1), "r"(r2), "r"(r3)
			 : "memory");
	return r0;
}

/* Call the program's handler h as the kernel would (bit 0: Thumb, as blx takes it). */
#define GUARD_CALL(h, sig, info, uc) ((void (*)(int, void *, void *))(uintptr_t)(h))(sig, info, uc)

#endif
