/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_LAYOUT_H
#define HEAPTRACE_STUB_LAYOUT_H

/*
 * The entry stubs' pages and records, the same on every architecture that has stubs
 * (arch/<arch>/stub_arch.h includes it and adds its own facts: the futex system call number,
 * the entry record's header length, the clock, the registers). Read by the stub code, where
 * the values are spelled into assembly (plain numbers only), and by stubs.c. Offsets are bytes.
 */

/* The data page: private to the process (a forked child gets its own copy). */
#define STUB_D_OFF 0 /* nonzero: record nothing (detached, or a child left untraced) */
#define STUB_D_CTL 8 /* the control page of the ring */
#define STUB_D_RING 16 /* the ring, mapped twice in a row: a record never wraps */
#define STUB_D_MASK 24 /* ring size - 1 */
#define STUB_D_SIZE 32 /* ring size */
#define STUB_D_COPY 40 /* most bytes of stack an entry record copies */
#define STUB_D_TRAMP 48 /* ht_stub_ret in the process */
#define STUB_D_MAIN_LO 192 /* the main thread's stack: [lo, top), whatever its key */
#define STUB_D_MAIN_TOP 200
/* Per hook (up to 224, hooks.h: stubs.c asserts it), its continuation (the relocated first
 * instructions). The stub code reads it at this immediate offset from the data page plus 8
 * times the hook, as it reads the threads' at STUB_D_TOPS: both stay below 4096, which arm's
 * ldr reaches (imm12). */
#define STUB_D_CONT 256
#define STUB_D_TOPS 2048 /* { thread pointer, stack top } per known thread */
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
#define STUB_OWNER_DIED 0x40000000 /* FUTEX_OWNER_DIED (bit 30) */

/*
 * Records: a u64 tag (the position | kind, written last), a u32 length, a u32 hook; lengths are
 * multiples of 16 (the kind is in the tag's low 4 bits). The entry record's header length
 * (STUB_REC_ENTRY) is the architecture's, its time stamp at 96. A free: 16 the pointer, 24 the
 * thread pointer, 32 the time stamp (the clock of stub_ticks), read late as the entry's is, so
 * a block's end is dated when the program freed it. A return: 16 the cookie, 24 the result, 32
 * the thread pointer; no time stamp, as every effect of a call (its block, a realloc's release)
 * is dated at its entry, in both modes.
 */
#define STUB_KIND_ENTRY 1
#define STUB_KIND_FREE 2
#define STUB_KIND_RETURN 3
#define STUB_REC_FREE 48
#define STUB_REC_RETURN 48
#define STUB_HOOK_FREE 0x100 /* in the thunk's word: a free, recorded at entry only */
#define STUB_HOOK_NORET 0x200 /* in the thunk's word: an entry record, its return left alone
			       * (libstdc++'s operator new: stubs.c) */

#endif
