/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_ARCH_H
#define HEAPTRACE_STUB_ARCH_H

/*
 * arm (32-bit, Thumb-2) facts for the entry stubs (stubs.h), shared by the stub code
 * (stubcode.c, where they are spelled into assembly: plain numbers only) and heaptrace's side.
 * Offsets are bytes. The pages and records are stub_layout.h's, with its 64-bit fields: the
 * stubs write a 32-bit value as two words, its high word 0, and publish a tag as two words
 * after a barrier, so the ring's reader is the same on every architecture (16 bytes more per
 * record than 32-bit fields would take; the ring position and the cookie stay 64-bit).
 */
#define STUBS_SUPPORTED 1

#include "arch/stub_layout.h"

#define STUB_NR_FUTEX 240
/* the stub code waits for room at most STUB_D_STALL slices, with futex or with STUB_D_PAUSES
 * yields, and counts the calls it then leaves unrecorded (STUB_C_LOST_*) */
#define STUB_STALL_SUPPORTED 1
/* a slice (STUB_STALL_SLICE_NS) in two movw/movt halves */
#define STUB_SLICE_LO 0x4240
#define STUB_SLICE_HI 0xf
_Static_assert((STUB_SLICE_HI << 16 | STUB_SLICE_LO) == STUB_STALL_SLICE_NS, "1 ms");
/*
 * An entry record (stub_layout.h's fields, u64 each, and these): r4..r11 (u32 each), lr (u64:
 * the return address, bit 0 set for a Thumb caller), then from STUB_REC_ENTRY the copy of the
 * stack from sp up.
 */
#define STUB_RE_R4 48 /* r4..r11 */
#define STUB_RE_LR 80
#define STUB_REC_ENTRY 128 /* bytes before the stack copy */
_Static_assert(STUB_RE_R4 == STUB_RE_SP + 8 && STUB_RE_LR == STUB_RE_R4 + 8 * 4 &&
		       STUB_RE_LR + 8 <= STUB_RE_TIME && STUB_RE_RETURNS + 4 <= STUB_REC_ENTRY &&
		       STUB_REC_ENTRY % 16 == 0,
	       "arm's entry record");

#ifndef STUB_CODE_ONLY
#include <string.h>

#include "arch/arch.h"

#include "arch/stub_critical.h"

/* The stub code's spin wait (STUB_D_PAUSES), timed on heaptrace's side. */
static inline void stub_pause(void)
{
#if defined(__arm__)
	__asm__ volatile("yield");
#endif
}

/* heaptrace's side: the clock of the records' time stamps, the generic timer's virtual count
 * (CNTVCT), which the stub code reads too; Linux lets user space read it where the CPU has
 * the timer (the guests' cortex-a15 does). */
static inline uint64_t stub_ticks(void)
{
#if defined(__arm__)
	uint64_t v;

	__asm__ volatile("isb\n\tmrrc p15, 1, %Q0, %R0, c14" : "=r"(v));
	return v;
#else
	return 0; /* the unit tests' hosts: encodings only */
#endif
}

/*
 * The registers of an entry record's caller frame, for the unwinder (NT_PRSTATUS order: r0-r15,
 * cpsr): pc = the return address lr held at the entry (without its Thumb bit, the T flag set
 * instead, as arm_set_pc does), sp as it was there, and the callee-saved r4-r11 (r11: the
 * frame pointer of ARM code, r7 of Thumb code).
 *
 * r's other words must be 0 (cleared once: this sets the same words every time).
 */
static inline void stub_regs(struct arch_regs *r, const uint8_t *rec)
{
	uint32_t lr, sp;

	r->size = 18 * 4;
	memcpy(&r->w32[4], rec + STUB_RE_R4, 32);
	memcpy(&sp, rec + STUB_RE_SP, 4);
	memcpy(&lr, rec + STUB_RE_LR, 4);
	r->w32[13] = sp;
	r->w32[14] = lr;
	r->w32[15] = lr & ~1u;
	r->w32[16] = lr & 1 ? 0x20 : 0; /* CPSR.T */
}

/* The return address of an entry record (bit 0 set for a Thumb caller, as lr holds it). */
static inline uint64_t stub_ret(const uint8_t *rec)
{
	uint32_t v;

	memcpy(&v, rec + STUB_RE_LR, 4);
	return v;
}
#endif

#endif
