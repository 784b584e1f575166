// SPDX-License-Identifier: GPL-2.0-only
/*
 * sigprocmask, defined here for the whole program (the C library's is no longer called).
 *
 * libunwind takes a lock around each use of its global cache of unwind rules and blocks every
 * signal while it holds it (sigprocmask(SIG_SETMASK, full) before, the old mask back after),
 * so that a signal handler unwinding on the same thread cannot deadlock on the lock. That is
 * two system calls per frame step, a large part of what a remote unwind costs. In heaptrace
 * every asynchronous signal is blocked in every thread already (events.c: the waker takes them
 * with sigwaitinfo), and no handler unwinds, so between sigmask_skip(true) and (false) such a
 * SIG_SETMASK is answered here without a system call: the thread's mask stays what it was,
 * and that is what is reported as the old one. That mask is read once per thread and again
 * after the thread changed it through this function (heaptrace's own pthread_sigmask calls,
 * in record.c and symcache.c, put it back before they return). The flag is per thread: the
 * other threads (the waker, the symbol cache's read-ahead, the ring's futex owner, the log
 * writer) set their masks for real. Measured on x86_64 (deep 4 50000, entry stubs, 50000
 * backtraces): 12 rt_sigprocmask calls per backtrace without this, and heaptrace's CPU time
 * 1.0 s instead of 0.2 s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>

#include "unwind/sigmask.h"

static _Thread_local struct {
	bool on; /* this thread is unwinding */
	bool known; /* mask is this thread's signal mask */
	sigset_t mask;
} skip;

void sigmask_skip(bool on)
{
	skip.on = on;
}

/* What the C library's does (its pthread_sigmask: the calling thread's mask, never the C
 * library's own signals blocked), save while this thread unwinds. */
int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int err;

	if (skip.on && how == SIG_SETMASK) {
		if (old && !skip.known) {
			if ((err = pthread_sigmask(SIG_BLOCK, NULL, &skip.mask)))
				goto fail;
			skip.known = true;
		}
		if (old)
			*old = skip.mask;
		return 0;
	}
	skip.known = false; /* the mask may change */
	err = pthread_sigmask(how, set, old);
	if (!err)
		return 0;
fail:
	errno = err;
	return -1;
}
