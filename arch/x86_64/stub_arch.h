/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_ARCH_H
#define HEAPTRACE_STUB_ARCH_H

/*
 * x86_64 facts for the entry stubs (stubs.h), shared by the stub code (stubcode.c, where they
 * are spelled into assembly: plain numbers only) and heaptrace's side. Offsets are bytes.
 */
#define STUBS_SUPPORTED 1

#include "arch/stub_layout.h"

#define STUB_NR_FUTEX 202
/* An entry record: its header's bytes, before the stack copy. */
#define STUB_REC_ENTRY 128

#ifndef STUB_CODE_ONLY
#include <string.h>

#include "arch/arch.h"

/* heaptrace's side: the clock of the records' time stamps (the stub code reads rdtsc). */
static inline uint64_t stub_ticks(void)
{
	return __builtin_ia32_rdtsc();
}

/*
 * The registers of an entry record's caller frame, for the unwinder: pc = the return address
 * (the first word of the stack copy), sp above it, and the callee-saved registers as they were
 * at the entry (user_regs_struct order: r15 r14 r13 r12 rbp rbx ... rip 16, rsp 19).
 */
static inline void stub_regs(struct arch_regs *r, const uint8_t *rec)
{
	static const int from[][2] = { { 4, 48 }, { 5, 56 }, { 3, 64 }, { 2, 72 }, { 1, 80 },
				       { 0, 88 } };
	uint64_t sp;

	memset(r, 0, sizeof(*r));
	r->size = 27 * 8;
	for (unsigned i = 0; i < sizeof(from) / sizeof(from[0]); i++)
		memcpy(&r->w64[from[i][0]], rec + from[i][1], 8);
	memcpy(&sp, rec + 40, 8);
	memcpy(&r->w64[16], rec + STUB_REC_ENTRY, 8);
	r->w64[19] = sp + 8;
}

/* The return address of an entry record: the first word of its stack copy, if any. */
static inline uint64_t stub_ret(const uint8_t *rec)
{
	uint32_t copy;
	uint64_t v = 0;

	memcpy(&copy, rec + 112, 4);
	if (copy >= 8)
		memcpy(&v, rec + STUB_REC_ENTRY, 8);
	return v;
}
#endif

#endif
