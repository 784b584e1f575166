// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86_64 entry stubs (stubs.h): the code heaptrace copies into a traced process, in section
 * ht_stub. A page of code, then the process's private data page (stub_arch.h: STUB_D_*). All
 * references are RIP-relative inside the section, so the copy works anywhere; the Makefile
 * checks that the section has no relocation.
 *
 * ht_stub_entry is reached from a per-function thunk (`push $hook|flags; jmp ht_stub_entry`)
 * with the function's return address above that word. It saves every register it touches
 * but the flags (no status flag is live across a call, none of its instructions touches DF or
 * the system flags, and popfq is slow, microcoded), reserves a record in the shared ring
 * where it fits (ht_stub_reserve), writes it (free: the pointer and a time stamp; others:
 * arguments, the registers an unwinder needs, a time stamp, a copy of the stack from the
 * return address up, and in a Python process the thread's Python frames when it holds the
 * GIL), and publishes it by writing its tag last. An allocation's return goes through
 * ht_stub_ret, which records the result. Then the function goes on at its continuation: its
 * displaced first instructions, relocated, and a jump back. With the data page's off word
 * set, or heaptrace gone (the kernel marks the robust futex heaptrace owns in the ring's
 * control page), nothing is recorded.
 *
 * Stack at ht_stub_entry after the pushes (E: the entry sp, at the return address):
 * r11 r10 r9 r8 rdi rsi rdx rcx rax (0..64), unused 72, continuation 80 (E-24), the
 * trampoline 88 (E-16), hook|flags then the cookie 96 (E-8), the return address 104 (E).
 * The function so starts at E with its own return address, or at E-16 returning into the
 * trampoline with the cookie above; the continuation is jumped to through a word just below
 * sp, which signal delivery skips (the 128-byte red zone).
 */
#define STUB_CODE_ONLY
#include "stub_arch.h"

_Static_assert(STUB_PY_FRAME == 16, "PY_WRITE: bytes to frames by a shift of 4");

#define S_(x) #x
#define S(x) S_(x)

#define POP_ALL                                                                                   \
	"	pop %r11\n	pop %r10\n	pop %r9\n	pop %r8\n	pop %rdi\n"                  \
	"	pop %rsi\n	pop %rdx\n	pop %rcx\n	pop %rax\n"

/*
 * The time stamp into rax (rdx clobbered): rdtsc, unless the data page says the process turned
 * the time-stamp counter off (prctl PR_SET_TSC, seccomp's strict mode), where rdtsc faults;
 * then 0, and heaptrace dates the record when it reads it. ht_stub_tsc_X is the rdtsc and
 * ht_stub_tsc_X_end the instruction after it: a fault there, the first time, is heaptrace's
 * to answer (stubs_clock_fault sets the flag and resumes at the end with rax = rdx = 0).
 */
#define STAMP(x)                                                                                  \
	"	xor %eax,%eax\n	xor %edx,%edx\n"                                                     \
	"	cmpq $0," S(STUB_D_NOTSC) "(%r10)\n"                                                 \
	"	jne ht_stub_tsc_" #x "_end\n"                                                        \
	".globl ht_stub_tsc_" #x "\nht_stub_tsc_" #x ":\n"                                   \
	"	rdtsc\n"                                                                          \
	".globl ht_stub_tsc_" #x "_end\nht_stub_tsc_" #x "_end:\n"                           \
	"	shl $32,%rdx\n"                                                                   \
	"	or %rdx,%rax\n"

/*
 * The critical sections (stub_arch.h: STUB_CRITICAL): from the return of ht_stub_reserve to the
 * store of the tag, and the reservation's own end, where a thread may hold a record reserved
 * and not yet written. heaptrace's probe of a stuck reader looks for threads there.
 */
#define CS_BEGIN(x) ".globl ht_stub_cs_" #x "\nht_stub_cs_" #x ":\n"
#define CS_END(x) ".globl ht_stub_cs_" #x "_end\nht_stub_cs_" #x "_end:\n"

/*
 * The Python frames of the thread, if it holds the GIL (stub_layout.h: STUB_D_PY_*): their
 * count into rax (rdi, rdx clobbered), at most STUB_D_PY_MAX, which is 0 until the other words
 * are written; none once the interpreter is ending (it frees thread states then), nor if the
 * key the threads keep their states in is not the one learned. The thread state holding the
 * GIL is only compared with the thread's own, read at the thread pointer (its struct pthread,
 * always mapped); nothing of it is read unless it is the thread's own, which holds the GIL
 * then: nothing else changes or frees it or its chain while the thread allocates.
 */
#define PY_COUNT                                                                                  \
	"	xor %eax,%eax\n"                                                                   \
	"	cmpq $0," S(STUB_D_PY_MAX) "(%r10)\n	je 11f\n"                                      \
	"	mov " S(STUB_D_PY_FINALIZING) "(%r10),%rdi\n"                                      \
	"	cmpq $0,(%rdi)\n	jne 11f\n"                                                     \
	"	mov " S(STUB_D_PY_KEY) "(%r10),%rdi\n"                                             \
	"	mov (%rdi),%rdi\n"                                                                \
	"	cmp " S(STUB_D_PY_KEYWORD) "(%r10),%rdi\n	jne 11f\n"                              \
	"	mov " S(STUB_D_PY_TSTATE) "(%r10),%rdi\n"                                          \
	"	test %rdi,%rdi\n	jz 11f\n"                                                      \
	"	mov (%rdi),%rdi\n"                                                                \
	"	test %rdi,%rdi\n	jz 11f\n"                                                      \
	"	mov " S(STUB_D_PY_TSS) "(%r10),%rdx\n"                                             \
	"	cmp %fs:(%rdx),%rdi\n	jne 11f\n"                                                 \
	"	mov " S(STUB_D_PY_CFRAME) "(%r10),%rdx\n"                                          \
	"	mov (%rdi,%rdx),%rdi\n"                                                           \
	"	test %rdi,%rdi\n	jz 11f\n"                                                      \
	"	mov " S(STUB_D_PY_CURRENT) "(%r10),%rdx\n"                                         \
	"	mov (%rdi,%rdx),%rdi\n"                                                           \
	"	mov " S(STUB_D_PY_PREVIOUS) "(%r10),%rdx\n"                                        \
	"12:	test %rdi,%rdi\n	jz 11f\n"                                                    \
	"	test $7,%dil\n	jnz 11f\n"                                                        \
	"	cmp " S(STUB_D_PY_MAX) "(%r10),%rax\n	jae 11f\n"                                  \
	"	inc %eax\n"                                                                       \
	"	mov (%rdi,%rdx),%rdi\n"                                                           \
	"	jmp 12b\n"                                                                        \
	"11:\n"

/*
 * The Python section of the entry record at r11, after the stack copy (rdi: its end): the same
 * walk again from the thread's own state (PY_COUNT found it holds the GIL), as many frames as
 * PY_COUNT counted (the record's length, in r9's upper half, says how many), each frame's code
 * object and last instruction with the is_entry bit, then the count of those written. The
 * length is not read back from the record: once heaptrace's reader has gone past a record not
 * finished for 2 s (account/ring.c: stuck_check), another thread may reserve over it.
 * rax, rcx, rdx, rsi, rdi clobbered.
 */
#define PY_WRITE                                                                                  \
	"	mov %r9,%rax\n	shr $32,%rax\n"                                                    \
	"	add $15,%rdi\n	and $-16,%rdi\n"                                                   \
	"	mov %rdi,%rdx\n	sub %r11,%rdx\n"                                                 \
	"	sub %rdx,%rax\n	jz 19f\n"                                                      \
	"	sub $" S(STUB_PY_FRAMES) ",%rax\n"                                                 \
	"	xor %ecx,%ecx\n"                                                                  \
	"	mov " S(STUB_D_PY_TSS) "(%r10),%rsi\n	mov %fs:(%rsi),%rsi\n"                     \
	"	mov " S(STUB_D_PY_CFRAME) "(%r10),%rdx\n	mov (%rsi,%rdx),%rsi\n"                 \
	"	mov " S(STUB_D_PY_CURRENT) "(%r10),%rdx\n	mov (%rsi,%rdx),%rsi\n"                \
	"13:	cmp %rax,%rcx\n	jae 18f\n"                                                   \
	"	test %rsi,%rsi\n	jz 18f\n"                                                      \
	"	test $7,%sil\n	jnz 18f\n"                                                        \
	"	mov " S(STUB_D_PY_CODE) "(%r10),%rdx\n	mov (%rsi,%rdx),%rdx\n"                   \
	"	mov %rdx," S(STUB_PY_FRAMES) "+" S(STUB_PY_CODE) "(%rdi,%rcx)\n"                   \
	"	mov " S(STUB_D_PY_ENTRY) "(%r10),%rdx\n	movzbl (%rsi,%rdx),%edx\n"              \
	"	and $" S(STUB_PY_ENTRY_BIT) ",%edx\n"                                              \
	"	mov %rdx," S(STUB_PY_FRAMES) "+" S(STUB_PY_INSTR) "(%rdi,%rcx)\n"                  \
	"	mov " S(STUB_D_PY_INSTR) "(%r10),%rdx\n	mov (%rsi,%rdx),%rdx\n"                  \
	"	or %rdx," S(STUB_PY_FRAMES) "+" S(STUB_PY_INSTR) "(%rdi,%rcx)\n"                   \
	"	mov " S(STUB_D_PY_PREVIOUS) "(%r10),%rdx\n	mov (%rsi,%rdx),%rsi\n"              \
	"	add $" S(STUB_PY_FRAME) ",%rcx\n"                                                  \
	"	jmp 13b\n"                                                                        \
	"18:	shr $4,%rcx\n"                                                                  \
	"	mov %rcx," S(STUB_PY_COUNT) "(%rdi)\n"                                             \
	"19:\n"

/*
 * rax = rsp, or rsp + 8 when the thunk's word (r11) says the function takes a context first
 * (STUB_HOOK_CTX): the saved rdi, rsi, rdx then read as the saved rsi, rdx, rcx (32, 40, 48).
 */
#define ARGS_AT                                                                                   \
	"	xor %eax,%eax\n"                                                                   \
	"	test $" S(STUB_HOOK_CTX) ",%r11d\n"                                                \
	"	setnz %al\n"                                                                       \
	"	lea (%rsp,%rax,8),%rax\n"

/*
 * --sample-bytes (stub_layout.h: STUB_D_SAMPLE), for a call whose thunk's word (r11) names its
 * size argument: s >= N is taken; else ceil(N / s) = k, a xorshift64 step of STUB_D_RAND, and the
 * call is taken if the draw modulo k is 0. One not taken gets STUB_HOOK_NOT_TAKEN in r11, at
 * most 8 bytes of stack (rcx: its return address, the caller) and no Python frames (rax = 0,
 * on to 22, past PY_COUNT). rax, rdx, rdi, r8 clobbered.
 */
#define SAMPLE                                                                                    \
	"	mov " S(STUB_D_SAMPLE) "(%r10),%r8\n"                                                 \
	"	test %r8,%r8\n	jz 20f\n"                                                       \
	"	mov %r11d,%edi\n"                                                                 \
	"	and $" S(STUB_HOOK_SIZE) ",%edi\n	jz 20f\n"                                       \
	"	shr $" S(STUB_HOOK_SIZE_SHIFT) ",%edi\n"                                            \
	ARGS_AT                                                                                   \
	"	mov 24(%rax,%rdi,8),%rdi\n" /* the saved rdi, rsi, rdx at 32, 40, 48 */            \
	"	cmp %r8,%rdi\n	jae 20f\n"                                                      \
	"	test %rdi,%rdi\n	jnz 21f\n"                                                    \
	"	inc %edi\n"                                                                       \
	"21:	lea -1(%r8,%rdi),%rax\n	xor %edx,%edx\n	div %rdi\n"                       \
	"	mov %rax,%r8\n"                                                                   \
	"	mov " S(STUB_D_RAND) "(%r10),%rax\n"                                                \
	"	mov %rax,%rdx\n	shl $13,%rdx\n	xor %rdx,%rax\n"                              \
	"	mov %rax,%rdx\n	shr $7,%rdx\n	xor %rdx,%rax\n"                               \
	"	mov %rax,%rdx\n	shl $17,%rdx\n	xor %rdx,%rax\n"                              \
	"	mov %rax," S(STUB_D_RAND) "(%r10)\n"                                                \
	"	xor %edx,%edx\n	div %r8\n"                                                     \
	"	test %rdx,%rdx\n	jz 20f\n"                                                    \
	"	or $" S(STUB_HOOK_NOT_TAKEN) ",%r11d\n"                                             \
	"	mov $8,%eax\n	cmp %rax,%rcx\n	cmova %rax,%rcx\n"                            \
	"	xor %eax,%eax\n	jmp 22f\n"                                                     \
	"20:\n"

__asm__(".pushsection ht_stub,\"ax\",@progbits\n"
	".p2align 12\n"
	".globl ht_stub_blob\n"
	"ht_stub_blob:\n"
	".globl ht_stub_entry\n"
	"ht_stub_entry:\n"
	"	lea -24(%rsp),%rsp\n"
	"	push %rax\n	push %rcx\n	push %rdx\n	push %rsi\n	push %rdi\n"
	"	push %r8\n	push %r9\n	push %r10\n	push %r11\n"
	"	lea ht_stub_data(%rip),%r10\n"
	"	mov 96(%rsp),%r11d\n" /* hook | flags */
	"	movzbl %r11b,%eax\n"
	"	mov " S(STUB_D_CONT) "(%r10,%rax,8),%rax\n"
	"	mov %rax,80(%rsp)\n" /* where the function goes on */
	"	cmpq $0," S(STUB_D_OFF) "(%r10)\n"
	"	jne 9f\n"
	"	mov " S(STUB_D_CTL) "(%r10),%r9\n"
	"	testl $" S(STUB_OWNER_DIED) "," S(STUB_C_OWNER) "(%r9)\n"
	"	jnz 9f\n"
	"	test $" S(STUB_HOOK_WATCH) ",%r11d\n"
	"	jnz 30f\n"
	"	test $" S(STUB_HOOK_FREE) ",%r11d\n"
	"	jnz 5f\n"
	/* bytes of stack to copy: up to the thread's stack top (the table, keyed by the thread
	 * pointer at %fs:0, which the C library sets before its first malloc; the main thread's
	 * by its stack's range, known before its thread pointer is), else to the end of the
	 * page of E, and at most STUB_D_COPY */
	"	lea 104(%rsp),%rsi\n"
	"	mov " S(STUB_D_MAIN_TOP) "(%r10),%rcx\n"
	"	cmp " S(STUB_D_MAIN_LO) "(%r10),%rsi\n"
	"	jb 0f\n"
	"	cmp %rcx,%rsi\n"
	"	jb 4f\n"
	"0:	mov %fs:0,%rdi\n"
	"	mov %rdi,%rax\n"
	"	movabs $0x9e3779b97f4a7c15,%rdx\n"
	"	imul %rdx,%rax\n"
	"	shr $57,%rax\n"
	"	mov $" S(STUB_TOPS_PROBE) ",%ecx\n"
	"1:	mov %eax,%edx\n"
	"	and $" S(STUB_TOPS_MASK) ",%edx\n"
	"	shl $4,%edx\n"
	"	cmp %rdi," S(STUB_D_TOPS) "(%r10,%rdx)\n"
	"	je 2f\n"
	"	cmpq $0," S(STUB_D_TOPS) "(%r10,%rdx)\n"
	"	je 3f\n"
	"	inc %eax\n"
	"	dec %ecx\n"
	"	jnz 1b\n"
	"3:	lea 4096(%rsi),%rcx\n"
	"	and $-4096,%rcx\n"
	"	jmp 4f\n"
	/* the thread's stack: [top - 4096 * the word's low 12 bits, top) (stub_layout.h:
	 * STUB_TOPS_PAGES); an sp outside it is on a stack of its own (a coroutine's, a signal
	 * stack) whose end is not known: to the end of sp's page */
	"2:	mov " S(STUB_D_TOPS) "+8(%r10,%rdx),%rcx\n"
	"	mov %ecx,%eax\n"
	"	and $" S(STUB_TOPS_PAGES) ",%eax\n"
	"	shl $12,%rax\n"
	"	and $-4096,%rcx\n"
	"	cmp %rcx,%rsi\n"
	"	jae 3b\n"
	"	mov %rcx,%rdx\n"
	"	sub %rax,%rdx\n"
	"	cmp %rdx,%rsi\n"
	"	jb 3b\n"
	"4:	sub %rsi,%rcx\n"
	"	jae 6f\n"
	"	xor %ecx,%ecx\n"
	"6:	mov " S(STUB_D_COPY) "(%r10),%rdx\n"
	"	cmp %rdx,%rcx\n"
	"	cmova %rdx,%rcx\n"
	SAMPLE
	PY_COUNT
	"22:\n"
	"	lea " S(STUB_REC_ENTRY) "+15(%rcx),%rdx\n"
	"	and $-16,%rdx\n"
	"	test %rax,%rax\n"
	"	jz 10f\n"
	"	shl $4,%rax\n"
	"	lea " S(STUB_PY_FRAMES) "(%rdx,%rax),%rdx\n"
	"10:	mov $" S(STUB_C_LOST_ENTRIES) ",%eax\n"
	"	call ht_stub_reserve\n"
	CS_BEGIN(entry)
	"	jc 9f\n" /* no room within the bound: the call goes on unrecorded */
	"	mov %rax,%r8\n" /* the record's position: its cookie */
	"	mov %rax,%rdi\n"
	"	and " S(STUB_D_MASK) "(%r10),%rdi\n"
	"	add " S(STUB_D_RING) "(%r10),%rdi\n"
	"	mov %edx," S(STUB_R_LEN) "(%rdi)\n"
	"	mov %rdx,%r9\n" /* the length, for PY_WRITE (r9 is the control page no more) */
	"	mov %r11d," S(STUB_R_HOOK) "(%rdi)\n"
	ARGS_AT
	"	mov 32(%rax),%rdx\n	mov %rdx," S(STUB_RE_ARG0) "(%rdi)\n"
	"	mov 40(%rax),%rdx\n	mov %rdx," S(STUB_RE_ARG1) "(%rdi)\n"
	"	mov 48(%rax),%rdx\n	mov %rdx," S(STUB_RE_ARG2) "(%rdi)\n"
	"	mov %rsi," S(STUB_RE_SP) "(%rdi)\n"
	"	mov %rbp," S(STUB_RE_RBP) "(%rdi)\n	mov %rbx," S(STUB_RE_RBX) "(%rdi)\n"
	"	mov %r12," S(STUB_RE_R12) "(%rdi)\n	mov %r13," S(STUB_RE_R13) "(%rdi)\n"
	"	mov %r14," S(STUB_RE_R14) "(%rdi)\n	mov %r15," S(STUB_RE_R15) "(%rdi)\n"
	"	mov %fs:0,%rax\n	mov %rax," S(STUB_RE_THREAD) "(%rdi)\n"
	"	mov %ecx," S(STUB_RE_COPY) "(%rdi)\n"
	/* the return goes through the trampoline, unless it does already (a tail call) */
	"	mov " S(STUB_D_TRAMP) "(%r10),%rax\n"
	"	xor %edx,%edx\n"
	"	test $" S(STUB_HOOK_NORET) ",%r11d\n"
	"	jnz 7f\n"
	"	cmp %rax,(%rsi)\n"
	"	je 7f\n"
	"	mov %rax,88(%rsp)\n"
	"	mov %r8,96(%rsp)\n"
	"	mov $1,%edx\n"
	"7:	mov %edx," S(STUB_RE_RETURNS) "(%rdi)\n"
	"	shl $32,%r9\n	or %rdx,%r9\n" /* the length above, returns (0 or 1) below */
	"	mov %rdi,%r11\n"
	STAMP(a)
	"	mov %rax," S(STUB_RE_TIME) "(%r11)\n"
	"	lea " S(STUB_REC_ENTRY) "(%r11),%rdi\n"
	"	rep movsb\n"
	PY_WRITE
	"	or $" S(STUB_KIND_ENTRY) ",%r8\n"
	"	mov %r8," S(STUB_R_TAG) "(%r11)\n" /* the tag, last: the record is complete */
	CS_END(entry)
	"	test $1,%r9d\n"
	"	jnz 8f\n"
	"	jmp 9f\n"
	/* a watched call (STUB_HOOK_WATCH), recorded nowhere: one that may install a seccomp
	 * filter, which may forbid futex, sets the control page's STUB_C_NOSYS first */
	"30:	mov %r11d,%eax\n"
	"	shr $" S(STUB_HOOK_WATCH_SHIFT) ",%eax\n"
	"	cmp %eax,32(%rsp)\n" /* the saved rdi */
	"	jne 9f\n"
	"	movl $1," S(STUB_C_NOSYS) "(%r9)\n"
	"	jmp 9f\n"
	/* free: { tag, length, hook, pointer, thread, time stamp } */
	"5:	mov $" S(STUB_REC_FREE) ",%edx\n"
	"	mov $" S(STUB_C_LOST_FREES) ",%eax\n"
	"	call ht_stub_reserve\n"
	CS_BEGIN(free)
	"	jc 9f\n"
	"	mov %rax,%r8\n" /* the position, for the tag: rdtsc takes rax and rdx */
	"	mov %rax,%rdi\n"
	"	and " S(STUB_D_MASK) "(%r10),%rdi\n"
	"	add " S(STUB_D_RING) "(%r10),%rdi\n"
	"	mov %edx," S(STUB_R_LEN) "(%rdi)\n"
	"	mov %r11d," S(STUB_R_HOOK) "(%rdi)\n"
	ARGS_AT
	"	mov 32(%rax),%rcx\n	mov %rcx," S(STUB_RF_PTR) "(%rdi)\n"
	"	mov %fs:0,%rcx\n	mov %rcx," S(STUB_RF_THREAD) "(%rdi)\n"
	STAMP(b)
	"	mov %rax," S(STUB_RF_TIME) "(%rdi)\n"
	"	or $" S(STUB_KIND_FREE) ",%r8\n"
	"	mov %r8," S(STUB_R_TAG) "(%rdi)\n"
	CS_END(free)
	/* the function starts at E with its own return address */
	"9:\n" POP_ALL
	"	lea 32(%rsp),%rsp\n"
	"	jmp *-24(%rsp)\n"
	/* the function starts at E-16, returning into the trampoline */
	"8:\n" POP_ALL
	"	lea 16(%rsp),%rsp\n"
	"	jmp *-8(%rsp)\n"

	/* The trampoline: the function returned with [rsp] = the cookie, then its caller's
	 * return address. Records { tag, length, cookie, result, thread } and returns to the
	 * caller without a ret (a ret with no call would unbalance the return predictor). */
	".globl ht_stub_ret\n"
	"ht_stub_ret:\n"
	"	push %rax\n	push %rcx\n	push %rdx\n	push %rsi\n	push %rdi\n"
	"	push %r8\n	push %r9\n	push %r10\n	push %r11\n"
	"	lea ht_stub_data(%rip),%r10\n"
	"	cmpq $0," S(STUB_D_OFF) "(%r10)\n"
	"	jne 1f\n"
	"	mov " S(STUB_D_CTL) "(%r10),%r9\n"
	"	testl $" S(STUB_OWNER_DIED) "," S(STUB_C_OWNER) "(%r9)\n"
	"	jnz 1f\n"
	"	mov $" S(STUB_REC_RETURN) ",%edx\n"
	"	mov $" S(STUB_C_LOST_RETURNS) ",%eax\n"
	"	call ht_stub_reserve\n"
	CS_BEGIN(ret)
	"	jc 2f\n"
	"	mov %rax,%rdi\n"
	"	and " S(STUB_D_MASK) "(%r10),%rdi\n"
	"	add " S(STUB_D_RING) "(%r10),%rdi\n"
	"	mov %edx," S(STUB_R_LEN) "(%rdi)\n"
	"	movl $0," S(STUB_R_HOOK) "(%rdi)\n"
	"	mov 72(%rsp),%rcx\n	mov %rcx," S(STUB_RR_COOKIE) "(%rdi)\n"
	"	mov 64(%rsp),%rcx\n	mov %rcx," S(STUB_RR_RESULT) "(%rdi)\n"
	"	mov %fs:0,%rcx\n	mov %rcx," S(STUB_RR_THREAD) "(%rdi)\n"
	"	or $" S(STUB_KIND_RETURN) ",%rax\n"
	"	mov %rax," S(STUB_R_TAG) "(%rdi)\n"
	CS_END(ret)
	"1:\n" POP_ALL
	"	lea 16(%rsp),%rsp\n"
	"	jmp *-8(%rsp)\n"
	/* no record: the entry's cookie into a free word of the control page, so that
	 * heaptrace drops the call it holds in flight */
	"2:	mov 72(%rsp),%rcx\n"
	"	xor $" S(STUB_LOSTRET_MARK) ",%rcx\n"
	"	mov $" S(STUB_C_LOSTRET_SLOTS) ",%edx\n"
	"3:	dec %edx\n"
	"	js 4f\n"
	"	xor %eax,%eax\n"
	"	lock cmpxchg %rcx," S(STUB_C_LOSTRET) "(%r9,%rdx,8)\n"
	"	jne 3b\n"
	"	jmp 1b\n"
	"4:	lock incq " S(STUB_C_LOST_UNSLOTTED) "(%r9)\n" /* no free word */
	"	jmp 1b\n"

	/*
	 * Reserve rdx bytes of ring (r9: the control page, r10: the data page) only where they
	 * fit: the head moves by lock cmpxchg once head + rdx - tail is at most the ring's size
	 * (the tail read first: it only grows, and never passes the head). Return the record's
	 * position in rax with CF clear. When it does not fit, wait for heaptrace to read
	 * (STUB_D_STALL slices: futex waits on the tail, or pauses with STUB_C_NOSYS), holding
	 * nothing; past the bound, count the call at the control page's offset rax had and
	 * return CF set, as when the stubs are off or heaptrace is gone (not counted: nobody
	 * reads). Keeps every other register. Where there is room at the first look, the usual
	 * case, only the three registers the reservation uses are saved: fewer stores behind the
	 * record's, whose cache lines the reader has just read.
	 */
	"ht_stub_reserve:\n"
	"	push %rcx\n	push %r8\n	push %rax\n"
	"	mov " S(STUB_C_TAIL) "(%r9),%r8\n"
	"	mov " S(STUB_C_HEAD) "(%r9),%rax\n"
	"10:	lea (%rax,%rdx),%rcx\n"
	"	sub %r8,%rcx\n"
	"	cmp " S(STUB_D_SIZE) "(%r10),%rcx\n"
	"	ja 11f\n"
	"	lea (%rax,%rdx),%rcx\n"
	"	lock cmpxchg %rcx," S(STUB_C_HEAD) "(%r9)\n"
	CS_BEGIN(reserve_fast)
	"	jne 10b\n"
	"	lea 8(%rsp),%rsp\n	pop %r8\n	pop %rcx\n"
	"	clc\n"
	"	ret\n"
	CS_END(reserve_fast)
	"11:	pop %rax\n	pop %r8\n	pop %rcx\n" /* as called: the wait below */
	"	push %rcx\n	push %rax\n	push %rsi\n	push %rdi\n	push %r8\n"
	"	push %r9\n	push %r10\n	push %r11\n	push %rdx\n"
	"	push " S(STUB_D_STALL) "(%r10)\n"
	"	push $" S(STUB_STALL_SLICE_NS) "\n	push $0\n" /* struct timespec { 0 s, a slice } */
	/* rsp: timespec 0, slices left 16, rdx 24, r11 32, r10 40, r9 48, r8 56, rdi 64, rsi 72,
	 * the counter's offset 80, rcx 88 */
	"1:	mov " S(STUB_C_TAIL) "(%r9),%r8\n"
	"	mov " S(STUB_C_HEAD) "(%r9),%rax\n"
	"2:	lea (%rax,%rdx),%rcx\n"
	"	sub %r8,%rcx\n"
	"	cmp " S(STUB_D_SIZE) "(%r10),%rcx\n"
	"	ja 3f\n"
	"	lea (%rax,%rdx),%rcx\n"
	"	lock cmpxchg %rcx," S(STUB_C_HEAD) "(%r9)\n"
	CS_BEGIN(reserve)
	"	jne 2b\n" /* another thread moved the head: rax is the new one */
	"	clc\n"
	"	jmp 9f\n"
	CS_END(reserve)
	"3:	cmpq $0," S(STUB_D_OFF) "(%r10)\n"
	"	jne 7f\n"
	"	testl $" S(STUB_OWNER_DIED) "," S(STUB_C_OWNER) "(%r9)\n"
	"	jnz 7f\n"
	"	cmpq $0,16(%rsp)\n"
	"	je 6f\n"
	"	decq 16(%rsp)\n" /* a slice, used up however the wait ends */
	"	lock orl $1," S(STUB_C_WAITERS) "(%r9)\n" /* the reader sees the ring full */
	"	mov " S(STUB_D_PAUSES) "(%r10),%rcx\n"
	"	cmpl $0," S(STUB_C_NOSYS) "(%r9)\n"
	"	jne 5f\n"
	"	lock incl " S(STUB_C_DWAKE) "(%r9)\n"
	"	lea " S(STUB_C_DWAKE) "(%r9),%rdi\n"
	"	mov $1,%esi\n" /* FUTEX_WAKE, shared: heaptrace maps the same pages */
	"	mov $1,%edx\n"
	"	mov $" S(STUB_NR_FUTEX) ",%eax\n"
	"	syscall\n"
	"	mov 48(%rsp),%r9\n"
	"	cmp " S(STUB_C_TAIL) "(%r9),%r8\n"
	"	jne 4f\n"
	"	lea " S(STUB_C_TAIL) "(%r9),%rdi\n"
	"	xor %esi,%esi\n" /* FUTEX_WAIT on the tail's low word */
	"	mov %r8d,%edx\n"
	"	mov %rsp,%r10\n"
	"	mov $" S(STUB_NR_FUTEX) ",%eax\n"
	"	syscall\n"
	"4:	mov 24(%rsp),%rdx\n"
	"	mov 32(%rsp),%r11\n"
	"	mov 40(%rsp),%r10\n"
	"	mov 48(%rsp),%r9\n"
	"	jmp 1b\n"
	"5:	pause\n"
	"	cmp " S(STUB_C_TAIL) "(%r9),%r8\n"
	"	jne 1b\n"
	"	dec %rcx\n"
	"	jnz 5b\n"
	"	jmp 1b\n"
	"6:	mov 80(%rsp),%rax\n"
	"	lock incq (%r9,%rax)\n"
	"7:	stc\n"
	/* flags kept from here: lea, pop and ret leave them */
	CS_BEGIN(reserve_exit)
	"9:	lea 24(%rsp),%rsp\n"
	"	pop %rdx\n	pop %r11\n	pop %r10\n	pop %r9\n	pop %r8\n"
	"	pop %rdi\n	pop %rsi\n	lea 8(%rsp),%rsp\n	pop %rcx\n"
	"	ret\n"
	CS_END(reserve_exit)
	".globl ht_stub_code_end\n"
	"ht_stub_code_end:\n"
	".balign 4096\n"
	"ht_stub_data:\n"
	".skip 4096\n"
	".globl ht_stub_blob_end\n"
	"ht_stub_blob_end:\n"
	".popsection\n");
