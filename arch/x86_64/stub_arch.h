/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_ARCH_H
#define HEAPTRACE_STUB_ARCH_H

/*
 * x86_64 facts for the entry stubs (stubs.h), shared by the stub code (stubcode.c, where they
 * are spelled into assembly: plain numbers only) and heaptrace's side. Offsets are bytes.
 */
#define STUBS_SUPPORTED 1
#define STUB_PY_SUPPORTED 1 /* the stub code records Python frames (STUB_D_PY_*) */
/* the stub code waits for room at most STUB_D_STALL slices, with futex or with STUB_D_PAUSES
 * pauses, and counts the calls it then leaves unrecorded (STUB_C_LOST_*) */
#define STUB_STALL_SUPPORTED 1
/* the stub code knows watched entries (STUB_HOOK_WATCH): the program's seccomp filters */
#define STUB_WATCH_SUPPORTED 1
/* the stub code decides --sample-bytes for calls with one size argument (STUB_D_SAMPLE) */
#define STUB_SAMPLE_SUPPORTED 1

#include "arch/stub_layout.h"

#define STUB_NR_FUTEX 202
/*
 * An entry record (stub_layout.h's fields and these): the callee-saved registers at the entry,
 * then from STUB_REC_ENTRY the copy of the stack from sp up, whose first word is the return
 * address.
 */
#define STUB_RE_RBP 48
#define STUB_RE_RBX 56
#define STUB_RE_R12 64
#define STUB_RE_R13 72
#define STUB_RE_R14 80
#define STUB_RE_R15 88
#define STUB_REC_ENTRY 128 /* bytes before the stack copy */
_Static_assert(STUB_RE_RBP == STUB_RE_SP + 8 && STUB_RE_RBX == STUB_RE_RBP + 8 &&
		       STUB_RE_R12 == STUB_RE_RBX + 8 && STUB_RE_R13 == STUB_RE_R12 + 8 &&
		       STUB_RE_R14 == STUB_RE_R13 + 8 && STUB_RE_R15 == STUB_RE_R14 + 8 &&
		       STUB_RE_R15 + 8 <= STUB_RE_TIME && STUB_RE_RETURNS + 4 <= STUB_REC_ENTRY &&
		       STUB_REC_ENTRY % 16 == 0,
	       "x86_64's entry record");

#ifndef STUB_CODE_ONLY
#include <string.h>

#include "arch/arch.h"

/*
 * The stub code's rdtsc instructions and the instruction after each (stubcode.c's STAMP): rdtsc
 * faults (SIGSEGV) in a thread that turned the counter off, and heaptrace answers the first such
 * fault (stubs_clock_fault).
 */
extern const uint8_t ht_stub_tsc_a[], ht_stub_tsc_a_end[], ht_stub_tsc_b[], ht_stub_tsc_b_end[];
#define STUB_CLOCK_SITES                                                                          \
	{                                                                                         \
		{ ht_stub_tsc_a, ht_stub_tsc_a_end }, { ht_stub_tsc_b, ht_stub_tsc_b_end }         \
	}

/*
 * The stub code's critical sections (stubcode.c's CS_BEGIN, CS_END), [first, second) each: a
 * thread whose pc lies in one, or that was interrupted there (a signal frame on its stack holds
 * that pc), may hold a record reserved and not yet written (stubprobe.c).
 */
extern const uint8_t ht_stub_cs_entry[], ht_stub_cs_entry_end[], ht_stub_cs_free[],
	ht_stub_cs_free_end[], ht_stub_cs_ret[], ht_stub_cs_ret_end[], ht_stub_cs_reserve[],
	ht_stub_cs_reserve_end[], ht_stub_cs_reserve_exit[], ht_stub_cs_reserve_exit_end[],
	ht_stub_cs_reserve_fast[], ht_stub_cs_reserve_fast_end[];
#define STUB_CRITICAL                                                                             \
	{                                                                                         \
		{ ht_stub_cs_entry, ht_stub_cs_entry_end }, { ht_stub_cs_free, ht_stub_cs_free_end }, \
		{ ht_stub_cs_ret, ht_stub_cs_ret_end },                                           \
		{ ht_stub_cs_reserve, ht_stub_cs_reserve_end },                                   \
		{ ht_stub_cs_reserve_exit, ht_stub_cs_reserve_exit_end },                        \
		{ ht_stub_cs_reserve_fast, ht_stub_cs_reserve_fast_end }                          \
	}

/* The stub code's spin wait (STUB_D_PAUSES), timed on heaptrace's side. */
static inline void stub_pause(void)
{
	__builtin_ia32_pause();
}

/* heaptrace's side: the clock of the records' time stamps (the stub code reads rdtsc). */
static inline uint64_t stub_ticks(void)
{
	return __builtin_ia32_rdtsc();
}

/*
 * The registers of an entry record's caller frame, for the unwinder: pc = the return address
 * (the first word of the stack copy), sp above it, and the callee-saved registers as they were
 * at the entry (user_regs_struct order: r15 r14 r13 r12 rbp rbx ... rip 16, rsp 19).
 *
 * r's other words must be 0 (cleared once: this sets the same words every time).
 */
static inline void stub_regs(struct arch_regs *r, const uint8_t *rec)
{
	uint64_t sp;

	r->size = 27 * 8;
	memcpy(&r->w64[4], rec + STUB_RE_RBP, 8);
	memcpy(&r->w64[5], rec + STUB_RE_RBX, 8);
	memcpy(&r->w64[3], rec + STUB_RE_R12, 8);
	memcpy(&r->w64[2], rec + STUB_RE_R13, 8);
	memcpy(&r->w64[1], rec + STUB_RE_R14, 8);
	memcpy(&r->w64[0], rec + STUB_RE_R15, 8);
	memcpy(&sp, rec + STUB_RE_SP, 8);
	memcpy(&r->w64[16], rec + STUB_REC_ENTRY, 8);
	r->w64[19] = sp + 8;
}

/* The return address of an entry record: the first word of its stack copy, if any. */
static inline uint64_t stub_ret(const uint8_t *rec)
{
	uint32_t copy;
	uint64_t v = 0;

	memcpy(&copy, rec + STUB_RE_COPY, 4);
	if (copy >= 8)
		memcpy(&v, rec + STUB_REC_ENTRY, 8);
	return v;
}
#endif

#endif
