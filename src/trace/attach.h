/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_ATTACH_H
#define HEAPTRACE_ATTACH_H

#include <sys/types.h>

/* Seize every thread of process pid, place the breakpoints and let it run on. Return 0 or
 * -errno after printing why (the threads seized so far are still traced: detach them). */
int attach_process(pid_t pid);

#endif
