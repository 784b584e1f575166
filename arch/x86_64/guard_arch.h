/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_GUARD_ARCH_H
#define HEAPTRACE_GUARD_ARCH_H

/* x86_64 facts for the guard (guard.h): the handler's side and heaptrace's. */
#include <stdint.h>
#include <ucontext.h>

#define GUARD_SUPPORTED 1
#define GUARD_TRAP_LEN 1 /* int3: a trap's pc is this far past the trap */

#define GUARD_NR_RT_SIGACTION 13
#define GUARD_NR_GETPID 39
#define GUARD_NR_GETTID 186
#define GUARD_NR_TGKILL 234
#define GUARD_SA_SIGINFO 0x4ULL
#define GUARD_SA_RESTORER 0x04000000ULL /* required: x86_64 has no kernel sigreturn page */
#define GUARD_SA_ONSTACK 0x08000000ULL
#define GUARD_SA_RESTART 0x10000000ULL
#define GUARD_SA_NODEFER 0x40000000ULL
#define GUARD_SA_RESETHAND 0x80000000ULL
#define GUARD_SIGSET_SIZE 8 /* the kernel's sigset_t */

/* The kernel's struct sigaction for rt_sigaction. */
struct guard_ksigaction {
	uint64_t handler, flags, restorer, mask;
};

/* The C library's struct sigaction (glibc and musl): handler, 128-byte mask, int flags,
 * restorer. */
#define GUARD_USA_HANDLER 0
#define GUARD_USA_PTR 8 /* the handler's and the restorer's size */
#define GUARD_USA_MASK 8
#define GUARD_USA_FLAGS 136
#define GUARD_USA_SIZE 152

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
