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
#include "account/calls.h"
#include "unwind/fallback.h"
#include "unwind/frames.h"
#include "patch/guard.h"
#include "patch/image.h"
#include "util/log.h"
#include "eventlog/record.h"
#include "target/remote.h"
#include "patch/stubs.h"
#include "unwind/unwind.h"
#include "util/util.h"

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

/* Drop t's innermost frame, whose return never comes (it was left by longjmp or an
 * exception). */
static void drop_frame(struct thread *t)
{
	struct frame *f = &t->frames[--t->nframes];

	if (f->took_old) {
		table_put_back(&t->p->table, &f->old);
		record_put_back(t->p, t->tid, hook_table[f->call.id].heap);
	}
	if (f->logged && !f->stubbed && t->p->retlog.inflight)
		t->p->retlog.inflight--;
	pr_dbg(0, "thread %d: dropped a call to %s left by longjmp or an exception (%#llx)",
	       t->tid, hook_table[f->call.id].name, (unsigned long long)f->cookie);
}

static void unwinding(struct thread *t, struct arch_regs *regs);

/* Frames whose entry sp lies below sp were left by longjmp. */
static void drop_stale(struct thread *t, uint64_t sp, unsigned adjust)
{
	while (t->nframes && t->frames[t->nframes - 1].sp + adjust < sp)
		drop_frame(t);
}

/*
 * True if t has a call of heap in flight: a call made inside it is part of it (realloc ->
 * malloc). A call of another heap is counted in its own (a pool function's malloc of a new
 * chunk is malloc's).
 */
static bool inside(const struct thread *t, unsigned heap)
{
	if (heap == HEAP_MMAP)
		return t->nframes != 0; /* an allocator's own mapping is its blocks' */
	for (unsigned i = 0; i < t->nframes; i++)
		if (hook_table[t->frames[i].call.id].heap == heap)
			return true;
	return false;
}

/* Release the block of key (table.h, its heap in it) by thread t: true if it was live. */
static bool release(struct thread *t, uint64_t key, uint64_t ns)
{
	record_free(t->p, t->tid, key, ns);
	table_thread_free(&t->p->table, t->tid, key);
	return table_free(&t->p->table, key);
}

/* Take the old block of a resize of frame f by thread t out of the table (table_take). */
static void take_old(struct thread *t, struct frame *f, uint64_t ns)
{
	const struct hook_desc *d = &hook_table[f->call.id];
	uint64_t key;

	f->took_old = false;
	if (d->kind != HK_REALLOC && d->kind != HK_RESIZE)
		return;
	key = table_key(d->heap, f->call.args[d->ptr]);
	if (!key || !table_find(&t->p->table, key))
		return;
	table_thread_free(&t->p->table, t->tid, key);
	f->took_old = table_take(&t->p->table, key, &f->old);
	record_take(t->p, t->tid, f->old.ptr, ns);
}

/* True for a mapping call (--mmap), whose effect is a range (hook_map_effect). */
static bool maps_range(const struct hook_desc *d)
{
	return d->kind == HK_MMAP || d->kind == HK_UNMAP || d->kind == HK_MREMAP ||
	       d->kind == HK_SBRK;
}

/* Account mapping call f of thread t, which returned retval. */
static void account_map(struct thread *t, const struct frame *f, uint64_t retval)
{
	struct table *tb = &t->p->table;
	struct hook_map_effect e;
	unsigned released;

	hook_map_effect(&f->call, retval, arch->word_size, arch->map_anonymous, &e);
	released = table_release_range(tb, HEAP_MMAP, e.release_lo, e.release_hi);
	if (released)
		record_range(t->p, t->tid, HEAP_MMAP, e.release_lo, e.release_hi, f->entry_ns);
	if (e.allocated && (released || !e.only_if_released)) {
		uint32_t bt = table_intern(tb, f->pcs, f->npcs);
		uint64_t key = table_key(HEAP_MMAP, e.allocated);

		table_alloc(tb, key, e.size, bt, f->entry_ns);
		table_thread_alloc(tb, t->tid, key);
		record_alloc(t->p, t->tid, key, e.size, bt, f->entry_ns);
	}
}

/* Account call f of thread t, which returned retval, in the table. */
static void account(struct thread *t, const struct frame *f, uint64_t retval)
{
	struct table *tb = &t->p->table;
	unsigned heap = hook_table[f->call.id].heap;
	uint64_t memptr = 0;
	struct hook_effect e;

	if (maps_range(&hook_table[f->call.id])) {
		account_map(t, f, retval);
		return;
	}
	if (hook_needs_memptr(&f->call, retval))
		remote_read_word(t->tid, f->call.args[hook_table[f->call.id].ptr], arch->word_size,
				 &memptr);
	hook_effect(&f->call, retval, memptr, &e);
	if (hook_string_unit(&f->call, &e) &&
	    remote_string_size(t->tid, e.allocated, hook_string_unit(&f->call, &e), &e.size))
		pr_dbg(0, "thread %d: %s's string at %#llx cannot be read: its size is 0", t->tid,
		       hook_table[f->call.id].name, (unsigned long long)e.allocated);
	if (hook_table[f->call.id].kind == HK_REALLOC || hook_table[f->call.id].kind == HK_RESIZE) {
		if (e.freed) {
			table_heap_release(tb, heap, f->took_old);
			record_release(t->p, t->tid, heap, f->took_old, f->entry_ns);
		} else if (f->took_old) {
			table_put_back(tb, &f->old);
			record_put_back(t->p, t->tid, heap);
		}
	} else if (e.freed) {
		release(t, table_key(heap, e.freed), f->entry_ns);
	}
	if (e.allocated) {
		uint32_t bt = table_intern(tb, f->pcs, f->npcs);
		uint64_t key = table_key(heap, e.allocated);

		table_alloc(tb, key, e.size, bt, f->entry_ns);
		table_thread_alloc(tb, t->tid, key);
		record_alloc(t->p, t->tid, key, e.size, bt, f->entry_ns);
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
	if (!p->bps.logtramp || p->shares_mm || idx >= 1u << COOKIE_FRAME_BITS ||
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

/* Tell the unwinder which of t's calls in flight return through the trapping trampoline
 * (their return address replaced: calls_entry), for a backtrace taken inside one to go on
 * through its caller; on = false: none any more. */
static void sent_returns(const struct thread *t, bool on)
{
	struct unwind_sent v[16];
	unsigned n = 0;

	for (unsigned i = 0; on && i < t->nframes && n < ARRAY_SIZE(v); i++)
		if (!t->frames[i].logged && !t->frames[i].stubbed)
			v[n++] = (struct unwind_sent){ t->frames[i].sp, t->frames[i].ret };
	unwind_sent_returns(t->p->bps.tramp, t->p->bps.tramp + t->p->bps.tramp_len, v, n);
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
	if (d->kind == HK_UNWIND) {
		unwinding(t, regs);
		return false;
	}
	/* inside another traced call (realloc -> malloc, posix_memalign -> malloc, ...) */
	if (inside(t, d->heap) || !p->counting || !count)
		return false;
	if (d->kind == HK_FREE) {
		uint64_t ptr = entry_arg(t, regs, (unsigned)d->ptr);

		if (!release(t, table_key(d->heap, ptr), now_ns()) && ptr && log_level >= 2) {
			uint64_t caller = 0;

			return_address(t, regs, sp, &caller);
			pr_dbg(1, "thread %d: %s(%#llx) of a block never seen, from %#llx", t->tid,
			       d->name, (unsigned long long)ptr, (unsigned long long)caller);
		}
		/* operator delete calls free: its return is caught so that free is nested */
		if (hook_at_entry_only(d) || !ptr)
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
	f->awaits_inner = false;
	f->call.id = b->hook;
	/* those on the stack only if needed: a read of memory each */
	for (unsigned i = 0; i < HOOK_MAX_ARGS; i++)
		f->call.args[i] = i < hook_nargs(d) && (i < arch->reg_args || operand(d, i)) ?
					  entry_arg(t, regs, i) : 0;
	take_old(t, f, now_ns());
	f->pcs[0] = arch->get_pc(regs);
	f->npcs = 1;
	if (d->kind == HK_FREE || d->kind == HK_UNMAP) {
		/* no block: no backtrace */
	} else if (sample > 1 && p->unwind_seq++ % sample) {
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
		struct unwind_hooks h;

		if (depth > 1) {
			arch->set_pc(&caller, ret);
			arch->set_sp(&caller, sp + arch->ret_sp_adjust);
			fallback_hooks(p, &h);
			sent_returns(t, true);
			f->npcs += unwind_capture(p->unw, &caller, f->pcs + 1, depth - 1, &h);
			sent_returns(t, false);
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
				record_put_back(p, t->tid, d->heap);
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
	if (t->nframes && t->frames[t->nframes - 1].awaits_inner && r->returns &&
	    r->hook == HOOK_MALLOC) {
		/* operator new's own malloc asks its size (1 for 0); a later one, of another size,
		 * is the exception object of a throw */
		struct frame *o = &t->frames[t->nframes - 1];

		if (r->args[0] == (o->call.args[0] ? o->call.args[0] : 1))
			o->inner_cookie = r->cookie;
	}
	if (inside(t, d->heap) || !p->counting)
		return; /* inside another traced call */
	if (d->kind == HK_FREE) {
		uint64_t ptr = r->args[d->ptr];

		if (!release(t, table_key(d->heap, ptr), r->ns) && ptr)
			pr_dbg(2, "thread %d: %s(%#llx) of a block never seen", t->tid, d->name,
			       (unsigned long long)ptr);
		/* operator delete calls free: its return is recorded so that free is nested */
		if (hook_at_entry_only(d) || !ptr)
			return;
	}
	if (!r->returns && !r->awaits_inner)
		return; /* a tail call from a traced call (not counted: see calls_entry) */
	f = push_frame(t);
	f->ret = r->ret;
	f->sp = r->sp;
	f->entry_ns = r->ns;
	f->logged = true; /* its return needs no stop: kept when detaching (calls_restore_cb) */
	f->stubbed = true;
	f->cookie = r->awaits_inner ? UINT64_MAX : r->cookie; /* UINT64_MAX: never a position */
	f->awaits_inner = r->awaits_inner;
	f->inner_cookie = UINT64_MAX;
	f->call.id = r->hook;
	memset(f->call.args, 0, sizeof(f->call.args));
	memcpy(f->call.args, r->args, sizeof(r->args));
	take_old(t, f, r->ns);
	f->pcs[0] = p->hook_addr[r->hook];
	f->npcs = 1;
	if (d->kind == HK_FREE || d->kind == HK_UNMAP) {
		/* no block: no backtrace */
	} else if (depth > 1 && sample > 1 && p->unwind_seq++ % sample) {
		if (r->ret)
			f->pcs[f->npcs++] = r->ret;
	} else if (depth > 1 && unwind) {
		sent_returns(t, true);
		f->npcs += unwind(ctx, f->pcs + 1, depth - 1);
		sent_returns(t, false);
		unwinds++;
	}
}

void calls_rec_return(struct thread *t, uint64_t cookie, uint64_t retval)
{
	unsigned idx = t->nframes;

	while (idx-- > 0)
		if (t->frames[idx].stubbed && t->frames[idx].cookie == cookie)
			break;
	if (idx >= t->nframes && t->nframes && t->frames[t->nframes - 1].awaits_inner &&
	    t->frames[t->nframes - 1].inner_cookie == cookie) {
		/* the allocation inside an operator new: its block is the operator's */
		if (retval) {
			t->nframes--;
			account(t, &t->frames[t->nframes], retval);
		}
		return;
	}
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
			if (!t->frames[i].logged)
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
		uint64_t tv = arch->tramp_for(t->p->bps.tramp, f->ret);

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
		drop_frame(t);
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
		drop_frame(t);
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
