// SPDX-License-Identifier: GPL-2.0-only
/*
 * mips64el (n64), host side: register snapshots through ptrace, and libunwind's numbers.
 *
 * PTRACE_GETREGS/SETREGS move 38 u64 words: regs[0..31], lo, hi, epc, badvaddr, status, cause
 * (ptrace_getregs/ptrace_setregs in arch/mips/kernel/ptrace.c), the first 38 of the
 * NT_PRSTATUS layout arch.c indexes. Unlike the regset they also carry slot 0 (the restart
 * flag: the syscall number after an error return) and slot 26 (the caller's a3, saved at
 * syscall entry), which NT_PRSTATUS reads as zero and ignores on write; syscall restarting
 * after an injected call needs both. Build with -DHEAPTRACE_MIPS_REGSET to use
 * PTRACE_GETREGSET/SETREGSET(NT_PRSTATUS) instead: everything else works the same, but an
 * interrupted syscall is then not restarted after an injection (arch.c, mips_syscall_restart).
 */
#include <elf.h>
#include <errno.h>
#include <libunwind.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "arch/arch.h"

const struct arch_ops *const arch = &arch_mips64_ops;

#define MIPS_GETREGS_SIZE (38 * 8)
#define MIPS_PRSTATUS_SIZE (45 * 8)
#define MIPS_EPC 34

_Static_assert(MIPS_PRSTATUS_SIZE <= sizeof(((struct arch_regs *)0)->w64),
	       "register snapshot too small");

#ifdef HEAPTRACE_MIPS_REGSET
int arch_get_regs(pid_t tid, struct arch_regs *r)
{
	struct iovec iov = { r->w64, sizeof(r->w64) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	r->size = iov.iov_len;
	return 0;
}

int arch_set_regs(pid_t tid, const struct arch_regs *r)
{
	struct iovec iov = { (void *)r->w64, r->size ? r->size : MIPS_PRSTATUS_SIZE };

	if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	return 0;
}
#else
int arch_get_regs(pid_t tid, struct arch_regs *r)
{
	if (ptrace(PTRACE_GETREGS, tid, 0, r->w64) < 0)
		return -errno;
	r->size = MIPS_GETREGS_SIZE;
	return 0;
}

int arch_set_regs(pid_t tid, const struct arch_regs *r)
{
	if (ptrace(PTRACE_SETREGS, tid, 0, (void *)r->w64) < 0)
		return -errno;
	return 0;
}
#endif

/* The thread pointer, which the entry stubs read as their thread's key, into a slot past the
 * dump (arch.c: M_TLS). */
int arch_get_tls_reg(pid_t tid, struct arch_regs *r)
{
	return arch_thread_pointer(tid, &r->w64[48]);
}

/*
 * libunwind-ptrace's own access_reg is broken on mips64 (it uses _UPT_reg_offset[]'s PEEKUSER
 * register numbers as byte offsets into NT_PRSTATUS, so the PC comes from gpr[8]): unwind.c
 * reads registers from the snapshot through this instead. UNW_MIPS_R0..R31 are the GPRs (R0 is
 * zero, not the dump's restart slot), UNW_MIPS_PC is EPC.
 */
int arch_unwind_reg(const struct arch_regs *r, int regnum, uint64_t *val)
{
	if (regnum == UNW_MIPS_R0)
		*val = 0;
	else if (regnum > UNW_MIPS_R0 && regnum <= UNW_MIPS_R31)
		*val = r->w64[regnum - UNW_MIPS_R0];
	else if (regnum == UNW_MIPS_PC)
		*val = r->w64[MIPS_EPC];
	else
		return -EINVAL;
	return 0;
}
