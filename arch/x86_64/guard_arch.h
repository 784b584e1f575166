/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_GUARD_ARCH_H
#define HEAPTRACE_GUARD_ARCH_H

/* x86_64 facts for the guard (guard.h): the handler's side and heaptrace's. The sigaction
 * flags and structs are the generic 64-bit ones; SA_RESTORER is required: x86_64 has no kernel
 * sigreturn page (GUARD_RESTORER_ASM below). */
#include <stdint.h>
#include <ucontext.h>

#define GUARD_SIGACTION_LP64
#include "arch/guard_sigaction.h"

#define GUARD_SUPPORTED 1
#define GUARD_TRAP_LEN 1 /* int3: a trap's pc is this far past the trap */

#define GUARD_NR_RT_SIGACTION 13
#define GUARD_NR_GETPID 39
#define GUARD_NR_GETTID 186
#define GUARD_NR_TGKILL 234

#define GUARD_UC_PC(uc) ((ucontext_t *)(uc))->uc_mcontext.gregs[REG_RIP]
#define GUARD_UC_SP(uc) ((ucontext_t *)(uc))->uc_mcontext.gregs[REG_RSP]

/* An address inside the running code. */
static inline __attribute__((always_inline)) uint64_t guard_here(void)
{
	uint64_t pc;

	__asm__ volatile("lea 0(%%rip), %0" : "=r"(pc));
	return pc;
}

static inline __attribute__((always_inline)) long guard_syscall4(long nr, long a, long b, long c,
								  long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

/* Call the program's handler h as the kernel would. */
#define GUARD_CALL(h, sig, info, uc) ((void (*)(int, void *, void *))(uintptr_t)(h))(sig, info, uc)

/* The sigreturn code, in the guard's section: the kernel returns into it from a handler. */
#define GUARD_RESTORER_ASM "mov $15, %eax\n\tsyscall\n"

#endif
