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

#include "target/process.h"
#include "unwind/unwind.h"

/*
 * Hooks for unwind_capture on p's threads: backtraces made from cached CFI rules where each
 * step is of the simple kind libunwind would take (quick), the same as libunwind's; a return
 * address must follow a call in executable code; and unless the last frame libunwind found is
 * an outermost one (_start, __libc_start_main, a thread's start) or main, the backtrace is
 * extended by scanning up to main, its last frame marked FRAMES_STOPPED if the scan ends short
 * of max and of those, or at once where libunwind's steps ran off the copy of the stack.
 * Memory is read through unwind_read_current (a live stop or a copy of the stack).
 */
void fallback_hooks(struct proc *p, struct unwind_hooks *h);

/* Forget p's symbols (its mappings changed). */
void fallback_flush(struct proc *p);

#endif
