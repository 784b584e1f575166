/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_FRAMES_H
#define HEAPTRACE_FRAMES_H

/*
 * Walking the words of a tracee's stack through a memory-read callback, so that the same code
 * serves a live thread (remote_read) and a copy of its stack, and can be unit tested on any
 * host.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Read up to len bytes at addr into buf. Return the number read (short at an unmapped page)
 * or -errno. */
typedef ssize_t (*frames_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* Called with each whole word read and its address; return false to stop the walk. */
typedef bool (*frames_word_fn)(void *ctx, uint64_t addr, uint64_t val);

/* Most bytes frames_each_word reads: a bound for a corrupt or unknown stack top. */
#define FRAMES_WALK_MAX (64u << 10)

/*
 * Call fn for every word_size-byte word (4 or 8, little-endian) from lo rounded down to a word
 * up to hi, at most FRAMES_WALK_MAX bytes, stopping at the first failed or short read or when
 * fn returns false.
 * Return the number of words passed to fn.
 */
size_t frames_each_word(uint64_t lo, uint64_t hi, unsigned word_size, frames_read_fn read,
			void *rctx, frames_word_fn fn, void *fctx);

/*
 * How a backtrace frame was found: from unwind tables (.eh_frame, .debug_frame, .ARM.exidx),
 * a frame-pointer chain, or a validated stack scan. Backtraces keep it in the top bits of each
 * address (user addresses stay below 1 << 56 on every supported architecture), with
 * FRAMES_STOPPED on the last frame when the unwind stopped there for lack of information.
 * FRAMES_PYTHON is a Python frame (unwind/python.h): no address but FRAMES_PY_TAG and the
 * index of its (function, file, line) in its process's table, so that frames_addr of it is
 * no code address either.
 */
enum frames_how { FRAMES_CFI, FRAMES_FP, FRAMES_SCAN, FRAMES_PYTHON };

#define FRAMES_HOW_SHIFT 62
#define FRAMES_STOPPED (1ull << 61)
#define FRAMES_ADDR_MASK (FRAMES_STOPPED - 1)
#define FRAMES_PY_TAG (1ull << 60)

static inline uint64_t frames_python(uint32_t id)
{
	return (uint64_t)FRAMES_PYTHON << FRAMES_HOW_SHIFT | FRAMES_PY_TAG | id;
}

/* Is addr (frames_addr of a frame) a Python frame's? Its index is then (uint32_t)addr. */
static inline bool frames_is_python(uint64_t addr)
{
	return (addr & ~(uint64_t)UINT32_MAX) == FRAMES_PY_TAG;
}

static inline uint64_t frames_addr(uint64_t v)
{
	return v & FRAMES_ADDR_MASK;
}

static inline enum frames_how frames_how_of(uint64_t v)
{
	return (enum frames_how)(v >> FRAMES_HOW_SHIFT);
}

/* "cfi", "fp" or "scan". */
const char *frames_how_name(enum frames_how how);

/* A frame's registers as DWARF numbers them (arch_ops.dwarf_regs), a bit in known for each
 * whose value is known. */
#define FRAMES_REGS 64
struct frames_regs {
	uint64_t v[FRAMES_REGS];
	uint64_t known;
};

static inline bool frames_reg(const struct frames_regs *r, unsigned reg, uint64_t *val)
{
	if (reg >= FRAMES_REGS || !(r->known >> reg & 1))
		return false;
	*val = r->v[reg];
	return true;
}

static inline void frames_set_reg(struct frames_regs *r, unsigned reg, uint64_t val)
{
	if (reg < FRAMES_REGS) {
		r->v[reg] = val;
		r->known |= 1ull << reg;
	}
}

/* What a stack scan needs to know of the traced process. */
struct frames_env {
	unsigned word_size;
	frames_read_fn read; /* stack memory */
	void *ctx; /* passed to every callback */
	/* Is ret (a word from the stack) just after a call instruction in an executable mapping?
	 * *target: a direct call's destination (code address), 0 for an indirect call. */
	bool (*after_call)(void *ctx, uint64_t ret, uint64_t *target);
	/* Code address of the first instruction of the function holding pc (a return address,
	 * is_return, is looked up at pc - 1), or 0 if unknown. */
	uint64_t (*func_start)(void *ctx, uint64_t pc, bool is_return);
	/* Optional: is the return address pc in a function the scan must not go past (main:
	 * the C library calls it through a pointer, and the words above are its startup's)? */
	bool (*last)(void *ctx, uint64_t pc);
};

/* Bytes above a frame's sp searched for its return address. */
#define FRAMES_SCAN_WINDOW (8u << 10)

/*
 * The callers of the function at pc (a return address if is_return) whose frame starts at
 * sp, found by scanning the stack upward: a word counts as its return address when it
 * follows a call in executable code, and a direct call must call the function holding the
 * frame below it (stale return addresses left by earlier calls fail that). Only when no direct
 * call matches within FRAMES_SCAN_WINDOW is the first call of any kind taken (a call through a
 * register, or to a function that tail-called the one below). Write up to
 * max addresses tagged FRAMES_SCAN into pcs; return how many.
 */
unsigned frames_scan(const struct frames_env *e, uint64_t pc, bool is_return, uint64_t sp,
		     uint64_t *pcs, unsigned max);

#endif
