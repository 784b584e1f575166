// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whether a stopped thread may hold a ring record it reserved and has not written
 * (stubs_thread_critical), for the probe of a reader stuck at such a record (trace/probe.c):
 * a thread that left a signal handler with siglongjmp while the handler had interrupted its stub
 * leaves a record nobody will ever write, and only a look at every thread tells it from one a
 * thread is still writing.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#define PR_DOMAIN "probe"
#include "patch/stubs.h"
#include "stub_arch.h"
#include "target/process.h"
#include "target/remote.h"
#include "unwind/fallback.h"
#include "unwind/sigframe.h"
#include "util/log.h"
#include "util/util.h"

#ifdef STUB_CRITICAL
/* Bytes of stack above sp looked through for signal frames: a handler that blocks runs a few
 * frames above the one that interrupted the stub. */
#define PROBE_STACK (64u << 10)

/* addr in one of s's critical sections */
static bool critical(const struct stubs *s, uint64_t addr)
{
	static const uint8_t *const cs[][2] = STUB_CRITICAL;

	for (unsigned a = 0; a < s->nareas; a++) {
		uint64_t base = s->area[a];

		if (addr < base || addr >= base + STUBS_GEN_OFF)
			continue;
		for (unsigned i = 0; i < ARRAY_SIZE(cs); i++)
			if (addr >= base + (uint64_t)(cs[i][0] - ht_stub_blob) &&
			    addr < base + (uint64_t)(cs[i][1] - ht_stub_blob))
				return true;
	}
	return false;
}

bool stubs_probe_supported(void)
{
	return sigframe_known();
}

/*
 * A signal frame in stack c whose interrupted pc lies in a critical section (sigframe.h). Only
 * whole frames count: a stray word of an old frame, left in stack a later frame does not write
 * (a sigcontext's reserved words, unused parts of its register save area), is not one. An old
 * frame left whole is taken for a live one: the look then errs on the safe side.
 */
static bool critical_frame(struct proc *p, const struct stack_copy *c, pid_t tid)
{
	const struct stubs *s = p->stubs;
	struct unwind_hooks h;
	uint64_t w, sp, pc;

	fallback_hooks(p, &h);
	for (uint64_t a = c->base; a - c->base < c->len; a += arch->word_size) {
		if (!sigframe_regs(stack_copy_word, (void *)c, a, &w, &sp, &pc) ||
		    !critical(s, arch->code_addr(pc)) || !sigframe_anchor(&h, w))
			continue;
		pr_dbg(2, "thread %d: a signal frame at sp+%#llx interrupted it at %#llx, inside a "
		       "stub's record", tid, (unsigned long long)(a - c->base),
		       (unsigned long long)pc);
		return true;
	}
	return false;
}

bool stubs_thread_critical(struct proc *p, pid_t tid)
{
	const struct stubs *s = p->stubs;
	struct arch_regs regs;
	struct stack_copy c;
	uint8_t *stack;
	ssize_t n;
	bool live;

	if (arch_get_regs(tid, &regs))
		return true; /* not known: as if it did */
	if (critical(s, arch->code_addr(arch->get_pc(&regs)))) {
		pr_dbg(2, "thread %d: its pc %#llx is inside a stub's record", tid,
		       (unsigned long long)arch->get_pc(&regs));
		return true;
	}
	stack = xmalloc(PROBE_STACK);
	c.base = arch->get_sp(&regs) & ~(uint64_t)(arch->word_size - 1);
	n = remote_read(tid, c.base, stack, PROBE_STACK);
	c.bytes = stack;
	c.len = n > 0 ? (uint64_t)n : 0;
	live = critical_frame(p, &c, tid);
	free(stack);
	return live;
}
#else
bool stubs_probe_supported(void)
{
	return false; /* the stub code marks no critical section: a stuck reader turns them off */
}

bool stubs_thread_critical(struct proc *p, pid_t tid)
{
	(void)p;
	(void)tid;
	return true;
}
#endif
