// SPDX-License-Identifier: GPL-2.0-only
/* x86_64, host side: register snapshots through ptrace, and libunwind's register numbers. */
#include <elf.h>
#include <errno.h>
#include <libunwind.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "arch/arch.h"

const struct arch_ops *const arch = &arch_x86_64_ops;

_Static_assert(sizeof(struct user_regs_struct) <= sizeof(((struct arch_regs *)0)->w64),
	       "register snapshot too small");

int arch_get_regs(pid_t tid, struct arch_regs *r)
{
	/* PTRACE_GETREGS is one syscall like GETREGSET, and needs no iovec. */
	if (ptrace(PTRACE_GETREGS, tid, 0, r->w64) < 0)
		return -errno;
	r->size = sizeof(struct user_regs_struct);
	return 0;
}

int arch_set_regs(pid_t tid, const struct arch_regs *r)
{
	if (ptrace(PTRACE_SETREGS, tid, 0, r->w64) < 0)
		return -errno;
	return 0;
}

/* fs_base is in the regset. */
int arch_get_tls_reg(pid_t tid, struct arch_regs *r)
{
	(void)tid, (void)r;
	return 0;
}

int arch_unwind_reg(const struct arch_regs *r, int regnum, uint64_t *val)
{
	/* libunwind's x86_64 numbering is DWARF's: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
	static const unsigned char idx[] = {
		[UNW_X86_64_RAX] = 10, [UNW_X86_64_RDX] = 12, [UNW_X86_64_RCX] = 11,
		[UNW_X86_64_RBX] = 5,  [UNW_X86_64_RSI] = 13, [UNW_X86_64_RDI] = 14,
		[UNW_X86_64_RBP] = 4,  [UNW_X86_64_RSP] = 19, [UNW_X86_64_R8] = 9,
		[UNW_X86_64_R9] = 8,   [UNW_X86_64_R10] = 7,  [UNW_X86_64_R11] = 6,
		[UNW_X86_64_R12] = 3,  [UNW_X86_64_R13] = 2,  [UNW_X86_64_R14] = 1,
		[UNW_X86_64_R15] = 0,  [UNW_X86_64_RIP] = 16,
	};

	if (regnum < 0 || regnum >= (int)sizeof(idx))
		return -EINVAL;
	*val = r->w64[idx[regnum]];
	return 0;
}
