/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_ARCH_H
#define HEAPTRACE_STUB_ARCH_H

/*
 * x86_64 facts for the entry stubs (stubs.h), shared by the stub code (stubcode.c, where they
 * are spelled into assembly: plain numbers only) and heaptrace's side. Offsets are bytes.
 */
#define STUBS_SUPPORTED 1

/* The data page: private to the process (a forked child gets its own copy). */
#define STUB_D_OFF 0 /* nonzero: record nothing (detached, or a child left untraced) */
#define STUB_D_CTL 8 /* the control page of the ring */
#define STUB_D_RING 16 /* the ring, mapped twice in a row: a record never wraps */
#define STUB_D_MASK 24 /* ring size - 1 */
#define STUB_D_SIZE 32 /* ring size */
#define STUB_D_COPY 40 /* most bytes of stack an entry record copies */
#define STUB_D_TRAMP 48 /* ht_stub_ret in the process */
#define STUB_D_CONT 3072 /* per hook (up to 128): its continuation (relocated first
			  * instructions) */
#define STUB_D_MAIN_LO 192 /* the main thread's stack: [lo, top), whatever its key */
#define STUB_D_MAIN_TOP 200
#define STUB_D_TOPS 1024 /* { thread pointer, stack top } per known thread */
#define STUB_TOPS_MASK 127 /* entries - 1 */
#define STUB_TOPS_PROBE 8 /* entries looked at from the hashed one */

/* The control page, shared with heaptrace (the first page of the ring's memfd). */
#define STUB_C_HEAD 0 /* u64: bytes reserved so far */
#define STUB_C_TAIL 64 /* u64: bytes heaptrace has read; stubs wait on its low word */
#define STUB_C_WAITERS 72 /* u32: a stub waits for room */
#define STUB_C_OWNER 128 /* u32: robust futex, heaptrace's; the kernel marks its death */
#define STUB_C_ROBUST 136 /* heaptrace's robust list entry for it */
#define STUB_C_DWAKE 192 /* u32: heaptrace's reader sleeps on it; stubs wake it */
#define STUB_OWNER_DIED 0x40000000 /* FUTEX_OWNER_DIED */
#define STUB_NR_FUTEX 202

/* Records: a u64 tag (the position | kind, written last), a u32 length, a u32 hook. */
#define STUB_KIND_ENTRY 1
#define STUB_KIND_FREE 2
#define STUB_KIND_RETURN 3
#define STUB_REC_ENTRY 128 /* bytes before the stack copy */
#define STUB_REC_FREE 32
#define STUB_REC_RETURN 48
#define STUB_HOOK_FREE 0x100 /* in the thunk's word: a free, recorded at entry only */
#define STUB_HOOK_NORET 0x200 /* in the thunk's word: an entry record, its return left alone
			       * (libstdc++'s operator new: stubs.c) */

#ifndef STUB_CODE_ONLY
#include <string.h>

#include "arch.h"

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
