/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_HELD_H
#define HEAPTRACE_HELD_H

/*
 * Stops held in order with the entry stubs' ring (stubs.h). A breakpoint's stop (a function
 * kept on a breakpoint, a return through the trapping trampoline) is taken when the ring has
 * been read up to where it ended at the stop, so that the calls the stubs recorded before it,
 * of that thread too, are counted first: when another thread is still writing a record it
 * reserved earlier, the stopped thread waits, stopped, for at most HELD_MAX_NS.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/process.h"

/* Hold t's stop (waitpid status) if records before it are unread. True if held. */
bool held_take(struct thread *t, int status);

/* How a released stop is taken: dispatch (dispatch.h), handed in so that held.c stays below
 * the dispatcher that calls it. */
typedef void (*held_dispatch_fn)(pid_t tid, int status);

/* Dispatch with fn the held stops whose records are all read, or that waited long enough; all:
 * every one (the detach, once every thread is stopped). Return how many. */
unsigned held_release(bool all, held_dispatch_fn fn);

/* True if a stop is held. */
bool held_any(void);

/* Thread tid reported an event: a stop of it held before is over (it ended, or its id is the
 * execing thread's now). */
void held_forget(pid_t tid);

#endif
