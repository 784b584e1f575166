/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_ARCH_H
#define HEAPTRACE_STUB_ARCH_H

/*
 * aarch64 facts for the entry stubs (stubs.h), shared by the stub code (stubcode.c, where they
 * are spelled into assembly: plain numbers only) and heaptrace's side. Offsets are bytes. The
 * data page, the control page and the records are laid out as on x86_64 (stubs.c reads them);
 * an entry record carries more registers, so its header is longer.
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
			  * instruction) */
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
#define STUB_OWNER_DIED 0x40000000 /* FUTEX_OWNER_DIED (bit 30) */
#define STUB_NR_FUTEX 98

/*
 * Records: a u64 tag (the position | kind, written last), a u32 length, a u32 hook. An entry
 * record: 16 x0, 24 x1, 32 x2, 40 sp at the entry, 48 x29, 56 x30 (the return address), 64
 * x19..x22, 96 time stamp, 104 thread pointer, 112 bytes of stack copied, 116 return sent
 * through the trampoline, 120 x23..x28, then the copy of the stack from sp up.
 */
#define STUB_KIND_ENTRY 1
#define STUB_KIND_FREE 2
#define STUB_KIND_RETURN 3
#define STUB_REC_ENTRY 176 /* bytes before the stack copy */
#define STUB_REC_FREE 32
#define STUB_REC_RETURN 48
#define STUB_HOOK_FREE 0x100 /* in the thunk's word: a free, recorded at entry only */
#define STUB_HOOK_NORET 0x200 /* in the thunk's word: an entry record, its return left alone
			       * (libstdc++'s operator new: stubs.c) */

#ifndef STUB_CODE_ONLY
#include <string.h>

#include "arch.h"

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
