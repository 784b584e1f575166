// SPDX-License-Identifier: GPL-2.0-only
/* heaptrace's side of the guard (guard.h): placing it, keeping its table, answering sigaction. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#define PR_DOMAIN "guard"
#include "arch/arch.h"
#include "patch/breakpoint.h"
#include "patch/guard.h"
#include "guard_arch.h"
#include "heap/hooks.h"
#include "patch/inject.h"
#include "util/log.h"
#include "target/process.h"
#include "target/remote.h"
#include "target/retlog.h"
#include "util/util.h"

#if GUARD_SUPPORTED

/* Every breakpoint has its entry: one per hook (_Unwind_RaiseException's in each module that
 * defines it: a few), _dl_debug_state's and sigaction's. */
_Static_assert(GUARD_MAX_BPS >= HOOK_COUNT + 8, "the guard's table holds every breakpoint");
/* the injected sigaction's structs are after the logging ring */
_Static_assert(RETLOG_SIZE <= GUARD_SCRATCH_OFF &&
	       GUARD_SCRATCH_OFF + 2 * sizeof(struct guard_ksigaction) <= 4096,
	       "the sigaction's scratch fits in the ring page after the ring");

/* Write a part of the table: the mirror's bytes at [off, off + len). */
static int sync_part(struct guard_state *g, pid_t tid, size_t off, size_t len)
{
	return remote_write_data(tid, g->data + off, (const uint8_t *)&g->mirror + off, len);
}

/* Write one field of the table (an expression like bps[i] or rets[i].sp). */
#define SYNC(g, tid, field)                                                                        \
	sync_part(g, tid, offsetof(struct guard_data, field), sizeof((g)->mirror.field))

/* rt_sigaction(SIGTRAP, act, oact) in the process through stopped thread tid. */
static int inject_sigaction(const struct proc *p, pid_t tid,
			    const struct guard_ksigaction *act, struct guard_ksigaction *oact)
{
	const struct guard_state *g = p->guard;
	uint64_t at_act = g->scratch, at_old = g->scratch + sizeof(*act);
	uint64_t args[6] = { SIGTRAP, act ? at_act : 0, oact ? at_old : 0, GUARD_SIGSET_SIZE };
	int64_t ret;
	int err, sig;

	if (act && remote_write_data(tid, at_act, act, sizeof(*act)))
		return -EFAULT;
	/* the program may have entered seccomp since the guard was placed */
	if (!inject_ok(tid, GUARD_NR_RT_SIGACTION, args, bp_syscall_at(p->bps)))
		return -EPERM;
	ret = bp_syscall(p->bps, tid, GUARD_NR_RT_SIGACTION, args, &sig, &err);
	if (sig)
		pr_dbg(0, "a signal (%d) came during an injected sigaction of %d", sig, tid);
	if (err)
		return err;
	if (ret)
		return (int)ret;
	if (oact && remote_read(tid, at_old, oact, sizeof(*oact)) != sizeof(*oact))
		return -EFAULT;
	return 0;
}

/* The guard as SIGTRAP's action, with the flags of the program's that matter to where and
 * how the kernel runs it (its own stack, restarted calls). */
static struct guard_ksigaction guard_action(const struct guard_state *g)
{
	struct guard_ksigaction a = {
		.handler = g->handler,
		.flags = GUARD_SA_SIGINFO | (g->mirror.prog_flags & (GUARD_SA_ONSTACK |
								     GUARD_SA_RESTART)),
	};

	if (g->restorer) {
		a.flags |= GUARD_SA_RESTORER;
		a.restorer = g->restorer;
	}
	return a;
}

/*
 * The action found in place is the guard of an earlier heaptrace that was killed (the same
 * code at the same offset): the program's own action is the one in that guard's table.
 */
static void adopt_earlier(struct guard_state *g, pid_t tid, uint64_t handler, const uint8_t *code,
			  size_t len, long hoff)
{
	uint8_t seen[4096];
	uint64_t start = handler - hoff;
	struct guard_data old;

	if (handler <= 1 || handler < (uint64_t)hoff ||
	    remote_read(tid, start, seen, len) != (ssize_t)len || memcmp(seen, code, len) ||
	    remote_read(tid, (start & ~(uint64_t)4095) - GUARD_PAGE, &old, sizeof(old)) !=
		    sizeof(old))
		return;
	g->mirror.prog_handler = old.prog_handler;
	g->mirror.prog_flags = old.prog_flags;
	g->mirror.prog_mask = old.prog_mask;
	g->mirror.prog_restorer = old.prog_restorer;
	pr_info("an earlier heaptrace's SIGTRAP guard found: the program's own action taken from it");
}

int guard_install(struct proc *p, pid_t tid, uint64_t page, uint64_t ring, bool keep_ign)
{
	struct guard_state *g = p->guard;
	struct guard_ksigaction act, old;
	long hoff, roff;
	size_t len;
	const uint8_t *code = guard_code(&len, &hoff, &roff);
	int ret;

	memset(g, 0, sizeof(*g));
	g->stat_fd = -1;
	if (!code || len > 4096 - arch->stub_size) /* the page ends with the stub */
		return -ENOTSUP;
	g->data = page - GUARD_PAGE;
	g->scratch = ring + GUARD_SCRATCH_OFF;
	g->handler = page + hoff;
	g->restorer = roff >= 0 ? page + roff : 0;
	g->mirror.tramp_pc =
		arch->code_addr(p->bps->tramp) + (arch->trap_pc_after ? p->bps->tramp_len : 0);
	ret = remote_write(tid, page, code, len);
	if (!ret)
		ret = remote_write_data(tid, g->data, &g->mirror, sizeof(g->mirror));
	if (ret)
		return ret;
	act = guard_action(g);
	ret = inject_sigaction(p, tid, &act, &old);
	if (ret)
		return ret;
	g->mirror.prog_handler = keep_ign && old.handler == 0 ? 1 : old.handler;
	g->mirror.prog_flags = old.flags;
	g->mirror.prog_mask = old.mask;
	g->mirror.prog_restorer = old.restorer;
	adopt_earlier(g, tid, old.handler, code, len, hoff);
	if (SYNC(g, tid, prog_handler) || SYNC(g, tid, prog_flags) || SYNC(g, tid, prog_mask) ||
	    SYNC(g, tid, prog_restorer)) {
		inject_sigaction(p, tid, &old, NULL);
		return -EFAULT;
	}
	g->page = page;
	pr_dbg(1, "guard of process %d at %#llx, its SIGTRAP action %#llx", p->pid,
	       (unsigned long long)g->handler, (unsigned long long)old.handler);
	return 0;
}

/*
 * The guard can only move the pc: true, with the pc an emulated instruction always goes on
 * at, if it changes nothing else whatever the registers hold (a jump, a hint like endbr64).
 */
static bool pc_only(const struct arch_emul *em, uint64_t *resume)
{
	struct arch_regs r[2], before[2];

	memset(r, 0, sizeof(r));
	memset(&r[1].w64, 0xff, sizeof(r[1].w64));
	r[0].size = r[1].size = sizeof(r[0].w64);
	for (int i = 0; i < 2; i++) {
		arch->set_pc(&r[i], 0);
		before[i] = r[i];
		if (arch->emulate(em, &r[i]))
			return false;
	}
	*resume = arch->get_pc(&r[0]);
	if (arch->get_pc(&r[1]) != *resume)
		return false;
	for (int i = 0; i < 2; i++) {
		arch->set_pc(&r[i], 0);
		if (memcmp(r[i].w64, before[i].w64, sizeof(r[i].w64)))
			return false;
	}
	return true;
}

void guard_add_bp(struct proc *p, pid_t tid, const struct bp *b)
{
	struct guard_state *g = p->guard;
	uint32_t i = g->mirror.nbps;
	uint64_t resume = b->slot;

	if (!g->page)
		return;
	/* an emulated instruction: its own slot (arch.h: emul_slot), else the pc alone if that is
	 * all it changes */
	if (b->step == STEP_EMULATE && !b->slot && !pc_only(&b->emul, &resume)) {
		pr_info("process %d: no guard for the breakpoint at %#llx (its instruction is "
			"emulated)", p->pid, (unsigned long long)b->addr);
		return;
	}
	if (i >= GUARD_MAX_BPS) {
		/* said once: a program linked with a replacement allocator has that many hooks */
		if (!g->uncovered++)
			pr_warn("process %d: more breakpoints than the guard holds (%d): should "
				"heaptrace be killed with SIGKILL, a call to a function traced from "
				"here on ends the program", p->pid, GUARD_MAX_BPS);
		return;
	}
	g->mirror.bps[i].pc = b->addr + (arch->trap_pc_after ? b->len : 0);
	g->mirror.bps[i].resume = resume;
	g->mirror.nbps = i + 1;
	/* the entry before the count: a trap between the two writes still finds its way */
	if (SYNC(g, tid, bps[i]) || SYNC(g, tid, nbps))
		pr_warn("process %d: cannot write the guard's table", p->pid);
}

void guard_note_return(struct proc *p, pid_t tid, uint64_t sp, uint64_t ret)
{
	struct guard_state *g = p->guard;

	if (!g->page)
		return;
	for (unsigned i = 0; i < GUARD_MAX_RETS; i++) {
		if (g->mirror.rets[i].sp)
			continue;
		g->mirror.rets[i].ret = ret;
		g->mirror.rets[i].sp = sp;
		SYNC(g, tid, rets[i]);
		return;
	}
	pr_dbg(0, "process %d: the guard's table of returns is full", p->pid);
}

void guard_forget_return(struct proc *p, pid_t tid, uint64_t sp)
{
	struct guard_state *g = p->guard;

	for (unsigned i = 0; g->page && i < GUARD_MAX_RETS; i++) {
		if (g->mirror.rets[i].sp == sp) {
			g->mirror.rets[i].sp = 0;
			SYNC(g, tid, rets[i].sp);
			return;
		}
	}
}

/* True if SIGTRAP is caught in process pid, as /proc/PID/stat says (field 34, sigcatch). The
 * file stays open while the guard is on: read again from offset 0, it is read anew. */
static bool trap_caught(struct guard_state *g, pid_t pid)
{
	char buf[1024], *s;
	ssize_t n;
	unsigned long long catch = 0;

	if (g->stat_fd < 0) {
		snprintf(buf, sizeof(buf), "/proc/%d/stat", (int)pid);
		g->stat_fd = open(buf, O_RDONLY | O_CLOEXEC);
	}
	n = pread(g->stat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return true; /* cannot tell: leave things as they are */
	buf[n] = '\0';
	s = strrchr(buf, ')'); /* the command name may hold anything */
	for (int field = 2; s && field < 34; field++)
		s = strchr(s + 1, ' ');
	if (!s || sscanf(s + 1, "%llu", &catch) != 1)
		return true;
	return catch & (1ULL << (SIGTRAP - 1));
}

/*
 * Could the trap just taken have come with SIGTRAP blocked? Reading the process's dispositions
 * costs more than the rest of a stop, so it is read only where a blocked SIGTRAP is likely:
 * a thread that blocks any signal (its mask, read after the kernel unblocked SIGTRAP, still
 * shows the others), a program with a SIGTRAP action of its own (its handler blocks SIGTRAP
 * while it runs), and otherwise every GUARD_CHECK_NS. What that leaves out, a thread that
 * blocks SIGTRAP alone in a program without a SIGTRAP handler, is put right within that time.
 */
#define GUARD_CHECK_NS 100000000

static bool reset_likely(struct thread *t, uint64_t *mask)
{
	struct guard_state *g = t->p->guard;
	uint64_t now = now_ns();

	if (!ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(*mask), mask) && *mask)
		return true;
	if (g->mirror.prog_handler != 0 || now - g->checked_ns >= GUARD_CHECK_NS) {
		g->checked_ns = now;
		return true;
	}
	return false;
}

void guard_check(struct thread *t)
{
	struct guard_state *g = t->p->guard;
	struct guard_ksigaction act;
	uint64_t mask = 0;

	if (!g->page || !reset_likely(t, &mask) || trap_caught(g, t->p->pid))
		return;
	/* the trap came with SIGTRAP blocked: the kernel set SIG_DFL and unblocked it */
	act = guard_action(g);
	if (inject_sigaction(t->p, t->tid, &act, NULL)) {
		pr_warn("process %d: cannot put its SIGTRAP handler back", t->p->pid);
		return;
	}
	mask |= 1ULL << (SIGTRAP - 1);
	ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(mask), &mask);
	pr_dbg(0, "thread %d: SIGTRAP's action and mask put back after a trap while blocked",
	       t->tid);
}

/* Return from the function entered at regs with value v, as its ret would. */
static int return_now(pid_t tid, struct arch_regs *regs, uint64_t v)
{
	uint64_t sp = arch->get_sp(regs), ret;

	if (arch->ret_on_stack) {
		if (remote_read_word(tid, sp, arch->word_size, &ret))
			return -EFAULT;
		arch->set_sp(regs, sp + arch->ret_sp_adjust);
	} else {
		ret = arch->get_ret_reg(regs);
	}
	arch->set_pc(regs, ret);
	arch->set_retval(regs, v);
	return 0;
}

bool guard_sigaction(struct thread *t, struct arch_regs *regs)
{
	struct guard_state *g = t->p->guard;
	uint64_t act = arch->get_arg(regs, 1), oact = arch->get_arg(regs, 2);
	uint8_t usa[GUARD_USA_SIZE];
	struct guard_data m;
	uint32_t flags;

	if (!g->page || arch->get_arg(regs, 0) != SIGTRAP)
		return false;
	m = g->mirror;
	if (act) {
		if (remote_read(t->tid, act, usa, sizeof(usa)) != sizeof(usa))
			return false; /* the call itself says EFAULT */
		m.prog_handler = 0; /* a handler narrower than 64 bits: its low bytes */
		memcpy(&m.prog_handler, usa + GUARD_USA_HANDLER, GUARD_USA_PTR);
		memcpy(&m.prog_mask, usa + GUARD_USA_MASK, 8);
		memcpy(&flags, usa + GUARD_USA_FLAGS, 4);
		m.prog_flags = flags;
	}
	if (oact) {
		memset(usa, 0, sizeof(usa));
		memcpy(usa + GUARD_USA_HANDLER, &g->mirror.prog_handler, GUARD_USA_PTR);
		memcpy(usa + GUARD_USA_MASK, &g->mirror.prog_mask, 8);
		flags = (uint32_t)g->mirror.prog_flags;
		memcpy(usa + GUARD_USA_FLAGS, &flags, 4);
		if (remote_write_data(t->tid, oact, usa, sizeof(usa)))
			return false;
	}
	if (return_now(t->tid, regs, 0))
		return false;
	g->mirror.prog_handler = m.prog_handler;
	g->mirror.prog_flags = m.prog_flags;
	g->mirror.prog_mask = m.prog_mask;
	/* the handler first: the guard reads the flags of the handler it sees */
	SYNC(g, t->tid, prog_handler);
	SYNC(g, t->tid, prog_flags);
	SYNC(g, t->tid, prog_mask);
	return true;
}

void guard_remove(struct proc *p, pid_t tid)
{
	struct guard_state *g = p->guard;
	struct guard_ksigaction own = {
		.handler = g->mirror.prog_handler,
		.flags = g->mirror.prog_flags & ~GUARD_SA_RESTORER,
		.mask = g->mirror.prog_mask,
	};

	if (!g->page)
		return;
	if (own.handler > 1) { /* a handler returns through a restorer: the C library's, or ours */
		own.restorer = g->mirror.prog_restorer ? g->mirror.prog_restorer : g->restorer;
		if (own.restorer)
			own.flags |= GUARD_SA_RESTORER;
	}
	int ret = inject_sigaction(p, tid, &own, NULL);

	if (ret)
		pr_warn("process %d: cannot give its SIGTRAP action back (thread %d: %s)", p->pid,
			tid, strerror(ret < 0 ? -ret : ret));
	guard_forget(p);
}

void guard_forget(struct proc *p)
{
	if (p->guard->stat_fd >= 0)
		close(p->guard->stat_fd);
	p->guard->stat_fd = -1;
	p->guard->page = 0;
	p->guard->uncovered = 0;
}

#else /* no guard on this architecture yet */

int guard_install(struct proc *p, pid_t tid, uint64_t page, uint64_t ring, bool keep_ign)
{
	(void)tid, (void)page, (void)ring, (void)keep_ign;
	p->guard->page = 0;
	p->guard->stat_fd = -1;
	return -ENOTSUP;
}

void guard_add_bp(struct proc *p, pid_t tid, const struct bp *b)
{
	(void)p, (void)tid, (void)b;
}

void guard_note_return(struct proc *p, pid_t tid, uint64_t sp, uint64_t ret)
{
	(void)p, (void)tid, (void)sp, (void)ret;
}

void guard_forget_return(struct proc *p, pid_t tid, uint64_t sp)
{
	(void)p, (void)tid, (void)sp;
}

void guard_check(struct thread *t)
{
	(void)t;
}

bool guard_sigaction(struct thread *t, struct arch_regs *regs)
{
	(void)t, (void)regs;
	return false;
}

void guard_remove(struct proc *p, pid_t tid)
{
	(void)p, (void)tid;
}

void guard_forget(struct proc *p)
{
	(void)p;
}

#endif
