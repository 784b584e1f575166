// SPDX-License-Identifier: GPL-2.0-only
/* arm, host side: register snapshots through ptrace, and libunwind's register numbers. */
#include <elf.h>
#include <errno.h>
#include <libunwind.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "arch/arch.h"

const struct arch_ops *const arch = &arch_arm_ops;

/* NT_PRSTATUS is struct user_regs: r0-r15, cpsr, orig_r0 (18 x u32 = 72 bytes) */
#define ARM_REGS_SIZE (18 * sizeof(uint32_t))

_Static_assert(sizeof(struct user_regs) == ARM_REGS_SIZE, "unexpected struct user_regs");
_Static_assert(ARM_REGS_SIZE <= sizeof(((struct arch_regs *)0)->w32),
	       "register snapshot too small");

int arch_get_regs(pid_t tid, struct arch_regs *r)
{
	struct iovec iov = { r->w32, sizeof(r->w32) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	r->size = iov.iov_len;
	return r->size < ARM_REGS_SIZE ? -EIO : 0;
}

int arch_set_regs(pid_t tid, const struct arch_regs *r)
{
	struct iovec iov = { (void *)r->w32, r->size ? r->size : ARM_REGS_SIZE };

	if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	return 0;
}

/*
 * UNW_ARM_R0..R15 are r0-r15 (UNW_REG_IP = R15, UNW_REG_SP = R13): the snapshot's first 16
 * words. The PC is returned as stored, without the Thumb bit: at an entry the tracer unwinds
 * from the caller with pc = lr & ~1: libunwind's EXIDX data is wrong at an entry, and the
 * caller's state {pc = lr, same sp and callee-saved registers} unwinds correctly.
 */
int arch_unwind_reg(const struct arch_regs *r, int regnum, uint64_t *val)
{
	if (regnum < UNW_ARM_R0 || regnum > UNW_ARM_R15)
		return -EINVAL;
	*val = r->w32[regnum - UNW_ARM_R0];
	return 0;
}

/* TPIDRURO (tls.c), into the slot after the regset's 18 words (arch.c's A_TLS); size is
 * unchanged, so arch_set_regs never writes it. */
int arch_get_tls_reg(pid_t tid, struct arch_regs *r)
{
	uint64_t tp;
	int ret = arch_thread_pointer(tid, &tp);

	if (!ret)
		r->w32[18] = (uint32_t)tp;
	return ret;
}
