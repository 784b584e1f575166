/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_UNWIND_H
#define HEAPTRACE_UNWIND_H

/*
 * Remote stack unwinding with libunwind-ptrace: one address space per traced process, with
 * registers taken from the snapshot heaptrace already has and memory read in blocks with
 * process_vm_readv instead of one PTRACE_PEEKDATA per word.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

struct unwinder;

struct unwinder *unwind_new(pid_t pid);
void unwind_destroy(struct unwinder *u);
/* Forget cached unwind information (the mappings changed). */
void unwind_flush(struct unwinder *u);

/*
 * Start a stop of thread tid: forget the memory read at earlier stops and read the stack
 * from sp up in one go. Must come first at every stop that reads through unwind_read_word
 * or unwind_capture.
 */
void unwind_prefetch(pid_t tid, uint64_t sp);

/* One pointer-sized word of the stopped thread's memory, through the cache. 0 or -EFAULT. */
int unwind_read_word(uint64_t addr, uint64_t *val);

/* Write up to max PCs of the thread of the last unwind_prefetch into pcs, pcs[0] being the
 * current PC (regs), and the sp of the last one into *sp. A step that does not move up the
 * stack, or to a return address ret_ok (if not NULL) refuses, ends the backtrace. Return the
 * number written (at least 1). */
unsigned unwind_capture(struct unwinder *u, const struct arch_regs *regs, uint64_t *pcs,
			unsigned max, uint64_t *sp, bool (*ret_ok)(void *ctx, uint64_t ret),
			void *ctx);

/* The same from a copy of the stack: len bytes that were at address lo (from sp up) when
 * regs were taken; other memory is read only where it is a read-only file mapping. */
unsigned unwind_capture_copy(struct unwinder *u, const struct arch_regs *regs, uint64_t lo,
			     const void *stack, size_t len, uint64_t *pcs, unsigned max);

#endif
