// SPDX-License-Identifier: GPL-2.0-only
/*
 * What heaptrace does at each stop of a tracee: the malloc-family entry and return
 * breakpoints, the program's own signals (delivered unchanged), new threads and processes,
 * exec and exits.
 *
 * Each traced process has its own table, modules, breakpoints and scratch page; each thread
 * a stack of the hooked calls it has in flight (normally zero or one), keyed by the stack
 * pointer at entry. Returns are caught with a trampoline: the return address of an outer
 * call is replaced by the trampoline's address, so a hit there is the return of the
 * innermost call in flight on that thread, whatever the other threads do.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#define PR_DOMAIN "dispatch"
#include "arch/arch.h"
#include "patch/breakpoint.h"
#include "account/calls.h"
#include "target/cpu.h"
#include "trace/dispatch.h"
#include "trace/hints.h"
#include "patch/guard.h"
#include "trace/held.h"
#include "patch/image.h"
#include "patch/pytable.h"
#include "trace/lifecycle.h"
#include "util/log.h"
#include "target/process.h"
#include "target/remote.h"
#include "trace/session.h"
#include "trace/snapshot.h"
#include "patch/stubs.h"
#include "account/ring.h"
#include "util/util.h"

/*
 * A thread stopped at an event inside a system call cannot run injected calls (the set-up's at
 * an attach, the undoing while detaching): from the event's stop, the first system-call stop
 * an injected call waits for would be the end of the clone, and the registers put back the
 * clone's, run again (two threads started with one argument, both freeing it). So it goes on
 * to the end of that call and stops there. A vfork parent stays (it waits for its child), and
 * so does a thread after its exec, which would run into the breakpoint at its new image's
 * start.
 */
bool dispatch_step_out(struct thread *t)
{
	if (!proc_in_syscall_event(t) || t->stop_event == PTRACE_EVENT_VFORK ||
	    t->stop_event == PTRACE_EVENT_EXEC)
		return false;
	t->stop_event = 0;
	t->stopped = false;
	if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0 || ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
		t->stopped = t->gone = true; /* gone: its exit is reported later */
	return true;
}

/* A PTRACE_EVENT_STOP with sig is a group-stop (else a PTRACE_INTERRUPT's). */
static bool group_stop_sig(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

void dispatch_listen(struct thread *t)
{
	t->stopped = false;
	ptrace(PTRACE_LISTEN, t->tid, 0, 0);
}

void dispatch_resume(struct thread *t, int sig)
{
	if (session.detaching) {
		if (sig)
			t->pending_sig = sig;
		if (!dispatch_step_out(t))
			t->stopped = true;
		return;
	}
	t->stopped = false;
	if (ptrace(PTRACE_CONT, t->tid, 0, sig) < 0 && errno != ESRCH)
		pr_warn("ptrace(CONT, %d): %s", t->tid, strerror(errno));
}

/* --- breakpoint handlers --- */

/* Return true if the SIGTRAP was sent by a process, not raised by a breakpoint. */
static bool trap_is_sent(pid_t tid)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) < 0)
		return false;
	return si.si_code <= 0;
}

/*
 * From the moment heaptrace takes a breakpoint's stop until it lets the thread go (a stop held
 * for the ring, the unwinding), the thread's pc is back on the trap where the kernel reports it
 * past (arch->trap_pc_after): should heaptrace die then (SIGKILL), the kernel lets the thread go
 * without its SIGTRAP (waitpid took it), and it runs the trap again, which the guard (guard.h)
 * answers, instead of the middle of the instruction the trap replaced. Done before waitpid
 * takes the stop (dispatch_stop_seen); should heaptrace die between the two, the SIGTRAP comes
 * with the pc on the trap, and the guard runs the trap again. on_sigtrap takes t->trap_pc as
 * the pc.
 */
static void trap_rewind(struct thread *t, int status)
{
	struct arch_regs r;
	uint64_t pc, addr;

	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP || status >> 16) {
		t->trap_pc = 0; /* any other event ends the stop it was moved in */
		return;
	}
	if (t->trap_pc || !arch->trap_pc_after || !t->p || !t->p->bps || trap_is_sent(t->tid) ||
	    arch_get_regs(t->tid, &r))
		return;
	pc = arch->get_pc(&r);
	addr = arch->bp_addr_from_pc(pc);
	if (!bp_find(t->p->bps, addr) && !bp_is_tramp(t->p->bps, addr))
		return;
	arch->set_pc(&r, addr);
	if (!arch_set_regs(t->tid, &r))
		t->trap_pc = pc;
}

void dispatch_stop_seen(pid_t tid, int status)
{
	struct thread *t = proc_thread_find(tid);

	if (t)
		trap_rewind(t, status);
}

static void fatal_stop(struct proc *p)
{
	/* tracing could not start: the program must not run on half traced */
	kill(p->pid, SIGKILL);
	if (p->launched)
		session.start_failed = true;
}

static void on_sigtrap(struct thread *t)
{
	struct proc *p = t->p;
	struct arch_regs regs;
	uint64_t pc, addr;
	struct bp *b;
	int ret;

	if (arch_get_regs(t->tid, &regs)) {
		dispatch_resume(t, 0);
		return;
	}
	if (t->trap_pc) /* every way on from here sets the registers */
		arch->set_pc(&regs, t->trap_pc);
	t->trap_pc = 0;
	pc = arch->get_pc(&regs);
	addr = arch->bp_addr_from_pc(pc);
	if (p->start_bp && addr == p->start_bp) {
		remote_write(t->tid, addr, p->start_saved, p->start_len);
		p->start_bp = 0;
		arch->set_pc(&regs, addr);
		arch_set_regs(t->tid, &regs);
		ret = image_setup(p, t, addr, false);
		if (ret == -EXDEV) {
			ptrace(PTRACE_DETACH, t->tid, 0, 0);
			lifecycle_free(p);
			return;
		}
		if (ret) {
			fatal_stop(p);
			return;
		}
		dispatch_resume(t, 0);
		return;
	}
	/* no code runs at the trampoline's trap PC (trap_pc_after): only the trap stops there */
	if (bp_is_tramp(p->bps, addr) && (arch->trap_pc_after || !trap_is_sent(t->tid))) {
		uint64_t sp = arch->get_sp(&regs);

		if (calls_return(t, &regs)) {
			arch_set_regs(t->tid, &regs);
			dispatch_resume(t, SIGSEGV);
			return;
		}
		/* the guard keeps the return until the thread no longer stands on the trap */
		if (!arch_set_regs(t->tid, &regs))
			guard_forget_return(p, t->tid, sp);
		guard_check(t);
		dispatch_resume(t, 0);
		return;
	}
	b = bp_find(p->bps, addr);
	if (!b || (!b->trap_is_ours && trap_is_sent(t->tid))) {
		dispatch_resume(t, SIGTRAP); /* the program's own */
		return;
	}
	if (b->kind == BP_HOOK) {
		arch->set_pc(&regs, addr); /* unwind from the entry itself */
		if (calls_entry(t, &regs, b, !session.detaching)) {
			arch_set_regs(t->tid, &regs);
			guard_check(t);
			dispatch_resume(t, 0);
			return;
		}
	} else if (b->kind == BP_SIGACTION) {
		arch->set_pc(&regs, addr);
		if (guard_sigaction(t, &regs)) { /* answered: it returns to its caller */
			arch_set_regs(t->tid, &regs);
			guard_check(t);
			dispatch_resume(t, 0);
			return;
		}
	} else if (b->kind == BP_LDSO && !p->shares_mm) {
		image_scan(p);
		if (image_arm_hooks(p, t->tid) < 0) {
			fatal_stop(p);
			return;
		}
		/* the breakpoints placed there may have moved the set's array */
		b = bp_find(p->bps, addr);
	}
	bp_step(b, &regs);
	arch_set_regs(t->tid, &regs);
	guard_check(t);
	dispatch_resume(t, 0);
}

/* --- process events --- */

static void free_other_cb(struct thread *o, void *survivor)
{
	if (o != survivor)
		lifecycle_thread_free(o);
}

static void on_exec(struct thread *t)
{
	struct proc *p = t->p;
	struct arch_regs regs;
	uint8_t trap[ARCH_MAX_INSN];

	/* every other thread is gone; the survivor now has the process id */
	proc_for_each_thread(p, free_other_cb, t);
	t->nframes = 0;
	if (!p->counting) { /* an unfollowed vfork child: its new image is not ours */
		ptrace(PTRACE_DETACH, t->tid, 0, 0);
		lifecycle_free(p);
		return;
	}
	/* exec resets a caught SIGTRAP (the guard) to SIG_DFL, but SIG_IGN stays */
	p->keep_ign = p->guard->page ? p->guard->mirror.prog_handler == 1 : p->keep_ign;
	lifecycle_forget_image(p);
	t->tls = 0; /* the new image sets its own thread pointer */
	t->stack_top = t->stack_lo = 0;
	p->shares_mm = false;
	table_reset(&p->table); /* a new image, a new heap */
	p->start_ns = now_ns();
	free(p->command);
	p->command = proc_cmdline(p->pid);
	p->has_statm = false;
	if (arch_get_regs(t->tid, &regs)) {
		dispatch_resume(t, 0);
		return;
	}
	/* stop at the first instruction, where a syscall can be injected cleanly */
	/* arm: a static Thumb _start needs the Thumb encoding, chosen from the mode bit */
	p->start_bp = arch->code_addr(arch->get_pc(&regs));
	p->start_len = arch->bp_encode(arch->get_pc(&regs), trap);
	if (remote_read(t->tid, p->start_bp, p->start_saved, p->start_len) !=
		    (ssize_t)p->start_len ||
	    remote_write(t->tid, p->start_bp, trap, p->start_len)) {
		pr_err("cannot stop process %d at its first instruction", p->pid);
		fatal_stop(p);
		return;
	}
	dispatch_resume(t, 0);
}

/* The child of a fork heaptrace does not follow: clean its copy of memory, let it go. */
static void release_child(struct thread *t)
{
	struct proc *p = t->p;

	stubs_child_start(p, t->tid, false);
	bp_remove_all(p->bps, t->tid);
	/* return addresses the parent had patched are in the child's copy of the stack */
	calls_restore_cb(t, NULL);
	guard_remove(p, t->tid); /* its SIGTRAP action is a copy of the parent's */
	ptrace(PTRACE_DETACH, t->tid, 0, 0);
	lifecycle_free(p);
}

/* Both halves of a new tracee are known (its first stop and its parent's event): go. */
static void start_new(struct thread *t)
{
	if (t->p->attaching)
		return;
	if (t->p->detach_at_first_stop && t->tid == t->p->pid) {
		release_child(t);
		return;
	}
	if (t->tid == t->p->pid) /* a followed fork: breakpoints in place of its stubs */
		stubs_child_start(t->p, t->tid, true);
	stubs_thread(t); /* a new thread: its stack for the stubs' copies */
	dispatch_resume(t, 0);
}

void dispatch_new_child(struct thread *pt, int event)
{
	struct proc *pp = pt->p, *p;
	unsigned long msg;
	struct thread *t;
	pid_t tid;

	if (ptrace(PTRACE_GETEVENTMSG, pt->tid, 0, &msg) < 0)
		return;
	tid = (pid_t)msg;
	t = proc_thread_find(tid);
	if (!t)
		t = proc_thread_new(tid, NULL);
	if (event == PTRACE_EVENT_CLONE && proc_status_field(tid, "Tgid") == pp->pid) {
		t->p = pp;
		pp->nthreads++;
	} else {
		/* vfork, or clone of a process that may share memory: its breakpoints are the
		 * parent's own; keep stepping over them until it execs */
		p = lifecycle_fork(pp, tid, event != PTRACE_EVENT_FORK, session.opts->follow_fork);
		t->p = p;
		p->nthreads++;
		/* the child's stack is a copy: the same calls are in flight there */
		calls_copy(t, pt);
	}
	t->parent_known = true;
	if (t->seen_first_stop)
		start_new(t);
}

void dispatch_exit(struct thread *t, int status)
{
	struct proc *p = t->p;

	if (!p) {
		lifecycle_thread_free(t);
		return;
	}
	/* its last thread, when the leader exited before heaptrace attached (never traced) */
	if (t->tid != p->pid && !(p->leader_gone && p->nthreads == 1)) {
		lifecycle_thread_free(t);
		return;
	}
	/* the leader is reported last, when the whole process is gone */
	ring_drain_final(p);
	p->exited = true;
	p->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (WIFSIGNALED(status) && p->counting)
		hints_killed(p, WTERMSIG(status));
	if (p->launched)
		session.launched_status = p->exit_status;
	lifecycle_thread_free(t);
	if (session.detaching) {
		p->detached = true; /* reported with the others once they are let go */
		return;
	}
	if (p->counting)
		snapshot_report(p, -1, NULL);
	lifecycle_free(p);
}

void dispatch(pid_t tid, int status)
{
	struct thread *t = proc_thread_find(tid);
	int event = status >> 16, sig;

	/* a thread whose stop was held reports no other event unless that stop is over: it was
	 * killed, or another thread's exec gave its id to the execing thread */
	held_forget(tid);
	if (t)
		trap_rewind(t, status);
	/* records of calls made before this event come first (stubs.h), a breakpoint's stop
	 * waits for them if need be (held.h) */
	if (t && t->p && t->p->stubs) {
		ring_drain(t->p);
		if (held_take(t, status))
			return;
	}
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (t)
			dispatch_exit(t, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	sig = WSTOPSIG(status);
	if (!t) { /* a new tracee's first stop before its parent's event */
		t = proc_thread_new(tid, NULL);
		t->seen_first_stop = true;
		t->stopped = true;
		return;
	}
	t->stopped = true;
	t->stop_event = event;
	if (!t->p) {
		t->seen_first_stop = true;
		return;
	}
	if (!t->seen_first_stop && event == PTRACE_EVENT_STOP) {
		t->seen_first_stop = true;
		if (t->parent_known)
			start_new(t);
		return;
	}
	t->seen_first_stop = true;
	if (event != PTRACE_EVENT_EXEC) /* after exec the ring is gone with the old image */
		calls_drain(t->p, tid);
	switch (event) {
	case 0:
		if (sig == SIGTRAP)
			on_sigtrap(t);
		else if (sig == SIGSEGV && stubs_clock_fault(t))
			dispatch_resume(t, 0);
		else
			dispatch_resume(t, sig); /* the program's signal, unchanged */
		return;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK: {
		unsigned long child = 0;

		ptrace(PTRACE_GETEVENTMSG, tid, 0, &child);
		cpu_unpin((pid_t)child);
		dispatch_new_child(t, event);
		dispatch_resume(t, 0);
		return;
	}
	case PTRACE_EVENT_EXEC:
		on_exec(t);
		return;
	case PTRACE_EVENT_EXIT:
		t->gone = true;
		calls_thread_exit(t);
		if (t->tid == t->p->pid || t->p->leader_gone) {
			proc_read_statm(t->p); /* the last moment its memory can be seen */
			pytable_check(t->p, t->tid);
		}
		dispatch_resume(t, 0);
		return;
	case PTRACE_EVENT_STOP:
		if (session.detaching) {
			t->stopped = true;
			return;
		}
		if (session.probing && t->p->pid == session.probing) {
			t->stopped = true;
			t->probe_stopped = group_stop_sig(sig) ? PROBE_STOPPED_GROUP :
								 PROBE_STOPPED_RUNNING;
			return;
		}
		if (group_stop_sig(sig)) {
			dispatch_listen(t);
			return;
		}
		dispatch_resume(t, 0);
		return;
	default:
		dispatch_resume(t, 0);
	}
}
