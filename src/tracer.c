// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ptrace side: launch or attach, one waitpid loop for every thread of every traced
 * process, the malloc-family entry and return handlers, and detaching.
 *
 * Each traced process has its own table, modules, breakpoints and scratch page; each thread
 * a stack of the hooked calls it has in flight (normally zero or one), keyed by the stack
 * pointer at entry. Returns are caught with a trampoline: the return address of an outer
 * call is replaced by the trampoline's address, so a hit there is the return of the
 * innermost call in flight on that thread, whatever the other threads do.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define PR_DOMAIN "tracer"
#include "arch.h"
#include "breakpoint.h"
#include "calls.h"
#include "image.h"
#include "hooks.h"
#include "log.h"
#include "maps.h"
#include "process.h"
#include "remote.h"
#include "report.h"
#include "symbols.h"
#include "table.h"
#include "tracer.h"
#include "unwind.h"
#include "util.h"

#define PTRACE_OPTS                                                                                \
	(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |  \
	 PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXIT)

static const struct tracer_opts *opts;
static bool detaching;
static int launched_status = -1;
static bool start_failed; /* the launched program could not be traced */
static pid_t launched_pid;

/*
 * A ptrace stop wakes the other side; across CPUs on an idle virtual machine each wake-up
 * costs a halted vCPU's IPI: measured 230-350 us per traced call against 30-33 us with tracer
 * and program on one CPU (make bench, "affinity"). So a launched program runs on heaptrace's
 * CPU while it is one thread in one process; its own mask is given back at its first clone,
 * fork or vfork, and when heaptrace detaches. Meanwhile sched_getaffinity shows one CPU.
 */
static cpu_set_t orig_mask;
static bool pinned;

static void pin_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	sched_setaffinity(t->tid, sizeof(orig_mask), &orig_mask);
}

/* Give every traced thread (and extra, a child not yet registered) its mask back. */
static void unpin(pid_t extra)
{
	if (!pinned)
		return;
	pinned = false;
	for (struct proc *p = procs; p; p = p->next)
		proc_for_each_thread(p, pin_cb, NULL);
	if (extra > 0)
		sched_setaffinity(extra, sizeof(orig_mask), &orig_mask);
	sched_setaffinity(0, sizeof(orig_mask), &orig_mask);
	pr_dbg(0, "program and heaptrace unpinned");
}

static void pin(pid_t child)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (cpu < 0 || sched_getaffinity(0, sizeof(orig_mask), &orig_mask) ||
	    CPU_COUNT(&orig_mask) < 2 || !CPU_ISSET(cpu, &orig_mask))
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(child, sizeof(one), &one))
		return;
	if (sched_setaffinity(0, sizeof(one), &one)) {
		sched_setaffinity(child, sizeof(orig_mask), &orig_mask);
		return;
	}
	pinned = true;
	pr_dbg(0, "program and heaptrace pinned to CPU %d", cpu);
}

/*
 * When heaptrace and the program are on different CPUs, blocking in waitpid adds heaptrace's
 * own wake-up to every stop. Polling for a short while first removes it: measured here, 4
 * threads churning 1.8 times faster, a single thread under --no-pin 8 times. Adaptive, so
 * that a program whose stops are far apart does not keep a CPU busy: polling stops after a
 * poll found nothing and the wait that followed was long, and resumes once an event comes
 * within the window again. Never while pinned (the program needs that CPU) or with one CPU.
 */
#define POLL_NS 100000

static bool poll_ok = true;

static pid_t wait_event(int *status)
{
	uint64_t start = now_ns();
	pid_t tid;

	if (!pinned && poll_ok && CPU_COUNT(&orig_mask) > 1) {
		do {
			tid = waitpid(-1, status, __WALL | WNOHANG);
			if (tid)
				return tid;
		} while (now_ns() - start < POLL_NS);
	}
	tid = waitpid(-1, status, __WALL);
	poll_ok = now_ns() - start < 10 * POLL_NS;
	return tid;
}

static volatile sig_atomic_t sig_stop, sig_report_size, sig_report_count;

static void on_signal(int sig)
{
	switch (sig) {
	case SIGINT:
	case SIGTERM:
		sig_stop = 1;
		break;
	case SIGUSR1:
		sig_report_size = 1;
		break;
	case SIGUSR2:
		sig_report_count = 1;
		break;
	default: /* SIGALRM: the tick only interrupts waitpid */
		break;
	}
}

/* --- reports --- */

struct resolve_ctx {
	struct proc *p;
	struct symbolizer *sym;
};

static void resolve_frame(void *ctx, uint64_t pc, unsigned index, struct sym_frame *out)
{
	struct resolve_ctx *rc = ctx;

	pc = arch->code_addr(pc);
	sym_resolve(rc->sym, pc, index > 0, out);
	if (index == 0) {
		/* frame 0 is the public name (malloc, not __libc_malloc) */
		for (int h = 0; h < HOOK_COUNT; h++) {
			if (rc->p->hook_addr[h] == pc) {
				out->function = hook_table[h].name;
				out->offset = 0;
				break;
			}
		}
	}
}

static pid_t any_tid;

static void any_tid_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	any_tid = t->tid;
}

static void write_report(struct proc *p, int sort)
{
	struct report_opts ro = opts->report;
	struct resolve_ctx rc = { p, sym_open(&p->mods) };
	struct report_info ri = {
		.pid = p->pid,
		.command = p->command ? p->command : "?",
		.exited = p->exited,
		.exit_status = p->exit_status,
		.now_ns = now_ns(),
		.resolve = resolve_frame,
		.resolve_ctx = &rc,
	};
	int ret;

	if (!p->exited)
		proc_read_statm(p);
	ri.has_statm = p->has_statm;
	ri.statm_vss = p->statm[0];
	ri.statm_rss = p->statm[1];
	ri.statm_shared = p->statm[2];
	ri.elapsed_ns = ri.now_ns - p->start_ns;
	if (sort >= 0)
		ro.sort = sort;
	if (!p->exited) {
		any_tid = 0;
		proc_for_each_thread(p, any_tid_cb, NULL);
		if (any_tid)
			calls_drain(p, any_tid);
	}
	calls_park(p);
	ret = report_write(opts->out, &p->table, &ro, &ri);
	calls_unpark(p);
	pr_info("report of process %d: %u backtraces in %.1f ms", p->pid, p->table.nbts,
		(now_ns() - ri.now_ns) / 1e6);
	if (ret)
		pr_err("writing the report: %s", strerror(-ret));
	sym_close(rc.sym);
}

static void report_all(int sort)
{
	for (struct proc *p = procs; p; p = p->next)
		if (p->counting)
			write_report(p, sort);
}

/* --- resuming --- */

static void resume(struct thread *t, int sig)
{
	if (detaching) {
		t->stopped = true;
		if (sig)
			t->pending_sig = sig;
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

static void fatal_stop(struct proc *p)
{
	/* tracing could not start: the program must not run on half traced */
	kill(p->pid, SIGKILL);
	if (p->launched)
		start_failed = true;
}

static void on_sigtrap(struct thread *t)
{
	struct proc *p = t->p;
	struct arch_regs regs;
	uint64_t pc, addr;
	struct bp *b;
	int ret;

	if (arch_get_regs(t->tid, &regs)) {
		resume(t, 0);
		return;
	}
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
			proc_free(p);
			return;
		}
		if (ret) {
			fatal_stop(p);
			return;
		}
		resume(t, 0);
		return;
	}
	/* no code runs at the trampoline's trap PC (trap_pc_after): only the trap stops there */
	if (bp_is_tramp(&p->bps, addr) && (arch->trap_pc_after || !trap_is_sent(t->tid))) {
		if (calls_return(t, &regs)) {
			resume(t, SIGSEGV);
			return;
		}
		arch_set_regs(t->tid, &regs);
		resume(t, 0);
		return;
	}
	b = bp_find(&p->bps, addr);
	if (!b || (!b->trap_is_ours && trap_is_sent(t->tid))) {
		resume(t, SIGTRAP); /* the program's own */
		return;
	}
	if (b->kind == BP_HOOK) {
		arch->set_pc(&regs, addr); /* unwind from the entry itself */
		if (calls_entry(t, &regs, b, !detaching)) {
			arch_set_regs(t->tid, &regs);
			resume(t, 0);
			return;
		}
	} else if (b->kind == BP_LDSO && !p->shares_mm) {
		image_scan(p);
		if (image_arm_hooks(p, t->tid) < 0) {
			fatal_stop(p);
			return;
		}
	}
	bp_step(b, &regs);
	arch_set_regs(t->tid, &regs);
	resume(t, 0);
}

/* --- process events --- */

static void free_other_cb(struct thread *o, void *survivor)
{
	if (o != survivor)
		proc_thread_free(o);
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
		proc_free(p);
		return;
	}
	proc_forget_image(p);
	p->shares_mm = false;
	table_reset(&p->table); /* a new image, a new heap */
	p->start_ns = now_ns();
	free(p->command);
	p->command = proc_cmdline(p->pid);
	p->has_statm = false;
	if (arch_get_regs(t->tid, &regs)) {
		resume(t, 0);
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
	resume(t, 0);
}

/* The child of a fork heaptrace does not follow: clean its copy of memory, let it go. */
static void release_child(struct thread *t)
{
	struct proc *p = t->p;

	bp_remove_all(&p->bps, t->tid);
	/* return addresses the parent had patched are in the child's copy of the stack */
	calls_restore_cb(t, NULL);
	ptrace(PTRACE_DETACH, t->tid, 0, 0);
	proc_free(p);
}

/* Both halves of a new tracee are known (its first stop and its parent's event): go. */
static void start_new(struct thread *t)
{
	if (t->p->detach_at_first_stop && t->tid == t->p->pid)
		release_child(t);
	else
		resume(t, 0);
}

static void on_new_child(struct thread *pt, int event)
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
		p = proc_new(tid);
		p->command = xstrdup(pp->command ? pp->command : "?");
		/* vfork, or clone of a process that may share memory: its breakpoints are the
		 * parent's own; keep stepping over them until it execs */
		p->shares_mm = event != PTRACE_EVENT_FORK;
		p->counting = opts->follow_fork;
		p->detach_at_first_stop = !opts->follow_fork && !p->shares_mm;
		bp_copy(&p->bps, &pp->bps);
		if (!p->shares_mm) { /* its copy of the ring, read up to where the parent's was */
			p->retlog = pp->retlog;
			p->retlog.inflight = 0;
		}
		memcpy(p->hook_addr, pp->hook_addr, sizeof(p->hook_addr));
		p->armed = pp->armed;
		modlist_copy(&p->mods, &pp->mods);
		p->interp = pp->interp;
		p->exe = pp->exe ? xstrdup(pp->exe) : NULL;
		p->mod_hooks = xcalloc(pp->mods.n ? pp->mods.n : 1, sizeof(*p->mod_hooks));
		if (pp->mods.n)
			memcpy(p->mod_hooks, pp->mod_hooks, pp->mods.n * sizeof(*p->mod_hooks));
		p->mod_hooks_n = pp->mods.n;
		p->unw = unwind_new(tid);
		if (opts->follow_fork) {
			table_destroy(&p->table);
			table_copy(&p->table, &pp->table);
		}
		t->p = p;
		p->nthreads++;
		/* the child's stack is a copy: the same calls are in flight there */
		calls_copy(t, pt);
	}
	t->parent_known = true;
	if (t->seen_first_stop)
		start_new(t);
}

static void on_exit_status(struct thread *t, int status)
{
	struct proc *p = t->p;

	if (!p) {
		proc_thread_free(t);
		return;
	}
	if (t->tid != p->pid) {
		proc_thread_free(t);
		return;
	}
	/* the leader is reported last, when the whole process is gone */
	p->exited = true;
	p->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (p->launched)
		launched_status = p->exit_status;
	proc_thread_free(t);
	if (p->counting && !detaching)
		write_report(p, -1);
	proc_free(p);
}

static void handle(pid_t tid, int status)
{
	struct thread *t = proc_thread_find(tid);
	int event = status >> 16, sig;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (t)
			on_exit_status(t, status);
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
		else
			resume(t, sig); /* the program's signal, unchanged */
		return;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK: {
		unsigned long child = 0;

		ptrace(PTRACE_GETEVENTMSG, tid, 0, &child);
		unpin((pid_t)child);
		on_new_child(t, event);
		resume(t, 0);
		return;
	}
	case PTRACE_EVENT_EXEC:
		on_exec(t);
		return;
	case PTRACE_EVENT_EXIT:
		if (t->tid == t->p->pid)
			proc_read_statm(t->p); /* the last moment its memory can be seen */
		resume(t, 0);
		return;
	case PTRACE_EVENT_STOP:
		if (detaching) {
			t->stopped = true;
			return;
		}
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			/* group-stop: stay stopped, but keep reporting events */
			t->stopped = false;
			ptrace(PTRACE_LISTEN, tid, 0, 0);
			return;
		}
		resume(t, 0);
		return;
	default:
		resume(t, 0);
	}
}

/* --- detaching --- */

static void interrupt_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	if (!t->stopped && ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0 && errno == ESRCH)
		t->stopped = true; /* gone: its exit is reported later */
}

static void count_running_cb(struct thread *t, void *ctx)
{
	if (!t->stopped)
		++*(unsigned *)ctx;
}

static void detach_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	ptrace(PTRACE_DETACH, t->tid, 0, t->pending_sig);
}

/* Stop every thread, take every breakpoint out, put return addresses back, let go. */
static void detach_all(void)
{
	detaching = true;
	unpin(0);
	for (struct proc *p = procs; p; p = p->next)
		proc_for_each_thread(p, interrupt_cb, NULL);
	for (;;) {
		unsigned running = 0;
		int status;
		pid_t tid;

		for (struct proc *p = procs; p; p = p->next)
			proc_for_each_thread(p, count_running_cb, &running);
		if (!running)
			break;
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		handle(tid, status);
	}
	for (struct proc *p = procs, *next; p; p = next) {
		next = p->next;
		any_tid = 0;
		proc_for_each_thread(p, any_tid_cb, NULL);
		if (any_tid && !p->shares_mm)
			bp_remove_all(&p->bps, any_tid);
		if (any_tid && p->start_bp)
			remote_write(any_tid, p->start_bp, p->start_saved, p->start_len);
		proc_for_each_thread(p, calls_restore_cb, NULL);
		proc_for_each_thread(p, detach_cb, NULL);
		proc_free(p);
	}
}

/* --- launch and attach --- */

static int launch(void)
{
	int go[2], err[2], e = 0;
	struct proc *p;
	pid_t pid;
	ssize_t n;

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		pr_err("pipe: %s", strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		pr_err("fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		char c;

		close(go[1]);
		close(err[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGUSR1, SIG_DFL);
		signal(SIGUSR2, SIG_DFL);
		signal(SIGALRM, SIG_DFL);
		/* wait until the tracer has seized us */
		if (read(go[0], &c, 1) == 1)
			execv(opts->path, opts->argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_OPTS | PTRACE_O_EXITKILL) < 0) {
		e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pr_err("cannot trace %s: ptrace(SEIZE, pid %d): %s%s", opts->argv[0], pid,
		       strerror(e),
		       e == EPERM ? " (check /proc/sys/kernel/yama/ptrace_scope, or whether "
				    "heaptrace itself runs under a debugger)" : "");
		return -e;
	}
	if (opts->pin)
		pin(pid);
	p = proc_new(pid);
	p->launched = true;
	launched_pid = pid;
	p->command = NULL;
	{
		size_t len = 0;

		for (char *const *a = opts->argv; *a; a++)
			len += strlen(*a) + 1;
		p->command = xmalloc(len + 1);
		p->command[0] = '\0';
		for (char *const *a = opts->argv; *a; a++) {
			if (a != opts->argv)
				strcat(p->command, " ");
			strcat(p->command, *a);
		}
	}
	proc_thread_new(pid, p)->seen_first_stop = true;
	if (write(go[1], "x", 1) != 1) {
		pr_err("cannot start %s", opts->argv[0]);
		return -EIO;
	}
	close(go[1]);
	do
		n = read(err[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(err[0]);
	if (n == sizeof(e)) {
		waitpid(pid, NULL, __WALL);
		pr_err("cannot execute %s: %s", opts->argv[0], strerror(e));
		proc_free(p);
		return -e;
	}
	return 0;
}

static void resume_pending_cb(struct thread *t, void *ctx)
{
	int sig = t->pending_sig;

	(void)ctx;
	t->pending_sig = 0;
	resume(t, sig);
}

/* Why the kernel refused to let heaptrace trace tid of process pid, and what to do. */
static const char *why_eperm(pid_t pid, pid_t tid)
{
	static char buf[160];
	char name[64];
	long tracer = proc_status_field(tid, "TracerPid");
	int scope = -1;
	FILE *f;

	if (tracer > 0) {
		snprintf(buf, sizeof(buf), " (process %ld already traces it: stop that tracer first)",
			 tracer);
		return buf;
	}
	snprintf(name, sizeof(name), "/proc/%d/cmdline", (int)pid);
	if ((f = fopen(name, "re"))) {
		int c = fgetc(f);

		fclose(f);
		if (c == EOF)
			return " (a kernel thread: it has no user space to trace)";
	}
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

static int attach(pid_t pid)
{
	char name[64];
	struct proc *p;
	bool added = true;
	struct thread *main_t;

	if (kill(pid, 0) && errno == ESRCH) {
		pr_err("no such process: %d", pid);
		return -ESRCH;
	}
	p = proc_new(pid);
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
			if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_OPTS) < 0) {
				int e = errno;

				if (e == ESRCH)
					continue;
				closedir(d);
				pr_err("cannot attach to process %d: ptrace(SEIZE, %d): %s%s", pid, tid,
				       strerror(e), e == EPERM ? why_eperm(pid, tid) : "");
				return -e;
			}
			t = proc_thread_new(tid, p);
			t->seen_first_stop = true;
			ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			added = true;
		}
		closedir(d);
	}
	/* wait until every thread is stopped */
	for (;;) {
		unsigned running = 0;
		int status;
		pid_t tid;
		struct thread *t;

		proc_for_each_thread(p, count_running_cb, &running);
		/* threads just seized are not "stopped" until their interrupt stop arrives */
		if (!running)
			break;
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		t = proc_thread_find(tid);
		if (!t)
			continue;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			on_exit_status(t, status);
			if (!procs)
				return -ESRCH;
			continue;
		}
		t->stopped = true;
		if ((status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP)
			t->pending_sig = WSTOPSIG(status); /* delivered on resume */
		if ((status >> 16) == PTRACE_EVENT_CLONE || (status >> 16) == PTRACE_EVENT_FORK ||
		    (status >> 16) == PTRACE_EVENT_VFORK)
			on_new_child(t, status >> 16);
	}
	main_t = proc_thread_find(pid);
	if (!main_t) {
		pr_err("process %d has no main thread left", pid);
		return -ESRCH;
	}
	if (image_setup(p, main_t, 0, true))
		return -EINVAL;
	proc_for_each_thread(p, resume_pending_cb, NULL);
	return 0;
}

int tracer_run(const struct tracer_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: wake waitpid */
	struct itimerval tick = { { 0, 100000 }, { 0, 100000 } };
	uint64_t start = now_ns(), deadline = 0, next_report = 0;
	unsigned reports = 0;
	int ret;

	opts = o;
	calls_init(o->depth, o->sample);
	if (sched_getaffinity(0, sizeof(orig_mask), &orig_mask))
		CPU_ZERO(&orig_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	ret = o->pid ? attach(o->pid) : launch();
	if (ret) {
		while (procs) {
			struct proc *p = procs;

			proc_for_each_thread(p, detach_cb, NULL);
			if (p->launched)
				kill(p->pid, SIGKILL);
			proc_free(p);
		}
		return EXIT_START;
	}
	/* a periodic tick makes sure a signal that lands just before waitpid is not lost */
	setitimer(ITIMER_REAL, &tick, NULL);
	if (o->duration > 0)
		deadline = start + (uint64_t)(o->duration * 1e9);
	if (o->interval > 0)
		next_report = start + (uint64_t)(o->interval * 1e9);

	while (procs) {
		uint64_t now = now_ns();
		int status;
		pid_t tid;

		if (start_failed)
			break;
		if (sig_stop || (deadline && now >= deadline))
			break;
		if (sig_report_size || sig_report_count) {
			int sort = sig_report_size ? SORT_SIZE : SORT_COUNT;

			sig_report_size = sig_report_count = 0;
			report_all(sort);
		}
		if (next_report && now >= next_report) {
			report_all(-1);
			reports++;
			next_report = o->count && reports >= o->count ?
					      0 : now + (uint64_t)(o->interval * 1e9);
		}
		tid = wait_event(&status);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				break;
			pr_err("waitpid: %s", strerror(errno));
			break;
		}
		handle(tid, status);
	}
	if (start_failed) {
		while (procs)
			proc_free(procs);
		/* the killed program is reaped below */
		if (launched_pid)
			waitpid(launched_pid, NULL, __WALL);
		return EXIT_START;
	}
	if (procs) {
		/* --duration or SIGINT/SIGTERM: final report, then let everything run on */
		report_all(-1);
		detach_all();
	}
	{
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		setitimer(ITIMER_REAL, &off, NULL);
	}
	if (log_level) {
		struct rusage ru;
		uint64_t nstops, nunwinds, nlogged;

		/* what tracing cost heaptrace itself, for the benchmark */
		getrusage(RUSAGE_SELF, &ru);
		calls_stats(&nstops, &nunwinds, &nlogged);
		pr_info("%llu returns logged without a stop", (unsigned long long)nlogged);
		pr_info("%llu breakpoint stops, %llu backtraces unwound, CPU %.6f s user %.6f s "
			"system", (unsigned long long)nstops, (unsigned long long)nunwinds,
			ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
			ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	}
	if (o->pid)
		return 0;
	if (launched_status < 0 && launched_pid) {
		int status;

		/* it runs on untraced: wait for it like a shell would */
		while (waitpid(launched_pid, &status, 0) < 0 && errno == EINTR)
			;
		launched_status = WIFEXITED(status) ? WEXITSTATUS(status) :
			WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 0;
	}
	return launched_status < 0 ? 0 : launched_status;
}
