// SPDX-License-Identifier: GPL-2.0-only
/*
 * The accounting of hooked calls (see acct.h): one entry path for breakpoint stops and entry
 * stub records, the returns, and what each call did to the heap. No ptrace here: the process's
 * memory is read through struct acct_mem, backtraces come through calls_unwind_fn.
 */
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "calls"
#include "account/acct.h"
#include "eventlog/record.h"
#include "unwind/python.h"
#include "util/log.h"
#include "util/util.h"

struct frame *acct_push_frame(const struct acct *a, struct thread *t)
{
	if (t->nframes == t->cap) {
		unsigned cap = t->cap ? t->cap * 2 : 4;

		t->frames = xrealloc(t->frames, cap * sizeof(*t->frames));
		for (unsigned i = t->cap; i < cap; i++)
			t->frames[i].pcs = xmalloc(a->depth * sizeof(uint64_t));
		t->cap = cap;
	}
	return &t->frames[t->nframes++];
}

/* A realloc's old block, taken out at f's entry, goes back into t's table. */
static void put_back(struct thread *t, struct frame *f)
{
	if (!f->took_old)
		return;
	table_put_back(&t->p->table, &f->old);
	record_put_back(t->p, t->tid, hook_table[f->call.id].heap);
}

/* Pop the frames of calls over (frame.over) that the top one kept in place. */
static void pop_over(struct thread *t)
{
	while (t->nframes && t->frames[t->nframes - 1].over)
		t->nframes--;
}

/* t's frame i is done with (returned or dropped): popped if it is the top, else left in place,
 * over, so that the frames above keep their indices (a logged return names its frame by
 * index). */
static void set_over(struct thread *t, unsigned i)
{
	t->frames[i].over = true;
	t->frames[i].took_old = false;
	pop_over(t);
}

/* Be done with t's frame i, a call that will never return (set_over). */
static void drop_at(struct thread *t, unsigned i)
{
	struct frame *f = &t->frames[i];

	if (!f->over) {
		put_back(t, f);
		if (f->logged && !f->stubbed && t->p->retlog.inflight)
			t->p->retlog.inflight--;
		pr_dbg(0, "thread %d: dropped a call to %s left by longjmp or an exception (%#llx)",
		       t->tid, hook_table[f->call.id].name, (unsigned long long)f->cookie);
	}
	set_over(t, i);
}

void acct_drop_frame(struct thread *t)
{
	drop_at(t, t->nframes - 1);
}

void acct_cancel(struct thread *t)
{
	put_back(t, &t->frames[--t->nframes]);
}

void acct_drop_stale(struct thread *t, uint64_t sp, unsigned adjust)
{
	while (t->nframes && t->frames[t->nframes - 1].sp + adjust < sp)
		acct_drop_frame(t);
}

/* Is hook a plain allocation, one that frees nothing through a traced entry: the C library's
 * and CPython's? (Not C++'s operator new: the nothrow form frees the exception object the
 * plain form it calls threw, nor other allocators' functions, whose insides vary.) */
static bool plain_alloc(unsigned hook)
{
	switch (hook) {
	case HOOK_MALLOC:
	case HOOK_CALLOC:
	case HOOK_POSIX_MEMALIGN:
	case HOOK_ALIGNED_ALLOC:
	case HOOK_MEMALIGN:
	case HOOK_VALLOC:
	case HOOK_PVALLOC:
	case HOOK_PY_OBJECT_MALLOC:
	case HOOK_PY_OBJECT_CALLOC:
	case HOOK_PY_MEM_MALLOC:
	case HOOK_PY_MEM_CALLOC:
		return true;
	default:
		return false;
	}
}

/*
 * Does t's call in flight f free nothing through a traced entry? A plain allocation never does
 * (plain_alloc), nor glibc's realloc and reallocarray but for realloc(p, 0), which calls free:
 * of a NULL pointer or to a size other than 0 they call malloc at most, and move a block with
 * the allocator's inner functions.
 */
static bool frees_nothing(const struct thread *t, const struct frame *f)
{
	const uint64_t *a = f->call.args;

	if (plain_alloc(f->call.id))
		return true;
	if (f->call.id == HOOK_REALLOC && t->p->glibc_realloc)
		return !a[0] || a[1];
	if (f->call.id == HOOK_REALLOCARRAY && t->p->glibc_reallocarray)
		return !a[0] || (a[1] && a[2]); /* an overflow fails before the realloc */
	return false;
}

/*
 * True if t has a call of heap in flight: a call made inside it is part of it (realloc ->
 * malloc). A call of another heap is counted in its own (a pool function's malloc of a new
 * chunk is malloc's), but for CPython's: pymalloc gives malloc the requests over 512 bytes,
 * and PYTHONMALLOC=malloc all of them, so such a block is the Python call's alone. Only the
 * calls made since the innermost signal handler's call count: the calls it interrupted are no
 * callers of its. A free made while the innermost call in flight frees nothing
 * (frees_nothing) is a signal handler's, which a stub's free record, holding no stack, cannot
 * show otherwise.
 */
static bool inside(const struct thread *t, const struct hook_desc *d)
{
	unsigned heap = d->heap;

	if (heap == HEAP_MMAP)
		return t->nframes != 0; /* an allocator's own mapping is its blocks' */
	if (d->kind == HK_FREE && t->nframes && frees_nothing(t, &t->frames[t->nframes - 1]))
		return false;
	for (unsigned i = t->nframes; i-- > 0;) {
		unsigned in = hook_table[t->frames[i].call.id].heap;

		if (t->frames[i].over)
			continue;
		if (in == heap || (heap == HEAP_MALLOC && in == HEAP_PYMALLOC))
			return true;
		if (t->frames[i].handler)
			break;
	}
	return false;
}

/* ---- frees of blocks not live (acct.h: acct_late_*) ---- */

/* No larger block sits in a thread cache: glibc's tcache ends at 1032 bytes (64 bins of 16 on
 * 64-bit; less on 32-bit), whatever its tunables say. */
#define TCACHE_MAX_BYTES 1032
/* Most addresses p->freed keeps (16 bytes each): past that it is emptied, and what the caches
 * of threads ending later hold counts as unknown frees (never the other way round). */
#define FREED_MAX (1u << 20)

static uint32_t freed_home(const struct proc *p, uint64_t key)
{
	return (uint32_t)hash64(key) & (p->freed_cap - 1);
}

/* The slot of key in p->freed: its own, or the empty one where it would go. */
static uint32_t freed_slot(const struct proc *p, uint64_t key)
{
	uint32_t s = freed_home(p, key);

	while (p->freed[s] && p->freed[s] != key)
		s = (s + 1) & (p->freed_cap - 1);
	return s;
}

/* Empty p->freed (a new image has a new heap: table_reset's epoch). */
static void freed_clear(struct proc *p)
{
	if (p->freed)
		memset(p->freed, 0, p->freed_cap * sizeof(*p->freed));
	p->nfreed = 0;
	p->freed_epoch = p->table.epoch;
}

static void freed_grow(struct proc *p)
{
	uint64_t *old = p->freed;
	uint32_t old_cap = p->freed_cap;

	p->freed_cap = old_cap ? 2 * old_cap : 1024;
	p->freed = xcalloc(p->freed_cap, sizeof(*p->freed));
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i])
			p->freed[freed_slot(p, old[i])] = old[i];
	free(old);
}

/* The block of key, of size bytes, was freed: it may sit in a thread's cache now. */
static void freed_put(struct proc *p, uint64_t key, uint64_t size)
{
	uint32_t s;

	if (size > TCACHE_MAX_BYTES || table_key_heap(key))
		return;
	if (p->freed_epoch != p->table.epoch || p->nfreed >= FREED_MAX)
		freed_clear(p);
	if ((p->nfreed + 1) * 4 > p->freed_cap * 3)
		freed_grow(p);
	s = freed_slot(p, key);
	p->nfreed += !p->freed[s];
	p->freed[s] = key;
}

/* Take key out of p->freed (an allocation returned it, or it is freed again): return true if
 * it was there. */
static bool freed_take(struct proc *p, uint64_t key)
{
	uint32_t mask = p->freed_cap - 1, i, j;

	if (!p->nfreed || p->freed_epoch != p->table.epoch)
		return false;
	i = freed_slot(p, key);
	if (!p->freed[i])
		return false;
	/* backward-shift deletion: every key after it in its run stays reachable from its home */
	for (j = (i + 1) & mask; p->freed[j]; j = (j + 1) & mask) {
		uint32_t h = freed_home(p, p->freed[j]);

		if (((j - h) & mask) >= ((j - i) & mask)) {
			p->freed[i] = p->freed[j];
			i = j;
		}
	}
	p->freed[i] = 0;
	p->nfreed--;
	return true;
}

void acct_prefetch(struct proc *p, uint64_t ptr)
{
	uint64_t key = table_key(HEAP_MALLOC, ptr);

	blockset_prefetch(&p->table.live, key);
	if (p->nfreed)
		__builtin_prefetch(&p->freed[freed_home(p, key)]);
}

/* Bytes of the two tables past which most of their slots are out of a CPU's nearer caches */
#define PREFETCH_BYTES (256u << 10)

bool acct_prefetch_pays(const struct proc *p)
{
	return p->table.live.cap * sizeof(struct block) + p->freed_cap * sizeof(*p->freed) >
	       PREFETCH_BYTES;
}

void acct_freed_before(struct proc *p, uint64_t key, uint64_t size)
{
	freed_put(p, key, size);
}

/* The figures of the heap of key, in t's process. */
static struct table_summary *sum_of(struct thread *t, uint64_t key)
{
	return table_heap_sum(&t->p->table, table_key_heap(key));
}

/* Forget that a report counts t's held frees (acct_late_park). */
static void late_unpark(struct thread *t)
{
	for (unsigned i = 0; i < t->late_parked; i++)
		sum_of(t, t->late[i].key)->unknown_frees--;
	t->late_parked = 0;
}

/* Count t's i-th held free as an unknown free. */
static void late_count_unknown(struct thread *t, unsigned i)
{
	const struct late_free *l = &t->late[i];

	/* a block handed out at that address since: a free logged now would end it in the log */
	if (!table_find(&t->p->table, l->key))
		record_free(t->p, t->tid, l->key, l->ns);
	sum_of(t, l->key)->unknown_frees++;
}

void acct_late_unknown(struct thread *t)
{
	if (t->nlate)
		pr_dbg(1, "thread %d: %u frees of blocks not live are unknown frees", t->tid,
		       t->nlate);
	late_unpark(t);
	for (unsigned i = 0; i < t->nlate; i++)
		late_count_unknown(t, i);
	t->nlate = 0;
}

/*
 * At the thread's own exit glibc's tcache_thread_shutdown frees every block its cache holds,
 * then the cache itself, which heaptrace never saw allocated: the last free. The cache holds
 * blocks freed before and not handed out since, by the thread or by others (malloc moves free
 * chunks of the size asked for into the cache), or now and then a piece glibc split off a
 * larger free chunk, never handed out: so the C library's frees are those from the first of a
 * block freed before (cached) on, and the last. A free held before them (the program's, of a
 * block heaptrace never saw allocated, before it ended) stays an unknown free.
 */
void acct_late_end(struct thread *t)
{
	unsigned from = 0;

	if (!t->own_exit || !t->p) {
		acct_late_unknown(t);
		return;
	}
	late_unpark(t);
	while (from + 1 < t->nlate && !t->late[from].cached)
		from++;
	for (unsigned i = 0; i < t->nlate; i++) {
		if (i < from) {
			pr_dbg(1, "thread %d: at its end, a free of %#llx before its cache's", t->tid,
			       (unsigned long long)t->late[i].key);
			late_count_unknown(t, i);
		} else {
			record_library_free(t->p, t->tid, t->late[i].key);
			sum_of(t, t->late[i].key)->library_frees++;
		}
	}
	t->nlate = 0;
}

void acct_late_park(struct thread *t, bool park)
{
	late_unpark(t);
	if (!park)
		return;
	for (unsigned i = 0; i < t->nlate; i++)
		sum_of(t, t->late[i].key)->unknown_frees++;
	t->late_parked = t->nlate;
}

/* Hold t's free of key, a block not live, made at ns (acct_late_*). */
static void late_hold(struct thread *t, uint64_t key, uint64_t ns)
{
	/* freed before, by any thread: glibc's malloc moves free chunks of the size it is asked
	 * for into the calling thread's cache, whoever freed them */
	bool cached = freed_take(t->p, key);

	freed_put(t->p, key, 0); /* free again: another thread's cache may take it next */

	if (t->nlate == ACCT_LATE_MAX) { /* the oldest is counted: memory stays bounded */
		late_unpark(t);
		late_count_unknown(t, 0);
		memmove(t->late, t->late + 1, --t->nlate * sizeof(*t->late));
	}
	if (t->nlate == t->late_cap) {
		t->late_cap = t->late_cap ? 2 * t->late_cap : 16;
		t->late = xrealloc(t->late, t->late_cap * sizeof(*t->late));
	}
	t->late[t->nlate++] = (struct late_free){ key, ns, cached };
}

/* ---- the calls ---- */

/* Release the block of key (table.h, its heap in it) by thread t: true if it was live. */
static bool release(struct thread *t, uint64_t key, uint64_t ns)
{
	record_free(t->p, t->tid, key, ns);
	python_release(t->p, key);
	table_note_free(&t->p->table, key);
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
	python_release(t->p, key);
	table_note_free(&t->p->table, key);
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
		table_note_alloc(tb, key);
		record_alloc(t->p, t->tid, key, e.size, bt, f->entry_ns);
	}
}

/* What call f of thread t, which returned retval, did to the heap (hook_effect), with what it
 * needs of t's memory. */
static void effect(const struct acct *a, struct thread *t, const struct frame *f,
		   uint64_t retval, struct hook_effect *e)
{
	const struct hook_desc *d = &hook_table[f->call.id];
	uint64_t memptr = 0;
	unsigned unit;

	if (hook_needs_memptr(&f->call, retval))
		a->mem->read_word(t->tid, f->call.args[d->ptr], arch->word_size, &memptr);
	hook_effect(&f->call, retval, memptr, e);
	unit = hook_string_unit(&f->call, e);
	if (unit && a->mem->string_size(t->tid, e->allocated, unit, &e->size))
		pr_dbg(0, "thread %d: %s's string at %#llx cannot be read: its size is 0", t->tid,
		       d->name, (unsigned long long)e->allocated);
}

/* The backtrace of frame f's block in tb, as --sample-bytes took it or not. */
static uint32_t intern(struct table *tb, const struct frame *f)
{
	if (f->weigh == TABLE_UNSEEN)
		return table_unsampled(tb);
	if (f->weigh == TABLE_SCALED)
		return table_intern_scaled(tb, f->pcs, f->npcs);
	return table_intern(tb, f->pcs, f->npcs);
}

/* Account call f of thread t, which returned retval, in the table. */
static void account(const struct acct *a, struct thread *t, struct frame *f, uint64_t retval)
{
	const struct hook_desc *d = &hook_table[f->call.id];
	struct table *tb = &t->p->table;
	struct hook_effect e;

	if (maps_range(d)) {
		account_map(t, f, retval);
		return;
	}
	effect(a, t, f, retval, &e);
	if (d->kind == HK_REALLOC || d->kind == HK_RESIZE) {
		if (e.freed) {
			table_heap_release(tb, d->heap, f->took_old);
			record_release(t->p, t->tid, d->heap, f->took_old, f->entry_ns);
			if (f->took_old)
				freed_put(t->p, f->old.ptr, f->old.size);
		} else {
			put_back(t, f);
		}
	} else if (e.freed) {
		release(t, table_key(d->heap, e.freed), f->entry_ns);
	}
	if (e.allocated) {
		uint32_t bt = intern(tb, f);
		uint64_t key = table_key(d->heap, e.allocated);

		if (t->p->nfreed)
			freed_take(t->p, key);
		table_alloc(tb, key, e.size, bt, f->entry_ns);
		table_note_alloc(tb, key);
		record_alloc(t->p, t->tid, key, e.size, bt, f->entry_ns);
	}
}

/*
 * Deeper calls the returning one (idx) returned past were left by longjmp, but for a signal
 * handler's that interrupted it, with the calls made inside them: their returns come on their
 * own (the logging trampoline's ring is read in the order its entries were reserved, and the
 * interrupted return may have reserved its entry before the handler ran).
 */
void acct_return(struct acct *a, struct thread *t, unsigned idx, uint64_t retval)
{
	unsigned above = idx + 1;

	while (above < t->nframes && !t->frames[above].handler)
		above++;
	while (above-- > idx + 1)
		drop_at(t, above);
	account(a, t, &t->frames[idx], retval);
	set_over(t, idx);
}

/* The caller's return address of entry e, asked once: 0 or -errno. */
static int caller_of(const struct acct_entry *e, uint64_t *ret, bool *tail, int *got)
{
	if (*got > 0)
		*got = e->caller(e->ctx, ret, tail) ? -1 : 0;
	return *got;
}

/* Every argument of e's call into f: a record's at once, a stop's asked one by one. */
static void copy_args(struct frame *f, const struct acct_entry *e)
{
	unsigned n = e->nargs < HOOK_MAX_ARGS ? e->nargs : HOOK_MAX_ARGS;

	if (!e->args) {
		for (unsigned i = 0; i < HOOK_MAX_ARGS; i++)
			f->call.args[i] = e->arg(e->ctx, i);
		return;
	}
	memset(f->call.args, 0, sizeof(f->call.args));
	for (unsigned i = 0; i < n; i++)
		f->call.args[i] = e->args[i];
}

/* Argument i of e's call, from its record or asked of its stop. */
static uint64_t entry_arg(const struct acct_entry *e, unsigned i)
{
	if (e->args)
		return i < e->nargs ? e->args[i] : 0;
	return e->arg(e->ctx, i);
}

/* A free (e, of d) is accounted at its entry. Return true if its return is to be caught too:
 * operator delete calls free, which is nested in it then. A free() of a block not live, by a
 * thread heaptrace knows (not a stand-in for the records of an unknown one, which never ends;
 * a gone thread's stand-in holds them until its records are read: ring.c), is held
 * (acct_late_*). */
static bool enter_free(struct thread *t, const struct acct_entry *e, const struct hook_desc *d,
		       uint64_t *ret, bool *tail, int *got)
{
	uint64_t ptr = entry_arg(e, (unsigned)d->ptr), key = table_key(d->heap, ptr);
	const struct block *b = key ? table_find(&t->p->table, key) : NULL;
	uint64_t size;

	/* a Python block malloc's heap holds (found at the attach, or made before the process
	 * had CPython's allocator traced) is released there: the free() inside is not counted */
	if (!b && key && d->heap == HEAP_PYMALLOC &&
	    (b = table_find(&t->p->table, table_key(HEAP_MALLOC, ptr))))
		key = table_key(HEAP_MALLOC, ptr);
	size = b ? b->size : 0;

	if (!b && key && e->hook == HOOK_FREE && t->tid) {
		late_hold(t, key, e->ns);
		pr_dbg(1, "thread %d: %s(%#llx) of a block not live: counted when the thread "
			  "allocates or ends", t->tid, d->name, (unsigned long long)ptr);
	} else if (release(t, key, e->ns)) {
		freed_put(t->p, key, size);
	} else if (ptr && log_level >= 2) {
		if (caller_of(e, ret, tail, got))
			*ret = 0;
		pr_dbg(1, "thread %d: %s(%#llx) of a block never seen, from %#llx", t->tid,
		       d->name, (unsigned long long)ptr, (unsigned long long)*ret);
	}
	return !hook_at_entry_only(d) && ptr;
}

/* xorshift64: a's next draw for --sample-bytes (any state but 0). */
static uint64_t draw(struct acct *a)
{
	uint64_t x = a->rand ? a->rand : now_ns() | 1;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return a->rand = x;
}

/* Whether --sample-bytes (the table's, n) takes frame f's call (heap/table.h): as the entry
 * stub decided, else by a draw here; a call of a kind that is always taken counts exactly. */
static uint8_t sample(struct acct *a, uint64_t n, const struct frame *f,
		      const struct acct_entry *e)
{
	bool taken;

	if (!n || !hook_sampled(&hook_table[f->call.id]))
		return TABLE_EXACT;
	if (e->stub_sample != ACCT_STUB_UNDECIDED) {
		a->stub_decided++;
		taken = e->stub_sample == ACCT_STUB_TAKEN;
	} else {
		taken = draw(a) % table_sample_odds(n, hook_asked_size(&f->call)) == 0;
	}
	if (taken)
		a->taken++;
	else
		a->not_taken++;
	return taken ? TABLE_SCALED : TABLE_UNSEEN;
}

/* Frames of f's backtrace past the hooked function: every a->sample-th allocation of its
 * process is unwound, the others get their caller only (known without unwinding); none for an
 * allocation --sample-bytes did not take. */
static void backtrace(struct acct *a, struct thread *t, struct frame *f,
		      const struct acct_entry *e)
{
	const struct hook_desc *d = &hook_table[f->call.id];

	f->pcs[0] = e->pc;
	f->npcs = 1;
	if (d->kind == HK_FREE || d->kind == HK_UNMAP)
		return; /* no block: no backtrace */
	f->weigh = sample(a, t->p->table.sample_bytes, f, e);
	if (f->weigh == TABLE_UNSEEN)
		return;
	if (a->sample > 1 && t->p->unwind_seq++ % a->sample) {
		if (a->depth > 1 && f->ret)
			f->pcs[f->npcs++] = f->ret;
	} else if (a->depth > 1 && e->unwind) {
		f->npcs += e->unwind(e->ctx, a->uw, f->pcs + 1, a->depth - 1);
		a->unwinds++;
	}
}

struct frame *acct_enter(struct acct *a, struct thread *t, const struct acct_entry *e)
{
	const struct hook_desc *d = &hook_table[e->hook];
	uint64_t ret = 0;
	bool tail = false;
	int got = 1; /* ret not asked yet */
	struct frame *f;

	if ((!e->handler && inside(t, d)) || !t->p->counting)
		return NULL;
	if (t->nlate && d->kind != HK_FREE)
		acct_late_unknown(t); /* the thread goes on: they were not the C library's */
	if (d->kind == HK_FREE && !enter_free(t, e, d, &ret, &tail, &got))
		return NULL;
	if (caller_of(e, &ret, &tail, &got) || tail)
		return NULL; /* a tail call from a traced call: its return is already caught */
	f = acct_push_frame(a, t);
	f->over = false;
	f->ret = ret;
	f->sp = e->sp;
	f->entry_ns = e->ns;
	f->logged = e->stubbed; /* its return needs no stop: kept when detaching */
	f->stubbed = e->stubbed;
	f->cookie = e->cookie;
	f->awaits_inner = e->awaits_inner;
	f->handler = e->handler;
	f->inner_cookie = UINT64_MAX; /* never a ring position */
	f->call.id = e->hook;
	f->weigh = TABLE_EXACT;
	copy_args(f, e);
	take_old(t, f, e->ns);
	backtrace(a, t, f, e);
	return f;
}

/* A record, and the unwinder its backtrace comes from: acct_enter's ctx. */
struct rec_ctx {
	const struct calls_rec *r;
	calls_unwind_fn unwind;
	void *ctx;
};

static int rec_caller(void *ctx, uint64_t *ret, bool *tail)
{
	const struct calls_rec *r = ((struct rec_ctx *)ctx)->r;

	*ret = r->ret;
	*tail = !r->returns && !r->awaits_inner;
	return 0;
}

static unsigned rec_unwind(void *ctx, struct unwind_reader *rd, uint64_t *pcs, unsigned max)
{
	struct rec_ctx *c = ctx;

	return c->unwind(c->ctx, rd, pcs, max);
}

void acct_rec_entry(struct acct *a, struct thread *t, const struct calls_rec *r,
		    calls_unwind_fn unwind, void *ctx)
{
	struct rec_ctx c = { r, unwind, ctx };
	struct acct_entry e = {
		.hook = (unsigned)r->hook,
		.sp = r->sp,
		.pc = t->p->hook_addr[r->hook],
		.ns = r->ns,
		.stubbed = true,
		.cookie = r->awaits_inner ? UINT64_MAX : r->cookie, /* never a position */
		.awaits_inner = r->awaits_inner,
		.handler = r->handler,
		.stub_sample = r->stub_sample,
		.args = r->args,
		.nargs = ARRAY_SIZE(r->args),
		.caller = rec_caller,
		.unwind = unwind ? rec_unwind : NULL,
		.ctx = &c,
	};

	if (!e.handler && t->nframes && t->frames[t->nframes - 1].awaits_inner && r->returns &&
	    r->hook == HOOK_MALLOC) {
		/* operator new's own malloc asks its size (1 for 0); a later one, of another size,
		 * is the exception object of a throw */
		struct frame *o = &t->frames[t->nframes - 1];

		if (r->args[0] == (o->call.args[0] ? o->call.args[0] : 1))
			o->inner_cookie = r->cookie;
	}
	acct_enter(a, t, &e);
}

void acct_rec_return(struct acct *a, struct thread *t, uint64_t cookie, uint64_t retval)
{
	unsigned idx = t->nframes;

	while (idx-- > 0)
		if (t->frames[idx].stubbed && !t->frames[idx].over && t->frames[idx].cookie == cookie)
			break;
	if (idx >= t->nframes && t->nframes && t->frames[t->nframes - 1].awaits_inner &&
	    t->frames[t->nframes - 1].inner_cookie == cookie) {
		/* the allocation inside an operator new: its block is the operator's */
		if (retval)
			acct_return(a, t, t->nframes - 1, retval);
		return;
	}
	if (idx >= t->nframes) {
		pr_dbg(3, "thread %d (%#llx): return %#llx of no call in flight (%u, top %#llx)",
		       t->tid, (unsigned long long)t->tls, (unsigned long long)cookie, t->nframes,
		       t->nframes ? (unsigned long long)t->frames[t->nframes - 1].cookie : 0ull);
		return; /* a call made inside another traced call */
	}
	acct_return(a, t, idx, retval);
}
