/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_CPU_H
#define HEAPTRACE_CPU_H

/* Where heaptrace and a launched program run: sharing one CPU, and when polling pays. */
#include <stdbool.h>
#include <sys/types.h>

/* Note the CPUs heaptrace may use (call once, before cpu_pin). */
void cpu_init(void);

/* Run the launched program child and heaptrace on heaptrace's current CPU. */
void cpu_pin(pid_t child);

/* Give every traced thread (and extra, a child not yet registered, if > 0) its mask back. */
void cpu_unpin(pid_t extra);

/* True when heaptrace and the program may be on different CPUs: polling for the next stop
 * then saves a wake-up; pinned, it would only take the program's CPU. */
bool cpu_may_poll(void);

#endif
