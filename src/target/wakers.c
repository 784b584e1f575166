// SPDX-License-Identifier: GPL-2.0-only
/* The waker children's pids (see wakers.h). */
#include "target/wakers.h"

pid_t wakers_start(struct wakers *w, wakers_start_fn start, void *arg)
{
	for (unsigned i = 0; i < WAKERS_MAX; i++) {
		/*
		 * start has the kernel store the pid in the slot before the child runs: the main
		 * thread may reap the child before start returns, and must know it for a waker
		 * then. Nothing is stored here afterwards, or a later process given the same pid
		 * (a tracee) would have its exit taken for the waker's.
		 */
		if (!atomic_load(&w->pid[i]))
			return start(&w->pid[i], arg);
	}
	return 0;
}

bool wakers_reaped(struct wakers *w, pid_t pid)
{
	for (unsigned i = 0; i < WAKERS_MAX; i++) {
		int expected = pid;

		if (pid > 0 && atomic_compare_exchange_strong(&w->pid[i], &expected, 0))
			return true;
	}
	return false;
}
