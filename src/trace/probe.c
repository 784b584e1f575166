// SPDX-License-Identifier: GPL-2.0-only
/* The look at a process's threads for a reader stuck at a record never written (probe.h). */
#define _GNU_SOURCE
#define PR_DOMAIN "probe"
#include "account/ring.h"
#include "patch/stubs.h"
#include "target/events.h"
#include "target/process.h"
#include "trace/dispatch.h"
#include "trace/probe.h"
#include "trace/session.h"
#include "util/log.h"

/*
 * Stop every thread of process pid, taking the events that come meanwhile (a breakpoint's stop
 * is served and its thread interrupted again). Return the process, or NULL if it ended.
 */
static struct proc *stop_all(pid_t pid)
{
	struct proc *p;

	while ((p = proc_by_pid(pid)) && proc_running(p)) {
		int status;
		pid_t tid;

		proc_interrupt(p);
		tid = events_wait_tid(-1, &status);
		if (tid < 0)
			return NULL;
		dispatch(tid, status);
	}
	return p;
}

static void critical_cb(struct thread *t, void *ctx)
{
	bool *live = ctx;

	if (!*live && !t->gone && stubs_thread_critical(t->p, t->tid))
		*live = true;
}

static void resume_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	if (!t->probe_stopped)
		return;
	if (t->probe_stopped == PROBE_STOPPED_GROUP)
		dispatch_listen(t); /* in a group stop: it stays there, as dispatch leaves it */
	else
		dispatch_resume(t, 0);
	t->probe_stopped = 0;
}

/* A process sharing p's memory (a vfork child) may write p's ring without being p's thread. */
static bool shared(const struct proc *p)
{
	for (const struct proc *q = procs; q; q = q->next)
		if (q != p && q->shares_mm)
			return true;
	return false;
}

static void probe(struct proc *p)
{
	pid_t pid = p->pid;
	bool live = shared(p);

	session.probing = pid;
	p = stop_all(pid);
	session.probing = 0;
	if (!p || !p->stubs || !p->stubs->ctl)
		return;
	proc_for_each_thread(p, critical_cb, &live);
	pr_dbg(1, "process %d: its reader is stuck; a thread may still write: %s", pid,
	       live ? "yes" : "no");
	ring_probe_done(p, !live);
	proc_for_each_thread(p, resume_cb, NULL);
}

/* The first process whose reader asks for a look, or NULL. */
static struct proc *wanting(void)
{
	for (struct proc *p = procs; p; p = p->next)
		if (!p->detached && ring_probe_wanted(p))
			return p;
	return NULL;
}

bool probe_wanted(void)
{
	return wanting() != NULL;
}

void probe_stuck_rings(void)
{
	struct proc *p = wanting();

	if (p)
		probe(p); /* one: procs may change meanwhile, the next loop finds the others */
}
