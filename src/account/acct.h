/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_ACCT_H
#define HEAPTRACE_ACCT_H

/*
 * The accounting of hooked calls, without a process: a thread's calls in flight (struct frame,
 * process.h), which calls count (one made inside another traced call of the same heap is part
 * of it), what each did to the table when it returned, and the frames longjmp or an exception
 * left. calls.c feeds it from breakpoint stops and from entry stub records alike.
 */
#include <stdbool.h>
#include <stdint.h>

#include "target/process.h"

struct unwind_reader;

/* What the accounting reads of a traced thread's memory (remote.h's functions on a process). */
struct acct_mem {
	/* The word of size bytes at addr: 0 or -errno. */
	int (*read_word)(pid_t tid, uint64_t addr, unsigned size, uint64_t *val);
	/* The size in bytes of the string of unit-byte characters at addr: 0 or -errno. */
	int (*string_size)(pid_t tid, uint64_t addr, unsigned unit, uint64_t *size);
};

/* The accounting state of one reader: the thread that handles the stops and drains the rings
 * of the processes whose acct it is (struct proc). */
struct acct {
	unsigned depth; /* frames kept per backtrace */
	unsigned sample; /* unwind every sample-th allocation of a process only */
	/* --sample-bytes (a process's table.sample_bytes, heap/table.h): the state of the draws
	 * made here (xorshift64), how many allocations were taken or not, and of these how many
	 * the entry stubs decided */
	uint64_t rand, taken, not_taken, stub_decided;
	uint64_t stops, unwinds, logged; /* stops handled, backtraces unwound, returns logged */
	uint64_t seq; /* names the calls a stop sends through the stubs' trampoline */
	const struct acct_mem *mem;
	struct unwind_reader *uw; /* its unwinds' state (unwind.h), NULL without a process */
};

/* Frames 1.. of the backtrace of the call being entered (rd: the reader's unwind state): write
 * up to max PCs into pcs and return how many. */
typedef unsigned (*calls_unwind_fn)(void *ctx, struct unwind_reader *rd, uint64_t *pcs,
				    unsigned max);

/* Whether an entry stub took an allocation for --sample-bytes: not decided there (the
 * accounting decides), taken, or not taken (its record holds no stack to unwind). */
enum acct_stub_sample { ACCT_STUB_UNDECIDED, ACCT_STUB_TAKEN, ACCT_STUB_NOT_TAKEN };

/* An entry into a hooked function, as a breakpoint stop or an entry stub's record shows it. */
struct acct_entry {
	unsigned hook;
	uint64_t sp; /* at the entry */
	uint64_t pc; /* the first frame of its backtrace: the hooked function */
	uint64_t ns; /* when it was made */
	bool stubbed; /* recorded by an entry stub: its return comes as a record named cookie */
	uint64_t cookie;
	bool awaits_inner; /* stubbed, no return of its own: completed by the allocation inside */
	/* made by a signal handler that interrupted t's calls in flight: counted as a call of its
	 * own, and the calls made inside it are its own (calls.c finds the signal frame) */
	bool handler;
	enum acct_stub_sample stub_sample;
	/* Argument i (a read of memory where it lies on the stack: asked only when needed). */
	uint64_t (*arg)(void *ctx, unsigned i);
	/* or, where they are known at once (a record's), the first nargs of them (the rest 0) */
	const uint64_t *args;
	unsigned nargs;
	/* The caller's return address (asked only when needed, at most once): 0 or -errno;
	 * *tail: a tail call from a traced call, whose return is caught already. */
	int (*caller)(void *ctx, uint64_t *ret, bool *tail);
	calls_unwind_fn unwind; /* NULL: no backtrace past the caller */
	void *ctx;
};

/*
 * Thread t entered a hooked function (e): count it unless it is made inside another traced
 * call or t's process is not counted; a free is accounted at once. Return t's new innermost
 * frame, whose return is to be caught (a stop's caller sends it to a trampoline), or NULL.
 * Frames left by longjmp must have been dropped (acct_drop_stale).
 */
struct frame *acct_enter(struct acct *a, struct thread *t, const struct acct_entry *e);

/* Forget t's innermost frame, just entered, whose return cannot be caught after all. */
void acct_cancel(struct thread *t);

/* Drop t's frames whose entry sp + adjust lies below sp: longjmp left them. */
void acct_drop_stale(struct thread *t, uint64_t sp, unsigned adjust);

/* Drop t's innermost frame, whose return never comes (longjmp, an exception). */
void acct_drop_frame(struct thread *t);

/* The call of t's frame idx returned retval: drop the deeper ones (it returned past them) and
 * account it. */
void acct_return(struct acct *a, struct thread *t, unsigned idx, uint64_t retval);

/* A call an entry stub recorded (stubs.h), in the order the thread made it. */
struct calls_rec {
	int hook;
	uint64_t args[3];
	uint64_t sp; /* sp at the entry */
	uint64_t ret; /* the caller's return address (0: not in the record) */
	uint64_t cookie; /* what its return record will name */
	uint64_t ns; /* when it was made */
	bool returns; /* its return is recorded (not a tail call from a traced call) */
	bool awaits_inner; /* its result is the one of the allocation made inside it */
	const uint8_t *copy; /* the stack from sp up, as the record holds it */
	uint64_t copy_len;
	/* a signal handler's call over t's calls in flight (calls.c found its signal frame, and
	 * dropped the calls below the sp it interrupted, left by longjmp) */
	bool handler;
	enum acct_stub_sample stub_sample;
	/* Was the return of t's call cookie counted lost by its stub (account/ring.c; it may take
	 * one of the stub's count of those with no word)? NULL: no */
	bool (*return_lost)(struct proc *p, uint64_t cookie);
};

/* Thread t's recorded entry r, counted by acct_enter; unwind(ctx) gives its backtrace. As
 * there, frames left by longjmp must have been dropped. */
void acct_rec_entry(struct acct *a, struct thread *t, const struct calls_rec *r,
		    calls_unwind_fn unwind, void *ctx);

/* Thread t's recorded return of the call named cookie, with result retval. */
void acct_rec_return(struct acct *a, struct thread *t, uint64_t cookie, uint64_t retval);

/*
 * Frees of blocks heaptrace does not hold live. When a thread ends, glibc frees what its
 * thread cache (tcache) holds, blocks the program had freed already, and the cache itself,
 * which it allocated inside the thread's first malloc: frees of blocks not live, made after
 * the thread's last allocation, just before the thread's own exit system call. So a free()
 * of a block not live is held on its thread (at most ACCT_LATE_MAX, the oldest counted first
 * past that) and counted when the thread shows what it was: an allocation by the thread, or
 * its end by anything but its own exit call (the process's exit, a signal, a detach), makes
 * the held frees unknown frees; the thread's own exit makes them the C library's
 * (library_frees) from the first of a block freed before on (acct_late_end says why), those
 * before unknown frees. Unknown frees are logged (--record, --trace-calls) when they are
 * counted; the C library's go to the log only (its L record).
 */
#define ACCT_LATE_MAX 1024

/* Count t's held frees as unknown frees. */
void acct_late_unknown(struct thread *t);

/* t is gone: count its held frees, as the C library's if t->own_exit, else as unknown. */
void acct_late_end(struct thread *t);

/* A report is made now (park true) or was made (false): held frees count as unknown frees in
 * it, until their thread shows what they were. */
void acct_late_park(struct thread *t, bool park);

/* The block of key, of size bytes, was freed before heaptrace attached (the heap-at-attach
 * inventory found it free): a thread cache may hand it back as its thread ends. */
void acct_freed_before(struct proc *p, uint64_t key, uint64_t size);

/* Start loading what accounting a free or an allocation of the C heap's block at ptr looks at
 * (the live blocks' slot, the freed addresses'), for a record read soon. */
void acct_prefetch(struct proc *p, uint64_t ptr);

/* Are p's tables of live blocks and freed addresses large enough that acct_prefetch pays for
 * itself (their slots miss the cache)? In a small heap it is only work: 6% more instructions
 * per record on churn. */
bool acct_prefetch_pays(const struct proc *p);

/* A new frame on t, with room for a's depth of PCs. */
struct frame *acct_push_frame(const struct acct *a, struct thread *t);

#endif
