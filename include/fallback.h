/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_FALLBACK_H
#define HEAPTRACE_FALLBACK_H

/*
 * Backtraces past code without unwind information (gcc emits no .eh_frame for C on arm and
 * mips64 unless asked): a validated stack scan (frames.h) over the stopped thread's stack, read
 * through unwind.c's cache, with function starts from the process's symbols.
 */
#include <stdbool.h>
#include <stdint.h>

#include "process.h"

/*
 * pcs[0..n) is a backtrace of the thread of the last unwind_prefetch whose last frame's sp is
 * sp; pcs[1..] are return addresses. Unless its last frame is an outermost one (_start,
 * __libc_start_main, a thread's start) or main, extend it by scanning up to main, at most max
 * frames, and mark the last frame FRAMES_STOPPED if the scan ends short of max and of those.
 * Return the new count.
 */
unsigned fallback_extend(struct proc *p, uint64_t *pcs, unsigned n, uint64_t sp, unsigned max);

/* Is ret (proc *ctx) just after a call in executable code? */
bool fallback_is_return(void *ctx, uint64_t ret);

/* Forget p's symbols (its mappings changed). */
void fallback_flush(struct proc *p);

#endif
