// SPDX-License-Identifier: GPL-2.0-only
/* Letting go: every thread stopped, the code as it was, every return address back. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#define PR_DOMAIN "detach"
#include "patch/pytable.h"
#include "patch/breakpoint.h"
#include "account/calls.h"
#include "target/cpu.h"
#include "trace/detach.h"
#include "trace/dispatch.h"
#include "patch/guard.h"
#include "trace/held.h"
#include "trace/lifecycle.h"
#include "target/events.h"
#include "util/log.h"
#include "target/process.h"
#include "target/remote.h"
#include "trace/session.h"
#include "patch/stubs.h"
#include "account/ring.h"

static unsigned count_running(void)
{
	unsigned running = 0;

	for (struct proc *p = procs; p; p = p->next)
		running += proc_running(p);
	return running;
}

/* True if a SIGTRAP is pending for thread tid alone (one a breakpoint raised). */
static bool trap_pending(pid_t tid)
{
	uint64_t pending;

	return !proc_status_hex(tid, "SigPnd", &pending) && (pending & (1ULL << (SIGTRAP - 1)));
}

/*
 * A thread that hit a breakpoint just before the interrupt reports the interrupt stop first,
 * its SIGTRAP still pending: let go like that, it would die of it. Let it take the trap now
 * (dispatch steps it over the breakpoint, or gives a SIGTRAP of the program's own back).
 */
static void take_pending_trap_cb(struct thread *t, void *ctx)
{
	int status;

	(void)ctx;
	if (!t->stopped || !trap_pending(t->tid) || ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
		return;
	t->stopped = false;
	while (!t->stopped && events_wait_tid(t->tid, &status) == t->tid) {
		dispatch(t->tid, status);
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return; /* t is freed */
	}
}

static void detach_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	/* the signal of the stop it is in, with that stop's siginfo: delivered as it came */
	ptrace(PTRACE_DETACH, t->tid, 0, t->pending_sig);
	t->pending_sig = 0;
}

/* Undo in p's memory what heaptrace changed, through its stopped thread t. */
static void restore_image(struct proc *p, struct thread *t)
{
	pid_t tid = t->tid;

	if (!p->shares_mm) {
		pytable_check(p, tid);
		stubs_off(p, tid);
	}
	if (!p->shares_mm)
		bp_remove_all(p->bps, tid);
	if (p->start_bp)
		remote_write(tid, p->start_bp, p->start_saved, p->start_len);
	/* a realloc in flight keeps its old block live: how it ends is not seen any more */
	calls_park(p);
	proc_for_each_thread(p, calls_restore_cb, NULL);
	/* last: should heaptrace die before, the guard still covers what is left; from an event
	 * inside a system call no call can be injected (dispatch.c, step_out): the guard stays,
	 * as when heaptrace is killed, and passes SIGTRAP on to the program's action */
	if (!p->shares_mm && !proc_in_syscall_event(t))
		guard_remove(p, tid);
	else if (!p->shares_mm)
		guard_forget(p);
}

void detach_all(void)
{
	session.detaching = true;
	cpu_unpin(0);
	for (struct proc *p = procs; p; p = p->next)
		proc_interrupt(p);
	while (count_running()) {
		int status;
		pid_t tid = events_wait_tid(-1, &status);

		if (tid < 0)
			break;
		dispatch(tid, status);
	}
	/* every thread is stopped: what is in the rings is all there will be */
	for (struct proc *p = procs; p; p = p->next)
		if (!p->detached)
			ring_drain_final(p);
	held_release(true, dispatch);
	for (struct proc *p = procs; p; p = p->next)
		proc_for_each_thread(p, take_pending_trap_cb, NULL);
	for (struct proc *p = procs; p; p = p->next) {
		/* a thread ending (its exit reported, or gone at the interrupt) can neither run
		 * the injected calls nor be relied on for the writes: what it was given to do would
		 * be left half done (the entries, the breakpoints, the SIGTRAP action) */
		struct thread *t = proc_stopped_thread(p);

		if (p->detached)
			continue;
		if (t) {
			calls_drain(p, t->tid); /* the returns logged since the last stop */
			ring_drain_final(p); /* the calls recorded (stubs.h) */
			restore_image(p, t);
		} else if (proc_any_thread(p)) {
			pr_warn("process %d: no thread of it stopped to undo heaptrace's changes "
				"through: its code keeps them", p->pid);
		}
		proc_for_each_thread(p, detach_cb, NULL);
		p->detached = true;
	}
}

void detach_untouched_pid(pid_t pid)
{
	for (struct proc *p = procs; p; p = p->next) {
		if (p->pid != pid)
			continue;
		proc_for_each_thread(p, detach_cb, NULL);
		lifecycle_free(p);
		return;
	}
}

void detach_untouched(void)
{
	while (procs) {
		struct proc *p = procs;

		proc_for_each_thread(p, detach_cb, NULL);
		if (p->launched)
			kill(p->pid, SIGKILL);
		lifecycle_free(p);
	}
}
