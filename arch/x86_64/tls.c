// SPDX-License-Identifier: GPL-2.0-only
/* x86_64, host side: the thread pointer is fs_base, in the general registers. */
#include "arch/arch.h"

int arch_thread_pointer(pid_t tid, uint64_t *tp)
{
	struct arch_regs r;
	int ret = arch_get_regs(tid, &r);

	if (ret)
		return ret;
	*tp = arch->get_tls(&r);
	return 0;
}
