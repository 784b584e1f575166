// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm entry stubs (stubs.h): the code heaptrace copies into a traced process, in section
 * ht_stub, Thumb-2 (ARMv7-A: ldrex/strex, ldrexd/strexd, dmb). A page of code, then the
 * process's private data page (stub_layout.h: STUB_D_*; the stubs read the low word of its
 * 64-bit fields). All references are PC-relative inside the section, so the copy works
 * anywhere; the Makefile checks that the section has no relocation.
 *
 * Only Thumb entries are patched (Debian's armhf code is Thumb-2): one b.w to the function's
 * thunk (`movw ip, #hook|flags; b.w ht_stub_entry`), which leaves lr (the return address) and
 * sp alone. ip is free at a function's first instruction (AAPCS lets veneers and PLT entries
 * clobber it), and so are the flags; every other register is put back (the flags too).
 *
 * ht_stub_entry saves r0-r11, lr and the APSR in a 72-byte frame below sp (E, the entry sp):
 * r0..r11 at 0, lr at 48, APSR at 52, and 56..71 (E-16) for { cookie (u64), -, return address }.
 * It reserves a record in the shared ring (ldrexd/strexd on its 64-bit head), writes it (free:
 * the pointer, the thread pointer TPIDRURO and a time stamp; others: arguments, sp, r4-r11, lr,
 * a time stamp, the thread pointer, and a copy of the stack from E up) and publishes it by writing its tag last, after a dmb:
 * the reader loads the tag whole, so seeing either of its words new means the record is
 * complete (two different positions never share both words). An allocation's return goes
 * through ht_stub_ret: lr = the trampoline (Thumb), the function starts at sp = E-16 with
 * { cookie, return address } there (no malloc-family function takes stack arguments). Then the
 * function goes on at its continuation: its displaced first instructions, relocated, and a b.w
 * back, reached by bx ip. With the data page's off word set, or heaptrace gone (the kernel
 * marks the robust futex heaptrace owns in the ring's control page), nothing is recorded.
 */
#define STUB_CODE_ONLY
#include "stub_arch.h"

#define S_(x) #x
#define S(x) S_(x)

/* r9 = the data page: the page after the code's. */
#define DATA_PAGE "	adr.w r9, .Lcode\n	add.w r9, r9, #4096\n"
/* Nothing to record if the stubs are off or heaptrace is gone (r11 = the control page). */
#define RECORDING(skip)                                                                           \
	"	ldr r10, [r9, #" S(STUB_D_OFF) "]\n	cmp r10, #0\n	bne " skip "\n"                 \
	"	ldr r11, [r9, #" S(STUB_D_CTL) "]\n"                                                  \
	"	ldr r10, [r11, #" S(STUB_C_OWNER) "]\n"                                               \
	"	tst r10, #" S(STUB_OWNER_DIED) "\n	bne " skip "\n"
/*
 * The critical sections (stub_arch.h: STUB_CRITICAL): from a record's reservation to the
 * store of its tag, a record reserved and not yet written. heaptrace's probe of a stuck reader
 * looks for threads there. The check of strexd's status counts as inside: a thread there whose
 * strexd failed has reserved nothing, and the probe then errs on the safe side.
 */
#define CS_BEGIN(x) ".globl ht_stub_cs_" #x "\nht_stub_cs_" #x ":\n"
#define CS_END(x) ".globl ht_stub_cs_" #x "_end\nht_stub_cs_" #x "_end:\n"

/*
 * Reserve r5 bytes of ring at r2:r3 (the 64-bit position) where they fit, as stub_layout.h
 * says (ldrexd/strexd; ip: the tail's low word plus the ring's size, compared by difference:
 * the ring is far smaller than 4 GiB), r0 = the record, its length written; else a slice of
 * .Lroom (r4: the slices left) and again, or on to fail (lost: the counter's offset). r0-r4,
 * r10, ip, lr clobbered. Labels l, l0 and l9. Opens critical sections cs_res (closed here)
 * and cs (closed by PUBLISH).
 */
#define RESERVE(l, lost, fail, cs)                                                                \
	"	add r10, r11, #" S(STUB_C_HEAD) "\n"                                                  \
	"	ldr r4, [r9, #" S(STUB_D_STALL) "]\n"                                                 \
	l ":	ldr ip, [r11, #" S(STUB_C_TAIL) "]\n"                                                \
	"	ldr lr, [r9, #" S(STUB_D_SIZE) "]\n	add ip, ip, lr\n"                               \
	"	ldrexd r2, r3, [r10]\n	adds r0, r2, r5\n	adc r1, r3, #0\n"                        \
	"	sub lr, r0, ip\n	cmp lr, #0\n	bgt " l "0f\n"                                     \
	"	strexd lr, r0, r1, [r10]\n" CS_BEGIN(cs##_res) "	cmp lr, #0\n	bne " l "b\n"      \
	"	b " l "9f\n" CS_END(cs##_res)                                                        \
	l "0:	clrex\n	movw r0, #" S(lost) "\n	bl .Lroom\n"                                   \
	"	cmp r0, #0\n	beq " l "b\n	b " fail "\n"                                          \
	l "9:" CS_BEGIN(cs) "	ldr r0, [r9, #" S(STUB_D_MASK) "]\n	and r0, r2, r0\n"             \
	"	ldr r1, [r9, #" S(STUB_D_RING) "]\n	add r0, r0, r1\n"                               \
	"	str r5, [r0, #" S(STUB_R_LEN) "]\n"
/* Publish the record at r0 with the tag r2:r3 | kind, closing critical section cs. */
#define PUBLISH(kind, cs)                                                                         \
	"	dmb ish\n	orr r2, r2, #" S(kind) "\n"                                             \
	"	strd r2, r3, [r0, #" S(STUB_R_TAG) "]\n" CS_END(cs)
#define TPIDRURO(r) "	mrc p15, 0, " r ", c13, c0, 3\n"

__asm__(".pushsection ht_stub,\"ax\",%progbits\n"
	".syntax unified\n"
	".thumb\n"
	".p2align 12\n"
	".globl ht_stub_blob\n"
	"ht_stub_blob:\n"
	".Lcode:\n"
	".globl ht_stub_entry\n"
	"ht_stub_entry:\n"
	"	sub sp, sp, #72\n"
	"	stmia sp, {r0-r11}\n"
	"	str lr, [sp, #48]\n"
	"	mrs r4, apsr\n"
	"	str r4, [sp, #52]\n"
	"	mov r8, ip\n" /* the thunk's word */
	"	mov r10, #0\n" DATA_PAGE RECORDING("9f")
	"	tst r8, #" S(STUB_HOOK_FREE) "\n"
	"	bne 5f\n"
	/* bytes of stack to copy (r7) from E (r6): up to the thread's stack top (the table,
	 * keyed by the thread pointer, which the C library sets before its first malloc; the
	 * main thread's by its stack's range, known before its thread pointer is), else to the
	 * end of the page of E, and at most STUB_D_COPY, a multiple of 16 */
	"	add r6, sp, #72\n"
	"	ldr r7, [r9, #" S(STUB_D_MAIN_TOP) "]\n"
	"	ldr r10, [r9, #" S(STUB_D_MAIN_LO) "]\n"
	"	cmp r6, r10\n"
	"	blo 0f\n"
	"	cmp r6, r7\n"
	"	blo 4f\n"
	/* the table's hash, stubs.c's tops_hash: bits 57..63 of key * 0x9e3779b97f4a7c15 */
	"0:" TPIDRURO("r0")
	"	movw r1, #0x7c15\n	movt r1, #0x7f4a\n"
	"	umull r2, r3, r0, r1\n"
	"	movw r1, #0x79b9\n	movt r1, #0x9e37\n"
	"	mla r3, r0, r1, r3\n"
	"	lsr r1, r3, #25\n"
	"	mov r2, #" S(STUB_TOPS_PROBE) "\n"
	"1:	and r3, r1, #" S(STUB_TOPS_MASK) "\n"
	"	add r3, r9, r3, lsl #4\n"
	"	ldr r4, [r3, #" S(STUB_D_TOPS) "]\n"
	"	cmp r4, r0\n"
	"	beq 2f\n"
	"	cmp r4, #0\n"
	"	beq 3f\n"
	"	add r1, r1, #1\n"
	"	subs r2, r2, #1\n"
	"	bne 1b\n"
	"3:	add r7, r6, #4096\n"
	"	bfc r7, #0, #12\n"
	"	b 4f\n"
	/* the thread's stack: [top - 4096 * the word's low 12 bits, top) (stub_layout.h:
	 * STUB_TOPS_PAGES); an sp outside it is on a stack of its own (a coroutine's, a signal
	 * stack) whose end is not known: to the end of E's page */
	"2:	ldr r7, [r3, #" S(STUB_D_TOPS) "+8]\n"
	"	ubfx r4, r7, #0, #12\n"
	"	bfc r7, #0, #12\n"
	"	cmp r6, r7\n"
	"	bhs 3b\n"
	"	sub r4, r7, r4, lsl #12\n"
	"	cmp r6, r4\n"
	"	blo 3b\n"
	"4:	subs r7, r7, r6\n"
	"	it lo\n	movlo r7, #0\n"
	"	ldr r10, [r9, #" S(STUB_D_COPY) "]\n"
	"	cmp r7, r10\n"
	"	it hi\n	movhi r7, r10\n"
	"	bic r7, r7, #15\n"
	"	add r5, r7, #" S(STUB_REC_ENTRY) "\n" RESERVE("6", STUB_C_LOST_ENTRIES, "9f", entry)
	"	str r8, [r0, #" S(STUB_R_HOOK) "]\n"
	"	mov ip, #0\n"
	"	ldr r1, [sp]\n	strd r1, ip, [r0, #" S(STUB_RE_ARG0) "]\n"
	"	ldr r1, [sp, #4]\n	strd r1, ip, [r0, #" S(STUB_RE_ARG1) "]\n"
	"	ldr r1, [sp, #8]\n	strd r1, ip, [r0, #" S(STUB_RE_ARG2) "]\n"
	"	strd r6, ip, [r0, #" S(STUB_RE_SP) "]\n"
	/* r4-r11 */
	"	ldrd r1, r4, [sp, #16]\n	strd r1, r4, [r0, #" S(STUB_RE_R4) "]\n"
	"	ldrd r1, r4, [sp, #24]\n	strd r1, r4, [r0, #" S(STUB_RE_R4) "+8]\n"
	"	ldrd r1, r4, [sp, #32]\n	strd r1, r4, [r0, #" S(STUB_RE_R4) "+16]\n"
	"	ldrd r1, r4, [sp, #40]\n	strd r1, r4, [r0, #" S(STUB_RE_R4) "+24]\n"
	"	ldr r1, [sp, #48]\n	strd r1, ip, [r0, #" S(STUB_RE_LR) "]\n" /* lr */
	TPIDRURO("r4") "	strd r4, ip, [r0, #" S(STUB_RE_THREAD) "]\n"
	"	str r7, [r0, #" S(STUB_RE_COPY) "]\n"
	/* the return goes through the trampoline, unless it does already (a tail call) */
	"	ldr r4, [r9, #" S(STUB_D_TRAMP) "]\n"
	"	orr r4, r4, #1\n"
	"	mov r10, #0\n"
	"	tst r8, #" S(STUB_HOOK_NORET) "\n"
	"	bne 7f\n"
	"	cmp r1, r4\n"
	"	beq 7f\n"
	"	str r4, [sp, #48]\n"
	"	strd r2, r3, [sp, #56]\n" /* the cookie: the record's position */
	"	str r1, [sp, #68]\n"
	"	mov r10, #1\n"
	"7:	str r10, [r0, #" S(STUB_RE_RETURNS) "]\n"
	"	mrrc p15, 1, r1, r4, c14\n" /* CNTVCT */
	"	strd r1, r4, [r0, #" S(STUB_RE_TIME) "]\n"
	"	add r1, r0, #" S(STUB_REC_ENTRY) "\n"
	"	mov r4, r6\n"
	"	cmp r7, #0\n"
	"	beq 8f\n"
	"10:	ldrd r5, ip, [r4], #8\n	strd r5, ip, [r1], #8\n"
	"	ldrd r5, ip, [r4], #8\n	strd r5, ip, [r1], #8\n"
	"	subs r7, r7, #16\n"
	"	bne 10b\n"
	"8:" PUBLISH(STUB_KIND_ENTRY, entry)
	"	b 12f\n"
	/* free: { tag, length, hook, pointer, thread, time stamp } */
	"5:	mov r5, #" S(STUB_REC_FREE) "\n" RESERVE("11", STUB_C_LOST_FREES, "9f", free)
	"	str r8, [r0, #" S(STUB_R_HOOK) "]\n"
	"	mov ip, #0\n"
	"	ldr r1, [sp]\n	strd r1, ip, [r0, #" S(STUB_RF_PTR) "]\n"
	TPIDRURO("r1") "	strd r1, ip, [r0, #" S(STUB_RF_THREAD) "]\n"
	"	mrrc p15, 1, r1, r4, c14\n"
	"	strd r1, r4, [r0, #" S(STUB_RF_TIME) "]\n" PUBLISH(STUB_KIND_FREE, free)
	"9:	mov r10, #0\n"
	/* to the continuation: at E, or at E-16 returning into the trampoline (r10 set) */
	"12:	and r8, r8, #0xff\n"
	"	add r4, r9, r8, lsl #3\n"
	"	ldr ip, [r4, #" S(STUB_D_CONT) "]\n"
	"	orr ip, ip, #1\n"
	"	ldr r4, [sp, #52]\n"
	"	ldr lr, [sp, #48]\n"
	"	cmp r10, #0\n"
	"	bne 13f\n"
	"	msr APSR_nzcvqg, r4\n"
	"	ldmia sp, {r0-r11}\n"
	"	add sp, sp, #72\n"
	"	bx ip\n"
	"13:	msr APSR_nzcvqg, r4\n"
	"	ldmia sp, {r0-r11}\n"
	"	add sp, sp, #56\n"
	"	bx ip\n"

	/* The trampoline: the function returned with sp at { cookie, -, the caller's return
	 * address }. Records { tag, length, cookie, result, thread } and returns to the caller
	 * with every register but ip and lr as the function left them, in the caller's
	 * instruction set (bit 0 of its return address). `bl` then `bx lr`: the function's own
	 * return, which came here, popped the caller's entry from the return predictor's stack;
	 * the bl pushes one that the bx lr pops, so the caller's callers are predicted right. */
	".globl ht_stub_ret\n"
	"ht_stub_ret:\n"
	"	sub sp, sp, #56\n"
	"	stmia sp, {r0-r11}\n"
	"	mrs r4, apsr\n"
	"	str r4, [sp, #48]\n" DATA_PAGE RECORDING("1f")
	"	mov r5, #" S(STUB_REC_RETURN) "\n" RESERVE("2", STUB_C_LOST_RETURNS, "81f", ret)
	"	mov ip, #0\n"
	"	str ip, [r0, #" S(STUB_R_HOOK) "]\n"
	"	ldrd r1, r4, [sp, #56]\n	strd r1, r4, [r0, #" S(STUB_RR_COOKIE) "]\n"
	"	ldr r1, [sp]\n	strd r1, ip, [r0, #" S(STUB_RR_RESULT) "]\n"
	TPIDRURO("r1") "	strd r1, ip, [r0, #" S(STUB_RR_THREAD) "]\n"
	PUBLISH(STUB_KIND_RETURN, ret)
	"1:	ldr r4, [sp, #48]\n"
	"	ldr ip, [sp, #68]\n"
	"	msr APSR_nzcvqg, r4\n"
	"	ldmia sp, {r0-r11}\n"
	"	add sp, sp, #72\n"
	"	bl 3f\n"
	"3:	mov lr, ip\n"
	"	bx lr\n"
	/* no record: the entry's cookie into a free word of the control page, so that heaptrace
	 * drops the call it holds in flight (stub_layout.h: STUB_C_LOSTRET) */
	"81:	ldrd r0, r1, [sp, #56]\n"
	"	eor r0, r0, #" S(STUB_LOSTRET_MARK) "\n"
	"	add r2, r11, #" S(STUB_C_LOSTRET) "\n"
	"	mov r4, #" S(STUB_C_LOSTRET_SLOTS) "\n"
	"82:	ldrexd r6, r7, [r2]\n"
	"	orrs r6, r6, r7\n"
	"	bne 83f\n"
	"	strexd r6, r0, r1, [r2]\n"
	"	cmp r6, #0\n"
	"	bne 82b\n"
	"	b 1b\n"
	"83:	clrex\n"
	"	add r2, r2, #8\n"
	"	subs r4, r4, #1\n"
	"	bne 82b\n"
	"	add r2, r11, #" S(STUB_C_LOST_UNSLOTTED) "\n" /* no free word */
	"84:	ldrexd r6, r7, [r2]\n	adds r6, r6, #1\n	adc r7, r7, #0\n"
	"	strexd r0, r6, r7, [r2]\n	cmp r0, #0\n	bne 84b\n"
	"	b 1b\n"

	/* One slice of the wait for room (RESERVE): r0 = 0 to try again, 1 to go on without a
	 * record (the stubs off or heaptrace gone: nobody reads; or no slice left: counted at
	 * the control page's offset r0 had). A slice is a futex wait on the tail's low word (as
	 * read: ip minus the ring's size) after a wake of heaptrace's reader, or with
	 * STUB_C_NOSYS set (a seccomp filter may forbid futex) STUB_D_PAUSES yields looking at
	 * the tail. Keeps r5-r11; r4 one slice less; r1-r3, ip and the flags clobbered. */
	".Lroom:\n"
	"	push {r5-r8, r10, lr}\n"
	"	mov r5, r0\n"
	"	ldr r1, [r9, #" S(STUB_D_SIZE) "]\n"
	"	sub r6, ip, r1\n"
	"	ldr r1, [r9, #" S(STUB_D_OFF) "]\n"
	"	cmp r1, #0\n"
	"	bne 7f\n"
	"	ldr r1, [r11, #" S(STUB_C_OWNER) "]\n"
	"	tst r1, #" S(STUB_OWNER_DIED) "\n"
	"	bne 7f\n"
	"	cmp r4, #0\n"
	"	beq 6f\n"
	"	sub r4, r4, #1\n" /* a slice, used up however the wait ends */
	"	add r0, r11, #" S(STUB_C_WAITERS) "\n"
	"4:	ldrex r1, [r0]\n	orr r1, r1, #1\n	strex r2, r1, [r0]\n	cmp r2, #0\n	bne 4b\n"
	"	ldr r1, [r11, #" S(STUB_C_NOSYS) "]\n"
	"	cmp r1, #0\n"
	"	bne 2f\n"
	"	add r0, r11, #" S(STUB_C_DWAKE) "\n"
	"5:	ldrex r1, [r0]\n	add r1, r1, #1\n	strex r2, r1, [r0]\n	cmp r2, #0\n	bne 5b\n"
	"	dmb ish\n"
	"	mov r1, #1\n" /* FUTEX_WAKE, shared: heaptrace maps the same pages */
	"	mov r2, #1\n"
	"	mov r7, #" S(STUB_NR_FUTEX) "\n"
	"	svc #0\n"
	"	ldr r1, [r11, #" S(STUB_C_TAIL) "]\n"
	"	cmp r1, r6\n"
	"	bne 3f\n"
	"	sub sp, sp, #8\n"
	/* struct timespec { 0 s, a slice } (32-bit fields: futex, not futex_time64) */
	"	movw r1, #" S(STUB_SLICE_LO) "\n	movt r1, #" S(STUB_SLICE_HI) "\n"
	"	mov r0, #0\n"
	"	strd r0, r1, [sp]\n"
	"	add r0, r11, #" S(STUB_C_TAIL) "\n"
	"	mov r1, #0\n" /* FUTEX_WAIT on the tail's low word */
	"	mov r2, r6\n"
	"	mov r3, sp\n"
	"	mov r7, #" S(STUB_NR_FUTEX) "\n"
	"	svc #0\n"
	"	add sp, sp, #8\n"
	"	b 3f\n"
	"2:	ldr r8, [r9, #" S(STUB_D_PAUSES) "]\n"
	"1:	yield\n"
	"	ldr r1, [r11, #" S(STUB_C_TAIL) "]\n"
	"	cmp r1, r6\n"
	"	bne 3f\n"
	"	subs r8, r8, #1\n"
	"	bhi 1b\n"
	"3:	mov r0, #0\n"
	"	pop {r5-r8, r10, pc}\n"
	"6:	add r0, r11, r5\n"
	"8:	ldrexd r2, r3, [r0]\n	adds r2, r2, #1\n	adc r3, r3, #0\n"
	"	strexd r1, r2, r3, [r0]\n	cmp r1, #0\n	bne 8b\n"
	"7:	mov r0, #1\n"
	"	pop {r5-r8, r10, pc}\n"
	".globl ht_stub_code_end\n"
	"ht_stub_code_end:\n"
	".balign 4096\n"
	".Ldata:\n"
	".skip 4096\n"
	".globl ht_stub_blob_end\n"
	"ht_stub_blob_end:\n"
	".popsection\n");
