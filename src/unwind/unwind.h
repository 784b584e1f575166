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

#include "arch/arch.h"
#include "unwind/frames.h"

struct unwinder;

/*
 * The state of one reader's unwinds (a thread that handles stops or drains a ring): its cache
 * of the stopped thread's stack and the calls it has sent (unwind_sent_begin). Unwinders
 * (one per process) are shared; a reader is used by one thread at a time.
 */
struct unwind_reader;

struct unwind_reader *unwind_reader_new(void);
void unwind_reader_free(struct unwind_reader *rd);
/* Of rd's backtraces, how many the hooks' quick steps made (unwind_hooks.quick), of these how
 * many were remembered (unwind_current_remembered), and how many libunwind's steps began. */
void unwind_reader_stats(const struct unwind_reader *rd, uint64_t *quick, uint64_t *remembered,
			 uint64_t *slow);

struct unwinder *unwind_new(pid_t pid);
void unwind_destroy(struct unwinder *u);
/* Forget cached unwind information (the mappings changed). */
void unwind_flush(struct unwinder *u);

/*
 * Start rd's work on a stop of thread tid: forget the memory read at earlier stops and read
 * the stack from sp up in one go. Must come first at every stop that reads through
 * unwind_read_word or unwind_capture.
 */
void unwind_prefetch(struct unwind_reader *rd, pid_t tid, uint64_t sp);

/* One pointer-sized word of rd's stopped thread's memory, through the cache. 0 or -EFAULT. */
int unwind_read_word(struct unwind_reader *rd, uint64_t addr, uint64_t *val);

/* The same for the hooks below (and what they call), which get no reader: through the reader
 * whose unwind_capture is running on the calling thread. -EFAULT outside one. */
int unwind_read_current(uint64_t addr, uint64_t *val);

/* Do the n words at addr read val now, each as unwind_read_current would read it? lo and end:
 * the lowest of the addresses and the end of the highest word (a span that lies in the
 * capture's copy of the stack, the usual case, is compared there in place). */
/* The hooks' quick steps gave the capture running on the calling thread a backtrace they had
 * remembered (unwind/quickmemo.h): counted for unwind_reader_stats. */
void unwind_current_remembered(void);

bool unwind_current_same(const uint64_t *addr, const uint64_t *val, unsigned n, uint64_t lo,
			 uint64_t end);

/* Has the capture running on the calling thread wanted a word just past the end of its copy of
 * the stack (unwind_copy_use)? */
bool unwind_current_ran_off(void);

/* The top of the stack of the thread being unwound by the capture running on the calling thread
 * (a copy's end, else the end of the mapping its stack was in when it was first seen): false if
 * not known. */
bool unwind_current_top(uint64_t *top);

/*
 * A call in flight whose return address heaptrace replaced with a trapping trampoline's (on
 * the stack at its entry sp, or in the link register, which the function saves below it).
 */
struct unwind_sent {
	uint64_t sp, ret; /* sp at its entry, the caller's return address */
};

/*
 * Until the next unwind_sent_begin on rd: a word read as the address of a trampoline in
 * [lo, hi) (a code address, arm's Thumb bit aside) at addr is read as the return address of
 * the sent call (each added with unwind_sent_add) with the lowest entry sp at or above addr, so
 * that a backtrace taken inside such a call goes on through its caller. None added: none.
 * The set grows as needed: however deep the calls in flight, none is left out.
 */
void unwind_sent_begin(struct unwind_reader *rd, uint64_t lo, uint64_t hi);
void unwind_sent_add(struct unwind_reader *rd, struct unwind_sent s);

/* What unwinding asks of the rest of heaptrace (fallback.c), all called with ctx, during an
 * unwind_capture (memory: unwind_read_current). */
struct unwind_hooks {
	/* Is ret a return address (just after a call)? A step to another one is refused. */
	bool (*ret_ok)(void *ctx, uint64_t ret);
	/* Is pc a signal frame's: the C library's restorer, which a handler returns to (its
	 * unwind tables say so)? The frame it interrupted comes next, at its exact pc. */
	bool (*signal)(void *ctx, uint64_t pc);
	/* May libunwind step from the frame at return address pc? Not where the tables it reads
	 * have nothing for pc: it would guess (x86_64: an rbp chain, arm: an APCS one) and the
	 * frame would pass for one found by its unwind tables. */
	bool (*tables)(void *ctx, uint64_t pc);
	/* Where libunwind stopped short of max: extend pcs[0..n) (pcs[0] the caller's pc, the
	 * rest return addresses; r the registers of the last frame) through the same memory, up
	 * to max frames. Return the new count. */
	unsigned (*extend)(void *ctx, uint64_t *pcs, unsigned n, const struct frames_regs *r,
			   unsigned max);
	/* Optional: the whole backtrace without libunwind, from pc and registers r (the stack
	 * and frame pointers), the same as libunwind's steps and extend() would make it; 0 where
	 * that cannot be done. */
	unsigned (*quick)(void *ctx, uint64_t pc, const struct frames_regs *r, uint64_t *pcs,
			  unsigned max);
	void *ctx;
};

/* Write up to max PCs of the thread of rd's last unwind_prefetch into pcs, pcs[0] being the
 * current PC (regs, a caller's frame; memory through rd's cache). A step that does not move up
 * the stack ends libunwind's part, as does one that h (if not NULL) refuses or a frame h says
 * libunwind's tables do not cover; then h may extend it. Return the number written (at least
 * 1 if max is). */
unsigned unwind_capture(struct unwinder *u, struct unwind_reader *rd, const struct arch_regs *regs,
			uint64_t *pcs, unsigned max, const struct unwind_hooks *h);

/* The same from a copy of the stack: len bytes that were at address lo (from sp up) when
 * regs were taken; other memory is read only where it is a read-only file mapping. */
unsigned unwind_capture_copy(struct unwinder *u, struct unwind_reader *rd,
			     const struct arch_regs *regs, uint64_t lo, const void *stack,
			     size_t len, uint64_t *pcs, unsigned max, const struct unwind_hooks *h);

/* Of the copy rd's last unwind_capture_copy unwound from: the bytes from its start to the end
 * of the highest word read, and whether a word just past its end was wanted (the unwind ran
 * off it). */
void unwind_copy_use(const struct unwind_reader *rd, unsigned *used, bool *over);

#endif
