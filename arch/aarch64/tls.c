// SPDX-License-Identifier: GPL-2.0-only
/* aarch64, host side: the thread pointer (TPIDR_EL0) is not in NT_PRSTATUS but in the NT_ARM_TLS
 * regset (which newer kernels extend with TPIDR2: the first word is TPIDR_EL0). */
#include <elf.h>
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "arch/arch.h"

int arch_thread_pointer(pid_t tid, uint64_t *tp)
{
	uint64_t v[2] = { 0, 0 };
	struct iovec iov = { .iov_base = v, .iov_len = sizeof(v) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_TLS, &iov) < 0)
		return -errno;
	*tp = v[0];
	return 0;
}
