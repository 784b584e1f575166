/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_GUARD_ARCH_H
#define HEAPTRACE_GUARD_ARCH_H

/* aarch64 facts for the guard (guard.h): the handler's side and heaptrace's. The sigaction
 * flags and structs are the generic 64-bit ones (arm64 defines SA_RESTORER, so the kernel's
 * struct has the restorer field; the guard uses none: the kernel returns through the vDSO). */
#include <stdint.h>
#include <ucontext.h>

#define GUARD_SIGACTION_LP64
#include "arch/guard_sigaction.h"

#define GUARD_SUPPORTED 1
#define GUARD_TRAP_LEN 0 /* brk traps with the pc on the brk itself */

/* the generic system call table (asm-generic/unistd.h) */
#define GUARD_NR_RT_SIGACTION 134
#define GUARD_NR_GETPID 172
#define GUARD_NR_GETTID 178
#define GUARD_NR_TGKILL 131

#define GUARD_UC_PC(uc) ((ucontext_t *)(uc))->uc_mcontext.pc
#define GUARD_UC_SP(uc) ((ucontext_t *)(uc))->uc_mcontext.sp

/* An address inside the running code. */
static inline __attribute__((always_inline)) uint64_t guard_here(void)
{
	uint64_t pc;

	__asm__ volatile("adr %0, ." : "=r"(pc));
	return pc;
}

static inline __attribute__((always_inline)) long guard_syscall4(long nr, long a, long b, long c,
								  long d)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
}

/* Call the program's handler h as the kernel would. */
#define GUARD_CALL(h, sig, info, uc) ((void (*)(int, void *, void *))(uintptr_t)(h))(sig, info, uc)

/* No restorer of the guard's own: the kernel's (the vDSO's sigreturn) is used. */

#endif
