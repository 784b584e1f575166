// SPDX-License-Identifier: GPL-2.0-only
/* A traced process made, copied at a fork, reset at an exec and freed (lifecycle.h). */
#include <stdlib.h>
#include <string.h>

#include "account/calls.h"
#include "eventlog/record.h"
#include "inventory/inventory.h"
#include "patch/breakpoint.h"
#include "patch/guard.h"
#include "patch/stubs.h"
#include "target/process.h"
#include "trace/hints.h"
#include "trace/lifecycle.h"
#include "trace/session.h"
#include "trace/symcache.h"
#include "unwind/fallback.h"
#include "unwind/jitcode.h"
#include "unwind/python.h"
#include "unwind/unwind.h"
#include "util/util.h"

struct proc *lifecycle_new(pid_t pid)
{
	struct proc *p = proc_new(pid);

	p->table.sample_bytes = session.opts->sample_bytes;
	p->bps = xcalloc(1, sizeof(*p->bps));
	p->guard = xcalloc(1, sizeof(*p->guard));
	p->guard->stat_fd = -1;
	return p;
}

/* What p's image inherits from its parent pp's: hooks, guard, modules. */
static void fork_image(struct proc *p, const struct proc *pp)
{
	memcpy(p->hook_addr, pp->hook_addr, sizeof(p->hook_addr));
	memcpy(p->custom_regs_only, pp->custom_regs_only, sizeof(p->custom_regs_only));
	p->armed = pp->armed;
	p->hooks_full = pp->hooks_full;
	if (pp->guard->page) { /* its memory and SIGTRAP action are copies of the parent's */
		*p->guard = *pp->guard;
		p->guard->stat_fd = -1;
	}
	modlist_copy(&p->mods, &pp->mods);
	p->interp = pp->interp;
	p->exe = pp->exe ? xstrdup(pp->exe) : NULL;
	p->mod_hooks = xcalloc(pp->mods.n ? pp->mods.n : 1, sizeof(*p->mod_hooks));
	if (pp->mods.n)
		memcpy(p->mod_hooks, pp->mod_hooks, pp->mods.n * sizeof(*p->mod_hooks));
	p->mod_hooks_n = pp->mods.n;
}

struct proc *lifecycle_fork(const struct proc *pp, pid_t pid, bool shares_mm, bool counting)
{
	struct proc *p = lifecycle_new(pid);

	p->command = xstrdup(pp->command ? pp->command : "?");
	p->acct = pp->acct; /* the same reader */
	p->shares_mm = shares_mm;
	p->counting = counting;
	p->detach_at_first_stop = !counting && !shares_mm;
	bp_copy(p->bps, pp->bps, p);
	if (!shares_mm)
		stubs_fork(p, pp);
	if (!shares_mm) { /* its copy of the ring, read up to where the parent's was */
		p->retlog = pp->retlog;
		p->retlog.inflight = 0;
	}
	fork_image(p, pp);
	p->unw = unwind_new(pid);
	python_fork(p, pp);
	if (counting) {
		table_destroy(&p->table);
		table_copy(&p->table, &pp->table);
		record_fork(p, pp);
	} else {
		hints_untraced_child();
	}
	return p;
}

void lifecycle_forget_image(struct proc *p)
{
	symcache_drop(p);
	modlist_clear(&p->mods);
	free(p->mod_hooks);
	p->mod_hooks = NULL;
	p->mod_hooks_n = 0;
	p->interp = -1;
	free(p->exe);
	p->exe = NULL;
	memset(p->custom_regs_only, 0, sizeof(p->custom_regs_only));
	stubs_forget(p);
	bp_forget(p->bps);
	memset(&p->retlog, 0, sizeof(p->retlog));
	guard_forget(p);
	unwind_destroy(p->unw);
	p->unw = NULL;
	fallback_flush(p);
	jit_forget(p);
	python_forget_image(p);
	memset(p->hook_addr, 0, sizeof(p->hook_addr));
	p->armed = false;
	p->hooks_full = false;
	p->start_bp = 0;
}

void lifecycle_thread_free(struct thread *t)
{
	stubs_thread_gone(t); /* a stand-in may take its calls and held frees over */
	if (t->p)
		calls_thread_gone(t);
	proc_thread_free(t);
}

static void free_thread_cb(struct thread *t, void *ctx)
{
	(void)ctx;
	lifecycle_thread_free(t);
}

void lifecycle_free(struct proc *p)
{
	proc_unlink(p);
	proc_for_each_thread(p, free_thread_cb, NULL);
	lifecycle_forget_image(p);
	if (p->inv)
		inv_free(p->inv);
	free(p->inv);
	free(p->bps);
	free(p->guard);
	python_free(p);
	proc_release(p);
}
