// SPDX-License-Identifier: GPL-2.0-only
/*
 * mips64 (n64) entry stubs (stubs.h): the code heaptrace copies into a traced process, in
 * section ht_stub. A page of code, then the process's private data page (stub_arch.h:
 * STUB_D_*). Every reference is PC-relative inside the section (`bal` reads the PC), so the
 * copy works anywhere; the Makefile checks that the section has no relocation. MIPS64 release 2
 * (Debian's mips64el baseline): lld/scd reserve, sync orders.
 *
 * A patched entry is `j thunk` and a nop; the thunk is `j ht_stub_entry` with `ori at, zero,
 * hook|flags` in its delay slot. $at is the only register taken: the assembler's temporary,
 * free at a function's first instruction. Every other register is put back, and $t9 and $gp
 * are never touched: an n64 function computes $gp from $t9, which holds its own address at
 * its entry (`lui gp, ...; daddu gp, gp, t9`), and the relocated first instructions run with
 * the caller's $t9. HI and LO are put back too (calloc starts with dmultu).
 *
 * ht_stub_entry saves a0-a3, v0, v1, t0-t3, t8, ra and at in a 160-byte frame below sp (E,
 * the entry sp): a0..a3 at 0, v0 32, v1 40, t0..t3 48, t8 80, ra 88, at 96, and 144..159
 * (E-16) for { cookie, return address }. It reserves a record in the shared ring (lld/scd on
 * its head), writes it (free: the pointer, the thread pointer and a time stamp; others:
 * arguments, sp, s8, ra, s0-s7, gp, a time stamp, the thread pointer and a copy of the stack
 * from E up) and publishes it by writing its
 * tag last, after a sync. An allocation's return goes through ht_stub_ret: ra = the
 * trampoline, the function starts at sp = E-16 with { cookie, return address } there (no
 * malloc-family function takes stack arguments). Then the function goes on at its
 * continuation: its displaced first two instructions, relocated, and a `j` back, reached by
 * `jr at`. With the data page's off word set, or heaptrace gone (the kernel marks the robust
 * futex heaptrace owns in the ring's control page), nothing is recorded.
 *
 * The thread pointer is `rdhwr $3, $29` (into v1: the register the kernel's fast emulation
 * handles where the CPU lacks UserLocal), the time stamp `rdhwr $2` (the Count register).
 */
#define STUB_CODE_ONLY
#include "stub_arch.h"

#define S_(x) #x
#define S(x) S_(x)

#define SAVE                                                                                      \
	"	sd $a0, 0($sp)\n	sd $a1, 8($sp)\n	sd $a2, 16($sp)\n	sd $a3, 24($sp)\n"         \
	"	sd $v0, 32($sp)\n	sd $v1, 40($sp)\n	sd $t0, 48($sp)\n	sd $t1, 56($sp)\n"         \
	"	sd $t2, 64($sp)\n	sd $t3, 72($sp)\n	sd $t8, 80($sp)\n"
#define LOAD                                                                                      \
	"	ld $a0, 0($sp)\n	ld $a1, 8($sp)\n	ld $a2, 16($sp)\n	ld $a3, 24($sp)\n"         \
	"	ld $v0, 32($sp)\n	ld $v1, 40($sp)\n	ld $t0, 48($sp)\n	ld $t1, 56($sp)\n"         \
	"	ld $t2, 64($sp)\n	ld $t3, 72($sp)\n	ld $t8, 80($sp)\n"
/* $t8 = the data page (ra borrowed: saved before). */
#define DATA(l)                                                                                   \
	"	bal " l "f\n	nop\n"                                                                \
	l ":	daddiu $t8, $ra, .Ldata - " l "b\n"
/* Skip to l when the stubs are off or heaptrace is gone; $t1 = the control page. */
#define LIVE(l)                                                                                   \
	"	ld $t0, " S(STUB_D_OFF) "($t8)\n"                                                     \
	"	bnez $t0, " l "\n"                                                                    \
	"	ld $t1, " S(STUB_D_CTL) "($t8)\n"                                                     \
	"	lw $t0, " S(STUB_C_OWNER) "($t1)\n"                                                   \
	"	lui $t2, 0x4000\n" /* STUB_OWNER_DIED */                                             \
	"	and $t0, $t0, $t2\n"                                                                  \
	"	bnez $t0, " l "\n"                                                                    \
	"	nop\n"
/*
 * Reserve a3 bytes of ring at t0 where they fit, as stub_layout.h says (lld/scd, no load
 * between them; t8: the data page, t1: the control page, a0: the tail read), v0 = the record,
 * its length written; else a slice of .Lroom (a2: the slices left) and again, or on to fail
 * (lost: the counter's offset). a0-a2, v0, ra clobbered. Labels l, l0 and l9.
 */
#define RESERVE(l, lost, fail)                                                                    \
	"	ld $a2, " S(STUB_D_STALL) "($t8)\n"                                                   \
	l ":	ld $a0, " S(STUB_C_TAIL) "($t1)\n"                                                   \
	"	ld $a1, " S(STUB_D_SIZE) "($t8)\n"                                                   \
	"	daddu $a1, $a0, $a1\n"                                                                \
	"	sync\n"                                                                               \
	"	lld $t0, " S(STUB_C_HEAD) "($t1)\n"                                                   \
	"	daddu $v0, $t0, $a3\n"                                                                \
	"	sltu $a1, $a1, $v0\n"                                                                 \
	"	bnez $a1, " l "0f\n"                                                                  \
	"	nop\n"                                                                                \
	"	scd $v0, " S(STUB_C_HEAD) "($t1)\n"                                                   \
	"	beqz $v0, " l "b\n"                                                                   \
	"	nop\n"                                                                                \
	"	b " l "9f\n"                                                                          \
	"	nop\n"                                                                                \
	l "0:	bal .Lroom\n"                                                                      \
	"	ori $a1, $zero, " S(lost) "\n"                                                        \
	"	beqz $a1, " l "b\n"                                                                   \
	"	nop\n"                                                                                \
	"	b " fail "\n"                                                                         \
	"	nop\n"                                                                                \
	l "9:	ld $v0, " S(STUB_D_MASK) "($t8)\n"                                                  \
	"	and $v0, $t0, $v0\n"                                                                  \
	"	ld $a1, " S(STUB_D_RING) "($t8)\n"                                                    \
	"	daddu $v0, $v0, $a1\n"                                                                \
	"	sw $a3, " S(STUB_R_LEN) "($v0)\n"
/* The continuation of the hook in at's low byte into at; everything put back; on to it with
 * sp raised by n. */
#define LEAVE(n)                                                                                  \
	"	andi $at, $at, 0xff\n"                                                                \
	"	dsll $at, $at, 3\n"                                                                   \
	"	daddu $at, $at, $t8\n"                                                                \
	"	ld $at, " S(STUB_D_CONT) "($at)\n"                                                    \
	"	ld $ra, 104($sp)\n	mthi $ra\n	ld $ra, 112($sp)\n	mtlo $ra\n"                   \
	"	ld $ra, 88($sp)\n" LOAD                                                               \
	"	jr $at\n"                                                                             \
	"	daddiu $sp, $sp, " n "\n"

/*
 * --sample-bytes (stub_layout.h: STUB_D_SAMPLE), for a call whose thunk's word ($at) names its
 * size argument (saved a0..a2 at sp): s >= N is taken; else ceil(N / s) = k, a xorshift64 step
 * of STUB_D_RAND, and the call is taken if the draw modulo k is 0 (HI and LO are saved). One
 * not taken gets STUB_HOOK_NOT_TAKEN in $at and no stack copy ($a0 = 0: the record's ra is its
 * caller). t0, a1-a3, v0 clobbered.
 */
#define SAMPLE                                                                                    \
	"	ld $t0, " S(STUB_D_SAMPLE) "($t8)\n"                                                  \
	"	beqz $t0, 20f\n"                                                                   \
	"	andi $a1, $at, " S(STUB_HOOK_SIZE) "\n"                                               \
	"	beqz $a1, 20f\n"                                                                   \
	"	dsrl $a1, $a1, " S(STUB_HOOK_SIZE_SHIFT) "\n"                                         \
	"	dsll $a1, $a1, 3\n"                                                                \
	"	daddu $a1, $a1, $sp\n"                                                             \
	"	ld $a1, -8($a1)\n"                                                                 \
	"	sltu $a2, $a1, $t0\n"                                                              \
	"	beqz $a2, 20f\n"                                                                   \
	"	nop\n"                                                                             \
	"	bnez $a1, 21f\n"                                                                   \
	"	nop\n"                                                                             \
	"	ori $a1, $zero, 1\n" /* a size of 0 as 1 */                                        \
	"21:	daddu $a2, $t0, $a1\n"                                                          \
	"	daddiu $a2, $a2, -1\n"                                                             \
	"	ddivu $zero, $a2, $a1\n"                                                           \
	"	mflo $a2\n"                                                                        \
	"	ld $a3, " S(STUB_D_RAND) "($t8)\n"                                                    \
	"	dsll $v0, $a3, 13\n	xor $a3, $a3, $v0\n"                                         \
	"	dsrl $v0, $a3, 7\n	xor $a3, $a3, $v0\n"                                          \
	"	dsll $v0, $a3, 17\n	xor $a3, $a3, $v0\n"                                         \
	"	sd $a3, " S(STUB_D_RAND) "($t8)\n"                                                    \
	"	ddivu $zero, $a3, $a2\n"                                                           \
	"	mfhi $a3\n"                                                                        \
	"	beqz $a3, 20f\n"                                                                   \
	"	nop\n"                                                                             \
	"	ori $at, $at, " S(STUB_HOOK_NOT_TAKEN) "\n"                                           \
	"	or $a0, $zero, $zero\n"                                                            \
	"20:\n"

__asm__(".pushsection ht_stub,\"ax\",@progbits\n"
	".set push\n"
	".set noreorder\n"
	".set noat\n"
	".set nomacro\n"
	".set arch=mips64r2\n"
	".p2align 12\n"
	".globl ht_stub_blob\n"
	"ht_stub_blob:\n"
	".globl ht_stub_entry\n"
	"ht_stub_entry:\n"
	"	daddiu $sp, $sp, -160\n" SAVE
	"	sd $ra, 88($sp)\n"
	"	sd $at, 96($sp)\n"
	"	mfhi $t0\n	sd $t0, 104($sp)\n	mflo $t0\n	sd $t0, 112($sp)\n"
	DATA("1") LIVE(".Lpass")
	"	rdhwr $3, $29\n" /* v1: the thread pointer */
	"	andi $t0, $at, " S(STUB_HOOK_FREE) "\n"
	"	bnez $t0, .Lfree\n"
	"	nop\n"
	/* bytes of stack to copy (t3) from E (t2): up to the thread's stack top (the table,
	 * keyed by the thread pointer, which the C library sets before its first malloc; the
	 * main thread's by its stack's range, known before its thread pointer is), else to the
	 * end of the page of E, and at most STUB_D_COPY, a multiple of 16 */
	"	daddiu $t2, $sp, 160\n"
	"	ld $t3, " S(STUB_D_MAIN_TOP) "($t8)\n"
	"	ld $t0, " S(STUB_D_MAIN_LO) "($t8)\n"
	"	sltu $a0, $t2, $t0\n"
	"	bnez $a0, 0f\n"
	"	sltu $a0, $t2, $t3\n"
	"	bnez $a0, 4f\n"
	"	nop\n"
	"0:	lui $a0, 0x9e37\n	ori $a0, $a0, 0x79b9\n	dsll $a0, $a0, 16\n"
	"	ori $a0, $a0, 0x7f4a\n	dsll $a0, $a0, 16\n	ori $a0, $a0, 0x7c15\n"
	"	dmultu $v1, $a0\n"
	"	mflo $a0\n"
	"	dsrl32 $a0, $a0, 25\n" /* >> 57 */
	"	ori $a1, $zero, " S(STUB_TOPS_PROBE) "\n"
	"1:	andi $a2, $a0, " S(STUB_TOPS_MASK) "\n"
	"	dsll $a2, $a2, 4\n"
	"	daddu $a2, $a2, $t8\n"
	"	ld $a3, " S(STUB_D_TOPS) "($a2)\n"
	"	beq $a3, $v1, 2f\n"
	"	nop\n"
	"	beqz $a3, 3f\n"
	"	addiu $a0, $a0, 1\n"
	"	addiu $a1, $a1, -1\n"
	"	bnez $a1, 1b\n"
	"	nop\n"
	"3:	daddiu $t3, $t2, 4096\n"
	"	daddiu $a3, $zero, -4096\n"
	"	b 4f\n"
	"	and $t3, $t3, $a3\n"
	/* the thread's stack: [top - 4096 * the word's low 12 bits, top) (stub_layout.h:
	 * STUB_TOPS_PAGES); an sp outside it is on a stack of its own (a coroutine's, a signal
	 * stack) whose end is not known: to the end of E's page */
	"2:	ld $t3, " S(STUB_D_TOPS) "+8($a2)\n"
	"	andi $a0, $t3, " S(STUB_TOPS_PAGES) "\n"
	"	dsll $a0, $a0, 12\n"
	"	daddiu $a3, $zero, -4096\n"
	"	and $t3, $t3, $a3\n"
	"	sltu $a1, $t2, $t3\n"
	"	beqz $a1, 3b\n"
	"	dsubu $a0, $t3, $a0\n" /* in the delay slot: lo */
	"	sltu $a1, $t2, $a0\n"
	"	bnez $a1, 3b\n"
	"	nop\n"
	"4:	sltu $a0, $t2, $t3\n"
	"	beqz $a0, 5f\n"
	"	or $a0, $zero, $zero\n"
	"	dsubu $a0, $t3, $t2\n"
	"5:	ld $t0, " S(STUB_D_COPY) "($t8)\n"
	"	sltu $a1, $t0, $a0\n"
	"	movn $a0, $t0, $a1\n" SAMPLE
	"	daddiu $a1, $zero, -16\n"
	"	and $t3, $a0, $a1\n"
	"	daddiu $a3, $t3, " S(STUB_REC_ENTRY) "+15\n"
	"	and $a3, $a3, $a1\n" RESERVE("6", STUB_C_LOST_ENTRIES, ".Lpass")
	"	sw $at, " S(STUB_R_HOOK) "($v0)\n"
	"	ld $a1, 0($sp)\n	sd $a1, " S(STUB_RE_ARG0) "($v0)\n"
	"	ld $a1, 8($sp)\n	sd $a1, " S(STUB_RE_ARG1) "($v0)\n"
	"	ld $a1, 16($sp)\n	sd $a1, " S(STUB_RE_ARG2) "($v0)\n"
	"	sd $t2, " S(STUB_RE_SP) "($v0)\n"
	"	sd $s8, " S(STUB_RE_S8) "($v0)\n"
	"	ld $a1, 88($sp)\n	sd $a1, " S(STUB_RE_RA) "($v0)\n"
	"	sd $s0, " S(STUB_RE_S0) "($v0)\n	sd $s1, " S(STUB_RE_S0) "+8($v0)\n"
	"	sd $s2, " S(STUB_RE_S0) "+16($v0)\n	sd $s3, " S(STUB_RE_S0) "+24($v0)\n"
	"	sd $v1, " S(STUB_RE_THREAD) "($v0)\n"
	"	sw $t3, " S(STUB_RE_COPY) "($v0)\n"
	"	sd $s4, " S(STUB_RE_S4) "($v0)\n	sd $s5, " S(STUB_RE_S4) "+8($v0)\n"
	"	sd $s6, " S(STUB_RE_S4) "+16($v0)\n	sd $s7, " S(STUB_RE_S4) "+24($v0)\n"
	"	sd $gp, " S(STUB_RE_GP) "($v0)\n"
	/* the return goes through the trampoline, unless it does already (a tail call) */
	"	ld $a2, " S(STUB_D_TRAMP) "($t8)\n"
	"	or $a0, $zero, $zero\n"
	"	andi $a3, $at, " S(STUB_HOOK_NORET) "\n"
	"	bnez $a3, 7f\n"
	"	nop\n"
	"	beq $a1, $a2, 7f\n"
	"	nop\n"
	"	sd $a2, 88($sp)\n"
	"	sd $t0, 144($sp)\n"
	"	sd $a1, 152($sp)\n"
	"	ori $a0, $zero, 1\n"
	"7:	sw $a0, " S(STUB_RE_RETURNS) "($v0)\n"
	"	rdhwr $a1, $2\n" /* the Count register: 32 bits, sign-extended */
	"	dsll32 $a1, $a1, 0\n	dsrl32 $a1, $a1, 0\n"
	"	sd $a1, " S(STUB_RE_TIME) "($v0)\n"
	"	daddiu $a2, $v0, " S(STUB_REC_ENTRY) "\n"
	"	or $a3, $t2, $zero\n"
	"	beqz $t3, 8f\n"
	"	or $a1, $t3, $zero\n"
	"10:	ld $t1, 0($a3)\n	ld $v1, 8($a3)\n"
	"	sd $t1, 0($a2)\n	sd $v1, 8($a2)\n"
	"	daddiu $a3, $a3, 16\n"
	"	daddiu $a1, $a1, -16\n"
	"	bnez $a1, 10b\n"
	"	daddiu $a2, $a2, 16\n"
	"8:	ori $t0, $t0, " S(STUB_KIND_ENTRY) "\n"
	"	sync\n"
	"	sd $t0, " S(STUB_R_TAG) "($v0)\n" /* the tag, last: the record is complete */
	"	bnez $a0, .Lleave144\n" /* the function starts at E-16, returning into the
				       * trampoline */
	"	nop\n"
	"	b .Lpass\n"
	"	nop\n"
	/* free: { tag, length, hook, pointer, thread, time stamp } */
	".Lfree:\n"
	"	ori $a3, $zero, " S(STUB_REC_FREE) "\n" RESERVE("11", STUB_C_LOST_FREES, ".Lpass")
	"	sw $at, " S(STUB_R_HOOK) "($v0)\n"
	"	ld $a1, 0($sp)\n	sd $a1, " S(STUB_RF_PTR) "($v0)\n"
	"	sd $v1, " S(STUB_RF_THREAD) "($v0)\n"
	"	rdhwr $a1, $2\n"
	"	dsll32 $a1, $a1, 0\n	dsrl32 $a1, $a1, 0\n"
	"	sd $a1, " S(STUB_RF_TIME) "($v0)\n"
	"	ori $t0, $t0, " S(STUB_KIND_FREE) "\n"
	"	sync\n"
	"	sd $t0, " S(STUB_R_TAG) "($v0)\n"
	".Lpass:\n" LEAVE("160") /* the function starts at E with its own return address */
	".Lleave144:\n" LEAVE("144")

	/* The trampoline: the function returned with sp at { cookie, the caller's return
	 * address }. Records { tag, length, cookie, result, thread } and returns to the caller
	 * with every register but at and ra as the function left them. Its `bal` pushes a
	 * return-prediction entry that the final `jr ra` pops. */
	".globl ht_stub_ret\n"
	"ht_stub_ret:\n"
	"	daddiu $sp, $sp, -96\n" SAVE DATA("1") LIVE("2f")
	"	rdhwr $3, $29\n"
	"	ori $a3, $zero, " S(STUB_REC_RETURN) "\n" RESERVE("3", STUB_C_LOST_RETURNS, "81f")
	"	sw $zero, " S(STUB_R_HOOK) "($v0)\n"
	"	ld $a1, 96($sp)\n	sd $a1, " S(STUB_RR_COOKIE) "($v0)\n"
	"	ld $a1, 32($sp)\n	sd $a1, " S(STUB_RR_RESULT) "($v0)\n"
	"	sd $v1, " S(STUB_RR_THREAD) "($v0)\n"
	"	ori $t0, $t0, " S(STUB_KIND_RETURN) "\n"
	"	sync\n"
	"	sd $t0, " S(STUB_R_TAG) "($v0)\n"
	"2:" LOAD
	"	ld $ra, 104($sp)\n"
	"	jr $ra\n"
	"	daddiu $sp, $sp, 112\n"
	/* no record: the entry's cookie into a free word of the control page, so that heaptrace
	 * drops the call it holds in flight (stub_layout.h: STUB_C_LOSTRET) */
	"81:	ld $a1, 96($sp)\n"
	"	xori $a1, $a1, " S(STUB_LOSTRET_MARK) "\n"
	"	daddiu $a2, $t1, " S(STUB_C_LOSTRET) "\n"
	"	ori $a3, $zero, " S(STUB_C_LOSTRET_SLOTS) "\n"
	"82:	sync\n"
	"	lld $a0, 0($a2)\n"
	"	bnez $a0, 83f\n"
	"	or $v0, $a1, $zero\n"
	"	scd $v0, 0($a2)\n"
	"	beqz $v0, 82b\n"
	"	nop\n"
	"	b 2b\n"
	"	nop\n"
	"83:	daddiu $a3, $a3, -1\n"
	"	bnez $a3, 82b\n"
	"	daddiu $a2, $a2, 8\n"
	"	daddiu $a2, $t1, " S(STUB_C_LOST_UNSLOTTED) "\n" /* no free word */
	"84:	sync\n	lld $a0, 0($a2)\n	daddiu $a0, $a0, 1\n	scd $a0, 0($a2)\n"
	"	beqz $a0, 84b\n"
	"	nop\n"
	"	b 2b\n"
	"	nop\n"

	/* One slice of the wait for room (RESERVE): a1 = 0 to try again, 1 to go on without a
	 * record (the stubs off or heaptrace gone: nobody reads; or no slice left: counted at
	 * the control page's offset a1 had). A slice is a futex wait on the tail's low word (a0:
	 * the tail as read) after a wake of heaptrace's reader, or with STUB_C_NOSYS set (a
	 * seccomp filter may forbid futex) STUB_D_PAUSES looks at the tail. a2: the slices left,
	 * one less. Keeps every other register but ra (a system call may change at, v0, v1,
	 * a3-a7, t0-t3, t8, t9, hi and lo: all are put back). */
	".Lroom:\n"
	"	daddiu $sp, $sp, -192\n"
	"	sd $at, 0($sp)\n	sd $v0, 8($sp)\n	sd $v1, 16($sp)\n	sd $a0, 24($sp)\n"
	"	sd $a3, 32($sp)\n	sd $a4, 40($sp)\n	sd $a5, 48($sp)\n	sd $a6, 56($sp)\n"
	"	sd $a7, 64($sp)\n	sd $t0, 72($sp)\n	sd $t1, 80($sp)\n	sd $t2, 88($sp)\n"
	"	sd $t3, 96($sp)\n	sd $t8, 104($sp)\n	sd $t9, 112($sp)\n	sd $ra, 120($sp)\n"
	"	mfhi $a3\n	sd $a3, 128($sp)\n	mflo $a3\n	sd $a3, 136($sp)\n"
	"	sd $a1, 160($sp)\n	sd $a2, 168($sp)\n"
	"	ld $a3, " S(STUB_D_OFF) "($t8)\n"
	"	bnez $a3, 7f\n"
	"	nop\n"
	"	lw $a3, " S(STUB_C_OWNER) "($t1)\n"
	"	lui $v0, 0x4000\n" /* STUB_OWNER_DIED */
	"	and $a3, $a3, $v0\n"
	"	bnez $a3, 7f\n"
	"	nop\n"
	"	beqz $a2, 6f\n"
	"	nop\n"
	"	daddiu $a2, $a2, -1\n" /* a slice, used up however the wait ends */
	"	sd $a2, 168($sp)\n"
	"	daddiu $a0, $t1, " S(STUB_C_WAITERS) "\n"
	"4:	sync\n	ll $a1, 0($a0)\n	ori $a1, $a1, 1\n	sc $a1, 0($a0)\n"
	"	beqz $a1, 4b\n"
	"	nop\n"
	"	lw $a1, " S(STUB_C_NOSYS) "($t1)\n"
	"	bnez $a1, 2f\n"
	"	nop\n"
	"	daddiu $a0, $t1, " S(STUB_C_DWAKE) "\n"
	"5:	sync\n	ll $a1, 0($a0)\n	addiu $a1, $a1, 1\n	sc $a1, 0($a0)\n"
	"	beqz $a1, 5b\n"
	"	nop\n"
	"	sync\n"
	"	ori $a1, $zero, 1\n" /* FUTEX_WAKE, shared: heaptrace maps the same pages */
	"	ori $a2, $zero, 1\n"
	"	ori $v0, $zero, " S(STUB_NR_FUTEX) "\n"
	"	syscall\n"
	"	ld $t1, 80($sp)\n"
	"	ld $v1, 24($sp)\n" /* the tail as read */
	"	ld $a1, " S(STUB_C_TAIL) "($t1)\n"
	"	bne $a1, $v1, 3f\n"
	"	nop\n"
	"	lui $a1, " S(STUB_SLICE_HI) "\n	ori $a1, $a1, " S(STUB_SLICE_LO) "\n"
	"	sd $zero, 144($sp)\n	sd $a1, 152($sp)\n" /* struct timespec { 0 s, a slice } */
	"	daddiu $a0, $t1, " S(STUB_C_TAIL) "\n"
	"	or $a1, $zero, $zero\n" /* FUTEX_WAIT on the tail's low word */
	"	sll $a2, $v1, 0\n"
	"	daddiu $a3, $sp, 144\n"
	"	ori $v0, $zero, " S(STUB_NR_FUTEX) "\n"
	"	syscall\n"
	"	b 3f\n"
	"	nop\n"
	"2:	ld $a0, 24($sp)\n" /* the tail as read */
	"	ld $a2, " S(STUB_D_PAUSES) "($t8)\n"
	"1:	ld $a1, " S(STUB_C_TAIL) "($t1)\n"
	"	bne $a1, $a0, 3f\n"
	"	daddiu $a2, $a2, -1\n"
	"	bgtz $a2, 1b\n"
	"	nop\n"
	"3:	b 8f\n"
	"	or $a1, $zero, $zero\n" /* try again */
	"6:	ld $a1, 160($sp)\n"
	"	daddu $a1, $t1, $a1\n"
	"9:	sync\n	lld $a0, 0($a1)\n	daddiu $a0, $a0, 1\n	scd $a0, 0($a1)\n"
	"	beqz $a0, 9b\n"
	"	nop\n"
	"	sd $zero, 168($sp)\n"
	"7:	ori $a1, $zero, 1\n" /* go on unrecorded */
	"8:	ld $a2, 168($sp)\n"
	"	ld $a3, 128($sp)\n	mthi $a3\n	ld $a3, 136($sp)\n	mtlo $a3\n"
	"	ld $at, 0($sp)\n	ld $v0, 8($sp)\n	ld $v1, 16($sp)\n	ld $a0, 24($sp)\n"
	"	ld $a3, 32($sp)\n	ld $a4, 40($sp)\n	ld $a5, 48($sp)\n	ld $a6, 56($sp)\n"
	"	ld $a7, 64($sp)\n	ld $t0, 72($sp)\n	ld $t1, 80($sp)\n	ld $t2, 88($sp)\n"
	"	ld $t3, 96($sp)\n	ld $t8, 104($sp)\n	ld $t9, 112($sp)\n	ld $ra, 120($sp)\n"
	"	jr $ra\n"
	"	daddiu $sp, $sp, 192\n"
	".globl ht_stub_code_end\n"
	"ht_stub_code_end:\n"
	".balign 4096\n"
	".Ldata:\n"
	".skip 4096\n"
	".globl ht_stub_blob_end\n"
	"ht_stub_blob_end:\n"
	".set pop\n"
	".popsection\n");
