/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_CALLS_H
#define HEAPTRACE_CALLS_H

/* Hooked calls in flight on a thread: entry, return through the trampoline, detaching. */
#include <stdbool.h>

#include "account/acct.h"
#include "patch/breakpoint.h"
#include "target/process.h"

/* A reader's accounting state (acct.h): frames kept per backtrace, and unwind every sample-th
 * allocation only. Each traced process names its reader in p->acct. */
struct acct *calls_new(unsigned depth, unsigned sample);
void calls_free(struct acct *a);

/* Thread t hit the entry breakpoint b (regs: its registers, pc at the entry). Count it unless
 * it is made inside another traced call or count is false; regs may get a new return
 * address. p's logged returns must have been drained first. Return true if regs were set
 * to go on through b's logged entry path (else the caller steps over b). */
bool calls_entry(struct thread *t, struct arch_regs *regs, const struct bp *b, bool count);

/* Thread t hit the trampoline: account the innermost call and set regs to return to its
 * caller. Return 0, or -1 when no call is in flight (the thread cannot go on). The caller
 * tells the guard (guard_forget_return) once the thread's registers are set. */
int calls_return(struct thread *t, struct arch_regs *regs);

/* Give every call in flight on t its caller's return address back (before detaching t, or
 * releasing a forked copy of it). ctx is unused (a proc_for_each_thread callback). */
void calls_restore_cb(struct thread *t, void *ctx);

/* a's breakpoint stops handled (entries and returns), backtraces unwound, returns logged. */
void calls_stats(const struct acct *a, uint64_t *stops, uint64_t *unwinds, uint64_t *logged);
/* Of its backtraces, how many were stepped by cached CFI rules (of these, how many were
 * remembered from an earlier one) and how many by libunwind. */
void calls_unwind_stats(const struct acct *a, uint64_t *quick, uint64_t *remembered,
			uint64_t *slow);
/* --sample-bytes: allocations taken and not, and how many of them an entry stub decided. */
void calls_sample_stats(const struct acct *a, uint64_t *taken, uint64_t *not_taken,
			uint64_t *in_stubs);

/* Account the returns p logged since it was last drained (read through its thread tid,
 * which must be stopped or p's memory must be stable enough: entries are checked). */
void calls_drain(struct proc *p, pid_t tid);

/*
 * A realloc in flight has its old block out of the table (see table_take) until it returns,
 * but by the counting rules the block is live until then: calls_park puts those blocks back
 * for a report, calls_unpark takes them out again.
 */
void calls_park(struct proc *p);
void calls_unpark(struct proc *p);

/* Thread t's recorded entry (a free, or a call whose return comes as a record): counted by the
 * same rules as a call seen at a breakpoint (acct_rec_entry). */
void calls_rec_entry(struct thread *t, const struct calls_rec *r, calls_unwind_fn unwind,
		     void *ctx);

/* Thread t's recorded return of the call named cookie, with result retval. */
void calls_rec_return(struct thread *t, uint64_t cookie, uint64_t retval);

/* Thread t stopped at its end (PTRACE_EVENT_EXIT): note how it ends (acct.h, held frees). */
void calls_thread_exit(struct thread *t);

/* Thread t is gone: count the frees held on it (acct_late_end), before it is freed. */
void calls_thread_gone(struct thread *t);

/* dst, a forked copy of src, has the same calls in flight. */
void calls_copy(struct thread *dst, const struct thread *src);

#endif
