// SPDX-License-Identifier: GPL-2.0-only
/* mips64, host side: the thread pointer (the UserLocal value rdhwr $29 reads) through
 * PTRACE_GET_THREAD_AREA, as a 64-bit word for an n64 program. */
#include <errno.h>
#include <stdint.h>
#include <sys/ptrace.h>

#include "arch/arch.h"

#define MIPS_GET_THREAD_AREA 25 /* arch/mips/include/uapi/asm/ptrace.h */

int arch_thread_pointer(pid_t tid, uint64_t *tp)
{
	uint64_t v = 0;

	if (ptrace(MIPS_GET_THREAD_AREA, tid, 0, &v) < 0)
		return -errno;
	*tp = v;
	return 0;
}
