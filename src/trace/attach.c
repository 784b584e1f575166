// SPDX-License-Identifier: GPL-2.0-only
/* Attaching to a running process: every thread seized and stopped, then armed and let go. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#define PR_DOMAIN "attach"
#include "account/acct.h"
#include "trace/attach.h"
#include "trace/dispatch.h"
#include "target/events.h"
#include "inventory/heapsnap.h"
#include "patch/image.h"
#include "trace/lifecycle.h"
#include "util/log.h"
#include "target/process.h"
#include "eventlog/record.h"
#include "trace/session.h"
#include "util/util.h"

static void resume_pending_cb(struct thread *t, void *ctx)
{
	int sig = t->pending_sig;

	(void)ctx;
	t->pending_sig = 0;
	dispatch_resume(t, sig);
}

#define PF_KTHREAD 0x00200000 /* the flag of a kernel thread, in /proc/PID/stat */

/* Whether thread tid has exited and waits to be reaped (the kernel lets no tracer seize it). */
static bool thread_dead(pid_t tid)
{
	unsigned long flags;
	char state;

	return !proc_task_stat(tid, &state, &flags) && (state == 'Z' || state == 'X');
}

/* Whether thread tid, which the kernel let no tracer seize, was made by a thread heaptrace
 * seized: traced by heaptrace already (its parent's clone event introduces it), or gone
 * (reaped) since it was listed. */
static bool made_here(pid_t tid)
{
	long tracer = proc_status_field(tid, "TracerPid");

	return tracer == getpid() || tracer < 0;
}

/* Why the kernel refused to let heaptrace trace thread tid, and what to do. */
static const char *why_eperm(pid_t tid)
{
	static char buf[160];
	long tracer = proc_status_field(tid, "TracerPid");
	unsigned long flags;
	int scope = -1;
	char state;
	FILE *f;

	if (tracer > 0) {
		snprintf(buf, sizeof(buf), " (process %ld already traces it: stop that tracer first)",
			 tracer);
		return buf;
	}
	/* not an empty cmdline: a zombie's and an exited main thread's are empty too */
	if (!proc_task_stat(tid, &state, &flags) && (flags & PF_KTHREAD))
		return " (a kernel thread: it has no user space to trace)";
	if ((f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re"))) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	if (scope >= 1 && geteuid() != 0)
		return " (Yama ptrace_scope forbids it: run as root, or set "
		       "/proc/sys/kernel/yama/ptrace_scope to 0)";
	if (geteuid() != 0)
		return " (it belongs to another user or is privileged: run heaptrace as root)";
	return " (refused by a security module or its dumpable flag)";
}

/* Seize every thread of pid and wait until all are stopped: *pp and *main_t are the process and
 * a stopped thread of it. */
static int attach_stop(pid_t pid, struct proc **pp, struct thread **main_tp)
{
	char name[64];
	struct proc *p;
	bool added = true;
	struct thread *main_t = NULL;

	p = *pp = lifecycle_new(pid);
	p->attaching = true;
	p->acct = session.acct;
	p->command = proc_cmdline(pid);
	snprintf(name, sizeof(name), "/proc/%d/task", (int)pid);
	/* threads may be created while we attach: list until nothing new appears */
	while (added) {
		DIR *d = opendir(name);
		struct dirent *de;

		added = false;
		if (!d) {
			pr_err("cannot read %s: %s", name, strerror(errno));
			return -ESRCH;
		}
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			struct thread *t;

			if (tid <= 0 || proc_thread_find(tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, SESSION_PTRACE_OPTS) < 0) {
				int e = errno;

				if (e == ESRCH || (e == EPERM && made_here(tid)))
					continue;
				if (e == EPERM && thread_dead(tid)) {
					/* nothing left to trace in it; a main thread that exited
					 * stays a zombie while the other threads run on */
					if (tid == pid)
						p->leader_gone = true;
					continue;
				}
				closedir(d);
				pr_err("cannot attach to process %d: ptrace(SEIZE, %d): %s%s", pid, tid,
				       strerror(e), e == EPERM ? why_eperm(tid) : "");
				return -e;
			}
			t = proc_thread_new(tid, p);
			t->seen_first_stop = true;
			ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			added = true;
		}
		closedir(d);
	}
	if (!p->nthreads) {
		if (p->leader_gone)
			pr_err("process %d is a zombie (it has exited; its parent has not reaped it)",
			       pid);
		else
			pr_err("no such process: %d", pid);
		return -ESRCH;
	}
	/* wait until every thread is stopped */
	/* threads just seized are not "stopped" until their interrupt stop arrives */
	while (proc_running(p)) {
		int status;
		pid_t tid;
		struct thread *t;

		tid = events_wait_tid(-1, &status);
		if (tid < 0)
			return tid;
		t = proc_thread_find(tid);
		if (!t) { /* a thread made during the attach, before its parent's event */
			dispatch(tid, status);
			continue;
		}
		if (t->p && t->p != p) {
			/* -p PID,PID...: a process attached before this one runs traced */
			dispatch(tid, status);
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			dispatch_exit(t, status);
			if (!procs)
				return -ESRCH;
			continue;
		}
		if ((status >> 16) == 0) {
			/* a signal on its way (no breakpoint is placed yet: even a SIGTRAP is the
			 * program's): delivered now, from this stop, with its own siginfo; the
			 * interrupt stop comes next */
			if (ptrace(PTRACE_CONT, tid, 0, WSTOPSIG(status)) < 0 && errno == ESRCH)
				t->stopped = true;
			continue;
		}
		t->stopped = true;
		t->seen_first_stop = true;
		t->stop_event = status >> 16;
		if (t->stop_event == PTRACE_EVENT_CLONE || t->stop_event == PTRACE_EVENT_FORK ||
		    t->stop_event == PTRACE_EVENT_VFORK)
			dispatch_new_child(t, t->stop_event);
		/* the set-up may run through any thread: none stays inside a clone or fork */
		dispatch_step_out(t);
	}
	/* the main thread in a plain stop if it lives on, else another */
	main_t = proc_stopped_thread(p);
	if (!main_t) {
		pr_err("process %d has no thread left", pid);
		return -ESRCH;
	}
	if (p->leader_gone) { /* its own cmdline is empty now */
		free(p->command);
		p->command = proc_cmdline(main_t->tid);
	}
	*main_tp = main_t;
	return 0;
}

int attach_process(pid_t pid)
{
	struct proc *p = NULL;
	struct thread *main_t = NULL;
	struct heapsnap *snap = NULL;
	int ret;

	if (kill(pid, 0) && errno == ESRCH) {
		pr_err("no such process: %d", pid);
		return -ESRCH;
	}
	if (pid == getpid() || proc_status_field(pid, "Tgid") == getpid()) {
		pr_err("cannot trace heaptrace itself (process %d)", pid);
		return -EPERM;
	}
	if (session.opts->inventory) /* sized and faulted in before anything stops */
		snap = heapsnap_prepare(pid);
	ret = attach_stop(pid, &p, &main_t);
	if (!ret && snap)
		heapsnap_take(snap, p); /* every thread stopped, nothing armed yet */
	if (!ret && image_setup(p, main_t, 0, true))
		ret = -EINVAL;
	if (!ret) {
		p->attaching = false;
		proc_for_each_thread(p, resume_pending_cb, NULL);
		if (snap) { /* analysed while the program runs; before any event is taken */
			p->inv = heapsnap_analyse(snap, p);
			inv_seed(p->inv, &p->table, now_ns());
			for (size_t i = 0; i < p->inv->ncached; i++)
				acct_freed_before(p, p->inv->cached[i].ptr, p->inv->cached[i].size);
			record_seeded(p); /* the log starts with them */
		}
	}
	heapsnap_free(snap);
	return ret;
}
