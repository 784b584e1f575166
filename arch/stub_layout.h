/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_LAYOUT_H
#define HEAPTRACE_STUB_LAYOUT_H

/*
 * The entry stubs' pages and records, the same on every architecture that has stubs
 * (arch/<arch>/stub_arch.h includes it and adds its own facts: the futex system call number,
 * the entry record's header length, the clock, the registers). Read by the stub code, where
 * the values are spelled into assembly (plain numbers only), by the stubs' setup (patch/stub*.c)
 * and by the ring's reader (account/ring.c, ringrec.c). Offsets are bytes.
 */

/* The data page: private to the process (a forked child gets its own copy). */
#define STUB_D_OFF 0 /* nonzero: record nothing (detached, or a child left untraced) */
#define STUB_D_CTL 8 /* the control page of the ring */
#define STUB_D_RING 16 /* the ring, mapped twice in a row: a record never wraps */
#define STUB_D_MASK 24 /* ring size - 1 */
#define STUB_D_SIZE 32 /* ring size */
#define STUB_D_COPY 40 /* most bytes of stack an entry record copies */
#define STUB_D_TRAMP 48 /* ht_stub_ret in the process */
#define STUB_D_NOTSC 56 /* nonzero: no time-stamp counter (x86_64: PR_SET_TSC); stamps 0 */
/*
 * Python frames (unwind/python.h), where the process runs a CPython whose layout heaptrace
 * knows: the address of the word that points to the thread state holding the GIL (0: no
 * Python, no walk: a process without one pays one load), where each thread keeps its own
 * thread state, and the offsets the walk reads. The stub compares the state holding the GIL
 * with its own, read from its own struct pthread at the thread pointer (always mapped), and
 * reads nothing of a state that is not its own. Written when the area is made, or later (an
 * interpreter mapped or initialised after it: until heaptrace learns where the threads keep
 * their states, the walk stays off) while stubs run: then STUB_D_PY_MAX last, which the stub
 * code reads first. Its value has one nonzero byte, so that a store the stub sees half done
 * reads as 0 or as the whole value.
 */
#define STUB_D_PY_TSTATE 64 /* &_PyRuntime.gilstate.tstate_current, 0: none */
/* the thread's own value of gilstate.autoTSSkey, its PyThreadState: an offset from the thread
 * pointer (unwind/pytss.h) */
#define STUB_D_PY_TSS 72
#define STUB_D_PY_CFRAME 80 /* PyThreadState.cframe */
#define STUB_D_PY_CURRENT 88 /* _PyCFrame.current_frame */
#define STUB_D_PY_CODE 96 /* _PyInterpreterFrame.f_code */
#define STUB_D_PY_INSTR 104 /* _PyInterpreterFrame.prev_instr */
#define STUB_D_PY_ENTRY 112 /* _PyInterpreterFrame.is_entry (a byte) */
#define STUB_D_PY_PREVIOUS 120 /* _PyInterpreterFrame.previous */
/* &_PyRuntime._finalizing: once the interpreter ends, thread states are freed before the one
 * holding the GIL is cleared, so from then on the stub reads none */
#define STUB_D_PY_FINALIZING 128
/* &_PyRuntime.gilstate.autoTSSkey (a Py_tss_t: int initialised, then the key), and that word
 * as it was when STUB_D_PY_TSS was learned: the slot is the key's only while they are equal */
#define STUB_D_PY_KEY 136
#define STUB_D_PY_KEYWORD 144
#define STUB_D_PY_MAX 152 /* most frames recorded (STUB_PY_MAX_FRAMES), 0: no walk */
/*
 * --sample-bytes (heap/table.h: TABLE_SCALED), where the stub code decides (stub_arch.h:
 * STUB_SAMPLE_SUPPORTED): STUB_D_SAMPLE holds N (0: every call is taken), STUB_D_RAND the
 * state of a xorshift64 generator (never 0) the threads step without a lock (a draw two threads
 * share is still a fair draw for each). A call whose thunk's word names its size argument
 * (STUB_HOOK_SIZE) asks for s bytes: taken if s >= N, else if a draw modulo ceil(N / s) is 0
 * (table_sample_odds). One not taken is recorded with no stack beyond its return address and no
 * Python frames, and STUB_HOOK_NOT_TAKEN in its record's hook word.
 */
#define STUB_D_SAMPLE 160
#define STUB_D_RAND 168
/*
 * The reservation and the bounded stall, every architecture's stub code alike: a stub moves
 * the ring's head (atomically) only where its record fits, once head + length is at most the
 * tail, read before the head (it only grows: an old one errs on the safe side), plus the ring's
 * size. A stub that finds the ring full waits at most STUB_D_STALL slices of
 * STUB_STALL_SLICE_NS, each counted used up whether it timed out or a wake-up brought no room,
 * then goes on without a record (counted in STUB_C_LOST_*; not when the stubs are off or
 * heaptrace is gone: nobody reads). A slice is a futex wait on the tail after a wake of
 * heaptrace's reader or, with STUB_C_NOSYS set (a seccomp filter may forbid futex),
 * STUB_D_PAUSES pauses looking at the tail, and no system call.
 */
#define STUB_D_STALL 176 /* u64: slices a call may wait for room, 0: none */
#define STUB_D_PAUSES 184 /* u64: pauses per slice (at least 1), timed by heaptrace */
#define STUB_STALL_SLICE_NS 1000000 /* one slice: 1 ms (--max-stall is in milliseconds) */
#define STUB_D_MAIN_LO 192 /* the main thread's stack: [lo, top), whatever its key */
#define STUB_D_MAIN_TOP 200
/* Per hook (up to 224, hooks.h: patch/stubs.c asserts it), its continuation (the relocated first
 * instructions). The stub code reads it at this immediate offset from the data page plus 8
 * times the hook, as it reads the threads' at STUB_D_TOPS: both stay below 4096, which arm's
 * ldr reaches (imm12). */
#define STUB_D_CONT 256
#define STUB_D_TOPS 2048 /* { thread pointer, stack top } per known thread */
/* The top word's low 12 bits: the thread's stack in pages below its (page-aligned) top, at most
 * 4095 (16 MiB: a deeper sp is taken for one on a stack of its own). The stub code copies up to
 * top only from an sp within the stack: a coroutine or signal stack below the thread's, a guard
 * page above it, is copied to the end of sp's page. */
#define STUB_TOPS_PAGES 4095
#define STUB_TOPS_MASK 127 /* entries - 1 */
#define STUB_TOPS_PROBE 8 /* entries looked at from the hashed one */
#define STUB_HOOK_MASK 0xff /* the hook in the thunk's word (the stub code's masks) */

/* The control page, shared with heaptrace (the first page of the ring's memfd). */
#define STUB_C_HEAD 0 /* u64: bytes reserved so far */
#define STUB_C_TAIL 64 /* u64: bytes heaptrace has read; stubs wait on its low word */
#define STUB_C_WAITERS 72 /* u32: a stub waits for room */
#define STUB_C_OWNER 128 /* u32: robust futex, heaptrace's; the kernel marks its death */
#define STUB_C_ROBUST 136 /* heaptrace's robust list entry for it */
#define STUB_C_DWAKE 192 /* u32: heaptrace's reader sleeps on it; stubs wake it */
/* u32: nonzero once a thread may have installed a seccomp filter (heaptrace saw the filters
 * change, or a watched call, STUB_HOOK_WATCH, was about to install one): the stubs then wait
 * for room without system calls */
#define STUB_C_NOSYS 196
/* Calls that went on without a record (the bound passed), u64 each, stubs add with lock inc;
 * the cookies of lost returns (an entry then stays in flight): STUB_C_LOSTRET_SLOTS u64 words,
 * cookie ^ STUB_LOSTRET_MARK put into a zero word with lock cmpxchg, zeroed by heaptrace once
 * it has dropped the call; a lost return finding no free word is counted in
 * STUB_C_LOST_UNSLOTTED too (heaptrace then takes as many calls it drops unreturned, their
 * cookies in no word, for those, and does not count them again). */
#define STUB_C_LOST_ENTRIES 256
#define STUB_C_LOST_FREES 264
#define STUB_C_LOST_RETURNS 272
#define STUB_C_LOST_UNSLOTTED 280
#define STUB_C_LOSTRET 320
#define STUB_C_LOSTRET_SLOTS 32
/* positions are multiples of 16 (a breakpoint's cookie has bit 63): never 0 once marked */
#define STUB_LOSTRET_MARK 8
#define STUB_OWNER_DIED 0x40000000 /* FUTEX_OWNER_DIED (bit 30) */

/*
 * Records, one contract between the stub code (every arch/<arch>/stubcode.c) and the reader
 * (account/ring.c): the offsets below are bytes from a record's start. Every record starts with
 * a u64 tag (the position | kind, written last: it publishes the record), a u32 length and a
 * u32 hook; lengths are multiples of 16 (the kind is in the tag's low 4 bits).
 */
#define STUB_KIND_ENTRY 1
#define STUB_KIND_FREE 2
#define STUB_KIND_RETURN 3
#define STUB_R_TAG 0 /* u64: position | kind */
#define STUB_R_LEN 8 /* u32: bytes, the header and all */
#define STUB_R_HOOK 12 /* u32: the thunk's word (hook | STUB_HOOK_*); 0 in a return */
/*
 * An entry: the first three arguments, sp at the entry, the arch's registers (stub_arch.h:
 * STUB_RE_* between STUB_RE_SP and STUB_RE_TIME, and after STUB_RE_RETURNS), then from
 * STUB_REC_ENTRY (the arch's header length) the copy of the stack from sp up. The time stamp is
 * the clock of stub_ticks.
 */
#define STUB_RE_ARG0 16 /* u64 */
#define STUB_RE_ARG1 24 /* u64 */
#define STUB_RE_ARG2 32 /* u64 */
#define STUB_RE_SP 40 /* u64: sp at the entry, where the copy starts */
#define STUB_RE_TIME 96 /* u64: time stamp */
#define STUB_RE_THREAD 104 /* u64: the thread pointer, the thread's key */
#define STUB_RE_COPY 112 /* u32: bytes of stack copied */
#define STUB_RE_RETURNS 116 /* u32: nonzero if the return goes through the trampoline */
/*
 * A free: the pointer, the thread pointer, the time stamp, read late as the entry's is, so a
 * block's end is dated when the program freed it.
 */
#define STUB_RF_PTR 16 /* u64 */
#define STUB_RF_THREAD 24 /* u64 */
#define STUB_RF_TIME 32 /* u64 */
#define STUB_REC_FREE 48
/*
 * A return: the cookie (the entry record's position, or STUBS_COOKIE_BP | ... for a call caught
 * at a breakpoint), the result, the thread pointer; no time stamp, as every effect of a call
 * (its block, a realloc's release) is dated at its entry, in both modes.
 */
#define STUB_RR_COOKIE 16 /* u64 */
#define STUB_RR_RESULT 24 /* u64 */
#define STUB_RR_THREAD 32 /* u64 */
#define STUB_REC_RETURN 48
/*
 * An entry's Python section, after the stack copy at STUB_REC_ENTRY + copy rounded up to 16,
 * present when the record is longer than that: written only by a thread that holds the GIL
 * (the thread state holding it is the thread's own), whose frame chain cannot change while
 * it is in the allocator. A count, then per frame, innermost first, its code object and its
 * last instruction, bit 0 of which is set on the first frame of an evaluation loop's run
 * (is_entry; instructions are 2-byte units).
 */
#define STUB_PY_COUNT 0 /* u64 */
#define STUB_PY_FRAMES 16 /* the first frame */
#define STUB_PY_FRAME 16 /* bytes per frame */
#define STUB_PY_CODE 0 /* u64: the frame's PyCodeObject */
#define STUB_PY_INSTR 8 /* u64: prev_instr | STUB_PY_ENTRY_BIT */
#define STUB_PY_ENTRY_BIT 1
#define STUB_PY_MAX_FRAMES 128 /* STUB_D_PY_MAX's value: one nonzero byte */
#define STUB_HOOK_FREE 0x100 /* in the thunk's word: a free, recorded at entry only */
#define STUB_HOOK_NORET 0x200 /* in the thunk's word: an entry record, its return left alone
			       * (libstdc++'s operator new: stubpatch.c) */
/* in the thunk's word: the function takes a context first (CPython's allocator table: ctx,
 * then the arguments; patch/pytable.h), so the three arguments recorded are the ones after it
 * (only where arch_ops.stub_ctx_args) */
#define STUB_HOOK_CTX 0x400
/* in the thunk's word: 1 + the index of the argument that is the size a sampled call asks for
 * (heap/hooks.h: hook_sampled, one argument of the three recorded), 0: the stub takes every
 * call, the accounting decides */
#define STUB_HOOK_SIZE_SHIFT 11
#define STUB_HOOK_SIZE 0x1800
/* in an entry record's hook word: --sample-bytes did not take the call (STUB_D_SAMPLE) */
#define STUB_HOOK_NOT_TAKEN 0x2000
/* A watched entry (x86_64's stub code: stub_arch.h, STUB_WATCH_SUPPORTED), not a traced one:
 * nothing is recorded; if the call's first argument (its low 32 bits) equals the word's bits
 * from STUB_HOOK_WATCH_SHIFT up (prctl's PR_SET_SECCOMP, syscall's SYS_seccomp), the stub sets
 * STUB_C_NOSYS before the function runs, so that no stub's wait calls futex under the filter the
 * call may install. */
#define STUB_HOOK_WATCH 0x4000
#define STUB_HOOK_WATCH_SHIFT 16

/* The relations the stub code counts on: pair stores (aarch64's stp, arm's strd) write two
 * neighbouring fields at once, and the entry's fixed fields fit around the arch's registers. */
_Static_assert(STUB_R_LEN == STUB_R_TAG + 8 && STUB_R_HOOK == STUB_R_LEN + 4,
	       "a record's header: tag, length, hook");
_Static_assert(STUB_RE_ARG0 == STUB_R_HOOK + 4 && STUB_RE_ARG1 == STUB_RE_ARG0 + 8 &&
		       STUB_RE_ARG2 == STUB_RE_ARG1 + 8 && STUB_RE_SP == STUB_RE_ARG2 + 8,
	       "an entry's arguments, then sp (stp x1, x12 stores the third with sp)");
_Static_assert(STUB_RE_THREAD == STUB_RE_TIME + 8 && STUB_RE_COPY == STUB_RE_THREAD + 8 &&
		       STUB_RE_RETURNS == STUB_RE_COPY + 4,
	       "an entry's time stamp, thread, copy length and return flag");
_Static_assert(STUB_RF_PTR == STUB_R_HOOK + 4 && STUB_RF_THREAD == STUB_RF_PTR + 8 &&
		       STUB_RF_TIME == STUB_RF_THREAD + 8 && STUB_RF_TIME + 8 <= STUB_REC_FREE,
	       "a free: pointer, thread (one stp), time stamp");
_Static_assert(STUB_RR_COOKIE == STUB_R_HOOK + 4 && STUB_RR_RESULT == STUB_RR_COOKIE + 8 &&
		       STUB_RR_THREAD == STUB_RR_RESULT + 8 &&
		       STUB_RR_THREAD + 8 <= STUB_REC_RETURN,
	       "a return: cookie, result (one stp), thread");
_Static_assert(STUB_D_PY_TSTATE >= STUB_D_NOTSC + 8 && STUB_D_PY_MAX + 8 <= STUB_D_MAIN_LO,
	       "the Python words of the data page");
_Static_assert(STUB_D_PY_MAX + 8 <= STUB_D_SAMPLE && STUB_D_RAND == STUB_D_SAMPLE + 8 &&
		       STUB_D_RAND + 8 <= STUB_D_STALL,
	       "the sampling words of the data page");
_Static_assert(STUB_D_PY_MAX + 8 <= STUB_D_STALL && STUB_D_PAUSES + 8 <= STUB_D_MAIN_LO,
	       "the stall words of the data page");
_Static_assert(STUB_HOOK_SIZE == 3 << STUB_HOOK_SIZE_SHIFT &&
		       (STUB_HOOK_SIZE & (STUB_HOOK_MASK | STUB_HOOK_FREE | STUB_HOOK_NORET |
					  STUB_HOOK_CTX | STUB_HOOK_NOT_TAKEN)) == 0 &&
		       (STUB_HOOK_SIZE | STUB_HOOK_NOT_TAKEN) <= 0xffff,
	       "the thunk's word: 16 bits (aarch64's movz, arm's movw, mips's ori)");
_Static_assert(STUB_HOOK_WATCH > STUB_HOOK_NOT_TAKEN &&
		       STUB_HOOK_WATCH < 1 << STUB_HOOK_WATCH_SHIFT,
	       "a watched entry's word: its flag, then its value (x86_64's push imm32)");
_Static_assert(STUB_C_NOSYS == STUB_C_DWAKE + 4 && STUB_C_NOSYS + 4 <= STUB_C_LOST_ENTRIES &&
		       STUB_C_LOST_FREES == STUB_C_LOST_ENTRIES + 8 &&
		       STUB_C_LOST_RETURNS == STUB_C_LOST_FREES + 8 &&
		       STUB_C_LOST_UNSLOTTED == STUB_C_LOST_RETURNS + 8 &&
		       STUB_C_LOST_UNSLOTTED + 8 <= STUB_C_LOSTRET &&
		       STUB_C_LOSTRET + 8 * STUB_C_LOSTRET_SLOTS <= 4096,
	       "the lost calls' words of the control page");
_Static_assert(STUB_PY_MAX_FRAMES > 0 && STUB_PY_MAX_FRAMES <= 255, "one nonzero byte");
_Static_assert(STUB_PY_FRAMES % 16 == 0 && STUB_PY_FRAME == 16,
	       "the Python section keeps records a multiple of 16 bytes");
_Static_assert(STUB_REC_FREE % 16 == 0 && STUB_REC_RETURN % 16 == 0,
	       "records are multiples of 16 bytes");

#endif
