/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_DETACH_H
#define HEAPTRACE_DETACH_H

/*
 * Stop every traced thread, read what their rings hold, take every breakpoint out, put
 * return addresses back and let go, so that every process runs on untraced. The processes
 * stay in procs (marked detached) with their tables, for the final report.
 */
#include <sys/types.h>

void detach_all(void);

/* Let go of threads that were seized but never touched (a failed start). */
void detach_untouched(void);

/* The same for the threads of process pid only (an attach of -p PID,PID... that failed). */
void detach_untouched_pid(pid_t pid);

#endif
