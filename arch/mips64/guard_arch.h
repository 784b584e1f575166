/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_GUARD_ARCH_H
#define HEAPTRACE_GUARD_ARCH_H

/* mips64 (n64) facts for the guard (guard.h): the handler's side and heaptrace's. */
#include <stdint.h>
#include <ucontext.h>

#define GUARD_SUPPORTED 1
#define GUARD_TRAP_LEN 0 /* break traps with the pc (epc) on the break itself */

/* the n64 system call table starts at 5000 */
#define GUARD_NR_RT_SIGACTION 5013
#define GUARD_NR_GETPID 5038
#define GUARD_NR_GETTID 5178
#define GUARD_NR_TGKILL 5225
#define GUARD_SA_SIGINFO 0x8ULL
#define GUARD_SA_RESTORER 0ULL /* none on mips: the kernel returns through the vDSO */
#define GUARD_SA_ONSTACK 0x08000000ULL
#define GUARD_SA_RESTART 0x10000000ULL
#define GUARD_SA_NODEFER 0x40000000ULL
#define GUARD_SA_RESETHAND 0x80000000ULL
#define GUARD_SIGSET_SIZE 16 /* the kernel's sigset_t: 128 signals */

/* The kernel's struct sigaction for rt_sigaction (IRIX order: the flags first), 32 bytes.
 * Only the mask's first 64 signals are kept; restorer is heaptrace's field, past the
 * kernel's struct, which neither reads nor writes it. */
struct guard_ksigaction {
	uint32_t flags, pad;
	uint64_t handler;
	uint64_t mask, mask_high;
	uint64_t restorer;
};

/* The C library's struct sigaction (glibc): int flags, handler, 128-byte mask, restorer. */
#define GUARD_USA_HANDLER 8
#define GUARD_USA_PTR 8
#define GUARD_USA_MASK 16
#define GUARD_USA_FLAGS 0
#define GUARD_USA_SIZE 152

#define GUARD_UC_PC(uc) ((ucontext_t *)(uc))->uc_mcontext.pc
#define GUARD_UC_SP(uc) ((ucontext_t *)(uc))->uc_mcontext.gregs[29]

/* An address inside the running code: bal's link (ra is saved by the compiler, a clobber). */
static inline __attribute__((always_inline)) uint64_t guard_here(void)
{
	uint64_t pc;

	__asm__ volatile(".set push\n\t.set noreorder\n\tbal 1f\n\tnop\n1:\tmove %0, $31\n\t"
			 ".set pop"
			 : "=r"(pc)
			 :
			 : "$31");
	return pc;
}

/* v0 the number and the result, a3 set on failure (then v0 is the positive errno). */
static inline __attribute__((always_inline)) long guard_syscall4(long nr, long a, long b, long c,
								  long d)
{
	register long v0 __asm__("$2") = nr;
	register long a0 __asm__("$4") = a;
	register long a1 __asm__("$5") = b;
	register long a2 __asm__("$6") = c;
	register long a3 __asm__("$7") = d;

	__asm__ volatile("syscall"
			 : "+r"(v0), "+r"(a3)
			 : "r"(a0), "r"(a1), "r"(a2)
			 : "$1", "$3", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$24",
			   "$25", "hi", "lo", "memory");
	return a3 ? -v0 : v0;
}

/* Call the program's handler h as the kernel would (PIC code finds itself by t9, which a
 * call through a pointer sets). */
#define GUARD_CALL(h, sig, info, uc) ((void (*)(int, void *, void *))(uintptr_t)(h))(sig, info, uc)

#endif
