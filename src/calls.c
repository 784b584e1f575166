// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hooked calls in flight. At an outer call's entry: its arguments, its backtrace, and its
 * return sent through a trampoline: the logging one where the arch has it (the return is
 * read later from the ring, without a stop), else the trapping one (a stop at the return).
 * Then what the call did to the heap. Calls made inside a traced call (realloc -> malloc,
 * tail calls) are not counted again.
 */
#include <errno.h>
#include <string.h>

#define PR_DOMAIN "calls"
#include "calls.h"
#include "guard.h"
#include "log.h"
#include "record.h"
#include "remote.h"
#include "stubs.h"
#include "unwind.h"
#include "util.h"

static unsigned depth = 8, sample = 1;
static uint64_t unwinds, stops, logged; /* for -v */

/* A logged call's cookie: its thread (ids are below 2^22) and its frame's index. */
#define COOKIE_FRAME_BITS 10

void calls_stats(uint64_t *nstops, uint64_t *nunwinds, uint64_t *nlogged)
{
	*nstops = stops;
	*nunwinds = unwinds;
	*nlogged = logged;
}

void calls_init(unsigned max_depth, unsigned every)
{
	depth = max_depth;
	sample = every;
}

static struct frame *push_frame(struct thread *t)
{
	if (t->nframes == t->cap) {
		unsigned cap = t->cap ? t->cap * 2 : 4;

		t->frames = xrealloc(t->frames, cap * sizeof(*t->frames));
		for (unsigned i = t->cap; i < cap; i++)
			t->frames[i].pcs = xmalloc(depth * sizeof(uint64_t));
		t->cap = cap;
	}
	return &t->frames[t->nframes++];
}

/* Drop t's innermost frame, whose return never comes (it was left by longjmp). */
static void drop_frame(struct thread *t)
{
	struct frame *f = &t->frames[--t->nframes];

	if (f->took_old) {
		table_put_back(&t->p->table, &f->old);
		record_put_back(t->p, t->tid);
	}
	if (f->logged && !f->stubbed && t->p->retlog.inflight)
		t->p->retlog.inflight--;
	pr_dbg(0, "thread %d: dropped a call to %s left by longjmp (%#llx)", t->tid,
	       hook_table[f->call.id].name, (unsigned long long)f->cookie);
}

/* Frames whose entry sp lies below sp were left by longjmp. */
static void drop_stale(struct thread *t, uint64_t sp, unsigned adjust)
{
	while (t->nframes && t->frames[t->nframes - 1].sp + adjust < sp)
		drop_frame(t);
}

/* Account call f of thread t, which returned retval, in the table. */
static void account(struct thread *t, const struct frame *f, uint64_t retval)
{
	struct table *tb = &t->p->table;
	uint64_t memptr = 0;
	struct hook_effect e;

	if (hook_needs_memptr(&f->call, retval))
		remote_read_word(t->tid, f->call.args[0], arch->word_size, &memptr);
	hook_effect(&f->call, retval, memptr, &e);
	if (f->call.id == HOOK_REALLOC || f->call.id == HOOK_REALLOCARRAY) {
		if (e.freed) {
			table_count_release(tb, f->took_old);
			record_release(t->p, t->tid, f->took_old);
		} else if (f->took_old) {
			table_put_back(tb, &f->old);
			record_put_back(t->p, t->tid);
		}
	} else if (e.freed) {
		table_thread_free(tb, t->tid, e.freed);
		table_free(tb, e.freed);
		record_free(t->p, t->tid, e.freed);
	}
	if (e.allocated) {
		uint32_t bt = table_intern(tb, f->pcs, f->npcs);

		table_alloc(tb, e.allocated, e.size, bt, f->entry_ns);
		table_thread_alloc(tb, t->tid, e.allocated);
		record_alloc(t->p, t->tid, e.allocated, e.size, bt, f->entry_ns);
	}
}

/*
 * Send the call of frame f (index idx on t) through the logging trampoline (arch.h): by b's
 * entry path with the cookie in a register (regs' pc is set then, *pc_set), or by a frame
 * written below sp. Return true if done; false leaves everything as it was, for the
 * trapping trampoline.
 */
/*
 * With entry stubs (stubs.h), a call caught at a breakpoint returns through the stubs'
 * trampoline, which records its result in their ring, in order with the calls the stubs
 * record: its frame is laid out as a stub lays it out (the trampoline's address, then the
 * cookie, below the caller's return address). Return true if done.
 */
static bool send_recorded(struct thread *t, struct arch_regs *regs, struct frame *f)
{
	static uint64_t seq;
	uint64_t tramp = stubs_tramp(t->p), sp = arch->get_sp(regs), frame[2];

	if (!tramp || !arch->ret_on_stack || arch->word_size != 8 || t->p->shares_mm)
		return false;
	frame[0] = tramp;
	frame[1] = STUBS_COOKIE_BP | ++seq; /* never a ring position */
	if (remote_write_data(t->tid, sp - 16, frame, sizeof(frame)))
		return false;
	arch->set_sp(regs, sp - 16);
	f->logged = true;
	f->stubbed = true;
	f->cookie = frame[1];
	return true;
}

static bool send_logged(struct thread *t, struct arch_regs *regs, struct frame *f,
			unsigned idx, const struct bp *b, bool *pc_set)
{
	struct proc *p = t->p;
	uint32_t cookie = (uint32_t)t->tid << COOKIE_FRAME_BITS | idx;

	if (!hook_table[f->call.id].result_in_memory && send_recorded(t, regs, f))
		return true;
	if (!p->bps.logtramp || p->shares_mm || hook_table[f->call.id].result_in_memory ||
	    idx >= 1u << COOKIE_FRAME_BITS || !retlog_room(&p->retlog))
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
		arch->set_ret_reg(regs, p->bps.logtramp);
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

	logged++;
	if (!t || t->p != p || idx >= t->nframes || !t->frames[idx].logged ||
	    t->frames[idx].stubbed) {
		pr_dbg(1, "process %d: a logged return for no call in flight (%#x)", p->pid,
		       cookie);
		return;
	}
	while (t->nframes > idx + 1)
		drop_frame(t); /* deeper calls it returned past */
	t->nframes--;
	p->retlog.inflight--;
	account(t, &t->frames[idx], retval);
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

/* The caller's return address at a function's entry: on the stack at sp, or in a register.
 * Reads t's stack from sp up for the unwinder too. Return 0 or -errno. */
static int return_address(const struct thread *t, const struct arch_regs *regs, uint64_t sp,
			  uint64_t *ret)
{
	unwind_prefetch(t->tid, sp);
	if (arch->ret_on_stack)
		return unwind_read_word(sp, ret);
	*ret = arch->get_ret_reg(regs);
	return 0;
}

bool calls_entry(struct thread *t, struct arch_regs *regs, const struct bp *b, bool count)
{
	struct proc *p = t->p;
	uint64_t sp = arch->get_sp(regs), ret;
	const struct hook_desc *d = &hook_table[b->hook];
	bool pc_set = false;
	struct frame *f;

	stops++;
	drop_stale(t, sp, 0);
	/* inside another traced call (realloc -> malloc, posix_memalign -> malloc, ...) */
	if (t->nframes || !p->counting || !count)
		return false;
	if (d->at_entry_only) {
		uint64_t ptr = arch->get_arg(regs, 0);

		record_free(p, t->tid, ptr);
		table_thread_free(&p->table, t->tid, ptr);
		if (!table_free(&p->table, ptr) && ptr && log_level >= 2) {
			uint64_t caller = 0;

			return_address(t, regs, sp, &caller);
			pr_dbg(1, "thread %d: free(%#llx) of a block never seen, from %#llx", t->tid,
			       (unsigned long long)ptr, (unsigned long long)caller);
		}
		return false;
	}
	if (return_address(t, regs, sp, &ret))
		return false;
	if (bp_is_any_tramp(&p->bps, arch->code_addr(ret)))
		return false; /* a tail call from a traced call: its return is already caught */
	f = push_frame(t);
	f->ret = ret;
	f->sp = sp;
	f->entry_ns = now_ns();
	f->logged = false;
	f->stubbed = false;
	f->call.id = b->hook;
	for (unsigned i = 0; i < 3; i++)
		f->call.args[i] = i < d->nargs ? arch->get_arg(regs, i) : 0;
	f->took_old = false;
	if ((b->hook == HOOK_REALLOC || b->hook == HOOK_REALLOCARRAY) &&
	    table_find(&p->table, f->call.args[0])) {
		table_thread_free(&p->table, t->tid, f->call.args[0]);
		f->took_old = table_take(&p->table, f->call.args[0], &f->old);
		record_take(p, t->tid, f->old.ptr);
	}
	f->pcs[0] = arch->get_pc(regs);
	f->npcs = 1;
	if (sample > 1 && p->unwind_seq++ % sample) {
		/* not sampled: the allocation function and its caller, known without unwinding */
		if (depth > 1)
			f->pcs[f->npcs++] = ret;
	} else {
		/*
		 * At the entry the caller's frame is exact: pc = return address, sp above it, the
		 * other registers untouched. Unwinding from there needs no unwind information for
		 * the allocator's first instruction, and frame pointers lead the right way even in
		 * a static program without .eh_frame_hdr.
		 */
		struct arch_regs caller = *regs;

		if (depth > 1) {
			arch->set_pc(&caller, ret);
			arch->set_sp(&caller, sp + arch->ret_sp_adjust);
			f->npcs += unwind_capture(p->unw, &caller, f->pcs + 1, depth - 1);
			unwinds++;
		}
	}
	if (send_logged(t, regs, f, t->nframes - 1, b, &pc_set))
		return pc_set;
	if (arch->ret_on_stack) {
		if (remote_write_word(t->tid, sp, arch->word_size,
				      arch->tramp_for(p->bps.tramp, ret))) {
			t->nframes--;
			if (f->took_old) {
				table_put_back(&p->table, &f->old);
				record_put_back(p, t->tid);
			}
			return false;
		}
	} else {
		arch->set_ret_reg(regs, arch->tramp_for(p->bps.tramp, ret));
	}
	/* should heaptrace die, the guard sends this return to its caller */
	guard_note_return(p, t->tid, sp + arch->ret_sp_adjust, ret);
	return false;
}

void calls_rec_entry(struct thread *t, const struct calls_rec *r, calls_unwind_fn unwind,
		     void *ctx)
{
	struct proc *p = t->p;
	const struct hook_desc *d = &hook_table[r->hook];
	struct frame *f;

	drop_stale(t, r->sp, 0);
	if (t->nframes || !p->counting)
		return; /* inside another traced call */
	if (d->at_entry_only) {
		record_free(p, t->tid, r->args[0]);
		table_thread_free(&p->table, t->tid, r->args[0]);
		if (!table_free(&p->table, r->args[0]) && r->args[0])
			pr_dbg(2, "thread %d: free(%#llx) of a block never seen", t->tid,
			       (unsigned long long)r->args[0]);
		return;
	}
	if (!r->returns)
		return; /* a tail call from a traced call (not counted: see calls_entry) */
	f = push_frame(t);
	f->ret = r->ret;
	f->sp = r->sp;
	f->entry_ns = r->ns;
	f->logged = true; /* its return needs no stop: kept when detaching (calls_restore_cb) */
	f->stubbed = true;
	f->cookie = r->cookie;
	f->call.id = r->hook;
	memcpy(f->call.args, r->args, sizeof(f->call.args));
	f->took_old = false;
	if ((r->hook == HOOK_REALLOC || r->hook == HOOK_REALLOCARRAY) &&
	    table_find(&p->table, r->args[0])) {
		table_thread_free(&p->table, t->tid, r->args[0]);
		f->took_old = table_take(&p->table, r->args[0], &f->old);
		record_take(p, t->tid, f->old.ptr);
	}
	f->pcs[0] = p->hook_addr[r->hook];
	f->npcs = 1;
	if (depth > 1 && sample > 1 && p->unwind_seq++ % sample) {
		if (r->ret)
			f->pcs[f->npcs++] = r->ret;
	} else if (depth > 1 && unwind) {
		f->npcs += unwind(ctx, f->pcs + 1, depth - 1);
		unwinds++;
	}
}

void calls_rec_return(struct thread *t, uint64_t cookie, uint64_t retval)
{
	unsigned idx = t->nframes;

	while (idx-- > 0)
		if (t->frames[idx].stubbed && t->frames[idx].cookie == cookie)
			break;
	if (idx >= t->nframes) {
		pr_dbg(3, "thread %d (%#llx): return %#llx of no call in flight (%u, top %#llx)",
		       t->tid, (unsigned long long)t->tls, (unsigned long long)cookie, t->nframes,
		       t->nframes ? (unsigned long long)t->frames[t->nframes - 1].cookie : 0ull);
		return; /* a call made inside another traced call */
	}
	while (t->nframes > idx + 1)
		drop_frame(t); /* deeper calls it returned past (longjmp) */
	t->nframes--;
	account(t, &t->frames[idx], retval);
}

/* Return 0, or -1 when the thread cannot go on (no call in flight). */
int calls_return(struct thread *t, struct arch_regs *regs)
{
	struct frame *f;

	stops++;
	drop_stale(t, arch->get_sp(regs), arch->ret_sp_adjust);
	/* logged calls deeper than the returning one were left by longjmp */
	while (t->nframes && t->frames[t->nframes - 1].logged)
		drop_frame(t);
	if (!t->nframes) {
		pr_err("thread %d returned to the trampoline with no traced call in flight", t->tid);
		return -1;
	}
	f = &t->frames[--t->nframes];
	guard_forget_return(t->p, t->tid, arch->get_sp(regs));
	account(t, f, arch->get_retval(regs));
	arch->set_pc(regs, f->ret);
	return 0;
}

/* Replace every word equal to from by to in [lo, hi) of tid's memory (bounded). */
static void replace_words(pid_t tid, uint64_t lo, uint64_t hi, uint64_t from, uint64_t to)
{
	const unsigned w = arch->word_size;
	uint8_t buf[4096];

	if (hi > lo + (64 << 10))
		hi = lo + (64 << 10);
	for (uint64_t at = lo & ~(uint64_t)(w - 1); at < hi; at += sizeof(buf)) {
		size_t len = hi - at < sizeof(buf) ? hi - at : sizeof(buf);
		ssize_t n = remote_read(tid, at, buf, len);

		for (ssize_t k = 0; k + w <= n; k += w) {
			uint64_t v = 0;

			memcpy(&v, buf + k, w); /* little-endian targets */
			if (v == from)
				remote_write_word(tid, at + k, w, to);
		}
		if (n < (ssize_t)len)
			break;
	}
}

/* Give every call in flight its caller's return address back before detaching. */
void calls_restore_cb(struct thread *t, void *ctx)
{
	struct arch_regs regs;
	uint64_t lo;
	bool dirty = false;

	(void)ctx;
	if (t->p->shares_mm || !t->nframes)
		return;
	/*
	 * A logged call keeps its caller's return address where it was; it returns through
	 * the logging trampoline, which stays mapped and needs nobody.
	 */
	if (arch->ret_on_stack) { /* x86_64: the slot at the entry sp is untouched until ret */
		for (unsigned i = t->nframes; i-- > 0;)
			if (!t->frames[i].logged)
				remote_write_word(t->tid, t->frames[i].sp, arch->word_size,
						  t->frames[i].ret);
		t->nframes = 0;
		return;
	}
	/*
	 * The link register got the trampoline at entry; the callee may still hold it there or
	 * have spilled it into its own frame, which lies between the thread's sp and the entry
	 * sp. Put the caller's address back in both places.
	 */
	if (arch_get_regs(t->tid, &regs))
		return;
	lo = arch->get_sp(&regs);
	for (unsigned i = t->nframes; i-- > 0;) {
		const struct frame *f = &t->frames[i];
		uint64_t tv = arch->tramp_for(t->p->bps.tramp, f->ret);

		if (f->logged) { /* it returns through the logging trampoline */
			lo = f->sp;
			continue;
		}
		if (arch->get_ret_reg(&regs) == tv) {
			arch->set_ret_reg(&regs, f->ret);
			dirty = true;
		}
		replace_words(t->tid, lo, f->sp, tv, f->ret);
		lo = f->sp;
	}
	if (dirty)
		arch_set_regs(t->tid, &regs);
	t->nframes = 0;
}

static void park_cb(struct thread *t, void *ctx)
{
	bool park = ctx != NULL;

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

void calls_copy(struct thread *dst, const struct thread *src)
{
	for (unsigned i = 0; i < src->nframes; i++) {
		struct frame *f;
		uint64_t *pcs;

		if (src->frames[i].logged)
			break; /* its cookie names src: the copy's return is not seen */
		f = push_frame(dst);
		pcs = f->pcs;

		*f = src->frames[i];
		f->pcs = pcs;
		memcpy(pcs, src->frames[i].pcs, src->frames[i].npcs * sizeof(uint64_t));
		f->took_old = false;
	}
}
