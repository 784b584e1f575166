/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SIGMASK_H
#define HEAPTRACE_SIGMASK_H

/*
 * heaptrace's sigprocmask, in the C library's place for the whole program (sigmask.c): the
 * calling thread's mask is left as it is while that thread unwinds.
 */
#include <stdbool.h>

/* The calling thread starts (on) or ends (!on) a stretch of libunwind calls. */
void sigmask_skip(bool on);

#endif
