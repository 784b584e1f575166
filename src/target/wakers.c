// SPDX-License-Identifier: GPL-2.0-only
/* The waker children's pids (see wakers.h); no system call but kill(pid, 0). */
#include <errno.h>
#include <signal.h>

#include "target/wakers.h"

pid_t wakers_start(struct wakers *w, wakers_start_fn start, void *arg)
{
	for (unsigned i = 0; i < WAKERS_MAX; i++) {
		int old = atomic_load(&w->pid[i]);
		pid_t pid;

		/* a slot is free again once its child is reaped: the main thread may reap it
		 * before its pid was noted here, and not know it for a waker */
		if (old && !(kill(old, 0) && errno == ESRCH))
			continue;
		pid = start(&w->pid[i], arg);
		if (pid > 0)
			atomic_store(&w->pid[i], pid);
		return pid;
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
