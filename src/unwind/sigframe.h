/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_SIGFRAME_H
#define HEAPTRACE_SIGFRAME_H

/*
 * The kernel's signal frames in a thread's stack, known by their anchor (arch.h:
 * sigframe_magic, sigframe_sp, sigframe_pc): where a signal handler's calls start, and which
 * sp and pc the signal interrupted.
 */
#include <stdbool.h>
#include <stdint.h>

#include "unwind/unwind.h"

/* A word of a stack at addr (the 8 bytes there; a 32-bit word is the low half): 0, or -1
 * where it cannot be read. */
typedef int (*stack_word_fn)(void *ctx, uint64_t addr, uint64_t *val);

/* A copy of stack memory: len bytes from base. */
struct stack_copy {
	const uint8_t *bytes;
	uint64_t base, len;
};

/* stack_word_fn over a struct stack_copy (ctx). */
int stack_copy_word(void *ctx, uint64_t addr, uint64_t *val);

/* Signal frames can be found on this architecture. */
bool sigframe_known(void);

/* May a signal frame's anchor be at addr, in the stack word reads? Then *w: the anchor's word,
 * *isp and *ipc: the sp and pc the signal interrupted (sp not 0). The cheap half of the test:
 * sigframe_anchor makes the other. */
bool sigframe_regs(stack_word_fn word, void *ctx, uint64_t addr, uint64_t *w, uint64_t *isp,
		   uint64_t *ipc);

/* Is w (sigframe_regs') an anchor: the magic, or the C library's restorer, as its unwind
 * tables say (h: p's fallback_hooks)? */
bool sigframe_anchor(const struct unwind_hooks *h, uint64_t w);

#endif
