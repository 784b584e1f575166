// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hooked calls in flight, the process side. At an outer call's entry: its arguments, its
 * backtrace, and its return sent through a trampoline: the logging one where the arch has it
 * (the return is read later from the ring, without a stop), else the trapping one (a stop at
 * the return). What each call did to the heap, and which calls count, is acct.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define PR_DOMAIN "calls"
#include "account/acct.h"
#include "account/calls.h"
#include "unwind/fallback.h"
#include "unwind/frames.h"
#include "unwind/python.h"
#include "unwind/sigframe.h"
#include "patch/guard.h"
#include "patch/image.h"
#include "util/log.h"
#include "target/remote.h"
#include "patch/stubs.h"
#include "unwind/unwind.h"
#include "util/util.h"

/* A logged call's cookie: its thread (ids are below 2^22) and its frame's index. */
#define COOKIE_FRAME_BITS 10

static const struct acct_mem live_mem = { remote_read_word, remote_string_size };

struct acct *calls_new(unsigned depth, unsigned sample)
{
	struct acct *a = xcalloc(1, sizeof(*a));

	a->depth = depth;
	a->sample = sample;
	a->mem = &live_mem;
	a->uw = unwind_reader_new();
	return a;
}

void calls_free(struct acct *a)
{
	if (a) {
		unwind_reader_free(a->uw);
		free(a);
	}
}

void calls_stats(const struct acct *a, uint64_t *nstops, uint64_t *nunwinds, uint64_t *nlogged)
{
	*nstops = a->stops;
	*nunwinds = a->unwinds;
	*nlogged = a->logged;
}

void calls_sample_stats(const struct acct *a, uint64_t *taken, uint64_t *not_taken,
			uint64_t *in_stubs)
{
	*taken = a->taken;
	*not_taken = a->not_taken;
	*in_stubs = a->stub_decided;
}

void calls_unwind_stats(const struct acct *a, uint64_t *quick, uint64_t *remembered,
			uint64_t *slow)
{
	unwind_reader_stats(a->uw, quick, remembered, slow);
}

static void unwinding(struct thread *t, struct arch_regs *regs);

/*
 * With entry stubs (stubs.h), a call caught at a breakpoint returns through the stubs'
 * trampoline, which records its result in their ring, in order with the calls the stubs
 * record: its frame is laid out as a stub lays it out (the trampoline's address, then the
 * cookie, below the caller's return address). Return true if done.
 */
static bool send_recorded(struct thread *t, struct arch_regs *regs, struct frame *f)
{
	uint64_t tramp = stubs_tramp(t->p), sp = arch->get_sp(regs), frame[2];

	if (!tramp || !arch->ret_on_stack || arch->word_size != 8 || t->p->shares_mm)
		return false;
	frame[0] = tramp;
	frame[1] = STUBS_COOKIE_BP | ++t->p->acct->seq; /* never a ring position */
	if (remote_write_data(t->tid, sp - 16, frame, sizeof(frame)))
		return false;
	arch->set_sp(regs, sp - 16);
	f->logged = true;
	f->stubbed = true;
	f->cookie = frame[1];
	return true;
}

/*
 * Send the call of frame f (index idx on t) through the logging trampoline (arch.h): by b's
 * entry path with the cookie in a register (regs' pc is set then, *pc_set), or by a frame
 * written below sp. Return true if done; false leaves everything as it was, for the
 * trapping trampoline.
 */
static bool send_logged(struct thread *t, struct arch_regs *regs, struct frame *f,
			unsigned idx, const struct bp *b, bool *pc_set)
{
	struct proc *p = t->p;
	uint32_t cookie = (uint32_t)t->tid << COOKIE_FRAME_BITS | idx;
	const struct hook_desc *d = &hook_table[f->call.id];

	/* posix_memalign's block (mi_strdup's size) is read in memory at a stop; an unwinder
	 * cannot get past the recording or logging trampoline's frame, so a call that may throw
	 * returns through the trapping one; with entry stubs, whose records are read while the
	 * program runs, a return logged here would be read only at the next stop, after calls
	 * made later. Both frames move sp down, so a function that reads arguments on the stack
	 * (arm's mmap, mimalloc's _at forms, a custom function unless its debug information says
	 * otherwise) would read them shifted: it returns through the trapping one too, which
	 * leaves sp alone. */
	if (hook_reads_result(d) || (d->flags & HF_THROWS) || !image_regs_only(p, f->call.id))
		return false;
	if (send_recorded(t, regs, f))
		return true;
	if (!p->bps->logtramp || p->shares_mm || idx >= 1u << COOKIE_FRAME_BITS ||
	    !retlog_room(&p->retlog) || stubs_active(p))
		return false;
	if (b->logentry) {
		arch->set_cookie(regs, cookie);
		arch->set_pc(regs, b->logentry);
		*pc_set = true;
	} else if (!arch->ret_on_stack) {
		/* two words below sp: the cookie, the caller's return address (remote byte order
		 * is the host's); sp stays aligned (16 bytes, or 8 on 32-bit arm) */
		uint64_t frame[2] = { cookie, arch->get_ret_reg(regs) }, sp = arch->get_sp(regs);
		uint32_t frame32[2] = { cookie, (uint32_t)frame[1] };
		unsigned w = arch->word_size;

		if (remote_write_data(t->tid, sp - 2 * w, w == 8 ? (void *)frame : (void *)frame32,
				      2 * w))
			return false;
		arch->set_sp(regs, sp - 2 * w);
		arch->set_ret_reg(regs, p->bps->logtramp);
	} else {
		return false;
	}
	f->logged = true;
	p->retlog.inflight++;
	return true;
}

/* A logged return: the call of the frame named by cookie returned retval. */
static void logged_return(uint32_t cookie, uint64_t retval, void *ctx)
{
	struct proc *p = ctx;
	struct thread *t = proc_thread_find((pid_t)(cookie >> COOKIE_FRAME_BITS));
	unsigned idx = cookie & ((1u << COOKIE_FRAME_BITS) - 1);

	p->acct->logged++;
	if (!t || t->p != p || idx >= t->nframes || !t->frames[idx].logged ||
	    t->frames[idx].stubbed || t->frames[idx].over) {
		pr_dbg(1, "process %d: a logged return for no call in flight (%#x)", p->pid,
		       cookie);
		return;
	}
	acct_return(p->acct, t, idx, retval);
	p->retlog.inflight--;
}

void calls_drain(struct proc *p, pid_t tid)
{
	struct retlog *r = &p->retlog;
	uint8_t ring[RETLOG_SIZE];
	ssize_t got;

	if (!r->ring || (!r->inflight && r->tail == r->head))
		return;
	got = remote_read(tid, r->ring, ring, sizeof(ring));
	if (got == (ssize_t)sizeof(ring))
		retlog_take(r, ring, logged_return, p);
	else if (got != -ESRCH)
		pr_dbg(1, "process %d: cannot read its logged returns (%zd)", p->pid, got);
}

/* Argument n of a call at its entry: in a register, else on the stack (arch.h:
 * stack_args_off), 0 if it cannot be read there. */
static uint64_t entry_arg(const struct thread *t, const struct arch_regs *regs, unsigned n)
{
	uint64_t v;

	if (n < arch->reg_args)
		return arch->get_arg(regs, n);
	if (remote_read_word(t->tid,
			    arch->get_sp(regs) + arch->stack_args_off +
				    (uint64_t)arch->word_size * (n - arch->reg_args),
			    arch->word_size, &v))
		return 0;
	return v;
}

/* True if argument n is an operand of d (its size, count or pointer). */
static bool operand(const struct hook_desc *d, unsigned n)
{
	return (int)n == d->size || (int)n == d->count || (int)n == d->ptr;
}

/* Tell the unwinder (rd) which of t's calls in flight return through the trapping trampoline
 * (their return address replaced: calls_entry), for a backtrace taken inside one to go on
 * through its caller; on = false: none any more. */
static void sent_returns(struct unwind_reader *rd, const struct thread *t, bool on)
{
	unwind_sent_begin(rd, t->p->bps->tramp, t->p->bps->tramp + t->p->bps->tramp_len);
	for (unsigned i = 0; on && i < t->nframes; i++)
		if (!t->frames[i].logged && !t->frames[i].stubbed && !t->frames[i].over)
			unwind_sent_add(rd, (struct unwind_sent){ t->frames[i].sp, t->frames[i].ret });
}

/* ---- calls made by a signal handler ---- */

/* How far above a call's sp its signal frame is looked for: a handler's frames below it, and
 * the frame itself (a kilobyte or more with the registers' extended state). */
#define HANDLER_SCAN_BYTES 8192

/* How far above the entry sp of the call it interrupted a signal may find the sp: a stub's or
 * the logging trampoline's return path runs there, the call in flight until it is recorded. */
#define HANDLER_SP_SLACK (2 * arch->word_size)

/*
 * If t's call with entry sp is made by a signal handler that interrupted t's innermost call in
 * flight, the sp that signal interrupted; else 0. A handler's call lies above its frames, and
 * those above the signal frame (sigframe.h), which holds the interrupted sp: at most a word or
 * two above the call in flight's entry sp (a stub's return path runs there), and above the
 * signal frame unless the handler ran on a stack of its own.
 */
static uint64_t handler_sp(const struct thread *t, uint64_t sp, stack_word_fn word, void *ctx)
{
	unsigned ws = arch->word_size;
	struct unwind_hooks h;
	uint64_t top, w, isp, ipc;
	bool same;

	if (!t->nframes || !sigframe_known())
		return 0;
	top = t->frames[t->nframes - 1].sp + HANDLER_SP_SLACK;
	same = sp < top; /* else: on another stack, or the calls in flight were left by longjmp */
	fallback_hooks(t->p, &h);
	for (uint64_t a = sp; a - sp < HANDLER_SCAN_BYTES && (!same || a < top); a += ws) {
		if (word(ctx, a, &w))
			break;
		if (!sigframe_regs(word, ctx, a, &w, &isp, &ipc) || isp > top ||
		    (a >= isp && a <= top))
			continue;
		if (sigframe_anchor(&h, w))
			return isp;
	}
	return 0;
}

/* Drop t's calls in flight left by longjmp: those below the call at sp, or, for a signal
 * handler's call, below the sp its signal interrupted (handler_sp; its slack above them). */
static void drop_left(struct thread *t, uint64_t sp, uint64_t interrupted)
{
	if (interrupted)
		acct_drop_stale(t, interrupted, HANDLER_SP_SLACK);
	else
		acct_drop_stale(t, sp, 0);
}

/*
 * Drop a recorded call in flight at record r's own sp: r's stub found a return address of the
 * program's there (it sent the return to the trampoline: r->returns), where a call in flight at
 * that sp would have left the trampoline's. So that call's return never came: a jump out of a
 * signal handler that had interrupted the trampoline before its record. The call is counted
 * as not seen: the block it may have made is not known.
 */
static void drop_unreturned(struct thread *t, const struct calls_rec *r)
{
	while (r->returns && t->nframes && t->frames[t->nframes - 1].stubbed &&
	       t->frames[t->nframes - 1].sp == r->sp) {
		/* one whose return the stub could not record is counted lost already */
		if (!r->return_lost || !r->return_lost(t->p, t->frames[t->nframes - 1].cookie))
			t->p->calls_not_seen++; /* what it returned is not known */
		acct_drop_frame(t);
	}
}

/* A breakpoint stop at a hooked function's entry: acct_entry's ctx. */
struct stop {
	struct thread *t;
	const struct arch_regs *regs;
	const struct hook_desc *d;
	uint64_t sp, ret;
};

/* A word of the stopped thread's stack, through the reader's cache of it. */
static int stop_word(void *ctx, uint64_t addr, uint64_t *val)
{
	const struct stop *s = ctx;

	return unwind_read_word(s->t->p->acct->uw, addr, val) ? -1 : 0;
}

static uint64_t stop_arg(void *ctx, unsigned i)
{
	const struct stop *s = ctx;

	/* those on the stack only if needed: a read of memory each */
	if (i >= hook_nargs(s->d) || (i >= arch->reg_args && !operand(s->d, i)))
		return 0;
	return entry_arg(s->t, s->regs, i);
}

/* The caller's return address at a function's entry: on the stack at sp, or in a register.
 * Reads t's stack from sp up for the unwinder too. */
static int stop_caller(void *ctx, uint64_t *ret, bool *tail)
{
	struct stop *s = ctx;
	struct unwind_reader *rd = s->t->p->acct->uw;

	unwind_prefetch(rd, s->t->tid, s->sp);
	if (arch->ret_on_stack) {
		if (unwind_read_word(rd, s->sp, ret))
			return -EFAULT;
	} else {
		*ret = arch->get_ret_reg(s->regs);
	}
	s->ret = *ret;
	*tail = bp_is_any_tramp(s->t->p->bps, arch->code_addr(*ret));
	return 0;
}

/* The thread pointer of stopped thread t (regs: its registers), 0 if unknown. */
static uint64_t thread_pointer(struct thread *t, const struct arch_regs *regs)
{
	uint64_t tp = arch->get_tls(regs);

	if (!tp && arch_thread_pointer(t->tid, &tp))
		tp = 0;
	return tp;
}

/*
 * At the entry the caller's frame is exact: pc = return address, sp above it, the other
 * registers untouched. Unwinding from there needs no unwind information for the allocator's
 * first instruction, and frame pointers lead the right way even in a static program without
 * .eh_frame_hdr.
 */
static unsigned stop_unwind(void *ctx, struct unwind_reader *rd, uint64_t *pcs, unsigned max)
{
	const struct stop *s = ctx;
	struct arch_regs caller = *s->regs;
	struct unwind_hooks h;
	unsigned n;

	arch->set_pc(&caller, s->ret);
	arch->set_sp(&caller, s->sp + arch->ret_sp_adjust);
	fallback_hooks(s->t->p, &h);
	sent_returns(rd, s->t, true);
	n = unwind_capture(s->t->p->unw, rd, &caller, pcs, max, &h);
	sent_returns(rd, s->t, false);
	if (!python_found(s->t->p)) /* the thread pointer may cost a system call */
		return n;
	return python_merge(s->t->p, thread_pointer(s->t, s->regs), pcs, n, max);
}

/* Send the return of t's innermost call f to the trapping trampoline (regs: t's registers at
 * its entry). Return false if that cannot be done. */
static bool send_trapping(struct thread *t, struct arch_regs *regs, struct frame *f)
{
	struct proc *p = t->p;

	/* should heaptrace die, the guard sends this return to its caller: told first, so that
	 * no moment has the return on the trampoline and the guard not knowing it */
	guard_note_return(p, t->tid, f->sp + arch->ret_sp_adjust, f->ret);
	if (arch->ret_on_stack) {
		if (remote_write_word(t->tid, f->sp, arch->word_size,
				      arch->tramp_for(p->bps->tramp, f->ret))) {
			guard_forget_return(p, t->tid, f->sp + arch->ret_sp_adjust);
			return false;
		}
	} else {
		arch->set_ret_reg(regs, arch->tramp_for(p->bps->tramp, f->ret));
	}
	return true;
}

bool calls_entry(struct thread *t, struct arch_regs *regs, const struct bp *b, bool count)
{
	struct proc *p = t->p;
	struct stop s = { t, regs, &hook_table[b->hook], arch->get_sp(regs), 0 };
	struct acct_entry e = {
		.hook = b->hook,
		.sp = s.sp,
		.pc = arch->get_pc(regs),
		.ns = now_ns(),
		.arg = stop_arg,
		.caller = stop_caller,
		.unwind = stop_unwind,
		.ctx = &s,
	};
	bool pc_set = false;
	uint64_t interrupted = 0;
	struct frame *f;

	p->acct->stops++;
	if (t->nframes) { /* the cache stop_caller fills again, when the call is counted */
		unwind_prefetch(p->acct->uw, t->tid, s.sp);
		e.handler = (interrupted = handler_sp(t, s.sp, stop_word, &s)) != 0;
	}
	drop_left(t, s.sp, interrupted);
	if (s.d->kind == HK_UNWIND) {
		unwinding(t, regs);
		return false;
	}
	if (!count || !(f = acct_enter(p->acct, t, &e)))
		return false;
	if (send_logged(t, regs, f, t->nframes - 1, b, &pc_set))
		return pc_set;
	if (!send_trapping(t, regs, f))
		acct_cancel(t);
	return false;
}

/* Frames 1.. of a record's backtrace, with t's sent calls known to the unwinder. */
struct rec_unwind {
	const struct thread *t;
	calls_unwind_fn unwind;
	void *ctx;
};

static unsigned rec_unwind(void *ctx, struct unwind_reader *rd, uint64_t *pcs, unsigned max)
{
	const struct rec_unwind *u = ctx;
	unsigned n;

	sent_returns(rd, u->t, true);
	n = u->unwind(u->ctx, rd, pcs, max);
	sent_returns(rd, u->t, false);
	return n;
}

void calls_rec_entry(struct thread *t, const struct calls_rec *r, calls_unwind_fn unwind,
		     void *ctx)
{
	struct rec_unwind u = { t, unwind, ctx };
	struct stack_copy copy = { r->copy, r->sp, r->copy_len };
	uint64_t interrupted = r->copy_len ? handler_sp(t, r->sp, stack_copy_word, &copy) : 0;
	struct calls_rec rh;

	drop_left(t, r->sp, interrupted);
	if (!interrupted) {
		drop_unreturned(t, r);
	} else {
		rh = *r;
		rh.handler = true;
		r = &rh;
	}
	acct_rec_entry(t->p->acct, t, r, unwind ? rec_unwind : NULL, &u);
}

void calls_rec_return(struct thread *t, uint64_t cookie, uint64_t retval)
{
	acct_rec_return(t->p->acct, t, cookie, retval);
}

/* Return 0, or -1 when the thread cannot go on (no call in flight). */
int calls_return(struct thread *t, struct arch_regs *regs)
{
	uint64_t ret;

	t->p->acct->stops++;
	acct_drop_stale(t, arch->get_sp(regs), arch->ret_sp_adjust);
	/* logged calls deeper than the returning one were left by longjmp */
	while (t->nframes && t->frames[t->nframes - 1].logged)
		acct_drop_frame(t);
	if (!t->nframes) {
		pr_err("thread %d returned to the trampoline with no traced call in flight", t->tid);
		return -1;
	}
	ret = t->frames[t->nframes - 1].ret;
	acct_return(t->p->acct, t, t->nframes - 1, arch->get_retval(regs));
	arch->set_pc(regs, ret);
	return 0;
}

struct replace {
	pid_t tid;
	uint64_t from, to;
};

static ssize_t read_tid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return remote_read(((const struct replace *)ctx)->tid, addr, buf, len);
}

static bool replace_word(void *ctx, uint64_t addr, uint64_t val)
{
	const struct replace *r = ctx;

	if (val == r->from)
		remote_write_word(r->tid, addr, arch->word_size, r->to);
	return true;
}

/* Replace every word equal to from by to in [lo, hi) of tid's memory (bounded). */
static void replace_words(pid_t tid, uint64_t lo, uint64_t hi, uint64_t from, uint64_t to)
{
	struct replace r = { .tid = tid, .from = from, .to = to };

	frames_each_word(lo, hi, arch->word_size, read_tid, &r, replace_word, &r);
}

/*
 * Give the calls in flight on t from frame index from up whose return goes to the trapping
 * trampoline their callers' return addresses back (regs: t's registers; return true if its
 * return register was set). A logged call keeps its caller's return address where it was; it
 * returns through the logging trampoline, which stays mapped and needs nobody.
 */
static bool restore(struct thread *t, struct arch_regs *regs, unsigned from)
{
	uint64_t lo;
	bool dirty = false;

	if (arch->ret_on_stack) { /* x86_64: the slot at the entry sp is untouched until ret */
		for (unsigned i = t->nframes; i-- > from;)
			if (!t->frames[i].logged && !t->frames[i].over)
				remote_write_word(t->tid, t->frames[i].sp, arch->word_size,
						  t->frames[i].ret);
		return false;
	}
	/*
	 * The link register got the trampoline at entry; the callee may still hold it there or
	 * have spilled it into its own frame, which lies between the thread's sp and the entry
	 * sp. Put the caller's address back in both places.
	 */
	lo = arch->get_sp(regs);
	for (unsigned i = t->nframes; i-- > from;) {
		const struct frame *f = &t->frames[i];
		uint64_t tv = arch->tramp_for(t->p->bps->tramp, f->ret);

		if (f->over) /* returned: its stack is another call's now */
			continue;
		if (f->logged) { /* it returns through the logging trampoline */
			lo = f->sp;
			continue;
		}
		if (arch->get_ret_reg(regs) == tv) {
			arch->set_ret_reg(regs, f->ret);
			dirty = true;
		}
		replace_words(t->tid, lo, f->sp, tv, f->ret);
		lo = f->sp;
	}
	return dirty;
}

/* Give every call in flight its caller's return address back before detaching. */
void calls_restore_cb(struct thread *t, void *ctx)
{
	struct arch_regs regs;

	(void)ctx;
	acct_late_unknown(t); /* it is let go: what it does next is not seen */
	if (t->p->shares_mm || !t->nframes)
		return;
	if (!arch->ret_on_stack && arch_get_regs(t->tid, &regs))
		return;
	if (restore(t, &regs, 0))
		arch_set_regs(t->tid, &regs);
	t->nframes = 0;
}

/*
 * t entered _Unwind_RaiseException (regs): a C++ exception may unwind through the innermost
 * calls in flight that may throw (HF_THROWS: operator new), and an unwinder finds no way past
 * a return address in the trampoline. Each gets its caller's back and is forgotten: it
 * returns no block, or catches the exception and returns straight to its caller. Other calls
 * never let an exception out (they are noexcept: malloc, operator new(size, nothrow), which
 * catches what the operator new it calls throws): they stay.
 */
static void unwinding(struct thread *t, struct arch_regs *regs)
{
	unsigned from;

	/* an operator new an entry stub recorded (its return is the program's own): it throws,
	 * and returns no block */
	while (t->nframes && t->frames[t->nframes - 1].awaits_inner)
		acct_drop_frame(t);
	from = t->nframes;

	while (from && !t->frames[from - 1].logged &&
	       (hook_table[t->frames[from - 1].call.id].flags & HF_THROWS))
		from--;
	if (from == t->nframes || t->p->shares_mm)
		return;
	restore(t, regs, from);
	for (unsigned i = from; i < t->nframes; i++)
		guard_forget_return(t->p, t->tid, t->frames[i].sp + arch->ret_sp_adjust);
	while (t->nframes > from)
		acct_drop_frame(t);
}

static void park_cb(struct thread *t, void *ctx)
{
	bool park = ctx != NULL;

	acct_late_park(t, park);
	for (unsigned i = 0; i < t->nframes; i++) {
		struct frame *f = &t->frames[i];

		if (!f->took_old)
			continue;
		if (park)
			f->took_old = table_put_back(&t->p->table, &f->old); /* false: freed already */
		else
			table_take(&t->p->table, f->old.ptr, &f->old);
	}
}

void calls_park(struct proc *p)
{
	proc_for_each_thread(p, park_cb, p);
}

void calls_unpark(struct proc *p)
{
	proc_for_each_thread(p, park_cb, NULL);
}

void calls_thread_exit(struct thread *t)
{
	/* a thread's return from its start routine, or pthread_exit, ends in exit(2) */
	t->own_exit = proc_syscall_nr(t->tid) == SYS_exit;
}

void calls_thread_gone(struct thread *t)
{
	acct_late_end(t);
}

void calls_copy(struct thread *dst, const struct thread *src)
{
	for (unsigned i = 0; i < src->nframes; i++) {
		struct frame *f;
		uint64_t *pcs;

		if (src->frames[i].logged)
			break; /* its cookie names src: the copy's return is not seen */
		f = acct_push_frame(dst->p->acct, dst);
		pcs = f->pcs;

		*f = src->frames[i];
		f->pcs = pcs;
		memcpy(pcs, src->frames[i].pcs, src->frames[i].npcs * sizeof(uint64_t));
		f->took_old = false;
	}
}
