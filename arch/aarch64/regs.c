// SPDX-License-Identifier: GPL-2.0-only
/* aarch64, host side: register snapshots through ptrace, and libunwind's register numbers. */
#include <elf.h>
#include <errno.h>
#include <libunwind.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "arch/arch.h"

const struct arch_ops *const arch = &arch_aarch64_ops;

/* glibc's struct user_regs_struct is the kernel's struct user_pt_regs: the indexes arch.c uses */
_Static_assert(sizeof(struct user_regs_struct) == 34 * 8 &&
		       sizeof(struct user_regs_struct) <= sizeof(((struct arch_regs *)0)->w64),
	       "register snapshot layout");
_Static_assert(offsetof(struct user_regs_struct, sp) == 31 * 8 &&
		       offsetof(struct user_regs_struct, pc) == 32 * 8 &&
		       offsetof(struct user_regs_struct, pstate) == 33 * 8,
	       "sp, pc, pstate at 31, 32, 33");

/* arm64 has no PTRACE_GETREGS (glibc's <sys/ptrace.h> lacks it): the regset is the only way. */
int arch_get_regs(pid_t tid, struct arch_regs *r)
{
	struct iovec iov = { .iov_base = r->w64, .iov_len = sizeof(r->w64) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	r->size = iov.iov_len; /* 272 */
	return 0;
}

int arch_set_regs(pid_t tid, const struct arch_regs *r)
{
	struct iovec iov = {
		.iov_base = (void *)r->w64,
		.iov_len = r->size ? r->size : sizeof(struct user_regs_struct),
	};

	if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	return 0;
}

/* tpidr_el0 (tls.c), into the slot after the regset's 34 words (arch.c's A_TLS); size is
 * unchanged, so arch_set_regs never writes it. */
int arch_get_tls_reg(pid_t tid, struct arch_regs *r)
{
	return arch_thread_pointer(tid, &r->w64[34]);
}

int arch_unwind_reg(const struct arch_regs *r, int regnum, uint64_t *val)
{
	/* libunwind numbers x0-x30, sp, pc, pstate as 0..33: the NT_PRSTATUS order */
	_Static_assert(UNW_AARCH64_X30 == 30 && UNW_AARCH64_SP == 31 && UNW_AARCH64_PC == 32 &&
			       UNW_AARCH64_PSTATE == 33,
		       "libunwind's aarch64 register numbers");

	if (regnum < UNW_AARCH64_X0 || regnum > UNW_AARCH64_PSTATE)
		return -EINVAL; /* v0-v31, fpsr, fpcr: not in the snapshot */
	*val = r->w64[regnum];
	return 0;
}
