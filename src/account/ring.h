/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_RING_H
#define HEAPTRACE_RING_H

/*
 * The reader of the entry stubs' ring (patch/stubs.h): reads each process's records in the
 * order they were reserved, finds each record's thread by its key, dates it on the clock of
 * the stubs, unwinds an allocation from its copy of the stack and hands the call to calls.c.
 * Its state is per ring (struct stubs_reader): processes are read apart.
 */
#include <stdbool.h>
#include <stdint.h>

struct proc;

/* Read and account every complete record of p. Return how many were read. */
unsigned ring_drain(struct proc *p);

/* The same when no thread of p will write again (p is gone, or every thread is stopped before
 * the detach): a record reserved and never written is skipped, not waited for. */
unsigned ring_drain_final(struct proc *p);

/* Where p's ring ends now, if records before it are still unread (a thread reserved one and is
 * writing it); 0 when every record is read, or p has no stubs. */
uint64_t ring_unread_until(const struct proc *p);

/* True if p's records before position pos are all read (or p has no stubs any more). */
bool ring_read_to(const struct proc *p, uint64_t pos);
/* p's reader is stuck at a record never written, and waits for a look at p's threads (all
 * stopped: trace/probe.c); then ring_probe_done says whether any may still write one (!dead),
 * else the reader goes past every record not written. */
bool ring_probe_wanted(const struct proc *p);
void ring_probe_done(struct proc *p, bool dead);
/* The return of p's call cookie went unrecorded, and its stub counted it lost
 * (STUB_C_LOSTRET): lost_returns drops that call at the end of the drain. A call whose cookie
 * is in no word is taken for one the stub counted without a word (STUB_C_LOST_UNSLOTTED) while
 * such are left. */
bool ring_return_lost(struct proc *p, uint64_t cookie);
/* Records skipped so far as never to be written, in every process. */
uint64_t ring_skipped(void);

/* Bytes of records p's entry stubs wrote (or are writing) that are not read yet; 0 without
 * stubs. */
uint64_t ring_waiting(const struct proc *p);

/* Records read, times a stub found the ring full, and the most bytes of records heaptrace
 * found waiting at once (how far it fell behind), over every ring so far, for -v. */
void ring_stats(uint64_t *records, uint64_t *waits, uint64_t *backlog);

/* Backtraces cut short by a learned stack copy size, and the smallest size learned (0: no
 * ring), over every ring so far, for -v. */
void ring_copy_stats(uint64_t *cut, unsigned *least);

#endif
