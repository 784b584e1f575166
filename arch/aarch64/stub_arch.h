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

#include "arch/stub_layout.h"

#define STUB_NR_FUTEX 98
/*
 * An entry record, after its tag, length and hook (stub_layout.h): 16 x0, 24 x1, 32 x2, 40 sp at the entry, 48 x29, 56 x30 (the return address), 64
 * x19..x22, 96 time stamp, 104 thread pointer, 112 bytes of stack copied, 116 return sent
 * through the trampoline, 120 x23..x28, then the copy of the stack from sp up.
 */
#define STUB_REC_ENTRY 176 /* bytes before the stack copy */

#ifndef STUB_CODE_ONLY
#include <string.h>

#include "arch/arch.h"

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
 */
static inline void stub_regs(struct arch_regs *r, const uint8_t *rec)
{
	memset(r, 0, sizeof(*r));
	r->size = 34 * 8;
	memcpy(&r->w64[29], rec + 48, 16);
	memcpy(&r->w64[19], rec + 64, 32);
	memcpy(&r->w64[23], rec + 120, 48);
	memcpy(&r->w64[31], rec + 40, 8);
	memcpy(&r->w64[32], rec + 56, 8);
}

/* The return address of an entry record. */
static inline uint64_t stub_ret(const uint8_t *rec)
{
	uint64_t v;

	memcpy(&v, rec + 56, 8);
	return v;
}
#endif

#endif
