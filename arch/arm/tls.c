// SPDX-License-Identifier: GPL-2.0-only
/* arm, host side: the thread pointer (TPIDRURO) through PTRACE_GET_THREAD_AREA, which every arm
 * kernel has (NT_ARM_TLS only an arm64 kernel running the program in compat mode). */
#include <errno.h>
#include <stdint.h>
#include <sys/ptrace.h>

#include "arch/arch.h"

#define ARM_GET_THREAD_AREA 22 /* arch/arm/include/uapi/asm/ptrace.h */

int arch_thread_pointer(pid_t tid, uint64_t *tp)
{
	uint32_t v = 0;

	if (ptrace(ARM_GET_THREAD_AREA, tid, 0, &v) < 0)
		return -errno;
	*tp = v;
	return 0;
}
