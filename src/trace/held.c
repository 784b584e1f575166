// SPDX-License-Identifier: GPL-2.0-only
/* Stops held in order with the entry stubs' ring (held.h). */
#include <signal.h>
#include <sys/wait.h>

#define PR_DOMAIN "held"
#include "trace/held.h"
#include "util/log.h"
#include "patch/stubs.h"
#include "account/ring.h"
#include "util/util.h"

/*
 * A bound on the wait, so that a thread stopped for good while it writes a record (a group
 * stop) never stalls another: past it the stop is taken out of order, as before holds.
 */
#define HELD_MAX_NS 100000000ull

struct held {
	pid_t tid;
	int status;
	uint64_t until, since; /* the ring's end at the stop; when it was held */
};

static struct held *held;
static unsigned nheld, cap;
static pid_t releasing; /* its stop is being dispatched: not held again */

bool held_take(struct thread *t, int status)
{
	uint64_t until;

	if (!t->p || t->tid == releasing || !WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP ||
	    status >> 16 || !(until = ring_unread_until(t->p)))
		return false;
	if (nheld == cap) {
		cap = cap ? 2 * cap : 8;
		held = xrealloc(held, cap * sizeof(*held));
	}
	held[nheld++] = (struct held){ t->tid, status, until, now_ns() };
	t->stopped = true;
	return true;
}

static void drop(unsigned i)
{
	held[i] = held[--nheld];
}

unsigned held_release(bool all, held_dispatch_fn fn)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nheld;) {
		struct held h = held[i];
		struct thread *t = proc_thread_find(h.tid);
		bool late = now_ns() - h.since > HELD_MAX_NS;

		if (t && t->p && !all && !late && !ring_read_to(t->p, h.until)) {
			i++;
			continue;
		}
		drop(i); /* the array may change in dispatch: start over */
		i = 0;
		if (!t || !t->p)
			continue;
		if (late && !all)
			pr_dbg(1, "thread %d: its stop taken before the records written before it",
			       h.tid);
		releasing = h.tid;
		fn(h.tid, h.status);
		releasing = 0;
		n++;
	}
	return n;
}

bool held_any(void)
{
	return nheld > 0;
}

void held_forget(pid_t tid)
{
	for (unsigned i = 0; i < nheld; i++)
		if (held[i].tid == tid)
			drop(i--);
}
