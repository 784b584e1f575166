/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_GUARD_ARCH_H
#define HEAPTRACE_GUARD_ARCH_H

/* No guard (guard.h) on this architecture yet: a breakpoint hit after heaptrace was killed
 * with SIGKILL still ends the program with SIGTRAP (man page, BUGS). */
#define GUARD_SUPPORTED 0

#endif
