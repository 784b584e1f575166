/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_UNWIND_H
#define HEAPTRACE_UNWIND_H

/*
 * Remote stack unwinding with libunwind-ptrace: one address space per traced process, with
 * registers taken from the snapshot heaptrace already has and memory read in blocks with
 * process_vm_readv instead of one PTRACE_PEEKDATA per word.
 */
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

struct unwinder;

struct unwinder *unwind_new(pid_t pid);
void unwind_destroy(struct unwinder *u);
/* Forget cached unwind information (the mappings changed). */
void unwind_flush(struct unwinder *u);

/* Write up to max PCs of stopped thread tid into pcs, pcs[0] being the current PC (regs).
 * Return the number written (at least 1). */
unsigned unwind_capture(struct unwinder *u, pid_t tid, const struct arch_regs *regs,
			uint64_t *pcs, unsigned max);

#endif
