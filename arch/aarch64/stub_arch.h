/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_ARCH_H
#define HEAPTRACE_STUB_ARCH_H

/*
 * aarch64 facts for the entry stubs (stubs.h), shared by the stub code (stubcode.c, where they
 * are spelled into assembly: plain numbers only) and heaptrace's side. Offsets are bytes. The
 * pages and records are stub_layout.h's; an entry record carries more registers than on
 * x86_64, so its header is longer.
 */
#define STUBS_SUPPORTED 1
/* the stub code decides --sample-bytes for calls with one size argument (STUB_D_SAMPLE) */
#define STUB_SAMPLE_SUPPORTED 1

#include "arch/stub_layout.h"

#define STUB_NR_FUTEX 98
/* the stub code waits for room at most STUB_D_STALL slices, with futex or with STUB_D_PAUSES
 * yields, and counts the calls it then leaves unrecorded (STUB_C_LOST_*) */
#define STUB_STALL_SUPPORTED 1
/* a slice (STUB_STALL_SLICE_NS) in two movz/movk halves */
#define STUB_SLICE_LO 0x4240
#define STUB_SLICE_HI 0xf
_Static_assert((STUB_SLICE_HI << 16 | STUB_SLICE_LO) == STUB_STALL_SLICE_NS, "1 ms");
/*
 * An entry record (stub_layout.h's fields and these): x29, x30 (the return address), x19..x22
 * before the time stamp, x23..x28 after the return flag, then from STUB_REC_ENTRY the copy of
 * the stack from sp up.
 */
#define STUB_RE_X29 48
#define STUB_RE_X30 56
#define STUB_RE_X19 64 /* x19..x22 */
#define STUB_RE_X23 120 /* x23..x28 */
#define STUB_REC_ENTRY 176 /* bytes before the stack copy */
_Static_assert(STUB_RE_X29 == STUB_RE_SP + 8 && STUB_RE_X30 == STUB_RE_X29 + 8 &&
		       STUB_RE_X19 == STUB_RE_X30 + 8 && STUB_RE_X19 + 4 * 8 <= STUB_RE_TIME &&
		       STUB_RE_X23 == STUB_RE_RETURNS + 4 &&
		       STUB_RE_X23 + 6 * 8 <= STUB_REC_ENTRY && STUB_REC_ENTRY % 16 == 0,
	       "aarch64's entry record (stp pairs: x29 x30, x19 x20 ..., x23 x24 ...)");

#ifndef STUB_CODE_ONLY
#include <string.h>

#include "arch/arch.h"

#include "arch/stub_critical.h"

/* The stub code's spin wait (STUB_D_PAUSES), timed on heaptrace's side. */
static inline void stub_pause(void)
{
	__asm__ volatile("yield");
}

/* heaptrace's side: the clock of the records' time stamps (the stub code reads the same
 * virtual counter, which Linux lets user space read). */
static inline uint64_t stub_ticks(void)
{
#if defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return 0; /* the unit tests' hosts: encodings only */
#endif
}

/*
 * The registers of an entry record's caller frame, for the unwinder (user_pt_regs order: x0-x30,
 * sp 31, pc 32): pc = the return address x30 held at the entry, sp as it was there, the frame
 * pointer and the callee-saved registers.
 *
 * r's other words must be 0 (cleared once: this sets the same words every time).
 */
static inline void stub_regs(struct arch_regs *r, const uint8_t *rec)
{
	r->size = 34 * 8;
	memcpy(&r->w64[29], rec + STUB_RE_X29, 16); /* x29, x30 */
	memcpy(&r->w64[19], rec + STUB_RE_X19, 32);
	memcpy(&r->w64[23], rec + STUB_RE_X23, 48);
	memcpy(&r->w64[31], rec + STUB_RE_SP, 8);
	memcpy(&r->w64[32], rec + STUB_RE_X30, 8);
}

/* The return address of an entry record. */
static inline uint64_t stub_ret(const uint8_t *rec)
{
	uint64_t v;

	memcpy(&v, rec + STUB_RE_X30, 8);
	return v;
}
#endif

#endif
