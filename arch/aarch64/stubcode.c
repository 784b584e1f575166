// SPDX-License-Identifier: GPL-2.0-only
/*
 * aarch64 entry stubs (stubs.h): the code heaptrace copies into a traced process, in section
 * ht_stub. A page of code, then the process's private data page (stub_arch.h: STUB_D_*). All
 * references are PC-relative inside the section, so the copy works anywhere; the Makefile
 * checks that the section has no relocation. ARMv8.0 only: exclusive load/store pairs, no LSE
 * atomics (the guests' cortex-a57 has none).
 *
 * A patched entry is one `b` to the function's thunk (`movz w16, #hook|flags; b
 * ht_stub_entry`), which leaves x30 (the return address) and sp alone. x16 and x17 are free at
 * a function's first instruction (AAPCS64 lets veneers and PLT entries clobber them on the way
 * in; GCC's IPA-RA knows it), and so are the flags. Every other register is put back: a caller
 * in the same library may count on more than the ABI promises (IPA-RA).
 *
 * ht_stub_entry saves x0-x15, x30 and NZCV in a 160-byte frame below sp (E, the entry sp):
 * x0..x15 at 0, x30 at 128, NZCV at 136, and 144..159 (E-16) for { cookie, return address }.
 * It reserves a record in the shared ring (ldxr/stxr on its head), writes it (free: the
 * pointer and a time stamp; others: arguments, sp, x29, x30, x19-x28, a time stamp, and a copy
 * of the stack from E up) and publishes it by writing its tag last (stlr). An allocation's
 * return goes through ht_stub_ret: x30 = the trampoline, the function starts at sp = E-16 with
 * { cookie, return address } there (no malloc-family function takes stack arguments). Then
 * the function goes on at its continuation: its displaced first instruction, relocated, and a
 * `b` back, reached by `br x16` (the stub page is not BTI-guarded). With the data page's off
 * word set, or heaptrace gone (the kernel marks the robust futex heaptrace owns in the ring's
 * control page), nothing is recorded.
 */
#define STUB_CODE_ONLY
#include "stub_arch.h"

#define S_(x) #x
#define S(x) S_(x)

/* stlr, which publishes a record, takes no offset: the tag is at the record's start. */
_Static_assert(STUB_R_TAG == 0, "the tag starts the record");

#define SAVE_X0_X15                                                                               \
	"	stp x0, x1, [sp]\n	stp x2, x3, [sp, #16]\n	stp x4, x5, [sp, #32]\n"               \
	"	stp x6, x7, [sp, #48]\n	stp x8, x9, [sp, #64]\n	stp x10, x11, [sp, #80]\n"        \
	"	stp x12, x13, [sp, #96]\n	stp x14, x15, [sp, #112]\n"
#define LOAD_X0_X15                                                                               \
	"	ldp x0, x1, [sp]\n	ldp x2, x3, [sp, #16]\n	ldp x4, x5, [sp, #32]\n"               \
	"	ldp x6, x7, [sp, #48]\n	ldp x8, x9, [sp, #64]\n	ldp x10, x11, [sp, #80]\n"        \
	"	ldp x12, x13, [sp, #96]\n	ldp x14, x15, [sp, #112]\n"
/*
 * The critical sections (stub_arch.h: STUB_CRITICAL): from a record's reservation to the
 * store of its tag, a record reserved and not yet written. heaptrace's probe of a stuck reader
 * looks for threads there. The check of stxr's status counts as inside: a thread there whose
 * stxr failed has reserved nothing, and the probe then errs on the safe side.
 */
#define CS_BEGIN(x) ".globl ht_stub_cs_" #x "\nht_stub_cs_" #x ":\n"
#define CS_END(x) ".globl ht_stub_cs_" #x "_end\nht_stub_cs_" #x "_end:\n"

/*
 * Reserve x14 bytes of ring at x15 where they fit, as stub_layout.h says (ldxr/stxr; x9: the
 * data page, x11: the control page), x0 = the record; else a slice of .Lroom (x3: the slices
 * left, x5: the tail read) and again, or on to fail (lost: the counter's offset). x1-x8, x10,
 * x17 clobbered. Labels l, l0 and l9. Opens critical sections cs_res (closed here) and cs
 * (closed by the caller, after the tag's store).
 */
#define RESERVE(l, lost, fail, cs)                                                                \
	"	add x10, x11, #" S(STUB_C_HEAD) "\n"                                                  \
	"	ldr x3, [x9, #" S(STUB_D_STALL) "]\n"                                                 \
	l ":	ldr x5, [x11, #" S(STUB_C_TAIL) "]\n"                                                \
	"	ldr x1, [x9, #" S(STUB_D_SIZE) "]\n	add x17, x5, x1\n"                             \
	"	ldxr x15, [x10]\n	add x1, x15, x14\n	cmp x1, x17\n	b.hi " l "0f\n"          \
	"	stxr w2, x1, [x10]\n" CS_BEGIN(cs##_res) "	cbnz w2, " l "b\n"                      \
	"	b " l "9f\n" CS_END(cs##_res)                                                        \
	l "0:	clrex\n	mov x1, #" S(lost) "\n	bl .Lroom\n"                                    \
	"	cbz w1, " l "b\n	b " fail "\n"                                                     \
	l "9:" CS_BEGIN(cs) "	ldr x0, [x9, #" S(STUB_D_MASK) "]\n	and x0, x15, x0\n"             \
	"	ldr x1, [x9, #" S(STUB_D_RING) "]\n	add x0, x0, x1\n"                               \
	"	str w14, [x0, #" S(STUB_R_LEN) "]\n"

/*
 * --sample-bytes (stub_layout.h: STUB_D_SAMPLE), for a call whose thunk's word (w16) names its
 * size argument (saved x0..x2 at sp): s >= N is taken; else ceil(N / s) = k, a xorshift64 step
 * of STUB_D_RAND, and the call is taken if the draw modulo k is 0. One not taken gets
 * STUB_HOOK_NOT_TAKEN in w16 and no stack copy (x13 = 0: the record's x30 is its caller).
 * x0-x3, x10 clobbered.
 */
#define SAMPLE                                                                                    \
	"	ldr x10, [x9, #" S(STUB_D_SAMPLE) "]\n"                                               \
	"	cbz x10, 20f\n"                                                                    \
	"	ubfx w0, w16, #" S(STUB_HOOK_SIZE_SHIFT) ", #2\n"                                     \
	"	cbz w0, 20f\n"                                                                     \
	"	sub w0, w0, #1\n"                                                                  \
	"	ldr x0, [sp, x0, lsl #3]\n"                                                        \
	"	cmp x0, x10\n	b.hs 20f\n"                                                       \
	"	cmp x0, #0\n	csinc x0, x0, xzr, ne\n" /* a size of 0 as 1 */                 \
	"	add x1, x10, x0\n	sub x1, x1, #1\n	udiv x1, x1, x0\n"                       \
	"	ldr x2, [x9, #" S(STUB_D_RAND) "]\n"                                                  \
	"	eor x2, x2, x2, lsl #13\n	eor x2, x2, x2, lsr #7\n	eor x2, x2, x2, lsl #17\n"    \
	"	str x2, [x9, #" S(STUB_D_RAND) "]\n"                                                  \
	"	udiv x3, x2, x1\n	msub x3, x3, x1, x2\n"                                       \
	"	cbz x3, 20f\n"                                                                     \
	"	orr w16, w16, #" S(STUB_HOOK_NOT_TAKEN) "\n"                                          \
	"	mov x13, #0\n"                                                                     \
	"20:\n"

__asm__(".pushsection ht_stub,\"ax\",%progbits\n"
	".p2align 12\n"
	".globl ht_stub_blob\n"
	"ht_stub_blob:\n"
	".globl ht_stub_entry\n"
	"ht_stub_entry:\n"
	"	sub sp, sp, #160\n" SAVE_X0_X15
	"	mrs x17, nzcv\n"
	"	stp x30, x17, [sp, #128]\n"
	"	adr x9, .Ldata\n"
	"	ldr x10, [x9, #" S(STUB_D_OFF) "]\n"
	"	cbnz x10, 9f\n"
	"	ldr x11, [x9, #" S(STUB_D_CTL) "]\n"
	"	ldr w10, [x11, #" S(STUB_C_OWNER) "]\n"
	"	tbnz w10, #30, 9f\n" /* STUB_OWNER_DIED */
	"	tbnz w16, #8, 5f\n" /* STUB_HOOK_FREE */
	/* bytes of stack to copy (x13) from E (x12): up to the thread's stack top (the table,
	 * keyed by the thread pointer tpidr_el0, which the C library sets before its first
	 * malloc; the main thread's by its stack's range, known before its thread pointer is),
	 * else to the end of the page of E, and at most STUB_D_COPY, a multiple of 16 */
	"	add x12, sp, #160\n"
	"	ldr x13, [x9, #" S(STUB_D_MAIN_TOP) "]\n"
	"	ldr x10, [x9, #" S(STUB_D_MAIN_LO) "]\n"
	"	cmp x12, x10\n"
	"	b.lo 0f\n"
	"	cmp x12, x13\n"
	"	b.lo 4f\n"
	"0:	mrs x0, tpidr_el0\n"
	"	movz x1, #0x7c15\n	movk x1, #0x7f4a, lsl #16\n"
	"	movk x1, #0x79b9, lsl #32\n	movk x1, #0x9e37, lsl #48\n"
	"	mul x1, x0, x1\n"
	"	lsr x1, x1, #57\n"
	"	mov w2, #" S(STUB_TOPS_PROBE) "\n"
	"1:	and w3, w1, #" S(STUB_TOPS_MASK) "\n"
	"	add x3, x9, x3, lsl #4\n"
	"	ldr x4, [x3, #" S(STUB_D_TOPS) "]\n"
	"	cmp x4, x0\n"
	"	b.eq 2f\n"
	"	cbz x4, 3f\n"
	"	add w1, w1, #1\n"
	"	subs w2, w2, #1\n"
	"	b.ne 1b\n"
	"3:	add x13, x12, #4096\n"
	"	and x13, x13, #~4095\n"
	"	b 4f\n"
	/* the thread's stack: [top - 4096 * the word's low 12 bits, top) (stub_layout.h:
	 * STUB_TOPS_PAGES); an sp outside it is on a stack of its own (a coroutine's, a signal
	 * stack) whose end is not known: to the end of E's page */
	"2:	ldr x13, [x3, #" S(STUB_D_TOPS) "+8]\n"
	"	and x4, x13, #" S(STUB_TOPS_PAGES) "\n"
	"	lsl x4, x4, #12\n"
	"	and x13, x13, #~4095\n"
	"	cmp x12, x13\n"
	"	b.hs 3b\n"
	"	sub x4, x13, x4\n"
	"	cmp x12, x4\n"
	"	b.lo 3b\n"
	"4:	subs x13, x13, x12\n"
	"	csel x13, x13, xzr, hs\n"
	"	ldr x10, [x9, #" S(STUB_D_COPY) "]\n"
	"	cmp x13, x10\n"
	"	csel x13, x10, x13, hi\n" SAMPLE
	"	and x13, x13, #~15\n"
	"	add x14, x13, #" S(STUB_REC_ENTRY) "+15\n"
	"	and x14, x14, #~15\n" RESERVE("6", STUB_C_LOST_ENTRIES, "9f", entry)
	"	str w16, [x0, #" S(STUB_R_HOOK) "]\n"
	"	ldp x1, x2, [sp]\n	stp x1, x2, [x0, #" S(STUB_RE_ARG0) "]\n"
	"	ldr x1, [sp, #16]\n	stp x1, x12, [x0, #" S(STUB_RE_ARG2) "]\n"
	"	ldr x1, [sp, #128]\n	stp x29, x1, [x0, #" S(STUB_RE_X29) "]\n"
	"	stp x19, x20, [x0, #" S(STUB_RE_X19) "]\n"
	"	stp x21, x22, [x0, #" S(STUB_RE_X19) "+16]\n"
	"	mrs x2, tpidr_el0\n	str x2, [x0, #" S(STUB_RE_THREAD) "]\n"
	"	str w13, [x0, #" S(STUB_RE_COPY) "]\n"
	"	stp x23, x24, [x0, #" S(STUB_RE_X23) "]\n"
	"	stp x25, x26, [x0, #" S(STUB_RE_X23) "+16]\n"
	"	stp x27, x28, [x0, #" S(STUB_RE_X23) "+32]\n"
	/* the return goes through the trampoline, unless it does already (a tail call) */
	"	ldr x3, [x9, #" S(STUB_D_TRAMP) "]\n"
	"	mov w2, #0\n"
	"	tbnz w16, #9, 7f\n" /* STUB_HOOK_NORET */
	"	cmp x1, x3\n"
	"	b.eq 7f\n"
	"	str x3, [sp, #128]\n"
	"	stp x15, x1, [sp, #144]\n"
	"	mov w2, #1\n"
	"7:	str w2, [x0, #" S(STUB_RE_RETURNS) "]\n"
	"	mrs x1, cntvct_el0\n"
	"	str x1, [x0, #" S(STUB_RE_TIME) "]\n"
	"	add x3, x0, #" S(STUB_REC_ENTRY) "\n"
	"	mov x4, x12\n"
	"	cbz x13, 8f\n"
	"	mov x5, x13\n"
	"10:	ldp x6, x7, [x4], #16\n"
	"	stp x6, x7, [x3], #16\n"
	"	subs x5, x5, #16\n"
	"	b.ne 10b\n"
	"8:	orr x15, x15, #" S(STUB_KIND_ENTRY) "\n"
	"	stlr x15, [x0]\n" /* the tag, last: the record is complete */
	CS_END(entry)
	"	mov x17, #144\n" /* the function starts at E-16, returning into the trampoline */
	"	cbnz w2, 12f\n"
	"	b 9f\n"
	/* free: { tag, length, hook, pointer, thread, time stamp } */
	"5:	mov x14, #" S(STUB_REC_FREE) "\n" RESERVE("11", STUB_C_LOST_FREES, "9f", free)
	"	str w16, [x0, #" S(STUB_R_HOOK) "]\n"
	"	ldr x1, [sp]\n	mrs x2, tpidr_el0\n	stp x1, x2, [x0, #" S(STUB_RF_PTR) "]\n"
	"	mrs x1, cntvct_el0\n"
	"	str x1, [x0, #" S(STUB_RF_TIME) "]\n"
	"	orr x15, x15, #" S(STUB_KIND_FREE) "\n"
	"	stlr x15, [x0]\n" CS_END(free)
	"9:	mov x17, #160\n" /* the function starts at E with its own return address */
	"12:	adr x10, .Ldata\n"
	"	and x16, x16, #0xff\n"
	"	add x10, x10, x16, lsl #3\n"
	"	ldr x16, [x10, #" S(STUB_D_CONT) "]\n"
	"	ldp x30, x10, [sp, #128]\n"
	"	msr nzcv, x10\n" LOAD_X0_X15
	"	add sp, sp, x17\n"
	"	br x16\n"

	/* The trampoline: the function returned with sp at { cookie, the caller's return
	 * address }. Records { tag, length, cookie, result, thread } and returns to the caller
	 * with every register but x16, x17 and x30 as the function left them. `bl` then `ret`:
	 * the function's own ret, which came here, popped the caller's entry from the return
	 * predictor's stack; the bl pushes one that the ret pops, so the caller's callers are
	 * predicted right (a bare `ret` would pop theirs; a `br` would need a BTI landing pad
	 * at the return address). */
	".globl ht_stub_ret\n"
	"ht_stub_ret:\n"
	"	sub sp, sp, #144\n" SAVE_X0_X15
	"	mrs x16, nzcv\n"
	"	str x16, [sp, #128]\n"
	"	adr x9, .Ldata\n"
	"	ldr x10, [x9, #" S(STUB_D_OFF) "]\n"
	"	cbnz x10, 1f\n"
	"	ldr x11, [x9, #" S(STUB_D_CTL) "]\n"
	"	ldr w10, [x11, #" S(STUB_C_OWNER) "]\n"
	"	tbnz w10, #30, 1f\n"
	"	mov x14, #" S(STUB_REC_RETURN) "\n" RESERVE("2", STUB_C_LOST_RETURNS, "81f", ret)
	"	str wzr, [x0, #" S(STUB_R_HOOK) "]\n"
	"	ldr x1, [sp, #144]\n	ldr x2, [sp]\n	stp x1, x2, [x0, #" S(STUB_RR_COOKIE) "]\n"
	"	mrs x1, tpidr_el0\n	str x1, [x0, #" S(STUB_RR_THREAD) "]\n"
	"	orr x15, x15, #" S(STUB_KIND_RETURN) "\n"
	"	stlr x15, [x0]\n" CS_END(ret)
	"1:	ldr x16, [sp, #128]\n"
	"	msr nzcv, x16\n" LOAD_X0_X15
	"	ldr x17, [sp, #152]\n"
	"	add sp, sp, #160\n"
	"	bl 3f\n"
	"3:	ret x17\n"
	/* no record: the entry's cookie into a free word of the control page, so that heaptrace
	 * drops the call it holds in flight (stub_layout.h: STUB_C_LOSTRET) */
	"81:	ldr x1, [sp, #144]\n"
	"	eor x1, x1, #" S(STUB_LOSTRET_MARK) "\n"
	"	add x2, x11, #" S(STUB_C_LOSTRET) "\n"
	"	mov w4, #" S(STUB_C_LOSTRET_SLOTS) "\n"
	"82:	ldxr x3, [x2]\n"
	"	cbnz x3, 83f\n"
	"	stxr w5, x1, [x2]\n"
	"	cbnz w5, 82b\n"
	"	b 1b\n"
	"83:	clrex\n"
	"	add x2, x2, #8\n"
	"	subs w4, w4, #1\n"
	"	b.ne 82b\n"
	"	add x2, x11, #" S(STUB_C_LOST_UNSLOTTED) "\n" /* no free word */
	"84:	ldxr x3, [x2]\n	add x3, x3, #1\n	stxr w5, x3, [x2]\n	cbnz w5, 84b\n"
	"	b 1b\n"

	/* One slice of the wait for room (RESERVE): w1 = 0 to try again, 1 to go on without a
	 * record (the stubs off or heaptrace gone: nobody reads; or no slice left: counted at
	 * the control page's offset x1). A slice is a futex wait on the tail (x5: as read) after
	 * a wake of heaptrace's reader, or with STUB_C_NOSYS set (a seccomp filter may forbid
	 * futex) STUB_D_PAUSES yields looking at the tail. Keeps x9-x16; x3 one slice less. */
	".Lroom:\n"
	"	ldr x17, [x9, #" S(STUB_D_OFF) "]\n"
	"	cbnz x17, 7f\n"
	"	ldr w17, [x11, #" S(STUB_C_OWNER) "]\n"
	"	tbnz w17, #30, 7f\n" /* STUB_OWNER_DIED */
	"	cbz x3, 6f\n"
	"	sub x3, x3, #1\n" /* a slice, used up however the wait ends */
	"	add x0, x11, #" S(STUB_C_WAITERS) "\n"
	"4:	ldaxr w2, [x0]\n	orr w2, w2, #1\n	stlxr w4, w2, [x0]\n	cbnz w4, 4b\n"
	"	ldr w17, [x11, #" S(STUB_C_NOSYS) "]\n"
	"	cbnz w17, 2f\n"
	"	add x0, x11, #" S(STUB_C_DWAKE) "\n"
	"5:	ldaxr w2, [x0]\n	add w2, w2, #1\n	stlxr w4, w2, [x0]\n	cbnz w4, 5b\n"
	"	dmb ish\n"
	"	mov x1, #1\n" /* FUTEX_WAKE, shared: heaptrace maps the same pages */
	"	mov x2, #1\n"
	"	mov x8, #" S(STUB_NR_FUTEX) "\n"
	"	svc #0\n"
	"	ldr x4, [x11, #" S(STUB_C_TAIL) "]\n"
	"	cmp x4, x5\n"
	"	b.ne 3f\n"
	"	sub sp, sp, #16\n"
	"	movz x1, #" S(STUB_SLICE_LO) "\n	movk x1, #" S(STUB_SLICE_HI) ", lsl #16\n"
	"	stp xzr, x1, [sp]\n" /* struct timespec { 0 s, a slice } */
	"	add x0, x11, #" S(STUB_C_TAIL) "\n"
	"	mov x1, #0\n" /* FUTEX_WAIT on the tail's low word */
	"	mov w2, w5\n"
	"	mov x7, x3\n" /* the slices left, while x3 is the timeout */
	"	mov x3, sp\n"
	"	mov x8, #" S(STUB_NR_FUTEX) "\n"
	"	svc #0\n"
	"	mov x3, x7\n"
	"	add sp, sp, #16\n"
	"	b 3f\n"
	"2:	ldr x6, [x9, #" S(STUB_D_PAUSES) "]\n"
	"1:	yield\n"
	"	ldr x4, [x11, #" S(STUB_C_TAIL) "]\n"
	"	cmp x4, x5\n"
	"	b.ne 3f\n"
	"	subs x6, x6, #1\n"
	"	b.hi 1b\n"
	"3:	mov w1, #0\n"
	"	ret\n"
	"6:	add x0, x11, x1\n"
	"8:	ldxr x2, [x0]\n	add x2, x2, #1\n	stxr w4, x2, [x0]\n	cbnz w4, 8b\n"
	"7:	mov w1, #1\n"
	"	ret\n"
	".globl ht_stub_code_end\n"
	"ht_stub_code_end:\n"
	".balign 4096\n"
	".Ldata:\n"
	".skip 4096\n"
	".globl ht_stub_blob_end\n"
	"ht_stub_blob_end:\n"
	".popsection\n");
