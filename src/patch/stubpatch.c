// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entry stubs (stubs.h), the patched entries: each hooked entry's first bytes become a branch
 * to its thunk, and are put back when the stubs are turned off, in a forked child, or forgotten.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PR_DOMAIN "stubs"
#include "patch/entrycheck.h"
#include "patch/image.h"
#include "patch/stubs.h"
#include "stub_arch.h"
#include "symbols/symbols.h"
#include "target/process.h"
#include "target/remote.h"
#include "util/log.h"
#include "util/util.h"

/* The counters of the rings forgotten so far (stubs_retired): added once per ring, when it is
 * forgotten, and read once at the end; the reader counts in each ring's own. */
static struct stubs_reader retired;

/* ---- patching ---- */

struct pc_ctx {
	uint64_t lo, hi;
	bool inside;
};

/* A thread stopped in (lo, hi): its code address (arm: get_pc sets bit 0 in Thumb state, and
 * a thread stopped on the entry itself takes the branch like a call). */
static void pc_cb(struct thread *t, void *arg)
{
	struct pc_ctx *c = arg;
	struct arch_regs regs;
	uint64_t pc;

	if (arch_get_regs(t->tid, &regs))
		return;
	pc = arch->code_addr(arch->get_pc(&regs));
	if (pc > c->lo && pc < c->hi)
		c->inside = true;
}

/*
 * libstdc++'s operator new and new[] call malloc, and end by throwing when it fails for good:
 * their stubs record the entry and leave the return alone (a return address of ours would
 * stop an exception), and the allocation is the result of the malloc inside (calls.c).
 */
static bool awaits_inner(int hook, const struct module *m)
{
	return (hook == HOOK_NEW || hook == HOOK_NEW_ARRAY) && strstr(m->path, "libstdc++");
}

/* The thunk's word's STUB_HOOK_SIZE for d: where the stub code can decide --sample-bytes, the
 * argument that is all of the size a call of d asks for (none has a count). */
static uint32_t size_bits(const struct hook_desc *d)
{
#ifdef STUB_SAMPLE_SUPPORTED
	if (hook_sampled(d) && d->count < 0 && d->size < HOOK_STUB_ARGS)
		return (uint32_t)(d->size + 1) << STUB_HOOK_SIZE_SHIFT;
#endif
	(void)d;
	return 0;
}

/* An alias of a patched entry (-EEXIST): no breakpoint may go into the branch; nor may a
 * branch go over an alias's breakpoint (its trap would be relocated into the stub). */
static bool patched_at(const struct proc *p, uint64_t addr)
{
	for (unsigned i = 0; i < p->stubs->npatch; i++)
		if (p->stubs->patch[i].addr == addr)
			return true;
	return bp_find(p->bps, addr) != NULL;
}

static int patch_word(struct proc *p, pid_t tid, uint64_t sym, int hook, uint32_t word,
		      const struct module *m);

int stubs_patch(struct proc *p, pid_t tid, uint64_t sym, int hook, const struct module *m)
{
	const struct hook_desc *d = &hook_table[hook];
	/* a free record holds the first argument only: a free of another argument (a custom
	 * one's, custom.h) is recorded as a whole entry, its return ignored */
	uint32_t word = hook | (hook_at_entry_only(d) && d->ptr == 0 ? STUB_HOOK_FREE : 0) |
			(awaits_inner(hook, m) ? STUB_HOOK_NORET : 0) | size_bits(d);

	if (!p->stubs || p->stubs->off)
		return -ENOTSUP;
	if (patched_at(p, arch->code_addr(sym)))
		return -EEXIST;
	if (hook_needs_stop(d) && !(word & STUB_HOOK_NORET))
		return -ENOTSUP; /* its result is read at the return, or its frame restored at a
				  * throw, which only a stop can do */
	if (!(word & (STUB_HOOK_FREE | STUB_HOOK_NORET)) && !image_regs_only(p, hook))
		return -E2BIG; /* its return would move sp: arguments on the stack read shifted */
	return patch_word(p, tid, sym, hook, word, m);
}

/* Patch the entry at symbol value sym in module m to go through a thunk that pushes word (its
 * low byte: hook, the index of its continuation in the data page). */
static int patch_word(struct proc *p, pid_t tid, uint64_t sym, int hook, uint32_t word,
		      const struct module *m)
{
	uint64_t addr = arch->code_addr(sym);
	struct stubs *s = p->stubs;
	uint8_t insn[ARCH_MAX_INSN], gen[128], branch[16];
	uint64_t at, thunk, cont;
	size_t covered = 0;
	struct pc_ctx pcs;
	int len, blen, a;

	if (proc_running(p))
		return -EBUSY; /* a running thread could be in the bytes being replaced */
	if (s->npatch == ARRAY_SIZE(s->patch) ||
	    remote_read(tid, addr, insn, sizeof(insn)) != (ssize_t)sizeof(insn))
		return -EFAULT;
	a = stubs_area_for(s, addr);
	if (a < 0)
		return -ERANGE;
	at = s->area[a] + STUBS_GEN_OFF + s->area_used[a];
	thunk = at;
	len = (int)arch->entry_thunk(gen, at, word,
				     s->area[a] + (ht_stub_entry - ht_stub_blob));
	cont = at + len;
	blen = arch->entry_branch(sym, thunk, branch);
	if (blen < 0)
		return blen;
	if (!m->bias_known)
		return -ENOTSUP;
	/*
	 * A branch from elsewhere into the bytes the patch replaces, after their first, would
	 * land inside it: entry_check_with decodes the whole function. A patch no longer than the
	 * arch's instruction alignment (aarch64: one 4-byte b over one whole instruction) has no
	 * such bytes: every branch lands on the entry, and runs the stub as a call does. mips64's
	 * j and its delay slot cover entry+4: the arch's own scan decodes the function.
	 */
	if (blen > (int)arch->insn_align) {
		uint64_t size = sym_func_size(m->path, sym - m->bias);
		int safe = entry_check_with(arch, m->path, sym - m->bias, size, blen);

		if (safe)
			return safe;
	}
	{
		int n = arch->entry_relocate(sym, insn, sizeof(insn), blen, at + len, gen + len,
					     &covered);

		if (n < 0)
			return n;
		len += n;
	}
	if (STUBS_GEN_OFF + s->area_used[a] + len > 4096)
		return -ENOSPC;
	/* no thread may be stopped inside the bytes the branch replaces */
	pcs = (struct pc_ctx){ addr, addr + covered, false };
	proc_for_each_thread(p, pc_cb, &pcs);
	if (pcs.inside)
		return -EBUSY;
	if (remote_write(tid, at, gen, len) ||
	    remote_write_word(tid, s->area[a] + 4096 + STUB_D_CONT + 8 * hook, 8, cont))
		return -EFAULT;
	s->area_used[a] += (len + 15) & ~15u;
	s->patch[s->npatch] =
		(struct stubs_patch){ .addr = addr, .sym = sym, .len = blen, .hook = hook };
	memcpy(s->patch[s->npatch].saved, insn, blen);
	if (remote_write(tid, addr, branch, blen))
		return -EFAULT;
	s->npatch++;
	return 0;
}

int stubs_patch_slot(struct proc *p, pid_t tid, uint64_t slot, int hook, uint64_t sym)
{
	struct stubs *s = p->stubs;
	const struct hook_desc *d = &hook_table[hook];
	uint32_t word = hook | STUB_HOOK_CTX |
			(hook_at_entry_only(d) && d->ptr == 0 ? STUB_HOOK_FREE : 0) | size_bits(d);
	uint64_t old, at;
	uint8_t gen[64];
	unsigned a = 0;
	size_t len;

	if (!s || s->off || !arch->stub_ctx_args)
		return -ENOTSUP;
	if (proc_running(p))
		return -EBUSY; /* a running thread could read the pointer half written */
	if (s->npatch == ARRAY_SIZE(s->patch) ||
	    remote_read(tid, slot, &old, sizeof(old)) != (ssize_t)sizeof(old))
		return -EFAULT;
	/* any area: the pointer holds a whole address */
	while (a < s->nareas && STUBS_GEN_OFF + s->area_used[a] + sizeof(gen) > 4096)
		a++;
	if (a == s->nareas)
		return -ENOSPC;
	at = s->area[a] + STUBS_GEN_OFF + s->area_used[a];
	len = arch->entry_thunk(gen, at, word, s->area[a] + (ht_stub_entry - ht_stub_blob));
	if (remote_write(tid, at, gen, len) ||
	    remote_write_word(tid, s->area[a] + 4096 + STUB_D_CONT + 8 * hook, 8, old))
		return -EFAULT;
	s->area_used[a] += (len + 15) & ~15u;
	s->patch[s->npatch] = (struct stubs_patch){
		.addr = slot, .sym = sym, .len = sizeof(old), .hook = hook, .slot = true, .thunk = at
	};
	memcpy(s->patch[s->npatch].saved, &old, sizeof(old));
	if (remote_write_word(tid, slot, sizeof(old), at))
		return -EFAULT;
	s->npatch++;
	return 0;
}

/*
 * The C library's entries through which a program installs a seccomp filter:
 * prctl(PR_SET_SECCOMP, ...), and syscall(SYS_seccomp, ...) (libseccomp's, and what a program
 * with no wrapper calls). Each goes through a watched thunk (STUB_HOOK_WATCH) whose
 * continuation is in a slot after the hooks' (STUBS_WATCH0).
 */
void stubs_watch_seccomp(struct proc *p, pid_t tid, const struct module *m)
{
#ifdef STUB_WATCH_SUPPORTED
	static const struct {
		const char *name;
		uint32_t arg0;
	} calls[STUBS_WATCHES] = { { "prctl", PR_SET_SECCOMP }, { "syscall", SYS_seccomp } };
	_Static_assert(PR_SET_SECCOMP >> (32 - STUB_HOOK_WATCH_SHIFT) == 0 &&
			       SYS_seccomp >> (32 - STUB_HOOK_WATCH_SHIFT) == 0,
		       "the watched values fit the thunk's word");

	if (!p->stubs || p->stubs->off || !m->bias_known)
		return;
	for (unsigned i = 0; i < STUBS_WATCHES; i++) {
		uint64_t sym = sym_lookup(m->path, calls[i].name);
		int ret;

		if (!sym)
			continue;
		ret = sym_code_entry(m->path, sym);
		if (!ret && patched_at(p, sym + m->bias))
			ret = -EEXIST;
		if (!ret)
			ret = patch_word(p, tid, sym + m->bias, STUBS_WATCH0 + i,
					 (STUBS_WATCH0 + i) | STUB_HOOK_WATCH |
						 calls[i].arg0 << STUB_HOOK_WATCH_SHIFT,
					 m);
		if (ret)
			pr_dbg(1, "process %d: %s in %s not watched for seccomp filters: %s",
			       p->pid, calls[i].name, m->path, strerror(-ret));
		else
			pr_dbg(1, "process %d: %s at %#llx watched for seccomp filters", p->pid,
			       calls[i].name, (unsigned long long)(sym + m->bias));
	}
#else
	(void)p, (void)tid, (void)m; /* the stub code here knows no watched entries */
#endif
}

/* ---- letting go ---- */

/*
 * A pointer still holding its thunk gets its old value back; one the program has changed since
 * (tracemalloc wraps CPython's allocator, keeping the thunk as the function it calls) is left:
 * the thunk passes every call on once the stubs are off.
 */
static void unpatch(struct stubs *s, pid_t tid)
{
	for (unsigned i = 0; i < s->npatch; i++) {
		const struct stubs_patch *sp = &s->patch[i];
		uint64_t now;

		if (sp->slot && (remote_read(tid, sp->addr, &now, sizeof(now)) != sizeof(now) ||
				 now != sp->thunk))
			continue;
		remote_write(tid, sp->addr, sp->saved, sp->len);
	}
}

void stubs_off(struct proc *p, pid_t tid)
{
	struct stubs *s = p->stubs;

	if (!s || s->off)
		return;
	unpatch(s, tid);
	stubs_data_put(s, tid, STUB_D_OFF, 1); /* nothing is recorded any more */
	s->off = true;
	/*
	 * A stub that waits for room looks at the off word again when it wakes, and gives up.
	 * The tail stays: moved, it would give the room of records still being written (by
	 * threads stopped mid-record) to the waiting stubs, which would write over them.
	 */
	syscall(SYS_futex, s->ctl + STUB_C_TAIL, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

void stubs_fork(struct proc *child, const struct proc *parent)
{
	const struct stubs *s = parent->stubs;
	struct stubs *c;

	if (!s || s->off || !s->npatch)
		return;
	c = xcalloc(1, sizeof(*c));
	c->nareas = s->nareas;
	memcpy(c->area, s->area, sizeof(c->area));
	c->npatch = s->npatch;
	memcpy(c->patch, s->patch, sizeof(c->patch));
	child->stubs = c; /* no ring of its own: stubs_child_start turns them off */
}

void stubs_child_start(struct proc *child, pid_t tid, bool follow)
{
	struct stubs *s = child->stubs;

	if (!s || s->ctl)
		return;
	/* the child maps its parent's ring: it must never write there */
	stubs_data_put(s, tid, STUB_D_OFF, 1); /* nothing is recorded any more */
	unpatch(s, tid);
	/* the guard, a copy of the parent's, learns of each (bpset.announce) */
	for (unsigned i = 0; follow && i < s->npatch; i++)
		/* sym 0: a breakpoint at the entry would miss inlined calls; a watched entry is
		 * no hook (its stubs are off: the child never waits for room) */
		if (s->patch[i].sym && s->patch[i].hook < HOOK_COUNT)
			bp_insert(child->bps, tid, s->patch[i].sym, BP_HOOK, s->patch[i].hook);
	free(s);
	child->stubs = NULL;
}

void stubs_forget(struct proc *p)
{
	struct stubs *s = p->stubs;

	if (!s)
		return;
	if (!s->ctl) { /* a forked child's, never started */
		free(s);
		p->stubs = NULL;
		return;
	}
	stubs_owner_unlink(s->ctl);
	munmap(s->ctl, s->map_len);
	retired.nrecords += s->rd.nrecords;
	retired.nwaits += s->rd.nwaits;
	retired.nskipped += s->rd.nskipped;
	if (s->rd.peak_backlog > retired.peak_backlog)
		retired.peak_backlog = s->rd.peak_backlog;
	retired.copy.cut += s->rd.copy.cut;
	if (!retired.copy.least || s->rd.copy.least < retired.copy.least)
		retired.copy.least = s->rd.copy.least;
	for (unsigned i = 0; i < s->rd.nphantom; i++) {
		s->rd.phantom[i]->nframes = 0;
		proc_thread_release(s->rd.phantom[i]);
	}
	free(s->rd.phantom);
	free(s->rd.keys);
	free(s->rd.ahead.last.v);
	free(s);
	p->stubs = NULL;
}


void stubs_retired(uint64_t *records, uint64_t *waits, uint64_t *backlog)
{
	*records = retired.nrecords;
	*waits = retired.nwaits;
	*backlog = retired.peak_backlog;
}

uint64_t stubs_retired_skipped(void)
{
	return retired.nskipped;
}

void stubs_retired_copy(uint64_t *cut, unsigned *least)
{
	*cut = retired.copy.cut;
	*least = retired.copy.least;
}
