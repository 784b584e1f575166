// SPDX-License-Identifier: GPL-2.0-only
/*
 * The reader of the entry stubs' ring (ring.h): the records in order, their threads by key,
 * their clock, their backtraces from the stack copies, handed to calls.c. Everything it keeps
 * is in the ring's struct stubs_reader.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PR_DOMAIN "stubs"
#include "account/acct.h"
#include "account/calls.h"
#include "account/ring.h"
#include "account/ringrec.h"
#include "patch/stubs.h"
#include "stub_arch.h"
#include "target/process.h"
#include "unwind/fallback.h"
#include "unwind/python.h"
#include "unwind/unwind.h"
#include "util/log.h"
#include "util/util.h"

/* ---- the threads of the records' keys ---- */

static unsigned key_hash(uint64_t key, unsigned mask)
{
	return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

/* Put { key, t } in rd's table (a key may be there for several threads), grown at half full. */
static void keys_add(struct stubs_reader *rd, uint64_t key, struct thread *t)
{
	rd->keys_last.t = NULL;
	if (2 * (rd->nkeys + 1) > rd->keys_mask + 1) {
		struct stubs_key *old = rd->keys;
		unsigned n = old ? rd->keys_mask + 1 : 0;

		rd->keys_mask = n ? 2 * n - 1 : 63;
		rd->keys = xcalloc(rd->keys_mask + 1, sizeof(*rd->keys));
		rd->nkeys = 0;
		for (unsigned i = 0; i < n; i++)
			if (old[i].t)
				keys_add(rd, old[i].key, old[i].t);
		free(old);
	}
	for (unsigned i = key_hash(key, rd->keys_mask);; i = (i + 1) & rd->keys_mask)
		if (!rd->keys[i].t) {
			rd->keys[i] = (struct stubs_key){ key, t };
			rd->nkeys++;
			return;
		}
}

static void key_thread_cb(struct thread *t, void *arg)
{
	struct stubs_reader *rd = arg;

	keys_add(rd, t->tls, t);
	if (t->tls_pending) {
		rd->unknown = t;
		rd->npending++;
	}
}

/* The table from the process's threads and the stand-ins, when a thread came, went or
 * learned its key since it was built (one walk per such change, none per record). */
static void keys_update(struct proc *p, struct stubs *s)
{
	struct stubs_reader *rd = &s->rd;

	if (rd->keys_gen == s->threads_gen)
		return;
	if (rd->keys)
		memset(rd->keys, 0, (rd->keys_mask + 1) * sizeof(*rd->keys));
	rd->nkeys = rd->npending = 0;
	rd->keys_last.t = NULL;
	rd->unknown = NULL;
	proc_for_each_thread(p, key_thread_cb, rd);
	for (unsigned i = 0; i < rd->nphantom; i++)
		keys_add(rd, rd->phantom[i]->tls, rd->phantom[i]);
	rd->keys_gen = s->threads_gen;
}

/* Did t have key at position pos? */
static bool had_key(const struct thread *t, uint64_t key, uint64_t pos)
{
	return t->tls == key && t->key_from <= pos && pos < t->key_until;
}

/* The thread that had key at position pos; the newest such thread wins (the C library reuses a
 * gone thread's memory, and so its key, for a new one). NULL if none. */
static struct thread *keys_find(struct stubs_reader *rd, uint64_t key, uint64_t pos)
{
	struct thread *found = NULL;
	unsigned entries = 0;

	if (!rd->keys)
		return NULL;
	for (unsigned i = key_hash(key, rd->keys_mask); rd->keys[i].t;
	     i = (i + 1) & rd->keys_mask) {
		struct thread *t = rd->keys[i].t;

		if (rd->keys[i].key != key)
			continue;
		entries++;
		if (had_key(t, key, pos) && (!found || t->key_from >= found->key_from))
			found = t;
	}
	if (found && entries == 1)
		rd->keys_last = (struct stubs_key){ key, found };
	return found;
}

/* The thread of a record's key. A key not seen yet is the only thread's that had none when
 * heaptrace looked (a launched program's main thread, before its C library set its thread
 * pointer; threads made later have theirs from their start), else a stand-in's, which keeps
 * its calls apart. */
static __attribute__((noinline)) struct thread *thread_look(struct proc *p, uint64_t key,
							      uint64_t pos)
{
	struct stubs *s = p->stubs;
	struct stubs_reader *rd = &s->rd;
	struct thread *t;

	keys_update(p, s);
	t = keys_find(rd, key, pos);
	if (t)
		return t;
	if (rd->npending == 1) {
		t = rd->unknown;
		t->tls = key;
		t->tls_pending = false;
		t->key_from = 0;
		t->key_until = UINT64_MAX;
		if (t->stack_top)
			stubs_tops_put(p, proc_mem_pid(p), key, t->stack_top, t->stack_lo);
		s->threads_gen++; /* it left the pending ones */
		return t;
	}
	t = xcalloc(1, sizeof(*t));
	t->p = p;
	t->tls = key;
	t->key_until = UINT64_MAX;
	keys_add(rd, key, stubs_standin(s, t));
	return t;
}

/* thread_look, without a call for a run of records of the thread found last */
static inline struct thread *thread_of(struct proc *p, uint64_t key, uint64_t pos)
{
	const struct stubs_reader *rd = &p->stubs->rd;
	struct thread *t = rd->keys_last.t;

	if (t && rd->keys_last.key == key && rd->keys_gen == p->stubs->threads_gen &&
	    had_key(t, key, pos))
		return t;
	return thread_look(p, key, pos);
}

/* ---- the clock ---- */

#ifndef STUB_TICKS_MASK /* stub_arch.h says where the counter is narrower and wraps */
#define STUB_TICKS_MASK UINT64_MAX
#define STUB_TICKS_SPAN UINT64_MAX
#endif

/* Read both clocks for the batch of records up to a head just read (each was stamped before
 * it was reserved, so before now), and calibrate the counter against the monotonic clock over
 * the longest span seen (that cannot have wrapped). Once per batch, not per record: a clock
 * read cost as much as a tenth of a record. */
static void clock_batch(struct stubs_reader *rd)
{
	uint64_t now = now_ns(), tnow = stub_ticks();
	uint64_t span = (tnow - rd->tsc0) & STUB_TICKS_MASK;

	rd->batch_ns = now;
	rd->batch_tsc = tnow;
	if (now - rd->ns0 > 1000000 && now - rd->ns0 < STUB_TICKS_SPAN && span &&
	    span <= STUB_TICKS_MASK / 2)
		rd->ns_per_tick = (double)(now - rd->ns0) / (double)span;
}

/* The monotonic time of a record's time stamp tsc. */
static uint64_t rec_ns(const struct stubs_reader *rd, uint64_t tsc)
{
	uint64_t age = (rd->batch_tsc - tsc) & STUB_TICKS_MASK;

	if (!tsc) /* no clock in the stub (STUB_D_NOTSC): dated as the batch is read */
		return rd->batch_ns;
	if (!rd->ns_per_tick || age > STUB_TICKS_MASK / 2) /* stamped after tnow: another CPU's */
		return rd->batch_ns;
	return rd->batch_ns - (uint64_t)((double)age * rd->ns_per_tick);
}

/* ---- the records ---- */

struct unwind_ctx {
	struct proc *p;
	struct stubs *s;
	const uint8_t *rec;
	const struct ringrec *rr;
};

/* Learn the stack copy's size from what the unwind of c's record read of its copy (rd's last),
 * which found n frames of pcs: cut short if it stopped short of max for want of the stack
 * above the copy (a backtrace that reached main or a thread's start is whole, whatever else
 * the unwinder tried to read). */
static void learn_copy(struct unwind_ctx *c, struct unwind_reader *rd, const uint64_t *pcs,
		       unsigned n, unsigned max)
{
	unsigned used, put;
	bool over;

	unwind_copy_use(rd, &used, &over);
	over &= n < max && (pcs[n - 1] & FRAMES_STOPPED);
	copysize_seen(&c->s->rd.copy, c->rr->sp, c->rr->copy, used, over, &put);
	if (put)
		stubs_data_put(c->s, proc_mem_pid(c->p), STUB_D_COPY, put);
}

/* The block the record r (of STUB_KIND_ENTRY or _FREE) releases: its address, or 0. */
static uint64_t released_by(const struct ringrec *r)
{
	const struct hook_desc *d;

	if (r->kind == STUB_KIND_FREE)
		return r->args[0];
	if (r->kind != STUB_KIND_ENTRY || (r->word & STUB_HOOK_MASK) >= HOOK_COUNT)
		return 0;
	d = &hook_table[r->word & STUB_HOOK_MASK];
	return (d->kind == HK_FREE || d->kind == HK_REALLOC || d->kind == HK_RESIZE) &&
	       d->ptr >= 0 && d->ptr < HOOK_STUB_ARGS ? r->args[d->ptr] : 0;
}

/* A record reserved a moment ago is written within a microsecond or so: its parse is tried
 * again for this long before released_since takes it for one that may release the block. */
#define RELEASED_WAIT_NS 20000ull

/* Parse the record at pos of s into *r, waiting RELEASED_WAIT_NS for one not written yet. */
static bool parse_soon(const struct stubs *s, uint64_t pos, struct ringrec *r)
{
	uint64_t until = 0;

	for (;;) {
		enum ringrec_state st = ringrec_parse(s->ring + (pos & (s->size - 1)), pos,
						      s->size, r);

		if (st != RINGREC_NOT_YET)
			return st == RINGREC_OK;
		if (!until)
			until = now_ns() + RELEASED_WAIT_NS;
		else if (now_ns() > until)
			return false;
	}
}

/* Blocks the index of releases ahead keeps before it starts again from the record read (a
 * full ring of frees holds fewer: the index is rebuilt from a backlog at most) */
#define AHEAD_MAX (1u << 17)
/* Bytes past its base the index covers before it starts again: positions are kept as 32-bit
 * offsets from it */
#define AHEAD_SPAN (1ull << 31)

/* Start the index again from the record read. A wait for a record not written (wait_at) goes
 * on: started again, it could last as long as that record stays unwritten. */
static void ahead_clear(struct stubs_reader *rd)
{
	free(rd->ahead.last.v);
	rd->ahead = (struct stubs_ahead){ .base = rd->tail, .front = rd->tail,
					  .wait_at = rd->ahead.wait_at,
					  .wait_ns = rd->ahead.wait_ns };
}

/* Note in rd's index that the record r at pos releases what it releases. */
static void ahead_note(struct stubs_reader *rd, const struct ringrec *r, uint64_t pos)
{
	struct stubs_ahead *a = &rd->ahead;
	uint64_t addr = released_by(r);
	uint32_t *slot;

	if (!addr)
		return;
	slot = pairmap_slot(&a->last, addr, 0);
	if (!*slot)
		a->last.n++;
	*slot = (uint32_t)(pos - a->base + 1); /* the latest release is the one asked about */
}

/* Bring s's index of releases ahead up to head: false if it stopped at a record not written
 * yet (which may be a release). Each record is parsed once for it, however many ask. */
static bool ahead_advance(struct stubs *s, uint64_t head)
{
	struct stubs_reader *rd = &s->rd;

	/* the reader passed the front (or skipped a record never written): nothing in the index
	 * is ahead of it any more */
	if (rd->ahead.front <= rd->tail || rd->ahead.last.n > AHEAD_MAX ||
	    rd->ahead.front - rd->ahead.base > AHEAD_SPAN)
		ahead_clear(rd);
	while (rd->ahead.front != head) {
		struct ringrec r;

		if (head - rd->ahead.front > s->size || !parse_soon(s, rd->ahead.front, &r))
			return false;
		ahead_note(rd, &r, rd->ahead.front);
		rd->ahead.front += r.len;
	}
	return true;
}

/* A record whose Python frames need the look ahead while a record there is not written yet
 * (its thread was preempted between reserving and writing it) waits for it this long at most:
 * read at once, it would lose its frames (released_since). */
#define AHEAD_WAIT_NS 5000000ull

/* May the entry record rr (at r) be read now, as far as its Python frames go? */
static bool python_settled(struct proc *p, struct stubs *s, const uint8_t *r,
			   const struct ringrec *rr, uint64_t head)
{
	struct stubs_ahead *a = &s->rd.ahead;
	uint64_t now;

	if (!rr->py_count || !python_recorded_asks(p, r + rr->py_off, rr->py_count) ||
	    ahead_advance(s, head))
		return true;
	now = now_ns();
	if (a->wait_at != a->front || !a->wait_ns) {
		a->wait_at = a->front;
		a->wait_ns = now;
	}
	return now - a->wait_ns >= AHEAD_WAIT_NS;
}

/*
 * python_released_fn for the record c is reading: true if a record after it, up to the ring's
 * head now, releases addr, or one there is not written yet. A call that releases a block is
 * recorded at its entry, before the block is free, so what was read at addr before this look
 * was the object of c's time if no such record is there.
 */
static bool released_since(void *arg, uint64_t addr)
{
	const struct unwind_ctx *c = arg;
	struct stubs_reader *rd = &c->s->rd;
	bool whole = ahead_advance(c->s, stubs_head(c->s));
	/* a slot left at 0 is no entry: the map stays as it was */
	uint32_t *slot = rd->ahead.last.n ? pairmap_slot(&rd->ahead.last, addr, 0) : NULL;

	if (slot && *slot && rd->ahead.base + *slot - 1 >= rd->tail + c->rr->len)
		return true;
	return !whole;
}

static unsigned unwind_rec(void *arg, struct unwind_reader *rd, uint64_t *pcs, unsigned max)
{
	struct unwind_ctx *c = arg;
	struct arch_regs *regs = &c->s->rd.regs;
	struct unwind_hooks h;
	unsigned n;

	if (c->rr->copy < 8 || !c->p->unw)
		return 0;
	stub_regs(regs, c->rec); /* the caller's frame: pc = the return address */
	fallback_hooks(c->p, &h);
	n = unwind_capture_copy(c->p->unw, rd, regs, c->rr->sp, c->rec + STUB_REC_ENTRY,
				c->rr->copy, pcs, max, &h);
	if (n)
		learn_copy(c, rd, pcs, n, max);
	if (c->rr->py_count)
		n = python_merge_recorded(c->p, c->rec + c->rr->py_off, c->rr->py_count, pcs, n,
					  max, released_since, c);
	return n;
}

static void take_entry(struct proc *p, struct stubs *s, const uint8_t *r,
		       const struct ringrec *rr, uint64_t pos)
{
	struct unwind_ctx uc = { p, s, r, rr };
	/* every field named: one left out has gcc clear the whole with rep stos, a thirtieth of
	 * the reader's time per record */
	struct calls_rec c = {
		.hook = rr->word & STUB_HOOK_MASK,
		.args = { rr->args[0], rr->args[1], rr->args[2] },
		.sp = rr->sp,
		.ret = stub_ret(r),
		.cookie = pos,
		.ns = rec_ns(&s->rd, rr->tsc),
		.returns = rr->returns,
		.awaits_inner = (rr->word & STUB_HOOK_NORET) != 0,
		.return_lost = ring_return_lost,
		.copy = r + STUB_REC_ENTRY,
		.copy_len = rr->copy,
		.handler = false,
		/* read only with --sample-bytes (acct.c), when the stub had it too */
		.stub_sample = !(rr->word & STUB_HOOK_SIZE) ? ACCT_STUB_UNDECIDED :
			       rr->word & STUB_HOOK_NOT_TAKEN ? ACCT_STUB_NOT_TAKEN :
								ACCT_STUB_TAKEN,
	};

	_Static_assert(sizeof(c.args) == 3 * sizeof(c.args[0]), "calls_rec's three arguments");
	calls_rec_entry(thread_of(p, rr->key, pos), &c, unwind_rec, &uc);
}

static void take_free(struct proc *p, struct stubs *s, const struct ringrec *rr, uint64_t pos)
{
	struct calls_rec c = {
		.hook = rr->word & STUB_HOOK_MASK,
		.args = { rr->args[0], 0, 0 },
		.sp = 0,
		.ret = 0,
		.cookie = 0,
		.ns = rec_ns(&s->rd, rr->tsc),
		.returns = false,
		.awaits_inner = false,
		.copy = NULL,
		.copy_len = 0,
		.handler = false,
		.stub_sample = ACCT_STUB_UNDECIDED,
		.return_lost = NULL,
	};

	calls_rec_entry(thread_of(p, rr->key, pos), &c, NULL, NULL);
}

static void take(struct proc *p, struct stubs *s, const uint8_t *r, const struct ringrec *rr,
		 uint64_t pos)
{
	if (rr->kind == STUB_KIND_ENTRY)
		take_entry(p, s, r, rr, pos);
	else if (rr->kind == STUB_KIND_FREE)
		take_free(p, s, rr, pos);
	else
		calls_rec_return(thread_of(p, rr->key, pos), rr->cookie, rr->result);
}

/*
 * The record after the one at pos (of len bytes), parsed into *next if it is written, up to
 * head, and the slots of the block it frees or allocates loaded while the one at pos is
 * accounted. In a large heap these are cache misses (perf on the python3 workload: a third of
 * the reader's samples in blockset_find, blockset_claim and freed_slot), which that work then
 * hides. Return true if *next holds it.
 */
static bool peek_next(struct proc *p, const struct stubs *s, uint64_t pos, uint32_t len,
		      uint64_t head, struct ringrec *next)
{
	uint64_t at = pos + len;

	if (at == head ||
	    ringrec_parse(s->ring + (at & (s->size - 1)), at, s->size, next) != RINGREC_OK)
		return false;
	if (next->kind == STUB_KIND_FREE)
		acct_prefetch(p, next->args[0]);
	else if (next->kind != STUB_KIND_ENTRY) /* a return: an allocation's, most often */
		acct_prefetch(p, next->result);
	return true;
}

/* Free the stand-ins of gone threads whose records have all been read. */
static void bury(struct stubs *s)
{
	struct stubs_reader *rd = &s->rd;
	unsigned k = 0;

	for (unsigned i = 0; i < rd->nphantom; i++) {
		struct thread *g = rd->phantom[i];

		if (g->key_until <= rd->tail) {
			acct_late_end(g); /* every free its thread made before it ended is read */
			proc_thread_release(g);
			s->threads_gen++; /* the key table held it */
		} else {
			rd->phantom[k++] = g;
		}
	}
	rd->nphantom = k;
}

/* The position of the first complete record after the one at the tail, up to head, or head. */
static uint64_t next_complete(const struct stubs *s, uint64_t head)
{
	for (uint64_t pos = s->rd.tail + 16; pos < head; pos += 16) {
		struct ringrec rr;

		if (ringrec_parse(s->ring + (pos & (s->size - 1)), pos, s->size, &rr) ==
			    RINGREC_OK &&
		    pos + rr.len <= head)
			return pos;
	}
	return head;
}

/* ---- calls the stubs left unrecorded (stub_layout.h: STUB_C_LOST_*) ---- */

static uint64_t ctl_word(const struct stubs *s, unsigned off)
{
	return __atomic_load_n((const uint64_t *)(s->ctl + off), __ATOMIC_ACQUIRE);
}

/* The calls p's stubs counted lost since the last look, into p's figure; said once. */
static void lost_update(struct proc *p, struct stubs *s)
{
	uint64_t n = ctl_word(s, STUB_C_LOST_ENTRIES) + ctl_word(s, STUB_C_LOST_FREES) +
		     ctl_word(s, STUB_C_LOST_RETURNS);

	if (n == s->rd.lost)
		return;
	p->calls_not_seen += n - s->rd.lost;
	s->rd.lost = n;
	if (!s->rd.lost_told)
		pr_warn("process %d: calls not seen (heaptrace fell behind for longer than "
			"--max-stall=%u ms): the counts are not exact", p->pid, s->stall);
	s->rd.lost_told = true;
}

struct drop_ctx {
	uint64_t cookie;
	bool done;
};

/* The call named cookie, if t holds it: dropped with the calls made inside it. */
static void drop_cb(struct thread *t, void *arg)
{
	struct drop_ctx *c = arg;

	for (unsigned i = t->nframes; !c->done && i-- > 0;)
		if (t->frames[i].stubbed && !t->frames[i].over && t->frames[i].cookie == c->cookie) {
			while (t->nframes > i)
				acct_drop_frame(t);
			c->done = true;
		}
}

static uint64_t *lostret_slot(const struct stubs *s, unsigned i)
{
	return (uint64_t *)(s->ctl + STUB_C_LOSTRET + 8 * i);
}

bool ring_return_lost(struct proc *p, uint64_t cookie)
{
	struct stubs *s = p->stubs;

	if (!s || !s->ctl)
		return false;
	for (unsigned i = 0; i < STUB_C_LOSTRET_SLOTS; i++)
		if (__atomic_load_n(lostret_slot(s, i), __ATOMIC_ACQUIRE) ==
		    (cookie ^ STUB_LOSTRET_MARK))
			return true;
	/* one the stub counted with its cookie in no word: any such, once each (which call is
	 * which is not known; the count is what matters) */
	if (s->rd.unslotted_taken < ctl_word(s, STUB_C_LOST_UNSLOTTED)) {
		s->rd.unslotted_taken++;
		return true;
	}
	return false;
}

/* The calls whose returns went unrecorded (STUB_C_LOSTRET), once their entries are read: not
 * counted, as their results are not known, and no longer taken for the callers of the calls
 * the thread makes next. */
static void lost_returns(struct proc *p, struct stubs *s)
{
	for (unsigned i = 0; i < STUB_C_LOSTRET_SLOTS; i++) {
		uint64_t *w = lostret_slot(s, i);
		uint64_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
		struct drop_ctx c = { v ^ STUB_LOSTRET_MARK, false };

		if (!v || (!(c.cookie & STUBS_COOKIE_BP) && c.cookie >= s->rd.tail))
			continue; /* none, or its entry is not read yet */
		proc_for_each_thread(p, drop_cb, &c);
		for (unsigned k = 0; k < s->rd.nphantom && !c.done; k++)
			drop_cb(s->rd.phantom[k], &c);
		__atomic_store_n(w, 0, __ATOMIC_RELEASE);
	}
}

/*
 * A record a thread reserved and never wrote (it left a signal handler that had interrupted
 * its stub with siglongjmp, or was cancelled) stops the reader for good, and then every call
 * waits --max-stall and is lost. After PROBE_NS at one record while calls wait for room or are
 * lost, the process's threads are looked at, all stopped (trace/probe.c): if none is in a
 * stub's critical section, nor interrupted there, the records not written are dead and the
 * reader goes past them (ring_probe_done); else it looks again PROBE_NS later. Where the stub
 * code marks no critical section (stubs_probe_supported), or a thread is still there STUCK_NS
 * after calls first waited (and the reader has been stuck as long), the process's stubs are
 * turned off (no thread reserves ring space any more), and after as long again (every record
 * reserved before is written by then) the reader goes on at the first complete record after
 * it.
 */
#define PROBE_NS 10000000ull
#define STUCK_NS 1000000000ull

/* Calls wait for room in s's ring, or were lost since the reader stopped at its record. */
static bool stuck_waits(const struct stubs *s)
{
	return s->rd.lost != s->rd.stuck_lost ||
	       __atomic_load_n((uint32_t *)(s->ctl + STUB_C_WAITERS), __ATOMIC_ACQUIRE);
}

/* Return true if the reader went past such a record. */
static bool stuck_check(struct proc *p, struct stubs *s, uint64_t head)
{
	struct stubs_reader *rd = &s->rd;
	uint64_t now = now_ns();
	bool waits;

	if (head == rd->tail || rd->stuck_at != rd->tail || !rd->stuck_ns) {
		rd->stuck_at = rd->tail;
		rd->stuck_ns = now;
		rd->stuck_lost = rd->lost;
		rd->probe_ns = now;
		rd->waits_ns = 0;
		return false;
	}
	waits = stuck_waits(s);
	if (!rd->waits_ns && waits)
		rd->waits_ns = now;
	if (stubs_probe_supported() && !s->stuck_off && now - rd->probe_ns >= PROBE_NS && waits)
		rd->probe_wanted = true;
	if (now - rd->stuck_ns < STUCK_NS)
		return false;
	if (!s->stuck_off) {
		if (!waits)
			return false; /* nothing waits for it */
		/* looks come only once calls wait: a ring that took longer than STUCK_NS to fill
		 * behind the record (a slow program, an emulated CPU) would be turned off unlooked */
		if (stubs_probe_supported() && now - rd->waits_ns < STUCK_NS)
			return false;
		stubs_data_off(p);
		s->stuck_off = true;
		p->stubs_stuck = true;
		rd->stuck_ns = now;
		pr_warn("process %d: a thread never finished a record of its calls (it left a "
			"signal handler with a jump?): its calls are not traced from now on",
			p->pid);
		return false;
	}
	pr_dbg(1, "process %d: skipped a record never written at %#llx", p->pid,
	       (unsigned long long)rd->tail);
	rd->tail = next_complete(s, head);
	rd->stuck_ns = 0;
	return true;
}

/* HEAPTRACE_TEST_SLOW_READER=MS: a reader slowed on purpose, for the tests of a full ring and
 * of late reading: it reads the records that were in the ring MS ms before, so every record is
 * read at least that late. */
static void slow_reader(struct stubs_reader *rd)
{
	if (rd->slow_ms < 0) {
		const char *e = getenv("HEAPTRACE_TEST_SLOW_READER");

		rd->slow_ms = e ? atol(e) : 0;
	}
	if (rd->slow_ms > 0)
		usleep(rd->slow_ms * 1000);
}

/* The room read gives back, to the stubs that wait for it. */
static void read_done(struct stubs *s)
{
	__atomic_store_n((uint64_t *)(s->ctl + STUB_C_TAIL), s->rd.tail, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n((uint32_t *)(s->ctl + STUB_C_WAITERS), 0, __ATOMIC_SEQ_CST)) {
		s->rd.nwaits++;
		syscall(SYS_futex, s->ctl + STUB_C_TAIL, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
	}
}

/*
 * The record at the reader's tail is not written: if it was reserved before a look at the
 * threads found none that could still write (ring_probe_done), go past it to the first complete
 * record, looked for only up to where the look left the ring's head (after it, a record may
 * be in writing). True if the reader went past it.
 */
static bool skip_dead(struct proc *p, struct stubs *s)
{
	struct stubs_reader *rd = &s->rd;

	if ((int64_t)(rd->dead_before - rd->tail) <= 0)
		return false;
	if (!rd->nskipped)
		pr_info("process %d: a record of a call no thread will write (its thread left a "
			"signal handler with a jump?) is skipped: that call is not counted", p->pid);
	pr_dbg(1, "process %d: skipped a record no thread will write, at %#llx", p->pid,
	       (unsigned long long)rd->tail);
	rd->tail = next_complete(s, rd->dead_before);
	rd->nskipped++;
	return true;
}

/*
 * Room is given back every READ_DONE_BYTES of a drain, not only at its end: reading a full
 * ring (unwinding each allocation) takes tens of milliseconds, longer than a stub waits
 * (--max-stall) before its call goes unrecorded. Without a wake-up: a stub's wait ends within
 * its 1 ms slice, and a wake-up that brings too little room would use a slice up sooner.
 */
#define READ_DONE_BYTES (64u << 10)

/* Read s's records up to its head now; may_wait: records with Python frames may wait for
 * the look ahead (python_settled), which the last read (every thread stopped) must not. */
static unsigned drain(struct proc *p, bool may_wait)
{
	struct stubs *s = p->stubs;
	struct stubs_reader *rd;
	uint64_t head, given, start, next_at = 0;
	bool waiting = false, have_next = false, peek;
	struct ringrec next;
	unsigned n = 0;

	if (!s || !s->ctl)
		return 0;
	rd = &s->rd;
	start = given = rd->tail;
	head = stubs_head(s);
	if (head != rd->tail)
		slow_reader(rd);
	if (head - rd->tail > rd->peak_backlog && head - rd->tail <= s->size)
		rd->peak_backlog = head - rd->tail; /* how far behind the program heaptrace was */
	lost_update(p, s);
	if (head != rd->tail)
		clock_batch(rd);
	peek = acct_prefetch_pays(p);
	while (rd->tail != head) {
		const uint8_t *r = s->ring + (rd->tail & (s->size - 1));
		struct ringrec rr;
		enum ringrec_state st = RINGREC_OK;

		/* a record written stays as it is until the reader is past it */
		if (have_next && next_at == rd->tail)
			rr = next;
		else
			st = ringrec_parse(r, rd->tail, s->size, &rr);
		have_next = false;

		if (st == RINGREC_NOT_YET && !skip_dead(p, s))
			break;
		if (st == RINGREC_NOT_YET)
			continue;
		if (st == RINGREC_BROKEN) {
			pr_warn("process %d: a broken record in the ring: the rest is lost",
				p->pid);
			rd->tail = head;
			break;
		}
		if (may_wait && rr.kind == STUB_KIND_ENTRY &&
		    !python_settled(p, s, r, &rr, head)) {
			waiting = true;
			break;
		}
		next_at = rd->tail + rr.len;
		have_next = peek && peek_next(p, s, rd->tail, rr.len, head, &next);
		take(p, s, r, &rr, rd->tail);
		rd->tail += rr.len;
		n++;
		if (rd->tail - given >= READ_DONE_BYTES) {
			__atomic_store_n((uint64_t *)(s->ctl + STUB_C_TAIL), rd->tail,
					 __ATOMIC_RELEASE);
			given = rd->tail;
			stubs_seccomp(p); /* every 50 ms even while a long backlog is read */
		}
	}
	lost_returns(p, s);
	stubs_seccomp(p);
	if (!n && rd->tail == start) {
		if (!waiting && stuck_check(p, s, head))
			read_done(s);
		return 0;
	}
	rd->stuck_ns = 0;
	if (!s->python) /* the interpreter's words, once known (at launch, after its start) */
		stubs_python(p);
	rd->nrecords += n;
	bury(s);
	read_done(s);
	return n;
}

unsigned ring_drain(struct proc *p)
{
	return drain(p, true);
}

unsigned ring_drain_final(struct proc *p)
{
	struct stubs *s = p->stubs;
	unsigned n = drain(p, false);

	while (s && s->ctl) {
		uint64_t head = stubs_head(s);

		if (s->rd.tail == head)
			break;
		/* a record a thread reserved and never wrote: it died, or is stopped for good */
		pr_dbg(1, "process %d: skipped a record never written at %#llx", p->pid,
		       (unsigned long long)s->rd.tail);
		s->rd.tail = next_complete(s, head);
		n += drain(p, false);
	}
	return n;
}

uint64_t ring_unread_until(const struct proc *p)
{
	const struct stubs *s = p->stubs;
	uint64_t head;

	if (!stubs_active(p))
		return 0;
	head = stubs_head(s);
	return head != s->rd.tail ? head : 0;
}

uint64_t ring_waiting(const struct proc *p)
{
	return stubs_active(p) ? stubs_head(p->stubs) - p->stubs->rd.tail : 0;
}

bool ring_read_to(const struct proc *p, uint64_t pos)
{
	return !stubs_active(p) || p->stubs->rd.tail >= pos;
}

void ring_copy_stats(uint64_t *cut, unsigned *least)
{
	stubs_retired_copy(cut, least);
	for (struct proc *p = procs; p; p = p->next) {
		const struct copysize *c = p->stubs ? &p->stubs->rd.copy : NULL;

		if (!c)
			continue;
		*cut += c->cut;
		if (!*least || c->least < *least)
			*least = c->least;
	}
}

void ring_stats(uint64_t *records, uint64_t *waits, uint64_t *backlog)
{
	stubs_retired(records, waits, backlog);
	for (struct proc *p = procs; p; p = p->next) {
		const struct stubs_reader *rd = p->stubs ? &p->stubs->rd : NULL;

		if (!rd)
			continue;
		*records += rd->nrecords;
		*waits += rd->nwaits;
		if (rd->peak_backlog > *backlog)
			*backlog = rd->peak_backlog;
	}
}

bool ring_probe_wanted(const struct proc *p)
{
	return p->stubs && p->stubs->ctl && p->stubs->rd.probe_wanted;
}

/*
 * More looks than SKIPS_MAX in a second that found a dead record (a timer whose handler leaves
 * with a jump, thousands of times a second) would keep the program waiting PROBE_NS each time:
 * then its stubs are turned off, as where no look can be made.
 */
#define SKIPS_MAX 8

/* A look found a dead record: count it; true if too many came in the last second. */
static bool skips_too_many(struct stubs_reader *rd, uint64_t now)
{
	if (now - rd->skips_since >= 1000000000ull) {
		rd->skips_since = now;
		rd->skips = 0;
	}
	return ++rd->skips > SKIPS_MAX;
}

void ring_probe_done(struct proc *p, bool dead)
{
	struct stubs *s = p->stubs;
	struct ringrec rr;
	uint64_t now = now_ns();

	s->rd.probe_wanted = false;
	s->rd.probe_ns = now;
	if (!dead)
		return;
	/* every record reserved by now is written, or never will be: ring_drain skips those not
	 * written, after the threads run again (reading may take long) */
	s->rd.dead_before = stubs_head(s);
	if (s->rd.tail == s->rd.dead_before ||
	    ringrec_parse(s->ring + (s->rd.tail & (s->size - 1)), s->rd.tail, s->size, &rr) !=
		    RINGREC_NOT_YET)
		return; /* written since the reader stopped at it */
	if (skips_too_many(&s->rd, now) && !s->stuck_off) {
		stubs_data_off(p);
		s->stuck_off = true;
		p->stubs_stuck = true;
		pr_warn("process %d: threads leave records of their calls unfinished again and "
			"again (signal handlers that jump?): its calls are not traced from now on",
			p->pid);
	}
}

uint64_t ring_skipped(void)
{
	uint64_t n = stubs_retired_skipped();

	for (struct proc *p = procs; p; p = p->next)
		if (p->stubs)
			n += p->stubs->rd.nskipped;
	return n;
}
