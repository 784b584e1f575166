/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_ARCH_H
#define HEAPTRACE_STUB_ARCH_H

/*
 * mips64 (n64) facts for the entry stubs (stubs.h), shared by the stub code (stubcode.c, where
 * they are spelled into assembly: plain numbers only) and heaptrace's side. Offsets are bytes.
 * The pages and records are stub_layout.h's.
 */
#define STUBS_SUPPORTED 1
/* the stub code decides --sample-bytes for calls with one size argument (STUB_D_SAMPLE) */
#define STUB_SAMPLE_SUPPORTED 1

#include "arch/stub_layout.h"

#define STUB_NR_FUTEX 5194 /* n64: 5000 + 194 */
/* the stub code waits for room at most STUB_D_STALL slices, with futex or with STUB_D_PAUSES
 * looks at the tail, and counts the calls it then leaves unrecorded (STUB_C_LOST_*) */
#define STUB_STALL_SUPPORTED 1
/* a slice (STUB_STALL_SLICE_NS) in two lui/ori halves */
#define STUB_SLICE_LO 0x4240
#define STUB_SLICE_HI 0xf
_Static_assert((STUB_SLICE_HI << 16 | STUB_SLICE_LO) == STUB_STALL_SLICE_NS, "1 ms");
/*
 * An entry record (stub_layout.h's fields and these): s8 (the frame pointer), ra (the return
 * address), s0..s3 before the time stamp, s4..s7 and gp after the return flag, then from
 * STUB_REC_ENTRY the copy of the stack from sp up.
 */
#define STUB_RE_S8 48
#define STUB_RE_RA 56
#define STUB_RE_S0 64 /* s0..s3 */
#define STUB_RE_S4 120 /* s4..s7 */
#define STUB_RE_GP 152
#define STUB_REC_ENTRY 160 /* bytes before the stack copy */
_Static_assert(STUB_RE_S8 == STUB_RE_SP + 8 && STUB_RE_RA == STUB_RE_S8 + 8 &&
		       STUB_RE_S0 == STUB_RE_RA + 8 && STUB_RE_S0 + 4 * 8 <= STUB_RE_TIME &&
		       STUB_RE_S4 == STUB_RE_RETURNS + 4 && STUB_RE_GP == STUB_RE_S4 + 4 * 8 &&
		       STUB_RE_GP + 8 <= STUB_REC_ENTRY && STUB_REC_ENTRY % 16 == 0,
	       "mips64's entry record");
/* The time stamps are the CP0 Count register (rdhwr $2, which Linux lets user space read or
 * emulates): 32 bits, so it wraps (at a 100 MHz count, every 43 s). account/ring.c takes
 * differences modulo 2^32 and calibrates its rate over spans shorter than STUB_TICKS_SPAN ns. */
/* The colour every shared mapping of the ring must have (SHMLBA, arch/mips/include/asm/
 * shmparam.h): MIPS data caches may be indexed by virtual address, and the kernel then refuses
 * a MAP_FIXED shared mapping at another colour (EINVAL). */
#define STUB_SHM_ALIGN 0x40000u
#define STUB_TICKS_MASK 0xffffffffull
#define STUB_TICKS_SPAN 2000000000ull

#ifndef STUB_CODE_ONLY
#include <string.h>

#include "arch/arch.h"

/* The stub code's spin wait (STUB_D_PAUSES: one look at the tail each), timed on heaptrace's
 * side. */
static inline void stub_pause(void)
{
	__asm__ volatile("nop");
}

/* heaptrace's side: the clock of the records' time stamps (the stub code reads the same). */
static inline uint64_t stub_ticks(void)
{
#if defined(__mips__)
	uint64_t v;

	__asm__ volatile(".set push\n\t.set mips32r2\n\trdhwr %0, $2\n\t.set pop" : "=r"(v));
	return v & STUB_TICKS_MASK;
#else
	return 0; /* the unit tests' hosts: encodings only */
#endif
}

/*
 * The registers of an entry record's caller frame, for the unwinder (the dump's order: $0-$31,
 * epc 34): pc = the return address ra held at the entry, sp as it was there, s0-s8 and gp.
 *
 * r's other words must be 0 (cleared once: this sets the same words every time).
 */
static inline void stub_regs(struct arch_regs *r, const uint8_t *rec)
{
	r->size = 38 * 8;
	memcpy(&r->w64[16], rec + STUB_RE_S0, 32);
	memcpy(&r->w64[20], rec + STUB_RE_S4, 32);
	memcpy(&r->w64[28], rec + STUB_RE_GP, 8);
	memcpy(&r->w64[29], rec + STUB_RE_SP, 8);
	memcpy(&r->w64[30], rec + STUB_RE_S8, 16); /* s8, ra */
	memcpy(&r->w64[34], rec + STUB_RE_RA, 8);
}

/* The return address of an entry record. */
static inline uint64_t stub_ret(const uint8_t *rec)
{
	uint64_t v;

	memcpy(&v, rec + STUB_RE_RA, 8);
	return v;
}
#endif

#endif
